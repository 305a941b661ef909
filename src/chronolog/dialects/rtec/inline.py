"""Point-fluent built-ins compiled into rule bodies.

Why: caviar's distance rules (``pre-processing-portable.prolog``) ask
``happensAt(start(coord(Id,X,Y)=true), T)``, ``holdsAt(coord(...)=true, T)`` and their
negations hundreds of thousands of times.  Through the generic path each call builds the
goal term, dispatches on it, takes ``F=V`` apart and checks its shape again; here the shape
is checked once, when the body is compiled, and the generated line calls a closure with the
fluent's arguments, value and time as they are.  Any other goal (or a time that is not an
integer at run time) takes the evaluator's generic path.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Iterator
from typing import TYPE_CHECKING, Any

from chronolog.dialects.rtec.terms import Slot, Var, deref

if TYPE_CHECKING:
    from chronolog.dialects.rtec.evaluator import RtecEvaluator


def _point_fv(ev: RtecEvaluator, fv: Any) -> tuple[tuple[str, int], tuple] | None:
    """(key, argument patterns) of ``F=V`` when F is an input point fluent (no rules define it)."""
    if type(fv) is not tuple or fv[0] != "=" or len(fv) != 3:
        return None
    f = fv[1]
    if type(f) is not tuple or ev.point_decl.get(f[0]) != len(f) - 1:
        return None
    key = (f[0], len(f) - 1)
    if any(e[0] == "fluent" and e[1] == key for e in ev.h.kind):
        return None
    return key, f[1:]


def inline_goal(ev: RtecEvaluator, g: Any, src: Callable[[Any], str], consts: list) -> str | None:
    """A runner line for a point-fluent goal of a rule body (over slots), or None."""
    neg = type(g) is tuple and g[0] in ("\\+", "not") and len(g) == 2
    inner = g[1] if neg else g
    if neg and type(inner) is tuple and (inner[0], len(inner) - 1) in ev.solver.pure:
        key = (inner[0], len(inner) - 1)  # a pure background check: straight to its memo
        consts.extend([_none(ev), ev.solver.trail, ev.solver._memo, key, ev.solver.clauses[key]])
        n = len(consts)
        return f"if c[{n - 5}](len(c[{n - 4}]), c[{n - 3}](c[{n - 2}], c[{n - 1}], {src(inner)}, depth + 1)):"
    if type(inner) is not tuple or len(inner) != 3 or type(inner[2]) not in (Slot, int):
        return None
    if inner[0] == "happensAt":
        e = inner[1]
        if type(e) is not tuple or len(e) != 2 or e[0] not in ("start", "end"):
            return None
        fv, make = e[1], _boundary
        extra: tuple = (e[0] == "start",)
    elif inner[0] == "holdsAt":
        fv, make, extra = inner[1], _holds, ()
    else:
        return None
    got = _point_fv(ev, fv)
    if got is None:
        return None
    key, fargs = got
    consts.append(make(ev, key, *extra))
    call = f"c[{len(consts) - 1}](({''.join(src(a) + ', ' for a in fargs)}), {src(fv[2])}, {src(inner[2])})"
    if neg:
        consts.extend([_none(ev), ev.solver.trail])
        return f"if c[{len(consts) - 2}](len(c[{len(consts) - 1}]), {call}):"
    return f"for _ in {call}:"


def _none(ev: RtecEvaluator) -> Callable[[int, Iterable[None]], bool]:
    """``\\+`` of a goal's solutions: true if there is none; its bindings are undone either way
    (to ``mark``, the trail's length before the goal was called: a memoised one binds at once)."""
    solver = ev.solver

    def none(mark: int, solutions: Iterable[None]) -> bool:
        for _ in solutions:
            solver.undo(mark)
            return False
        solver.undo(mark)
        return True
    return none


def _matches(ev: RtecEvaluator, items: Iterable[tuple], fargs: tuple, value: Any,
             t: Var | None = None) -> Iterator[None]:
    """Unify (arguments, value) with each ground (args, v), or (time, args, v) binding the free
    time ``t`` too: F=V without building it."""
    solver = ev.solver
    trail = solver.trail
    unify, unify_args = solver.unify, solver.unify_args
    mark = len(trail)
    value = deref(value)
    tv = type(value)
    fixed = tv is not Var and tv is not tuple  # an atom or number: compared, not unified
    for item in items:
        args, v = item[-2], item[-1]
        if fixed and (v != value or type(v) is not tv):
            continue
        if unify_args(fargs, args) and (fixed or unify(value, v)):
            if t is not None:
                t.ref = item[0]
                trail.append(t)
            yield
        if len(trail) > mark:
            solver.undo(mark)


def _boundary(ev: RtecEvaluator, key: tuple[str, int], start: bool) -> Callable[[tuple, Any, Any], Iterable[None]]:
    """``happensAt(start(F=V), T)`` (or ``end``) of a point fluent F with T bound: the
    window's boundary items at T; any other call as the generic built-in."""
    name = "start" if start else "end"

    def goal(fargs: tuple, value: Any, t: Any) -> Iterable[None]:
        t = deref(t)
        tt = type(t)
        if key not in ev.store.points or (tt is not int and tt is not Var):
            return ev._happens(ev.solver, ("happensAt", (name, ("=", (key[0], *fargs), value)), t))
        if tt is Var:
            return _matches(ev, ev._window_bounds(key, start), fargs, value, t)
        items = ev._point_bounds(key, start, t)[0]
        return _matches(ev, items, fargs, value) if items else ()
    return goal


def _holds(ev: RtecEvaluator, key: tuple[str, int]) -> Callable[[tuple, Any, Any], Iterable[None]]:
    """``holdsAt(F=V, T)`` of a point fluent F with T bound: the points at T."""

    def goal(fargs: tuple, value: Any, t: Any) -> Iterable[None]:
        t = deref(t)
        at = ev.store.points.get(key)
        if type(t) is not int or at is None:
            return ev._holds_at(ev.solver, ("holdsAt", ("=", (key[0], *fargs), value), t))
        items = at.get(t)
        return _matches(ev, items, fargs, value) if items else ()
    return goal
