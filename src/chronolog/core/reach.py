"""How far input reaches in time: what a dialect tells the backfill so that it can cut a
history into segments that are each exact (``Dialect.reach``)."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from chronolog.core.records import record


@record(frozen=True)
class Reach:
    """The answers at a time ``t`` depend only on input in ``[t - back, t + ahead]``, and on
    the last ``facts`` facts before ``t`` (tuple windows count facts, not time: a segment's
    warm-up then starts early enough to hold them).  ``ahead`` is how far after ``t`` an
    evaluation can still derive answers at ``t`` (LARS's ``@``-heads naming a past time)."""

    back: Any  # a time span: int, or a Fraction for DatalogMTL
    facts: int = 0
    ahead: Any = 0


def widest(reaches: list[Reach | None]) -> Reach | None:
    """The reach of several programs evaluated together (program versions, each over its
    part of time): as far as the farthest of them; None (unbounded) if any is."""
    if any(r is None for r in reaches):
        return None
    bounded = [r for r in reaches if r is not None]
    return Reach(max(r.back for r in bounded), max(r.facts for r in bounded), max(r.ahead for r in bounded))


def warm_up(start: Any, reach: Reach, facts_at: Callable[[Any], int], first: Any) -> Any:
    """The time to start evaluating from so that the answers from ``start`` on are exact:
    ``back`` before it, and earlier while the tuple windows' last ``facts`` facts are not all
    held (LARS's ``Reasoner.warm_up_start``, on counts)."""
    warm = start - reach.back if first is None else max(first, start - reach.back)
    need, t = reach.facts, start
    while need > 0 and (first is None or t > first):
        t -= 1
        need -= facts_at(t)
    return min(warm, t)
