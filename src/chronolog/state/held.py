"""Journal entries held until their epoch is committed everywhere.

Step 3 of docs/design/one-transaction.md (not used by the services yet).  With
one transaction per path a service must be able to go back to the state of
epoch *E*, the last one every output committed, while it has already run
epochs past it.  Its journal entries live on a compacted changelog under their
own keys, so an entry written for a later epoch would replace the value epoch
*E* needs.  So a service writes an epoch's changed entries to the changelog
(and RocksDB) only once that epoch is committed everywhere, and until then
carries them in each epoch's snapshot.  Restoring epoch *E* is then the
durable entries, all of epochs at or below *E*, overlaid with the entries
snapshot *E* carried, oldest epoch first.

Entries are ``(key, body)``; a body of None deletes the key, as
``state.snapshots.journal_bytes`` writes them.
"""

from __future__ import annotations

from collections.abc import Hashable, Iterable, Mapping
from dataclasses import dataclass, field

Entries = dict[Hashable, bytes | None]


@dataclass
class HeldEntries:
    """The changed entries of the epochs not yet committed everywhere."""

    committed: int = -1  # the last epoch known committed everywhere
    _epochs: dict[int, Entries] = field(default_factory=dict)

    def end_epoch(self, epoch: int, changed: Iterable[tuple[Hashable, bytes | None]]) -> None:
        """The entries changed in ``epoch`` (its journals' ``take``), held."""
        if epoch <= self.committed or (self._epochs and epoch <= max(self._epochs)):
            raise ValueError(f"epoch {epoch} ended after epoch {max([self.committed, *self._epochs])}")
        got = dict(changed)
        if got:
            self._epochs[epoch] = got

    def carried(self) -> list[tuple[int, Entries]]:
        """What the next snapshot carries: every held epoch's entries, oldest first."""
        return sorted(self._epochs.items())

    def commit(self, epoch: int) -> Entries:
        """``epoch`` is committed everywhere: the entries to write durably now
        (the newest value of each key over the epochs up to ``epoch``), no
        longer held.  A commit at or below one already known writes nothing."""
        out: Entries = {}
        if epoch <= self.committed:
            return out
        for e in sorted(e for e in self._epochs if e <= epoch):
            out.update(self._epochs.pop(e))
        self.committed = epoch
        return out


def restore(durable: Mapping[Hashable, bytes], carried: Iterable[tuple[int, Entries]], epoch: int) -> dict:
    """The journal entries of ``epoch``: the ``durable`` ones (written only for
    committed epochs, so none past ``epoch``) overlaid with what snapshot
    ``epoch`` carried, oldest epoch first; deleted keys left out."""
    out = dict(durable)
    for e, entries in sorted(carried, key=lambda item: item[0]):
        if e > epoch:
            raise ValueError(f"snapshot of epoch {epoch} carries entries of epoch {e}")
        for key, body in entries.items():
            if body is None:
                out.pop(key, None)
            else:
                out[key] = body
    return out
