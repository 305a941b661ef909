"""--retention for RTEC: late events within it are repaired as without it, older ones are ignored
and counted, and the evaluator forgets (and exports) nothing a repair within it could read."""

from __future__ import annotations

import io
import json
import random

import pytest
from hypothesis import HealthCheck, event, given, settings
from hypothesis import strategies as st
from test_explain_rtec import POOL
from test_explain_rtec import _program as _ec_program
from test_rtec import SDF, SIMPLE, ev, meaning, program, run_restored

from chronolog.core.events import Event
from chronolog.dialects.rtec.evaluator import RtecEvaluator
from chronolog.runtime.embedded import run_evaluator

LENGTH = 1500


def _events(seed: int, which: str) -> list[Event]:
    """A long random stream of the hand-built programs' events, in time order."""
    rnd = random.Random(seed)
    names = (("switch_on", 0.1), ("switch_off", 0.1), ("fuse", 0.05), ("arm", 0.1), ("tag", 0.05)) \
        if which == "simple" else (("a", 0.5), ("b", 0.4), ("ping", 0.1), ("vote", 0.1))
    out = []
    for t in range(LENGTH):
        for name, p in names:
            if rnd.random() < p:
                args = (rnd.choice("ab"),) if name in ("arm", "tag") else (rnd.choice([1, 2]),) if name == "vote" else ()
                out.append(ev(t, name, *args))
    return out


def _run(evaluator: RtecEvaluator, events: list[Event]) -> list[dict]:
    out = io.StringIO()
    run_evaluator(evaluator, events, out)
    return [json.loads(x) for x in out.getvalue().splitlines()]


def _input_times(state: dict) -> list[int]:
    return [item[3] if item[0] == "e" else item[4] for item in state["inputs"]]


@pytest.mark.parametrize("seed", range(4))
@pytest.mark.parametrize("which", ["simple", "sdf"])
def test_late_events_within_the_retention_give_the_stream_in_time_order(seed: int, which: str) -> None:
    text = SIMPLE if which == "simple" else SDF
    events = _events(seed, which)
    rnd = random.Random(50 + seed)
    late = sorted(events, key=lambda e: e.t + (rnd.randint(1, 15) if rnd.random() < 0.2 else 0))
    # a second evaluation mode: everything kept, the events in time order, one window
    expected = meaning(_run(RtecEvaluator(program(text), 10_000), events), horizon=LENGTH + 50)
    kept = RtecEvaluator(program(text), 5, retention=20)
    assert meaning(_run(kept, late), horizon=LENGTH + 50) == expected
    assert kept.too_late == 0 and kept.floor > LENGTH - 100
    # what it keeps (and exports) is the last stretch of the stream, not the stream
    times = _input_times(kept.export_state())
    assert times and min(times) >= LENGTH - 100
    assert len(times) < len(events) / 5


def test_an_event_older_than_the_retention_is_ignored_and_counted() -> None:
    events = _events(1, "simple")
    whole = _run(RtecEvaluator(program(SIMPLE), 5, retention=20), events)
    evaluator = RtecEvaluator(program(SIMPLE), 5, retention=20)
    stale = [ev(LENGTH - 200, "switch_on"), ev(LENGTH - 200, "fuse")]  # would change the answer if applied
    cut = next(i for i, e in enumerate(events) if e.t > LENGTH - 100)
    got = _run(evaluator, events[:cut] + stale + events[cut:])
    assert evaluator.too_late == 2
    assert meaning(got, horizon=LENGTH + 50) == meaning(whole, horizon=LENGTH + 50)


def test_restored_state_after_forgetting_continues_identically() -> None:
    events = _events(2, "simple")
    whole = meaning(_run(RtecEvaluator(program(SIMPLE), 5, retention=20), events), horizon=LENGTH + 50)
    made: list[RtecEvaluator] = []

    def make() -> RtecEvaluator:
        made.append(RtecEvaluator(program(SIMPLE), 5, retention=20))
        return made[-1]

    assert run_restored(make, events, LENGTH + 50) == whole
    assert made[0].floor > 0 and made[1].floor > made[0].floor  # forgotten before and after the restore


@st.composite
def described_streams(draw) -> tuple[str, list[Event], int, int]:
    """A random event description (test_explain_rtec's rule groups: inertia, several values,
    derived events, start/end, negation, the interval operations, a deadline), a stream of its
    input events over 120 ticks, and a retention and a step for the run that keeps it."""
    dropped = draw(st.sets(st.sampled_from(sorted(POOL)), max_size=3))
    names = ["a", "b", "c"] + (["ab"] if "m" not in dropped else [])  # ab: input events of a derived event too
    events = []
    for t in range(draw(st.integers(40, 120))):
        for _ in range(draw(st.sampled_from([0, 0, 0, 1, 1, 2]))):
            events.append(ev(t, draw(st.sampled_from(names)), draw(st.sampled_from(["x1", "x2"]))))
    events.append(Event(draw(st.integers(120, 130))))
    return _ec_program(sorted(set(POOL) - dropped)), events, draw(st.integers(0, 12)), draw(st.sampled_from([1, 2, 5]))


def _late_within(events: list[Event], rnd: random.Random, most: int) -> tuple[list[Event], list[Event]]:
    """Some events up to ``most`` ticks late, and retractions (of events of the stream or extra ones) at
    most ``most`` ticks after their time, after the event itself: the arrivals, and the stream in time
    order they mean (CONTRACT §2: a retraction withdraws the latest earlier equal event)."""
    keyed: list[tuple[tuple[int, int, int], Event]] = []
    for e in events:
        delay = rnd.randint(1, most) if e.pred and most and rnd.random() < 0.3 else 0
        keyed.append(((e.t + delay, 1 if delay else 0, len(keyed)), e))
    facts = [(k, e) for k, e in keyed if e.pred]
    for _ in range(rnd.randint(0, 4) if facts else 0):
        (due, _, _), e = rnd.choice(facts)
        if rnd.random() < 0.5:  # an extra copy of it, withdrawn again
            due = e.t + rnd.randint(0, most)
            keyed.append(((due, 1, len(keyed)), e))
        keyed.append(((rnd.randint(due, e.t + most), 1, len(keyed)), Event(e.t, e.pred, e.args, retract=True)))
    arrived = [e for _, e in sorted(keyed, key=lambda ke: ke[0])]
    kept: list[Event] = []
    for e in arrived:
        if e.retract:
            same = [i for i, k in enumerate(kept) if (k.t, k.pred, k.args) == (e.t, e.pred, e.args)]
            if same:
                del kept[same[-1]]
        else:
            kept.append(e)
    return arrived, sorted(kept, key=lambda e: e.t)


@settings(max_examples=25, deadline=None, suppress_health_check=list(HealthCheck))
@given(described_streams(), st.randoms(use_true_random=False))
def test_random_descriptions_with_late_events_within_the_retention(case, rnd) -> None:
    """What a run keeping everything gives on the corrected stream in time order, with every
    late event and retraction within the retention (so none is too late), while the evaluator
    forgets behind it (every ``step``, or every quarter of the retention)."""
    text, events, retention, step = case
    arrived, ordered = _late_within(events, rnd, retention)
    horizon = events[-1].t + 20
    expected = meaning(_run(RtecEvaluator(program(text), 10_000), ordered), horizon=horizon)
    kept = RtecEvaluator(program(text), step, retention=retention)
    assert meaning(_run(kept, arrived), horizon=horizon) == expected
    assert kept.too_late == 0
    event("forgot" if kept.floor > 0 else "kept all")
    event("repaired" if kept.delayed else "nothing late")
