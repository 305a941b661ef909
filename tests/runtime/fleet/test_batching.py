"""When a service commits (runtime/fleet/batching.py): urgent records at once or after
the gap, ingest's open-point facts with the next urgent ones or after the hold,
state-only batches after the interval; nothing is lost or reordered.

Holding records longer never changes what the fleet means: a downstream
service that reads them later is one of the interleavings the pipeline
property tests already draw (tests/runtime/fleet/test_stages.py)."""

from __future__ import annotations

from hypothesis import given
from hypothesis import strategies as st

from chronolog.runtime.fleet.batching import Batching
from chronolog.runtime.fleet.config import commit_gap_for
from chronolog.stages.ingest import IngestStage
from chronolog.stages.interface import Out


def out(urgent: bool = True, n: int = 0) -> Out:
    return Out("grounded", 0, {"n": n}, urgent=urgent)


def test_urgent_records_commit_at_once_without_a_gap() -> None:
    b = Batching(gap=0.0)
    b.add([out()], [], True, now=1.0)
    assert b.due(1.0)


def test_urgent_records_wait_for_the_gap_since_the_last_start() -> None:
    b = Batching(gap=0.02)
    b.take(now=1.0)
    b.committed(now=1.0)
    b.add([out()], [], True, now=1.005)
    assert not b.due(1.005)
    assert abs(b.wait(0.1, 1.005) - 0.015) < 1e-9  # the poll wakes when the gap has passed
    assert b.wait(0.1, 1.03) == 0.0
    assert not b.due(1.019)
    assert b.due(1.020)


def test_an_upgrade_request_commits_at_once_whatever_the_gap() -> None:
    """Ingest marks the batch carrying an upgrade request ``prompt``: ``chronolog upgrade``
    waits for it, and it is rare, so it does not wait for the pace of ingest's commits."""
    stage = IngestStage(None, 1)
    request = b'{"upgrade":{"id":"r1","version":"v","dialect":"lars","at":"5","sources":[["a.lars","x."]]}}'
    outs, _ = stage.process([("facts", "chronolog.facts", 0, 0, request)])
    assert [o.prompt for o in outs] == [True]
    b = Batching(gap=0.03)
    b.take(now=1.0)
    b.committed(now=1.0)
    b.add([out()], [], True, now=1.005)
    assert not b.due(1.005)  # (an ordinary record waits for the gap)
    b.add(outs, [], True, now=1.006)
    assert b.due(1.006) and b.wait(0.1, 1.006) == 0.0
    b.take(now=1.006)
    b.add([out()], [], True, now=1.007)
    assert not b.due(1.007)  # the next one waits again


def test_slow_commits_stretch_the_gap_to_pace_times_their_mean() -> None:
    b = Batching(gap=0.03, pace=3.0)
    for start in (1.0, 1.1, 1.2):  # three commits of 20 ms each: mean 20 ms, gap 60 ms
        b.take(now=start)
        b.committed(now=start + 0.02)
    assert abs(b.commit_mean - 0.02) < 1e-9
    assert abs(b.least_gap() - 0.06) < 1e-9
    b.add([out()], [], True, now=1.23)
    assert not b.due(1.25)  # the fixed gap has passed, the stretched one has not
    assert b.due(1.26)


def test_quick_commits_keep_the_gap_and_no_gap_stays_none() -> None:
    quick = Batching(gap=0.03, pace=3.0)
    quick.take(now=1.0)
    quick.committed(now=1.004)
    assert quick.least_gap() == 0.03
    at_once = Batching(gap=0.0, pace=3.0)
    at_once.take(now=1.0)
    at_once.committed(now=1.5)  # however slow its commits, a service without a gap commits at once
    at_once.add([out()], [], True, now=1.5)
    assert at_once.least_gap() == 0.0 and at_once.due(1.5)


def test_one_very_slow_commit_stretches_the_gap_to_the_ceiling_and_briefly() -> None:
    b = Batching(gap=0.03, pace=3.0, ceiling=5.0)
    b.take(now=0.0)
    b.committed(now=5.0)  # a broker's hiccup: one commit of 5 s
    assert abs(b.least_gap() - 0.15) < 1e-9  # 5 gaps, not 15 s
    for k in range(1, 11):  # quick commits again: back to the plain gap within ten
        b.take(now=10.0 + k)
        b.committed(now=10.0 + k + 0.004)
    assert b.least_gap() == 0.03


def test_the_mean_follows_the_recent_commits() -> None:
    b = Batching(gap=0.03)
    b.take(now=0.0)
    b.committed(now=0.1)  # one slow commit
    for k in range(1, 30):
        b.take(now=float(k))
        b.committed(now=k + 0.005)
    assert abs(b.commit_mean - 0.005) < 0.001
    assert b.least_gap() == 0.03


def test_answer_lines_are_urgent() -> None:
    b = Batching(gap=0.0)
    b.add([], [b'{"t":1}'], True, now=1.0)
    assert b.due(1.0)


def test_records_nothing_can_use_yet_ride_with_the_next_urgent_ones() -> None:
    b = Batching(gap=0.0, hold=0.05, interval=10.0)
    b.add([out(False, 1)], [], True, now=1.0)
    b.add([out(False, 2)], [], True, now=1.01)
    assert not b.due(1.02)
    b.add([out(True, 3)], [], True, now=1.03)
    assert b.due(1.03)
    outs, _ = b.take(1.03)
    assert [o.payload["n"] for o in outs] == [1, 2, 3]
    assert not b.due(2.0)  # nothing left


def test_records_nothing_can_use_yet_wait_at_most_the_hold() -> None:
    b = Batching(gap=0.0, hold=0.05, interval=10.0)
    b.add([out(False)], [], True, now=1.0)
    b.add([out(False)], [], True, now=1.04)  # the hold counts from the oldest
    assert not b.due(1.049)
    assert b.due(1.05)


def test_a_batch_without_output_commits_after_the_interval() -> None:
    b = Batching(gap=0.0, hold=0.05, interval=0.5)
    b.committed(now=1.0)
    b.add([], [], True, now=1.1)
    assert not b.due(1.4)
    assert b.due(1.5)
    b.take(1.5)
    b.committed(1.51)
    b.add([], [], False, now=2.5)  # nothing consumed: nothing to commit
    assert not b.due(3.0)


def test_stopping_commits_whatever_is_held_or_consumed() -> None:
    b = Batching(gap=10.0, hold=10.0, interval=10.0)
    assert not b.due(0.0, stopping=True)
    b.add([out(False)], [], False, now=0.0)
    assert not b.due(0.0)
    assert b.due(0.0, stopping=True)


def test_ingest_holds_the_open_points_facts_not_markers_or_delayed_facts() -> None:
    stage = IngestStage(None, 1)
    first = stage.handle(b'{"t": 5, "pred": "p", "args": [1]}', "chronolog.facts", 0, 0)
    # the fact waits; the markers (the timeline starts at 5, the stream is at 5) do not
    assert [(o.record, o.urgent) for o in first] == [
        ({"t": 5, "pred": "p", "args": [1]}, False), ({"t": 5}, True), ({"t": 5}, True)]
    same = stage.handle(b'{"t": 5, "pred": "p", "args": [2]}', "chronolog.facts", 0, 1)
    assert [o.urgent for o in same] == [False]
    delayed = stage.handle(b'{"t": 3, "pred": "p", "args": [3]}', "chronolog.facts", 0, 2)
    # t=3 is before the timeline's start: a new start marker, and the fact itself is delayed
    assert [o.urgent for o in delayed] == [True, True]
    bad = stage.handle(b'not json', "chronolog.facts", 0, 3)
    assert [(o.topic, o.urgent) for o in bad] == [("dlq", False)]


@given(st.lists(st.tuples(st.lists(st.booleans(), max_size=4), st.booleans(), st.floats(0, 0.1)), max_size=40),
       st.sampled_from([0.0, 0.02]), st.sampled_from([0.0, 0.05]))
def test_every_record_is_committed_once_in_order(steps, gap, hold) -> None:  # type: ignore[no-untyped-def]
    b = Batching(gap=gap, hold=hold, interval=0.5)
    now, n, committed = 0.0, 0, []
    for urgents, consumed, dt in steps:
        now += dt
        outs = []
        for u in urgents:
            outs.append(out(u, n))
            n += 1
        b.add(outs, [], consumed, now)
        if b.due(now):
            got, _ = b.take(now)
            committed += [o.payload["n"] for o in got]
            b.committed(now)
            assert not b.urgent and not b.held
    if b.due(now, stopping=True):
        committed += [o.payload["n"] for o in b.take(now)[0]]
    assert committed == list(range(n))


def test_ingest_paces_the_pipeline_and_the_others_commit_at_once() -> None:
    assert commit_gap_for("ingest", {}) == 0.03  # the head of the pipeline sets the pace
    assert all(commit_gap_for(s, {}) == 0.0 for s in ("chain", "grounding", "reasoner", "output"))
    assert commit_gap_for("chain", {"CHRONOLOG_COMMIT_GAP": "0.005"}) == 0.005
    # one service's own setting wins over the fleet-wide one
    env = {"CHRONOLOG_COMMIT_GAP": "0.005", "CHRONOLOG_COMMIT_GAP_OUTPUT": "0"}
    assert commit_gap_for("output", env) == 0.0 and commit_gap_for("reasoner", env) == 0.005
