"""The fleet's stages, wired in one process, mean exactly what embedded mode prints.

Random stratified programs (several strata), random streams with delayed
events and retractions, 1 or 3 partitions, random interleavings of the
services and restarts from pickled snapshots: the answer stream always means
the same as ``chronolog run`` on the same input (tests/meaning.py).
"""

from __future__ import annotations

import io
import random

import orjson
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from meaning import meaning
from pipeline import run_chain, run_pipeline, validate
from strategies import long_stream, programs, random_choice_program, random_program, random_stream, streams

from chronolog.core.events import Event, event_json
from chronolog.dialects.lars.parser import parse_lars
from chronolog.dialects.lars.plan import plan_program
from chronolog.runtime.embedded import run_embedded

SETTINGS = settings(max_examples=60, deadline=None, suppress_health_check=list(HealthCheck))


def embedded(program, events) -> set:
    out = io.StringIO()
    run_embedded(program, events, out, warn=lambda m: None)
    return meaning([orjson.loads(x) for x in out.getvalue().splitlines()], span(events))


def span(events) -> tuple[int, int]:
    times = [e.t for e in events]
    return min(times), max(times)


def fleet(program, events, chain: bool = False, **kw) -> set:
    lines, _ = (run_chain if chain else run_pipeline)(program, [event_json(e) for e in events], **kw)
    return meaning(lines, span(events), running=False)


def disorder(events: list[Event], rng: random.Random) -> list[Event]:
    """Delay some facts and retract some (the embedded run sees the same arrival order)."""
    out = list(events)
    for _ in range(rng.randint(0, 3)):
        facts = [i for i, e in enumerate(out) if e.is_fact and not e.retract]
        if not facts:
            break
        i = rng.choice(facts)
        ev = out.pop(i)
        out.insert(rng.randint(i, len(out)), ev)
    for _ in range(rng.randint(0, 2)):
        facts = [e for e in out if e.is_fact and not e.retract]
        if facts:
            ev = rng.choice(facts)
            out.insert(rng.randint(0, len(out)), Event(ev.t, ev.pred, ev.args, True))
    return out


@SETTINGS
@given(programs(stratified=True), streams(), st.integers(0, 10**6))
def test_fleet_stages_mean_what_embedded_prints(program, events, seed):
    assert fleet(program, events, seed=seed) == embedded(program, events)


@SETTINGS
@given(programs(stratified=True), streams(), st.integers(0, 10**6))
def test_late_events_retractions_restarts_and_idle_flushes(program, events, seed):
    rng = random.Random(seed)
    events = disorder(events, rng)
    got = fleet(program, events, seed=seed, restarts=3, idle_every=3)
    assert got == embedded(program, events)


@SETTINGS
@given(programs(stratified=True), streams(), st.integers(0, 10**6))
def test_chained_stages_mean_what_embedded_prints(program, events, seed):
    """``--chain``: the same stages in one process per partition, random batch
    boundaries, idle flushes and restarts from pickles."""
    rng = random.Random(seed)
    events = disorder(events, rng)
    got = fleet(program, events, chain=True, seed=seed, restarts=3, idle_every=3, batch=rng.randint(1, 8))
    assert got == embedded(program, events)


@pytest.mark.parametrize("chain", [False, True])
def test_retention_repairs_recent_late_events_and_routes_older_ones_away(chain):
    """``--retention N``: the fleet repairs what embedded mode repairs with the same N,
    sends older events to the late topic, and prunes its per-time-point state."""
    rng = random.Random(11)
    total = 0
    for trial in range(10):
        events = []
        for t in range(0, 60):
            for _ in range(rng.randint(0, 3)):
                events.append(Event(t, "temp", (f"s{rng.randint(1, 4)}", rng.randint(40, 100))))
            events.append(Event(t))
        late = [e for e in events if e.is_fact]
        for ev in rng.sample(late, 8):  # re-sent much later: some within N, some beyond
            events.insert(min(len(events), events.index(ev) + rng.randint(5, 60)), Event(ev.t, ev.pred, ev.args))
        out = io.StringIO()
        stats = run_embedded(KEYED, events, out, retention=6, warn=lambda m: None)
        want = meaning([orjson.loads(x) for x in out.getvalue().splitlines()], span(events))
        run = run_chain if chain else run_pipeline
        lines, routed = run(KEYED, [event_json(e) for e in events], seed=trial, retention=6)
        assert meaning(lines, span(events)) == want, trial
        assert routed == stats.too_late, trial
        total += routed
    assert total > 0  # some events were past the horizon


def test_non_stratified_program_runs_as_one_reasoner():
    for seed in range(15):
        rng = random.Random(seed)
        program = random_program(rng, stratified=False)
        events = random_stream(rng)
        assert fleet(program, events, seed=seed) == embedded(program, events), seed


@pytest.mark.parametrize("chain", [False, True])
def test_points_without_an_answer_set_travel_through_the_fleet(chain):
    """An odd loop has no answer set while q holds: those points' stratum records say
    ok=false (the stores keep only the false flags).  The answer topic holds only CONTRACT
    section 3 lines (the pipeline validates each as an AnswerLine) and the output counts the
    points (``chronolog_no_answer_sets_total``); with ``--mark-no-answer-set`` it says
    no_answer_set at the points ``run --mark-no-answer-set`` names, across restarts."""
    program = parse_lars("""
        a(X) :- p(X) [0].
        x(X) :- q(X) [1], not x(X).
        b(X) :- a(X), not c(X).
        c(X) :- r(X) [2].
    """)
    rng = random.Random(1)
    events = [Event(t, rng.choice("pqr"), (x,)) for t in range(40) for x in range(3) if rng.random() < 0.5]
    out = io.StringIO()
    run_embedded(program, events, out, warn=lambda m: None, mark=True)
    said = {x["t"] for x in map(orjson.loads, out.getvalue().splitlines()) if x.get("no_answer_set")}
    assert said  # the case is exercised
    run = run_chain if chain else run_pipeline
    for seed in range(5):
        counted: list[int] = []
        lines, _ = run(program, [event_json(e) for e in events], seed=seed, restarts=3, counted=counted)
        assert not [x for x in lines if "pred" not in x], seed
        assert meaning(lines, span(events)) == embedded(program, events), seed
        assert sum(counted) >= len(said), seed  # (a point evaluated again is counted again)
        marked, _ = run(program, [event_json(e) for e in events], seed=seed, restarts=3, mark=True)
        assert {x["t"] for x in marked if x.get("no_answer_set")} == said, seed
        assert meaning(marked, span(events)) == embedded(program, events), seed


KEYED = parse_lars(
    """
    hot(S) :- temp(S, V) [3], V > 80.
    warm(S) :- temp(S, V) [5], V > 50, not hot(S).
    alarm(S) :- hot(S), not ok(S) [2].
    alarm(S) at T :- temp(S, V) at T [2], V > 95.
    calm(S) :- temp(S, V) [2], not warm(S), not alarm(S).
    """
)


def test_partitioned_fleet_equals_embedded():
    assert plan_program(KEYED).fleet_strata == 3
    rng = random.Random(5)
    for trial in range(12):
        events = []
        for t in range(0, 25):
            for _ in range(rng.randint(0, 4)):
                s = f"s{rng.randint(1, 6)}"
                if rng.random() < 0.2:
                    events.append(Event(t, "ok", (s,)))
                else:
                    events.append(Event(t, "temp", (s, rng.randint(40, 100))))
            events.append(Event(t))
        events = disorder(events, rng)
        want = embedded(KEYED, events)
        for partitions in (1, 3):
            for chain in (False, True):
                got = fleet(KEYED, events, chain=chain, partitions=partitions, seed=trial, restarts=2, idle_every=4)
                assert got == want, (trial, partitions, chain)


@pytest.mark.parametrize("run", [run_pipeline, run_chain])
@pytest.mark.parametrize("partitions", [1, 3])
def test_malformed_input_is_counted_and_processing_continues(run, partitions):
    events = [Event(0, "temp", ("s1", 90)), Event(1, "temp", ("s1", 99)), Event(4)]
    lines = [event_json(events[0]), b'{"t": "x"}', b"not json", event_json(events[1]), event_json(events[2])]
    got, dead = run(KEYED, lines, partitions=partitions)
    assert dead == 2
    assert meaning(got, span(events)) == embedded(KEYED, events)


@pytest.mark.parametrize("chain", [False, True])
def test_tms_choices_survive_late_events_and_restarts(chain):
    """Non-stratified programs (choices through even loops) in TMS mode: the fleet,
    with late events, retractions and restarts from explicit state, means what
    embedded mode prints (the same choices, whatever the batches, restarts and idle flushes:
    an idle-closed point is evaluated provisionally, docs/tms.md)."""
    for seed in range(12):
        rng = random.Random(seed)
        program = parse_lars(random_choice_program(rng))
        events = disorder(random_stream(rng), rng)
        got = fleet(program, events, chain=chain, seed=seed, restarts=3, idle_every=3)
        assert got == embedded(program, events), seed


@settings(max_examples=40, deadline=None, suppress_health_check=list(HealthCheck))
@given(st.integers(0, 10**6), st.booleans())
def test_tms_long_streams_choose_as_run_whatever_the_batches(seed, chain):
    """Seeded choice programs on long streams with late events and retractions, reasoners
    given several records at once (sometimes of an epoch that goes on), restarts: the choices
    are run's, who evaluated a point when a later time arrived and applied the late events
    between two such times as one correction (``Reasoner.late``).  Idle flushes mid-stream
    close the latest point, which run has not closed: an event for it arriving after the flush
    is input of its evaluation in run, so the fleet takes its provisional answers back and
    evaluates it as run does (dialects/lars/provisional.py; without that, about one stream in
    ten differed)."""
    rng = random.Random(seed)
    program = parse_lars(random_choice_program(rng))
    events = disorder(long_stream(rng, 3), rng)
    got = fleet(program, events, chain=chain, seed=seed, restarts=3, batch=rng.randint(2, 8),
                idle_every=rng.choice([0, 2, 3, 5]))
    assert got == embedded(program, events)


@pytest.mark.parametrize("chain", [False, True])
def test_tms_restart_keeps_a_choice_the_window_no_longer_explains(chain):
    """force(1) at t=1 rules b(1) out, so a(1) is chosen; b(1) is what a fresh choice
    would take later (seed 0).  Services restarted long after t=1 must continue
    with a(1): the checkpoint carries the TMS's labels."""
    program = parse_lars("a(X) :- p(X) [1], not b(X).\nb(X) :- p(X) [1], not a(X).\nx :- b(X), force(X), not x.\n")
    events = [Event(t, "p", (1,)) if t < 34 else Event(t) for t in range(40)]  # p(1) stops: a(1) must close
    events.insert(2, Event(1, "force", (1,)))
    want = embedded(program, events)
    assert {("a", (1,), t) for t in range(1, 35)} <= want and not any(p == "b" for p, _, t in want if t >= 1)
    for seed in range(4):
        assert fleet(program, events, chain=chain, seed=seed, restarts=6, idle_every=5) == want, seed


@pytest.mark.parametrize("chain", [False, True])
def test_tms_with_a_lower_part_in_the_fleet(chain):
    """Ticker's scenario B: everything but the choice get/n_get is the core engine's
    below the TMS (engine/tms_split.py).  With late events, retractions and restarts
    the fleet means what embedded mode prints, the lower atoms included."""
    from chronolog.bench.lars_gen import WORKLOADS

    class Args:
        win, facts, tps, rules = 4, 0, 24, 0

    chose = False
    for seed in range(3):
        rng = random.Random(f"tickerB/{seed}")
        lars, _, facts = WORKLOADS["tickerB"](Args, rng)
        program = parse_lars("\n".join(lars))
        events = [Event(t, p, tuple(a)) for t in range(Args.tps) for p, a in facts(t)] + [Event(t) for t in range(Args.tps)]
        events.sort(key=lambda e: e.t)
        events = disorder(events, rng)
        want = embedded(program, events)
        assert {p for p, _, _ in want} >= {"reach", "need"}, seed  # lower atoms
        chose = chose or any(p == "get" for p, _, _ in want)
        assert fleet(program, events, chain=chain, seed=0, restarts=3, idle_every=4) == want, seed
    assert chose  # and choices


UPPER_READS_Q = parse_lars(
    """
    a(X) :- p(X) [0].
    c :- q always [3], not a(z).
    """
)


def test_an_upper_reasoner_keeps_only_the_facts_its_rules_read():
    """Stratum 2 reads q (and imports a); p is stratum 1's.  Its log holds no p,
    and a late p before the first point still starts its timeline earlier:
    q always [3] at 6 covers [3, 6] then, not [5, 6], so c goes away, as the
    embedded run says (hand-derived: c at 5 and 6 without the late p, at no
    point with it)."""
    from chronolog.dialects.lars.stages import ReasonerStage

    plan = plan_program(UPPER_READS_Q)
    assert plan.fleet_strata == 2
    upper = ReasonerStage(plan, 1)
    assert upper.keeps is not None and {("q", 0), ("c", 0)} <= upper.keeps  # c: input facts of c itself
    assert ("p", 1) not in upper.keeps and ("a", 1) not in upper.keeps
    assert ReasonerStage(plan, 0).keeps is None  # the lowest keeps all: it warns of unmatched retractions
    on_time = [Event(5, "q", ()), Event(5, "p", ("y",)), Event(6, "q", ()), Event(6, "p", ("y",)), Event(7)]
    late = on_time + [Event(2, "p", ("y",))]
    assert embedded(UPPER_READS_Q, on_time) >= {("c", (), 5), ("c", (), 6)}
    assert not {a for a in embedded(UPPER_READS_Q, late) if a[0] == "c"}
    for events in (on_time, late):
        for seed in range(4):
            assert fleet(UPPER_READS_Q, events, seed=seed, restarts=2) == embedded(UPPER_READS_Q, events), seed
    upper.on_grounded({"first": 5, "points": [[5, [["q", [], False], ["p", ["y"], False]]]], "upto": 5})
    upper.on_grounded({"late": [[2, "p", ["y"], False]]})
    assert upper.reasoner.log == {5: [(("q", 0), ())]}
    assert upper.reasoner.t1 == 2


def test_an_upper_stratum_with_a_tuple_window_keeps_every_fact():
    program = parse_lars(
        """
        a(X) :- p(X) [0].
        c :- q [2 #], not a(z).
        """
    )
    from chronolog.dialects.lars.stages import ReasonerStage

    assert ReasonerStage(plan_program(program), 1).keeps is None


def test_ingest_sends_a_consumed_batch_as_one_record_per_partition():
    """What one consumed batch yields for a partition travels as one ``batch``
    record, in order; grounding closes the same points from it as from the
    records one by one."""
    from chronolog.dialects.lars.stages import GroundingStage
    from chronolog.stages.ingest import IngestStage

    lines = [b'{"t": 0, "pred": "p", "args": ["a"]}', b'{"t": 0, "pred": "p", "args": ["b"]}',
             b'{"t": 1, "pred": "q", "args": []}', b'not json', b'{"t": 2, "pred": "p", "args": ["c"]}']
    records = [("facts", "chronolog.facts", 0, i, v) for i, v in enumerate(lines)]
    outs, _ = IngestStage(None, 1).process(records)
    batches = [o for o in outs if o.topic == "ingested"]
    assert len(batches) == 1 and [o.topic for o in outs].count("dlq") == 1
    items = batches[0].record["batch"]
    # facts in arrival order, each time marker right after the fact that moved the time
    # (the first one twice: the timeline starts at 0, and the stream is at 0)
    assert [(i["t"], i.get("pred")) for i in items] == [(0, "p"), (0, None), (0, None), (0, "p"), (1, "q"),
                                                         (1, None), (2, "p"), (2, None)]
    assert batches[0].urgent  # it carries time markers: grounding can close points with it

    one_by_one = []
    ingest, grounding = IngestStage(None, 1), GroundingStage(idle_flush=1e9)
    for rec in records:
        for out in ingest.handle(rec[4], rec[1], rec[2], rec[3]):
            if out.topic == "ingested":
                one_by_one += [orjson.loads(o.value) for o in grounding.handle(out.record, now=0.0)]
    batched = [orjson.loads(o.value) for o in GroundingStage(idle_flush=1e9).handle(batches[0].record, now=0.0)]
    assert batched == one_by_one == [{"upto": 0, "first": 0, "points": [[0, [["p", ["a"], False], ["p", ["b"], False]]]]},
                                     {"upto": 1, "first": 0, "points": [[1, [["q", [], False]]]]}]


def test_an_ingested_batch_is_split_before_it_nears_the_message_limit(monkeypatch):
    from chronolog.stages import ingest as stages

    monkeypatch.setattr(stages, "BATCH_BYTES", 200)
    lines = [b'{"t": %d, "pred": "p", "args": ["%s"]}' % (i // 3, b"x" * 40) for i in range(12)]
    outs, _ = stages.IngestStage(None, 1).process([("facts", "chronolog.facts", 0, i, v) for i, v in enumerate(lines)])
    assert len(outs) > 3 and all(len(o.value) <= 200 + len(b'{"batch":[]}') for o in outs)
    for o in outs:  # every piece, however it was cut, obeys the contract
        validate("ingested", o.value)
    items = [i for o in outs for i in o.record.get("batch", [o.record])]
    assert [i["t"] for i in items if "pred" in i] == [i // 3 for i in range(12)]  # every fact, in order


def test_ingest_says_once_when_its_input_went_quiet_and_grounding_closes_on_it():
    from chronolog.dialects.lars.stages import GroundingStage
    from chronolog.stages.ingest import IDLE_RECORD, IngestStage

    ingest = IngestStage(None, 2, idle_flush=1.0)
    facts = [("facts", "chronolog.facts", 0, 0, b'{"t": 3, "pred": "p", "args": ["a"]}')]
    assert ingest.process([], now=100.0)[0] == []  # nothing sent yet: nothing to close
    sent, _ = ingest.process(facts, now=100.0)
    assert sent and not ingest.quiet
    assert ingest.process([], now=100.9)[0] == []  # quiet for less than the idle flush
    idle, _ = ingest.process([], now=101.0)
    assert [(o.topic, o.partition, o.value) for o in idle] == [("ingested", 0, IDLE_RECORD), ("ingested", 1, IDLE_RECORD)]
    for o in idle:
        validate("ingested", o.value)
    assert ingest.process([], now=105.0)[0] == []  # said once per quiet spell
    again = IngestStage(None, 2, idle_flush=1.0)
    sent, _ = again.process(facts, now=0.0)
    again.import_state(again.export_state())  # a restart: the quiet spell counts from it
    assert not again.quiet and again.process([], now=again.last_input + 1.0)[0]

    grounding = GroundingStage(idle_flush=None)  # the fleet's: no clock of its own
    batch = next(o for o in sent if o.partition == 0 and o.topic == "ingested")
    assert grounding.handle(batch.record, now=0.0) == [] and grounding.idle(now=1e9) == []
    (closed,) = grounding.handle(orjson.loads(IDLE_RECORD))
    assert orjson.loads(closed.value) == {"upto": 3, "first": 3, "points": [[3, [["p", ["a"], False]]]], "idle": True}
    assert grounding.handle(orjson.loads(IDLE_RECORD)) == []  # nothing open any more
    # a late event for the idle-closed point: the next idle record closes it again (its answers
    # get out), and the next later time closes it for good, without points of its own
    assert [orjson.loads(o.value) for o in grounding.handle({"t": 3, "pred": "q", "args": [1]})] == \
        [{"late": [[3, "q", [1], False]]}]
    assert [orjson.loads(o.value) for o in grounding.handle(orjson.loads(IDLE_RECORD))] == \
        [{"upto": 3, "first": 3, "points": [], "idle": True}]
    assert grounding.handle(orjson.loads(IDLE_RECORD)) == []
    assert [orjson.loads(o.value) for o in grounding.handle({"t": 4})] == [{"upto": 3, "first": 3, "points": []}]
