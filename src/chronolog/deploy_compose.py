"""``chronolog topology --format compose``: a Compose override that runs a program's fleet.

The repository's docker-compose.yml runs the fleet of the bundled example;
the override printed here switches those services off (a profile that is
never enabled, as docker-compose.chain.yml does) and adds one service per
service and partition of the program's own topology, each running exactly
the command ``chronolog topology`` lists, with its own state volume.  JSON
is YAML: ``chronolog topology rules.lars --format compose > fleet.yml`` and
``docker compose -f docker-compose.yml -f fleet.yml up -d --build``.
"""

from __future__ import annotations

import os

from chronolog.topology import Topology

STATE_DIR = "/var/lib/chronolog"


def compose_override(topology: Topology, bundled: Topology, programs: list[str], partitions: int,
                     input_partitions: int, chain: bool, bootstrap: str = "kafka:9092") -> dict:
    """The override for ``programs`` (paths relative to the compose file's folder)."""
    mounts = [f"{_host(p)}:/programs/{os.path.basename(p)}:ro" for p in programs]
    files = [f"/programs/{os.path.basename(p)}" for p in programs]
    scale = ["--partitions", str(partitions), "--input-partitions", str(input_partitions)]
    services: dict[str, dict] = {
        "create-topics": {"command": ["create-topics", *files, "--bootstrap", bootstrap, *scale]
                          + (["--chain"] if chain else []), "volumes": mounts},
    }
    for s in bundled.services:
        services[s.name] = {"profiles": ["bundledExample"]}
    volumes: dict[str, dict] = {}
    for s in topology.services:
        words = s.command.split()[2:]  # chronolog service KIND [--stratum K]
        instances = [None] if words[0] == "ingest" else list(range(partitions))
        for p in instances:
            name = f"fleet-{s.name}" + ("" if p is None or partitions == 1 else f"-p{p}")
            volumes[f"{name}-state"] = {}
            services[name] = {
                "build": ".", "image": "chronolog:local", "restart": "unless-stopped",
                "command": ["service", words[0], *files, *words[1:], *scale, "--bootstrap", bootstrap]
                + ([] if p is None else ["--partition", str(p)]),
                "environment": {"CHRONOLOG_BOOTSTRAP": bootstrap, "CHRONOLOG_STATE_DIR": STATE_DIR,
                                "CHRONOLOG_METRICS_PORT": "9400"},
                "volumes": [*mounts, f"{name}-state:{STATE_DIR}"],
                "depends_on": {"create-topics": {"condition": "service_completed_successfully"}},
            }
    return {"services": services, "volumes": volumes}


def _host(path: str) -> str:
    """A bind mount's source: absolute as given, else relative to the compose file (``./``)."""
    return path if os.path.isabs(path) else "./" + os.path.normpath(path)
