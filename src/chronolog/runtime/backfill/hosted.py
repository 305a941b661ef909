"""The backfill of a hosted dialect (DatalogMTL, RTEC: any dialect with its own evaluator in ``chronolog.dialects.registry``).

LARS programs are backfilled point by point with the engine (``job``).  Any
other dialect is driven through its ``Evaluator``, exactly as ``chronolog
run`` drives it, and compared by *meaning*: a set of intervals over
rational time per ground atom.

* The history is parsed in Spark tasks with the dialect's own reader.
* The span is cut into segments when the dialect gives a reach (how far
  before a time the input can still change the answers there): a segment
  ``[start, end)`` replays the events that meet ``[start − reach, end]`` and
  keeps the answers inside ``[start, end)``.  Without a reach (recursion
  through time, future operators, an unbounded operator) one segment replays
  the whole history.
* A segment's events are pushed in time order (arrival order within a time:
  a retraction follows what it withdraws) with a time advance at its end,
  and the evaluator's answer changes are summed into their meaning.
* Published answer lines (``t`` or ``interval``, ``diff``) are summed the
  same way, per ground atom, on the *cells* of the atom's end points (the
  points and the open gaps between them), against the evaluator's meaning;
  the differences leave as -1/+1 interval lines.  Both are clipped to the
  history's span (CONTRACT §3: an ``inf`` end means "up to the last time").
"""

from __future__ import annotations

import bisect
import time
from collections.abc import Callable, Iterable, Iterator
from dataclasses import dataclass
from fractions import Fraction
from math import inf
from typing import Any

import orjson

from chronolog.core.errors import ChronologError, InputError
from chronolog.core.events import Event
from chronolog.core.source import Loc
from chronolog.dialects.mtl import intervals as I
from chronolog.dialects.mtl.intervals import Iv
from chronolog.dialects.registry import lookup, read_line
from chronolog.evaluator import Span, Time, interval_line
from chronolog.runtime.backfill.spark_io import BackfillStats, locator, raw_lines

Atom = tuple[str, str]  # (pred, args as JSON text): a key Spark can group on


# ---------------------------------------------------------------- the meaning of interval changes


def span_iv(span: Span) -> Iv:
    return (span.lo, span.lo_closed, inf if span.hi is None else span.hi, span.hi_closed and span.hi is not None)


def corrections(truth: list[Iv], published: Iterable[tuple[Iv, int]]) -> tuple[list[tuple[Iv, int]], int]:
    """The -1/+1 intervals that turn the sum of the ``published`` changes into
    exactly the points of ``truth``, and the number of stretches of time where
    the published changes summed to neither 0 nor 1.

    The atom's end points cut time into cells (each point, and the open gap
    between two points) on which every interval is all or nothing, so summing
    is counting per cell."""
    published = list(published)
    ends = sorted({e for iv, _ in published for e in (iv[0], iv[2])} | {e for iv in truth for e in (iv[0], iv[2])}
                  - {inf, -inf})
    n = 2 * len(ends) + 1  # cell 2k+1 is ends[k]; cell 2k is the gap before it

    def cells(iv: Iv) -> tuple[int, int]:
        first = 0 if iv[0] == -inf else 2 * bisect.bisect_left(ends, iv[0]) + (1 if iv[1] else 2)
        last = n - 1 if iv[2] == inf else 2 * bisect.bisect_left(ends, iv[2]) + (1 if iv[3] else 0)
        return first, last

    delta = [0] * (n + 1)
    for iv, diff in published:
        a, b = cells(iv)
        delta[a] -= diff
        delta[b + 1] += diff
    bad = 0
    total = 0
    for a in range(n):
        total += delta[a]
        if total not in (0, -1) and (a == 0 or delta[a - 1] in (0, -1)):
            bad += 1  # a new stretch of time where the published sum is off
        delta[a] = total
    for iv in truth:
        a, b = cells(iv)
        for c in range(a, b + 1):
            delta[c] += 1
    out: list[tuple[Iv, int]] = []
    c = 0
    while c < n:
        v = delta[c]
        d = c
        while d + 1 < n and delta[d + 1] == v:
            d += 1
        if v:
            lo = -inf if c == 0 else ends[(c - 1) // 2]
            hi = inf if d == n - 1 else ends[d // 2]
            iv = I.make(lo, c % 2 == 1, hi, d % 2 == 1)
            assert iv is not None
            out.extend([(iv, 1 if v > 0 else -1)] * abs(v))
        c = d + 1
    return out, bad


def meaning(changes: Iterable[tuple[Iv, int]]) -> list[Iv]:
    """The points where the changes of one atom sum to 1 (coalesced)."""
    fixes, _ = corrections([], changes)
    return I.coalesce(iv for iv, d in fixes if d < 0)  # what must be withdrawn is what holds


# ---------------------------------------------------------------- answer lines


def parse_interval_answer(raw: str, loc: Loc) -> tuple[str, tuple, Iv, int] | None:
    """One answer line over rational time (``t`` a number or ``"7/2"``, or an
    ``interval``): (pred, args, interval, diff); None for a blank line."""
    from chronolog.dialects.mtl.parser import interval_from_text
    from chronolog.runtime.backfill.points import answer_fields

    fields = answer_fields(raw, loc)
    if fields is None:
        return None
    obj, pred, args, diff = fields
    if "t" in obj:
        t = obj["t"]
        try:
            if isinstance(t, bool) or not isinstance(t, (int, str)):
                raise ValueError
            return pred, args, I.point(I.norm(Fraction(t))), diff
        except (ValueError, ZeroDivisionError):
            raise InputError(f'"t" must be a time: an integer or a rational string such as "7/2", not '
                             f'{orjson.dumps(t).decode()}', loc) from None
    when = obj["interval"]
    if type(when) is not str:
        raise InputError('"interval" must be a string such as "[2,7)"', loc)
    try:
        return pred, args, interval_from_text(when, loc.file, loc.line), diff
    except InputError as exc:
        raise InputError(f'bad "interval" {orjson.dumps(when).decode()}: {exc.message}', loc) from None


def correction_lines(fixes: Iterable[tuple[Atom, Iv, int]], dialect: str) -> list[dict]:
    """Answer lines (CONTRACT §3) for the corrections, in a deterministic order."""
    points = lookup(dialect).points
    out = []
    for (pred, args), iv, diff in sorted(fixes, key=lambda f: (f[0], f[1][0], not f[1][1], f[2])):
        span = Span(iv[0], None if iv[2] == inf else iv[2], iv[1], iv[3])
        out.append(orjson.loads(interval_line(pred, tuple(orjson.loads(args)), span, diff, points)))
    return out


# ---------------------------------------------------------------- segments


@dataclass(frozen=True)
class Segment:
    """Replay the events meeting ``[warm, end]``; keep the answers in ``[start, end)``
    (``[start, end]`` for the last segment)."""

    index: int
    warm: Time | float  # -inf: from the first event
    start: Time
    end: Time
    last: bool

    def keeps(self) -> Iv:
        return (self.start, True, self.end, self.last)


def plan_segments(lo: Time, hi: Time, reach: Time | None, size: Time | None) -> list[Segment]:
    """Segments over the answer span ``[lo, hi]``: one when nothing bounds the reach."""
    if reach is None or size is None or size <= 0 or hi - lo <= size:
        return [Segment(0, -inf if reach is None else lo - reach, lo, hi, True)]
    out = []
    start: Time = lo
    while True:
        end = min(hi, start + size)
        out.append(Segment(len(out), start - reach, start, end, end == hi))
        if end == hi:
            return out
        start = end


def extent(ev: Event) -> tuple[Time, Time | float]:
    """The times an event touches: its time, through its interval's end if it has one."""
    span = ev.span
    hi = span[2] if isinstance(span, tuple) and ev.pred is not None else ev.t  # type: ignore[index]
    return ev.t, max(ev.t, hi)


def covering(segments: list[Segment]) -> Callable[[tuple], list[tuple[int, tuple]]]:
    """(segment, row) for every segment whose replay the row's event meets."""
    warms = [s.warm for s in segments]
    ends = [s.end for s in segments]

    def assign(row: tuple) -> list[tuple[int, tuple]]:
        lo, hi = extent(row[3])
        first = bisect.bisect_left(ends, lo)  # segments ending at or after the event's start
        last = bisect.bisect_right(warms, hi)  # segments warming up at or before its end
        return [(i, row) for i in range(first, last)]

    return assign


def replay(evaluator: Any, events: list[Event], seg: Segment, clip: Iv,
           first: Time | None = None) -> dict[tuple[str, tuple], list[Iv]]:
    """Push ``events`` (sorted in time order) as ``chronolog run`` does, advance to the
    segment's end, and return the meaning of the answers inside ``clip``.

    ``first`` is the history's first time: the segment's input starts at its
    warm-up (or there), as the whole history's does, even where no event
    falls (a ``not`` holds from the span's start: a segment without events
    in its warm-up must not start its span later)."""
    changes: dict[tuple[str, tuple], list[tuple[Iv, int]]] = {}

    def take(got: list) -> None:
        for pred, args, span, diff in got:
            changes.setdefault((pred, tuple(args)), []).append((span_iv(span), diff))

    latest = None
    begin = [] if first is None else [Event(first if seg.warm == -inf else max(first, seg.warm))]
    for ev in begin + events + [Event(seg.end)]:
        if latest is not None and ev.t > latest:
            take(evaluator.advance(latest))
        if latest is None or ev.t > latest:
            latest = ev.t
        evaluator.push(ev)
    take(evaluator.finish(seg.end))
    out = {}
    for atom, pieces in changes.items():
        held = I.intersect_sets(meaning(pieces), [clip])
        if held:
            out[atom] = held
    return out


# ---------------------------------------------------------------- the Spark job


def _parse_history(sources: tuple, dialect: str, locate: Callable[[int, int, int], Loc]) -> Callable[[Iterable], Iterator[tuple]]:
    """Raw (partition, offset, line) rows -> ("ok", partition, offset, k, event) or ("error", p, o, message)."""

    def run(rows: Iterable[tuple[int, int, str]]) -> Iterator[tuple]:
        program = _program(sources, dialect)  # RTEC reads CSV rows by its declarations
        for p, o, raw in rows:
            if isinstance(raw, (bytes, bytearray)):  # archive and Kafka records
                raw = raw.decode("utf-8", errors="replace")
            try:
                events = list(read_line(dialect, program, raw.replace("\n", " "), "-"))
            except InputError as exc:
                col = exc.loc.col if exc.loc else 1
                yield "error", p, o, f"{locate(p, o, col)}: error: {exc.message}"
                continue
            for k, ev in enumerate(events):  # named by the history's line or record, for the evaluator's warnings
                col = ev.loc.col if ev.loc else 1
                yield "ok", p, o, k, Event(ev.t, ev.pred, ev.args, ev.retract, locate(p, o, col), ev.span)

    return run


_PROGRAMS: dict[tuple, Any] = {}


def replayer(dialect: str, program: Any, warn: Callable[[str], None] = lambda m: None) -> Any:
    """The evaluator replaying a complete history (the row's ``replay``, else its stream evaluator)."""
    row = lookup(dialect)
    return row.stream(program) if row.replay is None else row.replay(program, warn)


def _program(sources: tuple, dialect: str) -> Any:
    from chronolog.dialects.load import program_from_sources

    key = (sources, dialect)
    if key not in _PROGRAMS:
        _PROGRAMS[key] = program_from_sources(sources, dialect)
    return _PROGRAMS[key]


def _evaluate(sources: tuple, dialect: str, segments: list[Segment], clip: Iv,
              first: Time) -> Callable[[int, Iterable], Iterator]:
    def run(index: int, rows: Iterable[tuple[int, tuple]]) -> Iterator[tuple]:
        seg = segments[index]
        events = [r[3] for _, r in sorted(((r[3].t, r[0], r[1], r[2]), r) for _, r in rows)]
        warnings: list[str] = []
        evaluator = replayer(dialect, _program(sources, dialect), warnings.append)
        keep = I.intersect(seg.keeps(), clip)
        got = replay(evaluator, events, seg, keep, first) if keep is not None else {}
        for (pred, args), ivs in got.items():
            yield "answer", (pred, orjson.dumps(list(args)).decode()), ivs
        yield "info", len(got), getattr(evaluator, "time_points", 0), warnings[:20]

    return run


def backfill_hosted(
    spark: Any, sources: tuple, dialect: str, history: Any, answers: Any, t_from: Time, t_to: Time, *,
    segment: Time | None = None, idle: float = 1.5, progress: Callable[[str], None] = lambda m: None,
) -> tuple[list[dict], Any]:
    """The correction lines for ``[t_from, t_to]`` of a hosted dialect's program and the job's counts."""
    began = time.monotonic()
    stats = BackfillStats(ui=spark.sparkContext.uiWebUrl)
    program = _program(sources, dialect)
    row = lookup(dialect)
    replayer(dialect, program)  # program errors before Spark works
    locate = locator(history)

    progress(f"reading history from {history.describe()}")
    rows = raw_lines(spark, history, idle).mapPartitions(_parse_history(sources, dialect, locate)).cache()
    try:
        bad = rows.filter(lambda r: r[0] == "error").takeOrdered(1, key=lambda r: (r[1], r[2]))
        if bad:
            raise ChronologError(bad[0][3])
        events = rows.filter(lambda r: r[0] == "ok").map(lambda r: r[1:])

        def summary(ev: Event) -> tuple:
            lo, hi = extent(ev)  # an interval running to inf does not extend the span (CONTRACT §3)
            return 1, int(ev.is_fact and not ev.retract), int(ev.retract), lo, lo if hi == inf else hi

        def both(a: tuple, b: tuple) -> tuple:
            return a[0] + b[0], a[1] + b[1], a[2] + b[2], min(a[3], b[3]), max(a[4], b[4])

        if events.isEmpty():
            stats.seconds = time.monotonic() - began
            return [], stats
        n, facts, retractions, first, last = events.map(lambda r: summary(r[3])).reduce(both)
        if row.origin is not None:
            first = min(first, row.origin)  # answers exist from the dialect's origin (RTEC: time 0)
        stats.events, stats.facts, stats.retractions = n, facts, retractions
        stats.span = (first, last)
        lo, hi = max(t_from, first), min(t_to, last)
        if lo > hi:
            stats.seconds = time.monotonic() - began
            return [], stats
        stats.window = (lo, hi)
        clip: Iv = (lo, True, hi, True)
        reach = row.reach(program)
        size = segment
        if size is None and reach is not None:
            parallel = max(1, 2 * spark.sparkContext.defaultParallelism)
            size = max(Fraction(hi - lo) / parallel, 4 * reach, 16)
        # without a reach the one segment replays everything: the answers of a batch program
        # are clipped to the whole history's span, not to [T1, T2]
        segments = plan_segments(lo, hi, reach, size) if reach is not None else [Segment(0, -inf, lo, last, True)]
        stats.segments = len(segments)
        progress(f"evaluating {len(segments)} segments of [{lo},{hi}] (span [{first},{last}]) with the "
                 f"{dialect} evaluator" + ("" if reach is not None else " (no bounded reach: one segment)"))
        evaluated = (
            events.flatMap(covering(segments)).partitionBy(len(segments), lambda i: i)
            .mapPartitionsWithIndex(_evaluate(sources, dialect, segments, clip, first))
        ).cache()
        try:
            for _, count, steps, warnings in evaluated.filter(lambda r: r[0] == "info").collect():
                stats.recomputed += count
                stats.evaluations += steps
                stats.warnings.extend(w for w in warnings if w not in stats.warnings)
            truth = evaluated.filter(lambda r: r[0] == "answer").map(lambda r: (r[1], r[2]))
            if answers is not None:
                progress(f"reading published answers from {answers.describe()}")
                where = locator(answers)
                published = raw_lines(spark, answers, idle).mapPartitions(_parse_published(where, clip)).cache()
                bad = published.filter(lambda r: r[0] == "error").takeOrdered(1, key=lambda r: (r[1], r[2]))
                if bad:
                    raise ChronologError(bad[0][3])
                said = published.filter(lambda r: r[0] == "ok").map(lambda r: (r[1], (r[2], r[3])))
            else:
                said = spark.sparkContext.emptyRDD()
            fixed = truth.cogroup(said).map(lambda kv: _atom_fixes(kv[0], kv[1][0], kv[1][1])).collect()
        finally:
            evaluated.unpersist()
    finally:
        rows.unpersist()
    stats.bad_sums = sum(b for _, b in fixed)
    if stats.bad_sums:
        stats.warnings.append(f"warning: published answers summed to neither 0 nor 1 on {stats.bad_sums} "
                              f"stretches of time; corrected to the true answers")
    lines = correction_lines([f for fixes, _ in fixed for f in fixes], dialect)
    stats.corrections = len(lines)
    stats.seconds = time.monotonic() - began
    return lines, stats


def _parse_published(where: Callable[[int, int, int], Loc], clip: Iv) -> Callable[[Iterable], Iterator[tuple]]:
    def run(rows: Iterable[tuple[int, int, str]]) -> Iterator[tuple]:
        for p, o, raw in rows:
            if isinstance(raw, (bytes, bytearray)):
                raw = raw.decode("utf-8", errors="replace")
            try:
                got = parse_interval_answer(raw, where(p, o, 1))
            except InputError as exc:
                yield "error", p, o, str(exc)
                continue
            if got is None:
                continue
            pred, args, iv, diff = got
            inside = I.intersect(iv, clip)
            if inside is not None:
                yield "ok", (pred, orjson.dumps(list(args)).decode()), inside, diff

    return run


def _atom_fixes(atom: Atom, truth: Iterable[list[Iv]], said: Iterable[tuple[Iv, int]]) -> tuple[list, int]:
    held = I.coalesce(iv for ivs in truth for iv in ivs)
    fixes, bad = corrections(held, said)
    return [(atom, iv, d) for iv, d in fixes], bad
