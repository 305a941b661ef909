"""The Helm chart (helm/chronolog): linted and rendered by the real Helm
engine (helm-python-sdk binds Helm's Go SDK, no helm binary or cluster), every
manifest validated against the Kubernetes OpenAPI schemas (kubernetes-validate,
offline, strict: unknown fields are errors), and the properties the fleet
needs asserted on the render."""

from __future__ import annotations

import base64
import functools
import json
import os
import re
import stat
import subprocess
import sys
from pathlib import Path

import helm_python as helm
import kubernetes_validate
import pytest
import yaml

from chronolog.dialects.lars.layout import lars_layout
from chronolog.dialects.lars.plan import plan_program
from chronolog.dialects.load import load_program
from chronolog.runtime.fleet.metrics import METRICS
from chronolog.runtime.fleet.topology import build_topology

ROOT = Path(__file__).resolve().parents[2]
CHART = ROOT / "helm" / "chronolog"
CI_VALUES = CHART / "ci" / "values-sasl-tls.yaml"
OPS_DASHBOARD = ROOT / "ops" / "grafana" / "chronolog.json"
TRAFFIC = ROOT / "src" / "chronolog" / "examples" / "traffic.lars"
RELEASE, NAMESPACE = "demo", "stream"
FULL = f"{RELEASE}-chronolog"
# Oldest Kubernetes the chart supports with partitionFrom=podIndexLabel (the
# apps.kubernetes.io/pod-index label), and the newest schemas shipped.
KUBE_VERSIONS = ("1.28.0", kubernetes_validate.utils.latest_version())
WORKLOAD_KINDS = ("Deployment", "StatefulSet", "Job", "Pod")


def ci_values() -> dict:
    return yaml.safe_load(CI_VALUES.read_text())


@functools.cache
def _render(values_json: str, name: str) -> tuple[tuple[str, str], ...]:
    with helm.Chart.load(CHART) as chart:
        out = chart.render(json.loads(values_json), name=name, namespace=NAMESPACE)
    return tuple(sorted(out.items()))


def render(values: dict | None = None, name: str = RELEASE) -> list[dict]:
    """The manifests Helm renders (NOTES.txt excluded), as dicts."""
    docs = []
    for path, text in _render(json.dumps(values or {}, sort_keys=True), name):
        if path.endswith("NOTES.txt"):
            continue
        docs.extend(d for d in yaml.safe_load_all(text) if d)
    return docs


def notes(values: dict | None = None) -> str:
    return dict(_render(json.dumps(values or {}, sort_keys=True), RELEASE))["chronolog/templates/NOTES.txt"]


def of_kind(docs: list[dict], kind: str) -> list[dict]:
    return [d for d in docs if d["kind"] == kind]


def named(docs: list[dict], kind: str, name: str) -> dict:
    (doc,) = [d for d in docs if d["kind"] == kind and d["metadata"]["name"] == name]
    return doc


def pod_spec(doc: dict) -> dict:
    return doc["spec"] if doc["kind"] == "Pod" else doc["spec"]["template"]["spec"]


def service_workloads(docs: list[dict]) -> list[dict]:
    """The Deployment and StatefulSets that run `chronolog service`."""
    return [d for d in docs if d["kind"] in ("Deployment", "StatefulSet")]


def main_container(doc: dict) -> dict:
    (c,) = pod_spec(doc)["containers"]
    return c


def service_args(doc: dict) -> list[str]:
    """The chronolog argument vector of a service container, as the kubelet
    and the shell wrapper would expand it for pod ordinal 0."""
    c = main_container(doc)
    if c["command"] == ["chronolog"]:
        return [a.replace("$(CHRONOLOG_POD_INDEX)", "0") for a in c["args"]]
    assert c["command"][:2] == ["/bin/sh", "-c"], c["command"]
    return [*c["args"], "--partition", "0"]


def flag(args: list[str], name: str) -> str:
    return args[args.index(name) + 1]


VARIANTS = {
    "default": {},
    "sasl-tls": ci_values(),
    "hostname-init-existing-secret": {
        **ci_values(),
        "partitionFrom": "hostname",
        "topics": {"mode": "initContainer"},
        "kafka": {
            **ci_values()["kafka"],
            "sasl": {"enabled": True, "existingSecret": "team-kafka-user", "usernameKey": "user", "passwordKey": "password"},
        },
        "persistence": {"enabled": False},
    },
}
# layout: chain (`chronolog up --chain`): the bundled program on one partition
# (one chain pod that ingests too), the CI program on 3 (ingest + 3 chain pods)
CHAIN_VARIANTS = {
    "chain-1": {"layout": "chain"},
    "chain-3-sasl-tls": {**ci_values(), "layout": "chain"},
    "chain-3-hostname-init-existing-secret": {**VARIANTS["hostname-init-existing-secret"], "layout": "chain"},
}
ALL_VARIANTS = {**VARIANTS, **CHAIN_VARIANTS}


# ---------------------------------------------------------------------------
# Lint and schema validation


@pytest.mark.parametrize(
    "values",
    [{}, ci_values(), CHAIN_VARIANTS["chain-1"], CHAIN_VARIANTS["chain-3-sasl-tls"]],
    ids=["default", "sasl-tls", "chain-1", "chain-3-sasl-tls"],
)
def test_helm_lint_strict_has_no_warnings(values: dict) -> None:
    report = helm.lint(CHART, values, strict=True, namespace=NAMESPACE)
    assert report["errors"] == []
    assert report["total_charts_linted"] == 1
    # Only informational findings ("icon is recommended") are left.
    assert all(m["severity"] <= 1 for m in report["messages"]), report["messages"]


def test_helm_lint_reports_bad_values() -> None:
    report = helm.lint(CHART, {"partitions": 0})
    assert any("/partitions" in e for e in report["errors"]), report


@pytest.mark.parametrize("variant", sorted(ALL_VARIANTS))
@pytest.mark.parametrize("kube", KUBE_VERSIONS)
def test_every_manifest_is_valid_kubernetes(variant: str, kube: str) -> None:
    docs = render(ALL_VARIANTS[variant])
    assert len(docs) >= (9 if variant.startswith("chain") else 12)
    checked = 0
    for doc in docs:
        if doc["kind"] == "ServiceMonitor":  # a CRD: its shape is asserted below
            continue
        try:
            kubernetes_validate.validate(doc, kube, strict=True)
        except kubernetes_validate.ValidationError as exc:
            pytest.fail(f"{doc['kind']}/{doc['metadata']['name']}: {'.'.join(map(str, exc.path))}: {exc.message}")
        checked += 1
    assert checked == len(docs) - len(of_kind(docs, "ServiceMonitor"))


def test_the_validator_catches_a_broken_manifest() -> None:
    """Guard against a validation that passes anything."""
    sts = json.loads(json.dumps(of_kind(render(), "StatefulSet")[0]))
    sts["spec"]["template"]["spec"]["containers"][0]["ports"][0]["containerPort"] = "metrics"
    with pytest.raises(kubernetes_validate.ValidationError):
        kubernetes_validate.validate(sts, KUBE_VERSIONS[0], strict=True)
    sts = json.loads(json.dumps(of_kind(render(), "StatefulSet")[0]))
    sts["spec"]["replica"] = 3  # unknown field
    with pytest.raises(kubernetes_validate.ValidationError):
        kubernetes_validate.validate(sts, KUBE_VERSIONS[0], strict=True)


@pytest.mark.parametrize(
    ("values", "message"),
    [
        ({"partitions": 0}, "/partitions"),
        ({"strata": "two"}, "/strata"),
        ({"topics": {"mode": "cron"}}, "/topics/mode"),
        ({"program": {"files": {"../etc/passwd": "x"}}}, "../etc/passwd"),
        ({"partitionFrom": "random"}, "/partitionFrom"),
        ({"metrics": {"port": 70000}}, "/metrics/port"),
        ({"topicPrefix": "a b"}, "/topicPrefix"),
        ({"program": {"dialect": "prolog"}}, "/program/dialect"),
        ({"layout": "pipeline"}, "/layout"),
        ({"window": "10"}, "/window"),
        ({"window": 0}, "/window"),
        ({"step": 1.5}, "/step"),
    ],
)
def test_schema_rejects_bad_values(values: dict, message: str) -> None:
    with helm.Chart.load(CHART) as chart, pytest.raises(helm.HelmValuesError, match=re.escape(message)):
        chart.render(values, name=RELEASE, namespace=NAMESPACE)


@pytest.mark.parametrize(
    ("values", "message"),
    [
        ({"kafka": {"sasl": {"enabled": True, "username": "u"}}}, "kafka.sasl.password is required"),
        ({"kafka": {"config": {"sasl.password": "hunter2"}}}, "looks like a credential"),
        ({"kafka": {"bootstrap": ""}}, "bootstrap"),
    ],
)
def test_render_refuses_incomplete_kafka_settings(values: dict, message: str) -> None:
    with helm.Chart.load(CHART) as chart, pytest.raises(helm.HelmError, match=message):
        chart.render(values, name=RELEASE, namespace=NAMESPACE)


# ---------------------------------------------------------------------------
# The fleet's shape


@pytest.mark.parametrize("variant", sorted(VARIANTS))
def test_one_reasoner_statefulset_per_stratum_with_a_pod_per_partition(variant: str) -> None:
    values = VARIANTS[variant]
    docs = render(values)
    merged = _merged(values)
    strata, partitions = merged["strata"], merged["partitions"]
    sets = of_kind(docs, "StatefulSet")
    reasoners = [s for s in sets if s["metadata"]["labels"]["app.kubernetes.io/component"] == "reasoner"]
    assert len(reasoners) == strata
    assert sorted(flag(service_args(s), "--stratum") for s in reasoners) == [str(k) for k in range(1, strata + 1)]
    assert sorted(s["metadata"]["name"] for s in sets) == sorted(
        [f"{FULL}-grounding", f"{FULL}-output"] + [f"{FULL}-reasoner-{k}" for k in range(1, strata + 1)]
    )
    for s in sets:
        assert s["spec"]["replicas"] == partitions
        args = service_args(s)
        assert args[:2] == ["service", s["metadata"]["labels"]["app.kubernetes.io/component"]]
        assert flag(args, "--partitions") == str(partitions)
        assert flag(args, "--input-partitions") == str(merged["inputPartitions"])
        assert flag(args, "--topic-prefix") == "chronolog"
        assert flag(args, "--partition") == "0"
        assert flag(args, "--state-dir") == "/var/lib/chronolog"
        # the governing headless service exists
        headless = named(docs, "Service", s["spec"]["serviceName"])
        assert headless["spec"]["clusterIP"] == "None"
    (ingest,) = of_kind(docs, "Deployment")
    assert ingest["spec"]["replicas"] == 1
    assert service_args(ingest)[:2] == ["service", "ingest"]
    assert "--partition" not in service_args(ingest)
    assert flag(service_args(ingest), "--partitions") == str(partitions)
    assert flag(service_args(ingest), "--input-partitions") == str(merged["inputPartitions"])


def test_topic_prefix_and_dialect_reach_every_chronolog_command() -> None:
    docs = render({"topicPrefix": "team-a.traffic", "program": {"dialect": "lars"}})
    lines = [service_args(d) for d in service_workloads(docs)]
    lines += [c["args"] for d in docs if d["kind"] in WORKLOAD_KINDS for c in _all_containers(d) if c["name"] == "create-topics"]
    assert len(lines) == 6
    for argv in lines:
        assert flag(argv, "--topic-prefix") == "team-a.traffic"
        assert flag(argv, "--dialect") == "lars"
    assert "team-a.traffic.answers" in notes({"topicPrefix": "team-a.traffic"})


def test_strata_scale_with_values() -> None:
    docs = render({"strata": 5, "partitions": 4})
    reasoners = [s for s in of_kind(docs, "StatefulSet") if "reasoner" in s["metadata"]["name"]]
    assert len(reasoners) == 5
    assert {s["spec"]["replicas"] for s in of_kind(docs, "StatefulSet")} == {4}
    # one metrics Service per workload, one headless Service per StatefulSet
    services = of_kind(docs, "Service")
    assert len([s for s in services if s["spec"].get("clusterIP") != "None"]) == 1 + 1 + 5 + 1
    assert len([s for s in services if s["spec"].get("clusterIP") == "None"]) == 1 + 5 + 1


def _merged(values: dict) -> dict:
    with helm.Chart.load(CHART) as chart:
        return chart.merge_values(values)


def _reasoners_and_partitioning(files: dict[str, str | None], tmp: Path, partitions: int) -> tuple[int, str]:
    """What `chronolog topology PROGRAM --partitions N` says: reasoner services, partitioning."""
    paths = []
    for name, text in sorted(files.items()):
        if text is None:
            continue
        p = tmp / name
        p.write_text(text)
        paths.append(str(p))
    topo = build_topology(lars_layout(plan_program(load_program(paths, None))), partitions)
    reasoners = [s for s in topo.services if s.name.startswith("reasoner-")]
    return len(reasoners), topo.partition_reason


def test_default_values_fit_the_bundled_program(tmp_path: Path) -> None:
    merged = _merged({})
    assert merged["program"]["files"] == {"traffic.lars": TRAFFIC.read_text()}
    strata, reason = _reasoners_and_partitioning(merged["program"]["files"], tmp_path, merged["partitions"])
    assert merged["strata"] == strata
    # traffic.lars has a tuple window: it cannot be partitioned, so the default is 1
    assert reason.startswith("one partition") and merged["partitions"] == 1


def test_ci_values_fit_their_program(tmp_path: Path) -> None:
    merged = _merged(ci_values())
    assert list(merged["program"]["files"]) == ["sensors.lars"]  # traffic.lars: null removed it
    strata, reason = _reasoners_and_partitioning(merged["program"]["files"], tmp_path, merged["partitions"])
    assert merged["strata"] == strata == 2
    assert reason.startswith("by key") and f"({merged['partitions']} partitions)" in reason


def _topology_services(files: dict[str, str | None], tmp: Path, partitions: int, input_partitions: int,
                       chain: bool) -> dict[str, list[str]]:
    """service name -> its `chronolog service ...` words, as the CLI `chronolog topology PROGRAM
    --partitions N [--chain]` prints them."""
    paths = []
    for name, text in sorted(files.items()):
        if text is not None:
            (tmp / name).write_text(text)
            paths.append(str(tmp / name))
    argv = [sys.executable, "-m", "chronolog", "topology", *paths, "--partitions", str(partitions),
            "--input-partitions", str(input_partitions)] + (["--chain"] if chain else [])
    res = subprocess.run(argv, capture_output=True, text=True, timeout=120, check=False)
    assert res.returncode == 0, res.stderr
    found = re.findall(r"^  ([\w-]+): `chronolog (service [^`]*)`$", res.stdout, re.MULTILINE)
    assert found, res.stdout
    return {name: command.split() for name, command in found}


@pytest.mark.parametrize("variant", sorted(ALL_VARIANTS))
def test_workloads_are_the_services_of_chronolog_topology(variant: str, tmp_path: Path) -> None:
    """Each layout renders exactly the services `chronolog topology [--chain]` lists for the program and
    partition count: one workload per service, running its command, one pod per partition."""
    values = ALL_VARIANTS[variant]
    merged = _merged(values)
    chain = merged["layout"] == "chain"
    partitions = merged["partitions"]
    want = _topology_services(merged["program"]["files"], tmp_path, partitions, merged["inputPartitions"], chain)
    docs = render(values)
    got = {}
    for doc in service_workloads(docs):
        args = service_args(doc)
        name = doc["metadata"]["name"].removeprefix(f"{FULL}-")
        got[name] = args[:2] + (["--stratum", flag(args, "--stratum")] if "--stratum" in args else [])
        assert flag(args, "--partitions") == str(partitions)
        assert flag(args, "--input-partitions") == str(merged["inputPartitions"])
        if name == "ingest":  # one instance reads every input partition
            assert doc["kind"] == "Deployment" and doc["spec"]["replicas"] == 1
            assert "--partition" not in args
        else:
            assert doc["kind"] == "StatefulSet" and doc["spec"]["replicas"] == partitions
            assert flag(args, "--partition") == "0"
    assert got == want
    if chain:
        assert set(want) == ({"chain"} if partitions == 1 else {"ingest", "chain"})


@pytest.mark.parametrize("variant", sorted(CHAIN_VARIANTS))
def test_chain_layout_creates_the_chained_topics(variant: str) -> None:
    values = CHAIN_VARIANTS[variant]
    docs = render(values)
    creates = [c["args"] for d in docs if d["kind"] in WORKLOAD_KINDS for c in _all_containers(d) if c["name"] == "create-topics"]
    assert creates
    for args in creates:
        assert args[0] == "create-topics" and "--chain" in args
    # the per-stratum default does not pass it
    for d in render():
        for c in _all_containers(d) if d["kind"] in WORKLOAD_KINDS else []:
            assert "--chain" not in c.get("args", [])
    (chain,) = [s for s in of_kind(docs, "StatefulSet")]
    assert chain["metadata"]["name"] == f"{FULL}-chain"
    assert chain["metadata"]["labels"]["app.kubernetes.io/component"] == "chain"
    assert main_container(chain)["name"] == "chain"
    # the chain's own resources and extraArgs
    assert main_container(chain)["resources"] == _merged(values)["chain"]["resources"]
    extra = render({**values, "chain": {"extraArgs": ["--idle-flush", "0.25"]}})
    (chain,) = of_kind(extra, "StatefulSet")
    assert main_container(chain)["args"][-2:] == ["--idle-flush", "0.25"]


def test_chain_layout_keeps_state_per_partition_and_is_scraped() -> None:
    docs = render(CHAIN_VARIANTS["chain-3-sasl-tls"])
    (chain,) = of_kind(docs, "StatefulSet")
    (claim,) = chain["spec"]["volumeClaimTemplates"]
    assert claim["metadata"]["name"] == "state" and claim["spec"]["resources"]["requests"]["storage"] == "5Gi"
    assert {"name": "state", "mountPath": "/var/lib/chronolog"} in main_container(chain)["volumeMounts"]
    assert chain["spec"]["persistentVolumeClaimRetentionPolicy"] == {"whenDeleted": "Retain", "whenScaled": "Retain"}
    (ingest,) = of_kind(docs, "Deployment")
    assert "emptyDir" in {v["name"]: v for v in pod_spec(ingest)["volumes"]}["state"]
    (sm,) = of_kind(docs, "ServiceMonitor")
    sel = sm["spec"]["selector"]["matchLabels"].items()
    scraped = sorted(s["metadata"]["name"] for s in of_kind(docs, "Service") if sel <= s["metadata"]["labels"].items())
    assert scraped == [f"{FULL}-chain", f"{FULL}-ingest"]
    # `helm test` checks every pod: ingest and the three chain pods
    (pod,) = of_kind(docs, "Pod")
    urls = main_container(pod)["args"][1:]
    assert sorted(urls) == sorted(
        [f"http://{FULL}-ingest:9400/metrics"]
        + [f"http://{FULL}-chain-{p}.{FULL}-chain-headless:9400/metrics" for p in range(3)]
    )
    text = notes(CHAIN_VARIANTS["chain-3-sasl-tls"])
    assert f"statefulset/{FULL}-chain" in text and f"deployment/{FULL}-ingest" in text
    assert f"svc/{FULL}-chain " in text and "-output" not in text and "reasoner" not in text
    # one partition: the chain alone, no ingest Deployment or Service
    docs = render(CHAIN_VARIANTS["chain-1"])
    assert of_kind(docs, "Deployment") == []
    assert sorted(s["metadata"]["name"] for s in of_kind(docs, "Service")) == [f"{FULL}-chain", f"{FULL}-chain-headless"]
    assert "ingest" not in notes(CHAIN_VARIANTS["chain-1"])


def test_chain_layout_partition_from_the_host_name(tmp_path: Path) -> None:
    fake = tmp_path / "chronolog"
    fake.write_text('#!/bin/sh\nfor a in "$@"; do printf "%s\\n" "$a"; done\n')
    fake.chmod(0o755)
    (chain,) = of_kind(render(CHAIN_VARIANTS["chain-3-hostname-init-existing-secret"]), "StatefulSet")
    c = main_container(chain)
    env = {"PATH": f"{tmp_path}:{os.environ['PATH']}", "HOSTNAME": f"{FULL}-chain-2"}
    argv = subprocess.run([*c["command"], *c["args"]], env=env, capture_output=True, text=True, check=True).stdout.splitlines()
    assert argv[:2] == ["service", "chain"] and argv[-2:] == ["--partition", "2"]


# ---------------------------------------------------------------------------
# Security, metrics and probes


def _all_containers(doc: dict) -> list[dict]:
    spec = pod_spec(doc)
    return spec.get("initContainers", []) + spec["containers"]


@pytest.mark.parametrize("variant", sorted(ALL_VARIANTS))
def test_every_container_runs_as_non_root_with_a_locked_down_context(variant: str) -> None:
    docs = render(ALL_VARIANTS[variant])
    workloads = [d for d in docs if d["kind"] in WORKLOAD_KINDS]
    # ingest, grounding, 2 reasoners, output, test pod (+ Job); chain (+ ingest), test pod (+ Job)
    assert len(workloads) >= (3 if variant.startswith("chain") else 6)
    for doc in workloads:
        spec = pod_spec(doc)
        psc = spec.get("securityContext", {})
        assert spec["automountServiceAccountToken"] is False
        for c in _all_containers(doc):
            sc = c["securityContext"]
            where = f"{doc['kind']}/{doc['metadata']['name']}/{c['name']}"
            assert sc.get("runAsNonRoot", psc.get("runAsNonRoot")) is True, where
            assert sc.get("runAsUser", psc.get("runAsUser", 1)) != 0, where
            assert sc["readOnlyRootFilesystem"] is True, where
            assert sc["allowPrivilegeEscalation"] is False, where
            assert sc["capabilities"]["drop"] == ["ALL"] and not sc["capabilities"].get("add"), where
            seccomp = sc.get("seccompProfile", psc.get("seccompProfile"))
            assert seccomp == {"type": "RuntimeDefault"}, where
            # the root file system is read-only: /tmp is a volume
            assert any(m["mountPath"] == "/tmp" for m in c.get("volumeMounts", [])) or doc["kind"] == "Pod", where


@pytest.mark.parametrize("variant", sorted(ALL_VARIANTS))
def test_service_containers_expose_metrics_and_are_probed_on_them(variant: str) -> None:
    docs = render(ALL_VARIANTS[variant])
    for doc in service_workloads(docs):
        c = main_container(doc)
        where = doc["metadata"]["name"]
        assert c["ports"] == [{"name": "metrics", "containerPort": 9400, "protocol": "TCP"}], where
        assert flag(service_args(doc), "--metrics-port") == "9400"
        for probe in ("livenessProbe", "readinessProbe", "startupProbe"):
            assert c[probe]["httpGet"] == {"path": "/metrics", "port": "metrics"}, (where, probe)
        annotations = doc["spec"]["template"]["metadata"]["annotations"]
        assert annotations["prometheus.io/scrape"] == "true"
        assert annotations["prometheus.io/port"] == "9400"
        assert annotations["prometheus.io/path"] == "/metrics"


@pytest.mark.parametrize("variant", sorted(ALL_VARIANTS))
def test_each_workload_has_a_metrics_service_that_selects_exactly_its_pods(variant: str) -> None:
    docs = render(ALL_VARIANTS[variant])
    workloads = service_workloads(docs)
    metrics_services = [s for s in of_kind(docs, "Service") if s["metadata"]["labels"].get("chronolog.io/metrics") == "true"]
    assert len(metrics_services) == len(workloads)
    for svc in metrics_services:
        assert svc["spec"]["ports"] == [{"name": "metrics", "port": 9400, "targetPort": "metrics", "protocol": "TCP"}]
        sel = svc["spec"]["selector"].items()
        matched = [w for w in workloads if sel <= w["spec"]["template"]["metadata"]["labels"].items()]
        assert len(matched) == 1, svc["metadata"]["name"]
        assert matched[0]["metadata"]["name"] == svc["metadata"]["name"]
        # and the workload's own selector matches its template (no overlap between strata)
        w = matched[0]
        assert w["spec"]["selector"]["matchLabels"].items() <= w["spec"]["template"]["metadata"]["labels"].items()
        others = [o for o in workloads if o is not w]
        assert not any(
            w["spec"]["selector"]["matchLabels"].items() <= o["spec"]["template"]["metadata"]["labels"].items() for o in others
        )


def test_service_monitor_scrapes_every_metrics_service_once() -> None:
    docs = render(ci_values())
    (sm,) = of_kind(docs, "ServiceMonitor")
    assert sm["apiVersion"] == "monitoring.coreos.com/v1"
    assert sm["metadata"]["labels"]["release"] == "prometheus"
    assert sm["spec"]["namespaceSelector"] == {"matchNames": [NAMESPACE]}
    (ep,) = sm["spec"]["endpoints"]
    assert ep["port"] == "metrics" and ep["path"] == "/metrics"
    assert re.fullmatch(r"\d+[smh]", ep["interval"])
    sel = sm["spec"]["selector"]["matchLabels"].items()
    selected = [s for s in of_kind(docs, "Service") if sel <= s["metadata"]["labels"].items()]
    # one per workload; the headless services are not scraped twice
    assert sorted(s["metadata"]["name"] for s in selected) == sorted(w["metadata"]["name"] for w in service_workloads(docs))
    assert all(any(p["name"] == "metrics" for p in s["spec"]["ports"]) for s in selected)
    assert of_kind(render(), "ServiceMonitor") == []  # off by default


# ---------------------------------------------------------------------------
# Program, Kafka configuration and secrets


@pytest.mark.parametrize("variant", sorted(ALL_VARIANTS))
def test_program_configmap_holds_the_program_and_every_service_reads_it(variant: str) -> None:
    values = ALL_VARIANTS[variant]
    files = {k: v for k, v in _merged(values)["program"]["files"].items() if v is not None}
    docs = render(values)
    cm = named(docs, "ConfigMap", f"{FULL}-program")
    assert cm["data"] == files
    if variant == "default":
        assert cm["data"]["traffic.lars"] == TRAFFIC.read_text()
    for doc in service_workloads(docs):
        args = service_args(doc)
        assert [a for a in args if a.startswith("/etc/chronolog/program/")] == [
            f"/etc/chronolog/program/{n}" for n in sorted(files)
        ]
        volumes = {v["name"]: v for v in pod_spec(doc)["volumes"]}
        assert volumes["program"]["configMap"]["name"] == cm["metadata"]["name"]
        mount = [m for m in main_container(doc)["volumeMounts"] if m["name"] == "program"]
        assert mount == [{"name": "program", "mountPath": "/etc/chronolog/program", "readOnly": True}]


def test_changing_the_program_rolls_the_pods() -> None:
    a = render()
    b = render({"program": {"files": {"traffic.lars": TRAFFIC.read_text() + "% changed\n"}}})
    for x, y in zip(service_workloads(a), service_workloads(b), strict=True):
        ax = x["spec"]["template"]["metadata"]["annotations"]["checksum/program"]
        ay = y["spec"]["template"]["metadata"]["annotations"]["checksum/program"]
        assert ax != ay


def _kafka_properties(docs: list[dict]) -> dict[str, str]:
    text = named(docs, "ConfigMap", f"{FULL}-kafka")["data"]["client.properties"]
    return dict(line.split("=", 1) for line in text.splitlines() if line and not line.startswith("#"))


def test_kafka_client_config_follows_security_values() -> None:
    assert _kafka_properties(render()) == {"security.protocol": "PLAINTEXT"}
    props = _kafka_properties(render(ci_values()))
    assert props == {
        "security.protocol": "SASL_SSL",
        "sasl.mechanism": "SCRAM-SHA-512",
        "ssl.ca.location": "/etc/chronolog/kafka/ca/ca.crt",
        "ssl.certificate.location": "/etc/chronolog/kafka/client/tls.crt",
        "ssl.key.location": "/etc/chronolog/kafka/client/tls.key",
        "client.rack": "zone-a",
    }
    assert _kafka_properties(render({"kafka": {"tls": {"enabled": True}}})) == {"security.protocol": "SSL"}
    docs = render(ci_values())
    for doc in service_workloads(docs):
        args = service_args(doc)
        assert flag(args, "--bootstrap") == ci_values()["kafka"]["bootstrap"]
        assert flag(args, "--kafka-config") == "/etc/chronolog/kafka/client.properties"
        mounts = {m["mountPath"]: m["name"] for m in main_container(doc)["volumeMounts"]}
        volumes = {v["name"]: v for v in pod_spec(doc)["volumes"]}
        assert volumes[mounts["/etc/chronolog/kafka/ca"]]["secret"]["secretName"] == "kafka-cluster-ca"
        client = volumes[mounts["/etc/chronolog/kafka/client"]]["secret"]
        assert client["secretName"] == "chronolog-client-tls"
        # the key is readable by the pod's group (fsGroup), by nobody else
        assert client["defaultMode"] & stat.S_IRWXO == 0 and client["defaultMode"] & stat.S_IRGRP


def _env(container: dict) -> dict[str, dict]:
    return {e["name"]: e for e in container.get("env", [])}


def test_sasl_password_comes_from_a_secret_and_nowhere_else() -> None:
    values = ci_values()
    password = values["kafka"]["sasl"]["password"]
    docs = render(values)
    secrets = {s["metadata"]["name"]: s for s in of_kind(docs, "Secret")}
    holders = []
    for doc in docs:
        blob = json.dumps(doc)
        if doc["kind"] == "Secret":
            decoded = {k: base64.b64decode(v).decode() for k, v in doc.get("data", {}).items()}
            if decoded.get("sasl-password") == password:
                holders.append(doc["metadata"]["name"])
            continue
        assert password not in blob, f"{doc['kind']}/{doc['metadata']['name']} has the password inline"
        assert base64.b64encode(password.encode()).decode() not in blob
    # the release's Secret and the pre-install hook's copy
    assert sorted(holders) == sorted([f"{FULL}-kafka", f"{FULL}-create-topics-kafka"])
    pods = [d for d in docs if d["kind"] in ("Deployment", "StatefulSet", "Job")]
    assert len(pods) == 6
    for doc in pods:
        for c in pod_spec(doc)["containers"]:
            env = _env(c)
            for var, key in (
                ("CHRONOLOG_KAFKA_SASL_PASSWORD", "sasl-password"),
                ("CHRONOLOG_KAFKA_SASL_USERNAME", "sasl-username"),
            ):
                ref = env[var]["valueFrom"]["secretKeyRef"]
                assert "value" not in env[var]
                assert ref["key"] == key
                assert ref["name"] in secrets and key in secrets[ref["name"]]["data"]


def test_existing_secret_is_referenced_and_no_secret_is_rendered() -> None:
    docs = render(VARIANTS["hostname-init-existing-secret"])
    assert of_kind(docs, "Secret") == []
    assert ci_values()["kafka"]["sasl"]["password"] not in json.dumps(docs)
    for doc in service_workloads(docs):
        for c in _all_containers(doc):
            ref = _env(c)["CHRONOLOG_KAFKA_SASL_PASSWORD"]["valueFrom"]["secretKeyRef"]
            assert ref == {"name": "team-kafka-user", "key": "password"}
            assert _env(c)["CHRONOLOG_KAFKA_SASL_USERNAME"]["valueFrom"]["secretKeyRef"] == {
                "name": "team-kafka-user",
                "key": "user",
            }


def test_no_sasl_no_credentials() -> None:
    docs = render()
    assert of_kind(docs, "Secret") == []
    for doc in service_workloads(docs):
        assert not any(n.startswith("CHRONOLOG_KAFKA_SASL") for n in _env(main_container(doc)))


# ---------------------------------------------------------------------------
# Topics and persistence


def test_topics_are_created_by_a_pre_install_hook_job_before_the_services() -> None:
    values = ci_values()
    docs = render(values)
    (job,) = of_kind(docs, "Job")
    ann = job["metadata"]["annotations"]
    assert set(ann["helm.sh/hook"].split(",")) == {"pre-install", "pre-upgrade"}
    (c,) = pod_spec(job)["containers"]
    assert c["command"] == ["chronolog"]
    args = c["args"]
    assert args[:2] == ["create-topics", "/etc/chronolog/program/sensors.lars"]
    assert flag(args, "--partitions") == "3" and flag(args, "--input-partitions") == "2"
    assert flag(args, "--bootstrap") == values["kafka"]["bootstrap"]
    # what the Job mounts exists as hooks that are created first (lower weight)
    weight = int(ann["helm.sh/hook-weight"])
    needed = [("ConfigMap", v["configMap"]["name"]) for v in pod_spec(job)["volumes"] if "configMap" in v]
    needed += [("Secret", e["valueFrom"]["secretKeyRef"]["name"]) for e in c["env"] if "valueFrom" in e]
    assert len(needed) == 4
    for kind, name in needed:
        dep = named(docs, kind, name)
        dann = dep["metadata"]["annotations"]
        assert "pre-install" in dann["helm.sh/hook"] and int(dann["helm.sh/hook-weight"]) < weight
        assert "hook-succeeded" in dann["helm.sh/hook-delete-policy"]
    assert (
        named(docs, "ConfigMap", f"{FULL}-create-topics-program")["data"] == named(docs, "ConfigMap", f"{FULL}-program")["data"]
    )
    assert named(docs, "ConfigMap", f"{FULL}-create-topics-kafka")["data"] == named(docs, "ConfigMap", f"{FULL}-kafka")["data"]
    # no initContainers in hook mode
    assert not any(pod_spec(d).get("initContainers") for d in service_workloads(docs))


def test_topics_by_init_container_instead() -> None:
    docs = render(VARIANTS["hostname-init-existing-secret"])
    assert of_kind(docs, "Job") == []
    for doc in service_workloads(docs):
        (init,) = pod_spec(doc)["initContainers"]
        assert init["args"][0] == "create-topics"
        assert flag(init["args"], "--partitions") == "3"
    assert of_kind(render({"topics": {"create": False}}), "Job") == []


def test_persistence_gives_each_partition_a_volume_claim() -> None:
    docs = render(ci_values())
    for s in of_kind(docs, "StatefulSet"):
        (claim,) = s["spec"]["volumeClaimTemplates"]
        assert claim["metadata"]["name"] == "state"
        assert claim["spec"]["resources"]["requests"]["storage"] == "5Gi"
        assert claim["spec"]["storageClassName"] == "standard"
        assert "state" not in {v["name"] for v in pod_spec(s)["volumes"]}
        assert {"name": "state", "mountPath": "/var/lib/chronolog"} in main_container(s)["volumeMounts"]
    for s in of_kind(render(), "StatefulSet"):
        assert "volumeClaimTemplates" not in s["spec"]
        assert "emptyDir" in {v["name"]: v for v in pod_spec(s)["volumes"]}["state"]
    # ingest keeps its scratch state in an emptyDir either way
    (ingest,) = of_kind(docs, "Deployment")
    assert "emptyDir" in {v["name"]: v for v in pod_spec(ingest)["volumes"]}["state"]


def test_tuning_flags_reach_every_service() -> None:
    docs = render(ci_values())
    for doc in service_workloads(docs):
        args = service_args(doc)
        assert flag(args, "--idle-flush") == "1.5" and flag(args, "--retention") == "100"
    for doc in service_workloads(render()):
        args = service_args(doc)
        assert "--idle-flush" not in args and "--retention" not in args


CHOICE = "a(X) :- p(X) [2], not b(X).\nb(X) :- p(X) [2], not a(X).\n"  # not stratified: --mode, --seed apply


def test_evaluation_options_from_topology_reach_every_service(tmp_path: Path) -> None:
    """`chronolog topology --format helm-values --mode --seed --mark-no-answer-set`: the chart renders
    valid manifests whose every service command line is parsed by `chronolog service` to those options
    and, for the reasoner, to the plan `chronolog up` would give it."""
    from chronolog.cli.fleet import service_config
    from chronolog.cli.main import build_parser
    from chronolog.runtime.fleet.config import make_stage

    prog = tmp_path / "choice.lars"
    prog.write_text(CHOICE)
    res = subprocess.run([sys.executable, "-m", "chronolog", "topology", str(prog), "--format", "helm-values",
                          "--mode", "oneshot", "--seed", "3", "--mark-no-answer-set"],
                         capture_output=True, text=True, timeout=120, check=False)
    assert res.returncode == 0, res.stderr
    docs = render(yaml.safe_load(res.stdout))
    for doc in docs:
        if doc["kind"] != "ServiceMonitor":
            kubernetes_validate.validate(doc, KUBE_VERSIONS[0], strict=True)
    workloads = service_workloads(docs)
    assert len(workloads) == 4  # ingest, grounding, reasoner-1, output
    for doc in workloads:
        argv = [str(prog) if a == "/etc/chronolog/program/choice.lars" else a for a in service_args(doc)]
        args = build_parser().parse_args(argv)
        assert (args.mode, args.seed, args.mark_no_answer_set) == ("oneshot", 3, True), doc["metadata"]["name"]
        args.kafka_config = None  # (a file the chart mounts into the pod)
        stage = make_stage(service_config(args))
        if args.service == "reasoner":
            assert (stage.reasoner.plan.solver, stage.reasoner.plan.seed) == ("oneshot", 3)
    for doc in service_workloads(render()):  # the chart's defaults: none of them
        assert not {"--mode", "--seed", "--mark-no-answer-set"} & set(service_args(doc))


RTEC = ("initiatedAt(open(D)=true, T) :- happensAt(opened(D), T).\n"
        "terminatedAt(open(D)=true, T) :- happensAt(closed(D), T).\n"
        "door(d1).\ngrounding(open(D)=true) :- door(D).\n")


def test_window_and_step_from_topology_reach_the_rtec_evaluator(tmp_path: Path) -> None:
    """`chronolog topology --format helm-values --window --step`: the chart renders valid manifests whose
    service command line `chronolog service` parses to those options and to the windowed evaluator
    `chronolog run --window --step` makes of the program."""
    from chronolog.cli.fleet import service_config
    from chronolog.cli.main import build_parser, evaluator_for
    from chronolog.runtime.fleet.config import make_stage

    prog = tmp_path / "doors.prolog"
    prog.write_text(RTEC)
    res = subprocess.run([sys.executable, "-m", "chronolog", "topology", str(prog), "--format", "helm-values",
                          "--window", "10", "--step", "5"], capture_output=True, text=True, timeout=120, check=False)
    assert res.returncode == 0, res.stderr
    docs = render(yaml.safe_load(res.stdout))
    for doc in docs:
        if doc["kind"] != "ServiceMonitor":
            kubernetes_validate.validate(doc, KUBE_VERSIONS[0], strict=True)
    (workload,) = service_workloads(docs)  # RTEC: one chain service
    argv = [str(prog) if a == "/etc/chronolog/program/doors.prolog" else a for a in service_args(workload)]
    args = build_parser().parse_args(argv)
    assert (args.service, args.window, args.step) == ("chain", 10, 5)
    args.kafka_config = None  # (a file the chart mounts into the pod)
    stage = make_stage(service_config(args))
    run = evaluator_for(build_parser(light=True).parse_args(
        ["run", str(prog), "--input", "-", "--window", "10", "--step", "5"]), lambda message: None)[3]
    assert type(stage.evaluator) is type(run) and type(run).__name__ == "WindowedRtecEvaluator"
    assert (stage.evaluator.window, stage.evaluator.step) == (run.window, run.step) == (10, 5)
    for doc in service_workloads(render()):  # the chart's defaults: neither
        assert not {"--window", "--step"} & set(service_args(doc))


# ---------------------------------------------------------------------------
# Partition from the pod ordinal


def test_partition_from_the_pod_index_label() -> None:
    for s in of_kind(render(), "StatefulSet"):
        c = main_container(s)
        assert flag(c["args"], "--partition") == "$(CHRONOLOG_POD_INDEX)"
        ref = _env(c)["CHRONOLOG_POD_INDEX"]["valueFrom"]["fieldRef"]
        assert ref == {"fieldPath": "metadata.labels['apps.kubernetes.io/pod-index']"}


def test_partition_from_the_host_name_by_the_shell_wrapper(tmp_path: Path) -> None:
    """Run the rendered wrapper under /bin/sh with a stand-in `chronolog`."""
    fake = tmp_path / "chronolog"
    fake.write_text('#!/bin/sh\nfor a in "$@"; do printf "%s\\n" "$a"; done\n')
    fake.chmod(0o755)
    docs = render(VARIANTS["hostname-init-existing-secret"])
    (s,) = [s for s in of_kind(docs, "StatefulSet") if s["metadata"]["name"] == f"{FULL}-reasoner-2"]
    c = main_container(s)
    env = {"PATH": f"{tmp_path}:{os.environ['PATH']}", "HOSTNAME": f"{FULL}-reasoner-2-11"}
    out = subprocess.run([*c["command"], *c["args"]], env=env, capture_output=True, text=True, check=True).stdout
    argv = out.splitlines()
    assert argv[:2] == ["service", "reasoner"]
    assert argv[-2:] == ["--partition", "11"]
    assert flag(argv, "--stratum") == "2"
    # the ingest Deployment has no ordinal and keeps the plain command
    (ingest,) = of_kind(docs, "Deployment")
    assert main_container(ingest)["command"] == ["chronolog"]


# ---------------------------------------------------------------------------
# Names and Grafana


def test_names_fit_kubernetes_limits_for_the_longest_release_name() -> None:
    name = "r" * 53  # Helm's maximum release name
    helm.validate_release_name(name)
    docs = render({"strata": 12}, name=name)
    for doc in docs:
        assert len(doc["metadata"]["name"]) <= 63, doc["metadata"]["name"]
    for s in of_kind(docs, "StatefulSet"):
        # pods get "-<ordinal>"; the controller-revision-hash label "<name>-<10 chars>"
        assert len(s["metadata"]["name"]) <= 52
    assert len({(d["kind"], d["metadata"]["name"]) for d in docs}) == len(docs)
    for kube in KUBE_VERSIONS[:1]:
        for doc in docs:
            if doc["kind"] != "ServiceMonitor":
                kubernetes_validate.validate(doc, kube, strict=True)


_METRIC = re.compile(r"\b(chronolog_[a-z_]+)")


def _series_names() -> set[str]:
    names = set()
    for name, (kind, _) in METRICS.items():
        if kind == "histogram":
            names |= {f"{name}_bucket", f"{name}_sum", f"{name}_count"}
        else:
            names.add(name)
    return names


def test_grafana_dashboard_configmap() -> None:
    docs = render(ci_values())
    cm = named(docs, "ConfigMap", f"{FULL}-dashboard")
    assert cm["metadata"]["labels"]["grafana_dashboard"] == "1"
    assert cm["metadata"]["annotations"] == {"grafana_folder": "chronolog"}
    dash = json.loads(cm["data"]["chronolog.json"])
    assert dash == json.loads((CHART / "dashboards" / "chronolog.json").read_text())
    exprs = [t["expr"] for p in dash["panels"] for t in p.get("targets", [])]
    used = {m for e in exprs for m in _METRIC.findall(e)}
    assert used <= _series_names(), used - _series_names()
    # every metric the services expose is on the dashboard
    assert {m.removesuffix("_bucket") for m in used} >= set(METRICS)
    assert not [
        c
        for c in of_kind(render({"metrics": {"grafanaDashboard": {"enabled": False}}}), "ConfigMap")
        if c["metadata"]["name"].endswith("-dashboard")
    ]


@pytest.mark.skipif(not OPS_DASHBOARD.exists(), reason="ops/grafana/chronolog.json not generated yet")
def test_chart_dashboard_is_the_ops_dashboard() -> None:
    """Helm can only read files inside the chart: the chart keeps a copy of
    ops/grafana/chronolog.json (cp ops/grafana/chronolog.json helm/chronolog/dashboards/)."""
    assert json.loads((CHART / "dashboards" / "chronolog.json").read_text()) == json.loads(OPS_DASHBOARD.read_text())


def test_notes_name_the_workloads() -> None:
    text = notes(ci_values())
    for w in ("ingest", "grounding", "reasoner-1", "reasoner-2", "output"):
        assert f"{FULL}-{w}" in text
    assert "SASL_SSL" in text and "ServiceMonitor" in text
    assert ci_values()["kafka"]["sasl"]["password"] not in text


# ---------------------------------------------------------------------------
# The rendered command lines against the real CLI


def _cli_has(*commands: str) -> bool:
    from chronolog.cli.main import build_parser

    parser = build_parser()
    sub = next(a for a in parser._actions if a.__class__.__name__ == "_SubParsersAction")
    return all(c in sub.choices for c in commands)


@pytest.mark.skipif(not _cli_has("service", "create-topics"), reason="fleet CLI (chronolog service/create-topics) not merged yet")
@pytest.mark.parametrize("variant", sorted(ALL_VARIANTS))
def test_rendered_command_lines_parse_with_the_chronolog_cli(variant: str) -> None:
    from chronolog.cli.main import build_parser

    docs = render(ALL_VARIANTS[variant])
    lines = [service_args(d) for d in service_workloads(docs)]
    lines += [c["args"] for d in docs if d["kind"] in WORKLOAD_KINDS for c in _all_containers(d) if c["name"] == "create-topics"]
    assert len(lines) >= (2 if variant.startswith("chain") else 6)
    for argv in lines:
        build_parser().parse_args(argv)  # SystemExit(2) on an unknown or malformed flag


def test_readme_example_values_render_and_validate() -> None:
    text = (CHART / "README.md").read_text()
    (block,) = re.findall(r"```yaml\n(# my-values.yaml\n.*?)```", text, re.DOTALL)
    values = yaml.safe_load(block)
    docs = render(values)
    assert len([s for s in of_kind(docs, "StatefulSet") if "reasoner" in s["metadata"]["name"]]) == values["strata"]
    assert named(docs, "ConfigMap", f"{FULL}-program")["data"].keys() == {"rules.lars"}
    assert of_kind(docs, "Secret") == []  # existingSecret
    for doc in docs:
        if doc["kind"] != "ServiceMonitor":
            kubernetes_validate.validate(doc, KUBE_VERSIONS[0], strict=True)


# ---------------------------------------------------------------------------
# Changing the program of a deployment (docs/fleet/deploy.md): the page's
# steps, run as written, give a `helm upgrade` Kubernetes accepts


DEPLOY_PAGE = ROOT / "docs" / "fleet" / "deploy.md"
# The fleet of test_upgrade_fleet_e2e: a window widened and a rule added.
UPGRADE_OLD = "Q(X):-Diamondminus[0,1]P(X)\nS(X):-Q(X),R(X)\n"
UPGRADE_NEW = "Q(X):-Diamondminus[0,3]P(X)\nS(X):-Q(X),R(X)\nS(X):-P(X)\n"
# StatefulSet fields Kubernetes refuses to change: a `helm upgrade` that changes
# them fails, and a changed claim template would leave the state volumes behind.
IMMUTABLE = ("selector", "serviceName", "volumeClaimTemplates", "podManagementPolicy")


def _page_steps() -> list[list[str]]:
    """The commands of the deploy page's `helm upgrade` block, split into words."""
    section = DEPLOY_PAGE.read_text().split("## Changing the program of a deployment", 1)[1]
    blocks = re.findall(r"```\n(.*?)```", section, re.DOTALL)
    (block,) = [b for b in blocks if "helm upgrade" in b]
    return [line.split("#", 1)[0].split() for line in block.splitlines() if line.strip()]


def _helm_values(words: list[str], program: Path) -> dict:
    """``words`` (`chronolog topology new.mtl --format helm-values`), really run on ``program``."""
    argv = [str(program) if w == "new.mtl" else w for w in words[1:]]
    res = subprocess.run([sys.executable, "-m", "chronolog", *argv], capture_output=True, text=True, timeout=120,
                         check=False)
    assert res.returncode == 0, res.stderr
    return yaml.safe_load(res.stdout)


def test_the_deploy_pages_program_change_renders_an_upgrade_kubernetes_accepts(tmp_path: Path) -> None:
    topology, helm_upgrade = _page_steps()
    cut = topology.index(">")
    assert topology[:2] == ["chronolog", "topology"] and "new.mtl" in topology[:cut]
    assert helm_upgrade[:2] == ["helm", "upgrade"] and helm_upgrade[-2:] == ["-f", topology[cut + 1]]
    (tmp_path / "old.mtl").write_text(UPGRADE_OLD)
    (tmp_path / "new.mtl").write_text(UPGRADE_NEW)
    old = render(_helm_values(topology[:cut], tmp_path / "old.mtl"))
    new = render(_helm_values(topology[:cut], tmp_path / "new.mtl"))
    for kube in KUBE_VERSIONS:
        for doc in new:
            if doc["kind"] != "ServiceMonitor":
                kubernetes_validate.validate(doc, kube, strict=True)
    # The new program, and only it, is what every pod reads; the pods roll to read it.
    assert named(new, "ConfigMap", f"{FULL}-program")["data"] == {"new.mtl": UPGRADE_NEW}
    before, after = service_workloads(old), service_workloads(new)
    assert [w["metadata"]["name"] for w in before] == [w["metadata"]["name"] for w in after]
    assert len(after) == 1 and after[0]["kind"] == "StatefulSet"  # one chain service: the evaluator runs whole
    for x, y in zip(before, after, strict=True):
        assert {k: x["spec"].get(k) for k in IMMUTABLE} == {k: y["spec"].get(k) for k in IMMUTABLE}
        assert (x["spec"]["template"]["metadata"]["annotations"]["checksum/program"]
                != y["spec"]["template"]["metadata"]["annotations"]["checksum/program"])
        assert service_args(y)[:2] == ["service", "chain"] and "/etc/chronolog/program/new.mtl" in service_args(y)
    # The topics hook runs again before the upgraded pods start (a program change may add topics).
    (job,) = [d for d in new if d["kind"] == "Job" and "topics" in d["metadata"]["name"]]
    assert "pre-upgrade" in job["metadata"]["annotations"]["helm.sh/hook"]
