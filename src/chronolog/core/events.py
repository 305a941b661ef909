"""Input events and answer atoms: the values that flow in and out of the engine.

An ``Event`` is one line of the input stream (CONTRACT §2): a fact at a time
point, a retraction of one, or a bare time advance.  Facts are keyed by
``(pred, args)`` where ``args`` is a tuple of constants (``str`` or ``int``),
the same values the IR uses, so no conversion happens in the hot path.
"""

from __future__ import annotations

from collections.abc import Iterator, Sequence
from itertools import repeat
from typing import TYPE_CHECKING

from chronolog.core.records import record
from chronolog.core.source import Loc, Value

if TYPE_CHECKING:  # (fractions is not imported by a LARS run)
    from fractions import Fraction

Args = tuple[Value, ...]


@record
class Event:
    """One input event.

    ``pred`` is None for a time-advance marker (``{"t": 9}``).  ``retract``
    withdraws the latest earlier event with the same time, pred and args.
    ``loc`` names the input line, for messages about the event.
    """

    t: int | Fraction  # (DatalogMTL's times are rational)
    pred: str | None = None
    args: Args = ()
    retract: bool = False
    loc: Loc | None = None
    span: object = None  # DatalogMTL: the fact's interval (t is its left end, the arrival order's time)

    @property
    def is_fact(self) -> bool:
        return self.pred is not None


class OnePredicate:
    """The facts of one time point when they all have one predicate: the key
    ``(pred, arity)`` once and the args in arrival order.

    Reads as the list of ``(key, args)`` facts it stands for (iteration,
    ``len``, indexing), without a pair per fact: the readers build it for
    the usual input (every line of a time point the same predicate), the
    engine takes its args whole, and the reasoner turns it into a list
    when an event changes its time point."""

    __slots__ = ("key", "args")

    def __init__(self, key: tuple[str, int], args: list[Args]) -> None:
        self.key = key
        self.args = args

    def __iter__(self) -> Iterator[tuple[tuple[str, int], Args]]:
        return zip(repeat(self.key), self.args)

    def __len__(self) -> int:
        return len(self.args)

    def __getitem__(self, i: int) -> tuple[tuple[str, int], Args]:
        return (self.key, self.args[i])

    def __eq__(self, other: object) -> bool:
        if isinstance(other, OnePredicate):
            return self.key == other.key and self.args == other.args
        return isinstance(other, list) and list(self) == other

    __hash__ = None  # type: ignore[assignment]  # a mutable sequence, as a list

    def __repr__(self) -> str:
        return f"OnePredicate({self.key!r}, {self.args!r})"

    def __getstate__(self) -> tuple:
        return (self.key, self.args)

    def __setstate__(self, state: tuple) -> None:
        self.key, self.args = state


class TimeRows:
    """Facts asserted at one time point ``t``, read from consecutive input lines
    ``line``, ``line + 1``, ... of ``file`` in arrival order: a bulk reader's block
    (RTEC's JSONL), pushed whole to an evaluator with ``push_block`` instead of
    one ``Event`` per line.  ``facts`` are objects with ``pred`` and ``args`` (a
    tuple), one per line: ``events`` of them."""

    __slots__ = ("t", "facts", "file", "line", "events")

    def __init__(self, t: int, facts: Sequence, file: str, line: int) -> None:
        self.t = t
        self.facts = facts
        self.file = file
        self.line = line
        self.events = len(facts)

    def __len__(self) -> int:
        return len(self.facts)

    def loc(self, i: int) -> Loc:
        """The location of the block's ``i``-th row."""
        return Loc(self.file, self.line + i, 1)

    def event(self, i: int) -> Event:
        """The block's ``i``-th row as the ``Event`` a line reader makes of it."""
        row = self.facts[i]
        return Event(self.t, row.pred, row.args, False, self.loc(i))

    def unpacked(self) -> Iterator[Event]:
        return (self.event(i) for i in range(len(self.facts)))


def withdrawn(entries: Sequence, fact: tuple) -> int | None:
    """The index in ``entries`` (one time point's facts in arrival order) of the
    event a retraction of ``fact`` withdraws: the latest earlier one equal to
    it (CONTRACT §2); None if it matches nothing.

    The one statement of the retraction rule.  LARS's ``Reasoner`` applies it to
    its log, whose order within a time point tuple windows count; the dialects
    whose answers do not depend on that order keep their input as a multiset
    and apply the same rule as ``withdraw_counted`` (DatalogMTL's inputs, RTEC's
    input intervals) or as a count of duplicates beside the one stored item
    (RTEC's points, its events in the store).  The backfill has no rule of its
    own: it pushes the retractions to the evaluators in time order."""
    for i in range(len(entries) - 1, -1, -1):
        if entries[i] == fact:
            return i
    return None


def withdraw_counted(counts: dict, key: object) -> bool:
    """``withdrawn`` on a multiset of events kept as ``counts`` (key -> how many times it
    was given): one fewer of ``key``; False if there is none (the retraction matches nothing)."""
    n = counts.get(key, 0)
    if n <= 0:
        return False
    if n == 1:
        del counts[key]
    else:
        counts[key] = n - 1
    return True


def event_record(ev: Event) -> dict:
    """``ev`` as the JSON object of an input line (CONTRACT §2)."""
    rec: dict = {"t": ev.t}
    if ev.pred is not None:
        rec["pred"] = ev.pred
        rec["args"] = list(ev.args)
        if ev.retract:
            rec["op"] = "retract"
    return rec


def event_json(ev: Event) -> bytes:
    """One input line (CONTRACT §2) for ``ev``: what the fleet forwards and the
    benchmarks and tests publish."""
    import orjson  # noqa: PLC0415 (start-up: a LARS run never loads orjson (io/formats.py))

    return orjson.dumps(event_record(ev))
