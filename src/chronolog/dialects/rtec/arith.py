"""Arithmetic and the comparison of terms, as Prolog defines them.

Why its own: ``is``, ``=:=``, ``<`` and ``@<`` are served in three places
that must agree: the solver's own control constructs (``solve.py``), the
clause bodies it compiles to Python (``runner.py``) and the background
predicates compiled to functions (``pure.py``), besides the evaluator's
compiled bodies (``local.py``).  The operator tables and the evaluation of
an arithmetic term live here once for all of them.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from chronolog.dialects.rtec.prolog import term_text
from chronolog.dialects.rtec.terms import SolveError, Term, Var, deref, resolve


def _div(a: Any, b: Any) -> Any:
    if isinstance(a, int) and isinstance(b, int) and b and a % b == 0:
        return a // b
    return a / b


BINARY: dict[str, Callable[[Any, Any], Any]] = {
    "+": lambda a, b: a + b, "-": lambda a, b: a - b, "*": lambda a, b: a * b, "/": _div,
    "//": lambda a, b: int(a / b), "mod": lambda a, b: a % b, "rem": lambda a, b: a - b * int(a / b),
    "min": min, "max": max, "**": lambda a, b: a ** b, "^": lambda a, b: a ** b,
}
UNARY: dict[str, Callable[[Any], Any]] = {"-": lambda a: -a, "+": lambda a: a, "abs": abs, "sqrt": lambda a: a ** 0.5}


def evaluate(t: Term) -> int | float:
    """Arithmetic of ``is`` and comparisons."""
    while type(t) is Var:
        r = t.ref
        if r is None:
            raise SolveError("error: arithmetic on an unbound variable")
        t = r
    tt = type(t)
    if tt is int or tt is float:
        return t
    if tt is tuple:
        if len(t) == 3:
            f = BINARY.get(t[0])
            if f is not None:
                return f(evaluate(t[1]), evaluate(t[2]))
        elif len(t) == 2:
            f1 = UNARY.get(t[0])
            if f1 is not None:
                return f1(evaluate(t[1]))
    raise SolveError(f"error: {term_text(resolve(t))} is not an arithmetic expression")


def as_number(t: Term) -> int | float:
    """A bound number as it is; anything else through ``evaluate`` (its errors included)."""
    while type(t) is Var:
        r = t.ref
        if r is None:
            break
        t = r
    if type(t) is int or type(t) is float:
        return t
    return evaluate(t)


PY_COMPARE = {"<": "<", ">": ">", "=<": "<=", ">=": ">=", "=:=": "==", "=\\=": "!="}  # the Python of each comparison


def order_key(t: Term) -> tuple:
    """Prolog's standard order of terms: Var < Number < Atom < Compound."""
    t = deref(t)
    if type(t) is Var:
        return (0, id(t))
    if type(t) in (int, float):
        return (1, t)
    if type(t) is str:
        return (3, t)
    if type(t) is tuple:
        return (4, len(t) - 1, t[0], tuple(order_key(a) for a in t[1:]))
    return (5, 0)


def ordered(op: Callable[[Any, Any], bool], a: Term, b: Term) -> bool:
    """``op`` on the standard order of ``a`` and ``b``: two atoms or two integers (ids, as in
    ``Id1 @< Id2``) compare as they are, without building order keys."""
    a, b = deref(a), deref(b)
    ta = type(a)
    if ta is type(b) and (ta is str or ta is int):
        return op(a, b)
    return op(order_key(a), order_key(b))


COMPARE: dict[str, Callable[[Any, Any], bool]] = {
    "<": lambda a, b: a < b, ">": lambda a, b: a > b, "=<": lambda a, b: a <= b, ">=": lambda a, b: a >= b,
    "=:=": lambda a, b: a == b, "=\\=": lambda a, b: a != b,
}
ORDER: dict[str, Callable[[Any, Any], bool]] = {
    "@<": lambda a, b: a < b, "@>": lambda a, b: a > b, "@=<": lambda a, b: a <= b, "@>=": lambda a, b: a >= b,
    "==": lambda a, b: a == b, "\\==": lambda a, b: a != b,
}
