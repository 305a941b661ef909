"""The validation of one decoded JSONL event (CONTRACT §2) and its messages.

Two checks, shared by the embedded reader (``io/formats.py``) and the
fleet's ingest (``stages/ingest.py``): ``plain_fact``, a few type checks that
pass the common well-formed fact, and ``check_event``, the full check of
anything else, which names what is wrong and the column where it stands
(found by ``io/json_scan.py``).  The rules themselves are listed in
``io/formats.py``'s docstring.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from chronolog.core.events import Event
from chronolog.io.json_scan import WS, Members

if TYPE_CHECKING:
    import orjson

KEYS = frozenset({"t", "pred", "args", "op"})
_NO_ARGS: list = []  # the default "args" (never mutated)


class BadLine(Exception):
    """A bad line: message and 1-based column (turned into an InputError by the reader)."""

    def __init__(self, message: str, col: int = 1) -> None:
        super().__init__(message)
        self.message = message
        self.col = col


def plain_fact(obj: object) -> Event | None:
    """The fast path of validation: a decoded line that is a well-formed fact
    without ``op``; None means "check it in full" (it may still be valid)."""
    if type(obj) is dict and obj.keys() <= KEYS and "op" not in obj:
        t = obj.get("t")
        pred = obj.get("pred")
        args = obj.get("args", _NO_ARGS)
        if type(t) is int and type(pred) is str and pred and type(args) is list:
            for a in args:
                if type(a) is not str and type(a) is not int:
                    return None
            return Event(t, pred, tuple(args))
    return None


def check_event(obj: object, raw: str) -> Event:
    """Full validation of one parsed JSONL value (the slow path)."""
    if type(obj) is not dict:
        raise BadLine(f"an event must be a JSON object, not {_kind(obj)}", _first_col(raw))
    where = Members(raw)
    if "interval" in obj:
        raise BadLine("interval facts need the mtl dialect", where.value_col("interval"))
    for key in obj:
        if key not in KEYS:
            raise BadLine(f"unknown key {_show(key)} (allowed: t, pred, args, op)", where.key_col(key))
    if "t" not in obj:
        raise BadLine('missing time "t"', _first_col(raw))
    t = obj["t"]
    if type(t) is not int:
        text = where.text("t")
        if type(t) is float and _is_int_text(text):
            raise BadLine(f'"t" is out of range (64-bit integers): {text}', where.value_col("t"))
        raise BadLine(f'"t" must be an integer time point, not {text}', where.value_col("t"))
    op = obj.get("op")
    if op is not None and op != "retract" and op != "assert":
        raise BadLine(f'"op" must be "retract" or "assert", not {where.text("op")}', where.value_col("op"))
    pred = obj.get("pred")
    args = obj.get("args", [])
    if pred is None:
        if op == "retract":
            raise BadLine('a retraction needs "pred"', where.key_col("op"))
        if args != []:
            raise BadLine('an event with "args" needs "pred"', where.key_col("args"))
        return Event(t)
    if type(pred) is not str or not pred:
        raise BadLine(f'"pred" must be a non-empty string, not {where.text("pred")}', where.value_col("pred"))
    if type(args) is not list:
        raise BadLine(f'"args" must be a list of strings and integers, not {where.text("args")}', where.value_col("args"))
    for i, a in enumerate(args):
        if type(a) is not str and type(a) is not int:
            text, col = where.element("args", i)
            if type(a) is float and _is_int_text(text):
                raise BadLine(f"argument {i + 1} is out of range (64-bit integers): {text}", col)
            raise BadLine(f"argument {i + 1} must be a string or an integer, not {text}", col)
    return Event(t, pred, tuple(args), op == "retract")


def decode_message(exc: orjson.JSONDecodeError, raw: str) -> str:
    """The message of a line orjson could not decode."""
    if surrogate_col(raw):
        return "the line is not valid UTF-8"
    if raw.lstrip(WS).startswith("#"):
        return "invalid JSON: comments are not allowed in JSONL input (use --format lines for '#' comments)"
    return f"invalid JSON: {exc.msg}"


def decode_col(exc: orjson.JSONDecodeError, raw: str) -> int:
    return surrogate_col(raw) or (exc.colno if isinstance(exc.colno, int) and exc.colno > 0 else 1)


def surrogate_col(raw: str) -> int:
    """Column of the first undecodable byte (read with errors='surrogateescape'), else 0."""
    if raw.isascii():
        return 0
    for i, ch in enumerate(raw):
        if "\ud800" <= ch <= "\udfff":
            return i + 1
    return 0


def _is_int_text(text: str) -> bool:
    return text.lstrip("-").isdigit()


def _kind(obj: object) -> str:
    return {list: "an array", str: "a string", int: "a number", float: "a number", bool: "a boolean"}.get(
        type(obj), "null"
    )


def _show(text: str, limit: int = 40) -> str:
    import orjson  # noqa: PLC0415 (an error message: loaded already, the line was decoded with it)

    shown = orjson.dumps(text).decode()
    return shown if len(shown) <= limit else shown[: limit - 4] + '..."'


def _first_col(raw: str) -> int:
    return len(raw) - len(raw.lstrip(WS)) + 1
