"""Cross-checks of the engine's fast paths on random programs and streams.

The batch paths (stream window views on whole batches, counting skipped while
one injective rule derives, padded predicates counted while their hidden
rules derive nothing) switch between modes as a stream goes on: these tests
drive them with streams that also carry facts of *derived* predicates, some
only late in the stream, and compare incremental evaluation with the
recomputation mode and the naive reference evaluator.
"""

from __future__ import annotations

import random

from hypothesis import HealthCheck, example, given, settings
from hypothesis import strategies as st
from reference import reference_answers
from strategies import CONSTANTS, INTENSIONAL, long_stream, programs, random_program, streams
from test_engine_crosscheck import answers

from chronolog.core.events import Event
from chronolog.dialects.lars.engine import core as core_module

SETTINGS = settings(max_examples=80, deadline=None, suppress_health_check=list(HealthCheck))


def recomputed(program, events) -> set:
    original = core_module.Engine.__init__

    def recompute(self, plan, t1, *, incremental=True, stratum=None):
        original(self, plan, t1, incremental=False, stratum=stratum)

    core_module.Engine.__init__ = recompute  # type: ignore[method-assign]
    try:
        return answers(program, events)
    finally:
        core_module.Engine.__init__ = original  # type: ignore[method-assign]


def with_derived_facts(events: list[Event], rng: random.Random, after: int) -> list[Event]:
    """Insert stream facts of derived predicates at time points from ``after`` on."""
    out: list[Event] = []
    for ev in events:
        out.append(ev)
        if ev.t >= after and rng.random() < 0.3:
            pred = rng.choice(sorted(INTENSIONAL))
            out.append(Event(ev.t, pred, tuple(rng.choice(CONSTANTS) for _ in range(INTENSIONAL[pred]))))
    return out


@SETTINGS
@given(programs(stratified=True), streams(), st.integers(0, 2**32 - 1), st.integers(0, 7))
def test_facts_of_derived_predicates_switch_modes_exactly(program, events, seed, after):
    events = with_derived_facts(events, random.Random(seed), after)
    got = answers(program, events)
    assert got == reference_answers(program, events)
    assert got == recomputed(program, events)


def unpruned(program, events) -> set:
    core_module.PRUNING = False
    try:
        return answers(program, events)
    finally:
        core_module.PRUNING = True


@SETTINGS
@given(programs(stratified=True), streams())
def test_pruning_changes_no_answer(program, events):
    """Laser2's impossible-derivation pruning only skips work (bench lars --no-pruning)."""
    got = answers(program, events)
    assert got == unpruned(program, events)
    assert got == reference_answers(program, events)


def test_seeded_long_streams_with_late_derived_facts():
    """Windows expire many times before and after derived facts start to arrive."""
    for seed in range(60):
        rng = random.Random(seed)
        program = random_program(rng)
        events = long_stream(rng, 4)
        events = with_derived_facts(events, rng, events[len(events) // 2].t)
        got = answers(program, events)
        assert got == reference_answers(program, events), seed
        assert got == recomputed(program, events), seed


def _timed_program(rng: random.Random) -> str:
    """@-heads read back through windows (the counted padded predicates), and
    predicates with two rules (the injective mode and its switch to counting)."""
    w = lambda: rng.randint(0, 3)  # noqa: E731
    op = lambda: rng.choice(["", " always"])  # noqa: E731
    rules = [
        f"a(X) at T :- p(X) at T [{w()}]" + rng.choice(["", ", X != 2", ", q(X) [1]"]) + ".",
        rng.choice([f"b(X) :- a(X){op()} [{w()}].", f"b(X) :- a(X) at T [{w()}], T < 3.", "b(X) :- a(X)."]),
        rng.choice([f"c :- b(X){op()} [{w()}].", "c :- not b(1).", f"c :- a(Y) at U [{w()}], not b(Y)."]),
    ]
    if rng.random() < 0.5:
        rules.append(rng.choice(["b(X) :- q(X).", f"b(X) :- r(X, Y) [{w()}].", "a(X) at T :- q(X) at T [1]."]))
    if rng.random() < 0.3:
        rules.append(rng.choice(["b(2).", "a(1)."]))
    if rng.random() < 0.5:
        # AT windows over a timed predicate as wide as its reach read its relation itself
        rules.append(
            rng.choice([f"d(X) at T :- a(X) at T [{w()}].", "d(X) at T :- a(X) at T.", f"e :- a(X) at T [{w()}], T > 1."])
        )
        rules.append(rng.choice(["f(X) :- d(X) at T [3].", f"f(X) :- d(X){op()} [{w()}].", "f(X) :- d(X) at T, not b(X)."]))
    return "\n".join(rules)


def test_seeded_timed_programs_with_windows_over_derived_predicates():
    from chronolog.dialects.lars.parser import parse_lars

    for seed in range(150):
        rng = random.Random(seed)
        program = parse_lars(_timed_program(rng))
        events = long_stream(rng, 3)
        if rng.random() < 0.5:
            events = with_derived_facts(events, rng, events[len(events) // 2].t)
        got = answers(program, events)
        assert got == reference_answers(program, events), seed
        assert got == recomputed(program, events), seed


def test_checkpoints_taken_before_and_after_facts_of_derived_predicates_restore_exactly():
    """While its hidden rules derive nothing a padded predicate's answers are its
    relation; a checkpoint from either side of the switch restores exactly."""
    import pickle

    from chronolog.dialects.lars.engine.core import Engine
    from chronolog.dialects.lars.parser import parse_lars
    from chronolog.dialects.lars.plan import plan_program

    for seed in range(60):
        rng = random.Random(9000 + seed)
        plan = plan_program(parse_lars(_timed_program(rng)))
        events = long_stream(rng, 3)
        events = with_derived_facts(events, rng, events[len(events) // 2].t)
        by_time: dict[int, list] = {}
        for e in events:
            if e.is_fact:
                by_time.setdefault(e.t, []).append(((e.pred, len(e.args)), e.args))
        t1, last = events[0].t, events[-1].t
        straight, resumed = Engine(plan, t1), Engine(plan, t1)
        for t in range(t1, last + 1):
            a = straight.step(t, by_time.get(t, []))
            b = resumed.step(t, by_time.get(t, []))
            assert sorted(map(repr, a.now)) == sorted(map(repr, b.now)), (seed, t)
            assert sorted(map(repr, a.timed)) == sorted(map(repr, b.timed)), (seed, t)
            if rng.random() < 0.3:
                resumed = pickle.loads(pickle.dumps(resumed))
        assert straight.derived_at() == resumed.derived_at(), seed


def test_semi_naive_rounds_reach_the_fixpoint_of_recursive_components():
    """Transitive closure over windows and @-heads: each round joins only what
    the round before added; the answers are the reference evaluator's."""
    from chronolog.dialects.lars.parser import parse_lars

    program = parse_lars(
        "reach(X, Y) :- edge(X, Y) [2].\n"
        "reach(X, Z) :- reach(X, Y), edge(Y, Z) [2].\n"
        "far(X, Z) at T :- reach(X, Y), hop(Y, Z) at T [1].\n"
        "reach(X, Z) :- far(X, Z) at T [1], X != Z.\n"
        "loop(X) :- reach(X, X) always [1].\n"
    )
    for seed in range(30):
        rng = random.Random(seed)
        events = []
        for t in range(12):
            for _ in range(rng.randint(0, 6)):
                pred = rng.choice(["edge", "edge", "hop"])
                events.append(Event(t, pred, (rng.randint(0, 7), rng.randint(0, 7))))
            events.append(Event(t))
        got = answers(program, events)
        assert got == reference_answers(program, events), seed
        assert got == recomputed(program, events), seed


def test_at_windows_as_wide_as_the_reach_of_a_timed_predicate_share_its_relation():
    """``a`` holds atoms at most 3 points back (its rule reads ``at T [2]``,
    and its hidden rule for stream facts of ``a`` looks back as far as the
    widest window over it): ``at T [3]`` sees all of them and reads ``a``'s
    relation, as a windowless ``at`` does; a narrower window keeps a view."""
    from chronolog.dialects.lars.engine.core import Engine
    from chronolog.dialects.lars.parser import parse_lars
    from chronolog.dialects.lars.plan import plan_program, time_reach

    program = parse_lars(
        "a(X) at T :- p(X) at T [2].\n"
        "b(X) at T :- a(X) at T [3].\n"
        "c(X) :- a(X) at T [1].\n"
        "e(X) :- a(X) at T [3], not b(X) at T [5].\n"
        "f(X) at 3 :- p(X).\n"
        "g(X) :- f(X) at T [9].\n"
        "h(X) :- f(X) at T.\n"
    )
    plan = plan_program(program)
    assert time_reach(plan) == {("a", 1): 3, ("b", 1): 5, ("f", 1): None}
    engine = Engine(plan, 0)
    sources = {
        cr.head_pred[0]: srcs
        for _, compiled, sources in engine._components
        for cr, srcs in zip(compiled, sources)
        if not plan.is_hidden(cr.rule)
    }
    a, b, f = engine.rels[("a", 1)], engine.rels[("b", 1)], engine.rels[("f", 1)]
    assert sources["b"] == [a] and sources["e"] == [a, b] and sources["h"] == [f]
    assert sources["c"][0] is not a and sources["g"][0] is not f
    events = [Event(t, "p", (x,)) for t in range(8) for x in range(3) if (t + x) % 3]
    events = sorted([*events, Event(4, "a", (7,)), Event(5, "b", (1,))], key=lambda e: e.t)
    got = answers(program, events)
    assert got == reference_answers(program, events)
    assert got == recomputed(program, events)


_value = st.one_of(st.integers(-3, 3), st.sampled_from(["a", "b", "1", ""]))


@given(
    st.sampled_from(["=", "!=", "<", "<=", ">", ">="]),
    st.one_of(st.sampled_from(["X", "Y"]), _value),
    st.one_of(st.sampled_from(["X", "Y"]), _value),
    st.lists(st.tuples(_value, _value), max_size=6),
)
def test_generated_filters_equal_the_comparison_closures(op, left, right, bindings):
    from chronolog.dialects.lars.engine.rules import _compile_test, _filter
    from chronolog.dialects.lars.ir import Compare, Const, Var

    term = lambda x: Var(x) if x in ("X", "Y") else Const(x)  # noqa: E731
    c = Compare(op, term(left), term(right))
    slots = {"X": 0, "Y": 1}
    step = _filter(c, slots)
    test = _compile_test(c, slots)
    assert step.keep is not None
    assert step.keep(list(bindings)) == [b for b in bindings if test(b)]


@given(st.lists(st.tuples(st.lists(st.integers(0, 5), max_size=6), st.lists(st.integers(0, 5), max_size=6)), max_size=8))
def test_count_with_sets_equals_counting_each_head(steps):
    """``_count`` (sets while every head has one derivation) against plain counters."""
    from collections import Counter

    from chronolog.dialects.lars.engine.counting import _count

    model: Counter = Counter()
    present: set = set()
    more: dict = {}
    for gained, lost in steps:
        gained = [(g,) for g in gained]
        # only lose derivations that exist (as the engine's delta rules guarantee)
        pool = Counter(model) + Counter(gained)
        lost = [(x,) for x in lost if pool[(x,)] > 0 and not pool.subtract([(x,)])]
        before = {h for h, n in model.items() if n > 0}
        model.update(gained)
        model.subtract(lost)
        after = {h for h, n in model.items() if n > 0}
        added, removed = _count(more, present, gained, lost)
        assert set(added) == after - before and set(removed) == before - after
        present = (present | set(added)) - set(removed)
        assert present == after
        assert more == {h: n for h, n in model.items() if n > 1}


def test_views_wait_while_no_rule_can_use_them():
    """A window of p is not kept up to date while every rule reading it has an
    empty stream literal (q absent); when q arrives, the window catches up."""
    from chronolog.dialects.lars.parser import parse_lars

    for seed in range(120):
        rng = random.Random(seed)
        w = lambda rng=rng: rng.randint(0, 4)  # noqa: E731
        p_lit = rng.choice([f"p(X) [{w()}]", f"p(X) always [{w()}]", f"p(X) at T [{w()}]", "p(X)"])
        q_lit = rng.choice([f"q(X) always [{w()}]", f"q(X) [{w()}]", f"r(X, Y) [{w()}]"])
        rules = [f"m(X) :- {p_lit}, {q_lit}.", rng.choice(["", f"n(X) :- {p_lit}, not q(X) [1].", "k :- m(X)."])]
        program = parse_lars("\n".join(r for r in rules if r))
        events: list[Event] = []
        for t in range(rng.randint(8, 30)):
            if rng.random() < 0.8:
                events += [Event(t, "p", (rng.randint(1, 3),)) for _ in range(rng.randint(0, 3))]
            if rng.random() < 0.12:  # q and r come in rare bursts
                events += [Event(t, "q", (rng.randint(1, 3),)), Event(t, "r", (rng.randint(1, 3), 1))]
            if not events or events[-1].t != t:
                events.append(Event(t))
        got = answers(program, events)
        assert got == reference_answers(program, events), seed
        assert got == recomputed(program, events), seed


def test_a_run_through_a_wait_holds_the_box():
    """A box over a window that waited (no rule could use it) and dropped the batches older
    than its window: a run that began before them and goes on through them holds the box.
    q(1) at every point from 3 and p(1) at 3 and 9: the view of q always [2] waits from 4 to 8,
    and at 9 q(1) held at 7, 8 and 9, so c(1) at 9 (the run's start, 3, was passed by lo
    jumping from 1 to 5 and it never entered the view: no answer).  The same through a
    replay: the late q(1) at 4 (read by no rule) warms an engine up from 1, after t1, where
    the program fact a(1)'s run starts; a holds everywhere, so c exactly where p is."""
    from chronolog.dialects.lars.parser import parse_lars

    program = parse_lars("c(X) :- q(X) always [2], p(X).")
    events = [Event(0)] + [Event(t, "q", (1,)) for t in range(3, 10)] + [Event(3, "p", (1,)), Event(9, "p", (1,))]
    events.sort(key=lambda e: e.t)
    assert {(p, a, t) for p, a, t in answers(program, events)} == {("c", (1,), 9)}
    program = parse_lars("a(1).\nb :- a(Y) [3].\nc :- a(Z) always [2], p(X).")
    events = [Event(0, "p", (1,)), Event(1, "p", (1,)), Event(5), Event(4, "q", (1,)), Event(9, "p", (1,))]
    got = {(p, a, t) for p, a, t in answers(program, events) if p == "c"}
    assert got == {("c", (), 0), ("c", (), 1), ("c", (), 9)}


def test_program_facts_never_block_a_window():
    from chronolog.dialects.lars.parser import parse_lars

    program = parse_lars("m(X) :- p(X) [2], v(X).\nv(1).\nv(2).")
    events = [Event(0, "p", (1,)), Event(1), Event(2, "p", (2,)), Event(5)]
    got = answers(program, events)
    assert got == reference_answers(program, events) == recomputed(program, events)
    assert ("m", (1,), 0) in {(p, a, t) for p, a, t in got}


_atom = st.tuples(st.sampled_from(["a", "b", "c"]), st.one_of(st.integers(-1, 9), st.just("s")))


@settings(max_examples=150, deadline=None)
@given(
    st.sampled_from(["DIAMOND", "BOX", "AT"]),
    st.sampled_from([None, 0, 2, 4]),
    st.lists(st.tuples(st.lists(_atom, max_size=6), st.lists(_atom, max_size=6), st.booleans()), max_size=8),
)
def test_time_window_view_sets_equal_atom_by_atom(op, size, steps):
    """TimeWindowView.advance on whole changes (one time: bucket set operations)
    against the same changes one atom at a time (the per-atom loop)."""
    from chronolog.dialects.lars.engine.views import TimeWindowView
    from chronolog.dialects.lars.ir import Op

    whole, single = TimeWindowView(Op[op], size), TimeWindowView(Op[op], size)
    source: set = set()
    for t, (added, removed, same_time) in enumerate(steps):
        if same_time:  # the common shape: everything at one time
            added = [(a, t) for a, _ in added]
            removed = [(a, max(t - 1, 0)) for a, _ in removed]
        added = {x for x in added if x not in source}
        removed = {x for x in removed if x in source} - added
        source = (source | added) - removed
        whole.advance(t, 0, added, removed)
        single.advance(t, 0, set(), set())
        for x in removed:
            single.advance(t, 0, set(), {x})
        for x in added:
            single.advance(t, 0, {x}, set())
        assert whole.rel.tuples == single.rel.tuples
        assert whole._by_time == single._by_time


@settings(max_examples=300, deadline=None)
@given(
    st.sampled_from(["DIAMOND", "BOX", "AT"]),
    st.integers(0, 3),
    st.integers(0, 2),
    st.lists(  # segments of equal batches (runs) that wait or not: long runs through long waits
        st.tuples(st.sampled_from([{(1,)}, {(1,)}, {(1,), (2,)}, set()]), st.booleans(), st.integers(1, 5)),
        min_size=1, max_size=6,
    ),
)
@example("BOX", 2, 0, [(set(), False, 3), ({(1,)}, False, 1), ({(1,)}, True, 5), ({(1,)}, False, 1)])  # the run from 3
def test_a_view_that_waits_catches_up_exactly(op, size, start, segments):
    """StreamWindowView with ``defer`` (the waits of Laser2's pruning) against the same
    view advanced at every point: equal at every point it is advanced.  ``start``: the
    first point stepped after t1 = 0 (an engine warmed up for a replay)."""
    from chronolog.dialects.lars.engine.views import StreamWindowView
    from chronolog.dialects.lars.ir import Op

    steps = [(batch, wait) for batch, wait, n in segments for _ in range(n)]
    waiting, every = StreamWindowView(Op[op], size), StreamWindowView(Op[op], size)
    for t, (batch, wait) in enumerate(steps, start):
        every.advance_batch(t, 0, batch)
        if wait:
            waiting.defer(t, batch)
        else:
            waiting.advance_batch(t, 0, batch)
            assert waiting.rel.tuples == every.rel.tuples, t


@settings(max_examples=150, deadline=None)
@given(st.lists(st.tuples(st.booleans(), st.lists(st.tuples(st.integers(0, 3), st.integers(0, 3)), max_size=6)), max_size=12))
def test_index_buckets_equal_a_rebuilt_index(steps):
    """Index buckets (1-tuples, then sets) kept up to date equal an index built anew."""
    from chronolog.dialects.lars.engine.relation import Rel, index_key

    rel = Rel()
    rel.start_journal()
    for cols in ((0,), (1,), (0, 1)):
        rel.index(cols)
    for i, (add, ts) in enumerate(steps):
        if i % 3 == 0:
            rel.start_journal()
        if len(ts) == 1:
            (rel.add if add else rel.discard)(ts[0])
        else:
            (rel.add_many if add else rel.discard_many)(ts)
        for cols in ((0,), (1,), (0, 1)):
            kept = {k: set(b) for k, b in rel.index(cols).items()}
            fresh = Rel(rel.tuples)
            assert kept == {k: set(b) for k, b in fresh.index(cols).items()}
            assert all(b for b in rel.index(cols).values())
            if len(cols) == 1:
                assert not any(type(k) is tuple for k in kept)
            removed = rel.minus_get(cols)
            if removed is not None:
                key = index_key(cols)  # the value itself on one column, a tuple on several
                assert {k: set(removed(k, ())) for k in map(key, rel.minus)} == {
                    k: {m for m in rel.minus if key(m) == k} for k in map(key, rel.minus)
                }


def test_step_result_timed_groups_and_flat_form_agree():
    from chronolog.dialects.lars.engine.core import StepResult

    r = StepResult(3)
    r.add_timed(("p", 1), [("a", 2), ("b", 3)], [("c", 1)])
    r.add_timed(("q", 0), [], [])
    assert sorted(r.timed) == sorted([(("p", 1), ("a",), 2, 1), (("p", 1), ("b",), 3, 1), (("p", 1), ("c",), 1, -1)])
    r.add_timed(("q", 0), [(3,)], [])  # after the flat form was built: both kept
    assert (("q", 0), (), 3, 1) in r.timed
    flat = StepResult(3, timed=list(r.timed))
    assert sorted((p, sorted(a), sorted(d)) for p, a, d in flat.timed_groups()) == sorted(
        (p, sorted(a), sorted(d)) for p, a, d in r.timed_groups()
    )


@settings(max_examples=150, deadline=None)
@given(st.lists(st.tuples(st.integers(0, 2), st.sets(st.tuples(st.integers(0, 3), st.integers(0, 3)), max_size=6)),
                max_size=12))
def test_replace_keeps_journal_and_indexes_like_single_changes(steps):
    """``Rel.replace`` (which skips the checks of ``add_many``/``discard_many``) leaves the
    content, the journal (net changes since ``start_journal``) and every index as they are
    by definition: the content since the journal started, compared set by set."""
    from chronolog.dialects.lars.engine.relation import Rel

    rel = Rel()
    rel.start_journal()
    for cols in ((0,), (0, 1)):
        rel.index(cols)
    start: set = set()
    for kind, ts in steps:
        if kind == 0:
            rel.start_journal()
            start = set(rel.tuples)
            continue
        before = set(rel.tuples)
        if kind == 1:
            added, removed = rel.replace(set(ts))
            assert set(added) == ts - before and set(removed) == before - ts
            assert rel.tuples == ts
        else:
            rel.add_many(ts)
        assert rel.plus == rel.tuples - start and rel.minus == start - rel.tuples
        for cols in ((0,), (0, 1)):
            kept = {k: set(b) for k, b in rel.index(cols).items()}
            assert kept == {k: set(b) for k, b in Rel(rel.tuples).index(cols).items()}


@settings(max_examples=200, deadline=None)
@given(
    st.sampled_from(["DIAMOND", "AT"]),
    st.sampled_from([None, 0, 1, 3]),
    st.lists(st.sets(st.sampled_from([(1,), (2,), (3,)]), max_size=3), max_size=10),
)
def test_stream_view_content_and_journal_are_the_windows(op, size, batches):
    """A journaled StreamWindowView (the view moves its buckets into its relation without
    checking them) holds, at every point, what the window's definition gives from the batches
    themselves, and its journal is the change from the point before."""
    from chronolog.dialects.lars.engine.views import StreamWindowView
    from chronolog.dialects.lars.ir import Op

    view = StreamWindowView(Op[op], size)
    view.rel.start_journal()
    before: set = set()
    for t, batch in enumerate(batches):
        view.rel.start_journal()
        view.advance_batch(t, 0, set(batch))
        lo = 0 if size is None else max(0, t - size)
        if op == "DIAMOND":
            expected = {a for T in range(lo, t + 1) for a in batches[T]}
        else:
            expected = {a + (T,) for T in range(lo, t + 1) for a in batches[T]}
        assert view.rel.tuples == expected, t
        assert view.rel.plus == expected - before and view.rel.minus == before - expected, t
        before = expected
