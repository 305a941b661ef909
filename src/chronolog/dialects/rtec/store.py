"""Where the RTEC evaluator keeps input and derived entities between windows.

Events by time (with each key's sorted times), fluent interval lists by
instance (key -> args -> value -> list), the points of point fluents by time,
and the per-argument indexes that ``holdsAt``/``holdsFor`` with a bound
argument read.  Kept apart from the evaluator because it is plain data with
its invariants (sorted time lists matching the maps, indexes matching the
instances); what is derived into it, and when, is the evaluator's business.
``push_block`` (``inputs.py``) inlines ``add_point`` and ``_add_timed`` in its
per-row loop on purpose (measured): keep them in step.
"""

from __future__ import annotations

from bisect import bisect_left, insort
from collections import defaultdict
from operator import itemgetter
from typing import Any

from chronolog.dialects.rtec.hierarchy import Key

_END = itemgetter(1)


def _add_timed(by_t: dict[int, list], times: list[int], t: int, item: Any) -> None:
    """``item`` at ``t`` in a time -> items map whose sorted times are ``times``."""
    got = by_t.get(t)
    if got is None:
        by_t[t] = [item]
        if not times or times[-1] < t:
            times.append(t)
        else:
            insort(times, t)
    else:
        got.append(item)


def _after(ivs: list, cut: float) -> list:
    """The intervals of a list that end at ``cut`` or later."""
    i = bisect_left(ivs, cut, key=_END)
    return ivs[i:] if i else ivs


class _Store:
    """Input and derived entities: events by time, fluent interval lists by instance."""

    def __init__(self) -> None:
        self.events: dict[Key, dict[int, list[tuple]]] = defaultdict(dict)
        self.event_times: dict[Key, list[int]] = defaultdict(list)  # sorted
        self.fluents: dict[Key, dict[tuple, dict[Any, list]]] = defaultdict(dict)  # key -> args -> value -> list
        self.points: dict[Key, dict[int, list[tuple]]] = defaultdict(dict)  # point fluents: key -> t -> [(args, v)]
        self.indexes: dict[Key, dict[int, dict[Any, dict[tuple, None]]]] = {}  # key -> position -> value -> instances
        self.point_times: dict[Key, list[int]] = defaultdict(list)  # sorted times of self.points[key]

    def add_point(self, key: Key, t: int, item: tuple) -> None:
        _add_timed(self.points[key], self.point_times[key], t, item)

    def remove_point(self, key: Key, t: int, item: tuple) -> None:
        at = self.points[key]
        at[t].remove(item)
        if not at[t]:
            del at[t]
            times = self.point_times[key]
            times.pop(bisect_left(times, t))

    def add_event(self, key: Key, t: int, args: tuple) -> None:
        _add_timed(self.events[key], self.event_times[key], t, args)

    def remove_event(self, key: Key, t: int, args: tuple) -> bool:
        got = self.events.get(key, {}).get(t)
        if not got or args not in got:
            return False
        got.remove(args)
        if not got:
            del self.events[key][t]
            times = self.event_times[key]
            times.pop(bisect_left(times, t))
        return True

    def drop_events_from(self, key: Key, lo: float) -> None:
        times = self.event_times.get(key)
        if not times:
            return
        i = bisect_left(times, lo)
        for t in times[i:]:
            del self.events[key][t]
        del times[i:]

    def fluent_list(self, key: Key, args: tuple, value: Any) -> list:
        by_args = self.fluents.get(key)
        vals = by_args.get(args) if by_args is not None else None
        got = vals.get(value) if vals is not None else None
        return [] if got is None else got

    def set_list(self, key: Key, args: tuple, value: Any, ivs: list) -> None:
        by_args = self.fluents[key]
        vals = by_args.get(args)
        if ivs:
            if vals is None:
                vals = by_args[args] = {}
                for pos, index in self.indexes.get(key, {}).items():
                    index.setdefault(args[pos], {})[args] = None
            vals[value] = ivs
        elif vals is not None:
            vals.pop(value, None)
            if not vals:
                self.drop_instance(key, args)

    def drop_instance(self, key: Key, args: tuple) -> None:
        del self.fluents[key][args]
        for pos, index in self.indexes.get(key, {}).items():
            same = index[args[pos]]
            del same[args]
            if not same:
                del index[args[pos]]

    def with_arg(self, key: Key, pos: int, value: Any) -> list[tuple]:
        """The instances of a fluent whose argument ``pos`` is ``value`` (in the store's order):
        ``holdsAt(voted(V,M)=aye, T)`` with M bound reads M's voters, not every vote."""
        by_pos = self.indexes.setdefault(key, {})
        index = by_pos.get(pos)
        if index is None:
            index = by_pos[pos] = {}
            for args in self.fluents.get(key, {}):
                index.setdefault(args[pos], {})[args] = None
        return list(index.get(value, ()))

    def forget_before(self, cut: float) -> None:
        """Drop the events and points before ``cut`` and the intervals that end before it
        (the evaluator's retention, ``RtecEvaluator._forget``)."""
        for by_key, times_of in ((self.events, self.event_times), (self.points, self.point_times)):
            for key, times in times_of.items():
                i = bisect_left(times, cut)
                if i:
                    by_t = by_key[key]
                    for t in times[:i]:
                        del by_t[t]
                    del times[:i]
        for key, by_args in self.fluents.items():
            for args in list(by_args):
                vals = by_args[args]
                for v in list(vals):
                    kept = _after(vals[v], cut)
                    if kept:
                        vals[v] = kept
                    else:
                        del vals[v]
                if not vals:
                    self.drop_instance(key, args)
