"""Prometheus metrics of a fleet service (exposed on HTTP ``/metrics``).

One registry per process; every series carries ``service`` (ingest,
grounding, reasoner, output), ``stratum`` ("" outside reasoners) and
``partition`` labels, so one dashboard covers any program's fleet.  Names
follow the Prometheus conventions (base units, ``_total`` for counters).
The Grafana dashboard and the alert rules under ``ops/`` use exactly these
names.
"""

from __future__ import annotations

import time
from dataclasses import dataclass
from typing import Any

from prometheus_client import (
    CollectorRegistry,
    Counter,
    Gauge,
    Histogram,
    start_http_server,
)

LABELS = ("service", "stratum", "partition")

# name -> (kind, help); kept as data so ops/ generators and tests can import it.
METRICS: dict[str, tuple[str, str]] = {
    "chronolog_events_in_total": ("counter", "Records consumed from input topics"),
    "chronolog_events_out_total": ("counter", "Records produced to output topics"),
    "chronolog_answers_total": ("counter", "Answer lines published on the answer topic (output service)"),
    "chronolog_corrections_total": ("counter", "Answer lines that correct earlier answers (diff lines of replays)"),
    "chronolog_no_answer_sets_total": ("counter", "Time points without an answer set (odd loop or constraint)"
                                                  ", each logged (a no_answer_set answer line only with "
                                                  "--mark-no-answer-set)"),
    "chronolog_dead_letters_total": ("counter", "Malformed events sent to the dead-letter topic"),
    "chronolog_late_events_total": ("counter", "Events older than the retention horizon, routed to the late topic"),
    "chronolog_delayed_events_total": ("counter", "Delayed events and retractions repaired by replay"),
    "chronolog_transactions_total": ("counter", "Kafka transactions committed"),
    "chronolog_repeats_dropped_total": ("counter", "Records a restarted relay sent again (or left unfinished)"
                                                   ", dropped at this service's gate"),
    "chronolog_processing_latency_seconds": ("histogram", "Time from a record's broker timestamp to the commit of what"
                                                          " it caused (a relay: to the barrier after it;"
                                                          " the oldest and newest record of each batch)"),
    "chronolog_hop_fetch_seconds": ("histogram", "Per hop: time from a record's broker timestamp (produced) until this service consumed it"
                                                 " (fetch wait, broker, upstream commit visibility)"),
    "chronolog_hop_commit_seconds": ("histogram", "Per hop: time from consuming a batch until the transaction carrying"
                                                  " what it caused committed, or a relay sent the barrier after it"
                                                  " (processing, batching wait, commit)"),
    "chronolog_batch_process_seconds": ("histogram", "Python work of the stage on one consumed batch (decode, evaluate, encode)"),
    "chronolog_transaction_commit_seconds": ("histogram", "Duration of one Kafka transaction: produce, state entries, offsets, commit"),
    "chronolog_consumer_lag_records": ("gauge", "Records fetched but not yet processed, from the service's own offsets"),
    "chronolog_state_size_bytes": ("gauge", "Size of the last state snapshot written to RocksDB and the changelog"),
    "chronolog_time_point": ("gauge", "Last time point this service has completed (evaluated, closed or published)"),
    "chronolog_up": ("gauge", "1 while the service's processing loop runs"),
    "chronolog_upgrades_total": ("counter", "Program upgrades this service applied (chronolog upgrade)"),
    "chronolog_program_info": ("gauge", "1 for the program version the service runs (label version: the first 12"
                                        " hex digits of the SHA-256 of its files' texts)"),
}
INFO = ("chronolog_program_info",)  # gauges with a ``version`` label beside the service's labels

_BUCKETS = (0.0005, 0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1.0, 2.5, 5.0, 10.0)


@dataclass
class ServiceMetrics:
    """The metric children of one service instance, labelled once."""

    registry: CollectorRegistry
    events_in: Counter
    events_out: Counter
    answers: Counter
    corrections: Counter
    no_answer_sets: Counter
    dead_letters: Counter
    late_events: Counter
    delayed_events: Counter
    transactions: Counter
    repeats_dropped: Counter
    latency: Histogram
    hop_fetch: Histogram
    hop_commit: Histogram
    process: Histogram
    transaction: Histogram
    lag: Gauge
    state_size: Gauge
    time_point: Gauge
    up: Gauge
    upgrades: Counter
    program: Gauge  # chronolog_program_info, unlabelled by version yet (``running``)
    labels: tuple[str, str, str]
    version: str | None = None

    def running(self, version: str) -> None:
        """``chronolog_program_info{version=...}`` is 1 for ``version`` only."""
        if version == self.version:
            return
        if self.version is not None:
            self.program.remove(*self.labels, self.version)
        self.program.labels(*self.labels, version).set(1)
        self.version = version

    def progressed(self, progress: dict, counted: dict[str, int]) -> None:
        """What a stage's ``progress()`` says (its time point, the program version in
        force, its counts): the counters grow by what ``counted``, the counts
        seen last, lacks (``counted`` is updated)."""
        for name, value in progress.items():
            if name == "time_point":
                if value is not None:
                    self.time_point.set(value)
                continue
            if name == "program_version":  # (a string: the version an upgrade put in force)
                if value is not None:
                    self.running(str(value))
                continue
            before = counted.get(name, 0)
            if value is not None and value > before:
                getattr(self, name).inc(value - before)
            counted[name] = value or 0

    def fetched(self, stamps: list[float], process_seconds: float) -> None:
        """The per-hop breakdown (``bench fleet --breakdown``, the dashboard's
        "Where the time goes"): how long a batch's oldest and newest records
        (``stamps``: their broker timestamps) waited between their producer and
        this consumer, and the stage's own work."""
        now = time.time()
        for ts in stamps:
            self.hop_fetch.observe(max(0.0, now - ts))
        self.process.observe(process_seconds)

    def released(self, stamps: list[float], consumed_at: float) -> None:
        """A relay's latency, where a transaction's would be observed at its
        commit: its readers take an epoch's records at its barrier."""
        now = time.time()
        for ts in stamps:
            self.latency.observe(max(0.0, now - ts))
        if consumed_at:
            self.hop_commit.observe(max(0.0, now - consumed_at))

    def committed(self, seconds: float, stamps: list[float], records: int) -> None:
        """A transaction of ``seconds`` that published ``records`` records and what
        the records consumed since the last one (``stamps``) caused."""
        self.transaction.observe(seconds)
        now = time.time()
        for ts in stamps:
            self.latency.observe(max(0.0, now - ts))
        self.transactions.inc()
        self.events_out.inc(records)

    @classmethod
    def create(cls, service: str, stratum: int | None = None, partition: int | None = None) -> ServiceMetrics:
        reg = CollectorRegistry()
        values = (service, "" if stratum is None else str(stratum), "" if partition is None else str(partition))
        made: dict[str, Any] = {}  # each metric's child (a Counter, Gauge or Histogram) by name
        for name, (kind, doc) in METRICS.items():
            base = name.removesuffix("_total") if kind == "counter" else name
            if name in INFO:
                made[name] = Gauge(base, doc, (*LABELS, "version"), registry=reg)
                continue
            metric: Counter | Gauge | Histogram
            if kind == "counter":
                metric = Counter(base, doc, LABELS, registry=reg)
            elif kind == "gauge":
                metric = Gauge(base, doc, LABELS, registry=reg)
            else:
                metric = Histogram(base, doc, LABELS, registry=reg, buckets=_BUCKETS)
            made[name] = metric.labels(*values)
        return cls(
            reg,
            made["chronolog_events_in_total"],
            made["chronolog_events_out_total"],
            made["chronolog_answers_total"],
            made["chronolog_corrections_total"],
            made["chronolog_no_answer_sets_total"],
            made["chronolog_dead_letters_total"],
            made["chronolog_late_events_total"],
            made["chronolog_delayed_events_total"],
            made["chronolog_transactions_total"],
            made["chronolog_repeats_dropped_total"],
            made["chronolog_processing_latency_seconds"],
            made["chronolog_hop_fetch_seconds"],
            made["chronolog_hop_commit_seconds"],
            made["chronolog_batch_process_seconds"],
            made["chronolog_transaction_commit_seconds"],
            made["chronolog_consumer_lag_records"],
            made["chronolog_state_size_bytes"],
            made["chronolog_time_point"],
            made["chronolog_up"],
            made["chronolog_upgrades_total"],
            made["chronolog_program_info"],
            values,
        )

    def serve(self, port: int, addr: str = "0.0.0.0") -> int:
        """Expose ``/metrics`` on ``port`` (0: any free port); return the port."""
        server, _ = start_http_server(port, addr=addr, registry=self.registry)
        return int(server.server_port)
