"""What every dialect's evaluator gives the runtime: one interface, three languages.

LARS (integer time points), DatalogMTL (rational intervals) and the Event
Calculus (fluent intervals) evaluate differently, but the runtimes that drive
them — ``chronolog run``, the fleet's services, their checkpoints and the
Spark backfill — only ever do four things with an evaluator:

1. push input events in arrival order (facts, retractions, time advances;
   a delayed event is simply one whose time lies before what was evaluated),
2. evaluate up to a time and take the answer changes that result, each with
   a ``diff`` of +1 or -1 (corrections of the past included),
3. export and import the evaluator's state as explicit, versioned data
   (JSON-able values only: never a pickle, so a checkpoint read from Kafka or
   RocksDB can be checked field by field and outlives a code change),
4. replay a span, which is what a correction, a recovery and a backfill are.

``Evaluator`` fixes that contract.  Answers leave as an ``Answers`` batch:
``AnswerChange`` values that also render themselves as CONTRACT §3 lines
(``interval_line`` for DatalogMTL and RTEC, LARS's own tuned writer for LARS).
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator, Sized
from math import inf
from typing import TYPE_CHECKING, Any, ClassVar, Protocol, Union, cast, runtime_checkable

from chronolog.core.events import Event
from chronolog.core.records import record

if TYPE_CHECKING:  # (fractions is not imported by a LARS run)
    from fractions import Fraction

    from chronolog.core.intervals import Iv

Time = Union[int, "Fraction"]
STATE_FORMAT = 1  # version of the explicit state encoding; bump on any incompatible change


@record
class Span:
    """A time interval of CONTRACT §3: ``[lo,hi)``, ``(lo,hi]``, ``[lo,inf)``...

    ``hi`` is None for ``inf`` (open until a later line corrects it).  A time
    point ``t`` is ``Span(t, t, True, True)``."""

    lo: Time
    hi: Time | None
    lo_closed: bool = True
    hi_closed: bool = False

    @staticmethod
    def point(t: Time) -> Span:
        return Span(t, t, True, True)

    @staticmethod
    def of_iv(iv: Iv) -> Span:
        """An interval of ``core.intervals`` (its start finite; ``inf`` as its end: None)."""
        lo, lo_closed, hi, hi_closed = iv
        return Span(cast(Time, lo), None if hi == inf else cast(Time, hi), lo_closed, hi_closed)

    @property
    def is_point(self) -> bool:
        return self.hi is not None and self.lo == self.hi and self.lo_closed and self.hi_closed

    def text(self) -> str:
        """MeTeoR/CONTRACT notation: ``[3,7/2)``, ``[5,inf)``."""
        hi = "inf" if self.hi is None else time_text(self.hi)
        close = ")" if self.hi is None or not self.hi_closed else "]"
        return f"{'[' if self.lo_closed else '('}{time_text(self.lo)},{hi}{close}"


def time_text(t: Time) -> str:
    """A time as CONTRACT §2 writes it: integers plainly, other rationals as ``"7/2"``."""
    if type(t) is not int and hasattr(t, "denominator"):  # a Fraction
        return str(t.numerator) if t.denominator == 1 else f"{t.numerator}/{t.denominator}"
    return str(t)


def atom_text(pred: str, args: tuple) -> str:
    """A ground atom as a person reads it in an explanation: ``slow(a1)``, ``alarm``."""
    return f"{pred}({','.join(str(a) for a in args)})" if args else pred


AnswerChange = tuple[str, tuple, Span, int]  # (pred, args, when, ±1)


def interval_line(pred: str, args: tuple, span: Span, diff: int = 1, points: bool = True) -> bytes:
    """One answer line (CONTRACT §3) for a change: a ``t`` line for an integer
    point (unless ``points`` is False: DatalogMTL writes ``[7,7]``, its
    punctual interval), an ``interval`` line otherwise; ``diff`` written only
    when it is -1."""
    from msgspec.json import encode  # noqa: PLC0415 (start-up: msgspec after the read-ahead fork (io/formats.py))

    as_t = points and span.is_point and type(span.lo) is int
    line: dict[str, Any] = {"t": span.lo} if as_t else {"interval": span.text()}
    line["pred"] = pred
    line["args"] = list(args)
    if diff != 1:
        line["diff"] = diff
    return encode(line)


class Changes(list[AnswerChange]):
    """A batch of answer changes rendered with ``interval_line``: what DatalogMTL's
    and RTEC's ``advance`` return (``points``: as ``Dialect.points`` says)."""

    __slots__ = ("points",)

    def __init__(self, changes: Iterable[AnswerChange] = (), points: bool = True) -> None:
        super().__init__(changes)
        self.points = points

    def lines(self) -> bytes:
        return b"".join([interval_line(p, a, s, d, self.points) + b"\n" for p, a, s, d in self])

    @property
    def line_count(self) -> int:
        return len(self)

    @property
    def corrections(self) -> int:
        return sum(1 for change in self if change[3] < 0)


class Answers(Protocol):
    """What ``advance`` and ``finish`` return: the answer changes, and the same
    as CONTRACT §3 lines, so that each dialect keeps its own rendering (LARS
    renders whole time points at once) behind one interface."""

    def __iter__(self) -> Iterator[AnswerChange]: ...

    def __len__(self) -> int: ...

    def lines(self) -> bytes:
        """The changes as answer lines, each ending in a newline."""

    @property
    def line_count(self) -> int:
        """How many lines ``lines()`` holds."""

    @property
    def corrections(self) -> int:
        """How many of them correct earlier answers."""


class Block(Protocol):
    """Input events of one time read in bulk by a dialect's reader (``Dialect.bulk_read``),
    for that dialect's ``push_block``: one call instead of an ``Event`` per line."""

    @property
    def t(self) -> int: ...

    @property
    def events(self) -> int:
        """The input events it stands for."""

    @property
    def facts(self) -> Sized:
        """The facts asserted among them."""

    def unpacked(self) -> Iterator[Event]:
        """The block's events one by one, as the dialect's line reader makes them."""


class StateError(Exception):
    """Stored state that cannot be used: it does not decode, or carries an
    unknown format version.  Raised instead of ever executing stored bytes."""


@runtime_checkable
class Evaluator(Protocol):
    """A dialect's evaluator as the runtimes drive it.

    Time only moves forward through ``advance``; events for times already
    evaluated are corrections, and the changes they cause come out of the
    next ``advance`` as -1/+1 pairs on the affected spans, so that the sum of
    all changes returned means what evaluating the stream in time order means
    (CONTRACT §2, §3)."""

    dialect: ClassVar[str]
    # Whether ``export_state`` may be called between any two calls that ``run_evaluator`` makes
    # (after ``pending``) and a new evaluator given it by ``import_state`` continues the run
    # exactly: what ``explain.Prefixes`` needs to evaluate an input's common prefix once.
    # False (the default: ``resumes_mid_stream``): only at the points a runtime checkpoints.
    resumes_mid_stream: ClassVar[bool]

    def push(self, event: Event) -> None:
        """One input event in arrival order (fact, retraction or time advance)."""

    def push_block(self, block: Block) -> None:
        """The events of a block of this dialect's own bulk reader, in order."""

    def advance(self, until: Time) -> Answers:
        """Evaluate every time up to ``until`` (corrections first); the answer
        changes since the last call."""

    def finish(self, until: Time | None = None) -> Answers:
        """Evaluate to the end of the input (or ``until``): the remaining changes."""

    def pending(self) -> Answers:
        """The changes already evaluated and not yet returned (an evaluator that evaluates
        on ``push``, as LARS's does in ``chronolog run``), without evaluating anything:
        written before an input error stops a run, so that nothing evaluated is lost."""

    def retained(self) -> tuple[Time | None, list[Event]]:
        """The input it keeps, as events in time order (facts as often as they count, the
        span's first and latest times as time advances), and the time from which that input
        is complete (None: all of it), for a program upgrade to evaluate it again."""

    def written(self) -> Answers:
        """What all the changes returned so far mean, as one batch (+1 changes): what an
        upgrade from a time T on takes back from T on before the new program's answers."""

    def export_state(self) -> dict[str, Any]:
        """The evaluator's state as plain data (dicts, lists, str, int, float,
        bool, None), including ``{"format": STATE_FORMAT, "dialect": ...}``."""

    def import_state(self, data: dict[str, Any]) -> None:
        """Continue from ``export_state``'s data, made by this or another
        process; raise ``StateError`` for data it cannot use."""


def resumes_mid_stream(evaluator: object) -> bool:
    """``Evaluator.resumes_mid_stream`` of ``evaluator``: False where it does not say."""
    return getattr(evaluator, "resumes_mid_stream", False) is True


@runtime_checkable
class KeepsStrata(Protocol):
    """An evaluator that can become a new program version keeping the old version's unchanged
    strata (``versions.switch``, issue 37 item 4): it takes over ``old``'s input and the
    answers of the ``kept`` answer predicates (``p/1``: their strata's rules and everything
    they read unchanged, ``core.strata``), so that its next ``advance(until)`` evaluates only
    the changed and added strata — from the upgrade time ``at`` minus what they need before
    it where their semantics allow, their answers before that left unwritten (the caller
    cuts the new version's lines at ``at``).  False: it cannot here (the caller feeds it the
    retained input and it evaluates the whole program)."""

    def keep(self, old: Any, kept: frozenset[str], at: Time, until: Time) -> bool: ...

    def retained_span(self) -> tuple[Time | None, Time | None]:
        """What ``Evaluator.retained`` says of its input without making its events: the time
        from which that input is complete (None: all of it) and the latest time given (None:
        nothing) — all an upgrade that keeps strata needs of it."""

    def written(self, without: frozenset[str] = ...) -> Answers:
        """``Evaluator.written`` without the answers of the predicates ``without`` (``p/1``):
        an upgrade that keeps their strata restates none of them."""


@runtime_checkable
class RestatesKept(Protocol):
    """A new version (``KeepsStrata``) whose ``keep`` may have made the restatement itself
    from both versions' answers per time point, instead of writing its answers from the
    upgrade time on for the caller to compare with the running version's ``written`` (a
    LARS chain whose changed strata read only the point they evaluate)."""

    def restated(self, kept: frozenset[str]) -> list[bytes] | None:
        """The lines restating what the running version wrote from the upgrade time on,
        without the ``kept`` answers, as the new version's; handed out once.  None: made
        by the caller (``versions.switch``) from ``written`` and ``advance``."""


@runtime_checkable
class EvaluatesFrom(Protocol):
    """An evaluator whose answers at a time are a function of the input within its reach
    before it (``Dialect.reach``), so that given the whole retained input it can evaluate
    from a time on only: an upgrade's new version (``versions.switch``) is wanted from T on,
    and evaluating the retained history before T - reach only to cut its lines away was most
    of an upgrade's work on a long history."""

    def evaluate_from(self, at: Time, done: Time) -> bool:
        """Take the points before ``at`` (before ``done`` at most: what holds at ``done`` is
        then written, for the caller to cut at ``at``) as evaluated, writing nothing for them,
        the state warmed up on the input before them (from the start where the reach is
        unbounded): its next ``advance`` evaluates from there on.  Every event pushed
        stays held (``retained`` is whole).  False where that is not exact: nothing skipped."""

    def written(self, since: Time | None = ...) -> Answers:
        """``Evaluator.written``, or with ``since`` what it means from ``since`` on only (lines
        starting there; the evaluations before ``since`` - reach are not made again)."""


def check_state_header(data: object, dialect: str) -> dict[str, Any]:
    """``data`` if it is a state of ``dialect`` in a format this code reads,
    else ``StateError`` saying what is wrong."""
    if not isinstance(data, dict):
        raise StateError(f"state is a {type(data).__name__}, not an object")
    if data.get("format") != STATE_FORMAT:
        raise StateError(f"unknown state format version {data.get('format')!r} (this build reads {STATE_FORMAT})")
    if data.get("dialect") != dialect:
        raise StateError(f"state of dialect {data.get('dialect')!r}, not {dialect!r}")
    return data
