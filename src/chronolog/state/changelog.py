"""What a commit writes of a stage's state, and how a service gets it back.

A fleet service keeps its state twice: on its compacted changelog partition,
in the same Kafka transaction as its outputs (the record of what was
committed), and in a local ``Store`` (RocksDB in the fleet, memory in tests),
written after the commit so a restart need not read the changelog.  This
module is all of that except Kafka itself: the service produces the records
``changelog_records`` gives, reports where the last one landed to
``store_commit``, and restores through ``restore`` with a function that reads
its changelog partition.  So the service loop never touches snapshots,
journals or the store's keys, and the whole protocol is tested without a
broker (tests/state/test_changelog.py).
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

import orjson

from chronolog.state.recovery import (
    ENTRY_KEY,
    ChangelogReader,
    entry_records,
    snapshot_records,
)
from chronolog.state.snapshots import journal_bytes, restore_stage, snapshot_bytes
from chronolog.state.store import Store

CHUNK = 512 * 1024  # snapshot bytes per changelog record (below Kafka's 1 MB default)

# Reads the service's changelog partition from an offset (None: its start)
# to where it stays quiet: the committed records as (offset, value).
Reader = Callable[[int | None], list[tuple[int, bytes]]]


def track(stage: Any) -> Any:
    """Journals record their changes only in services (their commits take them)."""
    for journal in stage.journals().values():
        journal.track()
    return stage


@dataclass(frozen=True, slots=True)
class Captured:
    """A stage's state as one commit stores it, taken at one moment (bytes: a
    relay goes on while its state is written)."""

    entries: list[tuple[bytes, bytes, bytes | None]]  # per changed journal entry: key, changelog value, store value (None: delete)
    snapshot: bytes
    offsets: dict[str, int]  # input offsets (and the epoch's ``@`` keys) the state is at


def capture(stage: Any, offsets: dict[str, int]) -> Captured:
    """``stage``'s snapshot and its journal entries changed since the last capture.
    The snapshot comes first: an evaluator stage brings its journal up to date
    while exporting (``EvaluatorStage.export_state``)."""
    snapshot = snapshot_bytes(stage)
    entries: list[tuple[bytes, bytes, bytes | None]] = []
    for name, journal in stage.journals().items():
        got = journal_bytes(name, journal.take())
        entries += [(k, v, body) for (k, v), (_, body) in zip(entry_records(name, got), got)]
    return Captured(entries, snapshot, dict(offsets))


def changelog_records(state: Captured, chunk: int = CHUNK) -> list[tuple[bytes, bytes]]:
    """The (key, value) records a commit produces on the changelog, in order: the
    journal entries, then the snapshot's chunks.  The last record's offset is
    what ``store_commit`` remembers (``changelog_at``)."""
    return [(k, v) for k, v, _ in state.entries] + snapshot_records(state.snapshot, state.offsets, chunk)


def store_commit(store: Store, state: Captured, landed: int | None) -> None:
    """The committed state into the local store in one atomic write: entries,
    snapshot, offsets, and where the snapshot's last record landed on the
    changelog (None: unknown, so the next restart reads the changelog)."""
    puts: dict[str | bytes, bytes] = {k: body for k, _, body in state.entries if body is not None}
    puts["snapshot"] = state.snapshot
    puts["offsets"] = orjson.dumps(state.offsets)
    deletes: list[str | bytes] = [k for k, _, body in state.entries if body is None]
    if landed is not None and landed >= 0:
        puts["changelog_at"] = str(landed).encode()
    else:
        deletes.append("changelog_at")
    store.write(puts, deletes)


def _offsets(saved: bytes) -> dict | None:
    """The offsets stored beside a snapshot (None if unreadable)."""
    try:
        got = orjson.loads(saved)
    except orjson.JSONDecodeError:
        return None
    return got if isinstance(got, dict) else None


def local_snapshot(store: Store, read: Reader) -> tuple[bytes, dict] | None:
    """The store's snapshot and offsets if they are the last committed ones: the
    changelog still holds the snapshot's last record at ``changelog_at`` and
    no record after it.  (Kafka hides aborted transactions from a
    read_committed reader; the bundled broker shows them, so after one the
    whole changelog is read.)"""
    snapshot, saved, at = store.get("snapshot"), store.get("offsets"), store.get("changelog_at")
    offsets = None if saved is None else _offsets(saved)
    if snapshot is None or offsets is None or at is None:
        return None
    try:
        position = int(at)
    except ValueError:
        return None
    (_, last), = snapshot_records(snapshot, offsets, CHUNK)[-1:]
    return (snapshot, offsets) if read(position) == [(position, last)] else None


@dataclass(frozen=True)
class Restored:
    stage: Any
    offsets: dict[str, int]  # input offsets (and ``@`` epoch keys) to resume from
    source: str  # "store" or "changelog": where it came from


def restore(store: Store, fresh: Any, read: Reader, topic: str, partition: int, where: str) -> Restored | None:
    """``fresh`` continued from the last committed state, or None (nothing
    committed yet: the store is cleared).  The store's state is used when
    ``local_snapshot`` says it is the last committed one; otherwise (a crash
    between the Kafka commit and the store's write, a fresh state directory,
    a broker whose topics are new) the changelog is read from its start and
    its LAST snapshot taken (an idle flush commits without consuming, so
    several snapshots can carry the same offsets).  ``where`` names the store
    in errors; ``StateError`` for anything that does not decode or fit."""
    local = local_snapshot(store, read)
    if local is not None:
        snapshot, offsets = local
        entries = [((k.split(":", 2)[1], int(k.split(":", 2)[2])), v) for k, v in store.items("j:")]
        return Restored(restore_stage(fresh, snapshot, entries, lambda key: where), offsets, "store")
    reader = ChangelogReader(topic, partition)
    for offset, value in read(None):
        reader.add(offset, value)
    found = reader.found
    if found is None:
        store.clear()
        return None
    stage = restore_stage(fresh, found.snapshot, found.entries.items(), found.locate)
    # the store gets the whole restored state: later commits write only what
    # changes, and a restart that then trusts the store needs every entry
    # (``changelog_at`` stays unknown until the next commit sets it)
    store.clear()
    puts: dict[str | bytes, bytes] = {ENTRY_KEY.format(name=name, key=key): body
                                      for (name, key), body in found.entries.items()}
    puts["snapshot"], puts["offsets"] = found.snapshot, orjson.dumps(found.offsets)
    store.write(puts)
    return Restored(stage, found.offsets, "changelog")
