"""LARS through the shared ``Evaluator`` interface means what ``chronolog run`` prints.

The generic driver (``run_evaluator``: push, advance on each later time,
answer changes rendered by ``interval_line``) on random programs and
disordered streams, compared with the LARS fast path (``run_embedded``); and
a run stopped at a random event, its state exported, written as standard
JSON, read back into a fresh evaluator and continued: the same meaning.
"""

from __future__ import annotations

import io
import json
import random

import orjson
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from meaning import meaning
from strategies import disorder, programs, streams

from chronolog.engine.plan import plan_program
from chronolog.evaluator import Evaluator, StateError, interval_line
from chronolog.events import Event
from chronolog.runtime.embedded import run_embedded, run_evaluator
from chronolog.runtime.lars_evaluator import LarsEvaluator

SETTINGS = settings(max_examples=60, deadline=None, suppress_health_check=list(HealthCheck))


def span(events: list[Event]) -> tuple[int, int]:
    times = [e.t for e in events]
    return min(times), max(times)


def embedded(program, events) -> set:  # type: ignore[no-untyped-def]
    out = io.StringIO()
    run_embedded(program, events, out, warn=lambda m: None)
    return meaning([orjson.loads(x) for x in out.getvalue().splitlines()], span(events))


def test_lars_evaluator_is_an_evaluator():
    from chronolog.lang.lars import parse_lars

    assert isinstance(LarsEvaluator(plan_program(parse_lars("q(X) :- p(X) [2]."))), Evaluator)


@SETTINGS
@given(programs(stratified=True), streams(), st.integers(0, 10**6))
def test_generic_driver_means_what_the_fast_path_prints(program, events, seed):
    events = disorder(events, random.Random(seed))
    out = io.StringIO()
    run_evaluator(LarsEvaluator(plan_program(program)), events, out, warn=lambda m: None)
    got = meaning([orjson.loads(x) for x in out.getvalue().splitlines()], span(events))
    assert got == embedded(program, events)


@SETTINGS
@given(programs(stratified=True), streams(), st.integers(0, 10**6))
def test_exported_state_continues_in_a_fresh_evaluator(program, events, seed):
    rng = random.Random(seed)
    events = disorder(events, rng)
    plan = plan_program(program)
    cut = rng.randint(0, len(events))
    ev = LarsEvaluator(plan)
    lines: list[bytes] = []
    latest = None
    for i, e in enumerate(events):
        if i == cut:  # a restart: the state as standard JSON text, into a new process's evaluator
            data = json.loads(json.dumps(ev.export_state()))
            ev = LarsEvaluator(plan)
            ev.import_state(data)
        if latest is not None and e.t > latest:
            lines += [interval_line(*change) for change in ev.advance(latest)]
        latest = e.t if latest is None else max(latest, e.t)
        ev.push(e)
    lines += [interval_line(*change) for change in ev.finish()]
    assert meaning([orjson.loads(x) for x in lines], span(events)) == embedded(program, events)


def test_state_of_another_dialect_or_version_is_refused():
    from chronolog.lang.lars import parse_lars

    ev = LarsEvaluator(plan_program(parse_lars("q(X) :- p(X) [2].")))
    ev.push(Event(1, "p", ("a",)))
    state = ev.export_state()
    for bad in ({**state, "format": 99}, {**state, "dialect": "mtl"}, {**state, "log": [[1, [["p", 1, "x"]]]]}, []):
        with pytest.raises(StateError):
            LarsEvaluator(ev.reasoner.plan).import_state(bad)  # type: ignore[arg-type]


@SETTINGS
@given(programs(stratified=True), streams(), st.integers(0, 10**6))
def test_the_fleet_hosts_an_evaluator_through_the_generic_stage(program, events, seed):
    """``EvaluatorStage`` (how the chain service hosts any dialect's evaluator) with
    LARS inside, fed raw input records in random batches, with idle flushes
    and restarts from its state as bytes: the meaning of ``chronolog run``."""
    from chronolog.events import event_json
    from chronolog.runtime.stages import EvaluatorStage, IngestStage, Record
    from chronolog.state.snapshot import restore_whole, whole

    rng = random.Random(seed)
    events = disorder(events, rng)
    plan = plan_program(program)

    def fresh() -> EvaluatorStage:
        return EvaluatorStage(LarsEvaluator(plan), IngestStage(None, 1), idle_flush=5.0)

    stage = fresh()
    lines: list[bytes] = []
    clock = 0.0
    pending = [Record("facts", "chronolog.facts", 0, i, event_json(e)) for i, e in enumerate(events)]
    while pending:
        n = rng.randint(1, 4)
        batch, pending = pending[:n], pending[n:]
        outs, got = stage.process(batch, now=clock)
        assert not outs
        lines += got
        clock += rng.choice([0.0, 1.0, 10.0])
        lines += stage.tick(now=clock)[1]  # idle long enough, sometimes: the latest time is evaluated early
        if rng.random() < 0.2:
            restarted = fresh()
            restore_whole(restarted, "chain", whole(stage, "chain"))
            restarted.last_input = clock  # a restart counts as input, on this test's clock
            stage = restarted
    lines += stage.tick(now=clock + 100)[1]
    assert meaning([orjson.loads(x) for x in lines], span(events)) == embedded(program, events)
