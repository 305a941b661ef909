"""The TMS core (engine/tms.py) against clingo on random ground normal programs.

After every batch of rule additions and removals the TMS's labelling must be
one of the answer sets clingo enumerates for the current rules, and the TMS
must report "no answer set" exactly when clingo finds none.  Stability: a
change that leaves the previous answer set an answer set keeps it.
"""

from __future__ import annotations

import random

import clingo
from hypothesis import given, settings
from hypothesis import strategies as st

from chronolog.dialects.lars.engine.tms import Tms


def answer_sets(rules) -> list[frozenset[str]]:
    lines = []
    atoms = set()
    for head, pos, neg in rules:
        body = [p for p in pos] + [f"not {n}" for n in neg]
        atoms.update(pos)
        atoms.update(neg)
        if head is not None:
            atoms.add(head)
        text = (head or "") + (" :- " + ", ".join(body) if body else "") + "."
        lines.append(text if head is not None or body else ":- .")
    ctl = clingo.Control(["0", "--warn=none"])
    ctl.add("base", [], "\n".join(lines) + "\n")  # atoms without rules are false
    ctl.ground([("base", [])])
    out: list[frozenset[str]] = []
    ctl.solve(on_model=lambda m: out.append(frozenset(str(s) for s in m.symbols(atoms=True))))
    return out


def random_rule(rnd: random.Random, names: list[str]):
    head = None if rnd.random() < 0.08 else rnd.choice(names)
    pos = tuple(sorted(set(rnd.sample(names, rnd.choice([0, 0, 1, 1, 2])))))
    neg = tuple(sorted(set(rnd.sample(names, rnd.choice([0, 1, 1, 2])))))
    return head, pos, neg


@settings(max_examples=150, deadline=None)
@given(st.integers(0, 10**9), st.integers(3, 7))
def test_labels_are_answer_sets_under_changes(seed: int, n_atoms: int) -> None:
    rnd = random.Random(seed)
    names = [f"a{i}" for i in range(n_atoms)]
    tms = Tms(seed=seed)
    current: set = set()
    for _ in range(8):
        for _ in range(rnd.randint(1, 4)):
            if current and rnd.random() < 0.35:
                rule = rnd.choice(sorted(current, key=repr))
                current.discard(rule)
                tms.remove(*rule)
            else:
                rule = random_rule(rnd, names)
                if rule not in current:
                    current.add(rule)
                    tms.add(*rule)
        ok = tms.update()
        expected = answer_sets(current)
        if not expected:
            assert not ok
            continue
        assert ok, f"TMS found no answer set, clingo found {expected}"
        assert frozenset(tms.model()) in expected


def test_stability_keeps_the_previous_choice() -> None:
    # a :- not b.  b :- not a.  Whatever was chosen stays when an unrelated rule comes.
    for seed in range(20):
        tms = Tms(seed=seed)
        tms.add("a", (), ("b",))
        tms.add("b", (), ("a",))
        assert tms.update()
        first = tms.model()
        assert first in ({"a"}, {"b"})
        tms.add("c", (), ("d",))
        tms.add("e", tuple(first), ())
        assert tms.update()
        assert tms.model() == first | {"c", "e"}
        # a rule that still allows the old choice keeps it (Ticker's appendix A example)
        tms.add("a", (), ("c",))
        tms.remove("a", (), ("c",))
        assert tms.update()
        assert tms.model() >= first


def test_odd_loop_has_no_answer_set_then_recovers() -> None:
    tms = Tms()
    tms.add("p", (), ("p",))  # p :- not p.
    assert not tms.update()
    assert tms.model() == set()
    tms.add("p", (), ())  # p.  now {p} is the answer set
    assert tms.update()
    assert tms.model() == {"p"}


def test_constraint_forces_the_other_choice() -> None:
    tms = Tms(seed=1)
    tms.add("a", (), ("b",))
    tms.add("b", (), ("a",))
    assert tms.update()
    chosen = next(iter(tms.model()))
    tms.add(None, (chosen,), ())  # :- chosen.
    assert tms.update()
    assert tms.model() == {"ab".replace(chosen, "")}


def test_unfounded_positive_loop_is_out() -> None:
    tms = Tms()
    tms.add("a", ("b",), ())
    tms.add("b", ("a",), ())
    tms.add("c", (), ("a",))
    assert tms.update()
    assert tms.model() == {"c"}
    tms.add("a", (), ())
    assert tms.update()
    assert tms.model() == {"a", "b"}
    tms.remove("a", (), ())
    assert tms.update()
    assert tms.model() == {"c"}


def test_a_rule_added_twice_stays_until_removed_twice() -> None:
    tms = Tms()
    tms.add(None, ("a",), ())  # the same constraint from two sources
    tms.add(None, ("a",), ())
    tms.add("a", (), ())
    assert not tms.update()
    tms.remove(None, ("a",), ())
    assert not tms.update()
    tms.remove(None, ("a",), ())
    assert tms.update()
    assert tms.model() == {"a"}
