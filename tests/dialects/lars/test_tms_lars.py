"""The TMS mode (engine/tms_engine.py) on LARS programs, checked by clingo.

At every time point the TMS's answer must be the answer (output atoms) of
one of the answer sets clingo enumerates for the one-shot translation at that
point (tests/answer_sets.py), and "no answer set" exactly when clingo finds
none.  On stratified programs the TMS must equal the incremental core engine.
Plus Ticker's scenarios A and B, stability, and restoring a checkpoint.
"""

from __future__ import annotations

import json
import random
import sys
from pathlib import Path

from hypothesis import HealthCheck, example, given, settings
from hypothesis import strategies as st

sys.path.insert(0, str(Path(__file__).resolve().parents[2]))  # tests/: helpers

from answer_sets import all_answers  # noqa: E402
from strategies import (  # noqa: E402
    CHOICE_TEMPLATES,
    programs,
    random_choice_program,
    random_program,
    random_stream,
    streams,
)

from chronolog.bench.lars_gen import WORKLOADS  # noqa: E402
from chronolog.core.errors import ProgramError  # noqa: E402
from chronolog.core.events import Event  # noqa: E402
from chronolog.dialects.lars.engine.core import Engine  # noqa: E402
from chronolog.dialects.lars.engine.tms_engine import TmsEngine  # noqa: E402
from chronolog.dialects.lars.engine.tms_split import split_plan  # noqa: E402
from chronolog.dialects.lars.evaluator import LarsEvaluator  # noqa: E402
from chronolog.dialects.lars.ir import Program  # noqa: E402
from chronolog.dialects.lars.parser import parse_lars  # noqa: E402
from chronolog.dialects.lars.plan import plan_program  # noqa: E402
from chronolog.dialects.registry import lookup  # noqa: E402
from chronolog.runtime.backfill.segments import plan_segments  # noqa: E402


def by_time(events: list[Event]) -> tuple[int, int, dict[int, list]]:
    facts: dict[int, list] = {}
    for e in events:
        facts.setdefault(e.t, [])
        if e.is_fact:
            facts[e.t].append(((e.pred, len(e.args)), tuple(e.args)))
    return min(facts), max(facts), facts


def check_tms_answers(program: Program, events: list[Event], seed: int = 0, split: bool = True) -> list[frozenset]:
    """Run the TMS over ``events``; assert each point's answer is an answer set's.
    ``split=False``: the TMS takes the whole program (no lower part for the core engine)."""
    plan = plan_program(program)
    t1, last, facts = by_time(events)
    engine = TmsEngine(plan, t1, seed, split=split)
    flat: list[tuple[int, str, tuple]] = []
    answers = []
    for t in range(t1, last + 1):
        result = engine.step(t, facts.get(t, []))
        flat.extend((t, k[0], a) for k, a in facts.get(t, []))
        expected = all_answers(program, flat, t1, t)
        got = frozenset((p[0], a, T) for p, a, T in engine.derived_at())
        if not expected:
            assert not result.consistent, f"t={t}: clingo finds no answer set, the TMS answered {sorted(got)}"
        else:
            assert result.consistent, f"t={t}: the TMS found no answer set; clingo: {expected[:3]}"
            assert got in expected, f"t={t}: {sorted(got)} is not among {[sorted(x) for x in expected[:4]]}"
        answers.append(got)
    return answers


def parse(text: str) -> Program:
    return parse_lars(text, "test.lars")


# ---------------------------------------------------------------- random programs


@settings(max_examples=80, deadline=None, suppress_health_check=list(HealthCheck))
@given(programs(stratified=False), streams(), st.integers(0, 3))
def test_random_non_stratified_programs(program: Program, events: list[Event], seed: int) -> None:
    try:
        plan_program(program)
    except ProgramError:
        return
    check_tms_answers(program, events, seed)


@settings(max_examples=80, deadline=None, suppress_health_check=list(HealthCheck))
@given(st.integers(0, 10**9))
def test_seeded_programs_with_choices(seed: int) -> None:
    rng = random.Random(seed)
    text = random_choice_program(rng)
    try:
        program = parse(text)
        plan_program(program)
    except ProgramError:
        return
    check_tms_answers(program, random_stream(rng), seed=seed % 5)


@settings(max_examples=40, deadline=None, suppress_health_check=list(HealthCheck))
@given(programs(stratified=False), streams(), st.integers(0, 3))
def test_random_non_stratified_programs_whole_tms(program: Program, events: list[Event], seed: int) -> None:
    """The TMS over the whole program (no split, as for ``tms!`` on a stratified one)."""
    try:
        plan_program(program)
    except ProgramError:
        return
    check_tms_answers(program, events, seed, split=False)


@settings(max_examples=60, deadline=None, suppress_health_check=list(HealthCheck))
@given(st.integers(0, 10**9))
def test_split_and_whole_tms_agree_on_the_lower_part(seed: int) -> None:
    """The stratified lower part has one answer: the core engine below the TMS
    (engine/tms_split.py) and the TMS over the whole program must give the same
    lower atoms at every point, and agree on whether there is an answer set;
    and the split engine's answers are clingo's answer sets."""
    rng = random.Random(seed)
    for _ in range(40):  # (most random programs have no lower part: draw one that has)
        try:
            program = random_program(rng, stratified=False) if rng.random() < 0.5 else parse(random_choice_program(rng))
            plan = plan_program(program)
        except ProgramError:
            continue
        parts = split_plan(plan)
        if parts is not None:
            break
    else:
        return
    events = random_stream(rng)
    t1, last, facts = by_time(events)
    split, whole = TmsEngine(plan, t1, split=True), TmsEngine(plan, t1, split=False)
    lower = {p for ci in parts.lower for p in plan.components[ci].preds}
    for t in range(t1, last + 1):
        a, b = split.step(t, facts.get(t, [])), whole.step(t, facts.get(t, []))
        assert a.consistent == b.consistent, t
        assert {x for x in split.derived_at() if x[0] in lower} == {x for x in whole.derived_at() if x[0] in lower}, t
    check_tms_answers(program, events, seed % 3)  # and the split engine's answers are answer sets


def test_a_point_without_an_answer_set_shows_no_lower_atom() -> None:
    """An odd loop above a stratified lower part: at the points without an answer
    set the split engine's changes take every lower atom away and bring them back
    after, exactly as the TMS over the whole program shows them."""
    program = parse("a(X) :- p(X) [0].\nx(X) :- q(X) [1], not x(X).\nb(X) :- a(X), not c(X).\nc(X) :- r(X) [2].")
    plan = plan_program(program)
    rng = random.Random(1)
    events = [Event(t, rng.choice("pqr"), (x,)) for t in range(40) for x in range(3) if rng.random() < 0.5]
    t1, last, facts = by_time(events)
    split, whole = TmsEngine(plan, t1, split=True), TmsEngine(plan, t1, split=False)
    assert split.lower is not None
    shown: dict[str, set] = {"split": set(), "whole": set()}
    gaps = 0
    for t in range(t1, last + 1):
        for name, engine in (("split", split), ("whole", whole)):
            result = engine.step(t, facts.get(t, []))
            for p, a, sign in result.now:
                (shown[name].add if sign > 0 else shown[name].discard)((p, a))
            assert shown[name] == set(engine.holding_now()), (name, t)
            if not result.consistent:
                assert not shown[name] and not engine.derived_at() and not engine.exported(), (name, t)
        gaps += not whole.consistent
        assert shown["split"] == shown["whole"], t
    assert 0 < gaps < last - t1  # both kinds of points occur


def test_upper_part_reads_lower_atoms_through_windows() -> None:
    """Box, diamond and @ over a predicate of the lower part: it holds at t only
    (a box over more than the current point is false, an @ is pinned to t)."""
    program = parse(
        "l(X) :- p(X) [3].\n"
        "a(X) :- l(X) always [2], not b(X).\nb(X) :- l(X) always [2], not a(X).\n"
        "g(X) :- l(X) [2], not h(X).\nh(X) :- l(X) at T [4], T < 3, not g(X).\n"
        "k(X,T) :- l(X) at T [2], g(X).\nm(X) :- l(X) always [0], not g(X)."
    )
    plan = plan_program(program)
    assert TmsEngine(plan, 0).lower is not None
    rng = random.Random(3)
    events = sorted((Event(t, "p", (rng.randint(1, 2),)) for t in range(0, 9)), key=lambda e: e.t)
    for seed in range(3):
        answers = check_tms_answers(program, events, seed)
        assert any(p == "a" or p == "b" for p, _, _ in answers[0])  # the box holds at the first point
        assert not any(p in ("a", "b") for ans in answers[1:] for p, _, _ in ans)  # and only there


def _lockstep_groundings(program: Program, events: list[Event]) -> int:
    """Step an engine that grounds only the changes of deltable components next to
    one that grounds every changed component whole: the same ground rules in the
    TMS and the same atoms that could hold, at every point.  Returns how many
    points grounded a change only."""
    import chronolog.dialects.lars.engine.tms_grounder as tms_grounder

    plan = plan_program(program)
    t1, last, facts = by_time(events)
    delta, whole = TmsEngine(plan, t1, split=False), TmsEngine(plan, t1, split=False)
    whole.grounder.delta = False
    used = 0
    real = tms_grounder._Grounding._delta

    def counting(self, *args):  # type: ignore[no-untyped-def]
        nonlocal used
        got = real(self, *args)
        used += got is not None
        return got

    tms_grounder._Grounding._delta = counting  # type: ignore[method-assign]
    try:
        for t in range(t1, last + 1):
            delta.step(t, facts.get(t, []))
            whole.step(t, facts.get(t, []))
            assert set(delta.tms.rules) == set(whole.tms.rules), t
            mine, theirs = delta.grounder.caches, whole.grounder.caches
            assert {ci: c[2] for ci, c in mine.items()} == {ci: c[2] for ci, c in theirs.items()}, t
            assert delta.derived_at() == whole.derived_at(), t
    finally:
        tms_grounder._Grounding._delta = real  # type: ignore[method-assign]
    return used


@settings(max_examples=60, deadline=None, suppress_health_check=list(HealthCheck))
@given(st.integers(0, 10**9))
def test_grounding_only_the_change_equals_grounding_whole(seed: int) -> None:
    rng = random.Random(seed)
    try:
        program = random_program(rng, stratified=rng.random() < 0.5) if rng.random() < 0.6 else parse(random_choice_program(rng))
        plan_program(program)
    except ProgramError:
        return
    _lockstep_groundings(program, random_stream(rng))


def test_scenario_a_grounds_only_the_changes_of_its_window_rules() -> None:
    program, events = scenario("tickerA", 8, 80)
    assert _lockstep_groundings(program, events) > 20


def test_scenario_b_leaves_only_the_choice_to_the_tms() -> None:
    program, events = scenario("tickerB", 5, 40)
    plan = plan_program(program)
    engine = TmsEngine(plan, 0)
    assert engine.lower is not None
    _, last, facts = by_time(events)
    for t in range(last + 1):
        engine.step(t, facts.get(t, []))
        assert {k[0][0] for k in engine.tms.ids} <= {"get", "n_get"}, t


@settings(max_examples=60, deadline=None, suppress_health_check=list(HealthCheck))
@given(programs(stratified=True), streams())
def test_stratified_programs_tms_equals_core_engine(program: Program, events: list[Event]) -> None:
    plan = plan_program(program)
    t1, last, facts = by_time(events)
    tms, core = TmsEngine(plan, t1), Engine(plan, t1)
    for t in range(t1, last + 1):
        a = tms.step(t, facts.get(t, []))
        b = core.step(t, facts.get(t, []))
        assert a.consistent == b.consistent
        assert tms.derived_at() == core.derived_at(), t


# ---------------------------------------------------------------- Ticker's scenarios


def scenario(name: str, win: int, tps: int, seed: int = 42) -> tuple[Program, list[Event]]:
    class Args:
        pass

    args = Args()
    args.win, args.facts, args.tps, args.rules = win, 0, tps, 0  # type: ignore[attr-defined]
    rnd = random.Random(f"{name}/{seed}")
    lars, _, facts = WORKLOADS[name](args, rnd)
    events: list[Event] = []
    for t in range(tps):
        got = facts(t)
        events += [Event(t, p, tuple(a)) for p, a in got] or [Event(t)]
    return parse("\n".join(lars)), events


def test_scenario_a_answers_are_answer_sets() -> None:
    program, events = scenario("tickerA", 5, 40)
    check_tms_answers(program, events)


def test_scenario_b_answers_are_answer_sets() -> None:
    program, events = scenario("tickerB", 5, 40)
    answers = check_tms_answers(program, events)
    assert any(any(p == "get" for p, _, _ in a) for a in answers)  # choices were made


# ---------------------------------------------------------------- stability


def test_a_stream_that_stops_changing_keeps_its_model() -> None:
    program = parse("a(X) :- p(X) [2], not b(X).\nb(X) :- p(X) [2], not a(X).\nc :- a(X), b(Y).")
    for seed in range(6):
        events = [Event(t, "p", (v,)) for t in range(0, 30) for v in (1, 2, 3)]
        answers = check_tms_answers(program, events, seed)
        models = {frozenset((p, a) for p, a, _ in ans) for ans in answers}
        assert len(models) == 1, f"seed {seed}: the model flapped: {models}"


def test_choice_survives_the_fact_that_forced_it() -> None:
    # force(1) at t=1 rules a(1) out (an odd loop); afterwards both choices are
    # answer sets again, and the TMS keeps b(1), whatever its seed prefers.
    program = parse(
        "a(X) :- p(X) [1], not b(X).\nb(X) :- p(X) [1], not a(X).\nx :- a(X), force(X), not x."
    )
    for seed in range(6):
        events = [Event(t, "p", (1,)) for t in range(12)] + [Event(1, "force", (1,))]
        events.sort(key=lambda e: e.t)
        answers = check_tms_answers(program, events, seed)
        assert all(("b", (1,), t) in ans for ans, t in zip(answers[1:], range(1, 12))), seed


# ---------------------------------------------------------------- checkpoints


FORCED = "a(X) :- p(X) [1], not b(X).\nb(X) :- p(X) [1], not a(X).\nx :- a(X), force(X), not x.\n"


def _run(evaluator: LarsEvaluator, events: list[Event], cut: int | None = None, seed: int = 0) -> tuple[list, set]:
    """The changes, and the engine's last answer (what it continues from)."""
    out = []
    for e in events:
        if cut is not None and e.t == cut:
            state = json.loads(json.dumps(evaluator.export_state()))  # as a checkpoint stores it
            plan = plan_program(evaluator.plan.program)
            plan.seed = seed
            evaluator = LarsEvaluator(plan)
            evaluator.import_state(state)
            cut = None
        evaluator.push(e)
        out += evaluator.advance(e.t - 1)
    out += evaluator.finish()
    return out, evaluator.reasoner.engine.derived_at()


def test_restore_from_a_checkpoint_continues_with_the_same_choices() -> None:
    program = parse(FORCED)
    # the seed whose own preference is a(1): only the checkpoint's labels keep b(1)
    for seed in range(8):
        plan = plan_program(program)
        plan.seed = seed
        events = [Event(t, "p", (1,)) for t in range(20)]
        fresh = TmsEngine(plan, 0, seed)
        fresh.step(0, [(("p", 1), (1,))])
        if ("a", 1) in {p for p, _, _ in fresh.derived_at()} and (("a", 1), (1,), 0) in fresh.derived_at():
            break
    else:  # pragma: no cover
        raise AssertionError("no seed prefers a(1)")
    events.insert(2, Event(1, "force", (1,)))
    whole = _run(LarsEvaluator(plan), events, seed=seed)
    restored = _run(LarsEvaluator(plan), events, cut=12, seed=seed)
    assert restored == whole
    assert not any(c[0] == "a" for c in whole[0][2:]), whole  # b(1) was kept throughout
    assert (("b", 1), (1,), 19) in whole[1]


def test_scenario_b_restore_continues_identically() -> None:
    program, events = scenario("tickerB", 5, 60)
    plan = plan_program(program)
    whole = _run(LarsEvaluator(plan), events)
    assert _run(LarsEvaluator(plan_program(program)), events, cut=37) == whole


# ---------------------------------------------------------------- corrections


def _delayed(events: list[Event], rng: random.Random) -> list[Event]:
    """``events`` in an arrival order with some facts delayed, plus retractions of
    some of them, sent late; the stream they mean is the events minus the retracted."""
    arrival: list[Event] = []
    late: list[tuple[int, Event]] = []
    for i, e in enumerate(events):
        if e.is_fact and rng.random() < 0.3:
            late.append((i + rng.randint(1, 6), e))
        else:
            arrival.append(e)
        for j, x in [(j, x) for j, x in late if j <= i]:
            late.remove((j, x))
            arrival.append(x)
    arrival += [x for _, x in late]
    return arrival


@settings(max_examples=40, deadline=None, suppress_health_check=list(HealthCheck))
@given(st.integers(0, 10**9))
@example(2102769)  # a replay's warm-up labels were kept as the live ones: a stale d(2) after p(2)@0's retraction
def test_corrections_leave_an_answer_set_at_every_point(seed: int) -> None:
    import io

    from meaning import meaning

    from chronolog.runtime.embedded import run_embedded

    rng = random.Random(seed)
    templates = [CHOICE_TEMPLATES[i] for i in (0, 1, 2, 4)]  # plain heads: a point's atoms are one evaluation's
    text = "\n".join(p.format(w=rng.randint(0, 3), n=rng.randint(1, 4)) for p in rng.sample(templates, 2))
    program = parse(text)
    events = random_stream(rng)
    facts = [e for e in events if e.is_fact]
    retracted = rng.sample(facts, min(len(facts), rng.randint(0, 2)))
    arrival = _delayed(events, rng) + [Event(e.t, e.pred, e.args, True) for e in retracted]
    out = io.StringIO()
    run_embedded(program, arrival, out, mode="tms", seed=seed % 3)
    lines = [json.loads(x) for x in out.getvalue().splitlines()]
    t1, last = events[0].t, max(e.t for e in events)
    got = meaning(lines, (t1, last), running=True)
    # the stream meant: time order, arrival order within a point (tuple windows
    # count in that order), each retraction withdrawing the latest equal fact
    kept: list[Event] = []
    for e in sorted(arrival, key=lambda e: e.t):
        if e.retract:
            i = max(i for i, x in enumerate(kept) if (x.t, x.pred, x.args) == (e.t, e.pred, e.args))
            del kept[i]
        elif e.is_fact:
            kept.append(e)
    flat = [(e.t, e.pred, tuple(e.args)) for e in kept]
    for t in range(t1, last + 1):
        expected = {frozenset((p, a) for p, a, _ in ans) for ans in all_answers(program, flat, t1, t)}
        at_t = frozenset((p, a) for p, a, T in got if T == t)
        if expected:
            assert at_t in expected, f"t={t}: {sorted(at_t)} not among {[sorted(x) for x in expected]}"
        else:
            assert not at_t


def test_a_late_retraction_after_a_replay_with_a_warm_up_leaves_no_stale_atom() -> None:
    """The example above by hand.  q(1)@4 arriving late replays from 4 with a warm-up from 1,
    which sees no p(2)@0 before it (so derives e(2) at 2); those warm-up labels must not
    become the live ones that the replay of p(2)@0's retraction follows.  Without p(2)@0,
    nothing derives c(2) at 0..2, so at 2 the one answer set is {e(2)}: no d(2)."""
    import io

    from meaning import meaning

    from chronolog.runtime.embedded import run_embedded

    program = parse("a(X) :- p(X) [3], not b(X).\nb(X) :- p(X) [3], not a(X).\nc(X) :- a(X).\n"
                    "c(Y) :- c(X), r(X,Y) [0].\nd(X) :- c(X), not e(X).\ne(X) :- q(X) [0], not d(X).\n")
    arrival = [Event(0, "p", (2,)), Event(1), Event(2, "r", ("a", "a")), Event(3, "r", (1, 2)), Event(3, "p", (2,)),
               Event(2, "q", (2,)), Event(3, "p", ("a",)), Event(4, "q", (1,)), Event(4, "r", (1, 1)), Event(5),
               Event(4, "p", (1,)), Event(6, "p", ("a",)), Event(6, "p", ("a",)), Event(0, "p", (2,), True),
               Event(6, "p", ("a",), True)]
    out = io.StringIO()
    run_embedded(program, arrival, out, mode="tms", seed=0)
    got = meaning([json.loads(x) for x in out.getvalue().splitlines()], (0, 6), running=True)
    assert {(p, a) for p, a, t in got if t == 2} == {("e", (2,))}
    assert {(p, a) for p, a, t in got if t in (0, 1)} == set()


# ---------------------------------------------------------------- a later start (the backfill's segments)


@settings(max_examples=40, deadline=None, suppress_health_check=list(HealthCheck))
@given(st.integers(0, 10**9))
def test_a_later_start_agrees_from_the_first_point_with_the_same_labels(seed: int) -> None:
    """A backfill segment starts a fresh TMS at its warm-up point; the live engine
    started earlier.  Their choices may differ (the live one keeps older ones),
    they agree wherever the answer is unique, and once their labels coincide at
    a point the answers are equal at every later point (docs/tms.md)."""
    rng = random.Random(seed)
    try:
        program = parse(random_choice_program(rng))
        plan = plan_program(program)
    except ProgramError:
        return
    events = random_stream(rng)
    t1, last, facts = by_time(events)
    if last - t1 < 4:
        return
    reach = lookup("lars").reach(program)
    if reach is None:
        return  # (one segment from the first point: the live run itself)
    start = rng.randint(t1 + 1, last - 2)
    (segment,) = plan_segments(start, last, last, reach, None, 1, lambda t: len(facts.get(t, [])), t1)
    warm = segment.warm
    live, late = TmsEngine(plan, t1, seed % 3), TmsEngine(plan, t1, seed % 3)  # (late: first step at warm)
    flat: list[tuple[int, str, tuple]] = []
    met = False
    for t in range(t1, last + 1):
        live.step(t, facts.get(t, []))
        flat.extend((t, k[0], a) for k, a in facts.get(t, []))
        if t < warm:
            continue
        late.step(t, facts.get(t, []))
        if t < start:
            continue  # (the segment's warm-up)
        if len(all_answers(program, flat, t1, t)) == 1:
            assert late.derived_at() == live.derived_at(), t  # one answer: the same, whatever the past
        met = met or (late.consistent and live.consistent and late.tms.model() == live.tms.model())
        if met:
            assert late.derived_at() == live.derived_at(), t


def test_a_later_start_differs_only_while_the_live_engine_keeps_an_older_choice() -> None:
    """force(1) at t=1 makes the live engine choose b(1), which it then keeps (inertia);
    a segment starting after force(1) left the window takes the seed's a(1).  Once
    p(1) is gone from the window (t=11) the choice is gone, and both take a(1)
    afresh at t=12."""
    program = parse(FORCED)
    plan = plan_program(program)
    for seed in range(8):  # a seed that prefers a(1)
        fresh = TmsEngine(plan, 0, seed)
        fresh.step(0, [(("p", 1), (1,))])
        if (("a", 1), (1,), 0) in fresh.derived_at():
            break
    facts = {t: [(("p", 1), (1,))] for t in range(20) if t not in (10, 11)}
    facts[1] = facts[1] + [(("force", 1), (1,))]
    live, late = TmsEngine(plan, 0, seed), TmsEngine(plan, 0, seed)
    chosen: dict[int, tuple[set, set]] = {}
    for t in range(20):
        live.step(t, facts.get(t, []))
        if t >= 4:
            late.step(t, facts.get(t, []))
            chosen[t] = ({p[0] for p, _, _ in live.derived_at()}, {p[0] for p, _, _ in late.derived_at()})
    assert all(chosen[t] == ({"b"}, {"a"}) for t in range(5, 11)), chosen
    assert chosen[11] == (set(), set())
    assert all(chosen[t] == ({"a"}, {"a"}) for t in range(12, 20)), chosen


# ---------------------------------------------------------------- one-shot, several models


def test_oneshot_models_are_distinct_answer_sets_per_point() -> None:
    import io

    from meaning import meaning

    from chronolog.runtime.embedded import run_embedded

    program = parse("a(X) :- p(X) [1], not b(X).\nb(X) :- p(X) [1], not a(X).\nc :- a(X), q [2].")
    rng = random.Random(5)
    events = [Event(t, "p", (rng.randint(1, 3),)) for t in range(12)] + [Event(4, "q")]
    events.sort(key=lambda e: e.t)
    out = io.StringIO()
    run_embedded(program, events, out, mode="oneshot", models=3)
    lines = [json.loads(x) for x in out.getvalue().splitlines()]
    assert {x["model"] for x in lines} == {0, 1, 2}
    flat = [(e.t, e.pred, tuple(e.args)) for e in events if e.is_fact]
    for t in range(12):
        expected = {frozenset((p, a) for p, a, _ in ans) for ans in all_answers(program, flat, 0, t)}
        got = []
        for k in range(3):
            mine = [{key: v for key, v in x.items() if key != "model"} for x in lines if x["model"] == k]
            got.append(frozenset((p, a) for p, a, T in meaning(mine, (0, 11)) if T == t))
        assert all(g in expected for g in got), t
        assert len(set(got)) == min(3, len(expected)), t
