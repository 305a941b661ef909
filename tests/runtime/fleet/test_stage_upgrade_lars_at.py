"""A LARS chain service (``up --chain``) upgraded to programs with ``@``-heads, at the stage,
without a broker: the version is chosen by the time point evaluated, so the new program's
``@``-heads date atoms before T, counted with the old program's answers there, and a
restatement (T in the past) takes back what the old program's ``@``-heads dated from its
evaluations from T on.  Hand-derived, and random programs, streams and upgrade times
against the naive evaluator per time point (tests/reference.py) and ``run --upgrade``."""

from __future__ import annotations

import json

import orjson
import pytest
from dialect_programs import LARS_AT_RULES
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from meaning import meaning
from reference import reference_splice

from chronolog.dialects.registry import RunOptions, lookup
from chronolog.stages.interface import StageSpec
from chronolog.state.snapshots import roundtrip
from chronolog.versions import UpgradeRequest, version_id

SETTINGS = settings(max_examples=150, deadline=None, suppress_health_check=list(HealthCheck))


def _stage(text: str):
    row = lookup("lars")
    spec = StageSpec("chain", idle_flush=1000.0, chained_ingest=True)
    return row.layout(row.parse([("p0.lars", text)]), RunOptions()).stage(spec)


def _chain(first: str, parts: list[list[dict]], upgrades: list[tuple[str | None, str]],
           restart: bool) -> tuple[list[dict], list[tuple[int, str]]]:
    """The chain of ``first`` fed ``parts[0]``, then each upgrade (T as written, or None; the new
    program's text) followed by the next part, then idle; with ``restart`` its state written
    and read back into a fresh stage after each upgrade.  The answer lines, and the upgrades
    applied as (T, text)."""
    stage = _stage(first)
    out: list[bytes] = []
    applied: list[tuple[int, str]] = []
    offset = 0

    def feed(values: list[bytes], now: float = 0.0) -> list[dict]:
        nonlocal offset
        batch = [(None, "chronolog.facts", 0, offset + i, v) for i, v in enumerate(values)]
        offset += len(values)
        leaving, lines = stage.process(batch, now=now)
        out.extend(lines)
        return [orjson.loads(o.payload) for o in leaving if o.topic == "control"]

    feed([orjson.dumps(e) for e in parts[0]])
    for n, ((at, text), part) in enumerate(zip(upgrades, parts[1:], strict=True)):
        sources = ((f"p{n + 1}.lars", text),)
        said = feed([UpgradeRequest(f"r{n}", version_id(sources), "lars", at, sources).encode()])
        assert len(said) == 1, said
        if "refused" not in said[0]:
            applied.append((int(said[0]["at"]), text))
        if restart:
            stage = roundtrip(stage, _stage(first))
        feed([orjson.dumps(e) for e in part])
    feed([], now=10_000.0)  # input idle: the latest time evaluated too
    return [json.loads(x) for x in out], applied


def p(t: int, arg: str, pred: str = "p") -> dict:
    return {"t": t, "pred": pred, "args": [arg]}


@pytest.mark.parametrize("restart", [False, True])
def test_a_restatement_takes_back_what_the_old_at_head_dated_from_t_on(restart):
    """P: r(X) at U for p(X) at U within [3] when c holds; q(X) :- p(X).  Evaluated up to 6
    (c at 5 dated r(a)@2 and r(b)@4), then P' from T=5 (in the past): q only.  r(a)@2 and
    r(b)@4 came from the evaluation at 5 >= T: taken back.  The late c@3 is before T: P's
    evaluation at 3 dates r(a)@2 again."""
    old = "r(X) at U :- p(X) at U [3], c.\nq(X) :- p(X).\n"
    new = "q(X) :- p(X).\n"
    first = [{"t": 0}, p(2, "a"), p(4, "b"), {"t": 5, "pred": "c", "args": []}, {"t": 7}]
    got, applied = _chain(old, [first, [{"t": 3, "pred": "c", "args": []}, {"t": 8}]], [("5", new)], restart)
    assert applied == [(5, new)]
    assert meaning(got, (0, 8), running=True) == {("q", ("a",), 2), ("q", ("b",), 4), ("r", ("a",), 2)}


@pytest.mark.parametrize("restart", [False, True])
def test_a_new_at_head_dates_atoms_before_t_once_with_the_old_answers(restart):
    """P: w(X) at U for p(X) at U within [2]; P' from T=4 (in the past: 5 was evaluated): the
    same rule over [3].  w(a)@2 is both P's (its evaluation at 2) and P''s (at 4 and 5): written
    once; w(b)@1, late, is P's (evaluations 1..3) and P''s (evaluation at 4): once, then its
    retraction withdraws it from both."""
    old, new = "w(X) at U :- p(X) at U [2].\n", "w(X) at U :- p(X) at U [3].\n"
    first = [{"t": 0}, p(2, "a"), p(5, "c"), {"t": 6}]
    second = [p(1, "b"), {"t": 7}]
    got, _ = _chain(old, [first, second], [("4", new)], restart)
    assert meaning(got, (0, 7), running=True) == {("w", ("a",), 2), ("w", ("b",), 1), ("w", ("c",), 5)}
    got, _ = _chain(old, [first, [*second, {**p(1, "b"), "op": "retract"}]], [("4", new)], restart)
    assert meaning(got, (0, 7), running=True) == {("w", ("a",), 2), ("w", ("c",), 5)}


# mostly @-heads, enough input before each upgrade (few retractions), upgrade times often in the evaluated past
EVENT = st.builds(lambda t, pred, arg, retract: {"t": t, "pred": pred, "args": [arg],
                                                 **({"op": "retract"} if retract else {})},
                  st.integers(0, 10), st.sampled_from(["p", "r"]), st.sampled_from(["a", "b"]),
                  st.sampled_from([False, False, False, True]))
PROGRAM = st.lists(st.sampled_from([*LARS_AT_RULES, "q(X) :- p(X).", "q(X) :- p(X) [2]."]), min_size=1, max_size=3,
                   unique=True)


@SETTINGS
@given(programs=st.lists(PROGRAM, min_size=2, max_size=3),
       parts=st.tuples(st.lists(EVENT, min_size=2, max_size=8), st.lists(EVENT, max_size=6),
                       st.lists(EVENT, max_size=6)),
       times=st.lists(st.one_of(st.none(), st.integers(1, 9)), min_size=2, max_size=2), restart=st.booleans())
def test_chain_upgrades_mean_the_splice_per_evaluated_point(programs, parts, times, restart):
    texts = ["\n".join(rules) + "\n" for rules in programs]
    n = len(texts) - 1
    parts = [[{"t": 0}, *parts[0]], *parts[1:n], [*[e for part in parts[n:] for e in part], {"t": 11}]]
    upgrades = [(None if t is None else str(t), text) for t, text in zip(times, texts[1:], strict=False)]
    got, applied = _chain(texts[0], parts, upgrades, restart)
    events = [e for part in parts for e in part]
    want = reference_splice([(None, texts[0]), *applied], events)
    assert meaning(got, (0, 11), running=True) == want


@SETTINGS
@given(old=PROGRAM, new=PROGRAM, first=st.lists(EVENT, min_size=3, max_size=10),
       second=st.lists(EVENT, max_size=6), back=st.integers(0, 6), restart=st.booleans())
def test_restatements_of_a_program_whose_at_heads_read_the_time_evaluated(old, new, first, second, back, restart):
    """T in the past (``back`` points before the latest time read), the old program's @-head
    conditioned on the time evaluated (so its evaluations from T on date atoms that none
    before T does): what they dated is taken back."""
    old_text = "\n".join(["w(X) at U :- p(X) at U [3], r(X).", *old]) + "\n"
    new_text = "\n".join(new) + "\n"
    first = [{"t": 0}, *first]
    at = max(1, max(e["t"] for e in first) - back)
    parts = [first, [*second, {"t": 11}]]
    got, applied = _chain(old_text, parts, [(str(at), new_text)], restart)
    assert applied == [(at, new_text)]
    assert meaning(got, (0, 11), running=True) == reference_splice([(None, old_text), *applied], first + parts[1])
