"""A LARS evaluator's record of what crosses component boundaries (``crossing.py``): at every
time point evaluated, the content of each component another one reads, as it is once every
late event and retraction has been applied — what an upgrade's changed components import
instead of evaluating the kept ones again (``keeping.evaluate_split``).

The expectation is a second evaluation: an engine stepped once through the corrected stream
in time order, its relations read at each point.  The evaluator under test gets the events
in arrival order (late ones and retractions corrected by replays) and advances as a chain
does, one point behind the latest time seen."""

from __future__ import annotations

import random

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from strategies import long_stream, programs
from test_retention_random import arrivals

from chronolog.core.events import Event
from chronolog.dialects.lars.crossing import CrossingRecord, crossing_components, preds_of
from chronolog.dialects.lars.engine.core import Engine
from chronolog.dialects.lars.evaluator import LarsEvaluator
from chronolog.dialects.lars.hooks import lars_parse, lars_plan
from chronolog.dialects.lars.ir import Program
from chronolog.dialects.lars.plan import Plan, plan_program


def _in_order(plan: Plan, stream: list[Event], preds: tuple) -> dict[int, dict | None]:
    """Per time point, the recorded predicates' content (None: no answer set there) of one
    engine stepped through ``stream`` (time order, every point's events together)."""
    by_t: dict[int, list] = {}
    for ev in stream:
        got = by_t.setdefault(ev.t, [])
        if ev.is_fact:
            got.append(((ev.pred, len(ev.args)), ev.args))
    first, last = min(by_t), max(by_t)
    engine = Engine(plan, first)
    out: dict[int, dict | None] = {}
    for t in range(first, last + 1):
        result = engine.step(t, by_t.get(t, []))
        content = {p: frozenset(engine.rels[p].tuples) for p in preds if engine.rels[p].tuples}
        out[t] = content if result.consistent else None
    return out


def _sets(entry) -> dict:  # type: ignore[no-untyped-def]
    """A record entry's groups as sets (they are tuples, or frozensets read back)."""
    return {p: frozenset(rows) for p, rows in entry.items()}


def _recorded(plan: Plan, arrived: list[Event], retention: int | None) -> LarsEvaluator:
    """The evaluator fed ``arrived``, advanced to the point before each later time (as the
    chain stage advances to the closed points), then to the end."""
    ev_ = LarsEvaluator(plan, retention=retention)
    ev_.record_crossing()
    ev_.reasoner.prune_every = 1
    latest = None
    for ev in arrived:
        if latest is not None and ev.t > latest:
            ev_.advance(latest)
        latest = ev.t if latest is None else max(latest, ev.t)
        ev_.push(ev)
    ev_.finish()
    return ev_


@settings(max_examples=80, deadline=None, suppress_health_check=list(HealthCheck))
@given(program=programs(), seed=st.integers(0, 2**32), retention=st.sampled_from([None, 2, 5]))
def test_the_record_is_the_content_of_an_evaluation_in_time_order(program: Program, seed: int, retention):
    plan = plan_program(program)
    record = CrossingRecord.of(plan)
    if record is None:
        return
    rng = random.Random(seed)
    stream = long_stream(rng, 3)
    arrived, corrected = arrivals(stream, rng, retention or 3)
    got = _recorded(plan, arrived, retention)
    assert got.crossing is not None
    want = _in_order(plan, corrected, got.crossing.preds)
    entries = got.crossing.entries
    kept_from = got.reasoner.pruned_below
    for t, content in want.items():
        if content is None:
            assert t not in entries, t  # no answer set: nothing an upgrade could import
        elif kept_from is None or t > kept_from:  # (before: pruned with the log, one pass behind it)
            assert t in entries and _sets(entries[t]) == content, t
        elif t in entries:
            assert _sets(entries[t]) == content, t
    assert set(entries) <= set(want)


def test_the_crossing_components_are_those_another_reads():
    """q is read by s, b by s; tick and s by nobody (and a recursive r by itself only)."""
    plan = lars_plan(lars_parse([("p.lars", "tick(T) :- clock(T) [0].\nq(X) :- p(X) [2].\nb(X) :- r(X) [0].\n"
                                  "s(X) :- q(X), not b(X).\nr2(X, Y) :- e(X, Y).\nr2(X, Z) :- r2(X, Y), e(Y, Z).\n")]))
    assert preds_of(plan, crossing_components(plan)) == {("q", 1), ("b", 1)}


def test_an_unchanged_point_shares_the_entry_before_and_pruning_forgets_entries():
    """Points where nothing recorded changed hold the previous point's entry itself (memory:
    a dict slot); ``prune`` forgets the entries before the log's first point kept."""
    plan = lars_plan(lars_parse([("p.lars", "q(X) :- p(X) [1].\ns(X) :- q(X), r(X).\n")]))
    ev_ = LarsEvaluator(plan)
    ev_.record_crossing()
    for t, facts in ((0, [("p", ("a",))]), (1, []), (2, []), (3, []), (4, [("p", ("b",))]), (5, [])):
        ev_.push(Event(t))
        for pred, args in facts:
            ev_.push(Event(t, pred, args))
        ev_.advance(t)
    assert ev_.crossing is not None
    e = ev_.crossing.entries
    assert _sets(e[0]) == _sets(e[1]) == {("q", 1): {("a",)}} and e[2] == e[3] == {}
    assert e[0] is e[1] and e[2] is e[3] and _sets(e[4]) == {("q", 1): {("b",)}}
    ev_.crossing.prune(3)
    assert sorted(e) == [3, 4, 5]
