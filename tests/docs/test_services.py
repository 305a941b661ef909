"""services/: one folder per fleet service, whose README's topic table is what
`chronolog topology` prints for the bundled example and whose main.py starts
exactly `chronolog service NAME`."""

from __future__ import annotations

import os
import re
import runpy
import shlex
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
SERVICES = ROOT / "services"
TABLE = re.compile(r"<!-- topics: chronolog (topology .*?) -->\n(.*?)<!-- /topics -->", re.S)


def service_choices() -> list[str]:
    from chronolog.contract.topics import SERVICE_ROLES as choices

    return choices


def topology_services(args: list[str]) -> dict[str, dict[str, list[str]]]:
    """`chronolog topology ARGS`'s services, parsed from its text output."""
    proc = subprocess.run([sys.executable, "-m", "chronolog", *args], capture_output=True, text=True, cwd=ROOT,
                          check=True)
    services: dict[str, dict[str, list[str]]] = {}
    current: dict[str, list[str]] = {}
    for line in proc.stdout.split("services:\n", 1)[1].splitlines():
        if m := re.match(r"  (\S+): `", line):
            current = services.setdefault(m.group(1), {"reads": [], "writes": [], "state": []})
        elif m := re.match(r"    (reads|writes):\s+(.*)", line):
            current[m.group(1)] = m.group(2).split(", ")
        elif m := re.match(r"    state:\s+RocksDB, changelog (\S+)", line):
            current["state"] = [m.group(1)]
    return services


def readme_table(body: str) -> dict[str, dict[str, list[str]]]:
    rows = [r.strip().strip("|").split("|") for r in body.strip().splitlines()[2:]]
    return {
        cells[0].strip().strip("`"): {
            column: re.findall(r"`([^`]+)`", cell) for column, cell in zip(("reads", "writes", "state"), cells[1:])
        }
        for cells in rows
    }


def test_one_folder_per_service():
    folders = sorted(p.name for p in SERVICES.iterdir() if p.is_dir() and not p.name.startswith(("_", ".")))
    assert folders == sorted(service_choices())
    for name in folders:
        assert (SERVICES / name / "README.md").is_file(), name
        assert (SERVICES / name / "main.py").is_file(), name


@pytest.mark.parametrize("name", service_choices())
def test_readme_topics_match_chronolog_topology(name):
    text = (SERVICES / name / "README.md").read_text()
    tables = TABLE.findall(text)
    assert tables, f"services/{name}/README.md has no marked topic table"
    for command, body in tables:
        topology = topology_services(shlex.split(command))
        instances = {s: v for s, v in topology.items() if s == name or s.startswith(f"{name}-")}
        assert instances, f"{command}: no {name} service"
        assert readme_table(body) == instances, command


@pytest.mark.parametrize("name", service_choices())
def test_readme_names_only_real_metrics(name):
    from chronolog.runtime.fleet.metrics import METRICS

    text = (SERVICES / name / "README.md").read_text()
    named = set(re.findall(r"chronolog_[a-z_]+", text))
    assert named and named <= set(METRICS), named - set(METRICS)


@pytest.mark.parametrize("name", service_choices())
def test_main_runs_chronolog_service(name, monkeypatch):
    import chronolog.cli.main

    seen = []
    monkeypatch.setattr(chronolog.cli.main, "main", lambda argv: seen.append(argv) or 0)
    monkeypatch.setattr(sys, "argv", ["main.py", "prog.lars", "--bootstrap", "kafka:9092"])
    with pytest.raises(SystemExit) as stop:
        runpy.run_path(str(SERVICES / name / "main.py"), run_name="__main__")
    assert stop.value.code == 0
    assert seen == [["service", name, "prog.lars", "--bootstrap", "kafka:9092"]]


def test_main_reports_a_bad_program_like_the_cli(tmp_path):
    """A real process: the entry point goes through the CLI's error handling (file:line:col, exit 2)."""
    bad = tmp_path / "bad.lars"
    bad.write_text("q(X) :- p(X) [3.\n")
    env = {k: v for k, v in os.environ.items() if not k.startswith("CHRONOLOG_")}
    proc = subprocess.run([sys.executable, str(SERVICES / "reasoner" / "main.py"), str(bad), "--stratum", "1",
                           "--bootstrap", "127.0.0.1:9"], capture_output=True, text=True, timeout=60, env=env)
    assert proc.returncode == 2
    assert f"{bad}:1:" in proc.stderr and "Traceback" not in proc.stderr
