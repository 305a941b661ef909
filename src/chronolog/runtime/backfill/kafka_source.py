"""Reading Kafka topics with confluent-kafka, and a Spark Python data source on top.

The Spark Kafka connector is a JVM jar that is not shipped with PySpark; the
Python DataSource API (``pyspark.sql.datasource``) lets a Spark job read a
topic through confluent-kafka instead: one input partition per topic
partition, read from the earliest offset in ``read_committed`` mode (aborted
transactions are skipped).  The end of a partition is where the consumer
stays idle for ``idle`` seconds: the bundled broker's high watermark is not
reliable, so it is not used.

    spark.dataSource.register(KafkaTopicSource)
    spark.read.format("chronolog-kafka").option("bootstrap", b).option("topic", t).load()

gives the columns ``partition, offset, timestamp, key, value`` (``value`` is
the UTF-8 text of the record).
"""

from __future__ import annotations

import time
import uuid
from collections.abc import Iterator

from chronolog.core.errors import ChronologError
from chronolog.runtime.fleet import kafka_clients
from chronolog.runtime.fleet.topic_reader import FIRST_OFFSET

SCHEMA = "partition int, offset long, timestamp long, key string, value string"
Record = tuple[int, int, int, "str | None", str]


def topic_partitions(bootstrap: str, topic: str, timeout: float = 10.0) -> list[int]:
    """The partition ids of ``topic``; an error if it does not exist."""
    t = kafka_clients.topic_metadata(kafka_clients.admin({"bootstrap.servers": bootstrap}), topic, timeout)
    if t is None or not t.partitions:
        raise ChronologError(f"error: cannot read topic {topic} on {bootstrap}: it does not exist")
    return sorted(t.partitions)


def _text(data: bytes | None) -> str | None:
    return None if data is None else data.decode("utf-8", "surrogateescape")


def read_partition(
    bootstrap: str, topic: str, partition: int, start: int | None = None, idle: float = 1.5
) -> Iterator[Record]:
    """The committed records of one partition from ``start`` (default: the earliest) until
    the consumer has been idle for ``idle`` seconds."""
    from confluent_kafka import KafkaError, TopicPartition  # noqa: PLC0415 (confluent-kafka: ~80 ms, only with a broker)


    consumer = kafka_clients.consumer({
        "bootstrap.servers": bootstrap,
        "group.id": f"chronolog-reader-{uuid.uuid4().hex[:8]}",
        "enable.auto.commit": False,
        "isolation.level": "read_committed",
        "auto.offset.reset": "earliest",
    })
    try:
        consumer.assign([TopicPartition(topic, partition, FIRST_OFFSET if start is None else start)])
        quiet_since = time.monotonic()
        while time.monotonic() - quiet_since < idle:
            msgs = consumer.consume(500, timeout=min(0.25, idle))
            for msg in msgs:
                if msg.error():
                    if msg.error().code() == KafkaError._PARTITION_EOF:
                        continue
                    raise ChronologError(f"error: reading {topic}[{partition}]: {msg.error()}")
                _, ts = msg.timestamp()
                yield partition, msg.offset(), ts, _text(msg.key()), _text(msg.value()) or ""
            if msgs:
                quiet_since = time.monotonic()
    finally:
        consumer.close()


try:
    from pyspark.sql.datasource import DataSource, DataSourceReader, InputPartition
except ImportError:  # pragma: no cover - pyspark is the optional "spark" extra
    pass
else:

    class _TopicPartition(InputPartition):
        def __init__(self, partition: int) -> None:
            super().__init__(partition)
            self.partition = partition

    class _Reader(DataSourceReader):
        def __init__(self, options: dict) -> None:
            self.bootstrap = options["bootstrap"]
            self.topic = options["topic"]
            self.idle = float(options.get("idle", 1.5))

        def partitions(self) -> list[_TopicPartition]:
            return [_TopicPartition(p) for p in topic_partitions(self.bootstrap, self.topic)]

        def read(self, partition: _TopicPartition) -> Iterator[Record]:  # type: ignore[override]
            yield from read_partition(self.bootstrap, self.topic, partition.partition, idle=self.idle)

    class KafkaTopicSource(DataSource):
        """``spark.read.format("chronolog-kafka")``: options ``bootstrap``, ``topic``, ``idle``."""

        @classmethod
        def name(cls) -> str:
            return "chronolog-kafka"

        def schema(self) -> str:
            return SCHEMA

        def reader(self, schema: object) -> _Reader:
            return _Reader(dict(self.options))
