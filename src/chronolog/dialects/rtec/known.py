"""The statically determined instances computed since time 0, indexed by fluent key.

An ungrounded fluent derived over the whole history (``RtecEvaluator._whole_past``) looks up
the known instances of its own key every window; a flat set made that a scan of every known
instance of every fluent per call."""

from __future__ import annotations

from collections.abc import Iterable, Iterator
from typing import Any


class KnownInstances:
    """A set of ``(key, args, value)`` with the members of one key at hand (``of``)."""

    def __init__(self, items: Iterable[tuple] = ()) -> None:
        self._by_key: dict[Any, set[tuple]] = {}
        self.update(items)

    def add(self, ident: tuple) -> None:
        self._by_key.setdefault(ident[0], set()).add(ident)

    def update(self, items: Iterable[tuple]) -> None:
        for ident in items:
            self.add(ident)

    def discard(self, ident: tuple) -> None:
        got = self._by_key.get(ident[0])
        if got is not None:
            got.discard(ident)
            if not got:
                del self._by_key[ident[0]]

    def of(self, key: Any) -> set[tuple]:
        """The known instances of ``key`` (a copy: callers discard while they walk it)."""
        return set(self._by_key.get(key, ()))

    def __contains__(self, ident: object) -> bool:
        return type(ident) is tuple and bool(ident) and ident in self._by_key.get(ident[0], ())

    def __iter__(self) -> Iterator[tuple]:
        for members in self._by_key.values():
            yield from members

    def __len__(self) -> int:
        return sum(len(m) for m in self._by_key.values())

    def __eq__(self, other: object) -> bool:
        if isinstance(other, KnownInstances):
            return set(self) == set(other)
        if isinstance(other, (set, frozenset)):
            return set(self) == other
        return NotImplemented

    __hash__ = None  # type: ignore[assignment]  # mutable
