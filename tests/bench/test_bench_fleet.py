"""`chronolog bench fleet` on a tiny workload: both layouts run on the real
bundled broker and every row of the table carries figures."""

from __future__ import annotations

import re
import subprocess
import sys

from chronolog.bench.fleet import workload


def test_workload_has_the_asked_shape():
    lines = workload(7, 3)
    assert len(lines) == 21 and lines[0].startswith(b'{"t":0,') and lines[-1].startswith(b'{"t":6,')


def test_bench_fleet_prints_both_layouts_with_medians():
    got = subprocess.run(
        [sys.executable, "-m", "chronolog", "bench", "fleet", "--tps", "30", "--facts", "3", "--rate", "150",
         "--seconds", "1", "--repeat", "2"],
        capture_output=True, text=True, timeout=600,
    )
    assert got.returncode == 0, got.stderr[-2000:]
    rows = {m.group(1).strip(): m.group(2) for m in re.finditer(r"│\s*([^│]+?)\s*│(.*)", got.stdout)}
    for mode in ("embedded (in-process)", "fleet per stratum, full speed", "fleet chained, full speed",
                 "fleet per stratum, 150 events/s", "fleet chained, 150 events/s"):
        assert mode in rows, got.stdout
    assert re.search(r"\d+\.\d\d \(\d+\.\d\d–\d+\.\d\d\)", rows["fleet chained, full speed"])  # ratio, median (range)
    assert re.search(r"\d+ ms \(\d+ ms–\d+ ms\)", rows["fleet chained, 150 events/s"])
    assert "median of 2 rounds" in got.stdout
