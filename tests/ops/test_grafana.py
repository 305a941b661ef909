"""The Grafana dashboard: generated from ops/grafana/dashboard.py, queries only the fleet's metrics."""

from __future__ import annotations

import importlib.util
import json

import pytest

from .conftest import OPS, allowed_series, load_yaml
from .promql import series_names

DASHBOARD = OPS / "grafana" / "chronolog.json"


def generator():
    spec = importlib.util.spec_from_file_location("chronolog_ops_dashboard", OPS / "grafana" / "dashboard.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def dashboard() -> dict:
    return json.loads(DASHBOARD.read_text(encoding="utf-8"))


def panels(d: dict) -> list[dict]:
    out = []
    for p in d["panels"]:
        out.append(p)
        out.extend(p.get("panels", []))  # collapsed rows keep theirs inside
    return out


def expressions(d: dict) -> list[str]:
    exprs = [t["expr"] for p in panels(d) for t in p.get("targets", [])]
    for v in d["templating"]["list"]:
        if v["type"] == "query":
            q = v["query"]
            exprs.append(q["query"] if isinstance(q, dict) else q)
    return exprs


def test_checked_in_json_is_what_the_generator_writes(tmp_path):
    gen = generator()
    assert DASHBOARD.read_text(encoding="utf-8") == gen.render(), "stale: run python ops/grafana/dashboard.py"
    # the command line writes the same file, and --check tells stale from current
    out = tmp_path / "d.json"
    assert gen.main(["--output", str(out)]) == 0
    assert out.read_text(encoding="utf-8") == DASHBOARD.read_text(encoding="utf-8")
    assert gen.main(["--check", "--output", str(out)]) == 0
    out.write_text(out.read_text(encoding="utf-8").replace("chronolog_up", "chronolog_upp"), encoding="utf-8")
    assert gen.main(["--check", "--output", str(out)]) == 1


def test_queries_reference_only_the_fleet_metrics_and_cover_them_all():
    allowed = allowed_series()
    exprs = expressions(dashboard())
    assert len(exprs) >= 15
    used = set()
    for expr in exprs:
        names = series_names(expr)  # also: every expression parses as PromQL
        assert names, f"{expr!r} reads no series"
        unknown = names - set(allowed)
        assert not unknown, f"{expr!r} uses {unknown}, not in chronolog.runtime.fleet.metrics.METRICS"
        used |= {allowed[n] for n in names}
    from chronolog.runtime.fleet.metrics import METRICS

    assert used == set(METRICS), f"metrics without a panel: {set(METRICS) - used}"


def test_the_name_check_rejects_unknown_and_misspelt_series():
    allowed = set(allowed_series())
    assert series_names('sum(rate(chronolog_events_in_total{service=~"$service"}[$__rate_interval]))') <= allowed
    assert not series_names("rate(chronolog_events_in[5m])") <= allowed  # counter without _total
    assert not series_names("chronolog_processing_latency_seconds") <= allowed  # histogram base name
    assert not series_names('{__name__="chronolog_lag"}') <= allowed
    with pytest.raises(ValueError):
        series_names("sum(rate(chronolog_events_in_total[5m])")  # unbalanced
    with pytest.raises(ValueError):
        series_names("chronolog_up{service=~\"$unknown\"}")


def test_required_panels_with_the_datasource_variable():
    d = dashboard()
    variables = {v["name"]: v for v in d["templating"]["list"]}
    assert variables["datasource"]["type"] == "datasource"
    assert variables["datasource"]["query"] == "prometheus"
    titles = {p["title"]: p for p in panels(d)}
    for title in ("Consumer lag", "Throughput", "Answers and corrections", "Processing latency p50 / p99",
                  "State size", "Dead letters and late events", "Time point per stratum", "Service up"):
        assert title in titles, title
    for p in panels(d):
        if p["type"] == "row":
            continue
        assert p["datasource"] == {"type": "prometheus", "uid": "${datasource}"}, p["title"]
        assert p["targets"], p["title"]
    latency = [t["expr"] for t in titles["Processing latency p50 / p99"]["targets"]]
    assert any(e.startswith("histogram_quantile(0.5,") for e in latency)
    assert any(e.startswith("histogram_quantile(0.99,") for e in latency)
    assert all("chronolog_processing_latency_seconds_bucket" in e and "le" in e for e in latency)
    throughput = " ".join(t["expr"] for t in titles["Throughput"]["targets"])
    assert "chronolog_events_in_total" in throughput and "chronolog_events_out_total" in throughput
    assert "stratum" in titles["Time point per stratum"]["targets"][0]["expr"]
    ids = [p["id"] for p in panels(d)]
    assert len(ids) == len(set(ids))


def test_grafana_provisioning_loads_this_dashboard_from_prometheus():
    ds = load_yaml(OPS / "grafana" / "provisioning" / "datasources" / "prometheus.yml")["datasources"]
    assert [d["type"] for d in ds] == ["prometheus"] and ds[0]["isDefault"] is True
    providers = load_yaml(OPS / "grafana" / "provisioning" / "dashboards" / "chronolog.yml")["providers"]
    assert providers[0]["type"] == "file" and providers[0]["options"]["path"] == "/var/lib/grafana/dashboards"
    assert dashboard()["uid"]
