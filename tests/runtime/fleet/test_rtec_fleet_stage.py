"""RTEC hosted by the fleet's generic stage (``chronolog.stages.evaluator.EvaluatorStage``): input
records in random batches, late records, idle flushes and restarts from the stored state
mean what ``chronolog run --until <latest>`` prints (the same evaluator, in arrival order)."""

from __future__ import annotations

import io
import json
import random

import pytest
from test_rtec import SDF, SIMPLE, _sdf_stream, _stream, meaning, program

from chronolog.core.events import event_json
from chronolog.dialects.registry import RunOptions, lookup
from chronolog.dialects.rtec.evaluator import RtecEvaluator
from chronolog.runtime.embedded import run_evaluator
from chronolog.runtime.fleet.config import ServiceConfig, make_stage
from chronolog.runtime.fleet.topology import build_topology
from chronolog.stages.evaluator import EvaluatorStage
from chronolog.stages.interface import StageSpec
from chronolog.state.snapshots import roundtrip


@pytest.mark.parametrize("seed", range(8))
@pytest.mark.parametrize("which", ["simple", "sdf"])
def test_hosted_rtec_means_what_chronolog_run_prints(seed: int, which: str) -> None:
    rng = random.Random(seed)
    text = SIMPLE if which == "simple" else SDF
    events = _stream(seed) if which == "simple" else _sdf_stream(seed)
    for _ in range(4):  # some records arrive late
        i = rng.randrange(len(events))
        events.insert(min(len(events), i + rng.randint(1, 6)), events.pop(i))
    hi = max(e.t for e in events)
    out = io.StringIO()
    run_evaluator(RtecEvaluator(program(text)), events, out, until=hi)
    want = meaning([json.loads(x) for x in out.getvalue().splitlines()], horizon=300)

    def fresh() -> EvaluatorStage:  # what `chronolog up` builds for the chain service
        layout = lookup("rtec").layout(program(text), RunOptions())
        return layout.stage(StageSpec("chain", idle_flush=5.0))  # type: ignore[return-value]

    stage, lines, clock = fresh(), [], 0.0
    records = [("facts", "chronolog.facts", 0, i, event_json(e)) for i, e in enumerate(events)]
    while records:
        n = rng.randint(1, 4)
        batch, records = records[:n], records[n:]
        lines += stage.process(batch, now=clock)[1]
        clock += rng.choice([0.0, 1.0, 10.0])
        lines += stage.process([], now=clock)[1]
        if rng.random() < 0.3:
            stage = roundtrip(stage, fresh())
            stage.last_input = clock
    lines += stage.process([], now=clock + 100)[1]
    assert meaning([json.loads(x) for x in lines], horizon=300) == want


def test_the_fleet_lays_an_rtec_program_out_as_one_chain() -> None:
    """RTEC's layout: one stratum, only chained, no partition key; its one service is the chain
    hosting the evaluator, and any other role or partition is refused."""
    from chronolog.core.errors import ChronologError

    layout = lookup("rtec").layout(program(SIMPLE), RunOptions())
    assert layout.strata == ((),) and not layout.per_stratum and layout.partition_key is None
    topology = build_topology(layout, partitions=3)
    assert [s.name for s in topology.services] == ["chain"]
    assert isinstance(make_stage(ServiceConfig("chain", layout, "localhost:0")), EvaluatorStage)
    for role in ("ingest", "grounding", "output"):
        with pytest.raises(ChronologError, match="a rtec program runs as one chain service"):
            make_stage(ServiceConfig(role, layout, "localhost:0"))
    with pytest.raises(ChronologError, match="cannot be partitioned \\(the rtec evaluator is not split by key\\)"):
        make_stage(ServiceConfig("chain", layout, "localhost:0", partition=1, partitions=2))
