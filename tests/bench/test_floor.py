"""`bench fleet --floor`: forwarding hops on the real bundled broker carry every
published line once and in order, each closed time point gets its latency, and
no hop process outlives the run (the table's floor rows:
tests/bench/test_bench_fleet.py)."""

from __future__ import annotations

import subprocess
import sys

import pytest
from floor_hops import hop_processes

from chronolog.bench.fleet import workload
from chronolog.bench.floor import floor_latency
from chronolog.core.errors import ChronologError


@pytest.mark.fleet
def test_forwarding_hops_carry_every_line_once_in_order():
    lines = workload(40, 3, seed=5)
    latencies, carried = floor_latency(lines, 3, 300.0, [0.03, 0.0, 0.0], None, 15.0)
    assert carried == lines  # exactly once, in order, through three transactional hops
    assert len(latencies) == 39  # every point but the last is closed by a later one
    assert all(0 < s < 10 for s in latencies)
    assert hop_processes() == []


@pytest.mark.fleet
@pytest.mark.parametrize("transactions", ["none", "last"])
def test_hops_without_transactions_carry_every_line_in_order(transactions):
    lines = workload(30, 3, seed=6)
    latencies, carried = floor_latency(lines, 3, 300.0, [0.03, 0.0, 0.0], None, 15.0, transactions)
    assert carried == lines  # no failure here, so nothing is sent twice
    assert len(latencies) == 29
    assert hop_processes() == []


@pytest.mark.fleet
def test_which_hops_commit_a_transaction(monkeypatch):
    import chronolog.bench.floor as floor

    assert [floor._commits("every", i, 3) for i in (1, 2, 3)] == [True, True, True]
    assert [floor._commits("last", i, 3) for i in (1, 2, 3)] == [False, False, True]
    assert [floor._commits("none", i, 3) for i in (1, 2, 3)] == [False, False, False]
    started: list[list[str]] = []
    real = subprocess.Popen

    def popen(args, *rest, **kw):  # type: ignore[no-untyped-def]
        if "chronolog.bench.floor" not in args:  # the broker
            return real(args, *rest, **kw)
        started.append(list(args))
        raise OSError("not started")

    monkeypatch.setattr(floor.subprocess, "Popen", popen)
    with pytest.raises(OSError):  # the command line of hop 1 of 3 says it commits no transaction
        floor_latency(workload(3, 2), 2, 100.0, [0.0, 0.0, 0.0], None, 5.0, "last")
    assert started[0][-1] == "--no-transactions" and started[0][-4:-1] == ["1", "3", "0.0"]
    with pytest.raises(ValueError, match="one of every, last, none"):
        floor_latency(workload(3, 2), 2, 100.0, [0.0], None, 5.0, "some")
    assert hop_processes() == []


@pytest.mark.fleet
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
    assert hop_processes() == []
