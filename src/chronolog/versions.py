"""Program versions over time: P until T, P' from T on (docs/reference/contract.md §6).

The answers of a program upgraded at an event time T are the old program's before T and
the new one's from T on.  ``Versions`` keeps one evaluator per program version, each fed
the stream as ``chronolog run`` would feed it, and cuts each one's answer lines to its own
part of time — so the sum of the lines written is the splice of plain runs, whatever the
arrival order, late events and retractions included (each version corrects its own part).
Where a version's program evaluates a time on no later input (``Dialect.causal``: LARS, RTEC,
DatalogMTL without future operators) it is fed only the input before its end: what it would
evaluate later cannot reach its part (and a LARS ``@``-head of an evaluation after T, which
dates an atom back before T, belongs to P').

``switch`` is the same change made while running (the fleet): the new version reads the
retained input again, and the answers already written from T on are restated.
``chronolog run --upgrade``, ``backfill --upgrade`` and a fleet service's upgrade all use
this one class, below every runtime.
"""

from __future__ import annotations

import hashlib
from collections.abc import Callable, Iterable, Iterator
from fractions import Fraction
from math import inf
from typing import Any, ClassVar, cast

import msgspec

from chronolog.core import intervals as I
from chronolog.core.errors import ChronologError
from chronolog.core.events import Event
from chronolog.core.records import record
from chronolog.evaluator import (
    STATE_FORMAT,
    AnswerChange,
    Block,
    Changes,
    EvaluatesFrom,
    Evaluator,
    KeepsStrata,
    RestatesKept,
    Span,
    StateError,
    Time,
    interval_line,
    time_text,
)

_decode = msgspec.json.Decoder().decode
_encode = msgspec.json.encode

Sources = tuple[tuple[str, str], ...]  # (file name, text) of a program's files
DIALECT = "versions"  # the ``dialect`` of a ``Versions`` state


def version_id(sources: Iterable[tuple[str, str]]) -> str:
    """A program version's name: the first 12 hex digits of the SHA-256 of its files' texts
    (names left out: the same rules moved to another file are the same program)."""
    digest = hashlib.sha256()
    for _, text in sources:
        digest.update(text.encode())
        digest.update(b"\0")
    return digest.hexdigest()[:12]


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


UPGRADE_KEY = b'{"upgrade":'  # how an upgrade record on the input topic starts
RETAINED_WHOLE = "start"  # ``UpgradeRequest.retained``: the whole input is still held


@record(frozen=True)
class UpgradeRequest:
    """``chronolog upgrade``'s record on the fleet's input topic:
    ``{"upgrade": {"id", "version", "dialect", "at", "sources"}}`` — a request ``id`` (the
    same record sent to every input partition is applied once), the new program's
    ``version_id`` and files, and the upgrade time as input times are written (null: the
    first time the service has not evaluated yet).  ``retained``: set by the ingest of a
    fleet with a finite retention (``IngestStage.stamped``), the time from which every
    service still holds the input (``RETAINED_WHOLE``: all of it, none forgotten yet), so
    that every service decides alike whether it reaches back far enough
    (``retention_refusal``); None: not stamped (each service decides on its own input)."""

    id: str
    version: str
    dialect: str
    at: str | None
    sources: Sources
    retained: str | None = None

    @property
    def key(self) -> bytes:
        """The key of its outcome on the control topic."""
        return f"upgrade-{self.id}".encode()

    def time(self, integral: bool) -> Time | None:
        return None if self.at is None else parse_time(self.at, integral, "upgrade")

    def encode(self) -> bytes:
        spec = {"id": self.id, "version": self.version, "dialect": self.dialect, "at": self.at,
                "sources": [list(s) for s in self.sources]}
        if self.retained is not None:
            spec["retained"] = self.retained
        return _encode({"upgrade": spec})

    @staticmethod
    def decode(value: bytes) -> UpgradeRequest:
        """The request of a record (``ValueError`` saying what is wrong)."""
        try:
            got = _decode(value)["upgrade"]
            sources = tuple((str(name), str(text)) for name, text in got["sources"])
            at, retained = got["at"], got.get("retained")
            return UpgradeRequest(str(got["id"]), str(got["version"]), str(got["dialect"]),
                                  None if at is None else str(at), sources, None if retained is None else str(retained))
        except (msgspec.DecodeError, KeyError, TypeError, ValueError) as exc:
            raise ValueError(f"{type(exc).__name__}: {exc}") from None


@record
class Version:
    """A program version and the part of time whose answers are its own: ``[start, end)``
    (``start`` None: from the beginning; ``end`` None: from then on).  ``sources``: the
    program's files (None: the program the process was started with).  ``causal``: its
    answers at a time need no later input, so it is fed nothing from its end on.  ``dated``:
    its part is chosen by the time point evaluated (LARS ``@``-heads, ``Dialect.evaluations``):
    its evaluator answers only what its evaluations from ``start`` on derive, which may lie up
    to ``dated`` before the time evaluated (``inf``: anywhere), so before ``start`` too; its
    lines are cut at its end only.  None: its lines are cut to ``[start, end)``."""

    evaluator: Any
    start: Time | None
    end: Time | None
    sources: Sources | None = None
    causal: bool = False
    dated: Any = None  # Time | float (inf) | None

    @property
    def since(self) -> Time | None:
        """Where its lines are cut at the start: ``start``, or nowhere for a ``dated`` version."""
        return None if self.dated is not None else self.start


class Versions:
    """The versions of a program as one ``Evaluator``: every event goes to each version that
    needs it, and each version's answer lines are cut to its part of time."""

    dialect: ClassVar[str] = DIALECT
    resumes_mid_stream: ClassVar[bool] = False

    def __init__(self, versions: list[Version], discrete: bool) -> None:
        if not versions:
            raise ValueError("no program version")
        self.versions = versions
        self.discrete = discrete
        self._latest: list[Time | None] = [None] * len(versions)  # per version: the latest time it was given
        self._beyond = [False] * len(versions)  # the stream reached the version's end
        # per version: the time it was last evaluated up to in this process (not stored: after a
        # restore a version is dropped only once evaluated again, ``_drop_unreachable``)
        self._evaluated: list[Time | None] = [None] * len(versions)
        self.dropped = 0  # old versions dropped since this process started (unreachable)
        # per version: whether it may have changed since ``take_touched`` (given an event, evaluated
        # to another time), so that a service writes again only the versions that did
        # (``stages/evaluator.py``): an old version stopped at its end is written once
        self._touched = [True] * len(versions)
        self.union = Union.of(versions)
        # the last upgrade applied in this process (``switch``): the answer predicates of the
        # unchanged strata it planned to keep, and those it kept with their state (none where
        # the new version read the retained input whole); None: no upgrade applied here
        self.kept: tuple[frozenset[str], frozenset[str]] | None = None

    # -- input --------------------------------------------------------------------------
    def push(self, event: Event, give: Callable[[Any, Event], None] | None = None) -> None:
        """``event`` to each version that needs it; ``give``: how (evaluator, event), where not
        by the evaluator's ``push`` (a LARS fleet's late events, held: dialects/lars/stages.py)."""
        versions = self.versions
        if len(versions) > 1 and event.pred is not None:
            bound = self._late_bound()
            if bound is not None and event.t < bound:  # too late for the stream: the newest counts it
                if give is None:
                    versions[-1].evaluator.push(event)
                else:
                    give(versions[-1].evaluator, event)
                self._touched[-1] = True
                return
        for i, v in enumerate(versions):
            self._give(i, v, event, give)

    def _late_bound(self) -> Time | None:
        """The earliest event time the stream still applies: the newest version's
        ``late_bound`` (its retention; None: any).  An older version, evaluated only up to its
        end, would still take events its retention reaches back to, which a plain run of its
        program over the whole stream ignores as too late; so they go to the newest only."""
        bound = getattr(self.versions[-1].evaluator, "late_bound", None)
        return None if bound is None else bound()

    def push_block(self, block: Block) -> None:
        for event in block.unpacked():
            self.push(event)

    def _give(self, i: int, v: Version, event: Event, give: Callable[[Any, Event], None] | None = None) -> None:
        t = event.t
        if not v.causal or v.end is None or t < v.end:
            self._touched[i] = True
            if give is None:
                v.evaluator.push(event)
            else:
                give(v.evaluator, event)
            if self._latest[i] is None or t > self._latest[i]:  # type: ignore[operator]
                self._latest[i] = t
            if self._beyond[i]:
                self._close(i, v)
            return
        if not self._beyond[i]:
            self._beyond[i] = self._touched[i] = True  # later than its part: evaluated up to its end, not beyond
        if self._latest[i] is not None:
            self._close(i, v)
        else:  # the stream starts after its part: told where (RTEC's timeline still starts at 0, so the
            v.evaluator.push(Event(t))  # part has answers; LARS's starts at t, so it has none), once
            self._latest[i] = t

    def _close(self, i: int, v: Version) -> None:
        """(called for a version with an end only)"""
        end = cast(Time, v.end)
        last = end - 1 if self.discrete else end
        if self._latest[i] < last:  # type: ignore[operator]
            self._touched[i] = True
            v.evaluator.push(Event(last))
            self._latest[i] = last

    # -- evaluation ---------------------------------------------------------------------
    def advance(self, until: Time) -> VersionAnswers:
        return self._each(lambda v, cap: v.evaluator.advance(cap), until)

    def finish(self, until: Time | None = None) -> VersionAnswers:
        return self._each(lambda v, cap: v.evaluator.finish(cap), until, finishing=True)

    def pending(self) -> VersionAnswers:
        out = VersionAnswers()
        for v in self.versions:
            out.add(v.evaluator.pending(), v, self.discrete, self.union)
        return out

    def _each(self, call: Callable[[Version, Any], Any], until: Time | None, finishing: bool = False) -> VersionAnswers:
        out = VersionAnswers()
        for i, v in enumerate(self.versions):
            cap = until
            if v.causal and v.end is not None:
                if self._latest[i] is None:  # nothing given yet (the stream starts after its part)
                    if finishing:
                        self._touched[i] = True
                        out.add(v.evaluator.finish(None), v, self.discrete, self.union)
                    continue
                if cap is None or cap > self._latest[i]:  # type: ignore[operator]
                    cap = self._latest[i]
            if finishing or cap is None or cap != self._evaluated[i]:  # (the same time again, nothing
                self._touched[i] = True  # given since: evaluates nothing, changes nothing)
            out.add(call(v, cap), v, self.discrete, self.union)
            if cap is not None:
                self._evaluated[i] = cap
        if until is not None:
            self._drop_unreachable()
        return out

    def _drop_unreachable(self) -> None:
        """Drop the old versions no input can reach any more: evaluated to the end of their
        part, which lies before the newest version's ``late_bound`` (older events are too late
        for the stream: ignored).  Every dialect that has the bound changes answers only from
        an applied event's time on (LARS and RTEC are causal, DatalogMTL's streamed programs
        propagate forward), so nothing can change such a version's part: its answers are
        final.  Without a bound (an unlimited retention) nothing is dropped."""
        at = self._late_bound()
        if at is None:
            return
        n = 0
        while n < len(self.versions) - 1:
            end, done = self.versions[n].end, self._evaluated[n]
            last = None if end is None else (end - 1 if self.discrete else end)
            if end is None or done is None or done < last or end > at:  # type: ignore[operator]
                break
            n += 1
        if n:
            for kept in (self.versions, self._latest, self._beyond, self._evaluated, self._touched):
                del kept[:n]
            self.dropped += n

    # -- what drivers read --------------------------------------------------------------
    @property
    def newest(self) -> Version:
        return self.versions[-1]

    def __getattr__(self, name: str) -> Any:
        """Counters (``unmatched_retractions``, ``too_late``, ...) and ``retained``: the
        newest version's, which sees the whole stream."""
        if name.startswith("_") or name in ("versions", "discrete", "dropped", "union"):
            raise AttributeError(name)
        return getattr(self.versions[-1].evaluator, name)

    def export_state(self) -> dict[str, Any]:
        return self.export_head([self.export_row(i) for i in range(len(self.versions))])

    def export_head(self, rows: list[dict[str, Any]]) -> dict[str, Any]:
        """The state of the versions whose rows (``export_row``, or what stands for one where it
        is stored apart: ``stages/evaluator.py``) are ``rows``."""
        return {"format": STATE_FORMAT, "dialect": DIALECT, "discrete": self.discrete, "versions": rows,
                "union": None if self.union is None else self.union.export_state()}

    def export_row(self, i: int) -> dict[str, Any]:
        """The i-th version's part of ``export_state``: its program, part of time and evaluator state."""
        v = self.versions[i]
        return {"sources": None if v.sources is None else [list(s) for s in v.sources],
                "start": _text(v.start), "end": _text(v.end), "causal": v.causal, "dated": _back_text(v.dated),
                "latest": _text(self._latest[i]), "beyond": self._beyond[i], "state": v.evaluator.export_state()}

    def take_touched(self) -> list[bool]:
        """Per version, whether its ``export_row`` may differ from the one it gave at the last call
        (all True the first time); the marks are cleared."""
        got, self._touched = self._touched, [False] * len(self.versions)
        return got

    def import_state(self, data: dict[str, Any]) -> None:
        raise StateError("program versions restore through versions.restore (they build their evaluators)")


def restore(data: dict[str, Any], make: Callable[[Sources | None], Evaluator]) -> Versions:
    """``Versions`` from its ``export_state``: each version's evaluator made by ``make``
    (its program's files; None: the process's own program) and given its state."""
    if data.get("format") != STATE_FORMAT or data.get("dialect") != DIALECT:
        raise StateError("not a state of program versions")
    try:
        rows = data["versions"]
        versions = []
        for row in rows:
            sources = None if row["sources"] is None else tuple((str(n), str(t)) for n, t in row["sources"])
            evaluator = make(sources)
            evaluator.import_state(row["state"])
            # (states written before causality was per program: the dialect's, for all versions)
            causal = bool(row["causal"] if "causal" in row else data["causal"])
            versions.append(Version(evaluator, _time(row["start"]), _time(row["end"]), sources, causal,
                                    _back(row.get("dated"))))
        out = Versions(versions, bool(data["discrete"]))
        if out.union is not None and data.get("union") is not None:
            out.union.import_state(data["union"])
        out._latest = [_time(row["latest"]) for row in rows]
        out._beyond = [bool(row["beyond"]) for row in rows]
    except (KeyError, TypeError, ValueError) as exc:
        raise StateError(f"program versions state: {exc}") from None
    return out


def _text(t: Time | None) -> str | None:
    return None if t is None else time_text(t)


def _time(text: str | None) -> Time | None:
    if text is None:
        return None
    value = Fraction(text)
    return value.numerator if value.denominator == 1 else value


def _back_text(back: Any) -> str | None:
    return None if back is None else "inf" if back == inf else time_text(back)


def _back(text: str | None) -> Any:
    return inf if text == "inf" else _time(text)


class Union:
    """The answer points that several versions can write: a ``dated`` version's atoms in
    ``[start - dated, start)``, which the versions before it answer too.  Their lines there
    are counted per point, so that the sum of the lines written is the union of the
    versions' answers (a point written once, withdrawn when no version answers it any more).
    Integer time points only (``Dialect.evaluations`` is LARS's)."""

    def __init__(self, lo: Any, hi: Time) -> None:
        self.lo, self.hi = lo, hi  # the points counted: [lo, hi)
        self.claims: dict[tuple[bytes, int], int] = {}  # (the line without time and diff, point) -> versions

    @staticmethod
    def of(versions: list[Version]) -> Union | None:
        """The points ``versions`` can share (None: none: no version is dated)."""
        dated = [(v.start, v.dated) for v in versions if v.dated is not None and v.start is not None]
        if not dated:
            return None
        return Union(min(start - back for start, back in dated), max(start for start, _ in dated))

    def lines(self, line: bytes | None) -> list[bytes]:
        """A version's line as the lines of the union: unchanged outside ``[lo, hi)``, inside it
        one ``t`` line per point whose count of versions answering it leaves or reaches 0."""
        return [part for part, _ in self.points(line)]

    def points(self, line: bytes | None) -> list[tuple[bytes, tuple[bytes, int] | None]]:
        """``lines``, each with the point it gives or takes back inside ``[lo, hi)`` (the line
        without time and diff, the point; None: a line outside, as the version wrote it)."""
        if line is None:
            return []
        got = _decode(line)
        if "pred" not in got:
            return [(line, None)]
        lo = None if self.lo == -inf else self.lo
        out: list[tuple[bytes, tuple[bytes, int] | None]] = [
            (part, None) for part in (cut_line(line, None, lo, True) if lo is not None else None,
                                      cut_line(line, self.hi, None, True)) if part is not None]
        inside = cut_line(line, lo, self.hi, True)
        if inside is None:
            return out
        got = _decode(inside)
        diff = got.pop("diff", 1)
        first, end = _points_of(got)
        key = _encode(got)
        for t in range(first, end):
            before = self.claims.get((key, t), 0)
            now = before + diff
            if now:
                self.claims[key, t] = now
            else:
                self.claims.pop((key, t), None)
            if (before == 0) != (now == 0):
                out.append((_encode({"t": t, **got, **({} if diff == 1 else {"diff": -1})}), (key, t)))
        return out

    def minimal(self, lines: Iterable[bytes | None]) -> list[bytes]:
        """``lines`` (a batch written at once) as the union's lines, without the pairs that
        cancel (``VersionAnswers``)."""
        out = VersionAnswers()
        out.extend_points(part for line in lines for part in self.points(line))
        return [part[:-1] for part in out.parts if part is not None]

    def export_state(self) -> dict[str, Any]:
        return {"claims": [[key.decode(), t, n] for (key, t), n in self.claims.items()]}

    def import_state(self, data: dict[str, Any]) -> None:
        self.claims = {(str(key).encode(), int(t)): int(n) for key, t, n in data["claims"]}


class VersionAnswers:
    """Answer lines of several versions, each cut to its version's part of time.

    A ``Union``'s lines are written without the pairs that cancel within the batch: the union
    writes a point's lines alternately (+1 when its count of versions leaves 0, -1 when it
    reaches 0), so a point's line of the other sign than its pending one in the batch drops
    both — one version withdrawing what another answers at the same late event, or a
    version's interval opened and closed in one batch (``[2,inf)`` then ``[3,inf)`` -1, cut
    to points): noise.  A point keeps at most its batch's net line, which moves its sum as
    the pair's lines did together, so every prefix still sums to 0 or 1 per point."""

    __slots__ = ("parts", "line_count", "corrections", "_changes", "_decoded", "_pending")

    def __init__(self) -> None:
        self.parts: list[bytes | None] = []  # (None: a line cancelled)
        self.line_count = 0
        self.corrections = 0
        self._changes: list[AnswerChange] = []  # the parts decoded so far (``__iter__``), in order
        self._decoded = 0  # how many parts ``_changes`` covers
        self._pending: dict[tuple[bytes, int], int] = {}  # a union's point -> its line's index in parts

    def add(self, batch: Any, v: Version, discrete: bool, union: Union | None = None) -> None:
        if batch.line_count:
            cut = (cut_line(line, v.since, v.end, discrete) for line in batch.lines().splitlines())
            if union is None:
                self.extend(cut)
            else:
                self.extend_points(part for line in cut for part in union.points(line))

    def extend_points(self, lines: Iterable[tuple[bytes, tuple[bytes, int] | None]]) -> None:
        """A union's lines with their points (``Union.points``), a pair that cancels dropped."""
        for line, point in lines:
            if point is not None:
                i = self._pending.pop(point, None)
                if i is not None:
                    pending = cast(bytes, self.parts[i])
                    if (b'"diff":-1' in pending) != (b'"diff":-1' in line):
                        self.parts[i] = None
                        self.line_count -= 1
                        self.corrections -= b'"diff":-1' in pending
                        continue
                self._pending[point] = len(self.parts)
            self.extend((line,))

    def extend(self, lines: Iterable[bytes | None]) -> None:
        for line in lines:
            if line is None:
                continue
            self.parts.append(line + b"\n")
            self.line_count += 1
            if b'"diff":-1' in line:
                self.corrections += 1

    def lines(self) -> bytes:
        return b"".join([part for part in self.parts if part is not None])

    def __len__(self) -> int:
        return len(self._decode_new())

    def __iter__(self) -> Iterator[AnswerChange]:
        return iter(self._decode_new())

    def _decode_new(self) -> list[AnswerChange]:
        """The answer changes of every part, each part decoded once (``len`` and iterating
        again read what an earlier call decoded; parts added since are decoded on their own)."""
        self._pending.clear()  # (read: no later line cancels them)
        for line in self.parts[self._decoded:]:
            if line is None:
                continue
            got = _decode(line)
            if "pred" in got:
                span = Span.point(got["t"]) if "t" in got else _span(got["interval"])
                self._changes.append((got["pred"], tuple(got["args"]), span, got.get("diff", 1)))
        self._decoded = len(self.parts)
        return self._changes


def _span(text: str) -> Span:
    return Span.of_iv(I.parse(text))


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
    iv = I.parse(got["interval"])
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


def negated(line: bytes) -> bytes | None:
    """The line that takes ``line`` back (its ``diff`` negated); None for a line that is no
    answer (LARS's ``no_answer_set``)."""
    got = _decode(line)
    if "pred" not in got:
        return None
    if got.get("diff", 1) == 1:
        got["diff"] = -1
    else:
        del got["diff"]
    return _encode(got)


def _before(span: Span, at: Time) -> bool:
    """Whether ``span`` ends before ``at``."""
    return span.hi is not None and (span.hi < at or (span.hi == at and not span.hi_closed))


def _of(line: bytes, keys: frozenset[str]) -> bool:
    """Whether an answer line's predicate (``p/1``) is one of ``keys``."""
    if not keys:
        return False
    got = _decode(line)
    return "pred" in got and f"{got['pred']}/{len(got['args'])}" in keys


def _restating(batch: Any, at: Time, kept: frozenset[str], discrete: bool, back: bool) -> list[bytes | None]:
    """The lines of ``batch`` cut to ``at`` on, without the ``kept`` predicates' ones; ``back``:
    taken back (negated, last first).  A batch of ``Changes`` is cut change by change, as
    ``cut_line`` cuts the lines it renders to (an upgrade restates thousands: rendering, then
    decoding each line again to cut it and to read its predicate, was most of its cost)."""
    if not isinstance(batch, Changes):
        lines = [part for line in batch.lines().splitlines()
                 if (part := cut_line(line, at, None, discrete)) is not None and not _of(part, kept)]
        return [negated(line) for line in reversed(lines)] if back else list(lines)
    out: list[bytes | None] = []
    for pred, args, span, diff in batch:
        if (kept and f"{pred}/{len(args)}" in kept) or _before(span, at):
            continue
        if span.lo < at or (span.lo == at and not span.lo_closed):  # (cut: as ``cut_line`` writes it)
            hi, closed = span.hi, span.hi_closed
            if discrete and hi is not None and not closed:
                hi, closed = hi - 1, True
            span = Span(at, hi, True, closed)
        out.append(interval_line(pred, args, span, -diff if back else diff, batch.points))
    return out[::-1] if back else out


def versions_of(evaluators: list[Evaluator], times: list[Time], causal: list[bool], discrete: bool,
                sources: list[Sources | None] | None = None, dated: list[Any] | None = None) -> Versions:
    """The versions of ``evaluators`` (oldest first), the i-th from ``times[i-1]`` on;
    ``causal[i]``: whether the i-th program is (``Dialect.causal``); ``dated[i]``: whether the
    i-th is chosen by the time point evaluated (``Version.dated``; its evaluator set so)."""
    if len(times) != len(evaluators) - 1 or len(causal) != len(evaluators):
        raise ValueError("one upgrade time per new version, one causal flag per version")
    if any(b <= a for a, b in zip(times, times[1:], strict=False)):
        raise ChronologError("error: upgrade times must increase")
    bounds: list[Time | None] = [None, *times, None]
    files = sources or [None] * len(evaluators)
    marks = dated or [None] * len(evaluators)
    return Versions([Version(e, bounds[i], bounds[i + 1], files[i], causal[i], marks[i])
                     for i, e in enumerate(evaluators)], discrete)


UNBOUNDED = None  # a program whose answers can need input from any time before (no bounded reach)


def retention_refusal(at: Time, back: Time | None, complete: Time | None) -> str | None:
    """Why a new program whose answers at a time read input ``back`` before it (``UNBOUNDED``:
    any time before) cannot take over from ``at`` on when the input is retained from
    ``complete`` on (None: all of it): the span it needs, ``[at - back, now]``, and the span
    kept (None: it can)."""
    if complete is None or (back is not UNBOUNDED and at - back >= complete):
        return None
    need = ("all earlier input" if back is UNBOUNDED
            else f"input from {time_text(at - back)} on ([T - {time_text(back)}, now])")
    return (f"error: the retained input does not reach far enough back: the new program's answers from "
            f"T={time_text(at)} on need {need}, the retention kept it from {time_text(complete)} on")


def retained_from(request: UpgradeRequest, integral: bool) -> Time | None:
    """The time from which the input is retained by the request's stamp (None: all of it)."""
    got = request.retained
    return None if got is None or got == RETAINED_WHOLE else parse_time(got, integral, "the upgrade's retained input")


def retention_back(reach: Any) -> Time | None:
    """How far back a program's answers read input, for whether the retained input covers it
    (a ``core.reach.Reach``; None: unbounded): its ``back``, or ``UNBOUNDED`` where it has
    none or counts facts (tuple windows: the facts they count may lie anywhere before)."""
    if reach is None or reach.facts:
        return UNBOUNDED
    return reach.back


# (Sources | None, its evaluator or None: only asked, first, last) -> Version.dated (Dialect.evaluations)
Dated = Callable[[Any, Any, Any, Any], Any]


def _undated(sources: Sources | None, evaluator: Any, first: Any, last: Any) -> Any:
    return None


def switch(current: Evaluator, new: Evaluator, sources: Sources, at: Time, done: Time | None,
           causal: Callable[[Sources | None], bool], discrete: bool,
           back: Time | None = UNBOUNDED, kept: frozenset[str] = frozenset(), dated: Dated = _undated,
           make: Callable[[Sources | None], Evaluator] | None = None) -> tuple[Versions, list[bytes]]:
    """A running evaluator upgraded to ``new`` (a fresh evaluator of the program ``sources``,
    whose answers at a time need input up to ``back`` before it) from ``at`` on, after it
    evaluated up to ``done``: the evaluator to go on with, and the lines that restate what
    was written from ``at`` on — the newest program's answers from ``at`` on taken back
    (``Evaluator.written``), the new program's added, computed from the retained input
    (``Evaluator.retained``).  Where both can (``EvaluatesFrom``: LARS's stratified programs)
    they are evaluated from ``at`` - reach only, not over the whole retained history to cut
    the lines before ``at`` away.  From then on each version writes only its own part.
    ``causal``: whether a program (its files; None: the one ``current`` was started with) is
    (``Dialect.causal``).

    ``kept``: the answer predicates (``p/1``) of the strata the new program leaves unchanged
    (``core.strata.kept_answers``): the same answers, so they are neither taken back nor
    given again, where the new evaluator ``KeepsStrata``: it takes their state over from the
    running one and evaluates only the other strata (else it reads the retained input whole
    and every answer from ``at`` on is restated: the running one may hold input not evaluated
    yet, whose changes its cut part would no longer write).

    ``dated``: sets a program's evaluator to answer only its evaluations in [first, last] when
    its evaluations date atoms back (``Dialect.evaluations``; the ``Version.dated`` it
    returns).  A new program that does answers what its evaluations from ``at`` on derive,
    before ``at`` too (counted with the older versions' answers there, ``Union``); a running
    one that does and has evaluated from ``at`` on already (a restatement) is evaluated again
    by a fresh evaluator of its program (``make``) counting its evaluations up to ``at`` - 1
    only, the difference of the lines is written, and the running one counts only those
    from then on."""
    versions = (current if isinstance(current, Versions)
                else Versions([Version(current, None, None, None, causal(None))], discrete))
    newest = versions.newest
    if newest.start is not None and at <= newest.start:
        raise ChronologError(f"error: the upgrade time {time_text(at)} is not after the latest upgrade's "
                             f"({time_text(newest.start)})")
    old = newest.evaluator
    events: list[Event] | None = None  # the retained input, made only where it is read again
    if kept and done is not None and isinstance(new, KeepsStrata) and isinstance(old, KeepsStrata):
        complete, latest = old.retained_span()
    else:
        complete, events = old.retained()
        latest = max((ev.t for ev in events), default=None)
    if not isinstance(current, Versions) and latest is not None:
        versions._latest[0] = latest  # what the running evaluator was given
    refused = retention_refusal(at, back, complete)
    if refused is not None:
        raise ChronologError(refused)
    new_dated = dated(sources, new, at, None)
    # the kept strata's state taken over (their answers the same: neither taken back nor given
    # again), or else the retained input read again and every answer from ``at`` on restated
    planned = kept
    if not (kept and done is not None and isinstance(new, KeepsStrata) and new.keep(old, kept, at, done)):
        kept = frozenset()
        if events is None:
            events = old.retained()[1]
        for ev in events:
            new.push(ev)
        if done is not None and isinstance(new, EvaluatesFrom):  # its answers from ``at`` on only
            new.evaluate_from(at, done)
    again = None  # the running version evaluated again up to ``at`` - 1 (it dates atoms back)
    last = at - 1 if discrete else at  # the running version's last evaluated point from now on
    if done is not None and done >= at and make is not None and dated(newest.sources, None, None, None) is not None:
        again = make(newest.sources)
        dated(newest.sources, again, newest.start, last)
    # what each version wrote, cut to its part (before the change), where the versions' parts
    # come to share points with it: counted anew (``Union``) with the new version among them
    before = [(v, v.since, v.end) for v in versions.versions]
    lines: list[bytes | None]
    restated = new.restated(kept) if kept and isinstance(new, RestatesKept) else None
    if restated is not None:  # (made by its ``keep``: neither version wrote its answers from ``at`` on)
        if again is not None or new_dated is not None:
            raise AssertionError("a restatement made by keep, for a program that dates atoms back")
        written: Any = None
        lines = list(restated)
    else:
        written = _written(old, kept, at if again is None and new_dated is None else None)
        if kept and isinstance(written, Changes):  # (no need to render and cut what is not restated)
            written = Changes([c for c in written if f"{c[0]}/{len(c[1])}" not in kept and not _before(c[2], at)],
                              written.points)
        given = (_restating(new.advance(done), at, kept, discrete, False)
                 if done is not None and new_dated is None else [])
        if again is None:
            # taken back last line first, so that every prefix of what is written means something;
            # a line the new version gives again is neither taken back nor given (no +1/-1 pairs)
            restating = _restated_points if discrete else _restated
            lines = restating(_restating(written, at, kept, discrete, False), given)
        else:
            for ev in events if events is not None else old.retained()[1]:
                again.push(ev)
            lines = _difference([cut_line(line, newest.since, None, discrete) for line in written.lines().splitlines()],
                                [cut_line(line, newest.since, at, discrete)
                                 for line in again.advance(cast(Time, done)).lines().splitlines()]) + given
    if done is not None and new_dated is not None:
        lines += [part for line in new.advance(done).lines().splitlines()
                  if (part := cut_line(line, None, None, discrete)) is not None and not _of(part, kept)]
    newest.end = at
    if again is not None:  # its corrections from now on: of its evaluations before ``at`` only
        dated(newest.sources, newest.evaluator, newest.start, last)
    versions.versions.append(Version(new, at, None, sources, causal(sources), new_dated))
    versions._latest.append(versions._latest[-1])
    versions._beyond.append(False)
    versions._evaluated.append(done)
    versions._touched[-1] = True  # (its end is set)
    versions._touched.append(True)
    if new_dated is not None:
        versions.union = _counted(versions, before, written)
    versions.kept = (planned, kept)
    union = versions.union
    if union is not None:
        return versions, union.minimal(lines)
    return versions, [line for line in lines if line is not None]


def _written(old: Evaluator, kept: frozenset[str], since: Time | None) -> Any:
    """What ``old`` wrote (``Evaluator.written``): without the ``kept`` predicates' answers,
    or from ``since`` on only where it can evaluate from there (``EvaluatesFrom``; the caller
    restates only that part)."""
    if kept and isinstance(old, KeepsStrata):
        return old.written(kept)
    if since is not None and isinstance(old, EvaluatesFrom):
        return old.written(since)
    return old.written()


def _restated(old: list[bytes | None], new: list[bytes | None]) -> list[bytes | None]:
    """``old``'s lines (an answer state from the upgrade time on) taken back, last first, then
    ``new``'s (a changelog from nothing on) given, every prefix meaning something — except
    that where an atom's first new line is one of its old lines (the same answer, given
    again), that line is neither taken back nor given: the atom then holds just that line
    when its new lines go on, as it would after their first.  (Cancelling any equal lines
    could give a later line while an earlier one still holds: a prefix summing to 2.)"""
    atom = lambda line: line.split(b',"diff"', 1)[0].split(b'"pred"', 1)[1].rstrip(b"}")  # noqa: E731 (pred, args)
    first: dict[bytes, bytes] = {}
    for line in new:
        if line is not None:
            first.setdefault(atom(line), line)
    changelog = {atom(line) for line in old if line is not None and b'"diff"' in line}  # (not a state)
    kept: set[bytes] = set()
    back: list[bytes] = []
    for line in old:
        if line is None:
            continue
        key = atom(line)
        if key not in kept and key not in changelog and first.get(key) == line:
            kept.add(key)
        else:
            back.append(line)
    out: list[bytes | None] = [b for line in reversed(back) if (b := negated(line)) is not None]
    for line in new:
        if line is not None and (key := atom(line)) in kept and first.get(key) is line:
            first.pop(key)  # (its first new line: the old one stays)
            continue
        out.append(line)
    return out


def _restated_points(old: list[bytes | None], new: list[bytes | None]) -> list[bytes | None]:
    """``_restated`` for integer time points: per atom only the points where ``old``'s lines
    (from the upgrade time on) and ``new``'s (a changelog from nothing on) differ — the old
    ones taken back, then the new ones given, so that every prefix means something — as
    ``t`` lines where the atom's lines all are, else as intervals (a stream means the points
    whose diffs sum to 1, CONTRACT section 3: restating every line from T on wrote what each
    version's changelog had written again).  The new version's writer goes on from its own
    lines (closing ``[s,inf)`` with ``[e,inf)`` -1), which applies point by point to what the
    stream then holds: the new version's answers.  A ``no_answer_set`` line says no answer
    (CONTRACT section 3): the new version's are given again, the old ones' left as they are."""
    atoms: dict[bytes, tuple[dict, dict[float, int]]] = {}  # atom -> (its line's other fields, steps)
    points = True
    said: list[bytes | None] = []  # the new version's no_answer_set lines
    for sign, lines in ((-1, old), (1, new)):
        for line in lines:
            if line is None:
                continue
            got = _decode(line)
            if "pred" not in got:
                if sign > 0:
                    said.append(line)
                continue
            diff = sign * got.pop("diff", 1)
            points = points and "t" in got
            lo, hi = _points_of(got)
            if lo >= hi:
                continue
            entry = atoms.setdefault(_encode(got), (got, {}))[1]
            entry[lo] = entry.get(lo, 0) + diff
            entry[hi] = entry.get(hi, 0) - diff
    back: list[bytes | None] = []
    given: list[bytes | None] = []
    for fields, steps in atoms.values():
        level, run = 0, None  # the difference new - old from the previous step on
        for t in sorted(steps):
            if run is not None and level:
                (given if level > 0 else back).extend(run_lines(fields["pred"], tuple(fields["args"]), run, t, level,
                                                                points))
            level += steps[t]
            run = t
    return back + given + said


def run_lines(pred: str, args: tuple, lo: Any, hi: Any, diff: int, points: bool) -> list[bytes | None]:
    """An upgrade's restatement of an atom over the points ``[lo, hi)`` (``hi`` inf: from ``lo``
    on), ``diff`` (1 or -1): ``t`` lines where ``points`` (every line restated was one), else
    one interval line (``_restated_points``, and ``dialects/lars/restating.py``)."""
    if diff not in (1, -1):
        raise ValueError(f"an upgrade's restatement sums to {diff} at {lo}")
    if points and hi != inf:
        return [interval_line(pred, args, Span.point(t), diff) for t in range(lo, hi)]
    return [interval_line(pred, args, Span(lo, None) if hi == inf else Span(lo, hi - 1, True, True), diff)]


def _points_of(line: dict) -> tuple[int, Any]:
    """The integer points ``[lo, hi)`` of a decoded answer line (its ``t`` or ``interval``
    taken out of it; ``hi`` inf for an interval open to the right)."""
    if "t" in line:
        t = line.pop("t")
        return t, t + 1
    lo, lo_closed, hi, hi_closed = I.parse(line.pop("interval"))
    return int(lo) + (0 if lo_closed else 1), inf if hi == inf else int(hi) + (1 if hi_closed else 0)


def _difference(old: list[bytes | None], new: list[bytes | None]) -> list[bytes | None]:
    """Lines whose sum added to ``old``'s makes ``new``'s: ``old``'s that ``new`` does not
    have taken back (last first), ``new``'s that ``old`` does not have given."""
    left: dict[bytes, int] = {}
    for line in new:
        if line is not None:
            left[line] = left.get(line, 0) + 1
    gone = []
    for line in old:
        if line is None:
            continue
        if left.get(line, 0):
            left[line] -= 1
        else:
            gone.append(line)
    out: list[bytes | None] = [back for line in reversed(gone) if (back := negated(line)) is not None]
    for line in new:
        if line is not None and left.get(line, 0):
            left[line] -= 1
            out.append(line)
    return out


def _counted(versions: Versions, before: list[tuple[Version, Time | None, Time | None]], newest_written: Any) -> Union:
    """The ``Union`` of ``versions`` (a dated version added), its counts those of what each
    older version wrote as it was cut before the change (``before``; the newest's lines
    ``newest_written``), every point of it written once."""
    union = Union.of(versions.versions)
    assert union is not None
    for v, since, end in before:
        got = newest_written if v is before[-1][0] else v.evaluator.written()
        for line in got.lines().splitlines():
            union.lines(cut_line(line, since, end, versions.discrete))
    return union
