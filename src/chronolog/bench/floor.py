"""``chronolog bench fleet --floor``: the latency of exactly-once hops that do nothing.

A fleet's answer latency is the sum of its hops, and each hop pays the broker
whatever it computes: a fetch, then a transaction (partitions added, records
produced, the commit: three round trips).  This runs the same shape with no
reasoning in it, on the same broker, publisher and machine, so a fleet row can
be read against what no implementation of that topology can go below: ``hops``
processes in a row, each consuming ``read_committed`` and forwarding what it
consumed together with a changelog record in one transaction, committing as the
fleet's service in its place does (``runtime/fleet/batching.py`` with that service's
least gap, ``runtime/fleet/config.py`` ``commit_gap_for``; the first hop, reading the
input as ingest or a chain does, holds what it forwards until a later time
closes the open point).  The forwarded
records are the published lines themselves, so the last topic must hold every
line once, in order (the tests check it).

``transactions`` says which hops commit a transaction: ``every`` (the fleet's
services today), ``none`` (each hop produces idempotently and waits for the
acknowledgement where it would commit: what the transactions cost), or
``last`` (only the hop writing the answer topic): the floor of an exactly-once
design that keeps one transaction, at the answer topic, and recovers the hops
before it from their snapshots instead (docs/design/one-transaction.md).
"""

from __future__ import annotations

import argparse
import logging
import os
import select
import signal
import subprocess
import sys
import threading
import time
from dataclasses import dataclass

import orjson

from chronolog.bench.pacing import latencies, publish_paced
from chronolog.core.errors import ChronologError
from chronolog.runtime.fleet import kafka_clients
from chronolog.runtime.fleet.batching import Batching
from chronolog.runtime.fleet.broker import LocalBroker
from chronolog.runtime.fleet.config import CONSUMER_TUNABLES, PRODUCER_TUNABLES, ServiceConfig

log = logging.getLogger("chronolog.bench")

@dataclass(slots=True)
class _Out:
    """A forwarded record as the service's batching reads it (``stages.interface.Out``)."""

    value: bytes
    urgent: bool
    prompt: bool = False


TRANSACTIONS = ("every", "last", "none")


def _commits(transactions: str, i: int, hops: int) -> bool:
    """Whether hop ``i`` (1-based) of ``hops`` commits a transaction."""
    return transactions == "every" or (transactions == "last" and i == hops)


def _topics(prefix: str, hops: int) -> tuple[list[str], list[str]]:
    """The topic before each hop and after the last (``hops + 1``), and each hop's changelog."""
    return [f"{prefix}.{i}" for i in range(hops + 1)], [f"{prefix}.changelog.{i}" for i in range(1, hops + 1)]


def hop(bootstrap: str, prefix: str, i: int, hops: int, gap: float, transactional: bool = True) -> None:
    """Hop ``i`` (1-based): forward topic i-1 to topic i until SIGTERM.  Not
    ``transactional``: the same records produced by an idempotent producer and
    flushed (acknowledged) where the transaction would commit."""
    from confluent_kafka import OFFSET_BEGINNING, TopicPartition  # noqa: PLC0415 (confluent-kafka: ~80 ms, only with a broker)


    stopping = False

    def stop(*_: object) -> None:
        nonlocal stopping
        stopping = True

    signal.signal(signal.SIGTERM, stop)
    data, changelogs = _topics(prefix, hops)
    ident = f"{prefix}-hop-{i}"
    consumer = kafka_clients.consumer({
        "bootstrap.servers": bootstrap, **CONSUMER_TUNABLES, "group.id": ident,
        "enable.auto.commit": False, "isolation.level": "read_committed", "auto.offset.reset": "earliest"})
    consumer.assign([TopicPartition(data[i - 1], 0, OFFSET_BEGINNING)])
    producer = kafka_clients.producer({"bootstrap.servers": bootstrap, **PRODUCER_TUNABLES,
                                       **({"transactional.id": ident} if transactional else
                                          {"enable.idempotence": True})})
    if transactional:
        producer.init_transactions(60)
    batching: Batching[_Out] = Batching(gap)
    batching.began = batching.last_commit = time.monotonic()
    producer.list_topics(data[i], 30)  # the output topic's metadata, before the first transaction needs it
    latest = -1
    position = 0
    announced = False
    while not stopping:
        first = consumer.poll(batching.wait(ServiceConfig.poll, time.monotonic()))  # as a service's loop
        msgs = [] if first is None else [first] + consumer.consume(ServiceConfig.batch, 0)
        values = [m.value() for m in msgs if not m.error()]
        if msgs:
            position = msgs[-1].offset() + 1
        outs = []
        if values:
            urgent = i > 1  # after the first hop everything held is of closed points
            if i == 1:  # as ingest: urgent once a later time closes the open point
                for v in values:
                    t = orjson.loads(v)["t"]
                    urgent = urgent or 0 <= latest < t
                    latest = max(latest, t)
            outs.append(_Out(b"\n".join(values), urgent))
        now = time.monotonic()
        batching.add(outs, [], bool(values), now)
        if batching.due(now):
            held, _ = batching.take(now)
            if transactional:
                producer.begin_transaction()
            for out in held:
                producer.produce(data[i], out.value, None, 0)
            producer.produce(changelogs[i - 1], orjson.dumps({"offset": position}), b"offsets", 0)
            if transactional:
                producer.commit_transaction(60)
            elif producer.flush(60):
                raise ChronologError(f"error: bench fleet --floor: hop {i}: records not acknowledged in 60 s")
            batching.committed(time.monotonic())
        if not announced:  # connected, fetching, producer initialised: floor_latency may publish
            print("ready", flush=True)
            announced = True
    consumer.close()


class _Watcher(threading.Thread):
    """When each time first reaches the last topic (the bench's answer watcher, for lines)."""

    def __init__(self, bootstrap: str, topic: str) -> None:
        super().__init__(daemon=True)
        self.bootstrap, self.topic = bootstrap, topic
        self.first_seen: dict[int, float] = {}
        self.lines: list[bytes] = []
        self.stop = False

    def run(self) -> None:
        from confluent_kafka import OFFSET_BEGINNING, TopicPartition  # noqa: PLC0415 (confluent-kafka: ~80 ms, only with a broker)

        consumer = kafka_clients.consumer({"bootstrap.servers": self.bootstrap, "group.id": f"{self.topic}-watch",
                                           "enable.auto.commit": False, "isolation.level": "read_committed",
                                           "fetch.wait.max.ms": 2})
        consumer.assign([TopicPartition(self.topic, 0, OFFSET_BEGINNING)])
        while not self.stop:
            msgs = kafka_clients.take(consumer)
            now = time.monotonic()
            for msg in msgs:
                if msg.error():
                    continue
                for line in msg.value().split(b"\n"):
                    self.lines.append(line)
                    self.first_seen.setdefault(orjson.loads(line)["t"], now)
        consumer.close()


def _check_alive(procs: list[subprocess.Popen]) -> None:
    dead = [(i, proc.returncode) for i, proc in enumerate(procs, 1) if proc.poll() is not None]
    if dead:
        raise ChronologError("error: bench fleet --floor: " + ", ".join(
            f"hop {i} exited with status {code}" for i, code in dead) + " (its error is above)")


def _await_ready(procs: list[subprocess.Popen], timeout: float) -> None:
    """Until every hop has said ``ready`` (its first loop done), a hop died, or ``timeout``."""
    deadline = time.monotonic() + timeout
    for i, proc in enumerate(procs, 1):
        assert proc.stdout is not None
        while True:
            left = deadline - time.monotonic()
            if left <= 0:
                raise ChronologError(f"error: bench fleet --floor: hop {i} not ready after {timeout:g} s")
            if select.select([proc.stdout], [], [], min(left, 0.1))[0]:
                line = proc.stdout.readline()
                if line.strip() == b"ready":
                    break
                if not line:  # end of file: it exited
                    proc.wait(10)
                    _check_alive(procs)
            elif proc.poll() is not None:
                _check_alive(procs)


def floor_latency(lines: list[bytes], per_tp: int, rate: float, gaps: list[float], bootstrap: str | None,
                  linger_ms: float, transactions: str = "every") -> tuple[list[float], list[bytes]]:
    """``lines`` published at ``rate`` through one forwarding hop per entry of
    ``gaps`` (its least seconds between transactions): each closed
    point's latency (publish of the event that closes it until that event leaves
    the last hop, as the bench measures a fleet's answers) and the lines the last
    topic held."""
    from confluent_kafka.admin import NewTopic  # noqa: PLC0415 (confluent-kafka: ~80 ms, only with a broker)


    hops = len(gaps)
    if transactions not in TRANSACTIONS:
        raise ValueError(f"transactions: one of {', '.join(TRANSACTIONS)}, not {transactions!r}")
    broker = LocalBroker.start() if bootstrap is None else None
    boot = broker.bootstrap if broker is not None else str(bootstrap)
    prefix = f"chronolog-floor-{os.getpid()}-{time.monotonic_ns()}"
    data, changelogs = _topics(prefix, hops)
    procs: list[subprocess.Popen] = []
    watcher = _Watcher(boot, data[-1])
    admin = kafka_clients.admin({"bootstrap.servers": boot})
    try:
        for future in admin.create_topics([NewTopic(t, 1, 1) for t in data + changelogs]).values():
            future.result(30)
        procs = [subprocess.Popen([sys.executable, "-m", "chronolog.bench.floor", boot, prefix, str(i), str(hops),
                                   str(gap)] + ([] if _commits(transactions, i, hops) else ["--no-transactions"]),
                                  stdout=subprocess.PIPE) for i, gap in enumerate(gaps, 1)]
        watcher.start()
        _await_ready(procs, 60)  # a hop's start (imports, init_transactions) is not the latency
        time.sleep(1.0)  # nor the watcher's first fetches
        producer = kafka_clients.producer({"bootstrap.servers": boot, "linger.ms": linger_ms})
        closed_at = publish_paced(producer, data[0], lines, per_tp, rate)
        last = orjson.loads(lines[-1])["t"]
        deadline = time.monotonic() + 60
        # every line, not only the last point's first: without transactions a
        # point's lines can arrive in separate fetches
        while (last not in watcher.first_seen or len(watcher.lines) < len(lines)) and time.monotonic() < deadline and all(
                proc.poll() is None for proc in procs):
            time.sleep(0.005)
        _check_alive(procs)
        # the watcher sees the closing event itself, the first of point t + 1
        return latencies({t + 1: c for t, c in closed_at.items()}, watcher.first_seen), list(watcher.lines)
    finally:
        watcher.stop = True
        for proc in procs:
            proc.terminate()
        for proc in procs:
            try:
                proc.wait(10)
            except subprocess.TimeoutExpired:
                proc.kill()
                proc.wait()
        if broker is not None:
            broker.stop()
        else:  # a Kafka of the user's: leave none of the floor's topics behind
            for future in admin.delete_topics(data + changelogs).values():
                try:
                    future.result(30)
                except Exception as exc:  # noqa: BLE001 - cleanup is best effort
                    log.warning("bench fleet --floor: could not delete a topic: %s", exc)


def main(argv: list[str]) -> int:
    parser = argparse.ArgumentParser(prog="python -m chronolog.bench.floor", description="one forwarding hop")
    parser.add_argument("bootstrap")
    parser.add_argument("prefix")
    parser.add_argument("hop", type=int)
    parser.add_argument("hops", type=int)
    parser.add_argument("gap", type=float)
    parser.add_argument("--no-transactions", dest="transactional", action="store_false")
    args = parser.parse_args(argv)
    hop(args.bootstrap, args.prefix, args.hop, args.hops, args.gap, args.transactional)
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
