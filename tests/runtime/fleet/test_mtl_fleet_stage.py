"""DatalogMTL hosted by the fleet's generic stage (``chronolog.stages.evaluator.EvaluatorStage``):
input records in random batches, idle flushes and restarts from the stored
state mean what ``chronolog run`` (the same evaluator driven in arrival
order to the end) means."""

from __future__ import annotations

import random
from fractions import Fraction as F

import orjson
import pytest
from test_mtl_semantics import clip, drive, iv, meaning, random_facts, random_program

from chronolog.core.events import Event
from chronolog.dialects.mtl.evaluator import MtlEvaluator, reach_retention
from chronolog.dialects.mtl.parser import interval_from_text, parse_mtl
from chronolog.dialects.registry import RunOptions, lookup
from chronolog.evaluator import Span, time_text
from chronolog.stages.evaluator import EvaluatorStage
from chronolog.stages.interface import StageSpec
from chronolog.state.snapshots import roundtrip


def changes_of(lines: list[bytes]) -> list:
    out = []
    for line in lines:
        rec = orjson.loads(line)
        if "interval" in rec:
            lo, lc, hi, hc = interval_from_text(rec["interval"])
            span = Span(lo, None if hi == float("inf") else hi, lc, hc)
        else:
            span = Span.point(F(rec["t"]))
        out.append((rec["pred"], tuple(rec["args"]), span, rec.get("diff", 1)))
    return out


@pytest.mark.parametrize("seed", range(25))
def test_hosted_mtl_means_what_chronolog_run_prints(seed):
    rng = random.Random(seed)
    text = random_program(rng)
    facts = random_facts(rng) + random_facts(rng)
    events = sorted((Event(iv(w)[0], p, a, False, None, iv(w)) for p, a, w in facts), key=lambda e: e.t)
    for _ in range(2):  # some facts arrive late
        i = rng.randrange(len(events))
        events.insert(min(len(events), i + rng.randint(1, 4)), events.pop(i))
    hi = max(max(e.t for e in events), max(e.span[2] for e in events))
    lines_in = [orjson.dumps({"interval": w, "pred": p, "args": list(a)}) for p, a, w in
                [(e.pred, e.args, Span(e.span[0], e.span[2], e.span[1], e.span[3]).text()) for e in events]]
    lines_in.append(orjson.dumps({"t": time_text(hi)}))
    # late events up to the program's reach back (`--retention W`), in run and in the stage
    bound = reach_retention(parse_mtl(text))
    run = MtlEvaluator(parse_mtl(text), "stream", retention=bound)
    want = clip(meaning(drive(run, events + [Event(hi)])), hi)

    def fresh() -> EvaluatorStage:  # what `chronolog up --retention W` builds for the chain service
        layout = lookup("mtl").layout(parse_mtl(text), RunOptions())
        return layout.stage(StageSpec("chain", retention=bound, idle_flush=5.0))  # type: ignore[return-value]

    stage, out, late, clock = fresh(), [], [], 0.0
    records = [("facts", "chronolog.facts", 0, i, v) for i, v in enumerate(lines_in)]
    while records:
        n = rng.randint(1, 3)
        batch, records = records[:n], records[n:]
        produced, lines = stage.process(batch, now=clock)
        out += lines
        late += [o.value for o in produced if o.topic == "late"]
        clock += rng.choice([0.0, 1.0, 10.0])
        out += stage.process([], now=clock)[1]  # the loop's idle call: sometimes the latest time early
        if rng.random() < 0.3:
            stage = roundtrip(stage, fresh())
            stage.last_input = clock  # a restart counts as input, on this test's clock
    out += stage.process([], now=clock + 100)[1]
    assert clip(meaning(changes_of(out)), hi) == want, text
    assert len(late) == run.too_late == stage.late_events  # what run ignores goes to the late topic
    assert all(record in lines_in for record in late)


def test_a_bad_line_is_a_dead_letter_and_the_stream_goes_on():
    layout = lookup("mtl").layout(parse_mtl("R(X):-Diamondminus[0,1]P(X)\n"), RunOptions())
    stage = layout.stage(StageSpec("chain", idle_flush=0.0))
    outs, lines = stage.process([("facts", "chronolog.facts", 0, 0, b'{"interval": "[1,2]", "pred": "P"'),
                                 ("facts", "chronolog.facts", 0, 1, b'{"interval": "[1,2]", "pred": "P", "args": ["a"]}')],
                                now=0.0)
    assert [o.topic for o in outs] == ["dlq"] and orjson.loads(outs[0].value)["offset"] == 0
    assert any(orjson.loads(x)["pred"] == "R" for x in lines)
    assert stage.progress()["dead_letters"] == 1


def test_a_hosted_evaluator_with_retention_ignores_older_events():
    from chronolog.runtime.fleet.config import ServiceConfig, make_stage

    layout = lookup("mtl").layout(parse_mtl("Q(X):-Diamondminus[0,1]P(X)\n"), RunOptions())  # what chronolog up builds
    stage = make_stage(ServiceConfig("chain", layout, "localhost:9092", retention=3, idle_flush=5.0))
    assert isinstance(stage, EvaluatorStage)
    lines = [orjson.dumps({"t": t, "pred": "P", "args": ["a"]}) for t in range(10)]
    lines += [orjson.dumps({"t": 2, "pred": "P", "args": ["b"]}), orjson.dumps({"t": 7, "pred": "P", "args": ["c"]}),
              orjson.dumps({"t": 10})]
    routed, out = stage.process([("facts", "chronolog.facts", 0, i, v) for i, v in enumerate(lines)], now=0.0)
    out += stage.process([], now=100.0)[1]
    held = clip(meaning(changes_of(out)), 10)
    assert stage.evaluator.too_late == 1  # P(b) at 2, older than 8 - 3
    # routed to chronolog.late as it came in, and counted (chronolog_late_events_total), as ingest does for LARS
    assert [(o.topic, o.value) for o in routed] == [("late", lines[10])]
    assert stage.progress()["late_events"] == 1
    assert ("Q", ("b",)) not in held and held[("Q", ("c",))] == [iv("[7,8]")]
    assert held[("Q", ("a",))] == [iv("[0,10]")]
