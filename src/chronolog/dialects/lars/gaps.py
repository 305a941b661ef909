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

from collections.abc import Callable, Mapping
from typing import Any

from chronolog.dialects.lars.ir import ExtAtom, Op, TimeWindow
from chronolog.dialects.lars.plan import Plan

__all__ = ["SKIP_GAPS", "next_input", "quiet_margin", "replay_both"]

SKIP_GAPS = True  # False: step every point (the comparison the tests and ``chronolog bench gaps`` make)

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


def replay_both(r: Any, engines: tuple[Any, Any], logs: tuple[Callable, Callable], first: int, end: int, start: int,
                sets: tuple[set, set], more: Mapping[int, object]) -> Any:
    """A correction's two replays (``Reasoner._replay_shared``: the old log's into ``sets[0]``,
    the new one's into ``sets[1]``, observed) evaluated in step over ``first``..``end``, jumping
    where both are quiet and agree: after a point where neither log has input within the margin,
    both steps changed nothing and both evaluations derived the same atoms, every point up to
    the next input's reach evaluates the same in both, so its atoms (each dated at its own
    point) would enter both sets and leave their differences as they are.  Both engines are
    then warmed up at the last point jumped over.  ``more``: the old log's points that differ
    from the new one's (input for the jump's next-input search too).  Returns the new engine."""
    margin = r._margin
    old, new = engines
    old_log, new_log = logs
    before, after = sets
    observe = r.observe
    assert margin is not None and r.t1 is not None
    floor = r.t1 + margin + 1
    last_input = first - 1
    t = first - 1
    retry = t
    while t < end:
        t += 1
        facts_old, imp_old = old_log(t)
        facts_new, imp_new = new_log(t)
        if facts_old or facts_new or imp_old is not None or imp_new is not None:
            last_input = t
        got_old = old.step(t, facts_old, imp_old)
        got_new = new.step(t, facts_new, imp_new)
        if observe is not None:
            observe(t, new, got_new)
        atoms_old = {a for a in old.derived_at() if a[2] >= start} if t >= start else set()
        atoms_new = {a for a in new.derived_at() if a[2] >= start} if t >= start else set()
        before |= atoms_old
        after |= atoms_new
        if (t >= retry and t - 1 - margin > last_input and t - 1 >= floor and got_old.consistent and got_new.consistent
                and not got_old.now_groups() and not got_new.now_groups() and not got_old.timed_groups()
                and not got_new.timed_groups() and atoms_old == atoms_new):
            nxt = min(next_input(r.log, t, end), next_input(more, t, end))
            last = end if nxt > end else nxt - margin - 1
            retry = nxt
            if last - t > margin + JUMP_SLACK:
                old, new = r._warmed(old_log, last), r._warmed(new_log, last)
                t = last
    return new
