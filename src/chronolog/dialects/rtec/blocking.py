"""Why nothing ended (or started) an Event Calculus fluent over a span of time: the part of an
RTEC explanation (``explain.py``) that makes the cited input events enough on their own.

A rule that would end F=V (``terminatedAt``, an ``initiatedAt`` of another value, a deadline
to another value) is solved again at every time in ``[t0, T)`` it could fire, and where its
body fails, the goal that fails is read: failing for want of something (an input event that
is not there) needs nothing, as fewer events keep it failing; failing by what is there needs
that thing cited — a negation whose operand holds, a fluent that holds where the rule reads
its absence (or, through a complement, the other way round), an ``end`` that does not happen
because the fluent goes on, a ``start`` of one that already holds.  Each such fluent is
explained once, at the latest time of its interval (or gap) read.
"""

from __future__ import annotations

from bisect import bisect_left, bisect_right
from collections.abc import Callable
from dataclasses import replace
from typing import TYPE_CHECKING, Any

from chronolog.core.explanation import Node
from chronolog.core.relevance import matches
from chronolog.dialects.rtec.evaluator import RtecEvaluator
from chronolog.dialects.rtec.hierarchy import Key, _fterm, _fv, _key
from chronolog.dialects.rtec.intervals import INF
from chronolog.dialects.rtec.parser import RtecProgram
from chronolog.dialects.rtec.showing import Fluent, answer_atom, has_var, rule_text, value_of
from chronolog.dialects.rtec.solve import Solver
from chronolog.dialects.rtec.terms import Ivs, Rule, Slot, SolveError, Var, deref, inst, resolve

_LOOSE = object()  # a head argument a blocking search does not depend on (left out of its memo key)


class Blocking:
    """A mixin of ``explain.Explainer``: what keeps the rules that would end a fluent silent."""

    ev: RtecEvaluator
    solver: Solver
    program: RtecProgram
    tick: int
    _moments: list | None
    focus: dict[str, set] | None  # what the query can read (relevance.demands; None: everything)
    _memo: dict[tuple, Any]  # what one explanation has worked out already (explain.Explainer)
    proposes_inputs: bool  # whether an absent input fluent a rule reads gets its line proposed

    if TYPE_CHECKING:  # the explainer's own (explain.Explainer)
        def why(self, f: Fluent, t: Any, depth: int | None, path: frozenset = ...) -> Node: ...
        def why_not(self, f: Fluent, t: Any, depth: int | None, path: frozenset = ..., top: bool = ...) -> Node: ...
        def event(self, e: Any, at: Any, depth: int | None, path: frozenset) -> Node: ...
        def _initiations(self, f: Fluent, t0: Any, depth: int | None, path: frozenset) -> list[Node]: ...
        def rules(self, kind: str, key: Any) -> list[Rule]: ...
        def _aim(self, node: Node, f: Fluent, t: Any) -> Node: ...
        def interval(self, f: Fluent, t: Any) -> tuple | None: ...
        def name(self, f: Fluent) -> str: ...
        def simple(self, key: Any) -> bool: ...
        def sdf(self, key: Any, value: Any) -> bool: ...

    def moments(self) -> list:
        """The times something happens to an entity the explanation can read (input and derived
        events, points, the ends of every interval; ``focus``: those the query's demands name):
        the only times a rule whose body reads an event can fire (sorted, once).  Others'
        events cannot make such a rule fire, and counting them would make the explanation
        depend on input it does not read (``rtec/relevance.py``)."""
        if self._moments is None:
            store, tick = self.ev.store, self.tick
            got: set = set()
            focus, add = self.focus, got.add
            for by_key, point in ((store.events, False), (store.points, True)):
                for key, by_t in by_key.items():
                    if focus is None:
                        got.update(by_t)
                        got.update(x - tick for x in by_t)
                        continue
                    read = self._memo.setdefault(("read", key[0]), {})  # (as ``_read``, inline: once a time)
                    for x, items in by_t.items():
                        if x in got:
                            continue
                        for item in items:
                            args = item[0] if point else item
                            hit = read.get(args)
                            if hit is None:
                                hit = read[args] = matches(focus, key[0], args)
                            if hit:
                                add(x)
                                add(x - tick)
                                break
            for key, by_args in store.fluents.items():
                read = self._memo.setdefault(("read", key[0]), {})  # (the same memo: one test per arguments)
                for args, vals in by_args.items():
                    if focus is not None:
                        hit = read.get(args)
                        if hit is None:
                            hit = read[args] = matches(focus, key[0], args)
                        if not hit:
                            continue
                    for ivs in vals.values():
                        for a, b in ivs:
                            got.update((a - tick, a, b - tick, b))
            self._moments = sorted(x for x in got if x != INF and x != -INF)
        return self._moments

    def _once(self, key: tuple, make: Callable[[], Any]) -> Any:
        """What ``make`` gives, worked out once per explanation (``_memo``)."""
        got = self._memo.get(key)
        if got is None:
            got = self._memo[key] = make()
        return got

    def _read(self, key: Key, items: list, point: bool) -> bool:
        """Whether any of the events (points: (args, value)) stored at one time is read."""
        focus = self.focus
        if focus is None:
            return True
        read = self._memo.get(("read", key[0]))  # (args -> whether read: the same ones recur)
        if read is None:
            read = self._memo[("read", key[0])] = {}
        for item in items:
            args = item[0] if point else item
            got = read.get(args)
            if got is None:
                got = read[args] = matches(focus, key[0], args)
            if got:
                return True
        return False

    def _kept(self, f: Fluent, lo: Any, t: Any, depth: int | None, path: frozenset) -> list[Node]:
        """Why nothing ends ``f`` in ``[lo, t)``: its terminatedAt rules, the initiatedAt rules of
        its other values and the deadlines to them, each blocked (``_blocked``)."""
        key, args, value = f
        rules = [("terminatedAt", r, value) for r in self.rules("terminatedAt", key) if value_of(r) in (value, None)]
        rules += [("initiatedAt", r, value_of(r)) for r in self.rules("initiatedAt", key)
                  if value_of(r) not in (value, None)]
        return self._blocked(f, rules, self._deadlines(f, False), lo, t, depth, path, ends=True)

    def _unstarted(self, f: Fluent, lo: Any, t: Any, depth: int | None, path: frozenset) -> list[Node]:
        """Why nothing initiates ``f`` in ``[lo, t)``: its initiatedAt rules and deadlines, blocked."""
        rules = [("initiatedAt", r, f[2]) for r in self.rules("initiatedAt", f[0]) if value_of(r) in (f[2], None)]
        return self._blocked(f, rules, self._deadlines(f, True), lo, t, depth, path)

    def _blocked(self, f: Fluent, rules: list[tuple[str, Rule, Any]], deadlines: list[tuple[Rule, Fluent, int, Any]],
                 lo: Any, t: Any, depth: int | None, path: frozenset, ends: bool = False) -> list[Node]:
        """Per rule: that its body fails at every time of ``[lo, t)`` something happens, with what
        blocks it where a condition fails by what is there rather than for want of something —
        a negated condition that holds, a fluent that holds (or, through a complement, does
        not) where the rule reads the opposite, an ``end``/``start`` that does not happen
        because the fluent goes on: what the cited input must keep for the rule to stay
        silent.  Each such fluent is explained once, at the latest time of its interval (or
        gap) the rules read it.  A deadline ``fi(G=W, F=V2, D)`` is blocked where G=W was not
        initiated D before (its rules blocked then) or was terminated since."""
        key, args, value = f
        fterm = _fterm(key, args)
        out = []
        needs: dict[tuple, Any] = {}  # (mode, fluent, its interval or gap) -> the latest time read

        def need(mode: str, g: Any, at: Any) -> None:
            span = (g, at) if mode in ("event", "initiated") else self.interval(g, at) if mode == "why" \
                else self.gap(g, at) or self._ungiven(g)
            if span is not None and needs.get((mode, g, span), -INF) < at:
                needs[(mode, g, span)] = at

        founds = []
        for kind, rule, v in rules:
            times = self._times(rule, lo, t)
            founds.append(self._blockers_over(rule, (kind, ("=", fterm, v)), lo, t, times))
            what = "its body does not hold" if kind == "terminatedAt" else f"{self.name((key, args, v))} is not initiated"
            text = f"checked at the {len(times)} time{'s' if len(times) != 1 else ''} it could fire in [{lo},{t}): " \
                   f"{what}" if times else f"checked: the event it starts from does not happen in [{lo},{t})"
            out.append(Node("rule", text, rule=rule_text(rule), window=f"[{lo},{t})"))
        # rules whose blockers are those of another fluent's (the same lists: a search shared by
        # heads that differ in what it does not read, caviar's thresholds) need the same fluents:
        # worked out once (the lists kept with them, so that their ids name them)
        done = ("needs", tuple(map(id, founds))) if not deadlines else None
        hit = self._memo.get(done) if done is not None else None
        if hit is not None and all(a is b for a, b in zip(hit[0], founds, strict=True)):
            needs = hit[1]
        else:
            for found in founds:
                for mode, g, at in found:
                    need(mode, g, at)
            if done is not None:
                self._memo[done] = (founds, needs)
        for rule, source, d, v in deadlines:
            skey, sargs, svalue = source
            inits = set(self.ev.fi_inits.get(source, ()))
            terms = self.ev.fi_terms.get(source, [])
            for q in self.stretches(lo - d, t - d):
                if q in inits:
                    if bisect_left(terms, q + d) > bisect_right(terms, q):  # terminated before the deadline
                        need("why-not", source, q + d)
                    else:  # the deadline's initiation cancelled by another value's there (both end at once)
                        for w in self._other_values(key, v):
                            need("initiated", (key, args, w), q + d)
                    continue
                head = ("initiatedAt", ("=", _fterm(skey, sargs), svalue), q)
                for r in self.rules("initiatedAt", skey):
                    for mode, g, at in self._blockers(r, head):
                        need(mode, g, at)
            out.append(Node("rule", f"checked: no deadline {d} after an initiation of {self.name(source)} in "
                                    f"[{lo - d},{t - d}) initiates {self.name((key, args, v))} in [{lo},{t})",
                            rule=rule_text(rule), window=f"[{lo},{t})"))
        children = [self.event(g[0], g[1], depth, path) if mode == "event" else self.why(g, at, depth, path)
                    if mode == "why" else self._cancelling(g, at, depth, path) if mode == "initiated"
                    else self._negated(self._kept_off(g, at, depth, path, (f, t, ends)))
                    for (mode, g, _), at in needs.items()]
        children = [c for c in children if c is not None]
        if children:
            out.append(Node("test", "what keeps those rules from firing there", children=children))
        return out

    def _ungiven(self, g: Fluent) -> Any:
        """A declared input fluent (``points/1``, ``buildFromPoints/1``, ``collectIntervals/1``)
        that does not hold where a rule reads it: one need, at the latest time read, whose entry
        proposes its input line there (fewer input events keep it away, so nothing is cited;
        None for any other fluent)."""
        key = g[0]
        declared = self.ev.point_decl.get(key[0]) == key[1] or self.ev.interval_decl.get(key[0]) == key[1]
        return "ungiven" if declared and not (self.simple(key) or self.sdf(key, g[2])) else None

    def _kept_off(self, g: Fluent, at: Any, depth: int | None, path: frozenset,
                  kept: tuple[Fluent, Any, bool]) -> Node:
        """Why ``g`` does not hold at ``at``, where that keeps a rule from firing: its entries
        propose the input event that would make ``g`` hold there (in a why too: the event whose
        absence the cited input relies on).  An input fluent is no answer to check that by: its
        line is checked for what the rule would do — ``kept`` (F, T, whether the rules would
        end F): initiate F so that it holds at T, or end it so that it does not — in a why-not
        only (``proposes_inputs``; in a why the entry names no line)."""
        node = self.why_not(g, at, depth, path)
        if self.simple(g[0]) or self.sdf(g[0], g[2]):
            return self._aim(node, g, at)
        if not self.proposes_inputs:
            return replace(node, why_not=[replace(e, candidates=[]) for e in node.entries])
        f, t, ends = kept
        goal = (*answer_atom(f), t)
        return replace(node, why_not=[replace(e, goal=goal, blocks=ends) for e in node.entries])

    def _other_values(self, key: Any, value: Any) -> list:
        """The values other than ``value`` an initiatedAt rule of ``key`` names."""
        return sorted({w for r in self.rules("initiatedAt", key) if (w := value_of(r)) is not None and w != value},
                      key=repr)

    def _cancelling(self, g: Fluent, at: Any, depth: int | None, path: frozenset) -> Node | None:
        """G=W initiated at ``at``, where a deadline initiates another value of G: RTEC starts
        neither (two values initiated at once end each other), so the deadline is blocked
        (None: W is not initiated there)."""
        found = self._initiations(g, at, depth, path)
        if not found:
            return None
        return Node("rule", f"{self.name(g)} initiated at {at}, as the deadline initiates another value: "
                            "neither starts there", time=at, atom=self.name(g), children=found)

    def _times(self, rule: Rule, lo: Any, t: Any) -> list:
        """The times in ``[lo, t)`` a rule could fire at: those of its first condition's event
        where that is an event (no other time can block it by what is there), else every time
        something happens and the last time of each stretch between them (``stretches``): a
        fluent's boundary can move there with fewer input events (a deadline from an earlier
        initiation), and the fluent that keeps it from happening there is then explained up
        to the end of the stretch, not only to the last time something happens."""
        first = rule.body[0] if rule.body else None
        if isinstance(first, tuple) and first[0] == "happensAt" and len(first) == 3:
            e = first[1]
            if not (isinstance(e, tuple) and e[0] in ("start", "end")):
                key = _key(e)
                times = self.ev.store.event_times.get(key, []) if key is not None else []
                at = self.ev.store.events.get(key, {}) if key is not None else {}
                return [x for x in times[bisect_left(times, lo):bisect_left(times, t)]
                        if self._read(key, at.get(x, ()), False)]  # type: ignore[arg-type]
        return self.stretches(lo, t)

    def stretches(self, lo: Any, t: Any) -> list:
        """The times in ``[lo, t)`` a rule that reads no event of its own can fire at, in a
        smaller input too: every time something happens, and the last time of each stretch
        between two of them (or before ``t``).  Nothing changes inside a stretch, so a body
        fails alike at each of its times, but what keeps it failing there is read at later
        times at its end (``end(F=V)`` at the stretch's last time fails while F=V holds a tick
        after it): checking only the times something happens would leave that unexplained,
        and the cited events alone could end F=V there."""
        known = self._memo.get(("stretches", lo, t))  # (each rule over a span asks: made once)
        if known is not None:
            return known
        moments, tick = self.moments(), self.tick
        i, j = bisect_left(moments, lo), bisect_left(moments, t)
        got = set(moments[i:j])
        got.update(m - tick for m in moments[i:j + 1] if m - tick >= lo)
        if t != INF and t - tick >= lo:
            got.add(t - tick)
        out = self._memo[("stretches", lo, t)] = sorted(got)
        return out

    def _deadlines(self, f: Fluent, same: bool) -> list[tuple[Rule, Fluent, int, Any]]:
        """The deadlines ``fi(G=W, F=V2, D)`` that initiate ``f``'s value (``same``) or another
        value of its fluent: (the rule, G=W ground, D, V2)."""
        out = []
        for rule in self.program.deadlines:
            vs = [Var() for _ in range(rule.nvars)]
            target = ("=", _fterm(f[0], f[1]), Var())
            mark = len(self.solver.trail)
            h = inst(rule.head, vs)
            if self.solver.unify(h[2], target) and (deref(target[2]) == f[2]) == same and type(deref(h[3])) is int:
                source = _fv(resolve(h[1]))
                if source is not None and not has_var(h[1]):
                    out.append((rule, source, deref(h[3]), resolve(target[2])))
            self.solver.undo(mark)
        return out

    @staticmethod
    def _negated(node: Node) -> Node:
        return replace(node, negated=True)  # (a copy: the node given out may be cited elsewhere)

    def gap(self, f: Fluent, t: Any) -> tuple | None:
        """The maximal stretch around ``t`` where a derived fluent does not hold (None where it
        holds, or for an input fluent: fewer input events keep it from holding)."""
        key, args, value = f
        if not (self.simple(key) or self.sdf(key, value)):
            return None
        ivs = self.ev.store.fluent_list(key, args, value)
        i = bisect_right(ivs, (t, INF))  # the intervals from i on start after t
        if i and t < ivs[i - 1][1]:
            return None
        return (ivs[i - 1][1] if i else -INF, ivs[i][0] if i < len(ivs) else INF)

    def _blockers_over(self, rule: Rule, head: tuple, lo: Any, t: Any, times: list) -> list[tuple[str, Any, Any]]:
        """``_blockers`` of ``rule`` for ``head`` (without its time) at each of ``times`` (those
        ``_times`` gives in ``[lo, t)``), in order.  A head that differs from one asked over the
        same span only in arguments the search does not read (``_loose``) gets that one's,
        once the rule's last goal, everywhere that search reached it, raises no error with its
        values — as ``_blockers`` shares a search at each time, without going through the
        times again (caviar's ``distance(P1,P2,Th)``, not initiated over the whole stream
        before T, for each threshold Th)."""
        memo = self._memo
        loose = memo.get(("loose", id(rule)))
        if loose is None:
            loose = memo[("loose", id(rule))] = _loose(rule)
        span = None
        if loose and not _time_loose(loose, len(head) + 1):
            span = ("blockers-over", id(rule), _loose_key(head, loose), lo, t)
            got = memo.get(span)
            if got is not None and self._last_goal_runs(rule, head, loose, got[1]):
                return got[0]
        out: list[tuple[str, Any, Any]] = []
        visits: list[list] = []
        whole = span is not None and span not in memo
        # the shared searches' keys (``_shared_key``'s; the time is not loose where ``whole``)
        # differ only in the time: their part made once
        rest, rid = _loose_key(head, loose) if whole else (), id(rule)
        for p in times:
            found = self._blockers(rule, (*head, p))
            out += found
            if whole:  # (this head's blockers at p are the search's whose visits are kept: shared)
                shared = memo.get(_search_key(rid, rest, False, p, 16))
                if shared is None or shared[0] is not found:
                    whole = False
                else:
                    visits += shared[1]
        if whole:
            memo[span] = (out, visits)
        return out

    def _shared_key(self, rule: Rule, head: Any, loose: tuple, budget: int) -> tuple:
        """The key of a blocking search shared by the heads that differ only at ``loose`` places
        (the head but its time recurs at every time checked: its part made once)."""
        rest = self._memo.get(("loose-key", id(rule), head[:-1]))
        if rest is None:
            rest = self._memo[("loose-key", id(rule), head[:-1])] = (_loose_key(head[:-1], loose),
                                                                      _time_loose(loose, len(head)))
        return _search_key(id(rule), rest[0], rest[1], head[-1], budget)

    def _blockers(self, rule: Rule, head: Any, budget: int = 16) -> list[tuple[str, Any, Any]]:
        """Why ``rule``'s body fails for ``head``: for each way its goals hold up to one that
        fails, what makes that one fail by being there (``_failed_by``), as (why or why-not,
        fluent, time).  Once per rule and head: an explanation asks again where the spans it
        checks overlap; and a search is shared by the heads that differ only in arguments it
        does not read (``_loose``: caviar's ``distance(P1,P2,Th)`` for each threshold Th), once
        the rule's last goal is seen to raise no error for the other head where the search met it."""
        memo = self._memo
        exact = ("blockers", id(rule), head, budget)
        got = memo.get(exact)
        if got is not None:
            return got
        loose = memo.get(("loose", id(rule)))
        if loose is None:  # (an empty tuple: none)
            loose = memo[("loose", id(rule))] = _loose(rule)
        shared_key = self._shared_key(rule, head, loose, budget) if loose else None
        shared = memo.get(shared_key) if shared_key is not None else None
        if shared is not None and self._last_goal_runs(rule, head, loose, shared[1]):
            got = memo[exact] = shared[0]
            return got
        visits: list[list] | None = [] if shared_key is not None and shared is None else None
        got, whole = self._solve_blockers(rule, head, budget, visits)
        memo[exact] = got
        if visits is not None and whole:  # (a search an error cut short stopped where this head made it)
            memo[shared_key] = (got, visits)
        return got

    def _solve_blockers(self, rule: Rule, head: Any, budget: int,
                        visits: list[list] | None) -> tuple[list[tuple[str, Any, Any]], bool]:
        """The blockers, and whether the search ran to its end (no error cut it short);
        ``visits`` gets the variables' values each time the search reaches the last goal."""
        vs = [Var() for _ in range(rule.nvars)]
        make_head, make_body = rule.build or rule.compile()  # (faster than inst at every time checked)
        mark = len(self.solver.trail)
        out: list[tuple[str, Any, Any]] = []
        whole = True
        try:
            if self.solver.unify(make_head(vs), head):
                first = self._first_key(rule, vs, budget)
                got = self._memo.get(("fails-first", first)) if first is not None else None
                if got is not None:
                    return got, True
                goals = [g for g in make_body(vs) if g not in ("!", "true")]
                failed = [False]
                self._search(goals, 0, out, [budget], None if visits is None else (vs, visits), failed)
                if failed[0] and first is not None:
                    self._memo[("fails-first", first)] = out
        except SolveError:
            whole = False
        finally:
            self.solver.undo(mark)
        return out, whole

    def _first_key(self, rule: Rule, vs: list, budget: int) -> Any:
        """The rule's first goal as the head makes it (its variables numbered in order, the
        head's values in place), where the rule has a second: rules that start with the same
        goal fail there alike (caviar's ``start(coord(Id1,X1,Y1)=true)``, read by four
        ``distance`` rules), so a search that failed at it is not run again (``fails-first``).
        None where the goal or the values cannot be a key."""
        info = self._memo.get(("first", id(rule)))
        if info is None:
            got = _first_goal(rule)
            if got:  # (the goal as a number, the same for the same goal: a key hashed at every time)
                numbers = self._memo.setdefault(("first-goals",), {})
                got = (numbers.setdefault(got[0], len(numbers)), got[1])
            info = self._memo[("first", id(rule))] = got
        if not info:
            return None
        template, slots = info
        values = []
        for i in slots:
            v = resolve(vs[i])
            if has_var(v):
                if type(v) is not Var:
                    return None  # (a partly bound value: its variables would need numbering too)
                v = _LOOSE
            elif type(v) is Ivs:
                return None
            values.append(v)
        return template, tuple(values), budget

    def _search(self, goals: list, i: int, out: list, left: list[int], visits: tuple[list, list] | None = None,
                failed: list[bool] | None = None) -> None:
        if i == len(goals) or left[0] <= 0:
            return
        left[0] -= 1
        if visits is not None and i == len(goals) - 1:
            visits[1].append([resolve(v) for v in visits[0]])
        mark = len(self.solver.trail)
        found = False
        for _ in self.solver.solve(goals[i], 0):  # (one goal, no cut: ``body``'s solutions of it)
            found = True
            self._search(goals, i + 1, out, left, visits)
            if left[0] <= 0:
                break
        self.solver.undo(mark)
        if not found:
            out += self._failed_by(goals[i])
            if failed is not None:
                failed[0] = True  # (at the first goal: the only call given ``failed``)

    def _last_goal_runs(self, rule: Rule, head: Any, loose: tuple[tuple[int, tuple[int, ...]], ...],
                        visits: list[list]) -> bool:
        """Whether the rule's last goal, where another head's search reached it (``visits``),
        raises no error with this head's values at the ``loose`` variables: then this head's
        search finds what that one found."""
        subs = []
        for slot, path in loose:
            at = head
            for k in path:
                if type(at) is not tuple or len(at) <= k:
                    return False
                at = at[k]
            subs.append((slot, at))
        _, make_body = rule.build or rule.compile()
        for vals in visits:
            now = list(vals)
            for slot, at in subs:
                now[slot] = at
            goal = [g for g in make_body(now) if g not in ("!", "true")][-1]
            mark = len(self.solver.trail)
            try:
                for _ in self.solver.body([goal], 0, [False], 0):
                    pass
            except SolveError:
                return False
            finally:
                self.solver.undo(mark)
        return True

    def _failed_by(self, goal: Any) -> list[tuple[str, Any, Any]]:
        """What the input must keep for a goal to stay failed: for ``\\+ G``, what makes G hold;
        for ``holdsAt(F=V, T)`` that F=V does not hold; ``start``/``end`` that the fluent does
        not begin or end there.  Nothing for an input event that is not there (fewer events
        keep it away)."""
        g = deref(goal)
        if isinstance(g, tuple) and g[0] in ("\\+", "not") and len(g) == 2:
            mark = len(self.solver.trail)
            try:
                for _ in self.solver.solve(g[1]):
                    return self._held(resolve(g[1]))
            except SolveError:
                pass
            finally:
                self.solver.undo(mark)
            return []
        if not (isinstance(g, tuple) and g[0] in ("happensAt", "holdsAt") and len(g) == 3 and type(deref(g[2])) is int):
            return []
        at = deref(g[2])
        if g[0] == "holdsAt":
            f = _fv(resolve(g[1]))
            return [("why-not", f, at)] if f is not None and not has_var(g[1]) else []
        e = deref(g[1])
        if not (isinstance(e, tuple) and e[0] in ("start", "end") and len(e) == 2):
            return []
        if not has_var(e[1]):
            f = _fv(resolve(e[1]))
            if f is None:
                return []
            inside, outside = (at + self.tick, at) if e[0] == "start" else (at, at + self.tick)
            # start: F=V holds at `at` already, or does not hold after; end: the other way round
            return [("why", f, outside)] if self.interval(f, outside) is not None else [("why-not", f, inside)]
        out = []
        mark = len(self.solver.trail)
        then, now = (at, at + self.tick) if e[0] == "start" else (at + self.tick, at)
        try:  # the instances that hold on both sides: they neither start nor end there
            for _ in self.solver.solve(("holdsAt", e[1], then)):
                f = _fv(resolve(e[1]))
                if f is not None and self.interval(f, now) is not None:
                    out.append(("why", f, then))
                if len(out) >= 4:
                    break
        except SolveError:
            pass
        finally:
            self.solver.undo(mark)
        return out

    def _held(self, g: Any) -> list[tuple[str, Any, Any]]:
        """What makes a satisfied ground goal hold, as needs (a negation's operand)."""
        if isinstance(g, tuple) and g[0] == "holdsAt" and len(g) == 3:
            f = _fv(g[1])
            return [("why", f, g[2])] if f is not None else []
        if isinstance(g, tuple) and g[0] == "happensAt" and len(g) == 3:
            e, at = g[1], g[2]
            if isinstance(e, tuple) and e[0] in ("start", "end") and len(e) == 2:
                f = _fv(e[1])
                if f is None:
                    return []
                inside, outside = (at + self.tick, at) if e[0] == "start" else (at, at + self.tick)
                return [("why", f, inside), ("why-not", f, outside)]
            return [("event", (e, at), at)]
        return []


class _Nth:
    """The k-th variable of a goal, in a key (``_first_goal``): no term of a program equals it."""

    __slots__ = ("k",)

    def __init__(self, k: int) -> None:
        self.k = k

    def __eq__(self, other: object) -> bool:
        return type(other) is _Nth and other.k == self.k

    def __hash__(self) -> int:
        return hash((_Nth, self.k))


def _first_goal(rule: Rule) -> tuple[Any, tuple[int, ...]] | tuple[()]:
    """A rule's first goal (cuts and ``true`` left out) with its variables as their order of
    first appearance, and those variables' slots in that order; () where the rule has one goal
    (a search that reaches its last goal records where: ``_blockers``) or the goal is a variable."""
    body = [g for g in rule.body if g not in ("!", "true")]
    if len(body) < 2 or type(body[0]) is Slot:
        return ()
    order: list[int] = []
    for i in _slots(body[0], []):
        if i not in order:
            order.append(i)
    at = {i: k for k, i in enumerate(order)}

    def rename(term: Any) -> Any:
        if type(term) is Slot:
            return _Nth(at[term.i])
        if type(term) is tuple:
            return tuple(rename(x) for x in term)
        return term

    return rename(body[0]), tuple(order)


def _slots(term: Any, out: list[int]) -> list[int]:
    """The variables (slot numbers) of a clause's term, each as often as it occurs."""
    if type(term) is Slot:
        out.append(term.i)
    elif type(term) is tuple:
        for x in term:
            _slots(x, out)
    return out


def _loose(rule: Rule) -> tuple[tuple[int, tuple[int, ...]], ...]:
    """Where in the head the variables are whose value a blocking search (``Blocking._blockers``)
    does not read: once in the head, and in the body at most in its last goal where that goal's
    failure cites nothing (not a negation, ``holdsAt`` or ``happensAt``: ``_failed_by`` gives
    nothing for it).  The goals before it are solved the same whatever the value, the last is
    visited as often (one step of the budget each time), and what it finds or not adds no need."""
    body = [g for g in rule.body if g not in ("!", "true")]
    if not body or type(body[-1]) is Slot or (type(body[-1]) is tuple and body[-1][0] in
                                              ("\\+", "not", "holdsAt", "happensAt")):
        return ()
    head = _slots(rule.head, [])
    before = set(_slots(tuple(body[:-1]), []))
    loose = {i for i in head if head.count(i) == 1 and i not in before}
    out: list[tuple[int, tuple[int, ...]]] = []

    def walk(term: Any, path: tuple[int, ...]) -> None:
        if type(term) is Slot and term.i in loose:
            out.append((term.i, path))
        elif type(term) is tuple:
            for k, x in enumerate(term):
                walk(x, (*path, k))

    walk(rule.head, ())
    return tuple(out)


def _loose_key(ground: Any, loose: tuple[tuple[int, tuple[int, ...]], ...]) -> Any:
    """A ground head with its arguments at the loose variables' places (``_loose``) left out."""
    for _, path in loose:
        ground = _put(ground, path)
    return ground


def _search_key(rule_id: int, rest: Any, time_loose: bool, time: Any, budget: int) -> tuple:
    """The memo key of a blocking search shared by heads that differ only at loose places:
    the rule, the head but its time with those places left out (``_loose_key``), the time
    (left out too where it is loose) and the budget."""
    return ("blockers", rule_id, (*rest, _LOOSE if time_loose else time), budget)


def _time_loose(loose: tuple[tuple[int, tuple[int, ...]], ...], n: int) -> bool:
    """Whether the head's last argument, its time, is one of the ``loose`` places."""
    return any(path == (n - 1,) for _, path in loose)


def _put(term: Any, path: tuple[int, ...]) -> Any:
    if not path:
        return _LOOSE
    i = path[0]
    if type(term) is not tuple or len(term) <= i:
        return term  # (not of the head's shape: it does not unify, whatever is there)
    return (*term[:i], _put(term[i], path[1:]), *term[i + 1:])
