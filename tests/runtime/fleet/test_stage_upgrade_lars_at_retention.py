"""A LARS chain (``up --chain``) with a finite ``--retention`` whose running program has
``@``-heads, upgraded with T in the past (a restatement), at the stage without a broker.

What the running program's evaluations from T on dated before T is taken back by
evaluating it again on the input it still holds (``versions.switch``), counting its
evaluations before T only.  Near the retention edge those evaluations read input from
``T - its reach`` back: the service holds it, since ingest's stamp (``M - R - 1``) bounds T
from below and a chain prunes only below ``evaluated - (R + 1) - its reaches``
(``stages.horizon``, ``Reasoner.prune``).  These tests put T at the stamp, with the ``@``-head
dating an atom back to where the held input starts, and compare the answer stream with
``chronolog run --upgrade ... --retention R`` on the same arrivals."""

from __future__ import annotations

import contextlib
import io
import json
from pathlib import Path

import orjson
from dialect_programs import LARS_AT_RULES
from hypothesis import HealthCheck, assume, event, given, settings
from hypothesis import strategies as st
from meaning import meaning
from test_stage_upgrade_lars_strata import _request, per_stratum

from chronolog.cli.main import main
from chronolog.dialects.lars.changes import per_stratum_refusal
from chronolog.dialects.lars.hooks import lars_plan
from chronolog.dialects.lars.plan import plan_back
from chronolog.dialects.registry import RunOptions, lookup
from chronolog.stages.interface import StageSpec
from chronolog.versions import UpgradeRequest, version_id


def _stage(text: str, retention: int):  # noqa: ANN202
    row = lookup("lars")
    spec = StageSpec("chain", idle_flush=1000.0, chained_ingest=True, retention=retention)
    return row.layout(row.parse([("old.lars", text)]), RunOptions()).stage(spec)


def _chain(old: str, new: str, first: list[dict], at: int, second: list[dict], retention: int,
           idle: bool) -> tuple[list[dict], dict]:
    """The chain of ``old`` fed ``first`` (then idle: its latest time evaluated, when ``idle``),
    the request to ``new`` from ``at`` on, ``second``, then idle: the answers and its outcome."""
    stage = _stage(old, retention)
    out: list[bytes] = []
    said: list[dict] = []

    def feed(values: list[bytes], offset: int, now: float) -> None:
        leaving, lines = stage.process([(None, "chronolog.facts", 0, offset + i, v) for i, v in enumerate(values)],
                                       now=now)
        out.extend(lines)
        said.extend(orjson.loads(o.payload) for o in leaving if o.topic == "control")

    feed([orjson.dumps(e) for e in first], 0, 0.0)
    if idle:
        feed([], 0, 10_000.0)
    sources = (("new.lars", new),)
    feed([UpgradeRequest("r1", version_id(sources), "lars", str(at), sources).encode()], 1000, 10_000.0)
    feed([orjson.dumps(e) for e in second], 2000, 10_000.0)
    feed([], 0, 20_000.0)
    assert len(said) == 1, said
    return [json.loads(x) for x in out], said[0]


def _run_upgrade(tmp: Path, old: str, new: str, events: list[dict], at: int, retention: int,
                 span: tuple[int, int]) -> set:
    """What ``chronolog run old --input ... --upgrade AT=new --retention R`` means."""
    (tmp / "old.lars").write_text(old)
    (tmp / "new.lars").write_text(new)
    (tmp / "in.jsonl").write_text("".join(json.dumps(e) + "\n" for e in events))
    text = io.StringIO()
    with contextlib.redirect_stdout(text), contextlib.redirect_stderr(io.StringIO()):
        assert main(["run", str(tmp / "old.lars"), "--input", str(tmp / "in.jsonl"), "--retention", str(retention),
                     "--upgrade", f"{at}={tmp / 'new.lars'}"]) == 0
    return meaning([json.loads(x) for x in text.getvalue().splitlines()], span)


# c holds for 3 points after a d; the @-head dates r(X) back to p(X) within [3] while c holds:
# reaches 3 and 3, so at 64 (a pruning point) a chain with --retention 4 (its reasoner's horizon
# 5) keeps its input from 64 - 5 - 3 - 3 = 53 on
EDGE_OLD = "c :- d [3].\nr(X) at U :- p(X) at U [3], c.\nq(X) :- p(X).\n"
EDGE_NEW = "q(X) :- p(X).\n"


def _edge_stream(at: int) -> list[dict]:
    return [{"t": 0}, {"t": at - 6, "pred": "d", "args": []}, {"t": at - 3, "pred": "p", "args": ["a"]},
            {"t": at, "pred": "d", "args": []}, {"t": 64}]


def test_the_old_at_head_dating_to_the_retention_edge_is_restated_exactly(tmp_path):
    """Evaluated up to 64 (pruned there), --retention 4: ingest's stamp is 64 - 4 - 1 = 59, and
    EDGE_NEW reads nothing back, so T=59 is the earliest upgrade taken.  r(a)@56 was dated by
    two of EDGE_OLD's evaluations: at 56 (c from d@53, the oldest input held) and at 59 (c from
    d@59).  The one at 59 is EDGE_NEW's from now on, the one at 56 stays EDGE_OLD's: r(a)@56
    stays, as do c at 53..56 and q(a)@56; c at 59..62 (EDGE_OLD's evaluations from T on) is
    taken back, and EDGE_NEW derives nothing else.  T=58 is refused (it would need 58)."""
    got, said = _chain(EDGE_OLD, EDGE_NEW, _edge_stream(59), 59, [{"t": 66}], 4, idle=True)
    assert said.get("at") == "59", said
    want = {("c", (), t) for t in range(53, 57)} | {("q", ("a",), 56), ("r", ("a",), 56)}
    span = (0, 66)
    assert meaning(got, span, running=True) == want
    assert _run_upgrade(tmp_path, EDGE_OLD, EDGE_NEW, [*_edge_stream(59), {"t": 66}], 59, 4, span) == want
    _, said = _chain(EDGE_OLD, EDGE_NEW, _edge_stream(58), 58, [{"t": 66}], 4, idle=True)
    assert said["refused"].endswith("need input from 58 on ([T - 0, now]), the retention kept it from 59 on"), said


# events around the pruning point 64 (the stream starts at 0): the chain has forgotten the
# input before 64 - (R + 1) - its reaches when the request comes
EVENT = st.builds(lambda t, pred, arg, retract: {"t": t, "pred": pred, "args": [arg],
                                                 **({"op": "retract"} if retract else {})},
                  st.integers(48, 70), st.sampled_from(["p", "r", "d"]), st.sampled_from(["a", "b"]),
                  st.sampled_from([False, False, False, True]))
OLD_RULES = ["c(X) :- d(X) [3].", "w(X) at U :- p(X) at U [3], c(X).", "w(X) at U :- p(X) at U [2], not c(X).",
             *LARS_AT_RULES]
NEW_RULES = [*OLD_RULES, "q(X) :- p(X).", "q(X) :- p(X) [2]."]


@settings(max_examples=120, deadline=None, suppress_health_check=list(HealthCheck))
@given(old=st.lists(st.sampled_from(OLD_RULES), min_size=1, max_size=3, unique=True),
       new=st.lists(st.sampled_from(NEW_RULES), min_size=1, max_size=3, unique=True),
       first=st.lists(EVENT, min_size=3, max_size=14), second=st.lists(EVENT, max_size=8),
       latest=st.sampled_from([64, 64, 65, 67]), shift=st.one_of(st.integers(0, 2), st.integers(-3, 8)),
       retention=st.integers(1, 6), idle=st.sampled_from([True, True, False]))
def test_restatements_of_at_heads_under_a_retention_mean_run_upgrade(tmp_path_factory, old, new, first, second,
                                                                      latest, shift, retention, idle):
    """An old program with an ``@``-head (always one reading a window of derived c(X), so its
    evaluations read input further back than the atoms they date), T ``shift`` points after the
    earliest one ingest's stamp allows (``M - R - 1`` + the new program's reach), mostly in the
    past and at the edge: taken (the answers mean run --upgrade --retention R on the same
    arrivals, late events on both sides of T, some too late) or refused with the spans (the
    old program's answers stay)."""
    old_text = "\n".join(["w(X) at U :- p(X) at U [3], c(X).", *old]) + "\n"
    new_text = "\n".join(new) + "\n"
    head = [{"t": 0}, *[e for e in first if e["t"] <= latest], {"t": latest}]
    back = plan_back(lars_plan(lookup("lars").parse([("new.lars", new_text)])))
    at = min(latest + 1, latest - retention - 1 + (back or 0) + shift)
    got, said = _chain(old_text, new_text, head, at, [*second, {"t": 72}], retention, idle)
    event("taken" if "at" in said else "refused")
    span = (0, 72)
    events = [*head, *second, {"t": 72}]
    want = _run_upgrade(tmp_path_factory.mktemp("run"), old_text, new_text if "at" in said else old_text, events, at,
                        retention, span)
    assert meaning(got, span, running=True) == want


# a fleet of one service per stratum (``up`` without ``--chain``): each changed stratum's new
# reasoner takes over from T on and sends the points whose content differs
STRATA_POOL = [*OLD_RULES, "u(X) :- w(X) at U [2], not r(X).", "q(X) :- p(X) [2]."]


@settings(max_examples=60, deadline=None, suppress_health_check=list(HealthCheck))
@given(old=st.lists(st.sampled_from(STRATA_POOL), min_size=1, max_size=3, unique=True),
       new=st.lists(st.sampled_from(STRATA_POOL), min_size=1, max_size=3, unique=True),
       first=st.lists(EVENT, min_size=3, max_size=14), second=st.lists(EVENT, max_size=8),
       latest=st.sampled_from([64, 64, 65, 67]), shift=st.one_of(st.integers(0, 2), st.integers(-3, 8)),
       retention=st.integers(1, 6), seed=st.integers(0, 3))
def test_per_stratum_restatements_of_at_heads_under_a_retention_mean_run_upgrade(
        tmp_path_factory, old, new, first, second, latest, shift, retention, seed):
    """The same for a fleet of one service per stratum (restarts from stored state, a seeded
    consumption order): taken, or refused by every reasoner alike; a program pair the fleet
    cannot take stratum by stratum is left out (``per_stratum_refusal``)."""
    old_text = "\n".join(["w(X) at U :- p(X) at U [3], c(X).", *old]) + "\n"
    new_text = "\n".join(new) + "\n"
    old_plan, new_plan = (lars_plan(lookup("lars").parse([("x", t)])) for t in (old_text, new_text))
    assume(per_stratum_refusal(old_plan, new_plan) is None)
    head = [{"t": 0}, *[e for e in first if e["t"] <= latest], {"t": latest}]
    back = plan_back(new_plan)
    at = min(latest + 1, latest - retention - 1 + (back or 0) + shift)
    got, said = per_stratum(head, _request(str(at), new_text), [*second, {"t": 72}], seed=seed, restarts=3,
                            old=old_text, retention=retention)
    taken = bool(said) and all("at" in s for s in said)
    assert taken or all("refused" in s for s in said), said
    event("taken" if taken else "refused")
    span = (0, 72)
    want = _run_upgrade(tmp_path_factory.mktemp("run"), old_text, new_text if taken else old_text,
                        [*head, *second, {"t": 72}], at, retention, span)
    assert meaning(got, span, running=True) == want
