"""Kafka clients whose librdkafka log goes through Python logging.

librdkafka writes its own log lines (``%6|1700000000.123|FAIL|rdkafka#producer-3|
... Disconnected``) straight to stderr unless a client is given a ``logger``;
those lines then reach the terminal of ``chronolog up``, ``bench fleet`` and
``publish`` users, although a broker closing an idle connection is normal.
Every client chronolog makes is created here, with the ``chronolog.librdkafka``
logger: services write it into their log files under ``STATE_DIR/run/``, and
it shows warnings and errors only (librdkafka's level 5 notice and 6 info,
which include routine disconnects, are below WARNING) unless the user sets
that logger's level lower (``CHRONOLOG_LIBRDKAFKA_LOG=DEBUG``).
"""

from __future__ import annotations

import logging
import os
import time
from typing import Any

from confluent_kafka import Consumer, Producer
from confluent_kafka.admin import AdminClient

LOGGER = logging.getLogger("chronolog.librdkafka")
LOGGER.setLevel(os.environ.get("CHRONOLOG_LIBRDKAFKA_LOG", "WARNING").upper())


# A new client's first connection: librdkafka connects to one bootstrap broker and, when a
# request (the metadata ``list_topics`` asks for, a consumer's leader query) comes before that
# connection is up, suppresses another attempt for half of ``reconnect.backoff.ms`` (at least
# 11 ms) — 50 ms by default, which about half of the fresh clients measured on the bundled
# broker waited (1-4 ms the others).  Every short-lived client paid it: ``chronolog upgrade``
# makes two (its request was delivered after 50-60 ms, docs/benchmarks.md#program-upgrades),
# ``tail`` and ``explain`` one or two.  A first backoff of 20 ms makes it the 11 ms floor; the
# backoff still doubles up to ``reconnect.backoff.max.ms`` (10 s) while a broker stays
# unreachable.  The user's settings come over it.
CONNECT_TUNABLES = {"reconnect.backoff.ms": 20}


def _with_logger(conf: dict[str, Any]) -> dict[str, Any]:
    return {"logger": LOGGER, **CONNECT_TUNABLES, **conf}


def consumer(conf: dict[str, Any]):  # type: ignore[no-untyped-def]
    return Consumer(_with_logger(conf))


def producer(conf: dict[str, Any]):  # type: ignore[no-untyped-def]
    return Producer(_with_logger(conf))


def admin(conf: dict[str, Any]):  # type: ignore[no-untyped-def]
    return AdminClient(_with_logger(conf))


def topic_metadata(client, topic: str, timeout: float):  # type: ignore[no-untyped-def]
    """``topic``'s metadata (a ``TopicMetadata``), or None where it does not exist or has an
    error.  It asks for every topic's metadata: asked for one missing topic by name, a broker
    that auto-creates topics (the bundled one does, with 4 partitions) creates it, so a
    mistyped prefix would leave an empty topic behind instead of an error."""
    found = client.list_topics(timeout=timeout).topics.get(topic)
    return None if found is None or found.error is not None else found


def sender(producer, timeout: float = 60.0):  # type: ignore[no-untyped-def]
    """``producer.produce`` (same arguments) that waits while the producer's
    local queue is full instead of failing.

    librdkafka queues at most ``queue.buffering.max.messages`` (100,000 by
    default) records not yet acknowledged; one more raises ``BufferError``.
    A service's transaction can hold more than that (an output batch of
    2,000 time points with 50 answer lines each), and so can a published
    file or a backfill's corrections: failing there would abort the
    transaction and fail again on every retry of the same batch.  Waiting
    for the broker to acknowledge what is queued frees room (inside a
    transaction too: the records are sent, only their commit waits).  A
    queue that stays full for ``timeout`` seconds (the broker acknowledges
    nothing) raises ``BufferError`` saying so."""
    produce, poll = producer.produce, producer.poll

    def send(*args, **kwargs) -> None:  # type: ignore[no-untyped-def]
        try:
            produce(*args, **kwargs)
            return
        except BufferError:
            pass
        deadline = time.monotonic() + timeout
        while True:
            poll(0.05)  # serve deliveries until there is room
            try:
                produce(*args, **kwargs)
                return
            except BufferError:
                if time.monotonic() > deadline:
                    raise BufferError(f"the producer's queue stayed full for {timeout:g} s: "
                                      "the broker acknowledged nothing") from None

    return send


def take(consumer, most: int = 1000, wait: float = 0.01) -> list:  # type: ignore[no-untyped-def]
    """The next records: one as soon as it is there (waiting at most ``wait``
    seconds), then whatever else is already fetched, up to ``most`` (the
    services' loop and the bench's watchers read this way).
    ``consumer.consume(most, wait)`` returns only once it has ``most`` records
    or ``wait`` is over, so a trickle of records waits out ``wait`` every time
    (measured: 10.8 ms median for ``consume(1000, 0.01)`` against 1.8 ms this
    way; the bench's answer watchers added it to every latency they measured
    before round 13, docs/benchmarks.md)."""
    first = consumer.poll(wait)
    return [] if first is None else [first] + consumer.consume(most - 1, 0)


# Each produce batch is an object the bundled broker keeps and lists again on
# every fetch that reads past it, so small batches make it slower the longer it
# runs (docs/benchmarks.md, "the bundled broker's cost per batch"); 15 ms
# gathers a 1,000 events/s stream into about 70 batches a second (measured
# against 5, 10 and 25: docs/benchmarks.md).
PUBLISH_LINGER_MS = 15.0


def publish_settings(conf: dict, linger_ms: float | None = None) -> dict:
    """The publishing producer's settings: the user's client settings over our
    linger default, ``--linger-ms`` over both; always idempotent (a retried
    send is never published twice)."""
    settings = {"linger.ms": PUBLISH_LINGER_MS, **conf, "enable.idempotence": True}
    if linger_ms is not None:
        settings["linger.ms"] = linger_ms
    return settings
