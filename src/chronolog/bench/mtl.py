"""``chronolog bench mtl``: DatalogMTL on the public ShortStop and temporal LUBM data.

For each workload: ``chronolog run`` as a child process in streaming and in
batch mode (wall and CPU time, peak RSS of the streaming run), and, in this
process, the streaming evaluator's time per arriving time point (p50/p99)
and the largest number of facts it kept for evaluation.  Streaming runs with
``--retention`` the program's reach (late events applied up to that far
back: what makes memory flat), or ``--retention N|inf`` as given.

Memory against the stream: ``L1x10`` is the LUBM L1 stream repeated ten
times, each copy 301 time units later, with the recursive program (``L1r`` is
its 1x stream), so peak RSS and facts kept compare between a stream and one
ten times longer.  Memory against the time granularity (gran(Π), seed 002
section 6): ``G1`` and ``G10`` are one generated stream of pings, every time
unit and every tenth of one, under a program that reads them through a
diamond 2 units long.
The data is the project's shared folder (``--data``, default
``../shared/data/mtl`` beside the repository); MeTeoR's figures on this
machine, from the issue, are printed beside ours.
"""

from __future__ import annotations

import math
import statistics
import sys
import tempfile
import time
from pathlib import Path

import orjson
from rich.console import Console
from rich.table import Table

from chronolog.bench import shared_data
from chronolog.bench.process import BenchError, run_process
from chronolog.core.retention import retention_value
from chronolog.dialects.load import load_program
from chronolog.dialects.mtl.evaluator import MtlEvaluator, horizon, reach_retention
from chronolog.dialects.mtl.reader import read_mtl_events

WORKLOADS = {
    "S1": ("short_stop.mtl", "S1.jsonl"),
    "S2": ("short_stop.mtl", "S2.jsonl"),
    "L1": ("lubm_nonrecursive.mtl", "lubm_L1.jsonl"),
    "L1h": ("lubm_recursive.mtl", "lubm_L1h.jsonl"),
    "L1r": ("lubm_recursive.mtl", "lubm_L1.jsonl"),  # the 1x stream of L1x10: compare their peak RSS
    "L1x10": ("lubm_recursive.mtl", "lubm_L1.jsonl"),
    "G1": ("", ""),  # generated: pings every time unit ...
    "G10": ("", ""),  # ... and every tenth of one, the same span
}
PINGS = "Busy(X):-Diamondminus[0,2]Ping(X)\nIdle(X):-Seen(X), not Diamondminus[0,5]Ping(X)\n"
METEOR = {"S1": (35.0, 2.6), "S2": (122.0, 8.0)}  # MeTeoR-Str, MeTeoR batch: seconds on this machine (issue 14)


def default_data() -> Path:
    return shared_data("mtl")


def repeated(source: Path, copies: int, shift: int, out: Path) -> Path:
    lines = source.read_bytes().splitlines()
    with open(out, "wb") as f:
        for k in range(copies):
            for raw in lines:
                rec = orjson.loads(raw)
                lo, hi = rec["interval"][1:-1].split(",")
                rec["interval"] = f"{rec['interval'][0]}{int(lo) + k * shift},{int(hi) + k * shift}{rec['interval'][-1]}"
                f.write(orjson.dumps(rec) + b"\n")
    return out


def pings(per_unit: int, out: Path, span: int = 120, devices: int = 20) -> Path:
    """``G1``/``G10``'s stream: each device seen over the whole span, pinging
    every 1/per_unit time unit except in a silent stretch of 10 units each 60."""
    with open(out, "wb") as f:
        for d in range(devices):
            f.write(orjson.dumps({"interval": f"[0,{span}]", "pred": "Seen", "args": [f"d{d}"]}) + b"\n")
        for k in range(span * per_unit + 1):
            t = k / per_unit
            when = str(k // per_unit) if k % per_unit == 0 else f"{k}/{per_unit}"
            for d in range(devices):
                if (t + d) % 60 >= 10:
                    f.write(orjson.dumps({"t": when, "pred": "Ping", "args": [f"d{d}"]}) + b"\n")
    return out


def _reach_of(program: Path) -> str:
    """The program's reach as ``--retention`` reads it: whole time points, rounded up (inf when unbounded)."""
    bound = reach_retention(load_program([str(program)]))  # type: ignore[arg-type]
    return "inf" if bound is None else str(math.ceil(bound))


def stream_profile(program: Path, data: Path, retention: int | float | None = None) -> tuple[list[float], int]:
    """Seconds per arriving time point of the streaming evaluator, and the most facts it kept."""
    parsed = load_program([str(program)])
    ev = MtlEvaluator(parsed, "stream", retention=reach_retention(parsed) if retention is None  # type: ignore[arg-type]
                      else horizon(parsed, retention))  # type: ignore[arg-type]
    with open(data, encoding="utf-8") as f:
        events = list(read_mtl_events(f, str(data)))
    per_point: list[float] = []
    latest = None
    for e in events:
        if latest is not None and e.t > latest:
            t0 = time.perf_counter()
            ev.advance(latest)
            per_point.append(time.perf_counter() - t0)
        latest = e.t if latest is None or e.t > latest else latest
        ev.push(e)
    t0 = time.perf_counter()
    ev.finish()
    per_point.append(time.perf_counter() - t0)
    return per_point, ev.max_kept


def _pct(values: list[float], q: float) -> float:
    values = sorted(values)
    return values[min(len(values) - 1, int(q * len(values)))]


def main(args) -> int:  # type: ignore[no-untyped-def]
    data = Path(args.data) if args.data else default_data()
    if not data.is_dir():
        raise BenchError(f"error: {data}: DatalogMTL data not found (pass --data DIR)")
    names = args.workload or list(WORKLOADS)
    unknown = [n for n in names if n not in WORKLOADS]
    if unknown:
        raise BenchError(f"error: unknown workload {unknown[0]!r} (one of {', '.join(WORKLOADS)})")
    late = "the program's reach" if args.retention is None else f"--retention {args.retention}"
    table = Table(title=f"chronolog bench mtl (median of {args.repeat} runs; whole process unless noted; "
                        f"streaming applies late events up to {late})")
    for col in ("workload", "facts", "stream s", "stream cpu s", "batch s", "MeTeoR-Str s", "MeTeoR batch s",
                "p50 ms/tp", "p99 ms/tp", "facts kept (max)", "peak RSS"):
        table.add_column(col, justify="right")
    peaks: dict[str, tuple[int, float]] = {}
    with tempfile.TemporaryDirectory(prefix="chronolog-bench-mtl-") as tmp:
        for name in names:
            prog_name, data_name = WORKLOADS[name]
            program, stream = data / prog_name, data / data_name
            if name == "L1x10":
                stream = repeated(stream, 10, 301, Path(tmp) / "l1x10.jsonl")
            if name in ("G1", "G10"):
                program = Path(tmp) / "pings.mtl"
                program.write_text(PINGS)
                stream = pings(int(name[1:]), Path(tmp) / f"{name}.in.jsonl")
            with open(stream, "rb") as f:
                facts = sum(1 for _ in f)
            out = Path(tmp) / f"{name}.jsonl"
            keep = ["--retention", str(args.retention if args.retention is not None else _reach_of(program))]
            runs = {mode: [run_process(program, stream, out, ["--mode", mode] + (keep if mode == "stream" else []))
                           for _ in range(args.repeat)] for mode in ("stream", "batch")}
            for mode, got in runs.items():
                bad = [r for r in got if r.returncode != 0]
                if bad:
                    raise BenchError(f"error: {name} ({mode}) failed: {bad[0].stderr.strip()[-300:]}")
            points, kept = stream_profile(program, stream, args.retention)
            ref = METEOR.get(name)
            peaks[name] = (kept, max(r.peak_rss for r in runs["stream"]) / 2**20)
            table.add_row(
                name, f"{facts:,}", f"{statistics.median(r.wall for r in runs['stream']):.2f}",
                f"{statistics.median(r.cpu for r in runs['stream']):.2f}",
                f"{statistics.median(r.wall for r in runs['batch']):.2f}",
                f"{ref[0]:.1f}" if ref else "-", f"{ref[1]:.1f}" if ref else "-",
                f"{_pct(points, 0.5) * 1000:.2f}", f"{_pct(points, 0.99) * 1000:.2f}", f"{kept:,}",
                f"{max(r.peak_rss for r in runs['stream']) / 2**20:.0f} MiB",
            )
            print(f"{name}: done", file=sys.stderr)
    Console(width=None if sys.stdout.isatty() else 200).print(table)
    for short, long, what in (("L1r", "L1x10", "a stream 10x longer"), ("G1", "G10", "timestamps 10x finer")):
        if short in peaks and long in peaks:
            (k1, r1), (k2, r2) = peaks[short], peaks[long]
            print(f"{long} / {short} ({what}): peak RSS {r2:.0f} / {r1:.0f} MiB = {r2 / r1:.2f}, "
                  f"facts kept {k2:,} / {k1:,}")
    return 0


def add_parser(kinds) -> None:  # type: ignore[no-untyped-def]
    p = kinds.add_parser("mtl", help="DatalogMTL on ShortStop and temporal LUBM (streaming and batch)")
    p.add_argument("workload", nargs="*", help=f"workloads (default: all of {', '.join(WORKLOADS)})")
    p.add_argument("--data", help="folder of the DatalogMTL data (default: ../shared/data/mtl beside the repository)")
    p.add_argument("--repeat", type=int, default=1, help="runs per mode (median)")
    p.add_argument("--retention", type=retention_value, metavar="N",
                   help="streaming runs with --retention N (inf: every late event, the whole input log kept; "
                        "default: the program's reach, what makes memory flat)")
    p.set_defaults(func=main)
