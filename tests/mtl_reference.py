"""An independent, naive DatalogMTL evaluator on a ruler of cells (tests only).

Time in ``[lo, hi]`` is cut into *cells*: the points ``lo + i·g`` and the
open intervals between consecutive points, for a granularity ``g`` that
divides every time in the program and the data.  The least model is
constant on each cell (seed 002, "(Π, M)-intervals"), so a naive fixpoint
that decides every operator cell by cell — at a point, or at the midpoint
of an open cell — computes it without any interval arithmetic.  Answers are
the sets of cells where each ground atom holds; ``cells_of`` turns interval
answers into the same form for comparison.
"""

from __future__ import annotations

from fractions import Fraction
from math import inf

from chronolog.dialects.mtl.syntax import Atom, Binary, Literal, MtlProgram, Negated, Unary, Var, atoms_of, head_atom


class Ruler:
    def __init__(self, lo: Fraction, hi: Fraction, g: Fraction) -> None:
        self.lo, self.hi, self.g = lo, hi, g
        self.n = int((hi - lo) / g) * 2 + 1  # cells 0..n-1: even = points, odd = open gaps

    def time(self, c: int) -> Fraction:
        """The cell's representative: its point, or the gap's midpoint."""
        return self.lo + self.g * Fraction(c, 2)

    def within(self, c: int, lo, lc: bool, hi, hc: bool) -> bool:
        """Does cell ``c`` meet the interval ⟨lo, hi⟩?"""
        if c % 2 == 0:
            t = self.time(c)
            return (lo < t or (lc and lo == t)) and (t < hi or (hc and t == hi))
        a, b = self.time(c - 1), self.time(c + 1)  # open gap (a, b)
        return lo < b and hi > a

    def cells(self, lo, lc, hi, hc) -> set[int]:
        return {c for c in range(self.n) if self.within(c, lo, lc, hi, hc)}


def _ground(atom: Atom, b: dict) -> tuple:
    return tuple(b[t.name] if isinstance(t, Var) else t for t in atom.args)


def reference_model(program: MtlProgram, facts: list[tuple[str, tuple, tuple]], ruler: Ruler) -> dict:
    """{(pred, args): set of cells} of the least model clipped to the ruler's span."""
    model: dict[tuple, set[int]] = {}
    for pred, args, (lo, lc, hi, hc) in facts:
        model.setdefault((pred, tuple(args)), set()).update(ruler.cells(lo, lc, hi, hc))
    consts = sorted({a for (_, args) in model for a in args} |
                    {t for r in program.rules for a in atoms_of(r.head) + [x for lit in r.body for x in atoms_of(lit)]
                     for t in a.args if not isinstance(t, Var)})

    def holds(lit: Literal, b: dict, c: int) -> bool:
        if isinstance(lit, Atom):
            return c in model.get((lit.pred, _ground(lit, b)), ())
        if isinstance(lit, Negated):  # decided on the cell, once the lower strata are complete
            return not holds(lit.operand, b, c)
        t = ruler.time(c)
        lo, lc, hi, hc = lit.rho
        if isinstance(lit, Unary):
            if lit.op in ("Diamondminus", "Boxminus"):
                w = (t - hi, hc, t - lo, lc)  # t' with t - t' in rho
            else:
                w = (t + lo, lc, t + hi, hc)
            inside = [holds(lit.operand, b, x) for x in ruler.cells(*w)]
            if lit.op.startswith("Diamond"):
                return any(inside)
            # nothing holds outside the input's span: a window reaching out of it fails
            out = w[0] < ruler.lo or (w[0] == ruler.lo and not w[1] and False) or w[2] > ruler.hi
            return not out and all(inside)
        assert isinstance(lit, Binary)
        past = lit.op == "Since"
        zero = (lo < 0 or (lc and lo == 0)) and (0 < hi or (hc and hi == 0))
        window = ruler.cells(t - hi, hc, t - lo, lc) if past else ruler.cells(t + lo, lc, t + hi, hc)
        for s in window:
            if not holds(lit.right, b, s):
                continue
            if s == c:  # s = t needs 0 in rho; s just below t (an open cell) needs the left operand there
                if zero or (c % 2 == 1 and holds(lit.left, b, c)):
                    return True
                continue
            between = range(s + 1, c) if past else range(c + 1, s)
            need = list(between) + [x for x in (s, c) if x % 2 == 1]
            if all(holds(lit.left, b, x) for x in need):
                return True
        return False

    def bindings(body: list, b: dict):
        if not body:
            yield b
            return
        names = sorted({t.name for a in atoms_of(body[0]) for t in a.args if isinstance(t, Var)} - set(b))
        if not names:
            yield from bindings(body[1:], b)
            return
        from itertools import product

        for values in product(consts, repeat=len(names)):
            yield from bindings(body[1:], {**b, **dict(zip(names, values))})

    for rules in _levels(program):
        _fixpoint(rules, ruler, model, holds, bindings)
    return model


def _levels(program: MtlProgram) -> list[list]:
    """Rules grouped by the level of their head: one more than any predicate read
    under ``not``, at least that of any predicate read positively (this module's
    own count; assumes the program is stratified)."""
    level: dict[str, int] = {}
    for _ in range(len(program.rules) + 1):
        for rule in program.rules:
            h = head_atom(rule.head).pred
            for lit in rule.body:
                for a in atoms_of(lit):
                    level[h] = max(level.get(h, 0), level.get(a.pred, 0) + isinstance(lit, Negated))
    out: dict[int, list] = {}
    for rule in program.rules:
        out.setdefault(level.get(head_atom(rule.head).pred, 0), []).append(rule)
    return [out[k] for k in sorted(out)]


def _fixpoint(rules: list, ruler: Ruler, model: dict, holds, bindings) -> None:
    changed = True
    while changed:
        changed = False
        for rule in rules:
            for b in list(bindings(list(rule.body), {})):
                where = {c for c in range(ruler.n) if all(holds(lit, b, c) for lit in rule.body)}
                if not where:
                    continue
                head = rule.head
                shifts = []
                while isinstance(head, Unary):
                    shifts.append(head)
                    head = head.operand
                for op in shifts:  # head operators: P on t + rho (Boxplus) or t - rho (Boxminus)
                    lo, lc, hi, hc = op.rho
                    moved = set()
                    for c in where:
                        t = ruler.time(c)
                        if op.op == "Boxplus":
                            moved |= _spread(ruler, c, lo, lc, hi, hc, +1)
                        else:
                            moved |= _spread(ruler, c, lo, lc, hi, hc, -1)
                        del t
                    where = moved
                atom = head_atom(rule.head)
                key = (atom.pred, _ground(atom, b))
                got = model.setdefault(key, set())
                if not where <= got:
                    got |= where
                    changed = True


def _spread(ruler: Ruler, c: int, lo, lc, hi, hc, sign: int) -> set[int]:
    """Cells covered by {t + sign·r | t in cell c, r in rho}."""
    if c % 2 == 0:
        t = ruler.time(c)
        return ruler.cells(t + lo, lc, t + hi, hc) if sign > 0 else ruler.cells(t - hi, hc, t - lo, lc)
    a, b = ruler.time(c - 1), ruler.time(c + 1)
    return ruler.cells(a + lo, False, b + hi, False) if sign > 0 else ruler.cells(a - hi, False, b - lo, False)


def cells_of(ruler: Ruler, intervals: list[tuple]) -> set[int]:
    out: set[int] = set()
    for lo, lc, hi, hc in intervals:
        out |= ruler.cells(lo, lc, min(hi, inf), hc)
    return out
