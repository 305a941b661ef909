"""Pure background predicates compiled to Python functions of their bound arguments.

Why: caviar's ``distanceClass/5`` (three ``is`` and a call of ``squaredDistanceClass/2``,
whose clauses are comparisons) is asked about some 20,000 new pairs of positions.  Through the
solver each costs fresh variables, head unification, a generated body, a nested memoised call
and resolving the answer (about 20 µs).  Compiled for the one mode the memo asks in (every
argument bound to an atom or an integer but the last, which is free), the same clauses are a
few nested ``if``s and loops over locals that return the answers in the solver's order.

Only clauses made of head arguments that are variables or atomic constants and of ``is``,
arithmetic comparisons, standard-order comparisons, ``=``/``\\=`` on atomic values, ``true``
and calls of other such predicates (no recursion) are compiled; any other predicate stays with
the solver (``compile_pure`` gives None).  A compiled function that meets anything at run time
the generated code does not mirror exactly (a non-number in arithmetic, a division by zero)
raises, and the caller asks the solver instead, which gives its own answers or errors.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import TYPE_CHECKING, Any

from chronolog.dialects.rtec.arith import BINARY, COMPARE, ORDER, PY_COMPARE, UNARY, ordered
from chronolog.dialects.rtec.terms import Slot, define

if TYPE_CHECKING:
    from chronolog.dialects.rtec.solve import Solver

Compiled = Callable[[tuple], list]


class _NotNumber(Exception):
    """A bound argument used in arithmetic is not a number: the solver decides (its error)."""


def compile_pure(solver: Solver, pred: tuple[str, int]) -> Compiled | None:
    """``f(args)`` giving the answers (``(name, *args, last)``, in the solver's order) of
    ``pred`` called with ``args`` bound and its last argument free, or None when a clause
    is not of the shapes above.  ``f`` raises when the solver must decide instead."""
    cache = solver.compiled
    if pred in cache:
        return cache[pred]
    cache[pred] = None  # while compiling (a recursive call meets it: not compiled), and for good when it cannot be
    if pred[1] < 1 or pred not in solver.pure:
        return None
    name, n = pred
    consts: list = []
    params = [f"a{i}" for i in range(1, n)]
    lines = [f"def f({', '.join(params)}):", " out = []"]
    for rule in solver.clauses[pred]:
        block = _clause(solver, rule, name, n, consts)
        if block is None:
            return None
        lines += block
    lines.append(" return out")
    env: dict[str, Any] = {"k": consts, "_ordered": ordered, "_NotNumber": _NotNumber}
    define("\n".join(lines), env)
    body = env["f"]

    def answers(args: tuple) -> list:
        return body(*args)
    cache[pred] = answers
    return answers


def _clause(solver: Solver, rule: Any, name: str, n: int, consts: list) -> list[str] | None:
    """The lines of one clause (inside ``f``), or None."""
    head = rule.head
    if type(head) is not tuple or len(head) != n + 1:
        return None
    env: dict[int, str] = {}  # slot -> the local (or parameter) holding its value
    numeric: set[str] = set()  # locals known to hold numbers here
    lines: list[str] = []
    pad = " "

    def const(x: Any) -> str:
        consts.append(x)
        return f"k[{len(consts) - 1}]"

    def same(x: str, y: str) -> str:  # unification of two atomic values: 1 and 1.0 differ
        return f"{x} == {y} and type({x}) is type({y})"

    def atomic(t: Any) -> bool:
        return type(t) in (str, int, float)

    def source(t: Any) -> str | None:
        """A bound slot's local or an atomic constant; None for an unbound slot or a compound."""
        if type(t) is Slot:
            return env.get(t.i)
        return const(t) if atomic(t) else None

    def arith(t: Any) -> str | None:
        """A Python expression for ``evaluate(t)`` over bound locals (None: cannot)."""
        nonlocal pad
        if type(t) is Slot:
            x = env.get(t.i)
            if x is None:
                return None
            if x not in numeric:
                lines.append(pad + f"if type({x}) is not int and type({x}) is not float: raise _NotNumber")
                numeric.add(x)
            return x
        if type(t) is int or type(t) is float:
            return const(t)
        if type(t) is tuple and len(t) == 3 and t[0] in BINARY:
            a, b = arith(t[1]), arith(t[2])
            if a is None or b is None:
                return None
            return f"({a} {t[0]} {b})" if t[0] in ("+", "-", "*") else f"{const(BINARY[t[0]])}({a}, {b})"
        if type(t) is tuple and len(t) == 2 and t[0] in UNARY:
            a = arith(t[1])
            if a is None:
                return None
            return f"(-{a})" if t[0] == "-" else f"{const(UNARY[t[0]])}({a})"
        return None

    def unify_with(t: Any, value: str) -> bool:
        """``t`` (a slot or a constant) against a computed value: a fresh slot is bound to it,
        anything else tested for equality (False: a compound, not compiled)."""
        nonlocal pad
        if type(t) is Slot and t.i not in env:
            env[t.i] = value
            return True
        x = source(t)
        if x is None:
            return False
        lines.append(pad + f"if {same(x, value)}:")
        pad += " "
        return True

    # the tests on two bound values: how to read an operand, the condition on the two
    tests: dict[tuple[str, int], tuple[Callable, Callable[[str, str, str], str]]] = {
        ("\\=", 2): (source, lambda op, x, y: f"not ({same(x, y)})")}
    for op in COMPARE:
        tests[(op, 2)] = (arith, lambda op, x, y: f"{x} {PY_COMPARE[op]} {y}")
    for op in ORDER:
        tests[(op, 2)] = (source, lambda op, x, y: f"_ordered({const(ORDER[op])}, {x}, {y})")
    for i in range(1, n):  # the bound arguments against the head's
        h, a = head[i], f"a{i}"
        if type(h) is Slot:
            if h.i in env:
                lines.append(pad + f"if {same(env[h.i], a)}:")
                pad += " "
            else:
                env[h.i] = a
        elif atomic(h):
            lines.append(pad + f"if {same(a, const(h))}:")
            pad += " "
        else:
            return None
    for g in rule.body:
        if g == "true":
            continue
        if type(g) is not tuple:
            return None
        key = (g[0], len(g) - 1)
        if key == ("is", 2) or key == ("=", 2):
            rhs = arith(g[2]) if key == ("is", 2) else source(g[2])
            lhs = g[1]
            if rhs is None and key == ("=", 2) and type(g[2]) is Slot and g[2].i not in env:
                lhs, rhs = g[2], source(g[1])  # X = Y with X bound: the same the other way round
            if rhs is None:
                return None
            local = f"v{len(lines)}"
            lines.append(pad + f"{local} = {rhs}")
            if key == ("is", 2) and type(lhs) is Slot and lhs.i not in env:
                numeric.add(local)
            if not unify_with(lhs, local):
                return None
        elif key in tests:
            operand, condition = tests[key]
            x, y = operand(g[1]), operand(g[2])
            if x is None or y is None:
                return None
            lines.append(pad + f"if {condition(key[0], x, y)}:")
            pad += " "
        elif key in solver.pure:
            callee = compile_pure(solver, key)
            args = [source(a) for a in g[1:-1]]
            if callee is None or any(a is None for a in args):
                return None
            it = f"r{len(lines)}"
            lines.append(pad + f"for {it} in {const(callee)}(({''.join(a + ', ' for a in args)})):")
            pad += " "
            if not unify_with(g[-1], f"{it}[-1]"):
                return None
        else:
            return None
    last = head[n]
    out = source(last)
    if out is None:  # unbound at the end (an answer that is not ground) or a compound
        return None
    lines.append(pad + f"out.append(({name!r}, {''.join(f'a{i}, ' for i in range(1, n))}{out}))")
    return lines
