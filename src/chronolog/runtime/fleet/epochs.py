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

from collections.abc import Hashable, Iterable, Mapping
from dataclasses import dataclass, field
from typing import Any, cast

import orjson

BARRIER_KEY = b'{"barrier":'
REPLAY_KEY = b'{"replay":'


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


def replay_record(epoch: int) -> bytes:
    """What a relay writes first into each partition it feeds when it starts:
    it restored epoch ``epoch`` and sends again what follows.  A reader drops
    the records of the epoch it was in the middle of (the relay's predecessor
    wrote them, maybe not all) and the repeats that follow (``Alignment``)."""
    return orjson.dumps({"replay": epoch})


def is_replay(value: bytes | None) -> bool:
    return value is not None and value.startswith(REPLAY_KEY)


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
    skip: bool = False  # a gated input's record dropped as a repeat: its position only


@dataclass(frozen=True, slots=True)
class Completed:
    """Every input has delivered barrier ``epoch``: the state now is the epoch's."""

    epoch: int


@dataclass
class Alignment:
    """Barrier alignment over a fixed set of input partitions (``sources``).

    ``epoch`` is the last epoch completed on every input (-1: none yet, or the
    epoch a restored state belongs to).  An input ``seen`` at an earlier epoch
    joined the state later (the topic of a stratum an upgrade added): its barriers
    up to ``epoch`` pass with their records, unaligned, until it reaches the
    others; where its first barrier is past ``epoch + 1`` (the added stratum's
    reasoner started at the upgrade's epoch: runtime/fleet/join_start.py), it is
    ahead of the others from there on, held until they catch up.  A barrier for an epoch already
    completed is a repeat and dropped; one that skips an epoch is an error
    (the head writes every epoch's barrier to every partition).

    ``gated`` inputs are written by relays (runtime/fleet/relay.py): producers
    without a transaction, which after a restart send again every epoch after
    the one they restored.  Their records wait at the gate until their
    epoch's barrier: a barrier already passed marks a repeat, and its records
    are dropped (``skip``); a replay record (``replay_record``) drops the
    records of the epoch under way, which the relay's predecessor may have
    written only in part.  What passes the gate is aligned as above."""

    sources: Iterable[Hashable]
    epoch: int = -1
    seen: Mapping[Hashable, int] | None = None  # each input's last barrier passed (a restored state)
    gated: Iterable[Hashable] = ()
    _seen: dict[Hashable, int] = field(init=False)
    _held: dict[Hashable, list[tuple[Any, int | None, bool]]] = field(init=False)
    _gate: dict[Hashable, list[Any]] = field(init=False)  # a gated input's records of the epoch under way
    _done: dict[Hashable, int] = field(init=False)  # a gated input's last barrier let through

    def __post_init__(self) -> None:
        self.sources = tuple(self.sources)
        if not self.sources:
            raise ValueError("an alignment needs at least one input")
        # (an input may be several barriers past ``epoch``: a joined one that came in ahead, below)
        self._seen = {s: (self.seen or {}).get(s, self.epoch) for s in self.sources}
        self._held = {s: [] for s in self.sources}
        self.gated = frozenset(self.gated)
        if not self.gated <= set(self.sources):
            raise ValueError("a gated input must be one of the inputs")
        self._gate = {s: [] for s in self.gated}
        self._done = {s: self._seen[s] for s in self.gated}

    def passed(self) -> dict[Hashable, int]:
        """Each input's last barrier passed: with ``epoch``, what a commit stores
        (the held records are not consumed: they are read again after a restart)."""
        return dict(self._seen)

    def offer(self, source: Hashable, item: Any, barrier: int | None = None,
              replay: bool = False) -> list[Deliver | Completed]:
        """One consumed record of ``source`` (a barrier if ``barrier`` is set, a
        relay's replay record if ``replay``): what follows from it."""
        if source not in self._held:
            raise KeyError(f"not an input of this alignment: {source!r}")
        out: list[Deliver | Completed] = []
        gate = self._gate.get(source)
        if gate is None:
            if replay:
                raise ValueError(f"input {source!r} is not written by a relay but has a replay record")
            self._offer(source, item, barrier, out)
        elif replay or barrier is not None and barrier <= self._done[source]:
            for dropped in gate:  # the epoch under way (replay) or a repeat of a passed one
                self._offer(source, dropped, None, out, True)
            gate.clear()
            self._offer(source, item, None, out, True)
        elif barrier is None:
            gate.append(item)
        else:
            self._done[source] = barrier
            for passing in gate:
                self._offer(source, passing, None, out)
            gate.clear()
            self._offer(source, item, barrier, out)
        return out

    def held(self) -> int:
        """Records held back (a service pauses an input whose backlog grows)."""
        return sum(len(items) for items in self._held.values()) + sum(len(g) for g in self._gate.values())

    def waiting(self) -> bool:
        """Whether some input is ahead of the others (its records are being held)."""
        return any(seen > self.epoch for seen in self._seen.values())

    def paused(self, source: Hashable) -> bool:
        """Whether ``source`` is ahead of the others (its records are held)."""
        return self._seen[source] > self.epoch

    def _offer(self, source: Hashable, item: Any, barrier: int | None, out: list[Deliver | Completed],
               skip: bool = False) -> None:
        if self._seen[source] > self.epoch:  # ahead of the others: keep its order
            self._held[source].append((item, barrier, skip))
            return
        if barrier is None:
            out.append(Deliver(source, item, None, skip))
            return
        if barrier <= self.epoch:  # a repeat of a completed epoch, or a joined input catching up: passed over
            self._seen[source] = max(self._seen[source], barrier)
            out.append(Deliver(source, item, barrier))
            return
        if barrier != self.epoch + 1 and self._seen[source] >= 0:
            raise ValueError(f"input {source!r} skipped from epoch {self.epoch} to barrier {barrier}")
        # (an input that joined with no barrier passed yet, whose first one is ahead of the others:
        # the topic of a stratum an upgrade added, its reasoner started at that epoch (its earlier
        # ones are empty for it): held from here until the others catch up)
        self._seen[source] = barrier
        out.append(Deliver(source, item, barrier))
        if all(seen > self.epoch for seen in self._seen.values()):
            self.epoch += 1
            out.append(Completed(self.epoch))
            for src in self.sources:  # release what waited, in each input's order
                pending, self._held[src] = self._held[src], []
                for held_item, held_barrier, held_skip in pending:
                    self._offer(src, held_item, held_barrier, out, held_skip)


def epoch_offsets(epoch: int, alignment: Alignment | None) -> dict[str, int]:
    """The epoch and each input's last barrier, stored beside the input offsets
    of a snapshot (``@`` keys), so a restart resumes the alignment where the
    commit left it (records held back are read again)."""
    got = {"@epoch": epoch}
    if alignment is not None:
        for source, e in alignment.passed().items():
            t, p = cast(tuple[str, int], source)  # (a service's sources are (topic, partition))
            got[f"@barrier:{t}:{p}"] = e
    return got


def epoch_state(offsets: dict, inputs: list[tuple[str, int]]) -> tuple[int, dict[tuple[str, int], int]]:
    """``epoch_offsets`` read back (a snapshot from before epochs: epoch -1)."""
    passed = {tp: int(offsets[f"@barrier:{tp[0]}:{tp[1]}"]) for tp in inputs
              if f"@barrier:{tp[0]}:{tp[1]}" in offsets}
    return int(offsets.get("@epoch", -1)), passed


class Skipped:
    """A consumed record dropped at the gate: the loop only moves its input's
    position past it."""

    __slots__ = ("msg",)

    def __init__(self, msg: Any) -> None:
        self.msg = msg

    def error(self) -> None:
        return None

    def topic(self) -> str:
        return self.msg.topic()

    def partition(self) -> int:
        return self.msg.partition()

    def offset(self) -> int:
        return self.msg.offset()

    def timestamp(self) -> tuple[int, int]:
        return 0, 0


def cut(msgs: list, alignment: Alignment | None, gated: list) -> list[tuple[list, int | None]]:
    """A consumed batch (confluent-kafka messages) cut where an epoch completes:
    (records, the epoch they complete or None), records of an input already past
    the open epoch's barrier held back, repeats a relay sent again as ``Skipped``.
    Barriers stay in the records, to move their input's position; the stage
    never sees them.  ``alignment``: None at the head (nothing to align);
    ``gated``: the inputs written by relays."""
    if alignment is None or not gated and not alignment.waiting() and not any(
            (v := m.value()) is not None and v.startswith(BARRIER_KEY) for m in msgs):
        return [(msgs, None)]  # the usual batch: no barrier in it, no input held
    out: list[tuple[list, int | None]] = []
    chunk: list = []
    offer = alignment.offer
    for msg in msgs:
        if msg.error():
            chunk.append(msg)
            continue
        value = msg.value()
        for got in offer((msg.topic(), msg.partition()), msg, barrier_of(value), is_replay(value)):
            if isinstance(got, Completed):
                out.append((chunk, got.epoch))
                chunk = []
            else:
                chunk.append(Skipped(got.item) if got.skip else got.item)
    out.append((chunk, None))
    return out
