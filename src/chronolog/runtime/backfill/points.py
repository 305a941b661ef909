"""Answer lines as points, and corrections as answer lines (CONTRACT §3).

A published answer stream means the set of (pred, args, time point) whose
diffs sum to 1.  ``parse_answer`` validates one line (``t`` or ``interval``
form, optional ``diff``); ``published`` sums the lines over a span (an
``inf`` end runs to the span's end); ``corrections`` compares with the true
points; ``correction_lines`` writes the differences as ``diff`` lines,
consecutive points of one atom merged into ``[a,b]`` intervals.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Iterator, Mapping

import orjson

from chronolog.core.errors import InputError
from chronolog.core.source import Loc
from chronolog.io.interval_json import key_loc, value_loc

Point = tuple[str, tuple, int]  # (pred name, args, time point): one answer point

_INTERVAL = re.compile(r"^([\[(])\s*(-?\d+)\s*,\s*(-?\d+|inf)\s*([\])])$")
_KEYS = frozenset({"t", "interval", "pred", "args", "diff"})

# One parsed answer line: pred, args, first point, last point (None: inf), diff.
Answer = tuple[str, tuple, int, "int | None", int]


def at(raw: str, loc: Loc, name: str, *, key: bool = False) -> Loc:
    """Where the value of ``name`` (or, with ``key``, the key itself) stands in a decoded line:
    the column of a message about it (``loc`` names the line)."""
    return (key_loc if key else value_loc)(raw, loc.file, loc.line, name)


def answer_fields(raw: str, loc: Loc) -> tuple[dict, str, tuple, int] | None:
    """The checks every answer line passes, whatever its time domain: (the
    object, pred, args, diff), None for a blank line; InputError naming ``loc``."""
    try:
        obj = orjson.loads(raw)
    except orjson.JSONDecodeError as exc:
        if not raw.strip():
            return None
        raise InputError(f"invalid JSON: {exc.msg}", loc) from None
    if type(obj) is not dict:
        raise InputError("an answer line must be a JSON object", loc)
    if obj.get("no_answer_set") is True and set(obj) == {"t", "no_answer_set"} and type(obj["t"]) is int:
        return None  # no answer set at t: the line carries no atom (docs/tms.md)
    for k in obj:
        if k not in _KEYS:
            raise InputError(f"unknown key {k!r} in an answer line (allowed: t, interval, pred, args, diff)", at(raw, loc, k, key=True))
    pred = obj.get("pred")
    if type(pred) is not str or not pred:
        raise InputError('"pred" must be a non-empty string', at(raw, loc, "pred"))
    args = obj.get("args", [])
    if type(args) is not list or any(type(a) is not str and type(a) is not int for a in args):
        raise InputError('"args" must be a list of strings and integers', at(raw, loc, "args"))
    diff = obj.get("diff", 1)
    if type(diff) is not int or diff not in (1, -1):
        raise InputError('"diff" must be 1 or -1', at(raw, loc, "diff"))
    if ("t" in obj) == ("interval" in obj):
        raise InputError('an answer line needs exactly one of "t" and "interval"', loc)
    return obj, pred, tuple(args), diff


def parse_answer(raw: str, loc: Loc) -> Answer | None:
    """One answer line (None for a blank line); InputError naming ``loc`` if it is bad."""
    fields = answer_fields(raw, loc)
    if fields is None:
        return None
    obj, pred, args, diff = fields
    if "t" in obj:
        t = obj["t"]
        if type(t) is not int:
            raise InputError('"t" must be an integer time point', at(raw, loc, "t"))
        return pred, args, t, t, diff
    when = obj["interval"]
    m = _INTERVAL.match(when) if type(when) is str else None
    if not m:
        raise InputError(f'bad "interval" {orjson.dumps(when).decode()} (expected e.g. "[3,8]" or "[5,inf)")',
                         at(raw, loc, "interval"))
    lo = int(m.group(2)) + (m.group(1) == "(")
    if m.group(3) == "inf":
        if m.group(4) != ")":
            raise InputError(f'an interval running to inf is open on the right: "{when}"', at(raw, loc, "interval"))
        return pred, args, lo, None, diff
    return pred, args, lo, int(m.group(3)) - (m.group(4) == ")"), diff


def clip(answer: Answer, lo: int, hi: int, last: int) -> tuple[int, int] | None:
    """The points of ``answer`` in ``[lo, hi]``, an ``inf`` end running to ``last``."""
    a, b = answer[2], answer[3]
    b = last if b is None else b
    a, b = max(a, lo), min(b, hi)
    return (a, b) if a <= b else None


def published(answers: Iterable[Answer | None], lo: int, hi: int, last: int) -> dict[Point, int]:
    """The sum of diffs per point of ``[lo, hi]``, zero sums dropped (None: a line without an atom)."""
    total: dict[Point, int] = {}
    for ans in answers:
        if ans is None:
            continue
        span = clip(ans, lo, hi, last)
        if span is None:
            continue
        pred, args, diff = ans[0], ans[1], ans[4]
        for t in range(span[0], span[1] + 1):
            k = (pred, args, t)
            total[k] = total.get(k, 0) + diff
    return {k: v for k, v in total.items() if v}


def corrections(truth: Iterable[Point], before: Mapping[Point, int]) -> list[tuple[str, tuple, int, int]]:
    """(pred, args, t, diff) that turn the sums ``before`` into exactly ``truth``."""
    want = set(truth)
    out = [(p, a, t, 1 - before.get((p, a, t), 0)) for p, a, t in want]
    out += [(p, a, t, -n) for (p, a, t), n in before.items() if (p, a, t) not in want]
    return [c for c in out if c[3]]


def _order(atom: tuple[str, tuple]) -> tuple:
    """Deterministic order for mixed str/int arguments."""
    return (atom[0], tuple((type(a) is str, a) for a in atom[1]))


def correction_lines(changes: Iterable[tuple[str, tuple, int, int]]) -> Iterator[dict]:
    """Answer lines with ``diff`` for the changes, consecutive points of one atom and
    one sign merged into ``[a,b]`` intervals; atoms in a deterministic order."""
    by_atom: dict[tuple[str, tuple], list[tuple[int, int]]] = {}
    for pred, args, t, d in changes:
        units = by_atom.setdefault((pred, tuple(args)), [])
        units.extend((t, 1 if d > 0 else -1) for _ in range(abs(d)))
    for atom in sorted(by_atom, key=_order):
        runs: list[list[int]] = []
        extra: list[tuple[int, int]] = []
        for t, sign in sorted(by_atom[atom]):
            if runs and runs[-1][2] == sign and runs[-1][1] == t - 1:
                runs[-1][1] = t
            elif runs and runs[-1][2] == sign and runs[-1][1] == t:
                extra.append((t, sign))  # a point off by more than one (a corrupt published stream)
            else:
                runs.append([t, t, sign])
        for a, b, sign in sorted(runs) + [[t, t, s] for t, s in extra]:
            rec: dict = {"t": a} if a == b else {"interval": f"[{a},{b}]"}
            rec["pred"] = atom[0]
            rec["args"] = list(atom[1])
            rec["diff"] = sign
            yield rec


def dumps(rec: dict) -> str:
    return orjson.dumps(rec).decode()
