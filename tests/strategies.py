"""Random LARS programs and streams for property tests.

Hypothesis strategies ``programs(stratified)`` and ``streams()``, and the same
generators driven by a seed (``random_program``, ``random_stream``) for
scripts and soak tests.  Programs use the extensional predicates p/1, q/1,
r/2 (the stream's) and the intensional a/1, b/1, c/0; they use every LARS
construct (now, diamond, box, @ with a variable or constant time, windowless
@, time windows [0]..[3], tuple windows [1 #]..[4 #] on stream predicates,
negation, comparisons and assignments, @-heads, program facts), are always
safe, and stratified when asked (negation only on lower strata; positive
recursion allowed).  With ``mixed`` some stream predicates are also rule heads
(``p(X) :- q(X).`` next to stream facts of p): their windows then read both.  Assignments only produce bounded values (``mod``, copies,
constants), so every fixpoint is finite.
"""

from __future__ import annotations

import random
from collections.abc import Sequence
from typing import Protocol, TypeVar

from hypothesis import strategies as st

from chronolog.core.events import Event
from chronolog.dialects.lars.ir import (
    Atom,
    BinOp,
    Compare,
    Const,
    ExtAtom,
    Head,
    Op,
    Program,
    Rule,
    TimeWindow,
    TupleWindow,
    Var,
)

EXTENSIONAL = {"p": 1, "q": 1, "r": 2}
INTENSIONAL = {"a": 1, "b": 1, "c": 0}
ARITY = {**EXTENSIONAL, **INTENSIONAL}
CONSTANTS: list = [1, 2, 3, "a", "b"]
DATA_VARS = ["X", "Y", "Z"]
TIME_VARS = ["T", "U"]
DOMAINS: list[list] = [[1, 2, 3], ["a", "b"], [1, 2, "a"]]
LAST_TIME = 6

T = TypeVar("T")


class Chooser(Protocol):
    def int(self, lo: int, hi: int) -> int: ...
    def choice(self, seq: Sequence[T]) -> T: ...
    def chance(self, percent: int) -> bool: ...


class _Hyp:
    def __init__(self, draw):
        self.draw = draw

    def int(self, lo: int, hi: int) -> int:
        return self.draw(st.integers(lo, hi))

    def choice(self, seq):
        return self.draw(st.sampled_from(list(seq)))

    def chance(self, percent: int) -> bool:
        return self.draw(st.integers(0, 99)) < percent


class _Rand:
    def __init__(self, rng: random.Random):
        self.rng = rng

    def int(self, lo: int, hi: int) -> int:
        return self.rng.randint(lo, hi)

    def choice(self, seq):
        return self.rng.choice(list(seq))

    def chance(self, percent: int) -> bool:
        return self.rng.randrange(100) < percent


# ---------------------------------------------------------------- programs


def _window(d: Chooser, extensional: bool):
    if extensional and d.chance(35):
        return TupleWindow(d.int(1, 4))
    return TimeWindow(d.int(0, 3))


def _ext(d: Chooser, preds: list[str], bound: set[str], negated: bool, derived: frozenset[str] = frozenset()) -> ExtAtom:
    """A random extended atom; positive ones may bind new variables (added to
    ``bound``), negated ones use only bound variables, constants and ``_``.
    Tuple windows only over stream predicates no rule derives (``derived``)."""
    pred = d.choice(preds)
    arity = ARITY[pred]
    new: set[str] = set()

    def term(pool: list[str]):
        if negated:
            options = sorted(bound)
            if options and d.chance(60):
                return Var(d.choice(options))
            if d.chance(10):
                return Var("_")
            return Const(d.choice(CONSTANTS))
        if d.chance(70):
            name = d.choice(pool)
            new.add(name)
            return Var(name)
        if d.chance(10):
            return Var("_")
        return Const(d.choice(CONSTANTS))

    args = tuple(term(DATA_VARS) for _ in range(arity))
    atom = Atom(pred, args)
    ext = pred in EXTENSIONAL and pred not in derived
    kind = d.int(0, 5)
    if kind == 0:
        e = ExtAtom(atom, Op.NOW, negated=negated)
    elif kind == 1:
        e = ExtAtom(atom, Op.DIAMOND, _window(d, ext), negated=negated)
    elif kind == 2:
        e = ExtAtom(atom, Op.BOX, _window(d, ext), negated=negated)
    else:  # at: with a window (var or const time) or windowless
        window = _window(d, ext) if kind != 5 else None
        if negated:
            options = sorted(bound)
            if options and d.chance(70):
                time = Var(d.choice(options))
            else:
                time = Var("_") if d.chance(10) else Const(d.int(0, LAST_TIME))
        elif d.chance(25):
            time = Const(d.int(0, LAST_TIME))
        else:
            time = Var(d.choice(TIME_VARS + TIME_VARS + DATA_VARS[:1]))
            new.add(time.name)
        e = ExtAtom(atom, Op.AT, window, time=time, negated=negated)
    if not negated:
        bound |= new
    return e


def _compare(d: Chooser, bound: set[str]) -> tuple[Compare, str | None]:
    """A comparison over bound variables, or an assignment of a new one."""
    names = sorted(bound)
    x = Var(d.choice(names))
    free = [v for v in DATA_VARS + ["V", "W"] if v not in bound]
    if free and d.chance(35):
        v = d.choice(free)
        rhs = d.choice(
            [
                BinOp("mod", x, Const(2)),
                BinOp("mod", BinOp("*", x, Const(d.int(1, 3))), Const(3)),
                BinOp("mod", BinOp("+", x, Var(d.choice(names))), Const(4)),
                Const(d.choice(CONSTANTS)),
                x,
            ]
        )
        if d.chance(50):
            return Compare("=", Var(v), rhs), v
        return Compare("=", rhs, Var(v)), v
    y = Var(d.choice(names)) if d.chance(50) else Const(d.choice(CONSTANTS + [0, 4, -1]))
    left = d.choice(
        [
            x,
            x,
            BinOp("+", x, Const(1)),
            BinOp("-", x, y),
            BinOp("*", x, Const(2)),
            BinOp("/", x, Const(d.int(-2, 2))),
            BinOp("mod", x, y),
        ]
    )
    return Compare(d.choice(["=", "!=", "<", "<=", ">", ">="]), left, y), None


def _rule(
    d: Chooser, head: str, positive_ok: list[str], negative_ok: list[str], derived: frozenset[str] = frozenset()
) -> Rule:
    bound: set[str] = set()
    body: list = []
    for _ in range(d.int(0 if d.chance(15) else 1, 2)):
        body.append(_ext(d, positive_ok, bound, negated=False, derived=derived))
    at_time_vars = [
        e.time.name
        for e in body
        if e.op is Op.AT and e.window is not None and isinstance(e.time, Var) and e.time.name != "_"
    ]
    if bound and d.chance(40):
        c, assigned = _compare(d, bound)
        body.append(c)
        if assigned:
            bound.add(assigned)
    for _ in range(d.int(0, 2) if negative_ok else 0):
        body.append(_ext(d, negative_ok, bound, negated=True, derived=derived))
    if not body:  # a body of ground negations only
        body.append(_ext(d, negative_ok or positive_ok, bound, negated=True, derived=derived))

    def head_term():
        if bound and d.chance(75):
            return Var(d.choice(sorted(bound)))
        return Const(d.choice(CONSTANTS))

    atom = Atom(head, tuple(head_term() for _ in range(ARITY[head])))
    time = None
    if at_time_vars and d.chance(50):
        time = Var(d.choice(at_time_vars))
    elif bound and d.chance(5):  # a data value as time: may lie off the timeline
        time = Var(d.choice(sorted(bound)))
    order = list(range(len(body)))
    if d.chance(30):  # body order must not matter
        order.reverse()
    return Rule(Head(atom, time), tuple(body[i] for i in order))


def _fact(d: Chooser, preds: list[str]) -> Rule:
    pred = d.choice(preds)
    atom = Atom(pred, tuple(Const(d.choice(CONSTANTS)) for _ in range(ARITY[pred])))
    time = Const(d.int(0, 3)) if d.chance(10) else None
    return Rule(Head(atom, time))


def random_program_with(d: Chooser, stratified: bool, mixed: bool = False) -> Program:
    """A random safe program; stratified (negation only downwards) if asked; with
    ``mixed``, one or more stream predicates are rule heads too (the first rule's
    head is one of them)."""
    derived = frozenset()
    if mixed:
        derived = frozenset(p for p in sorted(EXTENSIONAL) if d.chance(40)) or frozenset([d.choice(sorted(EXTENSIONAL))])
        if len(derived) == len(EXTENSIONAL):  # one stays stream-only: the fallback of a body of negations
            derived -= {"r"}
    stream_only = sorted(set(EXTENSIONAL) - derived)
    intensional = sorted(INTENSIONAL) + sorted(derived)
    # a random order of the intensional predicates fixes the strata
    levels: dict[str, int] = {}
    rest = intensional[:]
    while rest:
        pick = d.choice(rest)
        rest.remove(pick)
        levels[pick] = len(levels)
    rules: list[Rule] = []
    for i in range(d.int(1, 5)):
        head = d.choice(sorted(derived) if mixed and i == 0 else intensional)
        if stratified:
            positive_ok = stream_only + [p for p in intensional if levels[p] <= levels[head]]
            negative_ok = stream_only + [p for p in intensional if levels[p] < levels[head]]
        else:
            positive_ok = negative_ok = stream_only + intensional
        rules.append(_rule(d, head, positive_ok, negative_ok, derived))
    for _ in range(d.int(0, 2)):
        rules.insert(d.int(0, len(rules)), _fact(d, intensional))
    return Program(tuple(rules))


def random_stream_with(d: Chooser) -> list[Event]:
    """Time points between 0 and 6 with gaps, 0-3 facts per point."""
    domain = d.choice(DOMAINS)
    start = d.int(0, 2)
    events: list[Event] = []
    for t in range(start, LAST_TIME + 1):
        if t != start and not d.chance(60):
            continue
        n = d.int(0, 3)
        if n == 0:
            events.append(Event(t))
        for _ in range(n):
            pred = d.choice(sorted(EXTENSIONAL))
            events.append(Event(t, pred, tuple(d.choice(domain) for _ in range(EXTENSIONAL[pred]))))
    return events


# ---------------------------------------------------------------- public API


def programs(stratified: bool = True, mixed: bool = False) -> st.SearchStrategy[Program]:
    @st.composite
    def build(draw):
        return random_program_with(_Hyp(draw), stratified, mixed)

    return build()


def streams() -> st.SearchStrategy[list[Event]]:
    @st.composite
    def build(draw):
        return random_stream_with(_Hyp(draw))

    return build()


def random_program(seed: int | random.Random, stratified: bool = True, mixed: bool = False) -> Program:
    rng = seed if isinstance(seed, random.Random) else random.Random(seed)
    return random_program_with(_Rand(rng), stratified, mixed)


def random_stream(seed: int | random.Random) -> list[Event]:
    rng = seed if isinstance(seed, random.Random) else random.Random(seed)
    return random_stream_with(_Rand(rng))


def long_stream(rng: random.Random, chunks: int) -> list[Event]:
    """``chunks`` random streams one after the other: windows expire many times."""
    events: list[Event] = []
    for _ in range(chunks):
        offset = events[-1].t + 1 if events else 0
        events += [Event(e.t + offset, e.pred, e.args) for e in random_stream(rng)]
    return events


# ---------------------------------------------------------------- programs with choices

CHOICE_TEMPLATES = [
    # choices through even negative loops over windows
    "a(X) :- p(X) [{w}], not b(X).\nb(X) :- p(X) [{w}], not a(X).",
    # recursion through chosen atoms
    "c(X) :- a(X).\nc(Y) :- c(X), r(X,Y) [{w}].\nd(X) :- c(X), not e(X).\ne(X) :- q(X) [{w}], not d(X).",
    # tuple windows feed the choice
    "a(X) :- p(X) [{n} #], not b(X).\nb(X) :- q(X) at T [{n} #], not a(X).",
    # box and @ over chosen atoms
    "s(X) at T :- p(X) at T [{w}], not u(X).\nu(X) :- q(X) [{w}], not s(X) always [1].",
    # a constraint through an odd loop on some points only
    "x :- a(X), q(X), not x.",
    # negation of a chosen atom in a window over a timed predicate
    "f(X) at T :- r(X,Y) at T [{w}], not g(X).\ng(X) :- q(X) [{w}], not f(X) [{w}].",
]


def random_choice_program(rng: random.Random) -> str:
    """A non-stratified program (text) of 1-3 templates with random windows."""
    parts = rng.sample(CHOICE_TEMPLATES, rng.randint(1, 3))
    return "\n".join(p.format(w=rng.randint(0, 3), n=rng.randint(1, 4)) for p in parts)
