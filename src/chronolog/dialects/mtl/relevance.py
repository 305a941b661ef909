"""Which input facts can matter to one answer of a DatalogMTL program (``explain``'s slice).

``ShortStop(veh3)`` reads its rules with ``V=veh3``: only ``NotPos(veh3)``, ``Pos(veh3)`` and,
through ``NotPos``'s rule, ``NotOnMap(veh3)`` — one vehicle's facts of three predicates.  A
demand is a predicate with a pattern of constants and "any value" (``core.relevance``); a
rule applies where its head atom can match it, its head's variables take the pattern's
constants, and every atom of its body (under metric operators, in ``Since``/``Until``,
negated) is read with the head-bound variables' values, a variable bound only by another
body atom meaning any value.  The metric operators move time, never arguments, so the
intervals of a demanded fact are the same on the kept input as on the whole.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from chronolog.core.events import Event
from chronolog.core.relevance import ANY, Demands, Pattern, closure, event_filter, same
from chronolog.dialects.mtl.syntax import MtlProgram, Var, atoms_of, head_atom


def demands(program: MtlProgram, pred: str, args: tuple) -> Demands:
    """Predicate -> the argument patterns an explanation of ``pred(args)`` can read."""
    heads: dict[str, list] = {}
    for rule in program.rules:
        heads.setdefault(head_atom(rule.head).pred, []).append(rule)

    def reads(name: str, pattern: Pattern) -> list[tuple[str, Pattern]]:
        out = []
        for rule in heads.get(name, ()):
            head = head_atom(rule.head)
            if len(head.args) != len(pattern):
                continue
            bound: dict[str, object] = {}
            fits = True
            for a, p in zip(head.args, pattern, strict=True):
                if p is ANY:
                    continue
                if isinstance(a, Var):
                    if a.name in bound and not same(bound[a.name], p):
                        fits = False
                    bound[a.name] = p
                elif not same(a, p):
                    fits = False
            if not fits:
                continue
            for lit in rule.body:
                for atom in atoms_of(lit):
                    out.append((atom.pred, tuple(bound.get(a.name, ANY) if isinstance(a, Var) else a
                                                 for a in atom.args)))
        return out

    return closure([(pred, tuple(args))], reads) or {}


def relevant(program: MtlProgram) -> Callable[[tuple[str, tuple], Any, list], Callable[[Event], bool] | None]:
    """``Dialect.relevant``: for an answer atom, which input facts can matter to it."""
    return lambda atom, evaluator, events: event_filter(demands(program, atom[0], tuple(atom[1])))
