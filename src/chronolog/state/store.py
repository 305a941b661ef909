"""Where a service keeps its state between commits: a key-value store written atomically.

Two backends with one interface: ``MemoryStore`` (tests, tools) and
``RocksStore`` (the fleet's ``--state-dir``, RocksDB through rocksdict).  A
commit is one ``write`` of puts and deletes, applied all or nothing, so the
state and the offsets it belongs to never disagree after a crash.
"""

from __future__ import annotations

from pathlib import Path
from typing import Iterator, Protocol


class StateStore(Protocol):
    def get(self, key: str) -> bytes | None: ...

    def scan(self, prefix: str) -> Iterator[tuple[str, bytes]]:
        """Every entry whose key starts with ``prefix``."""

    def write(self, puts: list[tuple[str, bytes]], deletes: list[str]) -> None:
        """Apply all puts and deletes atomically."""

    def clear(self) -> None: ...

    def size(self) -> int:
        """Bytes held (an estimate)."""

    def where(self) -> str:
        """For messages: what this store is."""


class MemoryStore:
    def __init__(self) -> None:
        self.data: dict[str, bytes] = {}

    def get(self, key: str) -> bytes | None:
        return self.data.get(key)

    def scan(self, prefix: str) -> Iterator[tuple[str, bytes]]:
        return iter([(k, v) for k, v in self.data.items() if k.startswith(prefix)])

    def write(self, puts: list[tuple[str, bytes]], deletes: list[str]) -> None:
        for k in deletes:
            self.data.pop(k, None)
        self.data.update(puts)

    def clear(self) -> None:
        self.data.clear()

    def size(self) -> int:
        return sum(len(v) for v in self.data.values())

    def where(self) -> str:
        return "the in-memory store"


class RocksStore:
    """RocksDB through rocksdict in raw mode: keys and values are bytes as
    stored.  (rocksdict's default mode tags values with their Python type and
    unpickles those tagged as objects: a value planted in the state directory
    could run code.  Raw mode never interprets a value.)"""

    def __init__(self, path: Path) -> None:
        from rocksdict import Options, Rdict

        path.mkdir(parents=True, exist_ok=True)
        self.path = path
        self.db = Rdict(str(path), options=Options(raw_mode=True))

    def get(self, key: str) -> bytes | None:
        return self.db.get(key.encode())

    def scan(self, prefix: str) -> Iterator[tuple[str, bytes]]:
        start = prefix.encode()
        for k, v in self.db.items(from_key=start):
            if not k.startswith(start):
                break
            yield k.decode("utf-8", errors="replace"), v

    def write(self, puts: list[tuple[str, bytes]], deletes: list[str]) -> None:
        from rocksdict import WriteBatch

        batch = WriteBatch(raw_mode=True)
        for k in deletes:
            batch.delete(k.encode())
        for k, v in puts:
            batch.put(k.encode(), v)
        self.db.write(batch)

    def clear(self) -> None:
        for k in list(self.db.keys()):
            del self.db[k]

    def size(self) -> int:
        try:
            return int(self.db.property_int_value("rocksdb.estimate-live-data-size") or 0)
        except Exception:  # noqa: BLE001 - an estimate only
            return 0

    def where(self) -> str:
        return f"RocksDB {self.path}"
