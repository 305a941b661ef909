"""A LARS program upgrade that keeps the unchanged strata (issue 37 item 4; a chain service,
``versions.switch`` through ``LarsEvaluator.keep``).

A component (a strongly connected set of derived predicates) is identified by its rules'
text and the identities of the components it reads (``core.strata.identity``, as the plan
printer's strata in ``changes.py``): one the running program has too derives the same atoms
from the same input, and so does everything it reads.  Those are the kept components; the
others (changed and added ones, and the running program's changed and removed ones) are
evaluated again, each program's on the kept ones' content (``Engine(only=..., imported=...)``).

The changed components' input from the kept ones over [T - reach, now] comes from the
running version's record of what crosses component boundaries per time point
(``crossing.CrossingRecord``, kept by a chain service), where it holds that span: then the
kept components are not evaluated at all.  Where it does not (a point before the record
began, a kept component read only by the new program's changed ones, no answer set at a
point) they are evaluated once more — by one engine of the kept components only, in the
same pass as the new version's changed strata and the running version's (what it wrote from
T on, taken back): once instead of twice with the rest, with no answer line.  With T the
first time not evaluated yet (``chronolog upgrade`` without ``--at``) that is the changed
strata's warm-up only.  The kept predicates' answers are neither taken back nor written.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Callable

from chronolog.core.records import record
from chronolog.core.strata import identity
from chronolog.dialects.lars.answers import AnswerWriter
from chronolog.dialects.lars.crossing import CrossingRecord, preds_of
from chronolog.dialects.lars.engine.core import Engine, Imported
from chronolog.dialects.lars.ir import ExtAtom
from chronolog.dialects.lars.plan import Plan, PredKey
from chronolog.dialects.lars.reasoner import Reasoner


def component_identities(plan: Plan) -> list[str]:
    """Per component of ``plan`` (``plan.components``' order): its identity, of its rules'
    text, the identities of the components it reads (``core.strata.identity``) and the
    program facts of the input predicates it reads (``plan.background``: not rules, so a
    fact added or removed changes no rule's text), so that a component with an identity
    another program has is closed under what it reads too."""
    of: dict[PredKey, str] = {}  # predicate -> the identity of its component
    out = []
    for c in plan.components:  # (in evaluation order: what a component reads comes first)
        own = set(c.preds)
        keys = c.reads
        reads = {of[k] for k in keys if k in of and k not in own}
        reads |= {_facts(k, plan.background[k]) for k in keys if k in plan.background}
        ident = identity([str(r) for r in c.rules], reads)
        for k in c.preds:
            of[k] = ident
        out.append(ident)
    return out


def _facts(pred: PredKey, rows: list[tuple]) -> str:
    """The program facts of an input predicate as one text (in no order: a set)."""
    return f"{pred[0]}/{pred[1]}: " + " ".join(sorted({repr(row) for row in rows}))


def answer_key(pred: PredKey) -> str:
    """An answer line's key (``p/1``) of a predicate."""
    return f"{pred[0]}/{pred[1]}"


def kept_answers(old: Plan, new: Plan) -> frozenset[str]:
    """The answer keys (``p/1``) an upgrade from ``old`` to ``new`` neither takes back nor
    writes again: those of the new program's unchanged strata (by identity, as the plan
    printer says) that both programs answer, minus any a changed, added or removed stratum
    derives too; none where the chain cannot keep strata (``split``)."""
    if split(old, new, None) is None:
        return frozenset()
    from chronolog.dialects.lars.changes import stratum_identities  # noqa: PLC0415 (changes imports this module)

    before, after = stratum_identities(old), stratum_identities(new)
    old_ids, new_ids = {x for _, x in before}, {x for _, x in after}
    answers = {answer_key(p) for p in old.output & new.output}
    kept = {p for preds, x in after if x in old_ids for p in preds if p in answers}
    other = {p for preds, x in after if x not in old_ids for p in preds}
    other |= {p for preds, x in before if x not in new_ids for p in preds}
    return frozenset(kept - other)


@record(frozen=True)
class Split:
    """The components of both programs (indices into ``plan.components``): the kept ones
    (the new program's and the same ones of the running program), and the others."""

    kept_new: frozenset[int]
    rest_new: frozenset[int]
    kept_old: frozenset[int]
    rest_old: frozenset[int]


def split(old: Plan, new: Plan, kept: frozenset[str] | None) -> Split | None:
    """The kept and other components of an upgrade from ``old`` to ``new``, where the kept
    answer keys ``kept`` (None: not asked) are all kept components' (None where it cannot
    keep: a program not stratified — its answer sets follow the choices of earlier points —
    one with ``@``-heads, whose evaluations from T on date atoms before T, or a kept
    predicate kept in another shape, with its times in one program only)."""
    for plan in (old, new):
        if not plan.stratified or plan.solver in ("tms!", "oneshot!") or _dates_back(plan):
            return None
    ids_old, ids_new = component_identities(old), component_identities(new)
    kept_new = frozenset(ci for ci, x in enumerate(ids_new) if x in set(ids_old))
    kept_old = frozenset(ci for ci, x in enumerate(ids_old) if x in set(ids_new))
    keys = {p for ci in kept_new for p in new.components[ci].preds}
    if keys != {p for ci in kept_old for p in old.components[ci].preds}:
        return None
    if kept is not None and not kept <= {answer_key(p) for p in keys}:
        return None
    for p in keys:
        if (p in old.timed) != (p in new.timed) or (p in old.padded & old.output) != (p in new.padded & new.output):
            return None
    return Split(kept_new, frozenset(range(len(new.components))) - kept_new, kept_old,
                 frozenset(range(len(old.components))) - kept_old)


def _dates_back(plan: Plan) -> bool:
    """``hooks.lars_dates_back`` of the plan's program."""
    rules = plan.program.rules
    output = {r.head.atom.key for r in rules if r.body}
    return any(r.head.time is not None and (r.body or r.head.atom.key in output) for r in rules)


def without(plan: Plan, kept: frozenset[str]) -> Plan:
    """``plan`` answering none of the ``kept`` keys: an engine of it publishes no change of
    them, so neither version's writer writes their lines (they are not restated)."""
    return dataclasses.replace(plan, output={p for p in plan.output if answer_key(p) not in kept})


def evaluate_split(parts: Split, old: Reasoner, new: Reasoner, kept: frozenset[str], point: int, until: int,
                   writers: tuple[AnswerWriter, AnswerWriter], record: CrossingRecord | None = None,
                   fresh: CrossingRecord | None = None) -> int:
    """Evaluate [warm-up, ``until``] on ``old``'s log: the new program's other components
    and the running program's on the kept components' content at each point, writing what
    each derives from ``point`` on (without the ``kept`` answers) with its writer (new,
    running).  The kept components' content is ``record``'s (the running version's
    ``CrossingRecord``) where it holds every point and predicate needed; else they are
    evaluated once, by an engine of them alone.  ``fresh``: the new version's record, given
    its points from ``point`` on where the two engines hold all it records.  How many points
    the kept components were evaluated at (0: the record served)."""
    t1 = old.t1
    assert t1 is not None
    log = old.log
    entry: Callable[[int], tuple[list, Imported | None]] = lambda t: (log.get(t, []), None)  # noqa: E731
    begin = min(new.warm_up_start(entry, t1, point), old.warm_up_start(entry, t1, point))
    imports_new = needed(new.plan, parts.rest_new, parts.kept_new)
    need_old = needed(old.plan, parts.rest_old, parts.kept_old)
    quiet = quiet_keys(parts, new.plan, kept)
    wanted = preds_of(new.plan, imports_new) | preds_of(old.plan, need_old)
    recorded = None if record is None else record.span(begin, until, wanted)
    kept_engine = None
    if recorded is None:
        need = imports_new
        keys = preds_of(old.plan, need_old)
        need |= {ci for ci in parts.kept_new if keys & set(new.plan.components[ci].preds)}
        need = closed(new.plan, need | dating(new.plan, parts.kept_new))
        kept_engine = Engine(new.plan, t1, only=need)
        imports_new = need & parts.kept_new
    engines = (Engine(without(new.plan, quiet), t1, only=parts.rest_new, imported=imports_new),
               Engine(without(old.plan, quiet), t1, only=parts.rest_old, imported=need_old))
    if fresh is not None and not set(fresh.preds) <= preds_of(new.plan, parts.rest_new | imports_new):
        fresh = None  # (it reads a kept component the changed ones do not: recorded from ``until`` on)
    for t in range(begin, until + 1):
        facts = log.get(t, ())
        if kept_engine is None:
            content = recorded[t - begin]  # type: ignore[index]
        else:
            got = kept_engine.step(t, facts)
            content = Imported(got.consistent, kept_engine.exported())
        for engine, writer in zip(engines, writers, strict=True):
            result = engine.step(t, facts, content)
            if t >= point:
                writer.step(result, engine)
                if fresh is not None and engine is engines[0]:
                    fresh.observe(t, engine, result)
    return 0 if kept_engine is None else until - begin + 1


def quiet_keys(parts: Split, plan: Plan, kept: frozenset[str]) -> frozenset[str]:
    """The answer keys neither version's evaluation writes: the ``kept`` ones, and those of
    every kept component of the new ``plan``.  A kept component's answers are the same in both
    versions, also where its stratum changed (so that ``kept`` leaves them out): the running
    version's engine does not evaluate it, so neither writes what it imports of it (else only
    the new one would)."""
    return kept | {answer_key(p) for ci in parts.kept_new for p in plan.components[ci].preds}


def adopts(record: CrossingRecord, fresh: CrossingRecord, parts: Split, plan: Plan) -> bool:
    """Whether the new version (``plan``, its empty record ``fresh``) takes the running one's
    ``record`` over as it is: where it records the same predicates, all of kept components
    (the same content in both programs at every point), and nothing in it dates a head (so
    that it has an answer set wherever the running program had one: a point with an entry).
    A top-stratum change, the common case: its record goes on with no entry written."""
    everything = frozenset(range(len(plan.components)))
    return (set(fresh.preds) == set(record.preds) and set(fresh.preds) <= preds_of(plan, parts.kept_new)
            and not dating(plan, everything))


def dating(plan: Plan, components: frozenset[int]) -> frozenset[int]:
    """Those of ``components`` with a rule that dates its head (``a(1) at 0.``, ``p(X) at
    T :- ...``; not a stream fact's route, dated at its own time): an atom dated outside the
    timeline leaves the whole program without an answer set at that point, so each is
    evaluated for it whether or not a changed component reads it (else the others' content
    at such a point was taken as the answer set, and what the running version "wrote"
    there restated)."""
    routed = set(plan.input_routes.values())
    return frozenset(ci for ci in components for r in plan.components[ci].rules if r.head.time is not None
                     and not (len(r.body) == 1 and isinstance(b := r.body[0], ExtAtom) and b.atom.key in routed))


def needed(plan: Plan, rest: frozenset[int], kept_components: frozenset[int]) -> frozenset[int]:
    """The kept components whose content the evaluation of ``rest`` needs: those the other
    components read, with what they read.  The others are not evaluated: a kept component
    derives the same atoms in both versions, so where its answers are not among the kept
    ones (its stratum changed) neither version's evaluation writes them, and nothing of
    them is restated."""
    of = {p: ci for ci, c in enumerate(plan.components) for p in c.preds}
    wanted = {of[k] for ci in rest for k in plan.components[ci].reads if k in of}
    return closed(plan, wanted) & kept_components


def closed(plan: Plan, components: set[int] | frozenset[int]) -> frozenset[int]:
    """``components`` and every component they read, directly or not."""
    of = {p: ci for ci, c in enumerate(plan.components) for p in c.preds}
    out, todo = set(components), list(components)
    while todo:
        for k in plan.components[todo.pop()].reads:
            if (ci := of.get(k)) is not None and ci not in out:
                out.add(ci)
                todo.append(ci)
    return frozenset(out)
