"""The memo of pure background predicates: each call pattern's answers, computed once.

Why its own: the examples call the same background predicates on the same
arguments again and again (caviar's ``distanceClass/5`` for every pair of
positions); their answers are kept per call pattern instead of solved again.
Which predicates may be kept (``pure_predicates``: no built-in served by the
evaluator, nothing that calls one) is decided by ``solve.py``; this module
holds the tables, their keys (``canonical``: a call with its free variables
numbered) and the ways in: a call solved through the memo (``_memo``), the
answers of a call with a free last argument (``free_answers``,
``last_values``) read by the evaluator's compiled bodies.  The ``Memo``
methods are the ``Solver``'s (it derives from ``Memo``).
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator
from typing import TYPE_CHECKING, cast

from chronolog.dialects.rtec.pure import compile_pure
from chronolog.dialects.rtec.terms import ONE, Rule, SolveError, Term, Var, deref, is_ground, resolve

if TYPE_CHECKING:
    from chronolog.dialects.rtec.solve import Solver

MEMO_LIMIT = 100_000  # memoised call patterns kept (all dropped at once beyond: memory stays bounded)
_FREE = ("$VAR", 0)
FLOAT = "$float"  # marks a float in a memo key


def flat_key(t: Term) -> Term:
    """``canonical`` of a call whose arguments are atoms and numbers, but for a free last one
    (the common memoised call, built without walking terms); None for any other call."""
    if type(t) is not tuple:
        return None
    out = [t[0]]
    n = len(t) - 1
    for i in range(1, n + 1):
        a = t[i]
        while type(a) is Var and a.ref is not None:  # deref, inline (as in canonical)
            a = a.ref
        ta = type(a)
        if ta is Var:
            if i != n:
                return None
            a = _FREE
        elif ta is tuple or ta is float:  # (1.0 and 1 are equal keys but do not unify)
            return None
        out.append(a)
    return tuple(out)


def canonical(t: Term, names: dict | None = None) -> Term:
    """``t`` resolved, its unbound variables numbered by first appearance (a memo key); a
    float is marked, as 1.0 and 1 are equal keys in a dict but do not unify."""
    while type(t) is Var:
        r = t.ref
        if r is None:
            names = {} if names is None else names
            return ("$VAR", names.setdefault(id(t), len(names)))
        t = r
    if type(t) is not tuple:
        return (FLOAT, t) if type(t) is float else t
    out = [t[0]]
    for i in range(1, len(t)):
        a = t[i]
        while type(a) is Var and a.ref is not None:
            a = a.ref
        ta = type(a)
        if ta is tuple or ta is Var:
            if names is None:
                names = {}
            a = canonical(a, names)
        elif ta is float:
            a = (FLOAT, a)
        out.append(a)
    return tuple(out)


class Memo:
    """The memo's half of the ``Solver``: its tables are ``memo`` (predicate -> call
    pattern -> answers, ``memo_size`` entries in all), ``memo_stats`` (predicate ->
    [calls, hits]) and ``compiled`` (predicate -> its function of ``pure.py``, or None)."""

    if TYPE_CHECKING:  # the Solver's, which the memo uses
        clauses: dict[tuple[str, int], list[Rule]]
        trail: list[Var]
        memo: dict
        memo_size: int
        memo_stats: dict
        compiled: dict

        def unify(self, a: Term, b: Term) -> bool: ...
        def undo(self, mark: int) -> None: ...
        def solve_rules(self, rules: list[Rule], goal: Term, depth: int = 0) -> Iterator[None]: ...

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
        key = flat_key(goal)
        flat_free = key is not None and key[-1] is _FREE  # atoms and numbers, then a free variable
        if key is None:
            key = canonical(goal)
        elif len(key) > 2 and type(key[-1]) in (str, int):
            found = table.get(key[:-1] + (_FREE,))  # a check reads the answers with its last argument free
            if found is not None:
                stats[1] += 1
                last, tl = key[-1], type(key[-1])
                n = sum(1 for a in found if a[-1] == last and type(a[-1]) is tl)
                return ONE if n == 1 else (None,) * n  # a solution per answer, as unifying each
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
            return ONE
        if len(answers) == 1:  # one answer: bind it and leave the bindings to the caller
            mark = len(self.trail)
            if self.unify(goal, answers[0]):
                return ONE
            self.undo(mark)
            return ()
        return self._each(goal, answers)

    def _fill(self, pred: tuple, rules: list[Rule], goal: Term, depth: int, table: dict,
              stats: list) -> list | None:
        """The answers of a call not seen yet (None: solve it directly, an answer is not ground)."""
        last = deref(goal[-1]) if type(goal) is tuple and len(goal) > 2 else None
        if type(last) in (str, int):
            general = goal[:-1] + (Var(),)
            gkey = flat_key(general) or canonical(general)
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
        key = flat_key(goal)
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
        fn = self.compiled[pred] if pred in self.compiled else compile_pure(cast("Solver", self), pred)
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
