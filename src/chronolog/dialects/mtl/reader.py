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
from chronolog.core.source import Loc
from chronolog.dialects.mtl import intervals as I
from chronolog.dialects.mtl.parser import interval_from_text, parse_fact_line
from chronolog.io.interval_json import interval_record, parsed_lines


def _time(value: object, loc: Loc) -> Fraction:
    if isinstance(value, bool) or not isinstance(value, (int, float, str)):
        raise InputError(f'"t" must be a number or a rational string such as "7/2", not {orjson.dumps(value).decode()}', loc)
    try:
        return I.norm(Fraction(value) if not isinstance(value, float) else Fraction(str(value)))
    except (ValueError, ZeroDivisionError):
        raise InputError(f'"t" must be a number or a rational string such as "7/2", not {value!r}', loc) from None


def _event(line: str, name: str, n: int) -> Event | None:
    got = interval_record(line, name, n)
    if got is None:
        return None
    obj, loc, op, pred, args = got
    if pred is None:
        return Event(_time(obj["t"], loc), loc=loc)  # type: ignore[arg-type]
    if "interval" in obj:
        if type(obj["interval"]) is not str:
            raise InputError('"interval" must be a string such as "[2,7)"', loc)
        iv = interval_from_text(obj["interval"], name, n)
        if iv[0] == -inf:
            raise InputError("an input interval needs a finite left end", loc)
    else:
        iv = I.point(_time(obj["t"], loc))
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
