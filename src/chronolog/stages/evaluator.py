"""Any dialect's ``Evaluator`` as a fleet stage (``EvaluatorStage``), and the layout of such a fleet.

A dialect without strata of its own in the fleet (DatalogMTL, RTEC) runs as
one stage that reads the input topic itself, decodes each record with the
dialect's own reader, pushes the events in arrival order and advances as
``chronolog run`` does (a time is evaluated once a later one arrives, or
once input has been idle for ``idle_flush`` seconds); delayed events and
retractions come out of the next ``advance`` as corrections, and an event
older than the evaluator's retention goes to the late topic as the record it
came in (as ingest routes LARS's), for a later backfill.  Its state is the
evaluator's ``export_state``, except the input log when the evaluator says
how to cut it by time (``log_bucket``): that is the ``inputs`` journal, one
entry per time point, so a commit writes the points whose input changed, not
the whole log (``EvaluatorStage.export_state``).  After a program upgrade
the same holds: the newest version's log is that journal, and each older
version's state is an entry of the ``versions`` journal, written again only
when that version changed (an old version that stopped at its end: once);
the entry holds its input log as what differs from the journal's (the
versions were given the same stream), so an upgrade does not write the log
again.

``evaluator_layout`` is such a dialect's ``FleetLayout``: one stratum, one
chain service, one partition.
"""

from __future__ import annotations

import time
from collections.abc import Callable, Iterator
from fractions import Fraction
from typing import Any, ClassVar

from chronolog.contract.models import DeadLetter
from chronolog.core.errors import ChronologError, InputError
from chronolog.core.events import Event
from chronolog.evaluator import Answers, Evaluator, StateError, Time, time_text
from chronolog.stages.interface import FleetLayout, Out, Record, StageSpec, Upgrader
from chronolog.stages.program import refusal
from chronolog.stages.upgrading import apply_upgrade
from chronolog.state.journal import Journal
from chronolog.state.schema import EvaluatorState
from chronolog.versions import DIALECT as VERSIONS
from chronolog.versions import UPGRADE_KEY, Versions, restore


class EvaluatorStage:
    """One partition of a dialect without strata of its own in the fleet (a ``Stage``)."""

    kind: ClassVar[str] = "evaluator"
    LOG = "inputs"  # the field of the evaluator's state that is its input log
    OLD = "versions"  # the journal of the older program versions' states, by position (after an upgrade)

    def __init__(self, evaluator: Evaluator, read: Callable[[str, str], Iterator[Event]],
                 idle_flush: float = 1.0, upgrader: Upgrader | None = None, version: str | None = None) -> None:
        self.evaluator: Evaluator = evaluator
        self.version = version  # the program version it is configured with
        self.base_version = version  # the one its state was made by (stages/program.py)
        self.upgrader = upgrader  # how to make an evaluator of another program (None: not upgradable)
        self.upgrades: list[dict[str, Any]] = []  # the upgrades applied, oldest first
        # (an exported input log item -> the time point it belongs to), or None:
        # the evaluator's whole state is in the snapshot
        self.bucket: Callable[[list], int] | None = getattr(evaluator, "log_bucket", None)
        # the input log as the last export wrote it, per time point (``export_state``)
        self.inputs: Journal = Journal()
        # after an upgrade: the older versions' rows (``Versions.export_row``) by position, and
        # per position the evaluator whose row the journal holds (``_export_versions``)
        self.old: Journal = Journal()
        self.old_written: dict[int, int] = {}
        # per position: the time points up to which its row's input log reads the ``inputs``
        # journal (None: none), and those it holds itself (``_shared_log``)
        self.old_reads: dict[int, tuple[int | None, frozenset[int]]] = {}
        self.read = read
        self.idle_flush = idle_flush
        self.latest: Time | None = None  # latest time pushed
        self.done: Time | None = None  # evaluated up to
        self.dirty = False  # an event for an evaluated time was pushed since
        self.last_input = 0.0
        self.dead_letters = 0

    def process(self, records: list[Record], now: float | None = None,
                more: bool = False) -> tuple[list[Out], list[bytes]]:
        now = time.monotonic() if now is None else now
        leaving: list[Out] = []
        lines: list[bytes] = []
        for _, topic, partition, offset, value in records:
            if not value:
                continue
            if value.startswith(UPGRADE_KEY):
                said, restated = self._upgrade(value)
                leaving += said
                lines += restated
                continue
            raw = value.decode("utf-8", errors="replace")
            try:
                events = list(self.read(raw.replace("\n", " "), f"{topic}[{partition}]@{offset}"))
            except InputError as exc:
                self.dead_letters += 1
                letter = DeadLetter(topic=topic, partition=partition, offset=offset, value=raw, reason=exc.message,
                                    service="chain")
                leaving.append(Out("dlq", 0, letter.model_dump_json().encode(), urgent=False))
                continue
            late = self.late_events
            for ev in events:
                self.last_input = now
                if self.latest is not None and ev.t > self.latest:
                    lines += self._advance(self.latest)
                if self.latest is None or ev.t > self.latest:
                    self.latest = ev.t
                if self.done is not None and ev.t <= self.done:
                    self.dirty = True
                self.evaluator.push(ev)
            if self.late_events > late:  # older than the retention: ignored, kept for a backfill as LARS's are
                leaving.append(Out("late", 0, value))
        if self.latest is not None and now - self.last_input >= self.idle_flush and (
                self.done is None or self.done < self.latest or self.dirty):
            lines += self._advance(self.latest)  # input idle: the latest time too
        return leaving, lines

    def _upgrade(self, value: bytes) -> tuple[list[Out], list[bytes]]:
        """An upgrade record (``chronolog upgrade``, docs/fleet/upgrade.md): the program changes
        from its time on, in this transaction (``stages.upgrading``)."""
        got = apply_upgrade(value, self.evaluator, self.upgrader, self.upgrades, self.latest, self.done, "chain")
        if got.evaluator is not None:
            self.evaluator = got.evaluator  # (its newest version's log stays the ``inputs`` journal)
        return got.said, got.lines

    @property
    def late_events(self) -> int:
        """Events the evaluator ignored as older than its retention (``too_late``)."""
        return int(getattr(self.evaluator, "too_late", 0))

    def _advance(self, until: Time) -> list[bytes]:
        """Evaluate up to ``until``: the answer lines, as ``chronolog run`` writes them
        (the evaluator's ``Answers`` render them: [7,7] for DatalogMTL, 7 for RTEC)."""
        self.done, self.dirty = until, False
        answers: Answers = self.evaluator.advance(until)
        return answers.lines().splitlines()

    def progress(self) -> dict[str, Any]:
        done = self.done
        got: dict[str, Any] = {"dead_letters": self.dead_letters, "delayed_events": getattr(self.evaluator, "delayed", 0),
                               "late_events": self.late_events, "time_point": None if done is None else int(done),
                               "upgrades": len(self.upgrades)}
        if self.upgrades:
            got["program_version"] = self.upgrades[-1]["version"]
        return got

    def journals(self) -> dict[str, Journal]:
        return {} if self.bucket is None else {self.LOG: self.inputs, self.OLD: self.old}

    def program_refusal(self) -> str | None:
        return refusal(self.base_version, self.upgrades, self.version)

    def export_state(self) -> EvaluatorState:
        """The state without the input log, which goes to the ``inputs`` journal:
        the exported log, cut per time point, is compared with what the last
        export left there, and only the points that differ are set (or
        deleted), so the next commit writes those.  (Exporting and comparing
        still cost the log's length; encoding, compressing and sending it at
        every commit cost several times more, and the bytes grew with the stream.)
        Take the journals' changes after this call."""
        evaluator = self.evaluator
        if isinstance(evaluator, Versions) and self.bucket is not None:
            data = self._export_versions(evaluator)
        else:
            data = evaluator.export_state()
            if self.bucket is not None:
                data = dict(data)
                self._journal(data.pop(self.LOG))
        return EvaluatorState(None if self.latest is None else time_text(self.latest),
                              None if self.done is None else time_text(self.done), self.dirty,
                              self.dead_letters, data, upgrades=list(self.upgrades), base_version=self.base_version)

    def _export_versions(self, versions: Versions) -> dict[str, Any]:
        """An upgraded evaluator's state, as incremental as before the upgrade: the newest
        version's log to the ``inputs`` journal, the rest of it in the snapshot, and each older
        version's row to the ``versions`` journal only where it may have changed
        (``Versions.take_touched``) or another version now stands at its position (older ones
        dropped)."""
        touched = versions.take_touched()
        n = len(versions.versions) - 1
        newest = versions.export_row(n)
        state = dict(newest["state"])
        moved = self._journal(state.pop(self.LOG))
        rows: list[dict[str, Any]] = []
        for i in range(n):
            made = id(versions.versions[i].evaluator)
            upto, own = self.old_reads.get(i, (None, frozenset()))
            stale = upto is not None and any(k <= upto and k not in own for k in moved)
            if touched[i] or stale or self.old_written.get(i) != made:
                self.old[i] = self._shared_log(i, versions.export_row(i))
                self.old_written[i] = made
            rows.append({"journal": i})
        for i in [k for k in self.old if k >= n]:
            del self.old[i]
            self.old_written.pop(i, None)
            self.old_reads.pop(i, None)
        rows.append({**newest, "state": state})
        return versions.export_head(rows)

    def _shared_log(self, i: int, row: dict[str, Any]) -> dict[str, Any]:
        """An older version's row with its input log written as what differs from the newest
        version's (the ``inputs`` journal, as this commit leaves it): up to the last time point
        of its log (``upto``), each point's items are the journal's unless the row holds its
        own (``own``; ``[]``: none).  The versions were given the same stream, so an upgrade
        writes the old version's program, answers and what else its state holds, not its log
        again; the row is written again when the journal changes at a point it reads
        (``_export_versions``)."""
        bucket = self.bucket
        assert bucket is not None
        state = dict(row["state"])
        mine: dict[int, list] = {}
        for item in state.pop(self.LOG):
            mine.setdefault(bucket(item), []).append(item)
        upto = max(mine, default=None)
        own = {k: items for k, items in mine.items() if self.inputs.get(k) != items}
        if upto is not None:
            own.update({k: [] for k in self.inputs if k <= upto and k not in mine})
        self.old_reads[i] = (upto, frozenset(own))
        return {**row, "state": state, "log": {"upto": upto, "own": [[k, own[k]] for k in sorted(own)]}}

    def _journal(self, items: list) -> set[int]:
        """The input log ``items`` into the ``inputs`` journal; the time points that changed."""
        bucket, log = self.bucket, self.inputs
        assert bucket is not None
        cut: dict[int, list] = {}
        for item in items:
            key = bucket(item)
            got = cut.get(key)
            if got is None:
                cut[key] = [item]
            else:
                got.append(item)
        changed = set()
        for key, rows in cut.items():
            if log.get(key) != rows:
                log[key] = rows
                changed.add(key)
        for key in [k for k in log if k not in cut]:
            del log[key]
            changed.add(key)
        return changed

    def import_state(self, state: EvaluatorState) -> None:
        self.latest, self.done = _time(state.latest), _time(state.done)
        self.dirty, self.dead_letters = state.dirty, state.dead_letters
        data = state.evaluator
        self.upgrades = list(state.upgrades)
        self.base_version = state.base_version
        if data.get("dialect") == VERSIONS:  # upgraded: the versions build their evaluators
            if self.upgrader is None:
                raise StateError("the state holds program upgrades, and this service cannot make their evaluators")
            stored = self._versions_data(data, state.inputs)
            versions = restore(stored, self.upgrader.make)
            versions.take_touched()  # as stored: the journal's rows are written again when they change
            self.old_written = {i: id(v.evaluator) for i, (v, row) in enumerate(zip(versions.versions[:-1],
                                                                                      data["versions"], strict=False))
                                if set(row) == {"journal"}}  # (a row stored whole: journaled at the next commit)
            self.old_reads = {i: _reads(self.old[i]) for i in self.old_written if "log" in self.old[i]}
            self.evaluator = versions
            self.last_input = time.monotonic()
            return
        if self.bucket is not None:  # the log: the journal's entries by time, then what a v1 record held
            data = {**data, self.LOG: [item for key in sorted(self.inputs) for item in self.inputs[key]]
                    + state.inputs}
        elif state.inputs:
            data = {**data, self.LOG: state.inputs}
        self.evaluator.import_state(data)
        self.last_input = time.monotonic()  # a restart counts as input: no idle flush at once


    def _versions_data(self, data: dict[str, Any], extra: list) -> dict[str, Any]:
        """A stored ``Versions`` state with the rows and the log its journals hold put back (a
        state written whole, before the journals, is taken as it is)."""
        rows = []
        for row in data.get("versions", []):
            if isinstance(row, dict) and set(row) == {"journal"}:
                if row["journal"] not in self.old:
                    raise StateError(f"program version {row['journal']!r}: no entry in the {self.OLD!r} journal")
                row = self.old[row["journal"]]
                if "log" in row:  # its input log: the journal's, bar its own points (``_shared_log``)
                    upto, own = _reads(row)
                    mine = dict(row["log"]["own"])
                    points = sorted(own | ({k for k in self.inputs if k <= upto} if upto is not None else set()))
                    log = [item for k in points for item in (mine[k] if k in own else self.inputs[k])]
                    row = {key: value for key, value in row.items() if key != "log"}
                    row["state"] = {**row["state"], self.LOG: log}
            rows.append(row)
        if rows and isinstance(rows[-1], dict) and isinstance(rows[-1].get("state"), dict) \
                and self.LOG not in rows[-1]["state"]:
            log = [item for key in sorted(self.inputs) for item in self.inputs[key]] + extra
            rows[-1] = {**rows[-1], "state": {**rows[-1]["state"], self.LOG: log}}
        return {**data, "versions": rows}


def _reads(row: dict[str, Any]) -> tuple[int | None, frozenset[int]]:
    """(``upto``, the points of ``own``) of an older version's row written by ``_shared_log``."""
    try:
        log = row["log"]
        upto = log["upto"]
        return (None if upto is None else int(upto)), frozenset(int(k) for k, _ in log["own"])
    except (KeyError, TypeError, ValueError) as exc:
        raise StateError(f"a program version's input log: {type(exc).__name__}: {exc}") from None


def _time(text: str | None) -> Time | None:
    """A time as ``time_text`` wrote it (an integer, or a rational "7/2")."""
    if text is None:
        return None
    value = Fraction(text)
    return int(value) if value.denominator == 1 else value


def evaluator_layout(dialect: str, make: Callable[[StageSpec], Evaluator], read: Callable[[str, str], Iterator[Event]],
                     about: Callable[[], list[str]] = lambda: [], unavailable: ChronologError | None = None,
                     upgrader: Callable[[StageSpec], Upgrader] | None = None) -> FleetLayout:
    """The fleet of a dialect whose evaluator runs whole: one stratum, one chain
    service reading the input topic, one partition (the evaluator is not split
    by key).  ``make``: the evaluator for a service's options (retention, a
    windowed mode); ``read``: (one input line, where) -> its events; ``about``:
    what ``chronolog topology`` prints first (the dialect's ``check``);
    ``unavailable``: why the program has no fleet (it cannot be evaluated as a stream)."""

    def stage(spec: StageSpec) -> EvaluatorStage:
        if spec.role != "chain" or spec.partition > 0:
            raise ChronologError(f"error: a {dialect} program runs as one chain service (partition 0)")
        return EvaluatorStage(make(spec), read, idle_flush=spec.idle_flush,
                              upgrader=None if upgrader is None else upgrader(spec), version=spec.version)

    return FleetLayout(((),), False, None, f"the {dialect} evaluator is not split by key",
                       lambda n: "one chain service reads the input topic and hosts the evaluator", stage,
                       about, unavailable)
