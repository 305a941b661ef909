"""`chronolog topology --format compose` (issue 13): an override of docker-compose.yml
that runs the program's own fleet, service by service and partition by partition."""

from __future__ import annotations

import re
import subprocess
import sys
from pathlib import Path

import pytest
import yaml

from chronolog.cli.main import build_parser

ROOT = Path(__file__).resolve().parents[2]
PROGRAM = "a(X) :- p(X) [2].\nb(X) :- a(X), not q(X).\nc(X) :- b(X) [3], not a(X).\n"


def chronolog(*args: str) -> str:
    res = subprocess.run([sys.executable, "-m", "chronolog", *args], capture_output=True, text=True, timeout=120,
                         check=False)
    assert res.returncode == 0, res.stderr
    return res.stdout


@pytest.mark.parametrize("chain", [False, True])
@pytest.mark.parametrize("partitions", [1, 2])
def test_the_override_runs_each_service_of_the_topology_on_each_partition(tmp_path, chain, partitions):
    program = tmp_path / "three.lars"
    program.write_text(PROGRAM)
    flags = ["--partitions", str(partitions)] + (["--chain"] if chain else [])
    override = yaml.safe_load(chronolog("topology", str(program), *flags, "--format", "compose"))
    listed = re.findall(r"^  ([\w-]+): `chronolog service ([^`]*)`$", chronolog("topology", str(program), *flags),
                        re.MULTILINE)
    want = set()
    for _, words in listed:
        kind, *rest = words.split()
        for p in ([None] if kind == "ingest" else range(partitions)):
            want.add((kind, tuple(rest), p))
    got = set()
    services = override["services"]
    for name, svc in services.items():
        if not name.startswith("fleet-"):
            continue
        args = build_parser().parse_args(svc["command"])  # a command line the CLI accepts
        assert args.program == ["/programs/three.lars"] and args.partitions == partitions
        assert f"{name}-state:/var/lib/chronolog" in svc["volumes"] and f"{name}-state" in override["volumes"]
        rest = ("--stratum", str(args.stratum)) if args.stratum is not None else ()
        got.add((args.service, rest, None if args.service == "ingest" else args.partition))
    assert got == want
    # the bundled example's fleet (docker-compose.yml) is switched off, its other services kept
    base = yaml.safe_load((ROOT / "docker-compose.yml").read_text())["services"]
    off = {n for n, s in services.items() if s.get("profiles") == ["bundledExample"]}
    assert off == {n for n, s in base.items() if s.get("command", [""])[0] == "service"}
    assert services["create-topics"]["command"][:2] == ["create-topics", "/programs/three.lars"]
    assert ("--chain" in services["create-topics"]["command"]) == chain
