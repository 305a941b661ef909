"""How far input reaches in time: what a dialect tells the backfill so that it can cut a
history into segments that are each exact (``Dialect.reach``)."""

from __future__ import annotations

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
