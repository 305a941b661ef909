"""``chronolog explain``: why an answer holds, why not, and why it changed.

``--changes ATOM@T`` (``changes``): the answer lines ``chronolog run`` writes (with the same
options) that cover ATOM at T, in order, each with the input events whose arrival caused
it — a time advance for a provisional ``[s,inf)`` opening or its closing, the late events
and retractions for a correction (several when they were applied together).  It drives the
one embedded loop (``run_evaluator``) with the evaluator wrapped in a ``Recorder``, so the
lines are exactly ``run``'s.
"""

from __future__ import annotations

import io
import re
from collections.abc import Callable, Iterable, Iterator
from fractions import Fraction
from functools import partial
from typing import Any

import msgspec

from chronolog.contract import no_answer_set
from chronolog.core import intervals as I
from chronolog.core.errors import ChronologError
from chronolog.core.events import Event
from chronolog.core.explanation import Node, mark_late, missing_text
from chronolog.core.reach import warm_up, widest
from chronolog.core.records import record
from chronolog.core.relevance import EventFilter
from chronolog.core.source import Loc
from chronolog.evaluator import Changes, Evaluator, Time, atom_text, resumes_mid_stream, time_text
from chronolog.runtime.consistency import keep_consistent
from chronolog.runtime.embedded import run_evaluator
from chronolog.runtime.upgrade import program_versions
from chronolog.stages.upgrading import switch_to
from chronolog.versions import UPGRADE_KEY, UpgradeRequest, parse_time

_decode = msgspec.json.Decoder().decode
_UNTOLD = object()  # an evaluator that does not tell how far it has evaluated


@record(frozen=True)
class Query:
    """ATOM@T: the answer atom as the answer stream writes it (pred, args) and the time."""

    pred: str
    args: tuple
    t: Time
    text: str  # as the user wrote it

    def covers(self, line: dict) -> bool:
        """Whether an answer line is about this atom at this time."""
        if line.get("pred") != self.pred or tuple(line.get("args", ())) != self.args:
            return False
        return I.contains(I.of_line(line), self.t)

    def holds(self, lines: Iterable[dict]) -> bool:
        """Whether answer lines (their diffs summed, as the answer stream means) hold the atom at T."""
        return sum(line.get("diff", 1) for line in lines if self.covers(line)) == 1


_TERM = r'"(?:[^"\\]|\\.)*"|[^,()"=]+'
_ATOM = re.compile(rf"^\s*([A-Za-z_][\w]*)\s*(?:\((.*)\))?\s*(?:=\s*({_TERM}))?\s*@\s*([0-9/.\-]+)\s*$")


def parse_query(text: str, integral: bool) -> Query:
    """``slow(a1)@5``, ``Alarm(s1)@7/2``, RTEC's ``status(3)=voting@10`` (``=true`` may be
    left out): constants as in the program — numbers plain, other constants as identifiers
    or quoted.  An RTEC value other than ``true`` becomes the last argument (data README)."""
    m = _ATOM.match(text)
    if m is None:
        raise ChronologError(f"error: {text!r} is not a query: write ATOM@T, e.g. q(a)@5 or status(3)=voting@10")
    name, inner, value, when = m.groups()
    args = [] if not inner or not inner.strip() else [_constant(a) for a in _split(inner, text)]
    if value is not None and value.strip() != "true":
        args.append(_constant(value))
    try:
        t = Fraction(when)
    except (ValueError, ZeroDivisionError):
        raise ChronologError(f"error: {text!r}: {when!r} is not a time") from None
    if integral and t.denominator != 1:
        raise ChronologError(f"error: {text!r}: the time {when} is not an integer (this dialect's time points are)")
    return Query(name, tuple(args), t.numerator if t.denominator == 1 else t, text.strip())


def _split(inner: str, text: str) -> list[str]:
    parts = re.findall(rf"\s*({_TERM})\s*(?:,|$)", inner)
    if ",".join(p.strip() for p in parts).replace(" ", "") != inner.replace(" ", ""):
        raise ChronologError(f"error: {text!r}: cannot read the arguments {inner!r} (nested terms are not queries)")
    return parts


def _constant(text: str) -> Any:
    text = text.strip()
    if text.startswith('"'):
        return str(msgspec.json.decode(text.encode()))
    try:
        return int(text)
    except ValueError:
        return text


@record
class Change:
    """One answer line covering the queried atom: its number among ``run``'s answer lines, the
    line, why it was written (``advance``: time reached ``until``, the line about that time or,
    dated back by the evaluation, an earlier one; ``correction``: late events or retractions
    change a time already evaluated; ``end``: the end of the input) and the input events
    whose arrival caused it."""

    number: int
    line: dict
    why: str
    until: Time | None
    causes: list[Event]
    note: str = ""  # an upgrade: which program version from when, and where its request was read


def _start(line: dict) -> Any:
    """The first time an answer line is about."""
    return I.of_line(line)[0]


class Recorder:
    """An ``Evaluator`` as ``run`` drives it, noting for every answer line that covers the
    query the events pushed since the previous batch."""

    def __init__(self, inner: Evaluator, query: Query, mark: bool = False) -> None:
        self.inner = inner
        self.query = query
        self.mark = mark  # run's --mark-no-answer-set: its no_answer_set lines are among the lines numbered
        self.since: list[Event] = []
        self.evaluated: Time | None = None  # the latest time whose answers are written
        self.applied: Time | None = None  # the latest time whose events are evaluated (RTEC: a tick before)
        self.lines = 0
        self.changes: list[Change] = []

    def push(self, event: Event) -> None:
        self.since.append(event)
        self.inner.push(event)

    def push_block(self, block: Any) -> None:
        self.since.extend(block.unpacked())
        self.inner.push_block(block)

    def _note(self, batch: Any, until: Time | None, end: bool = False, prior: Any = None) -> Any:
        reached = self._reached()
        if reached is not _UNTOLD and reached == prior and not batch.line_count:
            return batch  # it evaluated nothing (RTEC waits for a window's step): the events wait too
        before, applied = self.evaluated, self.applied
        now_applied, now = (until, until) if reached is _UNTOLD or reached is None else reached
        if batch.line_count:
            late = [e for e in self.since if applied is not None and (e.t <= applied or e.retract)]
            fresh = [e for e in self.since if applied is None or (e.t > applied and not e.retract)]
            # those whose time it evaluated; else (RTEC's first window: an entity's later event
            # grounds its fluents from the start) all it was given
            fresh = [e for e in fresh if now_applied is None or e.t <= now_applied] or fresh
            for raw in batch.lines().splitlines():
                if not self.mark and no_answer_set.is_line(raw):
                    continue  # (not among the lines run writes)
                self.lines += 1
                line = _decode(raw)
                if not self.query.covers(line):
                    continue
                # (a line about a time already evaluated that no late event caused: the newest
                # evaluation dates it back, as a LARS @-head does: written as time advanced)
                if before is not None and _start(line) <= before and (late or not fresh):
                    self.changes.append(Change(self.lines, line, "correction", until, late))
                elif end:
                    self.changes.append(Change(self.lines, line, "end", until, fresh))
                else:
                    self.changes.append(Change(self.lines, line, "advance", until, fresh))
        if now is not None and (self.evaluated is None or now > self.evaluated):
            self.evaluated, self.applied = now, now_applied
        # events after the time whose events it applied are evaluated again in the next window
        # (RTEC's: they ground their entities now, their time's effects then)
        self.since = [e for e in self.since if now_applied is not None and e.t > now_applied and not e.retract]
        return batch

    def _reached(self) -> Any:
        """How far the evaluator has evaluated, where it tells (``evaluated_to``: the latest
        time whose events it applied and the latest whose answers it wrote, for an evaluator
        that evaluates only every so often, as RTEC's windows); else ``_UNTOLD``: both up to
        each ``advance``'s time."""
        return getattr(self.inner, "evaluated_to", _UNTOLD)

    def advance(self, until: Time) -> Any:
        prior = self._reached()
        return self._note(self.inner.advance(until), until, prior=prior)

    def restated(self, lines: list[bytes], note: str) -> None:
        """Lines a program upgrade wrote (``versions.switch``): taken back from T on, and the
        new program's from T on."""
        for raw in lines:
            if not self.mark and no_answer_set.is_line(raw):
                continue
            self.lines += 1
            line = _decode(raw)
            if self.query.covers(line):
                self.changes.append(Change(self.lines, line, "upgrade", self.evaluated, [], note))

    def finish(self, until: Time | None = None) -> Any:
        prior = self._reached()
        return self._note(self.inner.finish(until), until, end=True, prior=prior)

    def pending(self) -> Any:
        prior = self._reached()
        return self._note(self.inner.pending(), None, prior=prior)

    def __getattr__(self, name: str) -> Any:
        return getattr(self.inner, name)


def changes(evaluator: Evaluator, events: Iterable[Event], query: Query, until: Time | None = None,
            mark: bool = False) -> list[Change]:
    """The answer lines ``run`` writes that cover the query, with their causes (``mark``: run's
    ``--mark-no-answer-set``, whose no_answer_set lines count in the numbering)."""
    recorder = Recorder(evaluator, query, mark)
    run_evaluator(recorder, events, io.StringIO(), until=until, warn=lambda m: None, mark=True)  # type: ignore[arg-type]
    return recorder.changes


def event_text(ev: Event) -> str:
    """An input event as a person reads it, with where it came from."""
    where = f" ({ev.loc})" if ev.loc is not None else ""
    if ev.pred is None:
        return f"the time advance to {time_text(ev.t)}{where}"
    when = I.text(I.of_span(ev.span)) if ev.span is not None else time_text(ev.t)
    args = ",".join(str(a) for a in ev.args)
    what = "retraction of" if ev.retract else "event"
    return f"{what} {ev.pred}({args}) at {when}{where}"


SHOWN = 12  # the causes the text lists of one line (a window of RTEC's evaluates many events at once)


def render_text(query: Query, found: list[Change]) -> str:
    head = f"{query.text}: "
    if not found:
        return head + "no answer line covers it\n"
    lines = "1 answer line covers" if len(found) == 1 else f"{len(found)} answer lines cover"
    out = [head + f"{lines} it, in the order run writes them"]
    for k, change in enumerate(found, 1):
        out.append(f"  {k}. answer line {change.number}: {msgspec.json.encode(change.line).decode()}")
        if change.why == "upgrade":
            out.append(f"     written by {change.note}")
            continue
        if change.why == "correction":
            out.append("     a correction of a time already evaluated, caused by:")
        elif change.why == "end":
            out.append("     written at the end of the input" + (f" (evaluated up to {time_text(change.until)})"
                                                                  if change.until is not None else "") + ", after:")
        elif change.until is not None and change.line.get("t", change.until) < change.until:  # a point dated back
            out.append(f"     written when time reached {time_text(change.until)} (a later time arrived; its "
                       f"evaluation dates the atom back to {time_text(change.line['t'])}), after:")
        else:
            out.append(f"     written when time reached {time_text(change.until)} (a later time arrived), after:"
                       if change.until is not None else "     written after:")
        shown = [f"       {event_text(ev)}" for ev in change.causes[:SHOWN]]
        if len(change.causes) > SHOWN:
            shown.append(f"       ... and {len(change.causes) - SHOWN} more input events (--as json lists them all)")
        out += shown or ["       (no input event: time alone)"]
    return "\n".join(out) + "\n"


def render_json(query: Query, found: list[Change]) -> str:
    rows = [{"line": c.number, "answer": c.line, "kind": c.why, "until": None if c.until is None else time_text(c.until),
             **({"upgrade": c.note} if c.note else {}),
             "causes": [{"t": time_text(e.t), "pred": e.pred, "args": list(e.args), "retract": e.retract,
                         "where": None if e.loc is None else str(e.loc)} for e in c.causes]} for c in found]
    return msgspec.json.encode({"query": query.text, "changes": rows}).decode() + "\n"


def with_lines(read: Any, program: Any, path: str, stream: Iterable[str], fmt: str, on_error: str,
               report: Any) -> Iterator[Event]:
    """The input's events, each with its file and line (the readers leave ``loc`` out of
    events that are not delayed, for speed; an explanation names them all)."""
    for n, line in enumerate(stream, 1):
        if not line.strip():
            continue
        for ev in read(program, [line], path, fmt, on_error, report):
            yield Event(ev.t, ev.pred, ev.args, ev.retract, Loc(path, n, 1), ev.span)


class Offset(Loc):
    """Where a record of a topic came from: ``chronolog.facts[0] offset 12``."""

    __slots__ = ()

    def __str__(self) -> str:
        return f"{self.file} offset {self.line}"


def topic_events(records: Iterable[tuple[str, int, int, bytes, float]],
                 read: Callable[[str, str], Iterator[Event]]) -> Iterator[Event]:
    """The input events of a topic's records, each named by its topic, partition and offset
    (upgrade requests left out)."""
    for topic, partition, offset, value, _ in records:
        if value.startswith(UPGRADE_KEY):
            continue
        where = Offset(f"{topic}[{partition}]", offset, 1)
        for ev in read(value.decode("utf-8", errors="replace"), str(where)):
            yield Event(ev.t, ev.pred, ev.args, ev.retract, where, ev.span)


def applied_upgrade(value: bytes, outcomes: dict[str, dict], applied: set[str]) -> tuple[UpgradeRequest, dict] | None:
    """The upgrade request an input topic's record holds and its outcome (the control topic's),
    where the fleet applied it and it is not in ``applied`` yet (then added: a request is on
    every input partition, applied once); None for other records, refused requests and
    malformed ones (which the fleet refused too)."""
    if not value.startswith(UPGRADE_KEY):
        return None
    try:
        request = UpgradeRequest.decode(value)
    except ValueError:
        return None
    outcome = outcomes.get(request.id)
    if outcome is None or "refused" in outcome or request.id in applied:
        return None
    applied.add(request.id)
    return request, outcome


def fleet_changes(records: Iterable[tuple[str, int, int, bytes, float]], read: Callable[[str, str], Iterator[Event]],
                  upgrader: Any, outcomes: dict[str, dict], query: Query, mark: bool = False) -> list[Change]:
    """The answer lines a fleet service (``EvaluatorStage``) writes about the query, read again
    from its input topic's records: each event with its topic, partition and offset, each
    applied program upgrade (its request on the topic, its T from the control topic's
    ``outcomes``) restating from its T on, the input idle at the end (no end of input)."""
    recorder = Recorder(upgrader.make(None), query, mark)
    applied: set[str] = set()
    latest: Time | None = None
    for topic, partition, offset, value, _ in records:
        where = Offset(f"{topic}[{partition}]", offset, 1)
        if value.startswith(UPGRADE_KEY):
            got = applied_upgrade(value, outcomes, applied)
            if got is None:
                continue
            request, outcome = got
            at = None if outcome.get("at") is None else parse_time(outcome["at"], upgrader.integral, "upgrade")
            recorder.inner, lines = switch_to(upgrader, recorder.inner, request, at, recorder.evaluated)
            if at is not None:
                recorder.restated(lines, f"the upgrade to program version {request.version} from T={time_text(at)} "
                                         f"(its request: {where})")
            continue
        for ev in read(value.decode("utf-8", errors="replace"), str(where)):
            if latest is not None and ev.t > latest:
                recorder.advance(latest)
            if latest is None or ev.t > latest:
                latest = ev.t
            recorder.push(Event(ev.t, ev.pred, ev.args, ev.retract, where, ev.span))
    if latest is not None:
        recorder.advance(latest)  # the input idle: the latest time evaluated too
    return recorder.changes


class NotSo(ChronologError):
    """``--why`` of an atom that does not hold (or ``--why-not`` of one that does): exit 1."""


Programs = list[tuple[Time | None, Any, Callable[[], Evaluator]]]  # (from T or None, program, its evaluator's maker)


def in_force(row: Any, programs: list[tuple[Time | None, Any]], t: Time,
             make: Callable[[Any], Evaluator]) -> tuple[Any, Callable[[], Evaluator], Programs]:
    """What an explanation at ``t`` reads of a program and its upgrades (``programs``: the
    first one, then each new version from its T on, times increasing; ``make``: a version's
    evaluator with ``run``'s options): the program it explains with, a maker of the evaluator
    whose answers it explains, and the versions the dialect explains with.  Where no version
    dates atoms back (``Dialect.dates_back``), the version in force at ``t`` alone: its
    answers at ``t`` are the upgraded run's (contract section 6), and no versions.  Where one
    does (LARS's ``@``-heads), an answer at ``t`` may come from a later point's evaluation
    under a later version (the version is chosen by the point evaluated): the answers are
    ``run --upgrade``'s (``program_versions``), and every version is handed to the dialect,
    which explains each evaluation with the version in force there."""
    if len(programs) > 1 and any(row.dates_back(p) for _, p in programs):
        chain = [programs[0][1]] + [p for at, p in programs[1:] if at is not None]
        times = [at for at, _ in programs[1:] if at is not None]
        every: Programs = [(at, p, partial(make, p)) for at, p in zip([None, *times], chain, strict=True)]
        return chain[0], lambda: program_versions(chain, [make(p) for p in chain], times), every
    chosen = programs[0][1]
    for at, p in programs[1:]:
        if at is None or at <= t:
            chosen = p
    return chosen, lambda: make(chosen), []


def explain(row: Any, program: Any, evaluator: Evaluator, events: Iterable[Event], query: Query, mode: str,
            every: bool = False, depth: int | None = None, fresh: Callable[[], Evaluator] | None = None,
            versions: Programs | None = None) -> Node:
    """``--why`` / ``--why-not`` of the query: the answers as ``run`` writes them on the input
    the explanation needs (``reaching``), then the dialect's explanation against them.  A
    why-not entry names a missing input event only where ``fresh`` (a new evaluator with
    ``run``'s options) re-derives the atom with that event added (``confirm_missing``).
    ``versions`` (``in_force``'s): every program version that ``evaluator`` follows, as ``run
    --upgrade``; the dialect is given each with its own answers on the same input (contract
    section 6: a version's answers are its answers on the whole stream)."""
    if row.explain is None:
        raise ChronologError(f"error: --{mode} is not built for {row.title} programs yet; --changes is")
    events = list(events)
    versions = versions or []
    reached = reaching(row, [program, *(p for _, p, _ in versions)], events, query.t)

    def cut(stream: list[Event], atom: tuple[str, tuple]) -> list[Event]:
        return sliced(row, program, stream, atom, evaluator)

    seen = cut(reached, (query.pred, query.args))
    if row.narrow is not None:  # (the answers of other atoms are not all written then: not read)
        row.narrow(program)((query.pred, query.args), evaluator)
    lines = _answers(evaluator, seen)
    holds = query.holds(lines)
    if mode == "why" and not holds:
        raise NotSo(f"{query.text}: {atom_text(query.pred, query.args)} does not hold at {time_text(query.t)} (ask --why-not)")
    if mode == "why-not" and holds:
        raise NotSo(f"{query.text}: {atom_text(query.pred, query.args)} holds at {time_text(query.t)} (ask --why)")
    # (the evaluator, having evaluated ``seen``, is the dialect's to read: RTEC solves rules on its store)
    more = {"versions": [(at, p, _answers(make(), seen)) for at, p, make in versions]} if versions else {}
    node: Node = row.explain(program)(seen, lines, (query.pred, query.args), query.t, mode, every, depth,
                                      evaluator=evaluator, **more)
    if mode == "why" and fresh is not None and depth is None and row.dates_back(program):
        keep_consistent(node, reached, query, fresh, _answers)
    programs = [program, *(p for _, p, _ in versions)]
    confirm_missing(node, reached, query, fresh, None if seen is reached else cut,
                    lambda t: reaching(row, programs, events, t), anytime=not row.discrete)
    mark_late([node], {str(ev.loc) for ev in late_events(events) if ev.loc is not None})
    return node


def _answers(evaluator: Evaluator, events: list[Event], query: Query | None = None) -> list[dict]:
    """The answer lines ``run`` writes with ``evaluator`` on ``events`` (with ``query``:
    evaluated to at least its time, ``_until``)."""
    out = io.StringIO()
    until = _until(events, query) if query is not None and events else None
    run_evaluator(evaluator, events, out, until=until, warn=lambda m: None, mark=True)
    return [_decode(raw) for raw in out.getvalue().splitlines()]


def late_events(events: Iterable[Event]) -> Iterator[Event]:
    """The events that arrived late (CONTRACT section 2): a fact or a retraction whose time
    lies before the latest time already seen, in arrival order (time advances included)."""
    latest: Time | None = None
    for ev in events:
        if latest is not None and ev.t < latest:
            if ev.is_fact:  # (a time advance to an earlier time is no event)
                yield ev
        elif latest is None or ev.t > latest:
            latest = ev.t

MISSING_TRIES = 6  # candidate events evaluated per why-not entry
MISSING_BUDGET = 16  # ... and per query: each is an evaluation of the input from the candidate's place on


def confirm_missing(node: Node, events: list[Event], query: Query, fresh: Callable[[], Evaluator] | None,
                    cut: Callable[[list[Event], tuple[str, tuple]], list[Event]] | None = None,
                    input_at: Callable[[Time], list[Event]] | None = None, anytime: bool = False) -> None:
    """Name the missing input event of each why-not entry the dialect proposed one for, where
    it is true: the input with the candidate added at its time (after the events of that time,
    so not late), evaluated to T by a new evaluator, derives the entry's atom at its time — the
    query's for a top-level entry, the one its ``goal`` names for a nested one (a negated
    literal's, a failing literal's below; a nested entry without a goal names none) — or, for
    a blocking entry (``Node.blocks``: a negated metric literal's), no longer holds it.
    ``events`` is the input the explanation evaluated, whose answers at T are exact
    (``reaching``) — at every time where ``anytime`` (an interval dialect evaluates all of
    it).  Otherwise a goal at another time is checked on ``input_at`` its time (None: such
    goals name none), and only where its atom does not hold there already.  A goal that names
    the point whose evaluation must derive it (a LARS ``@``-head's atom, dated back:
    ``_by_evaluation``) is checked there.  ``cut``: of the input with the candidate, the
    events that can matter to that atom, as ``sliced``; it is placed among all of them, as a
    dropped late event decides whether it arrives late.  An unconfirmed candidate is dropped
    (windows, negations a new event blocks, tuple windows it shifts): the entry then names
    none.  The input before the candidates' places is evaluated once (``Prefixes``), each
    candidate from its place on.  One budget of checks serves the whole tree, shared round by
    round: each entry's first candidate (top-level entries first, then the nested ones
    breadth-first), then each unnamed entry's second, and so on — so an entry deep in the tree
    is tried even where the entries above it propose many events that fail."""
    asked = [(entry, goal if goal is None or by is None and (goal.t == query.t or anytime) or input_at is not None
              else None, by) for entry, goal, by in _asked(node, query)]
    if fresh is None:
        for entry, _, _ in asked:
            entry.candidates = []
        return
    tried = [ev for entry, goal, by in asked if goal is not None and by is None and (goal.t == query.t or anytime)
             for ev in entry.candidates[:MISSING_TRIES]]
    # a sliced input is short: each candidate evaluates its slice whole (the candidate placed
    # among all events first, as a dropped late event decides whether it arrives late)
    prefixes = Prefixes(fresh, events, {place(events, ev) for ev in tried}) if cut is None else None
    inputs: dict[Time, list[Event]] = {query.t: events}
    answered: dict[Time, list[dict]] = {}  # the answers of a goal's own input, without a candidate
    queue: list[tuple[Node, Query, Time | None, list[Event]]] = []
    for entry, goal, by in asked:
        candidates, entry.candidates = entry.candidates, []
        if goal is not None and candidates:
            queue.append((entry, goal, by, candidates[:MISSING_TRIES]))
    # round by round, each entry's next candidate (top-level entries first, then the nested
    # ones breadth-first): every entry gets its first try before any its second, within one budget
    budget = MISSING_BUDGET
    while queue and budget > 0:
        later = []
        for entry, goal, by, candidates in queue:
            if budget <= 0:
                break
            if goal.t not in inputs:
                inputs[goal.t] = events if anytime or input_at is None else input_at(goal.t)
            stream = inputs[goal.t]
            if stream is not events and by is None and not entry.blocks:
                # (an atom that holds there already: a candidate's check would say nothing)
                if goal.t not in answered:
                    answered[goal.t] = _answers(fresh(), stream, goal)
                if goal.holds(answered[goal.t]):
                    continue
            ev, rest = candidates[0], candidates[1:]
            budget -= 1
            if by is not None:
                found = _by_evaluation(fresh, stream, ev, goal, by)
            elif prefixes is not None and stream is events:
                found = prefixes.derives_with(ev, goal)
            else:
                found = derives_with(fresh(), stream, ev, goal, None if cut is None else partial(_cut_for, cut, goal))
            if found != entry.blocks:  # (a blocking entry's event must end the goal's holding)
                entry.missing = ev
                aimed = atom_text(goal.pred, goal.args)
                entry.text += (f"; adding {missing_text(ev)} would make it hold, and "
                               f"{aimed} not hold at {time_text(goal.t)}" if entry.blocks
                               # (an entry about another atom, an input fluent's: what that one derives)
                               else f"; adding {missing_text(ev)} would make it hold, and {aimed} hold at "
                                    f"{time_text(goal.t)}" if entry.atom and entry.atom != aimed
                               else f"; adding {missing_text(ev)} would derive it")
            elif rest:
                later.append((entry, goal, by, rest))
        queue = later


def _cut_for(cut: Callable[[list[Event], tuple[str, tuple]], list[Event]], goal: Query,
             stream: list[Event]) -> list[Event]:
    """Of ``stream``, the events that can matter to the goal's atom (``cut``'s)."""
    return cut(stream, (goal.pred, goal.args))


def _by_evaluation(fresh: Callable[[], Evaluator], events: list[Event], ev: Event, goal: Query, at: Time) -> bool:
    """Whether, with ``ev`` added, the evaluation of the point ``at`` derives the goal's atom
    (a discrete dialect, each point evaluated on the input up to it): the answers of the input
    up to ``at`` hold it and those of the input up to the point before do not (the
    evaluations before ``at`` are the same in both; those after it are in neither)."""
    stream = with_event(events, ev)

    def holds_upto(t: Time) -> bool:
        part = [e for e in stream if e.t <= t]
        return bool(part) and goal.holds(_answers(fresh(), [*part, Event(t)], goal))

    return holds_upto(at) and not holds_upto(at - 1)


def _asked(root: Node, query: Query) -> list[tuple[Node, Query | None, Time | None]]:
    """Every why-not entry of the tree, breadth-first, with the atom at a time its missing
    event must derive (None: none is named) — the query for a top-level entry, its ``goal``
    for a nested one — and the point whose evaluation must derive it, where the goal names one."""
    out: list[tuple[Node, Query | None, Time | None]] = []
    level: list[tuple[Node, bool]] = [(root, True)]
    while level:
        below: list[tuple[Node, bool]] = []
        for node, top in level:
            for entry in node.entries:
                goal = entry.goal
                if top and goal is None:
                    out.append((entry, query, None))
                elif goal is None:
                    out.append((entry, None, None))
                else:
                    pred, args, t = goal[:3]
                    out.append((entry, Query(pred, tuple(args), t, f"{atom_text(pred, args)}@{t}"),
                                goal[3] if len(goal) > 3 else None))
                below.append((entry, False))
            below += [(child, False) for child in node.children]
        level = below
    return out


def place(events: list[Event], ev: Event) -> int:
    """Where ``ev`` joins the input: right after the last event of a time up to its own (in a
    time-ordered input: in time order; no retraction of its time comes after it)."""
    return max((i + 1 for i, e in enumerate(events) if e.t <= ev.t), default=0)


def with_event(events: list[Event], ev: Event) -> list[Event]:
    """The input with ``ev`` at its ``place``."""
    at = place(events, ev)
    return [*events[:at], ev, *events[at:]]


def derives_with(evaluator: Evaluator, events: list[Event], ev: Event, query: Query,
                 cut: Callable[[list[Event]], list[Event]] | None = None) -> bool:
    """Whether the input plus ``ev`` (of that, ``cut``'s part), evaluated to at least T, holds
    the queried atom at T."""
    return query.holds(answers_with(evaluator, events, ev, query, cut))


def answers_with(evaluator: Evaluator, events: list[Event], ev: Event, query: Query,
                 cut: Callable[[list[Event]], list[Event]] | None = None) -> list[dict]:
    """The answer lines of the input plus ``ev`` (of that, ``cut``'s part), evaluated to at least T."""
    stream = with_event(events, ev)
    return _answers(evaluator, stream if cut is None else cut(stream), query)


def _until(stream: list[Event], query: Query) -> Time | None:
    """A time advance to T where the input ends before it (its answers at T then written)."""
    return None if max(e.t for e in stream) >= query.t else query.t


class Prefixes:
    """``derives_with`` for several candidate events, the input before each candidate's place
    evaluated once: one evaluator is driven over the input as ``run_evaluator`` drives it and,
    at each place, its state is kept (``export_state``, after taking the answers it has
    evaluated, ``pending``) with the lines written so far; a candidate's run is a new evaluator
    given that state (``import_state``) fed the candidate and the rest.  The lines of the two
    parts are those of one run, only some written earlier, so the sum is the same.  Where an
    evaluator cannot resume mid-stream (``Evaluator.resumes_mid_stream`` False), each candidate
    evaluates the whole input again; an evaluator that says it can and fails is an error."""

    def __init__(self, fresh: Callable[[], Evaluator], events: list[Event], places: set[int]) -> None:
        self.fresh, self.events = fresh, events
        self.kept: dict[int, tuple[list[bytes], dict[str, Any], Time | None]] = {}
        if not places or not events:
            return
        self._inner, self._places, self._pushed = fresh(), places, 0
        if not resumes_mid_stream(self._inner):
            return  # its state cannot be kept mid-stream (LarsModels, RTEC's windows): each candidate from the start
        self._latest: Time | None = None
        self._lines: list[bytes] = []
        run_evaluator(self, events[:max(places)], io.StringIO(), warn=lambda m: None, mark=True)  # type: ignore[arg-type]

    def derives_with(self, ev: Event, query: Query) -> bool:
        return query.holds(self.answers_with(ev, query))

    def answers_with(self, ev: Event, query: Query) -> list[dict]:
        """``answers_with`` of a new evaluator: the same lines, some taken earlier."""
        at = place(self.events, ev)
        if at not in self.kept:
            return answers_with(self.fresh(), self.events, ev, query)
        lines, state, latest = self.kept[at]
        evaluator = self.fresh()
        evaluator.import_state(state)
        out = io.StringIO()
        rest = [ev, *self.events[at:]]
        run_evaluator(evaluator, rest, out, until=_until([*self.events, ev], query), warn=lambda m: None, mark=True,
                      latest=latest)
        return [_decode(raw) for raw in [*lines, *out.getvalue().encode().splitlines()]]

    # -- the evaluator ``run_evaluator`` drives over the input before the last place --------
    def _keep(self) -> bool:
        """At a place (before anything the next event causes): keep the state; whether the
        input up to the last place is done."""
        if self._pushed in self._places and self._pushed not in self.kept:
            self._take(self._inner.pending())
            self.kept[self._pushed] = (list(self._lines), self._inner.export_state(), self._latest)
        return self._pushed >= max(self._places)

    def _take(self, batch: Any) -> Any:
        if batch.line_count:
            self._lines.extend(batch.lines().splitlines())
        return Changes()

    def push(self, event: Event) -> None:
        if self._keep():
            return
        self._pushed += 1
        if self._latest is None or event.t > self._latest:
            self._latest = event.t
        self._inner.push(event)

    def push_block(self, block: Any) -> None:
        for event in block.unpacked():
            self.push(event)

    def advance(self, until: Time) -> Any:
        return Changes() if self._keep() else self._take(self._inner.advance(until))

    def finish(self, until: Time | None = None) -> Any:
        return Changes() if self._keep() else self._take(self._inner.finish(until))

    def pending(self) -> Any:
        return self._take(self._inner.pending())


def sliced(row: Any, program: Any, events: list[Event], atom: tuple[str, tuple], evaluator: Any) -> list[Event]:
    """The events that can matter to ``atom`` (``Dialect.relevant``: RTEC's meeting(id1,id2)
    reads only id1's and id2's), each other one replaced by a time advance to its time where
    it was the latest so far, unless a kept event of that time comes next in the slice (it
    advances the time as far): the evaluator is driven through the same times as on the whole
    input (RTEC evaluates a window once its step has passed).  One that reaches further than
    all before it (an interval fact's end: how far DatalogMTL's evaluation reaches) or starts
    earlier is kept as it is, so that the input spans the same time."""
    keep = row.relevant(program)(atom, evaluator, events)
    if keep is None:
        return events
    # (every event tested in arrival order, as a feeding event's test depends on those before;
    # the usual one by what the filter said of the same deciding arguments, without a call)
    test, said = (keep.keep, keep.said) if isinstance(keep, EventFilter) else (keep, None)
    said_get = (said if said is not None else {}).get  # (filled in as the test goes)
    out: list[Event] = []
    add = out.append
    latest: Any = None
    first: Any = None
    reach: Any = None  # the furthest time an event so far reaches (inf: an interval without end)
    end: Any
    kept: bool
    # the time of the time advance that ``out`` ends with (None: it ends with an event): a kept
    # event of that time takes its place, as it advances the time as far (caviar's id1/id2
    # slice: 5,000 of its 7,600 advances were followed by a coordinate of their time)
    advanced: Any = None
    for ev in events:  # (a tight loop: every event of the input)
        t = ev.t
        span = ev.span
        pred = ev.pred
        if pred is None or said is None:
            kept = test(ev)
        else:
            args = ev.args
            entry = said_get(pred)
            if entry is None or entry[0] != len(args):
                kept = test(ev)
            else:
                now = entry[2].get(entry[1](args))
                if now is True or now is False:
                    kept = now
                elif now is not None and t > now:
                    kept = False  # (fed already, earlier: as the test says)
                else:
                    kept = test(ev)
        if not kept and t == latest and span is None and t <= reach:
            continue  # (the usual one: not read, at the latest time so far; it changes nothing below)
        if span is None:  # (a point reaches its own time: only an earlier start keeps it)
            end = t
            if kept or (first is not None and t < first and pred is not None):
                if advanced is not None and t == advanced:
                    out[-1] = ev
                else:
                    add(ev)
                advanced = None
            elif latest is None or t > latest:
                add(Event(t))
                advanced = t
        else:
            end = I.of_span(span)[2]
            if kept or (pred is not None and (((reach is None or end > reach) and end != t) or
                                                  (first is not None and t < first))):
                add(ev)
                advanced = None
            elif latest is None or t > latest:
                add(Event(t))
                advanced = t
        if latest is None or t > latest:
            latest = t
        if first is None or t < first:
            first = t
        if reach is None or end > reach:
            reach = end
    return out


def reaching(row: Any, programs: list[Any], events: list[Event], t: Time) -> list[Event]:
    """The input an explanation at ``t`` evaluates.

    A discrete dialect's (LARS's) explanation is about its evaluation at ``t``; where the
    program's reach is bounded (``Dialect.reach``: the answers at ``t`` depend only on input
    in ``[t - back, t + ahead]`` and on the tuple windows' last facts) it needs the input
    from where the backfill's segments warm up to ``t + ahead`` (the ``@``-heads'), with the
    stream's first time kept so that windows are cut where the whole stream's are, and a
    time advance to ``t + ahead``: its time does not grow with the stream.  The others read
    all of it: an interval answer's explanation shows the maximal intervals of the answer
    and its premises, which the input before the warm-up and after ``t`` may both extend,
    and RTEC's reach is unbounded (inertia reaches back to the origin, and an entity's first
    event grounds its statically determined fluents from 0, as caviar's ``close_34``).  So
    does a program whose answers keep earlier choices (``Dialect.keeps_choices``: a LARS
    program that is not stratified), which an evaluation from the warm-up would choose anew.
    ``programs``: the versions evaluated (an upgrade's), their reach the widest of theirs."""
    reach = widest([row.reach(p) for p in programs])
    if not row.discrete or reach is None or not events or any(row.keeps_choices(p) for p in programs):
        return events
    first = last = events[0].t  # (``span_of``'s first and last, for time points: one pass, no intervals)
    for ev in events:
        at = ev.t
        if at > last:
            last = at
        elif at < first and not ev.retract:
            first = at
    if row.origin is not None:
        first = min(first, row.origin)
    counts: dict[Any, int] = {}
    if reach.facts:
        for ev in events:
            if ev.is_fact:
                counts[ev.t] = counts.get(ev.t, 0) + (-1 if ev.retract else 1)
    warm = warm_up(t, reach, lambda x: max(0, counts.get(x, 0)), first)
    until = t + reach.ahead
    kept = [Event(first), *(ev for ev in events if warm <= ev.t <= until)]
    if until < last:
        kept.append(Event(until))
    return kept

