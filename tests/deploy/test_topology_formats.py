"""Deployments follow the program: `chronolog topology --format compose|helm-values`."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import yaml

ROOT = Path(__file__).resolve().parents[2]
TRAFFIC = ROOT / "src" / "chronolog" / "examples" / "traffic.lars"
THREE = """\
a(X) :- p(X) [2].
b(X) :- p(X) [3], not a(X).
c(X) :- p(X) [2], not b(X).
"""


def topology(*args: str) -> str:
    got = subprocess.run([sys.executable, "-m", "chronolog", "topology", *args], capture_output=True, text=True,
                         timeout=60)
    assert got.returncode == 0, got.stderr
    return got.stdout


def test_checked_in_compose_file_is_the_generated_one():
    want = topology(str(TRAFFIC.relative_to(ROOT)), "--format", "compose", "--mount", "./src/chronolog/examples")
    assert (ROOT / "docker-compose.yml").read_text() == want, (
        "docker-compose.yml is stale: chronolog topology src/chronolog/examples/traffic.lars --format compose "
        "--mount ./src/chronolog/examples > docker-compose.yml")


def test_compose_services_follow_the_strata(tmp_path):
    prog = tmp_path / "three.lars"
    prog.write_text(THREE)
    doc = yaml.safe_load(topology(str(prog), "--format", "compose"))
    services = doc["services"]
    reasoners = sorted(s for s in services if s.startswith("reasoner-"))
    assert reasoners == ["reasoner-1", "reasoner-2", "reasoner-3"]
    assert services["reasoner-3"]["command"] == [
        "service", "reasoner", "/programs/three.lars", "--stratum", "3", "--bootstrap", "kafka:9092"]
    assert {f"{s}-state" for s in reasoners} <= set(doc["volumes"])
    assert services["create-topics"]["command"][:2] == ["create-topics", "/programs/three.lars"]


def test_helm_values_carry_the_program_and_its_strata(tmp_path):
    from helm_python import Chart

    prog = tmp_path / "three.lars"
    prog.write_text(THREE)
    values = yaml.safe_load(topology(str(prog), "--format", "helm-values", "--partitions", "2"))
    assert values["strata"] == 3 and values["partitions"] == 2 and values["layout"] == "perStratum"
    assert values["program"]["files"] == {"traffic.lars": None, "three.lars": THREE}
    with Chart.load(ROOT / "helm" / "chronolog") as chart:
        rendered = chart.render(values, name="demo", namespace="ns")
    docs = [d for path, text in rendered.items() if not path.endswith("NOTES.txt")
            for d in yaml.safe_load_all(text) if d]
    sets = sorted(d["metadata"]["name"] for d in docs if d["kind"] == "StatefulSet")
    assert [n for n in sets if "reasoner" in n] == [f"demo-chronolog-reasoner-{k}" for k in (1, 2, 3)]
