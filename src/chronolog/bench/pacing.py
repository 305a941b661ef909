"""Publishing at a pace and the answer latencies it measures: shared by ``chronolog bench
fleet`` (bench/fleet.py) and its floor of hops that do nothing (bench/floor.py)."""

from __future__ import annotations

import math
import time

from chronolog.runtime.fleet import kafka_clients


def publish_paced(producer, topic: str, lines: list[bytes], per_tp: int, rate: float) -> dict[int, float]:  # type: ignore[no-untyped-def]
    """``lines`` (``per_tp`` per time point) produced at ``rate`` a second; when
    each point was closed, i.e. the first line of the next one was produced."""
    produce = kafka_clients.sender(producer)
    closed_at: dict[int, float] = {}
    start = time.monotonic()
    for n, line in enumerate(lines):
        due = start + n / rate
        while (now := time.monotonic()) < due:
            time.sleep(min(0.001, due - now))
        if n % per_tp == 0 and n:
            closed_at[n // per_tp - 1] = time.monotonic()
        produce(topic, line)
        producer.poll(0)
    producer.flush(30)
    return closed_at


def latencies(closed_at: dict[int, float], first_seen: dict[int, float]) -> list[float]:
    """Each closed point's answer latency, in time order; a point whose answer
    never came counts as infinitely late (``math.inf``) rather than not at all,
    so a fleet that falls behind shows in the percentiles instead of leaving
    only its early, quick answers in them."""
    return [first_seen[t] - c if t in first_seen else math.inf for t, c in closed_at.items()]
