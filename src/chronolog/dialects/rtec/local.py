"""Simple-fluent rule bodies over input point fluents, compiled to loops over local variables.

Why: caviar's distance rules (``pre-processing-portable.prolog``) are joins of point-fluent
goals on their time (``happensAt(start(coord(Id1,X1,Y1)=true), T)``, ``holdsAt(coord(...), T)``,
their negations, ``Id1 @< Id2``, a memoised ``distanceClass``): most of the run.  The generic
runner binds every argument through a variable and a trail and undoes it for the next item;
here, since the sweep starts a body with its head unbound, which variables each goal binds is
known before running it, and the point items (ground atoms and integers) are unpacked into
Python locals.  The variables are bound only for a solution (and for a memoised call's output).
A body with any other goal, or shape, keeps the generic runner (``None`` here).
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import TYPE_CHECKING, Any

from chronolog.dialects.rtec.arith import ORDER, ordered
from chronolog.dialects.rtec.inline import _none, _point_fv
from chronolog.dialects.rtec.terms import Slot, SolveError, Var, define, deref

if TYPE_CHECKING:
    from chronolog.dialects.rtec.evaluator import RtecEvaluator

_ATOM = (str, int)
_PY_ORDER = {"@<": "<", "@>": ">", "@=<": "<=", "@>=": ">=", "==": "==", "\\==": "!="}


def local_runner(ev: RtecEvaluator, goals: list) -> Callable | None:
    """``run(vs, depth)`` yielding the solutions of ``goals`` (over slots, all unbound at the
    start) with the slots bound, or None when a goal is not of the shapes above."""
    solver = ev.solver
    consts: list = []
    bound: dict[int, str] = {}  # slot -> the local holding its value
    later = [set(_slots(g)) for g in goals]

    def const(x: Any) -> str:
        consts.append(x)
        return f"c[{len(consts) - 1}]"

    def term(a: Any) -> str | None:
        """The source of a bound slot or an atomic constant (None: an unbound slot)."""
        if type(a) is Slot:
            return bound.get(a.i)
        return const(a)

    lines = ["def run(vs, depth):"]
    pad = " "
    after: list[str] = []  # lines closing a block, after its body
    memo_out: set[int] = set()  # slots a memoised call binds on the variable itself
    for n, g in enumerate(goals):
        rest = set().union(*later[n + 1:]) if n + 1 < len(goals) else set()
        neg = type(g) is tuple and g[0] in ("\\+", "not") and len(g) == 2
        inner = g[1] if neg else g
        if type(inner) is not tuple:
            return None
        key = (inner[0], len(inner) - 1)
        if not all(type(a) is Slot or type(a) in _ATOM for a in _flat_args(inner)):
            return None
        if key in solver.pure:  # a memoised background predicate
            free = [a.i for a in inner[1:] if type(a) is Slot and a.i not in bound]
            last = inner[-1]
            if (not neg and free == [getattr(last, "i", None)] and last.i not in memo_out
                    and not any(type(a) is Slot and a.i == last.i for a in inner[1:-1])):
                # every argument bound but a free last one: its values from the memo, into a local
                vals = "".join((bound[a.i] if type(a) is Slot else const(a)) + ", " for a in inner[1:-1])
                lines.append(pad + f"for _s{last.i} in {const(solver.last_values)}({const(key)}, ({vals}), depth + 1):")
                bound[last.i] = f"_s{last.i}"
                pad += " "
                continue
            if not neg and set(free) & rest:
                return None  # its output is read by a later goal: keep the generic runner
            memo_out.update(free)
            args = ", ".join(bound[a.i] if type(a) is Slot and a.i in bound else
                             f"vs[{a.i}]" if type(a) is Slot else const(a) for a in inner[1:])
            call = (f"{const(solver._memo)}({const(key)}, {const(solver.clauses[key])}, "
                    f"({inner[0]!r}, {args},), depth + 1)")
            if neg:
                lines.append(pad + f"if {const(_none(ev))}(len({const(solver.trail)}), {call}):")
            else:
                # its free arguments are the variables themselves: bound by the call, undone after it
                lines += [pad + f"_m{n} = len({const(solver.trail)})", pad + f"for _ in {call}:"]
                after.append(pad + f"{const(solver.undo)}(_m{n})")
            pad += " "
            continue
        if key in {(op, 2) for op in ORDER} and not neg:
            a, b = term(inner[1]), term(inner[2])
            if a is None or b is None:
                return None
            # two atoms or two integers (ids) compare as they are, inline; anything else by the order
            lines.append(pad + f"if ({a} {_PY_ORDER[inner[0]]} {b} if type({a}) is type({b}) and "
                               f"(type({a}) is str or type({a}) is int) else _ordered({const(ORDER[inner[0]])}, {a}, {b})):")
            pad += " "
            continue
        shape = _point_goal(ev, inner)
        if shape is None:
            return None
        items, fargs, value, _ = shape
        it = f"_i{n}"
        src_t = term(inner[2])
        if src_t is None and (neg or inner[0] == "holdsAt"):
            return None  # a free time: the generic built-in (or its error)
        # a free time is the unbound variable itself: the items of the whole window
        lines.append(pad + f"for {it} in {const(items)}({src_t or f'vs[{inner[2].i}]'}):")
        pad += " "
        conds: list[str] = []
        fresh: dict[int, str] = {}  # slot -> the item's part binding it here
        pats = [*fargs, value]
        for k, a in enumerate(pats):
            x = f"{it}[1][{k}]" if k < len(fargs) else f"{it}[2]"
            src = fresh[a.i] if type(a) is Slot and a.i in fresh else term(a)
            if src is not None:
                conds.append(f"{x} == {src} and type({x}) is type({src})")
            elif neg:
                if a.i in rest or any(type(p) is Slot and p.i == a.i for p in pats[k + 1:]):
                    return None  # a variable the negation would share: the generic runner
            else:
                fresh[a.i] = x
        if src_t is None:
            fresh[inner[2].i] = f"{it}[0]"
        cond = " and ".join(conds) or "True"
        if neg:
            lines += [pad + f"if {cond}:", pad + " break", pad[:-1] + "else:"]
            continue
        lines.append(pad + f"if {cond}:")
        pad += " "
        for i, x in fresh.items():
            lines.append(pad + f"_s{i} = {x}")
            bound[i] = f"_s{i}"
    trail = const(solver.trail)
    lines.append(pad + f"_m = len({trail})")
    for i, local in bound.items():
        lines += [pad + f"vs[{i}].ref = {local}", pad + f"{trail}.append(vs[{i}])"]
    lines += [pad + "yield", pad + f"{const(solver.undo)}(_m)", *reversed(after)]
    env: dict[str, Any] = {"c": consts, "_ordered": ordered}
    define("\n".join(lines), env)
    return env["run"]


def _point_goal(ev: RtecEvaluator, g: tuple) -> tuple[Callable, tuple, Any, Any] | None:
    """(items function, argument patterns, value pattern, time) of a point-fluent goal."""
    if len(g) != 3:
        return None
    if g[0] == "happensAt":
        e = g[1]
        if type(e) is not tuple or len(e) != 2 or e[0] not in ("start", "end"):
            return None
        fv = e[1]
        got = _point_fv(ev, fv)
        if got is None:
            return None
        items = _boundary_items(ev, got[0], e[0] == "start")
    elif g[0] == "holdsAt":
        fv = g[1]
        got = _point_fv(ev, fv)
        if got is None:
            return None
        items = _point_items(ev, got[0])
    else:
        return None
    if type(g[2]) is not Slot and type(g[2]) is not int:
        return None
    return items, got[1], fv[2], g[2] if type(g[2]) is int else None


def _boundary_items(ev: RtecEvaluator, key: tuple[str, int], start: bool) -> Callable[[Any], Sequence]:
    """The (time or None, args, value) a ``happensAt(start(F=V), T)`` (or ``end``) of a point
    fluent F ranges over: the boundaries at T, or the window's with their time for a free T
    (as the evaluator's ``_boundaries``)."""

    def items(t: Any) -> Sequence:
        if type(t) is int:  # (the usual: a time an earlier goal bound, its entry made already)
            got = ev._bounds.get((key, start, t))
            if got is not None:
                return got[2]
        t = deref(t)
        if key not in ev.store.points:
            return []  # no point ever given: no instance either
        if type(t) is int:
            return ev._point_bounds(key, start, t)[2]
        if type(t) is Var:
            return ev._window_bounds(key, start)
        return []  # a time that is not an integer: no event
    return items


def _point_items(ev: RtecEvaluator, key: tuple[str, int]) -> Callable[[Any], list]:
    """The (None, args, value) a ``holdsAt(F=V, T)`` of a point fluent F ranges over: its points at T."""

    def items(t: Any) -> list:
        if type(t) is int:  # (the usual: a time an earlier goal bound, its entry made already)
            got = ev._bounds.get((key, t))
            if got is not None:
                return got
        t = deref(t)
        if type(t) is not int:
            raise SolveError("error: holdsAt/2 needs a bound time")
        at = ev.store.points.get(key)
        return ev._points_at(key, t) if at is not None and t in at else []
    return items


def _flat_args(g: tuple) -> list:
    """The leaves a goal's shape allows: arguments of point goals' fluents, values and times,
    or a call's arguments (compound arguments elsewhere are refused by the caller)."""
    if g[0] in ("happensAt", "holdsAt") and len(g) == 3:
        e = g[1]
        if g[0] == "happensAt":
            if type(e) is not tuple or len(e) != 2:
                return [e]
            e = e[1]
        if type(e) is tuple and e[0] == "=" and len(e) == 3 and type(e[1]) is tuple:
            return [*e[1][1:], e[2], g[2]]
        return [e]
    return list(g[1:])


def _slots(t: Any) -> list[int]:
    if type(t) is Slot:
        return [t.i]
    if type(t) is tuple:
        return [i for a in t[1:] for i in _slots(a)]
    return []
