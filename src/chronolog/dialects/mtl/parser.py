"""DatalogMTL in MeTeoR's syntax: programs (``.mtl``) and data (``Pred(a,b)@[1,3]``).

One rule or fact per line, as MeTeoR reads them::

    ShortStop(V):-NotPos(V), Boxminus[1,1]Pos(V), Boxminus[2,2]NotPos(V)
    a1:Scientist(X):- Diamondminus[1,1]a1:FullProfessor(X)
    Alarm(X):-Temp(X) Since[0,5] Hot(X)
    Boxplus[0,10]Alert(X):-Trigger(X)
    Pos(v1)@[1,3]

Operators: ``Boxminus``, ``Diamondminus``, ``Boxplus``, ``Diamondplus``
(prefix) and ``Since``, ``Until`` (infix), each with an interval whose
brackets say whether an end is included (``[0,inf)``, ``(1,2.5]``,
``[1/2,3]``).  Predicate names may carry a prefix (``a1:Lecturer``).  In
rules, a term starting with an upper-case letter or ``_`` is a variable.
Comments start with ``%`` or ``#``.  Errors name file:line:column.
"""

from __future__ import annotations

import re
from fractions import Fraction
from math import inf

from chronolog.core.errors import InputError, ProgramError
from chronolog.core.source import Loc
from chronolog.dialects.mtl.intervals import Iv, make, norm, point
from chronolog.dialects.mtl.syntax import (
    BINARY,
    UNARY,
    Atom,
    Binary,
    Fact,
    Literal,
    MtlProgram,
    Negated,
    Rule,
    Unary,
    Var,
    variables,
)

# Letters of any script, as MeTeoR (which splits a fact's text at its commas) takes them.
_NAME = re.compile(r"[^\W\d][\w\-]*(?::\w[\w\-]*)*")
_NUM = re.compile(r"-?(?:\d+(?:\.\d+)?(?:/\d+)?|\.\d+)")
_TERM = re.compile(r'"(?:[^"\\]|\\.)*"|' + _NUM.pattern + r"|" + _NAME.pattern)


def number(text: str) -> Fraction | int:
    """``7``, ``7.5``, ``15/2`` as an exact rational (an ``int`` when integral)."""
    return norm(Fraction(text))


class _Line:
    """A cursor over one line, raising errors at its column."""

    def __init__(self, text: str, file: str, line: int, error: type = ProgramError) -> None:
        self.text, self.file, self.line, self.pos, self.error = text, file, line, 0, error

    def loc(self, pos: int | None = None) -> Loc:
        return Loc(self.file, self.line, (self.pos if pos is None else pos) + 1)

    def fail(self, message: str, pos: int | None = None):  # type: ignore[no-untyped-def]
        raise self.error(message, self.loc(pos))

    def skip(self) -> None:
        while self.pos < len(self.text) and self.text[self.pos] in " \t":
            self.pos += 1

    def peek(self, s: str) -> bool:
        self.skip()
        return self.text.startswith(s, self.pos)

    def expect(self, s: str, what: str) -> None:
        if not self.peek(s):
            self.fail(f"expected {what}, found {self.found()}")
        self.pos += len(s)

    def found(self) -> str:
        self.skip()
        if self.pos >= len(self.text):
            return "the end of the line"
        return repr(self.text[self.pos:self.pos + 12])

    def match(self, pattern: re.Pattern) -> str | None:
        self.skip()
        m = pattern.match(self.text, self.pos)
        if m is None:
            return None
        self.pos = m.end()
        return m.group(0)

    def at_end(self) -> bool:
        self.skip()
        return self.pos >= len(self.text)

    # ------------------------------------------------------------ pieces

    def interval(self) -> Iv:
        start = self.pos
        self.skip()
        if self.peek("["):
            lc = True
        elif self.peek("("):
            lc = False
        else:
            self.fail(f"expected an interval such as [1,3] or (0,inf), found {self.found()}")
        self.pos += 1
        lo = self._end()
        self.expect(",", "',' between the interval's ends")
        hi = self._end()
        if self.peek("]"):
            hc = True
        elif self.peek(")"):
            hc = False
        else:
            self.fail(f"expected ']' or ')' closing the interval, found {self.found()}")
        self.pos += 1
        if hi == inf and hc:
            self.fail("an interval running to inf is open on the right: write ')'", start)
        iv = make(lo, lc, hi, hc)
        if iv is None:
            self.fail("empty interval", start)
        return iv  # type: ignore[return-value]

    def _end(self) -> Fraction | float:
        self.skip()
        if self.text.startswith("inf", self.pos) or self.text.startswith("+inf", self.pos):
            self.pos += 3 if self.text[self.pos] == "i" else 4
            return inf
        if self.text.startswith("-inf", self.pos):
            self.pos += 4
            return -inf
        got = self.match(_NUM)
        if got is None:
            self.fail(f"expected a number or inf, found {self.found()}")
        try:
            return number(got)  # type: ignore[arg-type]
        except (ValueError, ZeroDivisionError):
            self.fail(f"bad number {got!r}", self.pos - len(got))  # type: ignore[arg-type]

    def atom(self, in_rule: bool) -> Atom:
        self.skip()
        at = self.pos
        name = self.match(_NAME)
        if name is None:
            self.fail(f"expected a predicate, found {self.found()}")
        if name in UNARY or name in BINARY:
            self.fail(f"expected a predicate, found the operator {name}", at)
        if name == "not":
            self.fail("'not' goes only in front of a whole body literal (not P(X), not Boxminus[0,2]P(X)), "
                      "not under an operator, in an operand of Since/Until or in a head", at)
        if name in ("NOT", "Not"):
            self.fail(f"negation is written 'not', not {name!r}", at)
        args: list = []
        if self.peek("("):
            self.pos += 1
            while True:
                self.skip()
                tp = self.pos
                term = self.match(_TERM)
                if term is None:
                    self.fail(f"expected a term, found {self.found()}")
                if term.startswith('"'):
                    args.append(term[1:-1].replace('\\"', '"').replace("\\\\", "\\"))
                elif in_rule and (term[0].isupper() or term[0] == "_") and ":" not in term:
                    args.append(Var(term))
                else:
                    args.append(term)
                del tp
                if self.peek(","):
                    self.pos += 1
                    continue
                self.expect(")", "',' or ')' in the argument list")
                break
        return Atom(name, tuple(args), self.loc(at))  # type: ignore[arg-type]

    def unary(self) -> Literal:
        self.skip()
        at = self.pos
        m = _NAME.match(self.text, self.pos)
        if m is not None and m.group(0) in UNARY:
            self.pos = m.end()
            rho = self.interval()
            if rho[0] < 0:
                self.fail("operator intervals must not start below 0", at)
            return Unary(m.group(0), rho, self.unary(), self.loc(at))
        if self.peek("("):
            self.pos += 1
            inner = self.literal()
            self.expect(")", "')' closing the parenthesis")
            return inner
        return self.atom(in_rule=True)

    def body_literal(self) -> Literal:
        """A body literal, possibly negated: ``not`` covers the whole literal that
        follows (``not A(X) Since[0,2] B(X)`` is ``not (A(X) Since[0,2] B(X))``)."""
        self.skip()
        at = self.pos
        m = _NAME.match(self.text, self.pos)
        if m is not None and m.group(0) == "not":
            self.pos = m.end()
            return Negated(self.literal(), self.loc(at))
        return self.literal()

    def literal(self) -> Literal:
        left = self.unary()
        self.skip()
        m = _NAME.match(self.text, self.pos)
        if m is not None and m.group(0) in BINARY:
            at = self.pos
            self.pos = m.end()
            rho = self.interval()
            if rho[0] < 0:
                self.fail("operator intervals must not start below 0", at)
            right = self.unary()
            return Binary(m.group(0), rho, left, right, self.loc(at))
        return left


def _strip_comment(text: str) -> str:
    for mark in ("%", "#"):
        cut = text.find(mark)
        if cut != -1:
            text = text[:cut]
    return text.rstrip()


def parse_mtl(text: str, filename: str = "<program>") -> MtlProgram:
    rules: list[Rule] = []
    facts: list[Fact] = []
    for n, raw in enumerate(text.splitlines(), 1):
        body_text = _strip_comment(raw)
        if not body_text.strip():
            continue
        c = _Line(body_text, filename, n)
        c.skip()
        start = c.pos
        if ":-" not in body_text:
            facts.append(_fact(c, True))
            continue
        head: Literal
        m = _NAME.match(c.text, c.pos)
        if m is not None and m.group(0) in ("Boxminus", "Boxplus"):
            head = c.unary()
        elif m is not None and m.group(0) in UNARY:
            c.fail(f"{m.group(0)} is not allowed in a rule head (only Boxminus and Boxplus)")
        else:
            head = c.atom(in_rule=True)
        c.expect(":-", "':-' after the rule head")
        body = [c.body_literal()]
        while c.peek(","):
            c.pos += 1
            body.append(c.body_literal())
        if not c.at_end():
            c.fail(f"expected ',' or the end of the rule, found {c.found()}")
        rule = Rule(head, tuple(body), Loc(filename, n, start + 1))
        _check_safe(rule, c)
        rules.append(rule)
    return MtlProgram(tuple(rules), tuple(facts))


def _check_safe(rule: Rule, c: _Line) -> None:
    bound: set[str] = set()
    for lit in rule.body:
        if not isinstance(lit, Negated):
            bound |= _bound(lit)
    free = sorted(variables(rule.head) - bound)
    if free:
        c.fail(f"unsafe rule: head variable {free[0]} does not occur in a positive body literal "
               f"(outside the left operand of Since/Until)", rule.loc.col - 1 if rule.loc else 0)
    for lit in rule.body:
        free = sorted(variables(lit) - bound) if isinstance(lit, Negated) else []
        if free:
            assert lit.loc is not None
            c.fail(f"unsafe negation: variable {free[0]} of this 'not' does not occur in a positive body literal "
                   f"(outside the left operand of Since/Until)", lit.loc.col - 1)


def _bound(lit: Literal) -> set[str]:
    if isinstance(lit, Binary):
        return _bound(lit.right)
    return variables(lit)


def _fact(c: _Line, in_program: bool) -> Fact:
    atom = c.atom(in_rule=False)
    c.expect("@", "'@' and the fact's interval (e.g. Pos(v1)@[1,3])")
    at = c.match(_NUM) if not (c.peek("[") or c.peek("(")) else None
    iv = c.interval() if at is None else point(number(at))  # MeTeoR's Pos(v1)@3: the point [3,3]
    if not c.at_end():
        c.fail(f"expected the end of the line after the fact, found {c.found()}")
    return Fact(atom.pred, tuple(str(a) for a in atom.args), iv, atom.loc)


def parse_fact_line(text: str, filename: str, line: int) -> Fact | None:
    """One line of a MeTeoR data file (None for a blank or comment line); InputError if bad."""
    body = _strip_comment(text)
    if not body.strip():
        return None
    return _fact(_Line(body, filename, line, InputError), False)


_INT_INTERVAL = re.compile(r"([\[(])(-?\d+),(-?\d+)([\])])")


def interval_from_text(text: str, filename: str = "<interval>", line: int = 1) -> Iv:
    """``[1,3)``, ``(2,7/2]``, ``[5,inf)`` as an interval; InputError naming the place if bad."""
    m = _INT_INTERVAL.fullmatch(text)
    if m is not None:  # the common case, integral ends without spaces: no cursor, no Fraction
        got = make(int(m.group(2)), m.group(1) == "[", int(m.group(3)), m.group(4) == "]")
        if got is not None:
            return got
    c = _Line(text, filename, line, InputError)
    iv = c.interval()
    if not c.at_end():
        c.fail(f"expected the end of the interval, found {c.found()}")
    return iv
