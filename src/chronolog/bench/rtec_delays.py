"""``chronolog bench rtec --delays``: RTECinc's delayed-event experiment (seed 004, section 5) on CAVIAR.

A uniform share (5, 10, 20, 40, 80 %) of the CAVIAR rows arrives late, each by a delay drawn
from a Gamma distribution with shape 2 and scale 2 (the seed's choice), in units of one second
(25 ticks of 40 ms): mean delay 4 s.  The rows are then sent in arrival order, each with its
own occurrence time (CONTRACT §2: a late event).  Each stream is evaluated by the default
evaluator, which repairs from the earliest time a late row affects (RTECinc), and by the same
evaluator recomputing the whole history at every window that brought a late row (``recompute``:
RTEC's treatment of delays, without RTEC's forgetting).  Each run is its own child process
(peak RSS); it reports the evaluation CPU time (reading excluded), the windows evaluated and whether
its final answer means the undelayed stream's.
"""

from __future__ import annotations

import argparse
import hashlib
import json
import random
import sys
import tempfile
import time
from pathlib import Path

from rich.console import Console
from rich.table import Table

from chronolog.bench.process import BenchError, measured
from chronolog.bench.rtec_common import _meaning, feed
from chronolog.dialects.load import load_program
from chronolog.dialects.rtec.evaluator import RtecEvaluator
from chronolog.dialects.rtec.reader import read_rtec_events

PERCENTS = (5, 10, 20, 40, 80)
SECOND = 25  # ticks of CAVIAR's 40 ms clock: the unit of the Gamma(2, 2) delays
SEED = 20261124


def delayed_lines(lines: list[str], percent: int, tick: int, seed: int = SEED) -> tuple[list[str], int]:
    """The rows in arrival order when ``percent`` % of them (chosen uniformly) arrive late by
    Gamma(2, 2) seconds; and how many are late."""
    rng = random.Random(seed + percent)
    keyed = []
    late = 0
    for i, line in enumerate(lines):
        t = json.loads(line)["t"]
        delay = 0
        if rng.random() < percent / 100:
            delay = max(1, round(rng.gammavariate(2.0, 2.0) * SECOND)) * tick
            late += 1
        keyed.append((t + delay, i, line))
    keyed.sort()
    return [line for _, _, line in keyed], late


def evaluate(files: list[str], stream: str, recompute: bool) -> dict:
    """One run in this process: evaluation seconds, windows, and a digest of the final meaning."""
    evaluator = RtecEvaluator(load_program(files))  # type: ignore[arg-type]
    evaluator.recompute = recompute
    with open(stream, encoding="utf-8") as f:
        events = list(read_rtec_events(f, stream))
    t0 = time.process_time()  # CPU seconds: steadier than wall time on a shared machine
    out = feed(evaluator, events)
    seconds = time.process_time() - t0
    digest = hashlib.sha256(repr(sorted(_meaning(out).items())).encode()).hexdigest()
    return {"seconds": seconds, "windows": evaluator.time_points, "delayed": evaluator.delayed, "meaning": digest}


def run_table(data: Path, rows: int | None, percents: list[int], console: Console) -> None:
    folder = data / "caviar"
    files = [str(folder / f) for f in ("rules.prolog", "pre-processing-portable.prolog", "settings.prolog")]
    lines = (folder / "stream.jsonl").read_text().splitlines()
    if rows:
        lines = lines[:rows]
    table = Table(title=f"CAVIAR with delayed rows ({len(lines):,} rows, Gamma(2,2) s delays): incremental repair "
                        f"vs recomputation of the history (each run its own process; evaluation CPU time)")
    for col in ("late rows", "mode", "windows", "per window", "eval CPU s", "share of recompute's time",
                "share of recompute's cost of delays", "peak RSS", "means the undelayed answer"):
        table.add_column(col, justify="right")

    def child(stream: Path, mode: str, result: Path) -> tuple[dict, int]:
        cmd = [sys.executable, "-m", "chronolog.bench.rtec_delays", "--mode", mode, "--input", str(stream),
               "--result", str(result), *files]
        _, _, rss, code, err = measured(cmd)
        if code != 0:
            raise BenchError(f"error: the {mode} run failed: {err.strip()[-300:]}")
        return json.loads(result.read_text()), rss

    with tempfile.TemporaryDirectory(prefix="chronolog-bench-delays-") as tmp:
        base = Path(tmp) / "undelayed.jsonl"
        base.write_text("\n".join(lines) + "\n")
        want, _ = child(base, "repair", Path(tmp) / "undelayed.json")
        for pct in percents:
            arrived, late = delayed_lines(lines, pct, 40)
            stream = Path(tmp) / f"delayed-{pct}.jsonl"
            stream.write_text("\n".join(arrived) + "\n")
            got = {}
            for mode in ("repair", "recompute"):
                got[mode] = child(stream, mode, Path(tmp) / f"{pct}-{mode}.json")
                print(f"{pct}% {mode}: done", file=sys.stderr)
            full = got["recompute"][0]["seconds"]
            for mode in ("repair", "recompute"):
                res, rss = got[mode]
                cost = (res["seconds"] - want["seconds"]) / max(full - want["seconds"], 1e-9)
                table.add_row(f"{pct}% ({late:,})", mode, f"{res['windows']:,}",
                              f"{res['seconds'] / max(res['windows'], 1) * 1000:.0f} ms", f"{res['seconds']:.2f}",
                              f"{res['seconds'] / full:.0%}", f"{cost:.0%}", f"{rss / 2**20:.0f} MiB",
                              "yes" if res["meaning"] == want["meaning"] else "NO")
        table.add_row("0%", "(undelayed)", f"{want['windows']:,}",
                      f"{want['seconds'] / max(want['windows'], 1) * 1000:.0f} ms", f"{want['seconds']:.2f}",
                      "-", "-", "-", "-")
    console.print(table)


def _child(argv: list[str]) -> int:
    p = argparse.ArgumentParser(prog="chronolog.bench.rtec_delays")
    p.add_argument("files", nargs="+")
    p.add_argument("--input", required=True)
    p.add_argument("--mode", choices=["repair", "recompute"], required=True)
    p.add_argument("--result", required=True)
    args = p.parse_args(argv)
    Path(args.result).write_text(json.dumps(evaluate(args.files, args.input, args.mode == "recompute")))
    return 0


if __name__ == "__main__":
    sys.exit(_child(sys.argv[1:]))
