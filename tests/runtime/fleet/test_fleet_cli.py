"""Fleet commands fail clearly, and client settings come from files and the environment."""

from __future__ import annotations

import subprocess
import sys

import pytest

from chronolog.core.errors import ChronologError
from chronolog.runtime.fleet.config import kafka_config

TRAFFIC = "src/chronolog/examples/traffic.lars"


def chronolog(*args: str, cwd=None) -> subprocess.CompletedProcess:  # type: ignore[no-untyped-def]
    return subprocess.run([sys.executable, "-m", "chronolog", *args], capture_output=True, text=True, timeout=60, cwd=cwd)


def test_a_partition_of_an_unpartitionable_program_is_refused(request):
    root = request.config.rootpath
    got = chronolog("service", "reasoner", "--stratum", "1", "--partition", "2", "--partitions", "3",
                    str(root / TRAFFIC), "--bootstrap", "127.0.0.1:1")
    assert got.returncode == 2
    assert "cannot be partitioned (a tuple window counts facts of all keys)" in got.stderr
    assert "Traceback" not in got.stderr


def test_a_stratum_outside_the_program_is_refused(request):
    got = chronolog("service", "reasoner", "--stratum", "3", str(request.config.rootpath / TRAFFIC),
                    "--bootstrap", "127.0.0.1:1")
    assert got.returncode == 2 and "--stratum must be between 1 and 2" in got.stderr


def test_down_publish_and_tail_without_a_fleet_say_so(tmp_path):
    for args in (["down"], ["publish", "x.jsonl"], ["tail"]):
        got = chronolog(*args, "--state-dir", str(tmp_path / "none"))
        assert got.returncode == 2, args
        assert "no running fleet" in got.stderr and "chronolog up" in got.stderr


def test_publish_batches_by_default_and_the_user_settings_win():
    from chronolog.runtime.fleet.kafka_clients import PUBLISH_LINGER_MS, publish_settings

    conf = {"bootstrap.servers": "b:9092"}
    assert publish_settings(conf) == {"bootstrap.servers": "b:9092", "linger.ms": PUBLISH_LINGER_MS,
                                      "enable.idempotence": True}
    assert publish_settings({**conf, "linger.ms": "2"})["linger.ms"] == "2"  # from --kafka-config
    assert publish_settings({**conf, "linger.ms": "2"}, 0.0)["linger.ms"] == 0.0  # --linger-ms over both
    assert publish_settings({**conf, "enable.idempotence": "false"})["enable.idempotence"] is True


def test_service_needs_a_bootstrap(request, monkeypatch):
    monkeypatch.delenv("CHRONOLOG_BOOTSTRAP", raising=False)
    got = chronolog("service", "ingest", str(request.config.rootpath / TRAFFIC))
    assert got.returncode == 2 and "--bootstrap" in got.stderr


def test_kafka_config_from_a_properties_file_and_the_environment(tmp_path):
    props = tmp_path / "client.properties"
    props.write_text("# managed cluster\nsecurity.protocol = SASL_SSL\nsasl.mechanism=PLAIN\n\nsasl.username=app\n")
    env = {"CHRONOLOG_KAFKA_SASL_PASSWORD": "s3cret", "CHRONOLOG_KAFKA_SSL_CA_LOCATION": "/ca.pem", "OTHER": "x"}
    assert kafka_config(str(props), env) == {
        "security.protocol": "SASL_SSL", "sasl.mechanism": "PLAIN", "sasl.username": "app",
        "sasl.password": "s3cret", "ssl.ca.location": "/ca.pem",
    }
    props.write_text("security.protocol\n")
    with pytest.raises(ChronologError, match=r"client.properties:1:1: error: expected key=value"):
        kafka_config(str(props), {})
    with pytest.raises(ChronologError, match="cannot read --kafka-config"):
        kafka_config(str(tmp_path / "missing"), {})
