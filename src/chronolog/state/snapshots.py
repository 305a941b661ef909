"""A stage's state as bytes and back: one snapshot plus its journal entries.

The snapshot holds what ``Stage.export_state`` returns, under the stage's
stable kind and version (``state.schema``); the journals (the parts that
grow with the stream) are written entry by entry, only the entries changed
since the last commit.  Both are ``codec`` data, so a restore is a decode
and a check of every field — never code.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable
from typing import Any

from chronolog.evaluator import StateError
from chronolog.state.codec import decode, encode, reading
from chronolog.state.journal import DELETED
from chronolog.state.schema import journal_codec, read_snapshot, snapshot_bytes

__all__ = ["all_entries", "journal_bytes", "restore_stage", "roundtrip", "snapshot_bytes"]


def journal_bytes(name: str, changed: list[tuple[int, Any]]) -> list[tuple[int, bytes | None]]:
    """A commit's changed entries of the journal ``name`` (``Journal.take``),
    encoded; None for a deleted one.  The codec is looked up once per journal:
    a commit writes thousands of entries."""
    to_data = journal_codec(name)[0]
    return [(key, None if value is DELETED else encode(to_data(value))) for key, value in changed]


def all_entries(stage: Any) -> dict[tuple[str, int], bytes]:
    """Every journal entry of ``stage`` (a full checkpoint, e.g. in tests).  Take
    the snapshot first: an evaluator stage brings its journal up to date there."""
    return {(name, key): body for name, journal in stage.journals().items()
            for key, body in journal_bytes(name, list(journal.items())) if body is not None}


def restore_stage(stage: Any, snapshot: bytes, entries: Iterable[tuple[tuple[str, int], bytes]],
                  where: Callable[[tuple[str, int] | None], str] = lambda key: "") -> Any:
    """``stage`` (freshly made for the same service) continued from stored state.
    ``StateError`` if anything does not decode or does not fit; ``where(key)``
    names the stored record of a journal entry (``where(None)``: the snapshot's)."""
    journals = stage.journals()
    derived = getattr(stage, "derived_journals", ())
    for (name, key), body in entries:
        if name in derived and name not in journals:
            continue  # rebuilt by import_state from the rest of the state
        try:
            if name not in journals:
                raise StateError(f"journal entry of unknown journal {name!r}")
            if type(key) is not int:
                raise StateError(f"journal {name!r}: key {key!r} is not a time point")
            with reading(f"journal {name!r} entry {key}"):
                dict.__setitem__(journals[name], key, journal_codec(name)[1](decode(body)))
        except StateError as exc:
            raise StateError(f"{where((name, key))}{exc}") from None
    try:
        state = read_snapshot(snapshot, stage.kind)
        with reading(f"{stage.kind} snapshot"):
            stage.import_state(state)
    except StateError as exc:
        raise StateError(f"{where(None)}{exc}") from None
    return stage


def roundtrip(stage: Any, fresh: Any) -> Any:
    """``fresh`` continued from ``stage``'s state written out and read back:
    what a restart of the service does (tests, and checks of new stages)."""
    snapshot = snapshot_bytes(stage)  # first: it may bring the journals up to date
    return restore_stage(fresh, snapshot, all_entries(stage).items())
