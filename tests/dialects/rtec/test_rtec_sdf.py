"""Statically determined fluents' compiled rules (rtec/sdf.py) give the generic solver's answers."""

from __future__ import annotations

import io
import json
import random

import pytest

import chronolog.dialects.rtec.evaluator as evaluator_module
from chronolog.core.events import Event
from chronolog.dialects.rtec.evaluator import Hierarchy, RtecEvaluator
from chronolog.dialects.rtec.parser import finish_program, parse_rtec
from chronolog.dialects.rtec.sdf import compile_sdf
from chronolog.runtime.embedded import run_evaluator

# two-argument fluents over a dynamic domain, with the shapes of CAVIAR's and CTM's rules:
# a head argument twice, a constant, arguments swapped, checks before and after a cut, a fallback
ED = """
points(a(_)=true). points(b(_)=true). points(c(_,_)=true).
buildFromPoints(a(_)=true). buildFromPoints(b(_)=true). buildFromPoints(c(_,_)=true).
dynamicDomain(id(_)).
grounding(a(X)=true) :- id(X). grounding(b(X)=true) :- id(X). grounding(c(X,Y)=true) :- id(X), id(Y).
holdsFor(u(X,Y)=true, I) :- holdsFor(a(X)=true, A), holdsFor(c(Y,X)=true, C), union_all([A,C,[]], I).
holdsFor(n(X,Y)=true, I) :- holdsFor(a(X)=true, A), holdsFor(b(Y)=true, B), intersect_all([A,B], I).
holdsFor(r(X,Y)=true, I) :- holdsFor(c(X,Y)=true, C), holdsFor(b(X)=true, B), relative_complement_all(C, [B], I).
holdsFor(k(X,Y)=false, I) :- holdsFor(u(X,Y)=true, U), complement_all([U], I).
holdsFor(g(X,Y)=true, I) :- holdsFor(a(X)=true, A), \\+ A=[], holdsFor(b(Y)=true, B), \\+ B=[], !,
    intersect_all([A,B], AB), \\+ AB=[], union_all([AB], I).
holdsFor(g(_,_)=true, []).
holdsFor(s(X,X)=true, I) :- holdsFor(a(X)=true, I).
holdsFor(s(X,Y)=true, I) :- holdsFor(n(X,Y)=true, N), \\+ N=[], holdsFor(r(Y,X)=true, I).
holdsFor(z(X,b)=true, I) :- holdsFor(c(X,X)=true, I).
grounding(u(X,Y)=true) :- id(X), id(Y). grounding(n(X,Y)=true) :- id(X), id(Y).
grounding(r(X,Y)=true) :- id(X), id(Y). grounding(k(X,Y)=false) :- id(X), id(Y).
grounding(g(X,Y)=true) :- id(X), id(Y), X @< Y. grounding(s(X,Y)=true) :- id(X), id(Y).
grounding(z(X,Y)=true) :- id(X), id(Y).
"""


def _events(seed: int) -> list[Event]:
    rnd = random.Random(seed)
    ids = ["p", "q", "r"]
    out = []
    for t in range(0, 80):
        for x in ids:
            for name in ("a", "b"):
                if rnd.random() < 0.3:
                    out.append(Event(t, name, (x,)))
            y = rnd.choice(ids)
            if rnd.random() < 0.25:
                out.append(Event(t, "c", (x, y)))
    return out


def _answers(events: list[Event], step: int) -> list[dict]:
    out = io.StringIO()
    run_evaluator(RtecEvaluator(finish_program(parse_rtec(ED, "ed.prolog")), step), events, out)
    return [json.loads(line) for line in out.getvalue().splitlines()]


def test_the_rules_compile() -> None:
    h = Hierarchy(finish_program(parse_rtec(ED, "ed.prolog")))
    sdfs = [ent for ent in h.rules if h.kind[ent] == "sdf"]
    assert len(sdfs) == 7 and all(compile_sdf(rule) is not None for ent in sdfs for _, rule in h.rules[ent])


@pytest.mark.parametrize("seed", range(6))
@pytest.mark.parametrize("step", [7, 1000])
def test_compiled_rules_answer_as_the_solver(seed: int, step: int, monkeypatch: pytest.MonkeyPatch) -> None:
    events = _events(seed)
    compiled = _answers(events, step)
    monkeypatch.setattr(evaluator_module, "compile_sdf", lambda rule: None)
    assert compiled == _answers(events, step)
