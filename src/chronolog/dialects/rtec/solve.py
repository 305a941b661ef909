"""A small Prolog solver for RTEC rule bodies and background knowledge.

Why its own: RTEC event descriptions are Prolog, and their bodies mix the
Event Calculus built-ins (served by the evaluator from its fluent store) with
background predicates (``role_of/2``, ``distanceClass/5``) that need
unification, backtracking, ``\\+``, cut with a fall-back clause, ``findall``
and arithmetic.  Terms are those of ``chronolog.dialects.rtec.prolog``; at run time a
variable is a ``Var`` bound through a trail.  Solutions are produced by
generators: a generator yields once per solution with the bindings in place,
and the caller undoes them (``undo``) to its own mark.

This module is the interpreter: unification, the dispatch of a goal, clause
resolution with cut, the control constructs and list built-ins, and which
background predicates are pure.  Its companions: ``terms.py`` (run-time terms,
compiled clauses), ``arith.py`` (arithmetic, the order of terms), ``runner.py``
(clause bodies compiled to Python) and ``memo.py`` (the answers of pure
predicates, kept per call pattern; ``Solver`` derives its methods).
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from typing import Any

from chronolog.dialects.rtec.arith import COMPARE, ORDER, evaluate, order_key
from chronolog.dialects.rtec.memo import Memo
from chronolog.dialects.rtec.runner import compile_runner
from chronolog.dialects.rtec.terms import ONE, Rule, Slot, SolveError, Term, Var, deref, from_list, resolve, to_list

CONTROL = {(",", 2), ("\\+", 1), ("!", 0), (";", 2), ("->", 2), ("=", 2), ("\\=", 2), ("is", 2), ("true", 0),
           ("fail", 0), ("false", 0), ("findall", 3), ("length", 2), ("member", 2), ("not", 1)} | \
          {(op, 2) for op in COMPARE} | {(op, 2) for op in ORDER}

Builtin = Callable[["Solver", tuple], Iterator[None]]
_DONE = object()


class Solver(Memo):
    """Clauses by (name, arity), built-ins by (name, arity), one trail.

    ``solve`` returns an iterable of the goal's solutions (a generator, or a tuple for a
    deterministic goal).  Bindings made for a solution stay while it is current; whoever tries
    alternatives undoes to its own trail mark first, so a goal whose iterable is exhausted may
    leave bindings for its caller to undo (as every caller here does)."""

    def __init__(self, clauses: dict[tuple[str, int], list[Rule]], builtins: dict[tuple[str, int], Builtin]) -> None:
        self.clauses = clauses
        self.builtins = builtins
        self.trail: list[Var] = []
        self.pure = pure_predicates(clauses, set(builtins))
        self.memo: dict = {}  # predicate -> call pattern -> answers
        self.runners: dict[int, tuple[list, Any]] = {}  # id(goals) -> (goals, runner(goals))
        self.memo_size = 0
        self.memo_stats: dict = {}  # predicate -> [calls, hits]; a predicate rarely asked twice is not memoised
        self.compiled: dict = {}  # predicate -> its answers as a function of its bound arguments (rtec/pure.py) or None
        # the evaluator's own compilation of a goal (over slots) into a runner line, or None
        self.inline: Callable[[Term, Callable[[Term], str], list], str | None] | None = None
        self.control = control = {(",", 2): self._and, ("\\+", 1): self._neg, ("not", 1): self._neg, ("!", 0): self._true,
                   (";", 2): self._or, ("->", 2): self._then, ("true", 0): self._true, ("fail", 0): self._fail,
                   ("false", 0): self._fail, ("=", 2): self._eq, ("\\=", 2): self._neq, ("is", 2): self._is,
                   ("findall", 3): self._findall, ("length", 2): self._length, ("member", 2): self._member}
        for op in COMPARE:
            control[(op, 2)] = self._compare
        for op in ORDER:
            control[(op, 2)] = self._order
        self.dispatch: dict[tuple[str, int], tuple[int, Any]] = {}
        for key, rules in clauses.items():
            self.dispatch[key] = (2 if key in self.pure else 3, rules)
        for key, fn in control.items():
            self.dispatch[key] = (1, fn)
        for key, fn in builtins.items():
            self.dispatch[key] = (0, fn)

    # ------------------------------------------------------------ unification

    def bind(self, v: Var, t: Term) -> None:
        v.ref = t
        self.trail.append(v)

    def undo(self, mark: int) -> None:
        trail = self.trail
        if len(trail) > mark:
            for v in trail[mark:]:
                v.ref = None
            del trail[mark:]

    def unify_args(self, pattern: tuple, args: tuple) -> bool:
        """Unify each term of ``pattern`` with the ground term at its place in ``args``
        (a fluent's arguments against a stored instance's: the hot case of ``unify``,
        an unbound variable just bound, an atom or number just compared)."""
        trail = self.trail
        for p, x in zip(pattern, args):
            while type(p) is Var:
                r = p.ref
                if r is None:
                    break
                p = r
            tp = type(p)
            if tp is Var:
                p.ref = x
                trail.append(p)
            elif tp is tuple or type(x) is tuple:
                if not self.unify(p, x):
                    return False
            elif p != x or tp is not type(x):
                return False
        return True

    def unify(self, a: Term, b: Term) -> bool:
        while type(a) is Var:
            r = a.ref
            if r is None:
                break
            a = r
        while type(b) is Var:
            r = b.ref
            if r is None:
                break
            b = r
        if a is b:
            return True
        ta, tb = type(a), type(b)
        if ta is Var:
            a.ref = b
            self.trail.append(a)
            return True
        if tb is Var:
            b.ref = a
            self.trail.append(b)
            return True
        if ta is tuple:
            n = len(a)
            if tb is not tuple or n != len(b) or a[0] != b[0]:
                return False
            unify = self.unify
            for i in range(1, n):  # noqa: SIM110 (hot: a loop is faster than all() over a generator)
                if not unify(a[i], b[i]):
                    return False
            return True
        return ta is tb and a == b  # 1 and 1.0 differ, as in Prolog

    # ------------------------------------------------------------ solving

    def solve(self, goal: Term, depth: int = 0) -> Any:
        """The solutions of one goal: an iterable, bindings in place while a solution is current."""
        while type(goal) is Var:
            r = goal.ref
            if r is None:
                raise SolveError("error: a goal is an unbound variable")
            goal = r
        key = (goal[0], len(goal) - 1) if type(goal) is tuple else (goal, 0)
        if depth > 2000:
            raise SolveError(f"error: recursion deeper than 2000 calls in {key[0]}/{key[1]}")
        got = self.dispatch.get(key)
        if got is None:
            raise SolveError(f"error: unknown predicate {key[0]}/{key[1]}")
        kind, x = got
        if kind == 0:
            return x(self, goal)
        if kind == 1:
            return x(goal, depth)
        if kind == 2:
            return self._memo(key, x, goal, depth)
        return self.solve_rules(x, goal, depth)

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
            build = rule.build or rule.compile()
            if self.unify(build[0](vs), goal):  # the body is copied only for a matching head
                run = self.runner(rule.body)
                if run is not None:
                    yield from run(vs, depth + 1)
                    self.undo(mark)
                    continue
                cut = [False]
                yield from self.body(build[1](vs), 0, cut, depth + 1)
                self.undo(mark)
                if cut[0]:
                    return
            else:
                self.undo(mark)

    def runner(self, goals: list) -> Callable[[list, int], Iterator[None]] | None:
        """The conjunction ``goals`` (over a clause's slots) as one Python generator function of
        the variables, None if it has a cut.  Each goal's handler is looked up once, here, and
        comparisons, ``is`` and ``=`` run inline: the interpreter's per-goal dispatch and
        backtracking stack were most of the time of the examples' rule bodies."""
        got = self.runners.get(id(goals))
        if got is None or got[0] is not goals:
            got = self.runners[id(goals)] = (goals, compile_runner(self, goals))
        return got[1]

    def body(self, goals: list, i: int, cut: list, depth: int) -> Iterator[None]:
        """The solutions of ``goals[i:]`` in order, by backtracking over one stack of iterators;
        a cut, once backtracked into, ends them all and sets ``cut[0]``."""
        n = len(goals)
        if i == n:
            yield
            return
        solve = self.solve
        its: list = [None] * n
        k = i
        forward = True
        while True:
            if forward:
                if k == n:
                    yield
                    k -= 1
                    forward = False
                    if goals[k] == "!":
                        cut[0] = True
                        return
                else:
                    g = goals[k]
                    if g == "!":
                        k += 1
                        continue
                    its[k] = iter(solve(g, depth))
            if next(its[k], _DONE) is _DONE:
                its[k] = None
                k -= 1
                if k < i:
                    return
                if goals[k] == "!":
                    cut[0] = True
                    return
                forward = False
            else:
                k += 1
                forward = True

    def once(self, goal: Term) -> bool:
        mark = len(self.trail)
        for _ in self.solve(goal):
            self.undo(mark)
            return True
        self.undo(mark)
        return False

    # ------------------------------------------------------------ control and built-in predicates

    def _and(self, g: tuple, depth: int) -> Iterator[None]:
        return self.body([g[1], g[2]], 0, [False], depth)

    def _neg(self, g: tuple, depth: int) -> tuple:
        mark = len(self.trail)
        for _ in self.solve(g[1], depth + 1):
            self.undo(mark)
            return ()
        self.undo(mark)
        return ONE

    def _true(self, g: Any, depth: int) -> tuple:
        return ONE  # also a cut inside a nested control construct: local

    def _fail(self, g: Any, depth: int) -> tuple:
        return ()

    def _or(self, g: tuple, depth: int) -> Iterator[None]:
        mark = len(self.trail)
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
        self.undo(mark)

    def _then(self, g: tuple, depth: int) -> Iterator[None]:
        mark = len(self.trail)
        for _ in self.solve(g[1], depth + 1):
            yield from self.solve(g[2], depth + 1)
            break
        self.undo(mark)

    def _eq(self, g: tuple, depth: int) -> tuple:
        return ONE if self.unify(g[1], g[2]) else ()

    def _neq(self, g: tuple, depth: int) -> tuple:
        mark = len(self.trail)
        ok = not self.unify(g[1], g[2])
        self.undo(mark)
        return ONE if ok else ()

    def _is(self, g: tuple, depth: int) -> tuple:
        return ONE if self.unify(g[1], evaluate(g[2])) else ()

    def _compare(self, g: tuple, depth: int) -> tuple:
        return ONE if COMPARE[g[0]](evaluate(g[1]), evaluate(g[2])) else ()

    def _order(self, g: tuple, depth: int) -> tuple:
        return ONE if ORDER[g[0]](order_key(g[1]), order_key(g[2])) else ()

    def _findall(self, g: tuple, depth: int) -> tuple:
        mark = len(self.trail)
        results = []
        for _ in self.solve(g[2], depth + 1):
            results.append(resolve(g[1]))
        self.undo(mark)
        return ONE if self.unify(g[3], to_list(results)) else ()

    def _length(self, g: tuple, depth: int) -> tuple:
        items = from_list(g[1])
        if items is None:
            raise SolveError("error: length/2 of a partial list is not supported")
        return ONE if self.unify(g[2], len(items)) else ()

    def _member(self, g: tuple, depth: int) -> Iterator[None]:
        mark = len(self.trail)
        items = from_list(g[2])
        if items is None:
            raise SolveError("error: member/2 of a partial list is not supported")
        for item in items:
            if self.unify(g[1], item):
                yield
            self.undo(mark)

    def _control(self, name: str, g: tuple | str, depth: int) -> Any:
        """A control construct or built-in predicate by name (for the evaluator's own ``\\+``)."""
        return self.control[(name, len(g) - 1 if type(g) is tuple else 0)](g, depth)


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
