"""From an arrival-ordered event stream to answer changes, correcting the past.

The ``Reasoner`` is what every runtime drives: it keeps the input log (stream
facts by time point, in arrival order), steps the engine through time points
as later events arrive, and handles delayed events and retractions.  A
correction is a *replay*: the affected span is evaluated once on the log as
it was and once as it is now (each from a warm-up point that makes the span
exact), and the difference of the two answer sets is emitted.  The replay's
engine then becomes the live engine, so live evaluation, late data, fleet
recovery and backfill are all "evaluate a span of the log from a state".
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Protocol

from chronolog.contract import no_answer_set
from chronolog.core.events import Event, OnePredicate, withdrawn
from chronolog.dialects.lars import gaps
from chronolog.dialects.lars.engine.content import NOTHING, Content
from chronolog.dialects.lars.engine.core import ANSWERS, Engine, Fact, Imported, StepResult
from chronolog.dialects.lars.engine.tms_engine import TmsEngine
from chronolog.dialects.lars.facts import facts_data, facts_from, imported_data, imported_from
from chronolog.dialects.lars.plan import Plan, PredKey, plan_by_reference
from chronolog.dialects.lars.provisional import Firm
from chronolog.state.journal import Journal

Change = tuple[PredKey, tuple, int, int]  # (pred, args, time, ±1)
Entry = tuple[list[Fact], Imported | None]  # what one time point of the log holds


class AnswerSink(Protocol):
    def step(self, result: StepResult, engine: Engine) -> None: ...

    def correct(self, changes: list[Change], engine: Engine, upto: int, previous: Engine) -> None: ...

    # a provisional evaluation (``provisional.py``): keep what is written from ``record`` to
    # ``recorded`` (its result: data), so that ``take_back`` of it can undo it in the answers
    def record(self) -> None: ...

    def recorded(self) -> object: ...

    def take_back(self, recorded: object) -> None: ...


def chooses(plan: Plan, stratum: int | None = None) -> bool:
    """Whether ``make_engine`` makes a TMS engine: one whose answers depend on the choices of
    earlier evaluations (``Reasoner.late``)."""
    if stratum is not None and stratum >= plan.fleet_strata:
        return False
    if plan.stratified and plan.solver not in ("tms!", "oneshot!"):
        return False
    return not plan.solver.startswith("oneshot")


def make_engine(plan: Plan, t1: int, stratum: int | None = None) -> Engine:
    """The engine for ``plan``: incremental when stratified; otherwise by truth
    maintenance (``plan.solver == "tms"``, the default) or clingo per time point
    ("oneshot").  An explicit "tms" or "oneshot" on a stratified program is honoured
    too (the cross-checks compare the modes).

    ``stratum``: evaluate only that stratum, importing the lower ones (fleet
    reasoners); past the last stratum it only imports (the output service).
    """
    if stratum is not None and stratum >= plan.fleet_strata:
        return Engine(plan, t1, stratum=stratum)
    if plan.stratified and plan.solver not in ("tms!", "oneshot!"):
        return Engine(plan, t1, stratum=stratum)
    if plan.solver.startswith("oneshot"):
        from chronolog.dialects.lars.engine.clingo_engine import ClingoEngine  # noqa: PLC0415 (clingo: ~30 ms, only for --mode oneshot)

        return ClingoEngine(plan, t1)  # type: ignore[return-value]

    return TmsEngine(plan, t1, plan.seed)  # type: ignore[return-value]


class Reasoner:
    """Evaluates a program over events pushed in arrival order."""

    def __init__(
        self, plan: Plan, sink: AnswerSink, *, warn: Callable[[str], None] = lambda m: None,
        retention: int | None = None, stratum: int | None = None, auto_advance: bool = True,
        observe: Callable[[int, Engine, StepResult], None] | None = None,
    ) -> None:
        """``retention``: how many time points back delayed events and retractions
        are still repaired (None: unlimited).  Older ones are reported, counted
        in ``too_late`` and ignored, and the log keeps only what repairs within
        the horizon can need, so memory stops growing with the stream.

        Fleet services evaluate one stratum (``stratum``) with the lower strata's
        content set per time point by ``set_imported``; they drive time
        themselves (``auto_advance=False``: ``push`` only records, ``advance``
        evaluates), and ``observe`` sees every evaluation whose result is new
        (live ones and the corrected span of a replay)."""
        self.plan = plan
        self.stratum = stratum
        self.auto_advance = auto_advance
        self.observe = observe
        self.imports: dict[int, Imported] = Journal()
        self.pruned_below: int | None = None
        self._old_imports: dict[int, Imported | None] = {}
        self.retention = retention
        self.prune_every = 64  # time points between prunings of the log
        self.too_late = 0
        self.sink = sink
        self.warn = warn
        self.log: dict[int, list[Fact]] = Journal()
        self.t1: int | None = None
        self.latest: int | None = None  # latest time seen; the pending (not yet evaluated) point
        self.evaluated: int | None = None  # last evaluated time point
        self.engine: Engine | None = None
        self.unmatched_retractions = 0
        self.delayed = 0
        self._dirty_from: int | None = None
        # late events of a program with choices held until a point after the time closed at
        # their arrival is evaluated, each with that time (``late``)
        self.held: list[tuple[int, Event]] = []
        # idle closings are provisional (``provisional.py``): a program with choices, evaluated
        # whole by this reasoner; the idle-closed time point not closed by a later time yet, and
        # the state before its provisional evaluation
        self.idles = chooses(plan, stratum) and not plan.stratified
        self.tentative: int | None = None
        self.firm: Firm | None = None
        # the last time the stream closed (``close``), and where this reasoner's program
        # version's part of time ends (None: it does not), for the held events of an older
        # version, which evaluates nothing after its part (``_release``)
        self.closing: int | None = None
        self.end: int | None = None
        self.firmly: int | None = None  # the last time closed by a later time (``close``)
        self._old_entries: dict[int, list[Fact]] = {}
        self._old_t1: int | None = None
        # the evaluations whose atoms the answers hold (first, last; None: no bound): a program
        # version chosen by the time point evaluated (LarsEvaluator.evaluations); replays count
        # only theirs, as the sink writes only theirs
        self.counted: tuple[int | None, int | None] = (None, None)
        # how far back an evaluation derives atoms (None: unbounded): the plan's, or wider where
        # the atoms are imported from strata a later program version evaluates (OutputStage.widen)
        self.output_reach: int | None = plan.output_reach
        # the lower strata's content may come in another program version's shape (``shaped``)
        self.reshape = False
        # quiet gaps jumped over (``gaps.py``): how far past the last input a step can change
        self._margin = gaps.quiet_margin(plan, stratum)
        self.observe_gaps = False  # ``observe`` takes points jumped over unobserved (a chain's crossing record)

    # ------------------------------------------------------------ state as data

    _SCALARS = ("t1", "latest", "evaluated", "pruned_below", "too_late", "unmatched_retractions", "delayed")

    def export_state(self) -> dict:
        """Everything but the log and the imports (journals, stored entry by
        entry) as plain data.  The engine is not exported: its state after
        ``evaluated`` is a function of the log from the plan's warm-up point,
        and ``import_state`` rebuilds it by replaying that span."""
        state = self._scalars()
        labels = getattr(self.engine, "export_labels", None)
        if labels is not None:  # the TMS's choices: a restart continues with them
            state["labels"] = labels()
        if self.tentative is not None:
            state["tentative"] = self.tentative
        if self.closing is not None and self.end is not None and self.held:  # (only then read: ``_release``)
            state["closing"] = self.closing
        if self.idles:
            state["firmly"] = self.firmly
        if self.firm is not None:
            state["firm"] = self.firm.data()
        return state

    def _scalars(self) -> dict:
        """``export_state`` without the engine's labels and the provisional evaluation."""
        state: dict = {k: getattr(self, k) for k in self._SCALARS}
        state["dirty_from"] = self._dirty_from
        state["old_t1"] = self._old_t1
        state["old_entries"] = [[t, facts_data(f)] for t, f in self._old_entries.items()]
        state["old_imports"] = [[t, None if i is None else imported_data(i)] for t, i in self._old_imports.items()]
        if self.held:
            state["held"] = [[mark, ev.t, ev.pred, list(ev.args), ev.retract] for mark, ev in self.held]
        return state

    def import_state(self, state: dict) -> None:
        """Continue from ``export_state``'s data (the log and imports already poured in)."""
        self._import_scalars(state)
        tentative = state.get("tentative")
        self.tentative = None if tentative is None else int(tentative)
        closing = state.get("closing")
        self.closing = None if closing is None else int(closing)
        firmly = state.get("firmly", self.evaluated if self.idles else None)  # (a state from before the field)
        self.firmly = None if firmly is None else int(firmly)
        self.firm = None if state.get("firm") is None else Firm.from_data(state["firm"])
        labels = state.get("labels")
        self.engine = None if self.t1 is None else self._rebuilt_engine(labels)
        if labels is not None and hasattr(self.engine, "import_labels"):
            self.engine.import_labels(labels)  # type: ignore[union-attr]

    def _import_scalars(self, state: dict) -> None:
        """``_scalars``' data back."""
        for k in self._SCALARS:
            value = state[k]
            if value is not None and type(value) is not int:
                raise ValueError(f"{k} is not an integer")
            setattr(self, k, value)
        self._dirty_from = state["dirty_from"]
        self._old_t1 = state["old_t1"]
        self._old_entries = {int(t): facts_from(f) for t, f in state["old_entries"]}
        self._old_imports = {int(t): None if i is None else imported_from(i) for t, i in state["old_imports"]}
        self.held = [(int(mark), Event(int(t)) if pred is None else
                      Event(int(t), str(pred), facts_from([[pred, args]])[0][1], bool(retract)))
                     for mark, t, pred, args, retract in state.get("held", [])]

    def _rebuilt_engine(self, labels: dict | None = None, guide: dict | None = None) -> Engine:
        """The engine as it was after evaluating ``evaluated`` — on the log as it
        was then, if corrections are pending — replayed from its warm-up point."""
        assert self.t1 is not None and self.evaluated is not None
        old_entries, old_imports = self._old_entries, self._old_imports

        def as_evaluated(t: int) -> Entry:
            got = old_entries.get(t)
            imp = old_imports[t] if t in old_imports else self.imports.get(t)
            return (got if got is not None else self.log.get(t, [])), imp

        t1 = self._old_t1 if self._old_t1 is not None else self.t1
        engine = make_engine(self.plan, t1, self.stratum)
        if labels is not None and hasattr(engine, "labels_history"):
            engine.guide = engine.labels_history(labels)  # type: ignore[attr-defined]
        elif guide is not None:  # (labels per time point as they are: ``TmsEngine.kept_labels``)
            engine.guide = guide  # type: ignore[attr-defined]
        if self.evaluated >= t1:
            begin = self.warm_up_start(as_evaluated, t1, self.evaluated)
            self._run(engine, as_evaluated, begin, self.evaluated, self.evaluated + 1, set())
        return engine

    def skip_to(self, last: int) -> bool:
        """Take the points up to ``last`` as evaluated without evaluating them for answers: the
        engine is warmed up on the log before ``last + 1`` (``warm_up_start``: from the first
        point where the reach is unbounded), so the evaluations from ``last + 1`` on are what
        evaluating every point would give.  Not for a program that is not stratified (its
        answer sets follow the choices of every earlier point) nor with corrections pending:
        False, nothing done."""
        if self.t1 is None or self.evaluated is None or last <= self.evaluated or self._dirty_from is not None:
            return False
        if not self.plan.stratified or self.plan.solver in ("tms!", "oneshot!"):
            return False
        self.evaluated = last
        self.engine = self._rebuilt_engine()
        return True

    # ------------------------------------------------------------ input

    def _arrive(self, t: int) -> None:
        """Time ``t`` arrives: the first one starts the timeline; a later one, with
        ``auto_advance``, evaluates every time point before it."""
        if self.t1 is None:
            self.t1 = self.latest = t
            self.evaluated = t - 1
            self.engine = make_engine(self.plan, t, self.stratum)
        assert self.latest is not None
        if t > self.latest:
            if self.auto_advance:
                self.apply_corrections()
                self._evaluate_until(t - 1)
            self.latest = t

    def push(self, ev: Event) -> None:
        t = ev.t
        self._arrive(t)
        assert self.latest is not None and self.evaluated is not None
        if t > self.evaluated:
            self._apply(ev)
            return
        # A delayed event or a retraction of the evaluated past.
        if not ev.is_fact and t >= self.t1:
            return  # a late time-advance marker inside the timeline changes nothing
        if self.retention is not None and t < self.evaluated - self.retention:
            self.too_late += 1
            where = f"{ev.loc}: " if ev.loc else ""
            self.warn(
                f"{where}warning: event at t={t} is older than the retention horizon "
                f"({self.evaluated - self.retention}); ignored"
            )
            return
        if t not in self._old_entries:
            self._old_entries[t] = list(self.log.get(t, ()))
        if not self._apply(ev):
            return
        if t < self.t1:
            if self._old_t1 is None:
                self._old_t1 = self.t1
            self.t1 = t
        self.delayed += 1
        self._dirty_from = t if self._dirty_from is None else min(self._dirty_from, t)

    def late(self, ev: Event, closed: int) -> None:
        """A delayed event or retraction that arrived when the points up to ``closed`` had closed
        (the fleet's late records, after its first grounded record).  ``chronolog run`` had evaluated
        the closed points when a later time arrived, before this event, and applied the event
        (with the others since that time) when the next later time arrived or at the end.  A
        program with choices (the TMS) chooses differently if a point first evaluates with the
        event, or if the replays of late events are cut otherwise (a replay follows the choices
        it finds): so the event is held (``held``, in the state: a snapshot between two records
        carries it) until an ``advance`` past the closed time at its arrival, which evaluates
        the points up to that time first, then applies the events that arrived between two
        closings as one correction, as ``run`` does.  A stratified program has no choices: its
        event goes in the log now (it is applied at the next ``advance``).

        An idle flush closed the latest point (``tentative``), which ``run`` has not: the event
        arrived, for ``run``, when the points before it had closed, and it makes the provisional
        evaluation of that point stale (``provisional.py``; a time marker inside the timeline
        changes nothing)."""
        if self.held or chooses(self.plan, self.stratum):
            if self.tentative is not None and closed >= self.tentative:
                # (before any later time closed a point, run had evaluated nothing: input then)
                closed = self.tentative - 1 if self.firmly is not None else min(self.tentative, self.t1 or 0) - 1
                if self.firm is not None and (ev.pred is not None or self.t1 is None or ev.t < self.t1):
                    self.firm.stale = True
            self.held.append((closed, ev))
            return
        self.push(ev)

    def close(self, upto: int, idle: bool) -> None:
        """The stage's input closed the time points up to ``upto``: because a later time arrived,
        or (``idle``) the latest one because the input went quiet, which ``run`` does not do.  A
        reasoner whose idle closings are provisional (``idles``) evaluates that point as ``run``
        at the end of its input, and keeps the state it had before, until a later time closes
        it — then its evaluation is ``run``'s — or an event for it or before it arrives — then
        it goes back to that state at the next ``advance`` (``provisional.py``)."""
        self.closing = upto if self.closing is None else max(self.closing, upto)
        if not idle:
            self.firmly = upto if self.firmly is None else max(self.firmly, upto)
        if not self.idles or self.end is not None and upto >= self.end:
            return
        if idle:
            if self.firm is not None and self.firm.point != upto and not self.firm.stale:
                self.firm = None
            self.tentative = upto
        elif self.tentative is not None and upto >= self.tentative:
            self.tentative = None
            if self.firm is not None and not self.firm.stale:
                self.firm = None  # its provisional evaluation was run's

    def _provisional(self, point: int) -> None:
        """Evaluate the idle-closed ``point`` as ``run`` at the end of its input, the points
        before it evaluated already: all held events, their correction, the point; the state
        before kept (``firm``), the answers written recorded by the sink."""
        times = {ev.t for _, ev in self.held}
        log = {t: (list(self.log[t]) if t in self.log else None) for t in times}
        self.sink.record()
        kept = getattr(self.engine, "kept_labels", None)
        self.firm = Firm(point, self._scalars(), log, None if kept is None else kept(), None)
        self._finish(point)
        self.firm.sink = self.sink.recorded()

    def _take_back(self) -> None:
        """Back to the state before the provisional evaluation (``firm``), its answers taken
        back; the events held since come after those it held then."""
        firm, self.firm = self.firm, None
        assert firm is not None
        for t, facts in firm.log.items():
            if facts is not None:
                self.log[t] = list(facts)
            elif t in self.log:
                del self.log[t]
        held, latest = self.held, self.latest
        self._import_scalars(firm.state)
        self.held += held
        self.latest = latest
        labels = firm.labels  # (the engine rebuilt as a restart rebuilds it)
        if isinstance(labels, dict) or labels is None:
            self.engine = self._rebuilt_engine(labels)
            if labels is not None and hasattr(self.engine, "import_labels"):
                self.engine.import_labels(labels)
        else:  # the choices as kept: followed as they are (no data written and read back)
            self.engine = self._rebuilt_engine(guide=labels.history)
            self.engine.adopt_kept(labels)  # type: ignore[attr-defined]
        self.sink.take_back(firm.sink)

    def _release(self, until: int | None) -> None:
        """Held late events (``late``) in arrival order: each once a point after its mark (the
        time closed at its arrival) is evaluated, as ``run`` applied it when a later time
        arrived (``until`` None: all, at the end); after the points up to its mark, and those
        of an earlier mark applied first (``run`` applied them at an earlier arrival).

        A program version whose part of time ends (``end``) evaluates nothing from there on:
        once it has evaluated its part, its held events are due as the stream's closings
        (``close``) pass their marks."""
        assert self.evaluated is not None
        due = until
        if until is not None and self.end is not None and until >= self.end - 1 and self.closing is not None:
            due = max(until, self.closing)
        group = None
        while self.held:
            mark, ev = self.held[0]
            if due is not None and mark >= due:
                return
            last = mark if until is None else min(mark, until)
            if self.evaluated < last or (group is not None and mark != group):
                self.apply_corrections()
                self._evaluate_until(last)
            group = mark
            self.held.pop(0)
            self.push(ev)

    def push_batch(self, t: int, facts: list[tuple[str, tuple, bool]]) -> None:
        """All events of one time point, in arrival order: (pred, args, retract).
        The same as pushing them one by one (the fleet's grounded batches)."""
        if any(retract for _, _, retract in facts):
            for pred, args, retract in facts:
                self.push(Event(t, pred, args, retract))
            return
        self.push_facts(t, [((pred, len(args)), args) for pred, args, _ in facts])

    def push_facts(self, t: int, facts: list[Fact], locs: Callable[[], list] | None = None) -> None:
        """Asserted facts at ``t`` in arrival order (a time advance if empty):
        the same as pushing their events one by one.  ``locs`` gives their
        input locations, asked for only if they turn out to be delayed."""
        self._arrive(t)
        assert self.latest is not None and self.evaluated is not None
        if t > self.evaluated:
            if facts:
                if t not in self.log:
                    self.log[t] = facts if type(facts) in (list, OnePredicate) else list(facts)
                else:
                    self._entries(t).extend(facts)
            return
        where = locs() if locs is not None else [None] * max(1, len(facts))
        if not facts:
            self.push(Event(t, loc=where[0]))
        for ((pred, _), args), loc in zip(facts, where):
            self.push(Event(t, pred, args, False, loc))

    def _apply(self, ev: Event) -> bool:
        """Change the log; False for a retraction that matches nothing."""
        if not ev.is_fact:
            return True
        assert ev.pred is not None
        fact = ((ev.pred, len(ev.args)), ev.args)
        if not ev.retract:
            self._entries(ev.t).append(fact)
            return True
        i = withdrawn(self.log.get(ev.t, ()), fact)
        if i is not None:
            del self._entries(ev.t)[i]
            return True
        self.unmatched_retractions += 1
        where = f"{ev.loc}: " if ev.loc else ""
        self.warn(f"{where}warning: retraction of {ev.pred}{list(ev.args)} at {ev.t} matches no earlier event; ignored")
        return False

    def _entries(self, t: int) -> list[Fact]:
        """The log's facts at ``t`` as a list that events may change (made one if
        new, or if the reader gave them as ``OnePredicate``)."""
        entries = self.log.get(t)
        if type(entries) is not list:
            entries = self.log[t] = [] if entries is None else list(entries)
        else:
            self.log.touch(t)  # type: ignore[attr-defined]  # (callers change it in place)
        return entries

    def set_imported(self, t: int, imported: Imported) -> None:
        """What the lower strata derived at ``t`` (new, or revised by their corrections)."""
        if self.reshape:
            imported = self.shaped(t, imported)
        if self.t1 is None:
            self.push(Event(t))
        assert self.evaluated is not None
        if t <= self.evaluated and t not in self._old_imports:
            self._old_imports[t] = self.imports.get(t)
        self.imports[t] = imported
        if t <= self.evaluated:
            self._dirty_from = t if self._dirty_from is None else min(self._dirty_from, t)

    def shaped(self, t: int, imported: Imported) -> Imported:
        """``imported`` (of time ``t``) in this reasoner's plan's shape (``shaped``)."""
        content = shaped(imported.content, t, self.plan)
        return imported if content is imported.content else Imported(imported.consistent, content)

    @property
    def pending(self) -> bool:
        """Whether corrections wait for an ``advance`` (delayed events, retractions, or
        imports of evaluated time points changed; late events held: ``late``)."""
        return self._dirty_from is not None or bool(self.held) or (self.firm is not None and self.firm.stale)

    def advance(self, until: int) -> None:
        """Apply pending corrections, then evaluate every time point up to ``until`` (an
        idle-closed one provisionally: ``close``)."""
        if self.t1 is None:
            return
        if self.firm is not None and self.firm.stale:
            self._take_back()
        point = self.tentative
        if point is not None and until >= point:
            assert self.evaluated is not None
            if self.firm is None and self.evaluated < point:
                # run's state while the point is the latest: the points before it evaluated, the
                # corrections since left pending (run applies them with the rest, ``_provisional``);
                # before a later time closed any point, none (they arrived before the first point
                # run evaluated, which was the latest: run evaluates them as one correction)
                if self.held:
                    self._release(point - 1)
                if self.evaluated < point - 1 and self.firmly is not None:
                    self.apply_corrections()
                    self._evaluate_until(point - 1)
                self._provisional(point)
            return
        self._advance(until)

    def _advance(self, until: int) -> None:
        if self.held:
            self._release(until)
        if self._dirty_from is not None:  # (the check first: once per time point in chronolog run)
            self.apply_corrections()
        self._evaluate_until(until)

    def finish(self, until: int | None = None) -> None:
        """Evaluate every remaining time point (up to ``until`` if given); an idle-closed point's
        provisional evaluation is final then, or taken back first if an event came since."""
        if self.firm is not None and self.firm.stale:
            self._take_back()
        self.firm = self.tentative = None
        self._finish(until)

    def _finish(self, until: int | None) -> None:
        if self.t1 is None:
            return
        assert self.latest is not None
        if self.held:
            self._release(None)
        self.apply_corrections()
        self._evaluate_until(self.latest if until is None else until)

    # ------------------------------------------------------------ evaluation

    def _evaluate_until(self, end: int) -> None:
        assert self.engine is not None and self.evaluated is not None
        if (self._margin is not None and gaps.SKIP_GAPS and (self.observe is None or self.observe_gaps)
                and end - self.evaluated > self._margin):
            self._evaluate_quiet(end, self._margin)
            return
        for t in range(self.evaluated + 1, end + 1):
            self._step(t, self.log.get(t, ()), self.imports.get(t))

    def _step(self, t: int, facts: Sequence[Fact], imported: Imported | None) -> StepResult:
        """Evaluate time point ``t``: the engine's step, observed, warned of, written and pruned."""
        assert self.engine is not None
        result = self.engine.step(t, facts, imported)
        self.evaluated = t
        if self.observe is not None:
            self.observe(t, self.engine, result)
        if not result.consistent:
            self.warn(f"warning: {no_answer_set.message(t, result.reason)}; no answers for that evaluation")
        self.sink.step(result, self.engine)
        if self.retention is not None and t % self.prune_every == 0:
            self.prune(t)
        return result

    def _evaluate_quiet(self, end: int, margin: int) -> None:
        """``_evaluate_until`` jumping over quiet gaps (``gaps.py``): a step that changed
        nothing, at a point whose previous point no input or clipping at the first time point
        reaches (``margin``), is the last step that changes anything before the next input's
        reach, so the points up to that reach are taken as evaluated (the sink told of them:
        ``quiet``) and the engine is warmed up at the last of them, as a restart does."""
        assert self.engine is not None and self.evaluated is not None and self.t1 is not None
        log, imports = self.log, self.imports
        quiet = getattr(self.sink, "quiet", None)
        last_input = self.evaluated  # (conservative: the point before may have had input)
        floor = self.t1 + margin + 1  # from here on no window is clipped at the first point
        t = self.evaluated
        retry = t  # no jump before this point (the input a refused jump stopped at)
        while t < end:
            t += 1
            facts = log.get(t, ())
            imported = imports.get(t)
            if facts or imported is not None:
                last_input = t
            result = self._step(t, facts, imported)
            if (quiet is not None and t >= retry and t - 1 - margin > last_input and t - 1 >= floor
                    and result.consistent and not result.now_groups() and not result.timed_groups()):
                t, retry = self._jump(t, end, margin, quiet)

    def _jump(self, t: int, end: int, margin: int, quiet: Callable[[int, int, Engine], bool]) -> tuple[int, int]:
        """From the quiet step at ``t`` to the last point before the next input's reach (or
        ``end``), and the next input's point (before which no jump is tried again); ``t``
        where the jump would save too little or the sink cannot be told."""
        nxt = gaps.next_input(self.log, t, end)
        last = end if nxt > end else nxt - margin - 1
        if last - t <= margin + gaps.JUMP_SLACK or not quiet(t + 1, last, self.engine):
            return t, nxt
        if self.retention is not None and last - last % self.prune_every > t:
            self.prune(last - last % self.prune_every)  # (each pruning drops what the one before did, and more)
        self.evaluated = last
        self.engine = self._rebuilt_engine()
        return last, nxt

    def prune(self, now: int) -> None:
        """Forget log entries no repair within the retention horizon can read."""
        assert self.retention is not None
        if self.output_reach is None or self.plan.state_reach is None:
            return  # a repair replays from the first time point: the whole log is needed
        keep_from = now - self.retention - self.output_reach - self.plan.state_reach
        need = self.plan.tuple_reach
        t = keep_from
        old = sorted(k for k in self.log if k < keep_from)
        for k in reversed(old):  # tuple windows: keep the last n facts before the cut
            if need <= 0:
                break
            need -= len(self.log[k])
            t = k
        for k in old:
            if k < t:
                del self.log[k]
        for k in [k for k in self.imports if k < t - 1]:
            del self.imports[k]
        if hasattr(self.engine, "forget_before"):
            self.engine.forget_before(t)  # type: ignore[union-attr]
        self.pruned_below = t - 1  # what the lower strata sent before this is no longer needed

    def apply_corrections(self) -> None:
        """Replay the span touched by delayed events and retractions; emit the differences."""
        if self._dirty_from is None:
            return
        assert self.t1 is not None and self.evaluated is not None
        old_t1 = self._old_t1 if self._old_t1 is not None else self.t1
        first = min(old_t1, self.t1)
        end = self.evaluated
        reach = self.output_reach
        start = first if reach is None else max(first, self._dirty_from - reach)
        old_entries = self._old_entries
        old_imports = self._old_imports

        def old_log(t: int) -> tuple[list[Fact], Imported | None]:
            got = old_entries.get(t)
            imp = old_imports[t] if t in old_imports else self.imports.get(t)
            return (got if got is not None else self.log.get(t, [])), imp

        new_log = lambda t: (self.log.get(t, []), self.imports.get(t))  # noqa: E731
        if old_t1 == self.t1 and not old_entries and self._imports_only():
            before, after, engine = self._imported_changes(new_log, start, end)
        elif old_t1 == self.t1:
            # a sink that takes no changes (a stratum's: its records are the observed evaluations,
            # each diffed against what was sent) needs no replay of the old content
            before, after, engine = self._replay_shared(old_log if getattr(self.sink, "changes", True) else None,
                                                        new_log, self._dirty_from, start, end)
        else:  # the first time point moved: every window's clipping changed
            before, _ = self.replay(old_log, old_t1, start, end)
            after, engine = self.replay(new_log, self.t1, start, end, observe=True)
        changes: list[Change] = [(p, a, T, 1) for p, a, T in after - before]
        changes += [(p, a, T, -1) for p, a, T in before - after]
        previous, self.engine = self.engine, engine
        self._dirty_from = None
        self._old_entries = {}
        self._old_imports = {}
        self._old_t1 = None
        assert previous is not None
        self.sink.correct(changes, engine, end, previous)

    def _imports_only(self) -> bool:
        """Whether each evaluation's answers are what it imports at its own time: the output
        service's reasoner, above every stratum, of a program without atoms at other times
        (``@``-heads), counting every evaluation and observed by nobody."""
        return (self.stratum is not None and not self.plan.timed and self.observe is None
                and self.counted == (None, None) and all(c.stratum < self.stratum for c in self.plan.components))

    def _imported_changes(self, new_log: Callable[[int], Entry], start: int, end: int) -> tuple[set, set, Engine]:
        """``_replay_shared``'s result where the answers are the imports (``_imports_only``):
        the old and new content of the points whose imports changed, compared without
        evaluating the span again (an upgrade's corrections reach the output as thousands of
        points: two replays of them were most of its work), and the engine at ``end`` made
        from its warm-up."""
        before: set[tuple[PredKey, tuple, int]] = set()
        after: set[tuple[PredKey, tuple, int]] = set()
        output = self.plan.output
        empty: frozenset = frozenset()
        for t, was in self._old_imports.items():
            if not start <= t <= end:
                continue
            now = self.imports.get(t)
            old = was.content if was is not None and was.consistent else NOTHING
            new = now.content if now is not None and now.consistent else NOTHING
            for p in output:  # a predicate's group the same object (or equal) at both: no change
                rows_old, rows_new = old.get(p, empty), new.get(p, empty)
                if rows_old is rows_new or rows_old == rows_new:
                    continue
                before.update((p, args, t) for args in rows_old - rows_new)
                after.update((p, args, t) for args in rows_new - rows_old)
        assert self.t1 is not None
        engine = self._replay_engine(self.t1)
        self._run(engine, new_log, self.warm_up_start(new_log, self.t1, end), end, end + 1, set())
        return before, after, engine

    def replay(
        self, log: Callable[[int], Entry], t1: int, start: int, end: int, observe: bool = False
    ) -> tuple[set[tuple[PredKey, tuple, int]], Engine]:
        """Evaluate ``[warm-up, end]`` on ``log``; return the atoms at times >= start derived
        by the evaluations in ``[start, end]``, and the engine after ``end``."""
        engine = self._replay_engine(t1)
        union: set[tuple[PredKey, tuple, int]] = set()
        if end < t1:
            return union, engine
        begin = self.warm_up_start(log, t1, max(start, t1))
        self._run(engine, log, begin, end, start, union, self.observe if observe else None, self.counted)
        self._inherit(engine, max(begin, start))
        return union, engine

    def _replay_engine(self, t1: int) -> Engine:
        """A fresh engine for a replay; a TMS one follows the live engine's choices."""
        engine = make_engine(self.plan, t1, self.stratum)
        if hasattr(engine, "follow") and self.engine is not None and hasattr(self.engine, "history"):
            engine.follow(self.engine)  # type: ignore[attr-defined]
        return engine

    def _inherit(self, engine: Engine, start: int) -> None:
        """A TMS replay's labels from ``start`` on; before it the live engine's: those of the
        replay's warm-up (from ``warm_up_start``) are exact only at ``start``, a later replay
        following them would choose after labels that no evaluation had (a stale ``d(2)``
        after a late retraction of ``p(2)@0``, tests/dialects/lars/test_tms_lars.py)."""
        if hasattr(engine, "inherit") and self.engine is not None and hasattr(self.engine, "history"):
            engine.inherit(self.engine, start)  # type: ignore[attr-defined]

    def _replay_shared(
        self, old_log: Callable[[int], Entry] | None, new_log: Callable[[int], Entry], dirty: int, start: int,
        end: int
    ) -> tuple[set, set, Engine]:
        """Both replays at once: the logs agree before ``dirty``, so the warm-up and
        the evaluations before it run once and the engine is cloned there (``old_log``
        None: the new one only, for its observed evaluations: no answers are gathered)."""
        assert self.t1 is not None
        engine = self._replay_engine(self.t1)
        begin = self.warm_up_start(new_log, self.t1, max(start, self.t1))
        if old_log is None:
            self._run(engine, new_log, begin, min(dirty, end + 1) - 1, start, None)
            self._run(engine, new_log, max(begin, dirty), end, start, None, self.observe)
            self._inherit(engine, max(begin, start))
            return set(), set(), engine
        shared: set[tuple[PredKey, tuple, int]] = set()
        self._run(engine, new_log, begin, min(dirty, end + 1) - 1, start, shared, counted=self.counted)
        import pickle  # noqa: PLC0415 (start-up: only replays clone engines)

        with plan_by_reference(self.plan, "replay"):
            old_engine = pickle.loads(pickle.dumps(engine, protocol=pickle.HIGHEST_PROTOCOL))
        before, after = set(shared), set(shared)
        if (self._margin is not None and gaps.SKIP_GAPS and (self.observe is None or self.observe_gaps)
                and self.counted == (None, None) and end - max(begin, dirty) > self._margin):
            engine = gaps.replay_both(self, (old_engine, engine), (old_log, new_log), max(begin, dirty), end, start,
                                      (before, after), self._old_entries)
            return before, after, engine
        self._run(old_engine, old_log, max(begin, dirty), end, start, before, counted=self.counted)
        self._run(engine, new_log, max(begin, dirty), end, start, after, self.observe, self.counted)
        self._inherit(engine, max(begin, start))
        return before, after, engine

    def _warmed(self, log: Callable[[int], Entry], last: int) -> Engine:
        """A replay's engine at ``last``, warmed up on ``log`` (a quiet gap jumped: ``gaps.replay_both``)."""
        assert self.t1 is not None
        engine = self._replay_engine(self.t1)
        self._run(engine, log, self.warm_up_start(log, self.t1, last), last, last + 1, None)
        return engine

    @staticmethod
    def _run(
        engine: Engine, log: Callable[[int], Entry], first: int, last: int, start: int, union: set | None,
        observe: Callable[[int, Engine, StepResult], None] | None = None,
        counted: tuple[int | None, int | None] = (None, None),
    ) -> None:
        """Evaluate ``[first, last]``; into ``union`` the atoms at times >= ``start`` that the
        evaluations from ``start`` on derive (only those ``counted``: see ``Reasoner.counted``;
        ``union`` None: none gathered)."""
        if union is None:
            for t in range(first, last + 1):
                facts, imported = log(t)
                result = engine.step(t, facts, imported)
                if observe is not None:
                    observe(t, engine, result)
            return
        lo, hi = counted
        since = start if lo is None else max(start, lo)
        for t in range(first, last + 1):
            facts, imported = log(t)
            result = engine.step(t, facts, imported)
            if observe is not None:
                observe(t, engine, result)
            if t >= since and (hi is None or t <= hi):
                union.update(a for a in engine.derived_at() if a[2] >= start)

    def warm_up_start(self, log: Callable[[int], Entry], t1: int, start: int) -> int:
        """The first time point to evaluate so that the state at ``start`` is exact."""
        reach = self.plan.state_reach
        if reach is None:
            return t1
        begin = max(t1, start - reach)
        need = self.plan.tuple_reach
        t = start
        while need > 0 and t > t1:  # tuple windows: far enough back to hold the last n facts
            t -= 1
            need -= len(log(t)[0])
        return min(begin, t)


def shaped(content: Content, t: int, plan: Plan) -> Content:
    """A lower stratum's ``content`` of the evaluation at ``t`` in the shape ``plan`` keeps it.

    A predicate read through a window or ``at`` is kept with its times (and, as it may have
    stream facts, its answers apart: padded); after an upgrade where one program version
    reads it so and another does not, its stratum sends each time point in the shape of the
    version evaluating it.  Without an ``@``-head every atom of it the evaluation at t
    derives lies at t (its stream facts and program facts may lie earlier): so the time-less
    shape is the atoms at t, and the timed one those atoms at t — exact for the answers at t,
    which are the atoms at t (``Plan.hidden_rules``), and for the shape of what a warm-up
    before T reads (its evaluations are not observed; the one at T reads T's content whole).
    (``changes.per_stratum_refusal`` refuses a predicate read so in one program only when an
    ``@``-head dates it.)"""
    out: dict | None = None
    for key, rows in content.items():
        if key[0] == ANSWERS or key not in plan.intensional:
            continue
        timed = key in plan.timed
        if len(next(iter(rows))) == key[1] + timed:
            continue
        if out is None:
            out = dict(content)
        got = frozenset(r + (t,) for r in rows) if timed else frozenset(r[:-1] for r in rows if r[-1] == t)
        if got:
            out[key] = got
        else:
            del out[key]
        if timed and got and key in plan.padded:
            out[(ANSWERS, key)] = got
        else:
            out.pop((ANSWERS, key), None)
    return content if out is None else out
