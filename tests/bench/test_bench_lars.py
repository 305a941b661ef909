"""`chronolog bench lars` runs the public workloads and prints its table."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

from chronolog.bench.lars import WORKLOADS, find_generator, parameters

GEN = Path(__file__).resolve().parents[3] / "shared" / "bench" / "lars" / "gen.py"


def bench(*args: str) -> subprocess.CompletedProcess:
    return subprocess.run(
        [sys.executable, "-m", "chronolog", "bench", "lars", *args, "--quiet"],
        capture_output=True, text=True, timeout=300,
    )


def test_small_workloads_print_a_row_each_with_the_memory_curve():
    got = bench("box", "cooling", "--win", "2", "--facts", "4", "--tps", "6", "--memory-curve")
    assert got.returncode == 0, got.stderr
    rows = [line for line in got.stdout.splitlines() if line.startswith("│ ")]
    assert [r.split("│")[1].strip() for r in rows] == ["box", "cooling"]
    assert all(r.count("MiB") == 4 for r in rows)  # peak RSS and 1x / 5x / 10x


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
    got = bench("nope")
    assert got.returncode == 2 and "unknown workload 'nope'" in got.stderr


def test_defaults_follow_the_published_figures():
    assert parameters("diamond", {}) == {"win": 20, "facts": 800, "tps": 300, "rules": 10, "seed": 42}
    assert parameters("p_n", {"tps": None})["win"] == 100 and parameters("p_n", {})["facts"] == 1000
    assert parameters("worst", {})["win"] == 3 and parameters("chain", {})["rules"] == 100
    assert parameters("chain", {"rules": 5})["rules"] == 5
    assert len(WORKLOADS) == 12


def test_generator_ships_in_the_package():
    assert find_generator().is_file() and find_generator().name == "lars_gen.py"
    assert "chronolog" in find_generator().resolve().parts  # inside the installed package


@pytest.mark.skipif(not GEN.exists(), reason="../shared/bench/lars/gen.py not found beside the repo")
@pytest.mark.parametrize("workload", WORKLOADS)
def test_shipped_generator_writes_what_the_public_one_writes(tmp_path, workload):
    """The packaged copy must not drift from the public generator the figures cite."""
    args = [workload, "--win", "3", "--facts", "5", "--tps", "7", "--rules", "3", "--seed", "7"]
    for name, gen in (("public", GEN), ("shipped", find_generator())):
        subprocess.run([sys.executable, str(gen), *args, "--out", str(tmp_path / name)], check=True, capture_output=True)
    public = sorted(p.name for p in (tmp_path / "public").iterdir())
    assert public == sorted(p.name for p in (tmp_path / "shipped").iterdir()) and "stream.jsonl" in public
    for name in public:
        assert (tmp_path / "public" / name).read_bytes() == (tmp_path / "shipped" / name).read_bytes(), name


def test_plot_draws_a_bar_per_workload(tmp_path):
    svg = tmp_path / "p.svg"
    got = bench("box", "cooling", "--win", "2", "--facts", "4", "--tps", "6", "--no-eval", "--plot", str(svg))
    assert got.returncode == 0, got.stderr
    text = svg.read_text()
    assert text.startswith("<svg") and text.count("<rect") == 2
    assert "box (process)" in text and "cooling (process)" in text


def test_modes_print_start_overs_and_the_tms_share_of_oneshot():
    got = bench("tickerB", "--win", "3", "--tps", "12", "--mode", "tms,oneshot")
    assert got.returncode == 0, got.stderr
    rows = [[c.strip() for c in line.split("│")[1:-1]] for line in got.stdout.splitlines() if line.startswith("│ ")]
    assert [r[1] for r in rows] == ["tms", "oneshot"]
    tms, oneshot = rows
    assert tms[-2].isdigit() and oneshot[-2:] == ["-", "-"]  # start-overs; the ratio only on the TMS row
    wall, cpu = (float(x) for x in tms[-1].split(","))
    assert wall > 0 and cpu > 0
    assert float(tms[3]) > 0 and float(tms[4]) > 0  # evaluation: wall and CPU ms per time point
