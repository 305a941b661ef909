"""``chronolog bench gaps``: what jumping over quiet gaps saves, and what it costs without gaps.

A LARS stream is evaluated at every integer point (CONTRACT §2); a program that reads
no absolute time jumps over the points where no window sees a fact any more
(``dialects/lars/gaps.py``).  For each public workload named (``bench lars``'s
generator), in this process, ``chronolog run``'s evaluator (eager, changelog answers
into memory) is timed in CPU seconds on

* **steady**: the workload's stream as generated (a fact at every point: nothing to
  jump), with jumping on and forced off (``gaps.SKIP_GAPS = False``: the stepping
  loop every version before had), in alternation, ``--repeat`` times: the ratio of
  the medians is the cost of looking for gaps where there are none;
* **gapped**: the same stream cut into bursts of ``--burst`` points, each followed by
  ``--gap`` points without facts: stepping every point against jumping (the answers
  are compared: identical bytes).
"""

from __future__ import annotations

import statistics
import tempfile
import time
from collections.abc import Callable
from functools import partial
from pathlib import Path
from typing import Any

from rich.console import Console
from rich.table import Table

from chronolog.bench import lars as lars_bench  # (a module: bench.lars registers this one's parser)
from chronolog.bench.process import BenchError
from chronolog.core.events import Event
from chronolog.dialects.lars import gaps
from chronolog.dialects.lars.evaluator import LarsEvaluator
from chronolog.dialects.lars.plan import plan_program
from chronolog.dialects.load import load_program
from chronolog.io.formats import read_events
from chronolog.runtime.embedded import collecting_rarely

DEFAULT = ("diamond", "box", "join", "chain")


def _run(make: Callable[[], LarsEvaluator], events: list[Event], skip: bool) -> tuple[float, bytes]:
    """CPU seconds of pushing ``events`` and finishing, and the answer bytes."""
    gaps.SKIP_GAPS = skip
    try:
        ev = make()
        out: list[bytes] = []
        with collecting_rarely():
            start = time.process_time()
            for e in events:
                ev.push(e)
                if ev.out.parts:
                    out.append(ev.pending().lines())
            out.append(ev.finish().lines())
            spent = time.process_time() - start
        return spent, b"".join(out)
    finally:
        gaps.SKIP_GAPS = True


def _gapped(events: list[Event], burst: int, gap: int) -> list[Event]:
    """Each run of ``burst`` points followed by ``gap`` points without facts."""
    return [Event(e.t + (e.t // burst) * gap, e.pred, e.args, e.retract) for e in events]


def _paired(make: Callable[[], LarsEvaluator], events: list[Event], repeat: int) -> tuple[float, float]:
    """Medians of CPU seconds with jumping on and off, measured in alternation."""
    on: list[float] = []
    off: list[float] = []
    for _ in range(repeat):
        on.append(_run(make, events, True)[0])
        off.append(_run(make, events, False)[0])
    return statistics.median(on), statistics.median(off)


def main(args: Any) -> int:
    names = args.workload or list(DEFAULT)
    for name in names:
        if name not in lars_bench.WORKLOADS:
            raise BenchError(f"error: unknown workload {name!r} (choose from {', '.join(lars_bench.WORKLOADS)})")
    table = Table(title=f"bench gaps: CPU seconds in process (bursts of {args.burst} points, gaps of {args.gap})")
    for col in ("workload", "margin", "steady on", "steady off", "on/off", "gapped off", "gapped on",
                "off/on", "same"):
        table.add_column(col, justify="right")
    with tempfile.TemporaryDirectory(prefix="chronolog-bench-") as tmp:
        for name in names:
            work = Path(tmp) / name
            work.mkdir()
            lars_bench.generate(lars_bench.find_generator(), name, lars_bench.parameters(name, {"tps": args.tps}), work)
            plan = plan_program(load_program([str(work / "program.lars")]))
            with open(work / "stream.jsonl", encoding="utf-8") as f:
                events = list(read_events(f, "stream.jsonl"))
            margin = gaps.quiet_margin(plan, None)
            make = partial(LarsEvaluator, plan, eager=True)
            steady_on, steady_off = _paired(make, events, args.repeat)
            spread = _gapped(events, args.burst, args.gap)
            stepped, step_bytes = _run(make, spread, False)
            jumped, jump_bytes = _run(make, spread, True)
            table.add_row(name, str(margin), f"{steady_on:.3f}", f"{steady_off:.3f}", f"{steady_on / steady_off:.3f}",
                          f"{stepped:.3f}", f"{jumped:.3f}", f"{stepped / jumped:.1f}x",
                          "yes" if step_bytes == jump_bytes else "NO")
    Console().print(table)
    return 0


def add_parser(kinds: Any) -> None:
    p = kinds.add_parser("gaps", help="LARS: jumping over quiet gaps against stepping every point")
    p.add_argument("workload", nargs="*", help=f"workloads of bench lars (default: {', '.join(DEFAULT)})")
    p.add_argument("--tps", type=int, default=300, help="time points of the generated stream (default 300)")
    p.add_argument("--burst", type=int, default=10, help="points with facts between two gaps (default 10)")
    p.add_argument("--gap", type=int, default=30000, help="points without facts after each burst (default 30000)")
    p.add_argument("--repeat", type=int, default=5, help="paired runs of the steady stream (default 5)")
    p.set_defaults(func=main)
