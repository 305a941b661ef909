"""How the RTEC evaluator takes its input: events, points and intervals.

``push`` (one event) and ``push_block`` (a block of rows at one time, the bulk
path of ``chronolog run``) store input events, the points of point fluents
(with their interval lists, unless nothing reads them) and
``collectIntervals`` intervals, count what is given twice (a retraction takes
one copy back), feed the dynamic domains from the arguments, and move the
next window's start back to the earliest time a late or retracted fact
affects (RTECinc's repair).  A mixin of ``RtecEvaluator``: it reads and
writes the evaluator's store and window bookkeeping, and ``push_block`` is the
hottest loop of an RTEC stream (measured: it inlines the store's
``add_point``), so it stays a method on the evaluator rather than an object
in between.
"""

from __future__ import annotations

from bisect import insort
from typing import Any

from chronolog.core.errors import ChronologError
from chronolog.core.events import Event, TimeRows, withdraw_counted
from chronolog.dialects.rtec import intervals as IV
from chronolog.dialects.rtec.hierarchy import Key
from chronolog.dialects.rtec.intervals import INF
from chronolog.dialects.rtec.store import _add_timed

NEG_INF = -INF


class RtecInput:
    """Input handling of ``RtecEvaluator`` (see the module's docstring)."""

    def push(self, event: Event) -> None:
        if event.pred is None:
            self._saw(event.t)
            return
        pred, args, t = event.pred, event.args, event.t
        if type(args) is not tuple:
            args = tuple(args)
        span = event.span
        if self.retention is not None and self.done is not None and t < self.done - self.retention:
            self.too_late += 1  # its repair would read what is forgotten
            return
        if span is not None and pred not in self.interval_decl:
            where = f"{event.loc}: " if event.loc else ""
            raise ChronologError(f"{where}error: {pred} is not declared collectIntervals/1: it cannot be given "
                                 f"as an interval")
        if pred in self.interval_decl and span is not None:
            lo = self._interval_input(pred, args, span, event.retract, event)
        elif pred in self.point_decl:
            lo = self._point_input(pred, args, t, event.retract, event)
        else:
            lo = self._event_input(pred, args, t, event.retract, event)
        if lo is None:
            return
        if self.latest is None or not self.first <= t <= self.latest:
            self._saw(t)
        if self.done is not None and lo < self.done - self.tick + 1:
            self.delayed += 1
            if self.recompute:
                lo = NEG_INF  # the benchmark's baseline: derive everything again
        if lo < self.lo:
            self.lo = lo
        if pred in self._domain_feeds:
            self._feed_domain(pred, args)

    def push_block(self, rows: TimeRows) -> None:
        """``push`` of every row of a block (facts asserted at one time, ``TimeRows``)
        without an ``Event`` and a call each: new points and events are stored here, as
        ``_point_input`` and ``_event_input`` store them; anything else (a point with the
        wrong number of arguments, a row past the retention) goes through ``push``."""
        t = rows.t
        if self.retention is not None and self.done is not None and t < self.done - self.retention:
            for event in rows.unpacked():
                self.push(event)
            return
        routes = self._routes
        store = self.store
        all_points, point_times, fluents = store.points, store.point_times, store.fluents
        events, event_times = store.events, store.event_times
        tick = self.tick
        end = t + tick
        new_points = new_events = 0
        for i, row in enumerate(rows.facts):
            pred, args = row.pred, row.args
            route = routes.get(pred)
            if route is None:
                route = routes[pred] = self._route(pred)
            arity, key, feed, lists = route
            if arity is None:  # an event (_event_input)
                key = (pred, len(args))
                by_t = events[key]
                got = by_t.get(t)
                if got is None:
                    _add_timed(by_t, event_times[key], t, args)
                else:
                    got.append(args)
                new_events += 1
            else:  # a point of a point fluent (_point_input)
                if len(args) == arity:
                    fargs, value = args, "true"
                elif len(args) == arity + 1:
                    fargs, value = args[:-1], args[-1]
                else:
                    self.push(rows.event(i))  # its error
                    continue
                item = (fargs, value)
                points = all_points.get(key)
                at_t = points.get(t) if points is not None else None
                if at_t is None:  # (_Store.add_point)
                    if points is None:
                        points = all_points[key]
                    points[t] = [item]
                    times = point_times[key]
                    if not times or times[-1] < t:
                        times.append(t)
                    else:
                        insort(times, t)
                elif item in at_t:
                    ck = (key, fargs, value, t)
                    self.point_dups[ck] = self.point_dups.get(ck, 1) + 1
                    continue  # the same point again: nothing changes
                else:
                    at_t.append(item)
                if lists:
                    by_args = fluents.get(key)
                    vals = by_args.get(fargs) if by_args is not None else None
                    old = vals.get(value) if vals is not None else None
                    if old and old[-1][1] == t:
                        old[-1] = (old[-1][0], end)
                    elif old and old[-1][1] < t:
                        old.append((t, end))
                    else:
                        store.set_list(key, fargs, value, IV.insert(old or [], t, end))
                new_points += 1
            if feed is not None:  # (_feed_domain)
                for known, need, positions, part in feed:
                    if need <= len(args):
                        tup = args[part] if part is not None else tuple([args[p] for p in positions])
                        if tup not in known:
                            self._grow_domain(known, tup)
        if not new_points and not new_events:
            return
        # what push does after each new row (the same time: once, or counted)
        if self.latest is None or not self.first <= t <= self.latest:  # type: ignore[operator]
            self._saw(t)
        lo = t - tick if new_points else t
        done = self.done
        if done is not None:
            late = (new_points if t - tick < done - tick + 1 else 0) + (new_events if t < done - tick + 1 else 0)
            if late:
                self.delayed += late
                if self.recompute:
                    lo = NEG_INF
        if lo < self.lo:
            self.lo = lo

    def _route(self, pred: str) -> tuple[int | None, Key | None, list | None, bool]:
        """How ``push_block`` stores a row of ``pred``: the arity of its point fluent (None for an
        event), the point fluent's key, its domain feeds (None if none), whether its interval
        lists are built."""
        arity = self.point_decl.get(pred)
        key = None if arity is None else (pred, arity)
        return arity, key, self._domain_feeds.get(pred), pred not in self.unread_points

    def _saw(self, t: int) -> None:
        if self.first is None or t < self.first:
            self.first = t
        if self.latest is None or t > self.latest:
            self.latest = t

    def _split(self, pred: str, args: tuple, arity: int, event: Event) -> tuple[tuple, Any]:
        if len(args) == arity:
            return args, "true"
        if len(args) == arity + 1:
            return args[:-1], args[-1]
        raise ChronologError(f"{event.loc}: error: {pred} is a fluent of arity {arity}: it needs {arity} "
                             f"arguments (value true) or {arity + 1} (the value last), not {len(args)}")

    def _unmatched(self, event: Event) -> None:
        self.unmatched_retractions += 1
        where = f"{event.loc}: " if event.loc else ""
        self.warn(f"{where}warning: retraction of {event.pred}{list(event.args)}@{event.t} matches no earlier event; "
                  f"ignored")

    def _event_input(self, pred: str, args: tuple, t: int, retract: bool, event: Event) -> float | None:
        key = (pred, len(args))
        if retract:
            if not self.store.remove_event(key, t, args):
                self._unmatched(event)
                return None
        else:
            self.store.add_event(key, t, args)
        return t

    def _point_input(self, pred: str, args: tuple, t: int, retract: bool, event: Event) -> float | None:
        arity = self.point_decl[pred]
        if len(args) == arity:
            fargs, value = args, "true"
        else:
            fargs, value = self._split(pred, args, arity, event)
        key = (pred, arity)
        item = (fargs, value)
        points = self.store.points.get(key)
        at_t = points.get(t) if points is not None else None
        present = at_t is not None and item in at_t
        tick = self.tick
        if retract:
            if not present:
                self._unmatched(event)
                return None
            ck = (key, fargs, value, t)
            n = self.point_dups.pop(ck, 1)
            if n > 2:
                self.point_dups[ck] = n - 1
            if n == 1:
                self.store.remove_point(key, t, item)
                if pred not in self.unread_points:
                    old = self.store.fluent_list(key, fargs, value)
                    self.store.set_list(key, fargs, value, IV.subtract(old, [(t, t + tick)]))
            return t - tick
        if present:
            ck = (key, fargs, value, t)
            self.point_dups[ck] = self.point_dups.get(ck, 1) + 1
            return None  # the same point again: nothing changes
        if at_t is not None:
            at_t.append(item)  # a time already known: no new time in the index
        else:
            self.store.add_point(key, t, item)
        if pred in self.unread_points:
            return t - tick
        old = self.store.fluent_list(key, fargs, value)
        if old and old[-1][1] == t:
            old[-1] = (old[-1][0], t + tick)
        elif old and old[-1][1] < t:
            old.append((t, t + tick))
        else:
            self.store.set_list(key, fargs, value, IV.insert(old, t, t + tick))
        return t - tick

    def _interval_input(self, pred: str, args: tuple, span: Any, retract: bool, event: Event) -> float | None:
        fargs, value = self._split(pred, args, self.interval_decl[pred], event)
        key = (pred, len(fargs))
        a, b = span[0], span[1]
        ck = (key, fargs, value, a, b)
        if retract:
            if not withdraw_counted(self.interval_counts, ck):  # (core.events: the one retraction rule)
                self._unmatched(event)
                return None
            self._rebuild_intervals(key, fargs, value)
            return a - self.tick
        self.interval_counts[ck] = self.interval_counts.get(ck, 0) + 1
        self.store.set_list(key, fargs, value, IV.insert(self.store.fluent_list(key, fargs, value), a, b))
        return a - self.tick

    def _rebuild_intervals(self, key: Key, fargs: tuple, value: Any) -> None:
        pairs = [(k[3], k[4]) for k in self.interval_counts if k[:3] == (key, fargs, value)]
        self.store.set_list(key, fargs, value, IV.coalesce(pairs))

    def _feed_domain(self, pred: str, args: tuple) -> None:
        feeds = self._domain_feeds.get(pred)
        if not feeds:
            return
        n = len(args)
        for known, need, positions, part in feeds:
            if need <= n:
                tup = args[part] if part is not None else tuple([args[i] for i in positions])
                if tup not in known:
                    self._grow_domain(known, tup)

    def _grow_domain(self, known: set[tuple], tup: tuple) -> None:
        known.add(tup)
        self._expansions.clear()
        self._grounded.clear()
        if self.done is not None:
            self.regrow = True
