"""Alert rules and the compose Prometheus configuration, checked and unit-tested by promtool."""

from __future__ import annotations

import subprocess

from .conftest import OPS, allowed_series, load_yaml, require_binary
from .promql import series_names

PROM = OPS / "prometheus"
REQUIRED = {
    "ChronologTargetDown",
    "ChronologServiceDown",
    "ChronologConsumerLagHigh",
    "ChronologConsumerLagGrowing",
    "ChronologDeadLetters",
    "ChronologLatencyHigh",
    "ChronologTimePointStalled",
}


def promtool(*args: str) -> subprocess.CompletedProcess:
    return subprocess.run([require_binary("promtool"), *args], cwd=PROM, capture_output=True, text=True, timeout=120, check=False)


def rules() -> list[dict]:
    return [r for g in load_yaml(PROM / "alerts.yml")["groups"] for r in g["rules"]]


def test_promtool_checks_the_rules():
    res = promtool("check", "rules", "alerts.yml")
    assert res.returncode == 0, res.stdout + res.stderr
    assert f"SUCCESS: {len(rules())} rules found" in res.stdout


def test_promtool_unit_tests_pass():
    res = promtool("test", "rules", "alerts.test.yml")
    assert res.returncode == 0, res.stdout + res.stderr
    assert "SUCCESS" in res.stdout


def test_promtool_unit_tests_fail_when_an_alert_is_broken(tmp_path):
    """The unit tests notice a rule that no longer fires (so they are not vacuous)."""
    broken = (PROM / "alerts.yml").read_text(encoding="utf-8").replace("> 0.1", "> 10")
    (tmp_path / "alerts.yml").write_text(broken, encoding="utf-8")
    (tmp_path / "alerts.test.yml").write_text((PROM / "alerts.test.yml").read_text(encoding="utf-8"), encoding="utf-8")
    res = subprocess.run([require_binary("promtool"), "test", "rules", "alerts.test.yml"], cwd=tmp_path,
                         capture_output=True, text=True, timeout=120, check=False)
    assert res.returncode != 0
    assert "ChronologLatencyHigh" in res.stdout + res.stderr


def test_every_alert_is_tested_firing_and_quiet():
    assert {r["alert"] for r in rules()} == REQUIRED
    spec = load_yaml(PROM / "alerts.test.yml")
    assert spec["rule_files"] == ["alerts.yml"]
    fires, quiet = set(), set()
    for test in spec["tests"]:
        for case in test["alert_rule_test"]:
            (fires if case.get("exp_alerts") else quiet).add(case["alertname"])
            for alert in case.get("exp_alerts") or []:
                assert alert["exp_labels"]["severity"] in ("warning", "critical")
    assert fires == REQUIRED, f"never shown firing: {REQUIRED - fires}"
    assert quiet == REQUIRED, f"never shown quiet: {REQUIRED - quiet}"


def test_alerts_read_only_the_fleet_metrics():
    allowed = set(allowed_series()) | {"up"}  # up: Prometheus' own scrape health series
    for rule in rules():
        names = series_names(rule["expr"])
        assert names and names <= allowed, (rule["alert"], names - allowed)
        assert rule["labels"]["severity"] in ("warning", "critical")
        assert rule["annotations"]["summary"] and rule["annotations"]["description"]
    by_name = {r["alert"]: r["expr"] for r in rules()}
    assert 'job="chronolog"' in by_name["ChronologTargetDown"]
    assert "histogram_quantile(0.99" in by_name["ChronologLatencyHigh"] and "> 0.1" in by_name["ChronologLatencyHigh"]


def test_promtool_checks_the_compose_config_and_its_rule_file():
    res = promtool("check", "config", "prometheus.yml")
    assert res.returncode == 0, res.stdout + res.stderr
    assert "alerts.yml" in res.stdout and f"SUCCESS: {len(rules())} rules found" in res.stdout
    config = load_yaml(PROM / "prometheus.yml")
    assert [j["job_name"] for j in config["scrape_configs"]] == ["chronolog"]
