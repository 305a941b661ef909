"""Where a service keeps its state between commits: a small key/value interface.

Two backends behind it: ``MemoryStore`` (tests, and anything that need not
survive the process) and ``RocksStore`` (services; rocksdict, one directory
per service instance).  Keys are strings, values bytes; ``write`` applies a
batch of puts and deletes atomically, so the snapshot, the journal entries
and the offsets they belong to are stored together or not at all.
"""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import Protocol, cast


class Store(Protocol):
    def get(self, key: str) -> bytes | None: ...

    def write(self, puts: dict[str | bytes, bytes], deletes: list[str | bytes] = ...) -> None: ...

    def items(self, prefix: str = "") -> Iterator[tuple[str, bytes]]: ...

    def clear(self) -> None: ...

    def size(self) -> int: ...


def _text(key: str | bytes) -> str:
    return key.decode() if isinstance(key, bytes) else key


class MemoryStore:
    def __init__(self) -> None:
        self._data: dict[str, bytes] = {}

    def get(self, key: str) -> bytes | None:
        return self._data.get(key)

    def write(self, puts: dict[str | bytes, bytes], deletes: list[str | bytes] = []) -> None:  # noqa: B006 - never mutated
        for k in deletes:
            self._data.pop(_text(k), None)
        self._data.update((_text(k), v) for k, v in puts.items())

    def items(self, prefix: str = "") -> Iterator[tuple[str, bytes]]:
        return iter([(k, v) for k, v in self._data.items() if k.startswith(prefix)])

    def clear(self) -> None:
        self._data.clear()

    def size(self) -> int:
        return sum(len(v) for v in self._data.values())


class RocksStore:
    """RocksDB through rocksdict in raw mode: keys and values are bytes as
    stored, so nothing read back is ever unpickled (rocksdict's default mode
    pickles and unpickles non-bytes values)."""

    def __init__(self, path: Path) -> None:
        from rocksdict import Options, Rdict  # noqa: PLC0415 (rocksdict: only for a RocksDB store)

        path.mkdir(parents=True, exist_ok=True)
        self._db = Rdict(str(path), options=Options(raw_mode=True))

    def get(self, key: str) -> bytes | None:
        return self._db.get(key.encode())

    def write(self, puts: dict[str | bytes, bytes], deletes: list[str | bytes] = []) -> None:  # noqa: B006 - never mutated
        """One atomic write; keys as text or as the bytes they encode to (a
        commit's journal entries come as bytes, shared with their changelog records)."""
        from rocksdict import WriteBatch  # noqa: PLC0415 (rocksdict: only for a RocksDB store)

        batch = WriteBatch(raw_mode=True)
        for k in deletes:
            batch.delete(k if isinstance(k, bytes) else k.encode())
        for k, v in puts.items():
            batch.put(k if isinstance(k, bytes) else k.encode(), v)
        self._db.write(batch)

    def items(self, prefix: str = "") -> Iterator[tuple[str, bytes]]:
        start = prefix.encode()
        for k, v in self._db.items(from_key=start):
            k = cast(bytes, k)  # raw mode: keys are bytes
            if not k.startswith(start):
                break
            yield k.decode(errors="replace"), v

    def clear(self) -> None:
        for k in list(self._db.keys()):
            del self._db[k]

    def size(self) -> int:
        try:
            return int(self._db.property_int_value("rocksdb.estimate-live-data-size") or 0)
        except Exception:  # noqa: BLE001 - an estimate only
            return 0

    def close(self) -> None:
        self._db.close()
