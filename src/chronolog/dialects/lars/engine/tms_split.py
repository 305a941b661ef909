"""The stratified lower part of a program that is not stratified.

The components of a program that depend (through any number of rules) on no
component with negation inside a cycle form a *splitting set* (Lifschitz and
Turner): the answer sets of the program are the unique answer of that lower,
stratified part, extended by the answer sets of the rest with the lower
atoms as facts.  The TMS therefore evaluates only the upper part; the lower
part is the incremental core engine's (``Engine(only=...)``), which maintains
it with counting and semi-naive deltas instead of re-grounding it, and whose
atoms the TMS's grounder reads as it reads stream facts: decided while
grounding, never TMS atoms (Ticker's scenario B: only ``get``/``n_get`` are
left to the TMS).

The upper part reads a lower predicate through its relation in the core
engine: the atoms of the answer at ``t`` (a *timed* predicate's with their
times, as far back as the program's windows look), exactly what the TMS's
own grounder would have derived for it.  When either part would be empty the
TMS evaluates the whole program.
"""

from __future__ import annotations

from dataclasses import dataclass

from chronolog.dialects.lars.ir import ExtAtom
from chronolog.dialects.lars.plan import Plan, PredKey, _state_reach


@dataclass(frozen=True)
class Split:
    lower: frozenset[int]  # indices of plan.components the core engine evaluates
    upper: Plan  # the rest, lower predicates as input
    reads: tuple[PredKey, ...]  # the lower predicates the upper part reads


def split_plan(plan: Plan) -> Split | None:
    """The lower part and the upper plan, or None when the TMS takes the whole program."""
    lower: set[int] = set()
    lower_preds: set[PredKey] = set()
    for ci, comp in enumerate(plan.components):  # dependencies first
        reads = comp.reads & plan.intensional
        if comp.stratified and reads - set(comp.preds) <= lower_preds:
            lower.add(ci)
            lower_preds.update(comp.preds)
    upper = [c for ci, c in enumerate(plan.components) if ci not in lower]
    if not lower or not upper:
        return None
    upper_preds = {p for c in upper for p in c.preds}
    rules = [r for c in upper for r in c.rules]
    reads = sorted({b.atom.key for r in rules for b in r.body if isinstance(b, ExtAtom)} & lower_preds)
    top = Plan(
        program=plan.program, rules=rules, extensional=plan.extensional | lower_preds, intensional=upper_preds,
        timed=plan.timed & upper_preds, background=plan.background, output=plan.output & upper_preds,
        components=upper, stratified=False,
        state_reach=_state_reach(rules, plan.intensional),  # (the lower part's atoms need no history)
        tuple_reach=plan.tuple_reach, output_reach=plan.output_reach,
        input_routes={k: v for k, v in plan.input_routes.items() if k in upper_preds},
        hidden_rules=[r for r in plan.hidden_rules if r.head.atom.key in upper_preds],
        solver=plan.solver, seed=plan.seed, model=plan.model,
    )
    return Split(frozenset(lower), top, tuple(reads))
