"""When a fleet service commits: adaptive batching of its transactions.

A service commits whatever it has consumed and produced in ONE transaction
(runtime/fleet/commit.py); this decides when.  Light traffic: as soon as
something a downstream service can use is held, so each hop adds little.
Heavy traffic: the batches grow by themselves, because the consumer has
fetched more while the last commit ran.  Three waits bound the number of
transactions, which is what the bundled broker pays for (each leaves two
objects per partition that it lists on every fetch: docs/benchmarks.md#fleet):

* ``gap``: the least time between the starts of two transactions; records
  a downstream service can use wait at most that long (only ingest has one
  by default: the head of the pipeline sets the pace, the services after it
  follow in step, runtime/fleet/config.py ``commit_gap_for``).  A service with a
  gap also keeps at least ``pace`` times its recent mean commit time between
  starts: when the broker or the machine is busy, commits slow down for
  every service, and the head of the pipeline then commits less often
  instead of queueing more work behind them (on a quiet machine a commit
  takes a few ms and the gap rules).  It stretches to ``ceiling`` gaps at
  most, and one very slow commit counts as that long, so a broker's hiccup
  slows the pace for some ten commits, not for seconds;
* ``hold``: records nothing downstream can use yet (ingest's facts of the
  still open time point: nothing closes before the next time marker) ride
  with the next urgent ones, at the latest after ``hold``;
* ``interval``: a batch that only moved state (no output) is committed with
  a later one, at the latest after ``interval``.

A record marked ``prompt`` (an upgrade request) is committed at once, whatever
the gap: upgrades are rare, and ``chronolog upgrade`` waits for them.

Whatever waits, the consumed offsets, the state and the outputs still
commit together, so exactly-once is the same as with one transaction per
batch: a batch's outputs are never visible before its state and offsets are
committed, and a crash loses the held outputs along with the uncommitted
state, both made again from the last committed offsets.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Generic, Protocol, TypeVar


class Held(Protocol):
    """What batching reads of a record it holds (``stages.interface.Out``, or a
    benchmark's own record type): typed so a record type lacking a field fails
    mypy instead of a running service."""

    @property
    def urgent(self) -> bool: ...

    @property
    def prompt(self) -> bool: ...


H = TypeVar("H", bound=Held)


@dataclass
class Batching(Generic[H]):
    gap: float = 0.0
    hold: float = 0.05
    interval: float = 0.5
    held: list[H] = field(default_factory=list)  # records (stages.Out) for the next transaction
    lines: list[bytes] = field(default_factory=list)  # answer lines for it
    urgent: bool = False  # something held lets a downstream service make progress
    prompt: bool = False  # something held is to be committed at once (Out.prompt)
    held_since: float = 0.0  # when the oldest held record that is not urgent was made
    consumed: bool = False  # records consumed since the last commit
    began: float = 0.0  # start of the last transaction
    last_commit: float = 0.0  # end of the last transaction
    pace: float = 3.0  # a gap is at least this many recent mean commit times
    ceiling: float = 5.0  # ... and at most this many gaps
    commit_mean: float = 0.0  # moving mean of the commit time (start to end of a transaction)

    def add(self, outs: list[H], lines: list[bytes], consumed: bool, now: float) -> None:
        """One processed batch: what it produced and whether it consumed anything."""
        self.consumed = self.consumed or consumed
        if not outs and not lines:
            return
        self.held += outs
        self.lines += lines
        if any(o.prompt for o in outs):
            self.prompt = self.urgent = True
        if self.urgent:
            return
        if lines or any(o.urgent for o in outs):
            self.urgent = True
        elif not self.held_since:
            self.held_since = now

    def due(self, now: float, stopping: bool = False) -> bool:
        """Whether to commit now."""
        if stopping:
            return self.consumed or bool(self.held) or bool(self.lines)
        return (self.prompt or (self.urgent and now - self.began >= self.least_gap())
                or (bool(self.held_since) and now - self.held_since >= self.hold)
                or (self.consumed and now - self.last_commit >= self.interval))

    def wait(self, poll: float, now: float) -> float:
        """How long the next poll may block: less when only the gap keeps an urgent commit."""
        if self.prompt:
            return 0.0
        if self.urgent:
            return max(0.0, min(poll, self.began + self.least_gap() - now))
        return poll

    def take(self, now: float) -> tuple[list[H], list[bytes]]:
        """The records and lines of the transaction starting now; nothing is held after."""
        outs, lines = self.held, self.lines
        self.held, self.lines = [], []
        self.urgent, self.prompt, self.held_since, self.consumed = False, False, 0.0, False
        self.began = now
        return outs, lines

    def least_gap(self) -> float:
        """The gap, stretched to ``pace`` mean commit times when commits are slow
        (at most ``ceiling`` gaps: ``committed`` caps each commit time it counts)."""
        return max(self.gap, self.pace * self.commit_mean) if self.gap else 0.0

    def committed(self, now: float) -> None:
        took = max(0.0, now - self.began)
        # counted at most ceiling * gap / pace, so pace * mean never exceeds
        # ceiling * gap: one very slow commit stretches the gap to the ceiling
        if self.gap:
            took = min(took, self.ceiling * self.gap / self.pace)
        self.commit_mean = 0.8 * self.commit_mean + 0.2 * took if self.commit_mean else took
        self.last_commit = now
