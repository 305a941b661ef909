"""``chronolog bench lars``: the public LARS workloads (Laser, Laser2, Ticker), measured.

Each workload is generated with the public generator (``lars_gen.py``, shipped
in the package, stdlib only, deterministic) into a temporary folder and measured twice:

* **evaluation** — in a fresh process: the stream is read first (not timed),
  then the engine is stepped through every time point; the time of the
  ``Engine.step`` calls per time point is the figure Laser and Ticker report
  for their evaluation loops (parsing and I/O excluded);
* **process** — ``chronolog run`` as a child process on the JSONL stream,
  writing the answers in the default changelog form to a file: wall time and
  CPU time (user + system; on a shared machine the steadier of the two) of
  the whole process (start-up, parsing, evaluation, writing), facts per
  second of wall time, peak resident memory (the kernel's accounting of the
  child) and the number of answer lines.

``--memory-curve`` runs the process at 1x, 5x and 10x the stream length with
``--retention`` (default: the window) and reports peak memory of each.

``--mode tms,oneshot`` measures each evaluation mode: the evaluation figure
with that engine even for a stratified program (Ticker's scenario A is
stratified: ``chronolog run`` would give it the incremental core engine in
both modes, which the process figure shows), the process figure with
``chronolog run --mode``; and ``--sweep win=5,10,20,40,80``
(or ``tps=...``) repeats every measurement over a range of one parameter —
together Ticker's Figures 4-7 (seed 000): time per point as the window grows
and as the stream grows, TMS against one-shot clingo.

Default parameters per workload are those of issue 7 (Laser's, Laser2's and
Ticker's figures); ``--win/--facts/--tps/--rules/--seed`` override them for
every workload named.
"""

from __future__ import annotations

import argparse
import compileall
import json
import subprocess
import sys
import tempfile
import time
from dataclasses import dataclass, field
from pathlib import Path

from rich.console import Console
from rich.table import Table

import chronolog
from chronolog.bench import explain as explain_bench  # (a module: it reads this one's generator)
from chronolog.bench import gaps as gaps_bench  # (likewise)
from chronolog.bench.corrections import add_parser as add_corrections
from chronolog.bench.fleet import add_parser as add_fleet
from chronolog.bench.mtl import add_parser as add_mtl
from chronolog.bench.plot import bars_svg
from chronolog.bench.process import BenchError, run_process
from chronolog.bench.rtec import add_parser as add_rtec
from chronolog.bench.upgrade import add_parser as add_upgrade
from chronolog.dialects.lars.engine import core
from chronolog.dialects.lars.plan import plan_program
from chronolog.dialects.lars.reasoner import make_engine
from chronolog.dialects.load import load_program
from chronolog.io.formats import read_events
from chronolog.runtime.embedded import collecting_rarely

WORKLOADS = (
    "diamond", "box", "join", "multi", "cooling",
    "p_n", "pprime_n", "best", "worst", "chain",
    "tickerA", "tickerB",
)
_BASE = {"win": 20, "facts": 800, "tps": 300, "rules": 10, "seed": 42}
# The parameters of the published figures (issue 7).
DEFAULTS: dict[str, dict[str, int]] = {
    "p_n": {"win": 100, "facts": 1000},
    "pprime_n": {"win": 100, "facts": 1000},
    "best": {"win": 100, "facts": 1000},
    "worst": {"win": 3, "facts": 1000},
    "chain": {"rules": 100, "facts": 300},
}


def find_generator(explicit: str | None = None) -> Path:
    """``gen.py``: ``explicit``, else the copy shipped in the package (``lars_gen.py``)."""
    if explicit:
        path = Path(explicit)
        if not path.is_file():
            raise BenchError(f"{explicit}: error: benchmark generator not found")
        return path
    return Path(__file__).with_name("lars_gen.py")


def parameters(workload: str, overrides: dict[str, int | None]) -> dict[str, int]:
    params = dict(_BASE)
    params.update(DEFAULTS.get(workload, {}))
    params.update({k: v for k, v in overrides.items() if v is not None})
    return params


def generate(gen: Path, workload: str, params: dict[str, int], out: Path) -> Path:
    cmd = [sys.executable, str(gen), workload, "--out", str(out)]
    for key in ("win", "facts", "tps", "rules", "seed"):
        cmd += [f"--{key}", str(params[key])]
    done = subprocess.run(cmd, capture_output=True, text=True)
    if done.returncode != 0:
        raise BenchError(f"error: {gen} {workload} failed: {done.stderr.strip()[-500:]}")
    return out


@dataclass
class Evaluation:
    seconds: float
    time_points: int
    facts: int
    restarts: int | None = None  # TMS: whole-program solves after a failed local relabelling
    cpu_seconds: float | None = None  # the steps' CPU time (steadier than wall time on a shared machine)


def evaluate(program_path: Path, stream: Path, pruning: bool = True, mode: str | None = None) -> Evaluation:
    """The evaluation figure, measured in a fresh process (see ``evaluate_here``);
    ``pruning=False``: without Laser2's impossible-derivation pruning; ``mode``:
    how a program that is not stratified is evaluated (tms, oneshot)."""
    code = "import sys; from chronolog.bench.lars import _evaluation_main; _evaluation_main(sys.argv[1:])"
    cmd = [sys.executable, "-c", code, str(program_path), str(stream)] + ([] if pruning else ["--no-pruning"])
    cmd += [] if mode is None else ["--mode", mode]
    done = subprocess.run(cmd, capture_output=True, text=True)
    if done.returncode != 0:
        raise BenchError(f"error: evaluation of {program_path} failed: {done.stderr.strip()[-500:]}")
    got = json.loads(done.stdout.strip().splitlines()[-1])
    return Evaluation(got["seconds"], got["time_points"], got["facts"], got.get("restarts"), got.get("cpu_seconds"))


def _evaluation_main(argv: list[str]) -> None:
    if "--no-pruning" in argv[2:]:
        core.PRUNING = False
    mode = argv[argv.index("--mode") + 1] if "--mode" in argv else None
    ev = evaluate_here(Path(argv[0]), Path(argv[1]), mode)
    print(json.dumps({"seconds": ev.seconds, "time_points": ev.time_points, "facts": ev.facts, "restarts": ev.restarts,
                      "cpu_seconds": ev.cpu_seconds}))


def evaluate_here(program_path: Path, stream: Path, mode: str | None = None) -> Evaluation:
    """Step the engine through the stream read beforehand; the time of the steps."""
    plan = plan_program(load_program([str(program_path)]))
    if mode is not None:
        plan.solver = mode + "!"  # the named mode even on a stratified program (Ticker's scenario A)
    log: dict[int, list] = {}
    facts = 0
    with open(stream, encoding="utf-8") as f:
        for ev in read_events(f, str(stream)):
            entries = log.setdefault(int(ev.t), [])  # (LARS times are integers)
            if ev.pred is not None and not ev.retract:
                entries.append(((ev.pred, len(ev.args)), ev.args))
                facts += 1
    if not log:
        return Evaluation(0.0, 0, 0)
    first, last = min(log), max(log)

    with collecting_rarely():  # as chronolog run does
        engine = make_engine(plan, first)
        step = engine.step
        clock, cpu = time.perf_counter, time.process_time
        spent = used = 0.0
        for t in range(first, last + 1):
            got = log.get(t, ())
            start, start_cpu = clock(), cpu()
            step(t, got)
            spent += clock() - start
            used += cpu() - start_cpu
    tms = getattr(engine, "tms", None)
    return Evaluation(spent, last - first + 1, facts, None if tms is None else tms.restarts, used)


@dataclass
class Row:
    workload: str
    params: dict[str, int]
    mode: str | None = None
    eval_ms_per_tp: float | None = None
    eval_cpu_ms_per_tp: float | None = None
    process_ms_per_tp: float | None = None
    cpu_ms_per_tp: float | None = None
    facts_per_s: float | None = None
    peak_rss: int | None = None
    answers: int | None = None
    curve: list[tuple[int, int]] = field(default_factory=list)  # (tps, peak RSS)
    unpruned_ms_per_tp: float | None = None  # --no-pruning: the evaluation without pruning
    pruning_ratio: float | None = None  # median of paired ratios, with / without pruning
    restarts: int | None = None  # TMS start-overs in the evaluation
    error: str | None = None


def _median(xs: list[float]) -> float:
    xs = sorted(xs)
    n = len(xs)
    return xs[n // 2] if n % 2 else (xs[n // 2 - 1] + xs[n // 2]) / 2


def bench_workload(
    gen: Path, workload: str, params: dict[str, int], workdir: Path, *, repeat: int = 1,
    process: bool = True, evaluation: bool = True, memory_curve: bool = False, retention: int | None = None,
    no_pruning: bool = False, mode: str | None = None,
) -> Row:
    row = Row(workload, params, mode)
    d = generate(gen, workload, params, workdir / workload)
    program, stream = d / "program.lars", d / "stream.jsonl"
    if evaluation or no_pruning:
        runs, unpruned = [], []
        for _ in range(repeat):  # with and without pruning in turn: paired on a drifting machine
            runs.append(evaluate(program, stream, mode=mode))
            if no_pruning:
                unpruned.append(evaluate(program, stream, pruning=False))
        ev = runs[0]
        row.restarts = ev.restarts
        row.eval_ms_per_tp = _median([r.seconds for r in runs]) * 1000 / max(ev.time_points, 1)
        if all(r.cpu_seconds is not None for r in runs):
            row.eval_cpu_ms_per_tp = _median([r.cpu_seconds for r in runs]) * 1000 / max(ev.time_points, 1)  # type: ignore[misc]
        if unpruned:
            row.unpruned_ms_per_tp = _median([r.seconds for r in unpruned]) * 1000 / max(ev.time_points, 1)
            row.pruning_ratio = _median([a.seconds / b.seconds for a, b in zip(runs, unpruned) if b.seconds])
        facts = ev.facts
    else:
        facts = None
    if process:
        extra = [] if mode is None else ["--mode", mode]
        procs = [run_process(program, stream, d / "answers.jsonl", extra) for _ in range(repeat)]
        bad = [p for p in procs if p.returncode != 0]
        if bad:
            row.error = f"chronolog run exited {bad[0].returncode}: {bad[0].stderr.strip()[-300:]}"
            return row
        wall = _median([p.wall for p in procs])
        row.process_ms_per_tp = wall * 1000 / params["tps"]
        row.cpu_ms_per_tp = _median([p.cpu for p in procs]) * 1000 / params["tps"]
        if facts is None:
            facts = _count_facts(stream)
        row.facts_per_s = facts / wall if wall else None
        row.peak_rss = max(p.peak_rss for p in procs)
        row.answers = procs[0].answers
    if memory_curve:
        keep = params["win"] if retention is None else retention
        for factor in (1, 5, 10):
            longer = dict(params, tps=params["tps"] * factor)
            dd = generate(gen, workload, longer, workdir / f"{workload}_x{factor}")
            p = run_process(dd / "program.lars", dd / "stream.jsonl", dd / "answers.jsonl", ["--retention", str(keep)])
            if p.returncode != 0:
                row.error = f"chronolog run exited {p.returncode}: {p.stderr.strip()[-300:]}"
                return row
            row.curve.append((longer["tps"], p.peak_rss))
            for f in dd.iterdir():
                f.unlink()
    return row


def _count_facts(stream: Path) -> int:
    with open(stream, "rb") as f:
        return sum(1 for line in f if b'"pred"' in line)


def _mib(n: int | None) -> str:
    return "-" if n is None else f"{n / (1 << 20):.0f} MiB"


def _against_oneshot(row: Row, rows: list[Row]) -> str:
    """A TMS row's whole-process times as fractions of the one-shot row of the same workload."""
    if row.mode != "tms" or row.process_ms_per_tp is None or row.cpu_ms_per_tp is None:
        return "-"
    for other in rows:
        if (other.mode == "oneshot" and other.workload == row.workload and other.params == row.params
                and other.process_ms_per_tp and other.cpu_ms_per_tp):
            return f"{row.process_ms_per_tp / other.process_ms_per_tp:.3f}, {row.cpu_ms_per_tp / other.cpu_ms_per_tp:.3f}"
    return "-"


def render(rows: list[Row], memory_curve: bool) -> None:
    table = Table(title="chronolog bench lars", title_justify="left")
    table.add_column("workload")
    modes = any(r.mode is not None for r in rows)
    if modes:
        table.add_column("mode")
    table.add_column("W/N/T/K", justify="right")
    table.add_column("eval ms/tp", justify="right")
    table.add_column("eval cpu ms/tp", justify="right")
    table.add_column("process ms/tp", justify="right")
    table.add_column("cpu ms/tp", justify="right")
    table.add_column("facts/s", justify="right")
    table.add_column("peak RSS", justify="right")
    table.add_column("answers", justify="right")
    if memory_curve:
        table.add_column("RSS 1x / 5x / 10x", justify="right")
    if modes:
        table.add_column("TMS start-overs", justify="right")
        table.add_column("process / oneshot's (wall, cpu)", justify="right")
    pruning = any(r.pruning_ratio is not None for r in rows)
    if pruning:
        table.add_column("eval ms/tp no pruning", justify="right")
        table.add_column("pruning / none", justify="right")
    for r in rows:
        p = r.params
        cells = [
            r.workload,
            *([r.mode or "-"] if modes else []),
            f"{p['win']}/{p['facts']}/{p['tps']}/{p['rules']}",
            "-" if r.eval_ms_per_tp is None else f"{r.eval_ms_per_tp:.3f}",
            "-" if r.eval_cpu_ms_per_tp is None else f"{r.eval_cpu_ms_per_tp:.3f}",
            "-" if r.process_ms_per_tp is None else f"{r.process_ms_per_tp:.2f}",
            "-" if r.cpu_ms_per_tp is None else f"{r.cpu_ms_per_tp:.2f}",
            "-" if r.facts_per_s is None else f"{r.facts_per_s:,.0f}",
            _mib(r.peak_rss),
            "-" if r.answers is None else f"{r.answers:,}",
        ]
        if memory_curve:
            cells.append(" / ".join(_mib(m) for _, m in r.curve) if r.curve else "-")
        if modes:
            cells.append("-" if r.restarts is None else f"{r.restarts:,}")
            cells.append(_against_oneshot(r, rows))
        if pruning:
            cells.append("-" if r.unpruned_ms_per_tp is None else f"{r.unpruned_ms_per_tp:.3f}")
            cells.append("-" if r.pruning_ratio is None else f"{r.pruning_ratio:.2f}")
        if r.error:
            cells[3 if modes else 2] = f"[red]{r.error}[/red]"
        table.add_row(*cells)
    console = Console()
    if not console.is_terminal:
        console = Console(width=220)
    console.print(table)


def compile_package() -> None:
    """Write chronolog's bytecode cache before timing processes, as a regular
    (non-editable) install does at install time.  Without it an editable
    install under ``PYTHONDONTWRITEBYTECODE`` (set on the development
    machines and in many CI images) compiles chronolog at every start, about
    70 ms that a user's installed copy never pays.  Where the package folder
    is not writable nothing is written."""
    compileall.compile_dir(Path(chronolog.__file__).parent, quiet=2)


def main(args: argparse.Namespace) -> int:
    gen = find_generator(args.gen)
    compile_package()
    names = args.workload or list(WORKLOADS)
    for name in names:
        if name not in WORKLOADS:
            raise BenchError(f"error: unknown workload {name!r} (choose from {', '.join(WORKLOADS)})")
    overrides = {"win": args.win, "facts": args.facts, "tps": args.tps, "rules": args.rules, "seed": args.seed}
    modes: list[str | None] = list(args.mode.split(",")) if args.mode else [None]
    for m in modes:
        if m is not None and m not in ("tms", "oneshot"):
            raise BenchError(f"error: unknown --mode {m!r} (tms, oneshot)")
    sweeps: list[dict[str, int]] = [{}]
    if args.sweep:
        key, _, values = args.sweep.partition("=")
        if key not in ("win", "facts", "tps", "rules") or not values:
            raise BenchError(f"error: --sweep wants PARAM=v1,v2,... with PARAM one of win, facts, tps, rules: {args.sweep!r}")
        try:
            sweeps = [{key: int(v)} for v in values.split(",")]
        except ValueError:
            raise BenchError(f"error: --sweep values must be integers: {args.sweep!r}") from None
    rows: list[Row] = []
    with tempfile.TemporaryDirectory(prefix="chronolog-bench-") as tmp:
        work = Path(args.keep) if args.keep else Path(tmp)
        for name in names:
            if not args.quiet:
                print(f"bench lars: {name} ...", file=sys.stderr, flush=True)
            for sweep in sweeps:
                for mode in modes:
                    rows.append(bench_workload(
                        gen, name, parameters(name, {**overrides, **sweep}), work, repeat=args.repeat,
                        process=not args.no_process, evaluation=not args.no_eval,
                        memory_curve=args.memory_curve, retention=args.retention, no_pruning=args.no_pruning,
                        mode=mode,
                    ))
            if not args.keep:
                for f in (work / name).iterdir():
                    f.unlink()
    render(rows, args.memory_curve)
    if args.plot:
        points = [(f"{r.workload} ({'process' if r.process_ms_per_tp is not None else 'eval'})",
                   r.process_ms_per_tp if r.process_ms_per_tp is not None else r.eval_ms_per_tp, None)
                  for r in rows if (r.process_ms_per_tp or r.eval_ms_per_tp) is not None]
        Path(args.plot).write_text(bars_svg("chronolog bench lars", points, "ms/tp"))  # type: ignore[arg-type]
    return 1 if any(r.error for r in rows) else 0


def add_parser(sub: argparse._SubParsersAction) -> None:
    bench = sub.add_parser("bench", help="benchmarks")
    kinds = bench.add_subparsers(dest="suite", required=True)
    lars = kinds.add_parser("lars", help="the public LARS workloads (Laser, Laser2, Ticker)")
    lars.add_argument("workload", nargs="*", help=f"workloads (default: all of {', '.join(WORKLOADS)})")
    lars.add_argument("--win", type=int, help="window size W (default per workload, mostly 20)")
    lars.add_argument("--facts", type=int, help="facts per time point N (default per workload, mostly 800)")
    lars.add_argument("--tps", type=int, help="time points T (default 300)")
    lars.add_argument("--rules", type=int, help="multi: rule copies; chain: chain length (default 10; chain 100)")
    lars.add_argument("--seed", type=int, help="generator seed (default 42)")
    lars.add_argument("--gen", metavar="PATH", help="the generator (default: the one shipped in the package)")
    lars.add_argument("--repeat", type=int, default=1, help="runs per measurement; the median is shown")
    lars.add_argument("--memory-curve", action="store_true", help="peak RSS at 1x, 5x, 10x the stream length")
    lars.add_argument("--retention", type=int, metavar="N", help="--retention of the memory-curve runs (default: the window)")
    lars.add_argument("--keep", metavar="DIR", help="keep the generated workloads and answers in DIR")
    lars.add_argument("--no-process", action="store_true", help="skip the whole-process runs")
    lars.add_argument("--no-eval", action="store_true", help="skip the in-process evaluation timing")
    lars.add_argument("--quiet", action="store_true", help="no progress lines on stderr")
    lars.add_argument("--no-pruning", action="store_true",
                      help="also evaluate without Laser2's impossible-derivation pruning, in turn with it; "
                      "print both and their paired ratio")
    lars.add_argument("--mode", metavar="MODES",
                      help="tms, oneshot or both (tms,oneshot): how programs that are not stratified are evaluated")
    lars.add_argument("--sweep", metavar="PARAM=V1,V2,...",
                      help="repeat each measurement over values of win, facts, tps or rules (e.g. win=5,10,20,40,80)")
    lars.add_argument("--plot", metavar="FILE.svg", help="also draw the figures as an SVG bar chart")
    lars.set_defaults(func=main)


    add_fleet(kinds)
    add_corrections(kinds)

    add_mtl(kinds)

    add_rtec(kinds)
    add_upgrade(kinds)
    explain_bench.add_parser(kinds)
    gaps_bench.add_parser(kinds)
