"""The engine against independent evaluations on random programs and streams.

* incremental core (counting maintenance) == recomputation of every component
  at every time point == the naive reference evaluator (tests/reference.py);
* non-stratified programs: every time point's answer is an answer set, checked
  by clingo (the answer at t is accepted iff clingo finds it when told to);
* delayed and retracted variants of a stream mean exactly what the corrected
  stream in time order means.
"""

from __future__ import annotations

import io
import random

import orjson
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from meaning import meaning
from reference import reference_answers
from strategies import long_stream, programs, random_program, random_stream, streams

from chronolog.core.events import Event
from chronolog.dialects.lars.answers import AnswerWriter
from chronolog.dialects.lars.engine import core as core_module
from chronolog.dialects.lars.ir import Program
from chronolog.dialects.lars.plan import plan_program
from chronolog.dialects.lars.reasoner import Reasoner
from chronolog.runtime.embedded import run_embedded

SETTINGS = settings(max_examples=80, deadline=None, suppress_health_check=list(HealthCheck))


def answers(program: Program, events: list[Event], mode: str = "changelog", until: int | None = None) -> set:
    out = io.StringIO()
    run_embedded(program, events, out, answers=mode, until=until, warn=lambda m: None)
    lines = [orjson.loads(x) for x in out.getvalue().splitlines()]
    times = [e.t for e in events]
    span = (min(times), until if until is not None else max(times))
    return meaning(lines, span)


def as_reference(found: set) -> set:
    return {(p, args, t) for p, args, t in found}


def ordered(events: list[Event]) -> list[Event]:
    return sorted(events, key=lambda e: e.t)  # stable: arrival order within a point


@SETTINGS
@given(programs(stratified=True), streams())
def test_incremental_equals_reference(program, events):
    expected = reference_answers(program, events)
    assert answers(program, events) == expected
    assert answers(program, events, mode="points") == expected


@SETTINGS
@given(programs(stratified=True), streams())
def test_recompute_mode_equals_incremental(program, events):
    incremental = answers(program, events)
    original = core_module.Engine.__init__

    def recompute(self, plan, t1, *, incremental=True, stratum=None):
        original(self, plan, t1, incremental=False, stratum=stratum)

    core_module.Engine.__init__ = recompute  # type: ignore[method-assign]
    try:
        assert answers(program, events) == incremental
    finally:
        core_module.Engine.__init__ = original  # type: ignore[method-assign]


def _shuffle_late(events: list[Event], rng: random.Random) -> list[Event]:
    """Move some facts later in arrival order (they become delayed events)."""
    out = list(events)
    for _ in range(rng.randint(1, 4)):
        facts = [i for i, e in enumerate(out) if e.is_fact]
        if not facts:
            break
        i = rng.choice(facts)
        ev = out.pop(i)
        out.insert(rng.randint(i, len(out)), ev)
    return out


def _with_retractions(events: list[Event], rng: random.Random) -> tuple[list[Event], list[Event]]:
    """Insert extra facts and retract facts later, possibly after time moved on.

    Returns (stream with retractions, the arrival-ordered stream it must mean):
    a retraction withdraws the latest earlier event with the same time, pred
    and args (CONTRACT §2), which need not be the one inserted for it.
    """
    out = list(events)
    domain = [a for e in events if e.is_fact for a in e.args] or ["a"]
    times = sorted({e.t for e in events})
    for _ in range(rng.randint(1, 3)):
        t = rng.choice(times)
        pred = rng.choice(["p", "q"])
        extra = Event(t, pred, (rng.choice(domain),))
        pos = rng.randint(0, len(out))
        out.insert(pos, extra)
        out.insert(rng.randint(pos + 1, len(out)), Event(t, pred, extra.args, retract=True))
    kept: list[Event] = []
    for ev in out:
        if ev.retract:
            match = max(i for i, k in enumerate(kept) if (k.t, k.pred, k.args) == (ev.t, ev.pred, ev.args))
            del kept[match]
        else:
            kept.append(ev)
    return out, kept


@SETTINGS
@given(programs(stratified=True), streams(), st.randoms(use_true_random=False))
def test_delayed_events_mean_the_ordered_stream(program, events, rng):
    late = _shuffle_late(events, rng)
    assert answers(program, late) == answers(program, ordered(late))


@SETTINGS
@given(programs(stratified=True), streams(), st.randoms(use_true_random=False))
def test_retractions_mean_the_stream_without_them(program, events, rng):
    with_retractions, clean = _with_retractions(events, rng)
    assert answers(program, with_retractions) == answers(program, ordered(clean))


def test_seeded_random_programs_long_streams():
    """Longer streams than hypothesis draws: windows expire many times."""
    for seed in range(40):
        rng = random.Random(seed)
        program = random_program(rng)
        events = long_stream(rng, 3)
        assert answers(program, events) == reference_answers(program, events), seed
        late = _shuffle_late(events, rng)
        assert answers(program, late) == answers(program, ordered(late)), seed


# ---------------------------------------------------------------- non-stratified


@settings(max_examples=40, deadline=None, suppress_health_check=list(HealthCheck))
@given(programs(stratified=False), streams())
def test_non_stratified_answers_are_answer_sets(program, events):
    """At every t, the atoms the clingo engine reports as holding at t are those
    of some answer set: clingo still finds a model when told to make exactly
    these output atoms true at t."""
    import clingo

    from chronolog.dialects.lars.engine.asp import _const, _Translator
    from chronolog.dialects.lars.engine.clingo_engine import ClingoEngine

    plan = plan_program(program)
    if plan.stratified:
        return
    ordered_events = ordered(events)
    t1 = ordered_events[0].t
    engine = ClingoEngine(plan, t1)
    stream = [(e.t, e.pred, e.args) for e in ordered_events if e.is_fact]
    for t in range(t1, ordered_events[-1].t + 1):
        engine.step(t, [((e.pred, len(e.args)), e.args) for e in ordered_events if e.is_fact and e.t == t])
        now = {(p, a) for p, a, T in engine.derived_at() if T == t}
        events_t = [e for e in stream if e[0] <= t]
        tr = _Translator(program, events_t, t1, t)
        text = tr.translate()
        for (name, arity) in plan.output:
            h = tr.pred(name, arity)
            xs = ",".join(f"X{i}" for i in range(arity))
            allowed = [a for (p, a) in now if p == (name, arity)]
            for a in allowed:
                args = ",".join(_const(v) for v in a)
                text += f"\nok_{h}({args}{',' if a else ''}{t}).\n:- not {h}({args}{',' if a else ''}{t})."
            sep = "," if arity else ""
            if allowed:
                text += f"\n:- {h}({xs}{sep}{t}), not ok_{h}({xs}{sep}{t})."
            else:
                text += f"\n:- {h}({xs}{sep}{t})."
        ctl = clingo.Control(["--models=1", "--warn=none"], logger=lambda c, m: None)
        ctl.add("base", [], text)
        ctl.ground([("base", [])])
        found = ctl.solve().satisfiable
        if now or found:
            assert found, (t, sorted(now))


def test_reasoner_replay_matches_full_replay_from_t1():
    """The warm-up start of a correction replay makes the span exact."""
    for seed in range(120):
        rng = random.Random(1000 + seed)
        program = random_program(rng)
        events = random_stream(rng) + [Event(20)]
        plan = plan_program(program)
        sink = AnswerWriter(io.StringIO(), plan)
        reasoner = Reasoner(plan, sink)
        for ev in events:
            reasoner.push(ev)
        reasoner.finish()
        get = lambda t: reasoner.log.get(t, [])  # noqa: E731, B023 (used in this iteration only)
        t1 = reasoner.t1
        for start in range(t1, 21, 3):
            exact, _ = reasoner.replay(lambda t: (get(t), None), t1, start, 20)  # noqa: B023 (called here)
            full_engine = core_module.Engine(plan, t1) if plan.stratified else None
            if full_engine is None:
                continue
            union = set()
            for t in range(t1, 21):
                full_engine.step(t, get(t))
                if t >= start:
                    union |= {a for a in full_engine.derived_at() if a[2] >= start}
            assert exact == union, (seed, start)


def test_engine_checkpoint_restores_exactly():
    """A pickled engine, restored, continues exactly like the original (the fleet's checkpoints)."""
    import pickle

    from chronolog.dialects.lars.engine.core import Engine

    for seed in range(40):
        rng = random.Random(5000 + seed)
        program = random_program(rng)
        plan = plan_program(program)
        if not plan.stratified:
            continue
        events = random_stream(rng) + [Event(e.t + 7, e.pred, e.args) for e in random_stream(rng)]
        by_time: dict[int, list] = {}
        for e in events:
            if e.is_fact:
                by_time.setdefault(e.t, []).append(((e.pred, len(e.args)), e.args))
        t1, last = events[0].t, max(e.t for e in events)
        cut = rng.randint(t1, last)
        straight, resumed = Engine(plan, t1), Engine(plan, t1)
        for t in range(t1, last + 1):
            a = straight.step(t, by_time.get(t, []))
            b = resumed.step(t, by_time.get(t, []))
            assert sorted(map(repr, a.now)) == sorted(map(repr, b.now)) and sorted(map(repr, a.timed)) == sorted(map(repr, b.timed))
            if t == cut:
                resumed = pickle.loads(pickle.dumps(resumed))
        assert straight.derived_at() == resumed.derived_at(), seed


def _long_stream(rng: random.Random, points: int) -> list[Event]:
    events: list[Event] = []
    for t in range(points):
        for _ in range(rng.randint(0, 2)):
            pred = rng.choice(["p", "q", "r"])
            arity = 2 if pred == "r" else 1
            events.append(Event(t, pred, tuple(rng.choice([1, 2, 3]) for _ in range(arity))))
        if not events or events[-1].t != t:
            events.append(Event(t))
    return events


def _delay(events: list[Event], rng: random.Random, max_delay: int) -> list[Event]:
    """Deliver some facts up to ``max_delay`` time points late."""
    out: list[Event] = []
    held: list[tuple[int, Event]] = []
    for ev in events:
        ready = [h for h in held if h[0] <= ev.t]
        held = [h for h in held if h[0] > ev.t]
        if ev.is_fact and rng.random() < 0.15:
            held.append((ev.t + rng.randint(1, max_delay), ev))
        else:
            out.append(ev)
        out.extend(e for _, e in ready)
    out.extend(e for _, e in held)
    return out


def test_retention_repairs_within_the_horizon_and_prunes_the_log():
    """Long streams (pruning runs every 64 points): with a retention at least the
    largest delay, the answers are exactly those of the ordered stream."""
    checked = 0
    for seed in range(200):
        rng = random.Random(7000 + seed)
        program = random_program(rng)
        plan = plan_program(program)
        if plan.output_reach is None or plan.state_reach is None:
            continue  # such programs replay from the first time point: nothing to prune
        checked += 1
        if checked > 12:
            break
        events = _long_stream(rng, 200)
        late = _delay(events, rng, 4)
        out = io.StringIO()
        writer = AnswerWriter(out, plan)
        reasoner = Reasoner(plan, writer, retention=3)  # a delay of 4 is at most 3 behind the last evaluated point
        reasoner.prune_every = 1  # prune as hard as possible
        for ev in late:
            reasoner.push(ev)
        reasoner.finish()
        assert reasoner.too_late == 0 and len(reasoner.log) < 60
        got = meaning([orjson.loads(x) for x in out.getvalue().splitlines()], (0, max(e.t for e in late)))
        assert got == answers(program, ordered(late)), seed


def test_events_older_than_retention_are_ignored_and_reported():
    program = random_program(random.Random(3))
    from chronolog.dialects.lars.parser import parse_lars

    program = parse_lars("q(X) :- p(X) [2].")
    events = [Event(t, "p", (t,)) for t in range(10)] + [Event(2, "p", (99,)), Event(8, "p", (98,))]
    warnings: list[str] = []
    out = io.StringIO()
    stats = run_embedded(program, events, out, retention=3, warn=warnings.append)
    assert stats.too_late == 1 and "older than the retention horizon" in warnings[0]
    got = meaning([orjson.loads(x) for x in out.getvalue().splitlines()], (0, 9))
    assert got == answers(program, ordered(events[:10] + [events[11]]))


def test_retention_bounds_the_log():
    from chronolog.dialects.lars.parser import parse_lars

    plan = plan_program(parse_lars("q(X) :- p(X) [3], r(X) [2 #]."))
    reasoner = Reasoner(plan, AnswerWriter(io.StringIO(), plan), retention=10)
    for t in range(3000):
        reasoner.push(Event(t, "p", (t % 7,)))
        reasoner.push(Event(t, "r", (t % 5,)))
    reasoner.finish()
    assert len(reasoner.log) < 100
