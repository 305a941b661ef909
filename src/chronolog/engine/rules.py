"""Rules compiled into set-at-a-time join pipelines.

A rule body becomes a fixed sequence of steps over a batch of variable
bindings (tuples of values, one slot per variable): *scan* a relation
through an index on the already bound columns, *anti-join* a negated
literal, *filter* by a comparison, *assign* a variable.  The relations are
handed in at evaluation time, so one compiled rule serves every time point
and carries no state of its own.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Callable, Sequence

from chronolog.engine.relation import Rel, key_getter
from chronolog.ir import BinOp, Compare, Const, Expr, ExtAtom, Op, Rule, Term, Var


class _Undefined(Exception):
    """Arithmetic on non-integers or division by zero: the comparison is false."""


def literal_pattern(lit: ExtAtom) -> tuple[Term, ...]:
    """The terms matched against a literal's relation columns (AT adds the time column)."""
    if lit.op is Op.AT:
        assert lit.time is not None
        return lit.atom.args + (lit.time,)
    return lit.atom.args


def _is_int(v: object) -> bool:
    return type(v) is int


def _compile_expr(e: Expr, slots: dict[str, int]) -> Callable[[tuple], object]:
    if isinstance(e, Const):
        v = e.value
        return lambda b: v
    if isinstance(e, Var):
        i = slots[e.name]
        return lambda b: b[i]
    left = _compile_expr(e.left, slots)
    right = _compile_expr(e.right, slots)
    op = e.op

    def arith(b: tuple) -> int:
        x, y = left(b), right(b)
        if not (_is_int(x) and _is_int(y)):
            raise _Undefined
        if op == "+":
            return x + y  # type: ignore[operator]
        if op == "-":
            return x - y  # type: ignore[operator]
        if op == "*":
            return x * y  # type: ignore[operator]
        if y == 0:
            raise _Undefined
        q = abs(x) // abs(y)  # type: ignore[arg-type]
        if (x < 0) != (y < 0):  # type: ignore[operator]
            q = -q
        return q if op == "/" else x - y * q  # type: ignore[operator]

    return arith


def _compare(op: str, x: object, y: object) -> bool:
    if op == "=":
        return x == y and type(x) is type(y)
    if op == "!=":
        return not (x == y and type(x) is type(y))
    if not (_is_int(x) and _is_int(y)):
        return False
    if op == "<":
        return x < y  # type: ignore[operator]
    if op == "<=":
        return x <= y  # type: ignore[operator]
    if op == ">":
        return x > y  # type: ignore[operator]
    return x >= y  # type: ignore[operator]


@dataclass(slots=True)
class _Scan:
    lit: int  # index into the rule's literal list
    cols: tuple[int, ...]  # bound columns, looked up in an index
    key: Callable[[tuple], tuple]  # binding -> key
    checks: tuple[tuple[int, int], ...]  # (col, col) pairs that must be equal (repeated free vars)
    out: Callable[[tuple], tuple]  # relation tuple -> values of the newly bound variables


@dataclass(slots=True)
class _AntiJoin:
    lit: int
    full: Callable[[tuple], tuple]  # binding -> the complete tuple that must be absent


@dataclass(slots=True)
class _Filter:
    test: Callable[[tuple], bool]


@dataclass(slots=True)
class _Assign:
    value: Callable[[tuple], object]


Step = _Scan | _AntiJoin | _Filter | _Assign


class CompiledRule:
    """One rule as a join pipeline; ``literals`` are its extended atoms in body order."""

    def __init__(self, rule: Rule, timed_head: bool) -> None:
        self.rule = rule
        self.literals: list[ExtAtom] = [b for b in rule.body if isinstance(b, ExtAtom)]
        slots: dict[str, int] = {}
        self.steps: list[Step] = []
        positive = [i for i, lit in enumerate(self.literals) if not lit.negated]
        negative = [i for i, lit in enumerate(self.literals) if lit.negated]
        compares = [b for b in rule.body if isinstance(b, Compare)]

        def drain() -> None:
            progress = True
            while progress:
                progress = False
                for i in list(negative):
                    if self.literals[i].variables() <= slots.keys():
                        self.steps.append(_AntiJoin(i, _builder(literal_pattern(self.literals[i]), slots)))
                        negative.remove(i)
                        progress = True
                for c in list(compares):
                    vs = c.variables()
                    if vs <= slots.keys():
                        self.steps.append(_Filter(_compile_test(c, slots)))
                        compares.remove(c)
                        progress = True
                    elif c.op == "=":
                        for side, other in ((c.left, c.right), (c.right, c.left)):
                            if isinstance(side, Var) and side.name not in slots and _vars(other) <= slots.keys():
                                self.steps.append(_Assign(_compile_expr(other, slots)))
                                slots[side.name] = len(slots)
                                compares.remove(c)
                                progress = True
                                break

        drain()
        while positive:
            best = max(positive, key=lambda i: _bound_score(self.literals[i], slots))
            positive.remove(best)
            self.steps.append(_scan(best, literal_pattern(self.literals[best]), slots))
            drain()
        if negative or compares:  # plan_program's safety check makes this unreachable
            raise AssertionError(f"unsafe rule reached the compiler: {rule}")
        head = rule.head
        self.head_args = _builder(head.atom.args, slots)
        self.head_pred = head.atom.key
        self.head_time: Callable[[tuple], object] | None = None
        self.timed_head = timed_head
        if head.time is not None:
            self.head_time = _compile_expr(head.time, slots)

    def fire(self, rels: Sequence[Rel], now: int) -> set[tuple]:
        """All head tuples derivable from ``rels`` (one per literal) at time ``now``.

        For a timed head predicate the tuple ends with the atom's time.
        """
        batch: list[tuple] = [()]
        for step in self.steps:
            if not batch:
                return set()
            if type(step) is _Scan:
                idx = rels[step.lit].index(step.cols)
                key, out, checks = step.key, step.out, step.checks
                nxt: list[tuple] = []
                for b in batch:
                    matches = idx.get(key(b))
                    if matches:
                        if checks:
                            nxt.extend(b + out(m) for m in matches if all(m[x] == m[y] for x, y in checks))
                        else:
                            nxt.extend(b + out(m) for m in matches)
                batch = nxt
            elif type(step) is _AntiJoin:
                tuples = rels[step.lit].tuples
                full = step.full
                batch = [b for b in batch if full(b) not in tuples]
            elif type(step) is _Filter:
                test = step.test
                batch = [b for b in batch if test(b)]
            else:
                value = step.value  # type: ignore[union-attr]
                nxt = []
                for b in batch:
                    try:
                        nxt.append(b + (value(b),))
                    except _Undefined:
                        pass
                batch = nxt
        args = self.head_args
        if not self.timed_head:
            return {args(b) for b in batch}
        ht = self.head_time
        if ht is None:
            return {args(b) + (now,) for b in batch}
        out_set = set()
        for b in batch:
            try:
                out_set.add(args(b) + (ht(b),))
            except _Undefined:
                pass
        return out_set


def _vars(e: Expr) -> set[str]:
    from chronolog.ir import expr_vars

    return expr_vars(e)


def _bound_score(lit: ExtAtom, slots: dict[str, int]) -> tuple[int, int]:
    pattern = literal_pattern(lit)
    bound = sum(1 for t in pattern if isinstance(t, Const) or t.name in slots)
    return (bound, -len(pattern))


def _builder(terms: Sequence[Term], slots: dict[str, int]) -> Callable[[tuple], tuple]:
    """binding -> tuple of the terms' values (all variables bound)."""
    parts = [(True, slots[t.name]) if isinstance(t, Var) else (False, t.value) for t in terms]
    if all(is_var for is_var, _ in parts):
        return key_getter(tuple(i for _, i in parts))  # type: ignore[misc]
    return lambda b: tuple(b[v] if is_var else v for is_var, v in parts)  # type: ignore[index]


def _scan(lit_index: int, pattern: Sequence[Term], slots: dict[str, int]) -> _Scan:
    bound_cols: list[int] = []
    bound_terms: list[Term] = []
    first_col: dict[str, int] = {}
    checks: list[tuple[int, int]] = []
    new_cols: list[int] = []
    for col, term in enumerate(pattern):
        if isinstance(term, Const) or term.name in slots:
            bound_cols.append(col)
            bound_terms.append(term)
        elif term.name in first_col:
            checks.append((first_col[term.name], col))
        else:
            first_col[term.name] = col
            new_cols.append(col)
    key = _builder(bound_terms, slots)
    for col in new_cols:
        name = pattern[col].name  # type: ignore[union-attr]
        slots[name] = len(slots)
    return _Scan(lit_index, tuple(bound_cols), key, tuple(checks), key_getter(tuple(new_cols)))


def _compile_test(c: Compare, slots: dict[str, int]) -> Callable[[tuple], bool]:
    left = _compile_expr(c.left, slots)
    right = _compile_expr(c.right, slots)
    op = c.op

    def test(b: tuple) -> bool:
        try:
            return _compare(op, left(b), right(b))
        except _Undefined:
            return False

    return test
