"""Rebuilding a service's state from its changelog topic.

A service's changelog partition holds, in commit order, journal entries
(``j:<journal>:<time>``, the changed per-time-point parts of its state) and
snapshots (``snapshot:<i>``, the rest, in chunks), each record a one-line
JSON header and a body of ``state.codec`` data.  Recovery reads the
partition from the beginning to the point where it stays quiet (nobody else
writes it; the broker's high watermark is not trusted) and keeps the LAST
complete snapshot and the entries before it: the state of the last committed
transaction, with the input offsets it consumed up to.  ``read_tail`` reads
what follows a known offset (a service checks that RocksDB's snapshot is
still the last one).

Every record is checked as it is read: a header that is not the expected
JSON, or an unknown header version, stops recovery with an error naming the
topic, partition and offset.  Bodies are only ever decoded as data.
"""

from __future__ import annotations

import time
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

import msgspec

from chronolog.evaluator import StateError

ENTRY_KEY = "j:{name}:{key}"
# The version of a changelog record's header line (its ``format``), which says
# where the body is and what it is.  The body's own layout is versioned apart:
# a snapshot per kind (``state.schema``), a journal entry by its journal's codec.
RECORD_FORMAT = 1


class _Entry(msgspec.Struct, forbid_unknown_fields=True):
    kind: str
    name: str
    key: int
    format: int
    deleted: bool


class _Chunk(msgspec.Struct, forbid_unknown_fields=True):
    kind: str
    i: int
    n: int
    offsets: dict[str, int]
    format: int


def entry_record(name: str, key: int, body: bytes | None) -> tuple[bytes, bytes]:
    """(message key, value) of a journal entry; ``body`` None deletes it."""
    return entry_records(name, [(key, body)])[0]


def entry_records(name: str, entries: list[tuple[int, bytes | None]]) -> list[tuple[bytes, bytes]]:
    """(message key, value) of each of a journal's entries (``body`` None deletes
    it): the header ``{"kind":"entry","name":..,"key":..,"format":..,"deleted":..}``
    as msgspec writes that object, its fixed parts encoded once per journal."""
    head = msgspec.json.encode({"kind": "entry", "name": name})[:-1] + b',"key":'
    tail = (b',"format":%d,"deleted":false}\n' % RECORD_FORMAT, b',"format":%d,"deleted":true}\n' % RECORD_FORMAT)
    prefix = ENTRY_KEY.format(name=name, key="").encode()
    return [(b"%b%d" % (prefix, key), b"%b%d%b%b" % (head, key, tail[body is None], body or b""))
            for key, body in entries]


def snapshot_records(snapshot: bytes, offsets: dict[str, int], chunk: int) -> list[tuple[bytes, bytes]]:
    """(message key, value) of each chunk of a snapshot taken at ``offsets``."""
    pieces = [snapshot[i:i + chunk] for i in range(0, len(snapshot), chunk)] or [b""]
    out = []
    for i, piece in enumerate(pieces):
        head = msgspec.json.encode({"kind": "snapshot", "i": i, "n": len(pieces), "offsets": offsets,
                                    "format": RECORD_FORMAT})
        out.append((f"snapshot:{i}".encode(), head + b"\n" + piece))
    return out


@dataclass
class Recovered:
    """What a changelog holds: the last snapshot, its offsets and the entries before it."""

    snapshot: bytes
    offsets: dict[str, int]
    entries: dict[tuple[str, int], bytes] = field(default_factory=dict)
    where: dict[Any, str] = field(default_factory=dict)  # entry key (or None: the snapshot) -> "topic[p]@offset: "

    def locate(self, key: tuple[str, int] | None) -> str:
        return self.where.get(key, "")


class ChangelogReader:
    """Folds changelog records, in order, into the last snapshot and its entries."""

    def __init__(self, topic: str, partition: int) -> None:
        self.topic, self.partition = topic, partition
        self.entries: dict[tuple[str, int], bytes | None] = {}
        self.where: dict[Any, str] = {}
        self.chunks: dict[int, bytes] = {}
        self.chunk_at = ""
        self.found: Recovered | None = None

    def _at(self, offset: int) -> str:
        return f"{self.topic} partition {self.partition} offset {offset}: "

    def add(self, offset: int, value: bytes | None) -> None:
        at = self._at(offset)
        head, sep, body = (value or b"").partition(b"\n")
        try:
            if not sep:
                raise StateError("no header line")
            kind = msgspec.json.decode(head, type=dict).get("kind")
            meta: _Entry | _Chunk
            if kind == "entry":
                meta = msgspec.json.decode(head, type=_Entry)
            elif kind == "snapshot":
                meta = msgspec.json.decode(head, type=_Chunk)
            else:
                raise StateError(f"unknown record kind {kind!r}")
        except (msgspec.DecodeError, msgspec.ValidationError, RecursionError) as exc:
            raise StateError(f"{at}changelog record header does not decode ({exc})") from None
        except StateError as exc:
            raise StateError(f"{at}{exc}") from None
        if meta.format != RECORD_FORMAT:
            raise StateError(f"{at}unknown state format version {meta.format!r} (this build reads {RECORD_FORMAT})")
        if isinstance(meta, _Entry):
            self.entries[(meta.name, meta.key)] = None if meta.deleted else body
            self.where[(meta.name, meta.key)] = at
            return
        if meta.i == 0:
            self.chunks = {}
            self.chunk_at = at
        if not 0 <= meta.i < meta.n:
            raise StateError(f"{at}snapshot chunk {meta.i} of {meta.n}")
        self.chunks[meta.i] = body
        if meta.i == meta.n - 1 and len(self.chunks) == meta.n:
            entries = {k: v for k, v in self.entries.items() if v is not None}
            where: dict[tuple[str, int] | None, str] = {k: self.where[k] for k in entries}
            where[None] = self.chunk_at
            self.found = Recovered(b"".join(self.chunks[i] for i in range(meta.n)), dict(meta.offsets), entries, where)


def read_tail(consumer: Any, quiet: float = 1.0, timeout: float = 30.0,
              clock: Callable[[], float] = time.monotonic) -> list[tuple[int, bytes]]:
    """The committed records an ``assign()``-ed consumer reads until it stays quiet
    for ``quiet`` seconds, as (offset, value)."""
    out: list[tuple[int, bytes]] = []
    deadline = clock() + timeout
    last = clock()
    while clock() < deadline and clock() - last < quiet:
        msg = consumer.poll(0.2)
        if msg is None or msg.error():
            continue
        last = clock()
        out.append((msg.offset(), msg.value()))
    return out


def read_changelog(consumer: Any, topic: str, partition: int, timeout: float = 60.0, quiet: float = 1.0,
                   clock: Callable[[], float] = time.monotonic) -> Recovered | None:
    """Read an ``assign()``-ed changelog partition to where it stays quiet for
    ``quiet`` seconds; the last complete snapshot with its entries, or None."""
    reader = ChangelogReader(topic, partition)
    for offset, value in read_tail(consumer, quiet, timeout, clock):
        reader.add(offset, value)
    return reader.found
