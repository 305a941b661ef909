"""Ungrounded statically determined fluents with a union, complement or relative complement
(``RtecEvaluator._outlives``), window by window — a window per time point, late events and
retractions — give the answers of one evaluation of the same facts (the retracted ones
left out) over the whole stream."""

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

# alarm: a union shown through open; quiet: a relative complement of it, grounded and reported;
# calm: a complement, ungrounded and reported; both: an intersection of two outliving fluents
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
    arrivals: list[Event] = []
    for t in range(HI):
        arrivals += [Event(ft, p, (d,)) for ft, p, d in facts if arrive[(ft, p, d)] == t]
        arrivals += [Event(ft, p, (d,), retract=True) for ft, p, d in sorted(gone) if arrive[(ft, p, d)] + 3 == t]
        arrivals.append(Event(t))
    kept = [Event(ft, p, (d,)) for ft, p, d in facts if (ft, p, d) not in gone]
    return arrivals, kept + [Event(HI - 1)]


def _meaning(events: list[Event], step: int) -> set:
    out = io.StringIO()
    run_evaluator(RtecEvaluator(finish_program(parse_rtec(PROG, "doors.prolog")), step), events, out)
    return sampled_meaning([json.loads(x) for x in out.getvalue().splitlines()], HI)


@pytest.mark.parametrize("seed", range(40))
def test_window_by_window_as_one_evaluation(seed: int) -> None:
    arrivals, kept = _stream(seed)
    assert _meaning(arrivals, 1) == _meaning(kept, 10_000)


@pytest.mark.xfail(strict=True, reason="an older discrepancy, open: every opened(d2) is retracted, so open(d2) "
                   "never holds, but window by window alarm(d2) is still an instance (one evaluation has none), "
                   "so quiet(d2) = armed minus alarm does not hold at 34")
def test_an_instance_whose_every_showing_event_is_retracted_is_gone() -> None:
    arrivals, kept = _stream(225)
    assert _meaning(arrivals, 1) == _meaning(kept, 10_000)
