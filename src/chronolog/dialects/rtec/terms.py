"""The solver's terms at run time, and clauses compiled for it.

Why its own: every part of the RTEC dialect handles these terms (the
evaluator, its built-ins, the analyses of the program), most without
solving anything.  A term is that of ``chronolog.dialects.rtec.prolog``
(atoms, numbers, tuples ``(name, *args)``); at run time a variable is a
``Var`` bound through the solver's trail, and a clause is compiled once into
a ``Rule`` over numbered ``Slot``s, copied with fresh variables at each call
(by ``inst``, or by the Python builders ``Rule.compile`` makes).
"""

from __future__ import annotations

from collections.abc import Callable
from functools import lru_cache
from types import CodeType
from typing import Any

from chronolog.core.errors import ChronologError
from chronolog.dialects.rtec.prolog import PVar

Term = Any
ONE = (None,)  # one solution and no bindings: cheaper to iterate than a generator


@lru_cache(maxsize=1024)
def _code(source: str) -> CodeType:
    return compile(source, "<string>", "exec")


def define(source: str, env: dict[str, Any]) -> None:
    """``exec`` of generated Python source (a rule body's loops: ``local``, ``runner``, ``pure``)
    into ``env``, each text compiled once per process: the source names the evaluator's objects
    only through ``env``, and an explanation makes several evaluators of one program, each of
    which compiled the same bodies again (a few ms each)."""
    exec(_code(source), env)  # noqa: S102 (our own source text, from the program's clauses)


class Var:
    __slots__ = ("ref",)

    def __init__(self) -> None:
        self.ref: Term = None


class Ivs:
    """A non-empty list of maximal intervals as a Prolog value (the empty one is ``[]``)."""

    __slots__ = ("pairs",)

    def __init__(self, pairs: list) -> None:
        self.pairs = pairs

    def __eq__(self, other: object) -> bool:
        return isinstance(other, Ivs) and self.pairs == other.pairs

    __hash__ = None  # type: ignore[assignment]


def ivs_term(pairs: list) -> Term:
    return Ivs(pairs) if pairs else "[]"


def deref(t: Term) -> Term:
    while type(t) is Var:
        r = t.ref
        if r is None:
            return t
        t = r
    return t


def resolve(t: Term) -> Term:
    """``t`` with every bound variable replaced by its value."""
    t = deref(t)
    if type(t) is tuple:
        return tuple(resolve(a) for a in t)
    return t


def is_ground(t: Term) -> bool:
    while type(t) is Var:
        t = t.ref
        if t is None:
            return False
    if type(t) is tuple:
        for i in range(1, len(t)):
            if not is_ground(t[i]):
                return False
    return True


class Slot:
    """Variable number ``i`` of a compiled clause."""

    __slots__ = ("i",)

    def __init__(self, i: int) -> None:
        self.i = i


def compile_term(t: Term, slots: dict) -> Term:
    """A read term with its ``PVar``s as numbered ``Slot``s (``_`` each its own)."""
    if type(t) is PVar:
        if t.name == "_":
            s = Slot(len(slots))
            slots[object()] = s
            return s
        if t not in slots:
            slots[t] = Slot(len(slots))
        return slots[t]
    if type(t) is tuple:
        return tuple(compile_term(a, slots) if i else a for i, a in enumerate(t))
    return t


def has_slot(t: Term) -> bool:
    if type(t) is Slot:
        return True
    return type(t) is tuple and any(has_slot(a) for a in t[1:])


def inst(t: Term, vs: list) -> Term:
    tt = type(t)
    if tt is Slot:
        return vs[t.i]
    if tt is tuple:
        return tuple([t[0], *[inst(a, vs) for a in t[1:]]])
    return t


class Rule:
    """A compiled clause: head and body goals over slots."""

    __slots__ = ("head", "body", "nvars", "loc", "_plan", "build", "names")

    def __init__(self, head: Term, body: list, nvars: int, loc: Any, names: dict[int, str] | None = None) -> None:
        self.head, self.body, self.nvars, self.loc = head, body, nvars, loc
        self.names = names or {}  # slot -> the variable's name in the source (an explanation shows them)
        self._plan: Any = None  # the evaluator's body order (chronolog.dialects.rtec.evaluator._plan)
        self.build: Any = None  # (head builder, body builder) of compile()

    def fresh(self) -> tuple[Term, list]:
        vs = [Var() for _ in range(self.nvars)]
        return inst(self.head, vs), [inst(g, vs) for g in self.body]

    def compile(self) -> tuple[Callable, Callable]:
        """Python functions building the head and the body goals over a list of variables: a
        clause is copied at every call, and ``inst``'s walk over the terms cost more than the rest."""
        self.build = (term_builder(self.head), terms_builder(self.body))
        return self.build


def term_source(t: Term, consts: list) -> str:
    """A Python expression building ``t`` over ``vs`` (slots) and ``c`` (ground parts)."""
    if type(t) is Slot:
        return f"vs[{t.i}]"
    if type(t) is tuple and has_slot(t):
        return "(" + ", ".join([repr(t[0])] + [term_source(a, consts) for a in t[1:]]) + ",)"
    consts.append(t)
    return f"c[{len(consts) - 1}]"


def term_builder(t: Term) -> Callable[[list], Term]:
    consts: list = []
    return eval(f"lambda vs, c=c: {term_source(t, consts)}", {"c": consts})  # noqa: S307 (our own source text)


def terms_builder(ts: list) -> Callable[[list], list]:
    consts: list = []
    return eval(f"lambda vs, c=c: [{', '.join(term_source(t, consts) for t in ts)}]", {"c": consts})  # noqa: S307


def conjuncts(body: Term) -> list:
    out = []
    while isinstance(body, tuple) and body[0] == "," and len(body) == 3:
        out.append(body[1])
        body = body[2]
    if body != "true":
        out.append(body)
    return out


def compile_clause(term: Term, loc: Any) -> Rule:
    slots: dict = {}
    if isinstance(term, tuple) and term[0] == ":-" and len(term) == 3:
        head = compile_term(term[1], slots)
        body = [compile_term(g, slots) for g in conjuncts(term[2])]
    else:
        head, body = compile_term(term, slots), []
    return Rule(head, body, len(slots), loc, {s.i: k.name for k, s in slots.items() if type(k) is PVar})


def key_of(t: Term) -> tuple[str, int]:
    t = deref(t)
    if type(t) is tuple:
        return (t[0], len(t) - 1)
    return (t, 0) if type(t) is str else ("", -1)


class SolveError(ChronologError):
    """An error of a program met while solving (arithmetic on an unbound variable, an
    unknown predicate, recursion too deep)."""


def to_list(items: list) -> Term:
    out: Term = "[]"
    for x in reversed(items):
        out = (".", x, out)
    return out


def from_list(t: Term) -> list | None:
    out = []
    t = deref(t)
    while type(t) is tuple and t[0] == "." and len(t) == 3:
        out.append(t[1])
        t = deref(t[2])
    if t == "[]":
        return out
    if type(t) is Ivs:  # an interval list given where a list is expected
        return list(t.pairs)
    return None
