"""A stratum whose rules read only the time point they evaluate, evaluated over a span in one
step of its lifted rules (``pointwise.advance_pointwise``, an upgrade's new version over
[T, now]), against the same reasoner stepping point by point (``Reasoner.advance``): the
same content observed at every point, and the engine it continues with steps on alike."""

from __future__ import annotations

import random

import pytest
from strategies import long_stream, random_program

from chronolog.core.errors import ProgramError
from chronolog.dialects.lars.engine.core import Imported
from chronolog.dialects.lars.hooks import lars_plan
from chronolog.dialects.lars.ir import ExtAtom, Head, Program, Rule
from chronolog.dialects.lars.parser import parse_lars
from chronolog.dialects.lars.pointwise import advance_pointwise, lifted
from chronolog.dialects.lars.reasoner import Reasoner

# each: the program (stratum 1, 0-based, point-local) and its input predicates and constants
LIFTED = {
    "negation and a comparison": ("a(X) :- p(X) [2].\nc(X) :- q(X).\nb(X) :- a(X), not c(X), X != 2.\n", ["p", "q"]),
    "recursion, its own stream facts": (
        "a(X,Y) :- e(X,Y) [1].\nc(X) :- q(X).\nr(X,Y) :- a(X,Y), not c(X).\nr(X,Z) :- r(X,Y), a(Y,Z), not c(Z).\n",
        ["e", "q", "r"]),
    "an input read at t, an assignment": (
        "a(X) :- p(X) [3].\nc(X) :- q(X).\nb(Y) :- a(X), w(X), not c(X), Y = X + 1.\n", ["p", "q", "w"]),
    "two components": ("a(X) :- p(X) [2].\nc(X) :- q(X) [1].\nb(X) :- a(X), not c(X).\n"
                       "d(X) :- b(X), not c(X), X > 1.\nd(X) :- a(X), w(X), not c(X).\n", ["p", "q", "w", "b"]),
}
STEPPED = {  # a stratum 1 whose answers at t may read another time point (or no atom binds the time)
    "window": "a(X) :- p(X) [2].\nc(X) :- q(X).\nb(X) :- a(X) [1], not c(X).\n",
    "an input through a window": "a(X) :- p(X) [2].\nc(X) :- q(X).\nb(X) :- a(X), q(X) [2], not c(X).\n",
    "at": "a(X) :- p(X) [2].\nc(X) :- q(X).\nb(X) :- a(X) at U [2], not c(X).\n",
    "@-head": "a(X) :- p(X) [2].\nc(X) :- q(X).\nb(X) at U :- a(X), U = 3, not c(X).\n",
    "program fact": "a(X) :- p(X) [2].\nc(X) :- q(X).\nb(X) :- a(X), not c(X).\nb(7).\n",
    "read through a window above": "a(X) :- p(X) [2].\nc(X) :- q(X).\nb(X) :- a(X), not c(X).\n"
                                   "d(X) :- b(X) [2], not a(X).\n",
    "no positive atom": "a(X) :- p(X) [2].\nc(X) :- q(X).\nb :- not c(1).\n",
}


def _plan(text: str):
    return lars_plan(parse_lars(text, "p.lars"))


def _stream(preds: list[str], seed: int, points: int) -> dict[int, list]:
    rng = random.Random(seed)
    out: dict[int, list] = {}
    for t in range(points):
        facts = []
        for _ in range(rng.randint(0, 3)):
            pred = rng.choice(preds)
            args = (rng.randint(0, 3), rng.randint(0, 3)) if pred in ("e", "r") else (rng.randint(0, 3),)
            facts.append(((pred, len(args)), args))
        out[t] = facts
    return out


def _lower(plan, stream: dict[int, list]) -> dict[int, Imported]:
    """Stratum 0's content per point, as its reasoner exports it."""
    got: dict[int, Imported] = {}
    r = Reasoner(plan, _Sink(), stratum=0, auto_advance=False,
                 observe=lambda t, engine, result: got.__setitem__(t, Imported(result.consistent, engine.exported())))
    for t, facts in stream.items():
        r.push_facts(t, list(facts))
    r.advance(max(stream))
    return got


class _Sink:
    changes = False

    def step(self, result, engine) -> None:  # noqa: ANN001
        pass

    def correct(self, changes, engine, upto, previous) -> None:  # noqa: ANN001
        pass


def _top(plan, stream: dict[int, list], imports: dict[int, Imported], upto: int, seen: list,
         retention: int | None) -> Reasoner:
    r = Reasoner(plan, _Sink(), stratum=1, auto_advance=False, retention=retention,
                 observe=lambda t, engine, result: seen.append((t, engine.t1, result.consistent,
                                                                dict(engine.exported()))))
    for t in range(upto + 1):
        r.push_facts(t, list(stream[t]))
        r.set_imported(t, imports[t])
    return r


@pytest.mark.parametrize("name", sorted(LIFTED))
@pytest.mark.parametrize("seed", range(4))
@pytest.mark.parametrize("retention", [None, 3])
def test_a_lifted_span_observes_what_stepping_it_does(name, seed, retention):
    text, preds = LIFTED[name]
    plan = _plan(text)
    assert lifted(plan, 1) is not None
    stream = _stream(preds, seed, 200)
    imports = _lower(plan, stream)
    cut, until, end = 5 + seed * 7, 150, 199
    stepped: list = []
    at_once: list = []
    a = _top(plan, stream, imports, end, stepped, retention)
    b = _top(plan, stream, imports, end, at_once, retention)
    a.advance(cut)
    b.advance(cut)
    a.advance(until)
    assert advance_pointwise(b, until)
    assert at_once == stepped and len(stepped) == until + 1
    assert any(content for *_, content in stepped)  # (the stratum derives something)
    assert (b.evaluated, b.pruned_below, sorted(b.log), sorted(b.imports)) == (
        a.evaluated, a.pruned_below, sorted(a.log), sorted(a.imports))
    a.advance(end)  # both continue point by point from there
    b.advance(end)
    assert at_once == stepped


@pytest.mark.parametrize("name", sorted(STEPPED))
def test_a_stratum_reading_other_points_is_not_lifted(name):
    plan = _plan(STEPPED[name])
    assert lifted(plan, 1) is None
    stream = _stream(["p", "q"], 0, 20)
    r = _top(plan, stream, _lower(plan, stream), 19, [], None)
    r.advance(3)
    assert not advance_pointwise(r, 19) and r.evaluated == 3


def test_an_inconsistent_point_is_stepped():
    """A lower stratum without an answer set at a point: no content there (the engine's warning)."""
    text, preds = LIFTED["negation and a comparison"]
    plan = _plan(text)
    stream = _stream(preds, 0, 20)
    imports = _lower(plan, stream)
    imports[9] = Imported(False, imports[9].content)
    r = _top(plan, stream, imports, 19, [], None)
    assert not advance_pointwise(r, 19) and r.evaluated == -1


def _at_t(rule: Rule) -> Rule:
    """``rule`` with every atom read at t (no window, no ``at``) and its head not dated."""
    return Rule(Head(rule.head.atom), tuple(ExtAtom(b.atom, negated=b.negated) if isinstance(b, ExtAtom) else b
                                            for b in rule.body))


def _random_cases(count: int):
    """Random stratified programs (comparisons, assignments, negation, recursion, stream facts of
    derived predicates, program facts) with every atom read at t: their lifted strata."""
    seed = 0
    while count:
        seed += 1
        program = random_program(seed, True, mixed=seed % 2 == 0)
        try:
            plan = lars_plan(Program(tuple(_at_t(r) for r in program.rules), "lars"))
        except ProgramError:
            continue
        strata = [k for k in range(plan.fleet_strata) if plan.stratified and lifted(plan, k) is not None]
        if strata:
            count -= 1
            yield seed, plan, strata


@pytest.mark.parametrize("case", range(12))
def test_random_lifted_strata_observe_what_stepping_them_does(case):
    """Each lifted stratum of random programs over a long random stream, the lower strata's
    content from the whole program's evaluation; at a random cut and end."""
    derived = 0
    for seed, plan, strata in list(_random_cases(5 * (case + 1)))[5 * case:]:
        rng = random.Random(seed)
        stream = long_stream(rng, 12)
        whole: dict[int, Imported] = {}
        lower = Reasoner(plan, _Sink(), stratum=None, auto_advance=False,
                         observe=lambda t, engine, result, whole=whole: (
                             whole.__setitem__(t, Imported(result.consistent, engine.exported()))))
        for ev in stream:
            lower.push(ev)
        end = stream[-1].t
        lower.advance(end)
        for k in strata:
            seen: tuple[list, list] = ([], [])
            a, b = (Reasoner(plan, _Sink(), stratum=k, auto_advance=False, observe=lambda t, engine, result, got=got: (
                got.append((t, engine.t1, dict(engine.exported()))))) for got in seen)
            for r in (a, b):
                for ev in stream:
                    r.push(ev)
                for t, imp in whole.items():
                    r.set_imported(t, imp)
            cut = rng.randint(stream[0].t, end - 1)
            a.advance(cut)
            b.advance(cut)
            a.advance(end)
            assert advance_pointwise(b, end), (seed, k)
            assert seen[1] == seen[0], (seed, k, str(plan.program))
            derived += any(content for *_, content in seen[0][cut + 1:])
    assert derived  # (some stratum derived something after the cut)
