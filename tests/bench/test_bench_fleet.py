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


def bench_fleet(*args: str) -> subprocess.CompletedProcess:
    got = subprocess.run([sys.executable, "-m", "chronolog", "bench", "fleet", *args],
                         capture_output=True, text=True, timeout=600)
    assert got.returncode == 0, got.stderr[-2000:]
    return got


def test_bench_fleet_prints_both_layouts_with_medians():
    got = bench_fleet("--tps", "30", "--facts", "3", "--rate", "150", "--seconds", "1", "--repeat", "2",
                      "--partitions", "1,2")
    rows = {m.group(1).strip(): m.group(2) for m in re.finditer(r"│\s*([^│]+?)\s*│(.*)", got.stdout)}
    modes = ["embedded (in-process)"] + [f"fleet {layout}, {parts}, {speed}"
                                         for layout in ("per stratum", "chained")
                                         for parts in ("1 partition", "2 partitions")
                                         for speed in ("full speed", "150 events/s")]
    for mode in modes:
        assert mode in rows, got.stdout
    for parts in ("1 partition", "2 partitions"):
        for layout in ("per stratum", "chained"):  # ratio, median (range); latency percentiles likewise
            assert re.search(r"\d+\.\d\d \(\d+\.\d\d–\d+\.\d\d\)", rows[f"fleet {layout}, {parts}, full speed"])
            assert re.search(r"\d+ ms \(\d+ ms–\d+ ms\)", rows[f"fleet {layout}, {parts}, 150 events/s"])
    assert "median of 2 rounds" in got.stdout


def test_bench_fleet_says_when_a_program_runs_one_partition():
    got = bench_fleet("--workload", "points", "--tps", "20", "--rate", "200", "--seconds", "1", "--partitions", "1,2",
                      "--layout", "chain")
    assert "fleet chained, 1 partition, full speed" in got.stdout
    assert "2 partitions" not in got.stdout.replace("--partitions 2", "")
    assert "--partitions 2: this program runs as one partition" in got.stdout


def test_bench_fleet_rejects_bad_partition_counts():
    got = subprocess.run([sys.executable, "-m", "chronolog", "bench", "fleet", "--partitions", "1,x"],
                         capture_output=True, text=True, timeout=60)
    assert got.returncode == 2 and "expected partition counts" in got.stderr and "Traceback" not in got.stderr
