"""What a program change does to a LARS program's strata (``chronolog upgrade``'s plan).

A stratum is identified by its content, not its position: the text of the rules defining
its predicates and, recursively, the identities of the strata its rules read (input
predicates by name, in the rules' text).  A stratum of the new program with an identity
the old one has is unchanged (the same answers from the same input); otherwise it is
changed (its predicates were in the old program) or added; an old stratum whose
predicates the new program no longer defines is removed.
"""

from __future__ import annotations

import hashlib
from typing import Any

from chronolog.dialects.lars.hooks import lars_plan
from chronolog.dialects.lars.ir import ExtAtom
from chronolog.dialects.lars.plan import Plan

PredKey = tuple[str, int]


def stratum_identities(plan: Plan) -> list[tuple[list[str], str]]:
    """Per stratum of ``plan`` (lowest first): its predicates ("p/1") and its identity."""
    of: dict[PredKey, str] = {}  # predicate -> the identity of its component
    by_stratum: dict[int, list[str]] = {}
    for c in plan.components:  # (in evaluation order: what a component reads comes first)
        digest = hashlib.sha256()
        for text in sorted(str(r) for r in c.rules):
            digest.update(text.encode() + b"\0")
        own = set(c.preds)
        reads = sorted({of[k] for r in c.rules for b in r.body if isinstance(b, ExtAtom)
                        and (k := b.atom.key) in of and k not in own})
        for ident in reads:
            digest.update(ident.encode() + b"\1")
        ident = digest.hexdigest()[:12]
        for k in c.preds:
            of[k] = ident
        by_stratum.setdefault(c.stratum, []).append(ident)
    out = []
    for i, preds in enumerate(plan.strata):
        digest = hashlib.sha256(b"".join(x.encode() for x in sorted(by_stratum.get(i, []))))
        out.append((preds, digest.hexdigest()[:12]))
    return out


def strata_changes(old: Any | None, new: Any, chained: bool) -> list[str]:
    """The plan's lines for each stratum of ``new`` against ``old`` (None: unknown)."""
    after = stratum_identities(lars_plan(new))
    if old is None:
        return [f"  stratum {i} ({', '.join(p)}): re-evaluated from T on (the running program is unknown)"
                for i, (p, _) in enumerate(after, 1)]
    before = stratum_identities(lars_plan(old))
    kept = {ident for _, ident in before}
    old_preds = {p for preds, _ in before for p in preds}
    new_preds = {p for preds, _ in after for p in preds}
    lines = []
    for i, (preds, ident) in enumerate(after, 1):
        names = ", ".join(preds)
        if ident in kept:
            how = ("unchanged: the same rules and inputs, the same answers (the chain service evaluates the "
                   "program whole, so it is evaluated again with the rest)" if chained else
                   "unchanged: keeps its state")
        elif set(preds) & old_preds:
            how = "changed: re-evaluated from T on, its answers from T on corrected"
        else:
            how = "added: evaluated from T on"
        lines.append(f"  stratum {i} ({names}): {how}")
    for preds, ident in before:
        gone = [p for p in preds if p not in new_preds]
        if gone and ident not in {x for _, x in after}:
            lines.append(f"  removed: {', '.join(gone)} (no longer defined: their answers from T on withdrawn)")
    return lines
