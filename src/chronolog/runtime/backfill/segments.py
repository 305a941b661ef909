"""Segments of a history, and the replay of one segment through its dialect's ``Evaluator``
(pure Python, no Spark: the Spark job runs ``replay`` in its tasks, the tests in-process).

The answer span ``[lo, hi]`` is cut into segments ``[start, end)`` (the last one closed),
each evaluated on its own from a *warm-up* time that makes its answers exact, as the
dialect's ``Reach`` says: input before ``start − back`` cannot change them, tuple windows
need their last ``facts`` facts (the warm-up reaches back to hold them), and an evaluation
up to ``ahead`` after a time can still derive answers at it (LARS's ``@``-heads), so a
segment is evaluated until ``end + ahead``.  Without a reach one segment replays the whole
history (recursion through time, future operators, windowless ``at``: batch mode).

A segment pushes its events to a fresh evaluator exactly as ``chronolog run`` would — in
time order, arrival order within a time, so a retraction follows what it withdraws and the
evaluator applies its own retraction rule (``core.events.withdrawn`` for LARS) — and sums
the answer changes into their meaning inside the part of time the segment keeps.
"""

from __future__ import annotations

import bisect
from collections.abc import Callable, Iterable
from math import inf
from typing import Any

from chronolog.core import intervals as I
from chronolog.core.events import Event
from chronolog.core.intervals import Iv, meaning
from chronolog.core.reach import Reach, warm_up
from chronolog.core.records import record
from chronolog.evaluator import Time
from chronolog.runtime.backfill.meaning import Domain
from chronolog.runtime.fleet.topology import partition_of

Atom = tuple[str, tuple]  # (pred, args)


@record(frozen=True)
class Segment:
    """Replay the events meeting ``[warm, until]``; keep the answers in ``[start, end)``
    (``[start, end]`` when ``closed``: the last segment over rational time)."""

    index: int
    warm: Any  # a time; -inf: from the history's first time
    start: Any
    end: Any
    closed: bool
    until: Any  # evaluate up to here: the segment's last time and the reach ahead, within the history

    def keeps(self) -> Iv:
        return (self.start, True, self.end, self.closed)


def plan_segments(lo: Time, hi: Time, last: Time, reach: Reach | None, size: Time | None, step: int = 0,
                  facts_at: Callable[[Any], int] = lambda t: 0, first: Time | None = None) -> list[Segment]:
    """Segments over the answer span ``[lo, hi]`` of a history whose times end at ``last``.

    ``step``: 1 where time is integer points (LARS: the point ``t`` is ``[t, t+1)``, so the
    span is ``[lo, hi+1)``), 0 over rational time; ``size``: the length of a segment;
    ``facts_at(t)``: the number of facts at ``t`` (asked only when tuple windows count
    facts; a lower bound only makes a warm-up start earlier); ``first``: the history's first
    time, before which no warm-up reaches.  One segment when nothing bounds the reach, its
    answers kept up to ``last`` (a batch program's are the whole history's)."""
    if reach is None:
        return [Segment(0, -inf, lo, last + step, step == 0, last)]
    stop = hi + step
    if size is None or size <= 0:
        size = stop - lo
    out: list[Segment] = []
    start: Time = lo
    while True:
        end = min(stop, start + size)
        final = end == stop
        out.append(Segment(len(out), warm_up(start, reach, facts_at, first), start, end, final and step == 0,
                           min(last, end - step + reach.ahead)))
        if final:
            return out
        start = end


def extent(ev: Event) -> tuple[Time, Any]:
    """The times an event touches: its time, through its interval's end if it has one."""
    hi = I.of_span(ev.span)[2] if isinstance(ev.span, tuple) and ev.pred is not None else ev.t
    return ev.t, max(ev.t, hi)


def covering(segments: list[Segment], key: Callable[[Event], str | None] | None = None,
             parts: int = 1) -> Callable[[tuple], list[tuple[int, tuple]]]:
    """For a row whose last field is an ``Event``: (task, row) for every segment whose replay
    the event meets; task = segment × ``parts`` + the key partition of the event (``key``:
    its key, None for an event every partition needs, such as a time advance)."""
    warms = [s.warm for s in segments]
    untils = [s.until for s in segments]

    def assign(row: tuple) -> list[tuple[int, tuple]]:
        ev = row[-1]
        lo, hi = extent(ev)
        first = bisect.bisect_left(untils, lo)  # segments evaluating up to the event's start or later
        last = bisect.bisect_right(warms, hi)  # segments warming up at or before its end
        if parts == 1:
            return [(i, row) for i in range(first, last)]
        k = None if key is None else key(ev)
        mine = range(parts) if k is None else (partition_of(k, parts),)
        return [(i * parts + p, row) for i in range(first, last) for p in mine]

    return assign


def keyer(partition_key: dict[str, int] | None) -> Callable[[Event], str | None] | None:
    """An event's key under the row's ``partition_key`` (None: a time advance, or a predicate
    without a key position), or None if the program is not split by key."""
    if partition_key is None:
        return None

    def of(ev: Event) -> str | None:
        if ev.pred is None:
            return None
        pos = partition_key.get(f"{ev.pred}/{len(ev.args)}")
        return None if pos is None else str(ev.args[pos])

    return of


class Replayed:
    """What one segment's replay gives: the meaning per atom inside what it keeps, the
    evaluator's time points, its warnings, and the unmatched retractions inside the segment."""

    __slots__ = ("answers", "steps", "warnings", "unmatched")

    def __init__(self) -> None:
        self.answers: dict[Atom, list[Iv]] = {}
        self.steps = 0
        self.warnings: list[str] = []
        self.unmatched = 0


def replay(evaluator: Any, events: Iterable[Event], seg: Segment, keep: Iv | None, domain: Domain,
           first: Time) -> Replayed:
    """Push ``events`` (in time order, arrival order within a time) as ``chronolog run``
    does, evaluate to the segment's ``until``, and sum the answer changes inside ``keep``.

    The evaluator's input starts at the segment's warm-up (or the history's ``first``
    time), as the whole history's does, even where no event falls (a ``not`` holds from the
    span's start: a segment without events in its warm-up must not start its span later)."""
    out = Replayed()
    changes: dict[Atom, list[tuple[Iv, int]]] = {}
    of_span = domain.of_span

    def take(got: Iterable) -> None:
        for pred, args, span, diff in got:
            changes.setdefault((pred, tuple(args)), []).append((of_span(span), diff))

    unmatched = getattr(type(evaluator), "unmatched_retractions", None) is not None
    begin = Event(first if seg.warm == -inf else max(first, seg.warm))
    latest = None
    for ev in _framed(begin, events, Event(seg.until)):
        t = ev.t
        if latest is not None and t > latest:
            take(evaluator.advance(latest))
        if latest is None or t > latest:
            latest = t
        if ev.retract and unmatched:
            before = evaluator.unmatched_retractions
            evaluator.push(ev)
            if evaluator.unmatched_retractions > before and I.contains(seg.keeps(), t):
                out.unmatched += 1
            continue
        evaluator.push(ev)
    take(evaluator.finish(seg.until))
    out.steps = getattr(evaluator, "time_points", 0)
    if keep is not None:
        for atom, pieces in changes.items():
            held = I.intersect_sets(meaning(pieces), [keep])
            if held:
                out.answers[atom] = held
    return out


def _framed(begin: Event, events: Iterable[Event], end: Event) -> Iterable[Event]:
    yield begin
    yield from events
    yield end


def span_of(events: Iterable[Event], origin: Time | None = None) -> tuple[Any, Any] | None:
    """The first and last time of an arrival-ordered history as the job computes them: the
    first event's time, earlier only by events that are not retractions (the ``Reasoner``'s
    rule), and the latest time any event touches (an interval's end unless it is ``inf``)."""
    first: Any = None
    last: Any = None
    for ev in events:
        lo, hi = extent(ev)
        hi = lo if hi == inf else hi
        if first is None:
            first, last = ev.t, hi
            continue
        if not ev.retract:
            first = min(first, ev.t)
        last = max(last, hi)
    if first is None:
        return None
    return (first if origin is None else min(first, origin)), last


def truth(evaluator: Callable[[], Any], events: list[Event], domain: Domain, reach: Reach | None, lo: Time,
          hi: Time, size: Time | None = None, key: Callable[[Event], str | None] | None = None, parts: int = 1,
          origin: Time | None = None) -> dict[Atom, list[Iv]]:
    """The meaning per atom inside ``[lo, hi]`` of what ``chronolog run`` prints on the
    arrival-ordered ``events``, segment by segment (and key partition by key partition)
    in this process, as the Spark job's tasks do (``evaluator()``: a fresh evaluator)."""
    span = span_of(events, origin)
    if span is None:
        return {}
    first, last = span
    lo, hi = max(lo, first), min(hi, last)
    if lo > hi:
        return {}
    counts: dict[Any, int] = {}
    for ev in events:
        if ev.is_fact:
            counts[ev.t] = counts.get(ev.t, 0) + (-1 if ev.retract else 1)
    segments = plan_segments(lo, hi, last, reach, size, domain.step, lambda t: max(0, counts.get(t, 0)), first)
    tasks: dict[int, list[tuple[Any, int, Event]]] = {}
    assign = covering(segments, key, parts)
    for i, ev in enumerate(events):
        for task, row in assign((i, ev)):
            tasks.setdefault(task, []).append((row[1].t, row[0], row[1]))
    clip = domain.span(lo, hi)
    out: dict[Atom, list[Iv]] = {}
    for task in range(len(segments) * parts):
        seg = segments[task // parts]
        mine = [ev for _, _, ev in sorted(tasks.get(task, []), key=lambda r: r[:2])]
        got = replay(evaluator(), mine, seg, I.intersect(seg.keeps(), clip), domain, first)
        for atom, ivs in got.answers.items():
            out[atom] = I.coalesce(out.get(atom, []) + ivs)
    return out
