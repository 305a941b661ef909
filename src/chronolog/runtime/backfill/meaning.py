"""The meaning of answer changes, the corrections that fix a published stream, and the two
time domains answers are read and written in (CONTRACT §3).

Answers are compared by *meaning*: per ground atom, the set of times where its changes sum
to 1, kept as intervals (``core.intervals.meaning`` and ``corrections``).

A ``Domain`` is how a dialect's time reads and writes (``Dialect.discrete``):

* ``POINTS`` — integer time points (LARS): the point ``t`` is the interval ``[t, t+1)``, so
  that ``[3,5]`` and ``[6,8]`` make one stretch; corrections are written point by point
  merged into runs (``points.correction_lines``: ``t`` or ``[a,b]``, ``diff`` always given).
* ``Intervals`` — rational time (DatalogMTL, RTEC's grid): intervals as they are, read with
  the row's ``interval_of`` and written with ``interval_line`` (``Dialect.points``: integer
  points as ``t`` lines).
"""

from __future__ import annotations

from collections.abc import Callable, Iterable
from fractions import Fraction
from math import inf
from typing import Any, Protocol

import orjson

from chronolog.core import intervals as I
from chronolog.core.errors import InputError
from chronolog.core.intervals import Iv
from chronolog.core.source import Loc
from chronolog.evaluator import Span, interval_line
from chronolog.runtime.backfill import points as P

Atom = tuple[str, str]  # (pred, args as JSON text): a key Spark can group on
Parsed = tuple[str, tuple, Iv, int]  # one answer line: pred, args, its interval, diff


class Domain(Protocol):
    """How a dialect's times read and write (see the module's docstring)."""

    step: int  # 1: integer time points, each [t, t+1); 0: rational time

    def of_span(self, span: Span) -> Iv:
        """An evaluator's answer span as an interval of this domain."""

    def span(self, lo: Any, hi: Any) -> Iv:
        """The times ``lo`` to ``hi``, both included."""

    def parse(self, raw: str, loc: Loc) -> Parsed | None:
        """One published answer line (None for a blank line or one without an atom)."""

    def lines(self, fixes: Iterable[tuple[Atom, Iv, int]]) -> list[dict]:
        """The corrections as answer lines, in a deterministic order."""

    def size(self, length: Any, parallel: int) -> Any:
        """The length of one of ``parallel`` segments over ``length`` of time."""


class Points:
    """Integer time points (see the module's docstring)."""

    step = 1

    def of_span(self, span: Span) -> Iv:
        lo = span.lo if span.lo_closed else span.lo + 1
        hi = inf if span.hi is None else span.hi + 1 if span.hi_closed else span.hi
        return (lo, True, hi, False)

    def span(self, lo: Any, hi: Any) -> Iv:
        return (lo, True, hi + 1, False)

    def parse(self, raw: str, loc: Loc) -> Parsed | None:
        got = P.parse_answer(raw, loc)
        if got is None:
            return None
        pred, args, a, b, diff = got
        return pred, args, (a, True, inf if b is None else b + 1, False), diff

    def lines(self, fixes: Iterable[tuple[Atom, Iv, int]]) -> list[dict]:
        changes = [(pred, tuple(orjson.loads(args)), t, diff) for (pred, args), iv, diff in fixes
                   for t in range(iv[0], iv[2])]  # type: ignore[arg-type]  # (finite: clipped to the span)
        return list(P.correction_lines(changes))

    def size(self, length: Any, parallel: int) -> Any:
        return -(-length // parallel)


class Intervals:
    """Rational time (see the module's docstring); ``points``: integer points as ``t`` lines."""

    step = 0

    def __init__(self, points: bool, interval_of: Callable[[str, str, int], Iv]) -> None:
        self.points = points
        self.interval_of = interval_of

    def of_span(self, span: Span) -> Iv:
        return (span.lo, span.lo_closed, inf if span.hi is None else span.hi, span.hi_closed and span.hi is not None)

    def span(self, lo: Any, hi: Any) -> Iv:
        return (lo, True, hi, True)

    def parse(self, raw: str, loc: Loc) -> Parsed | None:
        return parse_interval_answer(raw, loc, self.interval_of)

    def lines(self, fixes: Iterable[tuple[Atom, Iv, int]]) -> list[dict]:
        out = []
        for (pred, args), iv, diff in sorted(fixes, key=lambda f: (f[0], f[1][0], not f[1][1], f[2])):
            span = Span.of_iv(iv)
            out.append(orjson.loads(interval_line(pred, tuple(orjson.loads(args)), span, diff, self.points)))
        return out

    def size(self, length: Any, parallel: int) -> Any:
        return Fraction(length) / parallel


POINTS = Points()


def domain_of(row: Any) -> Domain:
    """The time domain of a dialect's registry row."""
    return POINTS if row.discrete or row.interval_of is None else Intervals(row.points, row.interval_of)


def parse_interval_answer(raw: str, loc: Loc, interval_from_text: Callable[[str, str, int], Iv]) -> Parsed | None:
    """One answer line over rational time (``t`` a number or ``"7/2"``, or an ``interval``,
    read by the row's ``interval_of``): (pred, args, interval, diff); None for a blank line."""
    fields = P.answer_fields(raw, loc)
    if fields is None:
        return None
    obj, pred, args, diff = fields
    if "t" in obj:
        t = obj["t"]
        try:
            if isinstance(t, bool) or not isinstance(t, (int, str)):
                raise ValueError
            return pred, args, I.point(I.norm(Fraction(t))), diff
        except (ValueError, ZeroDivisionError):
            raise InputError(f'"t" must be a time: an integer or a rational string such as "7/2", not '
                             f'{orjson.dumps(t).decode()}', P.at(raw, loc, "t")) from None
    when = obj["interval"]
    if type(when) is not str:
        raise InputError('"interval" must be a string such as "[2,7)"', P.at(raw, loc, "interval"))
    try:
        return pred, args, interval_from_text(when, loc.file, loc.line), diff
    except InputError as exc:
        raise InputError(f'bad "interval" {orjson.dumps(when).decode()}: {exc.message}', P.at(raw, loc, "interval")) from None
