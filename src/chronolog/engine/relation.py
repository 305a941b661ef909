"""A set of tuples with hash indexes built on demand and kept up to date.

Joins look tuples up by the values of some columns; each distinct column
choice gets one dictionary index the first time it is asked for, which every
later insert and delete maintains.  That makes a join step cost proportional
to the matching tuples, not to the relation.
"""

from __future__ import annotations

from operator import itemgetter
from typing import Callable, Iterable, Iterator

Tuple = tuple
Cols = tuple[int, ...]
EMPTY: frozenset = frozenset()


def key_getter(cols: Cols) -> Callable[[tuple], tuple]:
    """A function returning the values of ``cols`` as a tuple."""
    if not cols:
        return lambda t: ()
    if len(cols) == 1:
        c = cols[0]
        return lambda t: (t[c],)
    return itemgetter(*cols)  # returns a tuple for two or more columns


class Rel:
    """A set of equal-length tuples with on-demand column indexes."""

    __slots__ = ("tuples", "_indexes", "journal", "_removed")

    def __init__(self, tuples: Iterable[tuple] = ()) -> None:
        self.tuples: set[tuple] = set(tuples)
        self._indexes: dict[Cols, tuple[Callable[[tuple], tuple], dict[tuple, set[tuple]]]] = {}
        # When journaled: tuple -> +1 (added) / -1 (removed) since the last reset,
        # so incremental rules can see both this time point's changes and the old state.
        self.journal: dict[tuple, int] | None = None
        self._removed: dict[Cols, dict[tuple, list[tuple]]] | None = None

    def __getstate__(self) -> tuple:
        """Tuples and journal only: indexes are caches, rebuilt on first use."""
        return (self.tuples, self.journal)

    def __setstate__(self, state: tuple) -> None:
        self.tuples, journal = state
        self._indexes = {}
        self._removed = None
        self.journal = None
        if journal is not None:
            self.start_journal()
            self.journal.update(journal)  # type: ignore[union-attr]

    def __len__(self) -> int:
        return len(self.tuples)

    def __iter__(self) -> Iterator[tuple]:
        return iter(self.tuples)

    def __contains__(self, t: object) -> bool:
        return t in self.tuples

    def add(self, t: tuple) -> bool:
        if t in self.tuples:
            return False
        self.tuples.add(t)
        if self.journal is not None:
            self._note(t, 1)
        for get, idx in self._indexes.values():
            k = get(t)
            s = idx.get(k)
            if s is None:
                idx[k] = {t}
            else:
                s.add(t)
        return True

    def discard(self, t: tuple) -> bool:
        if t not in self.tuples:
            return False
        self.tuples.discard(t)
        if self.journal is not None:
            self._note(t, -1)
        for get, idx in self._indexes.values():
            k = get(t)
            s = idx[k]
            s.discard(t)
            if not s:
                del idx[k]
        return True

    def clear(self) -> None:
        for t in list(self.tuples):
            self.discard(t)

    # ------------------------------------------------------------ journal

    def _note(self, t: tuple, sign: int) -> None:
        j = self.journal
        assert j is not None
        v = j.get(t, 0) + sign
        if v:
            j[t] = v
        else:
            del j[t]
        self._removed = None

    def start_journal(self) -> None:
        """Forget recorded changes (and start recording if not yet)."""
        self.journal = {}
        self._removed = None

    def was_present(self, t: tuple) -> bool:
        """Membership before the recorded changes."""
        s = self.journal.get(t, 0) if self.journal else 0
        return s == -1 or (s == 0 and t in self.tuples)

    def old_matches(self, cols: Cols, key: tuple) -> list[tuple]:
        """Index lookup in the state before the recorded changes."""
        j = self.journal or {}
        out = [m for m in self.index(cols).get(key, ()) if j.get(m, 0) != 1]
        if self._removed is None:
            self._removed = {}
        removed = self._removed.get(cols)
        if removed is None:
            get = key_getter(cols)
            removed = {}
            for m, sign in j.items():
                if sign < 0:
                    removed.setdefault(get(m), []).append(m)
            self._removed[cols] = removed
        out.extend(removed.get(key, ()))
        return out

    def index(self, cols: Cols) -> dict[tuple, set[tuple]]:
        """The index on ``cols`` (built now if it does not exist yet)."""
        entry = self._indexes.get(cols)
        if entry is None:
            get = key_getter(cols)
            idx: dict[tuple, set[tuple]] = {}
            for t in self.tuples:
                k = get(t)
                s = idx.get(k)
                if s is None:
                    idx[k] = {t}
                else:
                    s.add(t)
            entry = (get, idx)
            self._indexes[cols] = entry
        return entry[1]

    def replace(self, new: set[tuple]) -> tuple[list[tuple], list[tuple]]:
        """Make the content ``new``; return (added, removed)."""
        old = self.tuples
        added = [t for t in new if t not in old]
        removed = [t for t in old if t not in new]
        for t in removed:
            self.discard(t)
        for t in added:
            self.add(t)
        return added, removed

    def __getstate__(self) -> tuple[list[tuple], bool]:
        # Indexes are caches: checkpoints store only the tuples.
        return list(self.tuples), self.journal is not None

    def __setstate__(self, state: tuple[list[tuple], bool]) -> None:
        self.tuples = set(state[0])
        self._indexes = {}
        self.journal = {} if state[1] else None
        self._removed = None
