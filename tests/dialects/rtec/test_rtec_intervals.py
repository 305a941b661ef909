"""The interval lists' binary-search operations against point sets (the meaning of a list)."""

from __future__ import annotations

from hypothesis import given
from hypothesis import strategies as st

from chronolog.dialects.rtec import intervals as IV

TOP = 40
pairs = st.lists(st.tuples(st.integers(0, TOP), st.integers(1, 6)).map(lambda p: (p[0], p[0] + p[1])), max_size=8)
ends = st.one_of(st.integers(-2, TOP + 8), st.just(IV.INF), st.just(-IV.INF))


def points(ivs: list) -> set[int]:
    return {t for a, b in ivs for t in range(int(a), int(min(b, TOP + 20)))}


def well_formed(ivs: list) -> bool:
    return all(a < b for a, b in ivs) and all(ivs[i][1] < ivs[i + 1][0] for i in range(len(ivs) - 1))


@given(pairs, st.integers(0, TOP), st.integers(1, 8))
def test_insert_adds_exactly_the_interval(raw: list, a: int, n: int) -> None:
    x = IV.coalesce(raw)
    got = IV.insert(x, a, a + n)
    assert well_formed(got) and points(got) == points(x) | set(range(a, a + n))


@given(pairs, ends, ends)
def test_clip_keeps_the_points_between_the_ends(raw: list, lo: float, hi: float) -> None:
    x = IV.coalesce(raw)
    got = IV.clip(x, lo, hi)
    assert well_formed(got) and points(got) == {t for t in points(x) if lo <= t < hi}


@given(pairs, pairs, st.integers(-2, TOP + 8))
def test_splice_is_old_before_and_new_from(old_raw: list, new_raw: list, at: int) -> None:
    old, new = IV.coalesce(old_raw), IV.coalesce(new_raw)
    got = IV.splice(old, new, at)
    assert well_formed(got)
    assert points(got) == {t for t in points(old) if t < at} | {t for t in points(new) if t >= at}


@given(pairs, st.integers(-2, TOP + 8))
def test_contains_is_membership(raw: list, t: int) -> None:
    x = IV.coalesce(raw)
    assert IV.contains(x, t) == (t in points(x))


@given(pairs, pairs, st.booleans(), st.booleans())
def test_subtract_is_the_complement_intersected(x_raw: list, y_raw: list, open_x: bool, from_neg: bool) -> None:
    x, y = IV.coalesce(x_raw), IV.coalesce(y_raw)
    if open_x and x:
        x[-1] = (x[-1][0], IV.INF)
    if from_neg and y:
        y[0] = (-IV.INF, y[0][1])
    got = IV.subtract(x, y)
    assert got == IV.intersect(x, IV.complement(y, min(x[0][0], y[0][0]))) if x and y else got == x
