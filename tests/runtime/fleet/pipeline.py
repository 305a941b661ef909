"""The fleet's stages wired together in one process, without a broker.

Records travel through FIFO queues per (topic, partition), exactly as Kafka
orders them; a seeded scheduler picks which service consumes next, so the
interleavings differ from run to run, and stages can be restarted between any
two records: a fresh stage continues from the old one's state written as
explicit data and read back (chronolog.state), as a service restarts.
"""

from __future__ import annotations

import random
from collections import deque

import orjson

from chronolog.contract.models import (
    AnswerLine,
    FactEvent,
    GroundedBatch,
    Idle,
    IngestedBatch,
    LateEvents,
    NoAnswerSetLine,
    StratumRecord,
    TimeMarker,
)
from chronolog.dialects.lars.ir import Program
from chronolog.dialects.lars.partition import partition_key
from chronolog.dialects.lars.plan import plan_program
from chronolog.dialects.lars.stages import ChainStage, GroundingStage, OutputStage, ReasonerStage
from chronolog.stages.ingest import IngestStage
from chronolog.state.snapshots import roundtrip


def validate(topic: str, value: bytes) -> None:
    """Every record between the stages obeys its contract (schemas/)."""
    rec = orjson.loads(value)
    if topic == "ingested":
        (IngestedBatch if "batch" in rec else TimeMarker if set(rec) == {"t"} else Idle if "idle" in rec
         else FactEvent).model_validate(rec)
    elif topic == "grounded":
        (LateEvents if "late" in rec else GroundedBatch).model_validate(rec)
    elif topic.startswith("stratum."):
        StratumRecord.model_validate(rec)
    else:
        raise AssertionError(f"unknown topic {topic}")


def answer_line(line: bytes, mark: bool) -> None:
    """An answer-topic line obeys the contract (CONTRACT section 3); a no_answer_set line is
    there only with ``mark`` (``--mark-no-answer-set``), and then as its own schema says."""
    if mark and orjson.loads(line).get("no_answer_set"):
        NoAnswerSetLine.model_validate_json(line)
    else:
        AnswerLine.model_validate_json(line)


def run_pipeline(
    program: Program, lines: list[bytes], *, partitions: int = 1, seed: int = 0, restarts: int = 0,
    idle_every: int = 0, retention: int | None = None, batch: int = 1, mark: bool = False,
    counted: list[int] | None = None,
) -> tuple[list[dict], int]:
    """Answer lines (decoded) of the whole fleet on ``lines``; and the dead-letter count.
    ``batch`` > 1: a reasoner consumes up to that many records of each input at once
    (``process``, as the service does), sometimes told the epoch goes on (``more``).
    ``mark``: the outputs' ``--mark-no-answer-set``; ``counted`` gets each output's count of
    points without an answer set at the end (``chronolog_no_answer_sets_total``)."""
    plan = plan_program(program)
    key, _ = partition_key(plan)
    n = partitions if key is not None else 1
    strata = plan.fleet_strata
    rng = random.Random(seed)
    ingest = IngestStage(key, n, retention=retention)
    grounding = [GroundingStage(idle_flush=0.0) for _ in range(n)]
    reasoners = {(k, p): ReasonerStage(plan, k, retention=retention) for k in range(strata) for p in range(n)}
    outputs = [OutputStage(plan, strata, retention=retention, mark=mark) for _ in range(n)]
    queues: dict[tuple[str, int], deque] = {}

    def q(topic: str, p: int) -> deque:
        return queues.setdefault((topic, p), deque())

    # every consumer keeps its own position on each queue it reads
    positions: dict[tuple[str, str, int], int] = {}
    logs: dict[tuple[str, int], list] = {}

    def send(topic: str, p: int, value: bytes) -> None:
        validate(topic, value)
        logs.setdefault((topic, p), []).append(value)

    def take(consumer: str, topic: str, p: int) -> bytes | None:
        log = logs.get((topic, p), [])
        pos = positions.get((consumer, topic, p), 0)
        if pos >= len(log):
            return None
        positions[(consumer, topic, p)] = pos + 1
        return log[pos]

    answers: list[bytes] = []
    dead = 0
    pending_input = list(lines)
    offset = 0
    steps = 0
    while True:
        steps += 1
        moves = []
        if pending_input:
            moves.append("input")
        for p in range(n):
            moves.append(("grounding", p))
            for k in range(strata):
                moves.append(("reasoner", k, p))
            moves.append(("output", p))
        progressed = False
        for move in rng.sample(moves, len(moves)):
            if move == "input":  # a consumed batch of 1-4 events (ingest batches its records)
                records = []
                for _ in range(min(len(pending_input), rng.randint(1, 4))):
                    records.append(("facts", "chronolog.facts", 0, offset, pending_input.pop(0)))
                    offset += 1
                for out in ingest.process(records)[0]:
                    if out.topic in ("dlq", "late"):
                        dead += 1
                    else:
                        send(out.topic, out.partition, out.value)
                progressed = True
            elif move[0] == "grounding":
                p = move[1]
                value = take("grounding", "ingested", p)
                if value is not None:
                    for out in grounding[p].handle(orjson.loads(value), now=0.0):
                        send("grounded", p, out.value)
                    progressed = True
                elif not pending_input or (idle_every and rng.randrange(idle_every) == 0):
                    outs = grounding[p].idle(now=1e9)
                    for out in outs:
                        send("grounded", p, out.value)
                    progressed = progressed or bool(outs)
            elif move[0] == "reasoner" and batch > 1:
                _, k, p = move
                stage = reasoners[(k, p)]
                name = f"reasoner-{k}"
                records = []
                for role, topic in [("grounded", "grounded")] + [(f"stratum.{j + 1}", f"stratum.{j}") for j in range(k)]:
                    for _ in range(rng.randint(1, batch)):
                        value = take(name, topic, p)
                        if value is None:
                            break
                        records.append((role, topic, p, 0, value))
                if records or stage.waiting:
                    outs, _ = stage.process(records, more=bool(records) and rng.random() < 0.3)
                    for out in outs:
                        send(f"stratum.{k}", p, out.value)
                    progressed = True
            elif move[0] == "reasoner":
                _, k, p = move
                stage = reasoners[(k, p)]
                name = f"reasoner-{k}"
                got = False
                value = take(name, "grounded", p)
                if value is not None:
                    stage.on_grounded(orjson.loads(value))
                    got = True
                for j in range(k):
                    value = take(name, f"stratum.{j}", p)
                    if value is not None:
                        stage.on_stratum(j, orjson.loads(value))
                        got = True
                if got:
                    for value in stage.flush():
                        send(f"stratum.{k}", p, value)
                    progressed = True
            else:
                p = move[1]
                stage = outputs[p]
                got = False
                for j in range(strata):
                    value = take(f"output-{p}", f"stratum.{j}", p)
                    if value is not None:
                        stage.on_stratum(j, orjson.loads(value))
                        got = True
                if got:
                    lines = stage.flush()
                    for line in lines:
                        answer_line(line, mark)
                    answers.extend(lines)
                    progressed = True
            if restarts and rng.randrange(max(1, 40 // restarts)) == 0:
                # a restart: one stage comes back from its state snapshot
                which = rng.randrange(4)
                p = rng.randrange(n)
                if which == 0:
                    grounding[p] = roundtrip(grounding[p], GroundingStage(idle_flush=0.0))
                elif which == 1:
                    k = rng.randrange(strata)
                    if reasoners[(k, p)].waiting:
                        continue  # mid-epoch: a service commits (and so restarts from) only where one ends
                    reasoners[(k, p)] = roundtrip(reasoners[(k, p)], ReasonerStage(plan, k, retention=retention))
                elif which == 2:
                    outputs[p] = roundtrip(outputs[p], OutputStage(plan, strata, retention=retention, mark=mark))
                else:
                    ingest = roundtrip(ingest, IngestStage(key, n, retention=retention))
        if not progressed:
            break
        assert steps < 100_000
    if counted is not None:
        counted.extend(o.progress()["no_answer_sets"] for o in outputs)
    return [orjson.loads(a) for a in answers], dead


def run_chain(
    program: Program, lines: list[bytes], *, partitions: int = 1, seed: int = 0, restarts: int = 0,
    idle_every: int = 0, retention: int | None = None, batch: int = 5, mark: bool = False,
    counted: list[int] | None = None,
) -> tuple[list[dict], int]:
    """The chained fleet (``chronolog up --chain``): with one partition a single
    chain with ingest inside; with several, ingest and one chain per partition.
    Random batch boundaries, idle flushes and restarts from state snapshots."""
    plan = plan_program(program)
    key, _ = partition_key(plan)
    n = partitions if key is not None else 1
    rng = random.Random(seed)
    ingest = IngestStage(key, n, retention=retention)
    chains = [ChainStage(plan, ingest if n == 1 else None, idle_flush=0.0, retention=retention, mark=mark)
              for _ in range(n)]
    answers: list[bytes] = []
    dead = 0
    queues: list[list[bytes]] = [[] for _ in range(n)]  # ingested records per partition (n > 1)

    def leave(outs: list) -> None:
        nonlocal dead
        for out in outs:
            assert out.topic in ("dlq", "late"), out.topic
            dead += 1

    def finish(p: int) -> None:
        if idle_every and rng.randrange(idle_every) == 0:
            chains[p].idle(now=1e9)
        lines = chains[p].flush()
        for line in lines:
            answer_line(line, mark)
        answers.extend(lines)

    pending = list(lines)
    offset = 0
    while pending or any(queues):
        if pending and (n == 1 or rng.random() < 0.5):
            value = pending.pop(0)
            if n == 1:
                leave(chains[0].handle(value, "chronolog.facts", 0, offset, now=0.0))
                if rng.randrange(batch) == 0:
                    finish(0)
            else:
                for out in ingest.process([("facts", "chronolog.facts", 0, offset, value)])[0]:
                    if out.topic == "ingested":
                        validate("ingested", out.value)
                        queues[out.partition].append(out.value)
                    else:
                        leave([out])
            offset += 1
        else:
            p = rng.randrange(n)
            for _ in range(rng.randint(1, batch)):
                if queues[p]:
                    leave(chains[p].handle(queues[p].pop(0), "chronolog.ingested", p, 0, now=0.0))
            finish(p)
        if restarts and rng.randrange(max(1, 40 // restarts)) == 0:
            p = rng.randrange(n)
            inside = IngestStage(key, 1, retention=retention) if n == 1 else None
            chains[p] = roundtrip(chains[p], ChainStage(plan, inside, idle_flush=0.0, retention=retention, mark=mark))
            if n == 1:
                ingest = chains[0].ingest  # type: ignore[assignment]
    for p in range(n):
        chains[p].idle(now=1e9)
        finish(p)
    if counted is not None:
        counted.extend(c.progress()["no_answer_sets"] for c in chains)
    return [orjson.loads(a) for a in answers], dead
