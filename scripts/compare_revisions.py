#!/usr/bin/env python3
"""Prove that a change of the code (a restructuring, a refactoring) changed no answer stream.

It runs the ``chronolog`` command line of two revisions on the same inputs and
compares what they print byte for byte: answers are the product, so a change
that is meant to move code around must leave every one of them as it was.

    python scripts/compare_revisions.py --base REV [--head REV_OR_PATH] [--fleet [--kill]] [--backfill] [--keep]

* ``--base REV``: a git revision; checked out, detached, in a temporary
  ``git worktree`` (the repository's own working tree is never touched).
* ``--head``: a revision (checked out the same way) or a directory holding a
  checkout; default: the checkout this script lives in, as it is on disk now.
* Each side runs as ``sys.executable -m chronolog ...`` with
  ``PYTHONPATH=<side>/src``, so one virtualenv (the same dependencies) serves
  both, and each process imports only its own side's package (checked first).
* Inputs are built once, from the base side and the shared data folder
  (``--shared``, default ``../shared`` beside the repository), so both sides
  read identical files.

The embedded cases (always) cover LARS (the bundled example, the README
tutorial, every public benchmark workload in the native and Laser syntaxes,
truth maintenance and clingo), DatalogMTL and RTEC (slices of the shared
benchmark data, RTEC's windowed mode) plus ``check``/``topology`` and error
paths; stdout and the exit status must be identical.  ``--backfill`` adds one
Spark backfill per dialect (stdout compared byte for byte).  ``--fleet`` adds
``chronolog up --publish`` + ``chronolog tail`` runs: a fleet interleaves its
answers between partitions differently from run to run, so there the
*meaning* of the answer topic (CONTRACT §3: the (pred, args, time point)
whose diffs sum to 1, computed here as maximal intervals) is compared, between
the two sides and against each side's own ``chronolog run``.  ``--kill`` runs
each fleet layout once more with one service (a reasoner, else the chain
service) killed with SIGKILL once the stream is published: ``up`` restarts it
from its state, and the answer topic must mean the same.

Exit status: 0 when every case is the same on both sides, 1 on any
difference (the first differing lines are shown), 2 when the comparison
cannot be set up.  Stdlib only: it must run whatever state the package is in.
"""

from __future__ import annotations

import argparse
import difflib
import json
import math
import os
import random
import shutil
import signal
import subprocess
import sys
import tempfile
import threading
import time
from collections.abc import Iterator
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field
from fractions import Fraction
from pathlib import Path
from typing import ClassVar

REPO = Path(__file__).resolve().parents[1]
RUN_TIMEOUT = 300.0  # one embedded run; the slowest takes well under a second
BACKFILL_TIMEOUT = 900.0  # PySpark local: ~15 s to start
FLEET_READY_TIMEOUT = 180.0
FLEET_SETTLE_TIMEOUT = 180.0
SHOW_DIFF_LINES = 12

# The LARS benchmark workloads (chronolog bench lars), small: the whole embedded set runs in well under a minute.
LARS_WORKLOADS = ("diamond", "box", "join", "multi", "cooling", "p_n", "pprime_n", "best", "worst", "chain",
                  "tickerA", "tickerB")
LARS_SIZE = {"win": 8, "facts": 20, "tps": 60, "rules": 5, "seed": 42}

# The README's five-minute tutorial, verbatim (jam.lars, in.jsonl, the late and retracted lines).
TUTORIAL_PROGRAM = """\
slow(R) :- speed(R, V) [3], V < 30.
low(R) at T :- speed(R, V) at T [2], V < 30.
stuck(R) :- low(R) always [2].
"""
TUTORIAL_STREAM = """\
{"t": 0, "pred": "speed", "args": ["a1", 80]}
{"t": 1, "pred": "speed", "args": ["a1", 20]}
{"t": 2, "pred": "speed", "args": ["a1", 25]}
{"t": 3, "pred": "speed", "args": ["a1", 22]}
{"t": 6}
"""
TUTORIAL_LATE = """\
{"t": 0, "pred": "speed", "args": ["a1", 10]}
{"t": 3, "pred": "speed", "args": ["a1", 22], "op": "retract"}
"""
# README: "speed(R, V) [3 , V < 30" is its example of a program error (exit 2).
TUTORIAL_BAD_PROGRAM = TUTORIAL_PROGRAM.replace("speed(R, V) [3], V < 30", "speed(R, V) [3 , V < 30", 1)
# README, "Other rule languages": heat.mtl, and doors.prolog with a stream as its comment describes.
HEAT_PROGRAM = "Alarm(X):-Boxminus[0,2]Hot(X)\n"
HEAT_STREAM = """\
{"interval": "[0,5]", "pred": "Hot", "args": ["s1"]}
{"interval": "[1,3]", "pred": "Hot", "args": ["s2"]}
{"t": 8}
"""
DOORS_PROGRAM = """\
initiatedAt(open(D)=true, T) :- happensAt(opened(D), T).
terminatedAt(open(D)=true, T) :- happensAt(closed(D), T).
door(d1).
grounding(open(D)=true) :- door(D).
"""
DOORS_STREAM = """\
{"t": 3, "pred": "opened", "args": ["d1"]}
{"t": 8, "pred": "closed", "args": ["d1"]}
{"t": 21, "pred": "opened", "args": ["d1"]}
{"t": 25, "pred": "closed", "args": ["d1"]}
"""
DOORS_LATE = """\
{"t": 14, "pred": "opened", "args": ["d1"]}
{"t": 25, "pred": "closed", "args": ["d1"], "op": "retract"}
"""
# Appended to the ShortStop slice (time points 1..40): withdrawing Pos(veh14)@5 removes its short
# stop at 6, a late NotPos(veh14)@9 makes one at 11; an event and its retraction change nothing.
SHORT_STOP_LATE = """\
{"interval": "[5,5]", "pred": "Pos", "args": ["veh14"], "op": "retract"}
{"interval": "[9,9]", "pred": "NotPos", "args": ["veh14"]}
{"interval": "[4,4]", "pred": "WestHeading", "args": ["veh1"]}
{"interval": "[4,4]", "pred": "WestHeading", "args": ["veh1"], "op": "retract"}
"""


# ----------------------------------------------------------------------------------------------- sides


@dataclass
class Side:
    """One revision under comparison: where its checkout is and where its processes run."""

    name: str  # "base" or "head"
    spec: str  # what was asked for: a revision or a directory
    root: Path
    scratch: Path  # the processes' working directory (fleet state goes here too)
    worktree: bool = False  # created here, removed at the end

    @property
    def src(self) -> Path:
        return self.root / "src"

    @property
    def label(self) -> str:
        return f"{self.name} ({self.spec} at {self.root})"


def git(*args: str) -> str:
    """A read-only git command on the repository (or ``worktree add/remove``); its stdout."""
    done = subprocess.run(["git", "-C", str(REPO), *args], capture_output=True, text=True, check=False)
    if done.returncode != 0:
        raise SystemExit(f"error: git {' '.join(args)}: {done.stderr.strip()}")
    return done.stdout.strip()


def open_side(name: str, spec: str, work: Path) -> Side:
    """A directory is used as it is (a checkout, e.g. the working tree being changed);
    anything else is a revision, checked out detached in a temporary worktree so that
    the repository's index, branches and working tree stay as they are."""
    scratch = work / f"{name}-cwd"
    scratch.mkdir()
    if Path(spec).is_dir():
        return Side(name, spec, Path(spec).resolve(), scratch)
    commit = git("rev-parse", "--verify", "--quiet", f"{spec}^{{commit}}")
    root = work / f"{name}-tree"
    git("worktree", "add", "--detach", "--quiet", str(root), commit)
    return Side(name, f"{spec} = {commit[:10]}", root, scratch, worktree=True)


def close_side(side: Side) -> None:
    """Remove the worktree made for this side (its registration in .git too)."""
    if side.worktree and side.root.exists():
        subprocess.run(["git", "-C", str(REPO), "worktree", "remove", "--force", str(side.root)],
                       capture_output=True, text=True, check=False)


def side_env(side: Side, work: Path) -> dict[str, str]:
    """The environment of the side's processes: its own ``src`` first on the path (ahead of
    the virtualenv's editable install), a fixed hash seed (set iteration order must not make
    two equal programs print differently) and bytecode caches kept out of the checkouts."""
    env = dict(os.environ)
    env["PYTHONPATH"] = str(side.src)
    env["PYTHONHASHSEED"] = "0"
    env["PYTHONPYCACHEPREFIX"] = str(work / "pycache")
    env.pop("PYTHONSTARTUP", None)
    return env


@dataclass
class Result:
    """What one command printed, and how it ended."""

    code: int
    out: bytes
    err: bytes
    seconds: float


def run_cli(side: Side, work: Path, argv: list[str], stdin: Path | None = None,
            timeout: float = RUN_TIMEOUT) -> Result:
    """``python -m chronolog ARGV`` of one side, in its scratch directory."""
    start = time.monotonic()
    try:
        with open(stdin, "rb") if stdin else open(os.devnull, "rb") as feed:
            done = subprocess.run([sys.executable, "-m", "chronolog", *argv], stdin=feed, capture_output=True,
                                  cwd=side.scratch, env=side_env(side, work), timeout=timeout, check=False)
    except subprocess.TimeoutExpired as exc:
        return Result(-1, exc.stdout or b"", (exc.stderr or b"") + f"\n[timed out after {timeout:.0f} s]".encode(),
                      time.monotonic() - start)
    return Result(done.returncode, done.stdout, done.stderr, time.monotonic() - start)


def check_import(side: Side, work: Path) -> str | None:
    """Where the side's processes import ``chronolog`` from; an error when that is not the
    side's own ``src`` (then the comparison would compare one package with itself)."""
    code = "import chronolog, sys; sys.stdout.write(chronolog.__file__)"
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, cwd=side.scratch,
                          env=side_env(side, work), check=False)
    if done.returncode != 0:
        return f"{side.name}: cannot import chronolog: {done.stderr.strip()[-400:]}"
    where = Path(done.stdout).resolve()
    if side.src.resolve() not in where.parents:
        return f"{side.name}: chronolog is imported from {where}, not from {side.src}"
    return None


# ----------------------------------------------------------------------------------------------- inputs


def write(path: Path, text: str) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text, encoding="utf-8")
    return path


def head_lines(source: Path, n: int, dest: Path, extra: str = "") -> Path:
    """The first ``n`` lines of a data file (a small slice of a benchmark stream), then ``extra``."""
    with open(source, encoding="utf-8") as f, open(dest, "w", encoding="utf-8") as out:
        for i, line in enumerate(f):
            if i >= n:
                break
            out.write(line)
        out.write(extra)
    return dest


def find_file(root: Path, relative: str) -> Path:
    """A file of a side's checkout: at its usual place, else wherever the layout moved it."""
    usual = root / relative
    if usual.is_file():
        return usual
    found = sorted(p for p in (root / "src").rglob(Path(relative).name) if "__pycache__" not in p.parts)
    if not found:
        raise SystemExit(f"error: {relative} not found in {root}")
    return found[0]


def roads_stream(dest: Path) -> Path:
    """A seeded multi-road stream for the tutorial program, which the fleet can split by road:
    readings on six roads over 40 time points, then late readings and retractions."""
    rng = random.Random(20261128)
    lines: list[dict] = []
    for t in range(40):
        for road in range(6):
            if rng.random() < 0.7:
                lines.append({"t": t, "pred": "speed", "args": [f"r{road}", rng.randint(5, 90)]})
        if not any(e["t"] == t for e in lines[-6:]):
            lines.append({"t": t})
    facts = [e for e in lines if "pred" in e]
    for _ in range(6):
        lines.append({"t": rng.randint(0, 38), "pred": "speed", "args": [f"r{rng.randint(0, 5)}", rng.randint(5, 25)]})
    for victim in rng.sample(facts, 3):
        lines.append({**victim, "op": "retract"})
    return write(dest, "".join(json.dumps(e) + "\n" for e in lines))


def lars_workloads(base: Side, work: Path, dest: Path) -> list[str]:
    """Generate the LARS benchmark workloads with the base side's own ``chronolog bench lars``
    (``--keep``, nothing measured), so both sides read the files its generator writes; a
    base without that command runs the generator module (the package's copy, else the shared one)."""
    size = [x for key, value in LARS_SIZE.items() for x in (f"--{key}", str(value))]
    done = run_cli(base, work, ["bench", "lars", *LARS_WORKLOADS, *size, "--keep", str(dest),
                                "--no-process", "--no-eval", "--quiet"])
    if done.code != 0 or not all((dest / w / "stream.jsonl").is_file() for w in LARS_WORKLOADS):
        gen = next((p for p in (base.src / "chronolog" / "bench" / "lars_gen.py",
                                REPO.parent / "shared" / "bench" / "lars" / "gen.py") if p.is_file()), None)
        if gen is None:
            raise SystemExit(f"error: cannot generate the LARS workloads: {done.err.decode(errors='replace')[-400:]}")
        for w in LARS_WORKLOADS:
            subprocess.run([sys.executable, str(gen), w, *size, "--out", str(dest / w)], check=True,
                           capture_output=True)
    return [w for w in LARS_WORKLOADS if (dest / w / "program.lars").is_file()]


@dataclass
class Case:
    """One command both sides run; stdout and the exit status must be identical."""

    name: str
    argv: list[str]
    stdin: Path | None = None
    slow: bool = False  # a backfill: PySpark starts in ~15 s


@dataclass
class FleetCase:
    """A program and stream for ``chronolog up``; ``grid``: the time points an interval stands
    for (1 for LARS, the clock tick for RTEC, None for DatalogMTL's rational time); ``clip``:
    meaning limited to the input's span (LARS, DatalogMTL; not RTEC)."""

    name: str
    program: list[str]
    stream: Path
    grid: Fraction | None
    clip: bool


@dataclass
class Inputs:
    """Every file the cases read, built once (from the base side and the shared data)."""

    dir: Path
    embedded: list[Case] = field(default_factory=list)
    backfill: list[Case] = field(default_factory=list)
    fleet: list[FleetCase] = field(default_factory=list)


def lars_cases(inp: Inputs, base: Side, work: Path) -> None:
    """LARS: the bundled example, the README tutorial, the benchmark workloads (native and
    Laser syntax), truth maintenance and clingo on the non-stratified one, check/topology,
    stdin, and the error paths."""
    d = inp.dir / "lars"
    d.mkdir()
    program = Path(shutil.copy(find_file(base.root, "src/chronolog/examples/traffic.lars"), d / "traffic.lars"))
    stream = Path(shutil.copy(find_file(base.root, "src/chronolog/examples/traffic.jsonl"), d / "traffic.jsonl"))
    jam = write(d / "jam.lars", TUTORIAL_PROGRAM)
    tut = write(d / "in.jsonl", TUTORIAL_STREAM)
    late = write(d / "in-late.jsonl", TUTORIAL_STREAM + TUTORIAL_LATE)
    bad_line = write(d / "in-bad-line.jsonl", TUTORIAL_STREAM + '{"t": 7, "pred": speed}\n' + TUTORIAL_LATE)
    bad = write(d / "jam-bad.lars", TUTORIAL_BAD_PROGRAM)
    p, s, j = str(program), str(stream), str(jam)
    inp.embedded += [
        Case("lars/traffic", ["run", p, "--input", s]),
        Case("lars/traffic --answers points", ["run", p, "--input", s, "--answers", "points"]),
        Case("lars/traffic --until 15", ["run", p, "--input", s, "--until", "15"]),
        Case("lars/traffic --until 40", ["run", p, "--input", s, "--until", "40"]),
        Case("lars/traffic --retention 3", ["run", p, "--input", s, "--retention", "3"]),
        Case("lars/traffic from stdin", ["run", p, "--input", "-"], stdin=stream),
        Case("lars/traffic check", ["check", p]),
        Case("lars/traffic topology", ["topology", p]),
        Case("lars/traffic topology --chain -p3", ["topology", p, "--chain", "--partitions", "3"]),
        Case("lars/tutorial", ["run", j, "--input", str(tut)]),
        Case("lars/tutorial --answers points", ["run", j, "--input", str(tut), "--answers", "points"]),
        Case("lars/tutorial+late", ["run", j, "--input", str(late)]),
        Case("lars/tutorial+late --answers points", ["run", j, "--input", str(late), "--answers", "points"]),
        Case("lars/tutorial+late --until 4", ["run", j, "--input", str(late), "--until", "4"]),
        Case("lars/tutorial check", ["check", j]),
        Case("lars/tutorial bad program (exit 2)", ["run", str(bad), "--input", str(tut)]),
        Case("lars/tutorial bad line (exit 2)", ["run", j, "--input", str(bad_line)]),
        Case("lars/tutorial bad line --on-error skip", ["run", j, "--input", str(bad_line), "--on-error", "skip"]),
    ]
    gen = d / "bench"
    for w in lars_workloads(base, work, gen):
        wd = gen / w
        inp.embedded.append(Case(f"lars/bench/{w}", ["run", str(wd / "program.lars"), "--input", str(wd / "stream.jsonl")]))
        if (wd / "program.laser").is_file() and (wd / "stream.laser").is_file():
            inp.embedded.append(Case(f"laser/bench/{w} --format lines", [
                "run", str(wd / "program.laser"), "--input", str(wd / "stream.laser"), "--format", "lines"]))
    tb = gen / "tickerB"
    if tb.is_dir():  # not stratified: truth maintenance (the default), another seed, clingo per time point
        tp, ts = str(tb / "program.lars"), str(tb / "stream.jsonl")
        inp.embedded += [
            Case("lars/bench/tickerB check", ["check", tp]),
            Case("lars/bench/tickerB --mode tms --seed 1", ["run", tp, "--input", ts, "--mode", "tms", "--seed", "1"]),
            Case("lars/bench/tickerB --mode oneshot", ["run", tp, "--input", ts, "--mode", "oneshot"]),
            Case("lars/bench/tickerB --mode oneshot --models 2", ["run", tp, "--input", ts, "--mode", "oneshot",
                                                                    "--models", "2"]),
        ]
    published = d / "traffic-published.jsonl"  # what a fleet had published before the last four (late) lines
    head_lines(stream, len(stream.read_text(encoding="utf-8").splitlines()) - 4, d / "traffic-head.jsonl")
    published.write_bytes(run_cli(base, work, ["run", p, "--input", str(d / "traffic-head.jsonl")]).out)
    inp.backfill.append(Case("lars/traffic backfill [0,29]", [
        "backfill", p, "--history", s, "--answers", str(published), "--from", "0", "--to", "29"], slow=True))
    roads = roads_stream(d / "roads.jsonl")
    inp.fleet += [FleetCase("lars/traffic", [p], stream, Fraction(1), True),
                  FleetCase("lars/tutorial on 6 roads", [j], roads, Fraction(1), True)]
    # the tutorial on six roads: split by road (key partitions), an @-head (low at T), late
    # readings and retractions; published: the base's answers before the last 9 (late) lines
    in_order = head_lines(roads, len(roads.read_text(encoding="utf-8").splitlines()) - 9, d / "roads-head.jsonl")
    roads_published = d / "roads-published.jsonl"
    roads_published.write_bytes(run_cli(base, work, ["run", j, "--input", str(in_order)]).out)
    common = ["--history", str(roads), "--answers", str(roads_published)]
    inp.backfill += [
        Case("lars/tutorial on 6 roads backfill [0,45] --segment 7 --key-partitions 3", [
            "backfill", j, *common, "--from", "0", "--to", "45", "--segment", "7", "--key-partitions", "3"], slow=True),
        Case("lars/tutorial on 6 roads backfill [5,20] --segment 4 --key-partitions 1", [
            "backfill", j, *common, "--from", "5", "--to", "20", "--segment", "4", "--key-partitions", "1"], slow=True),
    ]
    if tb.is_dir():  # not stratified (truth maintenance), in segments, against the answers to half its stream
        tb_lines = (tb / "stream.jsonl").read_text(encoding="utf-8").splitlines()
        tb_half = head_lines(tb / "stream.jsonl", len(tb_lines) // 2, d / "tickerB-half.jsonl")
        tb_published = d / "tickerB-published.jsonl"
        tb_published.write_bytes(run_cli(base, work, ["run", tp, "--input", str(tb_half)]).out)
        inp.backfill.append(Case("lars/bench/tickerB backfill --segment 10 (not stratified)", [
            "backfill", tp, "--history", ts, "--answers", str(tb_published), "--from", "0", "--to", "100000",
            "--segment", "10"], slow=True))


def mtl_cases(inp: Inputs, base: Side, work: Path, shared: Path) -> None:
    """DatalogMTL: the README's heat.mtl; ShortStop (integer time, streaming and batch, JSONL and
    MeTeoR text, late events) and temporal LUBM (recursive, rational time) on slices."""
    d = inp.dir / "mtl"
    d.mkdir()
    data = shared / "data" / "mtl"
    heat = write(d / "heat.mtl", HEAT_PROGRAM)
    heat_in = write(d / "heat.jsonl", HEAT_STREAM)
    stop = str(data / "short_stop.mtl")
    s1 = head_lines(data / "S1.jsonl", 5000, d / "S1-5000.jsonl")  # time points 1..40
    s1_txt = head_lines(data / "S1.txt", 5000, d / "S1-5000.txt")
    s1_late = head_lines(data / "S1.jsonl", 5000, d / "S1-5000-late.jsonl", SHORT_STOP_LATE)
    l1 = head_lines(data / "lubm_L1.jsonl", 4000, d / "L1-4000.jsonl")
    l1h = head_lines(data / "lubm_L1h.jsonl", 4000, d / "L1h-4000.jsonl")  # half the points are x.5
    nonrec, rec = str(data / "lubm_nonrecursive.mtl"), str(data / "lubm_recursive.mtl")
    inp.embedded += [
        Case("mtl/heat (README)", ["run", str(heat), "--input", str(heat_in)]),
        Case("mtl/heat check", ["check", str(heat)]),
        Case("mtl/shortstop S1[:5000]", ["run", stop, "--input", str(s1)]),
        Case("mtl/shortstop S1[:5000] --format meteor", ["run", stop, "--input", str(s1_txt), "--format", "meteor"]),
        Case("mtl/shortstop S1[:5000] --mode batch", ["run", stop, "--input", str(s1), "--mode", "batch"]),
        Case("mtl/shortstop S1[:5000] --until 20", ["run", stop, "--input", str(s1), "--until", "20"]),
        Case("mtl/shortstop S1[:5000]+late", ["run", stop, "--input", str(s1_late)]),
        Case("mtl/shortstop check", ["check", stop]),
        Case("mtl/lubm nonrecursive L1[:4000]", ["run", nonrec, "--input", str(l1)]),
        Case("mtl/lubm recursive L1h[:4000]", ["run", rec, "--input", str(l1h)]),
        Case("mtl/lubm recursive L1h[:4000] --mode batch", ["run", rec, "--input", str(l1h), "--mode", "batch"]),
    ]
    published = d / "S1-4000-published.jsonl"
    published.write_bytes(run_cli(base, work, ["run", stop, "--input", str(
        head_lines(data / "S1.jsonl", 4000, d / "S1-4000.jsonl"))]).out)
    inp.backfill.append(Case("mtl/shortstop backfill [0,40]", [
        "backfill", stop, "--history", str(s1_late), "--answers", str(published), "--from", "0", "--to", "40"],
        slow=True))
    small = head_lines(data / "S1.jsonl", 2000, d / "S1-2000-late.jsonl", SHORT_STOP_LATE)
    inp.fleet.append(FleetCase("mtl/shortstop S1[:2000]+late", [stop], small, None, True))


def rtec_cases(inp: Inputs, base: Side, work: Path, shared: Path) -> None:
    """RTEC: the README's doors.prolog; caviar (JSONL and RTEC CSV, delayed rows, windowed mode),
    ctm and voting on slices of the shared streams; a program using RTEC internals (exit 2)."""
    d = inp.dir / "rtec"
    d.mkdir()
    data = shared / "data" / "rtec"
    doors = write(d / "doors.prolog", DOORS_PROGRAM)
    doors_in = write(d / "doors.jsonl", DOORS_STREAM)
    doors_late = write(d / "doors-late.jsonl", DOORS_STREAM + DOORS_LATE)
    cav = [str(data / "caviar" / f) for f in ("rules.prolog", "pre-processing-portable.prolog", "settings.prolog")]
    cav_internal = [str(data / "caviar" / f) for f in ("rules.prolog", "pre-processing.prolog", "settings.prolog")]
    ctm = [str(data / "ctm" / f) for f in ("rules.prolog", "vehicles.prolog", "settings.prolog")]
    vot = [str(data / "voting" / f) for f in ("rules.prolog", "voting_static_generator.prolog", "settings.prolog")]
    cav_in = str(head_lines(data / "caviar" / "stream.jsonl", 30000, d / "caviar-30000.jsonl"))
    cav_csv = str(head_lines(data / "caviar" / "stream.csv", 30000, d / "caviar-30000.csv"))
    cav_late = str(head_lines(data / "caviar" / "caviar-delayed.jsonl", 30000, d / "caviar-delayed-30000.jsonl"))
    ctm_in = str(head_lines(data / "ctm" / "stream.jsonl", 6000, d / "ctm-6000.jsonl"))
    ctm_csv = str(head_lines(data / "ctm" / "stream.csv", 6000, d / "ctm-6000.csv"))
    vot_in = head_lines(data / "voting" / "stream.jsonl", 6000, d / "voting-6000.jsonl")
    inp.embedded += [
        Case("rtec/doors (README)", ["run", str(doors), "--input", str(doors_in)]),
        Case("rtec/doors+late", ["run", str(doors), "--input", str(doors_late)]),
        Case("rtec/doors check", ["check", str(doors)]),
        Case("rtec/caviar[:30000]", ["run", *cav, "--input", cav_in]),
        Case("rtec/caviar[:30000] --format rtec (CSV)", ["run", *cav, "--input", cav_csv, "--format", "rtec"]),
        Case("rtec/caviar-delayed[:30000]", ["run", *cav, "--input", cav_late]),
        Case("rtec/caviar[:30000] --step 4000", ["run", *cav, "--input", cav_in, "--step", "4000"]),
        Case("rtec/caviar[:30000] --window 20000 --step 10000", ["run", *cav, "--input", cav_in, "--window", "20000",
                                                                 "--step", "10000"]),
        Case("rtec/caviar-delayed[:30000] --window 4000", ["run", *cav, "--input", cav_late, "--window", "4000"]),
        Case("rtec/caviar check", ["check", *cav]),
        Case("rtec/caviar RTEC internals (exit 2)", ["run", *cav_internal, "--input", cav_in]),
        Case("rtec/ctm[:6000]", ["run", *ctm, "--input", ctm_in]),
        Case("rtec/ctm[:6000] --format rtec (CSV)", ["run", *ctm, "--input", ctm_csv, "--format", "rtec"]),
        Case("rtec/ctm[:6000] --window 1000 --step 500", ["run", *ctm, "--input", ctm_in, "--window", "1000",
                                                          "--step", "500"]),
        Case("rtec/voting[:6000]", ["run", *vot, "--input", str(vot_in)]),
        Case("rtec/voting[:6000] --window 3 --step 2", ["run", *vot, "--input", str(vot_in), "--window", "3",
                                                        "--step", "2"]),
    ]
    published = d / "voting-2000-published.jsonl"
    published.write_bytes(run_cli(base, work, ["run", *vot, "--input", str(
        head_lines(data / "voting" / "stream.jsonl", 2000, d / "voting-2000.jsonl"))]).out)
    inp.backfill.append(Case("rtec/voting backfill [0,10]", [
        "backfill", *vot, "--history", str(vot_in), "--answers", str(published), "--from", "0", "--to", "10"],
        slow=True))
    fleet_in = head_lines(data / "caviar" / "caviar-delayed.jsonl", 10000, d / "caviar-delayed-10000.jsonl")
    inp.fleet.append(FleetCase("rtec/caviar-delayed[:10000]", cav, fleet_in, Fraction(40), False))


def build_inputs(base: Side, work: Path, shared: Path) -> Inputs:
    """Every input file and case, from the base side (so both sides read the very same bytes)."""
    for needed in (shared / "data" / "mtl" / "S1.jsonl", shared / "data" / "rtec" / "caviar" / "stream.jsonl"):
        if not needed.is_file():
            raise SystemExit(f"error: {needed} not found (pass --shared DIR, the project's shared folder)")
    inp = Inputs(work / "inputs")
    inp.dir.mkdir()
    lars_cases(inp, base, work)
    mtl_cases(inp, base, work, shared)
    rtec_cases(inp, base, work, shared)
    return inp


# ----------------------------------------------------------------------------------------------- byte comparison


def shape(r: Result) -> str:
    """``bytes/lines`` of stdout, with the exit status when it is not 0."""
    text = f"{len(r.out):,}/{len(r.out.splitlines()):,}"
    return text if r.code == 0 else f"{text} exit {r.code}"


def first_differences(a: bytes, b: bytes, limit: int = SHOW_DIFF_LINES) -> list[str]:
    """The first differing lines of two outputs, as a unified diff (base -, head +)."""
    lines = difflib.unified_diff(a.decode(errors="replace").splitlines(), b.decode(errors="replace").splitlines(),
                                 "base", "head", n=0, lineterm="")
    out = []
    for line in lines:
        out.append(line)
        if len(out) >= limit:
            out.append("...")
            break
    return out


@dataclass
class Row:
    """One line of a table, and what to show below it when the sides differ."""

    cells: list[str]
    same: bool
    details: list[str] = field(default_factory=list)


def compare_case(case: Case, base: Result, head: Result) -> Row:
    """Same: identical stdout bytes and exit status.  A differing stderr (warnings, error
    messages) is noted, not counted: backfill's stderr carries timings."""
    same = base.out == head.out and base.code == head.code
    note = "" if base.err == head.err or case.slow else " (stderr differs)"
    details: list[str] = []
    if not same:
        if base.code != head.code:
            details.append(f"exit status: base {base.code}, head {head.code}")
            for name, r in (("base", base), ("head", head)):
                details += [f"{name} stderr: {line}" for line in r.err.decode(errors="replace").splitlines()[-4:]]
        details += first_differences(base.out, head.out)
    return Row([case.name, shape(base), shape(head), ("same" if same else "DIFF") + note], same, details)


def run_pair(base: Side, head: Side, work: Path, case: Case) -> tuple[Result, Result]:
    """The case on both sides at once (two processes: a backfill waits mostly for Spark)."""
    timeout = BACKFILL_TIMEOUT if case.slow else RUN_TIMEOUT
    with ThreadPoolExecutor(2) as pool:
        a = pool.submit(run_cli, base, work, case.argv, case.stdin, timeout)
        b = pool.submit(run_cli, head, work, case.argv, case.stdin, timeout)
        return a.result(), b.result()


def run_cases(base: Side, head: Side, work: Path, cases: list[Case]) -> list[Row]:
    rows = []
    for case in cases:
        print(f"  {case.name} ...", file=sys.stderr, flush=True)
        rows.append(compare_case(case, *run_pair(base, head, work, case)))
    return rows


def print_table(title: str, header: list[str], rows: list[Row]) -> None:
    """A plain text table (no dependency), then the details of every differing row."""
    widths = [max(len(h), *(len(r.cells[i]) for r in rows)) for i, h in enumerate(header)]
    print(f"\n{title}")
    print("  ".join(h.ljust(w) for h, w in zip(header, widths)))
    print("  ".join("-" * w for w in widths))
    for r in rows:
        print("  ".join(c.ljust(w) for c, w in zip(r.cells, widths)).rstrip())
    for r in rows:
        if r.details:
            print(f"\n{r.cells[0]}:")
            for line in r.details:
                print(f"    {line}")


# ----------------------------------------------------------------------------------------------- meaning (fleet)

Interval = tuple[Fraction, bool, Fraction | None, bool]  # lo, lo closed, hi (None: inf), hi closed


def parse_time(value: object) -> Fraction:
    """A time of the streams: an integer, a decimal or a rational string such as "7/2"."""
    return Fraction(str(value))


def parse_interval(text: str) -> Interval:
    """CONTRACT §3 interval text: ``[a,b]``, ``[a,b)``, ``(a,inf)`` ..."""
    lo, hi = text[1:-1].split(",")
    upper = None if hi.strip() in ("inf", "+inf") else parse_time(hi.strip())
    return parse_time(lo.strip()), text[0] == "[", upper, text[-1] == "]" and upper is not None


def on_grid(iv: Interval, step: Fraction) -> Interval | None:
    """The grid points (multiples of ``step``) an interval covers, as a half-open real interval
    [first, last + step): then ``[1,3]``, ``[1,4)`` and ``{1} + [2,3]`` mean the same."""
    lo, lo_closed, hi, hi_closed = iv
    first = math.ceil(lo / step) * step
    if first == lo and not lo_closed:
        first += step
    if hi is None:
        return first, True, None, False
    last = math.floor(hi / step) * step
    if last == hi and not hi_closed:
        last -= step
    return (first, True, last + step, False) if last >= first else None


def intersect(a: Interval, b: Interval) -> Interval | None:
    """The common part of two intervals, or None."""
    (alo, alc, ahi, ahc), (blo, blc, bhi, bhc) = a, b
    lo, lo_closed = (alo, alc and blc) if alo == blo else max((alo, alc), (blo, blc), key=lambda x: x[0])
    if ahi is None or bhi is None:
        hi, hi_closed = (bhi, bhc) if ahi is None else (ahi, ahc)
    else:
        hi, hi_closed = (ahi, ahc and bhc) if ahi == bhi else min((ahi, ahc), (bhi, bhc), key=lambda x: x[0])
    if hi is not None and (lo > hi or (lo == hi and not (lo_closed and hi_closed))):
        return None
    return lo, lo_closed, hi, hi_closed


def input_span(stream: Path) -> Interval:
    """Smallest to largest time of an input stream (CONTRACT §3 clips LARS and DatalogMTL meaning to it)."""
    times: list[Fraction] = []
    with open(stream, encoding="utf-8") as f:
        for line in f:
            if not line.strip():
                continue
            event = json.loads(line)
            if "t" in event:
                times.append(parse_time(event["t"]))
            elif "interval" in event:
                lo, _, hi, _ = parse_interval(event["interval"])
                times += [lo] if hi is None else [lo, hi]
    return min(times), True, max(times), True


def maximal(pieces: list[tuple[Interval, int]]) -> Iterator[tuple[Interval, int]]:
    """Sum signed intervals over the rational line and yield the maximal intervals of equal,
    non-zero sum.  The distinct end points cut the line into points and the open stretches
    between them; each interval adds its diff to a contiguous run of those pieces."""
    ends = sorted({x for (lo, _, hi, _), _ in pieces for x in (lo, hi) if x is not None})
    index = {x: i for i, x in enumerate(ends)}
    last = 2 * len(ends)  # piece 2i: the stretch before ends[i]; 2i+1: the point ends[i]; last: after the last end
    delta = [0] * (last + 2)
    for (lo, lo_closed, hi, hi_closed), diff in pieces:
        start = 2 * index[lo] + (1 if lo_closed else 2)
        stop = last if hi is None else 2 * index[hi] + (1 if hi_closed else 0)
        delta[start] += diff
        delta[stop + 1] -= diff
    run_start, total = None, 0
    for piece in range(last + 2):
        before = total
        total += delta[piece]
        if run_start is not None and (total != before or piece == last + 1):
            yield _piece_interval(ends, run_start, piece - 1, last), before
            run_start = None
        if total != 0 and run_start is None and piece <= last:
            run_start = piece


def _piece_interval(ends: list[Fraction], first: int, final: int, last: int) -> Interval:
    """The interval covering the pieces ``first``..``final`` (see ``maximal``)."""
    lo, lo_closed = (ends[(first - 1) // 2], True) if first % 2 else (ends[first // 2 - 1], False)
    if final == last:
        return lo, lo_closed, None, False
    hi, hi_closed = (ends[(final - 1) // 2], True) if final % 2 else (ends[final // 2], False)
    return lo, lo_closed, hi, hi_closed


def meaning(answers: bytes, grid: Fraction | None, span: Interval | None) -> list[str]:
    """The meaning of an answer stream (CONTRACT §3), canonical: per (pred, args) the maximal
    intervals whose diffs sum to the same non-zero value (1 unless the stream is wrong), on the
    time grid if there is one, clipped to the input's span if given.  Two streams mean the same
    exactly when these lists are equal, however their lines are split or interleaved."""
    by_atom: dict[str, list[tuple[Interval, int]]] = {}
    odd: list[str] = []
    for raw in answers.splitlines():
        if not raw.strip():
            continue
        try:
            line = json.loads(raw)
            iv = parse_interval(line["interval"]) if "interval" in line else (
                parse_time(line["t"]), True, parse_time(line["t"]), True)
        except (ValueError, KeyError, TypeError):
            odd.append(f"unreadable line: {raw.decode(errors='replace')}")
            continue
        cut: Interval | None = on_grid(iv, grid) if grid is not None else iv
        if cut is not None and span is not None:
            lo, _, hi, _ = span
            cut = intersect(cut, (lo, True, hi + grid, False) if grid is not None and hi is not None else span)
        if cut is not None:
            model = f"model {line['model']} " if "model" in line else ""
            atom = f"{model}{line.get('pred')}{json.dumps(line.get('args', []), separators=(',', ':'))}"
            by_atom.setdefault(atom, []).append((cut, int(line.get("diff", 1))))
    out = []
    for atom in sorted(by_atom):
        for (lo, lo_closed, hi, hi_closed), count in maximal(by_atom[atom]):
            text = f"{atom} {'[' if lo_closed else '('}{lo},{'inf' if hi is None else hi}{']' if hi_closed else ')'}"
            out.append(text if count == 1 else f"{text} sum {count}")
    return out + odd


# ----------------------------------------------------------------------------------------------- fleet


@dataclass
class FleetRun:
    """A fleet's answer topic once it stopped changing, or why there is none."""

    meaning: list[str] | None
    lines: int = 0
    note: str = ""


class Fleet:
    """One ``chronolog up PROGRAM --publish STREAM`` of one side, with its bundled broker (on a
    free port it picks itself), stopped with Ctrl-C (SIGINT) as a user would, then by force."""

    live: ClassVar[set[subprocess.Popen]] = set()  # for the clean-up when the script is interrupted

    def __init__(self, side: Side, work: Path, case: FleetCase, layout: list[str], tag: str) -> None:
        self.side, self.work, self.state = side, work, side.scratch / f"fleet-{tag}"
        self.log_path = side.scratch / f"fleet-{tag}.err"
        self.log = open(self.log_path, "wb")  # noqa: SIM115 (closed in stop)
        argv = ["up", *case.program, "--publish", str(case.stream), "--state-dir", str(self.state),
                "--idle-flush", "0.5", *layout]
        self.proc = subprocess.Popen([sys.executable, "-m", "chronolog", *argv], stdout=subprocess.PIPE,
                                     stderr=self.log, cwd=side.scratch, env=side_env(side, work),
                                     start_new_session=True)
        Fleet.live.add(self.proc)
        self.ready = threading.Event()
        self.said: list[str] = []
        threading.Thread(target=self._read, daemon=True).start()

    def _read(self) -> None:
        assert self.proc.stdout is not None
        for raw in self.proc.stdout:
            self.said.append(raw.decode(errors="replace").rstrip())
            if raw.startswith(b"ready"):
                self.ready.set()
        self.ready.set()  # ended: whoever waits sees it is not running

    def published(self) -> bool:
        """Whether ``up`` has said (on stderr) that it published the whole stream."""
        return b"\npublished " in b"\n" + self.log_path.read_bytes()

    def answers(self) -> Result:
        """The answer topic as it is now (``chronolog tail`` until 2 s without a new line)."""
        return run_cli(self.side, self.work, ["tail", "--state-dir", str(self.state), "--idle-exit", "2"], timeout=60)

    def stop(self) -> None:
        """Ctrl-C first (``up`` takes its services and broker down), then force."""
        for sig, wait in ((signal.SIGINT, 30), (signal.SIGTERM, 10), (signal.SIGKILL, 10)):
            if self.proc.poll() is not None:
                break
            try:
                if sig == signal.SIGINT:  # to `up` alone, as Ctrl-C: it stops its services and broker
                    self.proc.send_signal(sig)
                else:  # its whole process group: `up` is the leader (start_new_session)
                    os.killpg(self.proc.pid, sig)
            except ProcessLookupError:
                break
            try:
                self.proc.wait(wait)
            except subprocess.TimeoutExpired:
                continue
        Fleet.live.discard(self.proc)
        self.log.close()


def kill_one(fleet: Fleet) -> str:
    """``kill -9`` of the fleet's first reasoner (or chain) service, as ``fleet.json`` names it
    (``up`` restarts it from its state): what was killed, for the row's note."""
    info = json.loads((fleet.state / "fleet.json").read_text())
    for prefix in ("reasoner", "chain", "output", "grounding"):
        for svc in info["services"]:
            if svc["name"].startswith(prefix) and svc.get("pid"):
                try:
                    os.kill(svc["pid"], signal.SIGKILL)
                except ProcessLookupError:
                    continue
                part = "" if svc.get("partition") is None else f"-p{svc['partition']}"
                return f"killed {svc['name']}{part} with SIGKILL"
    return "nothing to kill"


def run_fleet(side: Side, work: Path, case: FleetCase, layout: list[str], tag: str, expected: list[str],
              kill: bool = False) -> FleetRun:
    """Start the fleet, publish the stream, read the answer topic until its meaning stops
    changing (or equals the side's own ``chronolog run``, which is where it must end up), stop it.
    ``kill``: one of its services is killed with SIGKILL as soon as the stream is published."""
    span = input_span(case.stream) if case.clip else None
    fleet = Fleet(side, work, case, layout, tag)
    killed = ""
    try:
        if not fleet.ready.wait(FLEET_READY_TIMEOUT) or fleet.proc.poll() is not None:
            return FleetRun(None, note=f"not ready: {' | '.join(fleet.said[-3:])}")
        deadline = time.monotonic() + FLEET_SETTLE_TIMEOUT
        while not fleet.published() and time.monotonic() < deadline and fleet.proc.poll() is None:
            time.sleep(0.2)
        if kill:
            killed = kill_one(fleet)
            time.sleep(1.0)  # up notices and restarts it
        previous: list[str] | None = None
        unchanged, got, lines = 0, None, 0
        while time.monotonic() < deadline:
            read = fleet.answers()
            got, lines = meaning(read.out, case.grid, span), read.out.count(b"\n")
            unchanged = unchanged + 1 if got == previous else 0
            if (got == expected and unchanged >= 1) or unchanged >= 3:
                return FleetRun(got, lines, note=killed)
            previous = got
        return FleetRun(got, lines, note=f"{killed}; still changing after {FLEET_SETTLE_TIMEOUT:.0f} s")
    finally:
        fleet.stop()


def fleet_layouts(base: Side, work: Path, case: FleetCase) -> list[tuple[str, list[str]]]:
    """Per-stratum and chained, on 1 and 3 partitions, as far as they differ: a layout whose
    ``chronolog topology`` (base side) is that of one before it (a program that cannot be split
    by key, a hosted DatalogMTL/RTEC evaluator) is the same fleet, run once and named with it."""
    seen: dict[bytes, int] = {}
    layouts: list[tuple[str, list[str]]] = []
    for name, extra in (("per-stratum p1", []), ("chained p1", ["--chain"]), ("per-stratum p3", ["--partitions", "3"]),
                        ("chained p3", ["--chain", "--partitions", "3"])):
        topology = run_cli(base, work, ["topology", *case.program, *extra]).out
        if topology in seen:
            first, args = layouts[seen[topology]]
            layouts[seen[topology]] = (f"{first} = {name}", args)
        else:
            seen[topology] = len(layouts)
            layouts.append((name, extra))
    if len(layouts) == 1:
        return [("one topology for all 4 layouts", [])]
    return layouts


def fleet_rows(base: Side, head: Side, work: Path, cases: list[FleetCase], kill: bool = False) -> list[Row]:
    """Each fleet case and layout on both sides at once (two fleets, two brokers); with
    ``kill`` each layout once more with a service killed by SIGKILL mid-stream."""
    rows = []
    for n, case in enumerate(cases):
        own = {}
        for side in (base, head):
            ran = run_cli(side, work, ["run", *case.program, "--input", str(case.stream)])
            own[side.name] = meaning(ran.out, case.grid, input_span(case.stream) if case.clip else None)
        for k, (layout, extra) in enumerate(fleet_layouts(base, work, case)):
            for killing in (False, True) if kill else (False,):
                label = f"{layout}, kill -9" if killing else layout
                print(f"  fleet {case.name}, {label} ...", file=sys.stderr, flush=True)
                with ThreadPoolExecutor(2) as pool:
                    runs = [pool.submit(run_fleet, side, work, case, extra, f"{n}-{k}{'k' if killing else ''}",
                                        own[side.name], killing) for side in (base, head)]
                    a, b = (r.result() for r in runs)
                rows.append(fleet_row(f"{case.name} [{label}]", a, b, own["base"], own["head"]))
    return rows


def fleet_row(name: str, a: FleetRun, b: FleetRun, own_a: list[str], own_b: list[str]) -> Row:
    """Same when both fleets ended with the same meaning; whether each means what its own
    ``chronolog run`` prints is shown too (a wrong fleet on both sides is not a difference
    between the revisions, but it is reported)."""
    def cell(r: FleetRun) -> str:
        return f"{len(r.meaning):,} intervals / {r.lines:,} lines" if r.meaning is not None else "no answers"

    same = a.meaning is not None and a.meaning == b.meaning
    vs_a = "same" if a.meaning == own_a else "DIFFERS"
    vs_b = "same" if b.meaning == own_b else "DIFFERS"
    details = [f"{side}: {r.note}" for side, r in (("base", a), ("head", b)) if r.note]
    if not same and a.meaning is not None and b.meaning is not None:
        details += first_differences("\n".join(a.meaning).encode(), "\n".join(b.meaning).encode())
    for side, r, own in (("base", a, own_a), ("head", b, own_b)):
        if r.meaning is not None and r.meaning != own:
            details.append(f"{side} fleet vs {side} run (run -, fleet +):")
            details += first_differences("\n".join(own).encode(), "\n".join(r.meaning).encode())
    return Row([name, cell(a), cell(b), "same" if same else "DIFF", vs_a, vs_b], same, details)


# ----------------------------------------------------------------------------------------------- main


def parse_args(argv: list[str] | None) -> argparse.Namespace:
    p = argparse.ArgumentParser(description="Run the chronolog CLI of two revisions on the same inputs and "
                                            "compare the answers byte for byte.")
    p.add_argument("--base", required=True, metavar="REV", help="the revision to compare against (e.g. HEAD)")
    p.add_argument("--head", default=str(REPO), metavar="REV_OR_PATH",
                   help="a revision, or a checkout directory (default: this checkout's working tree)")
    p.add_argument("--fleet", action="store_true", help="also compare `chronolog up` fleets (meaning of the answers)")
    p.add_argument("--kill", action="store_true",
                   help="with --fleet: each layout also with a service killed by SIGKILL mid-stream")
    p.add_argument("--backfill", action="store_true", help="also compare `chronolog backfill` (PySpark)")
    p.add_argument("--keep", action="store_true", help="keep the worktrees, inputs and scratch folders")
    p.add_argument("--shared", default=str(REPO.parent / "shared"), metavar="DIR",
                   help="the project's shared folder with data/mtl and data/rtec (default: ../shared)")
    return p.parse_args(argv)


def compare(args: argparse.Namespace, work: Path, sides: list[Side]) -> int:
    """Set up both sides and the inputs, run every case, print the tables; the exit status."""
    base = open_side("base", args.base, work)
    sides.append(base)
    head = open_side("head", args.head, work)
    sides.append(head)
    print(f"base: {base.label}\nhead: {head.label}")
    problems = [p for p in (check_import(base, work), check_import(head, work)) if p]
    if any("imported from" in p for p in problems):
        print("\n".join(problems), file=sys.stderr)
        return 2
    for p in problems:
        print(f"warning: {p}")
    started = time.monotonic()
    inputs = build_inputs(base, work, Path(args.shared))
    rows = run_cases(base, head, work, inputs.embedded)
    print_table(f"embedded: {len(rows)} cases, {time.monotonic() - started:.1f} s (stdout bytes and exit status)",
                ["case", "base bytes/lines", "head bytes/lines", "result"], rows)
    if args.backfill:
        began = time.monotonic()
        more = run_cases(base, head, work, inputs.backfill)
        print_table(f"backfill: {len(more)} cases, {time.monotonic() - began:.1f} s (stdout bytes and exit status)",
                    ["case", "base bytes/lines", "head bytes/lines", "result"], more)
        rows += more
    if args.fleet:
        began = time.monotonic()
        more = fleet_rows(base, head, work, inputs.fleet, kill=args.kill)
        print_table(f"fleet: {len(more)} runs, {time.monotonic() - began:.1f} s — compared by MEANING, not bytes: "
                    "partitions interleave answer lines differently, so each answer topic is reduced to its "
                    "maximal intervals per (pred, args) whose diffs sum to 1 (CONTRACT §3)",
                    ["case [layout]", "base fleet", "head fleet", "base vs head", "base fleet vs run",
                     "head fleet vs run"], more)
        rows += more
    failed = sum(not r.same for r in rows)
    print(f"\n{len(rows) - failed} of {len(rows)} same; {failed} differ" + ("" if failed else ": no answer changed"))
    wrong = sum("DIFFERS" in r.cells for r in rows)
    if wrong:
        print(f"warning: {wrong} fleet runs do not mean what their side's `chronolog run` prints "
              "(a fleet problem, but not a difference between the revisions)")
    return 1 if failed else 0


def main(argv: list[str] | None = None) -> int:
    args = parse_args(argv)
    work = Path(tempfile.mkdtemp(prefix="compare-revisions-"))
    sides: list[Side] = []
    try:
        return compare(args, work, sides)
    finally:
        for proc in list(Fleet.live):
            with_group_killed(proc)
        if args.keep:
            print(f"kept: {work}" + "".join(f"\n      {s.root}" for s in sides if s.worktree))
        else:
            for side in sides:
                close_side(side)
            shutil.rmtree(work, ignore_errors=True)


def with_group_killed(proc: subprocess.Popen) -> None:
    """Kill a fleet this script started (its process group: the supervisor, services, broker)."""
    try:
        os.killpg(proc.pid, signal.SIGKILL)
    except ProcessLookupError:
        pass


if __name__ == "__main__":
    sys.exit(main())
