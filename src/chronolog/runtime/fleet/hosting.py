"""``Hosting``: a dialect's registry row as one object (stream, replay, reach, origin, a line reader).

No runtime uses it any more: the fleet lays a program out by its row
(``Dialect.layout``, ``registry.fleet_evaluator``) and the backfill asks the
row directly.  Only tests still drive evaluators through it; they should move
to the row and this module go (noted on issue 36).
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from dataclasses import dataclass
from typing import Any

from chronolog.core.events import Event
from chronolog.dialects.registry import fleet_evaluator, lookup, read_line
from chronolog.evaluator import Evaluator, Time


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
        return fleet_evaluator(lookup(program.dialect), program, retention, window, step)

    def replayer(self, program: Any, warn: Callable[[str], None] = lambda m: None) -> Evaluator:
        return self.make(program) if self.replay is None else self.replay(program, warn)


def hosting(dialect: str, program: Any = None) -> Hosting:
    """The row of ``dialect`` in chronolog.dialects.registry as a ``Hosting``; ``program``: the
    one whose input is read (RTEC's CSV rows depend on its declarations)."""
    own = lookup(dialect)
    return Hosting(own.stream, lambda line, where: read_line(dialect, program, line, where), own.replay, own.reach,
                   own.retaining, own.origin, own.windowed)
