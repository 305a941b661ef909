"""Grouped stratum content (engine/content.py) against plain sets of atoms."""

from hypothesis import given
from hypothesis import strategies as st

from chronolog.dialects.lars.engine.content import NOTHING, atoms, changed, difference, grouped, merged

keys = st.sampled_from([("p", 1), ("q", 1), ("r", 2), ("#answers", ("p", 1))])
atom = keys.flatmap(lambda k: st.tuples(st.just(k), st.tuples(*[st.integers(0, 3)] * (2 if k == ("r", 2) else 1))))
flat = st.frozensets(atom, max_size=12)


@given(flat)
def test_grouping_keeps_every_atom_and_no_empty_group(atoms_in):
    content = grouped(atoms_in)
    assert frozenset(atoms(content)) == atoms_in
    assert all(content.values())


@given(flat, flat, flat)
def test_a_change_is_removal_then_addition(base, add, drop):
    got = changed(grouped(base), grouped(add), grouped(drop))
    assert got == grouped(base - drop | add)
    assert all(got.values())


@given(flat, flat)
def test_the_difference_leads_from_base_to_new(base, new):
    add, drop, content = difference(grouped(new), grouped(base))
    assert frozenset(atoms(add)) == new - base and frozenset(atoms(drop)) == base - new
    assert content == grouped(new)
    assert changed(grouped(base), add, drop) == grouped(new)


@given(flat, flat)
def test_equal_groups_are_shared_with_the_base(base, extra):
    old = grouped(base)
    new = dict(old)
    new.update(grouped(extra))  # some groups replaced, the others the same
    _, _, content = difference(new, old)
    for key, rows in content.items():
        if key in old and old[key] == rows:
            assert rows is old[key]
    if new == old:
        assert content is old


@given(st.lists(flat, max_size=4))
def test_merging_is_the_union(parts):
    got = merged(grouped(p) for p in parts)
    assert got == grouped(frozenset().union(*parts))
    assert merged([]) is NOTHING
