"""``chronolog backfill`` and ``chronolog archive`` (CONTRACT §5): argument parsing and reporting.

The work is in ``chronolog.runtime.backfill``, imported only when a backfill or an
archive runs: it imports PySpark (the optional ``spark`` extra; its DataSource API in
``kafka_source``, about 50 ms), and the parser of every fleet, bench and backfill
command imports this module.
"""

from __future__ import annotations

import argparse
import os
import sys
import time
from fractions import Fraction
from pathlib import Path
from typing import TYPE_CHECKING

import orjson
from rich.console import Console
from rich.table import Table

from chronolog.cli.main import FileError, _open_out, _same_file
from chronolog.contract.topics import TopicNames
from chronolog.core.reach import widest
from chronolog.core.retention import time_value
from chronolog.dialects.load import DIALECTS, load_program
from chronolog.dialects.registry import RunOptions, lookup, refusal
from chronolog.runtime.upgrade import new_versions

if TYPE_CHECKING:  # (pyspark: imported only when a backfill runs)
    from chronolog.runtime.backfill.spark_io import BackfillStats


def register(sub: argparse._SubParsersAction) -> None:
    """Add the ``backfill`` and ``archive`` subcommands to the CLI's parser."""
    b = sub.add_parser(
        "backfill", help="re-evaluate a span of history with Spark and emit the corrections of the published answers"
    )
    b.add_argument("program", nargs="+", help="program file(s)")
    b.add_argument("--history", required=True, metavar="PATH|kafka",
                   help="input events in arrival order: a JSONL file, an archive directory, or 'kafka'")
    b.add_argument("--from", dest="t_from", type=_time, required=True, metavar="T1",
                   help="first time (inclusive; DatalogMTL: a rational such as 7/2 too)")
    b.add_argument("--to", dest="t_to", type=_time, required=True, metavar="T2", help="last time (inclusive)")
    b.add_argument("--answers", metavar="PATH|kafka",
                   help="the answer stream published so far: JSONL, an archive directory, or 'kafka' (default: none)")
    b.add_argument("--output", default="-", help="corrections as JSONL answer lines with diff (default: stdout); "
                   "a name ending in .parquet writes Parquet")
    b.add_argument("--publish", action="store_true", help="also produce the corrections to the answer topic, in one transaction")
    b.add_argument("--bootstrap", metavar="HOST:PORT", help="Kafka bootstrap servers (for 'kafka' and --publish)")
    b.add_argument("--master", metavar="URL", help="Spark master (default: local[*])")
    b.add_argument("--segment", type=_time, metavar="N", help="time points per segment (default: about two per core)")
    b.add_argument("--key-partitions", type=int, metavar="K",
                   help="when the program can be split by key (see chronolog topology): evaluate each segment in "
                        "K key partitions (default: Spark's parallelism; 1 when it cannot)")
    b.add_argument("--dialect", choices=DIALECTS, help="rule language (default: by extension)")
    b.add_argument("--upgrade", action="append", metavar="T=FILE[,FILE...]",
                   help="from time T on, the program in FILE (repeatable, T increasing), as chronolog run --upgrade")
    b.add_argument("--mode", choices=["tms", "oneshot"],
                   help="LARS programs that are not stratified: tms (default) or oneshot, as the fleet ran them")
    b.add_argument("--seed", type=int, default=0, help="--mode tms: the seed of the choices (default 0)")
    b.add_argument("--facts-topic", default=TopicNames().facts, help=f"input topic (default: {TopicNames().facts})")
    b.add_argument("--answers-topic", default=TopicNames().answers, help=f"answer topic (default: {TopicNames().answers})")
    b.add_argument("--idle", type=float, default=1.5, metavar="S",
                   help="a Kafka partition has been read once it is idle this long (default: 1.5 s)")
    b.set_defaults(func=cmd_backfill)

    a = sub.add_parser("archive", help="write Kafka topics to a partitioned Parquet archive")
    a.add_argument("--bootstrap", required=True, metavar="HOST:PORT", help="Kafka bootstrap servers")
    a.add_argument("--out", required=True, metavar="DIR", help="archive directory")
    a.add_argument("--topics", default=f"{TopicNames().facts},{TopicNames().answers}", help="comma-separated topics")
    a.add_argument("--once", action="store_true", help="stop once the topics have been idle for --idle seconds")
    a.add_argument("--idle", type=float, default=2.0, metavar="S", help="idle period that ends --once (default: 2 s)")
    a.set_defaults(func=cmd_archive)


def _time(text: str) -> int | Fraction:
    """A time on the command line: an integer, or a rational (``7/2``, ``3.5``) for DatalogMTL."""
    try:
        return time_value(text)
    except ValueError as exc:
        raise argparse.ArgumentTypeError(str(exc)) from None


def _usage(msg: str) -> int:
    print(f"error: {msg}", file=sys.stderr, flush=True)
    return 2


def write_parquet(lines: list[dict], path: str) -> None:
    """Corrections as a Parquet file: one row per answer line (t or interval, pred,
    args as JSON text, diff), for loading into warehouses next to the archive."""
    import pyarrow as pa  # noqa: PLC0415 (pyarrow: the optional spark extra)
    import pyarrow.parquet as pq  # noqa: PLC0415 (pyarrow: the optional spark extra)

    table = pa.table({
        "t": pa.array([rec.get("t") for rec in lines], pa.int64()),
        "interval": pa.array([rec.get("interval") for rec in lines], pa.string()),
        "pred": pa.array([rec["pred"] for rec in lines], pa.string()),
        "args": pa.array([orjson.dumps(rec.get("args", [])).decode() for rec in lines], pa.string()),
        "diff": pa.array([rec.get("diff", 1) for rec in lines], pa.int8()),
    })
    pq.write_table(table, path)


def cmd_backfill(args: argparse.Namespace) -> int:
    from chronolog.runtime.backfill.job import backfill, evaluator_of, publish  # noqa: PLC0415 (pyspark: the module's doc)
    from chronolog.runtime.backfill.points import dumps  # noqa: PLC0415 (pyspark: the module's doc)
    from chronolog.runtime.backfill.spark_io import Source, spark_session  # noqa: PLC0415 (pyspark: the module's doc)

    if args.t_from > args.t_to:
        return _usage(f"--from {args.t_from} is after --to {args.t_to}")
    if args.segment is not None and args.segment <= 0:
        return _usage("--segment must be positive")
    if args.publish and not args.bootstrap:
        return _usage("--publish needs --bootstrap HOST:PORT")
    program = load_program(args.program, args.dialect)
    row = lookup(program.dialect)
    if row.discrete:
        for name, value in (("--from", args.t_from), ("--to", args.t_to), ("--segment", args.segment)):
            if value is not None and type(value) is not int:
                return _usage(f"{name} {value} is not an integer time point ({program.dialect} time is discrete)")
    options = RunOptions(mode=args.mode, seed=args.seed)
    refused = refusal(row, options)
    if refused is not None:
        print(refused, file=sys.stderr, flush=True)
        return 2
    versions = new_versions(program, args.upgrade or [], args.dialect)
    upgrades = tuple((t, _sources(files)) for t, files, _ in versions)
    evaluator_of(program.dialect, program, options, upgrades=upgrades)  # program errors before Spark starts
    if args.segment is not None and widest([row.reach(p) for p in (program, *(new for _, _, new in versions))]) is None:
        _say(f"warning: --segment {args.segment} has no effect: this {row.title} program has no bounded input reach, "
             "so the backfill evaluates its whole history in one segment")
    if args.key_partitions is not None and row.partition_key(program) is None:
        _say(f"warning: --key-partitions {args.key_partitions} has no effect: this {row.title} program is not split "
             "by key (chronolog topology says why); each segment is evaluated whole")
    sources = _sources(args.program)
    history = Source.parse(args.history, args.facts_topic, args.bootstrap)
    answers = Source.parse(args.answers, args.answers_topic, args.bootstrap) if args.answers else None
    if args.output != "-":
        for src in (history, answers):
            if src is not None and src.kind == "file" and _same_file(src.where, args.output):
                raise FileError(args.output, "write the output", OSError(0, "it is an input file"))
        try:  # fail on an unwritable output before the job runs
            open(args.output, "a", encoding="utf-8").close()
        except OSError as exc:
            raise FileError(args.output, "write the output", exc) from None

    began = time.monotonic()
    spark, created = spark_session(args.master)
    try:
        if spark.sparkContext.uiWebUrl:
            _say(f"Spark UI: {spark.sparkContext.uiWebUrl}")
        lines, stats = backfill(
            spark, sources, program.dialect, history, answers, args.t_from, args.t_to,
            segment=args.segment, idle=args.idle, progress=_say, key_partitions=args.key_partitions,
            mode=args.mode, seed=args.seed, upgrades=upgrades,
        )
    finally:
        if created:
            spark.stop()
    for w in stats.warnings:
        _say(w)
    if args.output.endswith(".parquet"):
        write_parquet(lines, args.output)
    else:
        with _open_out(args.output) as out:
            for rec in lines:
                out.write(dumps(rec))
                out.write("\n")
    if args.publish:
        publish(lines, args.bootstrap, args.answers_topic)
        _say(f"published {len(lines)} correction lines to {args.answers_topic}")
    if stats.unmatched:
        _say(f"ignored {stats.unmatched} retractions that matched no event")
    _summary(stats, args, time.monotonic() - began)
    return 0


def _sources(paths: list[str]) -> tuple[tuple[str, str], ...]:
    """(file name, text) of program files, as the Spark tasks rebuild the program from them."""
    out = []
    for path in paths:
        with open(path, encoding="utf-8") as f:
            out.append((path, f.read()))
    return tuple(out)


def _say(msg: str) -> None:
    print(msg, file=sys.stderr, flush=True)


def _summary(stats: BackfillStats, args: argparse.Namespace, total: float) -> None:
    table = Table(title=f"backfill [{args.t_from},{args.t_to}]", show_header=True, header_style="bold")
    for col in ("events read", "span", "segments", "key partitions", "evaluations", "answers recomputed", "corrections emitted", "time"):
        table.add_column(col, justify="right")
    span = f"[{stats.window[0]},{stats.window[1]}]" if stats.window else "-"
    table.add_row(
        f"{stats.events:,}", span, f"{stats.segments:,}", f"{stats.key_partitions:,}", f"{stats.evaluations:,}", f"{stats.recomputed:,}",
        f"{stats.corrections:,}", f"{total:.1f} s",
    )
    Console(stderr=True, width=max(120, _columns())).print(table)


def _columns() -> int:
    try:
        return os.get_terminal_size(sys.stderr.fileno()).columns
    except OSError:
        return 120


def cmd_archive(args: argparse.Namespace) -> int:
    from chronolog.runtime.backfill.archive import Archiver  # noqa: PLC0415 (pyspark: the module's doc)

    topics = [t.strip() for t in args.topics.split(",") if t.strip()]
    if not topics:
        return _usage("--topics names no topic")
    archiver = Archiver(args.bootstrap, Path(args.out), topics, report=_say if not args.once else lambda m: None)
    archiver.run(once=args.once, idle=args.idle)
    _say(f"archived {archiver.records} records in {archiver.files} files under {args.out}")
    return 0
