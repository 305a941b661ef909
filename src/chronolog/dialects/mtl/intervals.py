"""Intervals over rational time, and the metric operators as transformations of them
(the set algebra itself — ``make``, ``coalesce``, ``intersect``... — is ``core/intervals.py``).

An ``Iv`` is ``(lo, lo_closed, hi, hi_closed)`` with ``Fraction`` ends or
``-inf``/``inf`` (open).  Sets of intervals are kept *coalesced*: sorted,
disjoint and non-adjacent, so every interval is maximal — exactly the
answer form of CONTRACT §3 (punctual facts at consecutive integers stay
apart: rational time has points between them).

The operators follow the semantics of DatalogMTL (seed 002, Table 1) with
an operator interval ρ = ⟨a, b⟩:
``diamond_minus`` (∃ t' with t − t' ∈ ρ) is the Minkowski sum I + ρ,
``box_minus`` (∀ t' with t − t' ∈ ρ) keeps t whose window t − ρ lies in one
maximal interval, and ``since`` / ``until`` follow Table 1's definitions;
the future operators mirror the past ones.
"""

from __future__ import annotations

from fractions import Fraction
from math import inf

from chronolog.core.intervals import (  # noqa: F401  (the algebra the operators build on, re-exported)
    Iv,
    Num,
    _touch,
    coalesce,
    contains,
    intersect,
    intersect_sets,
    make,
    merge_sorted,
    norm,
    point,
    subtract,
    text,
)


def fill_gaps(ivs: list[Iv], width: Num) -> list[Iv]:
    """The coalesced ``ivs`` with every gap shorter than ``width`` filled.

    A diamond whose operator interval is at least ``width`` long gives the
    same result on both (seed 002, section 6, the ``M#q`` facts): its window
    cannot fit inside such a gap, so a window meeting the gap also meets an
    interval on one side of it.  Dense input read only through such diamonds
    then costs a few intervals per window, however fine its timestamps."""
    if len(ivs) < 2:
        return ivs
    out: list[Iv] = [ivs[0]]
    for iv in ivs[1:]:
        last = out[-1]
        if iv[0] - last[2] < width:
            out[-1] = (last[0], last[1], iv[2], iv[3])
        else:
            out.append(iv)
    return out


# ---------------------------------------------------------------- operators
# ``rho`` is the operator's interval ⟨a, b⟩ as an Iv (a >= 0).


def diamond_minus(iv: Iv, rho: Iv) -> Iv | None:
    """{t | ∃ s ∈ iv, t − s ∈ ρ} = iv + ρ."""
    return make(iv[0] + rho[0], iv[1] and rho[1], iv[2] + rho[2], iv[3] and rho[3])


def diamond_plus(iv: Iv, rho: Iv) -> Iv | None:
    """{t | ∃ s ∈ iv, s − t ∈ ρ} = iv − ρ."""
    return make(iv[0] - rho[2], iv[1] and rho[3], iv[2] - rho[0], iv[3] and rho[1])


def box_minus(iv: Iv, rho: Iv) -> Iv | None:
    """{t | t − ρ ⊆ iv}: for a maximal interval iv of the operand."""
    return make(iv[0] + rho[2], iv[1] or not rho[3], iv[2] + rho[0], iv[3] or not rho[1])


def box_plus(iv: Iv, rho: Iv) -> Iv | None:
    """{t | t + ρ ⊆ iv}."""
    return make(iv[0] - rho[0], iv[1] or not rho[1], iv[2] - rho[2], iv[3] or not rho[3])


def _through(left: list[Iv], right: list[Iv], rho: Iv, past: bool) -> list[Iv]:
    """Since (``past``) or Until: t such that the right operand holds at some s
    with ±(t − s) ∈ ρ and the left one at every point strictly between s and t."""
    out: list[Iv] = []
    zero = contains(rho, Fraction(0))
    for k in right:
        if zero:
            out.append(k)  # s = t: nothing lies between them
        for j in left:
            # s in k and inside j's closure (the open stretch from s to t must lie in j)
            s = intersect(k, (j[0], True, j[2], True))
            reach = None if s is None else (diamond_minus(s, rho) if past else diamond_plus(s, rho))
            if reach is None:
                continue
            # t stays within j's closure on the far side
            got = intersect(reach, (-inf, False, j[2], True) if past else (j[0], True, inf, False))
            if got is not None:
                out.append(got)
    return coalesce(out)


def since(left: list[Iv], right: list[Iv], rho: Iv) -> list[Iv]:
    """{t | ∃ s: t − s ∈ ρ, s ∈ right, and every point of (s, t) in left} (coalesced inputs)."""
    return _through(left, right, rho, True)


def until(left: list[Iv], right: list[Iv], rho: Iv) -> list[Iv]:
    """{t | ∃ s: s − t ∈ ρ, s ∈ right, and every point of (t, s) in left}."""
    return _through(left, right, rho, False)
