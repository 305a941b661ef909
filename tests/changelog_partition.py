"""A changelog partition without a broker (state/changelog.py's protocol): commits appended to
a list, read back from an offset; the tests of the changelog and of upgraded stages' commits."""

from __future__ import annotations

from chronolog.state import changelog
from chronolog.state.store import MemoryStore


class Partition:
    """A changelog partition: records in commit order, read from an offset."""

    def __init__(self) -> None:
        self.records: list[tuple[int, bytes]] = []

    def commit(self, store: MemoryStore, state: changelog.Captured) -> None:
        for _, value in changelog.changelog_records(state):
            self.records.append((len(self.records), value))
        changelog.store_commit(store, state, len(self.records) - 1)

    def read(self, start: int | None) -> list[tuple[int, bytes]]:
        return self.records[start or 0:]
