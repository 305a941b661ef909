"""Laser's program syntax (karmaresearch/Laser) into the IR.

Laser programs are one rule per line, ``head :- body`` with the body elements
joined by ``and`` and no trailing ``.`` (one is accepted).  The temporal
operators nest as terms; this module parses them into a small formula tree and
lowers it to the IR's extended atoms:

* ``time_win(L, 0, S, diamond(A))`` -> ``A [L*S]`` (Laser's window at t covers
  ``now - L*S .. now + U*S``; only U = 0, the past, is LARS);
  ``box`` -> ``always``; ``@(T, A)`` -> ``A at T [L*S]``; a bare atom right
  inside a window (``time_win(2, 0, 1, p(X))``) must hold now.
* ``tuple_win(N, ...)`` (Laser also writes ``tuple_win(N, 0, 1, ...)`` and
  ignores the two extra numbers) -> the tuple window ``[N #]``.
* ``diamond``/``box`` without a window range over the whole timeline;
  ``@(T, A)`` without a window is the windowless ``A at T``.
* ``not(F)`` negates; ``diamond(not(A))`` is ``not A always [n]`` (some point
  without A = not A at every point) and ``box(not(A))`` is ``not A [n]``.
* ``@(T, h) :- ...`` is an ``@``-head; ``COMP(op, X, Y)`` is ``X op Y``;
  ``MATH(op, R, X, Y)`` is ``R = X op Y``.
* ``'quoted'`` names (Laser's IRIs) are predicates or constants.
* Comments (Laser has none of its own): ``#``, ``%``, ``//`` to the end of
  the line, ``/* ... */``.
"""

from __future__ import annotations

from dataclasses import dataclass, replace

from chronolog.core.errors import ProgramError
from chronolog.dialects.lars.ir import (
    Atom,
    BinOp,
    BodyElem,
    Compare,
    Expr,
    ExtAtom,
    Head,
    Loc,
    Op,
    Program,
    Rule,
    Term,
    TimeWindow,
    TupleWindow,
    Window,
)
from chronolog.dialects.lars.parser import Parser, Token, tokenize

WHOLE_TIMELINE = 2**31 - 1  # a window longer than any stream: clipped at the first time point
NEGATED_CMP = {"=": "!=", "!=": "=", "<": ">=", ">=": "<", ">": "<=", "<=": ">"}
MATH_OPS = {"+": "+", "-": "-", "*": "*", "/": "/", "mod": "mod"}
UNSUPPORTED = {
    "or": "Laser's 'or' is not supported (write one rule per alternative)",
    "predicate_win": "Laser's predicate_win is not supported",
}


@dataclass(frozen=True, slots=True)
class _F:
    """A parsed Laser formula before lowering: kind is atom, not, diamond, box, at, win or cmp."""

    kind: str
    loc: Loc
    inner: _F | None = None
    atom: Atom | None = None
    time: Term | None = None
    window: Window | None = None
    cmp: Compare | None = None


def parse_laser(text: str, filename: str = "<program>") -> Program:
    """Parse a program in Laser's syntax; errors are ``ProgramError`` with a location."""
    return Program(tuple(LaserParser(tokenize(text, filename, laser=True)).program()), "laser")


class LaserParser(Parser):
    def program(self) -> list[Rule]:
        rules: list[Rule] = []
        while True:
            self.skip_newlines()
            if self.peek().kind == "eof":
                return rules
            rule = self.rule()
            rules.append(rule)
            if self.accept("."):
                continue  # another rule may follow on the same line
            if self.peek().kind not in ("newline", "eof"):
                self.fail("expected 'and' or the end of the rule" if rule.body else "expected ':-' or the end of the rule")

    def skip_newlines(self) -> None:
        while self.peek().kind == "newline":
            self.next()

    def rule(self) -> Rule:
        start = self.peek()
        head = self.head()
        body: list[BodyElem] = []
        if self.accept(":-"):
            self.skip_newlines()
            body.append(self.elem())
            while self.accept("and"):
                self.skip_newlines()
                body.append(self.elem())
            if self.at("or"):
                raise ProgramError(UNSUPPORTED["or"], self.peek().loc)
        return Rule(head, tuple(body), start.loc)

    def head(self) -> Head:
        if self.at("@") and self.at("(", 1):
            self.next()
            self.next()
            time = self.time()
            self.expect(",", "',' after the time of '@('")
            atom = self.paren_atom()
            self.expect(")", "')' closing '@('")
            return Head(atom, time)
        return Head(self.paren_atom())

    def atom(self) -> Atom:
        tok = self.peek()
        if tok.kind == "string":  # Laser's quoted predicate names ('http://...#p'(X))
            self.next()
            return Atom(tok.text, self.arguments())
        return super().atom()

    def paren_atom(self) -> Atom:
        tok = self.peek()
        if self.accept("("):
            self.nest(tok)
            atom = self.paren_atom()
            self.depth -= 1
            self.expect(")", "')' closing the parenthesis")
            return atom
        return self.atom()

    # ---------------------------------------------------------- formulas

    def elem(self) -> BodyElem:
        return self.lower(self.formula())

    def formula(self) -> _F:
        tok = self.peek()
        self.nest(tok)
        try:
            return self._formula(tok)
        finally:
            self.depth -= 1

    def _formula(self, tok: Token) -> _F:
        word = tok.text if tok.kind in ("ident", "var", "op") else ""
        call = self.at("(", 1)
        if word in UNSUPPORTED:
            raise ProgramError(UNSUPPORTED[word], tok.loc)
        if word in ("not", "diamond", "box"):
            self.next()
            return _F(word, tok.loc, inner=self.formula())
        if word == "@" and call:
            self.next()
            self.next()
            time = self.time()
            self.expect(",", "',' after the time of '@('")
            inner = self.formula()
            self.expect(")", "')' closing '@('")
            return _F("at", tok.loc, inner=inner, time=time)
        if word == "time_win" and call:
            return self.time_win(tok)
        if word == "tuple_win" and call:
            return self.tuple_win(tok)
        if word == "COMP" and call:
            return self.comp(tok)
        if word == "MATH" and call:
            return self.math(tok)
        if word == "(" and tok.kind == "op":
            self.next()
            inner = self.formula()
            self.expect(")", "')' closing the parenthesis")
            return inner
        if tok.kind in ("ident", "string"):
            return _F("atom", tok.loc, atom=self.atom())
        self.fail(
            "expected an atom, not(...), diamond(...), box(...), @(T, ...), time_win(...), tuple_win(...), "
            "COMP(...) or MATH(...)"
        )

    def integer(self, what: str) -> tuple[int, Token]:
        tok = self.peek()
        sign = 1
        if tok.text == "-" and tok.kind == "op" and self.peek(1).kind == "int":
            self.next()
            sign = -1
        num = self.peek()
        if num.kind != "int":
            self.fail(f"expected {what} (an integer)")
        self.next()
        return sign * int(num.text), tok

    def time_win(self, tok: Token) -> _F:
        self.next()
        self.next()
        size, size_tok = self.integer("the window length")
        self.expect(",", "',' after the window length")
        upper, upper_tok = self.integer("the window's upper bound")
        self.expect(",", "',' after the upper bound")
        unit, unit_tok = self.integer("the window's unit")
        self.expect(",", "',' before the windowed formula")
        if size < 0:
            raise ProgramError("the window length must not be negative", size_tok.loc)
        if upper != 0:
            raise ProgramError(
                "time_win(L, U, S, ...) with U != 0 (a window reaching into the future) is not supported; "
                "only time_win(L, 0, S, ...), the window [L*S], is LARS",
                upper_tok.loc,
            )
        if unit < 1:
            raise ProgramError("time_win(L, 0, S, ...) needs S >= 1 (S is the length of one unit)", unit_tok.loc)
        inner = self.formula()
        self.expect(")", "')' closing time_win(")
        return _F("win", tok.loc, inner=inner, window=TimeWindow(size * unit))

    def tuple_win(self, tok: Token) -> _F:
        self.next()
        self.next()
        size, size_tok = self.integer("the number of tuples")
        self.expect(",", "',' after the number of tuples")
        if self.peek().kind == "int" and self.at(",", 1):  # tuple_win(N, 0, 1, ...): Laser ignores the two
            self.integer("a window parameter")
            self.expect(",")
            self.integer("a window parameter")
            self.expect(",", "',' before the windowed formula")
        if size < 1:
            raise ProgramError("a tuple window needs at least 1 tuple", size_tok.loc)
        inner = self.formula()
        self.expect(")", "')' closing tuple_win(")
        return _F("win", tok.loc, inner=inner, window=TupleWindow(size))

    def comp(self, tok: Token) -> _F:
        self.next()
        self.next()
        op = self.comparison_op()
        self.expect(",", "',' after the comparison operator")
        left = self.expr()
        self.expect(",", "',' between the operands of COMP")
        right = self.expr()
        self.expect(")", "')' closing COMP(")
        return _F("cmp", tok.loc, cmp=Compare(op, left, right, tok.loc))

    def math(self, tok: Token) -> _F:
        self.next()
        self.next()
        op_tok = self.next()
        if op_tok.text not in MATH_OPS or op_tok.kind not in ("op", "ident"):
            self.fail("expected an arithmetic operator (+ - * / mod)", op_tok)
        args: list[Expr] = []
        for what in ("result", "left operand", "right operand"):
            self.expect(",", f"',' before the {what} of MATH")
            args.append(self.expr())
        self.expect(")", "')' closing MATH(")
        cmp = Compare("=", args[0], BinOp(MATH_OPS[op_tok.text], args[1], args[2]), tok.loc)
        return _F("cmp", tok.loc, cmp=cmp)

    # ---------------------------------------------------------- lowering

    def lower(self, f: _F) -> BodyElem:
        if f.kind == "cmp":
            assert f.cmp is not None
            return f.cmp
        if f.kind == "not" and f.inner is not None and f.inner.kind == "cmp":
            c = f.inner.cmp
            assert c is not None
            return Compare(NEGATED_CMP[c.op], c.left, c.right, f.loc)
        if f.kind == "win":
            assert f.inner is not None and f.window is not None
            return replace(self.temporal(f.inner, f.window), loc=f.loc)
        return self.temporal(f, None)

    def temporal(self, f: _F, window: Window | None) -> ExtAtom:
        """The extended atom of ``f`` (under ``window`` if one encloses it)."""
        if f.kind == "atom":
            assert f.atom is not None
            return ExtAtom(f.atom, Op.NOW, None, None, False, f.loc)  # a bare atom must hold now
        if f.kind == "not":
            assert f.inner is not None
            if f.inner.kind == "win":
                if window is not None:
                    raise ProgramError("nested windows are not supported", f.inner.loc)
                inner = self.temporal(f.inner.inner, f.inner.window)  # type: ignore[arg-type]
            else:
                inner = self.temporal(f.inner, window)
            if inner.negated:
                raise ProgramError("double negation is not supported", f.loc)
            return replace(inner, negated=True, loc=f.loc)
        if f.kind in ("diamond", "box"):
            assert f.inner is not None
            target, negated = f.inner, False
            if target.kind == "not" and target.inner is not None:
                target, negated = target.inner, True
            if target.kind != "atom" or target.atom is None:
                raise ProgramError(f"{f.kind}(...) needs an atom or not(atom) (nested operators are not supported)", target.loc)
            op = Op.DIAMOND if f.kind == "diamond" else Op.BOX
            if negated:  # diamond(not(A)) = not box(A); box(not(A)) = not diamond(A)
                op = Op.BOX if op is Op.DIAMOND else Op.DIAMOND
            return ExtAtom(target.atom, op, window or TimeWindow(WHOLE_TIMELINE), None, negated, f.loc)
        if f.kind == "at":
            assert f.inner is not None
            target = f.inner
            if target.kind == "not":
                raise ProgramError("@(T, not(A)) is not supported; write not(@(T, A))", target.loc)
            if target.kind != "atom" or target.atom is None:
                raise ProgramError("@(T, ...) needs an atom (nested operators are not supported)", target.loc)
            return ExtAtom(target.atom, Op.AT, window, f.time, False, f.loc)
        if f.kind == "win":
            raise ProgramError("nested windows are not supported", f.loc)
        raise ProgramError("a comparison cannot stand under a window, a temporal operator or @", f.loc)


def laser_program(files: list[tuple[str, str]]) -> Program:
    """The one program of Laser files [(file name, text)] (the registry's ``parse`` of ``laser``)."""
    return Program(tuple(r for name, text in files for r in parse_laser(text, name).rules), "laser")
