"""The RTEC evaluator behind ``chronolog.evaluator.Evaluator``.

RTEC's semantics over the clock-tick grid (seed 004; ``docs/rtec.md``): a
simple fluent F=V holds from the time point after an initiation up to and
including its termination (an initiation of F=V2 terminates F=V), by
inertia; ``initially`` makes it hold from 0; a deadline ``fi(F=V,F=V2,D)``
initiates F=V2 D ticks after F=V was initiated if it still holds.  A
statically determined fluent is the interval list its ``holdsFor`` body
builds.  ``start(F=V)`` happens at the last time point before F=V holds,
``end(F=V)`` at the last one at which it holds.

Evaluation is RTEC's, over one *window* at a time: every entity is computed
in hierarchy order (the dependency graph's strongly connected components)
for the times from the window's start ``lo`` on, on top of what is stored
for the times before it.  A stream advances with windows ``(done, until]``
(``step`` ticks at least); a delayed event or a retraction only moves the
next window's start back to the earliest time it affects (RTECinc's repair:
nothing before that time is derived again).  Events at a time ``t`` need the
input up to ``t + tick`` (``end`` of a point fluent), so a window only
derives the events up to ``until - tick``; ``finish`` derives the rest, and
the deadlines that fall after the last event.

Answers are the maximal intervals of the output entities (fluent-value pairs
defined by rules and admitted by ``grounding/1``), as changes of the
published lists: an interval still holding at the evaluated time is
published open, ``[a,inf)``, and corrected when it ends.

The evaluator is put together from parts, one module each: ``hierarchy.py``
(the entities and their order), ``analysis.py`` (what is worked out once from
the program), ``store.py`` (events, points and interval lists),
``inputs.py`` (``push``/``push_block``), ``ec_builtins.py`` (``happensAt``,
``holdsAt``, ``holdsFor`` and the interval predicates), ``simple.py`` (the
simple-fluent sweep with its deadlines) and ``snapshot.py`` (the state as
JSON).  This module keeps what ties them together: the settings and state of
one evaluator, ``grounding/1``, the window (events and statically determined
fluents derived here, simple fluents by the sweep), retention, publication
and the ``Evaluator`` interface.
"""

from __future__ import annotations

import gc
from bisect import bisect_left
from collections import defaultdict
from collections.abc import Callable, Iterator
from typing import Any, ClassVar

from chronolog.core.errors import ChronologError
from chronolog.core.events import Event
from chronolog.dialects.rtec import intervals as IV
from chronolog.dialects.rtec.admitted import admission_reads, admitted_entities, forget_hidden, readmitted
from chronolog.dialects.rtec.analysis import (
    _as_slice,
    domain_feeds,
    domain_wide,
    known_values,
    needed_entities,
    output_entities,
    unread_points,
)
from chronolog.dialects.rtec.changes import answer_keys, entity_name, rtec_strata
from chronolog.dialects.rtec.ec_builtins import EcBuiltins
from chronolog.dialects.rtec.hierarchy import Hierarchy, Key, _fterm, _fv, _grounding_key, _key
from chronolog.dialects.rtec.inline import inline_goal
from chronolog.dialects.rtec.inputs import RtecInput
from chronolog.dialects.rtec.intervals import INF
from chronolog.dialects.rtec.parser import RtecProgram
from chronolog.dialects.rtec.prolog import term_text
from chronolog.dialects.rtec.sdf import compile_sdf, run_sdf
from chronolog.dialects.rtec.simple import SimpleFluents
from chronolog.dialects.rtec.snapshot import export_state, import_state, log_bucket, retained
from chronolog.dialects.rtec.solve import Solver
from chronolog.dialects.rtec.store import _after, _Store
from chronolog.dialects.rtec.terms import Ivs, Rule, SolveError, Var, deref, has_slot, inst, is_ground, resolve
from chronolog.dialects.rtec.unground import read_values
from chronolog.evaluator import AnswerChange, Changes, Span, Time

__all__ = ["NEG_INF", "Hierarchy", "Key", "RtecEvaluator"]

NEG_INF = -INF


class RtecEvaluator(RtecInput, EcBuiltins, SimpleFluents):
    dialect: ClassVar[str] = "rtec"
    resumes_mid_stream: ClassVar[bool] = True

    def __init__(self, program: RtecProgram, step: int | None = None,
                 warn: Callable[[str], None] = lambda m: None, retention: int | None = None) -> None:
        self.program = program
        self.retention = retention  # repair late events up to this far back; forget what is older
        self.tick = program.clock_tick
        self.step = step if step is not None else 1000 * self.tick
        self.warn = warn
        self.h = Hierarchy(program)
        self.store = _Store()
        self.domain: dict[Key, set[tuple]] = {k: set() for k in program.dynamic_domain}
        # input functor -> [(the domain's set, arguments needed, argument positions, the same as a
        # slice if they are consecutive)], each once
        self._domain_feeds = {pred: [(self.domain[k], max(pos, default=-1) + 1, pos, _as_slice(pos)) for k, pos in
                                     dict.fromkeys((k, tuple(pos)) for k, pos in feeds)]
                              for pred, feeds in domain_feeds(program).items()}
        self.point_decl: dict[str, int] = {}  # point fluent name -> arity of F
        for e in program.points + program.build_from_points:
            self.point_decl[e.name] = e.arity
        self.interval_decl: dict[str, int] = {e.name: e.arity for e in program.collect_intervals}
        self.unread_points = self._unread_points()  # point fluents whose interval lists are not built
        self.point_dups: dict[tuple, int] = {}  # (key, args, value, t) -> times given, for points given twice or more
        self.interval_counts: dict[tuple, int] = {}
        self.deadlines = program.deadlines
        self.fi_values: dict[Key, set] = defaultdict(set)  # fluent -> values with a deadline
        for rule in program.deadlines:
            fv = rule.head[1]
            if isinstance(fv, tuple) and not has_slot(fv[2]):
                self.fi_values[_key(fv[1])].add(fv[2])  # type: ignore[index]
        self.fi_inits: dict[tuple, list] = {}  # (key, args, value) -> its initiation times (fluents with fi)
        self.fi_terms: dict[tuple, list] = {}  # ... and its termination times
        builtins = {("happensAt", 2): self._happens, ("holdsAt", 2): self._holds_at,
                    ("holdsFor", 2): self._holds_for, ("union_all", 2): self._union,
                    ("intersect_all", 2): self._intersect, ("relative_complement_all", 3): self._rel_complement,
                    ("complement_all", 2): self._complement, ("\\+", 1): self._not}
        for key in program.dynamic_domain:
            builtins[key] = self._domain_goal(key)
        self.solver = Solver(program.background, builtins)
        self.solver.inline = lambda g, src, consts: inline_goal(self, g, src, consts)
        self.grounding_rules = program.background.get(("grounding", 1), [])
        self._grounded: dict[Any, bool] = {}
        self._grounding_rules: dict[Any, list[Rule]] = {}  # functor of the grounded term -> the clauses for it
        # non-ground head -> its groundings, an SDF entity -> its ground heads (while the domain stays)
        self._expansions: dict[Any, Any] = {}
        self.outputs = output_entities(self.grounding_rules, self.h)
        self.needed = needed_entities(self.h, self.outputs)
        self.domain_wide = domain_wide(program, self.h, self.grounding_rules, self.outputs)
        self.regrow = False  # the domain grew since the last window
        self.recompute = False  # corrections re-derive from the start (a baseline for chronolog bench rtec)
        self.values = known_values(program, self.h, self.grounding_rules)
        # fluent -> the values a read with a variable value sees (RTEC reads one cache, unground.py)
        self.read_values = read_values(program.rules, self.grounding_rules)
        # the simple fluents and derived events kept only for the instances grounding/1 admits
        # (``admitted.py``), those whose admission grows with the domain, and whether only grows
        self.admits = admitted_entities(program, self.h)
        self.admit_keys = {e[1] for e in self.admits if e[0] == "fluent"}
        self.admit_reading, self.admit_monotone = admission_reads(program, self.admits)
        # entity -> the instances it derived that grounding/1 did not admit (missing: not known,
        # the entity was not derived from the start since the state was imported)
        self.rejected: dict[tuple, set] = {}
        self.readmit: set[tuple] = set()  # entities the next window derives from the start (their admission changed)
        # key -> args -> value -> intervals of a cycle's instances grounding/1 does not admit: no
        # other entity reads them, the cycle's own holdsAt does (by its rules, as RTEC's holdsAtCyclic)
        self.hidden: dict[Key, dict[tuple, dict[Any, list]]] = {}
        # evaluation state
        self.lo: float = NEG_INF  # the next window derives events from here on (values after it)
        self.done: float | None = None  # time evaluated up to (values final up to it)
        self.first: int | None = None
        self.latest: int | None = None
        self.win_lo: float = NEG_INF
        self.win_hi: float = NEG_INF  # the event horizon of the window being evaluated
        self.deferring: set[Key] = set()
        self.deferred: list[tuple[bool, Any]] = []
        self.sweep_open: dict = {}
        self.initialised: set = set()  # fluent-value instances whose `initially` has been applied
        self.sdf_known: set[tuple] = set()  # statically determined instances computed since time 0
        self._bounds: dict[tuple, Any] = {}  # point fluent boundaries of this window
        self._sdf_rules: dict[tuple, list | None] = {}  # SDF entity -> its compiled rules (rtec/sdf.py), None: generic
        self._routes: dict[str, tuple] = {}  # input functor -> how push_block stores it (_route)
        self._locals: dict[int, tuple[list, Any]] = {}  # id(body) -> (body, its local runner or None)
        self.published: dict[tuple[str, tuple], list] = {}
        self.open_published: set = set()  # published instances whose last interval is open
        self.delayed = 0
        self.unmatched_retractions = 0
        self.time_points = 0
        self.too_late = 0  # events older than the retention: ignored
        self.floor: float = NEG_INF  # times before it are forgotten (retention): no window starts earlier
        self.pruned_at: float = NEG_INF
        # an upgrade's changed and added entities (``keep``): the next window derives only them,
        # from the start; the kept ones are as the old version derived them
        self.redo_only: set[tuple] | None = None
        # ... and those of them the window derives from a later time (entity -> its lo: ``_cut_from``)
        self.redo_from: dict[tuple, float] = {}
        # the entities an upgrade derived from before its time only: their lists start there (a
        # later upgrade keeping one cannot read it from the start)
        self.partial: dict[tuple, float] = {}
        # an explanation's evaluator (``narrow``): only these entities are derived (None: all)
        self.only: set[tuple] | None = None
        self.derived: dict[tuple, int] = {}  # entity -> the windows that derived it (an upgrade's work, for tests)
    # ------------------------------------------------------------ declarations

    def _unread_points(self) -> set[str]:
        """The point fluents whose interval lists are not built (``analysis.unread_points``)."""
        return unread_points(self.program, self.h, self.point_decl)

    def _domain_goal(self, key: Key) -> Callable:
        """A dynamicDomain predicate answers from the instances the input has shown so far, as
        in RTEC (which collects them per window): clauses of the same predicate in the program
        (ctm's vehicles.prolog) do not add instances no input names."""

        def goal(solver: Solver, g: tuple) -> Iterator[None]:
            known = self.domain.get(key, ())
            if is_ground(g):
                if tuple(resolve(a) for a in g[1:]) in known:
                    yield
                return
            mark = len(solver.trail)
            for tup in list(known):
                if solver.unify(g, (key[0], *tup)):
                    yield
                solver.undo(mark)
        return goal

    def grounded(self, fv: Any) -> bool:
        """Does grounding/1 admit this ground term?"""
        got = self._grounded.get(fv)
        if got is None:
            mark = len(self.solver.trail)
            got = False
            for _ in self._grounding(fv):
                got = True
                break
            self.solver.undo(mark)
            self._grounded[fv] = got
        return got

    def groundings(self, pattern: Any) -> list:
        """The ground terms grounding/1 gives for a pattern (a term with variables)."""
        out = []
        mark = len(self.solver.trail)
        for _ in self._grounding(pattern):
            t = resolve(pattern)
            if is_ground(t):
                out.append(t)
        self.solver.undo(mark)
        return out

    def _grounding(self, term: Any) -> Iterator[None]:
        """grounding(term) against the clauses whose head can match it: those for its fluent's
        (or event's) functor, and those with a variable there (voting has twenty clauses, and a
        publication asks once per instance)."""
        mark = len(self.solver.trail)
        key = _grounding_key(term)
        rules = self._grounding_rules.get(key)
        if rules is None:
            rules = self._grounding_rules[key] = [r for r in self.grounding_rules
                                                  if key is None or _grounding_key(r.head[1]) in (key, None)]
        yield from self.solver.solve_rules(rules, ("grounding", term))
        self.solver.undo(mark)

    # ------------------------------------------------------------ one window

    def _window(self, lo: float, hi: float) -> set[tuple[Key, tuple, Any]]:
        """Derive every entity's events in [lo, hi] and values after lo; the changed fluent instances.

        A component is derived again from the start (-inf) when the domain has grown and its
        rules stand for every instance of a domain (a head argument no body goal binds, a
        non-ground ``initially``), and so is everything that depends on it."""
        self.win_hi = hi
        self._bounds = {}  # input points change between windows only
        changed: set = set()
        lowered: set = set()
        if self.regrow and self.past_from_start and self.admit_reading:
            self.readmit = readmitted(self)
        try:
            for comp in self.h.order:
                if self.only is not None and not any(e in self.only for e in comp):
                    continue  # nothing the explanation reads depends on it
                if self.redo_only is not None:
                    if not any(e in self.redo_only for e in comp):
                        continue  # a kept stratum: derived already, by the same rules from the same input
                    lowered.update(comp)
                for e in comp:
                    self.derived[e] = self.derived.get(e, 0) + 1
                c_lo = self._component_lo(comp, lo)
                if self.regrow and any(e in self.domain_wide for e in comp):
                    c_lo = self.floor
                if self.readmit and any(e in self.readmit for e in comp):
                    c_lo = self.floor  # an instance it left out is admitted now (or one it kept is not)
                if any(d in lowered for e in comp for d in self.h.edges[e]):
                    c_lo = self.floor
                if c_lo < lo:
                    lowered.update(comp)
                if self.redo_only is not None and all(e in self.redo_from for e in comp):
                    c_lo = max(c_lo, *(self.redo_from[e] for e in comp))  # (an upgrade: from before T only)
                self.win_lo = c_lo
                kinds = {self.h.kind[e] for e in comp}
                if kinds == {"event"}:
                    for ent in comp:
                        self._derive_events(ent[1], c_lo, hi)
                elif kinds == {"sdf"}:
                    for ent in comp:
                        if ent in self.needed and self._derive_sdf(ent, c_lo, changed) and c_lo != self.floor:
                            lowered.update(comp)  # (an instance new with a past: its readers from the start)
                else:
                    self._sweep([e[1] for e in comp], c_lo, hi, changed)
        except SolveError as exc:
            raise ChronologError(str(exc)) from None
        except RecursionError:
            raise ChronologError("error: background predicates recurse too deeply") from None
        self.regrow = False
        self.readmit = set()
        self.redo_only = None
        self.redo_from = {}
        return changed

    def _rejected(self, ent: tuple, lo: float) -> set | None:
        """The instances ``ent`` left out (``admitted.py``), started afresh by a derivation from
        the start; None while not known (then the next domain growth derives it from the start)."""
        if lo <= self.floor:
            self.rejected[ent] = set()
        return self.rejected.get(ent)

    def _component_lo(self, comp: list, lo: float) -> float:
        """Where a component's window starts (a hook: RTEC's windowed mode, ``rtec/windowed.py``,
        starts events, statically determined and simple fluents at different edges)."""
        return lo

    # a statically determined instance computed for the first time gets its whole past (RTEC's
    # one-window meaning); RTEC's windowed mode computes it in the window only
    past_from_start: ClassVar[bool] = True

    def _solutions(self, rules: list[Rule], goal: Any) -> Iterator[None]:
        mark = len(self.solver.trail)
        yield from self.solver.solve_rules(rules, goal)
        self.solver.undo(mark)

    def _derive_events(self, key: Key, lo: float, hi: float) -> None:
        self.store.drop_events_from(key, lo)
        rules = [r for _, r in self.h.rules[("event", key)]]
        e, t = Var(), Var()
        found = set()
        for _ in self._solutions(rules, ("happensAt", e, t)):
            ev, tt = resolve(e), deref(t)
            if type(tt) is not int or not lo <= tt <= hi:
                continue
            if not is_ground(ev):
                raise ChronologError(f"{rules[0].loc}: error: a derived event must be ground: "
                                     f"{term_text(ev)}")
            found.add((tt, ev[1:] if type(ev) is tuple else ()))
        ent = ("event", key)
        check = ent in self.admits
        left_out = self._rejected(ent, lo) if check else None
        for tt, args in sorted(found, key=repr):
            if check and not self.grounded(_fterm(key, args)):
                if left_out is not None:
                    left_out.add(args)  # RTEC computes no instance grounding/1 does not admit
                continue
            self.store.add_event(key, tt, args)

    def _derive_sdf(self, ent: tuple, lo: float, changed: set) -> bool:
        """Derive a statically determined fluent's instances after ``lo``, for the ground heads
        grounding/1 gives (RTEC writes a ``cachingOrder2`` clause per admitted instance and
        computes nothing else: a fluent no clause names, or one whose clause binds no instance,
        gets none, and a read of it sees ``[]``); whether an instance no window computed before
        got a past before ``lo`` too (what reads it is derived again from the start: it read
        nothing of that instance there)."""
        key = ent[1]
        past = False
        rules = [r for _, r in self.h.rules[ent]]
        # the ground heads, as grounding/1 gives them: kept while the domain stays (as _expand's)
        heads: dict[Any, None] | None = self._expansions.get(ent)
        if heads is None:
            heads = {}
            for r in rules:
                vs = [Var() for _ in range(r.nvars)]
                for g in self.groundings(inst(r.head[1], vs)):
                    heads.setdefault(g, None)
            self._expansions[ent] = heads
        results: dict[tuple, dict[Any, tuple[list, bool]]] = {}
        at = lo + 1 if lo != NEG_INF else NEG_INF
        compiled = self._sdf_rules.get(ent, ())
        if compiled == ():
            each = [compile_sdf(r) for r in rules]
            compiled = self._sdf_rules[ent] = None if None in each else each  # type: ignore[assignment]
        fluents = self.store.fluents
        for fv in heads:
            _, fargs, value = _fv(fv)  # type: ignore[misc]
            ident = (key, fargs, value)
            fresh = self.past_from_start and ident not in self.sdf_known and ent not in self.redo_from
            self.clip_lo = NEG_INF if fresh else at
            got = None
            if compiled is not None:
                got = run_sdf(compiled, fluents, fargs, self.clip_lo)
            else:
                i = Var()
                for _ in self._solutions(rules, ("holdsFor", fv, i)):
                    val = deref(i)
                    got = val.pairs if type(val) is Ivs else []
                    break
            self.sdf_known.add(ident)
            results.setdefault(fargs, {})[value] = (got or [], fresh)
            # (a door registered late whose shut(d) = complement of open(d) holds from 0)
            past = past or (fresh and bool(got) and got[0][0] < at)  # type: ignore[index]
        self.clip_lo = NEG_INF
        # splice: instances computed now, and stored ones (of this key) that now give nothing
        stored = self.store.fluents.get(key, {})
        for args in list(stored):
            for v in list(stored[args]):
                if (ent[2] is None or v == ent[2]) and v not in results.get(args, {}):
                    results.setdefault(args, {})[v] = ([], False)
        for args, vals in results.items():
            for v, (ivs, fresh) in vals.items():
                old = self.store.fluent_list(key, args, v)
                new = ivs if fresh or at == NEG_INF else IV.splice(old, ivs, at)
                if new != old:
                    self.store.set_list(key, args, v, new)
                    changed.add((key, args, v))
        return past

    def _has_grounding(self, key: Key) -> bool:
        return any(k == key for k, _ in self.outputs)

    # ------------------------------------------------------------ the Evaluator interface

    def advance(self, until: Time) -> Changes:
        return Changes(self._advance(until))

    def finish(self, until: Time | None = None) -> Changes:
        return Changes(self._finish(until))

    def pending(self) -> Changes:
        return Changes()  # nothing is evaluated but in advance and finish

    @property
    def evaluated_to(self) -> tuple[Any, Any] | None:
        """How far it has evaluated (None: not yet), as ``explain --changes`` asks it: the latest
        time whose events are applied, and the latest whose answers are written (a tick later:
        what happens at T holds from T + tick).  ``advance`` evaluates only once a window's
        ``step`` has passed, and then up to a tick before its time."""
        return None if self.done is None else (self.done - self.tick, self.done)

    def _advance(self, until: Time) -> list[AnswerChange]:
        until = int(until)
        if self.first is None:
            return []
        if self.done is not None and until - self.done < self.step:
            # corrections wait for the next window too (one repair for all of them), unless the
            # caller asks again for a time already evaluated (a fleet stage flushing them)
            if not (until <= self.done and self.lo < self.done - self.tick + 1):
                return []
        return self._evaluate(until - self.tick, until)

    def _finish(self, until: Time | None = None) -> list[AnswerChange]:
        if self.first is None:
            return []
        if until is not None:
            return self._evaluate(int(until) - self.tick, int(until))
        return self._evaluate(INF, INF)

    def _evaluate(self, hi: float, horizon: float) -> list[AnswerChange]:
        lo = self.lo
        # a window allocates millions of short-lived terms and no reference cycles: the cyclic
        # collector would only walk the stored history again and again (15% of caviar's time)
        collecting = gc.isenabled()
        gc.disable()
        try:
            changed = self._window(lo, hi)
        finally:
            if collecting:
                gc.freeze()  # the stored history (no cycles: freed by reference counts) is not walked again
                gc.enable()
        self.time_points += 1
        self.done = horizon
        self.lo = hi + 1 if hi != INF else INF
        out = self._publish(changed, horizon)
        if self.retention is not None and horizon != INF and horizon - self.pruned_at >= max(self.step, self.retention // 4):
            self._forget(horizon)
        return out

    def _forget(self, horizon: int) -> None:
        """Drop what no repair within the retention can read (RTEC forgets what is before its
        window): a late event is at least ``horizon - retention``, its window starts a tick
        before it and reads the state one tick earlier, and a deadline ``fi`` reaches back its
        delay.  Events, input points and intervals, derived intervals (stored and published) that
        end before that are dropped, and no later window starts before it (``floor``)."""
        self.pruned_at = horizon
        reach = max((d for d in self._deadline_delays()), default=0)
        floor = horizon - self.retention - reach - 2 * self.tick  # type: ignore[operator]
        if floor <= self.floor:
            return
        self.floor = floor
        cut = floor - self.tick
        self.store.forget_before(cut)
        forget_hidden(self.hidden, cut)
        self.point_dups = {k: n for k, n in self.point_dups.items() if k[3] >= cut}
        self.interval_counts = {k: n for k, n in self.interval_counts.items() if k[4] >= cut}
        for ident in list(self.published):
            kept = _after(self.published[ident], cut)
            if kept:
                self.published[ident] = kept
            else:
                del self.published[ident]
        for lists, keep_last in ((self.fi_inits, False), (self.fi_terms, True)):
            for ident in list(lists):
                times = lists[ident]
                i = bisect_left(times, cut)
                if keep_last and i:
                    i -= 1  # the last termination before: it cancels older initiations' deadlines
                if i:
                    kept = times[i:]
                    if kept:
                        lists[ident] = kept
                    else:
                        del lists[ident]

    def _deadline_delays(self) -> Iterator[int]:
        for rule in self.deadlines:
            d = rule.head[3] if isinstance(rule.head, tuple) and len(rule.head) == 4 else None
            if type(d) is int:
                yield d

    def _publish(self, changed: set, horizon: float) -> list[AnswerChange]:
        out: list[AnswerChange] = []
        todo = {(k, a, v) for (k, a, v) in changed if (k, v) in self.outputs}
        todo |= self.open_published  # intervals published open: the horizon may have passed their end
        for ident in sorted(todo, key=repr):
            key, args, v = ident
            if ident not in self.published and not self.grounded(("=", _fterm(key, args), v)):
                continue  # (a published one no longer admitted: its list, cut where it is not, see admitted.py)
            ivs = self.store.fluent_list(key, args, v)
            if horizon != INF and ivs and ivs[-1][1] > horizon:
                ivs = ivs[:-1] + [(ivs[-1][0], INF)]
            old = self.published.get(ident, [])
            if old == ivs:
                continue
            name, jargs = _answer_atom(key, args, v)
            # lists change at their end: compare past the common prefix only
            k = len(old) - 1
            if k > 0 and old[:k] == ivs[:k]:
                old_tail, new_tail = old[k:], ivs[k:]
            else:
                old_tail, new_tail = old, ivs
            for a, b in IV.subtract(new_tail, old_tail):
                out.append((name, jargs, _span(a, b), 1))
            for a, b in IV.subtract(old_tail, new_tail):
                out.append((name, jargs, _span(a, b), -1))
            if ivs:
                self.published[ident] = ivs
            else:
                self.published.pop(ident, None)
            if ivs and ivs[-1][1] == INF:
                self.open_published.add(ident)
            else:
                self.open_published.discard(ident)
        return out

    # ------------------------------------------------------------ upgrades

    def keep(self, old: Any, kept: frozenset[str], at: Time, until: Time) -> bool:
        """Become the new program version of ``old`` (the running version, of another program)
        from ``at`` on, keeping the entities whose answer keys (``p/1``) are ``kept`` —
        unchanged by content (``rtec/changes.py``) — as ``old`` derived them: its input and
        derived store are taken over (through its exported state), the changed, added and
        removed entities' derived data cleared, and the next window derives only the changed
        and added entities (and any kept one ``old`` did not compute, needed now), reading
        the kept ones: the statically determined fluents ``_cut_from`` allows from two ticks
        before ``at`` on, every other from the start — a simple fluent holds by inertia, so
        its value at ``at`` depends on its whole history under the new rules, which the old
        version's values do not give.  False when it cannot (``old`` has repairs or domain
        growth pending, other declarations, a predicate input in one program is derived in
        the other, or a kept simple fluent would change how it grows with a domain): the
        caller then evaluates the retained input whole."""
        if (type(old) is not type(self) or self.first is not None or old.first is None or old.done != until
                or old.regrow or old.lo < old.done - old.tick + 1
                or (old.point_decl, old.interval_decl, old.tick, old.program.dynamic_domain)
                != (self.point_decl, self.interval_decl, self.tick, self.program.dynamic_domain)):
            return False
        names = {entity_name(e): e for e in self.h.kind}
        same = {s.ident for s in rtec_strata(old.program)}
        keep = {names[p] for s in rtec_strata(self.program) if s.ident in same for p in s.preds}
        if not keep or any(not answer_keys(e) <= kept for e in keep if self._has_grounding(e[1])):
            return False
        if {e for e in keep if e in old.domain_wide} != {e for e in keep if e in self.domain_wide}:
            return False  # (whether a body reads a value decides it: ``analysis.domain_wide``)
        keep -= {e for e in keep if e not in old.needed and e in self.needed}  # never computed: now it is
        redo = set(self.h.kind) - keep
        cut = self._cut_from(redo)
        partial = {e: lo for e, lo in old.partial.items() if e in keep}
        if any(e in self.h.edges.get(r, ()) and r not in cut for e in partial for r in redo):
            return False  # a kept entity an earlier upgrade derived from before its time only, read from the start
        old_keys = {e[1] for e in old.h.kind}
        new_keys = {e[1] for e in self.h.kind}
        inputs = {k for k, by_t in old.store.events.items() if by_t and ("event", k) not in old.h.kind}
        inputs |= {k for k, by_args in old.store.fluents.items() if by_args and k not in old_keys}
        if inputs & (new_keys - old_keys):
            return False  # an input of the old program is derived by the new one
        self.import_state(old.export_state())
        for ent in [e for e in old.h.kind if e not in keep] + [e for e in self.h.kind if e not in keep]:
            key = ent[1]
            self.rejected.pop(ent, None)
            if ent[0] == "event":
                self.store.drop_events_from(key, NEG_INF)
                continue
            for args, vals in list(self.store.fluents.get(key, {}).items()):
                for v in [v for v in vals if ent[2] is None or v == ent[2]]:
                    self.store.set_list(key, args, v, [])
            if ent[2] is None:
                self.hidden.pop(key, None)
            self.initialised = {i for i in self.initialised if i[0] != key}
            self.sdf_known = {i for i in self.sdf_known if i[0] != key}
            for lists in (self.fi_inits, self.fi_terms):  # deadlines: the sweep schedules them again
                for ident in [i for i in lists if i[0] == key]:
                    del lists[ident]
        self.published = {i: ivs for i, ivs in self.published.items()
                          if (f"{i[0][0]}/{len(_answer_atom(*i)[1])}") in kept}
        self.open_published = {i for i, ivs in self.published.items() if ivs and ivs[-1][1] == INF}
        self.redo_only = redo
        self.redo_from = dict.fromkeys(cut, max(self.floor, int(at) - 2 * self.tick))
        self.partial = {**partial, **self.redo_from}
        self.lo = self.floor
        return True

    def _cut_from(self, redone: set[tuple]) -> set[tuple]:
        """The entities of ``redone`` that an upgrade derives from just before its time only:
        statically determined fluents whose rules all combine interval lists point by point
        (``sdf.compile_sdf``: ``holdsFor``, ``union_all``, ``intersect_all``,
        ``relative_complement_all``, ``complement_all``; no ``\\+ I = []``, which asks about a
        whole list), none read by a redone entity that is not one of them (an event or a
        simple fluent may read the list before that)."""
        cut = set()
        for ent in redone:
            if self.h.kind.get(ent) != "sdf":
                continue
            compiled = [compile_sdf(r) for _, r in self.h.rules[ent]]
            if all(c is not None and all(step[0] != "nonempty" for step in c.steps) for c in compiled):
                cut.add(ent)
        readers = {d: [e for e in redone if d in self.h.edges.get(e, ())] for d in cut}
        while True:
            gone = {d for d in cut if any(e not in cut for e in readers[d])}
            if not gone:
                return cut
            cut -= gone

    # ------------------------------------------------------------ state

    log_bucket = staticmethod(log_bucket)

    def late_bound(self) -> Any:
        """The earliest event time it still applies (older events are too late,
        ``RtecInput.push``); None: any.  Answers before it are final: an instance first
        seen later gets no past before it either (``floor``)."""
        return None if self.retention is None or self.done is None else self.done - self.retention

    def retained(self) -> tuple[Any, list[Event]]:
        return retained(self)

    def retained_span(self) -> tuple[Any, Any]:
        if self.first is None:
            return None, None
        return (None if self.floor == NEG_INF else self.floor), self.latest

    def written(self, without: frozenset[str] = frozenset()) -> Changes:
        """What the changes returned so far mean: the published intervals, as +1 changes;
        ``without``: answer predicates (``p/1``) left out (an upgrade's kept strata)."""
        out = []
        for (key, args, value), ivs in sorted(self.published.items(), key=repr):
            name, jargs = _answer_atom(key, args, value)
            if without and f"{name}/{len(jargs)}" in without:
                continue
            out += [(name, jargs, _span(a, b), 1) for a, b in ivs]
        return Changes(out)

    def export_state(self) -> dict[str, Any]:
        return export_state(self)

    def import_state(self, data: dict[str, Any]) -> None:
        import_state(self, data)


def _answer_atom(key: Key, args: tuple, value: Any) -> tuple[str, tuple]:
    """The JSON atom of F=V (README: V appended as the last argument unless it is true)."""
    out = [a if type(a) in (int, str) else term_text(a) for a in args]
    if value != "true":
        out.append(value if type(value) in (int, str) else term_text(value))
    return key[0], tuple(out)


def _span(a: float, b: float) -> Span:
    return Span(int(a), None if b == INF else int(b), True, False)

