"""Which input events can matter to one answer: demands propagated top-down from its constants.

An explanation of ``meeting(id1,id2)`` (RTEC) or ``ShortStop(veh3)`` (DatalogMTL) reads the
rules whose head matches it with the head's variables bound to those constants, and so on
down: a *demand* is a predicate with an argument pattern of constants and ``ANY`` (a
variable bound only by another body literal, or anything the analysis does not follow).
``closure`` computes the fixpoint given a dialect's ``reads`` (a demand -> the demands its
rules' bodies make); ``event_filter`` keeps the input events a demand matches.  The
dialects' walks over their rules are ``dialects/rtec/relevance.py`` and
``dialects/mtl/relevance.py``; an explanation on the kept events is the one on the whole
input (``runtime.explain.sliced``).
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Callable, Iterable
from operator import itemgetter
from typing import Any

from chronolog.core.events import Event

ANY = None  # a pattern position any value matches
Pattern = tuple  # constants (int, str) and ANY
Demands = dict[str, set[Pattern]]  # predicate -> the patterns read
_UNTESTED: Any = object()


class GiveUp(Exception):
    """The program reads what no constant analysis bounds: every event may matter."""


def same(a: Any, b: Any) -> bool:
    """Constants of a program, a query and the input are equal (``24`` and ``"24"`` too)."""
    return a == b or str(a) == str(b)


def covers(general: Pattern, special: Pattern) -> bool:
    return len(general) == len(special) and all(g is ANY or same(g, s) for g, s in zip(general, special, strict=True))


def closure(start: Iterable[tuple[str, Pattern]], reads: Callable[[str, Pattern], Iterable[tuple[str, Pattern]]]
            ) -> Demands | None:
    """The demands reachable from ``start``; None if ``reads`` gives up."""
    found: Demands = defaultdict(set)
    todo: list[tuple[str, Pattern]] = []

    def add(name: str, pattern: Pattern) -> None:
        known = found[name]
        if pattern not in known and not any(covers(p, pattern) for p in known):
            known.add(pattern)
            todo.append((name, pattern))

    try:
        for name, pattern in start:
            add(name, pattern)
        while todo:
            for name, pattern in reads(*todo.pop()):
                add(name, pattern)
    except GiveUp:
        return None
    return dict(found)


def matches(found: Demands, name: str, args: tuple) -> bool:
    """Whether ``name(args)`` is one a demand reads; a constant past the end of ``args`` does
    not rule it out (an input fluent's value is its last argument, a shorter pattern's)."""
    return any(all(p is ANY or i >= len(args) or same(args[i], p) for i, p in enumerate(pattern))
               for pattern in found.get(name, ()))


class EventFilter:
    """``event_filter``'s test of one event, and what it said of the usual ones (``said``):
    an explanation tests every event of the input (``runtime.explain.sliced``), and a call per
    event was most of the slice's time.  ``said``: per predicate, the arity first seen, the
    getter of the arguments that decide the test, and per such arguments what ``keep`` says of
    the next event with them — True (a demand reads it), False (it feeds nothing demanded, or
    all it feeds is fed), or the time after which it feeds nothing first (and before which
    ``keep`` is asked)."""

    __slots__ = ("keep", "said")

    def __init__(self, keep: Callable[[Event], bool],
                 said: dict[str, tuple[int, Callable[[tuple], Any], dict[Any, Any]]]) -> None:
        self.keep = keep
        self.said = said

    def __call__(self, ev: Event) -> bool:
        return self.keep(ev)


def event_filter(found: Demands, feeds: dict[str, list[tuple[str, list[int]]]] | None = None,
                 first_feeders: bool = False) -> EventFilter:
    """A test of input events, taken in arrival order: a demand matches it, or it feeds a
    demanded fact of a domain (``feeds``: input predicate -> [(domain predicate, argument
    positions)], RTEC's ``dynamicDomain``) — with ``first_feeders`` only the first to arrive
    for each fact and any later one of the same or an earlier time.  Indexed by the constants' positions:
    one lookup per event."""
    index: dict[str, list[tuple[tuple[int, ...], set[tuple[str, ...]] | None]]] = {}
    for name, patterns in found.items():
        by_pos: dict[tuple[int, ...], set[tuple[str, ...]]] = defaultdict(set)
        for pattern in patterns:
            pos = tuple(i for i, p in enumerate(pattern) if p is not ANY)
            by_pos[pos].add(tuple(str(pattern[i]) for i in pos))
        index[name] = [(pos, None if not pos else keys) for pos, keys in by_pos.items()]

    def hit(name: str, args: tuple) -> bool:
        n = len(args)
        for pos, keys in index.get(name, ()):
            if keys is None:
                return True
            if pos[-1] < n:
                if tuple(str(args[i]) for i in pos) in keys:
                    return True
            elif any(all(k[j] == str(args[i]) for j, i in enumerate(pos) if i < n) for k in keys):
                return True
        return False

    feeding = feeds or {}
    # (the same events recur: one test each): None if a demand reads one, else the demanded
    # domain facts it feeds — kept per predicate and arity (``deciding``)
    fed: dict[tuple[str, tuple], Any] = {}  # a domain fact -> the earliest time of a kept event feeding it
    # per list of demanded facts one event feeds (kept in ``deciding``, so alive): a time after
    # which such an event feeds none of them first (the latest ``fed`` time of its facts)
    ceiling: dict[int, Any] = {}

    def feeds_demand(pred: str, args: tuple) -> list[tuple[str, tuple]]:
        return [(dom, sub) for dom, pos in feeding.get(pred, ()) if max(pos, default=-1) < len(args)
                for sub in [tuple(args[p] for p in pos)] if hit(dom, sub)]

    # what decides an event's test: its predicate, its arity and its arguments at the positions
    # a demand or a feed names (caviar's coord(id1,X,Y) by id1 alone: one test per person);
    # per predicate and arity, that getter and the outcomes by those arguments
    deciding: dict[tuple[str, int], tuple[Callable[[tuple], Any], dict[Any, list[tuple[str, tuple]] | None]]] = {}

    def decider(pred: str, n: int) -> tuple[Callable[[tuple], Any], dict[Any, list[tuple[str, tuple]] | None]]:
        pos = sorted({i for p, _ in index.get(pred, ()) for i in p} | {i for _, p in feeding.get(pred, ()) for i in p})
        pos = [i for i in pos if i < n]
        got = deciding[(pred, n)] = (itemgetter(*pos) if pos else (lambda args: ()), {})
        return got

    def keep(ev: Event) -> bool:
        pred = ev.pred
        if pred is None:
            return True
        args = ev.args
        at = (pred, len(args))
        entry = deciding.get(at)
        if entry is None:
            entry = decider(*at)
        get, known = entry
        key = get(args)
        facts = known.get(key, _UNTESTED)
        if facts is _UNTESTED:
            facts = known[key] = None if hit(pred, args) else feeds_demand(pred, args)
        if facts is None or not facts or not first_feeders:
            now = facts is None or bool(facts)  # (None: a demand reads it)
            said_of(pred, len(args), get)[key] = now
            return now
        t = ev.t
        if t > ceiling.get(facts_id := id(facts), t):  # (most are: fed already, earlier)
            return False
        fresh = [f for f in facts if f not in fed or t <= fed[f]]  # (all of the earliest time: which one is cited)
        for f in fresh:
            fed[f] = t
        if all(f in fed for f in facts):  # (a time a fact is fed at only ever moves earlier: a bound)
            ceiling[facts_id] = max(fed[f] for f in facts)
            said_of(pred, len(args), get)[key] = ceiling[facts_id]
        return bool(fresh)

    said: dict[str, tuple[int, Callable[[tuple], Any], dict[Any, Any]]] = {}

    def said_of(pred: str, n: int, get: Callable[[tuple], Any]) -> dict[Any, Any]:
        """``said``'s outcomes of ``pred`` with ``n`` arguments (a dict no one reads where the
        predicate came first with another arity: those events are asked each time)."""
        entry = said.get(pred)
        if entry is None:
            entry = said[pred] = (n, get, {})
        return entry[2] if entry[0] == n else {}

    return EventFilter(keep, said)

