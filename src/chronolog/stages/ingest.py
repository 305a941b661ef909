"""Ingest, every dialect's: raw records of ``chronolog.facts`` into validated events routed by key.

``ingest_record`` validates one record: a valid event gets its partition key
(the argument the layout partitions on, or None), a malformed one becomes a
``DeadLetter`` with the reason, to be published on the dead-letter topic and
counted, so one bad event never stops the stream.  Validation is the embedded
reader's, so both modes accept and reject exactly the same lines.
``IngestStage`` is the ingest service (and the head of a one-partition
chain): it routes facts by key and broadcasts the stream's time.
"""

from __future__ import annotations

import io
import time
import zlib
from dataclasses import dataclass, field, replace
from typing import ClassVar, cast

import orjson

from chronolog.contract.models import DeadLetter
from chronolog.core.errors import InputError
from chronolog.core.events import Event, event_json, event_record
from chronolog.io.event_checks import plain_fact
from chronolog.io.formats import read_events
from chronolog.stages.interface import Out, Record
from chronolog.state.journal import Journal
from chronolog.state.schema import IngestState
from chronolog.versions import RETAINED_WHOLE, UPGRADE_KEY, UpgradeRequest


def partition_of(key: str | None, partitions: int) -> int:
    """The partition of a partition-key value: stable across processes and
    runtimes (Python's ``hash`` is salted per process), so the fleet's ingest
    and the backfill route every key alike."""
    if key is None or partitions == 1:
        return 0
    return zlib.crc32(key.encode()) % partitions


@dataclass(frozen=True, slots=True)
class Accepted:
    event: Event
    key: str | None  # partition key: the keyed argument as text, or None (broadcast / one partition)
    # the record itself when it is exactly the event's JSON line (keys t, pred,
    # args only): ingest forwards these bytes instead of encoding the event again
    raw: bytes | None = None


def ingest_record(
    value: bytes | None,
    *,
    topic: str,
    partition: int,
    offset: int,
    partition_key: dict[str, int] | None,
    service: str = "ingest",
) -> Accepted | DeadLetter | None:
    """Validate one record; None for an empty record (nothing to do)."""
    ev = plain_record(value)
    if ev is not None:  # the reader's own fast path; anything else gets its full check
        return Accepted(ev, partition_key_of(ev, partition_key), value)
    raw = "" if value is None else value.decode("utf-8", errors="replace")
    where = f"{topic}[{partition}]@{offset}"
    try:
        events = list(read_events(io.StringIO(raw.replace("\n", " ") + "\n"), where))
    except InputError as exc:
        return DeadLetter(topic=topic, partition=partition, offset=offset, value=raw, reason=exc.message, service=service)
    if not events:
        return None
    ev = events[0]
    return Accepted(ev, partition_key_of(ev, partition_key))


def plain_record(value: bytes | None) -> Event | None:
    """The event of a record that is exactly a plain fact's JSON line (the
    reader's fast path); None means "check it in full" (it may still be valid)."""
    if not value:
        return None
    try:
        return plain_fact(orjson.loads(value))
    except orjson.JSONDecodeError:
        return None


def partition_key_of(ev: Event, partition_key: dict[str, int] | None) -> str | None:
    """The partition key of a valid event: its keyed argument as text, or None."""
    if partition_key is None or ev.pred is None:
        return None  # time advances go to every partition
    pos = partition_key.get(f"{ev.pred}/{len(ev.args)}")
    if pos is None:
        return None
    return str(ev.args[pos])


@dataclass
class IngestStage:
    """Validates, routes by partition key, broadcasts time markers.

    With several input partitions the stream's time is the least of the
    latest times seen on each (producers send time advances to every
    partition), so a marker never runs ahead of a slower input partition.
    """

    kind: ClassVar[str] = "ingest"
    partition_key: dict[str, int] | None
    partitions: int
    input_partitions: int = 1
    retention: int | None = None
    latest_by_input: dict[int, int] = field(default_factory=dict)
    first: int | None = None
    now: int | None = None  # time sent to every partition
    dead_letters: int = 0
    too_late: int = 0
    # Ingest decides when the stream went quiet (the fleet's grounding closes
    # the latest time point on its ``{"idle": true}``, not on its own clock):
    # the decision is in ingest's transaction, so the services after it, which
    # send again what they made after a restart, make it again identically.
    idle_flush: float | None = None  # seconds of quiet input before the record (None: never)
    quiet: bool = True  # nothing sent to the partitions since the last one
    last_input: float = field(default_factory=time.monotonic)

    def handle(self, value: bytes | None, topic: str, partition: int, offset: int,
               got: Accepted | None = None) -> list[Out]:
        """One input record; ``got``: the record already validated (``process`` parsed it)."""
        out: list[Out] = []
        got = self.admit(value, topic, partition, offset, out, got)
        if got is not None:
            ev = got.event
            if ev.is_fact:
                # delayed (before the stream's time): grounding repairs at once
                urgent = self.now is not None and ev.t < self.now
                out.append(self._fact(got.key, event_record(ev) if got.raw is None else got.raw, urgent))
            for t in self.advance(cast(int, ev.t), partition):  # (LARS reads integer times)
                out.extend(self._broadcast(t))
        return out

    def _fact(self, key: str | None, payload: bytes | dict, urgent: bool) -> Out:
        """The ``ingested`` record of a fact, on its key's partition."""
        return Out("ingested", partition_of(key, self.partitions), payload, None if key is None else key.encode(), urgent)

    def admit(self, value: bytes | None, topic: str, partition: int, offset: int,
              out: list[Out], got: Accepted | None = None) -> Accepted | None:
        """A valid event in time with its partition key; else None, with a dead
        letter or a late event appended to ``out``.  ``got``: already validated."""
        checked: Accepted | DeadLetter | None = got
        if checked is None:
            checked = ingest_record(value, topic=topic, partition=partition, offset=offset,
                                    partition_key=self.partition_key)
        if checked is None:
            return None
        if isinstance(checked, DeadLetter):
            self.dead_letters += 1
            out.append(Out("dlq", 0, checked.model_dump_json().encode(), urgent=False))
            return None
        ev = checked.event
        # embedded mode repairs down to (latest evaluated) - N, and the latest
        # evaluated point trails the latest time by one while the stream flows
        if self.retention is not None and self.now is not None and ev.t < self.now - 1 - self.retention:
            self.too_late += 1
            out.append(Out("late", 0, event_json(ev), urgent=False))
            return None
        return checked

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

    def process(self, records: list[Record], now: float | None = None,
                more: bool = False) -> tuple[list[Out], list[bytes]]:
        outs: list[Out] = []
        done: list[Out] = []  # batched already: what came before an upgrade record
        latest, keyed = self.latest_by_input, self.partition_key
        for _, topic, partition, offset, value in records:
            if value is not None and value.startswith(UPGRADE_KEY):
                done += _batched(outs) + self.upgrade(value)
                outs = []
                continue
            ev = plain_record(value)  # parsed once: ``handle`` takes it as validated
            if ev is None:
                outs.extend(self.handle(value, topic, partition, offset))
                continue
            key = partition_key_of(ev, keyed)
            if latest.get(partition) == ev.t:
                # the usual event: a plain fact at its input partition's latest
                # time, so never late and announcing no time (``handle``'s result
                # for it, without its general checks)
                outs.append(self._fact(key, value, False))  # type: ignore[arg-type]  # not None: plain_record took it
            else:
                outs.extend(self.handle(value, topic, partition, offset, Accepted(ev, key, value)))
        return self._idle(done + _batched(outs), bool(records), now), []

    def upgrade(self, value: bytes) -> list[Out]:
        """An upgrade record (``chronolog upgrade``) to every partition, in order with the
        facts, for the services after ingest to apply.  Without a time, T is set here to the
        time after the stream's, so that every partition upgrades from the same T and nothing
        already written changes (a partition has evaluated at most the stream's time); with a
        finite retention, the input every service still holds (``stamped``)."""
        try:
            request = UpgradeRequest.decode(value)
        except ValueError:
            request = None  # the services say why it is no upgrade
        if request is not None:
            if request.at is None and self.now is not None:
                request = replace(request, at=str(self.now + 1))
            value = self.stamped(request).encode()
        return [Out("ingested", p, value, prompt=True) for p in range(self.partitions)]

    def stamped(self, request: UpgradeRequest) -> UpgradeRequest:
        """``request`` with ``retained`` set under a finite retention: the time from which
        every service after ingest still holds the input, the same for all of them, so that
        they all decide alike whether the new program's input reaches back far enough
        (``versions.retention_refusal``), whatever each one has evaluated and pruned.

        With M the latest time any input partition has reached, no service has evaluated past
        M (grounding closes points of the facts ingest forwarded), and a LARS reasoner prunes
        its log only below (evaluated - retention - 1 - its reaches), so every log holds the
        input from M - retention - 1 on; and no event from then on was too late here (those
        are older than the stream's time - 1 - retention).  Where that lies at or before the
        first time, nothing is forgotten yet: ``RETAINED_WHOLE``.  Set here whatever the
        record said (ingest knows; unlimited retention: None, each service holds everything)."""
        if self.retention is None:
            return replace(request, retained=None)
        if not self.latest_by_input:
            return replace(request, retained=RETAINED_WHOLE)
        floor = max(self.latest_by_input.values()) - 1 - self.retention
        whole = self.first is None or floor <= self.first
        return replace(request, retained=RETAINED_WHOLE if whole else str(floor))

    def _idle(self, outs: list[Out], consumed: bool, now: float | None) -> list[Out]:
        """``outs``, or the idle records once input has been quiet for ``idle_flush``."""
        if self.idle_flush is None:
            return outs
        now = time.monotonic() if now is None else now
        if consumed:
            self.last_input = now
        if any(o.topic == "ingested" for o in outs):
            self.quiet = False
        elif not consumed and not self.quiet and now - self.last_input >= self.idle_flush:
            self.quiet = True
            return [Out("ingested", p, IDLE_RECORD) for p in range(self.partitions)]
        return outs

    def progress(self) -> dict[str, int | None]:
        return {"dead_letters": self.dead_letters, "late_events": self.too_late, "time_point": self.now}

    def journals(self) -> dict[str, Journal]:
        return {}  # all its state is small: in the snapshot

    def program_refusal(self) -> str | None:
        return None  # its state does not depend on the rules

    def export_state(self) -> IngestState:
        return IngestState(list(self.latest_by_input.items()), self.first, self.now, self.dead_letters,
                           self.too_late, self.quiet)

    def import_state(self, state: IngestState) -> None:
        self.latest_by_input = dict(state.latest_by_input)
        self.first, self.now = state.first, state.now
        self.dead_letters, self.too_late, self.quiet = state.dead_letters, state.too_late, state.quiet
        self.last_input = time.monotonic()  # quiet is counted from the restart


IDLE_RECORD = b'{"idle":true}'  # on chronolog.ingested: close the latest time point
BATCH_BYTES = 256 * 1024  # an ingested batch record stays well under Kafka's 1 MB message limit


def _batched(outs: list[Out]) -> list[Out]:
    """Ingest's records for one partition, in order, as ``{"batch": [...]}``
    records of at most ``BATCH_BYTES``: one Kafka record per partition and
    consumed batch instead of one per event, so the producer, the broker and
    grounding's consumer pay per batch."""
    groups: dict[int, list[Out]] = {}
    kept: list[Out] = []
    for out in outs:
        if out.topic == "ingested":
            groups.setdefault(out.partition, []).append(out)
        else:
            kept.append(out)
    for p, group in groups.items():
        if len(group) == 1:
            kept.append(group[0])
            continue
        values: list[bytes] = []
        size, urgent = 0, False
        for out in group:
            value = out.value
            if values and size + len(value) > BATCH_BYTES:
                kept.append(_batch_record(p, values, urgent))
                values, size, urgent = [], 0, False
            values.append(value)
            size += len(value) + 1
            urgent = urgent or out.urgent
        kept.append(_batch_record(p, values, urgent))
    return kept


def _batch_record(partition: int, values: list[bytes], urgent: bool) -> Out:
    return Out("ingested", partition, b'{"batch":[' + b",".join(values) + b"]}", None, urgent)

