"""Read a topic of a running fleet from its beginning, without joining a group or writing
anything: what ``chronolog explain`` on a fleet and ``chronolog upgrade`` read.

The bundled broker's high watermark can be wrong, so the end is where no record has come
for ``idle`` seconds (as ``chronolog tail --idle-exit`` decides it)."""

from __future__ import annotations

import heapq
import os
import time
from collections.abc import Callable
from typing import Any

from confluent_kafka import TopicPartition

from chronolog.core.errors import ChronologError
from chronolog.runtime.fleet import kafka_clients

Record = tuple[str, int, int, bytes, float]  # topic, partition, offset, value, broker timestamp (s)
# Where a reader of a whole partition starts: offset 0, and (with ``auto.offset.reset``
# ``earliest``) the earliest offset kept where that is gone.  The bundled broker answers the
# query for the logical beginning (``OFFSET_BEGINNING``) only after 0.5 s.
FIRST_OFFSET = 0


def from_the_start(bootstrap: str, topic: str, conf: dict[str, Any], name: str) -> Any:
    """A consumer of every partition of ``topic`` from its beginning (``assign``, no group
    join; committed records only); an error naming the topic if it does not exist.  It starts
    at ``FIRST_OFFSET`` (``chronolog upgrade``, ``tail`` and ``explain`` waited for the logical
    beginning)."""
    conf = {"bootstrap.servers": bootstrap, **conf}
    meta = kafka_clients.topic_metadata(kafka_clients.admin(conf), topic, timeout=15)
    if meta is None:
        raise ChronologError(f"error: topic {topic} does not exist on {bootstrap}")
    consumer = kafka_clients.consumer({**conf, "group.id": f"{name}-{os.getpid()}", "enable.auto.commit": False,
                                       "isolation.level": "read_committed", "fetch.wait.max.ms": 10,
                                       "auto.offset.reset": "earliest"})
    consumer.assign([TopicPartition(topic, p, FIRST_OFFSET) for p in meta.partitions])
    return consumer


def read_topic(bootstrap: str, topic: str, conf: dict[str, Any], idle: float = 1.5,
               stop: Callable[[Record], bool] = lambda r: False, timeout: float = 600.0) -> list[Record]:
    """The committed records of every partition of ``topic``: each partition in offset order,
    the partitions merged by the broker's time stamps; ``stop``: a record after which nothing
    more is needed."""
    consumer = from_the_start(bootstrap, topic, conf, "chronolog-read")
    out: list[Record] = []
    last = time.monotonic()
    deadline = last + timeout
    try:
        while time.monotonic() < deadline:
            msg = consumer.poll(0.1)
            if msg is None or msg.error():
                if time.monotonic() - last > idle:
                    break
                continue
            last = time.monotonic()
            _, stamp = msg.timestamp()
            record = (topic, msg.partition(), msg.offset(), msg.value() or b"", stamp / 1000.0)
            out.append(record)
            if stop(record):
                break
    finally:
        consumer.close()
    parts: dict[int, list[Record]] = {}
    for record in out:
        parts.setdefault(record[1], []).append(record)
    # each partition in offset order, the partitions merged by the broker's time stamps
    return list(heapq.merge(*(sorted(rs, key=lambda r: r[2]) for _, rs in sorted(parts.items())), key=lambda r: r[4]))
