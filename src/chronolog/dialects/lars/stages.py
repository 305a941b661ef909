"""LARS's fleet stages: grounding, one reasoner per stratum, output, and the chain of them all.

Each stage is what one service process runs between Kafka and RocksDB
(``chronolog.stages.interface.Stage``); here it only maps input records
(decoded JSON) to output records, so the whole pipeline can be tested
without a broker and the services stay thin loops (``runtime/fleet/service.py``).
A stage's state is explicit data: ``export_state`` gives it as plain values
(its growing parts, the journals, are stored entry by entry, the codecs
registered in ``state.journal`` below) and ``import_state`` continues from it
in any process — nothing is pickled (chronolog.state).  Which of them a
service runs is the program's layout (``dialects/lars/layout.py``).

Records between services:

* ``chronolog.ingested`` (from ingest, ``chronolog.stages.ingest``): an input
  event as in CONTRACT §2, or a time marker ``{"t": T}`` broadcast to every
  partition whenever the stream's latest (or first) time changes; or
  ``{"batch": [...]}``, several of them in order (what one consumed batch
  yields for a partition); or ingest's ``{"idle": true}``.
* ``chronolog.grounded`` (from grounding): ``{"upto": c, "first": t1,
  "points": [[t, [[pred, args, retract], ...]], ...]}`` closes every time
  point up to ``c`` with its facts (the input of those evaluations, as one
  batch; with ``"idle": true``, ``c`` is the latest point, closed because the
  input went quiet: provisionally, ``provisional.py``), and ``{"late": [[t,
  pred, args, retract], ...]}`` carries events for time points already closed
  (delayed events, retractions).
* ``chronolog.stratum.k``: ``{"t": t, "t1": t1, "ok": bool, "add": [...],
  "del": [...]}`` — the content of stratum k at evaluation t, as a diff
  against what the receiver already holds for t, or else for t-1, atoms
  grouped by predicate.  A replay
  that corrects the past re-sends the points whose content changed.
* ``chronolog.answers`` (from output): answer lines, CONTRACT §3.

An upgrade record (``{"upgrade": {...}}``, ``chronolog upgrade``) travels from
``chronolog.facts`` through ingest and grounding to the reasoners, in order with
the facts; the chain takes it from its input (``stages.upgrading``).

Every internal topic also carries epoch barriers ``{"barrier": e}``, written
and consumed by the service loop (``runtime/fleet/epochs.py``); stages never see
them.
"""

from __future__ import annotations

import copy
import dataclasses
import io
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from functools import partial
from typing import Any, ClassVar

import msgspec
import orjson

from chronolog.contract import no_answer_set
from chronolog.core.errors import ChronologError
from chronolog.core.events import Event
from chronolog.dialects.lars.answers import AnswerWriter
from chronolog.dialects.lars.changes import changed_at, per_stratum_refusal, reshaped, stream_keys, unkept
from chronolog.dialects.lars.engine.content import NOTHING, Content, changed, difference, merged
from chronolog.dialects.lars.engine.core import ANSWERS, Engine, Imported, StepResult
from chronolog.dialects.lars.evaluator import LarsEvaluator
from chronolog.dialects.lars.facts import (
    atoms_data,
    atoms_from,
    facts_data,
    facts_from,
    imported_data,
    imported_from,
)
from chronolog.dialects.lars.plan import Component, Plan, plan_back
from chronolog.dialects.lars.pointwise import advance_pointwise
from chronolog.dialects.lars.reasoner import Reasoner, make_engine
from chronolog.dialects.lars.seeds import SEED_KEY, Seed, joins, log_part, seed_from, seed_records, seeded, sends
from chronolog.evaluator import StateError
from chronolog.stages.ingest import IngestStage
from chronolog.stages.interface import Out, Record, Upgrader, quiet
from chronolog.stages.program import refusal
from chronolog.stages.upgrading import apply_upgrade, outcome_key, refused_upgrade
from chronolog.state.journal import Journal, register_journal_codecs
from chronolog.state.schema import ChainState, GroundingState, OutputState, ReasonerState
from chronolog.versions import (
    UPGRADE_KEY,
    UpgradeRequest,
    Versions,
    restore,
    retained_from,
    retention_refusal,
    version_id,
)

_json = msgspec.json.Encoder().encode  # writes content's frozensets as arrays (orjson does not take sets)
_quiet = quiet


def _stratum_of(role: str) -> int:
    """0-based stratum of a "stratum.k" role."""
    return int(role.rsplit(".", 1)[1]) - 1


def _add_seed(box: dict[str, Any], role: str, rec: dict[str, Any]) -> bool:
    """Whether a seed record was added to ``box`` (a reasoner's ``stash`` or ``joining``): it is
    when it is of the box's upgrade and its stratum's seed has not ended yet."""
    j, seeds = _stratum_of(role), box["seeds"]
    if rec["seed"] != box["id"] or (j in seeds and seeds[j].ended):
        return False
    seeds.setdefault(j, Seed()).add(rec)
    return True


# ---------------------------------------------------------------- grounding


@dataclass
class GroundingStage:
    """Closes time points: the facts of a point become one batch once a later
    time arrives, or once input has been idle for ``idle_flush`` seconds (None:
    on ingest's idle record instead, in the fleet).

    An idle closing closes the latest point, which ``chronolog run`` has not closed: its record
    says so (``"idle": true``), so that a reasoner of a program with choices evaluates it
    provisionally (dialects/lars/provisional.py).  A later time then closes it again (a record
    without points if none came), and a quiet input after late events closes it again
    idly, so that those events' answers get out."""

    kind: ClassVar[str] = "grounding"
    idle_flush: float | None = 1.0
    first: int | None = None
    latest: int | None = None
    closed: int | None = None
    pending: dict[int, list[list]] = field(default_factory=dict)
    last_input: float = 0.0
    quiet: bool = True  # no input since the last idle closing


    def handle(self, rec: dict, now: float | None = None) -> list[Out]:
        """An ingested record: a fact, a time marker ``{"t": T}``, or a batch of them."""
        out: list[Out] = []
        for item in rec["batch"] if "batch" in rec else (rec,):  # noqa: SIM401 (no tuple built per record)
            if "idle" in item:  # ingest's input went quiet
                if self.latest is not None:
                    out.extend(self._close(self.latest, idle=True))
                continue
            out.extend(self.add(item["t"], item.get("pred"), item.get("args", []), item.get("op") == "retract", now))
        return out

    def add(self, t: int, pred: str | None, args, retract: bool, now: float | None = None) -> list[Out]:  # type: ignore[no-untyped-def]
        self.last_input = time.monotonic() if now is None else now
        self.quiet = False
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
        if self.idle_flush is None:
            return []
        now = time.monotonic() if now is None else now
        if self.latest is None or self.quiet or now - self.last_input < self.idle_flush:
            return []
        return self._close(self.latest, idle=True)

    def process(self, records: list[Record], now: float | None = None,
                more: bool = False) -> tuple[list[Out], list[bytes]]:
        outs: list[Out] = []
        for *_, value in records:
            if value is not None and value.startswith(UPGRADE_KEY):  # for the reasoners, in order with the facts
                outs.append(Out("grounded", 0, value))
            elif value is not None:
                outs.extend(self.handle(orjson.loads(value), now))
        outs.extend(self.idle(now))
        return outs, []

    def progress(self) -> dict[str, int | None]:
        return {"time_point": self.closed}

    def journals(self) -> dict[str, Journal]:
        return {}  # pending points are few: in the snapshot

    def program_refusal(self) -> str | None:
        return None  # its state does not depend on the rules

    def export_state(self) -> GroundingState:
        pending = [(t, [(pred, list(args), bool(r)) for pred, args, r in items]) for t, items in self.pending.items()]
        return GroundingState(self.first, self.latest, self.closed, pending, self.last_input, self.quiet)

    def import_state(self, state: GroundingState) -> None:
        self.first, self.latest, self.closed = state.first, state.latest, state.closed
        self.pending = {t: [[pred, args, r] for pred, args, r in items] for t, items in state.pending}
        self.last_input = state.last_input
        # (a state from before the flag: quiet if the latest point was closed)
        self.quiet = state.closed is not None and state.closed == state.latest if state.quiet is None else state.quiet

    def _close(self, upto: int, idle: bool = False) -> list[Out]:
        """Close the points up to ``upto``: a later time arrived, or (``idle``) the input went
        quiet.  The latest point closed idly (``closed == latest``) is closed again: by the
        next later time, or idly again after late events."""
        quiet = self.quiet
        if idle:
            self.quiet = True
        if self.closed is not None and upto <= self.closed and (
                upto < self.closed or self.closed != self.latest or idle and quiet):
            return []
        points = sorted((t, facts) for t, facts in self.pending.items() if t <= upto)
        for t, _ in points:
            del self.pending[t]
        self.closed = upto
        rec: dict = {"upto": upto, "first": self.first, "points": points}
        if idle:
            rec["idle"] = True
        return [Out("grounded", 0, rec)]


# ---------------------------------------------------------------- strata


def _decode(items: list | None) -> Content:
    """A stratum record's ``add`` or ``del``: groups ``[key, [args, ...]]`` as
    ``atoms_data`` writes them (or one ``[key, args]`` atom per item, from earlier
    releases).  The loop of ``content.gathered`` written out: on output's hot
    path, calling it per group measured 20% slower."""
    if not items:
        return NOTHING
    out: dict = {}
    for key, rows in items:
        k = (ANSWERS, tuple(key[1])) if key[0] == ANSWERS else tuple(key)
        if rows and type(rows[0]) is not list or not rows:  # one atom per item (earlier releases)
            got = frozenset((tuple(rows),))
        else:
            got = frozenset(map(tuple, rows))
        have = out.get(k)
        out[k] = got if have is None else have | got
    return out


def _set_ok(flags: dict, t: int, ok: bool) -> None:
    """Per time point flags where a missing entry means true: only the rare
    false ones are stored, so a commit writes no flag entry for most points."""
    if not ok:
        if flags.get(t, True):
            flags[t] = False
    elif t in flags:
        del flags[t]


@dataclass
class StratumStore:
    """One lower stratum's content per evaluation time, rebuilt from its records."""

    content: dict[int, Content] = field(default_factory=Journal)
    ok: dict[int, bool] = field(default_factory=Journal)  # false ones only (_set_ok)
    upto: int | None = None  # latest time point received

    def apply(self, rec: dict) -> int:
        t = rec["t"]
        base = self.content[t] if t in self.content else self.content.get(t - 1, NOTHING)
        self.content[t] = changed(base, _decode(rec.get("add")), _decode(rec.get("del")))
        _set_ok(self.ok, t, rec.get("ok", True))
        self.upto = t if self.upto is None else max(self.upto, t)
        return t


@dataclass
class StratumSender:
    """Turns a stratum engine's evaluations into ``chronolog.stratum.k`` records."""

    sent: dict[int, Content] = field(default_factory=Journal)
    sent_ok: dict[int, bool] = field(default_factory=Journal)  # false ones only (_set_ok)
    outbox: list[bytes] = field(default_factory=list)

    def observe(self, t: int, engine: Engine, result: StepResult) -> None:
        ok = result.consistent
        known = t in self.sent
        base = self.sent[t] if known else self.sent.get(t - 1, NOTHING)
        # unchanged groups share base's sets: unchanged points cost no memory
        add, drop, content = difference(engine.exported(), base)
        if known and content is base and self.sent_ok.get(t, True) == ok:
            return
        self.sent[t] = content
        _set_ok(self.sent_ok, t, ok)
        rec = {"t": t, "t1": engine.t1, "ok": ok, "add": atoms_data(add), "del": atoms_data(drop)}
        self.outbox.append(_json(rec))  # msgspec: the groups' frozensets as arrays


@dataclass
class _StepSink:
    """Reasoners publish through ``observe``; the answer sink interface is unused."""

    changes: ClassVar[bool] = False  # ``correct`` needs no changes: a replay skips the old content

    def step(self, result: StepResult, engine: Engine) -> None:
        pass

    def correct(self, changes: list, engine: Engine, upto: int, previous: Engine) -> None:
        pass

    def record(self) -> None:  # (a provisional evaluation: the sender re-sends what differs by itself)
        pass

    def recorded(self) -> None:
        return None

    def take_back(self, recorded: object) -> None:
        pass


def fleet_strata(plan: Plan) -> list[list[str]]:
    """Predicates per fleet reasoner: the strata, or everything in one for a
    program that is not stratified (clingo evaluates it whole)."""
    if plan.stratified:
        return plan.strata
    return [sorted({p for s in plan.strata for p in s})]


def output_layout(plan: Plan, strata: int) -> str:
    """What of a program the output service depends on: its strata and answer predicates."""
    preds = ",".join(f"{p}/{n}" + ("@" if (p, n) in plan.timed else "") for p, n in sorted(plan.output))
    return f"{strata} strata, answers {preds}"


def horizon(retention: int | None) -> int | None:
    """The Reasoner's retention in a stage: ingest already routes events past
    ``retention`` away, so the stage only prunes (one point later)."""
    return None if retention is None else retention + 1


class _ImportingStage:
    """What reasoners and output share: the lower strata's records become the
    reasoner's imports per time point, and time advances to the least of them."""

    lower: dict[int, StratumStore]
    reasoner: Reasoner

    def _export_lower(self) -> list[tuple[int, int | None]]:
        return [(j, store.upto) for j, store in self.lower.items()]

    def _import_lower(self, lower: list[tuple[int, int | None]]) -> None:
        for j, upto in lower:
            self.lower[j].upto = upto
        self._rebuild_imports(self.reasoner)

    def _rebuild_imports(self, r: Reasoner) -> None:
        """A reasoner's imports are not stored: each is the lower strata's content at its time
        (on_stratum sets it after every change), in its plan's shape, so they are rebuilt."""
        times = set().union(*(s.content.keys() | s.ok.keys() for s in self.lower.values()))
        for t in sorted(times):
            dict.__setitem__(r.imports, t, r.shaped(t, _combine(self.lower, t)))

    def on_stratum(self, j: int, rec: dict) -> None:
        """A ``chronolog.stratum.j`` record (0-based ``j``) from the wire."""
        self.reasoner.push(Event(rec["t1"]))
        t = self.lower[j].apply(rec)
        self.reasoner.set_imported(t, _combine(self.lower, t))

    def _take(self, records: list[Record]) -> bool:
        """Feed consumed records; whether there were any."""
        for role, *_, value in records:
            if value is None:
                continue
            if role == "grounded":
                self.on_grounded(orjson.loads(value))
            elif not value.startswith(SEED_KEY):  # (a seed is for the reasoners of added strata: seeds.py)
                self.on_stratum(_stratum_of(role), orjson.loads(value))
        return bool(records)

    def on_grounded(self, rec: dict) -> None:
        raise ValueError("this stage reads no grounded records")

    # Stored by earlier builds, now rebuilt from the lower strata on restore:
    # such entries in a changelog are skipped (state.snapshots.restore_stage).
    derived_journals: ClassVar[tuple[str, ...]] = ("imports",)

    def journals(self) -> dict[str, Journal]:
        """The growing parts of the state, stored entry by entry (runtime/journal.py).
        The reasoner's imports are not among them: they are derived from the
        lower strata's content (``_import_lower``), and storing them wrote every
        time point's content twice."""
        out = {"log": self.reasoner.log}
        for j, store in self.lower.items():
            out[f"lower{j}"] = store.content
            out[f"lower{j}_ok"] = store.ok
        return out  # type: ignore[return-value]

    def _advance(self, ends: list[int | None]) -> None:
        if ends and all(e is not None for e in ends):
            self.reasoner.advance(min(ends))  # type: ignore[type-var]
        _forget(self.reasoner.pruned_below, [d for s in self.lower.values() for d in (s.content, s.ok)])


class ReasonerStage(_ImportingStage):
    """Evaluates stratum ``k`` (0-based) of a program on grounded batches and
    the lower strata's records; time advances to the least of its inputs.

    An upgrade record (``chronolog upgrade`` on a per-stratum fleet, forwarded by
    ingest and grounding) changes the stratum's program from T on: a stratum that
    is the same by content keeps its state; a changed one gets a later version,
    a reasoner of the new rules that evaluates from T on (warmed up on the log it
    kept), while the one before it keeps evaluating the points before T (late
    events).  Both send through the one sender, each only its part of time, so
    the records of the points from T on whose content changed are corrections,
    as a late event's are (``changes.per_stratum_refusal`` says when this is exact)."""

    kind: ClassVar[str] = "reasoner"

    def __init__(self, plan: Plan, stratum: int, warn=_quiet, retention: int | None = None,  # type: ignore[no-untyped-def]
                 plan_of: Callable[[Any], Plan] | None = None, name: str = "reasoner", version: str | None = None) -> None:
        self.stratum = stratum
        self.version = version  # the program version it is configured with
        self.base_version = version  # the one its state was made by (stages/program.py)
        self.sender = StratumSender()
        self.lower = {j: StratumStore() for j in range(stratum)}
        self.closed: int | None = None
        self.reasoner = Reasoner(
            plan, _StepSink(), warn=warn, stratum=stratum, auto_advance=False, observe=self.sender.observe,
            retention=horizon(retention),
        )
        self.keeps = stream_keys(plan, stratum)
        self.warn = warn
        self.retention = retention
        self.plan_of = plan_of  # the files of a program -> its plan (None: not upgradable)
        self.name = name  # as its upgrade outcomes name the service
        self.plan = plan  # the program in force (what an upgrade compares with)
        self.program: Sources | None = None  # its files (None: the program the service started with)
        self.upgrades: list[dict[str, Any]] = []
        self.later: list[_Later] = []  # the stratum's later program versions, oldest first
        # the oldest version's files and start, once the one before it was dropped (``_drop_unreachable``)
        self.first: tuple[Sources, int] | None = None
        self.vlog: Journal = Journal()  # the newest later version's log (``_add_version``)
        self.waiting = False  # work left for the batch that ends the epoch (``process``)
        # an added stratum's start from the lower strata's seeds (seeds.py): the seeds that came
        # before the upgrade record and what followed them ({"id", "seeds", "held"}), the upgrade
        # waiting for its seeds ({"request", "at", "seeds", "held"}), the seeds to send at the next flush
        self.stash: dict[str, Any] | None = None
        self.joining: dict[str, Any] | None = None
        self.seeding: list[tuple[str, int | None, dict[str, Any]]] = []
        # per 0-based stratum an upgrade added from seeds: the first time its reasoner holds the
        # input of (its seed's start), which a later change of it may not read before (``_switch``)
        self.known_from: dict[int, int] = {}

    def journals(self) -> dict[str, Journal]:
        return {**super().journals(), "sent": self.sender.sent, "sent_ok": self.sender.sent_ok,  # type: ignore[dict-item]
                "vlog": self.vlog}

    def _parts(self) -> list[tuple[Reasoner, int | None]]:
        """Each version's reasoner and the end of its part of time (None: from then on)."""
        ends: list[int | None] = [v.start for v in self.later] + [None]
        return list(zip([self.reasoner] + [v.reasoner for v in self.later], ends, strict=True))

    def on_grounded(self, rec: dict) -> None:
        if not self.later:
            self.closed = _feed_grounded(self.reasoner, rec, self.closed, self.keeps)
            return
        if "late" in rec and self.retention is not None:
            rec = self._in_time(rec)
        closed = self.closed
        for r, end in self._parts():
            closed = _feed_grounded(r if end is None else _Before(r, end), rec, self.closed, self.keeps)  # type: ignore[arg-type]
        self.closed = closed

    def _in_time(self, rec: dict) -> dict:
        """A ``late`` record without the events too late for the stream: older than the newest
        version's retention horizon, as ``run --upgrade`` has it (``Versions``) — an older
        version, evaluated only up to its end, would still take them."""
        newest = self._parts()[-1][0]
        bound = None if newest.evaluated is None or newest.retention is None else newest.evaluated - newest.retention
        if bound is None or all(t >= bound for t, *_ in rec["late"]):
            return rec
        for t, *_ in rec["late"]:
            if t < bound:
                newest.too_late += 1
                self.warn(f"warning: event at t={t} is older than the retention horizon ({bound}); ignored")
        return {"late": [item for item in rec["late"] if item[0] >= bound]}

    def _drop_unreachable(self) -> None:
        """Drop the oldest program version once no event can reach its part of time any more
        (older than the newest version's retention horizon: ``_in_time``; the strata below
        are ahead of this one, so their records of those times are final too) and it is
        evaluated to its end: its log and the lower strata's content it could read are
        forgotten as the newest version prunes (a finite retention; docs/fleet/upgrade.md).
        The next version takes its place, its log in the ``log`` journal."""
        while self.later and self.retention is not None:
            newest, end = self._parts()[-1][0], self.later[0].start
            old = self.reasoner
            if newest.evaluated is None or newest.retention is None or newest.evaluated - newest.retention < end:
                return
            if old.pending or (old.evaluated is not None and old.evaluated < end - 1):
                return
            nxt = self.later.pop(0)
            journal, r = old.log, nxt.reasoner
            for key in [k for k in journal if k not in r.log]:
                del journal[key]
            for key, facts in r.log.items():
                journal[key] = facts
            if r.log is self.vlog:  # it was the newest: the ``log`` journal holds it now
                for key in list(self.vlog):
                    del self.vlog[key]
            r.log = journal  # type: ignore[assignment]
            self.reasoner, self.first = r, (nxt.sources, nxt.start)

    @property
    def _first_start(self) -> int | None:
        return None if self.first is None else self.first[1]

    def on_stratum(self, j: int, rec: dict) -> None:
        if not self.later:
            super().on_stratum(j, rec)
            return
        parts = self._parts()
        for r, end in parts:
            if end is None or rec["t1"] < end:
                r.push(Event(rec["t1"]))
        t = self.lower[j].apply(rec)
        imported = _combine(self.lower, t)
        for r, end in parts:
            if end is None or t < end:
                r.set_imported(t, imported)

    def process(self, records: list[Record], now: float | None = None,
                more: bool = False) -> tuple[list[Out], list[bytes]]:
        """With ``more`` (the epoch goes on: ``Stage.process``), pending corrections wait for the
        batch that ends it, so that a burst of them over several batches costs one replay: among
        them an upgrade's, whose changed strata below send the corrections of [T, now] that a
        version of this stratum evaluating [T, now] at once would evaluate again."""
        if not records and not self.waiting:
            return [], []
        outs = self._feed(records)
        if more and (self.waiting or any(r.pending for r, _ in self._parts())):
            self.waiting = True
            return outs, []
        return outs + [Out("stratum", 0, v) for v in self.flush()], []

    def _feed(self, records: list[Record]) -> list[Out]:
        """Consumed records into the stage, an upgrade record where it comes (what came before
        it evaluated by the program before it); seeds and what an added stratum's start holds
        back aside (``_aside``)."""
        outs: list[Out] = []
        start = 0
        for i, (role, *_, value) in enumerate(records):
            if value is None:
                continue
            if self.joining is not None or self.stash is not None or (
                    role != "grounded" and value.startswith(SEED_KEY)):
                self._take(records[start:i])
                start = i + 1
                outs += self._aside(role, value)
            elif role == "grounded" and value.startswith(UPGRADE_KEY):
                self._take(records[start:i])  # what came before it, evaluated by the program before it
                outs += [Out("stratum", 0, v) for v in self.flush()]
                outs += self._upgrade(value)
                start = i + 1
        self._take(records[start:])
        return outs

    def _aside(self, role: str, value: bytes) -> list[Out]:
        """A record while seeds are about (seeds.py).  Before the upgrade record, a reasoner
        that may start from the seeds (past the program's last stratum, no version of its own)
        keeps them and what follows them on their topics (``stash``); others drop them.  After
        it, while the seeds come (``joining``): a lower stratum's records before its seed are
        dropped (the seed holds their content), the rest waits for ``_joined``."""
        if self.joining is not None:
            if role == "grounded":
                self.joining["held"].append([role, value.decode()])
                return []
            j = _stratum_of(role)
            seeds = self.joining["seeds"]
            if value.startswith(SEED_KEY) and _add_seed(self.joining, role, orjson.loads(value)):
                return self._joined() if all(k in seeds and seeds[k].ended for k in range(self.stratum)) else []
            if j in seeds and seeds[j].ended:
                self.joining["held"].append([role, value.decode()])
            return []  # (before the stratum's seed: its content is in the seed)
        stash = self.stash
        if role != "grounded" and value.startswith(SEED_KEY):
            rec = orjson.loads(value)
            if stash is None and self.stratum >= self.plan.fleet_strata and not self.later:
                stash = self.stash = {"id": rec["seed"], "seeds": {}, "held": []}
            if stash is not None and _add_seed(stash, role, rec):
                return []
            if stash is None:
                return []  # (not for this reasoner)
        assert stash is not None
        if role != "grounded" and _stratum_of(role) in stash["seeds"]:
            stash["held"].append([role, value.decode()])
            return []
        if role == "grounded" and value.startswith(UPGRADE_KEY):
            outs = [Out("stratum", 0, v) for v in self.flush()]
            return outs + self._upgrade(value)
        self._take([(role, "", 0, 0, value)])
        return []

    def _upgrade(self, value: bytes) -> list[Out]:
        try:
            request = UpgradeRequest.decode(value)
        except ValueError as exc:
            return [refused_upgrade(value, f"not an upgrade record: {exc}", self.name)]
        if any(done["id"] == request.id for done in self.upgrades):
            return []  # (the same record from every input partition)
        old, newest, stash = self.plan, self._parts()[-1][0], self.stash
        self.stash = None
        try:
            at, new = self._switch(request)
        except ChronologError as exc:
            said = {"upgrade": request.id, "refused": str(exc), "service": self.name}
            return [Out("control", 0, orjson.dumps(said), outcome_key(request, self.name))]
        self.upgrades.append({"id": request.id, "version": request.version, "at": str(at)})
        if seeded(old, new):
            for k in range(old.fleet_strata, new.fleet_strata):
                self.known_from.setdefault(k, at - 1 - (plan_back(new) or 0))
        if self.joining is None and sends(old, new, self.stratum):
            self.seeding.append(self._seed(request.id, new, at, newest))
        # the new program's strata and files: what `up`'s supervisor reads to start added strata's reasoners
        applied: dict[str, Any] = {"upgrade": request.id, "version": request.version, "at": str(at),
                                   "service": self.name, "strata": fleet_strata(new),
                                   "sources": [list(f) for f in request.sources]}
        outs = [Out("control", 0, orjson.dumps(applied), outcome_key(request, self.name))]
        held: list[list[str]] = []
        if stash is not None and self.joining is not None and stash["id"] == request.id:
            self.joining["seeds"], held = stash["seeds"], stash["held"]
            if all(k in stash["seeds"] and stash["seeds"][k].ended for k in range(self.stratum)):
                return outs + self._joined(held)
            self.joining["held"] = held
            return outs
        if stash is not None:  # seeds of an upgrade it does not start from: what followed them goes on
            held = stash["held"]
        return outs + self._feed([(role, "", 0, 0, v.encode()) for role, v in held])

    def join_version(self, versions: tuple[Sources, ...]) -> str | None:
        """For a reasoner that has read nothing yet, given the program versions the fleet applied
        (``--fleet-versions``, oldest first): the version whose upgrade added its stratum, where
        it starts from that upgrade's seeds (seeds.py) — then it takes the program in force
        before that upgrade as its own, to decide on it as the other reasoners did, and its
        service starts reading at the upgrade's epoch (runtime/fleet/join_start.py); None: it
        reads its topics from the start (nothing seeded, or nothing added)."""
        if self.plan_of is None or self.upgrades or self.later or self.reasoner.t1 is not None:
            return None
        before: tuple[Sources | None, Plan] = (None, self.plan)
        for sources in versions:
            new = self.plan_of(sources)
            if self.stratum < new.fleet_strata:
                if not joins(before[1], new, self.stratum, False):
                    return None
                if before[0] is not None:
                    self.program, self.plan = before
                return version_id(sources)
            before = (sources, new)
        return None

    def _seed(self, rid: str, new: Plan, at: int, newest: Reasoner) -> tuple[str, int | None, dict[str, Any]]:
        """The seed this reasoner sends at its next flush (seeds.py): from the new version's
        warm-up on; the lowest stratum's with its log (every input fact) as the upgrade record
        found it, and the times."""
        first = None if newest.t1 is None else seed_from(new, newest.t1, at)
        if self.stratum:
            return rid, first, {}
        log = [] if first is None else log_part(newest.log, first)
        return rid, first, {"log": log, "t1": newest.t1, "latest": newest.latest, "closed": self.closed,
                            "known": [[k, w] for k, w in sorted(self.known_from.items())]}

    def _joined(self, held: list[list[str]] | None = None) -> list[Out]:
        """Every lower stratum's seed is in: the stratum an upgrade added starts from them, as if
        it had read its inputs whole — the log and the lower strata's content from the new
        version's warm-up on, evaluated by the program before the upgrade (which has no such
        stratum: nothing) up to where the inputs reach — and applies the upgrade; then what came
        after the upgrade record and the seeds."""
        assert self.joining is not None and self.plan_of is not None
        joining, self.joining = self.joining, None
        if held is None:
            held = joining["held"]
        seeds: dict[int, Seed] = joining["seeds"]
        request = UpgradeRequest.decode(joining["request"].encode())
        at, new, old = int(joining["at"]), self.plan_of(request.sources), self.plan
        base = seeds[0].scalars if 0 in seeds else {}
        for k, w in base.get("known") or ():  # (the strata seeded before it started: as every reasoner knows them)
            self.known_from.setdefault(int(k), int(w))
        for j, store in self.lower.items():
            for journal in (store.content, store.ok):
                for key in list(journal):
                    del journal[key]
            store.upto = None
            for t, ok, content in seeds[j].content():
                store.content[t] = content
                _set_ok(store.ok, t, ok)
                store.upto = t
        r = self._reasoner(old, 0)
        r.observe = self.sender.observe
        r.log = self.reasoner.log  # (the stage's ``log`` journal)
        for key in list(r.log):
            del r.log[key]
        for t, facts in seeds[0].facts() if 0 in seeds else ():
            r.log[t] = facts
        self.reasoner, self.closed = r, base.get("closed")
        # the lower strata's content as imports, also where the lowest reasoner had read no input
        # at the upgrade (no ``t1``): its seed then holds what it evaluated after it (seeds.py)
        self._rebuild_imports(r)
        t1 = base.get("t1")
        if t1 is not None:
            ends = [self.closed] + [s.upto for s in self.lower.values()]
            r.t1, r.latest = int(t1), int(base["latest"])
            r.evaluated = max(r.t1 - 1, min(ends)) if all(e is not None for e in ends) else r.t1 - 1  # type: ignore[type-var]
            r.engine = make_engine(old, r.t1, self.stratum)  # (the old program has no such stratum: nothing to warm)
        below = any(changed_at(old, new, j) for j in range(self.stratum))
        self.plan, self.program = new, request.sources
        self._add_version(new, request.sources, at, r, evaluate=not below)
        self.waiting = self.waiting or below
        self._reshaping()
        if sends(old, new, self.stratum):
            self.seeding.append((request.id, None if r.t1 is None else seed_from(new, r.t1, at), {}))
        return self._feed([(role, "", 0, 0, v.encode()) for role, v in held])

    def _switch(self, request: UpgradeRequest) -> tuple[int, Plan]:
        """The stratum's program from T on (a later version if its content changes); T and the
        new plan.  A stratum the upgrade adds starts from the lower strata's seeds instead, once
        they are in (``_joined``)."""
        dialect = self.plan.program.dialect
        if self.plan_of is None:
            raise ChronologError("error: this service cannot change its program while running")
        if request.dialect != dialect:
            raise ChronologError(f"error: a {request.dialect} program cannot replace this {dialect} program "
                                 "(an upgrade keeps the language)")
        at = request.time(True)
        new = self.plan_of(request.sources)
        why = per_stratum_refusal(self.plan, new)
        if why is not None:
            raise ChronologError(f"error: this fleet of one service per stratum cannot change to the new program "
                                 f"while running: {why}")
        newest = self._parts()[-1][0]
        if at is None:
            evaluated = self._evaluated()
            if evaluated is None:
                raise ChronologError("error: this service has read no input yet: give the upgrade a time (--at)")
            at = evaluated + 1
        if self.upgrades and at <= int(self.upgrades[-1]["at"]):
            raise ChronologError(f"error: the upgrade time {at} is not after the latest upgrade's "
                                 f"({self.upgrades[-1]['at']})")
        assert isinstance(at, int)
        if self.retention is not None:
            self._check_retained(request, at, new)
        changed = changed_at(self.plan, new, self.stratum)
        needs = stream_keys(new, self.stratum)  # (also for a stratum a version before removed, now back)
        unread = unkept(self.stratum, needs, self.keeps) if changed and self.stratum < new.fleet_strata else None
        if unread is not None:
            raise ChronologError(f"error: {unread}")
        back = plan_back(new)
        for k, first in sorted(self.known_from.items()):
            if k < new.fleet_strata and changed_at(self.plan, new, k) and (back is None or at - 1 - back < first):
                raise ChronologError(
                    f"error: stratum {k + 1}'s reasoner holds its input from {first} on (it started there when an "
                    f"upgrade added the stratum), and the new program's answers from T={at} on read it from "
                    + ("its start" if back is None else str(at - 1 - back)) + ": restart the fleet with the new program, "
                    "or upgrade at a later T")
        if joins(self.plan, new, self.stratum, bool(self.later)):
            self.joining = {"id": request.id, "request": request.encode().decode(), "at": at, "seeds": {}, "held": []}
            return at, new
        below = any(changed_at(self.plan, new, j) for j in range(self.stratum))  # sending corrections from T on
        self.plan, self.program = new, request.sources
        if changed:
            self._add_version(new, request.sources, at, newest, evaluate=not below)
            self.waiting = self.waiting or below
        self._reshaping()
        return at, new

    def _check_retained(self, request: UpgradeRequest, at: int, new: Plan) -> None:
        """Refused (a ``ChronologError``) where the input retained does not reach back to what
        the new program's answers from ``at`` on read: decided on ingest's stamp of the
        request (``IngestStage.stamped``) and the whole new program's reach, never on this
        reasoner's own log, so that every reasoner of every partition decides alike — even
        one whose stratum is unchanged (the fleet takes the upgrade whole or not at all)."""
        if request.retained is None:
            raise ChronologError("error: the request does not say from when the input is retained (ingest sets it "
                                 "on its way to the reasoners): a fleet with a finite --retention takes upgrades "
                                 "through its ingest service")
        refused = retention_refusal(at, plan_back(new), retained_from(request, True))
        if refused is not None:
            raise ChronologError(f"{refused} (--retention {self.retention})")

    def _reshaping(self) -> None:
        """Where program versions keep a predicate in different shapes (read through a window
        in one only), every reasoner brings what the strata below send into its own
        (``reasoner.shaped``): they send each time point in the shape of its version."""
        reasoners = [r for r, _ in self._parts()]
        plans = [self.plan, *(r.plan for r in reasoners)]
        on = any(reshaped(a, b) for a in plans for b in plans)
        for r in reasoners:
            r.reshape = on

    def _add_version(self, plan: Plan, sources: Sources, at: int, newest: Reasoner, evaluate: bool = True) -> None:
        """A reasoner of ``plan`` from ``at`` on: the newest one's log and imports, evaluated up
        to ``at - 1`` unobserved (its warm-up), then up to where the newest one had evaluated,
        its records the corrections of the points from ``at`` on; not ``evaluate``: that is left
        to the next ``flush`` (strata below change too: their corrections come first)."""
        done = newest.evaluated
        r = self._reasoner(plan, at)
        for t, facts in newest.log.items():
            dict.__setitem__(r.log, t, list(facts))
        state = dict(newest.export_state())
        if newest.t1 is not None:
            assert done is not None
            state.update(evaluated=max(min(done, at - 1), newest.t1 - 1), dirty_from=None, old_t1=None,
                         old_entries=[], old_imports=[])
        if reshaped(newest.plan, plan):
            self._version(r, state)
        else:  # the newest's imports are the lower strata's content in this plan's shape too: copied
            dict.update(r.imports, newest.imports)
            r.import_state(state)
        if newest.log is self.vlog:  # it stops growing at T: its log goes to the snapshot
            newest.log = Journal(newest.log)
        for key in [k for k in self.vlog if k not in r.log]:
            del self.vlog[key]
        for key, facts in r.log.items():
            self.vlog[key] = facts
        r.log = self.vlog  # the newest version's log grows with the stream: journaled
        newest.observe = _Gate(self.sender, self.later[-1].start if self.later else self._first_start, at)
        self.later.append(_Later(r, at, sources))
        if done is not None and evaluate and not advance_pointwise(r, done):  # (at once where it can)
            r.advance(done)

    def _evaluated(self) -> int | None:
        """The last time point evaluated (a version added by an upgrade may not have evaluated its
        part yet: ``_add_version``)."""
        return max((r.evaluated for r, _ in self._parts() if r.evaluated is not None), default=None)

    def _reasoner(self, plan: Plan, start: int) -> Reasoner:
        return Reasoner(plan, _StepSink(), warn=self.warn, stratum=self.stratum, auto_advance=False,
                        observe=_Gate(self.sender, start, None), retention=horizon(self.retention))

    def _version(self, r: Reasoner, state: dict) -> None:
        """``r`` continued from ``state`` (its log poured in): its imports rebuilt from the lower strata."""
        self._rebuild_imports(r)
        r.import_state(state)

    def progress(self) -> dict[str, Any]:
        newest = self._parts()[-1][0]
        got: dict[str, Any] = {"delayed_events": newest.delayed, "time_point": self._evaluated(),
                               "upgrades": len(self.upgrades)}
        if self.upgrades:
            got["program_version"] = self.upgrades[-1]["version"]
        return got

    def program_refusal(self) -> str | None:
        return refusal(self.base_version, self.upgrades, self.version)

    def export_state(self) -> ReasonerState:
        versions = [{"sources": [list(f) for f in v.sources], "start": v.start, "reasoner": v.reasoner.export_state(),
                     **({"journal": "vlog", "log": []} if v.reasoner.log is self.vlog else
                        {"log": [[t, facts_data(f)] for t, f in v.reasoner.log.items()]})} for v in self.later]
        first = None if self.first is None else {"sources": [list(f) for f in self.first[0]], "start": self.first[1]}
        return ReasonerState(self._export_lower(), self.reasoner.export_state(), self.closed,
                             [b.decode() for b in self.sender.outbox], list(self.upgrades),
                             None if self.program is None else [list(f) for f in self.program], versions,
                             base_version=self.base_version, first=first, seeds=self._export_seeds())

    def _export_seeds(self) -> dict[str, Any] | None:
        """The seeds about, as data (none at an epoch's end: an upgrade and its seeds are in one)."""
        if self.stash is None and self.joining is None and not self.seeding and not self.known_from:
            return None

        def rows(got: dict[str, Any] | None) -> dict[str, Any] | None:
            if got is None:
                return None
            return {**got, "seeds": [[j, seed.export()] for j, seed in got["seeds"].items()]}

        return {"stash": rows(self.stash), "joining": rows(self.joining),
                "seeding": [[rid, first, base] for rid, first, base in self.seeding],
                "known_from": [[k, w] for k, w in sorted(self.known_from.items())]}

    def _import_seeds(self, data: dict[str, Any] | None) -> None:
        def rows(got: dict[str, Any] | None) -> dict[str, Any] | None:
            if got is None:
                return None
            return {**got, "seeds": {int(j): Seed.restore(seed) for j, seed in got["seeds"]}}

        self.stash = rows(None if data is None else data["stash"])
        self.joining = rows(None if data is None else data["joining"])
        self.seeding = [] if data is None else [(str(r), f, dict(b)) for r, f, b in data["seeding"]]
        self.known_from = {} if data is None else {int(k): int(w) for k, w in data.get("known_from", [])}

    def import_state(self, state: ReasonerState) -> None:
        self.waiting = True  # (a state stored mid-epoch may hold work left for its end: the next batch does it)
        if state.first is not None:  # the versions before it were dropped: it evaluates from its start
            if self.plan_of is None:
                raise StateError("the state holds program upgrades, and this service cannot make their plans")
            sources = tuple((str(n), str(t)) for n, t in state.first["sources"])
            self.first = (sources, int(state.first["start"]))
            log = self.reasoner.log  # (the ``log`` journal, its entries restored already)
            self.reasoner = self._reasoner(self.plan_of(sources), self.first[1])
            self.reasoner.log = log
        self._import_lower(state.lower)
        self.closed = state.closed
        self.sender.outbox = [line.encode() for line in state.outbox]
        self.reasoner.import_state(state.reasoner)
        self.upgrades = list(state.upgrades)
        self.base_version = state.base_version
        self._import_seeds(state.seeds)
        if state.program is None and not state.versions:
            return
        if self.plan_of is None:
            raise StateError("the state holds program upgrades, and this service cannot make their plans")
        if state.program is not None:
            self.program = tuple((str(n), str(t)) for n, t in state.program)
            self.plan = self.plan_of(self.program)
        self.later = []
        for row in state.versions:
            sources = tuple((str(n), str(t)) for n, t in row["sources"])
            start = int(row["start"])
            r = self._reasoner(self.plan_of(sources), start)
            if row.get("journal") == "vlog":
                r.log = self.vlog  # type: ignore[assignment]  # (its entries restored already)
            for t, facts in row["log"]:
                dict.__setitem__(r.log, int(t), facts_from(facts))
            self._version(r, row["reasoner"])
            (self.later[-1].reasoner if self.later else self.reasoner).observe = _Gate(
                self.sender, self.later[-1].start if self.later else self._first_start, start)
            self.later.append(_Later(r, start, sources))
        self._reshaping()

    def flush(self) -> list[bytes]:
        """Evaluate what all inputs have reached: the records of the points whose content changed."""
        self.waiting = False
        ends = [self.closed] + [s.upto for s in self.lower.values()]
        if not self.later:
            self._advance(ends)
        elif all(e is not None for e in ends):
            until: int = min(ends)  # type: ignore[type-var,assignment]
            starts = [self._first_start] + [v.start for v in self.later]
            for (r, end), start in zip(self._parts(), starts, strict=True):  # each version up to its end
                last = until if end is None else min(until, end - 1)  # (the points before T: the old one)
                # a version's first evaluation of its part ([T, now], on the corrections from below
                # where they changed too: ``_add_version``) at once where its stratum is lifted
                first = start is not None and r.evaluated is not None and r.evaluated < start <= last
                if not (first and advance_pointwise(r, last)):
                    r.advance(last)
            self._drop_unreachable()
        _forget(self.reasoner.pruned_below, [self.sender.sent, self.sender.sent_ok])
        out, self.sender.outbox = self.sender.outbox, []
        for rid, first, base in self.seeding:  # after every record sent: the content they sum to (seeds.py)
            out += seed_records(rid, self.sender.sent, self.sender.sent_ok, first, base)
        self.seeding = []
        return out


Sources = tuple[tuple[str, str], ...]


@dataclass
class _Later:
    """A later program version of a stratum: its reasoner, whose part of time starts at ``start``."""

    reasoner: Reasoner
    start: int
    sources: Sources


class _Gate:
    """A version's ``observe``: only the evaluations of its part of time ``[start, end)`` go to the sender."""

    def __init__(self, sender: StratumSender, start: int | None, end: int | None) -> None:
        self.sender, self.start, self.end = sender, start, end

    def __call__(self, t: int, engine: Engine, result: StepResult) -> None:
        if (self.start is None or t >= self.start) and (self.end is None or t < self.end):
            self.sender.observe(t, engine, result)


class _Before:
    """A reasoner fed only the input before ``end`` (an older version's part of time)."""

    def __init__(self, reasoner: Reasoner, end: int) -> None:
        self.reasoner, self.end = reasoner, end

    def push(self, ev: Event) -> None:
        if ev.t < self.end:
            self.reasoner.push(ev)

    def late(self, ev: Event, closed: int) -> None:
        if ev.t < self.end:
            self.reasoner.end = self.end
            self.reasoner.late(ev, closed)

    def push_batch(self, t: int, facts: list[tuple[str, tuple, bool]]) -> None:
        if t < self.end:
            self.reasoner.push_batch(t, facts)

    def close(self, upto: int, idle: bool) -> None:
        self.reasoner.end = self.end  # (its held events are due as the stream closes: Reasoner._release)
        self.reasoner.close(upto, idle)


def _feed_grounded(r: Reasoner, rec: dict, closed: int | None, keeps: frozenset | None = None) -> int | None:
    """A ``chronolog.grounded`` record into a reasoner; the time closed since.
    With ``keeps``, facts of other predicates count only as their time (a
    late one can still start the timeline earlier)."""
    if "late" in rec:
        # after the first point closed, a reasoner holds them for a program with choices (Reasoner.late);
        # before it nothing was evaluated: they are input like any other
        late = r.push if closed is None else partial(r.late, closed=closed)
        for t, pred, args, retract in rec["late"]:
            if keeps is None or pred is None or (pred, len(args)) in keeps:
                late(Event(t, pred, tuple(args), bool(retract)))
            else:
                late(Event(t))
        return closed
    if closed is None:  # (later, the stream's first time moves only by a late event, applied as one)
        r.push(Event(rec["first"]))
    for t, facts in rec["points"]:
        r.push_batch(t, [(pred, tuple(args), bool(retract)) for pred, args, retract in facts
                         if keeps is None or (pred, len(args)) in keeps])
    r.push(Event(rec["upto"]))
    r.close(rec["upto"], rec.get("idle") is True)  # (idle: closed provisionally, Reasoner.close)
    return rec["upto"]


def _forget(below: int | None, journals: list) -> None:
    """With ``--retention``: drop per-time-point entries no repair can read any more."""
    if below is None:
        return
    for j in journals:
        for k in [k for k in j if k < below]:
            del j[k]


def _combine(stores: dict[int, StratumStore], t: int) -> Imported:
    ok = all(s.ok.get(t, True) for s in stores.values())
    return Imported(ok, merged(s.content.get(t, NOTHING) for s in stores.values()))


class _LineBuffer:
    """Where a stage's answer writer writes: bytes kept as written (the writer
    renders whole time points as UTF-8 into ``buffer``), taken as the
    lines to produce — no decode and re-encode of the answer text."""

    encoding = "utf-8"

    def __init__(self) -> None:
        self.buffer = io.BytesIO()

    def write(self, text: str) -> int:  # the writer's rare text path (corrections)
        return self.buffer.write(text.encode())

    def flush(self) -> None:
        pass

    def take(self, mark: bool = False) -> list[bytes]:
        data = self.buffer.getvalue()
        if not data:
            return []
        self.buffer.seek(0)
        self.buffer.truncate()
        return shown(data, mark)


def shown(data: bytes, mark: bool) -> list[bytes]:
    """The lines of ``data`` the answer topic gets: CONTRACT §3 lines only, unless ``mark``
    (``--mark-no-answer-set``) keeps the no_answer_set lines too.  The point stays visible
    without its line: the reasoner logs it (with the reason) and the writer counts it
    (``progress``, the metric ``chronolog_no_answer_sets_total``)."""
    if not mark:
        data, _ = no_answer_set.split(data)
    return data.splitlines()


class _Answering:
    """A stage whose reasoner writes answer lines (CONTRACT §3) into a buffer."""

    buffer: _LineBuffer
    writer: AnswerWriter
    mark: bool = False  # no_answer_set lines on the answer topic too (``--mark-no-answer-set``)

    def _answer_writer(self, plan: Plan, answers: str) -> AnswerWriter:
        self.buffer = _LineBuffer()
        self.writer = AnswerWriter(self.buffer, plan, answers)  # type: ignore[arg-type]
        return self.writer

    def _lines(self) -> list[bytes]:
        return self.buffer.take(self.mark)


def serving(plan: Plan, versions: list[Plan]) -> Plan:
    """The plan the output service evaluates: ``plan``'s, with the predicates later program
    versions (``chronolog upgrade``) derive that it does not, as components without rules at
    their strata: the output only imports the strata's content, and writes every version's
    answers, each where its program is in force (the reasoners send each version's content
    only in its part of time)."""
    if not versions:
        return plan
    known = set(plan.intensional)
    components = list(plan.components)
    output = set(plan.output)
    for later in versions:
        output |= later.output
        for c in later.components:
            fresh = [k for k in c.preds if k not in known]
            if fresh:
                known.update(fresh)
                components.append(Component(fresh, [], False, True, c.stratum))
    timed = set(plan.timed).union(*(later.timed - plan.intensional for later in versions))
    reaches = [p.output_reach for p in (plan, *versions)]  # (how far back any version dates its atoms)
    reach = None if None in reaches else max(r for r in reaches if r is not None)
    return dataclasses.replace(plan, components=components, intensional=known, output=output, timed=timed,
                               output_reach=reach)


class OutputStage(_Answering, _ImportingStage):
    """Assembles the strata's records into answer lines (CONTRACT §3).

    After an upgrade that adds strata or answer predicates, ``up``'s supervisor restarts it
    with the program versions applied (``serving``) and their number of strata: it reads the
    added strata's topics from their start, and re-evaluates from the first time point whose
    stored content holds a predicate its state's program did not know (``import_state``).

    An evaluation's content may hold atoms an ``@``-head dates before it; how far back bounds
    its corrections' replays and how long it remembers the dated atoms it wrote (each is
    written once).  A later program version may date further back than the program it serves
    (an upgrade that keeps the strata and answer predicates does not restart it), so it widens
    that reach as the content it imports shows (``widen``), before evaluating it."""

    kind: ClassVar[str] = "output"

    def __init__(self, plan: Plan, strata: int, answers: str = "changelog", warn=_quiet,  # type: ignore[no-untyped-def]
                 retention: int | None = None, version: str | None = None, mark: bool = False) -> None:
        self.mark = mark
        self.lower = {j: StratumStore() for j in range(strata)}
        self.version = self.base_version = version  # configured; the one its state was made by
        # what of the program it depends on: an upgrade that keeps it (per_stratum_refusal) leaves it alone
        self.layout = output_layout(plan, strata)
        self.base_layout: str | None = None if version is None else self.layout
        top = max((c.stratum for c in plan.components), default=0) + 1
        self.reasoner = Reasoner(plan, self._answer_writer(plan, answers), warn=warn, stratum=top,
                                 auto_advance=False, retention=horizon(retention))
        self._touched: set[int] = set()  # time points whose imports wait for ``_settle``
        self._held = False  # records taken and not evaluated: the epoch went on (``process``)
        # the answer predicates whose atoms carry their time (an @-head may date them back)
        self.dated = {p for p in plan.output if p in plan.timed}
        # per derived predicate's name, per arity: its atoms' width in this plan (with its time if timed)
        self.shapes: dict[str, dict[int, int]] = {}
        for p, n in plan.intensional:
            self.shapes.setdefault(p, {})[n] = n + ((p, n) in plan.timed)

    def on_stratum(self, j: int, rec: dict) -> None:
        """A stratum record into its store; the reasoner's import of its time is set at the
        next ``flush`` (``_settle``): every stratum sends a record per time point, so
        combining the strata's content at each record combined every point once per stratum
        (an upgrade's restatement reaches the output as thousands of points from each)."""
        back = self._back(rec)
        if back is not None:
            self._settle()  # (it reads the imports as evaluated)
            self.widen(back)
        if not self.reasoner.reshape and self._misshaped(rec):
            self.reasoner.reshape = True  # (from now on: the content it holds came in its shape)
        self.reasoner.push(Event(rec["t1"]))
        self._touched.add(self.lower[j].apply(rec))

    def _settle(self) -> None:
        """The imports of the time points whose stratum content changed since the last call:
        the strata's content combined once per point (what ``on_stratum`` of each record did)."""
        touched, r, lower = self._touched, self.reasoner, self.lower
        if touched:
            for t in sorted(touched):
                r.set_imported(t, _combine(lower, t))
            touched.clear()

    def _misshaped(self, rec: dict) -> bool:
        """Whether a stratum record adds atoms of a predicate in another shape than the plan
        it serves keeps it in (with or without its times: a later program version reads it
        through a window, or no longer does; ``reasoner.shaped``)."""
        shapes = self.shapes
        for key, rows in rec.get("add") or ():
            widths = shapes.get(key[0])  # (None for the answers apart: their key is (ANSWERS, key))
            if widths is not None and rows and type(rows[0]) is list:
                width = widths.get(key[1])
                if width is not None and len(rows[0]) != width:
                    return True
        return False

    def _back(self, rec: dict) -> int | None:
        """How far before its time a stratum record adds a dated answer atom, where that is
        beyond the reach (None: it is not)."""
        reach = self.reasoner.output_reach
        if reach is None or not self.dated or not rec.get("add"):
            return None
        t = rec["t"]
        low = t - reach
        for key, rows in rec["add"]:
            k = (key[1][0], key[1][1]) if key[0] == ANSWERS else (key[0], key[1])
            if k not in self.dated or not rows:
                continue
            for row in rows if type(rows[0]) is list else (rows,):  # (one atom per item: earlier releases)
                when = row[-1]
                if type(when) is int and when < low:
                    low = when
        return None if low == t - reach else t - low

    def widen(self, reach: int | None) -> None:
        """Answer atoms may lie ``reach`` points before the evaluation deriving them (None: any
        way back), further than the reach so far: the dated atoms written at the times it no
        longer remembered are recalled (the union of what the evaluations from there on
        imported, as evaluated), then corrections replay from that far back."""
        r, w = self.reasoner, self.writer
        had = r.output_reach
        if had is None or (reach is not None and reach <= had):
            return
        if r.t1 is not None and r.evaluated is not None:
            first = min(r.t1, r._old_t1 if r._old_t1 is not None else r.t1)
            start = first if reach is None else max(first, r.evaluated - reach)
            old = r._old_imports

            def as_evaluated(t: int) -> tuple[list, Imported | None]:
                return [], old[t] if t in old else r.imports.get(t)

            atoms, _ = r.replay(as_evaluated, first, start, r.evaluated)
            forgotten = r.evaluated - had  # ``recent`` holds the times from here on
            for T in [T for T in w.recent if start <= T < forgotten]:
                del w.recent[T]
            for p, args, T in atoms:
                if T < forgotten and p in r.plan.timed:
                    w.recent.setdefault(T, {}).setdefault(p, set()).add((*args, T))
        r.output_reach = w.reach = reach

    def export_state(self) -> OutputState:
        self._settle()  # (the reasoner's pending corrections are part of its state)
        return OutputState(self._export_lower(), self.reasoner.export_state(), self.writer.export_state(),
                           self.base_version, self.base_layout, self.known(), self.reasoner.output_reach,
                           self.reasoner.reshape)

    def import_state(self, state: OutputState) -> None:
        self._held = True  # (a state stored mid-epoch may hold work left for its end: the next batch does it)
        self.base_version, self.base_layout = state.base_version, state.layout
        self.reasoner.reshape = state.reshape
        self._import_lower(state.lower)
        fresh = self._fresh(state.known)
        imports = self.reasoner.imports
        if fresh:  # as the state's program imported them: without the predicates it did not know
            for t, got in list(imports.items()):
                dict.__setitem__(imports, t, Imported(got.consistent, {
                    k: v for k, v in got.content.items() if (k[1] if k[0] == ANSWERS else k) not in fresh}))
        self.writer.import_state(state.writer)
        self.reasoner.import_state(state.reasoner)
        if state.reach is not None:  # what it wrote was kept for that reach: widened to the plan's if less
            planned, self.reasoner.output_reach = self.reasoner.output_reach, state.reach
            self.writer.reach = self.reasoner.output_reach
            self.widen(planned)
        evaluated = self.reasoner.evaluated
        for t in sorted(imports) if fresh else ():
            full = self.reasoner.shaped(t, _combine(self.lower, t))
            if evaluated is not None and t <= evaluated and len(full.content) != len(imports[t].content):
                self.reasoner.set_imported(t, full)  # corrected from there on, answers written
            else:
                dict.__setitem__(imports, t, full)

    def _fresh(self, known: list[str] | None) -> set:
        """The predicates it imports now and its state's program did not (an upgrade's, served
        after a restart): their content stored meanwhile was not imported when it came; the
        time points holding some are evaluated again, their answers written as corrections."""
        if known is None:
            return set()
        had = set(known)
        return {k for k in self.reasoner.plan.intensional if f"{k[0]}/{k[1]}" not in had}

    def known(self) -> list[str]:
        """The predicates the output imports (what ``_catch_up`` compares with after a restart)."""
        return sorted(f"{p}/{n}" for p, n in self.reasoner.plan.intensional)

    def flush(self) -> list[bytes]:
        self._settle()
        self._advance([s.upto for s in self.lower.values()])
        return self._lines()

    def process(self, records: list[Record], now: float | None = None,
                more: bool = False) -> tuple[list[Out], list[bytes]]:
        """With ``more`` (the epoch goes on: some stratum's barrier has not come), the records
        wait in the strata's stores for the batch that completes the epoch: the content of a
        time point it cannot evaluate yet is incomplete anyway (it evaluates up to the least
        point every stratum reached), and a burst of corrections over several batches of one
        epoch — an upgrade's restatement, from each changed stratum — is then one correction
        of the answers, one set of lines, not one per batch."""
        got = self._take(records)
        if more:
            self._held = self._held or got
            return [], []
        if got or self._held:
            self._held = False
            return [], self.flush()
        return [], []

    def progress(self) -> dict[str, int | None]:
        return {"corrections": self.writer.corrections, "no_answer_sets": self.writer.no_answer_sets,
                "time_point": self.reasoner.evaluated}

    def program_refusal(self) -> str | None:
        """The output sees no upgrade record (they reach the reasoners only), and depends only on
        the strata and answer predicates, which an upgrade keeps: another program with the same
        ones runs on (the reasoners check their rules), one with others is refused."""
        if self.base_layout is None or self.base_layout == self.layout:
            return None
        why = refusal(self.base_version, [], self.version)
        return None if why is None else f"{why} (with other strata or answer predicates: {self.layout}, " \
                                        f"the state's {self.base_layout})"


class ChainStage:
    """Grounding and the whole program of one partition in one process:
    operator chaining, as Flink chains operators and Kafka Streams runs a
    sub-topology in one task.  The strata are evaluated by one reasoner, as in
    embedded mode (no stratum records to build, send and rebuild), and a batch
    costs one transaction instead of one per hop.  With one partition ingest
    joins the chain too (nothing to repartition).  Per-stratum services remain
    the layout that spreads strata over machines.

    The program is a ``LarsEvaluator`` (not eager: the chain advances it to the
    closed points), so an upgrade record (``chronolog upgrade``) switches it to
    program versions exactly as a DatalogMTL or RTEC service does
    (``stages.upgrading``); before any upgrade the reasoner's log and imports are
    journals, after it the versions' state is one snapshot."""

    kind: ClassVar[str] = "chain"

    def __init__(self, plan: Plan, ingest: IngestStage | None = None, idle_flush: float = 1.0,  # type: ignore[no-untyped-def]
                 answers: str = "changelog", warn=_quiet, retention: int | None = None,
                 upgrader: Upgrader | None = None, name: str = "chain", version: str | None = None,
                 mark: bool = False) -> None:
        self.ingest = ingest
        self.mark = mark  # no_answer_set lines on the answer topic too (``--mark-no-answer-set``)
        self.version = self.base_version = version  # configured; the one its state was made by
        self.grounding = GroundingStage(idle_flush=idle_flush)
        self.closed: int | None = None
        self.plain = LarsEvaluator(plan, answers=answers, retention=horizon(retention), warn=warn)
        self.evaluator: LarsEvaluator | Versions = self.plain  # Versions once upgraded
        self.upgrader = upgrader
        self.upgrades: list[dict[str, Any]] = []  # the upgrades applied, oldest first
        self.name = name  # as its upgrade outcomes name the service
        # the same two journals for the stage's life (the service tracks them once): the
        # plain evaluator's, emptied when an upgrade moves the state into the snapshot
        r = self.plain.reasoner
        # the same journals for the stage's life (the service tracks them once): the log and
        # imports of the program it started with, and of the newest later version (``_attach``)
        self._journals: dict[str, Journal] = {"log": r.log, "imports": r.imports,  # type: ignore[dict-item]
                                              "vlog": Journal(), "vimports": Journal(),
                                              "vstates": Journal(),  # the versions in between, by start
                                              # the newest version's record of what crosses component
                                              # boundaries per point, for an upgrade (``crossing.py``)
                                              "crossing": Journal()}
        self.plain.record_crossing(self._journals["crossing"])

    @property
    def newest(self) -> LarsEvaluator:
        """The evaluator of the program in force now (it reads the whole stream)."""
        got = self.evaluator
        return got.newest.evaluator if isinstance(got, Versions) else got  # type: ignore[no-any-return]

    @property
    def reasoner(self) -> Reasoner:
        return self.newest.reasoner

    @property
    def writer(self) -> AnswerWriter:
        return self.newest.writer

    def handle(self, value: bytes | None, topic: str, partition: int, offset: int, now: float | None = None) -> list[Out]:
        """One input record: a raw event when ingest is chained, else an ingested
        record.  Returns what leaves the chain early (dead letters, late events)."""
        g = self.grounding
        if self.ingest is None:
            if value is not None:
                self._ground(g.handle(orjson.loads(value), now))
            return []
        leaving: list[Out] = []
        got = self.ingest.admit(value, topic, partition, offset, leaving)
        if got is not None:
            ev = got.event
            if ev.is_fact:
                self._ground(g.add(ev.t, ev.pred, ev.args, ev.retract, now))
            for t in self.ingest.advance(ev.t, partition):
                self._ground(g.add(t, None, [], False, now))
        return leaving

    def idle(self, now: float | None = None) -> None:
        self._ground(self.grounding.idle(now))

    def process(self, records: list[Record], now: float | None = None,
                more: bool = False) -> tuple[list[Out], list[bytes]]:
        leaving: list[Out] = []
        lines: list[bytes] = []
        for _, topic, partition, offset, value in records:
            if value is not None and value.startswith(UPGRADE_KEY):
                lines += self.flush()  # what came before it is evaluated by the program before it
                said, restated = self._upgrade(value)
                leaving += said
                lines += shown(b"\n".join(restated), self.mark) if restated else []
                continue
            leaving.extend(self.handle(value, topic, partition, offset, now))
        self.idle(now)
        return leaving, lines + self.flush()

    def _upgrade(self, value: bytes) -> tuple[list[Out], list[bytes]]:
        """The program changes from the record's time on, in this transaction.  With ingest
        chained, the record is stamped here with the input retained, as ingest stamps it for
        a partitioned chain (``IngestStage.stamped``): one rule for every LARS fleet."""
        if self.ingest is not None:
            try:
                value = self.ingest.stamped(UpgradeRequest.decode(value)).encode()
            except ValueError:
                pass  # (``apply_upgrade`` says why it is no upgrade)
        latest = self.grounding.latest
        before = self.newest  # (taken first: the upgrade appends the new version to the same Versions)
        got = apply_upgrade(value, self.evaluator, self.upgrader, self.upgrades, latest, self.reasoner.evaluated,
                            self.name)
        if got.evaluator is not None:
            if before.reasoner.log is self._journals["vlog"]:
                _detach(before)  # it stops growing at T: no longer the newest's journals
            before.stop_recording()
            self._attach(got.evaluator.newest.evaluator)
            self.evaluator = got.evaluator
        return got.said, got.lines

    def _attach(self, newest: LarsEvaluator) -> None:
        """The newest version's log and imports become the ``vlog`` and ``vimports`` journals
        (they grow with the stream: a commit writes the entries that changed)."""
        r = newest.reasoner
        for name, have in (("vlog", r.log), ("vimports", r.imports)):
            journal = self._journals[name]
            for key in [k for k in journal if k not in have]:
                del journal[key]
            for key, value in have.items():
                journal[key] = value
        r.log, r.imports = self._journals["vlog"], self._journals["vimports"]  # type: ignore[assignment]
        crossing = self._journals["crossing"]
        if newest.crossing is None:  # (the entries there are an older version's)
            for key in list(crossing):
                del crossing[key]
        newest.record_crossing(crossing)  # its record so far (``keep``'s), if any, moved in

    def progress(self) -> dict[str, Any]:
        r, w = self.reasoner, self.writer
        got: dict[str, Any] = {"delayed_events": r.delayed, "corrections": w.corrections,
                               "no_answer_sets": w.no_answer_sets, "time_point": r.evaluated}
        if self.ingest is not None:
            got["dead_letters"], got["late_events"] = self.ingest.dead_letters, self.ingest.too_late
        got["upgrades"] = len(self.upgrades)
        if self.upgrades:
            got["program_version"] = self.upgrades[-1]["version"]
        return got

    def program_refusal(self) -> str | None:
        return refusal(self.base_version, self.upgrades, self.version)

    def _ground(self, outs: list[Out]) -> None:
        if not outs:
            return
        target = self.plain.reasoner if self.evaluator is self.plain else _EventFeed(self.evaluator)
        for out in outs:
            self.closed = _feed_grounded(target, out.record, self.closed)  # type: ignore[arg-type]

    def flush(self) -> list[bytes]:
        """Evaluate the closed time points; the answer lines that result."""
        if self.closed is None:
            return []
        return shown(self.evaluator.advance(self.closed).lines(), self.mark)

    def journals(self) -> dict[str, Journal]:
        return self._journals

    def export_state(self) -> ChainState:
        ingest = None if self.ingest is None else self.ingest.export_state()
        if isinstance(self.evaluator, Versions):
            if self._journals["log"] and not any(self._journaled(v.evaluator) == "log" for v in self.evaluator.versions):
                for name in ("log", "imports"):  # the first version was dropped (unreachable): its entries go
                    journal = self._journals[name]
                    for key in list(journal):
                        del journal[key]
            data = self.evaluator.export_state()
            frozen, between = self._journals["vstates"], set()
            for v, row in zip(self.evaluator.versions, data["versions"], strict=True):
                where = self._journaled(v.evaluator)
                if where is not None:  # its log and imports are journal entries, not in the snapshot
                    row["journal"] = where
                    row["state"] = {**row["state"], "log": [], "imports": []}
                elif v.start is not None:  # a version in between: its input ended; written when it changes
                    key = int(v.start)
                    between.add(key)
                    if frozen.get(key) != row["state"]:  # (a copy: the export may share the evaluator's lists)
                        frozen[key] = copy.deepcopy(row["state"])
                    row["journal"], row["state"] = "vstates", {}
            for key in [k for k in frozen if k not in between]:  # dropped versions
                del frozen[key]
            return ChainState(ingest, self.grounding.export_state(), self.closed, {}, {}, list(self.upgrades), data,
                              base_version=self.base_version)
        return ChainState(ingest, self.grounding.export_state(), self.closed, self.plain.reasoner.export_state(),
                          self.plain.writer.export_state(), base_version=self.base_version)

    def _journaled(self, evaluator: LarsEvaluator) -> str | None:
        """The journals holding ``evaluator``'s log ("log" or "vlog"), or None."""
        log = evaluator.reasoner.log
        return next((name for name in ("log", "vlog") if log is self._journals[name]), None)

    def import_state(self, state: ChainState) -> None:
        if (state.ingest is None) != (self.ingest is None):
            raise ValueError("the stored chain and this one differ in whether ingest is chained")
        if self.ingest is not None and state.ingest is not None:
            self.ingest.import_state(state.ingest)
        self.grounding.import_state(state.grounding)
        self.closed = state.closed
        self.upgrades = list(state.upgrades)
        self.base_version = state.base_version
        if state.versions is not None:  # upgraded: the versions build their evaluators
            if self.upgrader is None:
                raise StateError("the state holds program upgrades, and this service cannot make their evaluators")
            rows = state.versions["versions"]
            for row in rows:  # the journaled logs and imports back into the versions' states
                where = row.get("journal")
                if where == "vstates":  # a version in between, whole
                    got = self._journals["vstates"].get(int(row["start"]))
                    if got is None:
                        raise StateError(f"the program version from {row['start']} has no 'vstates' journal entry")
                    row["state"] = copy.deepcopy(got)
                    del row["journal"]
                elif where is not None:
                    log, imports = self._journals[where], self._journals[where.replace("log", "imports")]
                    row["state"] = {**row["state"], "log": [[t, facts_data(f)] for t, f in log.items()],
                                    "imports": [[t, imported_data(i)] for t, i in imports.items()]}
            self.evaluator = restore(state.versions, self.upgrader.make)
            for v, row in zip(self.evaluator.versions, rows, strict=True):
                where = row.get("journal")
                if where is not None:  # the journals themselves, holding the same entries
                    r = v.evaluator.reasoner
                    r.log, r.imports = self._journals[where], self._journals[where.replace("log", "imports")]
            self.plain.stop_recording()
            self.newest.record_crossing(self._journals["crossing"])
            return
        self.plain.writer.import_state(state.writer)
        self.plain.reasoner.import_state(state.reasoner)
        self.plain._lines, self.plain._corrections = self.plain.writer.lines, self.plain.writer.corrections


def _detach(evaluator: LarsEvaluator) -> None:
    """``evaluator``'s log and imports as dicts of their own (no longer the stage's journals)."""
    r = evaluator.reasoner
    r.log, r.imports = Journal(r.log), Journal(r.imports)  # (untracked: a commit writes them in the snapshot)


class _EventFeed:
    """Grounded records into program versions (``_feed_grounded`` pushes to a reasoner): each
    event to the versions ``Versions.push`` gives it, a late one held by each of them as by one
    reasoner (``Reasoner.late``: the version in force at its time applies it to its answers),
    and every closing to every version (an older one's held events are due as the stream
    closes, ``Reasoner._release``; an idle closing is provisional in the version in force)."""

    def __init__(self, versions: Versions) -> None:
        self.versions = versions

    def push(self, ev: Event) -> None:
        self.versions.push(ev)

    def late(self, ev: Event, closed: int) -> None:
        def hold(evaluator: LarsEvaluator, event: Event) -> None:
            evaluator.reasoner.late(event, closed)

        self._ends()
        self.versions.push(ev, hold)

    def push_batch(self, t: int, facts: list[tuple[str, tuple, bool]]) -> None:
        push = self.versions.push
        push(Event(t))
        for pred, args, retract in facts:
            push(Event(t, pred, args, retract))

    def close(self, upto: int, idle: bool) -> None:
        self._ends()
        for v in self.versions.versions:  # (an older version's state changes only while it holds events)
            r = v.evaluator.reasoner
            if v.end is None or upto < v.end or r.held:
                r.close(upto, idle)

    def _ends(self) -> None:
        for v in self.versions.versions:
            v.evaluator.reasoner.end = None if v.end is None else int(v.end)


# ---------------------------------------------------------------- journals


def _state(value: object) -> dict:
    """An evaluator's exported state (checked by its ``import_state``)."""
    if type(value) is not dict:
        raise TypeError(f"{type(value).__name__} is not an evaluator state")
    return value


def _bool(value: object) -> bool:
    if type(value) is not bool:
        raise TypeError(f"{value!r} is not a boolean")
    return value


# How each journal's entries are written as data and read back, by the
# journal's name without its stratum number (lower0 -> lower); looked up by
# chronolog.state.journal.journal_codec.
JOURNAL_CODECS: dict[str, tuple] = {
    "log": (facts_data, facts_from),
    "imports": (imported_data, imported_from),
    "lower": (atoms_data, atoms_from),
    "lower_ok": (bool, _bool),
    "sent": (atoms_data, atoms_from),
    "sent_ok": (bool, _bool),
    "vlog": (facts_data, facts_from),  # a chain's newest program version's (ChainStage._attach)
    "vimports": (imported_data, imported_from),
    "vstates": (dict, _state),  # a chain's program versions in between: their evaluators' export_state
    "crossing": (atoms_data, atoms_from),  # a chain's newest version's record of what crosses components (crossing.py)
}

register_journal_codecs(JOURNAL_CODECS)
