"""What a program change does to an RTEC event description's strata (``chronolog upgrade``,
issue 37 item 4): the hierarchy's entities (events, simple fluents, statically determined
fluent-value pairs) identified by content (``core.strata``).

An entity is defined by the text of its rules and reads the entities its bodies use.  What
every entity may read besides — background knowledge, ``grounding/1``, ``initially``,
deadlines, the declarations and the clock tick — counts as part of every rule: a change
there changes every stratum (conservative: the plan never calls a stratum unchanged whose
answers could differ).
"""

from __future__ import annotations

from typing import Any

from chronolog.core.strata import Definitions, Stratum, strata
from chronolog.dialects.rtec.hierarchy import Hierarchy
from chronolog.dialects.rtec.parser import RtecProgram
from chronolog.dialects.rtec.terms import Rule, Slot


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
    context = _context(program)
    names = {ent: entity_name(ent) for ent in h.rules}
    return Definitions({n: n for n in names.values()},
                       {names[ent]: answer_keys(ent) for ent in h.rules},
                       {names[ent]: (*(f"{kind}:{rule_text(r)}" for kind, r in rules), context)
                        for ent, rules in h.rules.items()},
                       {names[ent]: frozenset(names[d] for d in h.edges[ent] if d in names) for ent in h.rules})


def rule_text(rule: Rule) -> str:
    """A compiled clause's content (its head and body, slots by number; no source location)."""
    return f"{_text(rule.head)}:-{_text(tuple(rule.body))}"


def _context(program: RtecProgram) -> str:
    """What every rule may read besides the entities (see the module's docstring)."""
    parts = [f"tick={program.clock_tick}", f"domain={sorted(program.dynamic_domain)}"]
    for key in sorted(program.background):
        parts += [f"bk:{rule_text(r)}" for r in program.background[key]]
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
