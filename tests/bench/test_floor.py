"""`bench fleet --floor`: forwarding hops on the real bundled broker carry every
published line once and in order, each closed time point gets its latency, and
no hop process outlives the run."""

from __future__ import annotations

import os
import re
import subprocess
import sys

import pytest

from chronolog.bench.fleet import workload
from chronolog.bench.floor import floor_latency
from chronolog.errors import ChronologError


def _hop_processes(pid: int | None = None) -> list[str]:
    """Hop processes started by process ``pid`` (default: this one; their topics name it)."""
    got = subprocess.run(["ps", "-eo", "args"], capture_output=True, text=True).stdout
    mark = f"chronolog-floor-{os.getpid() if pid is None else pid}-"
    return [line for line in got.splitlines() if "chronolog.bench.floor" in line and mark in line]


def test_forwarding_hops_carry_every_line_once_in_order():
    lines = workload(40, 3, seed=5)
    latencies, carried = floor_latency(lines, 3, 300.0, [0.03, 0.0, 0.0], None, 15.0)
    assert carried == lines  # exactly once, in order, through three transactional hops
    assert len(latencies) == 39  # every point but the last is closed by a later one
    assert all(0 < s < 10 for s in latencies)
    assert _hop_processes() == []


def test_a_hop_that_dies_is_an_error_that_says_which(monkeypatch):
    import chronolog.bench.floor as floor

    real = subprocess.Popen

    def popen(args, *rest, **kw):  # type: ignore[no-untyped-def]
        if args[-3] == "2":  # the second of two hops fails at once
            args = [sys.executable, "-c", "import sys; sys.exit(3)"]
        return real(args, *rest, **kw)

    monkeypatch.setattr(floor.subprocess, "Popen", popen)
    with pytest.raises(ChronologError, match="hop 2 exited with status 3"):
        floor_latency(workload(5, 2), 2, 100.0, [0.0, 0.0], None, 5.0)
    assert _hop_processes() == []


def test_bench_fleet_floor_prints_a_row_per_hop_count():
    bench = subprocess.Popen([sys.executable, "-m", "chronolog", "bench", "fleet", "--tps", "30", "--facts", "3",
                              "--rate", "150", "--seconds", "1", "--partitions", "1", "--floor"],
                             stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    stdout, stderr = bench.communicate(timeout=600)
    got = subprocess.CompletedProcess(bench.args, bench.returncode, stdout, stderr)
    assert got.returncode == 0, got.stderr[-2000:]
    rows = {m.group(1).strip(): m.group(2) for m in re.finditer(r"│\s*([^│]+?)\s*│(.*)", got.stdout)}
    # per stratum: ingest's gap first; chained on one partition: the chain commits at once
    for hops in ("5 exactly-once hops, the first every 30 ms", "1 exactly-once hop"):
        row = rows[f"floor: {hops}, 150 events/s"]
        assert len(re.findall(r"\d+ ms", row)) == 3, got.stdout
    assert _hop_processes(bench.pid) == []
