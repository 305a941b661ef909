"""``chronolog bench rtec``: RTEC's example applications (caviar, ctm, voting).

For each app: ``chronolog run`` as a child process (wall time, peak RSS, answer
lines) on its JSONL stream; for caviar also the delayed stream.  The repair
figure compares, in this process, the evaluator on the delayed caviar stream
repairing from the earliest affected time (the default) with the same
evaluator re-deriving everything from the start at each correction
(``recompute``), and checks that both mean the undelayed answer.  RTEC's own
whole-process time with one window on this machine (docs/benchmarks.md) is printed beside ours.
The ``-windows`` apps run RTEC's windowed mode with RTEC's own settings (RTEC's time with the same
windows beside them); ``--delays`` instead runs the delayed-event experiment (``rtec_delays``).
"""

from __future__ import annotations

import statistics
import sys
import tempfile
import time
from pathlib import Path

from rich.console import Console
from rich.table import Table

from chronolog.bench import shared_data
from chronolog.bench.process import BenchError, measured
from chronolog.bench.rtec_common import _meaning, feed
from chronolog.bench.rtec_delays import run_table
from chronolog.dialects.load import load_program
from chronolog.dialects.rtec.evaluator import RtecEvaluator
from chronolog.dialects.rtec.reader import read_rtec_events

CAVIAR = ["rules.prolog", "pre-processing-portable.prolog", "settings.prolog"]
CTM = ["rules.prolog", "vehicles.prolog", "settings.prolog"]
VOTING = ["rules.prolog", "voting_static_generator.prolog", "settings.prolog"]
# name -> (program files, stream, extra `chronolog run` options)
APPS: dict[str, tuple[list[str], str, list[str]]] = {
    "caviar": (CAVIAR, "stream.jsonl", []),
    "caviar-delayed": (CAVIAR, "caviar-delayed.jsonl", []),
    "ctm": (CTM, "stream.jsonl", []),
    "voting": (VOTING, "stream.jsonl", []),
    # RTEC's windowed mode with RTEC's own settings (settings.env)
    "caviar-windows": (CAVIAR, "stream.jsonl", ["--window", "100000", "--step", "100000"]),
    "ctm-windows": (CTM, "stream.jsonl", ["--window", "10000", "--step", "10000"]),
    "voting-windows": (VOTING, "stream.jsonl", ["--window", "10", "--step", "10"]),
}
# RTEC's whole process on this machine (docs/benchmarks.md): one window, or its own windows
RTEC_SECONDS = {"caviar": 7.78, "ctm": 4.44, "voting": 4.36,
                "caviar-windows": 10.95, "ctm-windows": 3.79, "voting-windows": 10.29}


def default_data() -> Path:
    return shared_data("rtec")


def _app_dir(data: Path, name: str) -> Path:
    return data / name.split("-")[0]


def drive(files: list[Path], stream: Path, recompute: bool = False, limit: int | None = None) -> tuple[float, list]:
    """Seconds to evaluate ``stream`` in this process (reading excluded), and the answer changes."""
    program = load_program([str(f) for f in files])
    evaluator = RtecEvaluator(program)  # type: ignore[arg-type]
    evaluator.recompute = recompute
    with open(stream, encoding="utf-8") as f:
        events = list(read_rtec_events(f, str(stream)))
    if limit is not None:
        events = events[:limit]
    t0 = time.perf_counter()
    out = feed(evaluator, events)
    return time.perf_counter() - t0, out



def main(args) -> int:  # type: ignore[no-untyped-def]
    data = Path(args.data) if args.data else default_data()
    if not data.is_dir():
        raise BenchError(f"error: {data}: RTEC data not found (pass --data DIR)")
    if args.delays:
        try:
            percents = [int(x) for x in args.delays.split(",")]
        except ValueError:
            raise BenchError(f"error: --delays takes percentages such as 5,10,20 (not {args.delays!r})") from None
        if any(not 0 < p <= 100 for p in percents):
            raise BenchError("error: --delays percentages must be in (0, 100]")
        run_table(data, args.delay_rows or None, percents,
                  Console(width=None if sys.stdout.isatty() else 200))
        return 0
    names = args.app or list(APPS)
    unknown = [n for n in names if n not in APPS]
    if unknown:
        raise BenchError(f"error: unknown app {unknown[0]!r} (one of {', '.join(APPS)})")
    table = Table(title=f"chronolog bench rtec (chronolog run, whole process, median of {args.repeat})")
    for col in ("app", "rows", "wall s", "cpu s", "RTEC s", "peak RSS", "answer lines"):
        table.add_column(col, justify="right")
    with tempfile.TemporaryDirectory(prefix="chronolog-bench-rtec-") as tmp:
        for name in names:
            files, stream_name, extra = APPS[name]
            folder = _app_dir(data, name)
            stream = folder / stream_name
            out = Path(tmp) / f"{name}.jsonl"
            cmd = [sys.executable, "-m", "chronolog", "run", *(str(folder / f) for f in files),
                   "--input", str(stream), "--output", str(out), *extra]
            runs = [measured(cmd) for _ in range(args.repeat)]
            bad = [r for r in runs if r[3] != 0]
            if bad:
                raise BenchError(f"error: {name} failed: {bad[0][4].strip()[-300:]}")
            with open(stream, "rb") as f, open(out, "rb") as g:
                rows, lines = sum(1 for _ in f), sum(1 for _ in g)
            ref = RTEC_SECONDS.get(name)
            table.add_row(name, f"{rows:,}", f"{statistics.median(r[0] for r in runs):.2f}",
                          f"{statistics.median(r[1] for r in runs):.2f}", f"{ref:.1f}" if ref else "-",
                          f"{max(r[2] for r in runs) / 2**20:.0f} MiB", f"{lines:,}")
            print(f"{name}: done", file=sys.stderr)
    console = Console(width=None if sys.stdout.isatty() else 200)
    console.print(table)
    if args.no_repair or "caviar-delayed" not in names:
        return 0
    files = APPS["caviar"][0]
    folder = data / "caviar"
    paths = [folder / f for f in files]
    repair = Table(title="caviar-delayed (10% of rows late): repair vs recomputation (in process, evaluation only; "
                         "cost of corrections = seconds minus the undelayed stream's)")
    for col in ("mode", "rows", "seconds", "cost of corrections", "share of recomputation's",
                "means the undelayed answer"):
        repair.add_column(col, justify="right")
    limit = args.repair_rows
    undelayed, want = drive(paths, folder / "stream.jsonl", limit=limit)
    base = _meaning(want)
    figures = {}
    for mode in ("repair", "recompute"):
        secs, got = drive(paths, folder / "caviar-delayed.jsonl", recompute=(mode == "recompute"), limit=limit)
        figures[mode] = (secs, limit is None and _meaning(got) == base)
        print(f"repair {mode}: done", file=sys.stderr)
    full_cost = max(figures["recompute"][0] - undelayed, 1e-9)
    repair.add_row("undelayed", f"{limit:,}" if limit else "all", f"{undelayed:.2f}", "-", "-", "-")
    for mode, (secs, same) in figures.items():
        repair.add_row(mode, f"{limit:,}" if limit else "all", f"{secs:.2f}", f"{secs - undelayed:.2f}",
                       f"{(secs - undelayed) / full_cost:.0%}", "yes" if same else ("-" if limit else "NO"))
    console.print(repair)
    return 0



def add_parser(kinds) -> None:  # type: ignore[no-untyped-def]
    p = kinds.add_parser("rtec", help="RTEC's caviar, ctm and voting: whole-process time, peak RSS, repair")
    p.add_argument("app", nargs="*", help=f"apps (default: all of {', '.join(APPS)})")
    p.add_argument("--data", help="folder of the RTEC data (default: ../shared/data/rtec beside the repository)")
    p.add_argument("--repeat", type=int, default=1, help="runs per app (median)")
    p.add_argument("--no-repair", action="store_true", help="skip the repair vs recomputation comparison")
    p.add_argument("--repair-rows", type=int, default=None, metavar="N",
                   help="compare repair and recomputation on the first N delayed rows only (recomputation is slow)")
    p.add_argument("--delays", nargs="?", const="5,10,20,40,80", metavar="PCTS",
                   help="instead: CAVIAR with PCTS %% of rows late by Gamma(2,2) s (seed 004), repair vs "
                        "recomputation per window time and peak RSS (default 5,10,20,40,80)")
    p.add_argument("--delay-rows", type=int, default=50_000, metavar="N",
                   help="--delays: the first N CAVIAR rows (default 50,000; 0: all 182,504)")
    p.set_defaults(func=main)
