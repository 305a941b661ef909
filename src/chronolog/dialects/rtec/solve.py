"""A small Prolog solver for RTEC rule bodies and background knowledge.

Why its own: RTEC event descriptions are Prolog, and their bodies mix the
Event Calculus built-ins (served by the evaluator from its fluent store) with
background predicates (``role_of/2``, ``distanceClass/5``) that need
unification, backtracking, ``\\+``, cut with a fall-back clause, ``findall``
and arithmetic.  Terms are those of ``chronolog.dialects.rtec.prolog``; at run time a
variable is a ``Var`` bound through a trail.  Solutions are produced by
generators: a generator yields once per solution with the bindings in place,
and the caller undoes them (``undo``) to its own mark.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Iterator
from typing import Any

from chronolog.core.errors import ChronologError
from chronolog.dialects.rtec.prolog import PVar, term_text

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
    while type(t) is Var:
        t = t.ref
        if t is None:
            return False
    if type(t) is tuple:
        for i in range(1, len(t)):
            if not is_ground(t[i]):
                return False
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

    __slots__ = ("head", "body", "nvars", "loc", "_plan", "build")

    def __init__(self, head: Term, body: list, nvars: int, loc: Any) -> None:
        self.head, self.body, self.nvars, self.loc = head, body, nvars, loc
        self._plan: Any = None  # the evaluator's body order (chronolog.dialects.rtec.evaluator._plan)
        self.build: Any = None  # (head builder, body builder) of compile()

    def fresh(self) -> tuple[Term, list]:
        vs = [Var() for _ in range(self.nvars)]
        return inst(self.head, vs), [inst(g, vs) for g in self.body]

    def compile(self) -> tuple[Callable, Callable]:
        """Python functions building the head and the body goals over a list of variables: a
        clause is copied at every call, and ``inst``'s walk over the terms cost more than the rest."""
        self.build = (term_builder(self.head), terms_builder(self.body))
        return self.build


def _source(t: Term, consts: list) -> str:
    """A Python expression building ``t`` over ``vs`` (slots) and ``c`` (ground parts)."""
    if type(t) is Slot:
        return f"vs[{t.i}]"
    if type(t) is tuple and has_slot(t):
        return "(" + ", ".join([repr(t[0])] + [_source(a, consts) for a in t[1:]]) + ",)"
    consts.append(t)
    return f"c[{len(consts) - 1}]"


def term_builder(t: Term) -> Callable[[list], Term]:
    consts: list = []
    return eval(f"lambda vs, c=c: {_source(t, consts)}", {"c": consts})  # noqa: S307 (our own source text)


def terms_builder(ts: list) -> Callable[[list], list]:
    consts: list = []
    return eval(f"lambda vs, c=c: [{', '.join(_source(t, consts) for t in ts)}]", {"c": consts})  # noqa: S307


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


def _div(a: Any, b: Any) -> Any:
    if isinstance(a, int) and isinstance(b, int) and b and a % b == 0:
        return a // b
    return a / b


BINARY: dict[str, Callable[[Any, Any], Any]] = {
    "+": lambda a, b: a + b, "-": lambda a, b: a - b, "*": lambda a, b: a * b, "/": _div,
    "//": lambda a, b: int(a / b), "mod": lambda a, b: a % b, "rem": lambda a, b: a - b * int(a / b),
    "min": min, "max": max, "**": lambda a, b: a ** b, "^": lambda a, b: a ** b,
}
UNARY: dict[str, Callable[[Any], Any]] = {"-": lambda a: -a, "+": lambda a: a, "abs": abs, "sqrt": lambda a: a ** 0.5}


def _eval(t: Term) -> int | float:
    """Arithmetic of ``is`` and comparisons."""
    while type(t) is Var:
        r = t.ref
        if r is None:
            raise SolveError("error: arithmetic on an unbound variable")
        t = r
    tt = type(t)
    if tt is int or tt is float:
        return t
    if tt is tuple:
        if len(t) == 3:
            f = BINARY.get(t[0])
            if f is not None:
                return f(_eval(t[1]), _eval(t[2]))
        elif len(t) == 2:
            f1 = UNARY.get(t[0])
            if f1 is not None:
                return f1(_eval(t[1]))
    raise SolveError(f"error: {term_text(resolve(t))} is not an arithmetic expression")


def _num(t: Term) -> int | float:
    """A bound number as it is; anything else through ``_eval`` (its errors included)."""
    while type(t) is Var:
        r = t.ref
        if r is None:
            break
        t = r
    if type(t) is int or type(t) is float:
        return t
    return _eval(t)


PY_ARITH = {"+", "-", "*"}  # Prolog's and Python's meaning agree on numbers
PY_COMPARE = {"<": "<", ">": ">", "=<": "<=", ">=": ">=", "=:=": "==", "=\\=": "!="}


def _arith(t: Term, consts: list) -> str:
    """A Python expression evaluating the arithmetic term ``t`` (over slots) as ``_eval`` does:
    ``+ - *`` and numbers inline, the rest through ``_eval`` (``is`` and comparisons in
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
    return f"_eval({_source(t, consts)})"


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


def _ordered(op: Callable[[Any, Any], bool], a: Term, b: Term) -> bool:
    """``op`` on the standard order of ``a`` and ``b``: two atoms or two integers (ids, as in
    ``Id1 @< Id2``) compare as they are, without building order keys."""
    a, b = deref(a), deref(b)
    ta = type(a)
    if ta is type(b) and (ta is str or ta is int):
        return op(a, b)
    return op(_order_key(a), _order_key(b))


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


MEMO_LIMIT = 100_000  # memoised call patterns kept (all dropped at once beyond: memory stays bounded)
_DONE = object()
_ONE = (None,)  # one solution and no bindings: cheaper to iterate than a generator


class Solver:
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

    def _memo(self, pred: tuple, rules: list[Rule], goal: Term, depth: int) -> Iterable[None]:
        """A pure predicate's answers for a call pattern, computed once (the examples call
        ``distanceClass/5`` on the same coordinates again and again); a predicate whose calls
        rarely repeat (over 5000 calls, under one in ten a repeat) is solved directly instead.
        A call whose last argument is bound (a check such as ``\\+ distanceClass(X1,Y1,X2,Y2,24)``)
        reads the answers of the call with that argument free, when that call can be solved."""
        stats = self.memo_stats.get(pred)
        if stats is None:
            stats = self.memo_stats[pred] = [0, 0]
        if stats[0] > 5000 and stats[1] * 10 < stats[0]:
            self.memo.pop(pred, None)
            return self.solve_rules(rules, goal, depth)
        stats[0] += 1
        table = self.memo.get(pred)
        if table is None:
            table = self.memo[pred] = {}
        key = _flat_key(goal)
        flat_free = key is not None and key[-1] is _FREE  # atoms and numbers, then a free variable
        if key is None:
            key = _canonical(goal)
        elif len(key) > 2 and type(key[-1]) in (str, int):
            found = table.get(key[:-1] + (_FREE,))  # a check reads the answers with its last argument free
            if found is not None:
                stats[1] += 1
                last, tl = key[-1], type(key[-1])
                n = sum(1 for a in found if a[-1] == last and type(a[-1]) is tl)
                return _ONE if n == 1 else (None,) * n  # a solution per answer, as unifying each
        answers = table.get(key)
        if answers is None:
            answers = self._fill(pred, rules, goal, depth, table, stats)
            if answers is None:
                return self.solve_rules(rules, goal, depth)
            self._store(pred, key, answers)
        else:
            stats[1] += 1
        if not answers:
            return ()
        if len(answers) == 1 and flat_free:
            # a flat call: its answers agree with its bound arguments, only the free last one binds
            v = goal[-1]
            while v.ref is not None:
                v = v.ref
            v.ref = answers[0][-1]
            self.trail.append(v)
            return _ONE
        if len(answers) == 1:  # one answer: bind it and leave the bindings to the caller
            mark = len(self.trail)
            if self.unify(goal, answers[0]):
                return _ONE
            self.undo(mark)
            return ()
        return self._each(goal, answers)

    def _fill(self, pred: tuple, rules: list[Rule], goal: Term, depth: int, table: dict,
              stats: list) -> list | None:
        """The answers of a call not seen yet (None: solve it directly, an answer is not ground)."""
        last = deref(goal[-1]) if type(goal) is tuple and len(goal) > 2 else None
        if type(last) in (str, int):
            general = goal[:-1] + (Var(),)
            gkey = _flat_key(general) or _canonical(general)
            found = table.get(gkey)
            if found is None:
                try:
                    found = self._answers(rules, general, depth, pred)
                except SolveError:  # the last argument is an input (arithmetic on it)
                    found = None
                if found is not None:
                    self._store(pred, gkey, found)
            else:
                stats[1] += 1
            if found is not None:
                return [a for a in found if a[-1] == last and type(a[-1]) is type(last)]
        return self._answers(rules, goal, depth, pred)

    def _each(self, goal: Term, answers: list) -> Iterator[None]:
        mark = len(self.trail)
        for a in answers:
            if self.unify(goal, a):
                yield
            self.undo(mark)

    def _answers(self, rules: list[Rule], goal: Term, depth: int, pred: tuple | None = None) -> list | None:
        """Every answer of ``goal`` (None if one is not ground): by ``pred``'s compiled
        function (rtec/pure.py) when the call is in its mode, else by the clauses."""
        if pred is not None:
            found = self._compiled_answers(pred, goal)
            if found is not None:
                return found
        answers = []
        mark = len(self.trail)
        for _ in self.solve_rules(rules, goal, depth):
            answers.append(resolve(goal))
        self.undo(mark)
        return None if any(not is_ground(a) for a in answers) else answers

    def free_answers(self, pred: tuple, goal: Term) -> list | None:
        """The answers of a call of a memoised predicate whose arguments are atoms and integers
        but a free last one, from the memo (filled when new); None for any other call, or when
        the call with its last argument free cannot be solved (an error: the caller solves
        its own call and meets it there)."""
        key = _flat_key(goal)
        if key is None or key[-1] is not _FREE:
            return None
        return self._memo_free(pred, key, goal, 0)

    def last_values(self, pred: tuple, args: tuple, depth: int) -> Iterable[Term]:
        """The values of the free last argument of ``pred(*args, _)``, ``args`` ground: from the
        memo (filled when new) for atoms and integers; otherwise the call's solutions, each
        value yielded while its bindings are in place (compiled bodies, ``rtec/local.py``)."""
        for a in args:
            if type(a) is not int and type(a) is not str:
                return self._last_solved(pred, args, depth)
        answers = self._memo_free(pred, (pred[0], *args, _FREE), (pred[0], *args, Var()), depth)
        if answers is None:  # not ground, or an error: the solver's own way (and error)
            return self._last_solved(pred, args, depth)
        if len(answers) == 1:
            return (answers[0][-1],)
        return [a[-1] for a in answers]

    def _memo_free(self, pred: tuple, key: Term, goal: Term, depth: int) -> list | None:
        """The answers of ``goal``, a call of ``pred`` with a free last argument, kept in the
        memo under ``key``: from there, else solved and stored.  None when an answer is not
        ground or the call is an error (the caller then solves it its own way)."""
        table = self.memo.get(pred)
        answers = None if table is None else table.get(key)
        if answers is None:
            try:
                answers = self._answers(self.clauses[pred], goal, depth, pred)
            except SolveError:
                return None
            if answers is not None:
                self._store(pred, key, answers)
        return answers

    def _last_solved(self, pred: tuple, args: tuple, depth: int) -> Iterator[Term]:
        out = Var()
        mark = len(self.trail)
        for _ in self._memo(pred, self.clauses[pred], (pred[0], *args, out), depth):
            yield deref(out)
            self.undo(mark)
        self.undo(mark)

    def _compiled_answers(self, pred: tuple, goal: Term) -> list | None:
        """The answers of a call with atoms and integers for arguments but a free last one,
        from the predicate's compiled function; None when there is none or it cannot decide."""
        fn = self.compiled[pred] if pred in self.compiled else compile_pure(self, pred)
        if fn is None:
            return None
        n = len(goal) - 1
        args = []
        for i in range(1, n):
            a = goal[i]
            while type(a) is Var:
                r = a.ref
                if r is None:
                    return None
                a = r
            if type(a) is not int and type(a) is not str:
                return None
            args.append(a)
        if type(deref(goal[n])) is not Var:
            return None
        try:
            return fn(tuple(args))
        except Exception:  # noqa: BLE001 - the solver decides: its own answers or error
            return None

    def _store(self, pred: tuple, key: Term, answers: list) -> None:
        if self.memo_size > MEMO_LIMIT:
            self.memo.clear()
            self.memo_size = 0
        self.memo.setdefault(pred, {})[key] = answers
        self.memo_size += 1

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
            got = self.runners[id(goals)] = (goals, self._compile(goals))
        return got[1]

    def _compile(self, goals: list) -> Callable[[list, int], Iterator[None]] | None:
        if any(g == "!" for g in goals):
            return None
        consts: list = []
        env: dict[str, Any] = {"c": consts, "S": self, "unify": self.unify, "_eval": _eval, "_ordered": _ordered,
                               "_num": _num, "solve": self.solve, "memo": self._memo, "solve_rules": self.solve_rules,
                               "deref": deref, "SolveError": SolveError}
        lines = ["def run(vs, depth):", " if depth > 2000:",
                 "  raise SolveError('error: recursion deeper than 2000 calls')"]
        pad = " "
        for g in goals:
            src = _source(g, consts)
            key = (g[0], len(g) - 1) if type(g) is tuple else (g, 0) if type(g) is str else None
            kind, x = self.dispatch.get(key, (None, None)) if key is not None else (None, None)
            own = self.inline(g, lambda t: _source(t, consts), consts) if self.inline is not None else None
            if own is not None:
                line = own
            elif kind == 1 and key[0] in COMPARE:
                line = f"if {_arith(g[1], consts)} {PY_COMPARE[key[0]]} {_arith(g[2], consts)}:"
            elif kind == 1 and key[0] in ORDER:
                consts.append(ORDER[key[0]])
                line = (f"if _ordered(c[{len(consts) - 1}], {_source(g[1], consts)}, {_source(g[2], consts)}):")
            elif kind == 1 and key == ("is", 2):
                line = f"if unify({_source(g[1], consts)}, {_arith(g[2], consts)}):"
            elif kind == 1 and key == ("=", 2):
                line = f"if unify({_source(g[1], consts)}, {_source(g[2], consts)}):"
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
        exec("\n".join(lines), env)  # noqa: S102 (our own source text, from the program's clauses)
        return env["run"]

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
        return _ONE

    def _true(self, g: Any, depth: int) -> tuple:
        return _ONE  # also a cut inside a nested control construct: local

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
        return _ONE if self.unify(g[1], g[2]) else ()

    def _neq(self, g: tuple, depth: int) -> tuple:
        mark = len(self.trail)
        ok = not self.unify(g[1], g[2])
        self.undo(mark)
        return _ONE if ok else ()

    def _is(self, g: tuple, depth: int) -> tuple:
        return _ONE if self.unify(g[1], _eval(g[2])) else ()

    def _compare(self, g: tuple, depth: int) -> tuple:
        return _ONE if COMPARE[g[0]](_eval(g[1]), _eval(g[2])) else ()

    def _order(self, g: tuple, depth: int) -> tuple:
        return _ONE if ORDER[g[0]](_order_key(g[1]), _order_key(g[2])) else ()

    def _findall(self, g: tuple, depth: int) -> tuple:
        mark = len(self.trail)
        results = []
        for _ in self.solve(g[2], depth + 1):
            results.append(resolve(g[1]))
        self.undo(mark)
        return _ONE if self.unify(g[3], to_list(results)) else ()

    def _length(self, g: tuple, depth: int) -> tuple:
        items = from_list(g[1])
        if items is None:
            raise SolveError("error: length/2 of a partial list is not supported")
        return _ONE if self.unify(g[2], len(items)) else ()

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


_FREE = ("$VAR", 0)
_FLOAT = "$float"  # marks a float in a memo key


def _flat_key(t: Term) -> Term:
    """``_canonical`` of a call whose arguments are atoms and numbers, but for a free last one
    (the common memoised call, built without walking terms); None for any other call."""
    if type(t) is not tuple:
        return None
    out = [t[0]]
    n = len(t) - 1
    for i in range(1, n + 1):
        a = t[i]
        while type(a) is Var:
            r = a.ref
            if r is None:
                break
            a = r
        ta = type(a)
        if ta is Var:
            if i != n:
                return None
            a = _FREE
        elif ta is tuple or ta is float:  # (1.0 and 1 are equal keys but do not unify)
            return None
        out.append(a)
    return tuple(out)


def _canonical(t: Term, names: dict | None = None) -> Term:
    """``t`` resolved, its unbound variables numbered by first appearance (a memo key); a
    float is marked, as 1.0 and 1 are equal keys in a dict but do not unify."""
    while type(t) is Var:
        r = t.ref
        if r is None:
            names = {} if names is None else names
            return ("$VAR", names.setdefault(id(t), len(names)))
        t = r
    if type(t) is not tuple:
        return (_FLOAT, t) if type(t) is float else t
    out = [t[0]]
    for i in range(1, len(t)):
        a = t[i]
        while type(a) is Var and a.ref is not None:
            a = a.ref
        ta = type(a)
        if ta is tuple or ta is Var:
            if names is None:
                names = {}
            a = _canonical(a, names)
        elif ta is float:
            a = (_FLOAT, a)
        out.append(a)
    return tuple(out)


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


from chronolog.dialects.rtec.pure import compile_pure  # noqa: E402 (it builds on this module)
