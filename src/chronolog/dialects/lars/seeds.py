"""How the reasoner of a stratum an upgrade adds starts from ``T − reach``, not from the start.

In a LARS fleet of one service per stratum, an upgrade that adds strata past the running
program's last has ``up``'s supervisor start their reasoners.  Such a reasoner needs the
input over ``[T − reach, now]`` only (``plan_back``: the new program's longest window), but
the lower strata's records are diffs against the time point before, so it could not read
their topics from the middle.  Instead, every reasoner below the added strata sends a
**seed** on its own topic when it applies the upgrade: its content over ``[T − reach − 1,
now]`` as it has sent it (the latest point it sent at or before ``T − reach − 1`` first, the
base of the diffs that follow), and the lowest one, which keeps every input fact, also its
log over ``[T − reach, now]`` as the grounded records before the upgrade record left it.  The
added reasoner drops a lower stratum's records before that stratum's seed, holds what
follows the upgrade record and the seeds until every seed is in, then starts from them
exactly as if it had read everything (``ReasonerStage._joined``) — the upgrade, the seeds and
the barrier that ends them are in one epoch, so its first stored state is a whole one and
exactly-once is the fleet's usual (docs/fleet/exactly-once.md).  Nothing is seeded where the
new program reads all earlier input (a window without bound, an ``@``-head dating anywhere
back, a tuple window): the added reasoner then reads its topics from the start
(docs/fleet/upgrade.md).
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

import msgspec

from chronolog.dialects.lars.engine.content import NOTHING, Content, changed, difference
from chronolog.dialects.lars.facts import atoms_data, atoms_from, facts_data, facts_from
from chronolog.dialects.lars.plan import Plan, plan_back

SEED_KEY = b'{"seed":'
CHUNK = 256  # log entries or time points per seed record (a record stays well under a broker's limit)

_json = msgspec.json.Encoder().encode


def seeded(old: Plan, new: Plan) -> bool:
    """Whether an upgrade from ``old`` to ``new`` seeds the strata it adds: it adds strata
    and the new program's answers read a bounded span of input (``plan_back``)."""
    return new.fleet_strata > old.fleet_strata and plan_back(new) is not None


def joins(old: Plan, new: Plan, stratum: int, versions: bool) -> bool:
    """Whether the reasoner of 0-based ``stratum`` starts from the seeds: the upgrade adds its
    stratum and it has evaluated none of its own (no program version of it: a stratum removed
    earlier, whose reasoner stayed, has read everything and goes on from its state)."""
    return seeded(old, new) and old.fleet_strata <= stratum < new.fleet_strata and not versions


def sends(old: Plan, new: Plan, stratum: int) -> bool:
    """Whether the reasoner of 0-based ``stratum`` sends a seed: a stratum the upgrade adds
    lies above it."""
    return seeded(old, new) and stratum < new.fleet_strata - 1


def seed_from(new: Plan, t1: int, at: int) -> int:
    """The first time point an added stratum's new version reads: its warm-up before ``at``."""
    back = plan_back(new)
    assert back is not None
    return max(t1, at - 1 - back)


def log_part(log: Mapping[int, list], first: int) -> list[list]:
    """The lowest reasoner's log from ``first`` on, as seed data (a copy: it goes on)."""
    return [[t, facts_data(log[t])] for t in sorted(log) if t >= first]


def seed_records(rid: str, sent: Mapping[int, Content], sent_ok: Mapping[int, bool], first: int | None,
                 base: dict[str, Any]) -> list[bytes]:
    """A reasoner's seed: the content it has sent from the latest point at or before
    ``first - 1`` on, each point as a diff against the one before in the seed, the first
    whole; ``base``: the lowest reasoner's log and times (else empty).  ``first`` None: the
    reasoner had read no input when the upgrade came, so all it has sent since (this flush
    evaluated the input that followed the upgrade record) — every point of it, which the
    added reasoner, dropping the records before the seed, has nowhere else."""
    points: list[list] = []
    if sent:
        keys = sorted(sent)
        start = keys[0] if first is None else max((t for t in keys if t <= first - 1), default=keys[0])
        prev: Content = NOTHING
        for t in keys:
            if t < start:
                continue
            add, drop, _ = difference(sent[t], prev)
            points.append([t, sent_ok.get(t, True), atoms_data(add), atoms_data(drop)])
            prev = sent[t]
    log = base.get("log", [])
    scalars = {k: v for k, v in base.items() if k != "log"}
    records = []
    items = [("log", x) for x in log] + [("points", x) for x in points]
    for i in range(0, max(1, len(items)), CHUNK):
        part = items[i:i + CHUNK]
        rec: dict[str, Any] = {"seed": rid, "log": [x for k, x in part if k == "log"],
                               "points": [x for k, x in part if k == "points"]}
        if i + CHUNK >= len(items):
            rec.update(scalars, end=True)
        records.append(_json(rec))
    return records


class Seed:
    """A lower stratum's seed as its records come (``add``), then what it holds."""

    def __init__(self) -> None:
        self.log: list[list] = []
        self.points: list[list] = []
        self.scalars: dict[str, Any] = {}
        self.ended = False

    def add(self, rec: dict[str, Any]) -> None:
        self.log += rec.get("log", [])
        self.points += rec.get("points", [])
        if rec.get("end"):
            self.scalars = {k: v for k, v in rec.items() if k not in ("seed", "log", "points", "end")}
            self.ended = True

    def content(self) -> list[tuple[int, bool, Content]]:
        """Each point's content, whole."""
        out = []
        prev: Content = NOTHING
        for t, ok, add, drop in self.points:
            prev = changed(prev, atoms_from(add), atoms_from(drop))
            out.append((int(t), bool(ok), prev))
        return out

    def facts(self) -> list[tuple[int, list]]:
        return [(int(t), facts_from(f)) for t, f in self.log]

    def export(self) -> dict[str, Any]:
        return {"log": self.log, "points": self.points, "scalars": self.scalars, "ended": self.ended}

    @staticmethod
    def restore(data: dict[str, Any]) -> Seed:
        got = Seed()
        got.log, got.points, got.scalars, got.ended = data["log"], data["points"], data["scalars"], data["ended"]
        return got
