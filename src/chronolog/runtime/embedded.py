"""Embedded mode (`chronolog run`): one process, no broker.

Reads events in arrival order, drives the engine and writes the answer
stream.  The Kafka fleet and the Spark backfill drive the same engine; this
module only moves events in and answer lines out.
"""

from __future__ import annotations

import gc
import time
from contextlib import contextmanager
from typing import IO, Callable, Iterable, Iterator

from chronolog.dialects.lars.plan import plan_program
from chronolog.core.events import Event
from chronolog.io.formats import FactBatch
from chronolog.dialects.lars.ir import Program
from chronolog.dialects.lars.answers import AnswerWriter
from chronolog.dialects.lars.reasoner import Reasoner
from chronolog.runtime.driver import RunStats, _stderr, run_evaluator  # noqa: F401 (their home before driver.py)

COLLECT_EVERY = 600.0  # seconds between cycle collections while automatic ones are off


@contextmanager
def collecting_rarely() -> Iterator[None]:
    """No automatic cycle collection inside (restored on leaving).

    The engine and the reasoner make no reference cycles, replays included
    (tests/dialects/lars/test_no_cycles.py), so automatic collections would only
    scan the facts and atoms they keep, again and again: a tenth of a run's
    time.  What is loaded by now (the program, the plan) is frozen out of
    the collector's generations; ``run_embedded`` still collects every
    COLLECT_EVERY seconds, for cycles made elsewhere (clingo, the standard
    library)."""
    enabled = gc.isenabled()
    gc.freeze()
    gc.disable()
    try:
        yield
    finally:
        gc.unfreeze()
        if enabled:
            gc.enable()


def run_embedded(
    program: Program,
    events: Iterable[Event | FactBatch],
    out: IO[str],
    *,
    answers: str = "changelog",
    until: int | None = None,
    retention: int | None = None,
    warn: Callable[[str], None] = _stderr,
    solver: str = "tms",
    seed: int = 0,
    models: int = 1,
) -> RunStats:
    """Evaluate ``program`` on ``events`` and write answer lines to ``out``.

    ``solver`` ("tms" or "oneshot") and ``seed``: how a program that is not
    stratified is evaluated (``Plan.solver``).  ``models`` > 1 (one-shot): the
    first ``models`` answer sets clingo enumerates per time point, each its own
    answer stream, its lines tagged ``"model": k`` (k from 0; a point with
    fewer answer sets repeats the last one in the higher models).

    ``events`` are ``Event``s or ``FactBatch``es (``EventReader.batches()``),
    in arrival order.
    ``answers`` is "changelog" (compact CONTRACT §3 form) or "points" (one
    line per atom and time point).  Events after ``until`` are ignored (and
    counted); with ``until`` the program is evaluated up to it.  ``retention``
    bounds how far back late events are repaired (None: unlimited).
    """
    plan = plan_program(program)
    plan.solver, plan.seed = solver, seed
    if models > 1:
        return _run_models(plan, events, out, models, answers=answers, until=until, retention=retention, warn=warn)
    writer = AnswerWriter(out, plan, answers)
    reasoner = Reasoner(plan, writer, warn=warn, retention=retention)
    return _drive(reasoner, writer, events, until, warn)


class _Tagged:
    """An output that adds ``"model": k`` to every answer line written through it."""

    def __init__(self, out: IO[str], k: int) -> None:
        self.out, self.tag = out, '{"model":%d,"' % k

    def write(self, text: str) -> int:
        return self.out.write(text.replace('{"', self.tag))

    def flush(self) -> None:
        self.out.flush()


class _Fanout:
    """The reasoners of several models, fed the same events (each its own log)."""

    def __init__(self, reasoners: list[Reasoner]) -> None:
        self.reasoners = reasoners
        first = reasoners[0]
        self.unmatched_retractions, self.delayed, self.too_late = 0, 0, 0
        self.first = first

    def push_facts(self, t: int, facts, locs=None) -> None:  # noqa: ANN001
        for r in self.reasoners:
            r.push_facts(t, list(facts), locs)

    def push(self, ev: Event) -> None:
        for r in self.reasoners:
            r.push(ev)

    def finish(self, until: int | None) -> None:
        for r in self.reasoners:
            r.finish(until)
        for name in ("unmatched_retractions", "delayed", "too_late", "t1", "evaluated"):
            setattr(self, name, getattr(self.first, name))


class _Writers:
    def __init__(self, writers: list[AnswerWriter]) -> None:
        self.writers = writers

    @property
    def lines(self) -> int:
        return sum(w.lines for w in self.writers)

    @property
    def corrections(self) -> int:
        return sum(w.corrections for w in self.writers)


def _run_models(
    plan, events: Iterable[Event | FactBatch], out: IO[str], models: int, *, answers: str, until: int | None,  # noqa: ANN001
    retention: int | None, warn: Callable[[str], None],
) -> RunStats:
    import copy

    writers, reasoners = [], []
    for k in range(models):
        mine = copy.copy(plan)
        mine.model = k
        writer = AnswerWriter(_Tagged(out, k), mine, answers)  # type: ignore[arg-type]
        writers.append(writer)
        reasoners.append(Reasoner(mine, writer, warn=warn if k == 0 else (lambda m: None), retention=retention))
    return _drive(_Fanout(reasoners), _Writers(writers), events, until, warn)  # type: ignore[arg-type]


def _drive(reasoner: Reasoner, writer: AnswerWriter, events: Iterable[Event | FactBatch], until: int | None,
           warn: Callable[[str], None]) -> RunStats:
    stats = RunStats()
    ignored = 0
    push_facts = reasoner.push_facts
    collect_at = None if gc.isenabled() else time.monotonic() + COLLECT_EVERY
    for ev in events:
        if collect_at is not None and time.monotonic() > collect_at:
            gc.collect()
            collect_at = time.monotonic() + COLLECT_EVERY
        if type(ev) is FactBatch:
            if until is not None and ev.t > until:
                ignored += ev.events
                continue
            stats.events += ev.events
            stats.facts += len(ev.facts)
            push_facts(ev.t, ev.facts, ev.locs)
            continue
        if until is not None and ev.t > until:
            ignored += 1
            continue
        stats.count(ev)
        reasoner.push(ev)
    reasoner.finish(until)
    if ignored:
        warn(f"warning: ignored {ignored} events after --until {until}")
    stats.unmatched_retractions = reasoner.unmatched_retractions
    stats.delayed = reasoner.delayed
    stats.too_late = reasoner.too_late
    if reasoner.t1 is not None and reasoner.evaluated is not None:
        stats.time_points = reasoner.evaluated - reasoner.t1 + 1
    stats.answer_lines = writer.lines
    stats.corrections = writer.corrections
    return stats
