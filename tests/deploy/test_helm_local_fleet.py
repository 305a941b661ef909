"""The chart's pods, run as local processes against the bundled broker.

A stand-in for a cluster: the manifests Helm renders are executed the way the
kubelet would run them — ConfigMap volumes written to disk (subPath mounts
included), environment from values, Secrets and the pod-index label, ``$(VAR)``
expanded in the arguments, the hook Job first — and each pod's readiness probe
(httpGet on its ``metrics`` port) is polled.  Pods share this machine's
loopback, so each one's metrics port is moved to a free port; every other
argument is the rendered one, with mount paths pointing at the written
volumes.  The answer stream must then mean what `chronolog run` prints.
"""

from __future__ import annotations

import base64
import io
import os
import random
import re
import subprocess
import sys
import time
import urllib.request
from dataclasses import dataclass
from pathlib import Path

import helm_python as helm
import orjson
import pytest
import yaml
from meaning import meaning

from chronolog.cli.fleet import publish_file, tail_topic
from chronolog.core.events import Event
from chronolog.dialects.lars.layout import lars_layout
from chronolog.dialects.lars.parser import parse_lars
from chronolog.dialects.lars.plan import plan_program
from chronolog.runtime.embedded import run_embedded
from chronolog.runtime.fleet.broker import LocalBroker, free_port
from chronolog.runtime.fleet.topology import build_topology

pytestmark = [pytest.mark.fleet, pytest.mark.deploy]

ROOT = Path(__file__).resolve().parents[2]
CHART = ROOT / "helm" / "chronolog"
BIN = Path(sys.executable).parent

PROGRAM = """\
hot(M) :- temp(M, V) [3], V > 80.
ok(M) :- machine(M) [4], not hot(M).
"""


def events(seed: int = 3, points: int = 16) -> list[Event]:
    rng = random.Random(seed)
    out: list[Event] = []
    for t in range(points):
        for m in rng.sample(["m1", "m2", "m3", "m4", "m5"], 3):
            out.append(Event(t, "machine", (m,)))
            out.append(Event(t, "temp", (m, rng.randint(60, 100))))
        out.append(Event(t))
    return out


def expected(evs: list[Event]) -> set:
    buf = io.StringIO()
    run_embedded(parse_lars(PROGRAM), evs, buf, warn=lambda m: None)
    return meaning([orjson.loads(x) for x in buf.getvalue().splitlines()], (0, max(e.t for e in evs)))


@dataclass
class Pod:
    name: str
    argv: list[str]
    env: dict[str, str]
    probe_url: str | None
    proc: subprocess.Popen | None = None
    log: Path | None = None


def _expand(arg: str, env: dict[str, str]) -> str:
    # the kubelet's $(VAR) expansion of command and args
    return re.sub(r"\$\(([A-Za-z_][A-Za-z0-9_]*)\)", lambda m: env.get(m.group(1), m.group(0)), arg)


def kubelet(doc: dict, ordinal: int | None, objects: dict, root: Path) -> list[Pod]:
    """The processes of one pod (init containers first), ready to start."""
    spec = doc["spec"]["template"]["spec"]
    pod_name = doc["metadata"]["name"] + ("" if ordinal is None else f"-{ordinal}")
    labels = dict(doc["spec"]["template"]["metadata"]["labels"])
    if ordinal is not None:
        labels["apps.kubernetes.io/pod-index"] = str(ordinal)
    volumes = {v["name"]: v for v in spec["volumes"]}
    pods = []
    for c in spec.get("initContainers", []) + spec["containers"]:
        base = root / pod_name / c["name"]
        mounts: list[tuple[str, Path]] = []
        for m in c.get("volumeMounts", []):
            vol = volumes[m["name"]]
            host = base / m["mountPath"].lstrip("/")
            if "configMap" in vol or "secret" in vol:
                kind, ref = ("ConfigMap", vol["configMap"]["name"]) if "configMap" in vol else ("Secret", vol["secret"]["secretName"])
                data = objects[kind, ref]
                if "subPath" in m:
                    host.parent.mkdir(parents=True, exist_ok=True)
                    host.write_text(data[m["subPath"]])
                else:
                    host.mkdir(parents=True, exist_ok=True)
                    for key, text in data.items():
                        (host / key).write_text(text)
            else:
                assert "emptyDir" in vol or "persistentVolumeClaim" in vol or m["name"] == "state", vol
                host.mkdir(parents=True, exist_ok=True)
            mounts.append((m["mountPath"], host))
        mounts.sort(key=lambda x: -len(x[0]))
        env = {"PATH": f"{BIN}{os.pathsep}{os.environ['PATH']}", "HOSTNAME": pod_name, "HOME": str(base)}
        for e in c.get("env", []):
            if "value" in e:
                env[e["name"]] = e["value"]
            elif "fieldRef" in e["valueFrom"]:
                (key,) = re.fullmatch(r"metadata\.labels\['([^']+)'\]", e["valueFrom"]["fieldRef"]["fieldPath"]).groups()
                env[e["name"]] = labels[key]
            else:
                ref = e["valueFrom"]["secretKeyRef"]
                env[e["name"]] = objects["Secret", ref["name"]][ref["key"]]
        argv = [_expand(a, env) for a in c["command"] + c.get("args", [])]
        # paths inside the pod -> the written volumes
        for i, a in enumerate(argv):
            for mount, host in mounts:
                if a == mount or a.startswith(mount + "/"):
                    argv[i] = str(host) + a[len(mount) :]
                    break
        probe_url = None
        if "readinessProbe" in c:
            ports = {p["name"]: p["containerPort"] for p in c["ports"]}
            get = c["readinessProbe"]["httpGet"]
            port = ports[get["port"]] if isinstance(get["port"], str) else get["port"]
            local = free_port()
            i = argv.index("--metrics-port")
            assert argv[i + 1] == str(port)
            argv[i + 1] = str(local)
            probe_url = f"http://127.0.0.1:{local}{get['path']}"
        pods.append(Pod(f"{pod_name}/{c['name']}", argv, env, probe_url, log=base / "log"))
    return pods


def ready(url: str) -> bool:
    try:
        with urllib.request.urlopen(url, timeout=2) as resp:
            text = resp.read().decode()
    except OSError:
        return False
    up = re.findall(r"^chronolog_up\{[^}]*\} (\S+)$", text, re.MULTILINE)
    return resp.status == 200 and bool(up) and all(float(v) == 1.0 for v in up)


@pytest.mark.parametrize(
    ("layout", "partitions"),
    [("perStratum", 2), ("chain", 2), ("chain", 1)],
    ids=["per-stratum-2", "chain-2", "chain-1"],
)
def test_rendered_pods_run_the_fleet_on_a_broker(tmp_path: Path, layout: str, partitions: int) -> None:
    """The layout's pods (perStratum: ingest + a grounding, 2 reasoners and an output pod per
    partition; chain: a chain pod per partition, + ingest with more than one) answer as embedded
    mode, on the topics its create-topics Job made, which are those of `chronolog topology`."""
    evs = events()
    want = expected(evs)
    assert want
    started: list[Pod] = []
    with LocalBroker.start(log=tmp_path / "broker.log") as broker:
        values = {
            "program": {"files": {"traffic.lars": None, "machines.lars": PROGRAM}},
            "layout": layout,
            "strata": 2,
            "partitions": partitions,
            "idleFlush": 0.5,
            "kafka": {"bootstrap": broker.bootstrap, "config": {"socket.keepalive.enable": "true"}},
        }
        with helm.Chart.load(CHART) as chart:
            rendered = chart.render(values, name="local", namespace="test")
        docs = [d for k, v in rendered.items() if not k.endswith(".txt") for d in yaml.safe_load_all(v) if d]
        objects: dict = {}
        for d in docs:
            if d["kind"] == "ConfigMap":
                objects["ConfigMap", d["metadata"]["name"]] = d["data"]
            elif d["kind"] == "Secret":
                objects["Secret", d["metadata"]["name"]] = {k: base64.b64decode(v).decode() for k, v in d["data"].items()}

        # the pre-install hook: create the topics
        (job,) = [d for d in docs if d["kind"] == "Job"]
        (create,) = kubelet(job, None, objects, tmp_path / "pods")
        done = subprocess.run(create.argv, check=False, env=create.env, capture_output=True, text=True, timeout=120)
        assert done.returncode == 0, done.stderr
        assert re.search(r"\b\d+ topics present, \d+ created", done.stdout)
        from confluent_kafka.admin import AdminClient

        meta = AdminClient({"bootstrap.servers": broker.bootstrap}).list_topics(timeout=10).topics
        topology = build_topology(lars_layout(plan_program(parse_lars(PROGRAM))), partitions, chain=layout == "chain")
        assert {t: len(m.partitions) for t, m in meta.items() if not t.startswith("_")} == {
            t.name: t.partitions for t in topology.topics
        }
        assert len(meta["chronolog.facts"].partitions) == 1
        if layout == "chain":
            assert len(meta["chronolog.chain.changelog"].partitions) == partitions
        else:
            assert len(meta["chronolog.stratum.2"].partitions) == partitions

        pods: list[Pod] = []
        for d in docs:
            if d["kind"] == "Deployment":
                pods += kubelet(d, None, objects, tmp_path / "pods")
            elif d["kind"] == "StatefulSet":
                for ordinal in range(d["spec"]["replicas"]):
                    pods += kubelet(d, ordinal, objects, tmp_path / "pods")
        # a process per service of `chronolog topology` and partition (ingest: one)
        assert sorted(p.name.split("/")[1] for p in pods) == sorted(
            s.name.split("-")[0] for s in topology.services for _ in range(1 if s.name == "ingest" else partitions)
        )
        assert len(pods) == {"perStratum": 1 + 2 * (1 + 2 + 1), "chain": 1 + 2 if partitions > 1 else 1}[layout]
        try:
            for pod in pods:
                pod.log.parent.mkdir(parents=True, exist_ok=True)
                pod.proc = subprocess.Popen(pod.argv, env=pod.env, stdout=subprocess.DEVNULL, stderr=open(pod.log, "wb"))  # noqa: SIM115
                started.append(pod)
            deadline = time.monotonic() + 120
            waiting = list(pods)
            while waiting and time.monotonic() < deadline:
                for pod in list(waiting):
                    assert pod.proc.poll() is None, f"{pod.name} exited: {pod.log.read_text()[-2000:]}"
                    if ready(pod.probe_url):
                        waiting.remove(pod)
                time.sleep(0.3)
            assert not waiting, f"not ready: {[p.name for p in waiting]}"

            path = tmp_path / "in.jsonl"
            path.write_bytes(b"".join(orjson.dumps(_json(e)) + b"\n" for e in evs))
            publish_file(str(path), broker.bootstrap, "chronolog")
            got: set = set()
            deadline = time.monotonic() + 90
            while time.monotonic() < deadline:
                buf = io.StringIO()
                tail_topic(broker.bootstrap, "chronolog.answers", idle_exit=1.0, out=buf)
                got = meaning([orjson.loads(x) for x in buf.getvalue().splitlines()], (0, max(e.t for e in evs)))
                if got == want:
                    break
                time.sleep(0.5)
            assert got == want
            # the last partition's pods did work: their metrics count records
            last = partitions - 1
            pod = f"local-chronolog-{'chain' if layout == 'chain' else 'reasoner-1'}-{last}/"
            text = urllib.request.urlopen(next(p.probe_url for p in pods if p.name.startswith(pod)), timeout=5).read().decode()
            consumed = re.search(rf'^chronolog_events_in_total\{{[^}}]*partition="{last}"[^}}]*\}} (\S+)$', text, re.MULTILINE)
            assert consumed and float(consumed.group(1)) > 0
        finally:
            for pod in started:
                pod.proc.terminate()
            for pod in started:
                try:
                    pod.proc.wait(20)
                except subprocess.TimeoutExpired:
                    pod.proc.kill()
                    pod.proc.wait(5)


def _json(e: Event) -> dict:
    return {"t": e.t} if e.pred is None else {"t": e.t, "pred": e.pred, "args": list(e.args)}

