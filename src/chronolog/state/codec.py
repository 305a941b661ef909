"""Explicit encoding of service state: plain data in, plain data out.

State is JSON (msgspec: fast, exact for integers of any size), compressed
with zlib when it is large (``COMPRESS_FROM`` bytes): a service writes many
small journal entries per commit, and compressing each cost more CPU than
the rest of its commit while saving little.  Compressed state starts with
zlib's header byte ``x``, which no JSON text starts with, so the reader
tells the two apart.  Values are dicts, lists, strings, integers, floats, booleans and None;
tuples become lists, and the readers (``stages``, ``Reasoner.import_state``)
turn the lists they know to be tuples back.  Nothing here can run code: the
worst a forged record can do is fail to decode, which is a ``StateError``.
"""

from __future__ import annotations

import zlib
from types import TracebackType
from typing import Any, Literal

import msgspec

from chronolog.evaluator import STATE_FORMAT, StateError

_decoder = msgspec.json.Decoder()
_encoder = msgspec.json.Encoder()
MAX_STATE = 1 << 31  # a decompressed state larger than 2 GiB is treated as corrupt
COMPRESS_FROM = 4096  # bytes of JSON from which state is compressed


def encode(data: Any) -> bytes:
    """Plain data (or msgspec Structs: ``state.schema``) as JSON, zlib-compressed when large."""
    raw = _encoder.encode(data)
    return zlib.compress(raw, 1) if len(raw) >= COMPRESS_FROM else raw


def inflate(blob: bytes) -> bytes:
    """The JSON text of ``blob``, decompressed if ``encode`` compressed it."""
    if blob[:1] != b"x":  # zlib's header (CMF 0x78); JSON never starts with it
        return blob
    try:
        return zlib.decompressobj().decompress(blob, MAX_STATE)
    except zlib.error as exc:
        raise StateError(f"state does not decompress ({exc})") from None


def decode(blob: bytes) -> Any:
    """The data ``encode`` wrote; ``StateError`` for anything else."""
    try:
        return _decoder.decode(inflate(blob))
    except (msgspec.DecodeError, RecursionError, UnicodeDecodeError) as exc:  # (nesting too deep; a bad UTF-8 string)
        raise StateError(f"state is not valid JSON ({exc})") from None


def versioned(data: dict[str, Any]) -> dict[str, Any]:
    """An evaluator's state (``Evaluator.export_state``) stamped with the format
    version of that interface (``check_state_header`` reads it).  A stage's
    snapshot is versioned per kind instead (``state.schema``)."""
    return {"format": STATE_FORMAT, **data}


def tuples(value: Any) -> Any:
    """Lists (at any depth) as tuples: facts' args and keys were tuples when written."""
    if isinstance(value, list):
        return tuple(tuples(v) for v in value)
    return value


def reading(what: str):  # type: ignore[no-untyped-def]
    """Context manager: any structural error while reading state becomes a ``StateError``
    naming ``what`` (a field of the wrong type, a missing key...)."""
    return _Reading(what)


class _Reading:
    def __init__(self, what: str) -> None:
        self.what = what

    def __enter__(self) -> None:
        return None

    def __exit__(self, kind: type[BaseException] | None, exc: BaseException | None,
                 tb: TracebackType | None) -> Literal[False]:
        if exc is None or isinstance(exc, StateError):
            return False
        if isinstance(exc, (KeyError, TypeError, ValueError, AttributeError, IndexError, AssertionError,
                            RecursionError)):
            raise StateError(f"{self.what}: malformed state ({type(exc).__name__}: {exc})") from None
        return False
