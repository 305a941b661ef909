"""Ingest: turn raw records of ``chronolog.facts`` into validated events or dead letters.

The ingest service of the fleet calls ``ingest_record`` for every message:
a valid event gets its partition key (the argument the topology partitions
on, or None), a malformed one becomes a ``DeadLetter`` with the reason, to be
published on the dead-letter topic and counted, so one bad event never stops
the stream.  Validation is the embedded reader's, so both modes accept and
reject exactly the same lines.
"""

from __future__ import annotations

import io
from dataclasses import dataclass

import orjson

from chronolog.contract.models import DeadLetter
from chronolog.core.errors import InputError
from chronolog.core.events import Event
from chronolog.io.formats import plain_fact, read_events


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
