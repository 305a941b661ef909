"""Aligned epochs: which consumed records belong to which epoch of the fleet.

Step 2 of docs/design/one-transaction.md.  The
head of the pipeline ends an epoch by writing a barrier record into every
partition it feeds; each service forwards it once it has it from every input
partition it reads.  Between two barriers a service must see exactly the
records that came before barrier *e* on every input, so an input that
delivered barrier *e* first is held until the others have it too (Flink's
aligned checkpoints, Carbone et al. 2015).  This class is that bookkeeping,
without Kafka: the service offers each consumed record with the barrier it
carries (None for data) and gets back, in order, the records to process now
and the epochs completed, and holds the rest.
"""

from __future__ import annotations

from collections.abc import Hashable, Iterable
from dataclasses import dataclass, field
from typing import Any

import orjson

BARRIER_KEY = b'{"barrier":'


def barrier_of(value: bytes | None) -> int | None:
    """The epoch a barrier record ends, or None for any other record."""
    if value is None or not value.startswith(BARRIER_KEY):
        return None
    got = orjson.loads(value)["barrier"]
    if not isinstance(got, int) or isinstance(got, bool) or got < 0:
        raise ValueError(f"a barrier's epoch must be a natural number, not {got!r}")
    return got


def barrier_record(epoch: int) -> bytes:
    return orjson.dumps({"barrier": epoch})


def committed_record(epoch: int, partition: int) -> tuple[bytes, bytes]:
    """Key and value of output partition ``partition``'s record on the control
    topic: it has committed every epoch up to ``epoch`` (compacted: the newest
    per output partition stays)."""
    return f"output-{partition}".encode(), orjson.dumps({"committed": epoch, "partition": partition})


@dataclass(frozen=True, slots=True)
class Deliver:
    """A record consumed now: data to process, or (``barrier`` set) a barrier
    passed, which only moves the input's position."""

    source: Hashable
    item: Any
    barrier: int | None = None


@dataclass(frozen=True, slots=True)
class Completed:
    """Every input has delivered barrier ``epoch``: the state now is the epoch's."""

    epoch: int


@dataclass
class Alignment:
    """Barrier alignment over a fixed set of input partitions (``sources``).

    ``epoch`` is the last epoch completed on every input (-1: none yet, or the
    epoch a restored state belongs to).  A barrier for an epoch already
    completed is a repeat and dropped; one that skips an epoch is an error
    (the head writes every epoch's barrier to every partition)."""

    sources: Iterable[Hashable]
    epoch: int = -1
    seen: dict[Hashable, int] | None = None  # each input's last barrier passed (a restored state)
    _seen: dict[Hashable, int] = field(init=False)
    _held: dict[Hashable, list[tuple[Any, int | None]]] = field(init=False)

    def __post_init__(self) -> None:
        self.sources = tuple(self.sources)
        if not self.sources:
            raise ValueError("an alignment needs at least one input")
        self._seen = {s: max(self.epoch, (self.seen or {}).get(s, self.epoch)) for s in self.sources}
        if any(seen > self.epoch + 1 for seen in self._seen.values()):
            raise ValueError(f"an input is more than one barrier past epoch {self.epoch}")
        self._held = {s: [] for s in self.sources}

    def passed(self) -> dict[Hashable, int]:
        """Each input's last barrier passed: with ``epoch``, what a commit stores
        (the held records are not consumed: they are read again after a restart)."""
        return dict(self._seen)

    def offer(self, source: Hashable, item: Any, barrier: int | None = None) -> list[Deliver | Completed]:
        """One consumed record of ``source`` (a barrier if ``barrier`` is set): what follows from it."""
        if source not in self._held:
            raise KeyError(f"not an input of this alignment: {source!r}")
        out: list[Deliver | Completed] = []
        self._offer(source, item, barrier, out)
        return out

    def held(self) -> int:
        """Records held back (a service pauses an input whose backlog grows)."""
        return sum(len(items) for items in self._held.values())

    def waiting(self) -> bool:
        """Whether some input is ahead of the others (its records are being held)."""
        return any(seen > self.epoch for seen in self._seen.values())

    def paused(self, source: Hashable) -> bool:
        """Whether ``source`` is ahead of the others (its records are held)."""
        return self._seen[source] > self.epoch

    def _offer(self, source: Hashable, item: Any, barrier: int | None, out: list[Deliver | Completed]) -> None:
        if self._seen[source] > self.epoch:  # ahead of the others: keep its order
            self._held[source].append((item, barrier))
            return
        if barrier is None:
            out.append(Deliver(source, item))
            return
        if barrier <= self.epoch:
            out.append(Deliver(source, item, barrier))  # a repeat of a completed epoch: passed over
            return
        if barrier != self.epoch + 1:
            raise ValueError(f"input {source!r} skipped from epoch {self.epoch} to barrier {barrier}")
        self._seen[source] = barrier
        out.append(Deliver(source, item, barrier))
        if all(seen > self.epoch for seen in self._seen.values()):
            self.epoch += 1
            out.append(Completed(self.epoch))
            for src in self.sources:  # release what waited, in each input's order
                pending, self._held[src] = self._held[src], []
                for held_item, held_barrier in pending:
                    self._offer(src, held_item, held_barrier, out)
