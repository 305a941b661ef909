"""Clause bodies compiled to Python generator functions (``Solver.runner``).

Why its own: the interpreter's dispatch per goal and its backtracking stack
(``Solver.body``) were most of the time of the examples' rule bodies.  A
conjunction without a cut becomes one nested loop of Python source, each
goal's handler looked up once at compile time and comparisons, ``is`` and
``=`` inline; this module writes that source.  It is code generation only:
what each line calls (the solver's handlers, its memo, ``arith.py``) decides
the answers, so they are those of the interpreter.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from typing import TYPE_CHECKING, Any

from chronolog.dialects.rtec.arith import COMPARE, ORDER, PY_COMPARE, as_number, evaluate, ordered
from chronolog.dialects.rtec.terms import Slot, SolveError, Term, define, deref, term_source

if TYPE_CHECKING:
    from chronolog.dialects.rtec.solve import Solver

PY_ARITH = {"+", "-", "*"}  # Prolog's and Python's meaning agree on numbers


def _arith(t: Term, consts: list) -> str:
    """A Python expression evaluating the arithmetic term ``t`` (over slots) as ``evaluate`` does:
    ``+ - *`` and numbers inline, the rest through ``evaluate`` (``is`` and comparisons in
    generated bodies: caviar's distance class computes three per new pair of positions)."""
    if type(t) is Slot:
        return f"_num(vs[{t.i}])"
    if type(t) is int or type(t) is float:
        consts.append(t)
        return f"c[{len(consts) - 1}]"
    if type(t) is tuple and len(t) == 3 and t[0] in PY_ARITH:
        return f"({_arith(t[1], consts)} {t[0]} {_arith(t[2], consts)})"
    if type(t) is tuple and len(t) == 2 and t[0] == "-":
        return f"(-{_arith(t[1], consts)})"
    return f"_eval({term_source(t, consts)})"


def compile_runner(solver: Solver, goals: list) -> Callable[[list, int], Iterator[None]] | None:
    """``Solver.runner``'s generator function of the conjunction ``goals`` (None: it has a cut)."""
    if any(g == "!" for g in goals):
        return None
    consts: list = []
    env: dict[str, Any] = {"c": consts, "S": solver, "unify": solver.unify, "_eval": evaluate, "_ordered": ordered,
                           "_num": as_number, "solve": solver.solve, "memo": solver._memo, "solve_rules": solver.solve_rules,
                           "deref": deref, "SolveError": SolveError}
    lines = ["def run(vs, depth):", " if depth > 2000:",
             "  raise SolveError('error: recursion deeper than 2000 calls')"]
    pad = " "
    for g in goals:
        src = term_source(g, consts)
        key = (g[0], len(g) - 1) if type(g) is tuple else (g, 0) if type(g) is str else None
        kind, x = solver.dispatch.get(key, (None, None)) if key is not None else (None, None)
        own = solver.inline(g, lambda t: term_source(t, consts), consts) if solver.inline is not None else None
        if own is not None:
            line = own
        elif kind == 1 and key[0] in COMPARE:
            line = f"if {_arith(g[1], consts)} {PY_COMPARE[key[0]]} {_arith(g[2], consts)}:"
        elif kind == 1 and key[0] in ORDER:
            consts.append(ORDER[key[0]])
            line = (f"if _ordered(c[{len(consts) - 1}], {term_source(g[1], consts)}, {term_source(g[2], consts)}):")
        elif kind == 1 and key == ("is", 2):
            line = f"if unify({term_source(g[1], consts)}, {_arith(g[2], consts)}):"
        elif kind == 1 and key == ("=", 2):
            line = f"if unify({term_source(g[1], consts)}, {term_source(g[2], consts)}):"
        elif kind == 0:
            consts.append(x)
            line = f"for _ in c[{len(consts) - 1}](S, {src}):"
        elif kind == 1:
            consts.append(x)
            line = f"for _ in c[{len(consts) - 1}]({src}, depth):"
        elif kind == 2:
            consts.append(key)
            consts.append(x)
            line = f"for _ in memo(c[{len(consts) - 2}], c[{len(consts) - 1}], {src}, depth):"
        elif kind == 3:
            consts.append(x)
            line = f"for _ in solve_rules(c[{len(consts) - 1}], {src}, depth):"
        else:
            line = f"for _ in solve({src}, depth):"  # a variable goal, or an unknown predicate's error
        lines.append(pad + line)
        pad += " "
    lines.append(pad + "yield")
    define("\n".join(lines), env)
    return env["run"]
