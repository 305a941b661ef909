"""Pure background predicates compiled to Python functions (``chronolog.dialects.rtec.pure``) and the
checks ``\\+ p(..., H)`` read from the answers of ``p(..., _)`` (``evaluator._free_answers``)
mean what the solver means: the same answers, in the same order, for every argument tried;
predicates of other shapes stay with the solver."""

from __future__ import annotations

import io
import random

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import chronolog.dialects.rtec.memo as memo_module
import chronolog.dialects.rtec.simple as simple_module
import chronolog.dialects.rtec.solve as solve_module
from chronolog.core.events import Event
from chronolog.dialects.rtec.evaluator import RtecEvaluator
from chronolog.dialects.rtec.parser import finish_program, parse_rtec
from chronolog.dialects.rtec.pure import compile_pure
from chronolog.dialects.rtec.terms import SolveError, Var
from chronolog.runtime.embedded import run_evaluator

BACKGROUND = """
cls(X1, Y1, X2, Y2, C) :- DX is X1-X2, DY is Y1-Y2, D is DX*DX+DY*DY, sq(D, C).
sq(D, near) :- D =< 4.
sq(D, mid) :- D > 4, D =< 16.
sq(D, mid) :- D =:= 9.
sq(D, far) :- D > 16.
twice(X, Y) :- Y is X * 2.
half(X, Y) :- Y is X / 2.
quot(X, Y) :- Y is X // 3.
rest(X, Y) :- Y is X mod 3.
neg(X, Y) :- Y is -X + abs(X - 5).
same(X, X, yes).
same(X, Y, no) :- X \\= Y.
order(A, B, lt) :- A @< B.
order(A, B, ge) :- A @>= B.
pick(A, B, R) :- A > B, R = A.
pick(A, B, R) :- A =< B, B = R.
chain(X, Z) :- twice(X, Y), twice(Y, Z).
filter(X, big) :- twice(X, 10).
thr(24). thr(25). thr(30).
limit(X, T) :- thr(T), X =< T.
const(_, 7).
"""

OTHERS = """
first(X, Y) :- X > 0, !, Y = pos.
first(_, nonpos).
nope(X, Y) :- \\+ X = 1, Y = 2.
comp(f(X), X).
loop(X, Y) :- loop(X, Y).
free(_, Y) :- Y = Y.
"""

ED = "initiatedAt(f(A)=true, T) :- happensAt(e(A), T).\n"

ATOMS = st.sampled_from(["a", "b", "zz", "near"])
VALUES = st.one_of(st.integers(-40, 40), ATOMS)


def _solver(text: str):
    program = finish_program(parse_rtec(ED + text, "bg.prolog"))
    return RtecEvaluator(program).solver


def _by_clauses(text: str, pred: tuple, args: tuple) -> list | str:
    """The solver's answers of ``pred(*args, _)`` by its clauses (or its error), nothing compiled."""
    solver = _solver(text)
    solver.compiled.update(dict.fromkeys(solver.clauses))  # None: no compiled function
    goal = (pred[0], *args, Var())
    try:
        return solver._answers(solver.clauses[pred], goal, 0)
    except SolveError as exc:
        return f"error: {exc}"


@settings(max_examples=300, deadline=None)
@given(st.sampled_from([("cls", 5), ("sq", 2), ("twice", 2), ("half", 2), ("quot", 2), ("rest", 2), ("neg", 2),
                        ("same", 3), ("order", 3), ("pick", 3), ("chain", 2), ("filter", 2), ("limit", 2),
                        ("const", 2)]),
       st.lists(VALUES, min_size=4, max_size=4))
def test_compiled_predicates_answer_as_the_solver(pred: tuple, values: list) -> None:
    solver = _solver(BACKGROUND)
    fn = compile_pure(solver, pred)
    assert fn is not None
    args = tuple(values[: pred[1] - 1])
    expected = _by_clauses(BACKGROUND, pred, args)
    try:
        got = fn(args)
    except Exception:  # noqa: BLE001 - the caller asks the solver then: an input the solver rejects too
        assert isinstance(expected, str)
        return
    assert got == expected
    assert [[type(x) for x in a] for a in got] == [[type(x) for x in a] for a in expected]


def test_hand_derived_answers() -> None:
    solver = _solver(BACKGROUND)
    assert compile_pure(solver, ("cls", 5))((0, 0, 3, 0)) == [("cls", 0, 0, 3, 0, "mid"), ("cls", 0, 0, 3, 0, "mid")]
    assert compile_pure(solver, ("half", 2))((7,)) == [("half", 7, 3.5)]
    assert compile_pure(solver, ("half", 2))((8,)) == [("half", 8, 4)]
    assert compile_pure(solver, ("limit", 2))((25,)) == [("limit", 25, 25), ("limit", 25, 30)]
    assert compile_pure(solver, ("same", 3))(("a", "a")) == [("same", "a", "a", "yes")]
    assert compile_pure(solver, ("filter", 2))((5,)) == [("filter", 5, "big")]
    with pytest.raises(Exception):  # noqa: B017 (the solver's own error class is private)
        compile_pure(solver, ("twice", 2))(("a",))  # not a number: the solver gives its error


@pytest.mark.parametrize("pred", [("first", 2), ("nope", 2), ("comp", 2), ("loop", 2), ("free", 2)])
def test_other_shapes_stay_with_the_solver(pred: tuple) -> None:
    assert compile_pure(_solver(OTHERS), pred) is None


def test_a_memoised_call_uses_the_compiled_function_and_falls_back_on_errors() -> None:
    solver = _solver(BACKGROUND)
    goal = ("twice", 4, Var())
    assert solver._compiled_answers(("twice", 2), goal) == [("twice", 4, 8)]
    assert solver._compiled_answers(("twice", 2), ("twice", "a", Var())) is None
    assert solver._compiled_answers(("twice", 2), ("twice", 4.0, Var())) is None  # floats: the solver's keys
    with pytest.raises(SolveError):
        list(solver.solve(("twice", "a", Var())))  # and the solver still reports it


# ---------------------------------------------------------------- in the evaluator

EVENTS_ED = """
points(pos(_,_,_)=true).
dynamicDomain(id(_P)).
grounding(pos(P,_,_)=_) :- id(P).
grounding(near(A,B,C)=true) :- id(A), id(B), A @< B, cls(C).
grounding(pair(A,C)=true) :- id(A), cls(C).

initiatedAt(near(A,B,C)=true, T) :-
    happensAt(start(pos(A,X1,Y1)=true), T), A @< B,
    holdsAt(pos(B,X2,Y2)=true, T), \\+ happensAt(end(pos(B,X2,Y2)=true), T),
    dist(X1, Y1, X2, Y2, C).
terminatedAt(near(A,B,C)=true, T) :-
    happensAt(start(pos(A,X1,Y1)=true), T), A @< B,
    holdsAt(pos(B,X2,Y2)=true, T),
    \\+ dist(X1, Y1, X2, Y2, C).
initiatedAt(pair(A,C)=true, T) :-
    happensAt(start(pos(A,X,Y)=true), T), dist(X, Y, 0, 0, C).
terminatedAt(pair(A,C)=true, T) :-
    happensAt(start(pos(A,X,Y)=true), T), \\+ dist(X, Y, 0, 0, C), \\+ far(X, C).

dist(X1, Y1, X2, Y2, C) :- D is (X1-X2)*(X1-X2) + (Y1-Y2)*(Y1-Y2), cls_of(D, C).
cls_of(D, 1) :- D =< 1.
cls_of(D, 2) :- D > 1, D =< 4.
cls_of(D, 2) :- D =:= 2.
far(X, 3) :- X > 1.
cls(1). cls(2). cls(3).
"""


def _stream(seed: int) -> list[Event]:
    rnd = random.Random(seed)
    out = []
    for t in range(0, 80):
        for who in ("a", "b", "c"):
            if rnd.random() < 0.7:
                out.append(Event(t, "pos", (who, rnd.randint(0, 2), rnd.choice([0, 1, 2, 1.0]))))
    return out


def _answers(events: list[Event], fast: bool, monkeypatch: pytest.MonkeyPatch, memo: bool = True) -> str:
    with monkeypatch.context() as m:
        if not fast:
            m.setattr(simple_module, "_negated_calls", lambda solver, checks: None)
            m.setattr(memo_module, "compile_pure", lambda solver, pred: None)
        if not memo:  # plain clause resolution: nothing memoised, nothing compiled
            m.setattr(solve_module, "pure_predicates", lambda clauses, impure: set())
        evaluator = RtecEvaluator(finish_program(parse_rtec(EVENTS_ED, "ed.prolog")), step=7)
        out = io.StringIO()
        run_evaluator(evaluator, events, out)
        if fast and memo:
            assert evaluator.solver.compiled.get(("dist", 5)) is not None
    return out.getvalue()


@pytest.mark.parametrize("seed", range(6))
def test_compiled_checks_answer_as_the_solver(seed: int, monkeypatch: pytest.MonkeyPatch) -> None:
    """Against the memoised solver and against plain resolution (a position with 1.0 and one
    with 1 are different instances: memo keys keep them apart)."""
    events = _stream(seed)
    got = _answers(events, True, monkeypatch)
    assert got and got == _answers(events, False, monkeypatch)
    assert got == _answers(events, False, monkeypatch, memo=False)
