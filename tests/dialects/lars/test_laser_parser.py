"""The Laser-dialect parser: Laser's constructs to the IR (equal to the native spelling), errors with locations."""

from __future__ import annotations

import pytest

from chronolog.core.errors import ProgramError
from chronolog.dialects.lars.ir import (
    Atom,
    BinOp,
    Compare,
    Const,
    ExtAtom,
    Head,
    Loc,
    Op,
    Rule,
    TimeWindow,
    TupleWindow,
    Var,
)
from chronolog.dialects.lars.laser import WHOLE_TIMELINE, parse_laser
from chronolog.dialects.lars.parser import parse_lars

X, Y, T, V = Var("X"), Var("Y"), Var("T"), Var("V")
WHOLE = TimeWindow(WHOLE_TIMELINE)


def elem(text: str):
    (rule,) = parse_laser(f"h :- {text}").rules
    (e,) = rule.body
    return e


def same(laser: str, native: str) -> None:
    assert parse_laser(laser).rules == parse_lars(native).rules


@pytest.mark.parametrize(
    "laser,native",
    [
        ("time_win(5, 0, 1, diamond(p(X)))", "p(X) [5]"),
        ("time_win(5,0,1,box(p(X)))", "p(X) always [5]"),
        ("time_win(5, 0, 1, @(T, p(X)))", "p(X) at T [5]"),
        ("time_win(5, 0, 1, @(T, (temp(V))))", "temp(V) at T [5]"),
        ("time_win(5, 0, 1, @(3, p(X)))", "p(X) at 3 [5]"),
        ("time_win(0, 0, 1, diamond(p))", "p [0]"),
        ("time_win(5, 0, 2, diamond(p))", "p [10]"),  # Laser: the window reaches back L*S points
        ("tuple_win(4, diamond(p(X)))", "p(X) [4 #]"),
        ("tuple_win(4, box(p(X)))", "p(X) always [4 #]"),
        ("tuple_win(4, @(T, p(X)))", "p(X) at T [4 #]"),
        ("tuple_win(4, 0, 1, @(T, p(X)))", "p(X) at T [4 #]"),  # Laser ignores the two extra numbers
        ("@(T, p(X))", "p(X) at T"),
        ("@(3, p(X))", "p(X) at 3"),
        ("p(X)", "p(X)"),
        ("time_win(2, 0, 1, p(X))", "p(X)"),  # an atom right inside a window holds now
        ("tuple_win(4, p(X))", "p(X)"),
        ("not(p(X))", "not p(X)"),
        ("not p(X)", "not p(X)"),
        ("not(time_win(3, 0, 1, diamond(p)))", "not p [3]"),
        ("not(time_win(3, 0, 1, box(p)))", "not p always [3]"),
        ("not(tuple_win(3, @(T, p)))", "not p at T [3 #]"),
        ("time_win(3, 0, 1, not(diamond(p)))", "not p [3]"),
        ("time_win(3, 0, 1, not(p))", "not p"),
        # some point without p = not p at every point, and vice versa
        ("time_win(3, 0, 1, diamond(not(p)))", "not p always [3]"),
        ("time_win(3, 0, 1, box(not(p)))", "not p [3]"),
        ("COMP(>=, V, 100)", "V >= 100"),
        ("COMP(<, V, -3)", "V < -3"),
        ("COMP(=, V, 1)", "V = 1"),
        ("COMP(!=, V, a)", "V != a"),
        ("COMP(>, T, 2)", "T > 2"),
        ("COMP(<=, X, Y)", "X <= Y"),
        ("not(COMP(<, X, Y))", "X >= Y"),
        ("MATH(+, Y, X, 2)", "Y = X + 2"),
        ("MATH(-, Y, X, 2)", "Y = X - 2"),
        ("MATH(*, Y, X, 2)", "Y = X * 2"),
        ("MATH(/, Y, X, 2)", "Y = X / 2"),
        ("MATH(mod, Y, X, 2)", "Y = X \\ 2"),
    ],
)
def test_constructs_equal_native(laser, native):
    same(f"h(X, Y, T, V) :- q(X, Y, T, V) and {laser}", f"h(X, Y, T, V) :- q(X, Y, T, V), {native}.")


def test_windowless_diamond_and_box_cover_the_timeline():
    assert elem("diamond(p(X))") == ExtAtom(Atom("p", (X,)), Op.DIAMOND, WHOLE)
    assert elem("box(p(X))") == ExtAtom(Atom("p", (X,)), Op.BOX, WHOLE)
    assert elem("diamond(not(p))") == ExtAtom(Atom("p"), Op.BOX, WHOLE, negated=True)


def test_heads_facts_and_rule_layout():
    text = """
# the cooling system, Laser style (written for this test)
@(T, steam(V)) :- time_win(20, 0, 1, @(T, (temp(V)))) and COMP(>=, V, 100)

alarm :- time_win(20, 0, 1, box(isSteam)).
   freeze :- not(alarm) and not(normal)   % trailing comment
@(5, mark)
lim(100). lim(150)
long(X) :- p(X,
             Y) and
           q(Y)
"""
    rules = parse_laser(text, "c.laser").rules
    assert [str(r) for r in rules] == [
        "steam(V) at T :- temp(V) at T [20], V >= 100.",
        "alarm :- isSteam always [20].",
        "freeze :- not alarm, not normal.",
        "mark at 5.",
        "lim(100).",
        "lim(150).",
        "long(X) :- p(X,Y), q(Y).",
    ]
    assert rules[0].head == Head(Atom("steam", (V,)), T)
    assert [r.loc for r in rules] == [
        Loc("c.laser", 3, 1), Loc("c.laser", 5, 1), Loc("c.laser", 6, 4), Loc("c.laser", 7, 1),
        Loc("c.laser", 8, 1), Loc("c.laser", 8, 11), Loc("c.laser", 9, 1),
    ]
    assert [e.loc for e in rules[0].body] == [Loc("c.laser", 3, 19), Loc("c.laser", 3, 59)]
    assert rules[2].body[1].loc == Loc("c.laser", 6, 29)
    assert rules[6].body[1].loc == Loc("c.laser", 11, 12)


def test_quoted_names_as_in_laser_eval():
    (rule,) = parse_laser(
        "'http://example.org/p1'(X,Z) :- time_win(3, 0, 1, diamond('http://example.org/p#p'(X,Y))) "
        "and 'p*2'(Y, 'a b') and q(\"c d\")"
    ).rules
    assert rule.head.atom == Atom("http://example.org/p1", (X, Var("Z")))
    assert rule.body == (
        ExtAtom(Atom("http://example.org/p#p", (X, Y)), Op.DIAMOND, TimeWindow(3)),
        ExtAtom(Atom("p*2", (Y, Const("a b")))),
        ExtAtom(Atom("q", (Const("c d"),))),
    )


def test_locations_of_body_elements():
    (rule,) = parse_laser("h(X) :- not(p(X)) and time_win(2,0,1, diamond(q(X))) and COMP(>, X, 1)", "f").rules
    assert [e.loc for e in rule.body] == [Loc("f", 1, 9), Loc("f", 1, 23), Loc("f", 1, 58)]
    assert rule.body == (
        ExtAtom(Atom("p", (X,)), negated=True),
        ExtAtom(Atom("q", (X,)), Op.DIAMOND, TimeWindow(2)),
        Compare(">", X, Const(1)),
    )


def test_math_keeps_expression_operands():
    assert elem("MATH(+, Y, X, 2)") == Compare("=", Y, BinOp("+", X, Const(2)))


def test_empty_and_comment_only_programs():
    assert parse_laser("").rules == ()
    assert parse_laser("\n\n# nothing\n// here\n%\n/* at\nall */\n").rules == ()


def test_program_dialect():
    assert parse_laser("a :- b").dialect == "laser"
    assert parse_laser("a :- b") != parse_lars("a :- b.")  # the dialect is part of the program
    assert parse_laser("a :- b").rules == parse_lars("a :- b.").rules


@pytest.mark.parametrize(
    "text,where,what",
    [
        ("a :- b\nq :- time_win(3, 1, 1, diamond(p))", "2:18", "U != 0 (a window reaching into the future) is not supported"),
        ("q :- time_win(3, 0, 0, diamond(p))", "1:21", "needs S >= 1"),
        ("q :- time_win(-3, 0, 1, diamond(p))", "1:15", "must not be negative"),
        ("q :- time_win(3, 0, diamond(p))", "1:21", "expected the window's unit (an integer), found 'diamond'"),
        ("q :- time_win(a, 0, 1, p)", "1:15", "expected the window length (an integer), found 'a'"),
        ("q :- tuple_win(0, diamond(p))", "1:16", "a tuple window needs at least 1 tuple"),
        ("q :- tuple_win(2 diamond(p))", "1:18", "expected ',' after the number of tuples"),
        ("a :- b c", "1:8", "expected 'and' or the end of the rule, found 'c'"),
        ("a b", "1:3", "expected ':-' or the end of the rule, found 'b'"),
        ("a :- b or c", "1:8", "Laser's 'or' is not supported"),
        ("a :- predicate_win(3, p)", "1:6", "predicate_win is not supported"),
        ("a :- diamond(box(p))", "1:14", "nested operators are not supported"),
        ("a :- time_win(2,0,1, time_win(3,0,1,p))", "1:22", "nested windows are not supported"),
        ("a :- time_win(2,0,1, COMP(>, X, 1))", "1:22", "a comparison cannot stand under a window"),
        ("a :- @(T, not(p))", "1:11", "write not(@(T, A))"),
        ("a :- not(not(p))", "1:6", "double negation is not supported"),
        ("a :- (b", "1:8", "expected ')' closing the parenthesis, found end of input"),
        ("a :- COMP(~, X, 1)", "1:11", "unexpected character '~'"),
        ("a :- COMP(+, X, 1)", "1:11", "expected a comparison operator"),
        ("a :- MATH(<, X, Y, 1)", "1:11", "expected an arithmetic operator"),
        ("a :- MATH(+, X, Y)", "1:18", "expected ',' before the right operand of MATH"),
        ("a :- @(T p)", "1:10", "expected ',' after the time of '@('"),
        ("a :- @(b, p)", "1:8", "expected a time (a variable or an integer), found 'b'"),
        ("a :- ", "1:6", "expected an atom, not(...)"),
        ("a :- b and\n\n", "3:1", "expected an atom"),
        ("a :- X", "1:6", "expected an atom"),
        ("Q :- b", "1:1", "expected a predicate"),
        ("a :- 'unterminated", "1:6", "unterminated string"),
        ("a.\nb :- c\n  d :- e and f g", "3:16", "found 'g'"),
        ("a :- " + "not(" * 150 + "p" + ")" * 150, "1:206", "nested more than 100 levels deep"),
    ],
)
def test_error_locations(text, where, what):
    with pytest.raises(ProgramError) as err:
        parse_laser(text, "x.laser")
    message = str(err.value)
    assert message.startswith(f"x.laser:{where}: error: "), message
    assert what in message, message


def test_rules_are_frozen_ir():
    (rule,) = parse_laser("h :- p").rules
    assert isinstance(rule, Rule) and hash(rule) == hash(parse_lars("h :- p.").rules[0])
    assert TupleWindow(2) != TimeWindow(2)
