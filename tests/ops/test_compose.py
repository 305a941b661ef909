"""docker-compose.yml: a valid Compose file whose fleet is the bundled example's topology.

Every command line is parsed by chronolog's own argument parser.

`docker-compose config` (Compose v1 from Debian) validates and normalises the
file without a Docker engine.
"""

from __future__ import annotations

import argparse
import base64
import contextlib
import io
import os
import re
import shlex
import shutil
import subprocess
from pathlib import Path, PurePosixPath

import pytest
import yaml

from .conftest import EXAMPLE, OPS, ROOT, chronolog, compose_command, load_yaml

FLEET_KINDS = ("ingest", "grounding", "reasoner", "output")


def parse_cli(argv: list[str]) -> argparse.Namespace:
    """``argv`` parsed by the real command line of chronolog (an invalid line fails the test)."""
    from chronolog.cli.main import build_parser

    err = io.StringIO()
    try:
        with contextlib.redirect_stderr(err):
            return build_parser().parse_args(argv)
    except SystemExit as exc:
        raise AssertionError(f"not a valid chronolog command line: {argv}: {err.getvalue()}") from exc


def parse_service(argv: list[str]) -> argparse.Namespace:
    assert argv[0] == "service", argv
    args = parse_cli(argv)
    assert args.service in FLEET_KINDS
    assert (args.stratum is not None) == (args.service == "reasoner"), f"--stratum goes with reasoner only: {argv}"
    return args


@pytest.fixture(scope="module")
def config() -> dict:
    res = subprocess.run([*compose_command(), "-f", str(ROOT / "docker-compose.yml"), "config"],
                         cwd=ROOT, capture_output=True, text=True, timeout=120, check=False)
    assert res.returncode == 0, res.stderr
    return yaml.safe_load(res.stdout)


@pytest.fixture(scope="module")
def topology() -> dict[str, list[str]]:
    """service name -> its command words, as `chronolog topology` prints them for the example."""
    res = chronolog("topology", str(EXAMPLE))
    assert res.returncode == 0, res.stderr
    found = dict(re.findall(r"^  ([\w-]+): `chronolog (service [^`]*)`$", res.stdout, re.MULTILINE))
    assert found, res.stdout
    return {name: shlex.split(cmd) for name, cmd in found.items()}


def words(command) -> list[str]:
    return shlex.split(command) if isinstance(command, str) else [str(w) for w in command]


def host_path(service: dict, container_path: str) -> Path:
    """The file on the host that ``container_path`` is inside ``service`` (through its bind mounts)."""
    target = PurePosixPath(container_path)
    for vol in service.get("volumes", []):
        if isinstance(vol, dict):
            source, dest = vol.get("source"), vol["target"]
        else:
            parts = vol.split(":")
            source, dest = parts[0], parts[1]
        if source and source.startswith(("/", ".")) and (target == PurePosixPath(dest) or PurePosixPath(dest) in target.parents):
            return (ROOT / source).resolve() / target.relative_to(dest)
    raise AssertionError(f"{container_path} is not on a bind mount of {service}")


def mounts(service: dict) -> dict[str, str]:
    """container path -> source (named volume or resolved host path)."""
    out = {}
    for vol in service.get("volumes", []):
        source, dest = (vol["source"], vol["target"]) if isinstance(vol, dict) else vol.split(":")[:2]
        out[dest] = source
    return out


def test_services(config, topology):
    assert set(config["services"]) == {"kafka", "create-topics", "prometheus", "grafana", *topology}
    assert set(topology) == {"ingest", "grounding", "reasoner-1", "reasoner-2", "output"}


def test_kafka_is_a_single_kraft_node(config):
    kafka = config["services"]["kafka"]
    assert kafka["image"].startswith("apache/kafka:")
    env = kafka["environment"]
    assert set(env["KAFKA_PROCESS_ROLES"].split(",")) == {"broker", "controller"}
    node = str(env["KAFKA_NODE_ID"])
    voters = env["KAFKA_CONTROLLER_QUORUM_VOTERS"].split(",")
    assert voters == [f"{node}@kafka:9093"]
    raw = env["CLUSTER_ID"]
    assert len(base64.urlsafe_b64decode(raw + "==")) == 16 and len(raw) == 22, "CLUSTER_ID must be a base64url UUID"
    for key in ("KAFKA_OFFSETS_TOPIC_REPLICATION_FACTOR", "KAFKA_TRANSACTION_STATE_LOG_REPLICATION_FACTOR",
                "KAFKA_TRANSACTION_STATE_LOG_MIN_ISR"):
        assert str(env[key]) == "1", key  # one node: transactions need these at 1
    advertised = env["KAFKA_ADVERTISED_LISTENERS"].split(",")
    assert "PLAINTEXT://kafka:9092" in advertised
    assert "healthcheck" in kafka and "test" in kafka["healthcheck"]


def test_fleet_commands_follow_the_topology(config, topology):
    strata = set()
    for name, expected in topology.items():
        svc = config["services"][name]
        argv = words(svc["command"])
        args = parse_service(argv)
        exp = parse_service(expected + ["PROGRAM"])
        assert (args.service, args.stratum) == (exp.service, exp.stratum), name
        if args.stratum is not None:
            strata.add(args.stratum)
        for program in args.program:
            assert host_path(svc, program).resolve() == EXAMPLE.resolve()
        bootstrap = args.bootstrap or svc["environment"]["CHRONOLOG_BOOTSTRAP"]
        assert bootstrap == "kafka:9092"
        assert svc["environment"]["CHRONOLOG_BOOTSTRAP"] == bootstrap
        assert svc["image"] == "chronolog:local" and "build" in svc
        assert svc["depends_on"]["create-topics"]["condition"] == "service_completed_successfully"
    # one reasoner per stratum of `chronolog topology`, numbered 1..n (the example has two)
    expected = {parse_service(c + ["PROGRAM"]).stratum for c in topology.values()} - {None}
    assert strata == expected == {1, 2}


def test_each_service_keeps_its_state_on_its_own_volume(config, topology):
    seen = {}
    for name in topology:
        svc = config["services"][name]
        state_dir = svc["environment"]["CHRONOLOG_STATE_DIR"]
        source = mounts(svc).get(state_dir)
        assert source and source in config["volumes"], f"{name}: no named volume at {state_dir}"
        assert source not in seen, f"{name} shares {source} with {seen.get(source)}"
        seen[source] = name


def test_create_topics_runs_once_before_the_fleet(config):
    ct = config["services"]["create-topics"]
    argv = words(ct["command"])
    assert argv[0] == "create-topics"
    args = parse_cli(argv)
    assert args.bootstrap == "kafka:9092"
    assert [host_path(ct, prog).resolve() for prog in args.program] == [EXAMPLE.resolve()]
    assert ct["depends_on"]["kafka"]["condition"] == "service_healthy"
    assert ct.get("restart", "no") == "no"


def test_prometheus_scrapes_every_fleet_service(config, topology):
    prom = config["services"]["prometheus"]
    m = mounts(prom)
    assert Path(m["/etc/prometheus"]).resolve() == (OPS / "prometheus").resolve()
    assert "--config.file=/etc/prometheus/prometheus.yml" in words(prom["command"])
    scrape = load_yaml(OPS / "prometheus" / "prometheus.yml")
    assert scrape["rule_files"] == ["alerts.yml"]
    targets = [t for job in scrape["scrape_configs"] for sc in job["static_configs"] for t in sc["targets"]]
    ports = {config["services"][n]["environment"]["CHRONOLOG_METRICS_PORT"] for n in topology}
    assert ports == {"9400"}
    assert sorted(targets) == sorted(f"{n}:9400" for n in topology)


def test_grafana_gets_the_provisioned_dashboard(config):
    graf = config["services"]["grafana"]
    m = {dest: Path(src).resolve() for dest, src in mounts(graf).items() if src.startswith("/")}
    assert m["/etc/grafana/provisioning"] == (OPS / "grafana" / "provisioning").resolve()
    providers = load_yaml(OPS / "grafana" / "provisioning" / "dashboards" / "chronolog.yml")["providers"]
    folder = providers[0]["options"]["path"]
    dashboards = [dest for dest, src in m.items() if dest.startswith(folder + "/")]
    assert [m[d] for d in dashboards] == [(OPS / "grafana" / "chronolog.json").resolve()]
    ds = load_yaml(OPS / "grafana" / "provisioning" / "datasources" / "prometheus.yml")["datasources"][0]
    assert ds["url"] == "http://prometheus:9090"
    assert "3000" in [container_port(p) for p in graf["ports"]]


def container_port(entry) -> str:
    """The container side of a ports entry (v1 prints "127.0.0.1:3000:3000/tcp", v2 a mapping)."""
    if isinstance(entry, dict):
        return str(entry["target"])
    return str(entry).split("/")[0].rsplit(":", 1)[-1]


# ---------------------------------------------------------------------------
# The chained layout: docker-compose.chain.yml over docker-compose.yml

CHAIN_OVERRIDE = ROOT / "docker-compose.chain.yml"


@pytest.fixture(scope="module")
def chain_config() -> dict:
    res = subprocess.run([*compose_command(), "-f", str(ROOT / "docker-compose.yml"), "-f", str(CHAIN_OVERRIDE), "config"],
                         cwd=ROOT, capture_output=True, text=True, timeout=120, check=False)
    assert res.returncode == 0, res.stderr
    return yaml.safe_load(res.stdout)


@pytest.fixture(scope="module")
def chain_topology() -> dict[str, list[str]]:
    res = chronolog("topology", str(EXAMPLE), "--chain")
    assert res.returncode == 0, res.stderr
    found = dict(re.findall(r"^  ([\w-]+): `chronolog (service [^`]*)`$", res.stdout, re.MULTILINE))
    return {name: shlex.split(cmd) for name, cmd in found.items()}


def enabled(config: dict, profiles: tuple[str, ...] = ()) -> dict[str, dict]:
    """The services `up` starts with these profiles active (services without profiles always)."""
    return {n: s for n, s in config["services"].items() if not s.get("profiles") or set(s["profiles"]) & set(profiles)}


def test_both_layouts_start_only_services_whose_dependencies_start(config, chain_config):
    """Compose refuses `up` when an enabled service depends on one a profile disables."""
    for cfg in (config, chain_config):
        on = enabled(cfg)
        for name, svc in on.items():
            deps = svc.get("depends_on", {})
            assert set(deps) <= set(on), f"{name} depends on disabled {set(deps) - set(on)}"


def test_chain_override_runs_the_chained_topology_instead(config, chain_config, topology, chain_topology):
    assert set(chain_topology) == {"chain"}  # one partition: the chain ingests too
    on = enabled(chain_config)
    assert set(on) == {"kafka", "create-topics", "prometheus", "grafana", *chain_topology}
    # the per-stratum fleet is still defined, but only under a profile this file never enables
    assert set(chain_config["services"]) - set(on) == set(topology)
    assert all(chain_config["services"][n]["profiles"] == ["perStratum"] for n in topology)
    assert enabled(chain_config, ("perStratum",)).keys() >= set(topology)
    # the base file alone is unchanged: no profiles, no chain
    assert set(enabled(config)) == set(config["services"])


def test_chain_service_follows_the_chained_topology(chain_config, chain_topology):
    svc = chain_config["services"]["chain"]
    argv = words(svc["command"])
    args = parse_cli(argv)
    assert argv[:2] == chain_topology["chain"] == ["service", "chain"]
    assert args.stratum is None
    assert [host_path(svc, p).resolve() for p in args.program] == [EXAMPLE.resolve()]
    assert (args.bootstrap or svc["environment"]["CHRONOLOG_BOOTSTRAP"]) == "kafka:9092"
    assert svc["environment"]["CHRONOLOG_METRICS_PORT"] == "9400"
    assert svc["image"] == "chronolog:local" and "build" in svc
    assert svc["depends_on"]["create-topics"]["condition"] == "service_completed_successfully"
    state = mounts(svc)[svc["environment"]["CHRONOLOG_STATE_DIR"]]
    assert state in chain_config["volumes"]
    others = {mounts(s).get(s.get("environment", {}).get("CHRONOLOG_STATE_DIR", "-")) for n, s in
              chain_config["services"].items() if n != "chain"}
    assert state not in others


def test_chain_override_creates_the_chained_topics(chain_config):
    ct = chain_config["services"]["create-topics"]
    args = parse_cli(words(ct["command"]))
    assert args.chain and args.bootstrap == "kafka:9092"
    assert [host_path(ct, prog).resolve() for prog in args.program] == [EXAMPLE.resolve()]
    assert ct["depends_on"]["kafka"]["condition"] == "service_healthy"


def test_chain_prometheus_scrapes_the_chain(chain_config, chain_topology):
    prom = chain_config["services"]["prometheus"]
    assert Path(mounts(prom)["/etc/prometheus"]).resolve() == (OPS / "prometheus").resolve()
    (config_flag,) = [w for w in words(prom["command"]) if w.startswith("--config.file=")]
    name = PurePosixPath(config_flag.split("=", 1)[1]).relative_to("/etc/prometheus")
    scrape = load_yaml(OPS / "prometheus" / str(name))
    base = load_yaml(OPS / "prometheus" / "prometheus.yml")
    # the same settings and rules as the per-stratum config; only the targets differ
    assert {k: v for k, v in scrape.items() if k != "scrape_configs"} == {k: v for k, v in base.items() if k != "scrape_configs"}
    assert [j["job_name"] for j in scrape["scrape_configs"]] == ["chronolog"]
    targets = [t for job in scrape["scrape_configs"] for sc in job["static_configs"] for t in sc["targets"]]
    assert sorted(targets) == sorted(f"{n}:9400" for n in chain_topology)
    promtool = shutil.which("promtool")
    if promtool or os.environ.get("CI"):
        res = subprocess.run([promtool or "promtool", "check", "config", str(name)], cwd=OPS / "prometheus",
                             capture_output=True, text=True, timeout=60, check=False)
        assert res.returncode == 0, res.stdout + res.stderr
