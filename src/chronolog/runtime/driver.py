"""``chronolog run`` for the dialects with their own evaluator (DatalogMTL, RTEC).

Apart from ``runtime/embedded.py`` (LARS's engine) so that these runs start
without importing that engine, its reader and msgspec's typed records.
"""

from __future__ import annotations

import sys
from typing import IO, TYPE_CHECKING, Callable, Iterable

from chronolog.core.events import Event, TimeRows
from chronolog.core.records import record

if TYPE_CHECKING:
    from chronolog.evaluator import Evaluator, Time


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

    def count(self, ev: Event) -> None:
        """One input event read."""
        self.events += 1
        if ev.is_fact:
            if ev.retract:
                self.retractions += 1
            else:
                self.facts += 1


def _stderr(msg: str) -> None:
    print(msg, file=sys.stderr)


def run_evaluator(
    evaluator: "Evaluator",
    events: Iterable[Event | TimeRows],
    out: IO[str],
    *,
    until: "Time | None" = None,
    warn: Callable[[str], None] = _stderr,
    points: bool = True,
) -> RunStats:
    """``chronolog run`` for any dialect's evaluator (``chronolog.evaluator``).

    A time is final once a later one arrives: each arrival of a later time
    evaluates up to the previous latest time, and the changes are written at
    once (so answers follow a piped input as it arrives).  Delayed events and
    retractions come out of the next ``advance`` as -1/+1 corrections.
    ``points``: an answer at one integer point is a ``t`` line (DatalogMTL
    writes its punctual interval ``[7,7]`` instead).  A ``TimeRows`` block (a
    bulk reader's) goes to the evaluator's ``push_rows`` whole, or else as its
    events one by one."""
    from chronolog.evaluator import interval_line

    stats = RunStats()
    binary = getattr(out, "buffer", None)
    write = binary.write if binary is not None else (lambda b: out.write(b.decode()))

    def emit(changes: list) -> None:
        for pred, args, span, diff in changes:
            write(interval_line(pred, args, span, diff, points) + b"\n")
            stats.answer_lines += 1
            if diff < 0:
                stats.corrections += 1

    push_rows = getattr(evaluator, "push_rows", None)
    latest = None
    ignored = 0
    for ev in events:
        t = ev.t
        if until is not None and t > until:
            ignored += len(ev) if type(ev) is TimeRows else 1
            continue
        if latest is not None and t > latest:
            emit(evaluator.advance(latest))
        if latest is None or t > latest:
            latest = t
        if type(ev) is TimeRows:
            stats.events += len(ev)
            stats.facts += len(ev)
            if push_rows is not None:
                push_rows(ev)
            else:
                for one in ev.events():
                    evaluator.push(one)
            continue
        stats.count(ev)
        evaluator.push(ev)
    emit(evaluator.finish(until))
    if ignored:
        warn(f"warning: ignored {ignored} events after --until {until}")
    for name in ("unmatched_retractions", "delayed", "too_late", "time_points"):
        setattr(stats, name, getattr(evaluator, name, 0))
    if binary is not None:
        binary.flush()
    return stats
