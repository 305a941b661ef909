"""One fleet service process: a stage between Kafka topics, with exactly-once state.

Every loop iteration consumes a batch of records and lets the stage turn
them into output records; when runtime/batching.py says so, everything
consumed and produced since the last commit goes in ONE Kafka transaction:
the outputs and a snapshot of the stage on the compacted changelog topic,
which carries the consumed input offsets.  After the commit the state is also written to
RocksDB under ``--state-dir``.  On start the service takes the RocksDB
state if the changelog shows it is the last committed one, otherwise the
changelog's last snapshot (a fresh state dir, or a crash between commit and
the RocksDB write), and resumes its input at the snapshot's offsets.  So
after ``kill -9`` nothing is lost and nothing is published twice.  The
offsets are not also committed to a consumer group inside the transaction:
that took two more broker round trips per commit (``send_offsets_to_transaction``
measured as long as the commit itself).  (Committing on a background thread
while the next batch is processed was measured slower: the GIL hand-overs
cost more than the broker round trip saves.)

Partitions are ``assign()``-ed, never joined through a consumer group
(joins are slow on the bundled broker).

Commits also delimit the fleet's epochs (``runtime/epochs.py``,
docs/design/one-transaction.md): ingest ends one at each commit with a
barrier in every partition it feeds; the others commit where every input has
delivered an epoch's barrier and forward it.

Grounding and the reasoners are relays (``Service.relay``,
docs/fleet/exactly-once.md): their outputs leave at once by an idempotent
producer, outside any transaction, and the transaction above holds only
their state, at the end of an epoch; after a restart a relay sends again
what followed it, and its readers' gates drop the repeats.  A relay's state
commit runs on a thread of its own (``Service._store``): it holds no output
records, so the relay never waits for it (unlike the transactions above,
whose outputs must wait for their commit anyway).
"""

from __future__ import annotations

import gc
import logging
import os
import signal
import time
from concurrent.futures import Future, ThreadPoolExecutor

from confluent_kafka import OFFSET_BEGINNING, KafkaException, TopicPartition

from chronolog.contract.topics import TopicNames
from chronolog.core.errors import ChronologError
from chronolog.runtime.fleet import kafka_clients
from chronolog.runtime.fleet.batching import Batching
from chronolog.runtime.fleet.config import (
    RELAYS,
    ServiceConfig,
    consumer_settings,
    make_stage,
    producer_settings,
    relay_settings,
)
from chronolog.runtime.fleet.epochs import (
    BARRIER_KEY,
    Alignment,
    Completed,
    barrier_of,
    barrier_record,
    committed_record,
    epoch_offsets,
    is_replay,
    replay_record,
)
from chronolog.runtime.fleet.metrics import ServiceMetrics
from chronolog.runtime.fleet.restore import last_committed, open_store
from chronolog.runtime.fleet.topology import build_topology
from chronolog.stages.interface import Out
from chronolog.state import changelog
from chronolog.state.changelog import Captured
from chronolog.state.store import Store

log = logging.getLogger("chronolog.service")

_DEBUG = bool(os.environ.get("CHRONOLOG_DEBUG_COMMITS"))


class Skipped:
    """A consumed record dropped at the gate (runtime/epochs.py): the loop only
    moves its input's position past it."""

    __slots__ = ("msg",)

    def __init__(self, msg: object) -> None:
        self.msg = msg

    def error(self) -> None:
        return None

    def topic(self) -> str:
        return self.msg.topic()  # type: ignore[attr-defined]

    def partition(self) -> int:
        return self.msg.partition()  # type: ignore[attr-defined]

    def offset(self) -> int:
        return self.msg.offset()  # type: ignore[attr-defined]

    def timestamp(self) -> tuple[int, int]:
        return 0, 0


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
        # epochs (runtime/epochs.py): the service that reads the input starts them
        # at each commit; the others complete one when every input delivered its
        # barrier, commit there, and forward it if they feed another service
        self.head = self.names.facts in spec.reads
        self.forwards = cfg.service in ("ingest", "grounding", "reasoner")
        # a relay sends its records at once, without a transaction, and stores
        # its state (in a transaction of its own) only at the end of an epoch;
        # after a restart it sends again what followed that epoch, and its
        # readers drop the repeats at their gate (runtime/epochs.py)
        self.relay = cfg.service in RELAYS
        self.gated = [tp for tp in self.inputs
                      if self.roles[tp[0]] == "grounded" or self.roles[tp[0]].startswith("stratum.")]
        self._data_error: str | None = None
        # a relay writes its state on a thread of its own (Service._store)
        self._state_thread = ThreadPoolExecutor(1, "state") if self.relay else None
        self._storing: Future | None = None
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

    # ------------------------------------------------------------ clients

    def _clients(self) -> None:
        # tunables first (the user's settings override them), then what exactly-once needs (config.py)
        self.consumer = kafka_clients.consumer(consumer_settings(self.cfg))
        self.producer = kafka_clients.producer(producer_settings(self.cfg))
        self.producer.init_transactions(60)  # fences and aborts what an earlier instance left open
        if self.relay:  # its records: idempotent (in order, no duplicates), no transaction
            self.data = kafka_clients.producer({**relay_settings(self.cfg), "on_delivery": self._undelivered})

    def _undelivered(self, err: object, msg: object) -> None:
        """A relay's record the broker did not take (after librdkafka's retries)."""
        if err is not None and self._data_error is None:
            self._data_error = str(err)

    # ------------------------------------------------------------ state

    def restore(self) -> dict[tuple[str, int], int]:
        """Load the state of the last committed transaction (runtime/fleet/restore.py);
        return where to resume each input."""
        got = last_committed(self.cfg, self.db, self.changelog, self.inputs)
        if got is None:
            return {}
        self.stage = got.stage
        self.epoch, self._passed = got.epoch, got.passed
        return got.resume

    # ------------------------------------------------------------ loop

    def run(self, ready: callable | None = None) -> None:  # type: ignore[valid-type]
        signal.signal(signal.SIGTERM, lambda *a: setattr(self, "stopping", True))
        signal.signal(signal.SIGINT, lambda *a: setattr(self, "stopping", True))
        self.port = self.metrics.serve(self.cfg.metrics_port)
        if self.store is None:
            self.store = open_store(self.cfg)
        self.db = self.store
        self._clients()
        resume = self.restore()
        progress = self.stage.progress()
        if progress.get("program_version") is not None:  # restored after an upgrade: that version runs
            self.metrics.running(str(progress["program_version"]))
        self._counted: dict[str, int] = {k: v or 0 for k, v in progress.items()
                                         if k not in ("time_point", "program_version")}
        self.positions = {tp: resume.get(tp, OFFSET_BEGINNING) for tp in self.inputs}
        self.consumer.assign([TopicPartition(t, p, off) for (t, p), off in self.positions.items()])
        if not self.head:
            self.alignment = Alignment(self.inputs, self.epoch, self._passed, self.gated)
        if self.relay:  # first of all: its readers drop what a predecessor left unfinished
            self._send([Out(self._feeds(), 0, replay_record(self.epoch))])
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
        batching = Batching(cfg.commit_gap, cfg.hold, cfg.commit_interval)
        batching.began = batching.last_commit = time.monotonic()
        stored_at = batching.began  # a relay's last state commit
        try:
            while True:
                # wait for one record, then take what is already fetched: batches
                # under load, no added latency when records trickle in
                msgs = [] if self.stopping else kafka_clients.take(
                    self.consumer, cfg.batch, batching.wait(cfg.poll, time.monotonic()))
                for chunk, completed in self._epochs(msgs):  # split where an epoch completes
                    t0 = time.perf_counter()
                    outs, lines, stamps, got = self._process(chunk)
                    if got:
                        self._observe_batch(stamps, time.perf_counter() - t0)
                        consumed_at = consumed_at or time.time()
                    pending += stamps
                    if self.relay:
                        self._send(outs)
                        if completed is not None:  # the epoch's records are usable downstream now
                            self._send(self._barriers(completed))
                            self._observe_released(pending, consumed_at)
                            pending, consumed_at = [], 0.0
                            if time.monotonic() - stored_at >= cfg.state_interval and self._stored():
                                self._store(self._capture(at_epoch=True))
                                self._collect()
                                stored_at = time.monotonic()
                        continue
                    now = time.monotonic()
                    batching.add(outs, lines, got, now)
                    if completed is not None or batching.due(now, self.stopping):  # runtime/batching.py
                        t1 = time.perf_counter()
                        outs, lines = batching.take(now)
                        outs += self._barriers(completed)
                        self._commit(outs, lines, pending, at_epoch=completed is not None)
                        if consumed_at:
                            self.metrics.hop_commit.observe(max(0.0, time.time() - consumed_at))
                            consumed_at = 0.0
                        self._collect()
                        batching.committed(time.monotonic())
                        if _DEBUG:
                            log.info("%d records in, %d out: process %.1f ms, commit %.1f ms", len(chunk),
                                     len(outs) + len(lines), (t1 - t0) * 1000, (time.perf_counter() - t1) * 1000)
                        pending = []
                self._stored()  # a failed state commit stops the service here
                if self.stopping:
                    break
                if time.monotonic() - last_lag > 2.0:
                    last_lag = time.monotonic()
                    self._lag()
            if self._storing is not None:  # the last state commit, done (or its error raised)
                self._storing.result(120)
                self._storing = None
        except KafkaException as exc:
            raise ChronologError(f"error: {self.cfg.instance}: Kafka: {exc}") from None
        finally:
            self.metrics.up.set(0)
            if self._state_thread is not None:  # lets a state commit in flight finish
                self._state_thread.shutdown(wait=True)
            self.consumer.close()
            if self.relay:  # what it sent, on its way (a restart would send it again anyway)
                self.data.flush(10)

    def _epochs(self, msgs: list) -> list[tuple[list, int | None]]:
        """A consumed batch cut where an epoch completes: (records, the epoch
        they complete or None), records of an input already past the open
        epoch's barrier held back (runtime/epochs.py).  Barriers stay in the
        records, to move their input's position; the stage never sees them."""
        if self.alignment is None or not self.gated and not self.alignment.waiting() and not any(
                (v := m.value()) is not None and v.startswith(BARRIER_KEY) for m in msgs):
            return [(msgs, None)]  # the usual batch: no barrier in it, no input held
        out: list[tuple[list, int | None]] = []
        chunk: list = []
        offer = self.alignment.offer
        for msg in msgs:
            if msg.error():
                chunk.append(msg)
                continue
            value = msg.value()
            for got in offer((msg.topic(), msg.partition()), msg, barrier_of(value), is_replay(value)):
                if isinstance(got, Completed):
                    out.append((chunk, got.epoch))
                    chunk = []
                else:
                    chunk.append(Skipped(got.item) if got.skip else got.item)
        out.append((chunk, None))
        return out

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

    def _process(self, msgs: list) -> tuple[list, list[bytes], list[float], bool]:
        """Feed a batch to the stage: the records to produce, the answer lines
        (kept apart: the bulk of the output), record timestamps, whether any
        record was consumed."""
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
                continue  # a barrier passed (_epochs): its position only
            records.append((roles[topic], topic, partition, offset, value))
        outs, lines = self.stage.process(records)
        progress = self.stage.progress()
        for name, value in progress.items():
            if name == "time_point":
                if value is not None:
                    self.metrics.time_point.set(value)
                continue
            if name == "program_version":  # (a string: the version an upgrade put in force)
                if value is not None:
                    self.metrics.running(str(value))
                continue
            before = self._counted.get(name, 0)
            if value is not None and value > before:
                getattr(self.metrics, name).inc(value - before)
            self._counted[name] = value or 0
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

    def _observe_batch(self, stamps: list[float], process_seconds: float) -> None:
        """The per-hop breakdown (``bench fleet --breakdown``, the dashboard's
        "Where the time goes"): how long the batch's oldest and newest records
        waited between their producer and this consumer, and the stage's own work."""
        now = time.time()
        for ts in stamps:
            self.metrics.hop_fetch.observe(max(0.0, now - ts))
        self.metrics.process.observe(process_seconds)

    def _saved_epoch(self, at_epoch: bool) -> dict[str, int]:
        """The epoch state a commit stores.  Where an epoch completed, every input
        is exactly at its barrier (``_epochs`` has already aligned the rest of
        the batch: the alignment's own state is ahead of this chunk's, and saving
        it would have a gate take re-read records for repeats).  Elsewhere (the
        end of a consumed batch) the alignment's state is the chunk's."""
        return epoch_offsets(self.epoch, None if at_epoch else self.alignment)

    def _feeds(self) -> str:
        """The role of the topic a relay writes."""
        return "grounded" if self.cfg.service == "grounding" else "stratum"

    def _send(self, outs: list) -> None:
        """A relay's records, sent now by its idempotent producer (no transaction)."""
        if not outs:
            return
        produce = kafka_clients.sender(self.data)
        for out in outs:
            produce(self._topic(out.topic), out.value, out.key, self._partition(out))
        self.data.poll(0)
        self.metrics.events_out.inc(len(outs))

    def _flush_data(self) -> None:
        """Every record a relay sent is on the broker (before its state says
        they were sent: a restart after that state would not send them again)."""
        left = self.data.flush(60)
        if left or self._data_error is not None:
            raise ChronologError(f"error: {self.cfg.instance}: the broker did not take its records "
                                 f"({self._data_error or f'{left} still queued after 60 s'})")

    def _observe_released(self, stamps: list[float], consumed_at: float) -> None:
        """A relay's latency metrics, where a transaction's would be observed at
        its commit: its readers take an epoch's records at its barrier."""
        now = time.time()
        for ts in stamps:
            self.metrics.latency.observe(max(0.0, now - ts))
        if consumed_at:
            self.metrics.hop_commit.observe(max(0.0, now - consumed_at))

    def _partition(self, out: Out) -> int:
        """Where a record goes: ingest routes by key; a stage's own stream stays
        on its partition; the other topics have one."""
        if out.topic == "ingested":
            return out.partition
        return self.cfg.partition if out.topic in ("grounded", "stratum") else 0

    def _topic(self, role: str) -> str:
        if role == "stratum":
            return self.names.stratum(self.cfg.stratum or 1)
        return getattr(self.names, role)

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

    def _commit(self, outs: list, lines: list[bytes], stamps: list[float], at_epoch: bool = False) -> None:
        """One transaction: outputs, answer lines, the changed journal entries and
        the snapshot on the changelog, the input offsets; then the same state
        into RocksDB in one atomic write."""
        self._write(self._capture(at_epoch), outs, lines, stamps)

    def _capture(self, at_epoch: bool) -> Captured:
        """The stage's state as a commit stores it, taken now (bytes: the stage
        may move on while a relay's state is written)."""
        offsets = {f"{t}:{p}": off for (t, p), off in self.positions.items() if off >= 0}
        offsets.update(self._saved_epoch(at_epoch))
        return changelog.capture(self.stage, offsets)

    def _store(self, state: Captured) -> None:
        """A relay's state, written on its state thread while the relay goes on
        sending: a commit (a flush of what it sent, then a transaction, then
        RocksDB) takes 5-35 ms on the bundled broker, and a relay that waited
        for it 4 times a second held up every epoch passing through it then.
        One at a time, in order: the loop starts the next only when this one is
        done, and a state taken while one is in flight waits for it (its
        journal entries are in no other commit)."""
        if self._storing is not None:
            self._storing.result()
            self._storing = None
        assert self._state_thread is not None
        self._storing = self._state_thread.submit(self._write, state, [], [], [])

    def _stored(self) -> bool:
        """Whether no state commit is in flight; raises the error of one that failed
        (the service stops, and its restart resumes from the last stored state)."""
        future = self._storing
        if future is None:
            return True
        if not future.done():
            return False
        self._storing = None
        future.result()
        return True

    def _write(self, state: Captured, outs: list, lines: list[bytes], stamps: list[float]) -> None:
        """The transaction of ``_commit`` (and of a relay's ``_store``)."""
        producer = self.producer
        began = time.perf_counter()
        producer.begin_transaction()
        # positional arguments: parsing keywords cost 12-20% of each produce
        # call (output makes one per answer line)
        produce = kafka_clients.sender(producer)  # waits while librdkafka's queue is full
        try:
            for out in outs:
                produce(self._topic(out.topic), out.value, out.key, self._partition(out))
            answers, direct = self.names.answers, producer.produce
            for line in lines:  # the bulk of output's records: the wrapper only when the queue is full
                try:
                    direct(answers, line, None, 0)
                except BufferError:
                    produce(answers, line, None, 0)
            topic, partition = self.changelog
            records = changelog.changelog_records(state)  # journal entries, then the snapshot
            for k, v in records[:-1]:
                produce(topic, v, k, partition)
            # the input offsets travel in the snapshot, in this same transaction:
            # no offset commit to the consumer group (two more round trips per
            # commit, measured as much as the commit itself on the bundled broker)
            k, v = records[-1]
            if self.relay:
                self._flush_data()
            landed: list[int] = []
            produce(topic, v, k, partition,
                    on_delivery=lambda err, msg: landed.append(-1 if err else msg.offset()))
            producer.commit_transaction(60)
            producer.poll(0)  # the snapshot's delivery report, if commit_transaction did not serve it
        except Exception:
            try:
                producer.abort_transaction(30)
            finally:
                raise
        self.metrics.transaction.observe(time.perf_counter() - began)
        now = time.time()
        for ts in stamps:
            self.metrics.latency.observe(max(0.0, now - ts))
        self.metrics.transactions.inc()
        self.metrics.events_out.inc(len(outs) + len(lines))
        # one atomic write: entries, snapshot and the offsets they belong to
        changelog.store_commit(self.db, state, landed[-1] if landed else None)
        self.metrics.state_size.set(max(self.db.size(), len(state.snapshot)))

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
