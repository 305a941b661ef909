"""The intermediate representation shared by every rule language.

Parsers (``chronolog.dialects.load``) produce it, the planner (``chronolog.dialects.lars.plan``)
analyses it and the evaluators run it.  It is deliberately small: atoms over
terms, extended atoms (an atom under a temporal operator and a window),
comparisons, and rules.  Everything is frozen so that rules can be hashed,
shared between components and pickled into checkpoints.

Constants are Python values: ``str`` for symbols (``a`` and ``"a"`` in a
program are the same constant, and equal the JSON string ``"a"``), ``int`` for
integers.  Time points are ``int``.
"""

from __future__ import annotations

import enum

from chronolog.core.records import field, record
from chronolog.core.source import Loc, Value  # noqa: F401 (part of the IR)


@record(frozen=True)
class Var:
    name: str

    def __str__(self) -> str:
        return self.name


@record(frozen=True)
class Const:
    value: Value

    def __str__(self) -> str:
        v = self.value
        if isinstance(v, int):
            return str(v)
        if v and v[0].islower() and v.replace("_", "").isalnum() and v.isascii():
            return v
        escaped = v.replace("\\", "\\\\").replace('"', '\\"')
        return f'"{escaped}"'


Term = Var | Const


@record(frozen=True)
class BinOp:
    """Integer arithmetic in comparisons.

    ``/`` and ``mod`` truncate toward zero (as clingo and Ticker's Scala do).
    """

    op: str  # one of + - * / mod
    left: Expr
    right: Expr

    def __str__(self) -> str:
        if self.op == "mod":  # the native syntax has no infix modulo ("%" starts a comment)
            return f"({self.left} \\ {self.right})"
        return f"({self.left} {self.op} {self.right})"


Expr = Var | Const | BinOp


@record(frozen=True)
class Atom:
    pred: str
    args: tuple[Term, ...] = ()

    @property
    def key(self) -> tuple[str, int]:
        """Predicates are identified by name and arity."""
        return (self.pred, len(self.args))

    def variables(self) -> set[str]:
        return {a.name for a in self.args if isinstance(a, Var)}

    def __str__(self) -> str:
        if not self.args:
            return self.pred
        return f"{self.pred}({','.join(str(a) for a in self.args)})"


@record(frozen=True)
class TimeWindow:
    """Time window ``[n]``: the points ``max(t1, t-n) .. t``."""

    size: int

    def __str__(self) -> str:
        return f"[{self.size}]"


@record(frozen=True)
class TupleWindow:
    """Tuple window ``[n #]``: the last ``n`` stream facts up to ``t``."""

    size: int

    def __str__(self) -> str:
        return f"[{self.size} #]"


Window = TimeWindow | TupleWindow


class Op(enum.Enum):
    """Temporal operator of an extended atom."""

    NOW = "now"  # plain atom: holds at the evaluation time t
    DIAMOND = "diamond"  # holds at some point of the window
    BOX = "box"  # holds at every point of the window
    AT = "at"  # holds at time T (T a variable or integer) inside the window / timeline


@record(frozen=True)
class ExtAtom:
    """An atom under an operator: ``p(X)``, ``p(X) [3]``, ``p always [3]``, ``p at T [3 #]``.

    ``window`` is None for NOW and for a windowless AT (the whole timeline
    ``[t1, t]``); DIAMOND and BOX always have a window.
    """

    atom: Atom
    op: Op = Op.NOW
    window: Window | None = None
    time: Term | None = None  # AT only
    negated: bool = False
    loc: Loc | None = field(default=None, compare=False)

    def variables(self) -> set[str]:
        vs = self.atom.variables()
        if isinstance(self.time, Var):
            vs.add(self.time.name)
        return vs

    def __str__(self) -> str:
        s = str(self.atom)
        if self.op is Op.AT:
            s += f" at {self.time}"
        elif self.op is Op.BOX:
            s += " always"
        if self.window is not None:
            s += f" {self.window}"
        return ("not " if self.negated else "") + s


COMPARISON_OPS = ("=", "!=", "<", "<=", ">", ">=")


@record(frozen=True)
class Compare:
    """A comparison built-in; ``X = expr`` with X otherwise unbound assigns X."""

    op: str  # one of COMPARISON_OPS
    left: Expr
    right: Expr
    loc: Loc | None = field(default=None, compare=False)

    def variables(self) -> set[str]:
        return expr_vars(self.left) | expr_vars(self.right)

    def __str__(self) -> str:
        return f"{_strip(self.left)} {self.op} {_strip(self.right)}"


BodyElem = ExtAtom | Compare


@record(frozen=True)
class Head:
    """Rule head: the atom holds now, or at ``time`` (an ``@``-head)."""

    atom: Atom
    time: Term | None = None

    def __str__(self) -> str:
        return str(self.atom) + (f" at {self.time}" if self.time is not None else "")


@record(frozen=True)
class Rule:
    head: Head
    body: tuple[BodyElem, ...] = ()
    loc: Loc | None = field(default=None, compare=False)

    @property
    def is_fact(self) -> bool:
        return not self.body

    def __str__(self) -> str:
        if not self.body:
            return f"{self.head}."
        return f"{self.head} :- {', '.join(str(b) for b in self.body)}."


@record(frozen=True)
class Program:
    rules: tuple[Rule, ...]
    dialect: str = "lars"

    def __str__(self) -> str:
        return "\n".join(str(r) for r in self.rules) + ("\n" if self.rules else "")


def expr_vars(e: Expr) -> set[str]:
    if isinstance(e, Var):
        return {e.name}
    if isinstance(e, BinOp):
        return expr_vars(e.left) | expr_vars(e.right)
    return set()


def _strip(e: Expr) -> str:
    s = str(e)
    return s[1:-1] if isinstance(e, BinOp) else s
