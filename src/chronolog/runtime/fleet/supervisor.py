"""``chronolog up``: the local fleet, one OS process per service, supervised.

Starts the bundled broker unless a bootstrap address is given, creates the
topology's topics, starts every service (``chronolog service ...``), waits
until each has restored its state and serves metrics, writes
``STATE_DIR/fleet.json`` and prints ``ready``.  Then it stays in the
foreground: a service that dies is restarted (it resumes from its state),
SIGTERM/SIGINT stop everything.  ``chronolog down`` signals it.
"""

from __future__ import annotations

import fcntl
import json
import os
import signal
import subprocess
import sys
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import IO

from chronolog.contract.topics import TopicNames
from chronolog.core.errors import ChronologError
from chronolog.runtime.fleet.broker import LocalBroker, create_topics
from chronolog.runtime.fleet.config import kafka_config
from chronolog.runtime.fleet.deploy import Evaluation
from chronolog.runtime.fleet.strata import ControlWatch, FleetStrata
from chronolog.runtime.fleet.topology import Topology, build_topology
from chronolog.stages.interface import FleetLayout, with_strata

FLEET_FILE = "fleet.json"
LOCK_FILE = "fleet.lock"


@dataclass
class Child:
    name: str  # e.g. reasoner-2
    partition: int | None
    argv: list[str]
    ready_file: Path
    log: Path
    process: subprocess.Popen | None = None
    restarts: int = 0
    metrics_port: int | None = None
    started: float = 0.0
    needs_ready: bool = True  # False: running counts as ready (no ready file, no metrics)

    @property
    def label(self) -> str:
        return self.name if self.partition is None else f"{self.name}[{self.partition}]"

    def start(self) -> None:
        self.ready_file.unlink(missing_ok=True)
        out = open(self.log, "ab")  # noqa: SIM115 - owned by the child
        self.process = subprocess.Popen(self.argv, stdout=out, stderr=subprocess.STDOUT, start_new_session=True)
        out.close()
        self.started = time.monotonic()

    def ready(self) -> bool:
        if not self.needs_ready:
            return time.monotonic() - self.started > 1.0
        try:
            info = json.loads(self.ready_file.read_text())
        except (OSError, ValueError):
            return False
        self.metrics_port = info.get("metrics_port")
        return True


@dataclass
class Fleet:
    programs: list[str]
    layout: FleetLayout  # the program's (Dialect.layout)
    state_dir: Path
    bootstrap: str | None = None
    partitions: int = 1
    input_partitions: int = 1
    idle_flush: float = 1.0
    retention: int | None = None
    window: int | None = None  # RTEC's windowed mode (--window, --step)
    step: int | None = None
    kafka_config: str | None = None
    prefix: str = "chronolog"
    archive: str | None = None  # directory: also run the Parquet archiver of input and answers
    chain: bool = False  # grounding, reasoners and output chained in one process per partition
    mode: str | None = None  # tms or oneshot for programs that are not stratified (None: tms)
    seed: int = 0
    mark_no_answer_set: bool = False  # no_answer_set lines on the answer topic too (up --mark-no-answer-set)
    dialect: str | None = None  # as `up --dialect` gave it (None: by the files' extension)
    children: list[Child] = field(default_factory=list)
    broker: LocalBroker | None = None
    stopping: bool = False
    strata: FleetStrata | None = None  # per stratum: the strata it runs, as upgrades changed them (strata.py)
    watch: ControlWatch | None = None
    _common: list[str] = field(default_factory=list)  # every service's command line but its own part
    _lock: IO[str] | None = None  # the state dir's lock, held while this supervisor runs

    def claim(self) -> None:
        """Make this the only supervisor of ``state_dir``: a second ``up`` on the same state
        would start a second copy of every service, each fencing the other's transactions and
        writing the same RocksDB state.  The lock goes with this process (kill -9 included);
        services an earlier supervisor left running (it was killed, they were not: they run
        in their own sessions) are refused too, with how to stop them."""
        self.state_dir.mkdir(parents=True, exist_ok=True)
        lock = open(self.state_dir / LOCK_FILE, "a+")  # noqa: SIM115 - held until down()
        try:
            fcntl.flock(lock, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except BlockingIOError:
            lock.close()
            pid = _fleet_info(self.state_dir).get("supervisor_pid", "unknown")
            raise ChronologError(f"error: a fleet is already running from {self.state_dir} (supervisor pid {pid}): "
                                 f"stop it with `chronolog down --state-dir {self.state_dir}`, or give this one "
                                 "another --state-dir") from None
        left = [svc for svc in _fleet_info(self.state_dir).get("services", [])
                if svc.get("pid") and _is_service(svc["pid"])]
        if left:
            lock.close()
            pids = ", ".join(f"{s['name']} pid {s['pid']}" for s in left)
            raise ChronologError(f"error: services of an earlier fleet from {self.state_dir} still run ({pids}) "
                                 f"although its supervisor is gone: stop them with "
                                 f"`chronolog down --state-dir {self.state_dir}` first")
        self._lock = lock

    @property
    def versions_file(self) -> Path:
        return self.state_dir / "run" / "fleet-versions.json"

    def topology(self) -> Topology:
        strata = 0 if self.strata is None else self.strata.strata
        return build_topology(with_strata(self.layout, strata), self.partitions, self.input_partitions, self.prefix,
                              chain=self.chain)

    def plan_children(self, topology: Topology) -> None:
        """One child per service of ``topology`` (its command line), per partition
        except ingest, which reads every input partition."""
        n = self.partitions if self.layout.partition_key is not None else 1
        self.partitions = n
        base = [sys.executable, "-m", "chronolog", "service"]
        common = [*self.programs, "--bootstrap", str(self.bootstrap), "--state-dir", str(self.state_dir),
                  "--partitions", str(n), "--input-partitions", str(self.input_partitions),
                  "--idle-flush", str(self.idle_flush), "--topic-prefix", self.prefix, "--metrics-port", "0"]
        if self.dialect is not None:  # each service reads the program files in up's language
            common += ["--dialect", self.dialect]
        if self.retention is not None:
            common += ["--retention", str(self.retention)]
        common += Evaluation(self.mode, self.seed, self.mark_no_answer_set, self.window,
                             self.step).flags()  # (as topology's deployments)
        if self.kafka_config:
            common += ["--kafka-config", self.kafka_config]
        if self.strata is not None and self.strata.versions:
            common += ["--fleet-versions", str(self.versions_file)]
        self._common = [*base, *common]
        self._add_children(topology)
        run = self.state_dir / "run"
        if self.archive:
            argv = [sys.executable, "-m", "chronolog", "archive", "--bootstrap", str(self.bootstrap),
                    "--out", self.archive, "--topics", f"{TopicNames(self.prefix).facts},{TopicNames(self.prefix).answers}"]
            self.children.append(Child("archive", None, argv, run / "archive.json", run / "archive.log",
                                       needs_ready=False))

    def _add_children(self, topology: Topology) -> list[Child]:
        """A child per service of ``topology`` and partition (ingest: one) not started yet."""
        run = self.state_dir / "run"
        run.mkdir(parents=True, exist_ok=True)
        have = {(c.name, c.partition) for c in self.children}
        added = []
        for service in topology.services:
            head = service.command.split()[2:]  # after "chronolog service"
            parts: list[int | None] = [None] if service.name == "ingest" else list(range(self.partitions))
            for p in parts:
                if (service.name, p) in have:
                    continue
                ident = service.name if p is None else f"{service.name}-p{p}"
                argv = self._common[:4] + head + self._common[4:] + (["--partition", str(p)] if p is not None else [])
                argv += ["--ready-file", str(run / f"{ident}.json")]
                added.append(Child(service.name, p, argv, run / f"{ident}.json", run / f"{ident}.log"))
        self.children += added
        return added

    def learn_strata(self, conf: dict) -> None:
        """Per stratum: the strata as the upgrades applied so far left them (the control topic
        read from its start: a restarted supervisor starts the services they added)."""
        if self.chain or not self.layout.per_stratum:
            return
        self.strata = FleetStrata(len(self.layout.strata), {p for s in self.layout.strata for p in s})
        self.watch = ControlWatch(str(self.bootstrap), TopicNames(self.prefix).control, conf)
        # (a broker it has just started holds no outcome yet: nothing to wait for)
        for outcome in self.watch.poll(idle=None if self.broker is not None else 1.0):
            self.strata.learn(outcome)
        if self.strata.versions:
            self.versions_file.parent.mkdir(parents=True, exist_ok=True)
            self.strata.write(self.versions_file)

    def grow(self, say: Callable[[str], None]) -> None:
        """An upgrade added strata or answer predicates: the new topics, the added strata's
        reasoners (they start at the upgrade's epoch from what the strata below send them, or
        read their inputs from the start: runtime/fleet/join_start.py), the output restarted to serve
        every version (``chronolog service --fleet-versions``)."""
        assert self.strata is not None and self.bootstrap is not None
        self.strata.write(self.versions_file)
        topology = self.topology()
        for name in create_topics(self.bootstrap, topology, extra=kafka_config(self.kafka_config)):
            say(f"created topic {name}")
        flag = ["--fleet-versions", str(self.versions_file)]
        if "--fleet-versions" not in self._common:
            self._common += flag
            for child in self.children:
                if child.name != "archive":
                    child.argv += flag
        for child in self._add_children(topology):
            child.start()
            say(f"service {child.label} started (an upgrade added its stratum)")
        for child in self.children:
            if child.name == "output" and child.process is not None:
                child.process.terminate()  # it commits what it has and stops
                try:
                    child.process.wait(60)
                except subprocess.TimeoutExpired:
                    child.process.kill()
                    child.process.wait(5)
                child.start()
                say(f"service {child.label} restarted to serve the upgrade's strata and answers")
        self.write_fleet_file()

    def up(self, say: Callable[[str], None], timeout: float = 120.0) -> None:
        self.claim()
        if self.bootstrap is None:
            self.broker = LocalBroker.start(log=self.state_dir / "broker.log")
            self.bootstrap = self.broker.bootstrap
            say(f"broker {self.bootstrap} (bundled tansu, in-memory storage: for trying chronolog and tests; "
                "it slows down as its topics grow, so use --bootstrap with Kafka for a sustained stream)")

        conf = kafka_config(self.kafka_config)
        create_topics(self.bootstrap, self.topology(), extra=conf)
        self.learn_strata(conf)
        topology = self.topology()
        create_topics(self.bootstrap, topology, extra=conf)
        self.plan_children(topology)
        for child in self.children:
            child.start()
        deadline = time.monotonic() + timeout
        waiting = list(self.children)
        while waiting:
            if time.monotonic() > deadline:
                raise ChronologError(f"error: services not ready within {timeout:.0f} s: "
                                     + ", ".join(c.label for c in waiting) + f" (logs in {self.state_dir / 'run'})")
            for child in list(waiting):
                assert child.process is not None
                if child.process.poll() is not None:
                    tail = child.log.read_text(errors="replace")[-2000:] if child.log.exists() else ""
                    raise ChronologError(f"error: service {child.label} exited with status "
                                         f"{child.process.returncode} while starting:\n{tail}")
                if child.ready():
                    waiting.remove(child)
            time.sleep(0.05)
        for child in self.children:
            assert child.process is not None
            where = f" metrics=http://127.0.0.1:{child.metrics_port}/metrics" if child.needs_ready else f" log={child.log}"
            say(f"service {child.label} pid={child.process.pid}{where}")
        self.write_fleet_file()

    def write_fleet_file(self) -> None:
        info = {
            "bootstrap": self.bootstrap,
            "supervisor_pid": os.getpid(),
            "prefix": self.prefix,
            "partitions": self.partitions,
            "input_partitions": self.input_partitions,
            # what `chronolog upgrade` reads: the program the services were started with, and its options
            "programs": self.programs,
            "dialect": self.dialect,
            "retention": self.retention,
            "window": self.window,
            "chain": self.chain,
            "mark_no_answer_set": self.mark_no_answer_set,
            # per stratum: reasoners per partition and the predicates the output serves, as upgrades left them
            "strata": None if self.strata is None else self.strata.strata,
            "served": None if self.strata is None else sorted(self.strata.served),
            "services": [
                {"name": c.name, "partition": c.partition, "pid": c.process.pid if c.process else None,
                 "metrics_port": c.metrics_port, "restarts": c.restarts}
                for c in self.children
            ],
        }
        tmp = self.state_dir / (FLEET_FILE + ".tmp")
        tmp.write_text(json.dumps(info, indent=2) + "\n")
        tmp.replace(self.state_dir / FLEET_FILE)

    def supervise(self, say: Callable[[str], None], poll: float = 0.2) -> None:
        """Restart services that die, until SIGTERM/SIGINT (or ``down``)."""
        signal.signal(signal.SIGTERM, lambda *a: setattr(self, "stopping", True))
        signal.signal(signal.SIGINT, lambda *a: setattr(self, "stopping", True))
        while not self.stopping:
            if self.broker is not None and self.broker.process.poll() is not None:
                raise ChronologError("error: the bundled broker exited; its in-memory topics are gone")
            if self.watch is not None and self.strata is not None \
                    and any([self.strata.learn(o) for o in self.watch.poll()]):  # (every one learnt)
                self.grow(say)
            for child in self.children:
                assert child.process is not None
                if child.process.poll() is not None and not self.stopping:
                    child.restarts += 1
                    say(f"service {child.label} exited with status {child.process.returncode}; restarting "
                        f"(restart {child.restarts})")
                    if time.monotonic() - child.started < 2.0:
                        time.sleep(min(5.0, 0.5 * child.restarts))  # crash loop: back off
                    child.start()
                    self.write_fleet_file()
                elif child.process.poll() is None and child.needs_ready and child.metrics_port is None and child.ready():
                    self.write_fleet_file()
            time.sleep(poll)

    def down(self, timeout: float = 15.0) -> None:
        for child in self.children:
            if child.process is not None and child.process.poll() is None:
                child.process.terminate()
        deadline = time.monotonic() + timeout
        for child in self.children:
            if child.process is None:
                continue
            try:
                child.process.wait(max(0.1, deadline - time.monotonic()))
            except subprocess.TimeoutExpired:
                child.process.kill()
                child.process.wait(5)
        if self.watch is not None:
            self.watch.close()
            self.watch = None
        if self.broker is not None:
            self.broker.stop()
        if self._lock is None:
            return  # (not ours: another supervisor's fleet file stays)
        (self.state_dir / FLEET_FILE).unlink(missing_ok=True)
        self._lock.close()
        self._lock = None


def _fleet_info(state_dir: Path) -> dict:
    """The fleet file as an earlier supervisor left it, or nothing."""
    try:
        return json.loads((state_dir / FLEET_FILE).read_text())
    except (OSError, ValueError):
        return {}


def _is_service(pid: int) -> bool:
    """``pid`` runs a chronolog service (not a recycled pid of something else)."""
    return _runs_chronolog(pid, b"service") or _runs_chronolog(pid, b"archive")


def _runs_chronolog(pid: int, command: bytes) -> bool:
    """``pid`` is alive and runs ``chronolog COMMAND`` (``python -m chronolog up ...``)."""
    try:
        argv = Path(f"/proc/{pid}/cmdline").read_bytes().split(b"\0")
    except OSError:
        return False
    named = any(a == b"chronolog" or a.endswith(b"/chronolog") for a in argv)  # -m chronolog, or the script
    return _alive(pid) and named and command in argv


def read_fleet_file(state_dir: Path) -> dict:
    try:
        return json.loads((state_dir / FLEET_FILE).read_text())
    except FileNotFoundError:
        raise ChronologError(f"error: no running fleet: {state_dir / FLEET_FILE} does not exist "
                             "(start one with `chronolog up`, or pass --bootstrap)") from None


def stop_fleet(state_dir: Path, timeout: float = 30.0, out: IO[str] = sys.stdout) -> None:
    info = read_fleet_file(state_dir)
    pid = info["supervisor_pid"]
    if _runs_chronolog(pid, b"up"):  # (a supervisor killed earlier: its pid may be another process's now)
        try:
            os.kill(pid, signal.SIGTERM)
        except ProcessLookupError:
            pass
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline and _alive(pid):
            time.sleep(0.1)
    for svc in info.get("services", []):  # anything the supervisor could not stop
        if svc.get("pid") and _is_service(svc["pid"]):
            os.kill(svc["pid"], signal.SIGKILL)
    (state_dir / FLEET_FILE).unlink(missing_ok=True)
    print(f"stopped fleet (supervisor pid {pid})", file=out)


def _alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True
    try:  # a zombie child of ours counts as gone
        with open(f"/proc/{pid}/stat") as f:
            return f.read().split(")")[-1].split()[0] != "Z"
    except OSError:
        return True
