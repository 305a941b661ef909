"""services/: one folder per fleet service, whose README says what `chronolog topology` says."""

from __future__ import annotations

import re
import subprocess
import sys
from pathlib import Path

import pytest

from chronolog.engine.plan import plan_program
from chronolog.lang import load_program
from chronolog.topology import build_topology

ROOT = Path(__file__).resolve().parents[2]
SERVICES = ROOT / "services"
TRAFFIC = ROOT / "src" / "chronolog" / "examples" / "traffic.lars"
ROW = re.compile(r"^\| ([\w-]+) \| (.+?) \| (.+?) \| (.+?) \|$", re.MULTILINE)


def _topics(cell: str) -> list[str]:
    return re.findall(r"`([^`]+)`", cell)


def _documented(kind: str) -> dict[str, tuple[list[str], list[str], list[str]]]:
    text = (SERVICES / kind / "README.md").read_text()
    rows = {m.group(1): (_topics(m.group(2)), _topics(m.group(3)), _topics(m.group(4)))
            for m in ROW.finditer(text) if m.group(1) != "service"}
    assert rows, f"services/{kind}/README.md has no service table"
    return rows


@pytest.mark.parametrize("kind", ["ingest", "grounding", "reasoner", "output", "chain"])
def test_readme_matches_the_topology_of_the_bundled_example(kind):
    topology = build_topology(plan_program(load_program([str(TRAFFIC)])), chain=kind == "chain")
    actual = {s.name: (s.reads, s.writes, [s.state]) for s in topology.services
              if s.name == kind or s.name.startswith(f"{kind}-")}
    assert _documented(kind) == actual


def test_every_service_of_both_layouts_has_a_folder():
    plan = plan_program(load_program([str(TRAFFIC)]))
    names = {s.name.split("-")[0] for chain in (False, True) for s in build_topology(plan, chain=chain).services}
    assert names == {p.name for p in SERVICES.iterdir() if p.is_dir()}


def test_entry_point_is_the_service_command():
    got = subprocess.run([sys.executable, str(SERVICES / "reasoner" / "main.py"), str(TRAFFIC), "--stratum", "3",
                          "--bootstrap", "127.0.0.1:1"], capture_output=True, text=True, timeout=60)
    assert got.returncode == 2 and "--stratum must be between 1 and 2" in got.stderr
