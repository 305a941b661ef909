"""What a LARS chain's components derived that other components read, per time point.

A per-stratum fleet keeps each stratum's content per time point (the reasoners' ``sent`` and
``imports`` journals), so a program upgrade that changes only upper strata evaluates just
those over [T - reach, now].  A chain (``up --chain``: one reasoner for every stratum) keeps
only its engine's windows at the last point, so its upgrade evaluated the kept components
the changed ones read once more over that span (``keeping.evaluate_split``).  This record
is the chain's counterpart of those journals: for every time point evaluated, the content
of each component some other component reads (what crosses a component boundary), taken
from the engine after its step — sharing the previous point's set where a predicate did not
change, so an unchanged point costs a dict entry.  It is pruned with the input log
(retention), and journaled by the chain stage like the log.  Only a stratified program's
engine is recorded: an upgrade keeps no strata of any other (``keeping.split``).

A point is recorded where the engine's evaluation is exact: live evaluations and the new
evaluations of a correction's replay (``Reasoner.observe``), not a warm-up; a point without
an entry (before recording began, after a restart from an older state, skipped by
``Reasoner.skip_to``) makes an upgrade that needs it evaluate the kept components as before.
"""

from __future__ import annotations

from collections.abc import Collection, Iterable, Mapping
from typing import Any

from chronolog.dialects.lars.engine.content import NOTHING
from chronolog.dialects.lars.engine.core import Engine, Imported, StepResult
from chronolog.dialects.lars.engine.relation import Rel
from chronolog.dialects.lars.plan import Plan, PredKey

Entry = Mapping[PredKey, Collection[tuple]]  # one point's content: a group per predicate (tuples, or frozensets read back)


def crossing_components(plan: Plan) -> frozenset[int]:
    """The components of ``plan`` another component reads (none for a program the engine
    does not evaluate incrementally: not stratified, or a solver asked for)."""
    if not plan.stratified or plan.solver in ("tms!", "oneshot!"):
        return frozenset()
    of = {p: ci for ci, c in enumerate(plan.components) for p in c.preds}
    return frozenset(of[k] for ci, c in enumerate(plan.components) for k in c.reads if of.get(k, ci) != ci)


def preds_of(plan: Plan, components: Iterable[int]) -> frozenset[PredKey]:
    """Every predicate of ``components`` (indices into ``plan.components``)."""
    return frozenset(p for ci in components for p in plan.components[ci].preds)


class CrossingRecord:
    """Per time point where the program had an answer set, the content of the recorded
    predicates (``preds``: those of ``crossing_components``), each group a tuple (a third of
    a frozenset's memory; made frozensets again for an upgrade, ``span``), in ``entries``: a
    dict, or the chain's journal (read back, its groups are frozensets: the same to this
    class).  A point without an answer set has no entry."""

    __slots__ = ("preds", "entries", "reasoner", "_low", "_engine", "_rels")

    def __init__(self, preds: Collection[PredKey], entries: dict[int, Entry] | None = None) -> None:
        self.preds = tuple(sorted(preds))
        self.entries: dict[int, Entry] = {} if entries is None else entries
        self.reasoner: Any = None  # the one observed: its log's pruning prunes the record
        self._low: int | None = None  # no entry lies below it (``prune``)
        self._engine: Engine | None = None  # the engine last observed, and its recorded relations
        self._rels: list[tuple[PredKey, Rel]] = []

    @classmethod
    def of(cls, plan: Plan, entries: dict[int, Entry] | None = None) -> CrossingRecord | None:
        """The record of ``plan``'s crossing predicates (None: none to record)."""
        preds = preds_of(plan, crossing_components(plan))
        return cls(preds, entries) if preds else None

    def observe(self, t: int, engine: Engine, result: StepResult) -> None:
        """(``Reasoner.observe``) Record the engine's content at ``t``, just evaluated exactly:
        the previous point's entry itself where nothing recorded changed (the common case),
        else a copy of it with the changed groups."""
        if engine is not self._engine:
            self._engine = engine
            self._rels = [(p, engine.rels[p]) for p in self.preds]
        entries = self.entries
        if not result.consistent:
            if t in entries:
                del entries[t]
        else:
            base = entries.get(t - 1, NOTHING)
            content = None
            for p, rel in self._rels:
                rows = rel.tuples
                old = base.get(p, ())
                if len(rows) == len(old) and rows.issuperset(old):
                    continue
                if content is None:
                    content = dict(base)
                if rows:
                    content[p] = tuple(rows)
                else:
                    del content[p]
            entries[t] = base if content is None else content
        if not t & 63:
            below = None if self.reasoner is None else self.reasoner.pruned_below
            if below is not None:  # (as far as the log: ``Reasoner._prune`` runs as often, one point later)
                self.prune(below + 1)

    def span(self, first: int, last: int, preds: Collection[PredKey]) -> list[Imported] | None:
        """The entries of ``first`` .. ``last`` as imports, if each point has one and ``preds``
        are all recorded (None: not all of it is known)."""
        if not set(preds) <= set(self.preds):
            return None
        entries = self.entries
        out: list[Imported] = []
        last_entry = None
        for t in range(first, last + 1):
            got = entries.get(t)
            if got is None:
                return None
            if got is not last_entry:  # (a point sharing the entry before shares its import)
                last_entry = got
                imported = Imported(True, {p: frozenset(rows) for p, rows in got.items()})
            out.append(imported)
        return out

    def prune(self, below: int) -> None:
        """Forget the entries before ``below`` (the input log's first point kept)."""
        entries = self.entries
        low = self._low
        if low is None:
            if not entries:
                return
            low = min(entries)
        while low < below:
            if low in entries:
                del entries[low]
            low += 1
        self._low = low
