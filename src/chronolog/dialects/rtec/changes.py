"""What a program change does to an RTEC event description's strata (``chronolog upgrade``,
issue 37 item 4): the hierarchy's entities (events, simple fluents, statically determined
fluent-value pairs) identified by content (``core.strata``).

An entity is defined by the text of its rules and reads the entities its bodies use.  A
``grounding(F=V)`` clause naming a defined fluent (or event) is part of that entity's content
only: it decides which of F's instances are computed, written and read (``admitted.py``), which
values a simple fluent has — a reader's identity includes what it reads, so a reader changes
with it — nothing else of another entity (an entity no longer computed in the old program that
the new one needs is computed at the upgrade: ``RtecEvaluator.keep``).  What every entity may
read besides — other background knowledge, a ``grounding/1`` clause with a variable fluent,
for an input entity or feeding a dynamic domain, all of them where a body calls
``grounding/1``, ``initially``, deadlines, the declarations and the clock tick — counts as
part of every rule: a change there changes every stratum (conservative: the plan never
calls a stratum unchanged whose answers could differ).
"""

from __future__ import annotations

from typing import Any

from chronolog.core.strata import Definitions, Stratum, strata
from chronolog.dialects.rtec.hierarchy import Hierarchy, _grounding_key
from chronolog.dialects.rtec.parser import RtecProgram
from chronolog.dialects.rtec.terms import Rule, Slot, has_slot
from chronolog.dialects.rtec.unground import NO_GROUNDING


def rtec_strata(program: RtecProgram) -> list[Stratum]:
    """The program's strata by content, lowest first (``core.strata.strata``)."""
    return strata(definitions(program, Hierarchy(program)))


def entity_name(ent: tuple) -> str:
    """An entity as the plan names it: ``opened/1`` (event), ``open/1`` (simple fluent, all
    its values), ``alarm/1=true`` (a statically determined fluent-value pair)."""
    name, arity = ent[1]
    if ent[0] == "event" or ent[2] is None:
        return f"{name}/{arity}"
    value = ent[2]
    return f"{name}/{arity}={value if isinstance(value, str) else _text(value)}"


def answer_keys(ent: tuple) -> frozenset[str]:
    """The keys (``p/n``) of the answer lines an entity may write: a fluent's arguments, and
    its value after them unless it is ``true`` (an event writes none)."""
    if ent[0] == "event":
        return frozenset()
    name, arity = ent[1]
    if ent[2] is None:  # a simple fluent: any value
        return frozenset({f"{name}/{arity}", f"{name}/{arity + 1}"})
    return frozenset({f"{name}/{arity}" if ent[2] == "true" else f"{name}/{arity + 1}"})


def definitions(program: RtecProgram, h: Hierarchy) -> Definitions:
    own = own_groundings(program, h)
    context = _context(program, {id(r) for rules in own.values() for r in rules})
    names = {ent: entity_name(ent) for ent in h.rules}
    return Definitions({n: n for n in names.values()},
                       {names[ent]: answer_keys(ent) for ent in h.rules},
                       {names[ent]: (*(f"{kind}:{rule_text(r)}" for kind, r in rules),
                                     *(f"grounding:{rule_text(r)}" for r in own.get(ent, ())), context)
                        for ent, rules in h.rules.items()},
                       {names[ent]: frozenset(names[d] for d in h.edges[ent] if d in names) for ent in h.rules})


def own_groundings(program: RtecProgram, h: Hierarchy) -> dict[tuple, list[Rule]]:
    """The ``grounding/1`` clauses that belong to one defined entity's content (see the
    module's docstring): per entity, those whose head names its fluent (all its values, or
    its value) or event, whose body feeds no dynamic domain; none where any body calls
    ``grounding/1`` (then every clause may be read by any rule)."""
    clauses = [r for _, r in program.rules] + program.initially + program.deadlines
    clauses += [r for rules in program.background.values() for r in rules]
    if any(calls(g, "grounding") for r in clauses for g in r.body):
        return {}
    out: dict[tuple, list[Rule]] = {}
    for rule in program.background.get(("grounding", 1), []):
        if any(type(g) is tuple and (g[0], len(g) - 1) in program.dynamic_domain for g in rule.body):
            continue  # its fluent's input instances feed a domain (``analysis.domain_feeds``)
        term = rule.head[1]
        pair = type(term) is tuple and term[0] == "=" and len(term) == 3
        key = _grounding_key(term)
        if key is None:
            continue
        value = term[2] if pair else None
        ground = value is not None and not has_slot(value)
        ents = [e for e in h.rules if (e[0] == "fluent") == pair and e[1] == key
                and (e[0] == "event" or e[2] is None or not ground or e[2] == value)]
        if len(ents) == 1:  # (several: the values of a statically determined fluent share it)
            out.setdefault(ents[0], []).append(rule)
    return out


def calls(goal: Any, name: str) -> bool:
    """Does ``goal`` (a body goal, any term in it) hold a call of ``name``?"""
    if type(goal) is not tuple:
        return False
    return goal[0] == name or any(calls(a, name) for a in goal[1:])


def rule_text(rule: Rule) -> str:
    """A compiled clause's content (its head and body, slots by number; no source location)."""
    return f"{_text(rule.head)}:-{_text(tuple(rule.body))}"


def _context(program: RtecProgram, own: set[int]) -> str:
    """What every rule may read besides the entities (see the module's docstring); ``own``:
    the ids of the ``grounding/1`` clauses that belong to one entity's content instead."""
    parts = [f"tick={program.clock_tick}", f"domain={sorted(program.dynamic_domain)}"]
    for key in sorted(program.background):
        if key == (NO_GROUNDING, 1):  # chronolog's own, the same in every program that has it
            continue
        parts += [f"bk:{rule_text(r)}" for r in program.background[key] if id(r) not in own]
    parts += [f"initially:{rule_text(r)}" for r in program.initially]
    parts += [f"fi:{rule_text(r)}" for r in program.deadlines]
    for kind, decls in (("point", program.points), ("build", program.build_from_points),
                        ("intervals", program.collect_intervals)):
        parts += [f"{kind}:{e.name}/{e.arity}={_text(e.value)}" for e in decls]
    return "\n".join(parts)


def _text(term: Any) -> str:
    if type(term) is Slot:
        return f"_{term.i}"
    if isinstance(term, (tuple, list)):
        return "(" + ",".join(_text(t) for t in term) + ")"
    return repr(term)
