"""RTEC input: JSON Lines (CONTRACT §2) or RTEC's own ``|`` CSV (``--format rtec``).

Both give the same events (the data README's mapping):

* ``{"t": 680, "pred": "appear", "args": ["id0"]}`` / ``appear|680|680|id0``: an event, or a
  point of a ``points/1`` fluent (``coord|680|680|true|id0|262|285``: value ``true`` is left out
  of the args, another value is appended last);
* ``{"interval": "[5,8)", ...}`` / ``sharp_turn|8|5|8|sharp|75|bus``: a ``collectIntervals/1``
  fluent holding at the time points 5 <= T < 8 (its ``t`` is the left end).

Which CSV rows are fluents is the program's declaration (``points/1``, ``collectIntervals/1``);
fields that read as integers become integers, as RTEC's reader makes them numbers.  Bad lines
stop the run with file:line:column, or with ``on_error="skip"`` are reported and skipped.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Iterator
from itertools import islice
from typing import IO

import orjson

from chronolog.core.errors import InputError
from chronolog.core.events import Event, TimeRows
from chronolog.core.source import Loc
from chronolog.dialects.rtec.rows import _span, decode_block
from chronolog.io.interval_json import interval_record, parsed_lines, value_loc

_INT = re.compile(r"^[+-]?\d+$")


def _int_time(line: str, name: str, n: int, value: object) -> int:
    if type(value) is not int:
        raise InputError(f'"t" must be an integer time, not {orjson.dumps(value).decode()}', value_loc(line, name, n, "t"))
    return value


def _jsonl(line: str, name: str, n: int) -> Event | None:
    try:
        obj = orjson.loads(line)
    except orjson.JSONDecodeError:
        obj = None
    if type(obj) is dict and len(obj) == 3:  # the common shape {"t", "pred", "args"}, checked here at once
        t, pred, args = obj.get("t"), obj.get("pred"), obj.get("args")
        if type(t) is int and type(pred) is str and pred and type(args) is list:
            for a in args:
                if type(a) is not str and type(a) is not int:
                    break
            else:  # (a loop, not all(): this runs once per input line)
                return Event(t, pred, tuple(args), False, Loc(name, n, 1))
    got = interval_record(line, name, n)
    if got is None:
        return None
    obj, loc, op, pred, args = got
    if pred is None:
        return Event(_int_time(line, name, n, obj["t"]), loc=loc)
    if "interval" in obj:
        text = obj["interval"]
        span = _span(text) if type(text) is str else None
        if span is None:
            raise InputError('"interval" must be a string such as "[5,8)" or "[5,7]" (integer ends)',
                             value_loc(line, name, n, "interval"))
        a, b = span
        if b <= a:
            raise InputError(f"empty interval {text!r}", value_loc(line, name, n, "interval"))
        return Event(a, pred, tuple(args), op == "retract", loc, span)
    return Event(_int_time(line, name, n, obj["t"]), pred, tuple(args), op == "retract", loc)


def _field(text: str) -> str | int:
    return int(text) if _INT.match(text) else text


class CsvRows:
    """RTEC CSV rows ``Label|Arrival|Occurrence|Attr...`` as events; needs the program's
    declarations to know point and interval fluents."""

    def __init__(self, points: set[str], intervals: set[str]) -> None:
        self.points, self.intervals = points, intervals
        self.arrival: int | None = None  # the arrival time (field 2) of the row parsed last

    def __call__(self, line: str, name: str, n: int) -> Event | None:
        if not line.strip():
            return None
        loc = Loc(name, n, 1)
        cells = line.rstrip("\r").split("|")
        if len(cells) < 3 or not cells[0]:
            raise InputError("an RTEC row is Label|Arrival|Occurrence|Attr... (at least three fields)", loc)
        label = cells[0]
        self.arrival = self._time(cells[1], name, n, line, 2)
        if label in self.intervals:
            if len(cells) < 5:
                raise InputError(f"interval fluent {label}: expected {label}|Arrival|Start|End|Value|Attr...", loc)
            a, b = self._time(cells[2], name, n, line, 3), self._time(cells[3], name, n, line, 4)
            if b <= a:
                raise InputError(f"empty interval ({a},{b})", loc)
            return Event(a, label, tuple(_field(c) for c in cells[5:]) + (_field(cells[4]),), False, loc, (a, b))
        t = self._time(cells[2], name, n, line, 3)
        if label in self.points:
            if len(cells) < 4:
                raise InputError(f"point fluent {label}: expected {label}|Arrival|Time|Value|Attr...", loc)
            value = _field(cells[3])
            args = tuple(_field(c) for c in cells[4:])
            return Event(t, label, args if value == "true" else args + (value,), False, loc)
        return Event(t, label, tuple(_field(c) for c in cells[3:]), False, loc)

    @staticmethod
    def _time(text: str, name: str, n: int, line: str, field: int) -> int:
        if not _INT.match(text):
            col = sum(len(c) + 1 for c in line.split("|")[:field - 1]) + 1
            raise InputError(f"field {field} must be an integer time, not {text!r}", Loc(name, n, col))
        return int(text)


def read_rtec_events(stream: IO[str], name: str, fmt: str = "jsonl", on_error: str = "fail",
                     report: Callable[[str], None] = lambda m: None,
                     csv: CsvRows | None = None) -> Iterator[Event]:
    """The events of an RTEC input, in arrival order."""
    if fmt == "jsonl":
        parse: Callable[[str, str, int], Event | None] = _jsonl
    elif fmt == "rtec" and csv is not None:
        parse = csv
    else:
        raise InputError(f"input format {fmt!r} does not carry RTEC events (use jsonl or rtec)")
    if parse is not csv:
        yield from parsed_lines(stream, name, parse, on_error, report)
        return
    announced = None
    for ev in parsed_lines(stream, name, parse, on_error, report):
        arrival = csv.arrival
        if arrival is not None and arrival > ev.t and (announced is None or arrival > announced):
            yield Event(arrival)  # a delayed row: the stream's time is its arrival, as RTEC loads it
            announced = arrival
        yield ev


BLOCK_LINES = 4096  # lines decoded by one call


def read_rtec_blocks(stream: IO[str], name: str, fmt: str = "jsonl", on_error: str = "fail",
                     report: Callable[[str], None] = lambda m: None,
                     csv: CsvRows | None = None) -> Iterator[Event | TimeRows]:
    """``read_rtec_events``'s events, the usual JSONL lines in bulk: each block of
    ``BLOCK_LINES`` lines is decoded by one msgspec call into typed rows (the checks
    ``_jsonl`` makes, in C, ``io/rtec_rows.py``); runs of facts of one time are
    ``TimeRows``, an interval fact its ``Event``.  A block with any other line (a blank
    one, a retraction, a bad line) is read line by line instead, by the same code as
    ``read_rtec_events``: the same events, errors and messages."""
    if fmt != "jsonl":
        yield from read_rtec_events(stream, name, fmt, on_error, report, csv)
        return

    first = 1
    while True:
        lines = list(islice(stream, BLOCK_LINES))
        if not lines:
            return
        rows = decode_block(lines, name, first)
        if rows is None:
            yield from parsed_lines(lines, name, _jsonl, on_error, report, first)
        else:
            start = 0
            for i, row in enumerate(rows):
                if type(row) is Event:  # an interval fact
                    if start < i:
                        yield TimeRows(rows[start].t, rows[start:i], name, first + start)
                    yield row
                    start = i + 1
                elif row.t != rows[start].t:
                    yield TimeRows(rows[start].t, rows[start:i], name, first + start)
                    start = i
            if start < len(rows):
                yield TimeRows(rows[start].t, rows[start:], name, first + start)
        first += len(lines)
