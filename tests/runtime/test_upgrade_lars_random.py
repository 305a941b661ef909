"""``chronolog run --upgrade`` of random stratified LARS programs (tests/strategies.py: every
construct — comparisons, assignments, tuple windows, ``@`` with constant and variable times,
``@``-heads, program facts) chained over one to three upgrades, on streams with late events and
retractions on both sides of each T: the splice per evaluated time point of a naive evaluator
(tests/reference.py, docs/reference/contract.md §6)."""

from __future__ import annotations

import json

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from meaning import meaning
from reference import reference_splice
from strategies import programs, streams

from chronolog.cli.main import main


@st.composite
def late_streams(draw) -> list[dict]:
    """A random stream (tests/strategies.py) whose events arrive partly out of time order, with
    some of them retracted later (and a retraction of an event never sent, within the
    stream's span: one that matches nothing is ignored, CONTRACT §2, and sets no first time)."""
    events = [{"t": e.t, "pred": e.pred, "args": list(e.args)} if e.pred else {"t": e.t} for e in draw(streams())]
    first, rest = events[:1], events[1:]
    order = draw(st.permutations(range(len(rest)))) if draw(st.booleans()) else range(len(rest))
    arrived = first + [rest[i] for i in order]
    facts = [e for e in arrived if "pred" in e]
    for _ in range(draw(st.integers(0, 2)) if facts else 0):
        gone = draw(st.sampled_from(facts))
        arrived.insert(draw(st.integers(arrived.index(gone) + 1, len(arrived))), {**gone, "op": "retract"})
    if draw(st.booleans()):
        arrived.append({"t": draw(st.integers(first[0]["t"], 6)), "pred": "p", "args": [draw(st.sampled_from([1, "a"]))],
                        "op": "retract"})
    return [*arrived, {"t": 7}]


@settings(max_examples=60, deadline=None, suppress_health_check=list(HealthCheck))
@given(versions=st.lists(programs(stratified=True), min_size=2, max_size=4), events=late_streams(),
       times=st.lists(st.integers(0, 8), min_size=3, max_size=3, unique=True))
def test_random_programs_chained_upgrades_are_the_splice_per_evaluated_point(tmp_path_factory, capsys, versions,
                                                                               events, times):
    tmp = tmp_path_factory.mktemp("chain")
    texts = [str(p) for p in versions]
    files = []
    for i, text in enumerate(texts):
        (tmp / f"p{i}.lars").write_text(text)
        files.append(str(tmp / f"p{i}.lars"))
    (tmp / "in.jsonl").write_text("".join(json.dumps(e) + "\n" for e in events))
    starts = sorted(times)[: len(texts) - 1]
    options = [x for start, f in zip(starts, files[1:], strict=True) for x in ("--upgrade", f"{start}={f}")]
    capsys.readouterr()
    code = main(["run", files[0], "--input", str(tmp / "in.jsonl"), *options])
    got = capsys.readouterr()
    assert code == 0, got.err
    lines = [json.loads(x) for x in got.out.splitlines()]
    times_seen = [e["t"] for e in events]
    expected = reference_splice([(None, texts[0]), *zip(starts, texts[1:], strict=True)], events)
    assert meaning(lines, (min(times_seen), max(times_seen)), running=True) == expected, (texts, starts)
