"""How the incremental LARS engine is wired to its inputs, and how stream facts enter.

Each body literal of a computed component reads a *source*: the relation of
a derived predicate, a window view over a derived or a stream predicate
(time, tuple or now windows, shared between literals that read the same
window), or ``_Inner`` for a predicate of the component itself.  ``_watch``
journals a counted component's inputs so that a change marks it dirty,
``_blockers`` finds the stream views that may wait while no rule can use
them (Laser2's impossible derivations), and ``_feed_stream`` moves every
stream view to the new time point with the facts arriving at it.  A mixin of
``Engine`` (``core.py``): these build and advance the engine's own views,
and ``_feed_stream`` runs once per time point on the stream's hot path.
"""

from __future__ import annotations

from collections.abc import Collection, Sequence
from operator import itemgetter
from typing import TYPE_CHECKING

from chronolog.core.events import OnePredicate
from chronolog.core.records import record
from chronolog.dialects.lars.engine.relation import Rel
from chronolog.dialects.lars.engine.views import NowSourceView, StreamWindowView, TimeWindowView, TupleQueue, TupleWindowView
from chronolog.dialects.lars.ir import ExtAtom, Op, TupleWindow
from chronolog.dialects.lars.plan import TICK, PredKey

if TYPE_CHECKING:
    from chronolog.dialects.lars.engine.core import Fact

_TICK_ROW = frozenset({()})
_key_of = itemgetter(0)
_args_of = itemgetter(1)


@record
class _Inner:
    """A literal over a predicate of the component being evaluated."""

    lit: ExtAtom


class StreamViews:
    """The sources and stream views of ``Engine`` (see the module's docstring)."""

    def _watch(self, ci: int, sources: list[list[object]]) -> None:
        """Journal the component's input relations: a change marks it dirty for the time point."""
        for srcs in sources:
            for rel in srcs:
                if isinstance(rel, Rel):
                    if not rel.journaled:
                        rel.start_journal()
                        self._journaled.append(rel)
                    ids = () if rel.watch is None else rel.watch[1]
                    if ci not in ids:
                        rel.watch = (self._dirty, (*ids, ci))

    def _source(self, lit: ExtAtom, members: set[PredKey]) -> object:
        key = lit.atom.key
        if key in members:
            return _Inner(lit)
        if isinstance(lit.window, TupleWindow):
            n = lit.window.size
            vkey = (key, lit.op, n)
            view = self._tuple_views.get(vkey)
            if view is None:
                view = self._tuple_views[vkey] = TupleWindowView(lit.op)
                self._tuple_views_of.setdefault((n, key), []).append(view)
                self._queues.setdefault(n, TupleQueue(n))
            return view.rel
        size = None if lit.window is None else lit.window.size
        if lit.op is Op.AT and key in self.plan.timed:
            reach = self._time_reach.get(key)
            if size is None or (reach is not None and reach <= size):
                # The window sees every atom the predicate can hold (they all lie
                # within its reach of t): the view is the relation itself.
                return self.rels[key]
        if key in self.plan.intensional and key not in self.plan.timed:
            if lit.op in (Op.NOW, Op.DIAMOND):
                return self.rels[key]
            vkey = (key, lit.op, size)
            nview = self._now_views.get(vkey)
            if nview is None:
                nview = self._now_views[vkey] = NowSourceView(lit.op, size)
                self._now_views_of.setdefault(key, []).append(nview)
            return nview.rel
        op = Op.DIAMOND if lit.op is Op.NOW else lit.op
        size = 0 if lit.op is Op.NOW else size
        vkey = (key, op, size)
        view = self._time_views.get(vkey)
        if view is None:
            # Stream facts enter only at the evaluation time: views over them take whole batches.
            kind = StreamWindowView if key in self.plan.extensional else TimeWindowView
            view = self._time_views[vkey] = kind(op, size)
            self._views_of.setdefault(key, []).append(view)
        return view.rel

    def _blockers(self) -> dict[StreamWindowView, list[list[tuple[PredKey, StreamWindowView]]]]:
        """Stream views that may wait while no rule can use them: for each, per
        rule reading it, the other positive literals over stream views (a rule
        with one of them empty and without facts derives nothing, whatever the
        view holds: Laser2's impossible derivations)."""
        view_of: dict[int, tuple[PredKey, StreamWindowView]] = {}
        for key in self._ext_views:
            for view in self._views_of[key]:
                view_of[id(view.rel)] = (key, view)
        readers: dict[StreamWindowView, list[list[tuple[PredKey, StreamWindowView]]]] = {}
        for _, compiled, sources in self._components:
            for cr, srcs in zip(compiled, sources):
                for i, src in enumerate(srcs):
                    mine = view_of.get(id(src))
                    if mine is None:
                        continue
                    others = [view_of[id(srcs[j])] for j in cr.positive if j != i and id(srcs[j]) in view_of]
                    readers.setdefault(mine[1], []).append([o for o in others if o[1] is not mine[1]])
        return {view: rules for view, rules in readers.items() if view.size is not None and all(rules)}

    def _feed_stream(self, t: int, facts: Sequence[Fact]) -> None:
        routes = self.plan.input_routes
        grouped: dict[PredKey, Collection[tuple]] = {}
        if type(facts) is OnePredicate:
            grouped[routes.get(facts.key, facts.key)] = set(facts.args)
        elif facts:
            keys = set(map(_key_of, facts))
            if len(keys) == 1:
                (key,) = keys
                grouped[routes.get(key, key)] = set(map(_args_of, facts))
            else:
                for key, args in facts:
                    rows = grouped.get(key)
                    if rows is None:
                        grouped[key] = [args]
                    else:
                        rows.append(args)  # type: ignore[attr-defined]
                if routes:
                    grouped = {routes.get(k, k): rows for k, rows in grouped.items()}
        background = self._background
        t1 = self.t1
        busy = self._busy
        views_of = self._views_of
        deferrable = self._deferrable
        always = self._always
        # Predicates with facts now, and those whose views still hold some:
        # a view without content and without facts stays as it is.
        for key in self._always | busy | grouped.keys():
            if key not in views_of:
                continue
            rows = grouped.get(key)
            # (views keep the batch: it is never changed in place)
            batch = rows if type(rows) is set else set(rows) if rows else set()
            if key in background:
                batch = batch | background[key]
            elif key == TICK:
                batch = batch | _TICK_ROW
            idle = True
            for view in views_of[key]:
                blockers = deferrable.get(view) if deferrable else None
                if blockers is not None and all(
                    any(b.idle and k not in grouped and k not in always for k, b in rule) for rule in blockers
                ):
                    view.defer(t, batch)  # every rule reading it derives nothing now
                    idle = False
                    continue
                view.advance_batch(t, t1, batch)
                idle = idle and view.idle
            if idle:
                busy.discard(key)
            else:
                busy.add(key)
        if self._queues:
            for key, args in facts:
                for n, queue in self._queues.items():
                    for view in self._tuple_views_of.get((n, key), ()):
                        view.enter(args, t)
                    evicted = queue.push(key, args, t)
                    if evicted is not None:
                        ekey, eargs, et = evicted  # type: ignore[misc]
                        for view in self._tuple_views_of.get((n, ekey), ()):
                            view.leave(eargs, et)
            for (n, _), views in self._tuple_views_of.items():
                start = self._queues[n].start(self.t1)
                for view in views:
                    view.settle(t, start)
