"""The public benchmark workloads (chronolog.bench.lars_gen, as in ../shared/bench/lars/gen.py), small, against independent answers.

Stratified workloads (Laser's diamond/box/join/multi/cooling, Laser2's P_n,
P'_n, best/worst cases and rule chains, Ticker's Scenario A) must equal the
naive reference evaluator; Ticker's Scenario B (several answer sets) must give
an answer set at every time point.  The Laser-syntax program of each workload
must mean the same as the native one.
"""

from __future__ import annotations

import io
import subprocess
import sys
from pathlib import Path

import orjson
import pytest
from meaning import meaning
from reference import reference_answers

from chronolog.bench.lars import find_generator
from chronolog.dialects.lars.plan import plan_program
from chronolog.dialects.load import load_program
from chronolog.io.formats import read_events
from chronolog.runtime.embedded import run_embedded

GEN = find_generator()  # the public generator as shipped in the package

STRATIFIED = ["diamond", "box", "join", "multi", "cooling", "p_n", "pprime_n", "best", "worst", "chain", "tickerA"]


def generate(tmp_path: Path, workload: str, win: int = 3, facts: int = 4, tps: int = 14) -> Path:
    out = tmp_path / workload
    subprocess.run(
        [sys.executable, str(GEN), workload, "--win", str(win), "--facts", str(facts), "--tps", str(tps),
         "--rules", "3", "--out", str(out)],
        check=True, capture_output=True,
    )
    return out


def run(program_path: Path, stream_path: Path) -> set:
    program = load_program([str(program_path)])
    with open(stream_path) as f:
        events = list(read_events(f, str(stream_path)))
    out = io.StringIO()
    run_embedded(program, events, out, warn=lambda m: None)
    times = [e.t for e in events]
    return meaning([orjson.loads(x) for x in out.getvalue().splitlines()], (min(times), max(times))), program, events


@pytest.mark.parametrize("workload", STRATIFIED)
def test_stratified_workload_equals_reference(tmp_path, workload):
    d = generate(tmp_path, workload, win=1 if workload == "worst" else 3)
    got, program, events = run(d / "program.lars", d / "stream.jsonl")
    assert got == reference_answers(program, events)
    if (d / "program.laser").exists():
        assert run(d / "program.laser", d / "stream.jsonl")[0] == got


def test_ticker_scenario_b_answer_sets(tmp_path):
    d = generate(tmp_path, "tickerB", win=3, tps=8)
    got, program, events = run(d / "program.lars", d / "stream.jsonl")
    assert not plan_program(program).stratified
    # every requested item with a reachable source gets exactly one chosen source per time point
    gets = {}
    for pred, args, t in got:
        if pred == "get":
            gets.setdefault((args[0], args[1], t), []).append(args[2])
    assert all(len(v) == 1 for v in gets.values())
    sources = {(a[0], a[1], t) for p, a, t in got if p == "source"}
    assert set(gets) == sources
