"""A stratum whose answers at t read only time point t, evaluated over a span at once.

When an upgrade changes a stratum, its new version evaluates [T, now] to correct the
points from T on (``ReasonerStage._add_version``): one engine step per point, each a
few dozen Python calls of incremental maintenance for a handful of changed atoms.
Where none of the stratum's rules looks at another time point (no window, no ``at``,
no ``@``-head; every predicate it reads or derives held at t only), each point's content
is a function of that point's imports and stream facts alone, so the points are
independent: the stratum's rules with a time argument added to every atom (``#t``, the
same variable throughout a rule) evaluate every point of the span in one step of an
engine, joining on the time like on any argument.  Each point's content is then what
the engine's ``exported`` would have given there, and goes to the reasoner's
``observe`` (the stratum's records) in time order as the evaluations' would.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from typing import cast

from chronolog.core.errors import ProgramError
from chronolog.dialects.lars.engine.content import NOTHING, Content
from chronolog.dialects.lars.engine.core import Engine, Fact, StepResult
from chronolog.dialects.lars.ir import Atom, ExtAtom, Head, Op, Program, Rule, Var
from chronolog.dialects.lars.plan import TICK, Component, Plan, PredKey, plan_program
from chronolog.dialects.lars.reasoner import Reasoner, make_engine

__all__ = ["Lifted", "advance_pointwise", "evaluate_span", "lift", "lifted", "lifted_key"]

TIME = "#t"  # the time variable the lifted rules carry (no program can name it)


@dataclass(frozen=True)
class Lifted:
    """A stratum's rules over time-stamped atoms, and how its reasoner's input maps onto them."""

    plan: Plan  # the lifted rules' plan (the stratum's predicates with one more argument)
    order: tuple[PredKey, ...]  # the stratum's predicates in the order ``Engine.exported`` gives them
    imported: frozenset[PredKey]  # the lower strata's predicates its rules read
    streamed: frozenset[PredKey]  # predicates whose stream facts it reads (its own, routed, and input ones)


def lifted(plan: Plan, stratum: int) -> Lifted | None:
    """Stratum ``stratum`` of ``plan`` lifted, or None where its answers at t may read another
    time point (or it is not evaluated by the incremental engine): then it steps point by point.
    (Made once per upgrade of the stratum: not kept.)"""
    if not plan.stratified or plan.solver in ("tms!", "oneshot!") or stratum >= plan.fleet_strata:
        return None
    return lift(plan, [c for c in plan.components if c.stratum == stratum])


def lift(plan: Plan, comps: Sequence[Component]) -> Lifted | None:
    """The components ``comps`` of ``plan`` (a stratified plan the incremental engine
    evaluates) lifted, their other inputs read from the components below them (``imported``)
    and the stream; None where their answers at t may read another time point: a fleet
    stratum (``lifted``) or a chain upgrade's changed components (``keeping.py``)."""
    order = tuple(p for c in comps for p in c.preds)
    own = set(order)
    if own & (plan.timed | plan.padded):
        return None  # kept with their times: read through a window or at another point somewhere
    rules: list[Rule] = []
    reads: set[PredKey] = set()
    for comp in comps:
        for rule in comp.rules:
            if plan.is_hidden(rule):  # the lifted plan makes its own route for stream facts of p
                key = rule.head.atom.key
                body = rule.body
                if not (rule.head.time is None and len(body) == 1 and isinstance(body[0], ExtAtom)
                        and body[0].op is Op.NOW and body[0].atom.key == plan.input_routes.get(key)):
                    return None  # a program fact (it holds at every point: no atom binds the time)
                continue
            if rule.head.time is not None:
                return None
            atoms = [b for b in rule.body if isinstance(b, ExtAtom)]
            if not any(not b.negated for b in atoms):
                return None
            for b in atoms:
                if b.op is not Op.NOW or b.window is not None or b.time is not None:
                    return None
                reads.add(b.atom.key)
            rules.append(Rule(Head(_at(rule.head.atom)), tuple(
                ExtAtom(_at(b.atom), negated=b.negated, loc=b.loc) if isinstance(b, ExtAtom) else b
                for b in rule.body), rule.loc))
    imported = frozenset(k for k in reads - own if k in plan.intensional)
    inputs = reads - own - imported
    if imported & plan.timed or TICK in inputs or inputs & plan.background.keys():
        return None  # times in the rows, or facts that hold at every point
    try:
        got = plan_program(Program(tuple(rules), plan.program.dialect))
    except ProgramError:
        return None
    if not got.stratified:
        return None
    return Lifted(got, order, imported, frozenset(own | inputs))


def evaluate_span(lift: Lifted, first: int, last: int, imports: Callable[[int], Content | None],
                  log: Mapping[int, list[Fact]]) -> Engine | None:
    """One engine step of ``lift``'s rules over every point of [``first``, ``last``]: each
    point's imports (``imports(t)``: the lower components' content there; None: no answer set
    at t, and then None is returned) and stream facts as time-stamped facts.  The engine's
    relation of a lifted predicate (``lifted_key``) holds each point's atoms, the time last."""
    facts: list[Fact] = []
    imported = [(key, lifted_key(key)) for key in lift.imported]
    streamed = {key: lifted_key(key) for key in lift.streamed}
    for t in range(first, last + 1):
        content = imports(t)
        if content is None:
            return None
        for key, at in imported:
            rows = content.get(key)
            if rows:
                facts += [(at, (*args, t)) for args in rows]
        entries = log.get(t)
        if entries:
            facts += [(streamed[key], (*args, t)) for key, args in entries if key in streamed]
    engine = Engine(lift.plan, last)
    engine.step(last, facts)
    return engine


def lifted_key(key: PredKey) -> PredKey:
    """A predicate's key in the lifted rules (one more argument: the time)."""
    return key[0], key[1] + 1


def _at(atom: Atom) -> Atom:
    return Atom(atom.pred, (*atom.args, Var(TIME)))


class _Evaluated:
    """What the stratum's sender reads of an evaluation (``StratumSender.observe``)."""

    def __init__(self, t1: int, content: Content) -> None:
        self.t1, self.content = t1, content

    def exported(self) -> Content:
        return self.content


def advance_pointwise(r: Reasoner, until: int) -> bool:
    """Evaluate ``r``'s points up to ``until`` as ``r.advance`` would, at once (``lifted``); False,
    nothing done, where the stratum is not lifted, corrections are pending, the lower strata's
    content is reshaped or not consistent at some point (no answer set there).  For a fleet
    stratum's reasoner, which publishes through ``observe`` (its sink takes nothing).  It continues
    from an engine stepped at ``until`` alone: a lifted stratum's state is that point's content."""
    if (r.stratum is None or r.t1 is None or r.evaluated is None or r.observe is None or r.pending
            or r.reshape or until <= r.evaluated or r.tentative is not None or r.firm is not None):
        return False  # (an idle-closed point evaluated provisionally is the TMS's: never lifted)
    lift = lifted(r.plan, r.stratum)
    if lift is None:
        return False
    first = r.evaluated + 1
    imports = r.imports

    def content(t: int) -> Content | None:
        imp = imports.get(t)
        return NOTHING if imp is None else imp.content if imp.consistent else None

    engine = evaluate_span(lift, first, until, content, r.log)
    if engine is None:
        return False
    per: dict[int, dict[PredKey, set[tuple]]] = {}
    for p in lift.order:
        for row in engine.rels[lifted_key(p)].tuples:
            per.setdefault(row[-1], {}).setdefault(p, set()).add(row[:-1])
    observe, evaluation, result = r.observe, _Evaluated(r.t1, NOTHING), StepResult(first)
    as_engine = cast(Engine, evaluation)
    for t in range(first, until + 1):
        got = per.get(t)
        evaluation.content = NOTHING if got is None else {p: frozenset(rows) for p, rows in got.items()}
        r.evaluated = result.t = t
        observe(t, as_engine, result)
    r.engine = make_engine(r.plan, r.t1, r.stratum)
    r.engine.step(until, r.log.get(until, ()), imports.get(until))
    if r.retention is not None:
        last = until - until % r.prune_every  # (each pruning drops what the one before did, and more)
        if last >= first:
            r.prune(last)
    return True
