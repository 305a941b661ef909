"""The fleet's services as plain state machines: records in, records out.

Each stage is what one service process runs between Kafka and RocksDB; here
it only maps input records (decoded JSON) to output records, so the whole
pipeline can be tested without a broker and the services stay thin loops
(``runtime/service.py``).  A stage's state is plain data (``export_state``,
``import_state``; the growing parts are ``journals()``), written with the
explicit encoding of ``chronolog.state``.

Records between services:

* ``chronolog.ingested`` (from ingest): an input event as in CONTRACT §2, or
  a time marker ``{"t": T}`` broadcast to every partition whenever the
  stream's latest (or first) time changes.
* ``chronolog.grounded`` (from grounding): ``{"upto": c, "first": t1,
  "points": [[t, [[pred, args, retract], ...]], ...]}`` closes every time
  point up to ``c`` with its facts (the input of those evaluations, as one
  batch), and ``{"late": [[t, pred, args, retract], ...]}`` carries events
  for time points already closed (delayed events, retractions).
* ``chronolog.stratum.k``: ``{"t": t, "t1": t1, "ok": bool, "add": [...],
  "del": [...]}`` — the content of stratum k at evaluation t, as a diff
  against what the receiver already holds for t, or else for t-1.  A replay
  that corrects the past re-sends the points whose content changed.
* ``chronolog.answers`` (from output): answer lines, CONTRACT §3.
"""

from __future__ import annotations

import time
import zlib
from dataclasses import dataclass, field
from typing import Protocol

import orjson

from chronolog.engine.core import ANSWERS, Engine, Imported, StepResult
from chronolog.engine.plan import Plan
from chronolog.evaluator import AnswerChange, Evaluator, interval_line
from chronolog.events import Event, event_json, event_record
from chronolog.runtime.answers import AnswerWriter
from chronolog.runtime.ingest import Accepted, ingest_record
from chronolog.runtime.journal import Journal
from chronolog.runtime.lars_evaluator import LarsEvaluator, LineBuffer, load_writer_state, writer_state
from chronolog.runtime.reasoner import Reasoner
from chronolog.schemas import DeadLetter
from chronolog.state import codec as c
from chronolog.state.codec import items
from chronolog.topology import partition_of

EMPTY: frozenset = frozenset()


def _quiet(message: str) -> None:
    """Default warning sink (module level, so stages stay picklable)."""


@dataclass(slots=True)
class Out:
    """One record to produce: ``topic`` is a role (ingested, dlq, late, grounded,
    stratum, answers) that the service maps to a real topic name.  The payload
    stays a dict until it goes on the wire, so a chained stage reads it without
    a JSON round trip."""

    topic: str
    partition: int
    payload: bytes | dict
    key: bytes | None = None

    @property
    def value(self) -> bytes:
        p = self.payload
        return p if isinstance(p, bytes) else orjson.dumps(p)

    @property
    def record(self) -> dict:
        p = self.payload
        return orjson.loads(p) if isinstance(p, bytes) else p


@dataclass(slots=True)
class Record:
    """One consumed record: ``role`` names its topic as the topology does
    (``facts``, ``ingested``, ``grounded``, ``stratum.k``), ``topic`` is its
    real name (dead letters cite it)."""

    role: str
    topic: str
    partition: int
    offset: int
    value: bytes | None


Emitted = tuple[list[Out], list[bytes]]  # records to produce, answer lines (kept apart: the bulk)
NOTHING: Emitted = ([], [])


class Stage(Protocol):
    """What every service runs: records in, records out, state as data.

    ``process`` takes a batch of consumed records; ``tick`` runs when none
    came (idle flushes).  ``counters`` are running totals the service turns
    into metrics (``dead_letters``, ``late_events``, ``delayed_events``,
    ``corrections``); ``time_point`` is how far the stage has got."""

    def process(self, records: list[Record]) -> Emitted: ...

    def tick(self, now: float | None = None) -> Emitted: ...

    def counters(self) -> dict[str, int]: ...

    def time_point(self) -> int | None: ...

    def journals(self) -> dict[str, Journal]: ...

    def export_state(self) -> dict: ...

    def import_state(self, data: dict, journals: dict) -> None: ...


# ---------------------------------------------------------------- ingest


@dataclass
class IngestStage:
    """Validates, routes by partition key, broadcasts time markers.

    With several input partitions the stream's time is the least of the
    latest times seen on each (producers send time advances to every
    partition), so a marker never runs ahead of a slower input partition.
    """

    partition_key: dict[str, int] | None
    partitions: int
    input_partitions: int = 1
    retention: int | None = None
    latest_by_input: dict[int, int] = field(default_factory=dict)
    first: int | None = None
    now: int | None = None  # time sent to every partition
    dead_letters: int = 0
    too_late: int = 0

    def handle(self, value: bytes | None, topic: str, partition: int, offset: int) -> list[Out]:
        out: list[Out] = []
        ev, key = self.admit(value, topic, partition, offset, out)
        if ev is not None:
            if ev.is_fact:
                out.append(Out("ingested", partition_of(key, self.partitions), event_record(ev),
                               None if key is None else key.encode()))
            for t in self.advance(ev.t, partition):
                out.extend(self._broadcast(t))
        return out

    def process(self, records: list[Record]) -> Emitted:
        out: list[Out] = []
        for r in records:
            out += self.handle(r.value, r.topic, r.partition, r.offset)
        return out, []

    def tick(self, now: float | None = None) -> Emitted:
        return NOTHING

    def counters(self) -> dict[str, int]:
        return {"dead_letters": self.dead_letters, "late_events": self.too_late}

    def time_point(self) -> int | None:
        return self.now

    def admit(self, value: bytes | None, topic: str, partition: int, offset: int,
              out: list[Out]) -> tuple[Event | None, str | None]:
        """A valid event in time and its partition key; else (None, None), with
        a dead letter or a late event appended to ``out``."""
        got = ingest_record(value, topic=topic, partition=partition, offset=offset, partition_key=self.partition_key)
        if got is None:
            return None, None
        if isinstance(got, DeadLetter):
            self.dead_letters += 1
            out.append(Out("dlq", 0, got.model_dump_json().encode()))
            return None, None
        assert isinstance(got, Accepted)
        ev = got.event
        # embedded mode repairs down to (latest evaluated) - N, and the latest
        # evaluated point trails the latest time by one while the stream flows
        if self.retention is not None and self.now is not None and ev.t < self.now - 1 - self.retention:
            self.too_late += 1
            out.append(Out("late", 0, event_json(ev)))
            return None, None
        return ev, got.key

    def advance(self, t: int, partition: int) -> list[int]:
        """The times to announce to every partition after an event at ``t`` on
        input ``partition``: the start of the timeline, and the stream's time."""
        times = []
        prev = self.latest_by_input.get(partition)
        if prev is None or t > prev:
            self.latest_by_input[partition] = t
        if self.first is None or t < self.first:
            self.first = t
            times.append(t)  # the timeline starts (or starts earlier) here
        if len(self.latest_by_input) >= self.input_partitions:
            now = min(self.latest_by_input.values())
            if self.now is None or now > self.now:
                self.now = now
                times.append(now)
        return times

    def _broadcast(self, t: int) -> list[Out]:
        return [Out("ingested", p, {"t": t}) for p in range(self.partitions)]

    def journals(self) -> dict[str, Journal]:
        return {}  # no state that grows with the stream

    def export_state(self) -> dict:
        return {"latest_by_input": items(self.latest_by_input), "first": self.first, "now": self.now,
                "dead_letters": self.dead_letters, "too_late": self.too_late}

    def import_state(self, data: dict, journals: dict | None = None) -> None:
        c.obj(data, "latest_by_input", "first", "now")
        self.latest_by_input = c.pairs(data["latest_by_input"], c.integer, c.integer)
        self.first, self.now = c.opt_integer(data["first"]), c.opt_integer(data["now"])
        self.dead_letters = c.integer(data.get("dead_letters", 0))
        self.too_late = c.integer(data.get("too_late", 0))


# ---------------------------------------------------------------- grounding


@dataclass
class GroundingStage:
    """Closes time points: the facts of a point become one batch once a later
    time arrives, or once input has been idle for ``idle_flush`` seconds."""

    idle_flush: float = 1.0
    first: int | None = None
    latest: int | None = None
    closed: int | None = None
    pending: dict[int, list[list]] = field(default_factory=dict)
    last_input: float = 0.0

    def handle(self, rec: dict, now: float | None = None) -> list[Out]:
        """An ingested record: a fact, or a time marker ``{"t": T}``."""
        return self.add(rec["t"], rec.get("pred"), rec.get("args", []), rec.get("op") == "retract", now)

    def process(self, records: list[Record]) -> Emitted:
        out: list[Out] = []
        for r in records:
            if r.value is not None:
                out += self.handle(orjson.loads(r.value))
        return out + self.idle(), []

    def tick(self, now: float | None = None) -> Emitted:
        return self.idle(now), []

    def counters(self) -> dict[str, int]:
        return {}

    def time_point(self) -> int | None:
        return self.closed

    def add(self, t: int, pred: str | None, args, retract: bool, now: float | None = None) -> list[Out]:  # type: ignore[no-untyped-def]
        self.last_input = time.monotonic() if now is None else now
        item = [pred, args, retract]
        out: list[Out] = []
        if self.first is None:
            self.first = self.latest = t
        if self.closed is not None and t <= self.closed or t < self.first:
            if t < self.first:
                self.first = t
            out.append(Out("grounded", 0, {"late": [[t] + item]}))
            return out
        if pred is not None:
            self.pending.setdefault(t, []).append(item)
        assert self.latest is not None
        if t > self.latest:
            out.extend(self._close(t - 1))
            self.latest = t
        return out

    def idle(self, now: float | None = None) -> list[Out]:
        """Close the latest point when input has been quiet long enough."""
        now = time.monotonic() if now is None else now
        if self.latest is None or (self.closed is not None and self.closed >= self.latest):
            return []
        if now - self.last_input < self.idle_flush:
            return []
        return self._close(self.latest)

    def _close(self, upto: int) -> list[Out]:
        if self.closed is not None and upto <= self.closed:
            return []
        points = sorted((t, facts) for t, facts in self.pending.items() if t <= upto)
        for t, _ in points:
            del self.pending[t]
        self.closed = upto
        return [Out("grounded", 0, {"upto": upto, "first": self.first, "points": points})]

    def journals(self) -> dict[str, Journal]:
        return {}  # no state that grows with the stream

    def export_state(self) -> dict:
        return {"first": self.first, "latest": self.latest, "closed": self.closed,
                "pending": [[t, [[p, a, r] for p, a, r in facts]] for t, facts in self.pending.items()]}

    def import_state(self, data: dict, journals: dict | None = None) -> None:
        c.obj(data, "first", "latest", "closed", "pending")
        self.first, self.latest = c.opt_integer(data["first"]), c.opt_integer(data["latest"])
        self.closed = c.opt_integer(data["closed"])
        self.pending = c.pairs(data["pending"], c.integer, _pending_facts)
        self.last_input = time.monotonic()  # a restart counts as input: no idle flush at once


def _pending_facts(v: object) -> list[list]:
    out = []
    for item in c.array(v):
        pred, args, retract = c.array(item, 3)
        out.append([c.text(pred), c.args(args), c.flag(retract)])
    return out


# ---------------------------------------------------------------- strata


def _encode(atoms: frozenset) -> list:
    """Atoms as ``[key, args]``: key ``[pred, arity]`` or ``["#answers", [pred, arity]]``
    (orjson writes the tuples as arrays)."""
    return [[p, tup] for p, tup in atoms]


def _decode(items: list) -> set:
    out = set()
    for key, args in items:
        if key[0] == ANSWERS:
            out.add(((ANSWERS, tuple(key[1])), tuple(args)))
        else:
            out.add((tuple(key), tuple(args)))
    return out


@dataclass
class StratumStore:
    """One lower stratum's content per evaluation time, rebuilt from its records."""

    content: dict[int, frozenset] = field(default_factory=Journal)
    ok: dict[int, bool] = field(default_factory=Journal)
    upto: int | None = None  # latest time point received

    def apply(self, rec: dict) -> int:
        t = rec["t"]
        base = self.content[t] if t in self.content else self.content.get(t - 1, EMPTY)
        add, drop = rec.get("add"), rec.get("del")
        self.content[t] = (base - _decode(drop) | _decode(add)) if (add or drop) else base
        self.ok[t] = rec.get("ok", True)
        self.upto = t if self.upto is None else max(self.upto, t)
        return t


@dataclass
class StratumSender:
    """Turns a stratum engine's evaluations into ``chronolog.stratum.k`` records."""

    sent: dict[int, frozenset] = field(default_factory=Journal)
    sent_ok: dict[int, bool] = field(default_factory=Journal)
    outbox: list[bytes] = field(default_factory=list)

    def observe(self, t: int, engine: Engine, result: StepResult) -> None:
        content = engine.exported()
        ok = result.consistent
        known = t in self.sent
        base = self.sent[t] if known else self.sent.get(t - 1, EMPTY)
        if known and content == base and self.sent_ok.get(t) == ok:
            return
        if content == base:
            content = base  # share the set: unchanged points cost no memory
        self.sent[t] = content
        self.sent_ok[t] = ok
        rec = {"t": t, "t1": engine.t1, "ok": ok, "add": _encode(content - base), "del": _encode(base - content)}
        self.outbox.append(orjson.dumps(rec))


@dataclass
class _StepSink:
    """Reasoners publish through ``observe``; the answer sink interface is unused."""

    def step(self, result: StepResult, engine: Engine) -> None:
        pass

    def correct(self, changes: list, engine: Engine, upto: int, previous: Engine) -> None:
        pass


def _horizon(retention: int | None) -> int | None:
    """The Reasoner's retention in a stage: ingest already routes events past
    ``retention`` away, so the stage only prunes (one point later)."""
    return None if retention is None else retention + 1


class _ImportingStage:
    """What reasoners and output share: the lower strata's records become the
    reasoner's imports per time point, and time advances to the least of them."""

    lower: dict[int, StratumStore]
    reasoner: Reasoner

    def _take(self, r: Record) -> None:
        """A lower stratum's record (role ``stratum.k``, 1-based ``k``); the reasoner overrides for ``grounded``."""
        if r.value is not None:
            self.on_stratum(int(r.role.rsplit(".", 1)[1]) - 1, orjson.loads(r.value))

    def tick(self, now: float | None = None) -> Emitted:
        return NOTHING  # time moves with the inputs only

    def time_point(self) -> int | None:
        return self.reasoner.evaluated

    def on_stratum(self, j: int, rec: dict) -> None:
        """A ``chronolog.stratum.j`` record (0-based ``j``) from the wire."""
        self.reasoner.push(Event(rec["t1"]))
        t = self.lower[j].apply(rec)
        self.reasoner.set_imported(t, _combine(self.lower, t))

    def journals(self) -> dict[str, Journal]:
        """The growing parts of the state, stored entry by entry (runtime/journal.py)."""
        out = {"log": self.reasoner.log, "imports": self.reasoner.imports}
        for j, store in self.lower.items():
            out[f"lower{j}"] = store.content
            out[f"lower{j}_ok"] = store.ok
        return out  # type: ignore[return-value]

    def _export_lower(self) -> dict:
        return {"reasoner": self.reasoner.export_state(), "upto": [s.upto for s in self.lower.values()]}

    def _import_lower(self, data: dict, journals: dict) -> None:
        """The lower strata's stores and the reasoner (last: it replays on the imports)."""
        c.obj(data, "reasoner", "upto")
        upto = c.array(data["upto"], len(self.lower))
        for (j, store), u in zip(self.lower.items(), upto):
            store.upto = c.opt_integer(u)
            for journal, name in ((store.content, f"lower{j}"), (store.ok, f"lower{j}_ok")):
                journal.clear()
                dict.update(journal, journals.get(name, {}))
        self.reasoner.import_state(data["reasoner"], journals.get("log", {}), journals.get("imports", {}))

    def _advance(self, ends: list[int | None]) -> None:
        if ends and all(e is not None for e in ends):
            self.reasoner.advance(min(ends))  # type: ignore[type-var]
        _forget(self.reasoner.pruned_below, [d for s in self.lower.values() for d in (s.content, s.ok)])


class ReasonerStage(_ImportingStage):
    """Evaluates stratum ``k`` (0-based) of a program on grounded batches and
    the lower strata's records; time advances to the least of its inputs."""

    def __init__(self, plan: Plan, stratum: int, warn=_quiet, retention: int | None = None) -> None:  # type: ignore[no-untyped-def]
        self.stratum = stratum
        self.sender = StratumSender()
        self.lower = {j: StratumStore() for j in range(stratum)}
        self.closed: int | None = None
        self.reasoner = Reasoner(
            plan, _StepSink(), warn=warn, stratum=stratum, auto_advance=False, observe=self.sender.observe,
            retention=_horizon(retention),
        )

    def journals(self) -> dict[str, Journal]:
        return {**super().journals(), "sent": self.sender.sent, "sent_ok": self.sender.sent_ok}  # type: ignore[dict-item]

    def on_grounded(self, rec: dict) -> None:
        self.closed = _feed_grounded(self.reasoner, rec, self.closed)

    def process(self, records: list[Record]) -> Emitted:
        for r in records:
            if r.role == "grounded":
                if r.value is not None:
                    self.on_grounded(orjson.loads(r.value))
            else:
                self._take(r)
        return [Out("stratum", 0, v) for v in self.flush()], []

    def counters(self) -> dict[str, int]:
        return {"delayed_events": self.reasoner.delayed}

    def export_state(self) -> dict:
        return {**self._export_lower(), "closed": self.closed}

    def import_state(self, data: dict, journals: dict) -> None:
        c.obj(data, "closed")
        self.closed = c.opt_integer(data["closed"])
        for journal, name in ((self.sender.sent, "sent"), (self.sender.sent_ok, "sent_ok")):
            journal.clear()
            dict.update(journal, journals.get(name, {}))
        self._import_lower(data, journals)

    def flush(self) -> list[bytes]:
        """Evaluate what all inputs have reached: the records of the points whose content changed."""
        self._advance([self.closed] + [s.upto for s in self.lower.values()])
        _forget(self.reasoner.pruned_below, [self.sender.sent, self.sender.sent_ok])
        out, self.sender.outbox = self.sender.outbox, []
        return out


def _feed_grounded(r: Reasoner | LarsEvaluator, rec: dict, closed: int | None) -> int | None:
    """A ``chronolog.grounded`` record into a reasoner; the time closed since."""
    if "late" in rec:
        for t, pred, args, retract in rec["late"]:
            r.push(Event(t, pred, tuple(args), bool(retract)))
        return closed
    r.push(Event(rec["first"]))
    for t, facts in rec["points"]:
        r.push_batch(t, [(pred, tuple(args), bool(retract)) for pred, args, retract in facts])
    r.push(Event(rec["upto"]))
    return rec["upto"]


def _forget(below: int | None, journals: list) -> None:
    """With ``--retention``: drop per-time-point entries no repair can read any more."""
    if below is None:
        return
    for j in journals:
        for k in [k for k in j if k < below]:
            del j[k]


def _combine(stores: dict[int, StratumStore], t: int) -> Imported:
    content: frozenset = EMPTY
    ok = True
    for s in stores.values():
        content = content | s.content.get(t, EMPTY) if content else s.content.get(t, EMPTY)
        ok = ok and s.ok.get(t, True)
    return Imported(ok, content)


class _Answering:
    """A stage whose reasoner writes answer lines (CONTRACT §3) into a buffer."""

    out: LineBuffer
    writer: AnswerWriter

    def _answer_writer(self, plan: Plan, answers: str) -> AnswerWriter:
        self.out = LineBuffer()
        self.writer = AnswerWriter(self.out, plan, answers)  # type: ignore[arg-type]
        return self.writer

    def _lines(self) -> list[bytes]:
        return self.out.take()


class OutputStage(_Answering, _ImportingStage):
    """Assembles the strata's records into answer lines (CONTRACT §3)."""

    def __init__(self, plan: Plan, strata: int, answers: str = "changelog", warn=_quiet,  # type: ignore[no-untyped-def]
                 retention: int | None = None) -> None:
        self.lower = {j: StratumStore() for j in range(strata)}
        top = max((c.stratum for c in plan.components), default=0) + 1
        self.reasoner = Reasoner(plan, self._answer_writer(plan, answers), warn=warn, stratum=top,
                                 auto_advance=False, retention=_horizon(retention))

    def flush(self) -> list[bytes]:
        self._advance([s.upto for s in self.lower.values()])
        return self._lines()

    def process(self, records: list[Record]) -> Emitted:
        for r in records:
            self._take(r)
        return [], self.flush()

    def counters(self) -> dict[str, int]:
        return {"corrections": self.writer.corrections}

    def export_state(self) -> dict:
        return {**self._export_lower(), "writer": writer_state(self.writer)}

    def import_state(self, data: dict, journals: dict) -> None:
        c.obj(data, "writer")
        load_writer_state(self.writer, data["writer"])
        self._import_lower(data, journals)


class ChainStage:
    """Grounding and the whole program of one partition in one process:
    operator chaining, as Flink chains operators and Kafka Streams runs a
    sub-topology in one task.  The strata are evaluated by one reasoner, as in
    embedded mode (no stratum records to build, send and rebuild), and a batch
    costs one transaction instead of one per hop.  With one partition ingest
    joins the chain too (nothing to repartition).  Per-stratum services remain
    the layout that spreads strata over machines."""

    def __init__(self, plan: Plan, ingest: IngestStage | None = None, idle_flush: float = 1.0,  # type: ignore[no-untyped-def]
                 answers: str = "changelog", warn=_quiet, retention: int | None = None) -> None:
        self.ingest = ingest
        self.grounding = GroundingStage(idle_flush=idle_flush)
        self.closed: int | None = None
        self.evaluator = LarsEvaluator(plan, answers, warn=warn, retention=_horizon(retention))
        self.reasoner = self.evaluator.reasoner
        self.writer = self.evaluator.writer

    def handle(self, value: bytes | None, topic: str, partition: int, offset: int, now: float | None = None) -> list[Out]:
        """One input record: a raw event when ingest is chained, else an ingested
        record.  Returns what leaves the chain early (dead letters, late events)."""
        g = self.grounding
        if self.ingest is None:
            if value is not None:
                self._ground(g.handle(orjson.loads(value), now))
            return []
        leaving: list[Out] = []
        ev, _ = self.ingest.admit(value, topic, partition, offset, leaving)
        if ev is not None:
            if ev.is_fact:
                self._ground(g.add(ev.t, ev.pred, ev.args, ev.retract, now))
            for t in self.ingest.advance(ev.t, partition):
                self._ground(g.add(t, None, [], False, now))
        return leaving

    def process(self, records: list[Record]) -> Emitted:
        leaving: list[Out] = []
        for r in records:
            leaving += self.handle(r.value, r.topic, r.partition, r.offset)
        self.idle()
        return leaving, self.flush()

    def tick(self, now: float | None = None) -> Emitted:
        self.idle(now)
        return [], self.flush()

    def counters(self) -> dict[str, int]:
        ingest = {} if self.ingest is None else self.ingest.counters()
        return {**ingest, "delayed_events": self.reasoner.delayed, "corrections": self.writer.corrections}

    def time_point(self) -> int | None:
        return self.reasoner.evaluated

    def idle(self, now: float | None = None) -> None:
        self._ground(self.grounding.idle(now))

    def _ground(self, outs: list[Out]) -> None:
        for out in outs:
            self.closed = _feed_grounded(self.evaluator, out.record, self.closed)

    def flush(self) -> list[bytes]:
        """Evaluate the closed time points; the answer lines that result."""
        if self.closed is None:
            return []
        return self.evaluator.advance_lines(self.closed)

    def journals(self) -> dict[str, Journal]:
        return {"log": self.reasoner.log, "imports": self.reasoner.imports}  # type: ignore[dict-item]

    def export_state(self) -> dict:
        return {"ingest": None if self.ingest is None else self.ingest.export_state(),
                "grounding": self.grounding.export_state(), "closed": self.closed,
                "reasoner": self.reasoner.export_state(), "writer": writer_state(self.writer)}

    def import_state(self, data: dict, journals: dict) -> None:
        c.obj(data, "ingest", "grounding", "closed", "reasoner", "writer")
        if (data["ingest"] is None) != (self.ingest is None):
            raise c.StateError("state of a chain " + ("without" if data["ingest"] is None else "with") +
                               " ingest, restored into one " + ("with" if data["ingest"] is None else "without"))
        if self.ingest is not None:
            self.ingest.import_state(data["ingest"])
        self.grounding.import_state(data["grounding"])
        self.closed = c.opt_integer(data["closed"])
        load_writer_state(self.writer, data["writer"])
        self.reasoner.import_state(data["reasoner"], journals.get("log", {}), journals.get("imports", {}))


# ---------------------------------------------------------------- any dialect


class EvaluatorStage:
    """Any dialect's ``Evaluator`` (``chronolog.evaluator``) as the fleet's chain
    service of one partition: a dialect without strata runs as one stratum.

    Events reach the evaluator in arrival order; a time is evaluated once a
    later time arrives, or once input has been idle for ``idle_flush`` seconds
    (as ``chronolog run``'s ``run_evaluator`` does, plus the idle flush);
    delayed events and retractions come out of the next ``advance`` as
    corrections.  Its state is the evaluator's ``export_state`` as a whole
    (no journals: each commit stores all of it)."""

    def __init__(self, evaluator: Evaluator, ingest: IngestStage | None = None, idle_flush: float = 1.0) -> None:
        self.evaluator = evaluator
        self.ingest = ingest
        self.idle_flush = idle_flush
        self.latest: int | None = None  # latest time pushed
        self.done: int | None = None  # evaluated up to
        self.dirty = False  # an event for an evaluated time was pushed since
        self.last_input = 0.0

    def _event(self, r: Record, leaving: list[Out]) -> Event | None:
        if self.ingest is not None:
            ev, _ = self.ingest.admit(r.value, r.topic, r.partition, r.offset, leaving)
            if ev is not None:
                self.ingest.advance(ev.t, r.partition)
            return ev
        if r.value is None:
            return None
        rec = orjson.loads(r.value)
        return Event(rec["t"], rec.get("pred"), tuple(rec.get("args", ())), rec.get("op") == "retract")

    def process(self, records: list[Record], now: float | None = None) -> Emitted:
        leaving: list[Out] = []
        changes: list[AnswerChange] = []
        for r in records:
            ev = self._event(r, leaving)
            if ev is None:
                continue
            self.last_input = time.monotonic() if now is None else now
            if self.latest is not None and ev.t > self.latest:
                changes += self._advance(self.latest)
            if self.latest is None or ev.t > self.latest:
                self.latest = ev.t
            if self.done is not None and ev.t <= self.done:
                self.dirty = True
            self.evaluator.push(ev)
        return leaving, [interval_line(*change) for change in changes]

    def _advance(self, until: int) -> list[AnswerChange]:
        self.done, self.dirty = until, False
        return self.evaluator.advance(until)

    def tick(self, now: float | None = None) -> Emitted:
        now = time.monotonic() if now is None else now
        if self.latest is None or now - self.last_input < self.idle_flush:
            return NOTHING
        if self.done is not None and self.done >= self.latest and not self.dirty:
            return NOTHING
        return [], [interval_line(*change) for change in self._advance(self.latest)]

    def counters(self) -> dict[str, int]:
        ingest = {} if self.ingest is None else self.ingest.counters()
        return {**ingest, "delayed_events": getattr(self.evaluator, "delayed", 0)}

    def time_point(self) -> int | None:
        return self.done

    def journals(self) -> dict[str, Journal]:
        return {}

    def export_state(self) -> dict:
        return {"ingest": None if self.ingest is None else self.ingest.export_state(), "latest": self.latest,
                "done": self.done, "dirty": self.dirty, "evaluator": self.evaluator.export_state()}

    def import_state(self, data: dict, journals: dict | None = None) -> None:
        c.obj(data, "ingest", "latest", "done", "evaluator")
        if (data["ingest"] is None) != (self.ingest is None):
            raise c.StateError("state of a chain with and without ingest mixed up")
        if self.ingest is not None:
            self.ingest.import_state(data["ingest"])
        self.latest, self.done = c.opt_integer(data["latest"]), c.opt_integer(data["done"])
        self.dirty = c.flag(data.get("dirty", False))
        self.evaluator.import_state(c.obj(data["evaluator"]))
        self.last_input = time.monotonic()
