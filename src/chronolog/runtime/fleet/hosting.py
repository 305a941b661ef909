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
later backfill.  Its state is the evaluator's ``export_state``, except the
input log when the evaluator says how to cut it by time (``log_bucket``):
that is the ``inputs`` journal, one entry per time point, so a commit writes
the points whose input changed, not the whole log (``EvaluatorStage.export_state``).

``hosting`` says how to host each dialect (``chronolog.dialects.registry``): how to
make its evaluator from the parsed program and how to read one input line.
"""

from __future__ import annotations

import time
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from typing import Any, ClassVar

from chronolog.contract.models import DeadLetter
from chronolog.core.errors import ChronologError, InputError
from chronolog.core.events import Event
from chronolog.dialects.registry import lookup
from chronolog.evaluator import AnswerChange, Evaluator, Time, interval_line
from chronolog.runtime.fleet.stages import Out, Record
from chronolog.state.journal import Journal
from chronolog.state.schema import EvaluatorState


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

    kind: ClassVar[str] = "evaluator"
    LOG = "inputs"  # the field of the evaluator's state that is its input log

    def __init__(self, evaluator: Evaluator, read: Callable[[str, str], Iterator[Event]],
                 idle_flush: float = 1.0) -> None:
        self.evaluator = evaluator
        # (an exported input log item -> the time point it belongs to), or None:
        # the evaluator's whole state is in the snapshot
        self.bucket: Callable[[list], int] | None = getattr(evaluator, "log_bucket", None)
        # the input log as the last export wrote it, per time point (``export_state``)
        self.inputs: Journal = Journal()
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
        return {} if self.bucket is None else {self.LOG: self.inputs}

    def export_state(self) -> EvaluatorState:
        """The state without the input log, which goes to the ``inputs`` journal:
        the exported log, cut per time point, is compared with what the last
        export left there, and only the points that differ are set (or
        deleted), so the next commit writes those.  (Exporting and comparing
        still cost the log's length; encoding, compressing and sending it at
        every commit cost several times more, and the bytes grew with the stream.)
        Take the journals' changes after this call."""
        from chronolog.evaluator import time_text

        data = self.evaluator.export_state()
        if self.bucket is not None:
            data = dict(data)
            self._journal(data.pop(self.LOG))
        return EvaluatorState(None if self.latest is None else time_text(self.latest),
                              None if self.done is None else time_text(self.done), self.dirty,
                              self.dead_letters, data)

    def _journal(self, items: list) -> None:
        bucket, log = self.bucket, self.inputs
        assert bucket is not None
        cut: dict[int, list] = {}
        for item in items:
            key = bucket(item)
            got = cut.get(key)
            if got is None:
                cut[key] = [item]
            else:
                got.append(item)
        for key, rows in cut.items():
            if log.get(key) != rows:
                log[key] = rows
        for key in [k for k in log if k not in cut]:
            del log[key]

    def import_state(self, state: EvaluatorState) -> None:
        self.latest, self.done = _time(state.latest), _time(state.done)
        self.dirty, self.dead_letters = state.dirty, state.dead_letters
        data = state.evaluator
        if self.bucket is not None:  # the log: the journal's entries by time, then what a v1 record held
            data = {**data, self.LOG: [item for key in sorted(self.inputs) for item in self.inputs[key]]
                    + state.inputs}
        elif state.inputs:
            data = {**data, self.LOG: state.inputs}
        self.evaluator.import_state(data)
        self.last_input = time.monotonic()  # a restart counts as input: no idle flush at once


def _time(text: str | None) -> Time | None:
    """A time as ``time_text`` wrote it (an integer, or a rational "7/2")."""
    from fractions import Fraction

    if text is None:
        return None
    value = Fraction(text)
    return int(value) if value.denominator == 1 else value
