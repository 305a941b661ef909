"""Intervals over rational time and their set algebra: what DatalogMTL's operators build on
(``dialects/mtl/intervals.py``) and what the backfill compares answers with.

An ``Iv`` is ``(lo, lo_closed, hi, hi_closed)`` with ``Fraction`` (or ``int``) ends or
``-inf``/``inf`` (open).  Sets of intervals are kept *coalesced*: sorted, disjoint and
non-adjacent, so every interval is maximal — exactly the answer form of CONTRACT §3
(punctual facts at consecutive integers stay apart: rational time has points between them).
"""

from __future__ import annotations

import bisect
from collections.abc import Iterable
from fractions import Fraction
from math import inf
from typing import Any

Num = int | Fraction | float  # int for integral times, float only for ±inf
Iv = tuple[Num, bool, Num, bool]
Fact = tuple[str, tuple]  # an answer's atom: (pred, args)


def norm(x: Num) -> Num:
    """Integral rationals as ``int``: most streams have integer times, and
    comparing ints is many times cheaper than comparing Fractions."""
    if type(x) is Fraction and x.denominator == 1:
        return x.numerator
    return x


def make(lo: Num, lo_closed: bool, hi: Num, hi_closed: bool) -> Iv | None:
    """The interval, normalised (infinite ends open, integral ends ints), or None if empty."""
    if type(lo) is Fraction and lo.denominator == 1:
        lo = lo.numerator
    if type(hi) is Fraction and hi.denominator == 1:
        hi = hi.numerator
    if lo == -inf:
        lo_closed = False
    if hi == inf:
        hi_closed = False
    if lo > hi or (lo == hi and not (lo_closed and hi_closed)):
        return None
    return (lo, lo_closed, hi, hi_closed)


def point(t: Num) -> Iv:
    return (t, True, t, True)


def contains(iv: Iv, t: Num) -> bool:
    lo, lc, hi, hc = iv
    return (lo < t or (lc and lo == t)) and (t < hi or (hc and t == hi))


def _touch(a: Iv, b: Iv) -> bool:
    """``b`` (starting no earlier than ``a``) overlaps or adjoins ``a`` so that their union is one interval."""
    return b[0] < a[2] or (b[0] == a[2] and (a[3] or b[1]))


def coalesce(ivs: Iterable[Iv]) -> list[Iv]:
    """Maximal disjoint intervals covering the same points, sorted."""
    items = sorted(ivs, key=lambda iv: (iv[0], not iv[1]))
    return merge_sorted(items) if items else items


def merge_sorted(ivs: list[Iv]) -> list[Iv]:
    """``coalesce`` of intervals already sorted by their left ends."""
    out: list[Iv] = [ivs[0]]
    for iv in ivs[1:]:
        last = out[-1]
        if _touch(last, iv):
            if iv[2] > last[2] or (iv[2] == last[2] and iv[3]):
                out[-1] = (last[0], last[1], iv[2], iv[3])
        else:
            out.append(iv)
    return out


def intersect(a: Iv, b: Iv) -> Iv | None:
    if a[0] > b[0] or (a[0] == b[0] and not a[1]):
        lo, lc = a[0], a[1]
    else:
        lo, lc = b[0], b[1]
    if a[2] < b[2] or (a[2] == b[2] and not a[3]):
        hi, hc = a[2], a[3]
    else:
        hi, hc = b[2], b[3]
    return make(lo, lc, hi, hc)


def intersect_sets(xs: list[Iv], ys: list[Iv]) -> list[Iv]:
    """Intersection of two coalesced sets (a merge, linear in their sizes).

    ``intersect`` written out in the loop: this is the materialiser's inner
    loop, and the ends of normalised intervals need no normalising again."""
    out: list[Iv] = []
    i = j = 0
    nx, ny = len(xs), len(ys)
    while i < nx and j < ny:
        a, b = xs[i], ys[j]
        if a[0] > b[0] or (a[0] == b[0] and not a[1]):
            lo, lc = a[0], a[1]
        else:
            lo, lc = b[0], b[1]
        if a[2] < b[2] or (a[2] == b[2] and not a[3]):  # advance the one that ends first
            hi, hc = a[2], a[3]
            i += 1
        else:
            hi, hc = b[2], b[3]
            j += 1
        if lo < hi or (lo == hi and lc and hc):
            out.append((lo, lc, hi, hc))
    return out


def subtract(xs: list[Iv], ys: list[Iv]) -> list[Iv]:
    """Points of coalesced ``xs`` not in coalesced ``ys`` (a merge, linear in their sizes)."""
    out: list[Iv] = []
    j = 0
    for x in xs:
        # skip the ys that end before x starts
        while j < len(ys) and (ys[j][2] < x[0] or (ys[j][2] == x[0] and not (ys[j][3] and x[1]))):
            j += 1
        cur: Iv | None = x
        k = j
        while cur is not None and k < len(ys) and (ys[k][0] < cur[2] or (ys[k][0] == cur[2] and ys[k][1] and cur[3])):
            y = ys[k]
            left = make(cur[0], cur[1], y[0], not y[1])
            if left is not None:
                out.append(left)
            cur = make(y[2], not y[3], cur[2], cur[3])
            k += 1
        if cur is not None:
            out.append(cur)
    return out


def _num_text(x: Num) -> str:
    kind = type(x)
    if kind is int:  # (the common ends first: a state export writes every interval it keeps)
        return str(x)
    if kind is not Fraction:
        if x == inf:
            return "inf"
        if x == -inf:
            return "-inf"
        x = Fraction(x)
    return str(x.numerator) if x.denominator == 1 else f"{x.numerator}/{x.denominator}"  # type: ignore[union-attr]


def text(iv: Iv) -> str:
    """MeTeoR/CONTRACT notation: ``[3,7/2)``, ``[5,inf)``."""
    return f"{'[' if iv[1] else '('}{_num_text(iv[0])},{_num_text(iv[2])}{']' if iv[3] else ')'}"


def bound(text: str) -> Num:
    """One end as ``text`` writes it: ``3``, ``7/2``, ``inf``, ``-inf``."""
    if text in ("inf", "-inf"):
        return inf if text == "inf" else -inf
    if text.isascii() and text.isdigit():  # (an integer end: most lines, and all of LARS's and RTEC's; an upgrade reads thousands)
        return int(text)
    return norm(Fraction(text))


def parse(text: str) -> Iv:
    """An interval as answer lines write it (``[3,7)``, ``(2,7/2]``, ``[5,inf)``); ValueError
    if it is not one.  (Program text has its own reader with positions for errors.)"""
    if len(text) < 5 or text[0] not in "[(" or text[-1] not in "])" or text.count(",") != 1:
        raise ValueError(f"{text!r} is not an interval such as [3,7)")
    lo, hi = text[1:-1].split(",")
    try:
        return (bound(lo.strip()), text[0] == "[", bound(hi.strip()), text[-1] == "]")
    except ZeroDivisionError:
        raise ValueError(f"{text!r} is not an interval such as [3,7)") from None


def of_span(span: Any) -> Iv:
    """An input event's ``span`` as an interval: an ``Iv`` already (DatalogMTL), or RTEC's
    ``(a, b)`` pair (``a <= t < b``)."""
    return (span[0], True, span[1], False) if len(span) == 2 else (span[0], span[1], span[2], span[3])


def of_line(line: dict) -> Iv:
    """The interval an answer line (CONTRACT §3) is about: its ``t`` as a point or its ``interval``."""
    return parse(line["interval"]) if "interval" in line else point(norm(Fraction(line["t"])))


def corrections(truth: list[Iv], published: Iterable[tuple[Iv, int]]) -> tuple[list[tuple[Iv, int]], int]:
    """The -1/+1 intervals that turn the sum of the ``published`` changes into exactly the
    points of ``truth``, and the number of stretches of time where the published changes
    summed to neither 0 nor 1.

    Time is cut at the intervals' ends into *cells* (each end point, and the open gap between
    two) on which every interval is all or nothing, so that summing is counting per cell."""
    published = list(published)
    ends = sorted({e for iv, _ in published for e in (iv[0], iv[2])} | {e for iv in truth for e in (iv[0], iv[2])}
                  - {inf, -inf})
    n = 2 * len(ends) + 1  # cell 2k+1 is ends[k]; cell 2k is the gap before it

    def cells(iv: Iv) -> tuple[int, int]:
        first = 0 if iv[0] == -inf else 2 * bisect.bisect_left(ends, iv[0]) + (1 if iv[1] else 2)
        last = n - 1 if iv[2] == inf else 2 * bisect.bisect_left(ends, iv[2]) + (1 if iv[3] else 0)
        return first, last

    delta = [0] * (n + 1)
    for iv, diff in published:
        a, b = cells(iv)
        delta[a] -= diff
        delta[b + 1] += diff
    bad = 0
    total = 0
    for a in range(n):
        total += delta[a]
        if total not in (0, -1) and (a == 0 or delta[a - 1] in (0, -1)):
            bad += 1  # a new stretch of time where the published sum is off
        delta[a] = total
    for iv in truth:
        a, b = cells(iv)
        for c in range(a, b + 1):
            delta[c] += 1
    out: list[tuple[Iv, int]] = []
    c = 0
    while c < n:
        v = delta[c]
        d = c
        while d + 1 < n and delta[d + 1] == v:
            d += 1
        if v:
            lo = -inf if c == 0 else ends[(c - 1) // 2]
            hi = inf if d == n - 1 else ends[d // 2]
            cell = make(lo, c % 2 == 1, hi, d % 2 == 1)
            assert cell is not None
            out.extend([(cell, 1 if v > 0 else -1)] * abs(v))
        c = d + 1
    return out, bad


def meaning(changes: Iterable[tuple[Iv, int]]) -> list[Iv]:
    """The points where the changes of one atom sum to 1 (coalesced), in whatever order they come."""
    fixes, _ = corrections([], changes)
    return coalesce(iv for iv, d in fixes if d < 0)  # what must be withdrawn is what holds


def answers(lines: Iterable[dict[str, Any]]) -> dict[Fact, list[Iv]]:
    """What answer lines (CONTRACT §3) mean: per atom, the maximal intervals where its lines'
    ``diff``s sum to 1 (lines without an atom, such as LARS's ``no_answer_set``, left out)."""
    changes: dict[Fact, list[tuple[Iv, int]]] = {}
    for line in lines:
        if "pred" in line:
            changes.setdefault((line["pred"], tuple(line.get("args", ()))), []).append(
                (of_line(line), line.get("diff", 1)))
    return {atom: meaning(got) for atom, got in changes.items()}
