"""gran(Π) per predicate (seed 002, section 6): input read only through wide
diamonds is kept with its short gaps filled, so the facts a streaming step
keeps do not grow with the stream's time granularity — and the answers stay
those of the independent reference."""

from __future__ import annotations

import random
from fractions import Fraction as F

import pytest
from test_mtl_semantics import as_cells, clip, drive, iv, meaning, reference

from chronolog.core.events import Event
from chronolog.dialects.mtl import intervals as I
from chronolog.dialects.mtl.evaluator import MtlEvaluator, diamond_only
from chronolog.dialects.mtl.parser import parse_mtl


@pytest.mark.parametrize("ivs, width, want", [
    (["[0,1]", "[2,3]"], 1, ["[0,1]", "[2,3]"]),  # a gap of 1 is not shorter than 1
    (["[0,1]", "[2,3]"], F(3, 2), ["[0,3]"]),
    (["[0,1)", "(1,2]"], F(1, 10), ["[0,2]"]),  # a one-point gap: length 0
    (["(0,1]", "[3/2,3/2]", "[2,3)"], 1, ["(0,3)"]),  # ends keep their own openness
    (["[0,1]", "[5,6]", "[13/2,7]"], 1, ["[0,1]", "[5,7]"]),
])
def test_fill_gaps_by_hand(ivs, width, want):
    assert I.fill_gaps([iv(x) for x in ivs], width) == [iv(x) for x in want]


def test_which_predicates_are_read_only_through_wide_diamonds():
    program = parse_mtl("R(X):-Diamondminus[0,2]P(X), Q(X)\n"
                        "S(X):-R(X), not Diamondminus(1,2]P(X)\n"  # P: widths 2 and 1
                        "T(X):-Diamondminus[1,1]U(X)\n"  # punctual: gran 0
                        "V(X):-Diamondminus[0,3]R(X), Boxminus[0,1]W(X)\n"  # R is derived; W under a box
                        "Y(X):-Diamondminus[0,1]Z(X), Q(X) Since[0,2] Z(X)\n")  # Z also read by Since
    assert diamond_only(program) == {("P", 1): 1}


def _wide_literal(rng: random.Random, pred: str) -> str:
    a = F(rng.randint(0, 4), 2)
    b = a + F(rng.randint(1, 4), 2)  # at least 1/2 long
    left = "[" if rng.random() < 0.7 else "("
    right = "]" if rng.random() < 0.7 else ")"
    lit = f"Diamondminus{left}{a},{b}{right}{pred}(X)"
    return f"not {lit}" if rng.random() < 0.25 else lit


def _program(rng: random.Random) -> str:
    """P and Q only under diamonds at least 1/2 long (sometimes under not); R0,
    an input read plainly, binds X first; the heads are read any way."""
    rules = [f"R(X):-R0(X), {_wide_literal(rng, 'P')}"]
    if rng.random() < 0.5:
        rules.append(f"R(X):-R0(X), {_wide_literal(rng, 'Q')}, {_wide_literal(rng, 'P')}")
    rules.append(f"S(X):-R(X), {_wide_literal(rng, 'Q')}")
    rules.append(rng.choice(["T(X):-Boxminus[0,1]S(X)", "T(X):-R(X) Since[0,2] S(X)", "T(X):-Diamondminus[1,1]T(X)",
                             "T(X):-S(X), not Boxminus[1/2,1]R(X)"]))
    return "\n".join(rules) + "\n"


def _dense_facts(rng: random.Random) -> list[tuple[str, tuple, str]]:
    """Punctual and short facts half a unit apart (gaps below every diamond's length)."""
    out = [("R0", ("a",), "[0,8]"), ("R0", ("b",), "[1,8]")]
    for pred in ("P", "Q"):
        for who in ("a", "b"):
            for k in range(16):
                if rng.random() < 0.6:
                    lo = F(k, 2)
                    out.append((pred, (who,), f"[{lo},{lo}]" if rng.random() < 0.7 else f"[{lo},{lo + F(1, 2)})"))
    return out


@pytest.mark.parametrize("seed", range(30))
def test_filled_streaming_batch_and_unfilled_equal_the_reference(seed):
    rng = random.Random(4000 + seed)
    text = _program(rng)
    assert diamond_only(parse_mtl(text)), text
    facts = _dense_facts(rng)
    events = sorted((Event(iv(w)[0], p, a, False, None, iv(w)) for p, a, w in facts), key=lambda e: e.t)
    hi = max(max(e.t for e in events), max(e.span[2] for e in events))
    lo = min(e.t for e in events)
    want, ruler = reference(text, facts, lo, hi)
    for mode in ("stream", "batch"):
        ev = MtlEvaluator(parse_mtl(text), mode)
        got = clip(meaning(drive(ev, events + [Event(hi)])), hi)
        assert as_cells(ruler, got) == want, (mode, text)
    plain = MtlEvaluator(parse_mtl(text), "stream")
    plain.fills = {}  # every fact as it came: the same answers
    assert as_cells(ruler, clip(meaning(drive(plain, events + [Event(hi)])), hi)) == want, text


def test_facts_kept_do_not_grow_with_the_time_granularity():
    # Busy holds from the first ping to 2 after the last: [0, 22] clipped to the input's span [0, 20]
    program = parse_mtl("Busy(X):-Diamondminus[0,2]Ping(X)\n")
    kept = {}
    for per_unit in (1, 10, 50):
        for fill in (True, False):
            ev = MtlEvaluator(program, "stream")
            if not fill:
                ev.fills = {}
            events = [Event(F(k, per_unit), "Ping", (x,), False, None, I.point(F(k, per_unit)))
                      for k in range(20 * per_unit + 1) for x in ("a", "b")]
            got = clip(meaning(drive(ev, events)), 20)
            assert got == {("Busy", ("a",)): [iv("[0,20]")], ("Busy", ("b",)): [iv("[0,20]")]}
            kept[(per_unit, fill)] = ev.max_kept
    assert kept[(1, True)] == kept[(10, True)] == kept[(50, True)] <= 2 * 2  # one interval per atom (+ its seed)
    assert kept[(50, False)] >= 2 * 2 * 50  # every ping of the window [t - 2, t]
