"""The bundled broker really starts, and the topology's topics are created on it."""

from __future__ import annotations

from confluent_kafka import Consumer, Producer, TopicPartition
from confluent_kafka.admin import AdminClient

from chronolog.engine.plan import plan_program
from chronolog.lang.lars import parse_lars
from chronolog.runtime.broker import LocalBroker, create_topics
from chronolog.topology import build_topology


def test_bundled_broker_topics_and_a_transaction(tmp_path):
    topo = build_topology(plan_program(parse_lars("a(X) :- p(X) [3].\nb(X) :- a(X), not c(X).\nc(X) :- q(X).\n")), partitions=2)
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
