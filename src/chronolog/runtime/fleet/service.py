"""One fleet service process: a stage between Kafka topics, with exactly-once state.

This module is the loop; the other jobs are next to it: what a service is
before it runs and its clients' settings (``config.py``), starting from the
last committed state (``restore.py``), committing (``commit.py``: one
transaction, then RocksDB), a relay's records (``relay.py``), where records
go (``routing.py``), epochs and the gate (``epochs.py``), when to commit
(``batching.py``), the metrics (``metrics.py``).

Every loop iteration consumes a batch of records and lets the stage turn
them into output records; when runtime/fleet/batching.py says so,
everything consumed and produced since the last commit goes in ONE Kafka
transaction (``commit.py``).  (Committing on a background thread while the
next batch is processed was measured slower: the GIL hand-overs cost more
than the broker round trip saves.)

Partitions are ``assign()``-ed, never joined through a consumer group
(joins are slow on the bundled broker).

Commits also delimit the fleet's epochs (``runtime/fleet/epochs.py``,
docs/design/one-transaction.md): ingest ends one at each commit with a
barrier in every partition it feeds; the others commit where every input has
delivered an epoch's barrier and forward it.

Grounding and the reasoners are relays (``Service.relay``,
docs/fleet/exactly-once.md): their outputs leave at once (``relay.py``),
outside any transaction, and the transaction holds only their state, at the
end of an epoch, written on a thread of its own (``Commits.store``); after a
restart a relay sends again what followed it, and its readers' gates drop
the repeats.
"""

from __future__ import annotations

import gc
import logging
import os
import signal
import time
from collections.abc import Hashable

from confluent_kafka import KafkaException, TopicPartition

from chronolog.contract.topics import TopicNames
from chronolog.core.errors import ChronologError
from chronolog.runtime.fleet import kafka_clients
from chronolog.runtime.fleet.batching import Batching
from chronolog.runtime.fleet.commit import Commits
from chronolog.runtime.fleet.config import RELAYS, ServiceConfig, consumer_settings, make_stage, producer_settings
from chronolog.runtime.fleet.epochs import (
    BARRIER_KEY,
    Alignment,
    Skipped,
    barrier_record,
    committed_record,
    cut,
    epoch_offsets,
    replay_record,
)
from chronolog.runtime.fleet.join_start import join_start
from chronolog.runtime.fleet.metrics import ServiceMetrics
from chronolog.runtime.fleet.relay import RelaySender
from chronolog.runtime.fleet.restore import last_committed, open_store
from chronolog.runtime.fleet.routing import Routes
from chronolog.runtime.fleet.topic_reader import FIRST_OFFSET
from chronolog.runtime.fleet.topology import build_topology
from chronolog.stages.interface import Out
from chronolog.state import changelog
from chronolog.state.changelog import Captured
from chronolog.state.store import Store

log = logging.getLogger("chronolog.service")

_DEBUG = bool(os.environ.get("CHRONOLOG_DEBUG_COMMITS"))


def _waited(stamps: list[float], taken: float) -> str:
    """For ``CHRONOLOG_DEBUG_COMMITS``: how long the newest record of a batch had been on its way
    when the loop took it (from its producer's time stamp, to the millisecond): a hop's broker
    round trip and queueing, told apart from the service's own work (the batch's process time,
    and its main thread's CPU beside it: their difference is time the process waited for a core)."""
    return f" (the newest {(taken - max(stamps)) * 1000:.0f} ms after it was sent)" if stamps else ""


class Service:
    """The consume–process–produce loop of one stage."""

    def __init__(self, cfg: ServiceConfig, store: Store | None = None) -> None:
        """``store``: where the state is kept locally (None: RocksDB under
        ``cfg.state_dir``, opened when the service runs)."""
        self.cfg = cfg
        self.store = store
        self.names = TopicNames(cfg.prefix)
        self.metrics = ServiceMetrics.create(cfg.service, cfg.stratum, None if cfg.service == "ingest" else cfg.partition)
        if cfg.version is not None:
            self.metrics.running(cfg.version)
        self.stopping = False
        self.stage = make_stage(cfg)  # first: it checks --stratum and --partition with clear messages
        self.topology = build_topology(cfg.layout, cfg.partitions, cfg.input_partitions, cfg.prefix,
                                       chain=cfg.service == "chain")
        spec = next((s for s in self.topology.services if s.name == cfg.name), None)
        if spec is None:
            raise ChronologError(f"error: the topology of this program has no service {cfg.name!r} "
                                 f"(it has {', '.join(s.name for s in self.topology.services)})")
        self.spec = spec
        p = cfg.partition
        # the input topic is read whole (every input partition); the others at this partition
        self.inputs = [(t, i) for t in spec.reads
                       for i in (range(cfg.input_partitions) if t == self.names.facts else [p])]
        self.roles = {t: self._role(t) for t in spec.reads}
        assert spec.state is not None
        self.changelog = (spec.state, p if cfg.service != "ingest" else 0)
        self.routes = Routes(self.names, cfg.stratum, p)
        # epochs (runtime/fleet/epochs.py): the service that reads the input starts them
        # at each commit; the others complete one when every input delivered its
        # barrier, commit there, and forward it if they feed another service
        self.head = self.names.facts in spec.reads
        self.forwards = cfg.service in ("ingest", "grounding", "reasoner")
        # a relay sends its records at once, without a transaction, and stores
        # its state (in a transaction of its own) only at the end of an epoch;
        # after a restart it sends again what followed that epoch, and its
        # readers drop the repeats at their gate (runtime/fleet/epochs.py)
        self.relay = cfg.service in RELAYS
        # whose stage is told that a batch's epoch goes on (``Stage.process``'s ``more``): the
        # relays, and the output (it reads relays only; a transaction of its own at each batch)
        self.waits = self.relay or cfg.service == "output"
        self.gated = [tp for tp in self.inputs
                      if self.roles[tp[0]] == "grounded" or self.roles[tp[0]].startswith("stratum.")]
        self.sender: RelaySender | None = None  # a relay's, made with the other clients (run)
        self.epoch = -1
        self._passed: dict[tuple[str, int], int] = {}  # restored: each input's last barrier passed
        self.alignment: Alignment | None = None
        changelog.track(self.stage)

    def _role(self, topic: str) -> str:
        """What an input topic is to the stage (stages.Record)."""
        for role in ("facts", "ingested", "grounded"):
            if topic == getattr(self.names, role):
                return role
        return topic[len(self.cfg.prefix) + 1:]  # stratum.k

    def _clients(self, db: Store) -> Commits:
        """The consumer, the relay's sender, and the commits through the
        transactional producer (config.py: tunables first, the user's settings
        over them, then what exactly-once needs)."""
        self.consumer = kafka_clients.consumer(consumer_settings(self.cfg))
        producer = kafka_clients.producer(producer_settings(self.cfg))
        producer.init_transactions(60)  # fences and aborts what an earlier instance left open
        if self.relay:
            self.sender = RelaySender(self.cfg, self.routes, self.metrics)
        return Commits(producer, db, self.names, self.changelog, self.routes, self.metrics, self.sender)

    def restore(self) -> dict[tuple[str, int], int]:
        """Load the state of the last committed transaction (runtime/fleet/restore.py);
        return where to resume each input."""
        got = last_committed(self.cfg, self.db, self.changelog, self.inputs)
        if got is None:
            return {}
        self.stage = got.stage
        self.epoch, self._passed = got.epoch, got.passed
        return got.resume

    def _join_start(self) -> dict[tuple[str, int], int]:
        """A reasoner with nothing committed whose stratum an upgrade added: where it starts
        (runtime/fleet/join_start.py), as if restored at the end of the epoch before the
        upgrade's; nothing (from the start) for any other service."""
        version = getattr(self.stage, "join_version", None)
        wanted = None if version is None else version(self.cfg.versions)
        got = None if wanted is None else join_start(self.cfg, self.inputs, self.names.grounded, wanted)
        if got is None:
            return {}
        self.epoch, starts = got
        self._passed = {tp: self.epoch for tp in self.inputs}
        return starts

    # ------------------------------------------------------------ loop

    def run(self, ready: callable | None = None) -> None:  # type: ignore[valid-type]
        signal.signal(signal.SIGTERM, lambda *a: setattr(self, "stopping", True))
        signal.signal(signal.SIGINT, lambda *a: setattr(self, "stopping", True))
        self.port = self.metrics.serve(self.cfg.metrics_port)
        if self.store is None:
            self.store = open_store(self.cfg)
        self.db = self.store
        self.commits = commits = self._clients(self.db)
        resume = self.restore()
        if not resume and self.epoch < 0:
            resume = self._join_start()
        progress = self.stage.progress()
        if progress.get("program_version") is not None:  # restored after an upgrade: that version runs
            self.metrics.running(str(progress["program_version"]))
        self._counted: dict[str, int] = {k: v or 0 for k, v in progress.items()
                                         if k not in ("time_point", "program_version")}
        # an input the state names no offset of: from its first record (``FIRST_OFFSET``)
        self.positions = {tp: resume.get(tp, FIRST_OFFSET) for tp in self.inputs}
        self.consumer.assign([TopicPartition(t, p, off) for (t, p), off in self.positions.items()])
        if not self.head:
            # an input the restored state has no offset for joined it later (an upgrade's added
            # stratum's topic): before every epoch, not at the state's
            joined = {tp: -1 for tp in self.inputs if resume and tp not in resume and self.epoch >= 0}
            seen: dict[Hashable, int] = dict(self._passed)
            seen.update(joined)
            self.alignment = Alignment(self.inputs, self.epoch, seen, self.gated)
        sender = self.sender
        if sender is not None:  # first of all: its readers drop what a predecessor left unfinished
            sender.send([Out(self._feeds(), 0, replay_record(self.epoch))])
            log.info("%s: relays what follows epoch %d", self.cfg.instance, self.epoch)
        self.metrics.up.set(1)
        if ready is not None:
            ready(self)
        self._full_gc = time.monotonic()
        last_lag = 0.0
        pending: list[float] = []  # stamps of consumed records not committed yet
        consumed_at = 0.0  # wall time the oldest batch not committed yet was consumed
        cfg = self.cfg
        assert cfg.commit_gap is not None
        batching: Batching[Out] = Batching(cfg.commit_gap, cfg.hold, cfg.commit_interval)
        batching.began = batching.last_commit = time.monotonic()
        stored_at = batching.began  # a relay's last state commit
        try:
            while True:
                # wait for one record, then take what is already fetched: batches
                # under load, no added latency when records trickle in
                msgs = [] if self.stopping else kafka_clients.take(
                    self.consumer, cfg.batch, batching.wait(cfg.poll, time.monotonic()))
                taken = time.time() if _DEBUG else 0.0
                for chunk, completed in cut(msgs, self.alignment, self.gated):  # split where an epoch completes
                    t0, cpu = time.perf_counter(), time.thread_time() if _DEBUG else 0.0
                    # a relay's records of an epoch not completed yet wait at its readers' gates;
                    # the output may leave the work of an epoch's records to its end likewise
                    outs, lines, stamps, got = self._process(chunk, self.waits and completed is None)
                    if got:
                        self.metrics.fetched(stamps, time.perf_counter() - t0)
                        consumed_at = consumed_at or time.time()
                    pending += stamps
                    if sender is not None:
                        sender.send(outs)
                        if _DEBUG and (got or completed is not None):
                            log.info("%d records in%s, %d out: process %.1f ms (cpu %.1f)%s", len(chunk),
                                     _waited(stamps, taken), len(outs), (time.perf_counter() - t0) * 1000,
                                     (time.thread_time() - cpu) * 1000,
                                     "" if completed is None else f", epoch {completed} completed")
                        if completed is not None:  # the epoch's records are usable downstream now
                            sender.send(self._barriers(completed))
                            self.metrics.released(pending, consumed_at)
                            pending, consumed_at = [], 0.0
                            if time.monotonic() - stored_at >= cfg.state_interval and commits.stored():
                                commits.store(self._capture(at_epoch=True))
                                self._collect()
                                stored_at = time.monotonic()
                        continue
                    now = time.monotonic()
                    batching.add(outs, lines, got, now)
                    if completed is not None or batching.due(now, self.stopping):  # runtime/fleet/batching.py
                        t1, cpu1 = time.perf_counter(), time.thread_time() if _DEBUG else 0.0
                        outs, lines = batching.take(now)
                        outs += self._barriers(completed)
                        commits.write(self._capture(at_epoch=completed is not None), outs, lines, pending)
                        if consumed_at:
                            self.metrics.hop_commit.observe(max(0.0, time.time() - consumed_at))
                            consumed_at = 0.0
                        self._collect()
                        batching.committed(time.monotonic())
                        if _DEBUG:
                            log.info("%d records in%s, %d out: process %.1f ms (cpu %.1f), commit %.1f ms", len(chunk),
                                     _waited(stamps, taken), len(outs) + len(lines), (t1 - t0) * 1000,
                                     (cpu1 - cpu) * 1000, (time.perf_counter() - t1) * 1000)
                        pending = []
                commits.stored()  # a failed state commit stops the service here
                if self.stopping:
                    break
                if time.monotonic() - last_lag > 2.0:
                    last_lag = time.monotonic()
                    self._lag()
            commits.finish(120)  # the last state commit, done (or its error raised)
        except KafkaException as exc:
            raise ChronologError(f"error: {self.cfg.instance}: Kafka: {exc}") from None
        finally:
            self.metrics.up.set(0)
            commits.close()  # lets a state commit in flight finish
            self.consumer.close()
            if sender is not None:
                sender.close()

    def _barriers(self, completed: int | None) -> list:
        """The barrier records a commit writes: the head ends an epoch at each of
        its commits; a service that completed one forwards it.  Output and the
        chain feed no service: their commits record it, and output also says so
        on the control topic, in the same transaction."""
        if self.head:
            if not self.forwards:
                return []
            self.epoch += 1
            parts = getattr(self.stage, "partitions", 1)  # ingest: the partitions it feeds
            return [Out("ingested", part, barrier_record(self.epoch)) for part in range(parts)]
        if completed is None:
            return []
        self.epoch = completed
        if self.cfg.service == "output":
            key, value = committed_record(completed, self.cfg.partition)
            return [Out("control", 0, value, key)]
        if not self.forwards:
            return []
        return [Out(self._feeds(), 0, barrier_record(completed))]

    def _process(self, msgs: list, more: bool = False) -> tuple[list, list[bytes], list[float], bool]:
        """Feed a batch to the stage: the records to produce, the answer lines
        (kept apart: the bulk of the output), record timestamps, whether any
        record was consumed.  ``more``: the batch's epoch has not completed (``Stage.process``)."""
        records = []
        roles = self.roles
        aligned = self.alignment is not None
        dropped = 0
        for msg in msgs:
            if msg.error():
                log.debug("%s: %s", self.cfg.instance, msg.error())
                continue
            topic, partition, offset = msg.topic(), msg.partition(), msg.offset()
            self.positions[(topic, partition)] = offset + 1
            if type(msg) is Skipped:
                dropped += 1
                continue  # a repeat a relay sent again: its position only
            value = msg.value()
            if aligned and value is not None and value.startswith(BARRIER_KEY):
                continue  # a barrier passed (epochs.cut): its position only
            records.append((roles[topic], topic, partition, offset, value))
        outs, lines = self.stage.process(records, more=more)
        self.metrics.progressed(self.stage.progress(), self._counted)
        self.metrics.answers.inc(len(lines))
        self.metrics.events_in.inc(len(records))
        if dropped:
            self.metrics.repeats_dropped.inc(dropped)
        stamps = []
        for msg in (msgs[0], msgs[-1]) if len(msgs) > 1 else msgs:  # a batch's oldest and newest record
            kind, ts = msg.timestamp()
            if kind and ts > 0 and not msg.error():
                stamps.append(ts / 1000.0)
        return outs, lines, stamps, bool(records)

    def _saved_epoch(self, at_epoch: bool) -> dict[str, int]:
        """The epoch state a commit stores.  Where an epoch completed, every input
        is exactly at its barrier (``epochs.cut`` has already aligned the rest of
        the batch: the alignment's own state is ahead of this chunk's, and saving
        it would have a gate take re-read records for repeats).  Elsewhere (the
        end of a consumed batch) the alignment's state is the chunk's."""
        return epoch_offsets(self.epoch, None if at_epoch else self.alignment)

    def _capture(self, at_epoch: bool) -> Captured:
        """The stage's state as a commit stores it, taken now (bytes: the stage
        may move on while a relay's state is written)."""
        offsets = {f"{t}:{p}": off for (t, p), off in self.positions.items() if off >= 0}
        offsets.update(self._saved_epoch(at_epoch))
        return changelog.capture(self.stage, offsets)

    def _feeds(self) -> str:
        """The role of the topic a relay writes."""
        return "grounded" if self.cfg.service == "grounding" else "stratum"

    def _collect(self) -> None:
        """Garbage collection that does not grow with the state.  What survives
        a commit is mostly state (the log, windows, journals): it is moved out
        of the collector's generations (``gc.freeze``, constant time), so the
        automatic collections scan only what later batches allocate, and a long
        stream's state never turns into a long pause.  Cycles among frozen
        objects (an engine replaced by a replay) are reclaimed by a full
        collection every ``gc_interval`` seconds."""
        gc.freeze()
        now = time.monotonic()
        if now - self._full_gc >= self.cfg.gc_interval:
            self._full_gc = now
            gc.unfreeze()
            gc.collect()
            gc.freeze()

    def _lag(self) -> None:
        """Lag from the service's own positions against the partition ends it can see."""

        total = 0
        for (t, p), pos in self.positions.items():
            try:
                _, high = self.consumer.get_watermark_offsets(TopicPartition(t, p), cached=True)
            except Exception:  # noqa: BLE001 - lag is best effort; never stop processing for it
                continue
            if high >= 0:
                total += max(0, high - max(pos, 0))
        self.metrics.lag.set(total)
