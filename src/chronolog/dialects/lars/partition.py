"""Partitioning a LARS program by key: an argument position per predicate on which every
rule joins all its atoms (an entity id), so that each key's facts can be evaluated apart.

``Dialect.partition_key`` of the LARS rows (the backfill's key partitions).  The same
analysis is in ``runtime/fleet/topology.py`` until the fleet's part of issue 36 asks the
registry row for it too; then that copy goes.
"""

from __future__ import annotations

from itertools import product
from typing import Any

from chronolog.dialects.lars.hooks import lars_plan
from chronolog.dialects.lars.ir import ExtAtom, TupleWindow, Var
from chronolog.dialects.lars.plan import Plan


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


def program_partition_key(program: Any) -> dict[str, int] | None:
    """The registry's ``partition_key`` of a LARS program: the argument position per
    predicate on which every rule of its plan joins, or None."""
    return partition_key(lars_plan(program))[0]
