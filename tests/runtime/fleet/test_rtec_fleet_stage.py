"""RTEC hosted by the fleet's generic stage (``runtime/hosting.EvaluatorStage``): input
records in random batches, late records, idle flushes and restarts from the stored state
mean what ``chronolog run --until <latest>`` prints (the same evaluator, in arrival order)."""

from __future__ import annotations

import io
import json
import random

import pytest
from test_rtec import SDF, SIMPLE, _sdf_stream, _stream, meaning, program

from chronolog.core.events import event_json
from chronolog.dialects.rtec.evaluator import RtecEvaluator
from chronolog.runtime.embedded import run_evaluator
from chronolog.runtime.fleet.hosting import EvaluatorStage, HostedPlan, hosting
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

    host = hosting("rtec", program(text))

    def fresh() -> EvaluatorStage:
        return EvaluatorStage(host.make(program(text)), host.read, idle_flush=5.0)

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


def test_the_fleet_plans_an_rtec_program_as_one_hosted_chain() -> None:
    plan = HostedPlan(program(SIMPLE))
    assert plan.dialect == "rtec" and plan.strata == [[]]
