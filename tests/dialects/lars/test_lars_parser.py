"""The native lars parser: every construct of ../shared/spec/LARS.md to its IR, error locations, loading."""

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
    Program,
    Rule,
    TimeWindow,
    TupleWindow,
    Var,
)
from chronolog.dialects.lars.parser import parse_lars
from chronolog.dialects.load import DIALECTS, dialect_for, load_program, parse_program

X, Y, Z, T, C, V = (Var(n) for n in "XYZTCV")


def a(pred: str, *args: object) -> Atom:
    terms = tuple(x if isinstance(x, (Var, Const)) else Const(x) for x in args)  # type: ignore[arg-type]
    return Atom(pred, terms)


def body(text: str) -> tuple:
    (rule,) = parse_lars(text).rules
    return rule.body


def elem(text: str):
    (e,) = body(f"h :- {text}.")
    return e


# ------------------------------------------------------------ the spec's examples


def test_spec_examples():
    p = parse_lars("third at T :- car(C), rec(C) at T in [3 #], not rec(C) [2 #].")
    assert p == Program(
        (
            Rule(
                Head(a("third"), T),
                (
                    ExtAtom(a("car", C)),
                    ExtAtom(a("rec", C), Op.AT, TupleWindow(3), T),
                    ExtAtom(a("rec", C), Op.DIAMOND, TupleWindow(2), negated=True),
                ),
            ),
        ),
        "lars",
    )
    assert parse_lars("lfu :- high always [300 sec].").rules == (
        Rule(Head(a("lfu")), (ExtAtom(a("high"), Op.BOX, TimeWindow(300)),)),
    )
    assert parse_lars("a :- b [3].").rules == (Rule(Head(a("a")), (ExtAtom(a("b"), Op.DIAMOND, TimeWindow(3)),)),)
    assert parse_lars("car(1). car(2).").rules == (Rule(Head(a("car", 1))), Rule(Head(a("car", 2))))
    assert parse_lars("q(X) :- p(X) [5].").rules == (
        Rule(Head(a("q", X)), (ExtAtom(a("p", X), Op.DIAMOND, TimeWindow(5)),)),
    )


# ------------------------------------------------------------ extended atoms and windows


@pytest.mark.parametrize(
    "text,expected",
    [
        ("p(X)", ExtAtom(a("p", X))),
        ("p(X) at T", ExtAtom(a("p", X), Op.AT, None, T)),
        ("p(X) at 4", ExtAtom(a("p", X), Op.AT, None, Const(4))),
        ("p(X) [5]", ExtAtom(a("p", X), Op.DIAMOND, TimeWindow(5))),
        ("p(X) in [5]", ExtAtom(a("p", X), Op.DIAMOND, TimeWindow(5))),
        ("p(X) [0]", ExtAtom(a("p", X), Op.DIAMOND, TimeWindow(0))),
        ("p always [2]", ExtAtom(a("p"), Op.BOX, TimeWindow(2))),
        ("p always in [2]", ExtAtom(a("p"), Op.BOX, TimeWindow(2))),
        ("p(X) at T [3]", ExtAtom(a("p", X), Op.AT, TimeWindow(3), T)),
        ("p(X) at T in [3 #]", ExtAtom(a("p", X), Op.AT, TupleWindow(3), T)),
        ("p(X) at 2 in [3]", ExtAtom(a("p", X), Op.AT, TimeWindow(3), Const(2))),
        ("p [4 #]", ExtAtom(a("p"), Op.DIAMOND, TupleWindow(4))),
        ("p always [4 #]", ExtAtom(a("p"), Op.BOX, TupleWindow(4))),
        ("not p", ExtAtom(a("p"), negated=True)),
        ("not p(X) [2]", ExtAtom(a("p", X), Op.DIAMOND, TimeWindow(2), negated=True)),
        ("not p always in [2]", ExtAtom(a("p"), Op.BOX, TimeWindow(2), negated=True)),
        ("not p at T [2 #]", ExtAtom(a("p"), Op.AT, TupleWindow(2), T, negated=True)),
        ("not p at 7", ExtAtom(a("p"), Op.AT, None, Const(7), negated=True)),
        # Ticker's postfix negation (cacheHopsEvalInst_old style)
        ("p(X) not in [2]", ExtAtom(a("p", X), Op.DIAMOND, TimeWindow(2), negated=True)),
        ("p(X) not [2]", ExtAtom(a("p", X), Op.DIAMOND, TimeWindow(2), negated=True)),
        ("p always not in [2]", ExtAtom(a("p"), Op.BOX, TimeWindow(2), negated=True)),
    ],
)
def test_extended_atoms(text, expected):
    assert elem(text) == expected


@pytest.mark.parametrize(
    "window,expected",
    [
        ("[7]", TimeWindow(7)),
        ("[7 sec]", TimeWindow(7)),
        ("[7 s]", TimeWindow(7)),
        ("[2 min]", TimeWindow(120)),
        ("[1 h]", TimeWindow(3600)),
        ("[ 7 # ]", TupleWindow(7)),
        ("[t 300]", TimeWindow(300)),  # older Ticker programs
        ("[# 10]", TupleWindow(10)),
    ],
)
def test_windows_and_units(window, expected):
    assert elem(f"p {window}").window == expected


def test_heads():
    assert parse_lars("a at 5.").rules == (Rule(Head(a("a"), Const(5))),)
    assert parse_lars("a at -2.").rules[0].head == Head(a("a"), Const(-2))
    assert parse_lars("h(X) at T :- p(X) at T [3].").rules[0].head == Head(a("h", X), T)
    assert parse_lars("h :- p.").rules[0].head == Head(a("h"))


def test_terms():
    (fact,) = parse_lars('n(X, _, _Y, -3, 007, abc, "A b", "x\\"y\\\\z\\n", "", aB_1).').rules
    assert fact.head.atom.args == (
        X, Var("_"), Var("_Y"), Const(-3), Const(7), Const("abc"), Const("A b"), Const('x"y\\z\n'), Const(""),
        Const("aB_1"),
    )
    # a symbol and the same text quoted are one constant
    assert parse_lars('p(a).').rules == parse_lars('p("a").').rules


def test_facts_several_per_line_and_comments():
    text = """% line comment
car(1). car(2). /* block
comment */ car(3).   // trailing
%* Ticker's
   block comment *%
car("%not a comment").
"""
    rules = parse_lars(text).rules
    assert [r.head.atom.args[0] for r in rules] == [Const(1), Const(2), Const(3), Const("%not a comment")]
    assert all(r.is_fact for r in rules)
    assert [r.loc for r in rules] == [Loc("<program>", 2, 1), Loc("<program>", 2, 9), Loc("<program>", 3, 12),
                                      Loc("<program>", 6, 1)]


# ------------------------------------------------------------ comparisons and built-ins


@pytest.mark.parametrize("op", ["=", "!=", "<", "<=", ">", ">="])
def test_comparison_ops(op):
    assert elem(f"X {op} 3") == Compare(op, X, Const(3))


def test_comparison_aliases_and_expressions():
    assert elem("X == Y") == Compare("=", X, Y)
    assert elem("X <> Y") == Compare("!=", X, Y)
    assert elem("X + 2 * 3 >= 10") == Compare(">=", BinOp("+", X, BinOp("*", Const(2), Const(3))), Const(10))
    assert elem("(X + 2) * 3 < Y") == Compare("<", BinOp("*", BinOp("+", X, Const(2)), Const(3)), Y)
    assert elem("X - Y - Z = 0") == Compare("=", BinOp("-", BinOp("-", X, Y), Z), Const(0))
    assert elem("X / 2 \\ 3 = Y") == Compare("=", BinOp("mod", BinOp("/", X, Const(2)), Const(3)), Y)
    assert elem("Y = -X") == Compare("=", Y, BinOp("-", Const(0), X))
    assert elem("Y = X - -3") == Compare("=", Y, BinOp("-", X, Const(-3)))
    assert elem("-3 < X") == Compare("<", Const(-3), X)
    assert elem('"a" != X') == Compare("!=", Const("a"), X)
    assert elem("a = X") == Compare("=", Const("a"), X)  # a constant on the left, not an atom
    assert elem("a + 1 = X") == Compare("=", BinOp("+", Const("a"), Const(1)), X)
    assert elem("not = X") == Compare("=", Const("not"), X)


@pytest.mark.parametrize(
    "text,expected",
    [
        ("eq(X,Y)", (Compare("=", X, Y),)),
        ("neq(X,Y)", (Compare("!=", X, Y),)),
        ("lt(X,Y)", (Compare("<", X, Y),)),
        ("leq(18,V)", (Compare("<=", Const(18), V),)),
        ("gt(X,Y)", (Compare(">", X, Y),)),
        ("geq(X,Y)", (Compare(">=", X, Y),)),
        ("incr(X,Y)", (Compare("=", Y, BinOp("+", X, Const(1))),)),
        ("plus(X,Y,Z)", (Compare("=", Z, BinOp("+", X, Y)),)),
        ("minus(X,Y,Z)", (Compare("=", Z, BinOp("-", X, Y)),)),
        ("times(X,Y,Z)", (Compare("=", Z, BinOp("*", X, Y)),)),
        ("divide(X,Y,Z)", (Compare("=", Z, BinOp("/", X, Y)),)),
        ("modulo(X,2,Z)", (Compare("=", Z, BinOp("mod", X, Const(2))),)),
        ("leqleq(1,X,3)", (Compare("<=", Const(1), X), Compare("<=", X, Const(3)))),
        ("ltlt(1,X,3)", (Compare("<", Const(1), X), Compare("<", X, Const(3)))),
        ("ltleq(1,X,3)", (Compare("<", Const(1), X), Compare("<=", X, Const(3)))),
        ("leqlt(1,X,3)", (Compare("<=", Const(1), X), Compare("<", X, Const(3)))),
    ],
)
def test_builtins(text, expected):
    assert body(f"h :- p(X,Y,Z,V), {text}.")[1:] == expected


# ------------------------------------------------------------ locations


def test_locations_on_rules_ext_atoms_and_comparisons():
    text = "a.\n  h(X) :- p(X) [2],\n    not q(X), X > 1, leqlt(1, X, 3)."
    r1, r2 = parse_lars(text, "f.lars").rules
    assert r1.loc == Loc("f.lars", 1, 1)
    assert r2.loc == Loc("f.lars", 2, 3)
    assert [e.loc for e in r2.body] == [
        Loc("f.lars", 2, 11), Loc("f.lars", 3, 5), Loc("f.lars", 3, 15), Loc("f.lars", 3, 22), Loc("f.lars", 3, 22)
    ]


TICKER_STYLE = """
% a program in Ticker's style, written for this test
high at T :- value(V), alpha(V) at T [300 sec], leq(18,V).
fifo :- low always [300 sec], rtm50 [300 sec].
random :- not done.
needAt(I,N) :- item(I), node(N), req(I,N) in [t 300], cache(I,N) not in [t 300].
reach(N,M,K) :- reach(N,M0,K0), conn(M0,M), N!=M, K=K0+1, length(K0), length(K).
value(5). value(15).
"""


def test_ticker_style_program():
    rules = parse_lars(TICKER_STYLE).rules
    assert len(rules) == 7
    assert rules[0].body[1] == ExtAtom(a("alpha", V), Op.AT, TimeWindow(300), T)
    assert rules[3].body[3] == ExtAtom(a("cache", Var("I"), Var("N")), Op.DIAMOND, TimeWindow(300), negated=True)
    assert rules[4].body[3] == Compare("=", Var("K"), BinOp("+", Var("K0"), Const(1)))


# ------------------------------------------------------------ errors


@pytest.mark.parametrize(
    "text,where,what",
    [
        ("a :- b [3.\n", "1:10", "expected ']' closing the window"),
        ("a :- b.\nc :- d always.\n", "2:14", "expected a window like [3] after 'always', found '.'"),
        ("a :- b [2 msec].", "1:11", "unit 'msec' is finer than one time point"),
        ("a :- b [2 ms].", "1:11", "unit 'ms' is finer than one time point"),
        ("a :- b [2 days].", "1:11", "unknown time unit 'days'"),
        ("a :- b [0 #].", "1:9", "a tuple window needs at least 1 tuple"),
        ("a :- b [-1].", "1:9", "expected the window size"),
        ("a :- b [X].", "1:9", "expected the window size (a non-negative integer), found 'X'"),
        ("a :- b\n", "2:1", "expected '.' ending the rule or ',' before the next body element, found end of input"),
        ("a :- b c.", "1:8", "found 'c'"),
        ("a b.", "1:3", "expected ':-' or '.' after the head, found 'b'"),
        ("a :- .", "1:6", "expected a body element"),
        ("a :- b,.", "1:8", "expected a body element"),
        ("x.\na :- b /* open\n\n", "2:8", "unterminated comment: '/*' is never closed"),
        ("a.\n  %* open", "2:3", "unterminated comment: '%*' is never closed by '*%'"),
        ('a :- p("abc).', "1:8", "unterminated string"),
        ("A :- b.", "1:1", "expected a predicate (a name starting with a lowercase letter), found 'A'"),
        ("a :- b, X ! 3.", "1:11", "unexpected character '!'"),
        ("a :- b, X 3.", "1:11", "expected a comparison operator (= != < <= > >=), found '3'"),
        ("a :- not(b).", "1:9", "write 'not p(X)', not 'not(p(X))'"),
        ("a :- not lt(X, 1).", "1:6", "built-in lt cannot be negated"),
        ("a :- lt(X).", "1:6", "built-in lt takes 2 arguments, not 1"),
        ("a :- plus(X, Y).", "1:6", "built-in plus takes 3 arguments, not 2"),
        ("a :- p(X,).", "1:10", "expected a term"),
        ("a :- p(X Y).", "1:10", "expected ',' or ')' in the argument list, found 'Y'"),
        ("a at b.", "1:6", "expected a time (a variable or an integer), found 'b'"),
        ("a :- p at.", "1:10", "expected a time"),
        ("a :- p not.", "1:8", "found 'not'"),
        ("a :- not p not [2].", "1:6", "negated twice"),
        ("a :- X = (1 + 2.", "1:16", "expected ')' closing the parenthesis, found '.'"),
        ("import foo as bar\na.", "1:1", "'import' of window functions is not supported"),
        ("a :- b.\n\n\tc :- d [3 #] e.", "3:15", "found 'e'"),
        ("a :- b /* c\n d */ e.", "2:7", "found 'e'"),
        ('a :- p("x\ny") , q r.', "2:9", "found 'r'"),
        ("a :- X = " + "(" * 200 + "1" + ")" * 200 + ".", "1:110", "nested more than 100 levels deep"),
    ],
)
def test_error_locations(text, where, what):
    with pytest.raises(ProgramError) as err:
        parse_lars(text, "prog.lars")
    message = str(err.value)
    assert message.startswith(f"prog.lars:{where}: error: "), message
    assert what in message, message
    line, col = where.split(":")
    assert err.value.loc == Loc("prog.lars", int(line), int(col))


# ------------------------------------------------------------ dialects and loading


def test_dialect_for():
    assert DIALECTS == ("lars", "laser", "mtl", "rtec")
    assert dialect_for("x/a.lars", None) == "lars"
    assert dialect_for("a.LASER", None) == "laser"
    assert dialect_for("a.mtl", None) == "mtl"
    assert dialect_for("a.rtec", None) == "rtec"
    assert dialect_for("rules.prolog", None) == "rtec"
    assert dialect_for("a.txt", None) == "lars"
    assert dialect_for("noext", None) == "lars"
    assert dialect_for("a.lars", "laser") == "laser"


def test_parse_program_dispatch():
    assert parse_program("a :- b.", "x", "lars").dialect == "lars"
    assert parse_program("a :- b", "x", "laser").dialect == "laser"
    assert parse_program("", "x", "rtec").dialect == "rtec"  # RTEC event descriptions: chronolog.dialects.rtec.parser
    with pytest.raises(ProgramError, match="unknown dialect 'datalog'"):
        parse_program("", "x", "datalog")


def test_load_program_concatenates(tmp_path):
    (tmp_path / "a.lars").write_text("a :- b [2].\n")
    (tmp_path / "b.lars").write_text("c :- d.\ne.\n")
    program = load_program([str(tmp_path / "a.lars"), str(tmp_path / "b.lars")])
    assert program.dialect == "lars"
    assert [str(r) for r in program.rules] == ["a :- b [2].", "c :- d.", "e."]
    assert program.rules[1].loc == Loc(str(tmp_path / "b.lars"), 1, 1)
    (tmp_path / "c.laser").write_text("q(X) :- time_win(3, 0, 1, diamond(p(X)))\n")
    assert load_program([str(tmp_path / "c.laser")]).dialect == "laser"
    # an explicit dialect overrides the extension
    (tmp_path / "d.txt").write_text("q(X) :- time_win(3, 0, 1, box(p(X)))\n")
    assert str(load_program([str(tmp_path / "d.txt")], "laser").rules[0]) == "q(X) :- p(X) always [3]."


def test_load_program_errors(tmp_path):
    (tmp_path / "a.lars").write_text("a :- b.\n")
    (tmp_path / "c.laser").write_text("a :- b\n")
    (tmp_path / "bad.lars").write_text("a :- b.\nc :- .\n")
    (tmp_path / "m.rtec").write_text("A :- B\n")
    (tmp_path / "latin1.lars").write_bytes(b"a :- b. % \xe9\n")
    missing = str(tmp_path / "missing.lars")

    def error(paths, dialect=None) -> ProgramError:
        with pytest.raises(ProgramError) as err:
            load_program(paths, dialect)
        return err.value

    e = error([missing])
    assert str(e).startswith(f"{missing}:1:1: error: cannot read program")
    e = error([str(tmp_path / "a.lars"), str(tmp_path / "c.laser")])
    assert e.loc == Loc(str(tmp_path / "c.laser"), 1, 1) and "one dialect" in e.message
    e = error([str(tmp_path / "m.rtec")])
    assert str(e).startswith(f"{tmp_path / 'm.rtec'}:2:1: error: expected an operator or '.' (end of clause), found end of file")
    e = error([str(tmp_path / "a.lars")], "rtec")
    assert str(e) == f"{tmp_path / 'a.lars'}:1:6: error: unknown predicate b/0 (not defined in the program files)"
    e = error(["-"])
    assert "standard input" in e.message
    e = error([str(tmp_path / "bad.lars")])
    assert e.loc == Loc(str(tmp_path / "bad.lars"), 2, 6)
    e = error([str(tmp_path / "latin1.lars")])
    assert "UTF-8" in e.message and e.loc is not None
    e = error([str(tmp_path)])  # a directory
    assert str(e).startswith(f"{tmp_path}:1:1: error: cannot read program")
    with pytest.raises(ProgramError, match="no program file"):
        load_program([])
