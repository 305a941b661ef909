"""Any dialect's ``Evaluator`` as a fleet stage: ``EvaluatorStage``.

LARS programs run on the LARS stages (per-stratum services, or the chain
with its fast path).  Another dialect's evaluator (``chronolog.evaluator``)
has no strata: it runs as one stage that reads the input topic itself,
decodes each record with the dialect's own reader, pushes the events in
arrival order and advances as ``chronolog run`` does (a time is evaluated
once a later one arrives, or once input has been idle for ``idle_flush``
seconds); delayed events and retractions come out of the next ``advance``
as corrections, and an event older than the evaluator's retention goes to
the late topic as the record it came in (as ingest routes LARS's), for a
later backfill.  Its state is the evaluator's ``export_state`` (no
journals: each commit stores all of it).

``hosting`` says how to host each dialect (``chronolog.dialects.registry``): how to
make its evaluator from the parsed program and how to read one input line.
"""

from __future__ import annotations

import time
from dataclasses import dataclass
from typing import Any, Callable, Iterator

from chronolog.core.errors import ChronologError, InputError
from chronolog.dialects.registry import lookup
from chronolog.evaluator import AnswerChange, Evaluator, Time, interval_line
from chronolog.core.events import Event
from chronolog.state.journal import Journal
from chronolog.runtime.fleet.stages import Out, Record
from chronolog.contract.models import DeadLetter


def _no_reach(program: Any) -> Time | None:
    return None


@dataclass(frozen=True)
class Hosting:
    make: Callable[[Any], Evaluator]  # the parsed program -> its evaluator (for a stream without end)
    read: Callable[[str, str], Iterator[Event]]  # (one input line, where) -> its events
    # (the parsed program, warn) -> the evaluator replaying a complete history (the backfill);
    # by default ``make``'s
    replay: Callable[[Any, Callable[[str], None]], Evaluator] | None = None
    # how far before a time the input can still change answers there (None: unbounded; the
    # backfill then evaluates the whole history in one segment)
    reach: Callable[[Any], Time | None] = _no_reach
    # (the parsed program, N) -> the stream evaluator that applies late events up to N back (--retention)
    retaining: Callable[[Any, Time], Evaluator] | None = None
    origin: Time | None = None  # where every answer starts (RTEC: 0), else the history's first time
    # (the parsed program, window, step, warn) -> the evaluator of the dialect's windowed mode (RTEC's --window)
    windowed: Callable[[Any, int, int | None, Callable[[str], None]], Evaluator] | None = None

    def stream(self, program: Any, retention: Time | None = None, window: int | None = None,
               step: int | None = None) -> Evaluator:
        """The fleet's evaluator; a dialect without ``retaining`` keeps its whole input log;
        ``window`` (and ``step``): the dialect's windowed mode."""
        if window is not None:
            if self.windowed is None:
                raise ChronologError("error: --window is for RTEC programs")
            return self.windowed(program, window, step, lambda m: None)
        if retention is None or self.retaining is None:
            return self.make(program)
        return self.retaining(program, retention)

    def replayer(self, program: Any, warn: Callable[[str], None] = lambda m: None) -> Evaluator:
        return self.make(program) if self.replay is None else self.replay(program, warn)


def hosting(dialect: str, program: Any = None) -> Hosting:
    """How the fleet and the backfill host a dialect with its own evaluator (the
    table in chronolog.dialects.registry); ``program``: the one whose input is read (RTEC's
    CSV rows depend on its declarations)."""
    from chronolog.dialects.registry import lookup, read_line

    own = lookup(dialect)
    return Hosting(own.stream, lambda line, where: read_line(dialect, program, line, where), own.replay, own.reach,
                   own.retaining, own.origin, own.windowed)


class HostedPlan:
    """A hosted dialect's program where the fleet expects a LARS ``Plan``: the
    topology (one chain service, one partition) and the services read only
    what is here."""

    hosted = True
    stratified = True
    fleet_strata = 1

    def __init__(self, program: Any) -> None:
        self.program = program
        self.dialect: str = program.dialect
        self.strata: list[list[str]] = [[]]
        hosting(self.dialect, program).make(program)  # refuse what cannot be hosted before anything starts


class EvaluatorStage:
    """One partition of a dialect without strata (``Stage`` of runtime/stages.py)."""

    def __init__(self, evaluator: Evaluator, read: Callable[[str, str], Iterator[Event]],
                 idle_flush: float = 1.0) -> None:
        self.evaluator = evaluator
        self.read = read
        self.idle_flush = idle_flush
        self.latest: Time | None = None  # latest time pushed
        self.done: Time | None = None  # evaluated up to
        self.dirty = False  # an event for an evaluated time was pushed since
        self.last_input = 0.0
        self.dead_letters = 0

    def process(self, records: list[Record], now: float | None = None) -> tuple[list[Out], list[bytes]]:
        now = time.monotonic() if now is None else now
        leaving: list[Out] = []
        changes: list[AnswerChange] = []
        for _, topic, partition, offset, value in records:
            if not value:
                continue
            raw = value.decode("utf-8", errors="replace")
            try:
                events = list(self.read(raw.replace("\n", " "), f"{topic}[{partition}]@{offset}"))
            except InputError as exc:
                self.dead_letters += 1
                letter = DeadLetter(topic=topic, partition=partition, offset=offset, value=raw, reason=exc.message,
                                    service="chain")
                leaving.append(Out("dlq", 0, letter.model_dump_json().encode(), urgent=False))
                continue
            late = self.late_events
            for ev in events:
                self.last_input = now
                if self.latest is not None and ev.t > self.latest:
                    changes += self._advance(self.latest)
                if self.latest is None or ev.t > self.latest:
                    self.latest = ev.t
                if self.done is not None and ev.t <= self.done:
                    self.dirty = True
                self.evaluator.push(ev)
            if self.late_events > late:  # older than the retention: ignored, kept for a backfill as LARS's are
                leaving.append(Out("late", 0, value))
        if self.latest is not None and now - self.last_input >= self.idle_flush and (
                self.done is None or self.done < self.latest or self.dirty):
            changes += self._advance(self.latest)  # input idle: the latest time too
        points = lookup(self.evaluator.dialect).points  # as chronolog run writes them ([7,7] for DatalogMTL)
        return leaving, [interval_line(*change, points) for change in changes]

    @property
    def late_events(self) -> int:
        """Events the evaluator ignored as older than its retention (``too_late``)."""
        return int(getattr(self.evaluator, "too_late", 0))

    def _advance(self, until: Time) -> list[AnswerChange]:
        self.done, self.dirty = until, False
        return self.evaluator.advance(until)

    def progress(self) -> dict[str, int | None]:
        done = self.done
        return {"dead_letters": self.dead_letters, "delayed_events": getattr(self.evaluator, "delayed", 0),
                "late_events": self.late_events, "time_point": None if done is None else int(done)}

    def journals(self) -> dict[str, Journal]:
        return {}

    def export_state(self) -> dict:
        from chronolog.evaluator import time_text

        return {"latest": None if self.latest is None else time_text(self.latest),
                "done": None if self.done is None else time_text(self.done), "dirty": self.dirty,
                "dead_letters": self.dead_letters, "evaluator": self.evaluator.export_state()}

    def import_state(self, state: dict) -> None:
        self.latest, self.done = _time(state["latest"]), _time(state["done"])
        if type(state["dirty"]) is not bool or type(state["dead_letters"]) is not int:
            raise TypeError("dirty or dead_letters of the wrong type")
        self.dirty, self.dead_letters = state["dirty"], state["dead_letters"]
        self.evaluator.import_state(state["evaluator"])
        self.last_input = time.monotonic()  # a restart counts as input: no idle flush at once


def _time(text: object) -> Time | None:
    """A time as ``time_text`` wrote it (an integer, or a rational "7/2")."""
    from fractions import Fraction

    if text is None:
        return None
    if type(text) is not str:
        raise TypeError(f"{text!r} is not a time")
    value = Fraction(text)
    return int(value) if value.denominator == 1 else value
