"""LARS behind the dialect-neutral ``Evaluator`` interface (chronolog.evaluator).

The ``Reasoner`` evaluates and the ``AnswerWriter`` renders whole time points
as bytes (the tuned path); this puts the two behind the interface every
dialect implements.  ``advance`` and ``finish`` hand out the bytes the writer
rendered as a ``LarsAnswers`` batch, decoded to ``AnswerChange`` values only
if someone iterates it, so ``chronolog run`` writes them as they are.  The
state is explicit data (the log, the imports, the counters and the writer's
published timed atoms; the engine is rebuilt by replay on import).
"""

from __future__ import annotations

import copy
from collections.abc import Callable, Iterator
from typing import Any, ClassVar

import msgspec

from chronolog.core.events import Event
from chronolog.dialects.lars.answers import AnswerWriter
from chronolog.dialects.lars.crossing import CrossingRecord, Entry
from chronolog.dialects.lars.facts import facts_data, facts_from, imported_data, imported_from
from chronolog.dialects.lars.keeping import adopts, evaluate_split, quiet_keys, split
from chronolog.dialects.lars.plan import Plan
from chronolog.dialects.lars.reasoner import Reasoner
from chronolog.dialects.lars.restating import restated_at_once
from chronolog.evaluator import AnswerChange, Span, Time, check_state_header
from chronolog.io.batches import FactBatch
from chronolog.state.codec import reading, versioned


def change_of(line: dict) -> AnswerChange:
    """An answer line (CONTRACT §3, LARS: integer times) as an ``AnswerChange``."""
    args = tuple(line["args"])
    diff = line.get("diff", 1)
    if "t" in line:
        return line["pred"], args, Span.point(line["t"]), diff
    lo_text, hi_text = line["interval"][1:-1].split(",")
    if hi_text == "inf":
        return line["pred"], args, Span(int(lo_text), None), diff
    return line["pred"], args, Span(int(lo_text), int(hi_text), True, True), diff


class LarsAnswers:
    """Answer lines the writer rendered, and the changes they stand for (an ``Answers``)."""

    __slots__ = ("data", "line_count", "corrections", "_changes")

    def __init__(self, data: bytes = b"", line_count: int = 0, corrections: int = 0) -> None:
        self.data, self.line_count, self.corrections = data, line_count, corrections
        self._changes: list[AnswerChange] | None = None

    def lines(self) -> bytes:
        return self.data

    def _decoded(self) -> list[AnswerChange]:
        if self._changes is None:  # (a no_answer_set line carries no change)
            lines = map(msgspec.json.decode, self.data.splitlines())
            self._changes = [change_of(got) for got in lines if "pred" in got]
        return self._changes

    def __getitem__(self, i: int) -> AnswerChange:
        return self._decoded()[i]

    def __len__(self) -> int:
        return len(self._decoded())

    def __iter__(self) -> Iterator[AnswerChange]:
        return iter(self._decoded())


_NONE = LarsAnswers()  # no lines (shared: a batch is never changed)


class _Bytes:
    """The writer's output: the rendered bytes kept until taken (``tag``: the
    ``"model": k`` of one of several answer streams, added to every line)."""

    encoding = "utf-8"

    def __init__(self, tag: int | None = None) -> None:
        self.parts: list[bytes] = []
        self.buffer = self  # the writer writes bytes to ``out.buffer`` when it is UTF-8
        self.tag = b'{"model":%d,"' % (tag or 0)
        if tag is None:
            self.write = self.parts.append  # type: ignore[method-assign, assignment]  # (once per time point)

    def write(self, data: bytes) -> int:
        self.parts.append(data.replace(b'{"', self.tag))
        return len(data)

    def flush(self) -> None:
        pass


class LarsEvaluator:
    """A LARS program (its ``Plan``) as an ``Evaluator``.

    ``eager`` (``chronolog run``): a pushed event at a later time evaluates
    every integer point before it at once (they are final), so that a delayed
    event for one of them is a correction as the input order says; the lines
    come out of the next ``advance`` or ``finish`` (take them before
    ``export_state``).  Not eager (a driver that checkpoints): only ``advance``
    and ``finish`` evaluate."""

    dialect: ClassVar[str] = "lars"
    resumes_mid_stream: ClassVar[bool] = True

    def __init__(self, plan: Plan, *, answers: str = "changelog", retention: int | None = None,
                 warn: Callable[[str], None] = lambda m: None, eager: bool = False, model: int | None = None) -> None:
        self.plan = plan
        self.out = _Bytes(model)
        self.writer = AnswerWriter(self.out, plan, answers)  # type: ignore[arg-type]
        # eager: the reasoner's own arrival evaluates the points before a later time, and
        # ``push`` is the reasoner's (no call of ours per event: measured in run's hot loop)
        self.reasoner = Reasoner(plan, self.writer, warn=warn, retention=retention, auto_advance=eager)
        self.eager = eager
        if eager:
            self.push = self.reasoner.push  # type: ignore[method-assign]
        self._lines = self._corrections = 0  # the writer's counts at the last batch
        # what it wrote from an upgrade's time on without the kept answers, made by the new
        # version's ``keep`` in the same pass as its own (``written(kept)`` hands it out once)
        self._taken_back: tuple[frozenset[str], LarsAnswers] | None = None
        # or, made at once by ``keep`` (``restated``), the lines restating it as the new version
        self._restated: tuple[frozenset[str], list[bytes]] | None = None
        # what its components derived that others read, per time point (``record_crossing``)
        self.crossing: CrossingRecord | None = None

    def record_crossing(self, entries: dict[int, Entry] | None = None) -> None:
        """Keep, per time point evaluated from now on, what each component derived that
        another reads (``crossing.CrossingRecord``, in ``entries`` if given: a chain's
        journal, which may hold earlier points), so that an upgrade changing only the
        components above evaluates just those (``keep``).  A service that can be upgraded
        asks for it (the chain stage); nothing is recorded for a program without such
        components or not evaluated incrementally."""
        got = self.crossing
        if got is None:
            got = CrossingRecord.of(self.plan, entries)
            if got is None:
                return
        elif entries is not None and entries is not got.entries:  # (into the journal given)
            for t in [t for t in entries if t not in got.entries]:
                del entries[t]
            for t, entry in got.entries.items():
                if dict.get(entries, t) is not entry:  # (a journal writes what it is set to)
                    entries[t] = entry
            got.entries = entries
        got.reasoner = self.reasoner
        self.crossing = got
        self.reasoner.observe = got.observe
        self.reasoner.observe_gaps = True  # (a point without an entry: an upgrade evaluates it again)

    def stop_recording(self) -> None:
        """No record kept any more (a program version no longer the newest)."""
        if self.crossing is not None:
            self.crossing = None
            self.reasoner.observe = None
            self.reasoner.observe_gaps = False

    def evaluations(self, first: int | None, last: int | None = None) -> None:
        """Answer only what the evaluations at points in [first, last] derive (None: no bound),
        live and in corrections: a program version chosen by the time point evaluated, whose
        ``@``-heads may date atoms before ``first`` (docs/reference/contract.md §6)."""
        self.writer.evaluations(first, last)
        self.reasoner.counted = (first, last)

    def _arrive(self, t: int) -> None:
        """Eager: evaluate the points before ``t`` not evaluated yet (a driver that advances
        to each previous time before pushing a later one leaves none: no call at all)."""
        r = self.reasoner
        if r.evaluated is not None and t - 1 > r.evaluated:
            r.advance(t - 1)

    def push(self, event: Event) -> None:  # (eager: the reasoner's own push, bound in __init__)
        self.reasoner.push(event)

    def push_block(self, block: FactBatch) -> None:
        """(Eager: the reasoner's arrival of a later time evaluates the points before it.)"""
        self.reasoner.push_facts(block.t, block.facts, block.locs)  # type: ignore[arg-type]  # (a OnePredicate is kept as it is)

    def _taken(self) -> LarsAnswers:
        parts = self.out.parts
        if not parts:
            return _NONE
        w = self.writer
        batch = LarsAnswers(parts[0] if len(parts) == 1 else b"".join(parts), w.lines - self._lines,
                            w.corrections - self._corrections)
        parts.clear()
        self._lines, self._corrections = w.lines, w.corrections
        return batch

    def advance(self, until: Time) -> LarsAnswers:
        self.reasoner.advance(until if type(until) is int else int(until))
        parts = self.out.parts
        if not parts:
            return _NONE
        w = self.writer  # (``_taken``, inline: once per time point)
        batch = LarsAnswers(parts[0] if len(parts) == 1 else b"".join(parts), w.lines - self._lines,
                            w.corrections - self._corrections)
        parts.clear()
        self._lines, self._corrections = w.lines, w.corrections
        return batch

    def finish(self, until: Time | None = None) -> LarsAnswers:
        self.reasoner.finish(None if until is None else int(until))
        return self._taken()

    def pending(self) -> LarsAnswers:
        return self._taken()

    def written(self, since: Time | frozenset[str] | None = None) -> LarsAnswers:
        """What the lines returned so far mean, as lines: LARS keeps no record of its past
        answers (only the open intervals), but evaluates every point on its own, so its
        retained input evaluated again up to the same point gives them.  ``since``: what they
        mean from ``since`` on only, evaluated from there (``evaluate_from``: cut at ``since``,
        they mean what the whole span's lines cut there mean).  A set of answer keys
        (``KeepsStrata.written``): what they mean from the upgrade time on without those
        answers, as the new version's ``keep`` evaluated it (else all of it: the caller
        leaves out the kept answers and cuts the lines at the upgrade time)."""
        if isinstance(since, frozenset):
            taken, self._taken_back = self._taken_back, None
            if taken is not None and taken[0] == since:
                return taken[1]
            since = None
        r = self.reasoner
        again = LarsEvaluator(self.plan, answers=self.writer.mode, retention=r.retention, eager=self.eager)
        again.evaluations(*r.counted)
        if r.evaluated is None:
            return _NONE
        for ev in self.retained()[1]:
            again.push(ev)
        if since is not None:  # (its lines from ``since`` on: those the caller cuts there)
            again.evaluate_from(since, r.evaluated)
        return again.advance(r.evaluated)

    def evaluate_from(self, at: Time, done: Time) -> bool:
        """(``evaluator.EvaluatesFrom``) The points before ``at`` taken as evaluated without a
        line (``Reasoner.skip_to``: exact for a stratified program); before ``done`` at most,
        so that the evaluation at ``done`` opens what holds there when ``at`` lies after it."""
        point = int(min(at, done))
        if self.eager or not self.reasoner.skip_to(point - 1):
            return False
        # its first evaluation writes all it derives (``AnswerWriter._first_step``), not the
        # changes from the warm-up's state, which was never written; the evaluations before it
        # are not made, so counting from it leaves out only atoms before it (the caller's cut)
        first, last = self.reasoner.counted
        if first is None or first < point:
            self.evaluations(point, last)
        return True

    def keep(self, old: Any, kept: frozenset[str], at: Time, until: Time) -> bool:
        """(``evaluator.KeepsStrata``) Become the new program version of ``old`` (the running
        version, of another program, evaluated up to ``until``) from ``at`` on, keeping its
        components that the change leaves alone (``keeping.split``; ``kept``: their answer
        keys, not restated): its input is taken over, and only the other components of both
        programs are evaluated again from ``at`` minus their warm-up (``keeping.evaluate_split``:
        the kept ones once, to give them their content); the running version's answers from
        there on, without the kept ones, are left for its ``written(kept)``.  Its engine is then
        warmed up at ``until`` as after a restart (``Reasoner.skip_to``), and its next
        ``advance(until)`` returns the lines, from ``min(at, until)`` on (the caller cuts them at
        ``at``).  False where it cannot (a program that is not stratified or has ``@``-heads,
        ``old`` not a LARS evaluator or with corrections pending): nothing done."""
        if not isinstance(old, LarsEvaluator) or self.eager or old.eager or self.reasoner.t1 is not None:
            return False
        ro, rn = old.reasoner, self.reasoner
        if ro.t1 is None or ro.evaluated is None or ro.evaluated != until or ro.pending or ro.evaluated < ro.t1:
            return False
        parts = split(old.plan, self.plan, kept)
        if parts is None or self.reasoner.counted != (None, None):
            return False
        for t, facts in ro.log.items():  # (lists of its own: a late event changes each version's log)
            rn.log[t] = list(facts)
        for t, imported in ro.imports.items():
            rn.imports[t] = imported
        for name in ("t1", "latest", "pruned_below", "too_late", "unmatched_retractions", "delayed"):
            setattr(rn, name, getattr(ro, name))
        point = max(ro.t1, min(int(at), int(until)))
        first, last = ro.counted
        running = AnswerWriter(_Bytes(), old.plan, old.writer.mode)  # type: ignore[arg-type]
        running.evaluations(point if first is None else max(point, first), last)
        self.evaluations(point, None)  # (its first evaluation writes all it derives)
        fresh = None  # its own record, made from ``point`` on by the evaluation (``evaluate_split``)
        if old.crossing is not None:
            self.record_crossing()
            fresh = self.crossing
            if fresh is not None and adopts(old.crossing, fresh, parts, self.plan):
                fresh.entries, fresh = old.crossing.entries, None
        restated = None  # the changed components of both versions over [point, now] at once
        if (fresh is None and old.crossing is not None and self.writer.mode == old.writer.mode
                and (first is None or first <= point) and (last is None or last >= until)):
            restated = restated_at_once(((self.plan, parts.rest_new), (old.plan, parts.rest_old)), ro,
                                        quiet_keys(parts, self.plan, kept), int(at), point, int(until),
                                        old.crossing, self.writer.mode == "points")
        if restated is None:
            evaluate_split(parts, ro, rn, kept, point, int(until), (self.writer, running), old.crossing, fresh)
            lines = b"".join(running.out.parts)  # type: ignore[attr-defined]
            old._taken_back = (kept, LarsAnswers(lines, running.lines, 0))
        else:
            self._restated = (kept, restated)
        old.stop_recording()  # (no longer the newest version: its record, if taken over, is this one's)
        rn.evaluated = int(until)
        rn.engine = rn._rebuilt_engine()
        return True

    def restated(self, kept: frozenset[str]) -> list[bytes] | None:
        """(``evaluator.RestatesKept``) The lines restating what the running version wrote from
        the upgrade time on, where ``keep`` (keeping ``kept``) made them at once from both
        versions' atoms per point (``restating.restated_at_once``); handed out once.  None: it
        wrote its answers from there on for the caller to compare with the running version's
        ``written(kept)``."""
        got, self._restated = self._restated, None
        return got[1] if got is not None and got[0] == kept else None

    def retained_span(self) -> tuple[Time | None, Time | None]:
        """(``KeepsStrata``) ``retained``'s completeness and latest time, without its events."""
        r = self.reasoner
        return (None, None) if r.t1 is None else (r.pruned_below, r.latest)

    def late_bound(self) -> Time | None:
        """The earliest event time it still applies (older events are too late: the
        reasoner's retention); None: any.  LARS is causal: answers before it are final."""
        r = self.reasoner
        return None if r.retention is None or r.evaluated is None else r.evaluated - r.retention

    def retained(self) -> tuple[Time | None, list[Event]]:
        """The logged facts as events, time point by time point in arrival order, framed by
        the first and latest times; complete from the oldest point not pruned (retention)."""
        r = self.reasoner
        if r.t1 is None:
            return None, []
        events = [Event(r.t1)]
        for t in sorted(r.log):
            events += [Event(t, pred, tuple(args)) for (pred, _), args in r.log[t]]
        events.append(Event(r.latest))
        return r.pruned_below, events

    # the run statistics chronolog run reports
    @property
    def unmatched_retractions(self) -> int:
        return self.reasoner.unmatched_retractions

    @property
    def delayed(self) -> int:
        return self.reasoner.delayed

    @property
    def too_late(self) -> int:
        return self.reasoner.too_late

    @property
    def time_points(self) -> int:
        r = self.reasoner
        return 0 if r.t1 is None or r.evaluated is None else r.evaluated - r.t1 + 1

    def export_state(self) -> dict[str, Any]:
        if self.out.parts:
            raise RuntimeError("answers evaluated but not taken (advance or finish first)")
        r = self.reasoner
        return versioned({
            "dialect": self.dialect,
            "reasoner": r.export_state(),
            "log": [[t, facts_data(facts)] for t, facts in r.log.items()],
            "imports": [[t, imported_data(i)] for t, i in r.imports.items()],
            "writer": self.writer.export_state(),
            "evaluations": list(self.reasoner.counted),
        })

    def import_state(self, data: dict[str, Any]) -> None:
        check_state_header(data, self.dialect)
        r = self.reasoner
        with reading("LARS evaluator state"):
            for t, facts in data["log"]:
                dict.__setitem__(r.log, int(t), facts_from(facts))
            for t, imported in data["imports"]:
                dict.__setitem__(r.imports, int(t), imported_from(imported))
            self.writer.import_state(data["writer"])
            first, last = data.get("evaluations", (None, None))
            self.evaluations(None if first is None else int(first), None if last is None else int(last))
            r.import_state(data["reasoner"])
        self._lines, self._corrections = self.writer.lines, self.writer.corrections


class LarsModels:
    """``--models N`` (one-shot): the first N answer sets clingo enumerates per
    time point, each its own answer stream (lines tagged ``"model": k``, k from
    0; a point with fewer answer sets repeats the last one in the higher
    models): one evaluator per model, fed the same events.  The lines are
    grouped as one evaluator per model would write them: at each arrival of a
    later time, each model's lines up to the time before it, model after
    model; at the end, each model's remaining lines."""

    dialect: ClassVar[str] = "lars"
    resumes_mid_stream: ClassVar[bool] = False

    def __init__(self, plan: Plan, models: int, *, answers: str = "changelog", retention: int | None = None,
                 warn: Callable[[str], None] = lambda m: None) -> None:
        self.each: list[LarsEvaluator] = []
        for k in range(models):
            mine = copy.copy(plan)
            mine.model = k
            self.each.append(LarsEvaluator(mine, answers=answers, retention=retention, model=k,
                                           warn=warn if k == 0 else (lambda m: None)))
        self.first = self.each[0]
        self.latest: int | None = None
        self.ready: list[LarsAnswers] = []  # the lines of the arrivals since the last batch

    def evaluations(self, first: int | None, last: int | None = None) -> None:
        for one in self.each:
            one.evaluations(first, last)

    def _arrive(self, t: int) -> None:
        if self.latest is not None and t > self.latest:
            for one in self.each:
                one._arrive(t)
            self.ready += [one._taken() for one in self.each]
        if self.latest is None or t > self.latest:
            self.latest = t

    def push(self, event: Event) -> None:
        self._arrive(event.t)
        for one in self.each:
            one.reasoner.push(event)

    def push_block(self, block: FactBatch) -> None:
        self._arrive(block.t)
        for one in self.each:  # each its own list: the log keeps and changes it
            one.reasoner.push_facts(block.t, list(block.facts), block.locs)

    def _ready(self, more: list[LarsAnswers]) -> LarsAnswers:
        batches, self.ready = self.ready + more, []
        return LarsAnswers(b"".join([b.data for b in batches]), sum(b.line_count for b in batches),
                           sum(b.corrections for b in batches))

    def advance(self, until: Time) -> LarsAnswers:
        for one in self.each:
            one.reasoner.advance(int(until))  # (its lines go with the next arrival's)
        return self._ready([])

    def finish(self, until: Time | None = None) -> LarsAnswers:
        return self._ready([one.finish(until) for one in self.each])

    def pending(self) -> LarsAnswers:
        return self._ready([])

    @property
    def unmatched_retractions(self) -> int:
        return self.first.unmatched_retractions

    @property
    def delayed(self) -> int:
        return self.first.delayed

    @property
    def too_late(self) -> int:
        return self.first.too_late

    @property
    def time_points(self) -> int:
        return self.first.time_points

    def export_state(self) -> dict[str, Any]:
        return versioned({"dialect": self.dialect, "models": [one.export_state() for one in self.each]})

    def import_state(self, data: dict[str, Any]) -> None:
        check_state_header(data, self.dialect)
        with reading("LARS evaluator state"):
            for one, state in zip(self.each, data["models"], strict=True):
                one.import_state(state)
