"""DatalogMTL input: interval facts from JSON Lines (CONTRACT §2) or MeTeoR data files.

JSONL lines are ``{"interval": "[2,7)", "pred": ..., "args": [...]}``, a
point ``{"t": 5, ...}`` (a number, or a rational as a string, ``"7/2"``),
``"op": "retract"`` to withdraw an earlier event, or ``{"t": 9}`` to advance
time.  ``--format meteor`` reads ``Pred(a,b)@[1,3]`` lines.  Each fact
becomes an ``Event`` whose ``t`` is the interval's left end (its place in
time order) and whose ``span`` is the interval.  Bad lines stop the run with
file:line:column, or with ``on_error="skip"`` are reported and skipped.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from fractions import Fraction
from math import inf
from typing import IO

import orjson

from chronolog.core.errors import InputError
from chronolog.core.events import Event
from chronolog.dialects.mtl import intervals as I
from chronolog.dialects.mtl.parser import interval_from_text, parse_fact_line
from chronolog.io.interval_json import inside_value, interval_record, parsed_lines, value_loc


def _time(line: str, name: str, n: int, value: object) -> Fraction:
    """The ``t`` of a line as an exact rational; a bad one is an error at its column."""
    if not isinstance(value, bool) and isinstance(value, (int, float, str)):
        try:
            return I.norm(Fraction(value) if not isinstance(value, float) else Fraction(str(value)))
        except (ValueError, ZeroDivisionError):
            pass
    shown = orjson.dumps(value).decode()
    raise InputError(f'"t" must be a number or a rational string such as "7/2", not {shown}', value_loc(line, name, n, "t"))


def _event(line: str, name: str, n: int) -> Event | None:
    got = interval_record(line, name, n)
    if got is None:
        return None
    obj, loc, op, pred, args = got
    if pred is None:
        return Event(_time(line, name, n, obj["t"]), loc=loc)  # type: ignore[arg-type]
    if "interval" in obj:
        if type(obj["interval"]) is not str:
            raise InputError('"interval" must be a string such as "[2,7)"', value_loc(line, name, n, "interval"))
        try:
            iv = interval_from_text(obj["interval"], name, n)
        except InputError as exc:
            raise inside_value(exc, line, "interval") from None
        if iv[0] == -inf:
            raise InputError("an input interval needs a finite left end", value_loc(line, name, n, "interval"))
    else:
        iv = I.point(_time(line, name, n, obj["t"]))
    return Event(iv[0], pred, tuple(str(a) for a in args), op == "retract", loc, iv)  # type: ignore[arg-type]


def _meteor(line: str, name: str, n: int) -> Event | None:
    fact = parse_fact_line(line, name, n)
    if fact is None:
        return None
    if fact.interval[0] == -inf:
        raise InputError("an input interval needs a finite left end", fact.loc)
    return Event(fact.interval[0], fact.pred, fact.args, False, fact.loc, fact.interval)  # type: ignore[arg-type]


def read_mtl_events(stream: IO[str], name: str, fmt: str = "jsonl", on_error: str = "fail",
                    report: Callable[[str], None] = lambda m: None) -> Iterator[Event]:
    """The events of a DatalogMTL input, in arrival order."""
    if fmt not in ("jsonl", "meteor"):
        raise InputError(f"input format {fmt!r} does not carry DatalogMTL facts (use jsonl or meteor)")
    parse = _event if fmt == "jsonl" else _meteor
    yield from parsed_lines(stream, name, parse, on_error, report)
