"""Instances of a grounded entity that ``grounding/1`` does not admit: RTEC computes none of them.

Why: RTEC caches a simple fluent or a derived event only for the instances its ``grounding/1``
clause admits (``cachingOrder2``, whose body is that clause's body), and a rule body reads
nothing but that cache.  So ``far(A,B)`` reading ``near(B,A)``, with ``near`` grounded only for
``A @< B``, reads ``[]`` for ``far(c,d)`` although ``near(d,c)``'s own rules give it intervals
(checked against RTEC: ``tests/data/rtec/ungrounded/``).  The evaluator follows it where it
stores: a simple fluent's sweep and a derived event's derivation keep only admitted instances
(a statically determined fluent is derived only for the heads ``grounding/1`` gives already),
so every read — the built-ins, compiled bodies, a cycle's ``holdsAt``, ``explain`` — sees what
RTEC's cache holds.

Admission may depend on the dynamic domain, which grows as the stream goes on; in RTEC's
one-window meaning it is decided on the whole stream's domain.  So each entity remembers the
instances it derived but left out (``rejected``, known once it was derived from the start);
when the domain grows and one of them is admitted now (or, with a grounding that negates, a
stored one is not any more), the entity is derived again from the start and so is what reads
it (``RtecEvaluator._window``).
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

from chronolog.dialects.rtec.hierarchy import Hierarchy, Key, _fterm, _grounding_key
from chronolog.dialects.rtec.parser import RtecProgram
from chronolog.dialects.rtec.store import _after
from chronolog.dialects.rtec.terms import Rule

Entity = tuple  # ("fluent", key, None) of a simple fluent, ("event", key) of a derived event
_NEGATING = {("\\+", 1), ("not", 1), ("->", 2), ("*->", 2), ("findall", 3), ("forall", 2), ("aggregate_all", 3)}


def admitted_entities(program: RtecProgram, h: Hierarchy) -> set[Entity]:
    """The simple fluents and derived events a ``grounding/1`` clause names by its functor:
    only their admitted instances are kept.  (Statically determined fluents are derived for
    the admitted heads only already; entities no clause names are read as nothing,
    ``unground.py``; a clause with a variable head is left alone.)"""
    out: set[Entity] = set()
    for rule in program.background.get(("grounding", 1), []):
        key = _grounding_key(rule.head[1])
        if key is None:
            continue
        if h.kind.get(("fluent", key, None)) == "simple":
            out.add(("fluent", key, None))
        elif ("event", key) in h.kind:
            out.add(("event", key))
    return out


def _goals(g: Any) -> Iterator[Any]:
    """A goal and the goals inside its control constructs."""
    yield g
    if type(g) is tuple and (g[0], len(g) - 1) in _NEGATING | {(",", 2), (";", 2), ("once", 1)}:
        for a in g[1:]:
            yield from _goals(a)


def admission_reads(program: RtecProgram, entities: set[Entity]) -> tuple[set[Entity], bool]:
    """The entities whose admission can change as the dynamic domain grows (their grounding
    clause calls a domain predicate, directly or through background predicates), and whether
    growing can only admit more (no negation, if-then-else or aggregation on the way)."""
    background = program.background
    dependent = set(program.dynamic_domain)
    grew = True
    while grew:
        grew = False
        for key, rules in background.items():
            if key not in dependent and any(type(x) is tuple and (x[0], len(x) - 1) in dependent
                                            for r in rules for g in r.body for x in _goals(g)):
                dependent.add(key)
                grew = True
    reading: set[Entity] = set()
    monotone = True
    for rule in background.get(("grounding", 1), []):
        key = _grounding_key(rule.head[1])
        ents = {e for e in entities if e[1] == key}
        if not ents:
            continue
        seen: set[Key] = set()
        todo: list[Rule] = [rule]
        while todo:
            r = todo.pop()
            for g in r.body:
                for x in _goals(g):
                    if type(x) is not tuple:
                        continue
                    k = (x[0], len(x) - 1)
                    if k in dependent:
                        reading |= ents
                    if k in _NEGATING:
                        monotone = False
                    if k in background and k not in seen and k != ("grounding", 1):
                        seen.add(k)
                        todo += background[k]
    return reading, monotone


def in_cycle(h: Hierarchy, keys: list[Key]) -> bool:
    """Whether the simple fluents of one component (``keys``) form a cycle through ``holdsAt``:
    there a non-admitted instance is read by its rules (``hidden``), as RTEC's ``holdsAtCyclic`` does."""
    return len(keys) > 1 or any(("fluent", k, None) in h.edges[("fluent", k, None)] for k in keys)


def instance_term(ent: Entity, item: tuple) -> Any:
    """The ``grounding/1`` argument of a remembered instance: (args, value) of a fluent, args of an event."""
    if ent[0] == "event":
        return _fterm(ent[1], item)
    return ("=", _fterm(ent[1], item[0]), item[1])


def readmitted(ev: Any) -> set[Entity]:
    """After the domain grew: the entities of an evaluator (``RtecEvaluator``) whose admitted
    instances may have changed — one they left out is admitted now, what they left out not known
    (not derived from the start yet), or (a grounding that negates) one they keep is not any more."""
    out = set()
    for ent in ev.admit_reading:
        known = ev.rejected.get(ent)
        if known is None or any(ev.grounded(instance_term(ent, x)) for x in known):
            out.add(ent)
        elif not ev.admit_monotone:
            if ent[0] == "event":
                kept: set = {a for by_t in ev.store.events.get(ent[1], {}).values() for a in by_t}
            else:
                kept = {(a, v) for a, vals in ev.store.fluents.get(ent[1], {}).items() for v, ivs in vals.items() if ivs}
            if any(not ev.grounded(instance_term(ent, x)) for x in kept):
                out.add(ent)
    return out


def hidden_list(hidden: dict, ident: tuple) -> list:
    """The list kept aside of a cycle's instance grounding/1 does not admit (``RtecEvaluator.hidden``)."""
    return hidden.get(ident[0], {}).get(ident[1], {}).get(ident[2], [])


def set_hidden(hidden: dict, ident: tuple, ivs: list) -> None:
    """Keep (or drop, if empty) the list of a cycle's instance grounding/1 does not admit."""
    key, args, v = ident
    if ivs:
        hidden.setdefault(key, {}).setdefault(args, {})[v] = ivs
        return
    vals = hidden.get(key, {}).get(args)
    if vals is not None and vals.pop(v, None) is not None and not vals:
        del hidden[key][args]
        if not hidden[key]:
            del hidden[key]


def forget_hidden(hidden: dict, cut: float) -> None:
    """Drop what a retention forgets (``RtecEvaluator._forget``) of a cycle's instances left out."""
    for by_args in hidden.values():
        for args, vals in list(by_args.items()):
            for v in list(vals):
                vals[v] = _after(vals[v], cut)
                if not vals[v]:
                    del vals[v]
            if not vals:
                del by_args[args]


def split_old_store(ev: Any) -> None:
    """Give a state written before admission was followed (no ``rejected``: its store kept every
    instance its entities derived) what a derivation keeps now: the instances ``grounding/1``
    does not admit taken out of the store and remembered as left out, a cycle's kept aside for
    its ``holdsAt`` (as ``SimpleFluents._sweep`` does), a value no clause names dropped."""
    ev.rejected = {}
    cyclic = {e[1] for comp in ev.h.order if any(ev.h.kind.get(x) == "simple" for x in comp)
              and in_cycle(ev.h, [x[1] for x in comp]) for e in comp}  # (as the sweep of a component sees it)
    for ent in ev.admits:
        known: set = set()
        ev.rejected[ent] = known
        key = ent[1]
        if ent[0] == "event":
            for t, items in list(ev.store.events.get(key, {}).items()):
                for args in [a for a in items if not ev.grounded(_fterm(key, a))]:
                    known.add(args)
                    ev.store.remove_event(key, t, args)
            continue
        for args, vals in list(ev.store.fluents.get(key, {}).items()):
            for v, ivs in list(vals.items()):
                named = (key, v) in ev.outputs
                if named and ev.grounded(("=", _fterm(key, args), v)):
                    continue
                if named:
                    known.add((args, v))
                    if key in cyclic:
                        set_hidden(ev.hidden, (key, args, v), ivs)
                ev.store.set_list(key, args, v, [])
