"""Statically determined fluents reading ungrounded ones (a union, a complement, a relative
complement), window by window — a window per time point, late events and retractions — give
the answers of one evaluation of the same facts (the retracted ones left out) over the whole
stream.  As in RTEC, a read of an ungrounded fluent is empty (``unground.py``)."""

from __future__ import annotations

import io
import json
import random

import pytest
from meaning import sampled_meaning

from chronolog.core.events import Event
from chronolog.dialects.rtec.evaluator import RtecEvaluator
from chronolog.dialects.rtec.parser import finish_program, parse_rtec
from chronolog.runtime.embedded import run_evaluator

# alarm: a union of open and armed; quiet: a relative complement of it, grounded and reported
# (alarm, ungrounded, reads as []: quiet is armed); calm: a complement and both: an
# intersection, ungrounded and so neither computed nor reported
PROG = """
initiatedAt(open(D)=true, T) :- happensAt(opened(D), T).
terminatedAt(open(D)=true, T) :- happensAt(closed(D), T).
initiatedAt(armed(D)=true, T) :- happensAt(arm(D), T).
terminatedAt(armed(D)=true, T) :- happensAt(disarm(D), T).
holdsFor(alarm(D)=true, I) :- holdsFor(open(D)=true, A), holdsFor(armed(D)=true, B), union_all([A,B], I).
holdsFor(calm(D)=true, I) :- holdsFor(open(D)=true, A), complement_all([A], I).
holdsFor(both(D)=true, I) :- holdsFor(alarm(D)=true, A), holdsFor(calm(D)=true, C), intersect_all([A,C], I).
holdsFor(quiet(D)=true, I) :- holdsFor(armed(D)=true, A), holdsFor(alarm(D)=true, B),
    relative_complement_all(A, [B], I).
grounding(quiet(D)=true) :- door(D).
grounding(open(D)=true) :- door(D).
grounding(armed(D)=true) :- door(D).
door(d1). door(d2). door(d3).
"""
HI = 40


def _stream(seed: int) -> tuple[list[Event], list[Event]]:
    """(arrival order with time advances, late events and retractions; the facts that stay)."""
    rnd = random.Random(seed)
    facts = sorted({(rnd.randrange(HI - 5), rnd.choice(["opened", "closed", "arm", "disarm"]),
                     rnd.choice(["d1", "d2", "d3"])) for _ in range(rnd.randrange(4, 30))})
    arrive = {f: f[0] + (rnd.randrange(1, 8) if rnd.random() < 0.2 else 0) for f in facts}
    gone = {f for f in facts if rnd.random() < 0.15}
    # a retraction is sent three time points after its fact arrives; one due after the last
    # time point is never sent, so that fact stays (seed 225: disarm(d2)@34 arrives at 38)
    gone = {f for f in gone if arrive[f] + 3 < HI}
    arrivals: list[Event] = []
    for t in range(HI):
        arrivals += [Event(ft, p, (d,)) for ft, p, d in facts if arrive[(ft, p, d)] == t]
        arrivals += [Event(ft, p, (d,), retract=True) for ft, p, d in sorted(gone) if arrive[(ft, p, d)] + 3 == t]
        arrivals.append(Event(t))
    # a fact due to arrive after the last time point never arrives
    kept = [Event(ft, p, (d,)) for ft, p, d in facts if (ft, p, d) not in gone and arrive[(ft, p, d)] < HI]
    return arrivals, kept + [Event(HI - 1)]


def _meaning(events: list[Event], step: int) -> set:
    out = io.StringIO()
    run_evaluator(RtecEvaluator(finish_program(parse_rtec(PROG, "doors.prolog")), step), events, out)
    return sampled_meaning([json.loads(x) for x in out.getvalue().splitlines()], HI)


@pytest.mark.parametrize("seed", range(40))
def test_window_by_window_as_one_evaluation(seed: int) -> None:
    arrivals, kept = _stream(seed)
    assert _meaning(arrivals, 1) == _meaning(kept, 10_000)


def test_an_instance_whose_every_showing_event_is_retracted_is_gone() -> None:
    """Seed 225: every opened(d2) is retracted; arm(d2)@33 and disarm(d2)@34 come late, and
    disarm(d2)'s retraction would be due after the last time point, so it stays."""
    arrivals, kept = _stream(225)
    assert _meaning(arrivals, 1) == _meaning(kept, 10_000)


@pytest.mark.parametrize("seed", [*range(40), 225])
def test_the_facts_that_stay_are_the_arrivals_less_their_retractions(seed: int) -> None:
    """The one evaluation's facts are exactly what the arrivals leave after their retractions
    (a retraction the stream never sends takes nothing away)."""
    arrivals, kept = _stream(seed)
    left: list[tuple] = []
    for e in arrivals:
        if e.pred is not None:
            fact = (e.t, e.pred, e.args)
            left.remove(fact) if e.retract else left.append(fact)
    assert sorted(left) == sorted((e.t, e.pred, e.args) for e in kept if e.pred is not None)


def test_a_retracted_showing_event_and_late_arming_by_hand() -> None:
    """opened(d2)@2 arrives and is retracted at 5; arm(d2)@5 and disarm(d2)@6 arrive at 7.
    armed(d2) holds on [6,7) (initiated at 5, terminated at 6); alarm(d2), ungrounded, reads
    as [] (docs/rtec.md), so quiet(d2) = armed(d2) minus nothing = [6,7), window by window as
    in one evaluation; open(d2) holds nowhere after the retraction."""
    d2 = ("d2",)
    arrivals = [Event(0), Event(2, "opened", d2), *map(Event, range(2, 5)),
                Event(2, "opened", d2, retract=True), Event(5), Event(6),
                Event(5, "arm", d2), Event(6, "disarm", d2), *map(Event, range(7, 10))]
    kept = [Event(5, "arm", d2), Event(6, "disarm", d2), Event(9)]
    want = sampled_meaning([{"interval": "[6,7)", "pred": "quiet", "args": ["d2"]},
                            {"interval": "[6,7)", "pred": "armed", "args": ["d2"]}], HI)
    assert _meaning(arrivals, 1) == want
    assert _meaning(kept, 10_000) == want
