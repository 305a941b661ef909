"""``chronolog bench fleet --stages``: the per-stratum fleet's stages alone, without Kafka.

On two cores the fleet's throughput is bounded by the CPU its processes take
together (docs/benchmarks.md, "Round 7").  This measures the stages' own
part: in one process, each stage (dialects/lars/stages.py) is fed what the stage
before it made, in batches as its service consumes them, and its CPU time
is taken, with the state it writes at each commit (the changed journal
entries and the snapshot, encoded as its service encodes them).  Fleet runs
on a shared machine swing by half; the least CPU time of a few rounds here
moves by a few percent, enough to compare two builds.
"""

from __future__ import annotations

import gc
import time

import orjson

from chronolog.dialects.lars.parser import parse_lars
from chronolog.dialects.lars.partition import partition_key
from chronolog.dialects.lars.plan import plan_program
from chronolog.dialects.lars.stages import GroundingStage, OutputStage, ReasonerStage
from chronolog.stages.ingest import IngestStage
from chronolog.state.changelog import capture
from chronolog.state.changelog import track as _track  # journals record changes, as in a service

INGEST_BATCH = 2000  # records a service consumes at once (runtime/fleet/config.py ServiceConfig.batch)
STAGE_BATCH = 100  # records per batch for the stages after grounding (under load they take what was committed)


def _time_of(value: bytes) -> int:
    rec = orjson.loads(value)
    return rec["t"] if "t" in rec else rec.get("upto", rec.get("first", 0))


def _state(stage) -> None:  # type: ignore[no-untyped-def]
    """What a service's commit encodes after a batch (``state.changelog.capture``):
    the snapshot, the changed journal entries and their changelog records."""
    capture(stage, {})


def _feed(stage, inputs: list[tuple[str, bytes]]) -> tuple[float, list[bytes], list[bytes]]:  # type: ignore[no-untyped-def]
    """``inputs`` ((role, value) pairs) into a reasoner or output stage in time
    order, as its service sees them, ``STAGE_BATCH`` at a time: its CPU
    seconds, the records it made and its answer lines."""
    inputs = sorted(inputs, key=lambda item: _time_of(item[1]))
    records = [(role, role, 0, i, v) for i, (role, v) in enumerate(inputs)]
    made: list[bytes] = []
    lines: list[bytes] = []
    start = time.process_time()
    for i in range(0, len(records), STAGE_BATCH):
        outs, got = stage.process(records[i:i + STAGE_BATCH])
        made += [o.value for o in outs]
        lines += got
        _state(stage)
    return time.process_time() - start, made, lines


def stage_cpu(program_text: str, lines: list[bytes]) -> tuple[dict[str, float], list[bytes]]:
    """CPU seconds of each stage of the per-stratum fleet on ``lines`` (in order:
    ingest, grounding, reasoner-1..k, output) and the answer lines output made."""
    plan = plan_program(parse_lars(program_text))
    key, _ = partition_key(plan)
    cpu: dict[str, float] = {}
    enabled = gc.isenabled()
    gc.disable()  # the services collect at commits; here no stage pays for another's garbage
    try:
        ingest = _track(IngestStage(key, 1))
        start = time.process_time()
        ingested = []
        for i in range(0, len(lines), INGEST_BATCH):
            records = [("facts", "facts", 0, i + j, v) for j, v in enumerate(lines[i:i + INGEST_BATCH])]
            ingested += [o.value for o in ingest.process(records)[0] if o.topic == "ingested"]
            _state(ingest)
        cpu["ingest"] = time.process_time() - start

        grounding = _track(GroundingStage(idle_flush=1.0))
        start = time.process_time()
        grounded = []
        for i, value in enumerate(ingested):  # one ingested record per ingest commit
            grounded += [o.value for o in grounding.process([("ingested", "ingested", 0, i, value)], now=0.0)[0]]
            _state(grounding)
        grounded += [o.value for o in grounding.idle(now=2.0)]  # input idle: the last point closes
        cpu["grounding"] = time.process_time() - start

        strata = plan.fleet_strata
        made: list[list[bytes]] = []  # each reasoner's stratum records
        for k in range(strata):
            inputs = [("grounded", v) for v in grounded] + [
                (f"stratum.{j + 1}", v) for j in range(k) for v in made[j]]
            cpu[f"reasoner-{k + 1}"], out, _ = _feed(_track(ReasonerStage(plan, k)), inputs)
            made.append(out)
        inputs = [(f"stratum.{j + 1}", v) for j in range(strata) for v in made[j]]
        cpu["output"], _, answers = _feed(_track(OutputStage(plan, strata)), inputs)
    finally:
        if enabled:
            gc.enable()
    return cpu, answers
