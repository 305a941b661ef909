"""Counting maintenance: the incremental LARS engine's path for non-recursive components.

A non-recursive component whose rules can be counted is not evaluated
whole: only the changes of its inputs are joined (``_delta_matches``), each
head keeps how many derivations it has (``_count``: only those with two or
more are stored), and an atom changes when its count crosses zero.  While at
most one rule derives anything and each of its heads comes from one match,
not even counts are kept (``_sizes``).  A rule with a positive literal that
holds nothing is skipped (``_impossible``, Laser2's impossible derivations).
A mixin of ``Engine`` (``core.py``): these run once per changed component
per time point and update the engine's relations and counts in place.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Collection, Iterable, Iterator
from itertools import repeat
from typing import TYPE_CHECKING

from chronolog.dialects.lars.engine.relation import Rel
from chronolog.dialects.lars.engine.rules import CompiledRule
from chronolog.dialects.lars.plan import Component

if TYPE_CHECKING:
    from chronolog.dialects.lars.engine.core import StepResult


class CountingMaintenance:
    """Counting maintenance of ``Engine`` (see the module's docstring)."""

    def _maintain(
        self, ci: int, comp: Component, compiled: list[CompiledRule], sources: list[list[object]], t: int,
        result: StepResult,
    ) -> None:
        """Counting maintenance of a non-recursive component: only the changes of its
        inputs are joined, and an atom changes when its number of derivations
        crosses zero."""
        (pred,) = comp.preds
        counts = self._counts[ci]
        if counts is None:
            self._recount(ci, comp, compiled, sources, t, result)
            return
        pruning = self.pruning
        sizes = self._sizes.get(ci)
        if sizes is not None:
            # At most one rule derives anything, and each of its heads comes from
            # one match: the heads of its new and lost matches are the change (a
            # head in both had its match replaced by another one).
            nets = []
            for r, (cr, srcs) in enumerate(zip(compiled, sources)):
                # (``_delta_matches`` written out: this runs per counted component per point;
                # ``_impossible`` asked only of a rule with a changed input: one without
                # derives no change either way)
                new: set[tuple] | None = None
                lost: set[tuple] | None = None
                negated = cr.negated
                for i, rel in enumerate(srcs):
                    plus, minus = rel.plus, rel.minus
                    if not plus and not minus:
                        continue
                    if new is None:
                        if pruning and _impossible(cr, srcs):
                            break
                        new, lost = set(), set()
                    if plus:
                        (lost if negated[i] else new).update(cr.fire_delta(srcs, t, i, plus))  # type: ignore[union-attr]
                    if minus:
                        (new if negated[i] else lost).update(cr.fire_delta(srcs, t, i, minus))  # type: ignore[union-attr]
                if not new and not lost:
                    continue
                assert new is not None and lost is not None
                # (one literal: its additions and removals are disjoint, and so are their heads)
                if new and lost and len(srcs) > 1:
                    new, lost = new - lost, lost - new
                if new or lost:
                    nets.append((r, new, lost))
            if not nets:
                self._announce(pred, (), (), t, result)  # views over it still move with time
                return
            r, added, removed = nets[0]
            if len(nets) > 1 or len(sizes) > 1 and any(n for k, n in enumerate(sizes) if k != r):
                # A second rule derives heads: count derivations from now on.
                self._recount(ci, comp, compiled, sources, t, result)
                return
            sizes[r] += len(added) - len(removed)
        else:
            gained: list[tuple] = []  # heads of new matches (one entry per match)
            lost_: list[tuple] = []  # heads of lost matches
            for cr, srcs in zip(compiled, sources):
                if pruning and _impossible(cr, srcs):
                    continue
                for gains, heads in _delta_matches(cr, srcs, t):
                    (gained if gains else lost_).extend(heads)
            added, removed = _count(counts, self.rels[pred].tuples, gained, lost_)
        if not added and not removed:
            self._announce(pred, (), (), t, result)  # views over it still move with time
            return
        self._check_times(pred, added, t)
        rel = self.rels[pred]
        if removed:
            rel.discard_many(removed)
        if added:
            rel.add_many(added)
        self._announce(pred, added, removed, t, result)
        answers = self._answers.get(pred)
        if answers is not None:  # a padded predicate whose hidden rules derive nothing
            if answers is not rel:  # (restored from a checkpoint taken while not counted)
                answers.discard_many(removed)
                answers.add_many(added)
            result.add_timed(pred, added, removed)

    def _stop_counting(self, ci: int) -> None:
        del self._padded_counted[ci]
        for p in self._components[ci][0].preds:
            if self._answers.get(p) is self.rels[p]:
                self._answers[p] = Rel(self.rels[p].tuples)  # the hidden rules' atoms are not answers
        self._counts.pop(ci, None)
        self._sizes.pop(ci, None)
        self._injective.discard(ci)

    def _recount(
        self, ci: int, comp: Component, compiled: list[CompiledRule], sources: list[list[object]], t: int,
        result: StepResult,
    ) -> None:
        """Derive the component's content from scratch, and its counts (or, when
        at most one rule derives anything and each of its heads has one match,
        only how many heads each rule derives)."""
        (pred,) = comp.preds
        per_rule = [cr.fire(srcs, t) for cr, srcs in zip(compiled, sources)]  # type: ignore[arg-type]
        for cr, srcs in zip(compiled, sources):
            for lit, cols in cr.indexes(cr.full):
                if (id(srcs[lit]), cols) not in self._stepping_indexes:
                    srcs[lit].drop_index(cols)  # type: ignore[attr-defined]
        counts: dict[tuple, int] = {}
        if ci in self._injective and sum(1 for heads in per_rule if heads) <= 1:
            self._sizes[ci] = [len(heads) for heads in per_rule]
            content = set().union(*per_rule)
        else:
            self._sizes.pop(ci, None)
            for heads in per_rule:
                for h in heads:
                    counts[h] = counts.get(h, 0) + 1
            content = set(counts)
            counts = {h: n for h, n in counts.items() if n > 1}
        self._counts[ci] = counts
        self._check_times(pred, content, t)
        if pred in self._answers:
            self._visible = {pred: content}
        self._publish(comp, {pred: content}, t, result)


def _count(
    more: dict[tuple, int], present: set[tuple], gained: list[tuple], lost: list[tuple]
) -> tuple[Collection[tuple], Collection[tuple]]:
    """Apply gained and lost derivations to the counts; (heads added, heads removed).

    ``present`` holds the heads with at least one derivation, ``more`` those
    with two or more (and how many).  When every head is gained or lost at
    most once and none has several derivations, the change is set operations
    only; otherwise each touched head is counted.
    """
    plus, minus = set(gained), set(lost)
    if (
        len(plus) == len(gained) and len(minus) == len(lost)
        and (not more or (more.keys().isdisjoint(plus) and more.keys().isdisjoint(minus)))
    ):
        both = plus & minus  # one derivation replaced by another: no change
        if both:
            plus -= both
            minus -= both
        second = plus & present
        if second:  # a second derivation of a present head
            plus -= second
            more.update(dict.fromkeys(second, 2))
        return plus, minus
    # Net change per head, counted in C (heads repeat: many matches, few heads).
    change: dict[tuple, int] = Counter(gained) if len(plus) < len(gained) else dict.fromkeys(plus, 1)
    if lost:
        get = change.get
        for h, n in (Counter(lost).items() if len(minus) < len(lost) else zip(minus, repeat(1))):
            change[h] = get(h, 0) - n
    added: list[tuple] = []
    removed: list[tuple] = []
    for h, d in change.items():
        if not d:
            continue
        old = more.get(h, 1) if h in present else 0
        new = old + d
        if new > 1:
            more[h] = new
        elif old > 1:
            del more[h]
        if old == 0:
            added.append(h)
        elif new == 0:
            removed.append(h)
    return added, removed


def _impossible(cr: CompiledRule, srcs: list) -> bool:
    """A positive literal that holds nothing, before or after this time point's
    changes: the rule derives nothing either way (Laser2's impossible
    derivations, e.g. ``q always [n]`` while q is absent), so its changes
    need not be joined."""
    for j in cr.positive:
        rel = srcs[j]
        if not rel.tuples and not rel.minus:
            return True
    return False



def _delta_matches(cr: CompiledRule, srcs: list, t: int) -> Iterator[tuple[bool, Iterable[tuple]]]:
    """Heads of the rule's new (True) and lost (False) matches, from the changes of
    its inputs: a literal's additions gain matches unless it is negated."""
    negated = cr.negated
    for i, rel in enumerate(srcs):
        plus, minus = rel.plus, rel.minus
        if plus:
            yield not negated[i], cr.fire_delta(srcs, t, i, plus)
        if minus:
            yield negated[i], cr.fire_delta(srcs, t, i, minus)
