"""DatalogMTL: hand-derived intervals for every operator, and the evaluator
(batch and streaming) against the independent cell-by-cell reference."""

from __future__ import annotations

import random
from fractions import Fraction as F
from math import inf

import pytest
from mtl_reference import Ruler, cells_of, reference_model

from chronolog.core.events import Event
from chronolog.dialects.mtl import intervals as I
from chronolog.dialects.mtl.evaluator import MtlEvaluator, not_forward_propagating
from chronolog.dialects.mtl.parser import interval_from_text, parse_mtl
from chronolog.dialects.mtl.syntax import head_atom


def iv(text: str):
    return interval_from_text(text)


def run(program_text: str, facts: list[tuple[str, tuple, str]], mode: str | None = None, extra_times=()):
    """Final meaning {(pred, args): coalesced intervals} of the changes an evaluator emits."""
    program = parse_mtl(program_text)
    ev = MtlEvaluator(program, mode)
    events = sorted((Event(iv(w)[0], p, a, False, None, iv(w)) for p, a, w in facts), key=lambda e: e.t)
    events += [Event(F(t)) for t in extra_times]
    events.sort(key=lambda e: e.t)
    hi = max([e.t for e in events] + [e.span[2] for e in events if e.span is not None])
    return clip(meaning(drive(ev, events)), hi)  # an open [a,inf) claim means "up to the input's end"


def drive(ev: MtlEvaluator, events: list[Event]) -> list:
    changes, latest = [], None
    for e in events:
        if latest is not None and e.t > latest:
            changes += ev.advance(latest)
        latest = e.t if latest is None or e.t > latest else latest
        ev.push(e)
    return changes + ev.finish()


def meaning(changes: list) -> dict:
    """Sum the ±1 interval changes (each must add new points or remove held ones)."""
    held: dict = {}
    for pred, args, span, diff in changes:
        lo = F(span.lo)
        one = (lo, span.lo_closed, inf if span.hi is None else F(span.hi), span.hi_closed)
        cur = held.get((pred, args), [])
        if diff > 0:
            assert not I.intersect_sets(cur, [one]), f"{pred}{args} {span.text()} added twice"
            held[(pred, args)] = I.coalesce(cur + [one])
        else:
            assert I.subtract([one], cur) == [], f"{pred}{args} {span.text()} withdrawn but not held"
            held[(pred, args)] = I.subtract(cur, [one])
    return {k: v for k, v in held.items() if v}


def clip(m: dict, hi) -> dict:
    out = {k: I.intersect_sets(v, [(-inf, False, F(hi), True)]) for k, v in m.items()}
    return {k: v for k, v in out.items() if v}


@pytest.mark.parametrize("rule, data, want", [
    ("Q(X):-Boxminus[1,2]P(X)", "[0,5]", "[2,6]"),
    ("Q(X):-Boxminus[1,2]P(X)", "(0,5)", "(2,6)"),
    ("Q(X):-Boxminus(1,2)P(X)", "(0,5)", "[2,6]"),
    ("Q(X):-Diamondminus[1,2]P(X)", "[0,5]", "[1,7]"),
    ("Q(X):-Diamondminus(1,2]P(X)", "[0,5]", "(1,7]"),
    ("Q(X):-Diamondminus[1/2,1/2]P(X)", "[0,5/2]", "[1/2,3]"),
    ("Q(X):-Boxminus[0,1]P(X)", "[0,5]", "[1,5]"),
    ("Q(X):-Diamondminus[0,inf)P(X)", "[1,2]", "[1,9]"),
])
def test_past_operators_by_hand(rule, data, want):
    got = run(rule, [("P", ("a",), data)], extra_times=[9])
    assert got[("Q", ("a",))] == [iv(want)]


@pytest.mark.parametrize("rule, data, want", [
    ("Q(X):-Diamondplus[1,2]P(X)", "[4,5]", "[2,4]"),
    ("Q(X):-Boxplus[1,2]P(X)", "[4,9]", "[3,7]"),
    ("Boxplus[0,2]Q(X):-P(X)", "[1,1]", "[1,3]"),
    ("Boxminus[1,1]Q(X):-P(X)", "[4,5]", "[3,4]"),
])
def test_future_and_head_operators_by_hand(rule, data, want):
    got = run(rule, [("P", ("a",), data)], mode="batch", extra_times=[0, 9])
    assert got[("Q", ("a",))] == [iv(want)]


def test_since_and_until_by_hand():
    facts = [("A", ("a",), "[0,10]"), ("B", ("a",), "[2,2]")]
    assert run("S(X):-A(X) Since[1,3] B(X)", facts)[("S", ("a",))] == [iv("[3,5]")]
    facts = [("A", ("a",), "[0,10]"), ("B", ("a",), "[8,8]")]
    assert run("U(X):-A(X) Until[1,3] B(X)", facts, mode="batch")[("U", ("a",))] == [iv("[5,7]")]
    # a gap in A interrupts Since: A on [0,3] and (3,10] is one maximal interval; on [0,3) and (3,10] it is not
    facts = [("A", ("a",), "[0,3)"), ("A", ("a",), "(3,10]"), ("B", ("a",), "[2,2]")]
    assert run("S(X):-A(X) Since[1,3] B(X)", facts)[("S", ("a",))] == [iv("[3,3]")]


def test_short_stop_of_the_seed_by_hand():
    program = open_data("short_stop.mtl")
    facts = [("NotPos", ("v",), "[1,1]"), ("Pos", ("v",), "[2,2]"), ("Pos", ("v",), "[3,3]"),
             ("NotOnMap", ("v",), "[4,4]"), ("Pos", ("w",), "[4,4]")]
    got = run(program, facts)
    assert got[("ShortStop", ("v",))] == [iv("[4,4]")]  # moving at 1, standing at 2-3, moving (off the map) at 4
    assert got[("NotPos", ("v",))] == [iv("[1,1]"), iv("[4,4]")]  # punctual facts stay apart
    assert ("ShortStop", ("w",)) not in got


def open_data(name: str) -> str:
    from pathlib import Path

    path = Path(__file__).resolve().parents[4] / "shared" / "data" / "mtl" / name
    if not path.exists():
        pytest.skip(f"../shared/data/mtl/{name} not found beside the repository")
    return path.read_text()


# ---------------------------------------------------------------- random programs against the reference

PAST_OPS = ["Boxminus", "Diamondminus"]


def _bound(rng: random.Random) -> str:
    a = F(rng.randint(0, 4), 2)
    b = a + F(rng.randint(0, 4), 2)
    left = "[" if rng.random() < 0.7 or a == b else "("
    right = "]" if rng.random() < 0.7 or a == b else ")"
    if a == b:
        left, right = "[", "]"
    return f"{left}{a},{b}{right}"


def _literal(rng: random.Random, preds: list[str], future: bool) -> str:
    p = rng.choice(preds)
    kind = rng.random()
    ops = PAST_OPS + (["Boxplus", "Diamondplus"] if future else [])
    if kind < 0.3:
        return f"{p}(X)"
    if kind < 0.85:
        return f"{rng.choice(ops)}{_bound(rng)}{p}(X)"
    q = rng.choice(preds)
    op = "Until" if future and rng.random() < 0.5 else "Since"
    return f"{q}(X) {op}{_bound(rng)} {p}(X)"


def random_program(rng: random.Random, future: bool = False) -> str:
    heads = ["R", "S", "T"]
    rules = []
    for i, h in enumerate(heads):
        for _ in range(rng.randint(1, 2)):
            body = ", ".join(_literal(rng, ["P", "Q"] + heads[: i + 1], future) for _ in range(rng.randint(1, 2)))
            head = f"Boxplus{_bound(rng)}{h}(X)" if rng.random() < 0.2 else f"{h}(X)"
            rules.append(f"{head}:-{body}")
    return "\n".join(rules) + "\n"


def random_facts(rng: random.Random, preds: tuple[str, ...] = ("P", "Q")) -> list[tuple[str, tuple, str]]:
    """Input facts over random intervals (of ``preds``: head predicates too, for input facts of
    derived predicates)."""
    out = []
    for _ in range(rng.randint(2, 6)):
        a = F(rng.randint(0, 10), 2)
        b = a + F(rng.randint(0, 4), 2)
        lc = rng.random() < 0.8 or a == b
        hc = rng.random() < 0.8 or a == b
        out.append((rng.choice(list(preds)), (rng.choice(["a", "b"]),), f"{'[' if lc else '('}{a},{b}{']' if hc else ')'}"))
    return out


def reference(program_text: str, facts, lo, hi) -> dict:
    ruler = Ruler(F(lo), F(hi), F(1, 2))
    model = reference_model(parse_mtl(program_text), [(p, a, iv(w)) for p, a, w in facts], ruler)
    heads = {head_atom(r.head).pred for r in parse_mtl(program_text).rules}
    return {k: v for k, v in model.items() if k[0] in heads and v}, ruler


def as_cells(ruler: Ruler, m: dict) -> dict:
    return {k: cells_of(ruler, v) for k, v in m.items() if cells_of(ruler, v)}


@pytest.mark.parametrize("seed", range(60))
def test_random_forward_programs_stream_batch_and_reference_agree(seed):
    rng = random.Random(seed)
    text = random_program(rng)
    assert not_forward_propagating(parse_mtl(text)) is None
    facts = random_facts(rng)
    times = [iv(w)[0] for _, _, w in facts] + [iv(w)[2] for _, _, w in facts]
    lo, hi = min(times), max(times)
    stream = run(text, facts, mode="stream")
    batch = run(text, facts, mode="batch")
    want, ruler = reference(text, facts, lo, hi)
    assert as_cells(ruler, clip(batch, hi)) == want, text
    assert as_cells(ruler, clip(stream, hi)) == want, text


@pytest.mark.parametrize("seed", range(30))
def test_random_programs_with_future_operators_batch_and_reference_agree(seed):
    rng = random.Random(1000 + seed)
    text = random_program(rng, future=True)
    facts = random_facts(rng)
    times = [iv(w)[0] for _, _, w in facts] + [iv(w)[2] for _, _, w in facts]
    lo, hi = min(times), max(times)
    batch = run(text, facts, mode="batch")
    want, ruler = reference(text, facts, lo, hi)
    assert as_cells(ruler, batch) == want, text
