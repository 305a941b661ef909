"""What an RTEC event description defines and in which order to compute it.

``Hierarchy`` is RTEC's dependency analysis: each rule head is an entity (an
event, a simple fluent, a statically determined fluent-value pair), the body
goals that read other entities are its edges, and the strongly connected
components of that graph, dependencies first, are the order in which the
evaluator derives a window (``evaluator.py``).  The small term helpers with
it (``_fv``, ``_key``, ...) take ``F=V`` and event terms apart; every module
of the evaluator reads terms through them.  Kept apart from the evaluator
because it is a property of the program alone: ``chronolog describe`` (the
registry) and the program analyses (``analysis.py``) use it without a
stream.
"""

from __future__ import annotations

from collections import defaultdict
from typing import Any

from chronolog.core.errors import ProgramError
from chronolog.core.graph import strongly_connected
from chronolog.dialects.rtec.parser import RtecProgram
from chronolog.dialects.rtec.terms import Rule, Slot, Var, deref, has_slot

Key = tuple[str, int]  # a fluent's or event's functor and arity


def _fv(term: Any) -> tuple[Key, tuple, Any] | None:
    """(key, args, value) of a resolved ``F=V`` term (None if it is not one)."""
    term = deref(term)
    if type(term) is not tuple or term[0] != "=" or len(term) != 3:
        return None
    f = deref(term[1])
    if type(f) is tuple:
        return (f[0], len(f) - 1), f[1:], term[2]
    if type(f) is str:
        return (f, 0), (), term[2]
    return None


def _grounding_key(term: Any) -> Key | None:
    """The functor of F in a grounding/1 argument F=V (of the event E in E); None if unbound."""
    term = deref(term)
    if type(term) is tuple and term[0] == "=" and len(term) == 3:
        term = deref(term[1])
    if type(term) is Slot or type(term) is Var:
        return None
    return _key(term)


def _key(term: Any) -> Key | None:
    term = deref(term)
    if type(term) is tuple:
        return term[0], len(term) - 1
    if type(term) is str:
        return term, 0
    return None


def _fterm(key: Key, args: tuple) -> Any:
    return (key[0], *args) if key[1] else key[0]


def _fv_node(fv: Any) -> tuple | None:
    """("fluent", key, value or None) of an F=V pattern in a rule."""
    if isinstance(fv, tuple) and fv[0] == "=" and len(fv) == 3 and isinstance(fv[1], tuple | str):
        v = fv[2]
        return ("fluent", _key(fv[1]), None if isinstance(v, Slot) or (isinstance(v, tuple) and has_slot(v)) else v)
    return None


def _uses(goal: Any, out: list[tuple]) -> None:
    """The entities a rule's body goal depends on: ("event", key) or ("fluent", key, value|None)."""
    if isinstance(goal, Slot) or not isinstance(goal, tuple):
        return
    name, n = goal[0], len(goal) - 1
    if (name, n) in ((",", 2), (";", 2), ("->", 2)):
        _uses(goal[1], out)
        _uses(goal[2], out)
    elif (name, n) in (("\\+", 1), ("not", 1)):
        _uses(goal[1], out)
    elif (name, n) == ("findall", 3):
        _uses(goal[2], out)
    elif (name, n) == ("happensAt", 2):
        e = goal[1]
        if isinstance(e, tuple) and e[0] in ("start", "end") and len(e) == 2:
            node = _fv_node(e[1])
            if node is not None:
                out.append(node)
        elif isinstance(e, tuple | str):
            out.append(("event", _key(e)))
    elif (name, n) in (("holdsAt", 2), ("holdsFor", 2)):
        node = _fv_node(goal[1])
        if node is not None:
            out.append(node)


def _head_entity(kind: str, rule: Rule) -> tuple:
    head = rule.head
    if kind == "happensAt":
        k = _key(head[1])
        if k is None:
            raise ProgramError("happensAt/2 head: the event must be an atom or a compound term", rule.loc)
        return ("event", k)
    node = _fv_node(head[1])
    assert node is not None
    return node if kind == "holdsFor" else ("fluent", node[1], None)


def _sccs(nodes: list, edges: dict) -> list[list]:
    """Strongly connected components, dependencies first (the planner's Tarjan, over names)."""
    name = {repr(n): n for n in nodes}
    got = strongly_connected(sorted(name), {repr(n): {repr(d) for d in edges.get(n, ())} for n in nodes})
    return [[name[x] for x in comp] for comp in got]


class Hierarchy:
    """What each derived entity is and the order to compute them in.

    An entity is an event ("event", key), a simple fluent ("fluent", key, None)
    (all its values together: initiating one value terminates the others) or
    a statically determined fluent-value pair ("fluent", key, value)."""

    def __init__(self, program: RtecProgram) -> None:
        self.kind: dict[tuple, str] = {}  # entity -> "simple" | "sdf" | "event"
        self.rules: dict[tuple, list[tuple[str, Rule]]] = defaultdict(list)
        self.sdf_values: dict[Key, set] = defaultdict(set)  # values of a fluent defined by holdsFor
        for kind, rule in program.rules:
            ent = _head_entity(kind, rule)
            what = {"initiatedAt": "simple", "terminatedAt": "simple", "holdsFor": "sdf", "happensAt": "event"}[kind]
            if self.kind.setdefault(ent, what) != what:
                raise ProgramError(f"{ent[1][0]}/{ent[1][1]} is defined both as a simple and as a statically "
                                   f"determined fluent", rule.loc)
            if what == "sdf":
                if ent[2] is None:
                    raise ProgramError("a holdsFor/2 head needs a ground value (F=V)", rule.loc)
                self.sdf_values[ent[1]].add(ent[2])
            self.rules[ent].append((kind, rule))
        edges: dict = {}
        for ent, rules in self.rules.items():
            deps: list = []
            for _, rule in rules:
                for g in rule.body:
                    _uses(g, deps)
            edges[ent] = sorted({n for d in deps for n in self.nodes(d)}, key=repr)
        self.order = _sccs(list(self.rules), edges)
        self.level: dict = {}
        for comp in self.order:
            lvl = 1 + max((self.level[d] for e in comp for d in edges[e] if d not in comp), default=0)
            for e in comp:
                self.level[e] = lvl
            cyclic = len(comp) > 1 or comp[0] in edges[comp[0]]
            if cyclic and any(self.kind[e] != "simple" for e in comp):
                bad = next(e for e in comp if self.kind[e] != "simple")
                loc = self.rules[bad][0][1].loc
                raise ProgramError(f"{bad[1][0]}/{bad[1][1]} is in a cycle of definitions; only simple fluents "
                                   f"may depend on each other cyclically", loc)
        self.edges = edges

    def closure(self, roots: list[tuple]) -> set[tuple]:
        """``roots`` and every entity they depend on, directly or not (along ``edges``)."""
        todo = list(roots)
        seen = set(todo)
        while todo:
            for d in self.edges.get(todo.pop(), ()):
                if d not in seen:
                    seen.add(d)
                    todo.append(d)
        return seen

    def nodes(self, dep: tuple) -> list[tuple]:
        """The defined entities a body reference stands for (none for input entities)."""
        if dep[0] == "event":
            return [dep] if dep in self.kind else []
        if dep[2] is not None and dep in self.kind:
            return [dep]  # a statically determined value (also beside a simple fluent's values)
        simple = ("fluent", dep[1], None)
        if dep[2] is not None:
            return [simple] if simple in self.kind else []
        return [e for e in self.kind if e[0] == "fluent" and e[1] == dep[1]]
