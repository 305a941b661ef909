"""The engine and the reasoner make no reference cycles, replays included.

``chronolog run`` turns automatic cycle collection off while it evaluates
(``runtime.embedded.collecting_rarely``): that is only safe while
evaluation, delayed events, retractions, replays and log pruning leave all
their garbage to reference counting.  A regression here would make
``chronolog run`` leak memory on streams with many late events.
"""

from __future__ import annotations

import gc
import io
import random

from chronolog.core.events import Event
from chronolog.dialects.lars.answers import AnswerWriter
from chronolog.dialects.lars.parser import parse_lars
from chronolog.dialects.lars.plan import plan_program
from chronolog.dialects.lars.reasoner import Reasoner

PROGRAM = """
a(X) at T :- p(X) at T [3], X >= 1.
b(X) :- a(X) [2], not q(X).
c(X, Y) :- p(X) [2], r(X, Y) always [1].
d(X) :- r(X, Y), X = 2.
e(X) :- a(X) at T [3], T > 4.
"""


def _run(points: int, seed: int) -> Reasoner:
    plan = plan_program(parse_lars(PROGRAM))
    reasoner = Reasoner(plan, AnswerWriter(io.StringIO(), plan), retention=10)
    reasoner.prune_every = 8
    rng = random.Random(seed)
    for t in range(points):
        reasoner.push(Event(t, "p", (rng.randint(0, 5),)))
        reasoner.push(Event(t, "r", (rng.randint(0, 5), rng.randint(0, 5))))
        if t > 5 and rng.random() < 0.3:
            reasoner.push(Event(t - rng.randint(1, 4), "q", (rng.randint(0, 5),)))
        if t > 5 and rng.random() < 0.2:
            reasoner.push(Event(t - rng.randint(1, 4), "p", (rng.randint(0, 5),), retract=True))
    reasoner.finish()
    return reasoner


def test_evaluation_and_replays_leave_no_cyclic_garbage():
    _run(40, 0)  # first use: imports and caches
    gc.collect()
    enabled = gc.isenabled()
    gc.disable()
    try:
        reasoner = _run(300, 1)
        assert reasoner.delayed > 50  # many replays happened
        found = gc.collect()
    finally:
        if enabled:
            gc.enable()
    assert found == 0


def test_collecting_rarely_restores_the_collector():
    """``chronolog run`` may run in-process (tests, embedding): the collector's
    state is restored when the run ends, also when it fails."""
    from chronolog.runtime.embedded import collecting_rarely

    assert gc.isenabled()
    with collecting_rarely():
        assert not gc.isenabled()
    assert gc.isenabled()
    try:
        with collecting_rarely():
            raise RuntimeError("a failing run")
    except RuntimeError:
        pass
    assert gc.isenabled() and gc.get_freeze_count() == 0
