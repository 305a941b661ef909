"""Simple fluents: RTEC's inertia, swept in time order over one window.

A simple fluent F=V holds from the tick after an initiation to its
termination (an initiation of another value terminates it), ``initially``
makes it hold from 0, and a deadline ``fi(F=V, F=V2, D)`` initiates F=V2 D
ticks after F=V was initiated if it still holds.  ``_sweep`` derives the
initiations and terminations of one component's fluents in the window
(solving each rule's body, expanding non-ground heads through
``grounding/1``), then replays them in time order together with the
deadlines, and splices the new interval lists onto what is stored before the
window.  Fluents in one cycle (``holdsAt`` of each other) are swept
together, their ``holdsAt`` conditions checked as the sweep reaches them.  A
mixin of ``RtecEvaluator``: the sweep reads and writes the evaluator's store,
solver and deadline bookkeeping, and its inner loops are the evaluator's
measured hot path.
"""

from __future__ import annotations

import heapq
from bisect import bisect_left
from collections import defaultdict
from collections.abc import Callable
from typing import Any

from chronolog.core.errors import ChronologError
from chronolog.dialects.rtec import intervals as IV
from chronolog.dialects.rtec.admitted import hidden_list, in_cycle, set_hidden
from chronolog.dialects.rtec.analysis import _plan
from chronolog.dialects.rtec.hierarchy import Key, _fterm, _fv
from chronolog.dialects.rtec.intervals import INF
from chronolog.dialects.rtec.local import local_runner
from chronolog.dialects.rtec.memo import FLOAT, canonical
from chronolog.dialects.rtec.prolog import term_text
from chronolog.dialects.rtec.solve import Solver
from chronolog.dialects.rtec.terms import Rule, Var, deref, inst, is_ground, resolve

NEG_INF = -INF
_NONE = object()  # no (further) solution
ANY = object()  # the value of a termination whose value is left free: whatever holds


class SimpleFluents:
    """The simple-fluent sweep of ``RtecEvaluator`` (see the module's docstring)."""

    def _sweep(self, keys: list[Key], lo: float, hi: float, changed: set) -> None:
        """Simple fluents of one component, in time order (cycles through holdsAt allowed)."""
        tick = self.tick
        keyset = set(keys)
        cyclic = in_cycle(self.h, keys)
        self.deferring = keyset if cyclic else set()
        changes: dict[int, list] = defaultdict(list)  # t -> [(init?, key, args, value, conds)]
        try:
            for key in keys:
                known = self.values.get(key, ())
                for kind, rule in self.h.rules[("fluent", key, None)]:
                    main, post = _plan(rule)
                    vs = [Var() for _ in range(rule.nvars)]
                    head = inst(rule.head, vs)
                    goals = [inst(g, vs) for g in main]
                    checks = [inst(g, vs) for g in post]
                    fv, t = head[1], head[2]
                    solver = self.solver
                    start = len(solver.trail)
                    run, check = self._local(main) or solver.runner(main), solver.runner(post)
                    negs = _negated_calls(solver, checks)
                    for _ in (run(vs, 0) if run is not None else solver.body(goals, 0, [False], 0)):
                        tt = deref(t)
                        if type(tt) is not int or not lo <= tt <= hi:
                            continue
                        got = _fv(resolve(fv))
                        conds = [(pos, resolve(c)) for pos, c in self.deferred]
                        assert got is not None
                        quick = _free_answers(solver, negs, got[1]) if negs else None
                        for args, value in self._expand(got, rule, kind == "initiatedAt"):
                            if kind == "initiatedAt" and known and value not in known:
                                continue  # a value the event description does not name
                            if quick is not None and _all_atomic(args, quick):  # nothing to bind
                                if any(_answers_with(found, args[p]) for p, found in quick):
                                    continue
                            elif checks:
                                mark = len(solver.trail)
                                ok = all(map(solver.unify, got[1], args))  # the head's arguments, one by one
                                if ok:
                                    sols = check(vs, 0) if check is not None else solver.body(checks, 0, [False], 0)
                                    ok = next(iter(sols), _NONE) is not _NONE
                                solver.undo(mark)
                                if not ok:
                                    continue
                            changes[tt].append((kind == "initiatedAt", key, args, value, conds))
                    solver.undo(start)
        finally:
            self.deferring = set()
        # the state at lo: what holds there, from the stored lists (or `initially` at the start)
        # events from lo on change the values from lo + tick on; what holds then by earlier events is open
        open_: dict[tuple, int] = {}  # (key, args, value) -> start of its interval
        stale: set[tuple] = set()
        at = lo + tick if lo != NEG_INF else NEG_INF
        probe = at - 1
        hidden = self.hidden if cyclic else {}
        for key in keys:
            sdf = self.h.sdf_values.get(key, ())
            for args, vals in [*self.store.fluents.get(key, {}).items(), *hidden.get(key, {}).items()]:
                for v, ivs in vals.items():
                    if v not in sdf and ivs and ivs[-1][1] > at:
                        stale.add((key, args, v))  # derived from the events being derived again
                    if v not in sdf and lo != NEG_INF and IV.contains(ivs, probe):
                        a = next(p[0] for p in ivs if p[0] <= probe < p[1])
                        open_[(key, args, v)] = a
        fresh = set()
        for ident in self._initially(keyset):
            if ident not in self.initialised or lo == NEG_INF:
                self.initialised.add(ident)
                fresh.add(ident)
                open_.setdefault(ident, 0)
        by_ka: dict[tuple, dict] = defaultdict(dict)  # (key, args) -> value -> start, what holds now
        for (key, args, v), a in open_.items():
            by_ka[(key, args)][v] = a
        heap: list[int] = list(changes)
        # deadlines (fi/3): every initiation of F=V at Ts initiates F=V2 at Ts + D unless F=V is
        # terminated in between (RTEC: even an initiation that gives no interval counts)
        deadlines: dict[int, list] = defaultdict(list)
        last_term: dict[tuple, float] = {}
        for key in keys:
            for ident, inits in self.fi_inits.items():
                if ident[0] != key:
                    continue
                terms = self.fi_terms.get(ident, [])
                before = terms[:bisect_left(terms, lo)]
                if before:
                    last_term[ident] = before[-1]
                for ts in inits[:bisect_left(inits, lo)]:
                    if last_term.get(ident, NEG_INF) <= ts:
                        heap += self._schedule(ident, ts, deadlines, lo)
        new_inits: dict[tuple, list] = defaultdict(list)
        new_terms: dict[tuple, list] = defaultdict(list)
        heapq.heapify(heap)
        result: dict[tuple, list] = defaultdict(list)
        touched = set(open_) | stale
        last = None
        while heap:
            t = heapq.heappop(heap)
            if t == last:
                continue
            last = t
            if t > hi:
                break
            inits: dict[tuple, set] = defaultdict(set)
            terms: dict[tuple, set] = defaultdict(set)
            for init, key, args, v, conds in changes.get(t, ()):
                if all(_holds_now(by_ka, c, t) == pos for pos, c in conds):
                    (inits if init else terms)[(key, args)].add(v)
            for ident, ts, v2 in deadlines.pop(t, ()):
                if last_term.get(ident, NEG_INF) <= ts:
                    inits[(ident[0], ident[1])].add(v2)
            for ka in set(inits) | set(terms):
                ivs = inits.get(ka, ())
                tvs = terms.get(ka, ())
                for v in self.fi_values.get(ka[0], ()):
                    if v in tvs or ANY in tvs or any(w != v for w in ivs):
                        last_term[(ka[0], ka[1], v)] = t
                        new_terms[(ka[0], ka[1], v)].append(t)
                    if v in ivs:
                        new_inits[(ka[0], ka[1], v)].append(t)
                        for d in self._schedule((ka[0], ka[1], v), t, deadlines, lo):
                            heapq.heappush(heap, d)
                holding = by_ka.get(ka)
                if holding:
                    for v in list(holding):
                        if v in tvs or ANY in tvs or any(w != v for w in ivs):
                            result[(ka[0], ka[1], v)].append((holding.pop(v), t + tick))
                for v in ivs:
                    ident = (ka[0], ka[1], v)
                    touched.add(ident)
                    if v in tvs or ANY in tvs or any(w != v for w in ivs):
                        continue  # terminated at the time it is initiated: RTEC keeps the empty interval out
                    slot = by_ka[ka]
                    if v not in slot:
                        slot[v] = t + tick
        for ka, vals in by_ka.items():
            for v, a in vals.items():
                result[(ka[0], ka[1], v)].append((a, INF))
        for store, new in ((self.fi_inits, new_inits), (self.fi_terms, new_terms)):
            for ident in [i for i in store if i[0] in keyset] + list(new):
                kept = store.get(ident, [])
                kept = kept[:bisect_left(kept, lo)] + new.get(ident, [])
                if kept:
                    store[ident] = kept
                else:
                    store.pop(ident, None)
        # instances grounding/1 does not admit are kept out (``admitted.py``), and remembered
        left_out = {key: self._rejected(("fluent", key, None), lo) for key in keys if key in self.admit_keys}
        outputs = self.outputs
        for ident in touched | set(result):
            key, args, v = ident
            old = self.store.fluent_list(key, args, v)
            ivs = IV.coalesce(result.get(ident, []))
            if key in left_out and ((key, v) not in outputs or not self.grounded(("=", _fterm(key, args), v))):
                known = left_out[key]
                if ivs and known is not None and (key, v) in outputs:  # (a value no clause names never is)
                    known.add((args, v))
                if cyclic and (key, v) in outputs:  # the cycle's holdsAt reads it by its rules (RTEC's holdsAtCyclic)
                    set_hidden(hidden, ident, ivs if at == NEG_INF or ident in fresh
                               else IV.splice(hidden_list(hidden, ident), ivs, at))
                ivs = []
            elif key in hidden:
                set_hidden(hidden, ident, [])  # admitted now: in the store
            new = ivs if at == NEG_INF or ident in fresh else IV.splice(old, ivs, at)
            if new != old:
                self.store.set_list(key, args, v, new)
                changed.add(ident)

    def _local(self, main: list) -> Callable | None:
        """A simple fluent's body compiled to loops over locals (``rtec/local.py``), once."""
        got = self._locals.get(id(main))
        if got is None or got[0] is not main:
            got = self._locals[id(main)] = (main, local_runner(self, main))
        return got[1]

    def _schedule(self, ident: tuple, ts: float, deadlines: dict, lo: float) -> list[int]:
        """The deadlines fi(F=V, F=V2, D) of an initiation of F=V at ``ts``: F=V2 at ts + D."""
        out = []
        key, args, v = ident
        fv = ("=", _fterm(key, args), v)
        for rule in self.deadlines:
            vs = [Var() for _ in range(rule.nvars)]
            h = inst(rule.head, vs)
            mark = len(self.solver.trail)
            if self.solver.unify(h[1], fv):
                got, d = _fv(resolve(h[2])), deref(h[3])
                if got is not None and type(d) is int and got[0] == key and got[1] == args and is_ground(got[2]):
                    at = int(ts + d)
                    if at >= lo:
                        deadlines[at].append((ident, ts, got[2]))
                        out.append(at)
            self.solver.undo(mark)
        return out

    def _initially(self, keys: set[Key]) -> list[tuple]:
        out = []
        for rule in self.program.initially:
            vs = [Var() for _ in range(rule.nvars)]
            fv = inst(rule.head, vs)[1]
            got = _fv(fv)
            if got is None or got[0] not in keys:
                continue
            if is_ground(fv):
                out.append((got[0], tuple(resolve(a) for a in got[1]), resolve(got[2])))
                continue
            for g in self.groundings(fv):
                k, args, v = _fv(g)  # type: ignore[misc]
                out.append((k, args, v))
        return out

    def _expand(self, got: tuple[Key, tuple, Any], rule: Rule, init: bool) -> list[tuple[tuple, Any]]:
        """The ground (args, value) of a rule's head F=V: a head with free arguments stands for
        every instance grounding/1 gives (for any value of F); a termination with a free value
        terminates whatever value holds (ANY)."""
        key, fargs, value = got
        if not is_ground(value):
            if init:
                raise ChronologError(f"{rule.loc}: error: the value of an initiated fluent must be bound by the "
                                     f"rule body")
            value = ANY
        else:
            value = resolve(value)
        parts: list | None = ["args"]
        names: dict[int, int] = {}
        # canonical's key, built inline for atomic arguments and variables (the arguments
        # are resolved: a Var is unbound); calling canonical here cost caviar 7% of its CPU
        for a in fargs:
            ta = type(a)
            if ta is Var:
                parts.append(("$VAR", names.setdefault(id(a), len(names))))  # type: ignore[union-attr]
            elif ta is tuple:
                parts = None
                break
            else:
                parts.append((FLOAT, a) if ta is float else a)  # type: ignore[union-attr]
        if parts is not None and not names:
            return [(tuple(fargs), value)]
        if parts is None:
            if all(is_ground(a) for a in fargs):
                return [(tuple(resolve(a) for a in fargs), value)]
            memo_key = (key, canonical(tuple(["args", *fargs])))
        else:
            memo_key = (key, tuple(parts))
        found = self._expansions.get(memo_key)
        if found is None:
            renamed: dict[int, Var] = {}  # one fresh variable per variable: f(X, X) stays diagonal
            pattern = ("=", _fterm(key, tuple(_fresh(a, renamed) for a in fargs)), Var())
            found = list(dict.fromkeys(_fv(g)[1] for g in self.groundings(pattern)))  # type: ignore[index]
            self._expansions[memo_key] = found
        return [(args, value) for args in found]


def _negated_calls(solver: Solver, checks: list) -> list | None:
    """The checks when each is ``\\+ p(...)`` of a pure background predicate (memoised), else None."""
    out = []
    for g in checks:
        if not (type(g) is tuple and g[0] in ("\\+", "not") and len(g) == 2):
            return None
        inner = g[1]
        if type(inner) is not tuple or len(inner) < 2:
            return None
        pred = (inner[0], len(inner) - 1)
        if pred not in solver.pure:
            return None
        out.append((pred, inner))
    return out


def _free_answers(solver: Solver, negs: list, head_args: tuple) -> list | None:
    """For checks ``\\+ p(X1..Xn, H)`` whose last argument is a head variable the expansion
    binds (at one place of the head) and the others bound to atoms or integers: (that place,
    the answers of the call with H free), so that each expansion reads them instead of solving
    the check; the memo answers a bound last argument the same way.  Only for a head whose
    free arguments are distinct variables (every expansion unifies with it, so nothing needs
    binding).  None: solve the checks."""
    free = [id(a) for a in head_args if type(a) is Var]
    if len(set(free)) != len(free) or any(type(a) is tuple and not is_ground(a) for a in head_args):
        return None  # an expansion might not unify with the head: the checks decide that too
    out = []
    for pred, inner in negs:
        last = deref(inner[-1])
        if type(last) is not Var:
            return None
        places = [i for i, a in enumerate(head_args) if a is last]
        if len(places) != 1:
            return None
        found = solver.free_answers(pred, inner)
        if found is None:
            return None
        out.append((places[0], found))
    return out


def _all_atomic(args: tuple, quick: list) -> bool:
    """Are the expansion's values at the checked places atoms or integers?  (A float or a
    compound term is left to the solver's unification: ``==`` takes 1.0 for 1 inside a tuple.)"""
    for p, _ in quick:
        t = type(args[p])
        if t is not str and t is not int:
            return False
    return True


def _answers_with(found: list, v: Any) -> bool:
    """Does an answer have ``v`` as its last argument (1 and 1.0 differ, as in unification)?"""
    tv = type(v)
    for a in found:
        x = a[-1]
        if x == v and type(x) is tv:
            return True
    return False


def _holds_now(by_ka: dict, cond: Any, t: int) -> bool:
    """Does a deferred holdsAt condition (a ground F=V of the component) hold at t?"""
    got = _fv(cond)
    if got is None or not is_ground(cond):
        raise ChronologError(f"error: holdsAt/2 on a fluent of the same cycle needs a ground F=V, not "
                             f"{term_text(cond)}")
    a = by_ka.get((got[0], got[1]), {}).get(got[2])
    return a is not None and a <= t



def _fresh(a: Any, renamed: dict[int, Var]) -> Any:
    """``a`` resolved, each unbound variable replaced by its own fresh one (the same for
    every occurrence: ``renamed``)."""
    a = deref(a)
    if type(a) is Var:
        got = renamed.get(id(a))
        if got is None:
            got = renamed[id(a)] = Var()
        return got
    if type(a) is tuple:
        return tuple([a[0], *[_fresh(x, renamed) for x in a[1:]]])
    return a
