"""What the TMS grounder reads at one time point: window relations and matching.

``_Window`` holds the stream facts visible at ``t`` (and the background, the
timeline and the atoms of the stratified lower part) and gives each stream
literal's relation over its window (``derived_relation`` does it for a lower
predicate's atoms); ``_unify``, ``_index``, ``_pattern`` and ``_eval`` match
body literals and comparisons against those tuples.  Kept apart from the
grounder (``tms_grounder.py``) because it is the input side of grounding: a
function of the window contents at ``t`` alone, with no ground rules in it.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from typing import Any

from chronolog.dialects.lars.engine.rules import _Undefined
from chronolog.dialects.lars.ir import BinOp, Const, Expr, ExtAtom, Op, Term, TimeWindow, TupleWindow, Var
from chronolog.dialects.lars.plan import TICK, Plan, PredKey

Binding = dict[str, Any]
GroundRule = tuple  # (head key | None, pos keys, neg keys)


def _eval(e: Expr, b: Binding) -> Any:
    if isinstance(e, Const):
        return e.value
    if isinstance(e, Var):
        return b[e.name]
    assert isinstance(e, BinOp)
    x, y = _eval(e.left, b), _eval(e.right, b)
    if type(x) is not int or type(y) is not int:
        raise _Undefined
    if e.op == "+":
        return x + y
    if e.op == "-":
        return x - y
    if e.op == "*":
        return x * y
    if y == 0:
        raise _Undefined
    q = abs(x) // abs(y)
    if (x < 0) != (y < 0):
        q = -q
    return q if e.op == "/" else x - y * q


def _unify(pattern: Sequence[Term], tup: tuple, b: Binding) -> Binding | None:
    """``b`` extended so that ``pattern`` matches ``tup`` (None if it cannot)."""
    out = b
    for term, v in zip(pattern, tup):
        if isinstance(term, Const):
            if term.value != v or type(term.value) is not type(v):
                return None
        elif term.name == "_":
            continue
        else:
            got = out.get(term.name, _UNBOUND)
            if got is _UNBOUND:
                if out is b:
                    out = dict(b)
                out[term.name] = v
            elif got != v or type(got) is not type(v):
                return None
    return out


_UNBOUND = object()


def _index(pattern: Sequence[Term], bound: set[str] | Binding, rows: Iterable[tuple]) -> tuple[dict, list[Term]]:
    """``rows`` by the values at the pattern's constant and already bound positions
    (those terms in order), so a binding looks up its matches instead of scanning."""
    positions = [i for i, x in enumerate(pattern) if isinstance(x, Const) or (x.name != "_" and x.name in bound)]
    if not positions:
        return {}, []
    index: dict[tuple, list[tuple]] = {}
    for tup in rows:
        index.setdefault(tuple(tup[i] for i in positions), []).append(tup)
    return index, [pattern[i] for i in positions]


def _pattern(lit: ExtAtom) -> tuple[Term, ...]:
    if lit.op is Op.AT:
        assert lit.time is not None
        return lit.atom.args + (lit.time,)
    return lit.atom.args


def derived_relation(rows: set[tuple] | frozenset[tuple], timed: bool, op: Op, lo: int, t: int) -> set[tuple]:
    """The tuples of a literal's pattern over the atoms ``rows`` of a derived
    predicate in the answer at ``t`` (a timed one's with their time last), the
    literal's window starting at ``lo``: a predicate that is not timed holds at
    ``t`` only."""
    if not timed:
        if op is Op.AT:
            return {args + (t,) for args in rows}
        if op is Op.BOX and lo != t:
            return set()
        return rows  # type: ignore[return-value]
    if op is Op.NOW:
        return {r[:-1] for r in rows if r[-1] == t}
    if op is Op.AT:
        return {r for r in rows if lo <= r[-1] <= t}
    if op is Op.DIAMOND:
        return {r[:-1] for r in rows if lo <= r[-1] <= t}
    have: dict[tuple, set[int]] = {}
    for r in rows:
        if lo <= r[-1] <= t:
            have.setdefault(r[:-1], set()).add(r[-1])
    return {a for a, ts in have.items() if len(ts) == t - lo + 1}


class _Window:
    """The stream facts (and background, and the timeline) visible at ``t``."""

    def __init__(
        self, plan: Plan, t1: int, t: int, events: list[tuple[int, PredKey, tuple]],
        lower: dict[PredKey, frozenset] | None = None, lower_timed: frozenset[PredKey] = frozenset(),
    ) -> None:
        self.plan, self.t1, self.t, self.events = plan, t1, t, events
        self.lower = lower or {}  # the atoms of the lower part (engine/tms_split.py) in the answer at t
        self.lower_timed = lower_timed  # its timed predicates (their tuples end with the time)
        self._cache: dict[tuple, set[tuple]] = {}
        self._by_pred: dict[PredKey, list[tuple[int, tuple]]] | None = None

    def span(self, window: object, op: Op) -> int:
        if isinstance(window, TimeWindow):
            return max(self.t1, self.t - window.size)
        if window is None and op is not Op.NOW:
            return self.t1
        return self.t

    def relation(self, lit: ExtAtom) -> set[tuple]:
        """The tuples of the literal's pattern columns that hold at ``t`` (stream literal)."""
        key = (lit.atom.key, lit.op, lit.window)
        got = self._cache.get(key)
        if got is None:
            got = self._cache[key] = self._compute(lit)
        return got

    def _compute(self, lit: ExtAtom) -> set[tuple]:
        pred = lit.atom.key
        t, t1 = self.t, self.t1
        rows = self.lower.get(pred)
        if rows is not None:  # a predicate of the lower part: its atoms in the answer at t
            return derived_relation(rows, pred in self.lower_timed, lit.op, self.span(lit.window, lit.op), t)
        if isinstance(lit.window, TupleWindow):
            n = lit.window.size
            sel = self.events[-n:] if n > 0 else []
            lo = sel[0][0] if len(sel) >= n and sel else t1
            by_time: dict[int, set[tuple]] = {}
            for T, p, args in sel:
                if p == pred and lo <= T <= t:
                    by_time.setdefault(T, set()).add(args)
            background: set[tuple] = set()
        else:
            lo = self.span(lit.window, lit.op)
            by_time = {}
            if self._by_pred is None:  # the stream's facts per predicate, once per time point
                self._by_pred = {}
                for T, p, args in self.events:
                    self._by_pred.setdefault(p, []).append((T, args))
            for T, args in self._by_pred.get(pred, ()):
                if lo <= T <= t:
                    by_time.setdefault(T, set()).add(args)
            background = set(self.plan.background.get(pred, ()))
            if pred == TICK:
                background = {()}
        if lit.op is Op.NOW:
            return by_time.get(t, set()) | background
        if lit.op is Op.DIAMOND:
            out = set(background)
            for rows in by_time.values():
                out |= rows
            return out
        if lit.op is Op.BOX:
            out = set(background)
            every = None
            for T in range(lo, t + 1):
                rows = by_time.get(T, set())
                every = set(rows) if every is None else every & rows
            return out | (every or set())
        out = {args + (T,) for T in range(lo, t + 1) for args in background} if background else set()
        for T, rows in by_time.items():
            out.update(args + (T,) for args in rows)
        return out

