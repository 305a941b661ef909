"""A set of tuples with hash indexes built on demand and kept up to date.

Joins look tuples up by the values of some columns; each distinct column
choice gets one dictionary index the first time it is asked for, which every
later insert and delete maintains.  That makes a join step cost proportional
to the matching tuples, not to the relation.

An index key is the column's value itself for an index on one column (no
1-tuple to make per lookup and per change), the tuple of the values for
several columns.

An index maps a key to its tuples: a 1-tuple while the key has one tuple
(stream keys are mostly unique: a tuple costs half of a one-element set to
make and to drop), a set from the second one on (kept as a set until it is
empty).  Readers only iterate a bucket or test it for emptiness.
"""

from __future__ import annotations

from collections.abc import Callable, Collection, Iterable, Iterator
from operator import itemgetter

Tuple = tuple
Cols = tuple[int, ...]
EMPTY: frozenset = frozenset()
Bucket = tuple | set  # the tuples of one index key: a 1-tuple, or a set of two or more


def key_getter(cols: Cols) -> Callable[[tuple], tuple]:
    """A function returning the values of ``cols`` as a tuple."""
    if not cols:
        return lambda t: ()
    if len(cols) == 1:
        c = cols[0]
        return lambda t: (t[c],)
    return itemgetter(*cols)  # returns a tuple for two or more columns


def index_key(cols: Cols) -> Callable[[tuple], object]:
    """A function returning a tuple's key in an index on ``cols``: the value of
    a single column, else the tuple of the values."""
    if len(cols) == 1:
        return itemgetter(cols[0])
    return key_getter(cols)


def _key_src(cols: Cols) -> str:
    """Source of the index key of ``t`` on ``cols`` (as ``index_key``)."""
    if len(cols) == 1:
        return f"t[{cols[0]}]"
    return "(" + "".join(f"t[{c}], " for c in cols) + ")"


_ADDERS: dict[Cols, Callable] = {}
_REMOVERS: dict[Cols, Callable] = {}


def _index_adder(cols: Cols) -> Callable[[dict, Iterable[tuple]], None]:
    """``f(index, tuples)`` entering tuples into an index on ``cols`` (generated:
    the key is built inline, no call per tuple)."""
    f = _ADDERS.get(cols)
    if f is None:
        key = _key_src(cols)
        scope: dict = {}
        exec(  # noqa: S102 (generated from column numbers)
            "def f(idx, ts):\n    get = idx.get\n    for t in ts:\n"
            f"        k = {key}\n        s = get(k)\n"
            "        if s is None:\n            idx[k] = (t,)\n"
            "        elif type(s) is tuple:\n            idx[k] = {s[0], t}\n"
            "        else:\n            s.add(t)\n",
            scope,
        )
        f = _ADDERS[cols] = scope["f"]
    return f


def _index_remover(cols: Cols) -> Callable[[dict, Iterable[tuple]], None]:
    f = _REMOVERS.get(cols)
    if f is None:
        key = _key_src(cols)
        scope: dict = {}
        exec(  # noqa: S102 (generated from column numbers)
            "def f(idx, ts):\n    for t in ts:\n"
            f"        k = {key}\n        s = idx[k]\n"
            "        if type(s) is tuple:\n            del idx[k]\n"
            "        else:\n            s.discard(t)\n            if not s:\n                del idx[k]\n",
            scope,
        )
        f = _REMOVERS[cols] = scope["f"]
    return f


class Rel:
    """A set of equal-length tuples with on-demand column indexes.

    When journaled, ``plus`` and ``minus`` hold the tuples added and removed
    since the last ``start_journal`` (net: a tuple added and removed again is
    in neither), so incremental rules can read both this time point's
    changes and the old state.  ``add_many``/``discard_many`` change a whole
    batch with set operations.
    """

    __slots__ = ("tuples", "_indexes", "journaled", "plus", "minus", "_removed", "watch")

    def __init__(self, tuples: Iterable[tuple] = ()) -> None:
        self.tuples: set[tuple] = set(tuples)
        self._indexes: dict[Cols, tuple[Callable[[tuple], object], dict[object, Bucket]]] = {}
        self.journaled = False
        self.plus: set[tuple] = set()
        self.minus: set[tuple] = set()
        self._removed: dict[Cols, dict[object, Bucket]] | None = None
        # (set, ids): the ids are added to the set whenever the journal records a change
        self.watch: tuple[set, tuple] | None = None

    def __len__(self) -> int:
        return len(self.tuples)

    def __iter__(self) -> Iterator[tuple]:
        return iter(self.tuples)

    def __contains__(self, t: object) -> bool:
        return t in self.tuples

    @property
    def changed(self) -> bool:
        """Journaled changes since the last ``start_journal``."""
        return bool(self.plus or self.minus)

    def add(self, t: tuple) -> bool:
        if t in self.tuples:
            return False
        self.tuples.add(t)
        if self.journaled:
            if t in self.minus:
                self.minus.discard(t)
            else:
                self.plus.add(t)
            self._removed = None
            if self.watch is not None:
                self.watch[0].update(self.watch[1])
        for get, idx in self._indexes.values():
            k = get(t)
            s = idx.get(k)
            if s is None:
                idx[k] = (t,)
            elif type(s) is tuple:
                idx[k] = {s[0], t}
            else:
                s.add(t)
        return True

    def discard(self, t: tuple) -> bool:
        if t not in self.tuples:
            return False
        self.tuples.discard(t)
        if self.journaled:
            if t in self.plus:
                self.plus.discard(t)
            else:
                self.minus.add(t)
            self._removed = None
            if self.watch is not None:
                self.watch[0].update(self.watch[1])
        for get, idx in self._indexes.values():
            k = get(t)
            s = idx[k]
            if type(s) is tuple:
                del idx[k]
            else:
                s.discard(t)
                if not s:
                    del idx[k]
        return True

    def add_many(self, ts: Iterable[tuple]) -> set[tuple]:
        """Add every tuple of ``ts``; return those that were not there."""
        new = (ts if type(ts) is set or type(ts) is frozenset else set(ts)) - self.tuples
        self.add_absent(new)
        return new

    def discard_many(self, ts: Iterable[tuple]) -> set[tuple]:
        """Remove every tuple of ``ts``; return those that were there."""
        gone = self.tuples.intersection(ts)
        self.discard_present(gone)
        return gone

    def add_absent(self, new: set[tuple] | frozenset[tuple]) -> None:
        """Add ``new``, none of which is here (the caller knows: ``add_many`` without its
        difference)."""
        if new:
            self.tuples |= new
            self._changed(new, self.minus, self.plus, _index_adder)  # type: ignore[arg-type]

    def discard_present(self, gone: set[tuple] | frozenset[tuple]) -> None:
        """Remove ``gone``, all of which is here (``discard_many`` without its intersection)."""
        if gone:
            self.tuples -= gone
            self._changed(gone, self.plus, self.minus, _index_remover)  # type: ignore[arg-type]

    def clear(self) -> None:
        self.discard_many(list(self.tuples))

    def _journal(self, changed: set[tuple], undone: set[tuple], done: set[tuple]) -> None:
        """Record ``changed`` tuples (added: ``done`` is plus, ``undone`` minus;
        removed: the other way round); a change that undoes an earlier one in
        the same step cancels it.  Both sets are updated in place."""
        back = changed & undone if undone else None
        if back:
            undone -= back
            done |= changed - back
        else:
            done |= changed
        self._removed = None
        if self.watch is not None:
            self.watch[0].update(self.watch[1])

    # ------------------------------------------------------------ journal

    def start_journal(self) -> None:
        """Forget recorded changes (and start recording if not yet)."""
        self.journaled = True
        if self.plus:
            self.plus = set()
        if self.minus:
            self.minus = set()
        self._removed = None

    def was_present(self, t: tuple) -> bool:
        """Membership before the recorded changes."""
        if t in self.tuples:
            return t not in self.plus
        return t in self.minus

    def minus_get(self, cols: Cols) -> Callable[[tuple, object], set[tuple]] | None:
        """Lookup by ``cols`` among the tuples removed since ``start_journal``
        (None if there are none)."""
        if not self.minus:
            return None
        if self._removed is None:
            self._removed = {}
        removed = self._removed.get(cols)
        if removed is None:
            removed = self._removed[cols] = {}
            _index_adder(cols)(removed, self.minus)
        return removed.get

    def index(self, cols: Cols) -> dict[object, Bucket]:
        """The index on ``cols`` (built now if it does not exist yet)."""
        entry = self._indexes.get(cols)
        if entry is None:
            get = index_key(cols)
            idx: dict[object, Bucket] = {}
            _index_adder(cols)(idx, self.tuples)
            entry = (get, idx)
            self._indexes[cols] = entry
        return entry[1]

    def drop_index(self, cols: Cols) -> None:
        """Stop maintaining the index on ``cols`` (it is rebuilt if asked for again)."""
        self._indexes.pop(cols, None)

    def replace(self, new: Collection[tuple]) -> tuple[Collection[tuple], Collection[tuple]]:
        """Make the content ``new``; return (added, removed), new sets: set
        differences run in C, about three times faster than scanning both sides."""
        old = self.tuples
        if type(new) is not set and type(new) is not frozenset:
            new = set(new)
        added = new - old
        removed = old - new
        # (each side is exact: the checks of ``discard_many`` and ``add_many``, a second
        # intersection and difference, are not needed)
        self.discard_present(removed)
        self.add_absent(added)
        return added, removed

    def _changed(self, changed: set[tuple], undone: set[tuple], done: set[tuple],
                 maintainer: Callable[[Cols], Callable[[dict, Iterable[tuple]], None]]) -> None:
        """The journal and the indexes after ``changed`` entered or left ``tuples``."""
        if self.journaled:
            self._journal(changed, undone, done)
        for cols, (_, idx) in self._indexes.items():
            maintainer(cols)(idx, changed)

    def __getstate__(self) -> tuple[list[tuple], bool]:
        # Indexes are caches: checkpoints store only the tuples.
        return list(self.tuples), self.journaled

    def __setstate__(self, state: tuple[list[tuple], bool]) -> None:
        self.tuples = set(state[0])
        self._indexes = {}
        self.journaled = state[1]
        self.plus = set()
        self.minus = set()
        self._removed = None
        self.watch = None
