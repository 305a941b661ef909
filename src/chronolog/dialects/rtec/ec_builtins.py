"""The Event Calculus built-ins the RTEC evaluator gives its solver.

``happensAt`` (input and derived events, ``start``/``end`` of fluents),
``holdsAt``, ``holdsFor`` and the interval-list predicates (``union_all``,
``intersect_all``, ``relative_complement_all``, ``complement_all``), each
answered from the store within the window being derived, plus ``\\+`` on a
fluent of the cycle being swept (a condition the sweep checks later).  A
mixin of ``RtecEvaluator``: the solver calls these as bound methods once per
goal (the compiled bodies of ``local.py`` and ``inline.py`` call
``_point_bounds``, ``_window_bounds``, ``_points_at``, ``_happens`` and
``_holds_at`` directly), so they stay methods on the evaluator, reading its
store and window edges without an object in between.
"""

from __future__ import annotations

from bisect import bisect_left, bisect_right
from collections.abc import Iterable, Iterator, Sequence
from operator import itemgetter
from typing import Any

from chronolog.dialects.rtec import intervals as IV
from chronolog.dialects.rtec.hierarchy import Key, _fterm, _fv, _key
from chronolog.dialects.rtec.intervals import INF
from chronolog.dialects.rtec.prolog import term_text
from chronolog.dialects.rtec.solve import Solver
from chronolog.dialects.rtec.terms import Ivs, SolveError, Var, deref, from_list, is_ground, ivs_term, resolve

NEG_INF = -INF
_ONE = (None,)  # one solution, no bindings (chronolog.dialects.rtec.terms.ONE)
_NO_BOUNDS: tuple[tuple, tuple, tuple] = ((), (), ())  # (``_point_bounds`` where nothing starts or ends)
_START = itemgetter(0)
_END = itemgetter(1)


class EcBuiltins:
    """The Event Calculus built-ins of ``RtecEvaluator`` (see the module's docstring)."""

    def _happens(self, solver: Solver, g: tuple) -> Iterable[None]:
        e, t = deref(g[1]), deref(g[2])
        if type(e) is tuple and e[0] in ("start", "end") and len(e) == 2:
            return self._boundary(solver, e[0] == "start", e[1], t)
        return self._occurs(solver, e, t)

    def _occurs(self, solver: Solver, e: Any, t: Any) -> Iterator[None]:
        key = _key(e)
        if key is None:
            raise SolveError("error: happensAt/2 of an unbound event")
        by_t = self.store.events.get(key)
        if not by_t:
            return
        mark = len(solver.trail)
        if type(t) is int:
            for args in by_t.get(t, ()):
                if solver.unify(e, _fterm(key, args)):
                    yield
                solver.undo(mark)
            return
        if type(t) is not Var:
            return
        times = self.store.event_times[key]
        i = bisect_left(times, self.win_lo)
        j = bisect_right(times, self.win_hi)
        for tt in times[i:j]:
            for args in by_t.get(tt, ()):
                if solver.unify(e, _fterm(key, args)) and solver.unify(t, tt):
                    yield
                solver.undo(mark)

    def _boundary(self, solver: Solver, start: bool, fv: Any, t: Any) -> Iterable[None]:
        """start(F=V) at the last time point before each interval, end(F=V) at its last one."""
        got = _fv(fv)
        if got is None:
            raise SolveError("error: start/end of something that is not F=V")
        key = got[0]
        if type(t) is int and key[0] in self.point_decl and key in self.store.points and is_ground(fv):
            item = (tuple([resolve(a) for a in got[1]]), resolve(got[2]))
            return _ONE if item in self._point_bounds(key, start, t)[1] else ()
        return self._boundaries(solver, start, got, deref(t), fv)

    def _boundaries(self, solver: Solver, start: bool, got: tuple, t: Any, fv: Any) -> Iterator[None]:
        key, fargs, value = got
        tick = self.tick
        mark = len(solver.trail)
        t = deref(t)
        if key[0] in self.point_decl and key in self.store.points:
            if type(t) is int:
                times: Any = (t,)
            else:
                all_times = self.store.point_times[key]
                shift = tick if start else 0
                i = bisect_left(all_times, self.win_lo + shift)
                j = bisect_right(all_times, self.win_hi + shift)
                times = [x - shift for x in all_times[i:j]]
            pattern = (fargs, value)
            for tt in times:
                for item in self._point_bounds(key, start, tt)[0]:
                    if _match(solver, pattern, item) and (type(t) is int or solver.unify(t, tt)):
                        yield
                    solver.undo(mark)
            return
        lo, hi = (t, t) if type(t) is int else (self.win_lo, self.win_hi)
        pos = 0 if start else 1
        only = self.read_values.get(key) if type(deref(value)) is Var else None
        for args, vals in self._instances(key, fargs):
            for v, ivs in list(vals.items()):
                if only is not None and v not in only:
                    continue
                # the intervals whose start (end) is in [lo + tick, hi + tick]: a binary search
                i = bisect_left(ivs, lo + tick, key=_START if start else _END)
                for p in ivs[i:]:
                    tt = p[pos] - tick
                    if tt > hi or tt == INF:
                        break
                    if _match(solver, (fargs, value), (args, v)) and (type(t) is int or solver.unify(t, tt)):
                        yield
                    solver.undo(mark)

    def _point_bounds(self, key: Key, start: bool, t: int) -> tuple[Sequence, Sequence, Sequence]:
        """The (args, value) of the point fluent instances starting (or ending) at t, twice (a
        list to go through, and to test membership in: a time has a few points) and as (None,
        args, value) triples (for compiled bodies, ``rtec/local.py``); computed once per window
        (the rules of a window ask for them again and again; a window's free-time goals
        (``_window_bounds``) for every time of the window)."""
        ck = (key, start, t)
        got = self._bounds.get(ck)
        if got is None:
            at = self.store.points[key]
            inside = at.get(t + self.tick if start else t)
            if inside:
                outside = at.get(t if start else t + self.tick)
                items = [x for x in inside if x not in outside] if outside else list(inside)
                got = self._bounds[ck] = (items, items, [(None, *x) for x in items]) if items else _NO_BOUNDS
            else:
                got = self._bounds[ck] = _NO_BOUNDS
        return got

    def _points_at(self, key: Key, t: int) -> list:
        """(None, args, value) of a point fluent's points at t, once per window (``rtec/local.py``)."""
        ck = (key, t)
        got = self._bounds.get(ck)
        if got is None:
            got = self._bounds[ck] = [(None, *x) for x in self.store.points[key].get(t, ())]
        return got

    def _window_bounds(self, key: Key, start: bool) -> list[tuple[int, tuple, Any]]:
        """(time, args, value) of every start (end) of a point fluent's instances in the window
        [win_lo, win_hi], in time order: what ``_boundaries`` enumerates for a free time, built
        once per window and component."""
        ck = (key, start, self.win_lo, self.win_hi)
        bounds = self._bounds
        got = bounds.get(ck)
        if got is None:
            tick = self.tick
            shift = tick if start else 0
            all_times = self.store.point_times[key]
            at = self.store.points[key]
            i = bisect_left(all_times, self.win_lo + shift)
            j = bisect_right(all_times, self.win_hi + shift)
            got = bounds[ck] = []
            add = got.append
            # ``_point_bounds`` of each time, inline (a window has thousands of times): the
            # points at x (a time of the index) that are not at x - tick (start at x - tick) or
            # at x + tick (end at x)
            other = -tick if start else tick
            for x in all_times[i:j]:
                t = x - shift
                one = bounds.get(pk := (key, start, t))
                if one is None:
                    inside = at.get(x)
                    if inside:
                        outside = at.get(x + other)
                        items = [y for y in inside if y not in outside] if outside else list(inside)
                        one = bounds[pk] = (items, items, [(None, *y) for y in items]) if items else _NO_BOUNDS
                    else:
                        one = bounds[pk] = _NO_BOUNDS
                for y in one[0]:
                    add((t, *y))
        return got

    def _instances(self, key: Key, fargs: tuple) -> Iterator[tuple[tuple, dict]]:
        by_args = self.store.fluents.get(key)
        if not by_args:
            return
        if all(is_ground(a) for a in fargs):
            ground = tuple(resolve(a) for a in fargs)
            vals = by_args.get(ground)
            if vals:
                yield ground, vals
            return
        for pos, a in enumerate(fargs):
            a = deref(a)
            if type(a) is not Var and is_ground(a):
                got = resolve(a)
                for args in self.store.with_arg(key, pos, got):
                    yield args, by_args[args]
                return
        yield from list(by_args.items())

    def _holds_at(self, solver: Solver, g: tuple) -> Iterator[None]:
        fv, t = deref(g[1]), deref(g[2])
        got = _fv(fv)
        if got is None:
            raise SolveError("error: holdsAt/2 of something that is not F=V")
        if type(t) is not int:
            raise SolveError("error: holdsAt/2 needs a bound time")
        key, fargs, value = got
        if key in self.deferring:
            self.deferred.append((True, fv))
            yield
            self.deferred.pop()
            return
        mark = len(solver.trail)
        if key[0] in self.point_decl and key in self.store.points:
            pattern = (fargs, value)
            for item in self.store.points[key].get(t, ()):
                if _match(solver, pattern, item):
                    yield
                solver.undo(mark)
            return
        only = self.read_values.get(key) if type(deref(value)) is Var else None
        for args, vals in self._instances(key, fargs):
            for v, ivs in list(vals.items()):
                if (only is None or v in only) and IV.contains(ivs, t) and _match(solver, (fargs, value), (args, v)):
                    yield
                solver.undo(mark)

    def _not(self, solver: Solver, g: tuple) -> Iterable[None]:
        """``\\+``; on a holdsAt of the cycle being swept it is a condition checked in the sweep."""
        inner = deref(g[1])
        if self.deferring and type(inner) is tuple and inner[0] == "holdsAt" and len(inner) == 3:
            got = _fv(inner[1])
            if got is not None and got[0] in self.deferring:
                return self._deferred_not(inner[1])
        return solver._neg(g, 0)

    def _deferred_not(self, fv: Any) -> Iterator[None]:
        self.deferred.append((False, fv))
        yield
        self.deferred.pop()

    def _holds_for(self, solver: Solver, g: tuple) -> Iterator[None]:
        fv = deref(g[1])
        got = _fv(fv)
        if got is None:
            raise SolveError("error: holdsFor/2 of something that is not F=V")
        key, fargs, value = got
        mark = len(solver.trail)
        if is_ground(fv):  # the usual call (a statically determined fluent's body): one list, [] if none
            ivs = self.store.fluent_list(key, tuple([resolve(a) for a in fargs]), resolve(value))
            if solver.unify(g[2], ivs_term(IV.clip(ivs, self.clip_lo))):
                yield
            solver.undo(mark)
            return
        pattern = (fargs, value)
        only = self.read_values.get(key) if type(deref(value)) is Var else None
        found = False
        for args, vals in self._instances(key, fargs):
            for v, ivs in list(vals.items()):
                if only is not None and v not in only:
                    continue
                if not _match(solver, pattern, (args, v)):  # matched first: most values are not asked for
                    solver.undo(mark)
                    continue
                part = IV.clip(ivs, self.clip_lo)
                if part:
                    found = True
                    if solver.unify(g[2], ivs_term(part)):
                        yield
                solver.undo(mark)
        # nothing stored matches: RTEC's fall-back clause (``holdsForProcessedSDFluent(_, _, [])``
        # and its likes) gives [] with the free variables left free
        if not found and solver.unify(g[2], ivs_term([])):
            yield
        solver.undo(mark)

    clip_lo: float = NEG_INF
    read_values: dict[Key, frozenset]  # (set by the evaluator: unground.read_values)

    def _lists(self, t: Any) -> list[list]:
        items = from_list(t)
        if items is None:
            raise SolveError("error: an interval built-in needs a list of interval lists")
        out = []
        for x in items:
            x = deref(x)
            if type(x) is Ivs:
                out.append(x.pairs)
            elif x == "[]":
                out.append([])
            else:
                raise SolveError(f"error: {term_text(resolve(x))} is not an interval list")
        return out

    def _union(self, solver: Solver, g: tuple) -> Iterator[None]:
        mark = len(solver.trail)
        if solver.unify(g[2], ivs_term(IV.union_all(self._lists(g[1])))):
            yield
        solver.undo(mark)

    def _intersect(self, solver: Solver, g: tuple) -> Iterator[None]:
        mark = len(solver.trail)
        if solver.unify(g[2], ivs_term(IV.intersect_all(self._lists(g[1])))):
            yield
        solver.undo(mark)

    def _rel_complement(self, solver: Solver, g: tuple) -> Iterator[None]:
        mark = len(solver.trail)
        base = self._lists((".", g[1], "[]"))[0]
        if solver.unify(g[3], ivs_term(IV.relative_complement_all(base, self._lists(g[2])))):
            yield
        solver.undo(mark)

    def _complement(self, solver: Solver, g: tuple) -> Iterator[None]:
        mark = len(solver.trail)
        lo = max(0, self.clip_lo)
        if solver.unify(g[2], ivs_term(IV.complement(IV.union_all(self._lists(g[1])), lo))):
            yield
        solver.undo(mark)


def _match(solver: Solver, pattern: tuple, item: tuple) -> bool:
    """Unify (args pattern, value pattern) with a ground (args, value): F=V without building it."""
    return solver.unify_args(pattern[0], item[0]) and solver.unify(pattern[1], item[1])

