"""``chronolog bench explain``: how long an explanation takes (issue 38).

For each workload (LARS cooling and join, DatalogMTL ShortStop, RTEC caviar), a sample of
answers is drawn at random from what ``chronolog run`` prints, and ``explain --why`` of each
is timed in this process — what a user waits for, from the input's events to the tree.  An
explanation evaluates the input again when asked (nothing is recorded while running): the
span the program's reach says the answers at T depend on (``runtime.explain.reaching``, LARS)
and only the events the query's rules can read (``runtime.explain.sliced``); ``run``'s own
time on the whole input (the median of ``--run-repeat`` runs, taken in turn with the
explanations) stands beside it.
"""

from __future__ import annotations

import argparse
import gc
import io
import json
import random
import statistics
import tempfile
import time
from collections.abc import Callable
from fractions import Fraction
from pathlib import Path
from typing import Any

from rich.console import Console
from rich.table import Table

from chronolog.bench import lars as lars_bench  # (a module: bench.lars registers this one's parser)
from chronolog.bench import shared_data
from chronolog.core.events import Event
from chronolog.dialects.load import load_program
from chronolog.dialects.registry import RunOptions, lookup
from chronolog.runtime.embedded import run_evaluator
from chronolog.runtime.explain import NotSo, Query, explain, with_lines

LARS_WORKLOADS = ("cooling", "join")
CAVIAR = ("rules.prolog", "pre-processing-portable.prolog", "settings.prolog")  # (as bench rtec runs it)
SIZES = {"win": 10, "facts": 40, "tps": 60, "seed": 42}


def _answers(program: Any, stream: Path) -> tuple[list[dict], float]:
    """``run``'s answer lines on ``stream`` and the seconds it took."""
    row = lookup(program.dialect)
    with stream.open(encoding="utf-8") as f:
        events = list(row.read(program, f, str(stream), "jsonl", "fail", lambda m: None))
    out, seconds = _run(row, program, events)
    return [json.loads(x) for x in out.splitlines()], seconds


def _run(row: Any, program: Any, events: list, clock: Callable[[], float] = time.perf_counter) -> tuple[str, float]:
    """``run``'s output on ``events`` (in this process) and the seconds it took."""
    out = io.StringIO()
    began = clock()
    run_evaluator(row.evaluator(program, RunOptions(), lambda m: None), events, out, warn=lambda m: None)
    return out.getvalue(), clock() - began


def _sample(lines: list[dict], n: int, rng: random.Random, rational: bool) -> list[Query]:
    """``n`` answers at random: an atom and a time its answer line covers."""
    picks = [line for line in lines if "pred" in line and line.get("diff", 1) == 1]
    out = []
    for line in rng.sample(picks, min(n, len(picks))):
        if "t" in line:
            t = line["t"]
        else:
            lo = line["interval"][1:].split(",")[0]
            t = int(lo) if not rational else lo
        out.append(Query(line["pred"], tuple(line["args"]), t if not isinstance(t, str) else _number(t), "sample"))
    return out


def _number(text: str) -> Any:
    value = Fraction(text)
    return value.numerator if value.denominator == 1 else value


def measure(name: str, program_path: list[Path], stream: Path, samples: int, depth: int | None,
            seed: int, run_repeat: int = 5, clock: Callable[[], float] = time.perf_counter) -> dict[str, Any]:
    """One workload's row: run's time, and explain --why's p50 / p99 over the sampled answers
    (``clock``: the wall clock, or ``time.process_time`` where other processes share the cores)."""
    program = load_program([str(p) for p in program_path])
    row = lookup(program.dialect)
    lines, first_run = _answers(program, stream)
    runs = [first_run]
    queries = _sample(lines, samples, random.Random(seed), row.rational)
    with stream.open(encoding="utf-8") as f:
        events = list(with_lines(row.read, program, str(stream), f, "jsonl", "fail", lambda m: None))
    times, held = [], 0
    plain = [Event(e.t, e.pred, e.args, e.retract, None, e.span) for e in events]  # (as run reads them)
    every = max(1, len(queries) // max(1, run_repeat - 1))
    for k, query in enumerate(queries):
        if k % every == 0 and len(runs) < run_repeat:  # run's time, in turn with the explanations
            runs.append(_run(row, program, plain, clock)[1])
        began = clock()
        try:
            # (with ``fresh``, as the command: a negated literal's why-not names missing events, checked)
            explain(row, program, row.evaluator(program, RunOptions(), lambda m: None), events, query, "why",
                    depth=depth, fresh=lambda: row.evaluator(program, RunOptions(), lambda m: None))
            held += 1
        except NotSo:  # an answer a later line took back: not in the final answers
            pass
        times.append(clock() - began)
        # (RTEC's evaluator freezes what it holds after each window, as a service's periodic
        # collection undoes: without this every explanation's evaluators stayed alive)
        gc.unfreeze()
        gc.collect()
    times.sort()
    p99 = times[min(len(times) - 1, int(0.99 * len(times)))] if times else float("nan")
    return {"workload": name, "events": len(events), "answers": len(queries), "explained": held,
            "run": statistics.median(runs), "p50": statistics.median(times) if times else float("nan"), "p99": p99}


def main(args: Any) -> int:
    rows = []
    clock = time.process_time if args.clock == "cpu" else time.perf_counter
    with tempfile.TemporaryDirectory(prefix="bench-explain-") as tmp:
        gen = lars_bench.find_generator(None)
        for workload in args.workload or LARS_WORKLOADS:
            params = lars_bench.parameters(workload, dict(SIZES, tps=args.tps))
            out = lars_bench.generate(gen, workload, params, Path(tmp) / workload)
            rows.append(measure(f"LARS {workload}", [out / "program.lars"], out / "stream.jsonl", args.samples,
                                args.depth, args.seed, args.run_repeat, clock))
        mtl = shared_data("mtl")
        if args.mtl and (mtl / "short_stop.mtl").is_file():
            cut = Path(tmp) / "S1.jsonl"
            with (mtl / "S1.jsonl").open(encoding="utf-8") as src:
                cut.write_text("".join(line for _, line in zip(range(args.mtl_lines), src, strict=False)))
            rows.append(measure(f"DatalogMTL ShortStop S1[:{args.mtl_lines}]", [mtl / "short_stop.mtl"], cut,
                                args.samples, args.depth, args.seed, args.run_repeat, clock))
        rtec = shared_data("rtec") / "caviar"
        if args.rtec and (rtec / "rules.prolog").is_file():
            cut = Path(tmp) / "caviar.jsonl"
            with (rtec / "stream.jsonl").open(encoding="utf-8") as src:
                cut.write_text("".join(line for _, line in zip(range(args.rtec_lines), src, strict=False)))
            rows.append(measure(f"RTEC caviar[:{args.rtec_lines}]", [rtec / name for name in CAVIAR], cut,
                                args.samples, args.depth, args.seed, args.run_repeat, clock))
    table = Table(title=f"explain --why: {args.samples} random answers per workload (depth "
                        f"{args.depth if args.depth is not None else 'unlimited'}"
                        f"{'; CPU time of this process' if args.clock == 'cpu' else ''})")
    for col in ("workload", "input events", "answers asked", "explained", "run (s)", "run (events/s)",
                "explain p50 (ms)", "explain p99 (ms)"):
        table.add_column(col, justify="right" if col != "workload" else "left")
    for r in rows:
        table.add_row(r["workload"], f"{r['events']:,}", str(r["answers"]), str(r["explained"]), f"{r['run']:.3f}",
                      f"{r['events'] / r['run']:,.0f}", f"{r['p50'] * 1000:.0f}", f"{r['p99'] * 1000:.0f}")
    Console(width=140).print(table)  # (one row per workload, whatever the terminal)
    return 0


def add_parser(kinds: Any) -> None:
    p = kinds.add_parser("explain", help="how long explain --why takes for random answers of the workloads")
    p.add_argument("workload", nargs="*", help=f"LARS workloads (default: {', '.join(LARS_WORKLOADS)})")
    p.add_argument("--samples", type=int, default=20, help="answers explained per workload (default 20)")
    p.add_argument("--depth", type=int, default=4, help="--depth of the explanations (default 4)")
    p.add_argument("--tps", type=int, default=SIZES["tps"], help="time points of the LARS workloads (default 60)")
    p.add_argument("--seed", type=int, default=1, help="the sample's seed")
    p.add_argument("--run-repeat", type=int, default=5, help="runs of the whole input timed, in turn with the "
                   "explanations; the median is shown (default 5)")
    p.add_argument("--clock", choices=("wall", "cpu"), default="wall",
                   help="time with the wall clock (default) or this process's CPU time (a machine whose cores "
                        "other work shares: its wall clock measures the load)")
    p.add_argument("--mtl", action=argparse.BooleanOptionalAction, default=True,
                   help="also DatalogMTL ShortStop from the shared data (default on)")
    p.add_argument("--mtl-lines", type=int, default=2000, help="the first lines of S1 (default 2000)")
    p.add_argument("--rtec", action=argparse.BooleanOptionalAction, default=True,
                   help="also RTEC caviar from the shared data (default on)")
    p.add_argument("--rtec-lines", type=int, default=5000, help="the first lines of caviar's stream (default 5000)")
    p.set_defaults(func=main)

