"""The bundled broker really starts, and the topology's topics are created on it."""

from __future__ import annotations

import pytest
from confluent_kafka import Consumer, Producer, TopicPartition
from confluent_kafka.admin import AdminClient, NewTopic

from chronolog.dialects.lars.layout import lars_layout
from chronolog.dialects.lars.parser import parse_lars
from chronolog.dialects.lars.plan import plan_program
from chronolog.runtime.fleet.broker import LocalBroker, create_topics
from chronolog.runtime.fleet.topology import build_topology

pytestmark = pytest.mark.fleet


def test_bundled_broker_topics_and_a_transaction(tmp_path):
    plan = plan_program(parse_lars("a(X) :- p(X) [3].\nb(X) :- a(X), not c(X).\nc(X) :- q(X).\n"))
    topo = build_topology(lars_layout(plan), partitions=2)
    with LocalBroker.start(log=tmp_path / "broker.log") as broker:
        created = create_topics(broker.bootstrap, topo)
        assert sorted(created) == sorted(t.name for t in topo.topics)
        assert create_topics(broker.bootstrap, topo) == []  # idempotent
        meta = AdminClient({"bootstrap.servers": broker.bootstrap}).list_topics(timeout=10)
        for t in topo.topics:
            assert len(meta.topics[t.name].partitions) == t.partitions, t.name
        # transactions work on the bundled broker (the fleet's exactly-once relies on them)
        producer = Producer({"bootstrap.servers": broker.bootstrap, "transactional.id": "test-tx"})
        producer.init_transactions(10)
        producer.begin_transaction()
        for t in range(3):
            producer.produce("chronolog.facts", f'{{"t": {t}}}'.encode())
        producer.commit_transaction(10)
        consumer = Consumer({"bootstrap.servers": broker.bootstrap, "group.id": "test",
                             "isolation.level": "read_committed", "enable.auto.commit": False})
        consumer.assign([TopicPartition("chronolog.facts", 0, 0)])
        got = []
        for _ in range(40):
            msg = consumer.poll(0.25)
            if msg is not None and not msg.error():
                got.append(msg.value())
            if len(got) == 3:
                break
        consumer.close()
        assert got == [b'{"t": 0}', b'{"t": 1}', b'{"t": 2}']
    assert broker.process.poll() is not None


def test_a_transaction_larger_than_the_producer_queue_waits_and_commits(tmp_path):
    """A transaction may hold more records than librdkafka queues (an output
    batch with many answer lines): ``kafka_clients.sender`` waits for room
    instead of raising ``BufferError``, and every record is committed once."""
    import pytest

    from chronolog.runtime.fleet import kafka_clients

    with LocalBroker.start(log=tmp_path / "broker.log") as broker:
        admin = AdminClient({"bootstrap.servers": broker.bootstrap})
        admin.create_topics([NewTopic("big", 1, 1)])["big"].result(10)
        conf = {"bootstrap.servers": broker.bootstrap, "queue.buffering.max.messages": 50, "linger.ms": 5}
        plain = kafka_clients.producer({**conf, "transactional.id": "plain"})
        plain.init_transactions(10)
        plain.begin_transaction()
        with pytest.raises(BufferError):  # what a service met before: the transaction failed
            for _ in range(5000):
                plain.produce("big", b"x", None, 0)
        plain.abort_transaction(10)

        producer = kafka_clients.producer({**conf, "transactional.id": "waits"})
        producer.init_transactions(10)
        producer.begin_transaction()
        send = kafka_clients.sender(producer)
        for i in range(500):
            send("big", str(i).encode(), None, 0)
        producer.commit_transaction(30)
        consumer = Consumer({"bootstrap.servers": broker.bootstrap, "group.id": "big",
                             "isolation.level": "read_committed", "enable.auto.commit": False})
        consumer.assign([TopicPartition("big", 0, 0)])
        got: list[bytes] = []
        for _ in range(200):
            got += [m.value() for m in consumer.consume(500, 0.1) if not m.error()]
            if len(got) >= 500:
                break
        consumer.close()
        assert got == [str(i).encode() for i in range(500)]


def test_the_sender_gives_up_with_a_reason_when_nothing_is_acknowledged():
    """A broker that acknowledges nothing keeps the queue full: the sender
    waits ``timeout`` seconds, then says so (no endless wait in a transaction)."""
    import time

    import pytest

    from chronolog.runtime.fleet import kafka_clients

    class Full:
        polls = 0

        def produce(self, *args):
            raise BufferError("Local: Queue full")

        def poll(self, wait):
            Full.polls += 1
            time.sleep(wait)

    began = time.monotonic()
    with pytest.raises(BufferError, match="stayed full for 0.3 s"):
        kafka_clients.sender(Full(), timeout=0.3)("t", b"v", None, 0)
    assert 0.3 <= time.monotonic() - began < 5 and Full.polls >= 3


def test_the_bundled_broker_runs_one_worker_thread_unless_told_otherwise():
    import os

    from chronolog.runtime.fleet.broker import broker_env

    assert broker_env({"PATH": "/bin"}) == {"PATH": "/bin", "TOKIO_WORKER_THREADS": "1"}
    assert broker_env({"TOKIO_WORKER_THREADS": "2"})["TOKIO_WORKER_THREADS"] == "2"  # the user's choice stands
    with LocalBroker.start() as broker:  # the broker really takes it: its worker threads are gone
        threads = len(os.listdir(f"/proc/{broker.process.pid}/task"))
    assert threads <= 2, threads


def test_reading_a_missing_topic_is_an_error_and_leaves_no_topic_behind(tmp_path):
    """The bundled broker creates a topic asked for by name in a metadata request; a
    mistyped prefix given to ``tail``, ``explain``, ``publish``, ``upgrade`` or the
    backfill's Kafka source must fail naming the topic, not leave an empty topic behind."""
    from chronolog.cli.fleet import publish_file
    from chronolog.core.errors import ChronologError
    from chronolog.runtime.backfill.kafka_source import topic_partitions
    from chronolog.runtime.fleet.topic_reader import read_topic
    from chronolog.runtime.fleet.upgrade import new_request, send_request

    events = tmp_path / "events.jsonl"
    events.write_text('{"t": 1, "facts": ["p(a)"]}\n')
    with LocalBroker.start(log=tmp_path / "broker.log") as broker:
        admin = AdminClient({"bootstrap.servers": broker.bootstrap})
        for attempt in (lambda: read_topic(broker.bootstrap, "typo.answers", {}, timeout=10),
                        lambda: topic_partitions(broker.bootstrap, "typo.facts"),
                        lambda: publish_file(str(events), broker.bootstrap, "typo"),
                        lambda: send_request(broker.bootstrap, "typo",
                                             new_request((("p.lars", "q(X) :- p(X).\n"),), "lars", None), {})):
            with pytest.raises(ChronologError, match="typo"):
                attempt()
        assert [t for t in admin.list_topics(timeout=10).topics if t.startswith("typo")] == []
