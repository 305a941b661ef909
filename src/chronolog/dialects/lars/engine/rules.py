"""Rules compiled into set-at-a-time join pipelines.

A rule body becomes a fixed sequence of steps over a batch of variable
bindings (tuples of values, one slot per variable): *scan* a relation
through an index on the already bound columns, *anti-join* a negated
literal, *filter* by a comparison, *assign* a variable.  The relations are
handed in at evaluation time, so one compiled rule serves every time point
and carries no state of its own.
"""

from __future__ import annotations

from collections.abc import Callable, Collection, Iterable, Sequence
from operator import itemgetter

from chronolog.core.records import record
from chronolog.dialects.lars.engine.relation import Rel, index_key, key_getter
from chronolog.dialects.lars.ir import Compare, Const, Expr, ExtAtom, Op, Rule, Term, Var, expr_vars
from chronolog.dialects.lars.plan import ANONYMOUS


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


def compare(op: str, x: object, y: object) -> bool:
    """A comparison of two values as every evaluation mode reads it: ``=``/``!=`` on the value
    and its type, the order comparisons on integers only (clingo's translation, ``asp._compare``,
    makes them false elsewhere too)."""
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


@record
class _Scan:
    lit: int  # index into the rule's literal list
    cols: tuple[int, ...]  # bound columns, looked up in an index
    key: Callable[[tuple], tuple]  # binding -> key
    checks: tuple[tuple[int, int], ...]  # (col, col) pairs that must be equal (repeated free vars)
    out: Callable[[tuple], tuple]  # relation tuple -> values of the newly bound variables
    whole: bool = False  # nothing bound yet, every column a new variable: a tuple is its own binding
    # (bindings, index lookup ``get(key, ())`` | all tuples) -> extended bindings, generated
    join: Callable = None  # type: ignore[assignment]
    # the same on the old state: (bindings, get, added tuples to skip, lookup of removed ones)
    join_old: Callable = None  # type: ignore[assignment]


@record
class _AntiJoin:
    lit: int
    full: Callable[[tuple], tuple]  # binding -> the complete tuple that must be absent


@record
class _NotExists:
    """``not p(X, _)``: no tuple matches the named columns."""

    lit: int
    cols: tuple[int, ...]
    key: Callable[[tuple], tuple]


@record
class _Filter:
    test: Callable[[tuple], bool]
    # The whole step as one generated list comprehension (None: use ``test``).
    keep: Callable[[list[tuple]], list[tuple]] | None = None
    cond: str | None = None  # its condition's source, for fusing consecutive filters


@record
class _Assign:
    value: Callable[[tuple], object]


Step = _Scan | _AntiJoin | _NotExists | _Filter | _Assign


@record
class _Pipeline:
    steps: list[Step]
    head_args: Callable[[tuple], tuple]
    head_time: Callable[[tuple], object] | None
    head_is_binding: bool = False  # the head tuple is the binding itself
    # bindings -> head tuples as one generated comprehension (None: the general path)
    build: Callable[[list[tuple]], list[tuple]] | None = None


class CompiledRule:
    """One rule as join pipelines; ``literals`` are its extended atoms in body order.

    ``fire`` runs the whole body; ``fire_delta`` runs it starting from the
    changes of one literal (the other literals seen before or after this time
    point's changes), which is what incremental maintenance needs.
    """

    def __init__(self, rule: Rule, timed_head: bool) -> None:
        self.rule = rule
        self.literals: list[ExtAtom] = [b for b in rule.body if isinstance(b, ExtAtom)]
        self.head_pred = rule.head.atom.key
        self.timed_head = timed_head
        # A plain head of a timed predicate stamps atoms with the evaluation time.
        self.uses_now = timed_head and rule.head.time is None
        # Counting needs one indicator tuple per negated literal; ``not p(_)`` has none.
        self.countable = not any(
            lit.negated and ANONYMOUS in lit.variables() for lit in self.literals
        )
        self.positive = [i for i, lit in enumerate(self.literals) if not lit.negated]
        self.negated = tuple(lit.negated for lit in self.literals)  # (read per change on the hot path)
        self.full = self._compile(None)
        self.delta = [self._compile(i) for i in range(len(self.literals))]
        # Each head tuple comes from one body match only: the head names every
        # variable of the positive literals (so counting derivations is not needed).
        head_vars = {x.name for x in rule.head.atom.args if isinstance(x, Var)}
        if isinstance(rule.head.time, Var):
            head_vars.add(rule.head.time.name)
        body_vars = {v for lit in self.literals if not lit.negated for v in lit.variables()}
        self.injective = body_vars <= head_vars and ANONYMOUS not in body_vars

    def _compile(self, first: int | None) -> _Pipeline:
        rule = self.rule
        slots: dict[str, int] = {}
        steps: list[Step] = []
        literals = self.literals
        positive = [i for i, lit in enumerate(literals) if not lit.negated and i != first]
        negative = [i for i, lit in enumerate(literals) if lit.negated and i != first]
        compares = [b for b in rule.body if isinstance(b, Compare)]

        def drain() -> None:
            progress = True
            while progress:
                progress = False
                for i in list(negative):
                    if literals[i].variables() - {ANONYMOUS} <= slots.keys():
                        steps.append(_anti_join(i, literal_pattern(literals[i]), slots))
                        negative.remove(i)
                        progress = True
                for c in list(compares):
                    if c.variables() <= slots.keys():
                        steps.append(_filter(c, slots))
                        compares.remove(c)
                        progress = True
                    elif c.op == "=":
                        for side, other in ((c.left, c.right), (c.right, c.left)):
                            if isinstance(side, Var) and side.name not in slots and expr_vars(other) <= slots.keys():
                                steps.append(_Assign(_compile_expr(other, slots)))
                                slots[side.name] = len(slots)
                                compares.remove(c)
                                progress = True
                                break

        if first is not None:
            steps.append(_scan(first, literal_pattern(literals[first]), slots))
        drain()
        while positive:
            best = max(positive, key=lambda i: _bound_score(literals[i], slots))
            positive.remove(best)
            steps.append(_scan(best, literal_pattern(literals[best]), slots))
            drain()
        if negative or compares:  # plan_program's safety check makes this unreachable
            raise AssertionError(f"unsafe rule reached the compiler: {rule}")
        steps = _fuse_filters(steps)
        head = rule.head
        head_time = _compile_expr(head.time, slots) if head.time is not None else None
        terms = head.atom.args
        # The head tuple (with its time last for a timed head) is the binding itself.
        if self.timed_head:
            full_terms = (*terms, head.time) if head.time is not None else None
        else:
            full_terms = terms
        is_binding = (
            full_terms is not None
            and len(full_terms) == len(slots)
            and all(isinstance(x, Var) and slots[x.name] == i for i, x in enumerate(full_terms))
        )
        pipe = _Pipeline(steps, _builder(terms, slots), head_time, is_binding)
        pipe.build = _head_builder(terms, head.time, slots, self.timed_head)
        return pipe

    def indexes(self, pipe: _Pipeline) -> list[tuple[int, tuple[int, ...]]]:
        """The (literal, columns) indexes a pipeline looks tuples up in."""
        return [(s.lit, s.cols) for s in pipe.steps if type(s) in (_Scan, _NotExists) and s.cols]  # type: ignore[union-attr]

    def fire(self, rels: Sequence[Rel], now: int) -> list[tuple]:
        """Head tuples of every body match in ``rels`` (one per literal), one per match.

        For a timed head predicate the tuple ends with the atom's time.
        """
        return self._heads(self.full, _run(self.full.steps, [()], rels, None, -1), now)

    def fire_delta(
        self, rels: Sequence[Rel], now: int, i: int, changed: Iterable[tuple], *, split: bool = True
    ) -> Collection[tuple]:
        """Head tuples of the matches that use one of ``changed`` (tuples of literal ``i``).
        (``changed`` itself when its tuples are the heads: do not change the result.)

        Literals before ``i`` are read as they are now, literals after it as
        they were before this time point's changes (``Rel.was_present``), so that
        summing over every ``i`` counts each new or lost match exactly once.
        ``split=False`` reads them all as they are now (semi-naive rounds).
        """
        pipe = self.delta[i]
        first = pipe.steps[0]
        assert type(first) is _Scan
        if first.whole:
            if len(pipe.steps) == 1 and pipe.head_is_binding:
                return changed  # type: ignore[return-value]  # the changed tuples are the heads
            batch = list(changed)
        else:
            batch = _match(first, (), changed)
        return self._heads(pipe, _run(pipe.steps[1:], batch, rels, i if split else None, i), now)

    def _heads(self, pipe: _Pipeline, batch: list[tuple], now: int) -> list[tuple]:
        if pipe.head_is_binding:
            return batch
        if pipe.build is not None:
            return pipe.build(batch)
        args = pipe.head_args
        if not self.timed_head:
            return list(map(args, batch))
        ht = pipe.head_time
        if ht is None:
            return [args(b) + (now,) for b in batch]
        out: list[tuple] = []
        for b in batch:
            try:
                out.append(args(b) + (ht(b),))
            except _Undefined:
                pass
        return out


_COMPILED: dict[tuple[int, bool], CompiledRule] = {}
_COMPILED_MAX = 4096


def compiled_rule(rule: Rule, timed_head: bool) -> CompiledRule:
    """``CompiledRule(rule, timed_head)``, made once per rule object: a compiled
    rule carries no state, and engines are rebuilt at every replay and every
    restore from a checkpoint (12 ms for a program of 100 rules).  The cache
    holds the rule, so its id is not reused while cached; it is emptied
    when full (processes that plan many programs: tests, services)."""
    key = (id(rule), timed_head)
    cr = _COMPILED.get(key)
    if cr is None or cr.rule is not rule:
        if len(_COMPILED) >= _COMPILED_MAX:
            _COMPILED.clear()
        cr = _COMPILED[key] = CompiledRule(rule, timed_head)
    return cr


def _match(step: _Scan, b: tuple, candidates: Iterable[tuple]) -> list[tuple]:
    """Extend binding ``b`` with every candidate tuple matching the scan's bound columns."""
    key = step.key(b)
    get = index_key(step.cols)
    out, checks = step.out, step.checks
    return [
        b + out(m)
        for m in candidates
        if get(m) == key and (not checks or all(m[x] == m[y] for x, y in checks))
    ]


def _run(steps: Sequence[Step], batch: list[tuple], rels: Sequence[Rel], delta_lit: int | None, split: int) -> list[tuple]:
    """Push a batch of bindings through ``steps``.

    With ``delta_lit`` set, literals with an index above ``split`` are read in
    their state before this time point's changes.
    """
    for step in steps:
        if not batch:
            return batch
        if type(step) is _Scan:
            rel = rels[step.lit]
            if delta_lit is not None and step.lit > split and rel.changed:
                if step.cols:  # the state before this time point's changes
                    batch = step.join_old(batch, rel.index(step.cols).get, rel.plus, rel.minus_get(step.cols))
                else:
                    batch = step.join(batch, (rel.tuples - rel.plus) | rel.minus)
            elif not step.cols:  # nothing bound: every tuple matches (no index on no columns)
                batch = step.join(batch, rel.tuples)
            else:
                batch = step.join(batch, rel.index(step.cols).get)
        elif type(step) is _AntiJoin:
            rel = rels[step.lit]
            full = step.full
            if delta_lit is not None and step.lit > split and rel.changed:
                was = rel.was_present
                batch = [b for b in batch if not was(full(b))]
            else:
                tuples = rel.tuples
                batch = [b for b in batch if full(b) not in tuples]
        elif type(step) is _NotExists:
            idx = rels[step.lit].index(step.cols)
            key = step.key
            batch = [b for b in batch if not idx.get(key(b))]
        elif type(step) is _Filter:
            if step.keep is not None:
                batch = step.keep(batch)
            else:
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
    return batch


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


def _key_builder(terms: Sequence[Term], slots: dict[str, int]) -> Callable[[tuple], object]:
    """binding -> index key of the terms' values (``relation.index_key``: the
    value itself for one term)."""
    if len(terms) != 1:
        return _builder(terms, slots)
    (term,) = terms
    if isinstance(term, Var):
        return itemgetter(slots[term.name])
    value = term.value  # type: ignore[union-attr]
    return lambda b: value


def _anti_join(lit_index: int, pattern: Sequence[Term], slots: dict[str, int]) -> _AntiJoin | _NotExists:
    if not any(isinstance(t, Var) and t.name == ANONYMOUS for t in pattern):
        return _AntiJoin(lit_index, _builder(pattern, slots))
    named = [(c, t) for c, t in enumerate(pattern) if not (isinstance(t, Var) and t.name == ANONYMOUS)]
    return _NotExists(lit_index, tuple(c for c, _ in named), _key_builder([t for _, t in named], slots))


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
    key = _key_builder(bound_terms, slots)
    whole = not slots and not bound_cols and not checks
    slots_before = dict(slots)
    for col in new_cols:
        name = pattern[col].name  # type: ignore[union-attr]
        slots[name] = len(slots)
    scan = _Scan(lit_index, tuple(bound_cols), key, tuple(checks), key_getter(tuple(new_cols)), whole)
    scan.join, scan.join_old = _join_code(bound_terms, new_cols, checks, slots_before)
    return scan


# ---------------------------------------------------------------- generated code
#
# Filters and timed heads run once per binding; as closures they cost several
# Python calls each.  For the common shapes (variables and constants, no
# arithmetic) they are generated as one list comprehension over the batch,
# with exactly the semantics of ``_compare`` (integers and strings never equal,
# order only between integers).


def _term_src(e: Expr, slots: dict[str, int]) -> tuple[str, str] | None:
    """Source and kind ("var", "int", "str") of a variable or constant; None otherwise."""
    if isinstance(e, Var):
        return f"b[{slots[e.name]}]", "var"
    if isinstance(e, Const):
        if type(e.value) is int:
            return repr(e.value), "int"
        if type(e.value) is str:
            return repr(e.value), "str"
    return None


def _cond_src(c: Compare, slots: dict[str, int]) -> str | None:
    left, right = _term_src(c.left, slots), _term_src(c.right, slots)
    if left is None or right is None:
        return None
    (x, kx), (y, ky) = left, right
    if c.op in ("=", "!="):
        if kx != "var" and ky != "var":
            same = kx == ky and x == y
            eq = "True" if same else "False"
        elif kx == "int" or ky == "int":
            var, const = (y, x) if kx == "int" else (x, y)
            eq = f"({var} == {const} and type({var}) is int)"
        elif kx == "str" or ky == "str":
            eq = f"{x} == {y}"
        else:
            eq = f"({x} == {y} and type({x}) is type({y}))"
        return eq if c.op == "=" else f"not {eq}"
    if kx == "str" or ky == "str":
        return "False"
    checks = [f"type({v}) is int" for v, k in ((x, kx), (y, ky)) if k == "var"]
    return "(" + " and ".join(checks + [f"{x} {c.op} {y}"]) + ")"


_GENERATED: dict[str, Callable] = {}


def _generate(source: str) -> Callable:
    """The function defined by ``source``, made once per source: a generated
    function and its globals refer to each other, and engines are rebuilt
    at every replay, so making it anew would leave a cycle each time."""
    f = _GENERATED.get(source)
    if f is None:
        scope: dict = {}
        exec(source, scope)  # noqa: S102 (generated from the rule's own terms)
        f = _GENERATED[source] = scope["f"]
    return f


def _filter(c: Compare, slots: dict[str, int]) -> _Filter:
    cond = _cond_src(c, slots)
    keep = _generate(f"def f(batch):\n    return [b for b in batch if {cond}]") if cond else None
    return _Filter(_compile_test(c, slots), keep, cond)


def _fuse_filters(steps: list) -> list:
    """Consecutive generated filters become one comprehension."""
    out: list = []
    for step in steps:
        prev = out[-1] if out else None
        if type(step) is _Filter and type(prev) is _Filter and step.cond and prev.cond:
            cond = f"{prev.cond} and {step.cond}"
            first, second = prev.test, step.test
            keep = _generate(f"def f(batch):\n    return [b for b in batch if {cond}]")
            out[-1] = _Filter(lambda b, first=first, second=second: first(b) and second(b), keep, cond)
        else:
            out.append(step)
    return out


def _join_code(
    bound: Sequence[Term], new_cols: Sequence[int], checks: Sequence[tuple[int, int]], slots: dict[str, int]
) -> tuple[Callable, Callable | None]:
    """A scan step as one nested comprehension: every binding extended with the
    new variables of every matching tuple (looked up by the bound columns);
    and the same on the state before this time point's changes (the current
    matches not added since, and the removed ones)."""
    out = "(" + "".join(f"m[{c}], " for c in new_cols) + ")"
    cond = " and ".join(f"m[{x}] == m[{y}]" for x, y in checks)
    test = f" if {cond}" if cond else ""
    if not bound:
        return _generate(f"def f(batch, tuples):\n    return [b + {out} for b in batch for m in tuples{test}]"), None
    parts = []
    for term in bound:
        src = _term_src(term, slots)
        if src is None:  # a constant of another type: compare as the closures do
            src = (repr(term.value), "") if isinstance(term, Const) else (f"b[{slots[term.name]}]", "")  # type: ignore[union-attr]
        parts.append(src[0])
    key = parts[0] if len(parts) == 1 else "(" + "".join(f"{p}, " for p in parts) + ")"  # as relation.index_key
    join = _generate(f"def f(batch, get):\n    return [b + {out} for b in batch for m in get({key}, ()){test}]")
    kept = f" if m not in plus and {cond}" if cond else " if m not in plus"
    join_old = _generate(
        "def f(batch, get, plus, removed):\n"
        f"    out = [b + {out} for b in batch for m in get({key}, ()){kept}]\n"
        "    if removed is not None:\n"
        f"        out += [b + {out} for b in batch for m in removed({key}, ()){test}]\n"
        "    return out"
    )
    return join, join_old


def _head_builder(
    terms: Sequence[Term], time: Expr | None, slots: dict[str, int], timed: bool
) -> Callable[[list[tuple]], list[tuple]] | None:
    """bindings -> head tuples for a head of variables and constants (with its
    time last for a timed head)."""
    if timed and time is None:
        return None
    parts = [_term_src(x, slots) for x in ((*terms, time) if timed else terms)]
    if any(p is None for p in parts):
        return None
    items = "".join(f"{p[0]}, " for p in parts)  # type: ignore[index]
    return _generate(f"def f(batch):\n    return [({items}) for b in batch]")


def _compile_test(c: Compare, slots: dict[str, int]) -> Callable[[tuple], bool]:
    left = _compile_expr(c.left, slots)
    right = _compile_expr(c.right, slots)
    op = c.op

    def test(b: tuple) -> bool:
        try:
            return compare(op, left(b), right(b))
        except _Undefined:
            return False

    return test
