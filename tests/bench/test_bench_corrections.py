"""The corrections benchmark builds the late streams it claims, and runs."""

from __future__ import annotations

import subprocess
import sys
from collections import Counter

from chronolog.bench.corrections import delayed, stream


def test_delayed_stream_moves_exactly_count_facts_by_the_delay():
    events = stream(30, 4, 10, seed=3)
    late, n = delayed(events, 5, 4, seed=3, retract=False)
    assert n == 5
    assert Counter((e.t, e.args) for e in late) == Counter((e.t, e.args) for e in events)
    seen_max = -1
    moved = 0
    for e in late:
        if e.t < seen_max:
            moved += 1
            assert seen_max - e.t >= 4  # arrives at least `delay` points after its time
        seen_max = max(seen_max, e.t)
    assert moved == 5


def test_retracted_stream_withdraws_count_facts_later():
    events = stream(30, 4, 10, seed=3)
    late, n = delayed(events, 6, 3, seed=5, retract=True)
    retractions = [e for e in late if e.retract]
    assert n == len(retractions) == 6
    for r in retractions:
        assert any(e.t == r.t and e.args == r.args and not e.retract for e in events)


def test_bench_corrections_prints_a_row_per_program_and_kind():
    got = subprocess.run(
        [sys.executable, "-m", "chronolog", "bench", "corrections", "diamond", "tuple",
         "--tps", "25", "--facts", "3", "--count", "3", "--delay", "2"],
        capture_output=True, text=True, timeout=120,
    )
    assert got.returncode == 0, got.stderr
    rows = [line for line in got.stdout.splitlines() if line.startswith("│") and ("delayed" in line or "retracted" in line)]
    assert len(rows) == 4
