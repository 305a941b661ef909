"""Tiny helpers to write LARS IR by hand in tests (no parser needed).

Terms: a str starting with an uppercase letter or ``_`` is a variable, any
other value a constant.  ``rule(atom("a", "X"), dia(atom("p", "X"), W(2)))``
is ``a(X) :- p(X) [2].``
"""

from __future__ import annotations

from chronolog.dialects.lars.ir import (
    Atom,
    BinOp,
    Compare,
    Const,
    ExtAtom,
    Head,
    Op,
    Program,
    Rule,
    TimeWindow,
    TupleWindow,
    Var,
)


def term(x):
    if isinstance(x, (Var, Const, BinOp)):
        return x
    if isinstance(x, str) and x and (x[0].isupper() or x == "_"):
        return Var(x)
    return Const(x)


def atom(pred: str, *args) -> Atom:
    return Atom(pred, tuple(term(a) for a in args))


def W(n: int) -> TimeWindow:
    return TimeWindow(n)


def TW(n: int) -> TupleWindow:
    return TupleWindow(n)


def now(a: Atom) -> ExtAtom:
    return ExtAtom(a, Op.NOW)


def dia(a: Atom, w) -> ExtAtom:
    return ExtAtom(a, Op.DIAMOND, w)


def box(a: Atom, w) -> ExtAtom:
    return ExtAtom(a, Op.BOX, w)


def at(a: Atom, time, w=None) -> ExtAtom:
    return ExtAtom(a, Op.AT, w, time=term(time))


def neg(e: ExtAtom) -> ExtAtom:
    return ExtAtom(e.atom, e.op, e.window, e.time, negated=True)


def cmp(left, op: str, right) -> Compare:
    return Compare(op, term(left), term(right))


def op(left, o: str, right) -> BinOp:
    return BinOp(o, term(left), term(right))


def rule(head: Atom, *body, at=None) -> Rule:
    body = tuple(now(b) if isinstance(b, Atom) else b for b in body)
    return Rule(Head(head, term(at) if at is not None else None), body)


def program(*rules: Rule) -> Program:
    return Program(tuple(rules))
