"""An idle flush closes the latest time point, which ``chronolog run`` has not closed: for a
program with choices (the TMS, docs/tms.md), an event at that point arriving after the flush is
input of the point's first evaluation in ``run``, so the fleet evaluates the point again as
``run`` does (its provisional answers taken back), not as a correction that follows the choice
made without the event (dialects/lars/provisional.py)."""

from __future__ import annotations

import io

import orjson
import pytest
from meaning import meaning
from pipeline import validate

from chronolog.core.events import Event, event_json
from chronolog.dialects.lars.parser import parse_lars
from chronolog.dialects.lars.plan import plan_program
from chronolog.dialects.lars.stages import ChainStage, GroundingStage, OutputStage, ReasonerStage
from chronolog.runtime.embedded import run_embedded
from chronolog.stages.ingest import IngestStage
from chronolog.state.snapshots import roundtrip

CHOICE = parse_lars("a(X) :- p(X) [4 #], not b(X).\nb(X) :- q(X) at T [4 #], not a(X).\n")
IDLE = "idle"
# p(1)@6, the input goes quiet (6 closed idly: a(1), b(1) has no q yet), then q(1)@6: run evaluates
# 6 with both, where the seed's preference takes b(1); a correction would keep a(1) (an answer set too)
HAND = [Event(6, "p", (1,)), IDLE, Event(6, "q", (1,))]
SPAN = (6, 8)


def embedded(arrivals: list) -> set:
    out = io.StringIO()
    run_embedded(CHOICE, [e for e in arrivals if e != IDLE], out, warn=lambda m: None)
    return meaning([orjson.loads(x) for x in out.getvalue().splitlines()], SPAN)


def test_run_takes_the_seeds_choice_with_both_events():
    """The hand-derived answer: b(1) from 6 on, never a(1)."""
    assert embedded(HAND) == {("b", (1,), 6), ("b", (1,), 7), ("b", (1,), 8)}
    assert embedded(HAND + [Event(8)]) == embedded(HAND)


def chain(arrivals: list, restarts: set[int]) -> list[dict]:
    """``chronolog up --chain``: the arrivals one record per batch, an idle flush where said, a
    restart from the checkpoint after the steps in ``restarts``; idle at the end."""
    plan = plan_program(CHOICE)
    make = lambda: ChainStage(plan, IngestStage(None, 1), idle_flush=1.0)  # noqa: E731
    stage, lines = make(), []
    for i, step in enumerate(arrivals):
        if step == IDLE:
            stage.idle(now=1e9)
            lines += stage.flush()
        else:
            lines += stage.process([("facts", "chronolog.facts", 0, i, event_json(step))], now=0.0)[1]
        if i in restarts:
            stage = roundtrip(stage, make())
    stage.idle(now=1e9)
    lines += stage.flush()
    return [orjson.loads(x) for x in lines]


def per_stratum(arrivals: list, restarts: set[int]) -> list[dict]:
    """``chronolog up``: ingest, grounding, the reasoner of the program's one stratum and the
    output, each record through at once, restarts of grounding and reasoner from their
    checkpoints after the steps in ``restarts``; idle at the end."""
    plan = plan_program(CHOICE)
    ingest, grounding = IngestStage(None, 1), GroundingStage(idle_flush=None)
    reasoner, output = ReasonerStage(plan, 0), OutputStage(plan, 1)
    lines: list[bytes] = []

    def through(grounded: list) -> None:
        nonlocal lines
        for out in grounded:
            value = out.value if isinstance(out.value, bytes) else orjson.dumps(out.value)
            validate("grounded", value)
            sent, _ = reasoner.process([("grounded", "chronolog.grounded", 0, 0, value)])
            for rec in sent:
                validate("stratum.0", rec.value)
                lines += output.process([("stratum.1", "chronolog.stratum.1", 0, 0, rec.value)])[1]

    for i, step in enumerate([*arrivals, IDLE]):
        if step == IDLE:
            records = [orjson.dumps({"idle": True})]
        else:
            records = [o.value for o in ingest.process([("facts", "chronolog.facts", 0, i, event_json(step))])[0]]
        for value in records:
            validate("ingested", value)
            through(grounding.handle(orjson.loads(value), now=0.0))
        if i in restarts:
            grounding = roundtrip(grounding, GroundingStage(idle_flush=None))
            reasoner = roundtrip(reasoner, ReasonerStage(plan, 0))
    return [orjson.loads(x) for x in lines]


CASES = [
    HAND,
    HAND + [Event(7)],
    HAND + [IDLE, Event(7, "p", ("a",))],
    HAND + [IDLE, Event(6, "p", (2,)), IDLE],  # taken back twice
    [Event(5, "p", (1,)), Event(6, "p", (2,)), IDLE, Event(5, "q", (1,)), Event(6, "q", (2,)), Event(7)],
    [Event(6, "q", (1,)), IDLE, Event(6, "p", (1,)), IDLE, Event(8)],
    [Event(6, "p", (1,)), IDLE, Event(7), IDLE, Event(6, "q", (1,))],  # 6 closed by a later time: a correction
]


@pytest.mark.parametrize("layout", [chain, per_stratum])
@pytest.mark.parametrize("case", range(len(CASES)))
def test_an_event_after_an_idle_flush_is_input_as_in_run(layout, case):
    arrivals = CASES[case]
    want = embedded(arrivals)
    for restarts in (set(), {0}, {1}, {2}, set(range(len(arrivals)))):
        got = meaning(layout(arrivals, restarts), SPAN, running=False)
        assert got == want, (restarts, sorted(got), sorted(want))


@pytest.mark.parametrize("layout", [chain, per_stratum])
def test_the_idle_flush_gets_the_answers_out(layout):
    """Before the event after it, the idle-closed point's answers are out (provisionally): a(1)
    at 6, what run prints at the end of the input p(1)@6."""
    lines = layout([Event(6, "p", (1,))], set())
    assert meaning(lines, (6, 6)) == {("a", (1,), 6)}
