"""The PySpark backfill job (``chronolog backfill``, CONTRACT §5).

1. Read the history — a JSONL file, the Parquet archive or the input topic —
   as ``(partition, offset, line)`` in arrival order and parse every line in
   Spark tasks (the embedded reader's checks; the first bad line stops the
   job with its location).
2. One aggregation gives the span (first and last time point, with the
   ``Reasoner``'s rules) and the counts; programs with tuple windows also
   collect the number of facts per time point, which the warm-ups need.
3. The driver splits the evaluation times into segments (``segments.py``);
   every fact goes to the segments whose warm-up or span holds its time,
   one RDD partition per segment.  A task rebuilds its segment's log from
   the events in arrival order (retractions withdraw the latest earlier
   equal event, exactly as the reasoner does) and evaluates it with the
   engine: the answer points in ``[T1, T2]``.
4. The published answers are parsed the same way, expanded to points over
   the span and summed; a full outer join with the true points leaves the
   corrections, which the driver merges into ``diff`` lines.
"""

from __future__ import annotations

import bisect
import time
from collections.abc import Callable, Iterable, Iterator
from typing import Any

import orjson

from chronolog.contract.topics import TopicNames
from chronolog.core.errors import ChronologError, InputError
from chronolog.core.events import Event
from chronolog.core.source import Loc
from chronolog.dialects.lars.ir import Program
from chronolog.dialects.lars.plan import Plan, plan_program
from chronolog.dialects.registry import lookup
from chronolog.runtime.backfill.hosted import backfill_hosted
from chronolog.runtime.backfill.points import clip, correction_lines, parse_answer
from chronolog.runtime.backfill.segments import (
    Segment,
    apply_event,
    default_segment_size,
    evaluate_segment,
    evaluation_span,
    key_partitioner,
    plan_segments,
)
from chronolog.runtime.backfill.spark_io import BackfillStats, Source, locator, raw_lines
from chronolog.runtime.fleet.topology import partition_of

FACTS_TOPIC = TopicNames().facts
ANSWERS_TOPIC = TopicNames().answers
EVENT_SCHEMA = "partition int, offset long, t long, pred string, args string, retract boolean, error string"
ANSWER_SCHEMA = "partition int, offset long, pred string, args string, lo long, hi long, diff int, error string"
POINT_SCHEMA = "seg int, pred string, args string, T long, info string"

Sources = tuple[tuple[str, str], ...]  # (file name, text) of the program files


def parse_history(rows: Iterable[tuple[int, int, str]], locate: Callable[[int, int, int], Loc]) -> Iterator[tuple]:
    """Event rows (EVENT_SCHEMA) of raw lines; a bad line becomes a row with its error."""
    from chronolog.io.formats import EventReader

    dumps = orjson.dumps
    for p, o, raw in rows:
        try:
            events = list(EventReader([raw], "-"))
        except InputError as exc:
            col = exc.loc.col if exc.loc else 1
            yield p, o, None, None, None, None, f"{locate(p, o, col)}: error: {exc.message}"
            continue
        for ev in events:
            args = dumps(list(ev.args)).decode() if ev.pred is not None else None
            yield p, o, ev.t, ev.pred, args, ev.retract, None


def parse_answers(
    rows: Iterable[tuple[int, int, str]], locate: Callable[[int, int, int], Loc], lo: int, hi: int, last: int
) -> Iterator[tuple]:
    """Answer rows (ANSWER_SCHEMA) clipped to ``[lo, hi]`` (``inf`` runs to ``last``)."""
    dumps = orjson.dumps
    for p, o, raw in rows:
        try:
            ans = parse_answer(raw, locate(p, o, 1))
        except InputError as exc:
            yield p, o, None, None, None, None, None, str(exc)
            continue
        if ans is None:
            continue
        span = clip(ans, lo, hi, last)
        if span is not None:
            yield p, o, ans[0], dumps(list(ans[1])).decode(), span[0], span[1], ans[4], None


# ---------------------------------------------------------------- segment evaluation

_PLANS: dict[tuple, Plan] = {}


def program_of(sources: Sources, dialect: str) -> Program:
    from chronolog.dialects.load import program_from_sources

    return program_from_sources(sources, dialect)


def plan_of(sources: Sources, dialect: str, solver: tuple[str, int] = ("tms", 0)) -> Plan:
    """The plan of the program, built once per Python worker; ``solver``: the mode
    (tms, oneshot) and seed of a program that is not stratified."""
    k = (sources, dialect, solver)
    if k not in _PLANS:
        plan = _PLANS[k] = plan_program(program_of(sources, dialect))
        plan.solver, plan.seed = solver
    return _PLANS[k]


def evaluate_partition(
    index: int, rows: Iterable[tuple[int, tuple]], sources: Sources, dialect: str, segments: list[Segment],
    t1: int, lo: int, hi: int, parts: int = 1, solver: tuple[str, int] = ("tms", 0),
) -> Iterator[tuple]:
    """One segment's (one key partition's) answer points (POINT_SCHEMA), then one row
    with its counts in ``info``."""
    seg = segments[index // parts]
    plan = plan_of(sources, dialect, solver)
    events = sorted(r for _, r in rows)  # (t, partition, offset, pred, args, retract): arrival order per t
    log: dict = {}
    unmatched = 0
    for t, _, _, pred, args, retract in events:
        if not apply_event(log, Event(t, pred, tuple(orjson.loads(args)), bool(retract))) and seg.start <= t <= seg.end:
            unmatched += 1
    warnings: list[str] = []
    got = evaluate_segment(plan, t1, seg, lambda t: log.get(t, ()), lo, hi, warnings.append)
    dumps = orjson.dumps
    for pred, args, T in got:
        yield seg.index, pred, dumps(list(args)).decode(), T, None
    info = {"points": len(got), "steps": seg.end - seg.warm + 1, "unmatched": unmatched, "warnings": warnings[:20]}
    yield seg.index, None, None, None, dumps(info).decode()


def _covering(
    segments: list[Segment], keyer: Callable[[str, tuple], str | None] | None = None, parts: int = 1
) -> Callable[[tuple], list[tuple[int, tuple]]]:
    """For a fact row, (task, row) for every segment that evaluates its time point;
    task = segment * parts + the key partition of the fact."""
    warms = [s.warm for s in segments]  # both non-decreasing
    ends = [s.end for s in segments]

    def assign(row: tuple) -> list[tuple[int, tuple]]:
        t = row[0]
        first = bisect.bisect_left(ends, t)
        last = bisect.bisect_right(warms, t)
        part = 0
        if keyer is not None and parts > 1:
            part = partition_of(keyer(row[3], tuple(orjson.loads(row[4]))), parts)
        return [(i * parts + part, row) for i in range(first, last)]

    return assign


# ---------------------------------------------------------------- the job


def backfill(
    spark: Any, sources: Sources, dialect: str, history: Source, answers: Source | None,
    t_from: int, t_to: int, *, segment: int | None = None, idle: float = 1.5,
    progress: Callable[[str], None] = lambda m: None, key_partitions: int | None = None,
    mode: str | None = None, seed: int = 0,
) -> tuple[list[dict], BackfillStats]:
    """The correction lines for ``[t_from, t_to]`` and the job's counts.  ``mode``/``seed``:
    how a LARS program that is not stratified is evaluated (docs/tms.md#backfill)."""
    if lookup(dialect).strata is None:  # a dialect without strata through its Evaluator
        return backfill_hosted(spark, sources, dialect, history, answers, t_from, t_to, segment=segment, idle=idle,
                               progress=progress)
    from pyspark.sql import functions as F

    began = time.monotonic()
    stats = BackfillStats(ui=spark.sparkContext.uiWebUrl)
    solver = (mode or "tms", seed)
    plan = plan_of(sources, dialect, solver)
    locate = locator(history)

    progress(f"reading history from {history.describe()}")
    events = spark.createDataFrame(
        raw_lines(spark, history, idle).mapPartitions(lambda rows: parse_history(rows, locate)), EVENT_SCHEMA
    ).cache()
    try:
        ok = F.col("error").isNull()
        order = F.struct("partition", "offset")
        row = events.agg(
            F.count(F.when(ok, 1)).alias("events"),
            F.count(F.when(ok & F.col("pred").isNotNull() & ~F.col("retract"), 1)).alias("facts"),
            F.count(F.when(ok & F.col("retract"), 1)).alias("retractions"),
            F.min_by("t", F.when(ok, order)).alias("first"),
            F.min(F.when(~F.col("retract"), F.col("t"))).alias("earliest"),
            F.max("t").alias("last"),
            F.min_by("error", F.when(~ok, order)).alias("error"),
        ).first()
        if row["error"] is not None:
            raise ChronologError(row["error"])
        stats.events, stats.facts, stats.retractions = row["events"], row["facts"], row["retractions"]
        if row["first"] is None:
            stats.seconds = time.monotonic() - began
            return [], stats
        t1 = min(row["first"], row["earliest"]) if row["earliest"] is not None else row["first"]
        last = row["last"]
        stats.span = (t1, last)
        span = evaluation_span(plan, t1, last, t_from, t_to)
        if span is None:
            stats.seconds = time.monotonic() - began
            return [], stats
        lo, hi = max(t_from, t1), min(t_to, last)
        stats.window = (lo, hi)
        first, end = span

        counts: dict[int, int] = {}
        if plan.tuple_reach and plan.state_reach is not None:  # tuple-window warm-ups count facts
            facts = events.filter(ok & F.col("pred").isNotNull() & (F.col("t") <= end))
            counts = dict(
                facts.groupBy("t").agg(F.sum(F.when(F.col("retract"), -1).otherwise(1)).alias("n"))
                .filter(F.col("n") > 0).collect()
            )
        size = segment or default_segment_size(plan, first, end, spark.sparkContext.defaultParallelism)
        segments = plan_segments(plan, t1, first, end, size, lambda t: counts.get(t, 0))
        stats.segments = len(segments)
        stats.evaluations = sum(s.end - s.warm + 1 for s in segments)
        progress(f"evaluating {len(segments)} segments of [{first},{end}] (span [{t1},{last}])")

        fact_rows = (
            events.filter(ok & F.col("pred").isNotNull() & (F.col("t") >= segments[0].warm) & (F.col("t") <= end))
            .select("t", "partition", "offset", "pred", "args", "retract").rdd.map(tuple)
        )
        keyer = key_partitioner(plan)
        parts = 1 if keyer is None else (key_partitions or spark.sparkContext.defaultParallelism)
        stats.key_partitions = parts
        n = len(segments) * parts
        if parts > 1:
            progress(f"and {parts} key partitions each")
        evaluated = (
            fact_rows.flatMap(_covering(segments, keyer, parts)).partitionBy(n, lambda i: i)
            .mapPartitionsWithIndex(
                lambda i, rows: evaluate_partition(i, rows, sources, dialect, segments, t1, lo, hi, parts, solver)
            )
        )
        points = spark.createDataFrame(evaluated, POINT_SCHEMA).cache()
        try:
            for (info,) in points.filter(F.col("pred").isNull()).select("info").collect():
                got = orjson.loads(info)
                stats.recomputed += got["points"]
                stats.unmatched += got["unmatched"]
                stats.warnings.extend(got["warnings"])
            truth = points.filter(F.col("pred").isNotNull()).select("pred", "args", "T").distinct()
            truth = truth.withColumn("m", F.lit(1))
            if answers is not None:
                progress(f"reading published answers from {answers.describe()}")
                where = locator(answers)
                parsed = spark.createDataFrame(
                    raw_lines(spark, answers, idle).mapPartitions(lambda rows: parse_answers(rows, where, lo, hi, last)),
                    ANSWER_SCHEMA,
                )
                published = (
                    parsed.filter(F.col("error").isNull())
                    .select("pred", "args", F.explode(F.sequence("lo", "hi")).alias("T"), "diff")
                    .groupBy("pred", "args", "T").agg(F.sum("diff").alias("n"))
                    .filter(F.col("n") != 0)
                )
                errors = (
                    parsed.filter(F.col("error").isNotNull())
                    .select(F.lit(None).cast("string").alias("pred"), F.lit(None).cast("string").alias("args"),
                            F.lit(None).cast("long").alias("T"), F.lit(None).cast("int").alias("diff"),
                            F.lit(None).cast("long").alias("n"), "error", "partition", "offset")
                )
            else:
                published = spark.createDataFrame([], "pred string, args string, T long, n long")
                errors = None
            diffs = (
                truth.join(published, ["pred", "args", "T"], "full_outer")
                .select("pred", "args", "T",
                        (F.coalesce("m", F.lit(0)) - F.coalesce("n", F.lit(0))).cast("int").alias("diff"), "n")
                .filter(F.col("diff") != 0)
                .select("*", F.lit(None).cast("string").alias("error"), F.lit(None).cast("int").alias("partition"),
                        F.lit(None).cast("long").alias("offset"))
            )
            if errors is not None:
                diffs = diffs.unionByName(errors)
            rows = diffs.collect()
        finally:
            points.unpersist()
    finally:
        events.unpersist()
    bad = [r for r in rows if r["error"] is not None]
    if bad:
        first_bad = min(bad, key=lambda r: (r["partition"], r["offset"]))
        raise ChronologError(first_bad["error"])
    stats.bad_sums = sum(1 for r in rows if r["n"] not in (None, 0, 1))
    if stats.bad_sums:
        stats.warnings.append(
            f"warning: {stats.bad_sums} published answer points do not sum to 0 or 1; corrected to the true answers"
        )
    changes = [(r["pred"], tuple(orjson.loads(r["args"])), r["T"], r["diff"]) for r in rows]
    lines = list(correction_lines(changes))
    stats.corrections = len(lines)
    stats.seconds = time.monotonic() - began
    return lines, stats


# ---------------------------------------------------------------- publishing


def publish(lines: list[dict], bootstrap: str, topic: str = ANSWERS_TOPIC, timeout: float = 30.0) -> None:
    """Produce the correction lines to ``topic`` in one transaction."""
    import uuid

    from confluent_kafka import KafkaException

    from chronolog.runtime.fleet import kafka_clients

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
