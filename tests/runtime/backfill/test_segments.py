"""Backfill without Spark, LARS: the span, segmentation and answer-point diffs.

Expectations come from ``chronolog run`` (``run_embedded``) read through the
independent ``tests/meaning.py``; the segments are replayed through the LARS
row's evaluator exactly as the Spark tasks do (``segments.truth``).
"""

from __future__ import annotations

import io
import random

import orjson
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from meaning import meaning
from strategies import programs, streams

from chronolog.core.errors import InputError
from chronolog.core.events import Event
from chronolog.core.reach import Reach
from chronolog.core.source import Loc
from chronolog.dialects.lars.parser import parse_lars
from chronolog.dialects.lars.plan import plan_program
from chronolog.dialects.lars.reasoner import Reasoner
from chronolog.dialects.registry import RunOptions, lookup
from chronolog.runtime.backfill.meaning import POINTS
from chronolog.runtime.backfill.points import (
    correction_lines,
    corrections,
    parse_answer,
    published,
)
from chronolog.runtime.backfill.segments import Segment, keyer, plan_segments, span_of
from chronolog.runtime.backfill.segments import truth as segment_truth
from chronolog.runtime.embedded import run_embedded

SETTINGS = settings(max_examples=60, deadline=None, suppress_health_check=list(HealthCheck))
HERE = Loc("answers.jsonl", 7, 1)
LARS = lookup("lars")


def truth(program, history, lo, hi, size=None, key_partitions=1, mode=None) -> set:
    """The answer points in ``[lo, hi]`` the backfill finds, segment by segment."""
    make = lambda: LARS.evaluator(program, RunOptions(mode=mode), lambda m: None)  # noqa: E731
    key = keyer(LARS.partition_key(program)) if key_partitions > 1 else None
    got = segment_truth(make, history, POINTS, LARS.reach(program), lo, hi, size, key, key_partitions if key else 1)
    return {(pred, args, t) for (pred, args), ivs in got.items() for iv in ivs for t in range(iv[0], iv[2])}


def run_lines(program, events) -> list[dict]:
    out = io.StringIO()
    run_embedded(program, events, out, warn=lambda m: None)
    return [orjson.loads(x) for x in out.getvalue().splitlines()]


def run_points(program, events, lo: int, hi: int) -> set:
    """What ``chronolog run`` means on ``events``, restricted to [lo, hi]."""
    span = span_of(events)
    if span is None:
        return set()
    return {p for p in meaning(run_lines(program, events), span) if lo <= p[2] <= hi}


def late_and_retracted(events: list[Event], rng: random.Random) -> list[Event]:
    """Delay some facts, add facts that are retracted later, and a retraction matching nothing."""
    out = list(events)
    for _ in range(rng.randint(0, 3)):
        facts = [i for i, e in enumerate(out) if e.is_fact]
        if facts:
            ev = out.pop(rng.choice(facts))
            out.insert(rng.randint(0, len(out)), ev)
    times = sorted({e.t for e in events})
    for _ in range(rng.randint(0, 3)):
        t = rng.choice(times)
        extra = Event(t, rng.choice(["p", "q"]), (rng.choice([1, 2, "a"]),))
        pos = rng.randint(0, len(out))
        out.insert(pos, extra)
        out.insert(rng.randint(pos + 1, len(out)), Event(extra.t, extra.pred, extra.args, retract=True))
    if rng.random() < 0.3:
        out.insert(rng.randint(0, len(out)), Event(rng.choice(times) + rng.choice([-2, 0, 3]), "p", (9,), retract=True))
    if rng.random() < 0.3:  # a late event before the first time point moves t1
        out.append(Event(min(times) - 2, "p", (1,)))
    return out


# ---------------------------------------------------------------- history


@SETTINGS
@given(programs(stratified=True), streams(), st.randoms(use_true_random=False))
def test_history_span_is_the_reasoners(program, events, rng):
    history = late_and_retracted(events, rng)
    plan = plan_program(program)

    class Sink:
        def step(self, result, engine):
            pass

        def correct(self, changes, engine, upto, previous):
            pass

    r = Reasoner(plan, Sink())
    for ev in history:
        r.push(ev)
    r.finish()
    assert span_of(history) == (r.t1, r.latest)


# ---------------------------------------------------------------- segments


def test_segments_cover_the_span_with_exact_warm_ups():
    program = parse_lars("a(X) :- p(X) [3].\nb(X) :- q(X) [2 #].\n")
    assert LARS.reach(program) == Reach(3, 2, 0)
    facts = {10: 1, 11: 0, 12: 0, 13: 1, 14: 0, 20: 1}
    segs = plan_segments(12, 25, 30, LARS.reach(program), 5, 1, lambda t: facts.get(t, 0), 10)
    assert [(s.start, s.end, s.until) for s in segs] == [(12, 17, 16), (17, 22, 21), (22, 26, 25)]
    # [3] reaches 3 back; [2 #] needs the last 2 facts before the start: 13 and 10 for 17, 20 and 13 for 22
    assert [s.warm for s in segs] == [10, 10, 13]


def test_unbounded_reach_is_one_segment_from_the_first_time_point():
    assert LARS.reach(parse_lars("a(X) :- p(X) at T.\n")) is None
    assert plan_segments(10, 99, 120, None, 5, 1) == [Segment(0, float("-inf"), 10, 121, False, 120)]


def test_at_heads_extend_the_evaluations_past_the_span():
    reach = LARS.reach(parse_lars("a(X) at T :- p(X) at T [4].\n"))
    assert reach == Reach(4, 0, 4)
    assert [s.until for s in plan_segments(10, 20, 100, reach, None, 1)] == [24]
    assert [s.until for s in plan_segments(10, 20, 22, reach, None, 1)] == [22]
    assert [s.until for s in plan_segments(10, 20, 100, reach, 6, 1)] == [19, 24]


@SETTINGS
@given(programs(stratified=True), streams(), st.randoms(use_true_random=False), st.integers(1, 6))
def test_segments_with_overlaps_give_the_answers_of_one_run(program, events, rng, size):
    history = late_and_retracted(events, rng)
    t1, last = span_of(history)
    lo = rng.randint(t1 - 1, last)
    hi = rng.randint(lo, last + 1)
    expected = run_points(program, history, lo, hi)
    assert truth(program, history, lo, hi, size=size) == expected
    assert truth(program, history, lo, hi) == expected  # one segment


KEYED = parse_lars(
    """
    hot(S) :- temp(S, V) [3], V > 80.
    warm(S) :- temp(S, V) [5], V > 50, not hot(S).
    alarm(S) at T :- temp(S, V) at T [2], V > 95.
    calm(S) :- temp(S, V) [2], not warm(S), not alarm(S).
    """
)


@settings(max_examples=25, deadline=None, suppress_health_check=list(HealthCheck))
@given(st.randoms(use_true_random=False), st.integers(1, 8), st.integers(2, 4))
def test_key_partitions_give_the_answers_of_one_run(rng, size, parts):
    """Where the program can be split by key, each key partition of each segment is
    evaluated on its own facts; the union is what one run means."""
    events = []
    for t in range(rng.randint(5, 20)):
        for _ in range(rng.randint(0, 4)):
            events.append(Event(t, "temp", (f"s{rng.randint(1, 5)}", rng.randint(40, 100))))
        events.append(Event(t))
    history = late_and_retracted([e for e in events if True], rng)
    history = [e for e in history if e.pred in (None, "temp")]  # the helper adds p/q facts
    span = span_of(history)
    if span is None:
        return
    assert LARS.partition_key(KEYED) is not None
    expected = run_points(KEYED, history, *span)
    assert truth(KEYED, history, *span, size=size, key_partitions=parts) == expected


@settings(max_examples=15, deadline=None, suppress_health_check=list(HealthCheck))
@given(programs(stratified=False), streams(), st.randoms(use_true_random=False))
def test_segments_non_stratified_programs(program, events, rng):
    """clingo per time point: each segment's answer sets equal one run's (same solver, same input)."""
    history = late_and_retracted(events, rng)
    span = span_of(history)
    assert truth(program, history, *span, size=2) == run_points(program, history, *span)


# ---------------------------------------------------------------- answer lines


def test_parse_answer_forms():
    assert parse_answer('{"t": 5, "pred": "q", "args": ["a", 1]}', HERE) == ("q", ("a", 1), 5, 5, 1)
    assert parse_answer('{"interval": "[3,8]", "pred": "q", "args": []}', HERE) == ("q", (), 3, 8, 1)
    assert parse_answer('{"interval": "(3,8)", "pred": "q", "diff": -1}', HERE) == ("q", (), 4, 7, -1)
    assert parse_answer('{"interval": "[9,inf)", "pred": "q", "args": ["a"]}', HERE) == ("q", ("a",), 9, None, 1)
    assert parse_answer("   \n", HERE) is None


@pytest.mark.parametrize("line, col, message", [
    ('{"t": 5}', 1, '"pred" must be a non-empty string'),
    ('{"t": 5, "interval": "[1,2]", "pred": "q"}', 1, 'exactly one of "t" and "interval"'),
    ('{"interval": "[1,inf]", "pred": "q"}', 14, "open on the right"),
    ('{"interval": "1..2", "pred": "q"}', 14, 'bad "interval"'),
    ('{"t": 5, "pred": "q", "diff": 2}', 31, '"diff" must be 1 or -1'),
    ('{"t": 5, "pred": "q", "diff": true}', 31, '"diff" must be 1 or -1'),
    ('{"t": 5.0, "pred": "q"}', 7, '"t" must be an integer'),
    ('{"t": 5, "pred": "q", "args": [1.5]}', 31, '"args" must be a list'),
    ('{"t": 5, "pred": "q", "x": 1}', 23, "unknown key"),
    ('{"t": 5, "pred": ', 1, "invalid JSON"),
])
def test_parse_answer_rejects(line, col, message):
    """A bad answer line names the column of what is wrong (the key or its value)."""
    with pytest.raises(InputError) as err:
        parse_answer(line, HERE)
    assert message in str(err.value) and str(err.value).startswith(f"answers.jsonl:7:{col}: error:")


def test_published_sums_diffs_over_the_span():
    answers = [
        ("q", ("a",), 2, None, 1), ("q", ("a",), 6, None, -1),  # changelog: holds 2..5
        ("q", ("a",), 4, 4, -1),  # a correction
        ("r", (), 0, 1, 1),  # before the span
        ("s", (1,), 8, None, 1),  # inf runs to the history's last point, 9
    ]
    assert published(answers, 3, 12, 9) == {
        ("q", ("a",), 3): 1, ("q", ("a",), 5): 1, ("s", (1,), 8): 1, ("s", (1,), 9): 1,
    }


def test_correction_lines_merge_runs_and_restore_the_truth():
    true_points = {("q", ("a",), t) for t in (1, 2, 3, 7)} | {("q", (1,), 4), ("r", (), 5)}
    before = {("q", ("a",), 2): 1, ("q", ("a",), 5): 1, ("q", ("a",), 6): 1, ("r", (), 5): 1, ("z", (), 1): 2}
    lines = list(correction_lines(corrections(true_points, before)))
    assert lines == [  # atoms ordered by predicate, integers before strings
        {"t": 4, "pred": "q", "args": [1], "diff": 1},
        {"t": 1, "pred": "q", "args": ["a"], "diff": 1},
        {"t": 3, "pred": "q", "args": ["a"], "diff": 1},
        {"interval": "[5,6]", "pred": "q", "args": ["a"], "diff": -1},
        {"t": 7, "pred": "q", "args": ["a"], "diff": 1},
        {"t": 1, "pred": "z", "args": [], "diff": -1},  # a point published twice is withdrawn twice
        {"t": 1, "pred": "z", "args": [], "diff": -1},
    ]


@SETTINGS
@given(programs(stratified=True), streams(), st.randoms(use_true_random=False))
def test_published_plus_corrections_mean_the_backfilled_truth(program, events, rng):
    """Answers of the in-order, retraction-free prefix + corrections == run on the whole history."""
    history = late_and_retracted(events, rng)
    span = span_of(history)
    cut = rng.randint(0, len(history))
    prefix = sorted((e for e in history[:cut] if not e.retract), key=lambda e: e.t)
    old = run_lines(program, prefix) if prefix else []
    lines = [parse_answer(orjson.dumps(x).decode(), HERE) for x in old]
    want = truth(program, history, *span, size=3)
    fixes = list(correction_lines(corrections(want, published(lines, *span, span[1]))))
    assert meaning(old + fixes, span, running=True) == want == run_points(program, history, *span)
    assert all(x["diff"] in (1, -1) for x in fixes)


ODD = parse_lars(
    """
    a(X) :- p(X) [2], not b(X).
    b(X) :- p(X) [2], not a(X).
    x :- q [1], not x.
    """
)


@pytest.mark.parametrize("mode", ["tms", "oneshot"])
def test_points_without_an_answer_set_mean_the_same_in_the_backfill(mode):
    """Where the odd loop fires (q in the window) ``chronolog run`` warns of each point and
    writes only answer lines; with ``--mark-no-answer-set`` it also writes
    ``{"t":T,"no_answer_set":true}`` there, which the backfill's published-answer reader
    skips.  Its own evaluation has no atoms there: the same meaning, in both modes, from
    either stream.  (A whole-history backfill starts where the live run did: the same
    choices, docs/tms.md.)"""
    events = [Event(t, "p", (t % 3,)) for t in range(12)] + [Event(4, "q"), Event(9, "q")]
    events.sort(key=lambda e: e.t)
    warned: list[str] = []
    out = io.StringIO()
    run_embedded(ODD, events, out, warn=warned.append, mode=mode)
    default = [orjson.loads(x) for x in out.getvalue().splitlines()]
    assert all("pred" in x for x in default)  # CONTRACT section 3 lines only
    out = io.StringIO()
    run_embedded(ODD, events, out, warn=lambda m: None, mode=mode, mark=True)
    lines = [orjson.loads(x) for x in out.getvalue().splitlines()]
    empty = sorted(x["t"] for x in lines if x.get("no_answer_set"))
    assert empty == [4, 5, 9, 10]  # q [1]: at q's point and the next
    assert [w for w in warned if "no answer set" in w] == [
        f"warning: no answer set at t={t} ({why}); no answers for that evaluation" for t in empty
        for why in ["no consistent labelling: an odd loop through not, or a constraint" if mode == "tms"
                    else "clingo finds none"]]
    for x in lines:
        if x.get("no_answer_set"):
            assert parse_answer(orjson.dumps(x).decode(), HERE) is None
    points = meaning(lines, (0, 11))
    assert meaning(default, (0, 11)) == points
    assert not any(T in empty for _, _, T in points)
    assert truth(ODD, events, 0, 11, mode=mode) == points
    segmented = truth(ODD, events, 0, 11, size=3, mode=mode)  # segments start afresh: their choices may differ
    for t in range(12):
        at_t = [(pred, args) for pred, args, T in segmented if T == t]
        if t in empty:
            assert not at_t, t
        else:  # an answer set: exactly one of a(X), b(X) for each p(X) in the window
            seen = sorted(args for _, args in at_t)
            assert seen == sorted({(u % 3,) for u in range(max(0, t - 2), t + 1)}), (t, at_t)


def test_a_malformed_no_answer_set_line_is_an_error():
    for bad in ('{"t":3,"no_answer_set":false}', '{"t":3,"no_answer_set":true,"pred":"a"}', '{"t":"3","no_answer_set":true}'):
        with pytest.raises(InputError) as exc:
            parse_answer(bad, HERE)
        col = bad.index('"no_answer_set"') + 1  # the key the line must not have
        assert f"answers.jsonl:7:{col}: error: unknown key" in str(exc.value)
