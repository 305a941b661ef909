"""A small Prolog solver for RTEC rule bodies and background knowledge.

Why its own: RTEC event descriptions are Prolog, and their bodies mix the
Event Calculus built-ins (served by the evaluator from its fluent store) with
background predicates (``role_of/2``, ``distanceClass/5``) that need
unification, backtracking, ``\\+``, cut with a fall-back clause, ``findall``
and arithmetic.  Terms are those of ``chronolog.lang.prolog``; at run time a
variable is a ``Var`` bound through a trail.  Solutions are produced by
generators: a generator yields once per solution with the bindings in place,
and the caller undoes them (``undo``) to its own mark.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from typing import Any

from chronolog.errors import ChronologError
from chronolog.lang.prolog import PVar, term_text

Term = Any


class Var:
    __slots__ = ("ref",)

    def __init__(self) -> None:
        self.ref: Term = None


class Ivs:
    """A non-empty list of maximal intervals as a Prolog value (the empty one is ``[]``)."""

    __slots__ = ("pairs",)

    def __init__(self, pairs: list) -> None:
        self.pairs = pairs

    def __eq__(self, other: object) -> bool:
        return isinstance(other, Ivs) and self.pairs == other.pairs

    __hash__ = None  # type: ignore[assignment]


def ivs_term(pairs: list) -> Term:
    return Ivs(pairs) if pairs else "[]"


def deref(t: Term) -> Term:
    while type(t) is Var:
        r = t.ref
        if r is None:
            return t
        t = r
    return t


def resolve(t: Term) -> Term:
    """``t`` with every bound variable replaced by its value."""
    t = deref(t)
    if type(t) is tuple:
        return tuple(resolve(a) for a in t)
    return t


def is_ground(t: Term) -> bool:
    t = deref(t)
    if type(t) is Var:
        return False
    if type(t) is tuple:
        return all(is_ground(a) for a in t[1:])
    return True


class Slot:
    """Variable number ``i`` of a compiled clause."""

    __slots__ = ("i",)

    def __init__(self, i: int) -> None:
        self.i = i


def compile_term(t: Term, slots: dict) -> Term:
    """A read term with its ``PVar``s as numbered ``Slot``s (``_`` each its own)."""
    if type(t) is PVar:
        if t.name == "_":
            s = Slot(len(slots))
            slots[object()] = s
            return s
        if t not in slots:
            slots[t] = Slot(len(slots))
        return slots[t]
    if type(t) is tuple:
        return tuple(compile_term(a, slots) if i else a for i, a in enumerate(t))
    return t


def has_slot(t: Term) -> bool:
    if type(t) is Slot:
        return True
    return type(t) is tuple and any(has_slot(a) for a in t[1:])


def inst(t: Term, vs: list) -> Term:
    tt = type(t)
    if tt is Slot:
        return vs[t.i]
    if tt is tuple:
        return tuple([t[0], *[inst(a, vs) for a in t[1:]]])
    return t


class Rule:
    """A compiled clause: head and body goals over slots."""

    __slots__ = ("head", "body", "nvars", "loc", "_plan")

    def __init__(self, head: Term, body: list, nvars: int, loc: Any) -> None:
        self.head, self.body, self.nvars, self.loc = head, body, nvars, loc
        self._plan: Any = None  # the evaluator's body order (chronolog.rtec.evaluator._plan)

    def fresh(self) -> tuple[Term, list]:
        vs = [Var() for _ in range(self.nvars)]
        return inst(self.head, vs), [inst(g, vs) for g in self.body]


def conjuncts(body: Term) -> list:
    out = []
    while isinstance(body, tuple) and body[0] == "," and len(body) == 3:
        out.append(body[1])
        body = body[2]
    if body != "true":
        out.append(body)
    return out


def compile_clause(term: Term, loc: Any) -> Rule:
    slots: dict = {}
    if isinstance(term, tuple) and term[0] == ":-" and len(term) == 3:
        head = compile_term(term[1], slots)
        body = [compile_term(g, slots) for g in conjuncts(term[2])]
    else:
        head, body = compile_term(term, slots), []
    return Rule(head, body, len(slots), loc)


def key_of(t: Term) -> tuple[str, int]:
    t = deref(t)
    if type(t) is tuple:
        return (t[0], len(t) - 1)
    return (t, 0) if type(t) is str else ("", -1)


class SolveError(ChronologError):
    pass


def _eval(t: Term) -> int | float:
    """Arithmetic of ``is`` and comparisons."""
    t = deref(t)
    if type(t) in (int, float):
        return t
    if type(t) is tuple:
        op = t[0]
        if len(t) == 3:
            a, b = _eval(t[1]), _eval(t[2])
            if op == "+":
                return a + b
            if op == "-":
                return a - b
            if op == "*":
                return a * b
            if op == "/":
                if isinstance(a, int) and isinstance(b, int) and b and a % b == 0:
                    return a // b
                return a / b
            if op == "//":
                return int(a / b)
            if op == "mod":
                return a % b
            if op == "rem":
                return a - b * int(a / b)
            if op == "min":
                return min(a, b)
            if op == "max":
                return max(a, b)
            if op in ("**", "^"):
                return a ** b
        elif len(t) == 2:
            a = _eval(t[1])
            if op == "-":
                return -a
            if op == "+":
                return a
            if op == "abs":
                return abs(a)
            if op == "sqrt":
                return a ** 0.5
    if type(t) is Var:
        raise SolveError("error: arithmetic on an unbound variable")
    raise SolveError(f"error: {term_text(resolve(t))} is not an arithmetic expression")


def _order_key(t: Term) -> tuple:
    """Prolog's standard order of terms: Var < Number < Atom < Compound."""
    t = deref(t)
    if type(t) is Var:
        return (0, id(t))
    if type(t) in (int, float):
        return (1, t)
    if type(t) is str:
        return (3, t)
    if type(t) is tuple:
        return (4, len(t) - 1, t[0], tuple(_order_key(a) for a in t[1:]))
    return (5, 0)


COMPARE: dict[str, Callable[[Any, Any], bool]] = {
    "<": lambda a, b: a < b, ">": lambda a, b: a > b, "=<": lambda a, b: a <= b, ">=": lambda a, b: a >= b,
    "=:=": lambda a, b: a == b, "=\\=": lambda a, b: a != b,
}
ORDER: dict[str, Callable[[Any, Any], bool]] = {
    "@<": lambda a, b: a < b, "@>": lambda a, b: a > b, "@=<": lambda a, b: a <= b, "@>=": lambda a, b: a >= b,
    "==": lambda a, b: a == b, "\\==": lambda a, b: a != b,
}
CONTROL = {(",", 2), ("\\+", 1), ("!", 0), (";", 2), ("->", 2), ("=", 2), ("\\=", 2), ("is", 2), ("true", 0),
           ("fail", 0), ("false", 0), ("findall", 3), ("length", 2), ("member", 2), ("not", 1)} | \
          {(op, 2) for op in COMPARE} | {(op, 2) for op in ORDER}

Builtin = Callable[["Solver", tuple], Iterator[None]]


class Solver:
    """Clauses by (name, arity), built-ins by (name, arity), one trail."""

    def __init__(self, clauses: dict[tuple[str, int], list[Rule]], builtins: dict[tuple[str, int], Builtin]) -> None:
        self.clauses = clauses
        self.builtins = builtins
        self.trail: list[Var] = []
        self.pure = pure_predicates(clauses, set(builtins))
        self.memo: dict = {}

    # ------------------------------------------------------------ unification

    def bind(self, v: Var, t: Term) -> None:
        v.ref = t
        self.trail.append(v)

    def undo(self, mark: int) -> None:
        trail = self.trail
        while len(trail) > mark:
            trail.pop().ref = None

    def unify(self, a: Term, b: Term) -> bool:
        a, b = deref(a), deref(b)
        if a is b:
            return True
        ta, tb = type(a), type(b)
        if ta is Var:
            self.bind(a, b)
            return True
        if tb is Var:
            self.bind(b, a)
            return True
        if ta is tuple:
            if tb is not tuple or len(a) != len(b) or a[0] != b[0]:
                return False
            for x, y in zip(a[1:], b[1:]):
                if not self.unify(x, y):
                    return False
            return True
        if ta is Ivs or tb is Ivs:
            return a == b
        return a == b and (ta is tb or (ta in (int, float) and tb in (int, float) and False))

    # ------------------------------------------------------------ solving

    def solve(self, goal: Term, depth: int = 0) -> Iterator[None]:
        """Each solution of one goal (bindings in place while suspended)."""
        goal = deref(goal)
        if type(goal) is Var:
            raise SolveError("error: a goal is an unbound variable")
        name = goal[0] if type(goal) is tuple else goal
        arity = len(goal) - 1 if type(goal) is tuple else 0
        if depth > 2000:
            raise SolveError(f"error: recursion deeper than 2000 calls in {name}/{arity}")
        b = self.builtins.get((name, arity))
        if b is not None:
            yield from b(self, goal)
            return
        if (name, arity) in CONTROL:
            yield from self._control(name, goal, depth)
            return
        rules = self.clauses.get((name, arity))
        if rules is None:
            raise SolveError(f"error: unknown predicate {name}/{arity}")
        if (name, arity) in self.pure:
            yield from self._memo(rules, goal, depth)
            return
        yield from self.solve_rules(rules, goal, depth)

    def _memo(self, rules: list[Rule], goal: Term, depth: int) -> Iterator[None]:
        """A pure predicate's answers for a call pattern, computed once (the examples call
        ``distanceClass/5`` on the same coordinates again and again)."""
        key = _canonical(goal)
        answers = self.memo.get(key)
        if answers is None:
            answers = []
            mark = len(self.trail)
            for _ in self.solve_rules(rules, goal, depth):
                answers.append(resolve(goal))
            self.undo(mark)
            if any(not is_ground(a) for a in answers):
                yield from self.solve_rules(rules, goal, depth)
                return
            if len(self.memo) > 500_000:
                self.memo.clear()
            self.memo[key] = answers
        mark = len(self.trail)
        for a in answers:
            if self.unify(goal, a):
                yield
            self.undo(mark)

    def solve_rules(self, rules: list[Rule], goal: Term, depth: int = 0) -> Iterator[None]:
        """``goal`` against these clauses (a cut in one stops the later ones)."""
        mark = len(self.trail)
        for rule in rules:
            if rule.nvars == 0 and not rule.body:
                if self.unify(rule.head, goal):
                    yield
                self.undo(mark)
                continue
            vs = [Var() for _ in range(rule.nvars)]
            if self.unify(inst(rule.head, vs), goal):  # the body is copied only for a matching head
                cut = [False]
                yield from self.body([inst(g, vs) for g in rule.body], 0, cut, depth + 1)
                self.undo(mark)
                if cut[0]:
                    return
            else:
                self.undo(mark)

    def body(self, goals: list, i: int, cut: list, depth: int) -> Iterator[None]:
        if i == len(goals):
            yield
            return
        g = goals[i]
        if g == "!":
            yield from self.body(goals, i + 1, cut, depth)
            cut[0] = True
            return
        for _ in self.solve(g, depth):
            yield from self.body(goals, i + 1, cut, depth)
            if cut[0]:
                return

    def once(self, goal: Term) -> bool:
        mark = len(self.trail)
        for _ in self.solve(goal):
            self.undo(mark)
            return True
        return False

    def _control(self, name: str, g: tuple | str, depth: int) -> Iterator[None]:
        mark = len(self.trail)
        if name == ",":
            yield from self.body([g[1], g[2]], 0, [False], depth)
        elif name in ("\\+", "not"):
            found = False
            for _ in self.solve(g[1], depth + 1):
                found = True
                break
            self.undo(mark)
            if not found:
                yield
        elif name == ";":
            left = deref(g[1])
            if type(left) is tuple and left[0] == "->" and len(left) == 3:
                cond_true = False
                for _ in self.solve(left[1], depth + 1):
                    cond_true = True
                    break
                if cond_true:
                    yield from self.solve(left[2], depth + 1)
                else:
                    self.undo(mark)
                    yield from self.solve(g[2], depth + 1)
            else:
                yield from self.solve(g[1], depth + 1)
                self.undo(mark)
                yield from self.solve(g[2], depth + 1)
        elif name == "->":
            for _ in self.solve(g[1], depth + 1):
                yield from self.solve(g[2], depth + 1)
                break
        elif name == "!":
            yield  # a cut inside a nested control construct: local
        elif name == "true":
            yield
        elif name in ("fail", "false"):
            return
        elif name == "=":
            if self.unify(g[1], g[2]):
                yield
        elif name == "\\=":
            ok = not self.unify(g[1], g[2])
            self.undo(mark)
            if ok:
                yield
        elif name == "is":
            if self.unify(g[1], _eval(g[2])):
                yield
        elif name in COMPARE:
            if COMPARE[name](_eval(g[1]), _eval(g[2])):
                yield
        elif name in ORDER:
            if ORDER[name](_order_key(g[1]), _order_key(g[2])):
                yield
        elif name == "findall":
            results = []
            for _ in self.solve(g[2], depth + 1):
                results.append(resolve(g[1]))
            self.undo(mark)
            if self.unify(g[3], to_list(results)):
                yield
        elif name == "length":
            items = from_list(g[1])
            if items is None:
                raise SolveError("error: length/2 of a partial list is not supported")
            if self.unify(g[2], len(items)):
                yield
        elif name == "member":
            items = from_list(g[2])
            if items is None:
                raise SolveError("error: member/2 of a partial list is not supported")
            for item in items:
                if self.unify(g[1], item):
                    yield
                self.undo(mark)
        self.undo(mark)


def _canonical(t: Term, names: dict | None = None) -> Term:
    """``t`` resolved, its unbound variables numbered by first appearance (a memo key)."""
    names = {} if names is None else names
    t = deref(t)
    if type(t) is Var:
        return ("$VAR", names.setdefault(id(t), len(names)))
    if type(t) is tuple:
        return tuple([t[0], *[_canonical(a, names) for a in t[1:]]])
    return t


def pure_predicates(clauses: dict[tuple[str, int], list[Rule]], impure: set) -> set:
    """Background predicates whose answers depend only on the program (no built-in served by
    the evaluator, no dynamic domain, nothing that calls one): safe to memoise."""
    def calls(rule: Rule) -> list:
        out: list = []

        def walk(g: Term) -> None:
            if isinstance(g, tuple):
                k = (g[0], len(g) - 1)
                if k in ((",", 2), (";", 2), ("->", 2), ("\\+", 1), ("not", 1)):
                    for a in g[1:]:
                        walk(a)
                elif k == ("findall", 3):
                    walk(g[2])
                else:
                    out.append(k)
            elif isinstance(g, str):
                out.append((g, 0))
            elif isinstance(g, Slot):
                out.append(("$call", 0))
        for g in rule.body:
            walk(g)
        return out

    bad = set(impure) | {("$call", 0)}
    changed = True
    while changed:
        changed = False
        for key, rules in clauses.items():
            if key not in bad and any(k in bad or (k not in clauses and k not in CONTROL) for r in rules for k in calls(r)):
                bad.add(key)
                changed = True
    return {k for k in clauses if k not in bad and k != ("grounding", 1)}


def to_list(items: list) -> Term:
    out: Term = "[]"
    for x in reversed(items):
        out = (".", x, out)
    return out


def from_list(t: Term) -> list | None:
    out = []
    t = deref(t)
    while type(t) is tuple and t[0] == "." and len(t) == 3:
        out.append(t[1])
        t = deref(t[2])
    if t == "[]":
        return out
    if type(t) is Ivs:  # an interval list given where a list is expected
        return list(t.pairs)
    return None
