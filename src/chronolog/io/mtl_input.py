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

from fractions import Fraction
from math import inf
from typing import IO, Callable, Iterator

import orjson

from chronolog.errors import InputError
from chronolog.events import Event
from chronolog.ir import Loc
from chronolog.lang.mtl import interval_from_text, parse_fact_line
from chronolog.mtl import intervals as I

_KEYS = {"t", "interval", "pred", "args", "op"}


def _time(value: object, loc: Loc) -> Fraction:
    if isinstance(value, bool) or not isinstance(value, (int, float, str)):
        raise InputError(f'"t" must be a number or a rational string such as "7/2", not {orjson.dumps(value).decode()}', loc)
    try:
        return I.norm(Fraction(value) if not isinstance(value, float) else Fraction(str(value)))
    except (ValueError, ZeroDivisionError):
        raise InputError(f'"t" must be a number or a rational string such as "7/2", not {value!r}', loc) from None


def _event(line: str, name: str, n: int) -> Event | None:
    if not line.strip():
        return None
    loc = Loc(name, n, 1)
    try:
        obj = orjson.loads(line)
    except orjson.JSONDecodeError as exc:
        raise InputError(f"invalid JSON: {exc.msg}", Loc(name, n, max(1, exc.colno))) from None
    if type(obj) is not dict:
        raise InputError("an event must be a JSON object", loc)
    unknown = sorted(set(obj) - _KEYS)
    if unknown:
        raise InputError(f"unknown key {unknown[0]!r} (allowed: t, interval, pred, args, op)", loc)
    op = obj.get("op")
    if op not in (None, "assert", "retract"):
        raise InputError('"op" must be "retract" or "assert"', loc)
    pred = obj.get("pred")
    if "interval" in obj and "t" in obj:
        raise InputError('an event has either "t" or "interval", not both', loc)
    if pred is None:
        if "interval" in obj or "args" in obj or op:
            raise InputError('a fact needs "pred"', loc)
        if "t" not in obj:
            raise InputError('missing time "t" or "interval"', loc)
        return Event(_time(obj["t"], loc), loc=loc)  # type: ignore[arg-type]
    if type(pred) is not str or not pred:
        raise InputError('"pred" must be a non-empty string', loc)
    args = obj.get("args", [])
    if type(args) is not list or any(type(a) not in (str, int) for a in args):
        raise InputError('"args" must be a list of strings and integers', loc)
    if "interval" in obj:
        if type(obj["interval"]) is not str:
            raise InputError('"interval" must be a string such as "[2,7)"', loc)
        iv = interval_from_text(obj["interval"], name, n)
        if iv[0] == -inf:
            raise InputError("an input interval needs a finite left end", loc)
    elif "t" in obj:
        iv = I.point(_time(obj["t"], loc))
    else:
        raise InputError('missing time "t" or "interval"', loc)
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
    for n, line in enumerate(stream, 1):
        try:
            ev = parse(line.rstrip("\n"), name, n)
        except InputError as exc:
            if on_error != "skip":
                raise
            report(f"{exc.loc}: skipped: {exc.message}")
            continue
        if ev is not None:
            yield ev
