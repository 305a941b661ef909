"""Strata identified by content (``core.strata``): the same rules in another order or place
are the same stratum, a stratum reading a changed one changes, and the answer keys kept
leave out any key a changed stratum writes too."""

from __future__ import annotations

from chronolog.core.strata import Definitions, kept_answers, plan_lines, strata


def _defs(rules: dict[str, tuple[list[str], set[str]]], answers: dict[str, set[str]] | None = None) -> Definitions:
    names = {k: k for k in rules}
    return Definitions(names, {k: frozenset((answers or {}).get(k, {k})) for k in rules},
                       {k: tuple(t) for k, (t, _) in rules.items()}, {k: frozenset(r) for k, (_, r) in rules.items()})


OLD = {"q/1": (["q :- p [2]"], set()), "s/1": (["s :- q, r"], {"q/1"}), "u/1": (["u :- r"], set())}


def test_order_of_rules_does_not_matter_and_dependents_change():
    same = strata(_defs({"q/1": (["q :- p [2]"], set()), "u/1": (["u :- r"], set()),
                         "s/1": (["s :- q, r"], {"q/1"})}))
    assert {s.ident for s in same} == {s.ident for s in strata(_defs(OLD))}
    bottom = strata(_defs({**OLD, "q/1": (["q :- p [4]"], set())}))
    before = {s.preds: s.ident for s in strata(_defs(OLD))}
    after = {s.preds: s.ident for s in bottom}
    assert after[("u/1",)] == before[("u/1",)]
    assert after[("q/1",)] != before[("q/1",)] and after[("s/1",)] != before[("s/1",)]  # same text, reads q


def test_recursive_predicates_are_one_stratum():
    got = strata(_defs({"a/1": (["a :- b"], {"b/1"}), "b/1": (["b :- a", "b :- e"], {"a/1"})}))
    assert [s.preds for s in got] == [("a/1", "b/1")]


def test_kept_answers_and_the_plan():
    new = {**OLD, "s/1": (["s :- q, r, t"], {"q/1"}), "v/1": (["v :- r"], set())}
    del new["u/1"]
    before, after = strata(_defs(OLD)), strata(_defs(new))
    assert kept_answers(before, after) == {"q/1"}
    lines = "\n".join(plan_lines(before, after, "unchanged: kept"))
    assert "(q/1): unchanged: kept" in lines and "(s/1): changed" in lines and "(v/1): added" in lines
    assert "removed: u/1" in lines
    # a key written by a kept stratum and by a changed one is not kept (its lines are restated)
    shared = {"q/1": {"q/1", "x/2"}, "s/1": {"x/2"}}
    assert kept_answers(strata(_defs(OLD, shared)), strata(_defs(new, shared))) == {"q/1"}
