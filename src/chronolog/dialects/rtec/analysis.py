"""What the RTEC evaluator works out once from the program, before any input.

Which input functors feed which ``dynamicDomain`` predicates, which point
fluents nobody reads as interval lists, the output entities (those with a
``grounding/1``), the values each simple fluent can take, the entities worth
computing, the simple fluents whose rules range over a whole dynamic domain,
and the order each rule body runs in (``_plan``).  Kept apart from the
evaluator because these are functions of the program and its ``Hierarchy``
alone: nothing here reads the store or the stream.
"""

from __future__ import annotations

from collections import defaultdict
from typing import Any

from chronolog.dialects.rtec.changes import calls
from chronolog.dialects.rtec.hierarchy import Hierarchy, Key, _key, _uses
from chronolog.dialects.rtec.parser import RtecProgram
from chronolog.dialects.rtec.terms import Rule, Slot, has_slot

_META = {"call", "findall", "bagof", "setof", "aggregate_all", "forall", "\\+", "not", ",", ";", "->", "once",
         "ignore"}


def _names_read(t: Any, named: set[str]) -> bool:
    """Add to ``named`` the functors of the fluents ``t`` (a goal, or any term in it) may read
    through ``holdsFor``, or of an ``initially``/deadline's fluent; False if any fluent may be
    read (a variable fluent or goal, ``call/N``)."""
    if type(t) is not tuple:
        return type(t) is not Slot
    name = t[0]
    if name in ("holdsFor", "initially", "fi") and len(t) >= 2:
        fv = t[1]
        f = fv[1] if type(fv) is tuple and fv[0] == "=" and len(fv) == 3 else None
        f = f[0] if type(f) is tuple else f
        if type(f) is not str:
            return False
        named.add(f)
    if name == "call":
        return False
    for a in t[1:]:
        if type(a) is Slot:
            if name in _META:
                return False
        elif not _names_read(a, named):
            return False
    return True


def _as_slice(positions: tuple[int, ...]) -> slice | None:
    """The slice of a tuple's items at ``positions`` if they are consecutive and in order."""
    first = positions[0] if positions else 0
    consecutive = positions == tuple(range(first, first + len(positions)))
    return slice(first, first + len(positions)) if consecutive else None


def domain_feeds(program: RtecProgram) -> dict[str, list[tuple[Key, list[int]]]]:
    """Input functor -> [(domain predicate, argument positions)]: dynamicDomain facts come
    from the arguments of input entities, as their grounding/1 clauses say."""
    feeds: dict[str, list[tuple[Key, list[int]]]] = defaultdict(list)
    for rule in program.background.get(("grounding", 1), []):
        head = rule.head[1]
        if isinstance(head, tuple) and head[0] == "=" and len(head) == 3:
            head = head[1]
        if not isinstance(head, tuple):
            continue
        pos = {a.i: i for i, a in enumerate(head[1:]) if isinstance(a, Slot)}
        for g in rule.body:
            if isinstance(g, tuple) and (g[0], len(g) - 1) in program.dynamic_domain:
                if all(isinstance(a, Slot) and a.i in pos for a in g[1:]):
                    feeds[head[0]].append(((g[0], len(g) - 1), [pos[a.i] for a in g[1:]]))
    return feeds


def unread_points(program: RtecProgram, h: Hierarchy, point_decl: dict[str, int]) -> set[str]:
    """The point fluents whose interval lists nothing reads: no ``holdsFor`` names them,
    no rule, ``initially`` or deadline defines them (``holdsAt`` and ``start``/``end`` of a
    point fluent read its points).  Their points are stored, their lists not built (caviar's
    ``coord``: a new instance almost every row).  None at all if a goal could name any
    fluent: a variable goal or ``call/N``."""
    named: set[str] = set()
    clauses = [r for _, r in program.rules] + program.initially + program.deadlines
    clauses += [r for rules in program.background.values() for r in rules]
    for rule in clauses:
        if not all(_names_read(g, named) for g in (rule.head, *rule.body)):
            return set()
    defined = {ent[1][0] for ent in h.kind if ent[0] == "fluent"}
    return {name for name in point_decl if name not in named and name not in defined}


def output_entities(grounding_rules: list[Rule], h: Hierarchy) -> set[tuple[Key, Any]]:
    """The (fluent, value) pairs a ``grounding(F=V)`` head names: what is published.  A head
    whose V is a variable (``grounding(alarm(D)=_)``) names every value the rules define for F
    (RTEC's ``clause(grounding(F=V), Body)`` unifies with it for each of them)."""
    out = set()
    for rule in grounding_rules:
        head = rule.head[1]
        if isinstance(head, tuple) and head[0] == "=" and len(head) == 3:
            k = _key(head[1])
            if k is None:
                continue
            if isinstance(head[2], Slot):
                out |= {(k, e[2]) for e in h.kind if e[0] == "fluent" and e[1] == k and e[2] is not None}
                out |= {(k, r.head[1][2]) for _, r in h.rules.get(("fluent", k, None), [])
                        if r.head[0] != "holdsFor" and not has_slot(r.head[1][2])}
            elif h.nodes(("fluent", k, head[2])):
                out.add((k, head[2]))
    return out


def known_values(program: RtecProgram, h: Hierarchy, grounding_rules: list[Rule]) -> dict[Key, set]:
    """The values of each simple fluent the event description names (ground in a rule head,
    ``initially``, ``fi`` or ``grounding``).  As in RTEC, only these are fluent-value pairs:
    initiating another value (one that only the data names, e.g. ctm's
    internal_temperature=warm) neither holds nor terminates the named ones."""
    out: dict[Key, set] = defaultdict(set)

    def note(fv: Any) -> None:
        if isinstance(fv, tuple) and fv[0] == "=" and len(fv) == 3 and not has_slot(fv[2]):
            k = _key(fv[1])
            if k is not None and ("fluent", k, None) in h.kind:
                out[k].add(fv[2])

    for kind, rule in program.rules:
        if kind in ("initiatedAt", "terminatedAt"):
            note(rule.head[1])
    for rule in program.initially + grounding_rules:
        note(rule.head[1])
    for rule in program.deadlines:
        note(rule.head[1])
        note(rule.head[2])
    return out


def needed_entities(h: Hierarchy, outputs: set[tuple[Key, Any]]) -> set[tuple]:
    """The entities worth computing: outputs and what they depend on (RTEC computes no
    statically determined fluent without a grounding; no entity reads one either, since such
    reads are ``no_grounding/1``'s, ``unground.py``)."""
    return h.closure([e for e in h.kind if e[0] == "event" or h.kind[e] == "simple"
                      or (e[1], e[2]) in outputs or any(k == e[1] for k, _ in outputs)])


def domain_wide(program: RtecProgram, h: Hierarchy, grounding_rules: list[Rule],
            outputs: set[tuple[Key, Any]]) -> set[tuple]:
    """Simple fluents whose rules stand for every instance of a dynamic domain (see
    ``_window``): a head argument no body goal binds, which grounding/1 ranges over a
    dynamic domain; or a non-ground ``initially``."""
    dependent = set(program.dynamic_domain)  # predicates whose answers grow with the domain
    grew = True
    while grew:
        grew = False
        for key, rules in program.background.items():
            if key not in dependent and any(isinstance(g, tuple) and _key(g) in dependent
                                            for r in rules for g in r.body):
                dependent.add(key)
                grew = True
    ranged: dict[Key, set[int]] = defaultdict(set)  # fluent -> argument positions grounding ranges over a domain
    for rule in grounding_rules:
        head = rule.head[1]
        if not (isinstance(head, tuple) and head[0] == "=" and isinstance(head[1], tuple)):
            continue
        k = _key(head[1])
        for g in rule.body:
            if isinstance(g, tuple) and _key(g) in dependent:
                vs = set(_slots(g, []))
                ranged[k].update(i for i, a in enumerate(head[1][1:]) if isinstance(a, Slot) and a.i in vs)
    used: dict[Key, set] = defaultdict(set)  # values of a fluent some body reads (None: any)
    for _, rule in program.rules:
        deps: list = []
        for g in rule.body:
            _uses(g, deps)
        for d in deps:
            if d[0] == "fluent":
                used[d[1]].add(d[2])
    out = set()
    for ent, rules in h.rules.items():
        if h.kind[ent] != "simple":
            continue
        for kind, rule in rules:
            fv = rule.head[1]
            if _enumerates_domain(rule, dependent):
                out.add(ent)  # the body enumerates a domain: new instances in the past
            if kind != "initiatedAt" or not isinstance(fv[1], tuple):
                continue  # a termination for an instance no earlier initiation made holds changes nothing
            value = None if has_slot(fv[2]) else fv[2]
            if value is not None and (ent[1], value) not in outputs and not (
                    used[ent[1]] & {None, value}):
                continue  # a value nobody reads or reports only terminates the others (as above)
            body_vars = {i for g in rule.body if not (isinstance(g, tuple) and g[0] in TESTS)
                         for i in _slots(g, [])}
            free = [i for i, a in enumerate(fv[1][1:]) if set(_slots(a, [])) - body_vars]
            if set(free) & ranged.get(ent[1], set()):
                out.add(ent)
    for rule in program.initially:
        fv = rule.head[1]
        if isinstance(fv, tuple) and has_slot(fv[1]):
            k = _key(fv[1])
            if k is not None:
                out.add(("fluent", k, None))
    return out



TESTS = {"@<", "@>", "@=<", "@>=", "==", "\\==", "\\=", "<", ">", "=<", ">=", "=:=", "=\\=", "\\+", "not"}


def _slots(t: Any, out: list) -> list:
    if isinstance(t, Slot):
        out.append(t.i)
    elif isinstance(t, tuple):
        for a in t[1:]:
            _slots(a, out)
    return out


def _plan(rule: Rule) -> tuple[list, list]:
    """The body in an order where each test (comparison, \\+) runs once its variables are bound,
    as when RTEC runs it with a ground head; tests on head variables no generator binds run
    after the head is grounded (``post``)."""
    got = getattr(rule, "_plan", None)
    if got is not None:
        return got
    count: dict[int, int] = defaultdict(int)
    for i in _slots(rule.head, []) + [i for g in rule.body for i in _slots(g, [])]:
        count[i] += 1
    bound: set[int] = set()
    main: list = []
    pending: list = []

    def needs(g: Any) -> set[int]:
        vs = _slots(g, [])
        if isinstance(g, tuple) and g[0] in ("\\+", "not"):
            return {i for i in vs if count[i] > vs.count(i)}  # variables local to a negation are its own
        return set(vs)

    for g in rule.body:
        if g == "!" or not (isinstance(g, tuple) and g[0] in TESTS):
            main.append(g)
            bound.update(_slots(g, []))
            ready = [p for p in pending if needs(p) <= bound]
            pending = [p for p in pending if p not in ready]
            main.extend(ready)
        elif needs(g) <= bound:
            main.append(g)
        else:
            pending.append(g)
    rule._plan = (main, pending)  # type: ignore[attr-defined]
    return main, pending


def _enumerates_domain(rule: Rule, dependent: set) -> bool:
    """Does the body (in the order it runs) call a domain-dependent predicate with an argument
    no earlier goal binds?  A call whose arguments are bound only checks instances the input has
    already shown."""
    main, post = _plan(rule)
    bound: set[int] = set()
    for g in main + post:
        if isinstance(g, tuple) and (g[0], len(g) - 1) in dependent and g[0] not in TESTS:
            if set(_slots(g, [])) - bound:
                return True
        bound.update(_slots(g, []))
    return False


def holds_before_its_input(program: RtecProgram) -> bool:
    """Whether an answer at a time may depend on input after it (``Dialect.causal`` is the
    opposite).  An instance that input first shows at t holds before t where something holds
    without input: ``complement_all`` (within [0, inf); kept as a cause although, now that a
    read of an ungrounded fluent is empty as in RTEC (``unground.py``), its instances come from
    grounding/1 alone), a non-ground ``initially`` (from 0, for each instance), a dynamic domain
    (a value first seen at t may stand in rules and groundings that hold earlier,
    ``domain_wide``; taken as a whole: a domain read where no input binds it is hard to rule
    out).  So ``loud = alarm union quiet``, ``quiet = complement_all([open])``, grounded over a
    dynamic domain of doors, has ``loud(d1)`` from 0 when ``opened(d1)`` is at 5, although the
    input up to 4 knows no d1."""
    if program.dynamic_domain:
        return True
    if any(isinstance(rule.head[1], tuple) and has_slot(rule.head[1][1]) for rule in program.initially):
        return True
    return any(calls(goal, "complement_all") for _, rule in program.rules for goal in rule.body)

