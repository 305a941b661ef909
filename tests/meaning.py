"""The meaning of an answer stream (CONTRACT §3), independent of its form.

Expands ``t`` and ``interval`` lines (``[a,b]``, ``[a,b)``, ``(a,b]``,
``[a,inf)``) over the integer points of the input span, sums the diffs per
(pred, args, point), checks every sum is 0 or 1 and returns the atoms whose
sum is 1.  Tests compare meanings, never exact lines.

``running=True`` also checks the stronger reading of "per point it never sums
below 0 or above 1": after every line, not only at the end.
"""

from __future__ import annotations

import math
import re
from fractions import Fraction

_INTERVAL = re.compile(r"^([\[(])\s*(-?\d+)\s*,\s*(-?\d+|inf)\s*([\])])$")

Point = tuple[str, tuple, int]


def points(when: str, span: tuple[int, int]) -> range:
    """The integer points of an interval, clipped to ``span`` (inclusive); ``inf`` runs to its end."""
    m = _INTERVAL.match(when)
    assert m, f"bad interval {when!r}"
    lo = int(m.group(2)) + (1 if m.group(1) == "(" else 0)
    if m.group(3) == "inf":
        assert m.group(4) == ")", f"an infinite end is open: {when!r}"
        hi = span[1]
    else:
        hi = int(m.group(3)) - (1 if m.group(4) == ")" else 0)
    return range(max(lo, span[0]), min(hi, span[1]) + 1)


def meaning(lines: list[dict], span: tuple[int, int], *, running: bool = False) -> set[Point]:
    """The set of (pred, args, t) whose diffs sum to 1 over ``span``."""
    total: dict[Point, int] = {}
    for n, rec in enumerate(lines, 1):
        if rec.get("no_answer_set"):  # a time point without an answer set: no atoms (docs/tms.md)
            assert set(rec) == {"t", "no_answer_set"}, f"line {n}: {rec}"
            continue
        diff = rec.get("diff", 1)
        assert diff in (1, -1), f"line {n}: diff must be 1 or -1: {rec}"
        assert ("t" in rec) != ("interval" in rec), f"line {n}: exactly one of t and interval: {rec}"
        key = (rec["pred"], tuple(rec.get("args", [])))
        ts = points(rec["interval"], span) if "interval" in rec else [rec["t"]]
        for t in ts:
            if span[0] <= t <= span[1]:
                k = key + (t,)
                v = total[k] = total.get(k, 0) + diff
                if running:
                    assert v in (0, 1), f"line {n}: {k} sums to {v} after {rec}"
    bad = {k: v for k, v in total.items() if v not in (0, 1)}
    assert not bad, f"points summing outside 0..1: {sorted(bad.items())[:5]}"
    return {k for k, v in total.items() if v == 1}


# A fluent's meaning on a clock grid, as maximal runs of grid points: (pred, args, first, last),
# last None = forever.  RTEC answers are not clipped to the input span and cover millions of
# points (ctm), so runs are swept from their ends instead of expanding points as meaning() does.
GridRun = tuple[str, tuple, int, "int | None"]


def grid_bounds(when: str, tick: int) -> tuple[int, int | None] | None:
    """The first and last grid point (multiples of ``tick``) of an interval, None if it has none."""
    m = _INTERVAL.match(when)
    assert m, f"bad interval {when!r}"
    lo = int(m.group(2)) + (1 if m.group(1) == "(" else 0)
    first = -(-lo // tick) * tick
    if m.group(3) == "inf":
        assert m.group(4) == ")", f"an infinite end is open: {when!r}"
        return first, None
    hi = int(m.group(3)) - (1 if m.group(4) == ")" else 0)
    last = hi // tick * tick
    return (first, last) if first <= last else None


def grid_meaning(lines: list[dict], tick: int) -> set[GridRun]:
    """The maximal runs of grid points whose diffs sum to 1 (a ``t`` line is the interval [t,t])."""
    deltas: dict[tuple[str, tuple], dict[int, int]] = {}
    for n, rec in enumerate(lines, 1):
        if rec.get("no_answer_set"):  # (LARS only; no atoms, as in meaning())
            continue
        diff = rec.get("diff", 1)
        assert diff in (1, -1), f"line {n}: diff must be 1 or -1: {rec}"
        assert ("t" in rec) != ("interval" in rec), f"line {n}: exactly one of t and interval: {rec}"
        bounds = grid_bounds(rec["interval"] if "interval" in rec else f"[{rec['t']},{rec['t']}]", tick)
        if bounds is None:
            continue
        steps = deltas.setdefault((rec["pred"], tuple(rec.get("args", []))), {})
        steps[bounds[0]] = steps.get(bounds[0], 0) + diff
        if bounds[1] is not None:
            steps[bounds[1] + tick] = steps.get(bounds[1] + tick, 0) - diff
    runs: set[GridRun] = set()
    for key, steps in deltas.items():
        level, start = 0, None
        for at in sorted(steps):
            level += steps[at]
            assert level in (0, 1), f"{key} sums to {level} from {at} on"
            if level == 1 and start is None:
                start = at
            elif level == 0 and start is not None:
                runs.add(key + (start, at - tick))
                start = None
        if start is not None:
            runs.add(key + (start, None))
    return runs


# Rational time (DatalogMTL): the meaning sampled at the points of a grid of ``step`` over
# [0, hi] — exact for answers whose interval ends lie on the grid or between its points.


def covers(line: dict, x: Fraction) -> bool:
    """Whether an answer line (``t`` or ``interval``, rational ends allowed) covers the point ``x``."""
    if "interval" not in line:
        return bool(Fraction(line["t"]) == x)
    text = line["interval"]
    lo, hi = text[1:-1].split(",")
    a = Fraction(lo)
    after = a < x or (text[0] == "[" and a == x)
    if hi.strip() == "inf":
        return after
    b = Fraction(hi)
    return after and (x < b or (text[-1] == "]" and x == b))


def sampled_meaning(lines: list[dict], hi: int, step: Fraction = Fraction(1, 4)) -> set[tuple[str, tuple, Fraction]]:
    """(pred, args, x) for every grid point x of [0, hi] where the diffs sum to 1; every sum
    must be 0 or 1.  (Each line visits the grid points between its ends only: the fleet tests'
    answer topics hold tens of thousands of lines.)"""
    top = int(hi / step)
    total: dict[tuple[str, tuple, Fraction], int] = {}
    for rec in lines:
        if "pred" not in rec:
            continue
        if "interval" in rec:
            lo, up = rec["interval"][1:-1].split(",")
            first = max(0, math.ceil(Fraction(lo) / step))
            last = top if up.strip() == "inf" else min(top, math.floor(Fraction(up) / step))
        else:
            at = math.ceil(Fraction(rec["t"]) / step)
            first, last = max(0, at), min(top, at)
        key = (rec["pred"], tuple(rec.get("args", [])))
        for q in range(first, last + 1):
            x = q * step
            if covers(rec, x):
                total[(*key, x)] = total.get((*key, x), 0) + rec.get("diff", 1)
    assert all(v in (0, 1) for v in total.values()), {k: v for k, v in total.items() if v not in (0, 1)}
    return {k for k, v in total.items() if v == 1}
