"""Why an Event Calculus fluent holds at T, or why not (``chronolog explain --why / --why-not``).

The explanation reads the evaluator's store after ``run``'s evaluation of the input (every
fluent's maximal intervals, the events, the points) and solves the rules again, with the
evaluator's own built-ins, at the few time points it needs — nothing is recorded while
running:

* a simple fluent F=V on ``[s, e)`` was initiated at ``t0 = s − tick``: the ``initiatedAt``
  rule whose body holds there (its bindings, each condition unfolded: ``happensAt`` of an
  input event down to its input line, of a derived event to its rule, ``start``/``end`` and
  ``holdsAt`` of other fluents to their own intervals, a negated condition with its why-not),
  or ``initially``, or a deadline ``fi/3`` (the source's initiation and that it went on);
  and it is not terminated in ``[t0, T)``: each rule that would end it checked at every time
  it could fire, with what keeps it silent (``blocking.py``);
* a statically determined fluent: its ``holdsFor`` rule, each interval operation with its
  result, and each operand unfolded — the operands that must hold at T (``union_all``: one
  that does; ``intersect_all``: all) with their why, those that must not (subtracted,
  complemented) negated with their why-not.

Why not: never initiated, first initiated after T, or initiated at t0 and terminated at
t1 ≤ T (the ``terminatedAt`` rule and the event that did it, with its input line); then,
per ``initiatedAt`` rule of F=V, the first condition (in the rule's order) that fails at
``T − tick`` (the latest initiation that would make it hold at T) for the query's bindings,
variables the head leaves open read as "some value".  For a statically determined fluent,
per ``holdsFor`` rule, the interval operation whose result leaves T out and the operands
that make it so.  Inside a why (a negated condition, a subtracted operand, what keeps a
rule silent) a fluent that does not hold also shows why nothing initiated it since it last
held, so that the input events cited anywhere in a why derive the atom on their own.
"""

from __future__ import annotations

from bisect import bisect_left, bisect_right
from collections.abc import Callable, Iterable, Iterator
from dataclasses import replace
from typing import Any

from chronolog.core import intervals as I
from chronolog.core.events import Event
from chronolog.core.explanation import Node
from chronolog.dialects.rtec.analysis import domain_feeds
from chronolog.dialects.rtec.blocking import Blocking
from chronolog.dialects.rtec.evaluator import RtecEvaluator
from chronolog.dialects.rtec.hierarchy import Key, _fterm, _fv, _key
from chronolog.dialects.rtec.intervals import INF
from chronolog.dialects.rtec.parser import RtecProgram
from chronolog.dialects.rtec.prolog import term_text
from chronolog.dialects.rtec.relevance import demands
from chronolog.dialects.rtec.showing import Fluent, answer_atom, bindings, has_var, ivs_text, plain, rule_text, show, value_of
from chronolog.dialects.rtec.terms import Ivs, Rule, Slot, SolveError, Var, deref, from_list, inst, resolve
from chronolog.dialects.rtec.unground import Ungrounded
from chronolog.evaluator import atom_text

Atom = tuple[str, tuple]
_DONE = object()
CLOSEST_TRIES = 64  # times a direct why-not's closest-time search tries where it cannot look one event up
_OPS = {("union_all", 2), ("intersect_all", 2), ("relative_complement_all", 3), ("complement_all", 2)}


class Explainer(Blocking):
    """The rules and the evaluated store of one event description over one input."""

    def __init__(self, program: RtecProgram, ev: RtecEvaluator, events: Iterable[Event], every: bool = False,
                 focus: dict[str, set] | None = None) -> None:
        self.program = program
        self.focus = focus
        self.ev = ev
        self.tick = program.clock_tick
        self.every = every
        # whether an absent input fluent a rule reads gets its line proposed (``Blocking._kept_off``):
        # in a why-not only, where naming what is missing is the point; in a why the checks
        # (an evaluation of the input each) multiplied the p99 of ``bench explain``'s caviar row by 5
        self.proposes_inputs = False
        ev.win_lo, ev.win_hi, ev.deferring, ev._bounds = -INF, INF, set(), {}  # read it all, at any time
        self.solver = ev.solver
        self._moments: list | None = None
        self._events: dict[str, list[Event]] = {}  # input predicate -> its events, in arrival order
        for e in events:
            if e.pred is not None:
                self._events.setdefault(e.pred, []).append(e)
        self._inputs: dict[str, dict[tuple, list[Event]]] = {}
        self._feeders: dict[tuple, Event] | None = None
        self._texts: dict[Any, str] = {}  # an input argument -> its Prolog text (few distinct ones)
        # one explanation asks the same things more than once (a fluent read by several rules,
        # the rules that would end it solved at the same time): each answered once.  Nodes
        # given out are never changed by the caller (a negated copy is made instead)
        self._memo: dict[tuple, Any] = {}
        self._names: dict[Fluent, str] = {}  # (a fluent named again and again)
        self._times_of: dict[tuple, Any] = {}  # (pred, args as text) -> ``_point_times``

    def _text(self, args: tuple) -> tuple:
        texts = self._texts
        out = []
        for a in args:
            got = texts.get(a)
            if got is None:
                got = texts[a] = term_text(a)
            out.append(got)
        return tuple(out)

    def inputs(self, pred: str, args: tuple) -> list[Event]:
        """The input events of ``pred(args)`` (arguments as text), a retraction taking back the
        latest such event; indexed per predicate when first asked (most are never asked)."""
        index = self._inputs.get(pred)
        if index is None:
            index = self._inputs[pred] = {}
            texts: dict[tuple, tuple] = {}  # (the same arguments recur: a coordinate that stays put)
            for e in self._events.get(pred, ()):
                given = e.args
                text = texts.get(given) if type(given) is tuple else None
                if text is None:
                    text = self._text(given)
                    if type(given) is tuple:
                        texts[given] = text
                same = index.setdefault(text, [])
                if not e.retract:
                    same.append(e)
                    continue
                gone = next((i for i in range(len(same) - 1, -1, -1) if (same[i].t, same[i].span) == (e.t, e.span)),
                            None)
                if gone is not None:
                    del same[gone]
        return index.get(args, [])

    @property
    def feeders(self) -> dict[tuple, Event]:
        """A dynamicDomain fact (``id(id4)``) -> the earliest input event that puts it in the domain."""
        if self._feeders is None:
            self._feeders = {}
            for pred, got in domain_feeds(self.program).items():
                for fact, e in self._earliest(pred, got).items():
                    if fact not in self._feeders or e.t < self._feeders[fact].t:
                        self._feeders[fact] = e
        return self._feeders

    def _earliest(self, pred: str, got: list[tuple[Key, list[int]]]) -> dict[tuple, Event]:
        """The earliest input event of ``pred`` that puts each domain fact there (``got``: the
        domain predicate and the argument positions); of several at that time, the first of
        ``inputs``' order (by the first arrival of their arguments, then arrival).  Read
        straight off the events — the arguments a fact does not name are made text only where
        such a tie needs the order — unless one is retracted (then ``inputs``' index)."""
        events = self._events.get(pred, ())
        tied: dict[tuple, list[Event]] = {}  # a fact -> its events of the earliest time
        places = list(dict.fromkeys((dom, tuple(pos)) for dom, pos in got))
        texts = self._texts
        if len(places) == 1 and len(places[0][1]) == 1:  # (the usual: one argument feeds one domain)
            quick = self._earliest_by_argument(events, places[0][0], places[0][1][0])
            if quick is not None:
                return quick
        for e in events:
            if e.retract:
                return self._earliest_indexed(pred, got)
            args = e.args
            for dom, pos in places:
                if len(pos) == 1 and pos[0] < len(args):  # (the usual: one argument, its text cached)
                    a = args[pos[0]]
                    text = texts.get(a)
                    if text is None:
                        text = texts[a] = term_text(a)
                    fact = (dom, (text,))
                elif max(pos, default=-1) < len(args):
                    fact = (dom, self._text(tuple(args[p] for p in pos)))
                else:
                    continue
                now = tied.get(fact)
                if now is None or e.t < now[0].t:
                    tied[fact] = [e]
                elif e.t == now[0].t:
                    now.append(e)
        if all(len(same) == 1 for same in tied.values()):
            return {fact: same[0] for fact, same in tied.items()}
        first: dict[tuple, int] = {}
        for i, e in enumerate(events):
            first.setdefault(self._text(e.args), i)
        return {fact: min(same, key=lambda e: first[self._text(e.args)]) for fact, same in tied.items()}

    def _earliest_by_argument(self, events: Iterable[Event], dom: Any, pos: int) -> dict[tuple, Event] | None:
        """``_earliest`` where one argument feeds one domain, by the argument's value (its text
        made once per value): caviar's 7,000 coordinates of a pair, a lookup each.  None where
        the generic way is needed: a retraction, a time tied between events, or two values of
        the same text."""
        by_value: dict[Any, Event] = {}
        tie = False
        for e in events:
            if e.retract:
                return None
            args = e.args
            if pos >= len(args):
                continue
            now = by_value.get(a := args[pos])
            if now is None or e.t < now.t:
                by_value[a] = e
            elif e.t == now.t:
                tie = True
        if tie:
            return None
        texts = self._texts
        out: dict[tuple, Event] = {}
        for a, e in by_value.items():
            text = texts.get(a)
            if text is None:
                text = texts[a] = term_text(a)
            fact = (dom, (text,))
            if fact in out:
                return None
            out[fact] = e
        return out

    def _earliest_indexed(self, pred: str, got: list[tuple[Key, list[int]]]) -> dict[tuple, Event]:
        self.inputs(pred, ())
        out: dict[tuple, Event] = {}
        for same in self._inputs[pred].values():
            for e in same:
                for dom, pos in got:
                    if max(pos, default=-1) < len(e.args):
                        fact = (dom, self._text(tuple(e.args[p] for p in pos)))
                        if fact not in out or e.t < out[fact].t:
                            out[fact] = e
        return out

    # ------------------------------------------------------------ what is what

    def fluent_of(self, atom: Atom) -> Fluent:
        """An answer atom (value last unless ``true``) as the fluent-value pair it stands for."""
        name, args = atom
        arities = {k[1] for e in self.ev.h.kind for k in [e[1]] if e[0] == "fluent" and k[0] == name}
        arities |= {k[1] for k in self.ev.store.fluents if k[0] == name}
        if len(args) in arities:
            key, fargs, value = (name, len(args)), tuple(args), "true"
        elif args and len(args) - 1 in arities:
            key, fargs, value = (name, len(args) - 1), tuple(args[:-1]), args[-1]
        else:
            return (name, len(args)), tuple(args), "true"
        # compound arguments are written as their Prolog text (``"declare(310,9,carried)"``)
        wanted = tuple(str(a) for a in fargs)
        for stored, vals in self.ev.store.fluents.get(key, {}).items():
            if tuple(term_text(a) for a in stored) == wanted:
                return key, stored, next((v for v in vals if term_text(v) == str(value)), value)
        return key, fargs, value

    def point(self, key: Key) -> bool:
        """An input fluent given as points (``points/1``, ``buildFromPoints/1``)."""
        return key[0] in self.ev.point_decl and key in self.ev.store.points

    def simple(self, key: Key) -> bool:
        return ("fluent", key, None) in self.ev.h.kind

    def unadmitted(self, f: Fluent) -> bool:
        """A rule-defined instance its grounding/1 does not admit: RTEC computes none of it
        (``admitted.py``; a statically determined fluent is derived for admitted heads only)."""
        key, args, value = f
        if not ((self.simple(key) and ("fluent", key, None) in self.ev.admits)
                or (self.sdf(key, value) and self.ev._has_grounding(key))):
            return False
        return not self.ev.grounded(("=", _fterm(key, args), value))

    def sdf(self, key: Key, value: Any) -> bool:
        """A statically determined value (also one beside a simple fluent's other values)."""
        return self.ev.h.kind.get(("fluent", key, value)) == "sdf"

    def rules(self, kind: str, key: Key) -> list[Rule]:
        """The rules of ``kind`` whose head is a value of fluent ``key`` (or event ``key``)."""
        out = []
        for k, rule in self.program.rules:
            if k != kind:
                continue
            head = rule.head[1]
            got = _key(head) if kind == "happensAt" else _key(head[1]) if isinstance(head, tuple) else None
            if got == key:
                out.append(rule)
        return out

    def interval(self, f: Fluent, t: Any) -> tuple | None:
        """The maximal interval ``(a, b)`` of ``f`` that contains ``t`` (None if it does not hold)."""
        key, args, value = f
        if self.point(key):
            return (t, t + self.tick) if (args, value) in self.ev.store.points[key].get(t, ()) else None
        ivs = self.ev.store.fluent_list(key, args, value)
        i = bisect_right(ivs, (t, INF)) - 1  # the last interval that starts at or before t
        if i >= 0 and ivs[i][0] <= t < ivs[i][1]:
            return (ivs[i][0], ivs[i][1])
        return None

    # ------------------------------------------------------------ solving a rule again, with its trace

    def _solve(self, rule: Rule, head: Any) -> Iterator[tuple[list, list]]:
        """The solutions of ``rule`` for the ground ``head``: (its variables, its body goals),
        bindings in place while a solution is current."""
        vs = [Var() for _ in range(rule.nvars)]
        make_head, make_body = rule.build or rule.compile()
        goals = make_body(vs)
        mark = len(self.solver.trail)
        try:
            if self.solver.unify(make_head(vs), head):
                for _ in self.solver.body(goals, 0, [False], 0):
                    yield vs, goals
        finally:
            self.solver.undo(mark)

    def _first_failing(self, rule: Rule, head: Any) -> tuple[int, dict[str, Any], list] | None:
        """The first body goal (0-based) that no solution of the goals before it satisfies,
        with the bindings and goals of the first solution of those before it; None if the
        body holds, -1 if the head does not match."""
        vs = [Var() for _ in range(rule.nvars)]
        make_head, make_body = rule.build or rule.compile()
        goals = make_body(vs)
        mark = len(self.solver.trail)
        try:
            if not self.solver.unify(make_head(vs), head):
                return -1, {}, []  # its head does not match
            for k in range(len(goals) + 1):
                inner = len(self.solver.trail)
                found = next(iter(self.solver.body(goals[:k], 0, [False], 0)), _DONE) is not _DONE
                self.solver.undo(inner)
                if not found:
                    prefix = next(iter(self.solver.body(goals[:k - 1], 0, [False], 0)), _DONE)
                    shown = [resolve(g) for g in goals] if prefix is not _DONE else goals
                    return k - 1, bindings(rule, vs), shown
            return None
        except SolveError:
            return None
        finally:
            self.solver.undo(mark)

    # ------------------------------------------------------------ why

    def why(self, f: Fluent, t: Any, depth: int | None, path: frozenset = frozenset()) -> Node:
        if not (self.simple(f[0]) or self.sdf(f[0], f[2])):  # an input fluent, a leaf: the same on every path
            cut = depth is not None and depth < 0  # (and at every depth but past the cut)
            return self._once(("why-input", f, t, cut), lambda: self._why(f, t, -1 if cut else None, frozenset()))
        return self._once(("why", f, t, depth, path), lambda: self._why(f, t, depth, path))

    def _why(self, f: Fluent, t: Any, depth: int | None, path: frozenset) -> Node:
        key, args, value = f
        name = self.name(f)
        held = self.interval(f, t)
        shown = I.text((held[0], True, held[1], False)) if held else ""
        about: dict[str, Any] = {"atom": name, "time": t, "interval": shown}
        if held is None:
            return Node("atom", f"{name} does not hold at {t}", **about)
        if (f, held) in path:
            return Node("atom", f"{name} on {shown} (explained above)", **about)
        if depth is not None and depth < 0:
            return Node("atom", f"{name} on {shown} (cut at --depth)", **about)
        path = path | {(f, held)}
        more = None if depth is None else depth - 1
        if self.sdf(key, value):
            node = self._why_sdf(f, t, held, more, path, about)
        elif self.simple(key):
            node = self._why_simple(f, t, held, more, path, about)
        else:
            return self._input(f, t, held, about)
        node.children += self._grounded(f)
        return node

    def _grounded(self, f: Fluent) -> list[Node]:
        """How ``grounding/1`` admits ``f`` where it reads the dynamic domain (``id(P)``): the
        input event that put each value there (without it the fluent is not evaluated)."""
        return list(self._once(("grounded", f), lambda: self._grounding(f)))

    def _grounding(self, f: Fluent) -> list[Node]:
        fv = ("=", _fterm(f[0], f[1]), f[2])
        for rule in self.program.background.get(("grounding", 1), []):
            for vs, goals in self._solve(rule, ("grounding", fv)):
                facts = [resolve(g) for g in goals if _key(g) in self.program.dynamic_domain]
                got = [(g, self.feeders.get(((g[0], len(g) - 1) if isinstance(g, tuple) else (g, 0),
                                             tuple(term_text(a) for a in g[1:]) if isinstance(g, tuple) else ())))
                       for g in facts]
                if not got:
                    return []
                return [Node("grounding", f"admitted by grounding/1: {', '.join(show(g) for g, _ in got)} "
                                          "(the dynamic domain, from the input)", rule=rule_text(rule),
                             bindings=bindings(rule, vs),
                             children=[self._leaf(e) for _, e in got if e is not None])]
        return []

    def _input(self, f: Fluent, t: Any, held: tuple, about: dict[str, Any]) -> Node:
        """An input fluent: the input points or intervals that make it hold at ``t``."""
        key, args, value = f
        pred_args = (key[0], self._text(args) + (() if value == "true" else (term_text(value),)))
        got = []
        given = self.inputs(*pred_args)
        times = self._point_times(pred_args, given)
        if times is not None:  # (points in time order: those of (t - tick, t], by bisection)
            for e in given[bisect_right(times, t - self.tick):bisect_right(times, t)]:
                if held[0] <= e.t:
                    got.append(self._leaf(e))
        else:
            for e in given:
                if (e.span is not None and I.contains(I.of_span(e.span), t)) or \
                        (e.span is None and held[0] <= e.t <= t and t - e.t < self.tick):
                    got.append(self._leaf(e))
        if self.point(key):
            return Node("input", f"{about['atom']} at {t}: an input point", children=got, atom=about["atom"], time=t)
        return Node("input", f"{about['atom']} on {about['interval']}: input", children=got, **about)

    def _point_times(self, pred_args: tuple, given: list[Event]) -> list | None:
        """The times of an input fluent instance's events (``inputs``'), where all are points
        in time order (None otherwise): a fluent that stays put has one event per time, and
        an explanation cites one of them at each of hundreds of times."""
        known = self._times_of.get(pred_args, _DONE)
        if known is _DONE:
            times = [e.t for e in given]
            ordered = all(e.span is None for e in given) and all(a <= b for a, b in zip(times, times[1:]))
            known = self._times_of[pred_args] = times if ordered else None
        return known

    def _leaf(self, e: Event) -> Node:
        what = atom_text(e.pred or "", self._text(e.args))
        when = I.text(I.of_span(e.span)) if e.span is not None else str(e.t)
        return Node("event", f"input {what} {'on' if e.span is not None else 'at'} {when}",
                    where="" if e.loc is None else str(e.loc), atom=what,
                    **({"interval": when} if e.span is not None else {"time": e.t}))

    def _why_simple(self, f: Fluent, t: Any, held: tuple, depth: int | None, path: frozenset,
                    about: dict[str, Any]) -> Node:
        key, args, value = f
        name, shown = about["atom"], about["interval"]
        t0 = held[0] - self.tick
        found = self._initiations(f, t0, depth, path)
        if not found:
            found = self._deadline(f, t0, depth, path) + self._initially(f, held)
        if not found:
            found = [Node("atom", f"{name}: no initiation found at {t0}")]
        start = max(t0, 0)
        checked = Node("test", f"not terminated in [{start},{t}): no terminatedAt rule (nor an initiation of another "
                               f"value) fires there — it holds on {shown}", window=f"[{start},{t})",
                       children=self._kept(f, start, t, depth, path))
        if held[0] == 0 and found[0].kind == "initially":
            return Node("initially", f"{name} on {shown}: holds from the start (initially), not terminated in "
                                     f"[0,{t})", **about, children=[*found, checked])
        return Node("rule", f"{name} on {shown}: initiated at {t0}, not terminated in [{t0},{t})", **about,
                    rule=found[0].rule, bindings=found[0].bindings,
                    children=[*(found[0].children if found[0].kind == "rule" and len(found) == 1 else found),
                              checked])

    def _initiations(self, f: Fluent, t0: Any, depth: int | None, path: frozenset) -> list[Node]:
        """The initiatedAt rule instances of ``f`` whose body holds at ``t0`` (the first unless --all)."""
        key, args, value = f
        fv = ("=", _fterm(key, args), value)
        found = []
        for rule in self.rules("initiatedAt", key):
            for vs, goals in self._solve(rule, ("initiatedAt", fv, t0)):
                found.append(Node("rule", f"{self.name(f)} initiated at {t0}", rule=rule_text(rule),
                                  bindings=bindings(rule, vs), time=t0, atom=self.name(f),
                                  children=self.conditions(goals, t0, depth, path)))
                break
            if found and not self.every:
                break
        return found

    def _initially(self, f: Fluent, held: tuple) -> list[Node]:
        if held[0] != 0:
            return []
        fv = ("=", _fterm(f[0], f[1]), f[2])
        for rule in self.program.initially:
            vs = [Var() for _ in range(rule.nvars)]
            mark = len(self.solver.trail)
            ok = self.solver.unify(inst(rule.head, vs)[1], fv)
            self.solver.undo(mark)
            if ok:
                return [Node("initially", f"{self.name(f)} holds initially", rule=rule_text(rule))]
        return []

    def _deadline(self, f: Fluent, t0: Any, depth: int | None, path: frozenset) -> list[Node]:
        """F=V2 initiated at t0 by ``fi(F=V, F=V2, D)``: F=V initiated at t0 − D and not terminated since."""
        out = []
        fv2 = ("=", _fterm(f[0], f[1]), f[2])
        for rule in self.program.deadlines:
            vs = [Var() for _ in range(rule.nvars)]
            mark = len(self.solver.trail)
            h = inst(rule.head, vs)
            if self.solver.unify(h[2], fv2) and type(deref(h[3])) is int:
                got = _fv(resolve(h[1]))
                d = deref(h[3])
                if got is not None and t0 - d in self.ev.fi_inits.get(got, []):
                    q = t0 - d  # (an initiation that gave no interval counts too)
                    kept = Node("test", f"{self.name(got)} not terminated in ({q},{t0})", window=f"({q},{t0})",
                                children=self._kept(got, q + 1, t0, depth, path))
                    out.append(Node("rule", f"{self.name(f)} initiated at {t0} by a deadline: "
                                            f"{self.name(got)} initiated at {q}, {d} before", rule=rule_text(rule),
                                    time=t0, children=[*self._initiations(got, q, depth, path), kept]))
            self.solver.undo(mark)
        return out

    def _why_sdf(self, f: Fluent, t: Any, held: tuple, depth: int | None, path: frozenset,
                 about: dict[str, Any]) -> Node:
        key, args, value = f
        fv = ("=", _fterm(key, args), value)
        for rule in self.rules("holdsFor", key):
            if value_of(rule) not in (value, None):
                continue
            for vs, goals in self._solve(rule, ("holdsFor", fv, Var())):
                got = deref(vs[rule.head[2].i]) if type(rule.head[2]) is Slot else None
                if type(got) is not Ivs or not any(a <= t < b for a, b in got.pairs):
                    continue
                children = self._operation(rule, goals, rule.head[2], vs, t, True, depth, path)
                return Node("rule", f"{about['atom']} on {about['interval']}: statically determined, "
                                    f"{show(got)} by its holdsFor rule", rule=rule_text(rule),
                            bindings=bindings(rule, vs), children=children, **about)
        return Node("atom", f"{about['atom']} on {about['interval']}: statically determined, no holdsFor "
                            f"rule found that gives it at {t}", **about)

    def _operation(self, rule: Rule, goals: list, out: Any, vs: list, t: Any, holds: bool, depth: int | None,
                   path: frozenset, top: bool = False) -> list[Node]:
        """Why the interval list ``out`` of a holdsFor body does (``holds``) or does not contain
        ``t``: the goal that made it, unfolded to the operands that decide."""
        target = deref(out if type(out) is not Slot else vs[out.i])
        maker, made = None, -1
        for i, g in enumerate(goals):
            name, n = g[0], len(g) - 1
            last = g[n] if (name, n) in _OPS or (name, n) == ("holdsFor", 2) else None
            if last is not None and (last is out or (type(out) is Slot and last is vs[out.i]) or
                                     (type(deref(last)) is Ivs and deref(last) is target)):
                maker, made = g, i
        if maker is None:
            return [Node("condition", f"{show(target)} {'contains' if holds else 'leaves out'} {t}")]
        name = maker[0]
        if name == "holdsFor":
            f = _fv(resolve(maker[1]))
            assert f is not None
            if not holds and type(deref(f[2])) is Var:  # RTEC's fall-back: nothing it reads is stored
                return [self._nothing_read(resolve(maker[1]), t)]
            if holds:
                return [self.why(f, t, depth, path)]
            return [replace(self._aim(self.why_not(f, t, depth, path, top), f, t), negated=True)]
        result = deref(maker[-1])
        text = f"{show(rule.body[made], rule.names)} = {show(result)}: {'contains' if holds else 'leaves out'} {t}"
        lists = from_list(maker[2] if name == "relative_complement_all" else maker[1]) or []
        inside = [x for x in lists if self._contains(x, t)]
        outside = [x for x in lists if not self._contains(x, t)]
        parts: list[tuple[Any, bool]]  # (operand, whether it holds at t): those that decide
        if name == "relative_complement_all":
            parts = [(maker[1], True)] + [(x, False) for x in lists] if holds else \
                [(maker[1], False)] if not self._contains(maker[1], t) else [(x, True) for x in inside[:1]]
        elif name == "complement_all":
            parts = [(x, False) for x in lists] if holds else [(x, True) for x in inside[:1]]
        elif name == "union_all":
            parts = [(x, True) for x in (inside if self.every else inside[:1])] if holds else \
                [(x, False) for x in lists]
        else:  # intersect_all
            parts = [(x, True) for x in lists] if holds else [(x, False) for x in outside[:1]]
        children = [c for x, must in parts for c in self._operation(rule, goals, x, vs, t, must, depth, path, top)]
        return [Node("operation", text, window=ivs_text(deref(result).pairs) if type(deref(result)) is Ivs else "[]",
                     children=children)]

    def _nothing_read(self, fv: Any, t: Any) -> Node:
        """A ``holdsFor`` read with a free value that gave ``[]``: nothing of the values it sees
        (RTEC's one cache for it, ``unground.read_values``) is stored for it."""
        only = self.ev.read_values.get(_key(fv[1]))
        if only is None:
            what = "nothing is stored for any value of it"
        else:
            names = ", ".join(sorted(term_text(v) for v in only))
            what = (f"nothing is stored for {names}, the only {'values' if len(only) > 1 else 'value'} such a "
                    "read sees (RTEC reads one cache for a free value)")
        return Node("why-not", f"{show(fv)} reads [], without {t}: {what}; RTEC's fall-back gives []",
                    atom=show(fv), time=t, negated=True)

    @staticmethod
    def _contains(term: Any, t: Any) -> bool:
        got = deref(term)
        return type(got) is Ivs and any(a <= t < b for a, b in got.pairs)

    def conditions(self, goals: list, t0: Any, depth: int | None, path: frozenset) -> list[Node]:
        """The satisfied body goals of a rule instance, unfolded (cuts and ``true`` left out)."""
        return [self.condition(g, t0, depth, path) for g in goals if deref(g) not in ("!", "true")]

    def condition(self, goal: Any, t0: Any, depth: int | None, path: frozenset) -> Node:
        """One satisfied body goal of a rule instance, unfolded."""
        g = resolve(goal)
        text = show(g)
        if isinstance(g, tuple) and g[0] == "happensAt" and len(g) == 3:
            e, at = g[1], g[2]
            if isinstance(e, tuple) and e[0] in ("start", "end") and len(e) == 2:
                f = _fv(e[1])
                assert f is not None
                inside, outside = (at + self.tick, at) if e[0] == "start" else (at, at + self.tick)
                what = "starts" if e[0] == "start" else "ends"
                return Node("literal", f"{text}: {self.name(f)} {what} after {at}", atom=text, time=at,
                            children=[self.why(f, inside, depth, path), self.why_not(f, outside, depth, path)])
            return self.event(e, at, depth, path)
        if isinstance(g, tuple) and g[0] == "holdsAt" and len(g) == 3:
            f = _fv(g[1])
            assert f is not None
            return Node("literal", text, atom=text, time=g[2], children=[self.why(f, g[2], depth, path)])
        if isinstance(g, tuple) and g[0] in ("\\+", "not") and len(g) == 2:
            inner = g[1]
            node = Node("negated", f"{text}: {show(inner)} does not hold", atom=text, negated=True)
            if isinstance(inner, tuple) and inner[0] == "holdsAt" and len(inner) == 3:
                f = _fv(inner[1])
                if f is not None and type(inner[2]) is int:
                    sub = self.why_not(f, inner[2], depth, path)
                    self._aim(sub, f, inner[2])
                    node.children.append(replace(sub, why_not=None))
                    node.why_not = sub.entries  # rule by rule, told once: on the literal
            elif isinstance(inner, tuple) and inner[0] == "happensAt" and len(inner) == 3:
                node.text = f"{text}: no {show(inner[1])} at {show(inner[2])}"
                node.children += self._no_boundary(inner[1], inner[2], depth, path)
            return node
        return self._static(g, text)

    def _static(self, g: Any, text: str) -> Node:
        """A background (static) condition, a leaf: the clause of the program that gives it
        (its line, not unfolded further), or, for a fact of the dynamic domain (``id(id4)``),
        the input event that put it there; a built-in (``X > 2``, ``@<``) just holds."""
        key = _key(g)
        if key is None:
            return Node("condition", f"{text} holds", atom=text)
        if key in self.program.dynamic_domain:
            args = tuple(term_text(a) for a in g[1:]) if isinstance(g, tuple) else ()
            e = self.feeders.get((key, args))
            return Node("background", f"{text}: in the dynamic domain, from the input", atom=text,
                        children=[] if e is None else [self._leaf(e)])
        return self._once(("static", g), lambda: self._clause(g, key, text))

    def _clause(self, g: Any, key: Key, text: str) -> Node:
        for clause in self.program.background.get(key, []):
            for vs, _ in self._solve(clause, g):
                what = "a fact" if not clause.body else "a rule"
                return Node("background", f"{text}: background knowledge, {what} of the program", atom=text,
                            rule=rule_text(clause), bindings=bindings(clause, vs))
        return Node("condition", f"{text} holds", atom=text)

    def _no_boundary(self, e: Any, at: Any, depth: int | None, path: frozenset) -> list[Node]:
        """Why no ``start(F=V)`` (``end(F=V)``) happens at ``at``: F=V holds at ``at`` (at the
        next time point), or it does not hold at the next time point (at ``at``)."""
        if not (isinstance(e, tuple) and e[0] in ("start", "end") and len(e) == 2 and type(at) is int) or \
                has_var(e[1]):
            return []
        f = _fv(e[1])
        if f is None:
            return []
        first, then = (at, at + self.tick) if e[0] == "start" else (at + self.tick, at)
        if self.interval(f, first):
            return [self.why(f, first, depth, path)]
        return [self._aim(self.why_not(f, then, depth, path), f, then)]

    def event(self, e: Any, at: Any, depth: int | None, path: frozenset) -> Node:
        """``happensAt(e, at)``: the input event (with its line) or the derived event's rule."""
        key = _key(e)
        text = f"happensAt({show(e)},{at})"
        rules = self.rules("happensAt", key) if key is not None else []
        if not rules:
            pred_args = (key[0] if key else "", tuple(term_text(a) for a in e[1:]) if isinstance(e, tuple) else ())
            leaves = [self._leaf(x) for x in self.inputs(*pred_args) if x.t == at]
            return Node("literal", text, atom=text, time=at, children=leaves)
        if depth is not None and depth < 0:
            return Node("literal", f"{text} (cut at --depth)", atom=text, time=at)
        for rule in rules:
            for vs, goals in self._solve(rule, ("happensAt", e, at)):
                return Node("rule", f"{text}: a derived event", atom=text, time=at, rule=rule_text(rule),
                            bindings=bindings(rule, vs),
                            children=self.conditions(goals, at, None if depth is None else depth - 1, path))
        return Node("literal", f"{text}: in the store, with no derivation found", atom=text, time=at)

    def event_term(self, key: Key, args: tuple) -> Any:
        """A derived event's term for an answer's arguments (compound ones by their text)."""
        wanted = tuple(str(a) for a in args)
        for by_t in (self.ev.store.events.get(key, {}),):
            for found in by_t.values():
                for stored in found:
                    if tuple(term_text(a) for a in stored) == wanted:
                        return _fterm(key, stored)
        return _fterm(key, tuple(args))

    def event_not(self, e: Any, t: Any, depth: int | None) -> Node:
        """Why a derived event does not happen at ``t``: per happensAt rule, its first failing condition."""
        text = f"happensAt({show(e)},{t})"
        children = []
        key = _key(e)
        if ("event", key) in self.ev.admits and not self.ev.grounded(resolve(e)):
            return Node("why-not", f"{text} does not happen: grounding/1 does not admit {show(e)}, so RTEC "
                                   "computes none of it", atom=show(e), time=t)
        for rule in self.rules("happensAt", key) if key is not None else []:
            got = self._first_failing(rule, ("happensAt", e, t))
            if got is not None and got[0] < 0:
                continue
            if got is None:
                children.append(Node("rule", "its body holds: the event happens, but events are not answers "
                                             "(answer lines are of fluents)", rule=rule_text(rule), time=t))
                continue
            k, bound, goals = got
            reason = f"{show(goals[k])} does not hold"
            children.append(Node("rule", f"fails at condition {k + 1}: {reason}", rule=rule_text(rule),
                                 bindings=bound, literal=show(rule.body[k], rule.names), reason=reason, time=t))
        return Node("why-not", f"{text} does not happen", atom=show(e), time=t, why_not=children)

    # ------------------------------------------------------------ why not

    def why_not(self, f: Fluent, t: Any, depth: int | None, path: frozenset = frozenset(), top: bool = False) -> Node:
        """Why ``f`` does not hold at ``t``.  Inside a why-explanation (not ``top``) also why
        nothing initiated it since it last held: what the cited input must keep for it to stay
        off; asked directly, the first failing condition per rule is what the user asks for."""
        return self._once(("why-not", f, t, depth, path, top), lambda: self._why_not(f, t, depth, path, top))

    def _why_not(self, f: Fluent, t: Any, depth: int | None, path: frozenset, top: bool) -> Node:
        key, args, value = f
        name = self.name(f)
        if depth is not None and depth < 0:
            return Node("why-not", f"{name} does not hold at {t} (cut at --depth)", atom=name, time=t)
        more = None if depth is None else depth - 1
        if self.unadmitted(f):
            return Node("why-not", f"{name} never holds: grounding/1 does not admit it, so RTEC computes none "
                                   "of it (and a rule reading it reads nothing)", atom=name, time=t)
        only = self.ev.read_values.get(key) if type(deref(value)) is Var else None
        if only is not None:  # a read with a free value, of the one cache RTEC sends it to
            seen = ", ".join(sorted(term_text(v) for v in only))
            return Node("why-not", f"{name} does not hold at {t}: such a read sees only {seen} (RTEC reads one "
                                   f"cache for a free value), and {'none of them holds' if len(only) > 1 else 'it does not hold'} "
                                   "there", atom=name, time=t)
        if self.sdf(key, value):
            return self._why_not_sdf(f, t, more, path, top)
        if self.simple(key):
            return self._why_not_simple(f, t, more, path, top)
        return Node("why-not", f"{name} does not hold at {t}: no input gives it there, no rule derives it", atom=name,
                    time=t, why_not=self._not_given(f, t))

    def _not_given(self, f: Fluent, t: Any) -> list[Node]:
        """The entry of an input fluent (point or interval) that does not hold at ``t``: its
        declaration, and as candidate its input line at ``t`` (``_input_point``).  Run writes
        no input fluent, so the candidate is checked only for what reads the fluent (``_aim``
        leaves it): a statically determined fluent it is an operand of (``_lifted``), a rule it
        keeps from firing (``_kept_off``)."""
        key, args, value = f
        decls = ((self.program.points, "points"), (self.program.build_from_points, "buildFromPoints"),
                 (self.program.collect_intervals, "collectIntervals"))
        found = next(((e, name) for got, name in decls for e in got if (e.name, e.arity) == key), None)
        events = self._input_point(("=", _fterm(key, args), value), t)
        if found is None or not events:
            return []
        e, decl = found
        pattern = f"{e.name}({','.join('_' * e.arity)})" if e.arity else e.name
        text = f"{e.loc.file}:{e.loc.line}: {decl}({pattern}={'_' if e.value is None else show(e.value)})"
        reason = f"no input gives it at {t}"
        return [Node("rule", reason, rule=text, reason=reason, atom=self.name(f), time=t, candidates=events)]

    def _why_not_simple(self, f: Fluent, t: Any, depth: int | None, path: frozenset, top: bool) -> Node:
        key, args, value = f
        name = self.name(f)
        held = self.ev.store.fluent_list(key, args, value)
        before = [p for p in held if p[1] <= t]
        children: list[Node] = []
        entries: list[Node] = []  # per initiatedAt rule: its first failing condition
        fields: dict[str, Any] = {}
        if not held:
            text = f"{name} never holds: never initiated"
        elif not before:
            text = f"{name} does not hold at {t}: first initiated at {held[0][0] - self.tick}, it holds from {held[0][0]}"
        else:
            a, b = before[-1]
            t0, t1 = a - self.tick, b - self.tick
            ends = self._terminations(f, t1, depth, path)
            by = "; ".join(n.reason for n in ends if n.reason)
            text = f"{name} does not hold at {t}: initiated at {t0}, terminated at {t1}" + (f" by {by}" if by else "")
            fields = {"interval": I.text((a, True, b, False)), "literal": f"terminated at {t1}",
                      "reason": f"held on {I.text((a, True, b, False))}, then terminated at {t1} <= {t}"}
            children += ends
        gap = None if top else self.gap(f, t)
        if gap is not None:  # nothing initiated it from its last end (or ever) up to T
            lo = gap[0] - self.tick if gap[0] != -INF else -INF
            children.append(Node("test", f"not initiated in [{lo},{t}) (an initiation there would make it hold "
                                         f"at {t})", window=f"[{lo},{t})",
                                 children=self._unstarted(f, lo, t, depth, path)))
        lo = before[-1][1] - self.tick if before else -INF  # an initiation in [lo, t) would make it hold at t
        fv = ("=", _fterm(key, args), value)
        for rule in self.rules("initiatedAt", key):
            if value_of(rule) not in (value, None):
                continue
            at = self._closest(rule, fv, lo, t)
            if at < 0:
                continue
            node = self._failing(rule, ("initiatedAt", fv, at), at, depth, path, f)
            if node is not None:
                if at != t - self.tick:
                    node.text = node.text.replace(":", f" at {at}, the latest time in [{max(lo, 0)},{t}) its event "
                                                       "happens:", 1)
                entries.append(node)
        return Node("why-not", text, atom=name, time=t, children=children, why_not=entries, **fields)

    def _closest(self, rule: Rule, fv: Any, lo: Any, t: Any) -> Any:
        """When an initiation by ``rule`` came closest to happening in ``[lo, t)``: the latest
        time there its first condition, an event (``start``/``end`` of a fluent too), happens
        for the head ``fv`` (the rule fired or failed later in its body), else ``t − tick``, the
        latest initiation that would make the fluent hold at ``t``.  An input event the head
        makes ground is looked up among its own events; otherwise the latest
        ``CLOSEST_TRIES`` times its event type (or anything) happens are tried, so that a busy
        type read for other entities costs a bounded search."""
        first = rule.body[0] if rule.body else None
        if not (isinstance(first, tuple) and first[0] == "happensAt" and len(first) == 3):
            return t - self.tick
        boundary = isinstance(first[1], tuple) and first[1][0] in ("start", "end")
        own = None if boundary else self._own_times(rule, fv, lo, t)
        if own is not None:
            return own[-1] if own else t - self.tick
        if boundary:  # (a fluent starts or ends only where an interval does: a time something happens)
            moments = self.moments()
            times = moments[bisect_left(moments, lo):bisect_left(moments, t)]
        else:
            times = self._times(rule, lo, t)
        for at in times[:-CLOSEST_TRIES - 1:-1]:
            if self._first_holds(rule, ("initiatedAt", fv, at)):
                return at
        return t - self.tick

    def _own_times(self, rule: Rule, fv: Any, lo: Any, t: Any) -> list | None:
        """The times in ``[lo, t)`` of the input event the rule's first condition reads, where
        the head ``fv`` makes it ground and no rule derives it (None otherwise)."""
        vs = [Var() for _ in range(rule.nvars)]
        make_head, make_body = rule.build or rule.compile()
        at = Var()
        mark = len(self.solver.trail)
        try:
            if not self.solver.unify(make_head(vs), ("initiatedAt", fv, at)):
                return None
            first = make_body(vs)[0]
            e = resolve(first[1])
            key = _key(e)
            if key is None or has_var(e) or deref(first[2]) is not deref(at) or self.rules("happensAt", key):
                return None
            args = self._text(e[1:]) if isinstance(e, tuple) else ()
            return sorted(x.t for x in self.inputs(key[0], args) if x.span is None and lo <= x.t < t)
        finally:
            self.solver.undo(mark)

    def _first_holds(self, rule: Rule, head: Any) -> bool:
        """Whether the rule's first body goal holds for the ground ``head``."""
        vs = [Var() for _ in range(rule.nvars)]
        make_head, make_body = rule.build or rule.compile()
        goals = make_body(vs)
        mark = len(self.solver.trail)
        try:
            return self.solver.unify(make_head(vs), head) and \
                next(iter(self.solver.body(goals[:1], 0, [False], 0)), _DONE) is not _DONE
        except SolveError:
            return False
        finally:
            self.solver.undo(mark)

    def _terminations(self, f: Fluent, t1: Any, depth: int | None, path: frozenset) -> list[Node]:
        """What ended ``f`` at ``t1``: a terminatedAt rule of it, or an initiation of another value."""
        key, args, value = f
        fv = ("=", _fterm(key, args), value)
        out = []
        for rule in self.rules("terminatedAt", key):
            for vs, goals in self._solve(rule, ("terminatedAt", fv, t1)):
                out.append(self._ended(rule, vs, goals, t1, depth, path))
                break
        for rule in self.rules("initiatedAt", key):
            if value_of(rule) == value:
                continue
            other = ("=", _fterm(key, args), value_of(rule) if value_of(rule) is not None else Var())
            for vs, goals in self._solve(rule, ("initiatedAt", other, t1)):
                if deref(other[2]) != value:
                    out.append(self._ended(rule, vs, goals, t1, depth, path, show(resolve(other))))
                    break
        return out if self.every else out[:1]

    def _ended(self, rule: Rule, vs: list, goals: list, t1: Any, depth: int | None, path: frozenset,
               other: str = "") -> Node:
        kids = self.conditions(goals, t1, depth, path)
        what = f"terminated at {t1} by a terminatedAt rule" if not other else \
            f"terminated at {t1} by the initiation of {other}"
        cause = next((c.children[0] for c in kids if c.children and c.children[0].kind == "event"), None)
        by = "" if cause is None else f"{cause.atom}" + (f" ({cause.where})" if cause.where else "")
        if not by:  # no input event: the derived event it starts from (a start or end, a happensAt rule's)
            by = next((c.atom for c in kids if c.atom.startswith("happensAt(")), "")
        return Node("rule", what + (f": {by}" if by else ""), rule=rule_text(rule), bindings=bindings(rule, vs),
                    time=t1, children=kids, reason=by)

    def _failing(self, rule: Rule, head: Any, at: Any, depth: int | None, path: frozenset,
                 f: Fluent) -> Node | None:
        """The first condition of ``rule`` that fails at ``at`` for the head ``head`` (None if the
        rule's head does not match it)."""
        got = self._first_failing(rule, head)
        if got is not None and got[0] < 0:
            return None
        if got is None:
            ends = self._terminations(f, at, depth, path)
            return Node("rule", f"its body holds at {at}, but {self.name(f)} is terminated at {at} too",
                        rule=rule_text(rule), time=at, children=ends,
                        reason="initiated and terminated at the same time")
        k, bound, goals = got
        lit = goals[k]
        shown = show(lit)
        reason = f"{shown} does not hold" + ("" if str(at) in shown else f" at {at}")
        node = Node("rule", f"fails at condition {k + 1}: {reason}", rule=rule_text(rule), bindings=bound,
                    literal=show(rule.body[k], rule.names), reason=reason, time=at)
        g = resolve(lit)
        node.candidates = self._missing(g)
        if isinstance(g, tuple) and g[0] == "holdsAt" and len(g) == 3 and type(g[2]) is int:
            sub = _fv(g[1])
            if sub is not None and not has_var(g[1]):
                below = self._aim(self.why_not(sub, g[2], depth, path), sub, g[2])
                # (an input fluent's entry proposes the line this entry names already)
                node.children.append(below if node.candidates == [] or self.simple(sub[0]) or
                                     self.sdf(sub[0], sub[2]) else replace(below, why_not=[]))
        elif isinstance(g, tuple) and g[0] == "happensAt" and len(g) == 3 and _boundary(g[1]):
            # (an event that is not there: the one that would make the fluent start or end there
            # is a candidate for this entry too, as for a missing input event)
            node.children += self._no_boundary(g[1], g[2], depth, path)
            node.candidates += [ev for ev in _lifted(node.children) if ev not in node.candidates]
        elif isinstance(g, tuple) and g[0] in ("\\+", "not") and isinstance(g[1], tuple) and g[1][0] == "holdsAt":
            sub = _fv(g[1][1])
            if sub is not None and not has_var(g[1][1]) and type(g[1][2]) is int:
                node.children.append(self.why(sub, g[1][2], depth, path))
        return node

    def _aim(self, node: Node, f: Fluent, t: Any) -> Node:
        """A nested why-not of ``f`` at ``t``: the missing events its entries propose must make
        ``f`` hold at ``t`` (their ``goal``, the answer atom as answer lines write it), which the
        runtime checks by evaluating the input with each (``runtime.explain.confirm_missing``)."""
        if not (self.simple(f[0]) or self.sdf(f[0], f[2])):
            return node  # (an input fluent is never an answer: its entries are aimed by what reads it)
        for entry in node.entries:
            if entry.candidates and entry.goal is None:
                entry.goal = (*answer_atom(f), t)
        return node

    def _missing(self, g: Any) -> list[Event]:
        """The input event a failing condition asks for: for ``happensAt(E, T)`` with E ground
        and of an input event type (no rule derives it), E at T; for ``holdsAt(F=V, T)`` of a
        ground input fluent (``points/1``, ``buildFromPoints/1``, ``collectIntervals/1``), its
        input point (interval ``[T, T + tick)``) at T; for ``start(F=V)`` at T of one, its point
        at T + tick (it holds from there), for ``end(F=V)`` its point at T.  A candidate the runtime names only after evaluating the
        input with it (a termination at the same time, say, would undo it; a point beside one
        already given may join an interval that starts or ends elsewhere)."""
        if not (isinstance(g, tuple) and len(g) == 3 and type(g[2]) is int):
            return []
        if g[0] == "holdsAt":
            return self._input_point(g[1], g[2])
        if g[0] != "happensAt":
            return []
        e, key = g[1], _key(g[1])
        if _boundary(e):
            return self._input_point(e[1], g[2] + self.tick if e[0] == "start" else g[2])
        if key is None or has_var(e) or self.rules("happensAt", key):
            return []
        args = tuple(plain(a) for a in e[1:]) if isinstance(e, tuple) else ()
        return [Event(g[2], key[0], args)]

    def _input_point(self, term: Any, t: Any) -> list[Event]:
        """The input line that makes the ground input fluent ``term`` (F=V) hold at ``t``
        (README's mapping: F's arguments, V last unless ``true``), where it does not: a point
        of a ``points/1`` (``buildFromPoints/1``) fluent, the interval ``[t, t + tick)`` of a
        ``collectIntervals/1`` one (given as a point, such a line would be an event)."""
        f = _fv(term)
        if f is None or has_var(term):
            return []
        key, args, value = f
        spread = self.ev.interval_decl.get(key[0]) == key[1]
        if (self.ev.point_decl.get(key[0]) != key[1] and not spread) or self.simple(key) or self.sdf(key, value) or \
                self.interval(f, t) is not None:
            return []
        return [Event(t, key[0], answer_atom(f)[1], span=(t, t + self.tick) if spread else None)]

    def _why_not_sdf(self, f: Fluent, t: Any, depth: int | None, path: frozenset, top: bool) -> Node:
        key, args, value = f
        name = self.name(f)
        fv = ("=", _fterm(key, args), value)
        children = []
        for rule in self.rules("holdsFor", key):
            if value_of(rule) not in (value, None):
                continue
            out = Var()
            got = self._first_failing(rule, ("holdsFor", fv, out))
            if got is not None and got[0] < 0:
                continue
            if got is not None:
                k, bound, goals = got
                reason = f"{show(goals[k])} fails"
                children.append(Node("rule", f"fails at condition {k + 1}: {reason}", rule=rule_text(rule),
                                     bindings=bound, literal=show(rule.body[k], rule.names),
                                     reason=reason))
                continue
            for vs, goals in self._solve(rule, ("holdsFor", fv, out)):
                ops = self._operation(rule, goals, rule.head[2], vs, t, False, depth, path, top)
                culprit = next((rule.body[i] for i in range(len(goals) - 1, -1, -1)
                                if (goals[i][0], len(goals[i]) - 1) in _OPS or goals[i][0] == "holdsFor"), None)
                reason = f"{show(deref(out))} leaves out {t}"
                children.append(Node("rule", f"its interval operations give {show(deref(out))}, without {t}",
                                     rule=rule_text(rule), bindings=bindings(rule, vs),
                                     literal=show(culprit, rule.names) if culprit is not None else "",
                                     reason=reason, children=ops, candidates=_lifted(ops)))
                break
        text = f"{name} does not hold at {t}" + (": statically determined" if children else ": no holdsFor rule gives it")
        return Node("why-not", text, atom=name, time=t, why_not=children)

    def name(self, f: Fluent) -> str:
        """F=V as answer lines name it: ``open(d1)``, ``status(3,voting)``."""
        got = self._names.get(f)
        if got is None:
            key, args, value = f
            got = self._names[f] = atom_text(key[0], tuple(show(a) for a in args) +
                                             (() if value == "true" else (show(value),)))
        return got


def _boundary(e: Any) -> bool:
    """``start(F=V)`` or ``end(F=V)``: a derived event, of a fluent's interval."""
    return isinstance(e, tuple) and e[0] in ("start", "end") and len(e) == 2


def _lifted(ops: list[Node]) -> list[Event]:
    """The missing events the operands that keep a statically determined fluent from holding
    propose (their why-nots' entries, below the interval operations): each makes its operand
    hold, so it may make the fluent hold too — a candidate for the fluent's own entry, which
    the runtime names only once an evaluation with it derives the fluent."""
    out: list[Event] = []
    level = list(ops)
    while level:
        below: list[Node] = []
        for node in level:
            if node.kind == "why-not":
                out += [ev for entry in node.entries for ev in entry.candidates if ev not in out]
            else:
                below += node.children
        level = below
    return out


def evaluated(program: RtecProgram, events: list[Event], given: Any) -> RtecEvaluator:
    """The evaluator ``run`` used, if it kept everything (no retention, not windowed); else
    one evaluation of the events again, of the entities ``run``'s was narrowed to
    (``Dialect.narrow``) where it was."""
    if type(given) is RtecEvaluator and given.retention is None and given.done == INF:
        return given
    ev = RtecEvaluator(program)
    if type(given) is RtecEvaluator:
        ev.only = given.only
    for e in events:
        ev.push(e)
    ev.finish()
    return ev


def explainer(program: RtecProgram) -> Callable[..., Any]:
    """``chronolog explain --why / --why-not`` of an RTEC event description (``Dialect.explain``)."""
    ungrounded = Ungrounded(program.rules, program.background.get(("grounding", 1), []))  # (a function of the program)

    def explain(events: Any, lines: Any, atom: Any, t: Any, mode: str, every: bool, depth: int | None,
                evaluator: Any = None) -> Any:
        seen = list(events)
        ex = Explainer(program, evaluated(program, seen, evaluator), seen, every, demands(program, atom[0], atom[1]))
        key = (atom[0], len(atom[1]))
        if ("event", key) in ex.ev.h.kind:  # an output event (punctuality_change): its happensAt rules
            term = ex.event_term(key, atom[1])
            return ex.event(term, t, depth, frozenset()) if mode == "why" else ex.event_not(term, t, depth)
        f = ex.fluent_of(atom)
        if ungrounded.never_pair(("=", _fterm(f[0], f[1]), f[2])):  # RTEC computes none of it (unground.py)
            name = ex.name(f)
            return Node("why-not", f"{name} never holds: no grounding/1 names it, so RTEC computes none of it "
                                   "(and a rule reading it reads nothing)", atom=name, time=t)
        ex.proposes_inputs = mode == "why-not"
        if mode == "why-not" and not (ex.simple(f[0]) or ex.sdf(f[0], f[2])):  # (an input fluent: no answer)
            return replace(ex.why_not(f, t, depth, top=True), why_not=[])
        return ex.why(f, t, depth) if mode == "why" else ex.why_not(f, t, depth, top=True)

    return explain
