"""Input stream readers: JSON Lines (CONTRACT §2) and the ``lines`` text format.

Every bad line becomes an ``InputError`` naming file, line and column; with
``on_error="skip"`` it is reported, counted and skipped instead, so one bad
event never stops a stream.
"""

from __future__ import annotations

from typing import IO, Callable, Iterator

import orjson

from chronolog.errors import InputError
from chronolog.events import Event
from chronolog.ir import Loc

FORMATS = ("jsonl", "lines", "meteor", "rtec")
_KEYS = {"t", "pred", "args", "op"}


class EventReader:
    """Iterates the events of one input; counts lines and skipped lines."""

    def __init__(
        self,
        stream: IO[str],
        filename: str,
        fmt: str = "jsonl",
        *,
        on_error: str = "fail",
        report: Callable[[str], None] | None = None,
    ) -> None:
        if fmt not in FORMATS:
            raise InputError(f"unknown input format {fmt!r} (choose from {', '.join(FORMATS)})")
        if fmt in ("meteor", "rtec"):
            raise InputError(f"input format {fmt!r} is not supported yet (planned with its dialect)")
        if on_error not in ("fail", "skip"):
            raise ValueError(on_error)
        self.stream = stream
        self.filename = filename
        self.parse = _parse_jsonl if fmt == "jsonl" else _parse_lines
        self.on_error = on_error
        self.report = report or (lambda msg: None)
        self.lines = 0
        self.skipped = 0

    def __iter__(self) -> Iterator[Event]:
        parse, filename = self.parse, self.filename
        for number, raw in enumerate(self.stream, 1):
            self.lines = number
            line = raw.strip()
            if not line or line.startswith("#"):
                continue
            try:
                ev = parse(line, raw)
            except _Bad as bad:
                err = InputError(bad.message, Loc(filename, number, bad.col))
                if self.on_error == "fail":
                    raise err from None
                self.skipped += 1
                self.report(f"{err.loc}: skipped: {bad.message}")
                continue
            if ev is not None:
                if ev.retract:  # only retractions are reported later; skip the object otherwise
                    ev.loc = Loc(filename, number, 1)
                yield ev


def read_events(
    stream: IO[str], filename: str, fmt: str = "jsonl", *, on_error: str = "fail",
    report: Callable[[str], None] | None = None,
) -> Iterator[Event]:
    return iter(EventReader(stream, filename, fmt, on_error=on_error, report=report))


class _Bad(Exception):
    def __init__(self, message: str, col: int = 1) -> None:
        self.message = message
        self.col = col


def _col(raw: str, key: str) -> int:
    """Column of a key's value in the raw line (1 if not found)."""
    i = raw.find(f'"{key}"')
    if i < 0:
        return 1
    j = raw.find(":", i)
    j = j + 1 if j >= 0 else i
    while j < len(raw) and raw[j] == " ":
        j += 1
    return j + 1


def _parse_jsonl(line: str, raw: str) -> Event | None:
    try:
        obj = orjson.loads(line)
    except orjson.JSONDecodeError as exc:
        col = getattr(exc, "colno", None) or (getattr(exc, "pos", 0) + 1)
        raise _Bad(f"invalid JSON: {exc.msg if hasattr(exc, 'msg') else exc}", col) from None
    if type(obj) is not dict:
        raise _Bad("an event must be a JSON object")
    if "interval" in obj:
        raise _Bad("interval facts need the mtl dialect", _col(raw, "interval"))
    extra = obj.keys() - _KEYS
    if extra:
        k = sorted(extra)[0]
        raise _Bad(f"unknown key {k!r} (allowed: t, pred, args, op)", _col(raw, k) - len(k) - 3)
    t = obj.get("t")
    if type(t) is not int:
        if "t" not in obj:
            raise _Bad('missing time "t"')
        raise _Bad(f'"t" must be an integer time point, not {orjson.dumps(t).decode()}', _col(raw, "t"))
    pred = obj.get("pred")
    op = obj.get("op")
    if op not in (None, "retract", "assert"):
        raise _Bad(f'"op" must be "retract" (or "assert"), not {orjson.dumps(op).decode()}', _col(raw, "op"))
    if pred is None:
        if "args" in obj or op is not None:
            raise _Bad('an event with "args" or "op" needs "pred"', 1)
        return Event(t)
    if type(pred) is not str or not pred:
        raise _Bad('"pred" must be a non-empty string', _col(raw, "pred"))
    args = obj.get("args", [])
    if type(args) is not list:
        raise _Bad('"args" must be a list of strings and integers', _col(raw, "args"))
    for a in args:
        if type(a) is not str and type(a) is not int:
            raise _Bad(
                f"argument {orjson.dumps(a).decode()} must be a string or an integer", _col(raw, "args")
            )
    return Event(t, pred, tuple(args), op == "retract")


def _parse_lines(line: str, raw: str) -> Event | None:
    parts = line.split()
    try:
        t = int(parts[0])
    except ValueError:
        raise _Bad(f"expected an integer time point, got {parts[0]!r}", raw.find(parts[0]) + 1) from None
    if len(parts) == 1:
        return Event(t)
    pred = parts[1]
    args = tuple(_value(a) for a in parts[2:])
    return Event(t, pred, args)


def _value(text: str) -> str | int:
    try:
        return int(text)
    except ValueError:
        return text
