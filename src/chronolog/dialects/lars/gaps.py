"""Quiet gaps of a LARS stream, jumped over instead of stepped point by point.

CONTRACT §2 evaluates every integer point from the first time to the last, facts or
not, so a stream with epoch-millisecond times and gaps of hours costs millions of
engine steps that change nothing.  Once no window can see a fact any more, the
evaluation at t is the one at t-1 shifted by one point, provided nothing in the
program reads the absolute time: then, if the step at t changed nothing, no step up
to the next fact's reach changes anything either, and the reasoner can take those
points as evaluated and warm the engine up just before the next fact's reach
(``Reasoner._jump``), as a restart does.

Which programs are shift-invariant (``quiet_margin``): stratified ones evaluated by
the incremental engine (the TMS's choices follow earlier points; clingo is left
alone), without ``at`` (a bound time is an absolute value in a row or a
comparison; a windowless ``at`` reads the whole timeline), without ``@``-heads
(atoms dated at absolute times) and without tuple windows (their content is the
last facts, however old, and a box over them stretches with t).  Program facts
hold at every point and windows over them are steady once no window is clipped at
the first time point, which the margin also covers.  A padded predicate (program
or stream facts of a derived predicate read through a window) publishes an atom at
each point: its steps are never empty, so such a program simply keeps stepping.
"""

from __future__ import annotations

from collections.abc import Mapping

from chronolog.dialects.lars.ir import ExtAtom, Op, TimeWindow
from chronolog.dialects.lars.plan import Plan

__all__ = ["SKIP_GAPS", "next_input", "quiet_margin"]

SKIP_GAPS = True  # False: step every point (the comparison the tests make; ``bench lars --gaps``)

JUMP_SLACK = 16  # a jump must save this many steps beyond its warm-up (it rebuilds the engine)


def quiet_margin(plan: Plan, stratum: int | None) -> int | None:
    """How many points past the last input a step's answers can still change by the input
    or the clipping at the first time point (the widest time window of any rule, hidden
    ones included, or the stream reach if wider); None where the program is not
    shift-invariant (module docstring) or the reasoner evaluates one fleet stratum."""
    if stratum is not None or not plan.stratified or plan.solver in ("tms!", "oneshot!"):
        return None
    if plan.state_reach is None or plan.tuple_reach:
        return None
    for rule in plan.program.rules:
        if rule.head.time is not None:
            return None
        if any(isinstance(b, ExtAtom) and b.op is Op.AT for b in rule.body):
            return None
    widest = max((b.window.size for r in plan.rules for b in r.body
                  if isinstance(b, ExtAtom) and isinstance(b.window, TimeWindow)), default=0)
    return max(widest, plan.state_reach)


def next_input(log: Mapping[int, object], after: int, end: int) -> int:
    """The first point in (after, end] with facts in ``log`` (end + 1: none): by probing each
    point where the gap is shorter than the log, else by scanning the log's keys, so a jump
    costs at most a dictionary look-up per point it skips."""
    if end - after <= len(log):
        for t in range(after + 1, end + 1):
            if log.get(t):
                return t
        return end + 1
    return min((t for t, facts in log.items() if after < t <= end and facts), default=end + 1)
