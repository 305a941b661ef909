"""Recovery of a service's state from its changelog topic.

Each commit appends, in one transaction, the journal entries that changed
(one record each, keyed ``j:<journal>:<key>`` so compaction keeps the
latest) and the snapshot (``snapshot:<i>`` chunks), whose header names the
input offsets it belongs to.  Recovery reads the partition to its end and
rebuilds the state of the *last* snapshot with the entries written before it.

Every record is checked as it is read: a record whose header or body does not
decode, or that names an unknown format version, stops the recovery with a
``ChronologError`` naming topic, partition and offset.  Nothing is executed:
the bodies are JSON read by checking decoders (``chronolog.state.codec``).
"""

from __future__ import annotations

import time
from typing import Any

from chronolog.errors import ChronologError
from chronolog.evaluator import StateError
from chronolog.state import codec as c
from chronolog.state.snapshot import Entries, read_entry, read_snapshot

RECORD_FORMAT = 1  # version of the changelog records' header


def entry_record(name: str, key: int, body: bytes | None) -> bytes:
    """A journal entry's record (``body`` None: the entry was deleted)."""
    head = c.dumps({"v": RECORD_FORMAT, "kind": "entry", "name": name, "key": key, "del": body is None})
    return head + b"\n" + (body or b"")


def snapshot_records(snapshot: bytes, offsets: dict[str, int], chunk: int) -> list[bytes]:
    """The snapshot in chunks below Kafka's record size limit."""
    pieces = [snapshot[i:i + chunk] for i in range(0, len(snapshot), chunk)] or [b""]
    return [c.dumps({"v": RECORD_FORMAT, "kind": "snapshot", "i": i, "n": len(pieces), "offsets": offsets})
            + b"\n" + piece for i, piece in enumerate(pieces)]


def offsets_of(v: Any) -> dict[str, int]:
    return {c.text(k): c.integer(x) for k, x in c.obj(v).items()}


class ChangelogState:
    """Folds changelog records, in offset order, into the last snapshot and its entries."""

    def __init__(self, topic: str, partition: int, kind: str) -> None:
        self.topic, self.partition, self.kind = topic, partition, kind
        self.entries: Entries = {}
        self._chunks: list[bytes] = []
        self._first = -1  # offset of the current snapshot's first chunk
        self.found: tuple[bytes, dict[str, int], Entries, int] | None = None  # snapshot, offsets, entries, offset

    def add(self, value: bytes | None, offset: int) -> None:
        try:
            self._add(value or b"", offset)
        except StateError as exc:
            raise self.error(offset, exc) from None

    def error(self, offset: int, exc: Exception) -> ChronologError:
        return ChronologError(f"error: changelog {self.topic} partition {self.partition} offset {offset}: "
                              f"record rejected: {exc}")

    def _add(self, value: bytes, offset: int) -> None:
        head, nl, body = value.partition(b"\n")
        if not nl:
            raise StateError("no header line")
        meta = c.obj(c.loads(head), "v", "kind")
        if type(meta["v"]) is not int or meta["v"] != RECORD_FORMAT:
            raise StateError(f"unknown record format version {meta['v']!r} (this build reads {RECORD_FORMAT})")
        if meta["kind"] == "entry":
            c.obj(meta, "name", "key", "del")
            name, key = c.text(meta["name"]), c.integer(meta["key"])
            journal = self.entries.setdefault(name, {})
            if c.flag(meta["del"]):
                journal.pop(key, None)
            else:
                journal[key] = read_entry(name, body)
            return
        if meta["kind"] != "snapshot":
            raise StateError(f"unknown record kind {str(meta['kind'])[:40]!r}")
        c.obj(meta, "i", "n", "offsets")
        i, n, offsets = c.integer(meta["i"]), c.integer(meta["n"]), offsets_of(meta["offsets"])
        if i == 0:
            self._chunks, self._first = [], offset
        if i != len(self._chunks) or not 0 <= i < n:
            self._chunks = []  # a chunk out of sequence: wait for the next snapshot's first
            return
        self._chunks.append(body)
        if i == n - 1:
            self.found = (b"".join(self._chunks), offsets, {k: dict(v) for k, v in self.entries.items()}, self._first)

    def result(self, want: dict[str, int]) -> tuple[dict, Entries]:
        """The last snapshot (it must belong to the offsets ``want``) and its entries."""
        if self.found is None or self.found[1] != want:
            raise ChronologError(f"error: no snapshot for the committed offsets on {self.topic} "
                                 f"partition {self.partition}")
        data, _, entries, offset = self.found
        try:
            return read_snapshot(data, self.kind), entries
        except StateError as exc:
            raise self.error(offset, exc) from None


def read_changelog(conf: dict[str, str], topic: str, partition: int, kind: str, want: dict[str, int],
                   timeout: float = 60.0, quiet: float = 1.0) -> tuple[dict, Entries]:
    """Read the changelog partition to its end: the snapshot for ``want`` and its entries.

    Several transactions can carry the same input offsets (an idle flush
    publishes without consuming), so the first snapshot matching the
    committed offsets may be stale: read to the end.  The end is where the
    topic stays quiet (nobody else writes this changelog, and the broker's
    high watermark is not trusted)."""
    from confluent_kafka import OFFSET_BEGINNING, Consumer, TopicPartition

    reader = Consumer({**conf, "enable.auto.commit": False, "isolation.level": "read_committed",
                       "fetch.wait.max.ms": 100})
    reader.assign([TopicPartition(topic, partition, OFFSET_BEGINNING)])
    state = ChangelogState(topic, partition, kind)
    deadline = time.monotonic() + timeout
    last = time.monotonic()
    try:
        while time.monotonic() < deadline and time.monotonic() - last < quiet:
            msg = reader.poll(0.2)
            if msg is None or msg.error():
                continue
            last = time.monotonic()
            state.add(msg.value(), msg.offset())
    finally:
        reader.close()
    return state.result(want)
