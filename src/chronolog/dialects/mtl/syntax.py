"""The DatalogMTL program IR: metric atoms, rules, program facts.

Terms are ``Var`` (a name starting with an upper-case letter or ``_`` in a
rule) or constants (``str``; numbers in programs are read as their text,
as MeTeoR's data files and CONTRACT §2's JSON strings have them).
"""

from __future__ import annotations

from dataclasses import dataclass, field

from chronolog.core.source import Loc
from chronolog.dialects.mtl.intervals import Iv

PAST = {"Boxminus", "Diamondminus"}
FUTURE = {"Boxplus", "Diamondplus"}
UNARY = PAST | FUTURE
BINARY = {"Since", "Until"}


@dataclass(frozen=True)
class Var:
    name: str

    def __str__(self) -> str:
        return self.name


Term = Var | str


@dataclass(frozen=True)
class Atom:
    pred: str
    args: tuple[Term, ...]
    loc: Loc | None = field(default=None, compare=False)

    @property
    def key(self) -> tuple[str, int]:
        return (self.pred, len(self.args))

    def __str__(self) -> str:
        return self.pred + (f"({','.join(map(str, self.args))})" if self.args else "")


@dataclass(frozen=True)
class Unary:
    """``Boxminus[a,b] operand`` and the other one-place operators."""

    op: str
    rho: Iv
    operand: Literal
    loc: Loc | None = field(default=None, compare=False)


@dataclass(frozen=True)
class Binary:
    """``left Since[a,b] right`` / ``left Until[a,b] right``."""

    op: str
    rho: Iv
    left: Literal
    right: Literal
    loc: Loc | None = field(default=None, compare=False)


@dataclass(frozen=True)
class Negated:
    """``not L`` in a rule body: L does not hold at t (stratified negation; L's
    predicates are all computed in lower strata).  Only in front of a body
    literal, which may carry metric operators (``not Boxminus[0,2]P(X)``)."""

    operand: Literal
    loc: Loc | None = field(default=None, compare=False)


Literal = Atom | Unary | Binary | Negated


@dataclass(frozen=True)
class Rule:
    head: Literal  # an Atom, possibly under Boxminus/Boxplus
    body: tuple[Literal, ...]
    loc: Loc | None = field(default=None, compare=False)


@dataclass(frozen=True)
class Fact:
    pred: str
    args: tuple[str, ...]
    interval: Iv
    loc: Loc | None = field(default=None, compare=False)


@dataclass(frozen=True)
class MtlProgram:
    rules: tuple[Rule, ...]
    facts: tuple[Fact, ...]
    dialect: str = "mtl"


def head_atom(lit: Literal) -> Atom:
    while isinstance(lit, Unary):
        lit = lit.operand
    assert isinstance(lit, Atom)
    return lit


def atoms_of(lit: Literal) -> list[Atom]:
    if isinstance(lit, Atom):
        return [lit]
    if isinstance(lit, (Unary, Negated)):
        return atoms_of(lit.operand)
    return atoms_of(lit.left) + atoms_of(lit.right)


def operators_of(lit: Literal) -> list[Unary | Binary]:
    if isinstance(lit, Atom):
        return []
    if isinstance(lit, Unary):
        return [lit] + operators_of(lit.operand)
    if isinstance(lit, Negated):
        return operators_of(lit.operand)
    return [lit] + operators_of(lit.left) + operators_of(lit.right)


def variables(lit: Literal) -> set[str]:
    return {t.name for a in atoms_of(lit) for t in a.args if isinstance(t, Var)}
