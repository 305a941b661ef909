"""How a relay's records leave: at once, outside any transaction.

Grounding and the reasoners are relays (``Service.relay``,
docs/fleet/exactly-once.md): what they make goes out as soon as it is made,
by an idempotent producer (in order, no duplicates), and their commits
(``commit.py``) hold only their state, at the end of an epoch, once every
record sent before it is on the broker (``RelaySender.flush``).  After a
restart a relay sends again what followed its state, and its readers' gates
drop the repeats (``epochs.py``).
"""

from __future__ import annotations

from typing import Any

from chronolog.core.errors import ChronologError
from chronolog.runtime.fleet import kafka_clients
from chronolog.runtime.fleet.config import ServiceConfig, relay_settings
from chronolog.runtime.fleet.metrics import ServiceMetrics
from chronolog.runtime.fleet.routing import Routes
from chronolog.stages.interface import Out


class RelaySender:
    """A relay's producer of its records (``producer``: one given, for tests)."""

    def __init__(self, cfg: ServiceConfig, routes: Routes, metrics: ServiceMetrics, producer: Any = None) -> None:
        self.instance = cfg.instance
        self.routes = routes
        self.metrics = metrics
        self.error: str | None = None  # the first record the broker did not take
        self.producer = producer if producer is not None else kafka_clients.producer(
            {**relay_settings(cfg), "on_delivery": self._undelivered})

    def _undelivered(self, err: object, msg: object) -> None:
        """A record the broker did not take (after librdkafka's retries)."""
        if err is not None and self.error is None:
            self.error = str(err)

    def send(self, outs: list[Out]) -> None:
        """Records, sent now (no transaction)."""
        if not outs:
            return
        produce = kafka_clients.sender(self.producer)
        topic, partition = self.routes.topic, self.routes.partition
        for out in outs:
            produce(topic(out.topic), out.value, out.key, partition(out))
        self.producer.poll(0)
        self.metrics.events_out.inc(len(outs))

    def flush(self) -> None:
        """Every record sent is on the broker (before the state says they were
        sent: a restart after that state would not send them again)."""
        left = self.producer.flush(60)
        if left or self.error is not None:
            raise ChronologError(f"error: {self.instance}: the broker did not take its records "
                                 f"({self.error or f'{left} still queued after 60 s'})")

    def close(self) -> None:
        """What it sent, on its way (a restart would send it again anyway)."""
        self.producer.flush(10)
