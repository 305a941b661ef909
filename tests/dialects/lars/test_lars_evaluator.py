"""LARS through the dialect-neutral Evaluator interface means what `chronolog run`
prints, and its explicit state continues a run exactly in a fresh evaluator."""

from __future__ import annotations

import io
import random

import msgspec
import orjson
from meaning import meaning
from strategies import random_program, random_stream

from chronolog.core.events import Event
from chronolog.dialects.lars.evaluator import LarsEvaluator
from chronolog.dialects.lars.plan import plan_program
from chronolog.evaluator import Changes, Evaluator
from chronolog.runtime.embedded import run_embedded, run_evaluator
from chronolog.state.codec import decode, encode


def _late(events, seed: int):
    """Some facts delayed past later time points, some retracted (arrival order)."""
    rng = random.Random(seed)
    events = list(events)
    facts = [i for i, e in enumerate(events) if e.is_fact]
    for i in rng.sample(facts, min(2, len(facts))):
        ev = events.pop(i)
        events.insert(min(len(events), i + rng.randint(2, 6)), ev)
    for ev in rng.sample([e for e in events if e.is_fact], min(2, len(facts))):
        events.append(Event(ev.t, ev.pred, ev.args, True))
    return events


def _span(events):
    return min(e.t for e in events), max(e.t for e in events)


def _embedded(program, events) -> set:
    out = io.StringIO()
    run_embedded(program, events, out, warn=lambda m: None)
    return meaning([orjson.loads(x) for x in out.getvalue().splitlines()], _span(events))


def _lines(buffer: io.BytesIO) -> list[dict]:
    return [orjson.loads(x) for x in buffer.getvalue().splitlines()]


def _through_interface(program, events, restart_at: int | None = None) -> set:
    plan = plan_program(program)
    raw = io.BytesIO()
    out = io.TextIOWrapper(raw, encoding="utf-8", write_through=True)
    ev: Evaluator = LarsEvaluator(plan)
    if restart_at is None:
        run_evaluator(ev, events, out)
    else:  # half the stream, a restart from the exported state, the rest
        run_evaluator(_Pausing(ev), events[:restart_at], out)
        state = decode(encode(ev.export_state()))  # as bytes, as a service stores it
        again = LarsEvaluator(plan)
        again.import_state(state)
        run_evaluator(again, events[restart_at:], out)
    out.flush()
    return meaning(_lines(raw), _span(events), running=True)


class _Pausing:
    """Passes everything through but does not finish: the run continues later."""

    def __init__(self, inner: LarsEvaluator) -> None:
        self.inner = inner

    def push(self, event):
        self.inner.push(event)

    def advance(self, until):
        return self.inner.advance(until)

    def push_block(self, block):
        self.inner.push_block(block)

    def finish(self, until=None):
        return Changes()


def test_random_programs_through_the_interface_mean_what_run_prints():
    for seed in range(40):
        program, events = random_program(seed), _late(random_stream(seed), seed)
        if not events:
            continue
        assert _through_interface(program, events) == _embedded(program, events), seed


def test_explicit_state_continues_a_run_exactly():
    rng = random.Random(7)
    for seed in range(40):
        program, events = random_program(seed), _late(random_stream(seed), seed)
        if len(events) < 4:
            continue
        cut = rng.randrange(1, len(events))
        assert _through_interface(program, events, cut) == _embedded(program, events), seed


def test_state_is_plain_json():
    plan = plan_program(random_program(3))
    ev = LarsEvaluator(plan)
    for e in random_stream(3):
        ev.push(e)
    state = ev.export_state()
    assert msgspec.json.decode(msgspec.json.encode(state)) == state
    assert state["format"] == 1 and state["dialect"] == "lars"


def test_answer_batches_are_the_changes_their_lines_say():
    """``advance``/``finish`` hand out the writer's bytes; iterated, a batch is the
    changes those lines stand for (corrections included), and it counts its lines."""
    from chronolog.dialects.lars.evaluator import change_of

    for seed in range(10):
        program, events = random_program(seed), _late(random_stream(seed), seed)
        ev = LarsEvaluator(plan_program(program), eager=True)
        batches = []
        latest = None
        for e in events:
            if latest is not None and e.t > latest:
                batches.append(ev.advance(latest))
            latest = e.t if latest is None or e.t > latest else latest
            ev.push(e)
        batches.append(ev.finish())
        for batch in batches:
            lines = [orjson.loads(x) for x in batch.lines().splitlines()]
            assert batch.line_count == len(lines)
            assert list(batch) == [change_of(x) for x in lines if "pred" in x]
            assert len(batch) == len(list(batch))
