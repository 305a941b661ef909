"""Embedded mode (`chronolog run`): one process, no broker, one loop for every dialect.

Reads events in arrival order, drives the dialect's ``Evaluator``
(chronolog.evaluator) and writes the answer lines each batch renders.  The
Kafka fleet and the Spark backfill drive the same evaluators; this module
only moves events in and answer lines out.
"""

from __future__ import annotations

import gc
import sys
import time
from collections.abc import Callable, Iterable, Iterator
from contextlib import contextmanager
from typing import IO, Any

from chronolog.contract import no_answer_set
from chronolog.contract.no_answer_set import MARK
from chronolog.core.events import Event
from chronolog.core.records import record
from chronolog.dialects.registry import RunOptions, lookup
from chronolog.evaluator import Answers, Block, Evaluator, Time

COLLECT_EVERY = 600.0  # seconds between cycle collections while automatic ones are off


@record
class RunStats:
    events: int = 0
    facts: int = 0
    retractions: int = 0
    unmatched_retractions: int = 0
    delayed: int = 0
    time_points: int = 0
    answer_lines: int = 0
    corrections: int = 0
    too_late: int = 0
    no_answer_sets: int = 0  # time points without an answer set (LARS: an odd loop, a constraint)


def _stderr(msg: str) -> None:
    print(msg, file=sys.stderr)


@contextmanager
def collecting_rarely() -> Iterator[None]:
    """No automatic cycle collection inside (restored on leaving).

    The engines and the reasoner make no reference cycles, replays included
    (tests/dialects/lars/test_no_cycles.py), so automatic collections would only
    scan the facts and atoms they keep, again and again: a tenth of a run's
    time.  What is loaded by now (the program, the plan) is frozen out of
    the collector's generations; ``run_evaluator`` still collects every
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


def run_embedded(program: Any, events: Iterable[Event | Block], out: IO[str], *, until: Time | None = None,
                warn: Callable[[str], None] = _stderr, mark: bool = False, **options: Any) -> RunStats:
    """``chronolog run`` of a parsed program of any dialect: its row's evaluator with
    ``options`` (``RunOptions``' fields, e.g. ``answers="points"``, ``retention=3``)."""
    return run_evaluator(lookup(program.dialect).evaluator(program, RunOptions(**options), warn), events, out,
                         until=until, warn=warn, mark=mark)


def run_evaluator(evaluator: Evaluator, events: Iterable[Event | Block], out: IO[str], *,
                  until: Time | None = None, warn: Callable[[str], None] = _stderr,
                  latest: Time | None = None, mark: bool = False) -> RunStats:
    """Push ``events`` (arrival order; ``Block``s of the dialect's bulk reader go to
    ``push_block`` whole) and write the answer lines.

    A time is final once a later one arrives: each arrival of a later time
    evaluates up to the previous latest time, and the lines are written at
    once (so answers follow a piped input as it arrives).  Delayed events and
    retractions come out of the next ``advance`` as corrections.  ``until``
    means a last time advance ``{"t": until}`` (CONTRACT §1): events after it
    are ignored (and counted), and the input is evaluated up to it.  ``latest``: the latest
    time of the events an evaluator restored mid-stream was given (``import_state``), so that
    the rest of the stream goes on as in one run.

    A time point without an answer set (LARS: the evaluator's ``warn`` says ``no answer set
    at t=T``) is counted; its ``{"t": T, "no_answer_set": true}`` line stays out of ``out``,
    which holds only CONTRACT §3 lines, unless ``mark`` (``--mark-no-answer-set``) keeps it."""
    stats = RunStats()
    binary = getattr(out, "buffer", None)
    raw = binary.write if binary is not None else (lambda b: out.write(b.decode()))

    def unanswered(data: bytes) -> bytes:
        """``data`` without its no_answer_set lines, counted (the evaluator warned of each)."""
        data, found = no_answer_set.split(data)
        stats.no_answer_sets += len(found)
        stats.answer_lines -= len(found)  # (the batch counted them among its lines)
        return data

    def emit(batch: Answers) -> None:
        if batch.line_count:
            data = batch.lines()
            raw(data if mark or MARK not in data else unanswered(data))
            stats.answer_lines += batch.line_count
            stats.corrections += batch.corrections

    push, push_block, advance = evaluator.push, evaluator.push_block, evaluator.advance
    ignored = 0
    collect_at = None if gc.isenabled() else time.monotonic() + COLLECT_EVERY
    try:
        for ev in events:
            if collect_at is not None and time.monotonic() > collect_at:
                gc.collect()
                collect_at = time.monotonic() + COLLECT_EVERY
            t = ev.t
            if until is not None and t > until:
                ignored += 1 if type(ev) is Event else ev.events  # type: ignore[union-attr]
                continue
            if latest is None or t > latest:
                if latest is not None:  # (emit, inline: a call per time point shows in LARS's runs)
                    batch = advance(latest)
                    if batch.line_count:
                        data = batch.lines()
                        raw(data if mark or MARK not in data else unanswered(data))
                        stats.answer_lines += batch.line_count
                        stats.corrections += batch.corrections
                latest = t
            if type(ev) is Event:  # (counted inline: a call per event shows in LARS's runs)
                stats.events += 1
                if ev.pred is not None:
                    if ev.retract:
                        stats.retractions += 1
                    else:
                        stats.facts += 1
                push(ev)
            else:
                stats.events += ev.events  # type: ignore[union-attr]
                stats.facts += len(ev.facts)  # type: ignore[union-attr]
                push_block(ev)  # type: ignore[arg-type]
    except Exception:
        emit(evaluator.pending())  # what was evaluated before the error is written, as it would have been
        raise
    if until is not None and (latest is None or until > latest):
        if latest is not None:
            emit(evaluator.advance(latest))
        evaluator.push(Event(until))
    emit(evaluator.finish(until))
    if ignored:
        warn(f"warning: ignored {ignored} events after --until {until}")
    for name in ("unmatched_retractions", "delayed", "too_late", "time_points"):
        setattr(stats, name, getattr(evaluator, name, 0))
    if binary is not None:
        binary.flush()
    else:
        out.flush()
    return stats
