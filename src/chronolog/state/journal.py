"""Dicts that remember their changes, so state snapshots can be incremental.

The growing parts of a service's state (the input log per time point, the
lower strata's content per time point, what was sent per time point) are
``Journal``s.  A service writes only their changed entries to RocksDB and to
the changelog topic in each transaction (as explicit data, ``chronolog.state``),
and the rest of its state as a snapshot without them, so a commit costs what
changed, not the length of the stream.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

DELETED = object()

# How each journal's entries are written as data and read back, by the
# journal's name without its stratum number (lower0 -> lower): (to data, from
# data).  Filled by the stages that keep journals (``register_journal_codecs``,
# dialects/lars/stages.py), so that state/ imports no dialect and no runtime.
JOURNAL_CODECS: dict[str, tuple[Callable[[Any], Any], Callable[[Any], Any]]] = {}


def register_journal_codecs(codecs: dict[str, tuple[Callable[[Any], Any], Callable[[Any], Any]]]) -> None:
    JOURNAL_CODECS.update(codecs)


def journal_codec(name: str) -> tuple[Callable[[Any], Any], Callable[[Any], Any]]:
    """(to data, from data) for the entries of the journal ``name``."""
    codec = JOURNAL_CODECS.get(name.rstrip("0123456789") if "_" not in name else
                               name.split("_")[0].rstrip("0123456789") + "_" + name.split("_", 1)[1])
    if codec is None:
        raise ValueError(f"unknown journal {name!r}")
    return codec


class Journal(dict):
    """A dict that, once ``track()``-ed, records which keys were set, deleted or
    touched since ``take``.  Untracked (embedded mode) it records nothing, so
    nothing grows with the stream."""

    def __init__(self, *args: Any, **kw: Any) -> None:
        super().__init__(*args, **kw)
        self.changed: set | None = None

    def track(self) -> None:
        if self.changed is None:
            self.changed = set()

    def __setitem__(self, key: Any, value: Any) -> None:
        super().__setitem__(key, value)
        if self.changed is not None:
            self.changed.add(key)

    def __delitem__(self, key: Any) -> None:
        super().__delitem__(key)
        if self.changed is not None:
            self.changed.add(key)

    def setdefault(self, key: Any, default: Any = None) -> Any:
        if self.changed is not None:
            self.changed.add(key)  # callers mutate the value in place
        return super().setdefault(key, default)

    def pop(self, key: Any, *default: Any) -> Any:
        if self.changed is not None:
            self.changed.add(key)
        return super().pop(key, *default)

    def touch(self, key: Any) -> None:
        """Mark an entry whose value was changed in place."""
        if self.changed is not None:
            self.changed.add(key)

    def take(self) -> list[tuple[Any, Any]]:
        """The changed entries (value, or DELETED) since the last call."""
        if self.changed is None:
            raise RuntimeError("take() on an untracked journal")
        out = [(k, dict.get(self, k, DELETED)) for k in self.changed]
        self.changed = set()
        return out
