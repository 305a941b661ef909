"""The PySpark backfill job (``chronolog backfill``, CONTRACT §5): one pipeline for every
dialect, driven through its registry row and its ``Evaluator`` only.

1. Read the history — a JSONL file, the Parquet archive or the input topic — as
   ``(partition, offset, line)`` in arrival order and parse every line in Spark tasks
   with the dialect's reader (the first bad line stops the job with its location).
2. One reduction gives the span (first and last time, the ``Reasoner``'s rule: the first
   event in arrival order, earlier only by events that are not retractions; RTEC's answers
   start at its ``origin``) and the counts; when tuple windows count facts (the row's
   ``Reach.facts``), also the number of facts per time point.
3. The driver cuts the answer span into segments (``segments.py``); every event goes to
   the segments whose replay it meets, and where the row gives a ``partition_key``, to its
   key's partition of them (time advances to all).  A task pushes its events in time order
   to a fresh evaluator, as ``chronolog run`` does, and sums the answer changes into their
   meaning inside what the segment keeps.
4. The published answers are parsed the same way, clipped to the span and grouped per
   atom with the true meaning; the differences are the corrections, written in the
   dialect's time domain (``meaning.py``).
"""

from __future__ import annotations

import time
import uuid
from collections.abc import Callable, Iterable, Iterator
from math import inf
from typing import Any

import orjson

from chronolog.contract.topics import TopicNames
from chronolog.core import intervals as I
from chronolog.core.errors import ChronologError, InputError
from chronolog.core.events import Event
from chronolog.core.intervals import Iv, corrections
from chronolog.core.reach import widest
from chronolog.core.source import Loc
from chronolog.dialects.load import program_from_sources
from chronolog.dialects.registry import RunOptions, lookup, read_line
from chronolog.runtime.backfill.meaning import Atom, Domain, domain_of
from chronolog.runtime.backfill.segments import Segment, covering, extent, keyer, plan_segments, replay
from chronolog.runtime.backfill.spark_io import BackfillStats, Source, locator, raw_lines
from chronolog.runtime.fleet import kafka_clients
from chronolog.runtime.upgrade import program_versions

FACTS_TOPIC = TopicNames().facts
ANSWERS_TOPIC = TopicNames().answers

Sources = tuple[tuple[str, str], ...]  # (file name, text) of the program files

_PROGRAMS: dict[tuple, Any] = {}


def program_of(sources: Sources, dialect: str) -> Any:
    """The parsed program, once per Python worker."""
    key = (sources, dialect)
    if key not in _PROGRAMS:
        _PROGRAMS[key] = program_from_sources(sources, dialect)
    return _PROGRAMS[key]


Upgrades = tuple[tuple[Any, Sources], ...]  # (T, the program from T on), T increasing


def evaluator_of(dialect: str, program: Any, options: RunOptions, warn: Callable[[str], None] = lambda m: None,
                 upgrades: Upgrades = ()) -> Any:
    """The evaluator ``chronolog run`` would use (``options``: LARS's --mode and --seed), with
    ``upgrades`` the version in force at each time (``run --upgrade``); the backfill's
    answers are what ``run`` prints on the whole history."""
    row = lookup(dialect)
    evaluator = row.evaluator(program, options, warn)
    if not upgrades:
        return evaluator
    programs = [program, *(program_of(src, dialect) for _, src in upgrades)]
    evaluators = [evaluator, *(row.evaluator(p, options, warn) for p in programs[1:])]
    return program_versions(programs, evaluators, [t for t, _ in upgrades])


def programs_of(sources: Sources, dialect: str, upgrades: Upgrades) -> list[Any]:
    """Every program version, the first one first."""
    return [program_of(sources, dialect), *(program_of(src, dialect) for _, src in upgrades)]


def parse_history(sources: Sources, dialect: str, locate: Callable[[int, int, int], Loc]) -> Callable[[Iterable], Iterator[tuple]]:
    """Raw (partition, offset, line) rows -> ("ok", partition, offset, k, event) or ("error", p, o, message)."""

    def run(rows: Iterable[tuple[int, int, Any]]) -> Iterator[tuple]:
        program = program_of(sources, dialect)  # RTEC reads CSV rows by its declarations
        for p, o, raw in rows:
            if isinstance(raw, (bytes, bytearray)):  # archive and Kafka records
                raw = raw.decode("utf-8", errors="replace")
            if raw.startswith('{"upgrade":'):  # a program upgrade request (chronolog upgrade): not input
                yield "upgrade", p, o, raw
                continue
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


def _evaluate(sources: Sources, dialect: str, options: RunOptions, segments: list[Segment], parts: int, clip: Iv,
              first: Any, domain: Domain, upgrades: Upgrades = ()) -> Callable[[int, Iterable], Iterator]:
    """One task: one segment (one key partition of it) replayed; ("answer", atom, intervals)
    rows, then one ("info", atoms, time points, warnings, unmatched) row."""

    def run(index: int, rows: Iterable[tuple[int, tuple]]) -> Iterator[tuple]:
        seg = segments[index // parts]
        events = [r[3] for _, r in sorted(((r[3].t, r[0], r[1], r[2]), r) for _, r in rows)]
        warnings: list[str] = []
        evaluator = evaluator_of(dialect, program_of(sources, dialect), options, warnings.append, upgrades)
        got = replay(evaluator, events, seg, I.intersect(seg.keeps(), clip), domain, first)
        for (pred, args), ivs in got.answers.items():
            yield "answer", (pred, orjson.dumps(list(args)).decode()), ivs
        yield "info", len(got.answers), got.steps, list(dict.fromkeys(warnings))[:20], got.unmatched

    return run


def _summary(ev: Event, p: int, o: int, k: int) -> tuple:
    """(events, facts, retractions, first in arrival order, earliest not retracted, last time)."""
    lo, hi = extent(ev)  # an interval running to inf does not extend the span (CONTRACT §3)
    return (1, int(ev.is_fact and not ev.retract), int(ev.retract), (p, o, k, ev.t),
            inf if ev.retract else ev.t, lo if hi == inf else hi)


def _both(a: tuple, b: tuple) -> tuple:
    return a[0] + b[0], a[1] + b[1], a[2] + b[2], min(a[3], b[3]), min(a[4], b[4]), max(a[5], b[5])


def backfill(
    spark: Any, sources: Sources, dialect: str, history: Source, answers: Source | None,
    t_from: Any, t_to: Any, *, segment: Any = None, idle: float = 1.5,
    progress: Callable[[str], None] = lambda m: None, key_partitions: int | None = None,
    mode: str | None = None, seed: int = 0, upgrades: Upgrades = (),
) -> tuple[list[dict], BackfillStats]:
    """The correction lines for ``[t_from, t_to]`` and the job's counts.  ``mode``/``seed``:
    how a LARS program that is not stratified is evaluated (docs/tms.md#backfill);
    ``upgrades``: the program versions from their times on (``run --upgrade``)."""
    began = time.monotonic()
    stats = BackfillStats(ui=spark.sparkContext.uiWebUrl)
    row = lookup(dialect)
    options = RunOptions(mode=mode, seed=seed)
    program = program_of(sources, dialect)
    evaluator_of(dialect, program, options, upgrades=upgrades)  # program errors before Spark works
    versions = programs_of(sources, dialect, upgrades)
    domain = domain_of(row)
    locate = locator(history)

    progress(f"reading history from {history.describe()}")
    rows = raw_lines(spark, history, idle).mapPartitions(parse_history(sources, dialect, locate)).cache()
    try:
        bad = rows.filter(lambda r: r[0] == "error").takeOrdered(1, key=lambda r: (r[1], r[2]))
        if bad:
            raise ChronologError(bad[0][3])
        requests = rows.filter(lambda r: r[0] == "upgrade").count()
        if requests:
            stats.warnings.append(f"warning: the history holds {requests} program upgrade requests (chronolog "
                                  "upgrade); they are not input: pass each as --upgrade T=FILE to re-evaluate with "
                                  "the program version in force at each time")
        events = rows.filter(lambda r: r[0] == "ok").map(lambda r: r[1:])
        if events.isEmpty():
            stats.seconds = time.monotonic() - began
            return [], stats
        n, facts, retractions, arrival, earliest, last = events.map(lambda r: _summary(r[3], *r[:3])).reduce(_both)
        first = min(arrival[3], earliest)
        if row.origin is not None:
            first = min(first, row.origin)  # answers exist from the dialect's origin (RTEC: time 0)
        stats.events, stats.facts, stats.retractions = n, facts, retractions
        stats.span = (first, last)
        lo, hi = max(t_from, first), min(t_to, last)
        if lo > hi:
            stats.seconds = time.monotonic() - began
            return [], stats
        stats.window = (lo, hi)
        clip = domain.span(lo, hi)
        reach = widest([row.reach(p) for p in versions])
        counts: dict[Any, int] = {}
        if reach is not None and reach.facts:  # tuple-window warm-ups count facts
            counts = dict(
                events.filter(lambda r: r[3].is_fact).map(lambda r: (r[3].t, -1 if r[3].retract else 1))
                .reduceByKey(lambda a, b: a + b).filter(lambda kv: kv[1] > 0).collect()
            )
        size = segment
        if size is None and reach is not None:
            length = min(last, hi + reach.ahead) + domain.step - lo
            size = max(domain.size(length, max(1, 2 * spark.sparkContext.defaultParallelism)), 4 * reach.back, 16)
        segments = plan_segments(lo, hi, last, reach, size, domain.step, lambda t: counts.get(t, 0), first)
        keys = [row.partition_key(p) for p in versions]
        key = keyer(keys[0] if all(k == keys[0] for k in keys) else None)  # one key for every version, or none
        parts = 1 if key is None else (key_partitions or spark.sparkContext.defaultParallelism)
        stats.segments, stats.key_partitions = len(segments), parts
        progress(f"evaluating {len(segments)} segments of [{lo},{hi}] (span [{first},{last}]) with the {dialect} evaluator"
                 + ("" if reach is not None else " (no bounded reach: one segment)")
                 + ("" if parts == 1 else f" and {parts} key partitions each"))
        evaluated = (
            events.flatMap(covering(segments, key, parts)).partitionBy(len(segments) * parts, lambda i: i)
            .mapPartitionsWithIndex(_evaluate(sources, dialect, options, segments, parts, clip, first, domain,
                                              upgrades))
        ).cache()
        try:
            for _, count, steps, warnings, unmatched in evaluated.filter(lambda r: r[0] == "info").collect():
                stats.recomputed += count
                stats.evaluations += steps
                stats.unmatched += unmatched
                stats.warnings.extend(w for w in warnings if w not in stats.warnings)
            truth = evaluated.filter(lambda r: r[0] == "answer").map(lambda r: (r[1], r[2]))
            if answers is not None:
                progress(f"reading published answers from {answers.describe()}")
                where = locator(answers)
                published = raw_lines(spark, answers, idle).mapPartitions(_parse_published(where, clip, domain)).cache()
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
    lines = domain.lines([f for fixes, _ in fixed for f in fixes])
    stats.corrections = len(lines)
    stats.seconds = time.monotonic() - began
    return lines, stats


def _parse_published(where: Callable[[int, int, int], Loc], clip: Iv, domain: Domain) -> Callable[[Iterable], Iterator[tuple]]:
    def run(rows: Iterable[tuple[int, int, Any]]) -> Iterator[tuple]:
        for p, o, raw in rows:
            if isinstance(raw, (bytes, bytearray)):
                raw = raw.decode("utf-8", errors="replace")
            try:
                got = domain.parse(raw, where(p, o, 1))
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


# ---------------------------------------------------------------- publishing


def publish(lines: list[dict], bootstrap: str, topic: str = ANSWERS_TOPIC, timeout: float = 30.0) -> None:
    """Produce the correction lines to ``topic`` in one transaction."""
    from confluent_kafka import KafkaException  # noqa: PLC0415 (confluent-kafka: ~80 ms, only with a broker)


    producer = kafka_clients.producer({"bootstrap.servers": bootstrap, "transactional.id": f"chronolog-backfill-{uuid.uuid4().hex[:12]}"})
    try:
        producer.init_transactions(timeout)
        producer.begin_transaction()
        produce = kafka_clients.sender(producer)  # more lines than the producer's queue: wait, not fail
        for rec in lines:
            produce(topic, orjson.dumps(rec))
            producer.poll(0)
        producer.commit_transaction(timeout)
    except (KafkaException, BufferError) as exc:
        raise ChronologError(f"error: publishing the corrections to {topic} on {bootstrap}: {exc}") from None
