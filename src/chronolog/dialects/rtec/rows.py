"""RTEC's usual JSONL line, ``{"t": 680, "pred": "coord", "args": ["id0", 262, 285]}``, decoded
in bulk: one msgspec call per block of lines into typed rows, the checks of the line reader
(``rtec_input._jsonl``) made in C.

Only what the line reader reads the same way is accepted: an object of ``t`` (an integer),
``pred`` (a non-empty string) and optionally ``args`` (strings and integers), nothing else.
Integers are bounded to 64 bits (msgspec's bounds are int64): orjson, the line reader's
decoder, reads a larger one as a float, which the line reader rejects.  An interval fact
(``"interval"`` instead of ``"t"``, as ctm's input) becomes the ``Event`` the line reader makes
of it.  Anything else makes the whole block None, and the caller reads it line by line.
"""

from __future__ import annotations

import re
from typing import Annotated

import msgspec

from chronolog.core.events import Event
from chronolog.core.source import Loc

_INTERVAL = re.compile(r"^\s*\[\s*(-?\d+)\s*,\s*(-?\d+)\s*([\])])\s*$")
_Int = Annotated[int, msgspec.Meta(ge=-(1 << 63), le=(1 << 63) - 1)]


class Row(msgspec.Struct, forbid_unknown_fields=True, gc=False):
    """One input line: a fact asserted at ``t``."""

    t: _Int
    pred: Annotated[str, msgspec.Meta(min_length=1)]
    args: tuple[_Int | str, ...] = ()


class AnyRow(msgspec.Struct, forbid_unknown_fields=True, gc=False):
    """One input line with ``t`` or ``interval`` (one of them: checked by ``decode_block``;
    UNSET when absent, as ``null`` is not absent to the line reader)."""

    pred: Annotated[str, msgspec.Meta(min_length=1)]
    args: tuple[_Int | str, ...] = ()
    t: _Int | msgspec.UnsetType = msgspec.UNSET
    interval: str | msgspec.UnsetType = msgspec.UNSET


_DECODE = msgspec.json.Decoder(list[Row]).decode
_DECODE_ANY = msgspec.json.Decoder(list[AnyRow]).decode


def decode_block(lines: list[str], name: str, first: int) -> list[Row | Event] | None:
    """The rows of ``lines`` (each ending in a newline, or the last one without; the first
    is line ``first`` of ``name``), one per line: a ``Row``, or for an interval fact its
    ``Event``; None if any line is not such a row.  Joined with commas, a blank line or a
    line holding other than one JSON value makes the text invalid or the count differ."""
    text = "[" + ",".join(lines) + "]"
    try:
        rows: list = _DECODE(text)
    except (msgspec.DecodeError, ValueError):  # (a lone surrogate of an undecodable byte: UnicodeEncodeError)
        try:
            rows = _DECODE_ANY(text)
        except (msgspec.DecodeError, ValueError):
            return None
        if len(rows) != len(lines):
            return None
        unset = msgspec.UNSET
        for i, row in enumerate(rows):
            if row.interval is unset:
                if row.t is unset:
                    return None  # no time
                continue
            span = _span(row.interval) if row.t is unset else None
            if span is None or span[1] <= span[0]:
                return None  # the line reader's error
            rows[i] = Event(span[0], row.pred, row.args, False, Loc(name, first + i, 1), span)
        return rows
    return rows if len(rows) == len(lines) else None


def _span(text: str) -> tuple[int, int] | None:
    """The half-open ``(a, b)`` of an ``"interval"`` such as ``"[5,8)"`` or ``"[5,7]"``."""
    m = _INTERVAL.match(text)
    if m is None:
        return None
    return int(m.group(1)), int(m.group(2)) + (1 if m.group(3) == "]" else 0)
