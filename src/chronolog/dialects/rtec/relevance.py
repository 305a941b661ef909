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
from chronolog.core.relevance import ANY, Demands, GiveUp, Pattern, closure, event_filter, same
from chronolog.dialects.rtec.analysis import domain_feeds
from chronolog.dialects.rtec.evaluator import RtecEvaluator
from chronolog.dialects.rtec.parser import RtecProgram
from chronolog.dialects.rtec.terms import Slot

_READS = {("happensAt", 2), ("holdsAt", 2), ("holdsFor", 2)}
# control and meta predicates -> the argument positions that are goals
_GOALS = {("call", 1): (1,), ("findall", 3): (2,), ("forall", 2): (1, 2), ("aggregate_all", 3): (2,),
          ("\\+", 1): (1,), ("not", 1): (1,), (",", 2): (1, 2), (";", 2): (1, 2), ("->", 2): (1, 2),
          ("once", 1): (1,), ("ignore", 1): (1,)}


def _const(term: Any) -> Any:
    """A ground atomic term as a pattern value; ANY for anything else."""
    return term if type(term) in (int, str) else ANY


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


class _Reads:
    """What each demand's rules read: heads by functor, then one demand's body walk."""

    def __init__(self, program: RtecProgram) -> None:
        self.program = program
        self.background_read: set[tuple[str, int]] = set()
        self.heads: dict[str, list[tuple[tuple, list]]] = defaultdict(list)  # functor -> (head arguments, body)
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
        self.heads[got[0]].append((got[1], body))

    def __call__(self, name: str, pattern: Pattern) -> list[tuple[str, Pattern]]:
        out: list[tuple[str, Pattern]] = []
        for args, body in self.heads.get(name, ()):
            bound = _match(args, pattern)
            if bound is not None:
                for g in body:
                    self._goal(g, bound, out)
        return out

    def _goal(self, g: Any, bound: dict[int, Any], out: list[tuple[str, Pattern]]) -> None:
        if type(g) is Slot:
            raise GiveUp("a goal that is a variable")
        if type(g) is not tuple:
            return
        name, n = g[0], len(g) - 1
        if (name, n) in _READS:
            got = _entity(g[1])
            if got is None:
                raise GiveUp(f"{name}/{n} of an entity named by a variable")
            out.append((got[0], tuple(_value(a, bound) for a in got[1])))
            return
        if (name, n) in self.program.dynamic_domain:
            out.append((name, tuple(_value(a, bound) for a in g[1:])))
            return
        if any(type(g[i]) is Slot for i in _GOALS.get((name, n), ())) or name == "call":
            raise GiveUp(f"{name}/{n} of a variable goal")
        if (name, n) in self.program.background and (name, n) != ("grounding", 1):
            if (name, n) not in self.background_read:
                self.background_read.add((name, n))
                for rule in self.program.background[(name, n)]:
                    for sub in rule.body:
                        self._goal(sub, {}, out)  # its variables: any value
        for a in g[1:]:  # (findall's goal, a negation, a disjunction, a compound argument)
            if type(a) is tuple:
                self._goal(a, bound, out)


def _value(term: Any, bound: dict[int, Any]) -> Any:
    if type(term) is Slot:
        return bound.get(term.i, ANY)
    return _const(term)


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
            if a.i in bound and not same(bound[a.i], p):
                return None
            bound[a.i] = p
        elif type(a) in (int, str) and not same(a, p):
            return None
    return bound


def demands(program: RtecProgram, name: str, args: tuple) -> Demands | None:
    """Functor -> the argument patterns an explanation of ``name(args)`` can read; None if
    no bound can be found."""
    query = tuple(ANY if isinstance(a, str) and "(" in a else a for a in args)  # (a compound's text: any)
    try:
        reads = _Reads(program)
    except GiveUp:
        return None
    return closure([(name, query)], reads)


def relevant(program: RtecProgram) -> Callable[[tuple[str, tuple], Any, list], Callable[[Event], bool] | None]:
    """``Dialect.relevant``: for an answer atom, which input events can matter to it (None: all).

    The whole input for a windowed evaluator (``--window``: each window's domain is what its
    own events show) or one with a retention (what it forgets depends on the events it saw).
    Of the events kept only because they put a demanded fact in a domain, only the first to
    arrive, and any later one at the same or an earlier time (the one an explanation cites), unless a
    feeding event is retracted: the domain grows at the first, the later ones change nothing."""
    feeds = {pred: [(dom[0], pos) for dom, pos in got] for pred, got in domain_feeds(program).items()}

    def for_atom(atom: tuple[str, tuple], evaluator: Any, events: list) -> Callable[[Event], bool] | None:
        if type(evaluator) is not RtecEvaluator or evaluator.retention is not None:
            return None
        found = demands(program, atom[0], tuple(atom[1]))
        if found is None:
            return None
        retracted = any(ev.retract and ev.pred in feeds for ev in events)
        return event_filter(found, feeds, first_feeders=not retracted)

    return for_atom


def narrow(program: RtecProgram) -> Callable[[tuple[str, tuple], Any], None]:
    """``Dialect.narrow``: an explanation's evaluator derives only the entities whose functor the
    atom's demands name (every one the explanation reads) and what they depend on — caviar's
    ``person(id1)`` needs neither ``distance`` nor ``meeting``.  The others' answers are then
    not written; the atom's and everything its explanation reads are as on the whole program.
    With a retention too: what it forgets is by time, whatever the entity.  Not a windowed
    evaluator (``--window``): each window grounds its own domain."""

    def for_atom(atom: tuple[str, tuple], evaluator: Any) -> None:
        if type(evaluator) is not RtecEvaluator:
            return
        found = demands(program, atom[0], tuple(atom[1]))
        if found is None:
            return
        h = evaluator.h
        evaluator.only = h.closure([e for e in h.kind if e[1][0] in found])

    return for_atom
