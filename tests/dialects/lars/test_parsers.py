"""The lars and laser parsers: constructs, error locations, and properties."""

from __future__ import annotations

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from strategies import programs

from chronolog.core.errors import ProgramError
from chronolog.dialects.lars.ir import Atom, BinOp, Compare, Const, ExtAtom, Head, Op, TimeWindow, TupleWindow, Var
from chronolog.dialects.lars.laser import parse_laser
from chronolog.dialects.lars.parser import parse_lars
from chronolog.dialects.load import dialect_for, load_program

X, Y, T, C = Var("X"), Var("Y"), Var("T"), Var("C")


def body(text: str):
    return parse_lars(text).rules[0].body


def test_extended_atoms():
    assert body("h :- p(X).") == (ExtAtom(Atom("p", (X,))),)
    assert body("h :- p(X) [5].") == (ExtAtom(Atom("p", (X,)), Op.DIAMOND, TimeWindow(5)),)
    assert body("h :- p(X) in [5].") == body("h :- p(X) [5].")
    assert body("h :- p always [2 min].") == (ExtAtom(Atom("p"), Op.BOX, TimeWindow(120)),)
    assert body("h :- p [t 7].") == body("h :- p [7].")
    assert body("h :- p always in [3 #].") == (ExtAtom(Atom("p"), Op.BOX, TupleWindow(3)),)
    assert body("h :- p(X) at T [3 #].") == (ExtAtom(Atom("p", (X,)), Op.AT, TupleWindow(3), T),)
    assert body("h :- p(X) at 4.") == (ExtAtom(Atom("p", (X,)), Op.AT, None, Const(4)),)
    assert body("h :- not p(X) [2], q(X).")[0] == ExtAtom(Atom("p", (X,)), Op.DIAMOND, TimeWindow(2), negated=True)
    # Ticker's postfix negation
    assert body("h :- q(X), p(X) not in [2].") == body("h :- q(X), not p(X) [2].")
    assert body("h :- q(X), p(X) always not [2].") == body("h :- q(X), not p(X) always [2].")


def test_heads_facts_terms():
    rules = parse_lars('third at T :- car(C), rec(C) at T in [3 #]. car(1). car(-2). n("a b", x).').rules
    assert rules[0].head == Head(Atom("third"), T)
    assert [r.head.atom for r in rules[1:]] == [
        Atom("car", (Const(1),)), Atom("car", (Const(-2),)), Atom("n", (Const("a b"), Const("x")))
    ]
    assert all(r.is_fact for r in rules[1:])


def test_comparisons_and_builtins():
    assert body("h :- p(X), X + 2 * 3 >= 10.")[1] == Compare(">=", BinOp("+", X, BinOp("*", Const(2), Const(3))), Const(10))
    assert body("h :- p(X), leq(18, X).")[1] == Compare("<=", Const(18), X)
    assert body("h :- p(X), incr(X, Y).")[1] == Compare("=", Y, BinOp("+", X, Const(1)))
    assert body("h :- p(X), modulo(X, 2, Y).")[1] == Compare("=", Y, BinOp("mod", X, Const(2)))
    assert body("h :- p(X), ltleq(1, X, 3).")[1:] == (Compare("<", Const(1), X), Compare("<=", X, Const(3)))


TICKER_STYLE = """
% Ticker's cache-hops style (written for this test)
need(I,N) :- item(I), node(N), req(I,N) in [300 sec].
conn(N,M) :- edge(N,M), down(M) not in [300 sec].
getFrom(I,N,M) :- source(I,N,M), not n_getFrom(I,N,M).
source(I,N,M) :- need(I,N), avail(I,M), reach(N,M), N != M.
high at T :- value(V), alpha(V) at T in [300 #], leq(18,V).
lfu :- high always in [300].
item(i1). node(1). edge(1,2).
"""


def test_ticker_style_program():
    rules = parse_lars(TICKER_STYLE).rules
    assert len(rules) == 9
    assert rules[1].body[1] == ExtAtom(Atom("down", (Var("M"),)), Op.DIAMOND, TimeWindow(300), negated=True)


def test_comments():
    text = "% line\n/* block\n over lines */ a :- b. // tail\n%* ticker\nblock *% c."
    assert [str(r) for r in parse_lars(text).rules] == ["a :- b.", "c."]


@pytest.mark.parametrize(
    "text,where,what",
    [
        ("a :- b [3.\n", "1:10", "expected ']'"),
        ("a :- b.\nc :- d always.\n", "2:14", "window"),
        ("a :- b [2 msec].", "1:11", "finer than one time point"),
        ("a :- b [0 #].", "1:9", "at least 1 tuple"),
        ("a :- b\n", "2:1", "expected '.'"),
        ("a :- b /* open", "1:8", "unterminated comment"),
        ("A :- b.", "1:1", "expected a predicate"),
        ("a :- b, X ! 3.", "1:11", "unexpected character"),
    ],
)
def test_error_locations(text, where, what):
    with pytest.raises(ProgramError) as err:
        parse_lars(text, "prog.lars")
    assert str(err.value).startswith(f"prog.lars:{where}: error:")
    assert what in str(err.value)


def test_laser_syntax():
    laser = parse_laser(
        "@(T, steam(V)) :- time_win(20, 0, 1, @(T, (temp(V)))) and COMP(>=, V, 100)\n"
        "\n"
        "alarm :- time_win(20, 0, 1, box(isSteam))\n"
        "freeze :- not(alarm) and not(normal)\n"
        "r(X) :- tuple_win(3, diamond(p(X)))\n"
    )
    native = parse_lars(
        "steam(V) at T :- temp(V) at T [20], V >= 100.\nalarm :- isSteam always [20].\n"
        "freeze :- not alarm, not normal.\nr(X) :- p(X) [3 #].\n"
    )
    assert laser.rules == native.rules


def test_laser_errors_have_locations():
    with pytest.raises(ProgramError) as err:
        parse_laser("a :- b\nq :- time_win(3, 1, 1, diamond(p))\n", "x.laser")
    assert str(err.value).startswith("x.laser:2:18: error:") and "not supported" in str(err.value)


def test_dialect_by_extension_and_load(tmp_path):
    assert dialect_for("a.laser") == "laser" and dialect_for("a.txt") == "lars" and dialect_for("x.prolog") == "rtec"
    (tmp_path / "a.lars").write_text("a :- b.")
    (tmp_path / "b.lars").write_text("c :- d.")
    assert len(load_program([str(tmp_path / "a.lars"), str(tmp_path / "b.lars")]).rules) == 2
    with pytest.raises(ProgramError, match="cannot read program"):
        load_program([str(tmp_path / "missing.lars")])
    (tmp_path / "m.rtec").write_text("")
    assert load_program([str(tmp_path / "m.rtec")]).dialect == "rtec"
    (tmp_path / "m.mtl").write_text("Q(X):-Boxminus[1,2]P(X)\n")  # DatalogMTL is parsed by its own front-end
    assert load_program([str(tmp_path / "m.mtl")]).dialect == "mtl"


@settings(max_examples=200, deadline=None, suppress_health_check=list(HealthCheck))
@given(programs(stratified=False))
def test_printed_programs_parse_back(program):
    assert parse_lars(str(program)).rules == program.rules


@settings(max_examples=300, deadline=None)
@given(st.lists(st.sampled_from(list("ab XY(),.:-[]#%*/\"0123456789 \n=<>!\\") + ["not ", "at ", "always ", " sec"]), max_size=40))
def test_garbage_raises_only_program_errors(pieces):
    text = "".join(pieces)
    try:
        parse_lars(text)
    except ProgramError as err:
        assert err.loc is not None
