"""A LARS program's fleet layout: its strata, its partition key, and the stages of each service.

Per stratum, the fleet runs ingest, grounding, one reasoner per stratum and
output (``dialects/lars/stages.py``); chained, grounding, every stratum and
output of a partition in one ``chain`` service.  Partitioning by a key is
possible when every rule joins all its atoms on one variable standing at the
same argument position of each predicate (an entity id); tuple windows count
facts across all keys and rule it out.
"""

from __future__ import annotations

from itertools import product

from chronolog.core.errors import ChronologError
from chronolog.core.retention import lars_retention
from chronolog.dialects.lars.ir import ExtAtom, TupleWindow, Var
from chronolog.dialects.lars.plan import Plan
from chronolog.dialects.lars.stages import ChainStage, GroundingStage, OutputStage, ReasonerStage
from chronolog.stages.ingest import IngestStage
from chronolog.stages.interface import FleetLayout, Stage, StageSpec


def lars_layout(plan: Plan) -> FleetLayout:
    """The fleet of ``plan``: per stratum or chained, partitioned by key when the rules allow it."""
    strata = fleet_strata(plan)
    key, reason = partition_key(plan)

    def chain_note(n: int) -> str:
        what = "ingest, " if n == 1 else ""
        return f"chained: {what}grounding, {len(strata)} stratum reasoner(s) and output in one service per partition"

    def stage(spec: StageSpec) -> Stage:
        return _stage(plan, key, spec)

    return FleetLayout(tuple(tuple(s) for s in strata), True, key, reason, chain_note, stage)


def _stage(plan: Plan, key: dict[str, int] | None, spec: StageSpec) -> Stage:
    """The stage of one service; its stratum and partition are checked by the runtime."""
    retention = lars_retention(spec.retention)  # --retention inf: LARS's default, unlimited
    if spec.role == "ingest":
        return IngestStage(key, spec.partitions if key is not None else 1, spec.input_partitions, retention,
                           idle_flush=spec.idle_flush)
    if spec.role == "grounding":  # closes the latest point on ingest's idle record (IngestStage.idle_flush)
        return GroundingStage(idle_flush=None)
    if spec.role == "reasoner":
        assert spec.stratum is not None
        return ReasonerStage(plan, spec.stratum - 1, warn=spec.warn, retention=retention)
    if spec.role == "output":
        return OutputStage(plan, plan.fleet_strata, warn=spec.warn, retention=retention)
    if spec.role == "chain":
        ingest = IngestStage(key, 1, spec.input_partitions, retention) if spec.chained_ingest else None
        return ChainStage(plan, ingest, idle_flush=spec.idle_flush, warn=spec.warn, retention=retention)
    raise ChronologError(f"error: a LARS fleet has no service {spec.role!r}")


def fleet_strata(plan: Plan) -> list[list[str]]:
    """Predicates per fleet reasoner: the strata, or everything in one for a
    program that is not stratified (clingo evaluates it whole)."""
    if plan.stratified:
        return plan.strata
    return [sorted({p for s in plan.strata for p in s})]


def partition_key(plan: Plan) -> tuple[dict[str, int] | None, str]:
    """An argument position per predicate on which every rule joins, if there is one."""
    rules = [r for r in plan.rules if r.body]
    for r in rules:
        for b in r.body:
            if isinstance(b, ExtAtom) and isinstance(b.window, TupleWindow):
                return None, "a tuple window counts facts of all keys"
    if any(not r.body and r.head.atom.key in plan.intensional for r in plan.program.rules):
        return None, "program facts of derived predicates would be answered by every partition"
    static = _static_preds(plan)
    for r in rules:
        if not any(isinstance(b, ExtAtom) and not b.negated and b.atom.key not in static for b in r.body):
            where = f" ({r.loc.file}:{r.loc.line})" if r.loc else ""
            return None, f"a rule reads only program facts{where}: every partition would derive it"
    preds: dict[str, int] = {}
    for r in plan.rules:
        for a in [r.head.atom] + [b.atom for b in r.body if isinstance(b, ExtAtom)]:
            if "#" in a.pred:
                continue
            preds[f"{a.pred}/{len(a.args)}"] = len(a.args)
    if any(n == 0 for n in preds.values()):
        return None, "a predicate without arguments cannot be partitioned"
    names = sorted(preds)
    if not names:
        return None, "no predicates"
    choices = [range(preds[p]) for p in names]
    budget = 4096
    for combo in product(*choices):
        budget -= 1
        if budget < 0:
            break
        key = dict(zip(names, combo))
        if all(_joins_on_key(r, key) for r in rules):
            return key, ""
    return None, "no argument position on which every rule joins all its atoms"


def _static_preds(plan: Plan) -> set:
    """Predicates that hold independently of the stream: program facts and what only they derive."""
    static = set(plan.background)
    changed = True
    while changed:
        changed = False
        for r in plan.rules:
            key = r.head.atom.key
            if key in static or not r.body or "#" in key[0]:
                continue
            heads = [x for x in plan.rules if x.head.atom.key == key]
            if all(
                x.body and all(not isinstance(b, ExtAtom) or b.negated or b.atom.key in static for b in x.body)
                for x in heads
            ):
                static.add(key)
                changed = True
    return static


def _joins_on_key(rule, key: dict[str, int]) -> bool:  # type: ignore[no-untyped-def]
    atoms = [rule.head.atom] + [b.atom for b in rule.body if isinstance(b, ExtAtom) and "#" not in b.atom.pred]
    terms = set()
    for a in atoms:
        if "#" in a.pred:
            continue
        term = a.args[key[f"{a.pred}/{len(a.args)}"]]
        if not isinstance(term, Var):
            return False
        terms.add(term.name)
    return len(terms) == 1
