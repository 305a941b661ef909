"""RTEC's windowed mode on random event descriptions with late events (docs/rtec.md, "RTEC's
windowed mode"): an event that arrives after the query Q' but still inside the next window
(Q'+s-ω, Q'+s] is used by that window, which also gives the final verdict of every point it can
affect; so delays up to ω - s ("RTEC absorbs delays only when ω exceeds s by at least the
delay") give the windowed answer of the same stream in time order."""

from __future__ import annotations

import io
import json

from hypothesis import HealthCheck, event, given, settings
from hypothesis import strategies as st
from test_rtec import meaning, program
from test_rtec_retention import _late_within, described_streams

from chronolog.core.events import Event
from chronolog.dialects.rtec.evaluator import RtecEvaluator
from chronolog.dialects.rtec.windowed import WindowedRtecEvaluator
from chronolog.runtime.embedded import run_evaluator


def _run(evaluator: RtecEvaluator, events: list[Event], horizon: int) -> dict:
    out = io.StringIO()
    run_evaluator(evaluator, events, out)
    return meaning([json.loads(x) for x in out.getvalue().splitlines()], horizon=horizon)


def _late(events: list[Event], delays: list[int]) -> list[Event]:
    """The arrival order when event i (with a predicate) is ``delays[i]`` ticks late: it arrives
    after every event of a time up to its own time plus the delay."""
    keyed = [((e.t + (d if e.pred else 0), 1 if d and e.pred else 0, i), e)
             for i, (e, d) in enumerate(zip(events, delays, strict=True))]
    return [e for _, e in sorted(keyed, key=lambda ke: ke[0])]


@settings(max_examples=30, deadline=None, suppress_health_check=list(HealthCheck))
@given(described_streams(), st.integers(1, 12), st.integers(0, 10), st.data())
def test_delays_inside_the_window_give_the_answer_in_time_order(case, step, slack, data) -> None:
    text, events, _, _ = case
    window = step + slack
    most = slack  # a delay up to ω - s
    delays = data.draw(st.lists(st.sampled_from([0, 0, 0, most, max(0, most - 1), most // 2]),
                                min_size=len(events), max_size=len(events)))
    arrived = _late(events, delays)
    horizon = events[-1].t + 2 * window + step
    ordered = WindowedRtecEvaluator(program(text), window, step)
    want = _run(ordered, events, horizon)
    late = WindowedRtecEvaluator(program(text), window, step)
    assert _run(late, arrived, horizon) == want
    assert late.too_late == ordered.too_late  # (input at or before the first window's start: none uses it)
    event("late events" if arrived != events else "in time order")


@settings(max_examples=20, deadline=None, suppress_health_check=list(HealthCheck))
@given(described_streams(), st.integers(1, 12), st.integers(0, 10), st.randoms(use_true_random=False))
def test_retractions_inside_the_window_give_the_corrected_stream_in_time_order(case, step, slack, rnd) -> None:
    """Retractions as well (of events of the stream, or of extra copies), each at most ω - s
    after the event's time: the windowed answer of what they leave, in time order."""
    text, events, _, _ = case
    window = step + slack
    arrived, ordered = _late_within(events, rnd, slack)
    horizon = events[-1].t + 2 * window + step
    want = _run(WindowedRtecEvaluator(program(text), window, step), [*ordered, events[-1]], horizon)
    assert _run(WindowedRtecEvaluator(program(text), window, step), arrived, horizon) == want
