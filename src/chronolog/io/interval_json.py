"""The JSON object of an input line in the dialects with interval facts (DatalogMTL, RTEC).

CONTRACT §2 with ``interval`` beside ``t``: both readers check the same keys,
``op``, ``pred`` and ``args`` here, and only read the times their own way.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Iterator

import orjson

from chronolog.core.errors import InputError
from chronolog.core.events import Event
from chronolog.core.source import Loc
from chronolog.io.json_scan import Members

KEYS = {"t", "interval", "pred", "args", "op"}


def interval_record(line: str, name: str, n: int) -> tuple[dict, Loc, str | None, str | None, list] | None:
    """The checked object of one line, its location and its ``op``, ``pred`` and ``args``
    (default ``[]``); None for a blank line.  Without ``pred`` it is a time advance and has
    ``t``; with it, ``args`` is a list of strings and integers and exactly one of ``t`` and
    ``interval`` is present."""
    if not line.strip():
        return None
    loc = Loc(name, n, 1)
    try:
        obj = orjson.loads(line)
    except orjson.JSONDecodeError as exc:
        raise InputError(f"invalid JSON: {exc.msg}", Loc(name, n, max(1, exc.colno))) from None
    if type(obj) is not dict:
        raise InputError("an event must be a JSON object", loc)
    unknown = sorted(set(obj) - KEYS)
    if unknown:
        raise InputError(f"unknown key {unknown[0]!r} (allowed: t, interval, pred, args, op)", key_loc(line, name, n, unknown[0]))
    op = obj.get("op")
    if op not in (None, "assert", "retract"):
        raise InputError('"op" must be "retract" or "assert"', value_loc(line, name, n, "op"))
    pred = obj.get("pred")
    if "interval" in obj and "t" in obj:
        raise InputError('an event has either "t" or "interval", not both', key_loc(line, name, n, "interval"))
    if pred is None:
        for key in ("interval", "args", "op"):
            if key in obj and (key != "op" or op):
                raise InputError('a fact needs "pred"', key_loc(line, name, n, key))
        if "t" not in obj:
            raise InputError('missing time "t" or "interval"', loc)
        return obj, loc, op, pred, []
    if type(pred) is not str or not pred:
        raise InputError('"pred" must be a non-empty string', value_loc(line, name, n, "pred"))
    args = obj.get("args", [])
    if type(args) is not list:
        raise InputError('"args" must be a list of strings and integers', value_loc(line, name, n, "args"))
    for i, a in enumerate(args):
        if type(a) not in (str, int):
            raise InputError(f"argument {i + 1} must be a string or an integer", Loc(name, n, Members(line).element("args", i)[1]))
    if "interval" not in obj and "t" not in obj:
        raise InputError('missing time "t" or "interval"', loc)
    return obj, loc, op, pred, args


def value_loc(line: str, name: str, n: int, key: str) -> Loc:
    """Where the value of ``key`` stands in a line that decoded: the column of a message about it."""
    return Loc(name, n, Members(line).value_col(key))


def key_loc(line: str, name: str, n: int, key: str) -> Loc:
    return Loc(name, n, Members(line).key_col(key))


def inside_value(exc: InputError, line: str, key: str) -> InputError:
    """``exc``, raised on the text of ``key``'s string value (its column counted in that text),
    moved to its column in the line."""
    if exc.loc is None:
        return exc
    start = Members(line).value_col(key)  # the opening quote
    return InputError(exc.message, Loc(exc.loc.file, exc.loc.line, start + exc.loc.col))


def parsed_lines(stream: Iterable[str], name: str, parse: Callable[[str, str, int], Event | None],
                 on_error: str, report: Callable[[str], None], first: int = 1) -> Iterator[Event]:
    """``parse`` applied to every line in order: bad lines stop the run (``InputError`` with
    file:line:column), or with ``on_error="skip"`` are reported and skipped.  ``first``: the
    number of the stream's first line."""
    for n, line in enumerate(stream, first):
        try:
            ev = parse(line.rstrip("\n"), name, n)
        except InputError as exc:
            if on_error != "skip":
                raise
            report(f"{exc.loc}: skipped: {exc.message}")
            continue
        if ev is not None:
            yield ev
