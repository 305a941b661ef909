"""Stratified negation in DatalogMTL: ``not L`` in rule bodies.

Hand-derived intervals (complements bounded by the input's span), the
refusal of programs with recursion through ``not``, and random stratified
programs: streaming = batch = the independent reference (which decides
``not`` cell by cell, stratum by stratum), corrections included.
"""

from __future__ import annotations

import random
from fractions import Fraction as F

import pytest
from test_mtl_runtime import _events, chronolog
from test_mtl_semantics import _literal, as_cells, clip, drive, iv, meaning, random_facts, reference, run

from chronolog.core.errors import ProgramError
from chronolog.core.events import Event
from chronolog.dialects.mtl.evaluator import MtlEvaluator, not_forward_propagating
from chronolog.dialects.mtl.materialise import strata
from chronolog.dialects.mtl.parser import parse_mtl


def ivs(*texts: str) -> list:
    return [iv(t) for t in texts]


@pytest.mark.parametrize("mode", ["stream", "batch"])
@pytest.mark.parametrize("program, facts, atom, want", [
    # P minus R
    ("Q(X):-P(X), not R(X)", [("P", "[0,10]"), ("R", "[3,5]")], "Q", ["[0,3)", "(5,10]"]),
    # R held throughout the last 2: on [4,8]; Q where it did not
    ("Q(X):-P(X), not Boxminus[0,2]R(X)", [("P", "[0,10]"), ("R", "[2,8]")], "Q", ["[0,4)", "(8,10]"]),
    # R at some point 1 to 2 earlier: on [4,5]
    ("Q(X):-P(X), not Diamondminus[1,2]R(X)", [("P", "[0,10]"), ("R", "[3,3]")], "Q", ["[0,4)", "(5,10]"]),
    # the first unit of P: P did not hold 1 earlier (before the input's span nothing holds)
    ("Start(X):-P(X), not Diamondminus[1,1]P(X)", [("P", "[2,6]")], "Start", ["[2,3)"]),
    # not (A Since B): A Since[0,3] B holds on [1,4] (B at 1, A on [0,10])
    ("Q(X):-A(X), not A(X) Since[0,3] B(X)", [("A", "[0,10]"), ("B", "[1,1]")], "Q", ["[0,1)", "(4,10]"]),
    # strata: T under not, then Q under not
    ("Q(X):-R(X), not T(X)\nS(X):-P(X), not Q(X)", [("P", "[0,10]"), ("R", "[2,6]"), ("T", "[4,5]")], "S",
     ["[0,2)", "[4,5]", "(6,10]"]),
    # recursion through time above a negation: A repeats every 3 from where P holds without R
    ("A(X):-P(X), not R(X)\nA(X):-Diamondminus[3,3]A(X)", [("P", "[0,1]"), ("R", "(1/2,1]"), ("P", "[11,11]")], "A",
     ["[0,1/2]", "[3,7/2]", "[6,13/2]", "[9,19/2]", "[11,11]"]),
])
def test_negation_by_hand(mode, program, facts, atom, want):
    got = run(program, [(p, ("a",), w) for p, w in facts], mode=mode, extra_times=[11])
    assert got.get((atom, ("a",)), []) == ivs(*want)


def test_a_streaming_window_that_starts_mid_stream_is_not_the_input_start():
    # with a step every time unit, the window [e-2, t] cuts R: Boxminus[0,2]R looks false at its start, so
    # deriving Q again there (not Boxminus...) and reading it through Diamondminus would claim V until 10
    program = "Q(X):-P(X), not Boxminus[0,2]R(X)\nV(X):-Diamondminus[0,2]Q(X)\n"
    facts = [("P", ("a",), "[0,10]"), ("R", ("a",), "[0,10]")]
    for mode in ("stream", "batch"):
        got = run(program, facts, mode=mode, extra_times=range(11))
        assert got == {("Q", ("a",)): ivs("[0,2)"), ("V", ("a",)): ivs("[0,4)")}, mode


def test_a_ground_negation_is_the_complement_within_the_input_span():
    # no heartbeat: the alarm holds where none was seen, from the first time to the last
    facts = [("Heartbeat", (), "[0,2]"), ("Heartbeat", (), "[5,6]"), ("Tick", (), "[8,8]")]
    got = run("Alarm:-not Heartbeat\n", facts)
    assert got[("Alarm", ())] == ivs("(2,5)", "(6,8]")


def test_negation_of_a_future_operator_is_batch_only():
    program = parse_mtl("Q(X):-P(X), not Diamondplus[0,2]R(X)\n")
    assert not_forward_propagating(program) is not None
    got = run("Q(X):-P(X), not Diamondplus[0,2]R(X)", [("P", ("a",), "[0,10]"), ("R", ("a",), "[6,7]")], mode="batch")
    assert got[("Q", ("a",))] == ivs("[0,4)", "(7,10]")


@pytest.mark.parametrize("text, where, cycle", [
    ("Q(X):-P(X), not R(X)\nR(X):-Q(X)\n", ":1:13", "Q/1 depends on 'not R/1' and R/1 depends on Q/1 (R/1 -> Q/1 -> R/1)"),
    ("Q(X):-P(X), not Q(X)\n", ":1:13", "(Q/1 -> Q/1)"),
    ("A(X):-P(X)\nB(X):-A(X), not Boxminus[0,1]C(X)\nC(X):-Diamondminus[1,1]B(X)\n", ":2:13",
     "B/1 depends on 'not C/1'"),
])
def test_recursion_through_not_is_refused_naming_the_cycle(text, where, cycle, tmp_path):
    program = parse_mtl(text, "p.mtl")  # one line at a time, the parser cannot see the cycle
    with pytest.raises(ProgramError) as exc:
        strata(program)
    assert f"p.mtl{where}: error: the program is not stratified" in str(exc.value) and cycle in str(exc.value)
    (tmp_path / "p.mtl").write_text(text)
    (tmp_path / "in.jsonl").write_text('{"t": 1, "pred": "P", "args": ["a"]}\n')
    for args in (["run", str(tmp_path / "p.mtl"), "--input", str(tmp_path / "in.jsonl")],
                 ["check", str(tmp_path / "p.mtl")]):
        got = chronolog(*args)
        assert got.returncode == 2 and "not stratified" in got.stderr and "Traceback" not in got.stderr


def test_strata_order_rules_below_the_negations_that_read_them():
    program = parse_mtl("S(X):-P(X), not Q(X)\nQ(X):-R(X), not T(X)\nT(X):-Diamondminus[0,1]U(X)\nV(X):-S(X)\n")
    levels = [sorted(str(r.head) for r in rules) for rules in strata(program)]
    assert levels == [["T(X)"], ["Q(X)"], ["S(X)", "V(X)"]]


# ---------------------------------------------------------------- random stratified programs


def random_negation_program(rng: random.Random, future: bool = False) -> str:
    """Rules for R, S, T: positive literals may read the rule's own level
    (recursion), negated ones only strictly lower predicates."""
    heads = ["R", "S", "T"]
    rules = []
    for i, h in enumerate(heads):
        for _ in range(rng.randint(1, 2)):
            body = [_literal(rng, ["P", "Q"] + heads[: i + 1], future)]
            for _ in range(rng.randint(0, 1)):
                body.append(_literal(rng, ["P", "Q"] + heads[: i + 1], future))
            for _ in range(rng.randint(1, 2) if i else rng.randint(0, 1)):
                body.append("not " + _literal(rng, ["P", "Q"] + heads[:i], future))
            rng.shuffle(body)
            head = f"Boxplus[0,{rng.randint(0, 2)}]{h}(X)" if rng.random() < 0.2 else f"{h}(X)"
            rules.append(f"{head}:-{', '.join(body)}")
    return "\n".join(rules) + "\n"


def _span(facts):
    times = [iv(w)[0] for _, _, w in facts] + [iv(w)[2] for _, _, w in facts]
    return min(times), max(times)


@pytest.mark.parametrize("seed", range(60))
def test_random_stratified_programs_stream_batch_and_reference_agree(seed):
    rng = random.Random(5000 + seed)
    text = random_negation_program(rng)
    assert not_forward_propagating(parse_mtl(text)) is None
    facts = random_facts(rng)
    lo, hi = _span(facts)
    want, ruler = reference(text, facts, lo, hi)
    assert as_cells(ruler, clip(run(text, facts, mode="batch"), hi)) == want, text
    assert as_cells(ruler, clip(run(text, facts, mode="stream"), hi)) == want, text
    steps = [lo + F(k, 2) for k in range(int(2 * (hi - lo)) + 1)]  # a window at every half unit
    assert as_cells(ruler, clip(run(text, facts, mode="stream", extra_times=steps), hi)) == want, text


@pytest.mark.parametrize("seed", range(25))
def test_random_stratified_programs_with_future_operators_batch_and_reference_agree(seed):
    rng = random.Random(7000 + seed)
    text = random_negation_program(rng, future=True)
    facts = random_facts(rng)
    lo, hi = _span(facts)
    want, ruler = reference(text, facts, lo, hi)
    assert as_cells(ruler, run(text, facts, mode="batch")) == want, text


@pytest.mark.parametrize("seed", range(25))
def test_delayed_and_retracted_facts_under_negation_mean_the_stream_in_time_order(seed):
    rng = random.Random(9000 + seed)
    text = random_negation_program(rng)
    facts = random_facts(rng) + random_facts(rng)
    ordered = _events(facts)
    arrival = list(ordered)
    i = rng.randrange(len(arrival))
    ev = arrival.pop(i)
    arrival.insert(min(len(arrival), i + rng.randint(1, 4)), ev)  # one delayed fact
    gone = rng.choice(ordered)
    arrival.append(Event(gone.t, gone.pred, gone.args, True, None, gone.span))  # one withdrawn
    kept = list(ordered)
    kept.remove(gone)
    hi = max(max(e.t for e in ordered), max(e.span[2] for e in ordered))
    want = clip(meaning(drive(MtlEvaluator(parse_mtl(text), "batch"), kept + [Event(hi)])), hi)
    got = clip(meaning(drive(MtlEvaluator(parse_mtl(text), "stream"), arrival + [Event(hi)])), hi)
    assert got == want, text


@pytest.mark.parametrize("seed", range(40))
def test_negation_under_a_retention_means_the_kept_stream_in_time_order(seed):
    """Negated windows read the pruned log: over a stream several windows long (input facts of
    derived predicates too), delays and retractions, a log cut at every step or rarely, the
    answers are the batch evaluation of what the retention keeps, in time order."""
    from test_mtl_retention import arrival, kept_after_retention, time_order

    rng = random.Random(11_000 + seed)
    text = random_negation_program(rng)
    n = rng.choice([None, F(1, 2), 1, F(5, 2), 4])
    preds = rng.choice([("P", "Q"), ("P", "Q", "R", "S", "T")])
    facts = []
    for k in range(rng.randint(2, 6)):  # batches of random facts, 5 apart
        for pred, args, w in random_facts(rng, preds):
            lo, hi = (F(x) + 5 * k for x in w[1:-1].split(","))
            facts.append((pred, args, f"{w[0]}{lo},{hi}{w[-1]}"))
    ordered = _events(facts)
    end = max(max(e.t for e in ordered), max(e.span[2] for e in ordered))
    ticks = [Event(F(k, 2)) for k in range(0, int(2 * end) + 1)]
    stream = arrival(rng, sorted(ordered + ticks, key=lambda e: e.t), delays=12, retractions=3)
    kept, dropped = kept_after_retention(stream, n)
    want = clip(meaning(drive(MtlEvaluator(parse_mtl(text), "batch"), time_order(kept) + [Event(end)])), end)
    ev = MtlEvaluator(parse_mtl(text), "stream", retention=n)
    ev.prune_every = rng.choice([1, 2, 64])
    assert clip(meaning(drive(ev, stream + [Event(end)])), end) == want, text
    assert ev.too_late == dropped
