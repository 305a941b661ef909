"""A stage's state as bytes and back: the snapshot (everything but the
journals) and the journal entries, each in the explicit encoding of ``codec``.

A service writes the snapshot and only the *changed* journal entries at each
commit (commits cost what changed, not the length of the stream); ``whole``
puts both in one value (tests, tools, an evaluator's checkpoint).
"""

from __future__ import annotations

import zlib
from typing import Any, Protocol

from chronolog.evaluator import StateError
from chronolog.runtime.journal import Journal
from chronolog.state import codec as c

Entries = dict[str, dict[int, Any]]  # journal name -> key -> decoded value
MAX_SNAPSHOT = 1 << 30  # bytes a stored snapshot may inflate to (a forged one could claim more)


class Stateful(Protocol):
    def journals(self) -> dict[str, Journal]: ...

    def export_state(self) -> dict: ...

    def import_state(self, data: dict, journals: Entries) -> None: ...


def snapshot(stage: Stateful, kind: str) -> bytes:
    """The stage's state without its journals, compressed."""
    return zlib.compress(c.dumps({"format": c.FORMAT, "stage": kind, "state": stage.export_state()}), 1)


def read_snapshot(data: bytes, kind: str) -> dict:
    """The stage state a ``snapshot`` holds; ``StateError`` if it is not one of a ``kind`` stage."""
    try:
        inflate = zlib.decompressobj()
        raw = inflate.decompress(data, MAX_SNAPSHOT)
        if inflate.unconsumed_tail or not inflate.eof:
            raise StateError("snapshot truncated or larger than 1 GiB")
    except zlib.error as exc:
        raise StateError(f"snapshot does not decompress: {exc}") from None
    return _checked(c.loads(raw), kind)["state"]


def _checked(data: Any, kind: str) -> dict:
    c.obj(data, "format", "stage", "state")
    if type(data["format"]) is not int or data["format"] != c.FORMAT:
        raise StateError(f"unknown state format version {data['format']!r} (this build reads {c.FORMAT})")
    if data["stage"] != kind:
        raise StateError(f"state of a {str(data['stage'])[:40]!r} stage, not {kind!r}")
    c.obj(data["state"])
    return data


def entry(name: str, value: Any) -> bytes:
    return c.dumps(c.journal_codec(name).encode(value))


def read_entry(name: str, body: bytes) -> Any:
    return c.journal_codec(name).decode(c.loads(body))


def whole(stage: Stateful, kind: str) -> bytes:
    """The stage's whole state, journals included, as one JSON value."""
    journals = {name: [[k, c.journal_codec(name).encode(v)] for k, v in j.items()]
                for name, j in stage.journals().items()}
    return c.dumps({"format": c.FORMAT, "stage": kind, "state": stage.export_state(), "journals": journals})


def restore_whole(stage: Stateful, kind: str, data: bytes) -> None:
    """Continue ``stage`` from ``whole``'s bytes (``StateError`` if they are not that)."""
    got = _checked(c.loads(data), kind)
    journals = c.obj(got.get("journals", {}))
    entries = {name: c.pairs(v, c.integer, c.journal_codec(name).decode) for name, v in journals.items()}
    stage.import_state(got["state"], entries)
