"""A real Prometheus scrapes a real fleet (`chronolog up`) running the bundled example.

Needs the `prometheus` binary (Debian package `prometheus`) and the fleet
commands `chronolog up/down/publish`; skips with "fleet not available" while
`chronolog up --help` fails.  The Prometheus loads ops/prometheus/alerts.yml,
and every query of the Grafana dashboard is run against it.
"""

from __future__ import annotations

import contextlib
import json
import os
import queue
import signal
import socket
import subprocess
import sys
import threading
import time
import urllib.parse
import urllib.request
from pathlib import Path

import pytest
import yaml

from .conftest import EXAMPLE, OPS, ROOT, chronolog, require_binary
from .promql import substitute
from .test_grafana import dashboard, expressions

pytestmark = [pytest.mark.fleet, pytest.mark.deploy]

EVENTS = EXAMPLE.with_suffix(".jsonl")


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def wait_for_line(proc: subprocess.Popen, prefix: str, timeout: float) -> list[str]:
    lines: queue.Queue = queue.Queue()

    def pump():
        for line in proc.stdout:
            lines.put(line)
        lines.put(None)

    threading.Thread(target=pump, daemon=True).start()
    seen = []
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        try:
            line = lines.get(timeout=0.5)
        except queue.Empty:
            continue
        if line is None:
            raise AssertionError(f"exited with {proc.wait()} before a {prefix!r} line: {seen}")
        seen.append(line)
        if line.startswith(prefix):
            return seen
    raise AssertionError(f"no {prefix!r} line within {timeout}s: {seen}")


class Prometheus:
    def __init__(self, base: str):
        self.base = base

    def get(self, path: str, **params) -> dict:
        url = f"{self.base}{path}?{urllib.parse.urlencode(params)}" if params else f"{self.base}{path}"
        with urllib.request.urlopen(url, timeout=10) as resp:
            return json.loads(resp.read())

    def query(self, expr: str) -> list[dict]:
        body = self.get("/api/v1/query", query=expr)
        assert body["status"] == "success", (expr, body)
        return body["data"]["result"]

    def wait_rules(self, ok, timeout: float) -> list[dict]:
        deadline = time.monotonic() + timeout
        rules: list[dict] = []
        while time.monotonic() < deadline:
            rules = [r for g in self.get("/api/v1/rules")["data"]["groups"] for r in g["rules"]]
            if ok(rules):
                return rules
            time.sleep(0.5)
        raise AssertionError(f"rules: {rules} after {timeout}s")

    def wait(self, expr: str, ok, timeout: float) -> list[dict]:
        deadline = time.monotonic() + timeout
        result: list[dict] = []
        while time.monotonic() < deadline:
            result = self.query(expr)
            if ok(result):
                return result
            time.sleep(1)
        raise AssertionError(f"{expr}: {result} after {timeout}s")


@pytest.fixture()
def fleet(tmp_path):
    yield from run_fleet(tmp_path)


@pytest.fixture()
def chain_fleet(tmp_path):
    """The chained layout (`chronolog up --chain`): the example runs as one `chain` service."""
    yield from run_fleet(tmp_path, "--chain")


def run_fleet(tmp_path, *options: str):
    probe = chronolog("up", "--help", timeout=60)
    if probe.returncode != 0:
        pytest.skip("fleet not available (`chronolog up --help` fails)")
    state = tmp_path / "fleet"
    with open(tmp_path / "up.log", "w") as log:
        up = subprocess.Popen([sys.executable, "-m", "chronolog", "up", str(EXAMPLE), "--state-dir", str(state), *options],
                              cwd=ROOT, stdout=subprocess.PIPE, stderr=log, text=True, start_new_session=True)
    ok = False
    try:
        try:
            wait_for_line(up, "ready", timeout=180)
        except AssertionError as exc:
            raise AssertionError(f"{exc}\n--- up.log:\n{(tmp_path / 'up.log').read_text()[-4000:]}") from None
        yield json.loads((state / "fleet.json").read_text(encoding="utf-8"))
        ok = True
    finally:
        try:
            down = chronolog("down", "--state-dir", str(state), timeout=120)
        except subprocess.TimeoutExpired as exc:
            down = subprocess.CompletedProcess(exc.cmd, -1, "", "`chronolog down` timed out")
        try:
            up.wait(timeout=60)
        except subprocess.TimeoutExpired:
            os.killpg(up.pid, signal.SIGKILL)  # the process group this test started
            up.wait()
        if ok:
            assert down.returncode == 0, down.stderr


@contextlib.contextmanager
def run_prometheus(tmp_path: Path, targets: list[str]):
    """A Prometheus of our own (temp config and storage, free port) scraping ``targets`` every second."""
    binary = require_binary("prometheus")
    config = {
        "global": {"scrape_interval": "1s", "scrape_timeout": "1s", "evaluation_interval": "1s"},
        "rule_files": [str(OPS / "prometheus" / "alerts.yml")],
        "scrape_configs": [{"job_name": "chronolog", "static_configs": [{"targets": targets}]}],
    }
    cfg = tmp_path / "prometheus.yml"
    cfg.write_text(yaml.safe_dump(config), encoding="utf-8")
    port = free_port()
    log = tmp_path / "prometheus.log"
    with open(log, "w") as err:
        proc = subprocess.Popen([binary, f"--config.file={cfg}", f"--storage.tsdb.path={tmp_path / 'tsdb'}",
                                 f"--web.listen-address=127.0.0.1:{port}"], stdout=subprocess.DEVNULL, stderr=err)
    prom = Prometheus(f"http://127.0.0.1:{port}")
    try:
        deadline = time.monotonic() + 60
        while True:
            try:
                with urllib.request.urlopen(f"{prom.base}/-/ready", timeout=2) as resp:
                    if resp.status == 200:
                        break
            except OSError:
                pass
            assert proc.poll() is None, log.read_text()
            assert time.monotonic() < deadline, "prometheus not ready in 60s"
            time.sleep(0.3)
        yield prom
    finally:
        proc.terminate()
        try:
            proc.wait(timeout=30)
        except subprocess.TimeoutExpired:
            proc.kill()
            proc.wait()


def check_rules_and_dashboard(prom: Prometheus, n_targets: int) -> None:
    """The alert rules load and evaluate, and every dashboard query runs, on the scraped series."""
    prom.wait("chronolog_up", lambda r: len(r) == n_targets, timeout=30)
    rules = prom.wait_rules(lambda rs: len(rs) == 7 and all(r.get("lastEvaluation", "").startswith("2") for r in rs),
                            timeout=30)
    assert all(r["type"] == "alerting" and r["health"] == "ok" for r in rules), rules
    for expr in expressions(dashboard()):
        if not expr.startswith("label_values("):
            prom.query(substitute(expr))
    for gauge in ("chronolog_up", "chronolog_time_point", "chronolog_state_size_bytes", "chronolog_consumer_lag_records"):
        assert len(prom.query(gauge)) == n_targets, gauge


def test_prometheus_scrapes_service_metrics_and_runs_the_dashboard_queries(tmp_path):
    """Independent of the fleet: the endpoints of runtime/metrics.py, as five services of the example."""
    from chronolog.runtime.fleet.metrics import ServiceMetrics

    instances = {}
    for service, stratum in (("ingest", None), ("grounding", None), ("reasoner", 1), ("reasoner", 2), ("output", None)):
        m = ServiceMetrics.create(service, stratum, 0)
        m.up.set(1)
        m.events_in.inc(30)
        m.events_out.inc(20)
        m.lag.set(7)
        m.time_point.set(29)
        m.state_size.set(4096)
        for seconds in (0.002, 0.004, 0.03, 0.2):
            m.latency.observe(seconds)
        if service == "output":
            m.answers.inc(12)
            m.corrections.inc(3)
        port = m.serve(0, addr="127.0.0.1")
        instances[f"127.0.0.1:{port}"] = (service, stratum)
    with run_prometheus(tmp_path, sorted(instances)) as prom:
        check_rules_and_dashboard(prom, len(instances))
        lag = prom.query("chronolog_consumer_lag_records")
        got = {r["metric"]["instance"]: (r["metric"]["service"], r["metric"].get("stratum")) for r in lag}
        assert got == {i: (s, None if k is None else str(k)) for i, (s, k) in instances.items()}
        answers = prom.query("sum(chronolog_answers_total)")
        assert float(answers[0]["value"][1]) == 12
        p99 = prom.query("histogram_quantile(0.99, sum by (le) (chronolog_processing_latency_seconds_bucket))")
        assert 0.1 < float(p99[0]["value"][1]) <= 0.25  # the slowest observations sit in the (0.1, 0.25] bucket


def test_prometheus_scrapes_the_fleet(tmp_path, fleet):
    services = fleet["services"]
    assert {s["name"] for s in services} >= {"ingest", "grounding", "reasoner-1", "reasoner-2", "output"}
    with run_prometheus(tmp_path, [f"127.0.0.1:{s['metrics_port']}" for s in services]) as prometheus:
        scrape_fleet(fleet, prometheus)


def test_prometheus_scrapes_the_chained_fleet(tmp_path, chain_fleet):
    """The dashboard's queries and the alert rules work on the chained layout's series (service="chain")."""
    services = chain_fleet["services"]
    assert [s["name"] for s in services] == ["chain"]  # one partition: the chain ingests too
    with run_prometheus(tmp_path, [f"127.0.0.1:{s['metrics_port']}" for s in services]) as prometheus:
        scrape_fleet(chain_fleet, prometheus)
        assert {r["metric"]["service"] for r in prometheus.query("chronolog_up")} == {"chain"}
        # what the dashboard's "Service" variable offers (label_values(chronolog_up, service))
        values = prometheus.get("/api/v1/label/service/values", **{"match[]": "chronolog_up"})["data"]
        assert values == ["chain"]
        assert float(prometheus.query("sum(chronolog_events_in_total)")[0]["value"][1]) > 0


def scrape_fleet(fleet: dict, prometheus: Prometheus) -> None:
    services = fleet["services"]
    published = chronolog("publish", str(EVENTS), "--bootstrap", fleet["bootstrap"], timeout=120)
    assert published.returncode == 0, published.stderr

    answers = prometheus.wait("sum(chronolog_answers_total)", lambda r: r and float(r[0]["value"][1]) > 0, timeout=120)
    assert float(answers[0]["value"][1]) > 0

    up = prometheus.wait('up{job="chronolog"} == 1', lambda r: len(r) == len(services), timeout=30)
    assert {r["metric"]["instance"] for r in up} == {f"127.0.0.1:{s['metrics_port']}" for s in services}

    lag = prometheus.query("chronolog_consumer_lag_records")
    by_instance = {r["metric"]["instance"]: r["metric"] for r in lag}
    for s in services:
        labels = by_instance.get(f"127.0.0.1:{s['metrics_port']}")
        assert labels is not None, f"no chronolog_consumer_lag_records from {s['name']}"
        kind, _, stratum = s["name"].partition("-")
        assert labels["service"] == kind, (s, labels)
        assert labels.get("stratum", "") == stratum, (s, labels)
        # ingest reads every input partition, so its series carry no partition (an empty label)
        assert labels.get("partition", "") == ("" if kind == "ingest" else str(s["partition"])), (s, labels)

    check_rules_and_dashboard(prometheus, len(services))
