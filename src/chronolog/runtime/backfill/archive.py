"""The Parquet archive of Kafka topics (``chronolog archive``).

Layout (hive style, so Spark and pyarrow read it as a partitioned dataset)::

    DIR/topic=chronolog.facts/date=2026-11-23/hour=09/partition=0/part-<first>-<last>.parquet

``date`` and ``hour`` (UTC) come from each record's timestamp; ``<first>`` and
``<last>`` are the first and last offsets in the file (20 digits).  Read as a
dataset (Spark, ``pyarrow.dataset`` with hive partitioning) it has the
columns ``offset, partition, timestamp`` (ms), ``key``, ``value`` (the raw
JSON line) and ``t`` (the event's time point; for an answer line its ``t`` or
the start of its interval; null if the value has none), besides ``topic``,
``date`` and ``hour``.  As in every hive layout, the path's columns
(``partition`` among them) are not repeated inside the files.

The archive is its own offset store: on start the archiver resumes every
partition after the largest offset already written, and a file appears
atomically (written under a hidden name, then renamed), so a restart neither
loses nor duplicates records.  Readers still drop duplicate
``(partition, offset)`` pairs and order by them: that is the arrival order
of a topic partition.
"""

from __future__ import annotations

import os
import re
import signal
import threading
import time
import uuid
from collections.abc import Callable, Iterator
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import orjson

from chronolog.core.errors import ChronologError
from chronolog.runtime.backfill.kafka_source import topic_partitions
from chronolog.runtime.fleet import kafka_clients
from chronolog.runtime.fleet.topic_reader import FIRST_OFFSET

_PART = re.compile(r"^part-(\d{20})-(\d{20})\.parquet$")
_INTERVAL_START = re.compile(r"^[\[(]\s*(-?\d+)")


def _schema() -> Any:  # (pyarrow: imported lazily)
    import pyarrow as pa  # noqa: PLC0415 (pyarrow: the optional spark extra)

    return pa.schema([
        ("offset", pa.int64()), ("timestamp", pa.int64()), ("key", pa.string()), ("value", pa.string()),
        ("t", pa.int64()),
    ])


def time_of(value: str) -> int | None:
    """The ``t`` of an event or answer line, or the start of its interval; None otherwise."""
    try:
        obj = orjson.loads(value)
    except orjson.JSONDecodeError:
        return None
    if type(obj) is not dict:
        return None
    t = obj.get("t")
    if type(t) is int and -(2**63) <= t < 2**63:
        return t
    when = obj.get("interval")
    if type(when) is str:
        m = _INTERVAL_START.match(when)
        if m and -(2**63) <= int(m.group(1)) < 2**63:
            return int(m.group(1))
    return None


def topic_dir(root: Path, topic: str) -> Path:
    return root / f"topic={topic}"


def archived_until(root: Path, topic: str) -> dict[int, int]:
    """Per partition, the largest offset already in the archive."""
    out: dict[int, int] = {}
    base = topic_dir(root, topic)
    if not base.is_dir():
        return out
    for path in base.glob("date=*/hour=*/partition=*/part-*.parquet"):
        m = _PART.match(path.name)
        if not m:
            continue
        p = int(path.parent.name.split("=", 1)[1])
        out[p] = max(out.get(p, -1), int(m.group(2)))
    return out


def write_part(root: Path, topic: str, partition: int, date: str, hour: str, rows: list[tuple]) -> Path:
    """Write one file of records (offset, timestamp, key, value) atomically; return its path."""
    import pyarrow as pa  # noqa: PLC0415 (pyarrow: the optional spark extra)
    import pyarrow.parquet as pq  # noqa: PLC0415 (pyarrow: the optional spark extra)

    rows.sort()
    folder = topic_dir(root, topic) / f"date={date}" / f"hour={hour}" / f"partition={partition}"
    folder.mkdir(parents=True, exist_ok=True)
    name = f"part-{rows[0][0]:020d}-{rows[-1][0]:020d}.parquet"
    table = pa.table(
        {
            "offset": [r[0] for r in rows],
            "timestamp": [r[1] for r in rows],
            "key": [r[2] for r in rows],
            "value": [r[3] for r in rows],
            "t": [time_of(r[3]) for r in rows],
        },
        schema=_schema(),
    )
    tmp = folder / f".{name}.{uuid.uuid4().hex[:8]}.tmp"
    pq.write_table(table, tmp)
    os.replace(tmp, folder / name)
    return folder / name


def _date_hour(ts_ms: int) -> tuple[str, str]:
    if ts_ms <= 0:  # no timestamp on the record: file it under the time it was archived
        ts_ms = int(time.time() * 1000)
    d = datetime.fromtimestamp(ts_ms / 1000, tz=UTC)
    return d.strftime("%Y-%m-%d"), d.strftime("%H")


class Archiver:
    """Consumes topics and writes them to the archive, batch by batch."""

    def __init__(
        self, bootstrap: str, root: Path, topics: list[str], *, batch: int = 50_000, flush_every: float = 5.0,
        report: Callable[[str], None] = lambda m: None,
    ) -> None:
        self.bootstrap = bootstrap
        self.root = Path(root)
        self.topics = topics
        self.batch = batch
        self.flush_every = flush_every
        self.report = report
        self.records = 0
        self.files = 0
        self.stop = threading.Event()
        self._buffer: dict[tuple[str, int, str, str], list[tuple]] = {}
        self._buffered = 0

    def run(self, *, once: bool = False, idle: float = 2.0) -> None:
        """Archive until stopped (SIGINT/SIGTERM or ``stop``), or with ``once`` until the
        topics have been idle for ``idle`` seconds."""
        from confluent_kafka import KafkaError, TopicPartition  # noqa: PLC0415 (confluent-kafka: ~80 ms, only with a broker)


        assignment = []
        for topic in self.topics:
            done = archived_until(self.root, topic)
            for p in topic_partitions(self.bootstrap, topic):
                start = done[p] + 1 if p in done else FIRST_OFFSET
                assignment.append(TopicPartition(topic, p, start))
        consumer = kafka_clients.consumer({
            "bootstrap.servers": self.bootstrap, "group.id": f"chronolog-archive-{uuid.uuid4().hex[:8]}",
            "enable.auto.commit": False, "isolation.level": "read_committed", "auto.offset.reset": "earliest",
        })
        restore = self._trap_signals()
        try:
            consumer.assign(assignment)
            last_flush = quiet_since = time.monotonic()
            while not self.stop.is_set():
                msgs = consumer.consume(1000, timeout=0.25)
                now = time.monotonic()
                for msg in msgs:
                    if msg.error():
                        if msg.error().code() == KafkaError._PARTITION_EOF:
                            continue
                        raise ChronologError(f"error: archiving {msg.topic()}: {msg.error()}")
                    _, ts = msg.timestamp()
                    date, hour = _date_hour(ts)
                    key = msg.key()
                    self._buffer.setdefault((msg.topic(), msg.partition(), date, hour), []).append((
                        msg.offset(), ts, None if key is None else key.decode("utf-8", "replace"),
                        (msg.value() or b"").decode("utf-8", "replace"),
                    ))
                    self._buffered += 1
                if msgs:
                    quiet_since = now
                if self._buffered >= self.batch or (self._buffered and now - last_flush >= self.flush_every):
                    self.flush()
                    last_flush = now
                if once and now - quiet_since >= idle:
                    break
        finally:
            self.flush()
            consumer.close()
            restore()

    def flush(self) -> None:
        for (topic, partition, date, hour), rows in sorted(self._buffer.items()):
            path = write_part(self.root, topic, partition, date, hour, rows)
            self.records += len(rows)
            self.files += 1
            self.report(f"archived {len(rows)} records to {path}")
        self._buffer.clear()
        self._buffered = 0

    def _trap_signals(self) -> Callable[[], None]:
        if threading.current_thread() is not threading.main_thread():
            return lambda: None
        old = {s: signal.getsignal(s) for s in (signal.SIGINT, signal.SIGTERM)}
        for s in old:
            signal.signal(s, lambda *_: self.stop.set())

        def restore() -> None:
            for s, h in old.items():
                signal.signal(s, h)

        return restore


def read_archive(root: Path, topic: str) -> Iterator[tuple[int, int, str]]:
    """(partition, offset, value) of one archived topic in arrival order (pyarrow, no Spark)."""
    import pyarrow.parquet as pq  # noqa: PLC0415 (pyarrow: the optional spark extra)

    rows: dict[tuple[int, int], str] = {}
    base = topic_dir(Path(root), topic)
    for path in sorted(base.glob("date=*/hour=*/partition=*/part-*.parquet")):
        p = int(path.parent.name.split("=", 1)[1])
        table = pq.read_table(path, columns=["offset", "value"])
        for o, v in zip(table.column("offset").to_pylist(), table.column("value").to_pylist(), strict=True):
            rows[(p, o)] = v
    for (p, o), v in sorted(rows.items()):
        yield p, o, v
