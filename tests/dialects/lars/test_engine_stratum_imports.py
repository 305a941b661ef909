"""A stratum's engine (one fleet reasoner) imports only the lower predicates its rules read:
the content of the others is neither kept nor maintained at each step, and what the stratum
derives is what the whole program's evaluation derives."""

from __future__ import annotations

from chronolog.dialects.lars.engine.core import Engine, Imported
from chronolog.dialects.lars.parser import parse_lars
from chronolog.dialects.lars.plan import plan_program

# strata: (tick, q, b) and (s); s reads q and b, not tick (which changes at every point)
PROGRAM = "tick(T) :- clock(T) [0].\nq(X) :- p(X) [2].\nb(X) :- r(X) [0].\ns(X) :- q(X), not b(X).\n"
STREAM = {0: [("p", ("a",)), ("clock", (0,))], 1: [("r", ("a",)), ("clock", (1,))],
          2: [("p", ("c",)), ("clock", (2,))], 3: [("r", ("c",)), ("clock", (3,))], 4: [("clock", (4,))]}


def _facts(t: int) -> list:
    return [((p, len(args)), args) for p, args in STREAM[t]]


def test_a_stratum_imports_only_what_its_rules_read():
    plan = plan_program(parse_lars(PROGRAM))
    whole, top = Engine(plan, 0), Engine(plan, 0, stratum=1)
    tick, s = ("tick", 1), ("s", 1)
    assert {c.stratum for c in plan.components if s in c.preds} == {1}
    got = []
    for t in sorted(STREAM):
        whole.step(t, _facts(t))
        lower = {p: frozenset(whole.rels[p].tuples) for p in (tick, ("q", 1), ("b", 1)) if whole.rels[p].tuples}
        top.step(t, [], Imported(True, lower))
        assert not top.rels[tick].tuples  # not imported: no rule of the stratum reads it
        assert set(top.rels[("q", 1)].tuples) == set(lower[("q", 1)])
        assert set(top.rels[s].tuples) == set(whole.rels[s].tuples)
        got += [(args, t) for args in sorted(top.rels[s].tuples)]
    # hand-derived: q(a) at 0-2 but b(a) at 1; q(c) at 2-4 but b(c) at 3
    assert got == [(("a",), 0), (("a",), 2), (("c",), 2), (("c",), 4)]
