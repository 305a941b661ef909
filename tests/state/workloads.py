"""Small deterministic workloads for every kind of stored stage state.

``tests/state/fixtures/make_v1.py`` ran them on the code of main at 81b0828
(state format 1: ``{"format": 1, "kind": <class name>, "stage": ...}``) and
stored each stage's snapshot and journal entries after the first half of its
records; ``test_schema.py`` restores those bytes through the migrations and
checks the stage means what one that never stopped means.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import orjson

from chronolog.core.events import Event, event_json
from chronolog.dialects.lars.parser import parse_lars
from chronolog.dialects.lars.partition import partition_key
from chronolog.dialects.lars.plan import plan_program
from chronolog.dialects.lars.stages import ChainStage, GroundingStage, OutputStage, ReasonerStage
from chronolog.stages.ingest import IngestStage

LARS = """\
slow(R) :- speed(R, V) [3], V < 30.
congested(R) :- slow_now(R) always [2].
slow_now(R) at T :- speed(R, V) at T [2], V < 30.
clear(R) :- road(R), not slow(R).
road(a1). road(b2).
"""
HEAT = "Alarm(X):-Boxminus[0,2]Hot(X)\n"
DOORS = """\
initiatedAt(open(D)=true, T) :- happensAt(opened(D), T).
terminatedAt(open(D)=true, T) :- happensAt(closed(D), T).
door(d1). door(d2).
grounding(open(D)=true) :- door(D).
"""


def lars_events() -> list[Event]:
    out = []
    for t in range(40):
        for road, speed in (("a1", 20 + (t * 7) % 25), ("b2", 25 + (t * 3) % 20)):
            out.append(Event(t, "speed", (road, speed)))
    out.insert(30, Event(3, "speed", ("b2", 5)))  # delayed
    out.insert(50, Event(10, "speed", ("a1", 20 + (10 * 7) % 25), True))  # a retraction
    return out


def heat_lines() -> list[bytes]:
    out = []
    for t in range(0, 60, 2):
        out.append(orjson.dumps({"interval": f"[{t},{t + 3}]", "pred": "Hot", "args": [f"s{t % 3}"]}))
    out.insert(10, orjson.dumps({"interval": "[1,2]", "pred": "Hot", "args": ["s9"]}))  # delayed
    out.append(orjson.dumps({"t": 70}))
    return out


def door_lines() -> list[bytes]:
    out = []
    for t in range(0, 80, 3):
        d = "d1" if t % 2 else "d2"
        out.append(event_json(Event(t, "opened" if t % 4 < 2 else "closed", (d,))))
    out.insert(12, event_json(Event(5, "opened", ("d1",))))  # delayed
    return out


def _records(lines: list[bytes]) -> list[tuple]:
    return [("facts", "chronolog.facts", 0, i, v) for i, v in enumerate(lines)]


class Pipeline:
    """The per-stratum stages of one partition fed in a fixed order (no broker):
    ingest, grounding, each reasoner, output; ``stages`` by stable kind."""

    def __init__(self) -> None:
        plan = plan_program(parse_lars(LARS))
        key, _ = partition_key(plan)
        self.strata = plan.fleet_strata
        self.stages: dict[str, Any] = {
            "ingest": IngestStage(key, 1),
            "grounding": GroundingStage(idle_flush=None),
            **{f"reasoner{k}": ReasonerStage(plan, k) for k in range(self.strata)},
            "output": OutputStage(plan, self.strata),
        }
        self.offset = 0
        self.answers: list[bytes] = []

    def feed(self, events: list[Event]) -> None:
        s = self.stages
        recs = []
        for ev in events:
            recs.append(("facts", "chronolog.facts", 0, self.offset, event_json(ev)))
            self.offset += 1
        ingested = [o.value for o in s["ingest"].process(recs, now=0.0)[0] if o.topic == "ingested"]
        grounded = [o.value for o in s["grounding"].process(
            [("ingested", "i", 0, i, v) for i, v in enumerate(ingested)], now=0.0)[0]]
        strata: list[tuple[str, bytes]] = []
        for k in range(self.strata):
            inputs = [("grounded", "g", 0, i, v) for i, v in enumerate(grounded)]
            inputs += [(role, "s", 0, i, v) for i, (role, v) in enumerate(strata)]
            outs = s[f"reasoner{k}"].process(inputs, now=0.0)[0]
            strata += [(f"stratum.{k + 1}", o.value) for o in outs]
        self.answers += s["output"].process([(role, "s", 0, i, v) for i, (role, v) in enumerate(strata)])[1]

    def close(self) -> None:
        """Ingest's idle record closes the latest point (as in the fleet)."""
        self.feed([])
        grounded = [o.value for o in self.stages["grounding"].handle({"idle": True})]
        strata: list[tuple[str, bytes]] = []
        for k in range(self.strata):
            inputs = [("grounded", "g", 0, i, v) for i, v in enumerate(grounded)]
            inputs += [(role, "s", 0, i, v) for i, (role, v) in enumerate(strata)]
            strata += [(f"stratum.{k + 1}", o.value) for o in self.stages[f"reasoner{k}"].process(inputs)[0]]
        self.answers += self.stages["output"].process([(role, "s", 0, i, v) for i, (role, v) in enumerate(strata)])[1]


def chain() -> ChainStage:
    plan = plan_program(parse_lars(LARS))
    key, _ = partition_key(plan)
    return ChainStage(plan, IngestStage(key, 1), idle_flush=5.0)


def _chain(program: Any) -> Any:
    """The chain service's stage of a dialect without strata, as ``chronolog up`` builds it."""
    from chronolog.dialects.registry import RunOptions, lookup
    from chronolog.stages.interface import StageSpec

    return lookup(program.dialect).layout(program, RunOptions()).stage(StageSpec("chain", idle_flush=5.0))


def mtl_stage() -> Any:
    from chronolog.dialects.mtl.parser import parse_mtl

    return _chain(parse_mtl(HEAT))


def rtec_stage() -> Any:
    from chronolog.dialects.rtec.parser import finish_program, parse_rtec

    return _chain(finish_program(parse_rtec(DOORS, "doors.prolog")))


def drive(stage: Any, records: list[tuple], lines: list[bytes], clock: float = 0.0) -> None:
    """Feed ``records`` in batches of 3 on a fixed clock (a stage's idle flush never fires)."""
    for i in range(0, len(records), 3):
        lines += stage.process(records[i:i + 3], now=clock)[1]


# kind -> (fresh stage, its records); the halves split at ``len(records) // 2``
SINGLE: dict[str, tuple[Callable[[], Any], Callable[[], list[tuple]]]] = {
    "chain": (chain, lambda: _records([event_json(e) for e in lars_events()])),
    "mtl": (mtl_stage, lambda: _records(heat_lines())),
    "rtec": (rtec_stage, lambda: _records(door_lines())),
}
