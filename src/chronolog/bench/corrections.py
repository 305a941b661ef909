"""``chronolog bench corrections``: what repairing a delayed event or a retraction costs.

For each program the same stream is evaluated in time order, then with some
events delayed by ``--delay`` time points (or retracted later); the repair
cost per event is the extra time over the in-order run divided by the number
of late events.  The baseline it is compared with is what a system without
incremental repair would do for each late event: recompute the affected span
from scratch — from the warm-up point (the largest window) to the current
time point — at the measured in-order cost per time point.  Everything runs
in this process on the embedded runtime (the fleet's reasoners run the same
replay code).
"""

from __future__ import annotations

import io
import random
import sys
import tempfile
import time
from pathlib import Path

from rich.console import Console
from rich.table import Table

from chronolog.contract.topics import TopicNames
from chronolog.core.events import Event, event_json
from chronolog.dialects.lars.parser import parse_lars
from chronolog.dialects.lars.plan import plan_program
from chronolog.runtime.embedded import run_embedded

PROGRAMS = {
    "diamond": "q(X) :- p(X) [20].",
    "box": "q(X) :- p(X) always [5].",
    "tuple": "q(X) :- p(X) [200 #].",
    "strata": "hot(X) :- p(X) [10].\ncold(X) :- p(X) [30], not hot(X).",
}


def stream(tps: int, facts: int, domain: int, seed: int) -> list[Event]:
    rng = random.Random(seed)
    return [Event(t, "p", (f"x{rng.randrange(domain)}",)) for t in range(tps) for _ in range(facts)] + [Event(tps)]


def delayed(events: list[Event], count: int, delay: int, seed: int, retract: bool) -> tuple[list[Event], int]:
    """Move ``count`` facts ``delay`` time points later in arrival order (or, with
    ``retract``, withdraw them ``delay`` points later); return the stream and how
    many events are late."""
    rng = random.Random(seed)
    out = list(events)
    last = events[-1].t
    picks = rng.sample([i for i, e in enumerate(events) if e.is_fact and e.t + delay < last], count)
    for i in sorted(picks, reverse=True):
        ev = out[i]
        where = next(k for k in range(i, len(out)) if out[k].t >= ev.t + delay)
        if retract:
            out.insert(where, Event(ev.t, ev.pred, ev.args, True))
        else:
            out.insert(where, out.pop(i))
    return out, count


def _seconds(program, events) -> float:  # type: ignore[no-untyped-def]
    start = time.perf_counter()
    run_embedded(program, events, io.StringIO(), warn=lambda m: None)
    return time.perf_counter() - start


def main(args) -> int:  # type: ignore[no-untyped-def]
    names = args.program or list(PROGRAMS)
    table = Table(title=f"chronolog bench corrections: {args.tps} time points x {args.facts} facts, "
                        f"{args.count} late events delayed by {args.delay} time points")
    for col in ("program", "kind", "in order (s)", "with late events (s)", "repair per event (ms)",
                "recompute span per event (ms)", "repair / recompute"):
        table.add_column(col, justify="right")
    for name in names:
        if name not in PROGRAMS:
            raise SystemExit(f"error: unknown program {name!r} (one of {', '.join(PROGRAMS)})")
        program = parse_lars(PROGRAMS[name])
        plan = plan_program(program)
        base_events = stream(args.tps, args.facts, args.domain, args.seed)
        base = min(_seconds(program, base_events) for _ in range(args.repeat))
        per_tp = base / args.tps
        reach = (plan.state_reach or 0) + (plan.output_reach or 0)
        if plan.tuple_reach:
            reach += max(1, plan.tuple_reach // max(1, args.facts))
        recompute = per_tp * (reach + args.delay + 1)
        for kind in ("delayed", "retracted"):
            events, n = delayed(base_events, args.count, args.delay, args.seed, kind == "retracted")
            late = min(_seconds(program, events) for _ in range(args.repeat))
            repair = max(0.0, late - base) / n
            table.add_row(name, kind, f"{base:.2f}", f"{late:.2f}", f"{repair * 1000:.2f}",
                          f"{recompute * 1000:.2f}", f"{repair / recompute:.2f}" if recompute else "-")
    Console(width=None if sys.stdout.isatty() else 200).print(table)
    if args.backfill:
        backfill_throughput(args)
    return 0


def backfill_throughput(args) -> None:  # type: ignore[no-untyped-def]
    """Events per second of the Spark backfill (local[2]) re-evaluating a delayed
    and retracted history with no published answers: every answer is recomputed.
    Spark's start-up is measured apart from the job."""
    from chronolog.runtime.backfill.job import backfill  # noqa: PLC0415 (pyspark: cli/backfill.py's doc)
    from chronolog.runtime.backfill.spark_io import Source, spark_session  # noqa: PLC0415 (pyspark: cli/backfill.py's doc)

    table = Table(title=f"chronolog bench corrections --backfill: Spark {args.master}, "
                        f"{args.backfill_tps} time points x {args.facts} facts")
    for col in ("program", "events", "segments", "Spark start (s)", "job (s)", "events/s", "corrections"):
        table.add_column(col, justify="right")
    started = time.perf_counter()
    spark, created = spark_session(args.master)
    start_s = time.perf_counter() - started
    try:
        with tempfile.TemporaryDirectory(prefix="chronolog-bench-") as tmp:
            for name in args.program or list(PROGRAMS):
                events, _ = delayed(stream(args.backfill_tps, args.facts, args.domain, args.seed), args.count,
                                    args.delay, args.seed, retract=False)
                path = Path(tmp) / f"{name}.jsonl"
                path.write_bytes(b"\n".join(event_json(e) for e in events) + b"\n")
                began = time.perf_counter()
                lines, stats = backfill(spark, ((f"{name}.lars", PROGRAMS[name]),), "lars",
                                        Source("file", str(path), TopicNames().facts), None, 0, args.backfill_tps)
                job = time.perf_counter() - began
                table.add_row(name, f"{len(events):,}", str(stats.segments), f"{start_s:.1f}", f"{job:.1f}",
                              f"{len(events) / job:,.0f}", f"{len(lines):,}")
    finally:
        if created:
            spark.stop()
    Console(width=None if sys.stdout.isatty() else 200).print(table)


def add_parser(kinds) -> None:  # type: ignore[no-untyped-def]
    p = kinds.add_parser("corrections", help="repair cost per delayed or retracted event versus recomputing the span")
    p.add_argument("program", nargs="*", help=f"built-in programs (default: all of {', '.join(PROGRAMS)})")
    p.add_argument("--tps", type=int, default=300, help="time points of the stream (default 300)")
    p.add_argument("--facts", type=int, default=50, help="facts per time point (default 50)")
    p.add_argument("--domain", type=int, default=200, help="distinct constants (default 200)")
    p.add_argument("--count", type=int, default=40, help="late events (default 40)")
    p.add_argument("--delay", type=int, default=5, help="time points each is late (default 5)")
    p.add_argument("--repeat", type=int, default=1, help="runs per figure; the fastest counts")
    p.add_argument("--seed", type=int, default=7, help="generator seed (default 7)")
    p.add_argument("--backfill", action="store_true", help="also measure the Spark backfill's throughput")
    p.add_argument("--backfill-tps", type=int, default=2000, help="time points of the backfill history (default 2000)")
    p.add_argument("--master", default="local[2]", help="Spark master of the backfill run (default local[2])")
    p.set_defaults(func=main)
