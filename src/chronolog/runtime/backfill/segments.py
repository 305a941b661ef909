"""History, segments and the exact evaluation of one segment (pure Python, no Spark).

A history is the input stream in arrival order.  Its *meaning* (CONTRACT §2)
is the stream put in time order, events of one time point in arrival order,
with every retracted event removed — what ``chronolog run`` finally means.
``History.of`` builds that log exactly as the ``Reasoner`` changes its own
(a retraction withdraws the latest earlier event with the same time, pred
and args; one that matches nothing is ignored), and the span it evaluates
(first to last time seen).

A span of evaluation times is split into segments; each segment starts its
engine at a warm-up point computed by ``Reasoner.warm_up_start`` (the largest
time window over stream predicates, enough facts for the tuple windows, the
first time point for a windowless ``at``), so its evaluations are exactly
those of one run over the whole history.  An unbounded reach gives a single
segment from the first time point.  Every segment knows the stream's global
first time point ``t1`` (windows are clipped there).
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass, field

from chronolog.core.events import Event, withdrawn
from chronolog.dialects.lars.engine.core import Fact
from chronolog.dialects.lars.plan import Plan
from chronolog.dialects.lars.reasoner import Reasoner, make_engine

Point = tuple[str, tuple, int]  # (pred name, args, time point): one answer point


@dataclass
class History:
    """The final meaning of an arrival-ordered history."""

    log: dict[int, list[Fact]] = field(default_factory=dict)  # facts per time point, arrival order
    t1: int | None = None  # first time point of the evaluated span
    last: int | None = None  # last time point seen
    events: int = 0
    facts: int = 0
    retractions: int = 0
    unmatched: int = 0  # retractions that matched no earlier event

    @classmethod
    def of(cls, events: Iterable[Event]) -> History:
        h = cls()
        for ev in events:
            h.push(ev)
        return h

    def push(self, ev: Event) -> None:
        """Apply one event in arrival order (the ``Reasoner``'s rules for t1 and the log)."""
        self.events += 1
        t = ev.t
        applied = apply_event(self.log, ev)
        if ev.is_fact:
            if ev.retract:
                self.retractions += 1
                self.unmatched += not applied
            else:
                self.facts += 1
        if self.t1 is None:
            self.t1 = self.last = t
            return
        assert self.last is not None
        self.last = max(self.last, t)
        if applied and t < self.t1:  # a delayed fact or time advance before the first time point
            self.t1 = t

    def facts_at(self, t: int) -> list[Fact]:
        return self.log.get(t, [])


def apply_event(log: dict[int, list[Fact]], ev: Event) -> bool:
    """Change ``log`` as the reasoner does (``events.withdrawn``); False for a
    retraction that matches nothing."""
    if not ev.is_fact:
        return True
    assert ev.pred is not None
    fact = ((ev.pred, len(ev.args)), tuple(ev.args))
    if not ev.retract:
        log.setdefault(ev.t, []).append(fact)
        return True
    entries = log.get(ev.t, [])
    i = withdrawn(entries, fact)
    if i is None:
        return False
    del entries[i]
    return True


# ---------------------------------------------------------------- segments


@dataclass(frozen=True)
class Segment:
    """Evaluate ``warm .. end``; the evaluations ``start .. end`` are this segment's answers."""

    index: int
    warm: int
    start: int
    end: int


def evaluation_span(plan: Plan, t1: int, last: int, lo: int, hi: int) -> tuple[int, int] | None:
    """The evaluation times whose answers can fall in ``[lo, hi]`` (already clipped to the
    history's span), or None when the span is empty.  An ``@``-head derives atoms up to
    ``output_reach`` points back, so evaluations after ``hi`` count too."""
    lo, hi = max(lo, t1), min(hi, last)
    if lo > hi:
        return None
    reach = plan.output_reach
    return lo, last if reach is None else min(last, hi + reach)


def plan_segments(
    plan: Plan, t1: int, first: int, end: int, size: int, facts_at: Callable[[int], int]
) -> list[Segment]:
    """Split the evaluation times ``first .. end`` into segments of ``size`` points.

    ``facts_at(t)`` is the number of stream facts at ``t`` (a lower bound is
    enough: it only makes a tuple-window warm-up start earlier).  A program
    whose state reaches back to the first time point is one segment.
    """
    if plan.state_reach is None:
        return [Segment(0, t1, first, end)]
    size = max(1, size)
    probe = Reasoner(plan, sink=None)  # type: ignore[arg-type]  # only its warm-up rule is used
    log = lambda t: (range(facts_at(t)), None)  # noqa: E731 - warm_up_start only counts the facts
    out: list[Segment] = []
    for i, start in enumerate(range(first, end + 1, size)):
        out.append(Segment(i, probe.warm_up_start(log, t1, start), start, min(end, start + size - 1)))  # type: ignore[arg-type]
    return out


def default_segment_size(plan: Plan, first: int, end: int, parallelism: int) -> int:
    """About two segments per core, each at least four warm-ups long (and 16 points)."""
    n = end - first + 1
    per = -(-n // max(1, 2 * parallelism))
    return max(per, 4 * (plan.state_reach or 0), 16)


def evaluate_segment(
    plan: Plan, t1: int, seg: Segment, log: Callable[[int], Sequence[Fact]], lo: int, hi: int,
    warn: Callable[[str], None] = lambda m: None,
) -> set[Point]:
    """The answer points in ``[lo, hi]`` of the evaluations ``seg.start .. seg.end``."""
    engine = make_engine(plan, t1)
    out: set[Point] = set()
    for t in range(seg.warm, seg.end + 1):
        result = engine.step(t, log(t))
        if t < seg.start:
            continue
        if not result.consistent:
            warn(f"warning: the program has no answer set at t={t}; no answers for that evaluation")
        for (pred, _), args, T in engine.derived_at():
            if type(T) is int and lo <= T <= hi:
                out.add((pred, tuple(args), T))
    return out


def key_partitioner(plan: Plan) -> Callable[[str, tuple], str | None] | None:
    """The partition key of a fact when the program can be split by key (the
    fleet's analysis, ``topology.partition_key``), else None: each key
    partition is then evaluated on its own facts and the answers are unioned."""
    from chronolog.runtime.fleet.topology import partition_key

    key, _ = partition_key(plan)
    if key is None:
        return None

    def of(pred: str, args: tuple) -> str | None:
        pos = key.get(f"{pred}/{len(args)}")
        return None if pos is None else str(args[pos])

    return of


def truth(
    plan: Plan, history: History, lo: int, hi: int, size: int | None = None, key_partitions: int = 1
) -> set[Point]:
    """The answer points in ``[lo, hi]`` that ``chronolog run`` means on ``history``,
    evaluated segment by segment (and key partition by key partition, where the
    program allows) in this process; the Spark job does the same in tasks."""
    from chronolog.runtime.fleet.topology import partition_of

    if history.t1 is None or history.last is None:
        return set()
    span = evaluation_span(plan, history.t1, history.last, lo, hi)
    if span is None:
        return set()
    first, end = span
    if size is None:
        size = end - first + 1
    segs = plan_segments(plan, history.t1, first, end, size, lambda t: len(history.facts_at(t)))
    keyer = key_partitioner(plan)
    parts = key_partitions if keyer is not None else 1
    out: set[Point] = set()
    for part in range(parts):
        def facts(t: int, part: int = part) -> list[Fact]:
            got = history.facts_at(t)
            if parts == 1:
                return got
            return [f for f in got if partition_of(keyer(f[0][0], f[1]), parts) == part]  # type: ignore[misc]

        for seg in segs:
            out |= evaluate_segment(plan, history.t1, seg, facts, max(lo, history.t1), min(hi, history.last))
    return out
