"""A program change at an event time T, embedded (``chronolog run --upgrade T=FILE``).

The contract (docs/reference/contract.md, "Program upgrades"): the answers of the old
program P at times before T and those of the new program P' from T on.  The reference
form here keeps one evaluator per program version, each fed the stream as ``chronolog run``
would feed it, and cuts each one's answer lines to its own part of time — so the sum of the
lines written is the splice of plain runs, whatever the arrival order, late events and
retractions included (each version's evaluator corrects its own part).

Where evaluation at a time depends on no later input (``Dialect.causal``, LARS) a version is
fed only the input before its end: what it would evaluate later cannot reach its part (and a
LARS ``@``-head of an evaluation after T, which dates an atom back before T, belongs to P').
"""

from __future__ import annotations

from collections.abc import Iterator
from fractions import Fraction
from math import inf
from typing import Any

import msgspec

from chronolog.core import intervals as I
from chronolog.core.errors import ChronologError
from chronolog.core.events import Event
from chronolog.core.records import record
from chronolog.dialects.load import load_program
from chronolog.dialects.registry import lookup
from chronolog.evaluator import AnswerChange, Block, Evaluator, Span, Time

_decode = msgspec.json.Decoder().decode
_encode = msgspec.json.encode


@record(frozen=True)
class Version:
    """A program version and the part of time whose answers are its own: ``[start, end)``
    (``start`` None: from the beginning; ``end`` None: from then on)."""

    evaluator: Any
    start: Time | None
    end: Time | None


def parse_time(text: str, integral: bool, what: str) -> Time:
    """An upgrade time as input times are written: ``7``, ``7/2`` (rationals only where the
    dialect's time is rational)."""
    try:
        value = Fraction(text.strip())
    except (ValueError, ZeroDivisionError):
        raise ChronologError(f"error: {what}: {text!r} is not a time") from None
    if value.denominator == 1:
        return value.numerator
    if integral:
        raise ChronologError(f"error: {what}: time {text!r} is not an integer (this dialect's time points are)")
    return value


def parse_upgrade(value: str) -> tuple[str, list[str]]:
    """``T=FILE[,FILE...]`` -> (T as written, the files)."""
    when, sep, files = value.partition("=")
    names = [f for f in files.split(",") if f]
    if not sep or not when.strip() or not names:
        raise ChronologError(f"error: --upgrade {value!r}: write it as T=FILE[,FILE...]")
    return when.strip(), names


class Spliced:
    """The versions of a program as one ``Evaluator``: every event goes to each version that
    needs it, and each version's answer lines are cut to its part of time."""

    dialect = "spliced"

    def __init__(self, versions: list[Version], causal: bool, discrete: bool) -> None:
        if not versions:
            raise ValueError("no program version")
        self.versions = versions
        self.causal = causal
        self.discrete = discrete
        self._latest: list[Time | None] = [None] * len(versions)  # per version: the latest time it was given
        self._beyond = [False] * len(versions)  # the stream reached the version's end

    # -- input --------------------------------------------------------------------------
    def push(self, event: Event) -> None:
        for i, v in enumerate(self.versions):
            self._give(i, v, event)

    def push_block(self, block: Block) -> None:
        for event in block.unpacked():
            self.push(event)

    def _give(self, i: int, v: Version, event: Event) -> None:
        t = event.t
        if not self.causal or v.end is None or t < v.end:
            v.evaluator.push(event)
            if self._latest[i] is None or t > self._latest[i]:  # type: ignore[operator]
                self._latest[i] = t
            if self._beyond[i]:
                self._close(i, v)
            return
        self._beyond[i] = True  # later than its part: it is evaluated up to its end, not beyond
        if self._latest[i] is not None:
            self._close(i, v)

    def _close(self, i: int, v: Version) -> None:
        last = self._last(v)
        if self._latest[i] < last:  # type: ignore[operator]
            v.evaluator.push(Event(last))
            self._latest[i] = last

    def _last(self, v: Version) -> Time:
        """The last time a causal version evaluates: the point before its end."""
        return v.end - 1 if self.discrete else v.end  # type: ignore[operator]

    # -- evaluation ---------------------------------------------------------------------
    def advance(self, until: Time) -> SplicedAnswers:
        return self._each(lambda v, cap: v.evaluator.advance(cap), until)

    def finish(self, until: Time | None = None) -> SplicedAnswers:
        return self._each(lambda v, cap: v.evaluator.finish(cap), until, finishing=True)

    def pending(self) -> SplicedAnswers:
        out = SplicedAnswers()
        for v in self.versions:
            out.add(v.evaluator.pending(), v, self.discrete)
        return out

    def _each(self, call: Any, until: Time | None, finishing: bool = False) -> SplicedAnswers:
        out = SplicedAnswers()
        for i, v in enumerate(self.versions):
            cap = until
            if self.causal and v.end is not None:
                if self._latest[i] is None:  # nothing given yet (the stream starts after its part)
                    if finishing:
                        out.add(v.evaluator.finish(None), v, self.discrete)
                    continue
                if cap is None or cap > self._latest[i]:
                    cap = self._latest[i]
            out.add(call(v, cap), v, self.discrete)
        return out

    # -- what the loop reads afterwards --------------------------------------------------
    def __getattr__(self, name: str) -> Any:
        """Counters (``unmatched_retractions``, ``too_late``, ...): the newest version's,
        which sees the whole stream."""
        if name.startswith("_") or name in ("versions", "causal", "discrete"):
            raise AttributeError(name)
        return getattr(self.versions[-1].evaluator, name)

    def export_state(self) -> dict[str, Any]:
        raise ChronologError("error: a run with --upgrade keeps no checkpoint")

    def import_state(self, data: dict[str, Any]) -> None:
        raise ChronologError("error: a run with --upgrade keeps no checkpoint")


class SplicedAnswers:
    """Answer lines of several versions, each cut to its version's part of time."""

    __slots__ = ("parts", "line_count", "corrections")

    def __init__(self) -> None:
        self.parts: list[bytes] = []
        self.line_count = 0
        self.corrections = 0

    def add(self, batch: Any, v: Version, discrete: bool) -> None:
        if not batch.line_count:
            return
        for line in batch.lines().splitlines():
            cut = cut_line(line, v.start, v.end, discrete)
            if cut is None:
                continue
            self.parts.append(cut + b"\n")
            self.line_count += 1
            if b'"diff":-1' in cut:
                self.corrections += 1

    def lines(self) -> bytes:
        return b"".join(self.parts)

    def __len__(self) -> int:
        return len(list(iter(self)))

    def __iter__(self) -> Iterator[AnswerChange]:
        for line in self.parts:
            got = _decode(line)
            if "pred" in got:
                span = Span.point(got["t"]) if "t" in got else _span(got["interval"])
                yield got["pred"], tuple(got["args"]), span, got.get("diff", 1)


def _time(text: str) -> Any:
    if text == "inf":
        return inf
    if text == "-inf":
        return -inf
    value = Fraction(text)
    return value.numerator if value.denominator == 1 else value


def _iv(text: str) -> I.Iv:
    lo, hi = text[1:-1].split(",")
    return (_time(lo), text[0] == "[", _time(hi), text[-1] == "]")


def _span(text: str) -> Span:
    lo, lc, hi, hc = _iv(text)
    return Span(lo, None if hi == inf else hi, lc, hc)


def cut_line(line: bytes, start: Time | None, end: Time | None, discrete: bool) -> bytes | None:
    """An answer line (CONTRACT §3) cut to ``[start, end)``: the line itself when it lies
    inside, None when it lies outside, else the line with its part inside (written closed at
    integer ends where time is integer points)."""
    got = _decode(line)
    if "interval" not in got:
        t = got.get("t")
        if t is None or ((start is None or t >= start) and (end is None or t < end)):
            return line
        return None
    iv = _iv(got["interval"])
    keep = (-inf if start is None else start, start is not None, inf if end is None else end, False)
    part = I.intersect(iv, keep)
    if part is None:
        return None
    if part == iv:
        return line
    lo, lc, hi, hc = part
    if discrete and not hc and hi != inf:  # integer points: [3,7) is [3,6]
        hi, hc = hi - 1, True
    key, value = ("t", lo) if discrete and lo == hi else ("interval", I.text((lo, lc, hi, hc)))
    return _encode({(key if k == "interval" else k): (value if k == "interval" else x) for k, x in got.items()})


def spliced(evaluators: list[Evaluator], times: list[Time], causal: bool, discrete: bool) -> Spliced:
    """The versions of ``evaluators`` (oldest first), the i-th from ``times[i-1]`` on."""
    if len(times) != len(evaluators) - 1:
        raise ValueError("one upgrade time per new version")
    if any(b <= a for a, b in zip(times, times[1:], strict=False)):
        raise ChronologError("error: --upgrade times must increase")
    bounds: list[Time | None] = [None, *times, None]
    return Spliced([Version(e, bounds[i], bounds[i + 1]) for i, e in enumerate(evaluators)], causal, discrete)


def new_versions(program: Any, upgrades: list[str], dialect: str | None) -> list[tuple[Time, list[str], Any]]:
    """The ``--upgrade T=FILE[,FILE...]`` values as (T, files, program): each new program read as
    ``run`` reads programs (``--dialect``, else by extension; errors with file:line:col), in
    the old one's language; the times increasing."""
    row = lookup(program.dialect)
    versions: list[tuple[Time, list[str], Any]] = []
    for value in upgrades:
        when, files = parse_upgrade(value)
        t = parse_time(when, integral=row.discrete, what=f"--upgrade {value}")
        new = load_program(files, dialect)
        new_row = lookup(new.dialect)
        if new_row.title != row.title:
            raise ChronologError(f"error: --upgrade {value}: a {new_row.title} program cannot replace a "
                                 f"{row.title} program (an upgrade keeps the language)")
        if row.dates_back(new):
            raise ChronologError(f"error: --upgrade {value}: the new program has @-heads, which date atoms "
                                 "before the time point evaluated; --upgrade does not take them yet")
        if versions and t <= versions[-1][0]:
            raise ChronologError(f"error: --upgrade {value}: upgrade times must increase")
        versions.append((t, files, new))
    return versions


def upgraded(program: Any, evaluator: Evaluator, options: Any, upgrades: list[str], dialect: str | None,
             warn: Any) -> Spliced:
    """``chronolog run``'s evaluator with its ``--upgrade`` versions, each with the same options."""
    row = lookup(program.dialect)
    versions = new_versions(program, upgrades, dialect)
    evaluators = [evaluator, *(lookup(new.dialect).evaluator(new, options, warn) for _, _, new in versions)]
    return spliced(evaluators, [t for t, _, _ in versions], row.causal, row.discrete)
