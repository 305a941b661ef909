"""Which input events can matter to one answer of an event description (``explain``'s slice).

An explanation of ``meeting(id1,id2)`` at T reads the rules of ``meeting`` with ``P1=id1,
P2=id2``, so ``greeting1(id1,id2)``, ``disappear(id1)``, ``running(id2)``, ...: only the
events of id1 and id2.  ``demands`` finds that top-down from the query's constants, over
every rule that can reach the query (initiations and terminations of every value, the
``holdsFor`` rules, derived events, deadlines, ``initially``, ``grounding/1``):

* a rule applies to a demand when its head can match the demand's pattern (a constant of
  the head that differs from the pattern's rules it out); the head's variables take the
  pattern's constants;
* each entity a body reads (``happensAt``, ``start``/``end``, ``holdsAt``, ``holdsFor``, a
  dynamic-domain call) becomes a demand with the body's constants and the head-bound
  variables' values; a variable bound only by another body goal, or inside a compound term,
  means "any value" (``ANY``);
* a background predicate the body calls is read with every variable "any value" (its
  clauses' own constants kept); a goal that is a variable, or reads a fluent or event named
  by a variable, gives up: every event may matter (None).

An input event is kept if its functor is demanded with a pattern its arguments match (an
input fluent's value is its last argument, matched by a shorter pattern), or if it puts a
demanded fact into a dynamic domain (``id(id1)``: the evaluator grounds an entity only for
values the input showed, and an explanation names the event that showed it first).  The
evaluation of a demanded entity reads nothing else, so its intervals, and every explanation
of it, are the same on the kept events as on the whole input (tests/dialects/rtec/
test_explain_rtec.py compares them on random event descriptions).
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Callable
from typing import Any

from chronolog.core.events import Event
from chronolog.dialects.rtec.analysis import domain_feeds
from chronolog.dialects.rtec.parser import RtecProgram
from chronolog.dialects.rtec.terms import Slot

ANY = None  # a pattern position any value matches
Pattern = tuple  # constants (int, str) and ANY
_READS = {("happensAt", 2), ("holdsAt", 2), ("holdsFor", 2)}
# control and meta predicates -> the argument positions that are goals
_GOALS = {("call", 1): (1,), ("findall", 3): (2,), ("forall", 2): (1, 2), ("aggregate_all", 3): (2,),
          ("\\+", 1): (1,), ("not", 1): (1,), (",", 2): (1, 2), (";", 2): (1, 2), ("->", 2): (1, 2),
          ("once", 1): (1,), ("ignore", 1): (1,)}


class GiveUp(Exception):
    """The program reads entities no constant analysis bounds: every event may matter."""


def _const(term: Any) -> Any:
    """A ground atomic term as a pattern value; ANY for anything else."""
    return term if type(term) in (int, str) else ANY


def _same(a: Any, b: Any) -> bool:
    return a == b or str(a) == str(b)


def _entity(term: Any) -> tuple[str, tuple] | None:
    """(functor, arguments) of an event term, ``F=V`` (its F) or ``start``/``end(F=V)``."""
    if type(term) is tuple and term[0] in ("start", "end") and len(term) == 2:
        term = term[1]
    if type(term) is tuple and term[0] == "=" and len(term) == 3:
        term = term[1]
    if type(term) is tuple:
        return term[0], term[1:]
    if type(term) is str:
        return term, ()
    return None  # a variable (or a number): any entity


class Demands:
    """The fixpoint of demands from one query (``demands``)."""

    def __init__(self, program: RtecProgram) -> None:
        self.program = program
        self.patterns: dict[str, set[Pattern]] = defaultdict(set)  # functor -> patterns read
        self.todo: list[tuple[str, Pattern]] = []
        self.background_read: set[tuple[str, int]] = set()
        self.heads: dict[str, list[tuple[Any, list, Any]]] = defaultdict(list)  # functor -> (head entity, body, rule)
        for _, rule in program.rules:
            self._head(rule.head[1], rule.body)
        for rule in program.initially:
            self._head(rule.head[1], rule.body)
        for rule in program.background.get(("grounding", 1), []):
            self._head(rule.head[1], rule.body)
        for rule in program.deadlines:  # fi(F=V, F2=V2, D): each side reads the other
            for a, b in ((rule.head[1], rule.head[2]), (rule.head[2], rule.head[1])):
                self._head(a, [("holdsAt", b, Slot(-1))])

    def _head(self, term: Any, body: list) -> None:
        got = _entity(term)
        if got is None:
            raise GiveUp("a rule head whose entity is a variable")
        self.heads[got[0]].append((got[1], body, term))

    def demand(self, name: str, pattern: Pattern) -> None:
        known = self.patterns[name]
        if pattern in known or any(_covers(p, pattern) for p in known):
            return
        known.add(pattern)
        self.todo.append((name, pattern))

    def run(self) -> None:
        while self.todo:
            name, pattern = self.todo.pop()
            for args, body, _ in self.heads.get(name, ()):
                bound = _match(args, pattern)
                if bound is not None:
                    for g in body:
                        self._goal(g, bound)

    def _goal(self, g: Any, bound: dict[int, Any]) -> None:
        if type(g) is Slot:
            raise GiveUp("a goal that is a variable")
        if type(g) is not tuple:
            return
        name, n = g[0], len(g) - 1
        if (name, n) in _READS:
            got = _entity(g[1])
            if got is None:
                raise GiveUp(f"{name}/{n} of an entity named by a variable")
            self.demand(got[0], tuple(_value(a, bound) for a in got[1]))
            return
        if (name, n) in self.program.dynamic_domain:
            self.demand(name, tuple(_value(a, bound) for a in g[1:]))
            return
        if any(type(g[i]) is Slot for i in _GOALS.get((name, n), ())) or name == "call":
            raise GiveUp(f"{name}/{n} of a variable goal")
        if (name, n) in self.program.background and (name, n) != ("grounding", 1):
            if (name, n) not in self.background_read:
                self.background_read.add((name, n))
                for rule in self.program.background[(name, n)]:
                    for sub in rule.body:
                        self._goal(sub, {})  # its variables: any value
        for a in g[1:]:  # (findall's goal, a negation, a disjunction, a compound argument)
            self._goal(a, bound) if type(a) is tuple else None


def _value(term: Any, bound: dict[int, Any]) -> Any:
    if type(term) is Slot:
        return bound.get(term.i, ANY)
    return _const(term)


def _covers(general: Pattern, special: Pattern) -> bool:
    return len(general) == len(special) and all(g is ANY or _same(g, s) for g, s in zip(general, special, strict=True))


def _match(args: tuple, pattern: Pattern) -> dict[int, Any] | None:
    """The head variables' values for a demand (None if the head cannot match it).  A pattern
    longer than the head carries the value of an answer (``status(3,voting)``): every value's
    rules apply, so it is ignored; a shorter one leaves the rest any value."""
    bound: dict[int, Any] = {}
    for i, a in enumerate(args):
        p = pattern[i] if i < len(pattern) else ANY
        if p is ANY:
            continue
        if type(a) is Slot:
            if a.i in bound and not _same(bound[a.i], p):
                return None
            bound[a.i] = p
        elif type(a) in (int, str) and not _same(a, p):
            return None
    return bound


def demands(program: RtecProgram, name: str, args: tuple) -> dict[str, set[Pattern]] | None:
    """Functor -> the argument patterns an explanation of ``name(args)`` can read; None if
    no bound can be found."""
    found = Demands(program)
    query = tuple(ANY if isinstance(a, str) and "(" in a else a for a in args)  # (a compound's text: any)
    try:
        found.demand(name, query)
        found.run()
    except GiveUp:
        return None
    return dict(found.patterns)


def matches(found: dict[str, set[Pattern]], name: str, args: tuple) -> bool:
    """Whether ``name(args)`` (an input event, or an entity in the evaluator's store) is one a
    demand of ``found`` reads; a constant past the end of ``args`` does not rule it out."""
    return any(all(p is ANY or i >= len(args) or _same(args[i], p) for i, p in enumerate(pattern))
               for pattern in found.get(name, ()))


def relevant(program: RtecProgram) -> Callable[[tuple[str, tuple]], Callable[[Event], bool] | None]:
    """``Dialect.relevant``: for an answer atom, which input events can matter to it (None: all)."""
    feeds = domain_feeds(program)

    def for_atom(atom: tuple[str, tuple]) -> Callable[[Event], bool] | None:
        found = demands(program, atom[0], tuple(atom[1]))
        if found is None:
            return None

        def keep(ev: Event) -> bool:
            pred = ev.pred
            if pred is None:
                return True
            if pred in found and matches(found, pred, ev.args):
                return True
            for (dom, _), pos in feeds.get(pred, ()):
                if dom in found and max(pos, default=-1) < len(ev.args) and \
                        matches(found, dom, tuple(ev.args[p] for p in pos)):
                    return True
            return False

        return keep

    return for_atom
