"""A partition key of an event description, for ``chronolog check``/``topology``.

An event description can be split by key when one argument of every event and fluent names
the same thing in each rule: every entity a rule mentions (its head, the events, fluents and
``start``/``end`` of its body, a deadline's two fluents) has the rule's one key variable at
its key position.  Then the input of one key value derives only answers for that value.  Two
more conditions keep the answers apart: nothing counts across instances (``findall/3``), and
every output entity's ``grounding/1`` takes its key argument from a dynamic domain (the
values the input shows): a grounding from program facts would make every partition answer
for every instance (``initially`` or ``complement_all`` hold without input).
"""

from __future__ import annotations

from typing import Any

from chronolog.dialects.rtec.parser import RtecProgram
from chronolog.dialects.rtec.terms import Slot

Name = tuple[str, int]  # an entity: functor and arity (of an event, or of the fluent F in F=V)
Atom = tuple[Name, tuple]


def _entity(term: Any) -> Atom | None:
    """The entity of an event term or of a fluent-value pair F=V."""
    if isinstance(term, tuple) and term[0] == "=" and len(term) == 3:
        term = term[1]
    if isinstance(term, tuple) and not isinstance(term, Slot):
        return (term[0], len(term) - 1), term[1:]
    if isinstance(term, str):
        return (term, 0), ()
    return None


def _atoms(goal: Any, out: list[Atom]) -> str | None:
    """Collect the entities of a body goal; the reason there can be no key, if one shows."""
    if not isinstance(goal, tuple) or isinstance(goal, Slot):
        return None
    name, n = goal[0], len(goal) - 1
    if (name, n) in ((",", 2), (";", 2), ("->", 2)):
        return _atoms(goal[1], out) or _atoms(goal[2], out)
    if (name, n) in (("\\+", 1), ("not", 1)):
        return _atoms(goal[1], out)
    if (name, n) == ("findall", 3):
        return "findall/3 counts instances of all keys"
    if (name, n) == ("happensAt", 2):
        e = goal[1]
        if isinstance(e, tuple) and e[0] in ("start", "end") and len(e) == 2:
            e = e[1]
        got = _entity(e)
    elif (name, n) in (("holdsAt", 2), ("holdsFor", 2)):
        got = _entity(goal[1])
    else:
        return None
    if got is not None:
        out.append(got)
    return None


def rule_atoms(program: RtecProgram) -> tuple[list[list[Atom]], str | None]:
    """The entities of each rule (head first) and of each deadline; a reason if no key can exist."""
    groups = []
    for _, rule in program.rules:
        atoms: list[Atom] = []
        head = _entity(rule.head[1])
        if head is not None:
            atoms.append(head)
        for g in rule.body:
            why = _atoms(g, atoms)
            if why:
                return [], f"{why} ({rule.loc.file}:{rule.loc.line})" if rule.loc else why
        groups.append(atoms)
    for rule in program.deadlines:
        groups.append([a for a in (_entity(rule.head[1]), _entity(rule.head[2])) if a is not None])
    return groups, None


def partition_key(program: RtecProgram) -> tuple[dict[Name, int] | None, str]:
    """An argument position per entity on which every rule agrees, or None and why not."""
    groups, why = rule_atoms(program)
    if why:
        return None, why
    names = sorted({name for g in groups for name, _ in g})
    flat = [name for name in names if name[1] == 0]
    if flat:
        return None, f"{flat[0][0]} has no arguments to split on"
    key = _solve(groups, names)
    if key is None:
        return None, "no argument position names the same thing in every rule (a rule relates two keys)"
    bad = _statically_grounded(program, key)
    if bad:
        return None, f"grounding/1 of {bad} does not take its key from the input (every partition would answer it)"
    return key, ""


def _solve(groups: list[list[Atom]], names: list[Name]) -> dict[Name, int] | None:
    """A position per entity such that each rule's atoms share one variable there (a search with
    propagation: fixing one entity's position fixes its rule partners' wherever the variable occurs once)."""

    def consistent(key: dict[Name, int]) -> dict[Name, int] | None:
        key = dict(key)
        changed = True
        while changed:
            changed = False
            for atoms in groups:
                var = None
                for name, args in atoms:
                    if name in key:
                        term = args[key[name]]
                        if not isinstance(term, Slot) or (var is not None and term.i != var):
                            return None
                        var = term.i
                if var is None:
                    continue
                for name, args in atoms:
                    if name in key:
                        continue
                    at = [i for i, a in enumerate(args) if isinstance(a, Slot) and a.i == var]
                    if not at:
                        return None
                    if len(at) == 1:
                        key[name] = at[0]
                        changed = True
        return key

    def search(key: dict[Name, int], budget: list[int]) -> dict[Name, int] | None:
        got = consistent(key)
        if got is None:
            return None
        open_ = [n for n in names if n not in got]
        if not open_:
            return got
        budget[0] -= 1
        if budget[0] < 0:
            return None
        first = open_[0]
        for i in range(first[1]):
            found = search({**got, first: i}, budget)
            if found is not None:
                return found
        return None

    return search({}, [4096])


def _statically_grounded(program: RtecProgram, key: dict[Name, int]) -> str | None:
    """The first output entity whose grounding/1 clause does not bind its key from a dynamic domain."""
    for rule in program.background.get(("grounding", 1), []):
        got = _entity(rule.head[1])
        if got is None or got[0] not in key:
            continue
        name, args = got
        term = args[key[name]]
        if not isinstance(term, Slot):
            return f"{name[0]}/{name[1]}"
        domain = [g for g in rule.body if isinstance(g, tuple) and (g[0], len(g) - 1) in program.dynamic_domain]
        if not any(isinstance(a, Slot) and a.i == term.i for g in domain for a in g[1:]):
            return f"{name[0]}/{name[1]}"
    return None


def describe_key(program: RtecProgram) -> str:
    """The line ``chronolog check`` and ``topology`` print."""
    key, why = partition_key(program)
    if key is None:
        return f"partition key: none ({why})"
    return "partition key: " + ", ".join(f"{n}/{a} argument {i + 1}" for (n, a), i in sorted(key.items()))
