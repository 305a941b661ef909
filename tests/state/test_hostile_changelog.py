"""A forged record on a service's changelog never runs: the restarting service
stops with an error naming topic, partition and offset (real broker, real
service processes)."""

from __future__ import annotations

import io
import json
import pickle
import shutil
import signal
import subprocess
import sys
import time
import zlib
from pathlib import Path

import orjson
import pytest

from chronolog.cli.fleet import tail_topic
from chronolog.dialects.lars.layout import lars_layout
from chronolog.dialects.lars.parser import parse_lars
from chronolog.dialects.lars.plan import plan_program
from chronolog.runtime.fleet.broker import LocalBroker, create_topics
from chronolog.runtime.fleet.topology import build_topology
from chronolog.state.recovery import snapshot_records
from chronolog.state.store import RocksStore

pytestmark = pytest.mark.fleet

PROGRAM = "hot(S) :- temp(S, V) [3], V > 80.\n"


class Marker:
    def __init__(self, path: Path) -> None:
        self.path = path

    def __reduce__(self):
        return (Path.touch, (self.path,))


def _service(tmp: Path, bootstrap: str) -> subprocess.Popen:
    ready = tmp / "ready.json"
    ready.unlink(missing_ok=True)
    return subprocess.Popen(
        [sys.executable, "-m", "chronolog", "service", "chain", str(tmp / "p.lars"), "--bootstrap", bootstrap,
         "--state-dir", str(tmp / "state"), "--metrics-port", "0", "--idle-flush", "0.2",
         "--ready-file", str(ready)],
        stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
    )


def _wait_ready(tmp: Path, proc: subprocess.Popen, timeout: float = 60) -> None:
    deadline = time.monotonic() + timeout
    while not (tmp / "ready.json").exists():
        assert proc.poll() is None, proc.stderr.read()  # type: ignore[union-attr]
        assert time.monotonic() < deadline, "service never became ready"
        time.sleep(0.1)


@pytest.mark.parametrize("position", ["snapshot body", "entry body", "whole record"])
def test_forged_changelog_record_stops_the_restart_without_running_it(tmp_path, position):
    from chronolog.runtime.fleet import kafka_clients

    (tmp_path / "p.lars").write_text(PROGRAM)
    marker = tmp_path / "pwned"
    with LocalBroker.start() as broker:
        create_topics(broker.bootstrap, build_topology(lars_layout(plan_program(parse_lars(PROGRAM))), 1, 1, chain=True))
        proc = _service(tmp_path, broker.bootstrap)
        _wait_ready(tmp_path, proc)
        producer = kafka_clients.producer({"bootstrap.servers": broker.bootstrap})
        for t in range(6):
            producer.produce("chronolog.facts", orjson.dumps({"t": t, "pred": "temp", "args": ["s1", 90]}))
        producer.produce("chronolog.facts", orjson.dumps({"t": 6}))
        producer.flush(10)
        out = io.StringIO()
        deadline = time.monotonic() + 60
        while "hot" not in out.getvalue() and time.monotonic() < deadline:
            tail_topic(broker.bootstrap, "chronolog.answers", idle_exit=1.0, out=out)
        assert "hot" in out.getvalue()
        proc.send_signal(signal.SIGTERM)
        proc.wait(30)

        # the forged record: what the old format would have unpickled
        db_dir = tmp_path / "state" / "chain-p0" / "rocksdb"
        store = RocksStore(db_dir)
        offsets = json.loads(store.get("offsets"))  # type: ignore[arg-type]
        real_snapshot = store.get("snapshot")
        store.close()
        evil = zlib.compress(pickle.dumps(Marker(marker)))
        if position == "snapshot body":
            (key, value), = snapshot_records(b"", offsets, 1024)
            value = value.split(b"\n", 1)[0] + b"\n" + evil
        elif position == "entry body":  # an entry counts only before a snapshot: the real one follows it
            key = b"j:log:3"
            value = b'{"kind":"entry","name":"log","key":3,"format":1,"deleted":false}\n' + evil
            producer.produce("chronolog.chain.changelog", value, key, partition=0)
            (key, value), = snapshot_records(real_snapshot, offsets, 1 << 20)
        else:
            key, value = b"snapshot:0", pickle.dumps(Marker(marker))
        producer.produce("chronolog.chain.changelog", value, key, partition=0)
        producer.flush(10)
        shutil.rmtree(db_dir)  # so the restart reads the changelog

        again = _service(tmp_path, broker.bootstrap)
        try:
            _, err = again.communicate(timeout=90)
        finally:
            again.kill()
    assert again.returncode == 2, err
    assert "chronolog.chain.changelog partition 0 offset" in err and "cannot restore" in err
    assert "Traceback" not in err
    assert not marker.exists()
