"""The clingo translation (chronolog.dialects.lars.engine.asp) against hand-derived answers,
and against the naive reference evaluator on random stratified programs."""

from __future__ import annotations

import sys
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings

sys.path.insert(0, str(Path(__file__).resolve().parents[2]))  # tests/: helpers

from irbuild import TW, W, at, atom, box, cmp, dia, neg, op, program, rule  # noqa: E402
from reference import answer_at, reference_answers  # noqa: E402
from strategies import programs, random_program, random_stream, streams  # noqa: E402

from chronolog.dialects.lars.engine.asp import solve_time_point, to_asp  # noqa: E402
from chronolog.dialects.lars.ir import Program  # noqa: E402


def solve(prog, events, t, t1=None):
    t1 = events[0][0] if t1 is None else t1
    return solve_time_point(prog, [e for e in events if e[0] <= t], t1, t)


def both(prog, events, t, t1=None):
    """solve_time_point, checked against the reference evaluator."""
    got = solve(prog, events, t, t1)
    t1 = events[0][0] if t1 is None else t1
    facts = [(p, tuple(a), T) for T, p, a in events if T <= t]
    assert (got or set()) == answer_at(prog, facts, t1, t)
    return got


# ---------------------------------------------------------------- diamond, now


def test_diamond_time_window():
    # a(X) :- p(X) [2].   stream p(1)@0, p(2)@3
    prog = program(rule(atom("a", "X"), dia(atom("p", "X"), W(2))))
    ev = [(0, "p", (1,)), (3, "p", (2,))]
    # t=2: window [0,2] holds p(1)@0
    assert both(prog, ev, 2) == {("a", (1,), 2)}
    # t=3: window [1,3] holds only p(2)@3
    assert both(prog, ev, 3) == {("a", (2,), 3)}
    # t=5: window [3,5] holds p(2)@3
    assert both(prog, ev, 5) == {("a", (2,), 5)}
    # t=6: window [4,6] is empty
    assert both(prog, ev, 6) == set()


def test_now_and_window_zero():
    # a(X) :- p(X).  b(X) :- p(X) [0].   stream p(1)@0, p(2)@1
    prog = program(rule(atom("a", "X"), atom("p", "X")), rule(atom("b", "X"), dia(atom("p", "X"), W(0))))
    ev = [(0, "p", (1,)), (1, "p", (2,))]
    assert both(prog, ev, 1) == {("a", (2,), 1), ("b", (2,), 1)}
    assert both(prog, ev, 2) == set()


# ---------------------------------------------------------------- box


def test_box_clipped_at_t1():
    # a :- p always [3].   stream p@1, p@2, p@4  (t1 = 1)
    prog = program(rule(atom("a"), box(atom("p"), W(3))))
    ev = [(1, "p", ()), (2, "p", ()), (4, "p", ())]
    # t=1: window [max(1,-2), 1] = [1,1]: p@1
    assert both(prog, ev, 1) == {("a", (), 1)}
    # t=2: window [1,2]: p@1, p@2
    assert both(prog, ev, 2) == {("a", (), 2)}
    # t=3: p@3 missing
    assert both(prog, ev, 3) == set()
    # t=4: window [1,4], p@3 missing
    assert both(prog, ev, 4) == set()


def test_box_with_variables():
    # b(X) :- q(X) always [1].   q(1)@1, q(2)@1, q(1)@2
    prog = program(rule(atom("b", "X"), box(atom("q", "X"), W(1))))
    ev = [(1, "q", (1,)), (1, "q", (2,)), (1, "q", (1,)), (2, "q", (1,))]
    # t=2: window [1,2]: q(1) at both points, q(2) only at 1
    assert both(prog, ev, 2) == {("b", (1,), 2)}
    # t=1: window [1,1] (clipped): both
    assert both(prog, ev, 1) == {("b", (1,), 1), ("b", (2,), 1)}


def test_box_over_program_fact():
    # f(1).  g(X) :- f(X) always [2].   stream: a time marker at 0, t=2
    prog = program(rule(atom("f", 1)), rule(atom("g", "X"), box(atom("f", "X"), W(2))))
    # f holds at every point of the timeline; f is not an output predicate
    assert solve_time_point(prog, [], 0, 2) == {("g", (1,), 2)}
    assert answer_at(prog, [], 0, 2) == {("g", (1,), 2)}


def test_positive_cycle_through_box_is_not_self_supporting():
    # b :- r.   b at T :- a, q at T [1].   a :- b always [1].
    # stream q@0, r@1; t=1.  b@1 holds; b@0 would need a, a needs box b over
    # [0,1], i.e. b@0: the minimal model is {b@1}.
    prog = program(
        rule(atom("b"), atom("r")),
        rule(atom("b"), atom("a"), at(atom("q"), "T", W(1)), at="T"),
        rule(atom("a"), box(atom("b"), W(1))),
    )
    ev = [(0, "q", ()), (1, "r", ())]
    assert both(prog, ev, 1) == {("b", (), 1)}


# ---------------------------------------------------------------- tuple windows


TUPLE_EV = [(0, "p", (1,)), (1, "q", (1,)), (2, "p", (2,)), (2, "p", (2,))]


@pytest.mark.parametrize(
    "n,expected",
    [
        (1, {("a", (2,), 2)}),  # p(2)@2
        (2, {("a", (2,), 2)}),  # the duplicate p(2)@2 fills both slots
        (3, {("a", (2,), 2)}),  # q(1)@1, p(2), p(2): q counts too
        (4, {("a", (1,), 2), ("a", (2,), 2)}),  # p(1)@0 reached
        (9, {("a", (1,), 2), ("a", (2,), 2)}),  # fewer facts than n
    ],
)
def test_tuple_window_diamond(n, expected):
    # a(X) :- p(X) [n #].   evaluated at t=2
    prog = program(rule(atom("a", "X"), dia(atom("p", "X"), TW(n))))
    assert both(prog, TUPLE_EV, 2) == expected


def test_tuple_window_counts_every_predicate():
    # a(X) :- p(X) [2 #] at t=1: last two facts p(1)@0, q(1)@1
    prog = program(rule(atom("a", "X"), dia(atom("p", "X"), TW(2))))
    assert both(prog, TUPLE_EV, 1) == {("a", (1,), 1)}


def test_tuple_window_at_later_empty_point():
    # a(X) :- p(X) [2 #] at t=5 (no facts after 2): last two facts p(2)@2 twice
    prog = program(rule(atom("a", "X"), dia(atom("p", "X"), TW(2))))
    assert both(prog, TUPLE_EV, 5) == {("a", (2,), 5)}


@pytest.mark.parametrize(
    "n,expected",
    [
        (2, {("c", (), 2)}),  # t' = 2 (both p(2)@2), range [2,2]
        (3, set()),  # t' = 1 (q(1)@1): p(2) missing at 1
        (9, set()),  # fewer facts: t' = t1 = 0
    ],
)
def test_tuple_window_box_timeline(n, expected):
    # c :- p(2) always [n #].  at t=2
    prog = program(rule(atom("c"), box(atom("p", 2), TW(n))))
    assert both(prog, TUPLE_EV, 2) == expected


def test_tuple_window_box_needs_selected_fact_now():
    # c :- p(2) always [2 #] at t=3: t' = 2, range [2,3], nothing selected at 3
    prog = program(rule(atom("c"), box(atom("p", 2), TW(2))))
    assert both(prog, TUPLE_EV, 3) == set()


def test_tuple_window_only_selected_facts_count_at_t_prime():
    # stream p(1)@0, p(2)@0, p(1)@1;  c :- p(2) always [2 #] at t=1:
    # selected p(2)@0, p(1)@1: t' = 0, p(2) missing at 1.
    # d(X) :- p(X) at 0 [2 #]: only p(2)@0 is selected at time 0.
    ev = [(0, "p", (1,)), (0, "p", (2,)), (1, "p", (1,))]
    prog = program(
        rule(atom("c"), box(atom("p", 2), TW(2))),
        rule(atom("d", "X"), at(atom("p", "X"), 0, TW(2))),
    )
    assert both(prog, ev, 1) == {("d", (2,), 1)}


def test_tuple_window_at_binds_time():
    # b(X, T) :- p(X) at T [3 #].  at t=2: selected q(1)@1, p(2)@2, p(2)@2
    prog = program(rule(atom("b", "X", "T"), at(atom("p", "X"), "T", TW(3))))
    assert both(prog, TUPLE_EV, 2) == {("b", (2, 2), 2)}


# ---------------------------------------------------------------- @


def test_at_head_and_window_over_intensional():
    # a(X) at T :- p(X) at T [2].   b :- a(2) [1].   stream p(1)@0, p(2)@2
    prog = program(
        rule(atom("a", "X"), at(atom("p", "X"), "T", W(2)), at="T"),
        rule(atom("b"), dia(atom("a", 2), W(1))),
    )
    ev = [(0, "p", (1,)), (2, "p", (2,))]
    # t=3: window [1,3] -> p(2)@2 -> a(2)@2;  b: a(2) in [2,3] -> b@3
    assert both(prog, ev, 3) == {("a", (2,), 2), ("b", (), 3)}
    # t=2: window [0,2] -> a(1)@0, a(2)@2; b@2
    assert both(prog, ev, 2) == {("a", (1,), 0), ("a", (2,), 2), ("b", (), 2)}


def test_intensional_atoms_are_not_carried_over():
    # a(X) :- p(X).   c :- a(2) [1].   stream p(2)@2, marker at 3
    prog = program(rule(atom("a", "X"), atom("p", "X")), rule(atom("c"), dia(atom("a", 2), W(1))))
    ev = [(2, "p", (2,))]
    assert both(prog, ev, 2) == {("a", (2,), 2), ("c", (), 2)}
    # at t=3 a(2)@2 is not derived again (p(2) is not now), so no c
    assert both(prog, ev, 3, t1=2) == set()


def test_windowless_at():
    # a(T) :- p(1) at T.   b :- p(1) at 0.   c :- p(1) at 4.
    prog = program(
        rule(atom("a", "T"), at(atom("p", 1), "T")),
        rule(atom("b"), at(atom("p", 1), 0)),
        rule(atom("c"), at(atom("p", 1), 4)),
    )
    ev = [(0, "p", (1,)), (2, "p", (1,)), (3, "q", (1,))]
    # t=5: the whole timeline [0,5]
    assert both(prog, ev, 5) == {("a", (0,), 5), ("a", (2,), 5), ("b", (), 5)}


def test_at_with_constant_time_in_window():
    # b :- p(1) at 0 [2].  at t=2 window [0,2] holds 0; at t=3 it does not
    prog = program(rule(atom("b"), at(atom("p", 1), 0, W(2))))
    ev = [(0, "p", (1,))]
    assert both(prog, ev, 2) == {("b", (), 2)}
    assert both(prog, ev, 3) == set()


def test_at_head_off_the_timeline_has_no_answer_set():
    # a at T :- p(T) [10].   stream p(5)@0
    prog = program(rule(atom("a"), dia(atom("p", "T"), W(10)), at="T"))
    ev = [(0, "p", (5,))]
    assert solve(prog, ev, 3) is None  # T = 5 > 3
    assert both(prog, ev, 5) == {("a", (), 5)}
    assert solve(prog, [(0, "p", (-1,))], 3) is None  # before t1
    assert solve(prog, [(0, "p", ("x",))], 3) is None  # not a time point
    # a program @-fact off the timeline
    assert solve_time_point(program(rule(atom("f"), at=3), rule(atom("g"), atom("p"))), [], 0, 2) is None
    assert solve_time_point(program(rule(atom("f"), at=1), rule(atom("g"), atom("f"))), [], 0, 2) == set()
    assert solve_time_point(program(rule(atom("f"), at=2), rule(atom("g"), atom("f"))), [], 0, 2) == {("g", (), 2)}


def test_reference_has_no_answer_either():
    prog = program(rule(atom("a"), dia(atom("p", "T"), W(10)), at="T"))
    assert reference_answers(prog, [(0, "p", (5,)), (7, "p", (6,))]) == {
        # t=0..4: T=5 lies after t, no answer set; t=5, 6: a@5;
        # t=7: p(5)@0 and p(6)@7 both in [0,7]: a@5, a@6
        ("a", (), 5),
        ("a", (), 6),
    }


# ---------------------------------------------------------------- negation


def test_negation():
    # a(X) :- p(X), not q(X) [1].   q(1)@0, p(1)@1, p(2)@1
    prog = program(rule(atom("a", "X"), atom("p", "X"), neg(dia(atom("q", "X"), W(1)))))
    ev = [(0, "q", (1,)), (1, "p", (1,)), (1, "p", (2,))]
    assert both(prog, ev, 1) == {("a", (2,), 1)}


def test_negated_box_and_anonymous():
    # a(X) :- p(X), not p(X) always [1].   n :- p(_) [0], not q(_).
    prog = program(
        rule(atom("a", "X"), atom("p", "X"), neg(box(atom("p", "X"), W(1)))),
        rule(atom("n"), dia(atom("p", "_"), W(0)), neg(dia(atom("q", "_"), W(0)))),
    )
    ev = [(0, "p", (1,)), (1, "p", (1,)), (1, "p", (2,))]
    # t=1: p(1) at 0 and 1 (box holds), p(2) only at 1
    assert both(prog, ev, 1) == {("a", (2,), 1), ("n", (), 1)}
    assert both(prog, ev + [(2, "p", (3,)), (2, "q", (7,))], 2) == {("a", (3,), 2)}


def test_non_stratified_gives_exactly_one_answer_set():
    # a :- not b.   b :- not a.
    prog = program(rule(atom("a"), neg(dia(atom("b"), W(0)))), rule(atom("b"), neg(dia(atom("a"), W(0)))))
    got = solve_time_point(prog, [], 0, 0)
    assert got in ({("a", (), 0)}, {("b", (), 0)})
    assert all(solve_time_point(prog, [], 0, 0) == got for _ in range(5))  # deterministic


def test_odd_loop_has_no_answer_set():
    # a :- not a.
    prog = program(rule(atom("a"), neg(dia(atom("a"), W(0)))))
    assert solve_time_point(prog, [], 0, 0) is None


# ---------------------------------------------------------------- comparisons


def test_comparisons():
    ev = [(0, "p", (1,)), (0, "p", ("a",)), (0, "p", (-7,)), (0, "p", ("1",))]
    prog = program(
        rule(atom("lt", "X"), atom("p", "X"), cmp("X", "<", 3)),  # ints only: 1, -7
        rule(atom("gt", "X"), atom("p", "X"), cmp("X", ">", 0)),  # 1 ("a" is no int)
        rule(atom("ne", "X"), atom("p", "X"), cmp("X", "!=", 1)),  # "a", -7, "1"
        rule(atom("eq", "X"), atom("p", "X"), cmp("X", "=", "1")),  # the string "1"
        rule(atom("dbl", "Y"), atom("p", "X"), cmp("Y", "=", op("X", "*", 2))),  # 2, -14
        rule(atom("half", "Y"), atom("p", "X"), cmp(op("X", "/", 2), "=", "Y")),  # 0, -3 (toward 0)
        rule(atom("md", "Y"), atom("p", "X"), cmp("Y", "=", op("X", "mod", 2))),  # 1, -1
        rule(atom("z", "X"), atom("p", "X"), cmp(op("X", "/", 0), "!=", 5)),  # division by 0: none
        rule(atom("s"), atom("p", "X"), atom("p", "Y"), cmp("X", "<", "Y"), cmp("Y", "=", "a")),  # none
    )
    assert both(prog, ev, 0) == {
        ("lt", (1,), 0), ("lt", (-7,), 0),
        ("gt", (1,), 0),
        ("ne", ("a",), 0), ("ne", (-7,), 0), ("ne", ("1",), 0),
        ("eq", ("1",), 0),
        ("dbl", (2,), 0), ("dbl", (-14,), 0),
        ("half", (0,), 0), ("half", (-3,), 0),
        ("md", (1,), 0), ("md", (-1,), 0),
    }  # fmt: skip


# ---------------------------------------------------------------- encoding details


def test_odd_names_and_strings_round_trip():
    weird = 'q"uo\\te\nnl'
    prog = program(rule(atom("out-put", "X", "Y"), atom("my pred", "X", "Y")), rule(atom("not", "X"), atom("p", "X")))
    ev = [(0, "my pred", (weird, "ü")), (0, "p", ("x",))]
    assert both(prog, ev, 0) == {("out-put", (weird, "ü"), 0), ("not", ("x",), 0)}


def test_output_predicates_only():
    # f(1).  g(X) :- f(X).   f is a fact-only predicate, not an output
    prog = program(rule(atom("f", 1)), rule(atom("g", "X"), atom("f", "X")), rule(atom("g", 5)))
    # g(5) is a program fact of an output predicate: it holds at every point
    # of the (visible part of the) timeline
    assert solve_time_point(prog, [], 0, 2) >= {("g", (1,), 2), ("g", (5,), 2)}
    assert {a for a in solve_time_point(prog, [], 0, 2) if a[2] == 2} == {("g", (1,), 2), ("g", (5,), 2)}


def test_suffix_of_events_is_enough():
    prog = program(rule(atom("a", "X"), dia(atom("p", "X"), W(1))), rule(atom("b", "X"), dia(atom("p", "X"), TW(2))))
    ev = [(0, "p", (1,)), (1, "p", (2,)), (3, "p", (3,)), (4, "p", (4,))]
    assert solve_time_point(prog, ev, 0, 4) == solve_time_point(prog, ev[-2:], 0, 4)


def test_to_asp_is_readable_and_deterministic():
    prog = program(rule(atom("a", "X"), box(atom("p", "X"), TW(2)), neg(at(atom("q", "X"), 0, W(1))), cmp("X", "<", 2)))
    ev = [(0, "p", (1,)), (1, "q", (1,)), (1, "p", (1,))]
    text = to_asp(prog, ev, 0, 1)
    assert text == to_asp(prog, ev, 0, 1)
    assert "h_p(1,0)." in text and "w2_h_p(1,1)." in text and "#show h_a(X0,1)" in text
    # box over the tuple window: t' = 1, p(1)@1 selected; q(1) at 0 is not there
    assert solve_time_point(prog, ev, 0, 1) == {("a", (1,), 1)}


def test_unsafe_rule_is_rejected():
    # a(X) :- p(X), not q(X) at T [1].  (T unbound)
    prog = program(rule(atom("a", "X"), atom("p", "X"), neg(at(atom("q", "X"), "T", W(1)))))
    with pytest.raises(ValueError, match="unsafe"):
        solve_time_point(prog, [(0, "p", (1,))], 0, 0)


def test_unsafe_fact_is_rejected():
    with pytest.raises(ValueError):
        solve_time_point(program(rule(atom("f", "X"))), [], 0, 0)


def test_big_integers_are_rejected():
    with pytest.raises(ValueError):
        solve_time_point(program(rule(atom("a", "X"), atom("p", "X"))), [(0, "p", (2**40,))], 0, 0)


# ---------------------------------------------------------------- cross-check


def _union_of_solves(prog: Program, events) -> set:
    times = [e.t for e in events]
    facts = [(e.t, e.pred, e.args) for e in events if e.is_fact]
    t1 = min(times)
    out: set = set()
    for t in range(t1, max(times) + 1):
        got = solve_time_point(prog, [f for f in facts if f[0] <= t], t1, t)
        if got is not None:
            out |= got
    return out


@settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(prog=programs(stratified=True), events=streams())
def test_cross_check_with_reference(prog, events):
    assert _union_of_solves(prog, events) == reference_answers(prog, events), str(prog)


@pytest.mark.parametrize("seed", range(40))
def test_cross_check_seeded(seed):
    prog, events = random_program(seed, stratified=True), random_stream(seed)
    assert _union_of_solves(prog, events) == reference_answers(prog, events), str(prog)


@settings(max_examples=40, deadline=None)
@given(prog=programs(stratified=False), events=streams())
def test_non_stratified_programs_solve(prog, events):
    _union_of_solves(prog, events)  # no crash, no clingo error
