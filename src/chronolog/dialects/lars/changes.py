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

from chronolog.core.errors import ChronologError
from chronolog.dialects.lars.engine.core import Engine
from chronolog.dialects.lars.hooks import lars_plan
from chronolog.dialects.lars.keeping import component_identities, split
from chronolog.dialects.lars.plan import INPUT_SUFFIX, Plan
from chronolog.dialects.lars.reasoner import make_engine

PredKey = tuple[str, int]
# why a chain service cannot keep a stratum's state (``keeping.split``)
_WHOLE = "a program with @-heads or not stratified, or a predicate kept with its times in one program only"


def stratum_identities(plan: Plan) -> list[tuple[list[str], str]]:
    """Per stratum of ``plan`` (lowest first): its predicates ("p/1") and its identity (of
    its components' identities, ``core.strata.identity``)."""
    by_stratum: dict[int, list[str]] = {}
    for c, ident in zip(plan.components, component_identities(plan), strict=True):
        by_stratum.setdefault(c.stratum, []).append(ident)
    out = []
    for i, preds in enumerate(plan.strata):
        digest = hashlib.sha256(b"".join(x.encode() for x in sorted(by_stratum.get(i, []))))
        out.append((preds, digest.hexdigest()[:12]))
    return out


def changed_strata(old: Plan, new: Plan) -> list[bool]:
    """Per stratum of ``new``: whether it differs from the old one at its place (a stratum
    at the same place with the same identity keeps its state in a per-stratum fleet)."""
    before = stratum_identities(old)
    return [i >= len(before) or before[i][1] != ident for i, (_, ident) in enumerate(stratum_identities(new))]


def changed_at(old: Plan, new: Plan, stratum: int) -> bool:
    """Whether the fleet's reasoner at 0-based ``stratum`` evaluates anything else from T on:
    a stratum changed or added there, or one removed (``new`` has none there, ``old`` had)."""
    if stratum < new.fleet_strata:
        return changed_strata(old, new)[stratum]
    return stratum < old.fleet_strata


def per_stratum_refusal(old: Plan, new: Plan) -> str | None:
    """Why a fleet of one service per stratum running ``old`` cannot switch to ``new`` from
    a time T on, its strata apart (None: it can).  Each changed stratum's service evaluates
    ``new``'s rules from T on, reading the lower strata's content as they send it — the old
    program's before T — and the input it kept.  So every stratum must be evaluated on its
    own (stratified), a predicate is sent with its times in both programs or in neither,
    and a changed stratum may read only the input predicates its service kept.
    A stratum may read a changed one through a window or ``at``: a window over a derived
    predicate sees only what the evaluation at t derives (LARS.md), and the strata below
    send that as the content of t, which from T on is the new program's — so no content the
    old program sent before T is read from T on.  ``@``-heads too: the atoms an evaluation
    dates back are part of its content, so the version is chosen by the time point
    evaluated, as ``run --upgrade`` chooses it; the output widens how far back it looks as
    the content shows (``OutputStage.widen``).  The number of strata and the answer
    predicates may change: ``up``'s supervisor starts the reasoners of added strata (they
    keep all input, as a stratum past the running program's last does), and the output
    serves every version's answer predicates (docs/fleet/upgrade.md)."""
    for plan, which in ((new, "the new program"), (old, "the running program")):
        if not plan.stratified:  # (with @-heads or without: the TMS keeps the choices of earlier points)
            return (f"{which} is not stratified: a fleet of one service per stratum runs such a program as one "
                    "reasoner evaluating it whole (by truth maintenance, its answer sets following the choices of "
                    "earlier time points), so its strata cannot be handed over stratum by stratum")
    flipped = reshaped(old, new)
    dated = sorted(flipped & (dated_preds(old) | dated_preds(new)))
    if dated:  # (a predicate read through a window or 'at' is sent with its times)
        p, n = dated[0]
        return (f"{p}/{n} is kept with its times in one program and not in the other (read through a window or "
                "'at' in one only) and an @-head dates it: the atoms the services before and after T send "
                "for it do not convert into each other's shape")
    if (old.padded ^ new.padded) - flipped:
        return "the new program derives other predicates of the stream (the output service writes the old ones)"
    changed = changed_strata(old, new)
    for k, differs in enumerate(changed):
        why = unkept(k, stream_keys(new, k), stream_keys(old, k)) if differs else None
        if why is not None:
            return why
    return None


def unkept(stratum: int, needs: frozenset | None, kept: frozenset | None) -> str | None:
    """Why the service of 0-based ``stratum``, which kept the stream facts of ``kept`` (None:
    all), cannot evaluate a version needing those of ``needs`` (None: all) from T on: its
    log, which the new version starts from, lacks the others' facts (None: it can).  A
    predicate the new version derives counts too: its stream facts are input (``p#in``)."""
    if kept is None or (needs is not None and needs <= kept):
        return None
    if needs is None:
        what = "all of them (a tuple window or truth maintenance counts every fact)"
    else:
        what = ", ".join(f"{p}/{n}" for p, n in sorted({(p.removesuffix(INPUT_SUFFIX), n) for p, n in needs - kept}))
    return f"stratum {stratum + 1} of the new program reads input predicates its service did not keep: {what}"


def reshaped(old: Plan, new: Plan) -> set[PredKey]:
    """The predicates both programs derive that one keeps with their times and the other does
    not (read through a window or ``at`` in one only): their stratum sends each time point in
    the shape of the version evaluating it, and its readers convert (``reasoner.shaped``)."""
    return (old.timed ^ new.timed) & old.intensional & new.intensional


def dated_preds(plan: Plan) -> set[PredKey]:
    """The predicates an ``@``-head of the program derives (at other times than evaluated)."""
    return {r.head.atom.key for r in plan.program.rules if r.head.time is not None and r.body}


def strata_changes(old: Any | None, new: Any, chained: bool) -> list[str]:
    """The plan's lines for each stratum of ``new`` against ``old`` (None: unknown); for a
    fleet of one service per stratum, a ``ChronologError`` saying why it cannot switch."""
    if not chained:
        if old is None:
            raise ChronologError("error: the fleet file names no program: the strata that change are unknown")
        why = per_stratum_refusal(lars_plan(old), lars_plan(new))
        if why is not None:
            raise ChronologError(f"error: this fleet of one service per stratum cannot change to the new program "
                                 f"while running: {why} (start the fleet with `chronolog up --chain`, whose "
                                 "services take it, or restart it with the new program)")
    after = stratum_identities(lars_plan(new))
    if old is None:
        return [f"  stratum {i} ({', '.join(p)}): re-evaluated from T on (the running program is unknown)"
                for i, (p, _) in enumerate(after, 1)]
    before = stratum_identities(lars_plan(old))
    kept = {ident for _, ident in before}
    keeps = split(lars_plan(old), lars_plan(new), None) is not None  # (a chain keeps them: ``keeping``)
    old_preds = {p for preds, _ in before for p in preds}
    new_preds = {p for preds, _ in after for p in preds}
    lines = []
    for i, (preds, ident) in enumerate(after, 1):
        names = ", ".join(preds)
        if ident in kept:
            how = ("unchanged: keeps its state" if not chained or keeps else
                   "unchanged: the same rules and inputs, the same answers (the chain service evaluates the "
                   "program whole, so it is evaluated again with the rest: " + _WHOLE + ")")
        elif set(preds) & old_preds:
            how = "changed: re-evaluated from T on, its answers from T on corrected"
        elif chained or i <= len(before):
            how = "added: evaluated from T on"
        else:  # a stratum past the old program's last: a reasoner of its own
            how = f"added: evaluated from T on by reasoner-{i}, its input re-read from the retained topics"
        lines.append(f"  stratum {i} ({names}): {how}")
    if not chained:
        for i in range(len(after) + 1, len(before) + 1):
            lines.append(f"  stratum {i} ({', '.join(before[i - 1][0])}): removed: reasoner-{i} withdraws its answers "
                         "from T on and stays for the corrections before T (late events)")
    for preds, ident in before:
        gone = [p for p in preds if p not in new_preds]
        if gone and ident not in {x for _, x in after}:
            lines.append(f"  removed: {', '.join(gone)} (no longer defined: their answers from T on withdrawn)")
    return lines


def stream_keys(plan: Plan, stratum: int) -> frozenset | None:
    """The input predicates stratum ``stratum``'s reasoner keeps (None: all).

    Every reasoner reads the whole grounded stream; an upper stratum keeps
    only the facts its own rules can see, so its log, its state and its
    replays do not carry the lower strata's input.  The lowest one keeps
    everything, so a retraction that matches nothing is still warned of and
    counted, whatever its predicate.  A stratum with a tuple window, or evaluated by
    truth maintenance, keeps everything too, and so does a reasoner past the program's
    last stratum (started for a stratum a later version adds, ``chronolog upgrade``)."""
    if stratum == 0 or stratum >= plan.fleet_strata:  # (past the last: a stratum a later version may add)
        return None
    engine = make_engine(plan, 0, stratum)
    return engine.stream_keys() if isinstance(engine, Engine) else None
