"""How a service commits: one Kafka transaction, then RocksDB.

A commit writes, in ONE transaction, what the batches since the last commit
produced (records and answer lines) and the state of the stage on the
service's compacted changelog partition: the journal entries that changed,
then the snapshot, which carries the consumed input offsets; then the same
state into RocksDB in one atomic write (``state.changelog``).  So after
``kill -9`` nothing is lost and nothing is published twice (``restore.py``
starts from that state).  The offsets are not also committed to a consumer
group inside the transaction: that took two more broker round trips per
commit (``send_offsets_to_transaction`` measured as long as the commit
itself).

A relay's commits hold its state only (its records left already,
``relay.py``), and run on a thread of their own (``Commits.store``), so the
relay never waits for them.
"""

from __future__ import annotations

import time
from concurrent.futures import Future, ThreadPoolExecutor
from typing import Any

from chronolog.contract.topics import TopicNames
from chronolog.runtime.fleet import kafka_clients
from chronolog.runtime.fleet.metrics import ServiceMetrics
from chronolog.runtime.fleet.relay import RelaySender
from chronolog.runtime.fleet.routing import Routes
from chronolog.stages.interface import Out
from chronolog.state import changelog
from chronolog.state.changelog import Captured
from chronolog.state.store import Store


class Commits:
    """The commits of one service instance: its transactional ``producer``
    (transactions initialised), its ``db``, its changelog partition ``part``;
    ``relay``: a relay's sender, flushed before each commit of its state."""

    def __init__(self, producer: Any, db: Store, names: TopicNames, part: tuple[str, int], routes: Routes,
                 metrics: ServiceMetrics, relay: RelaySender | None = None) -> None:
        self.producer = producer
        self.db = db
        self.answers = names.answers
        self.part = part
        self.routes = routes
        self.metrics = metrics
        self.relay = relay
        # a relay writes its state on a thread of its own (``store``)
        self.thread = ThreadPoolExecutor(1, "state") if relay is not None else None
        self.storing: Future | None = None

    def write(self, state: Captured, outs: list[Out], lines: list[bytes], stamps: list[float]) -> None:
        """One transaction: ``outs``, the answer ``lines``, the changed journal entries
        and the snapshot on the changelog, the input offsets; then the same state
        into RocksDB in one atomic write.  ``stamps``: the broker timestamps of the
        records consumed since the last commit (the latency metric)."""
        producer = self.producer
        began = time.perf_counter()
        producer.begin_transaction()
        # positional arguments: parsing keywords cost 12-20% of each produce
        # call (output makes one per answer line)
        produce = kafka_clients.sender(producer)  # waits while librdkafka's queue is full
        try:
            topic_of, partition_of = self.routes.topic, self.routes.partition
            for out in outs:
                produce(topic_of(out.topic), out.value, out.key, partition_of(out))
            answers, direct = self.answers, producer.produce
            for line in lines:  # the bulk of output's records: the wrapper only when the queue is full
                try:
                    direct(answers, line, None, 0)
                except BufferError:
                    produce(answers, line, None, 0)
            topic, partition = self.part
            records = changelog.changelog_records(state)  # journal entries, then the snapshot
            for k, v in records[:-1]:
                produce(topic, v, k, partition)
            # the input offsets travel in the snapshot, in this same transaction:
            # no offset commit to the consumer group (two more round trips per
            # commit, measured as much as the commit itself on the bundled broker)
            k, v = records[-1]
            if self.relay is not None:
                self.relay.flush()
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
        self.metrics.committed(time.perf_counter() - began, stamps, len(outs) + len(lines))
        # one atomic write: entries, snapshot and the offsets they belong to
        changelog.store_commit(self.db, state, landed[-1] if landed else None)
        self.metrics.state_size.set(max(self.db.size(), len(state.snapshot)))

    def store(self, state: Captured) -> None:
        """A relay's state, written on its state thread while the relay goes on
        sending: a commit (a flush of what it sent, then a transaction, then
        RocksDB) takes 5-35 ms on the bundled broker, and a relay that waited
        for it 4 times a second held up every epoch passing through it then.
        One at a time, in order: the loop starts the next only when this one is
        done, and a state taken while one is in flight waits for it (its
        journal entries are in no other commit)."""
        if self.storing is not None:
            self.storing.result()
            self.storing = None
        assert self.thread is not None
        self.storing = self.thread.submit(self.write, state, [], [], [])

    def stored(self) -> bool:
        """Whether no state commit is in flight; raises the error of one that failed
        (the service stops, and its restart resumes from the last stored state)."""
        future = self.storing
        if future is None:
            return True
        if not future.done():
            return False
        self.storing = None
        future.result()
        return True

    def finish(self, timeout: float = 120) -> None:
        """The last state commit, done (or its error raised)."""
        if self.storing is not None:
            self.storing.result(timeout)
            self.storing = None

    def close(self) -> None:
        """Lets a state commit in flight finish."""
        if self.thread is not None:
            self.thread.shutdown(wait=True)
