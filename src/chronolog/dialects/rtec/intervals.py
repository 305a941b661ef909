"""Lists of maximal intervals, RTEC's unit of work.

An interval is a pair ``(a, b)``: the fluent holds at the time points ``t``
with ``a <= t < b`` (``b`` is ``INF`` while it holds on).  A list is sorted,
disjoint and coalesced (``[(1,3),(3,5)]`` is ``[(1,5)]``).  Every RTEC
interval built-in is a linear sweep over such lists.
"""

from __future__ import annotations

import heapq
from bisect import bisect_left, bisect_right
from math import inf

INF = inf
Pair = tuple  # (int, int | float)
IvList = list


def _merged(pairs) -> IvList:  # type: ignore[no-untyped-def]
    """Pairs sorted by their left end, merged where they overlap or meet."""
    out: IvList = []
    for a, b in pairs:
        if out and a <= out[-1][1]:
            if b > out[-1][1]:
                out[-1] = (out[-1][0], b)
        else:
            out.append((a, b))
    return out


def coalesce(pairs: list[Pair]) -> IvList:
    """Sorted, merged list of any pairs (empty ones dropped)."""
    return _merged(sorted(p for p in pairs if p[0] < p[1]))


def union_all(lists: list[IvList]) -> IvList:
    lists = [x for x in lists if x]
    if not lists:
        return []
    if len(lists) == 1:
        return list(lists[0])
    return _merged(heapq.merge(*lists))


def intersect(x: IvList, y: IvList) -> IvList:
    out: IvList = []
    i = j = 0
    while i < len(x) and j < len(y):
        a = max(x[i][0], y[j][0])
        b = min(x[i][1], y[j][1])
        if a < b:
            out.append((a, b))
        if x[i][1] < y[j][1]:
            i += 1
        else:
            j += 1
    return out


def intersect_all(lists: list[IvList]) -> IvList:
    if not lists:
        return []
    out = lists[0]
    for x in lists[1:]:
        if not out:
            break
        out = intersect(out, x)
    return list(out)


def complement(x: IvList, lo: int, hi: float = INF) -> IvList:
    """The points of ``[lo, hi)`` outside ``x``."""
    out: IvList = []
    at = lo
    for a, b in x:
        if b <= at:
            continue
        if a >= hi:
            break
        if a > at:
            out.append((at, a))
        at = max(at, b)
    if at < hi:
        out.append((at, hi))
    return out


def relative_complement_all(x: IvList, lists: list[IvList]) -> IvList:
    """The points of ``x`` in none of ``lists``."""
    cut = union_all(lists)
    if not cut:
        return list(x)
    return intersect(x, complement(cut, min(x[0][0], cut[0][0]) if x else 0))


def subtract(x: IvList, y: IvList) -> IvList:
    """The points of ``x`` not in ``y``, each interval of ``x`` cut by the ones of ``y``
    over it: one pass (publication diffs two lists per changed instance and window)."""
    if not y:
        return list(x)
    out: IvList = []
    j, n = 0, len(y)
    for a, b in x:
        while j < n and y[j][1] <= a:
            j += 1
        k = j
        while a < b:
            if k == n or y[k][0] >= b:
                out.append((a, b))
                break
            ya, yb = y[k]
            if ya > a:
                out.append((a, ya))
            a = yb
            k += 1
    return out


def _end(p: Pair) -> float:
    return p[1]


def _start(p: Pair) -> float:
    return p[0]


def clip(x: IvList, lo: float, hi: float = INF) -> IvList:
    """``x`` restricted to ``[lo, hi)``; a binary search finds the part (lists grow with the
    stream, windows only read their end)."""
    if not x or x[-1][1] <= lo or lo >= hi:
        return []
    i = 0 if lo == -INF or x[0][1] > lo else bisect_right(x, lo, key=_end)
    j = bisect_left(x, hi, key=_start) if hi != INF else len(x)
    out = x[i:j]
    if out:
        if out[0][0] < lo:
            out[0] = (lo, out[0][1])
        if out[-1][1] > hi:
            out[-1] = (out[-1][0], hi)
    return out


def insert(x: IvList, a: float, b: float) -> IvList:
    """``x`` with ``[a, b)`` added (a new list; only the intervals it meets are merged)."""
    if not x or x[-1][1] < a:
        return [*x, (a, b)]
    i = bisect_left(x, a, key=_end)  # the first that ends at a or later: it may meet [a, b)
    j = bisect_right(x, b, key=_start)  # those from j on start after b
    if i < j:
        a, b = min(a, x[i][0]), max(b, x[j - 1][1])
    return [*x[:i], (a, b), *x[j:]]


def splice(old: IvList, new: IvList, at: float) -> IvList:
    """``old`` before ``at``, ``new`` from ``at`` on, merged where they meet."""
    out = clip(old, -INF, at)
    tail = clip(new, at)
    if out and tail and tail[0][0] <= out[-1][1]:
        out[-1] = (out[-1][0], max(out[-1][1], tail[0][1]))
        tail = tail[1:]
    out.extend(tail)
    return out


def contains(x: IvList, t: int) -> bool:
    if not x:
        return False
    last = x[-1]
    if last[0] <= t:  # the common case: a time in the window, at the list's end
        return t < last[1]
    i = bisect_right(x, t, key=_end)
    return i < len(x) and x[i][0] <= t
