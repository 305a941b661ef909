"""Where the members of a JSON line stand: the columns of the reader's error messages.

orjson parses a line but does not say where a value is, and a bad event's
message names the column of the offending key or value.  ``Members`` scans
the raw text of the top-level object again for those positions.  It runs
only on the full check of a line (``event_checks.check_event``: not on a
plain fact, nor on the batch path), on a line orjson has already parsed, so
it can assume valid JSON and stay simple.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

WS = " \t\r\n"  # JSON's white space
_loads: Callable[[str], Any] | None = None  # orjson.loads, imported on first use (start-up time)


def _load() -> Callable[[str], Any]:
    global _loads
    import orjson  # noqa: PLC0415 (loaded on first use: start-up of chronolog run)

    _loads = orjson.loads
    return _loads


class Members:
    """Positions of the members of the top-level JSON object in a raw line.

    A repeated key maps to its last occurrence, the one orjson keeps.
    """

    def __init__(self, raw: str) -> None:
        loads = _loads or _load()
        self.raw = raw
        self.members: dict[str, tuple[int, int, int]] = {}  # key -> (key start, value start, value end)
        i = skip_ws(raw, 0) + 1  # past "{"
        while True:
            i = skip_ws(raw, i)
            if i >= len(raw) or raw[i] == "}":
                break
            k0 = i
            i = scan_value(raw, i)
            key = loads(raw[k0:i])
            i = skip_ws(raw, i) + 1  # past ":"
            v0 = skip_ws(raw, i)
            i = scan_value(raw, v0)
            self.members[key] = (k0, v0, i)
            i = skip_ws(raw, i)
            if i < len(raw) and raw[i] == ",":
                i += 1

    def key_col(self, key: str) -> int:
        m = self.members.get(key)
        return m[0] + 1 if m else 1

    def value_col(self, key: str) -> int:
        m = self.members.get(key)
        return m[1] + 1 if m else 1

    def text(self, key: str, limit: int = 40) -> str:
        m = self.members.get(key)
        if not m:
            return "?"
        return clip(self.raw[m[1] : m[2]], limit)

    def element(self, key: str, index: int) -> tuple[str, int]:
        """Text and column of element ``index`` of the array value of ``key``."""
        m = self.members.get(key)
        if not m:
            return "?", 1
        raw = self.raw
        i = m[1] + 1  # past "["
        for n in range(index + 1):
            i = skip_ws(raw, i)
            start = i
            i = scan_value(raw, i)
            if n == index:
                return clip(raw[start:i], 40), start + 1
            i = skip_ws(raw, i) + 1  # past ","
        return "?", m[1] + 1


def clip(text: str, limit: int) -> str:
    return text if len(text) <= limit else text[: limit - 3] + "..."


def skip_ws(s: str, i: int) -> int:
    n = len(s)
    while i < n and s[i] in WS:
        i += 1
    return i


def scan_value(s: str, i: int) -> int:
    """End index of the (valid) JSON value starting at ``i``."""
    n = len(s)
    if i >= n:
        return i
    c = s[i]
    if c == '"':
        i += 1
        while i < n:
            c = s[i]
            if c == "\\":
                i += 2
                continue
            if c == '"':
                return i + 1
            i += 1
        return n
    if c in "[{":
        depth = 0
        while i < n:
            c = s[i]
            if c == '"':
                i = scan_value(s, i)
                continue
            if c in "[{":
                depth += 1
            elif c in "]}":
                depth -= 1
                if depth == 0:
                    return i + 1
            i += 1
        return n
    while i < n and s[i] not in ",]}" and s[i] not in WS:
        i += 1
    return i
