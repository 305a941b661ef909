"""RTEC's usual JSONL line, ``{"t": 680, "pred": "coord", "args": ["id0", 262, 285]}``, decoded
in bulk: one msgspec call per block of lines into typed rows, the checks of the line reader
(``rtec_input._jsonl``) made in C.

Only what the line reader reads the same way is accepted: an object of ``t`` (an integer),
``pred`` (a non-empty string) and optionally ``args`` (strings and integers), nothing else.
Integers are bounded to 64 bits (msgspec's bounds are int64): orjson, the line reader's
decoder, reads a larger one as a float, which the line reader rejects.  Anything else makes the whole block None, and the
caller reads it line by line.
"""

from __future__ import annotations

from typing import Annotated

import msgspec

_Int = Annotated[int, msgspec.Meta(ge=-(1 << 63), le=(1 << 63) - 1)]


class Row(msgspec.Struct, forbid_unknown_fields=True, gc=False):
    """One input line: a fact asserted at ``t``."""

    t: _Int
    pred: Annotated[str, msgspec.Meta(min_length=1)]
    args: tuple[_Int | str, ...] = ()


_DECODE = msgspec.json.Decoder(list[Row]).decode


def decode_rows(lines: list[str]) -> list[Row] | None:
    """The rows of ``lines`` (each ending in a newline, or the last one without), one per
    line; None if any line is not such a row.  Joined with commas, a blank line or a line
    holding other than one JSON value makes the text invalid or the count differ."""
    try:
        rows = _DECODE("[" + ",".join(lines) + "]")
    except (msgspec.DecodeError, ValueError):  # (a lone surrogate of an undecodable byte: UnicodeEncodeError)
        return None
    return rows if len(rows) == len(lines) else None
