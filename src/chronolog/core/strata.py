"""Strata identified by content (``chronolog upgrade``'s plan, issue 37 item 4).

A program change keeps the state of the strata it leaves alone.  A stratum (a strongly
connected set of derived predicates) is identified by what decides its answers, not by
its place: the text of the rules (and program facts) defining its predicates and,
recursively, the identities of the strata its rules read (input predicates by name, in
the rules' text).  Two programs' strata with the same identity give the same answers on
the same input.  Every dialect describes its dependency graph (``Definitions``); this
module names the strata, compares two programs and words the plan, for all of them.
"""

from __future__ import annotations

import hashlib
from collections.abc import Iterable, Mapping

from chronolog.core.graph import strongly_connected
from chronolog.core.records import record


def identity(texts: Iterable[str], reads: Iterable[str]) -> str:
    """A stratum's identity: the first 12 hex digits of the SHA-256 of its rules' texts
    (sorted: their order in the file does not matter) and the identities it reads."""
    digest = hashlib.sha256()
    for text in sorted(texts):
        digest.update(text.encode() + b"\0")
    for ident in sorted(set(reads)):
        digest.update(ident.encode() + b"\1")
    return digest.hexdigest()[:12]


@record(frozen=True)
class Stratum:
    """A stratum of a program: its predicates as the plan names them (``p/1``), the keys of
    the answer lines it writes (``p/1``: predicate and number of arguments), its identity."""

    preds: tuple[str, ...]
    answers: frozenset[str]
    ident: str


@record(frozen=True)
class Definitions:
    """A program's dependency graph as a dialect describes it: per derived predicate (any
    hashable, ordered key) its name in the plan, the answer keys it writes, the texts of
    what defines it (rules, program facts) and the derived predicates its rules read."""

    names: Mapping[str, str]
    answers: Mapping[str, frozenset[str]]
    texts: Mapping[str, tuple[str, ...]]
    reads: Mapping[str, frozenset[str]]


def strata(defs: Definitions) -> list[Stratum]:
    """The program's strata, each after the ones it reads, with their identities."""
    nodes = sorted(defs.texts)
    edges = {n: {d for d in defs.reads.get(n, frozenset()) if d in defs.texts} for n in nodes}
    of: dict[str, str] = {}
    out = []
    for comp in strongly_connected(nodes, edges):
        own = set(comp)
        ident = identity([t for n in comp for t in defs.texts[n]],
                         [of[d] for n in comp for d in edges[n] if d not in own])
        for n in comp:
            of[n] = ident
        out.append(Stratum(tuple(sorted(defs.names[n] for n in comp)),
                           frozenset(a for n in comp for a in defs.answers.get(n, frozenset())), ident))
    return out


def kept_answers(before: list[Stratum], after: list[Stratum]) -> frozenset[str]:
    """The answer keys of the new program's strata that the old one has, by identity (their
    answers are the same), minus any key a changed, added or removed stratum writes too."""
    old = {s.ident for s in before}
    new = {s.ident for s in after}
    kept = {a for s in after if s.ident in old for a in s.answers}
    other = {a for s in after if s.ident not in old for a in s.answers}
    other |= {a for s in before if s.ident not in new for a in s.answers}
    return frozenset(kept - other)


def plan_lines(before: list[Stratum] | None, after: list[Stratum], unchanged: str) -> list[str]:
    """The plan's line for each stratum of the new program against the old one (None:
    unknown), and one for the predicates no longer defined; ``unchanged``: what happens
    to a stratum with the same identity in this fleet."""
    if before is None:
        return [f"  stratum {i} ({', '.join(s.preds)}): re-evaluated from T on (the running program is unknown)"
                for i, s in enumerate(after, 1)]
    kept = {s.ident for s in before}
    old_preds = {p for s in before for p in s.preds}
    new_preds = {p for s in after for p in s.preds}
    lines = []
    for i, s in enumerate(after, 1):
        if s.ident in kept:
            how = unchanged
        elif set(s.preds) & old_preds:
            how = "changed: re-evaluated from T on, its answers from T on corrected"
        else:
            how = "added: evaluated from T on"
        lines.append(f"  stratum {i} ({', '.join(s.preds)}): {how}")
    for s in before:
        gone = [p for p in s.preds if p not in new_preds]
        if gone and s.ident not in {x.ident for x in after}:
            lines.append(f"  removed: {', '.join(gone)} (no longer defined: their answers from T on withdrawn)")
    return lines
