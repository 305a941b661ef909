"""The evaluation core: one time point at a time, on diffs.

``Engine.step(t, facts)`` evaluates the program at ``t`` given the stream
facts arriving at ``t`` and returns what changed in the answer: atoms that
start or stop holding *now* (predicates without ``@``-heads) and atoms at
explicit times that the evaluation at ``t`` derives or no longer derives.

Inputs enter as diffs into window views (facts entering and leaving
windows); each component (a strongly connected group of derived predicates)
then evaluates its rules set-at-a-time over those views and its own
relations, and passes the diff of its relations to the views above it.  All
state between time points is plain data (views, relations, tuple queues), so
an engine can be pickled into a checkpoint and restored; compiled rules are
rebuilt from the plan.

Programs that are not stratified are evaluated per time point by clingo
(``ClingoEngine``), with the same interface.
"""

from __future__ import annotations

from collections.abc import Collection, Iterable, Sequence

from chronolog.core.records import record
from chronolog.dialects.lars.engine.content import NOTHING, Content
from chronolog.dialects.lars.engine.counting import CountingMaintenance
from chronolog.dialects.lars.engine.relation import Rel
from chronolog.dialects.lars.engine.rules import CompiledRule, compiled_rule
from chronolog.dialects.lars.engine.stream_views import StreamViews, _Inner
from chronolog.dialects.lars.engine.views import NowSourceView, StreamWindowView, TimeWindowView, TupleQueue, TupleWindowView
from chronolog.dialects.lars.ir import ExtAtom, Op
from chronolog.dialects.lars.plan import TICK, Component, Plan, PredKey, time_reach

Fact = tuple[PredKey, tuple]  # (predicate, args) of one stream event


@record(frozen=True)
class Imported:
    """What lower strata derived in the evaluation at one time point.

    A fleet reasoner evaluates one stratum; the strata below it are computed
    by other processes and arrive as their full content at each time point
    (``content``: pred -> frozenset of tuples, timed predicates with the time
    last; padded output predicates also under ``(ANSWERS, pred)``; see
    engine/content.py).  ``consistent`` is False when a lower stratum had no
    answer set at that point.
    """

    consistent: bool
    content: Content  # PredKey | (ANSWERS, PredKey) -> frozenset of tuples


ANSWERS = "#answers"
EMPTY: frozenset = frozenset()
PRUNING = True  # the default of Engine(pruning=...)
View = TimeWindowView | StreamWindowView | NowSourceView | TupleWindowView
NowGroup = tuple[PredKey, Collection[tuple], Collection[tuple]]  # (pred, args added, args removed)


class StepResult:
    """What the evaluation at ``t`` changed.

    ``now``: (pred, args, ±1) for atoms of now-predicates starting/stopping to
    hold at t relative to t-1.  ``timed``: (pred, args, T, ±1) for atoms of
    timed predicates the evaluation at t derives (+1) or no longer derives (-1)
    relative to the evaluation at t-1.

    The engine records the changes of now-predicates per predicate
    (``now_groups()``: whole collections of args, no tuple per atom); ``now``
    is the flat form, built when asked for.  Likewise the changes of timed
    predicates (``timed_groups()``: whole collections of ``args + (T,)``);
    ``timed`` is their flat form.
    """

    __slots__ = ("t", "_now", "_groups", "_timed", "_timed_groups", "consistent", "reason")

    def __init__(
        self, t: int, now: list[tuple[PredKey, tuple, int]] | None = None,
        timed: list[tuple[PredKey, tuple, int, int]] | None = None, consistent: bool = True,
    ) -> None:
        self.t = t
        self._now = now
        self._groups: list[NowGroup] | None = None if now is not None else []
        self._timed = timed
        self._timed_groups: list[NowGroup] | None = None if timed is not None else []
        self.consistent = consistent
        self.reason: str | None = None  # why there is no answer set at t, where the engine knows

    @property
    def timed(self) -> list[tuple[PredKey, tuple, int, int]]:
        if self._timed is None:
            groups = self._timed_groups or []
            self._timed = [(p, tup[:-1], tup[-1], 1) for p, added, _ in groups for tup in added]
            self._timed += [(p, tup[:-1], tup[-1], -1) for p, _, removed in groups for tup in removed]
        return self._timed

    @timed.setter
    def timed(self, value: list[tuple[PredKey, tuple, int, int]]) -> None:
        self._timed = value
        self._timed_groups = None

    def add_timed(self, pred: PredKey, added: Collection[tuple], removed: Collection[tuple]) -> None:
        """Record that the atoms ``added`` of the timed ``pred`` (``args + (T,)``) are
        derived now and ``removed`` no longer are."""
        if not added and not removed:
            return
        if self._timed_groups is not None:
            self._timed_groups.append((pred, added, removed))
        if self._timed is not None:
            self._timed += [(pred, tup[:-1], tup[-1], 1) for tup in added]
            self._timed += [(pred, tup[:-1], tup[-1], -1) for tup in removed]

    def timed_groups(self) -> list[NowGroup]:
        """The changes of timed predicates as (pred, added, removed), tuples ``args + (T,)``."""
        if self._timed_groups is not None:
            return self._timed_groups
        return _grouped((p, a + (T,), sign) for p, a, T, sign in self.timed)

    @property
    def now(self) -> list[tuple[PredKey, tuple, int]]:
        if self._now is None:
            groups = self._groups or []
            self._now = [(p, a, 1) for p, added, _ in groups for a in added]
            self._now += [(p, a, -1) for p, _, removed in groups for a in removed]
        return self._now

    @now.setter
    def now(self, value: list[tuple[PredKey, tuple, int]]) -> None:
        self._now = value
        self._groups = None

    def add_now(self, pred: PredKey, added: Collection[tuple], removed: Collection[tuple]) -> None:
        """Record that the args ``added`` of ``pred`` start to hold and ``removed`` stop."""
        if self._groups is not None:
            self._groups.append((pred, added, removed))
        if self._now is not None:
            self._now += [(pred, a, 1) for a in added]
            self._now += [(pred, a, -1) for a in removed]

    def now_groups(self) -> list[NowGroup]:
        """The changes of now-predicates as (pred, added args, removed args)."""
        if self._groups is not None:
            return self._groups
        return _grouped(self.now)

    def __repr__(self) -> str:
        return f"StepResult(t={self.t}, now={self.now!r}, timed={self.timed!r}, consistent={self.consistent})"


def _grouped(changes: Iterable[tuple[PredKey, tuple, int]]) -> list[NowGroup]:
    """Flat (pred, tuple, ±1) changes as (pred, added, removed) per predicate."""
    by_pred: dict[PredKey, tuple[list[tuple], list[tuple]]] = {}
    for p, tup, sign in changes:
        lists = by_pred.get(p)
        if lists is None:
            lists = by_pred[p] = ([], [])
        lists[0 if sign > 0 else 1].append(tup)
    return [(p, added, removed) for p, (added, removed) in by_pred.items()]


def _read_by(plan: Plan, stratum: int | None) -> set[PredKey] | None:
    """The predicates the rules of ``stratum`` read (None: every lower one is imported, the
    output service's engine above every stratum, which writes them all).  A stratum
    reasoner imports only these: a lower predicate no rule of its stratum reads (a fleet
    stratum imports every stratum below it, ``tick`` changing at every point) would be
    replaced and announced at every step for nothing."""
    if stratum is None or not any(c.stratum == stratum for c in plan.components):
        return None
    return {k for c in plan.components if c.stratum == stratum for k in c.reads}


class NoAnswerSet(Exception):
    """An ``@``-head derived an atom outside the timeline: no answer set at t."""


class Engine(StreamViews, CountingMaintenance):
    """Incremental evaluation of a stratified program, one time point per ``step``."""

    def __init__(
        self, plan: Plan, t1: int, *, incremental: bool = True, stratum: int | None = None, pruning: bool | None = None,
        only: Collection[int] | None = None, imported: Collection[int] = (),
    ) -> None:
        """``incremental=False`` recomputes every component at every time point
        (a cross-check for the counting maintenance, same code otherwise).

        ``stratum=k`` evaluates only the components of stratum k (0-based): the
        lower ones are imported (``step(..., imported=...)``), the higher ones
        skipped.  This is how each fleet reasoner runs its stratum with the same
        core; ``k`` past the last stratum imports everything (the output service).

        ``only``: evaluate just these components (indices into ``plan.components``,
        closed under dependencies and stratified) and skip the others: the
        stratified lower part of a program the TMS evaluates above it.  ``imported``:
        with ``only``, the components whose content ``step`` is given (closed under
        dependencies too) instead of skipped: an upgrade's changed strata evaluated on
        the unchanged ones' content (``dialects/lars/keeping.py``).
        """
        self.plan = plan
        self.t1 = t1
        self.incremental = incremental
        # Laser2's impossible derivations (rules with an empty positive literal
        # not joined, windows only such rules read kept waiting); off only to
        # measure what they save (``chronolog bench lars --no-pruning``).
        self.pruning = PRUNING if pruning is None else pruning
        self.stratum = stratum
        self.only = None if only is None else frozenset(only)
        self.imported = frozenset(imported)
        self.t: int | None = None  # last evaluated time point
        self.rels: dict[PredKey, Rel] = {p: Rel() for p in plan.intensional}
        # Output of padded predicates: atoms of visible rules, and the rest at t only.
        self._answers: dict[PredKey, Rel] = {p: Rel() for p in plan.padded & plan.output}
        self._time_views: dict[tuple, TimeWindowView | StreamWindowView] = {}
        self._now_views: dict[tuple, NowSourceView] = {}
        self._tuple_views: dict[tuple, TupleWindowView] = {}
        self._queues: dict[int, TupleQueue] = {}
        self._views_of: dict[PredKey, list] = {}
        self._now_views_of: dict[PredKey, list[NowSourceView]] = {}
        self._tuple_views_of: dict[tuple[int, PredKey], list[TupleWindowView]] = {}
        self._components: list[tuple[Component, list[CompiledRule], list[list[object]]]] = []
        # Derivation counts of incrementally maintained components (None: recount
        # next step): the heads with two or more derivations; a head in the
        # predicate's relation and not here has exactly one.
        self._counts: dict[int, dict[tuple, int] | None] = {}
        # Counted components whose rules each derive a head from one match only;
        # while at most one of their rules derives anything, ``_sizes`` holds how
        # many heads each rule derives and no counts are kept.
        self._injective: set[int] = set()
        self._sizes: dict[int, list[int]] = {}
        # Counted components of padded predicates: the sources of their hidden rules.
        self._padded_counted: dict[int, list[Rel]] = {}
        self._dirty: set[int] = set()  # watched components with a changed input at this time point
        # Components evaluated whole whose result is a function of their inputs
        # alone (no time): True once evaluated, until an input changes.
        self._quiet: dict[int, bool] = {}
        self._ticking: dict[int, bool] = {}
        self._journaled: list[Rel] = []
        self._visible: dict[PredKey, set[tuple]] = {}
        self._role: list[str] = []  # per component: "compute", "import" or "skip"
        self._time_reach = time_reach(plan)
        reads = _read_by(plan, stratum)
        for ci, comp in enumerate(plan.components):
            if self.only is not None:
                self._role.append("compute" if ci in self.only else "import" if ci in self.imported else "skip")
            elif stratum is None or comp.stratum == stratum:
                self._role.append("compute")
            elif comp.stratum < stratum and (reads is None or not reads.isdisjoint(comp.preds)):
                self._role.append("import")
            else:
                self._role.append("skip")
            members = set(comp.preds)
            if self._role[ci] != "compute":  # no rules, no views: imported or skipped
                self._components.append((comp, [], []))
                continue
            compiled = [compiled_rule(r, r.head.atom.key in plan.timed) for r in comp.rules]
            sources = [[self._source(lit, members) for lit in cr.literals] for cr in compiled]
            self._components.append((comp, compiled, sources))
            padded = bool(members & plan.padded)
            if incremental and not comp.recursive and all(cr.countable and not cr.uses_now for cr in compiled):
                if padded:
                    # Counted while its hidden rules (stream or program facts of the
                    # predicate) derive nothing: then the answers are all it derives.
                    hidden = [srcs for cr, srcs in zip(compiled, sources) if plan.is_hidden(cr.rule)]
                    self._padded_counted[ci] = [rel for srcs in hidden for rel in srcs]
                    for p in comp.preds:  # meanwhile its answers are its relation
                        if p in self._answers:
                            self._answers[p] = self.rels[p]
                self._counts[ci] = None
                if all(cr.injective for cr in compiled):
                    self._injective.add(ci)
                self._watch(ci, sources)
            elif incremental and _timeless(comp, compiled, sources, plan):
                # evaluated whole, but only when an input changed (or after no answer set)
                self._quiet[ci] = False
                self._watch(ci, sources)

        # Indexes every step looks up (the counted components' delta pipelines,
        # the others' whole bodies); an index a recount builds and no step reads
        # is dropped after it, as maintaining it would cost every change.
        self._stepping_indexes: set[tuple[int, tuple[int, ...]]] = set()
        for ci, (_, compiled, sources) in enumerate(self._components):
            for cr, srcs in zip(compiled, sources):
                pipes = cr.delta if ci in self._counts else [cr.full]
                for pipe in pipes:
                    self._stepping_indexes.update((id(srcs[lit]), cols) for lit, cols in cr.indexes(pipe))
        # counted components with views over their predicates: those move with time
        self._ticking = {
            ci: any(p in self._views_of or p in self._now_views_of for p in self._components[ci][0].preds)
            for ci in self._counts
        }
        self._ext_views = [k for k in self._views_of if k in plan.extensional]
        self._background = {k: set(rows) for k, rows in plan.background.items()}
        self._always = {k for k in self._ext_views if k in self._background or k == TICK}
        self._deferrable = self._blockers() if self.pruning else {}
        self._busy: set[PredKey] = set()  # stream predicates whose views hold something
        self._how: dict[PredKey, tuple[bool, list, bool]] = {}  # ``_announcing``, per predicate
        self._exports: list[tuple[PredKey, Rel, tuple | None]] | None = None  # ``exported``'s relations

    # ------------------------------------------------------------ evaluation

    def step(self, t: int, facts: Sequence[Fact], imported: Imported | None = None) -> StepResult:
        """Evaluate the program at ``t``; ``facts`` are the stream facts at t in arrival order,
        ``imported`` what the lower strata derived at t (for ``stratum=k`` engines)."""
        if self.t is not None and t != self.t + 1:
            raise ValueError(f"engine at {self.t} cannot step to {t}")
        self.t = t
        for rel in self._journaled:
            if rel.plus or rel.minus:
                rel.start_journal()
        self._dirty.clear()
        self._feed_stream(t, facts)
        result = StepResult(t)
        by_pred = NOTHING if imported is None else imported.content
        try:
            if imported is not None and not imported.consistent:
                raise NoAnswerSet("a lower stratum has no answer set")
            roles, answers, all_counts, dirty = self._role, self._answers, self._counts, self._dirty
            for ci, (comp, compiled, sources) in enumerate(self._components):
                role = roles[ci]
                if role == "skip":
                    continue
                if role == "import":
                    preds = comp.preds
                    self._visible = {p: by_pred.get((ANSWERS, p), EMPTY) for p in preds if p in answers}
                    self._publish(comp, {p: by_pred.get(p, EMPTY) for p in preds}, t, result)
                    continue
                counts = all_counts.get(ci, False)
                if counts is not False and counts is not None and ci not in dirty:
                    # counted and no input changed: nothing to derive
                    if self._ticking[ci]:
                        for p in comp.preds:
                            self._announce(p, (), (), t, result)
                    continue
                if ci in self._padded_counted and any(self._padded_counted[ci]):
                    self._stop_counting(ci)  # a hidden rule derives: evaluate it whole from now on
                if ci in self._counts:
                    self._maintain(ci, comp, compiled, sources, t, result)
                elif self._quiet.get(ci) and ci not in self._dirty:
                    # no input changed: the same content; only views pinning it to t move
                    for p in comp.preds:
                        if p in self._now_views_of:
                            self._announce(p, (), (), t, result)
                else:
                    content = self._evaluate(comp, compiled, sources, t)
                    self._publish(comp, content, t, result)
                    if ci in self._quiet:
                        self._quiet[ci] = True
        except NoAnswerSet as exc:
            import logging  # noqa: PLC0415 (start-up: logging only on this rare path)

            logging.getLogger(__name__).debug("no answer set at t=%d: %s", t, exc)
            result.consistent = False
            result.reason = str(exc)
            for ci, (comp, _, _) in enumerate(self._components):
                if self._role[ci] == "skip":
                    continue
                if ci in self._counts:
                    self._counts[ci] = None
                if ci in self._quiet:
                    self._quiet[ci] = False
                self._publish(comp, {p: set() for p in comp.preds}, t, result)
            result.now = _net(result.now)
            result.timed = _net(result.timed)
        return result

    def _evaluate(
        self, comp: Component, compiled: list[CompiledRule], sources: list[list[object]], t: int
    ) -> dict[PredKey, set[tuple]]:
        # Every rule once, its literals over the component's own predicates empty;
        # then, for a recursive component, semi-naive rounds: each joins only the
        # matches that use a tuple new to one of those literals since the round
        # before (every literal is positive and monotone here: stratified).
        work: dict[PredKey, set[tuple]] = {p: set() for p in comp.preds}
        seen: dict[tuple, Rel] = {}  # the inner literals' views of the work before the last round's atoms
        for cr, srcs in zip(compiled, sources):
            rels = [self._inner_rel(s.lit, work, t, seen) if isinstance(s, _Inner) else s for s in srcs]
            work[cr.head_pred].update(cr.fire(rels, t))  # type: ignore[arg-type]
        while comp.recursive:
            views: dict[tuple, Rel] = {}
            derived: dict[PredKey, set[tuple]] = {p: set() for p in comp.preds}
            for cr, srcs in zip(compiled, sources):
                inner = [i for i, s in enumerate(srcs) if isinstance(s, _Inner)]
                if not inner:
                    continue  # derives what it derived in the first round
                rels = [self._inner_rel(s.lit, work, t, views) if isinstance(s, _Inner) else s for s in srcs]
                for i in inner:
                    before = seen.get(_inner_key(srcs[i].lit))  # type: ignore[attr-defined]
                    new = rels[i].tuples - before.tuples if before is not None else rels[i].tuples
                    if new:
                        derived[cr.head_pred].update(cr.fire_delta(rels, t, i, new, split=False))  # type: ignore[arg-type]
            grown = False
            for p in comp.preds:
                fresh = derived[p] - work[p]
                if fresh:
                    work[p] |= fresh
                    grown = True
            if not grown:
                break
            seen = views
        for p in comp.preds:
            self._check_times(p, work[p], t)
        self._visible = {}
        padded = [p for p in comp.preds if p in self._answers]
        if padded:
            rels = {}
            cache: dict[tuple, Rel] = {}
            for cr, srcs in zip(compiled, sources):
                if cr.head_pred in self._answers and not self.plan.is_hidden(cr.rule):
                    rels = [self._inner_rel(s.lit, work, t, cache) if isinstance(s, _Inner) else s for s in srcs]
                    self._visible.setdefault(cr.head_pred, set()).update(cr.fire(rels, t))  # type: ignore[arg-type]
            for p in padded:
                self._visible[p] = self._visible.get(p, set()) | {tup for tup in work[p] if tup[-1] == t}
        return work

    def _inner_rel(self, lit: ExtAtom, work: dict[PredKey, set[tuple]], t: int, cache: dict) -> Rel:
        """A literal over the component's own (in-progress) relation, computed directly."""
        key = lit.atom.key
        size = None if lit.window is None else lit.window.size
        ck = _inner_key(lit)
        rel = cache.get(ck)
        if rel is not None:
            return rel
        lo = self.t1 if size is None else max(self.t1, t - size)
        tuples = work[key]
        if key not in self.plan.timed:
            if lit.op in (Op.NOW, Op.DIAMOND):
                rel = Rel(tuples)
            elif lit.op is Op.BOX:
                rel = Rel(tuples if lo == t else ())
            else:
                rel = Rel(args + (t,) for args in tuples)
        elif lit.op is Op.NOW:
            rel = Rel(tup[:-1] for tup in tuples if _within(tup[-1], t, t))
        elif lit.op is Op.DIAMOND:
            rel = Rel(tup[:-1] for tup in tuples if _within(tup[-1], lo, t))
        elif lit.op is Op.AT:
            rel = Rel(tup for tup in tuples if _within(tup[-1], lo, t))
        else:
            times: dict[tuple, set[int]] = {}
            for tup in tuples:
                if _within(tup[-1], lo, t):
                    times.setdefault(tup[:-1], set()).add(tup[-1])
            rel = Rel(args for args, ts in times.items() if len(ts) == t - lo + 1)
        cache[ck] = rel
        return rel

    def _check_times(self, pred: PredKey, tuples: Iterable[tuple], t: int) -> None:
        if pred in self.plan.timed and tuples:
            times = {tup[-1] for tup in tuples}  # mostly one or two distinct times
            if all(type(T) is int for T in times) and self.t1 <= min(times) and max(times) <= t:
                return
            for tup in tuples:  # the first bad one, in the engine's order
                T = tup[-1]
                if type(T) is not int or T < self.t1 or T > t:
                    raise NoAnswerSet(f"{pred[0]} derived at time {T!r}, outside the timeline [{self.t1},{t}]")

    def _publish(self, comp: Component, content: dict[PredKey, set[tuple]], t: int, result: StepResult) -> None:
        """Replace the component's relations, record the diff, feed the views above."""
        for p in comp.preds:
            rel = self.rels[p]
            added, removed = rel.replace(content[p])
            self._announce(p, added, removed, t, result)
            answers = self._answers.get(p)
            if answers is not None:
                if answers is not rel:
                    added, removed = answers.replace(self._visible.get(p, set()) if content[p] else set())
                result.add_timed(p, added, removed)

    def _announce(
        self, p: PredKey, added: Collection[tuple], removed: Collection[tuple], t: int, result: StepResult
    ) -> None:
        """Feed a derived predicate's changes to the views over it and to the result."""
        how = self._how.get(p)
        if how is None:  # (per predicate, once: this runs for every predicate at every point)
            how = self._how[p] = self._announcing(p)
        timed, views, reported = how
        if views:
            if timed:
                for view in views:
                    view.advance(t, self.t1, added, removed)
            else:
                rows = self.rels[p]
                for nview in views:
                    nview.refresh(t, self.t1, rows)
        if not reported:
            return
        if timed:
            result.add_timed(p, added, removed)
        elif added or removed:
            result.add_now(p, added, removed)

    def _announcing(self, p: PredKey) -> tuple[bool, list, bool]:
        """How ``_announce`` feeds ``p``: whether it is timed, the views over it, and whether
        its changes are the result's (an output predicate whose answers are not kept apart)."""
        timed = p in self.plan.timed
        views = self._views_of.get(p, []) if timed else self._now_views_of.get(p, [])
        return timed, views, p in self.plan.output and p not in self._answers

    # ------------------------------------------------------------ checkpoints

    def __getstate__(self) -> dict:
        """Plain data only: the plan, the clock, relations, views, queues and counts.

        Compiled rules are not stored; ``__setstate__`` rebuilds them from the
        plan and pours the saved data into the rebuilt views and relations.
        """
        return {
            "plan": self.plan,
            "t1": self.t1,
            "t": self.t,
            "incremental": self.incremental,
            "pruning": self.pruning,
            "stratum": self.stratum,
            "only": self.only,
            "imported": self.imported,
            "rels": {p: rel.tuples for p, rel in self.rels.items()},
            "answers": {p: rel.tuples for p, rel in self._answers.items()},
            "time_views": self._time_views,
            "now_views": self._now_views,
            "tuple_views": self._tuple_views,
            "queues": self._queues,
            "counts": self._counts,
            "sizes": self._sizes,
        }

    def __setstate__(self, state: dict) -> None:
        self.__init__(  # type: ignore[misc]
            state["plan"], state["t1"], incremental=state["incremental"], stratum=state.get("stratum"),
            pruning=state.get("pruning", True), only=state.get("only"), imported=state.get("imported", ()),
        )
        self.t = state["t"]
        for p, tuples in state["rels"].items():
            self.rels[p].replace(set(tuples))
        for p, tuples in state["answers"].items():
            if self._answers[p] is self.rels[p]:
                if tuples == self.rels[p].tuples:
                    continue
                self._answers[p] = Rel()  # saved while its hidden rules derived
            self._answers[p].replace(set(tuples))
        for mine, saved in (
            (self._time_views, state["time_views"]),
            (self._now_views, state["now_views"]),
            (self._tuple_views, state["tuple_views"]),
        ):
            for key, view in saved.items():
                target = mine[key]
                for slot in type(view).__slots__:
                    if slot != "rel":
                        setattr(target, slot, getattr(view, slot))
                target.rel.replace(set(view.rel.tuples))
        self._busy = set(self._ext_views)  # restored views may hold facts
        self._queues.update(state["queues"])
        self._counts.update(state["counts"])
        self._sizes.update(state.get("sizes", {}))
        for rel in self._journaled:
            rel.start_journal()

    # ------------------------------------------------------------ inspection

    def stream_keys(self) -> frozenset[PredKey] | None:
        """The input predicates whose facts this engine's evaluation can see
        (through the input routes), or None if every fact counts: a tuple
        window counts the facts of every predicate.  A fleet reasoner keeps
        only these in its log."""
        if self._queues:
            return None
        return frozenset(k for k in self.plan.extensional | self.plan.input_routes.keys()
                         if self.plan.input_routes.get(k, k) in self._views_of)

    def exported(self) -> Content:
        """The content of the computed stratum at the last evaluation, as ``Imported.content``
        (what the reasoners above it and the output service need)."""
        out: dict = {}
        exports = self._exports
        if exports is None:  # (once: a stratum reasoner exports at every point)
            exports = self._exports = [
                (p, self.rels[p], (ANSWERS, p) if p in self._answers else None)
                for ci, (comp, _, _) in enumerate(self._components) if self._role[ci] == "compute" for p in comp.preds]
        for p, rel, answers_key in exports:
            rows = rel.tuples
            if rows:
                out[p] = frozenset(rows)
            if answers_key is not None:
                rows = self._answers[p].tuples  # (not kept: a component stops counting)
                if rows:
                    out[answers_key] = frozenset(rows)
        return out

    def holding_now(self) -> Iterable[tuple[PredKey, tuple]]:
        """Output atoms of now-predicates holding at the last evaluated time."""
        for p in self.plan.output:
            if p not in self.plan.timed:
                for args in self.rels[p]:
                    yield p, args

    def derived_at(self) -> set[tuple[PredKey, tuple, int]]:
        """Every output atom of the last evaluation, with its time."""
        out: set[tuple[PredKey, tuple, int]] = set()
        assert self.t is not None
        for p in self.plan.output:
            if p in self._answers:
                out.update((p, tup[:-1], tup[-1]) for tup in self._answers[p])
            elif p in self.plan.timed:
                out.update((p, tup[:-1], tup[-1]) for tup in self.rels[p])
            else:
                out.update((p, args, self.t) for args in self.rels[p])
        return out


def _timeless(comp: Component, compiled: list[CompiledRule], sources: list[list[object]], plan: Plan) -> bool:
    """Whether evaluating the component whole gives the same content for the same
    input relations at any time point: no timed predicate, its own predicates read
    as they are now (not boxed or pinned to a time)."""
    if any(p in plan.timed for p in comp.preds) or any(cr.uses_now for cr in compiled):
        return False
    return all(s.lit.op in (Op.NOW, Op.DIAMOND) for srcs in sources for s in srcs if isinstance(s, _Inner))



def _net(diffs: list) -> list:
    """Sum the signs of equal changes and keep the non-zero ones."""
    total: dict[tuple, int] = {}
    for d in diffs:
        total[d[:-1]] = total.get(d[:-1], 0) + d[-1]
    return [k + (v,) for k, v in total.items() if v]


def _inner_key(lit: ExtAtom) -> tuple:
    """What an inner literal's view depends on (its cache key)."""
    return (lit.atom.key, lit.op, None if lit.window is None else lit.window.size)


def _within(T: object, lo: int, hi: int) -> bool:
    """An atom's time lies in [lo, hi] (times bound to strings never do)."""
    return type(T) is int and lo <= T <= hi  # type: ignore[operator]
