"""`chronolog bench lars` runs the public workloads and prints its table."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

from chronolog.bench.lars import WORKLOADS, find_generator, parameters

SHARED_GEN = Path(__file__).resolve().parents[3] / "shared" / "bench" / "lars" / "gen.py"
GEN = find_generator()


def bench(*args: str) -> subprocess.CompletedProcess:
    return subprocess.run(
        [sys.executable, "-m", "chronolog", "bench", "lars", *args, "--quiet"],
        capture_output=True, text=True, timeout=300,
    )


@pytest.mark.skipif(not GEN.exists(), reason="../shared/bench/lars/gen.py not found beside the repo")
def test_small_workloads_print_a_row_each_with_the_memory_curve():
    got = bench("box", "cooling", "--win", "2", "--facts", "4", "--tps", "6", "--memory-curve")
    assert got.returncode == 0, got.stderr
    rows = [line for line in got.stdout.splitlines() if line.startswith("│ ")]
    assert [r.split("│")[1].strip() for r in rows] == ["box", "cooling"]
    assert all(r.count("MiB") == 4 for r in rows)  # peak RSS and 1x / 5x / 10x


@pytest.mark.skipif(not GEN.exists(), reason="../shared/bench/lars/gen.py not found beside the repo")
def test_no_pruning_prints_the_evaluation_without_it_and_the_ratio():
    got = bench("worst", "--win", "2", "--facts", "5", "--tps", "8", "--no-pruning", "--no-process", "--repeat", "2")
    assert got.returncode == 0, got.stderr
    assert "no pruning" in got.stdout and "pruning / none" in got.stdout
    (row,) = [line for line in got.stdout.splitlines() if line.startswith("│ ")]
    cells = [c.strip() for c in row.split("│")[1:-1]]
    assert cells[0] == "worst" and float(cells[-2]) > 0 and float(cells[-1]) > 0


def test_missing_generator_is_a_clear_error():
    got = bench("box", "--gen", "/nonexistent/gen.py")
    assert got.returncode == 2
    assert "benchmark generator not found" in got.stderr and "Traceback" not in got.stderr


def test_unknown_workload_is_a_clear_error():
    if not GEN.exists():
        pytest.skip("no generator")
    got = bench("nope")
    assert got.returncode == 2 and "unknown workload 'nope'" in got.stderr


def test_defaults_follow_the_published_figures():
    assert parameters("diamond", {}) == {"win": 20, "facts": 800, "tps": 300, "rules": 10, "seed": 42}
    assert parameters("p_n", {"tps": None})["win"] == 100 and parameters("p_n", {})["facts"] == 1000
    assert parameters("worst", {})["win"] == 3 and parameters("chain", {})["rules"] == 100
    assert parameters("chain", {"rules": 5})["rules"] == 5
    assert len(WORKLOADS) == 12


def test_the_generator_ships_in_the_package():
    """Issue 13: nothing outside the repository is needed at run time."""
    assert GEN.is_file() and GEN.is_relative_to(Path(__import__("chronolog").__file__).parent)


@pytest.mark.skipif(not SHARED_GEN.exists(), reason="../shared/bench/lars/gen.py not found beside the repo")
def test_the_shipped_generator_is_the_public_one():
    assert GEN.read_bytes() == SHARED_GEN.read_bytes()
