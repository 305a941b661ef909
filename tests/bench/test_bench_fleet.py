"""`chronolog bench fleet` on a tiny workload: both layouts run on the real
bundled broker and every row of the table carries figures."""

from __future__ import annotations

import math
import re
import subprocess
import sys

import pytest
from floor_hops import hop_processes

from chronolog.bench.fleet import PROGRAM, _floor_name, _spread, floor_runs, latencies, windows, workload


def test_workload_has_the_asked_shape():
    lines = workload(7, 3)
    assert len(lines) == 21 and lines[0].startswith(b'{"t":0,') and lines[-1].startswith(b'{"t":6,')


def bench_fleet(*args: str) -> subprocess.CompletedProcess:
    got = subprocess.run([sys.executable, "-m", "chronolog", "bench", "fleet", *args],
                         capture_output=True, text=True, timeout=600)
    assert got.returncode == 0, got.stderr[-2000:]
    return got


def test_a_point_never_answered_counts_as_infinitely_late():
    closed = {0: 1.0, 1: 2.0, 2: 3.0, 3: 4.0}
    lat = latencies(closed, {0: 1.25, 1: 2.5, 3: 4.125})
    assert lat[0] == 0.25 and lat[1] == 0.5 and lat[3] == 0.125
    assert math.isinf(lat[2])  # not dropped: a fleet that falls behind must not look quick
    assert _spread([0.5, math.inf, 0.25], "{:.2f} s") == "0.50 s (0.25 s–unanswered)"


def test_windows_split_a_run_by_time():
    # 1,000 events/s of 10 events per point: 100 points a second, 1,000 per 10 s
    lat = [0.01] * 1000 + [0.02] * 990 + [0.5] * 10 + [math.inf] * 3
    got = windows(lat, 1000.0, 10)
    assert got[0] == (0.01, 0.01)
    assert got[1] == (0.02, 0.5)  # the 10 slow points are the top 1 % of the second window
    assert math.isinf(got[2][0]) and math.isinf(got[2][1])
    assert len(got) == 3


def test_one_floor_per_distinct_path_of_hops_with_every_way_of_committing():
    # per stratum: ingest (every 30 ms) then 4 reasoner and output hops, on 1 or 2 partitions alike;
    # chained on one partition: the chain commits at once; on two: ingest, then the chain
    got = [_floor_name(gaps, how) for gaps, how in floor_runs(PROGRAM, [(False, 1), (False, 2), (True, 1), (True, 2)])]
    assert got == ["floor: 1 exactly-once hop", "floor: 1 hop without transactions",
                   "floor: 2 exactly-once hops, the first every 30 ms",
                   "floor: 2 hops, only the last exactly-once, the first every 30 ms",
                   "floor: 2 hops without transactions, the first every 30 ms",
                   "floor: 5 exactly-once hops, the first every 30 ms",
                   "floor: 5 hops, only the last exactly-once, the first every 30 ms",
                   "floor: 5 hops without transactions, the first every 30 ms"]


def _table(*options: str) -> tuple[dict[str, str], str, int]:
    bench = subprocess.Popen([sys.executable, "-m", "chronolog", "bench", "fleet", "--tps", "30", "--facts", "3",
                              "--rate", "150", "--seconds", "1", *options],
                             stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    stdout, stderr = bench.communicate(timeout=900)
    assert bench.returncode == 0, stderr[-2000:]
    return {m.group(1).strip(): m.group(2) for m in re.finditer(r"│\s*([^│]+?)\s*│(.*)", stdout)}, stdout, bench.pid


@pytest.mark.fleet
def test_bench_fleet_prints_both_layouts_on_one_and_two_partitions():
    rows, stdout, pid = _table("--partitions", "1,2")
    modes = ["embedded (in-process)"] + [f"fleet {layout}, {parts}, {speed}"
                                         for layout in ("per stratum", "chained")
                                         for parts in ("1 partition", "2 partitions")
                                         for speed in ("full speed", "150 events/s")]
    for mode in modes:
        assert mode in rows, stdout
    for parts in ("1 partition", "2 partitions"):
        for layout in ("per stratum", "chained"):  # a ratio to embedded; latency percentiles
            assert re.search(r"\d+\.\d\d", rows[f"fleet {layout}, {parts}, full speed"])
            assert len(re.findall(r"\d+ ms", rows[f"fleet {layout}, {parts}, 150 events/s"])) == 3
    assert "median of" not in stdout
    assert hop_processes(pid) == []


@pytest.mark.fleet
def test_bench_fleet_prints_medians_of_rounds_and_the_floor_of_its_layout():
    rows, stdout, pid = _table("--partitions", "1", "--layout", "chain", "--repeat", "2", "--floor")
    assert re.search(r"\d+\.\d\d \(\d+\.\d\d–\d+\.\d\d\)", rows["fleet chained, 1 partition, full speed"])
    assert re.search(r"\d+ ms \(\d+ ms–\d+ ms\)", rows["fleet chained, 1 partition, 150 events/s"])
    assert "median of 2 rounds" in stdout
    for hops in ("1 exactly-once hop", "1 hop without transactions"):
        assert re.search(r"\d+ ms \(\d+ ms–\d+ ms\)", rows[f"floor: {hops}, 150 events/s"]), stdout
    assert "per stratum" not in stdout and "1 hop, only the last" not in stdout
    assert hop_processes(pid) == []


@pytest.mark.fleet
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


def test_stages_answer_as_embedded_mode_on_both_workloads():
    from chronolog.bench.fleet import POINTS_PROGRAM, PROGRAM, embedded_run, points_workload
    from chronolog.bench.stages import stage_cpu

    for program, lines in ((PROGRAM, workload(40, 4)), (POINTS_PROGRAM, points_workload(40))):
        cpu, answers = stage_cpu(program, lines)
        _, expected = embedded_run(lines, program)
        assert list(cpu) == ["ingest", "grounding", "reasoner-1", "reasoner-2", "output"]
        assert all(seconds > 0 for seconds in cpu.values())
        assert expected and sorted(answers) == sorted(expected)


def test_bench_fleet_stages_prints_a_row_per_stage_without_a_broker():
    got = bench_fleet("--stages", "--tps", "40", "--facts", "3", "--repeat", "2")
    rows = {m.group(1).strip(): m.group(2) for m in re.finditer(r"│\s*([^│]+?)\s*│(.*)", got.stdout)}
    for stage in ("ingest", "grounding", "reasoner-1", "reasoner-2", "output", "all stages", "embedded (in-process)"):
        assert re.search(r"\d+ \(\d+–\d+\)", rows[stage]), (stage, got.stdout)
    assert rows["embedded (in-process)"].rstrip(" │").endswith("1.00")


def test_bench_fleet_stages_fails_when_the_stages_answer_otherwise(monkeypatch, capsys):
    import argparse

    from chronolog.bench import fleet

    real = fleet.stage_cpu
    monkeypatch.setattr(fleet, "stage_cpu", lambda program, lines: (real(program, lines)[0], []))
    args = argparse.Namespace(layout="both", partitions=[1], workload="default", facts=3, tps=20, stages=True,
                              repeat=1, rate=100.0, seconds=1.0, linger_ms=15.0, bootstrap=None, breakdown=False)
    assert fleet.main(args) == 1
    assert "differ from embedded mode's" in capsys.readouterr().out
