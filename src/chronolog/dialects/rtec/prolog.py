"""A reader of Prolog clauses (standard operator syntax), for RTEC event descriptions.

It reads terms, not programs: what a clause means is the front-end's business
(``chronolog.dialects.rtec.parser``).  Terms are small Python values so that the solver
(``chronolog.dialects.rtec.solve``) can use them directly:

* an atom is a ``str``, a number an ``int`` or ``float``;
* a variable is a ``PVar`` (``_`` is a fresh one at each occurrence);
* a compound is a ``tuple`` ``(functor, arg1, ..., argN)``; a list is built
  from ``(".", head, tail)`` and ``"[]"``.

Each clause comes with the ``Loc`` of its first token, and each top-level body
goal with its own, so errors name ``file:line:column``.
"""

from __future__ import annotations

import re
from typing import Any

from chronolog.core.errors import ProgramError
from chronolog.core.source import Loc

Term = Any  # str | int | float | PVar | tuple

# priority, type of the infix and prefix operators this reader knows (ISO's table)
INFIX: dict[str, tuple[int, str]] = {
    ":-": (1200, "xfx"), "-->": (1200, "xfx"), ";": (1100, "xfy"), "|": (1100, "xfy"), "->": (1050, "xfy"),
    ",": (1000, "xfy"),
    **{op: (700, "xfx") for op in ("=", "\\=", "==", "\\==", "@<", "@>", "@=<", "@>=", "=..", "is", "=:=", "=\\=",
                                    "<", ">", "=<", ">=")},
    "+": (500, "yfx"), "-": (500, "yfx"), "/\\": (500, "yfx"), "\\/": (500, "yfx"),
    "*": (400, "yfx"), "/": (400, "yfx"), "//": (400, "yfx"), "mod": (400, "yfx"), "rem": (400, "yfx"),
    "<<": (400, "yfx"), ">>": (400, "yfx"),
    "**": (200, "xfx"), "^": (200, "xfy"),
}
PREFIX: dict[str, tuple[int, str]] = {":-": (1200, "fx"), "?-": (1200, "fx"), "\\+": (900, "fy"),
                                      "-": (200, "fy"), "+": (200, "fy"), "\\": (200, "fy")}


class PVar:
    """A variable of a read term; one object per variable of a clause."""

    __slots__ = ("name",)

    def __init__(self, name: str) -> None:
        self.name = name

    def __repr__(self) -> str:
        return self.name


_TOKEN = re.compile(r"""
    (?P<ws>\s+)
  | (?P<comment>%[^\n]*)
  | (?P<block>/\*)
  | (?P<float>\d+\.\d+(?:[eE][+-]?\d+)?)
  | (?P<int>0'.|0x[0-9a-fA-F]+|0o[0-7]+|0b[01]+|\d+)
  | (?P<var>[A-Z_][A-Za-z0-9_]*)
  | (?P<name>[a-z][A-Za-z0-9_]*)
  | (?P<qname>'(?:[^'\\]|\\.|'')*')
  | (?P<string>"(?:[^"\\]|\\.|"")*")
  | (?P<end>\.(?=\s|%|$))
  | (?P<punct>[()\[\]{},|!;])
  | (?P<symbol>[+\-*/\\^<>=~:.?@#&$]+)
""", re.VERBOSE)


class _Tok:
    __slots__ = ("kind", "text", "line", "col", "layout_before")

    def __init__(self, kind: str, text: str, line: int, col: int, layout_before: bool) -> None:
        self.kind, self.text, self.line, self.col, self.layout_before = kind, text, line, col, layout_before


def _tokens(text: str, filename: str) -> list[_Tok]:
    out: list[_Tok] = []
    i, line, line_start, layout = 0, 1, 0, True
    n = len(text)
    while i < n:
        m = _TOKEN.match(text, i)
        col = i - line_start + 1
        if m is None:
            raise ProgramError(f"unexpected character {text[i]!r}", Loc(filename, line, col))
        kind = m.lastgroup or ""
        j = m.end()
        if kind == "block":
            close = text.find("*/", j)
            if close < 0:
                raise ProgramError("unterminated /* comment", Loc(filename, line, col))
            j = close + 2
        if kind in ("ws", "comment", "block"):
            layout = True
        else:
            out.append(_Tok(kind, m.group(), line, col, layout))
            layout = False
        chunk = text[i:j]
        nl = chunk.count("\n")
        if nl:
            line += nl
            line_start = i + chunk.rfind("\n") + 1
        i = j
    out.append(_Tok("eof", "", line, i - line_start + 1, True))
    return out


def _unquote(text: str) -> str:
    body = text[1:-1]
    q = text[0]
    body = body.replace(q + q, q)
    return re.sub(r"\\(.)", lambda m: {"n": "\n", "t": "\t", "\\": "\\", "'": "'", '"': '"'}.get(m.group(1), m.group(1)),
                  body)


class Clause:
    """One clause as read: the term, where it starts, and where each top-level body goal starts."""

    __slots__ = ("term", "loc", "goal_locs")

    def __init__(self, term: Term, loc: Loc, goal_locs: list[Loc]) -> None:
        self.term, self.loc, self.goal_locs = term, loc, goal_locs


class _Parser:
    def __init__(self, text: str, filename: str) -> None:
        self.filename = filename
        self.toks = _tokens(text, filename)
        self.i = 0
        self.vars: dict[str, PVar] = {}
        # id(term) -> (term, where it starts): the term kept, so that its id is not reused
        self.goal_locs: dict[int, tuple[Term, Loc]] = {}

    def loc(self, tok: _Tok) -> Loc:
        return Loc(self.filename, tok.line, tok.col)

    def error(self, message: str, tok: _Tok | None = None) -> ProgramError:
        return ProgramError(message, self.loc(tok or self.toks[self.i]))

    @property
    def tok(self) -> _Tok:
        return self.toks[self.i]

    def clauses(self) -> list[Clause]:
        out = []
        while self.tok.kind != "eof":
            self.vars, self.goal_locs = {}, {}
            start = self.tok
            term = self.parse(1200)
            if self.tok.kind != "end":
                raise self.error(f"expected an operator or '.' (end of clause), found {self._show(self.tok)}")
            self.i += 1
            out.append(Clause(term, self.loc(start), self._body_locs(term, start)))
        return out

    def _body_locs(self, term: Term, start: _Tok) -> list[Loc]:
        if isinstance(term, tuple) and term[0] == ":-" and len(term) == 3:
            locs, body = [], term[2]
            while isinstance(body, tuple) and body[0] == "," and len(body) == 3:
                locs.append(self._goal_loc(body[1], start))
                body = body[2]
            locs.append(self._goal_loc(body, start))
            return locs
        return []

    def _goal_loc(self, goal: Term, start: _Tok) -> Loc:
        """Where a body goal starts (the clause's start for one the parser did not make itself)."""
        got = self.goal_locs.get(id(goal))
        return got[1] if got is not None and got[0] is goal else self.loc(start)

    @staticmethod
    def _show(tok: _Tok) -> str:
        return "end of file" if tok.kind == "eof" else repr(tok.text)

    # ---------------------------------------------------------------- operator precedence

    def parse(self, max_prec: int) -> Term:
        start = self.tok
        left, prec = self.primary(max_prec)
        return self.infix(left, prec, max_prec, self.loc(start))

    def infix(self, left: Term, left_prec: int, max_prec: int, where: Loc) -> Term:
        while True:
            tok = self.tok
            name = tok.text if tok.kind in ("symbol", "name", "punct") else None
            if name is None or name not in INFIX or (tok.kind == "punct" and name not in (",", "|", ";")):
                return left
            prec, kind = INFIX[name]
            if prec > max_prec:
                return left
            left_max = prec if kind == "yfx" else prec - 1
            right_max = prec if kind == "xfy" else prec - 1
            if left_prec > left_max:
                return left
            self.i += 1
            right = self.parse(right_max)
            if name == "|":
                name = ";"
            term = (name, left, right)
            self.goal_locs[id(term)] = (term, where)
            left, left_prec = term, prec

    def primary(self, max_prec: int) -> tuple[Term, int]:
        tok = self.tok
        term, prec = self._primary(max_prec)
        if isinstance(term, (tuple, str)):
            self.goal_locs[id(term)] = (term, self.loc(tok))
        return term, prec

    def _primary(self, max_prec: int) -> tuple[Term, int]:
        tok = self.tok
        k = tok.kind
        if k == "int":
            self.i += 1
            return _int(tok.text), 0
        if k == "float":
            self.i += 1
            return float(tok.text), 0
        if k == "var":
            self.i += 1
            if tok.text == "_":
                return PVar("_"), 0
            return self.vars.setdefault(tok.text, PVar(tok.text)), 0
        if k == "string":
            self.i += 1
            return _unquote(tok.text), 0
        if k == "punct":
            if tok.text == "(":
                self.i += 1
                inner = self.parse(1200)
                self.expect(")")
                return inner, 0
            if tok.text == "[":
                return self.list_(), 0
            if tok.text == "{":
                self.i += 1
                if self.tok.text == "}":
                    self.i += 1
                    return "{}", 0
                inner = self.parse(1200)
                self.expect("}")
                return ("{}", inner), 0
            if tok.text == "!":
                self.i += 1
                return "!", 0
            if tok.text in (";", "|", ","):
                raise self.error(f"unexpected {tok.text!r}: a term is missing before it")
            raise self.error(f"unexpected {tok.text!r}")
        if k in ("name", "qname", "symbol"):
            name = _unquote(tok.text) if k == "qname" else tok.text
            self.i += 1
            nxt = self.tok
            if nxt.kind == "punct" and nxt.text == "(" and not nxt.layout_before:
                self.i += 1
                args = [self.parse(999)]
                while self.tok.kind == "punct" and self.tok.text == ",":
                    self.i += 1
                    args.append(self.parse(999))
                self.expect(")")
                return (name, *args), 0
            if k != "qname" and name == "-" and nxt.kind in ("int", "float") and not nxt.layout_before:
                self.i += 1
                return -(_int(nxt.text) if nxt.kind == "int" else float(nxt.text)), 0
            if k != "qname" and name in PREFIX and not self._ends_term(nxt):
                prec, kind = PREFIX[name]
                if prec > max_prec:
                    prec = 999
                arg_max = prec if kind == "fy" else prec - 1
                arg = self.parse(arg_max)
                return (name, arg), prec
            prec = max(INFIX.get(name, (0, ""))[0], PREFIX.get(name, (0, ""))[0]) if k != "qname" else 0
            return name, (prec if prec <= max_prec else 0)
        if k == "end":
            raise self.error("unexpected end of clause: a term is missing")
        if k == "eof":
            raise self.error("unexpected end of file: the clause is not finished (missing '.'?)")
        raise self.error(f"unexpected {tok.text!r}")

    @staticmethod
    def _ends_term(tok: _Tok) -> bool:
        if tok.kind in ("end", "eof"):
            return True
        if tok.kind == "punct" and tok.text in (")", "]", "}", ",", "|"):
            return True
        return tok.kind in ("symbol", "name") and tok.text in INFIX and tok.text not in PREFIX and tok.text != "-"

    def list_(self) -> Term:
        self.expect("[")
        if self.tok.kind == "punct" and self.tok.text == "]":
            self.i += 1
            return "[]"
        items = [self.parse(999)]
        while self.tok.kind == "punct" and self.tok.text == ",":
            self.i += 1
            items.append(self.parse(999))
        tail: Term = "[]"
        if self.tok.kind == "punct" and self.tok.text == "|":
            self.i += 1
            tail = self.parse(999)
        self.expect("]")
        for item in reversed(items):
            tail = (".", item, tail)
        return tail

    def expect(self, text: str) -> None:
        if self.tok.text != text or self.tok.kind not in ("punct",):
            raise self.error(f"expected {text!r}, found {self._show(self.tok)}")
        self.i += 1


def _int(text: str) -> int:
    if text.startswith("0'"):
        return ord(text[2])
    return int(text, 0) if text[:2] in ("0x", "0o", "0b") else int(text)


def read_clauses(text: str, filename: str) -> list[Clause]:
    """Every clause of a Prolog text, or a ``ProgramError`` at the first syntax error."""
    return _Parser(text, filename).clauses()


def term_text(term: Term) -> str:
    """A ground term as Prolog's ``write/1`` prints it without spaces: ``close_ballot(10,3)``."""
    if isinstance(term, tuple):
        if term[0] == "." and len(term) == 3:
            items, t = [], term
            while isinstance(t, tuple) and t[0] == "." and len(t) == 3:
                items.append(term_text(t[1]))
                t = t[2]
            tail = "" if t == "[]" else "|" + term_text(t)
            return "[" + ",".join(items) + tail + "]"
        if len(term) == 3 and term[0] in INFIX and not term[0].isalpha():
            return f"{term_text(term[1])}{term[0]}{term_text(term[2])}"
        return f"{term[0]}({','.join(term_text(a) for a in term[1:])})"
    if isinstance(term, PVar):
        return "_"
    return str(term)
