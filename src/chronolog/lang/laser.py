"""Laser's program syntax into the IR.

One rule per line, ``head :- body`` with body elements joined by ``and``:
``time_win(n, 0, 1, diamond(A))`` is ``A [n]``, ``box`` is ``always``,
``@(T, A)`` inside a window is ``A at T [n]``, ``tuple_win(n, ...)`` the
tuple-window forms, ``COMP(op, X, Y)`` a comparison, ``not(A)`` negation and
``@(T, h) :- ...`` an ``@``-head.  Laser also writes an atom right inside a
window (``time_win(2, 0, 1, p(X))``: p(X) now), ``diamond``/``box`` without a
window (over the whole timeline) and ``diamond(not(a))``, read here as
``not a [n]``.
"""

from __future__ import annotations

from chronolog.errors import ProgramError
from chronolog.ir import COMPARISON_OPS, BodyElem, Compare, ExtAtom, Head, Op, Program, Rule, TimeWindow, TupleWindow, Window
from chronolog.lang.lars import CMP_ALIASES, _Parser
from chronolog.lang.lexer import TokenStream, tokenize

WHOLE_TIMELINE = 2**31 - 1  # a window longer than any stream: clipped at the first time point


def parse_laser(text: str, filename: str = "<program>") -> Program:
    rules: list[Rule] = []
    for number, line in enumerate(text.splitlines(), 1):
        stripped = line.strip()
        if not stripped or stripped.startswith(("#", "%", "//")):
            continue
        tokens = tokenize("\n" * (number - 1) + line, filename)
        rules.append(_LaserParser(TokenStream(tokens)).laser_rule())
    return Program(tuple(rules), "laser")


class _LaserParser(_Parser):
    def laser_rule(self) -> Rule:
        start = self.ts.peek()
        head = self.laser_head()
        body: list[BodyElem] = []
        if self.ts.accept(":-"):
            body.append(self.laser_elem())
            while self.ts.accept("and"):
                body.append(self.laser_elem())
        self.ts.accept(".")
        if self.ts.peek().kind != "eof":
            self.ts.fail("expected 'and' or the end of the rule")
        return Rule(head, tuple(body), start.loc)

    def laser_head(self) -> Head:
        if self.ts.accept("@"):
            self.ts.expect("(")
            time = self.time()
            self.ts.expect(",")
            atom = self._paren_atom()
            self.ts.expect(")")
            return Head(atom, time)
        return Head(self.atom())

    def _paren_atom(self):  # type: ignore[no-untyped-def]
        if self.ts.accept("("):
            atom = self._paren_atom()
            self.ts.expect(")")
            return atom
        return self.atom()

    def laser_elem(self) -> BodyElem:
        tok = self.ts.peek()
        if tok.text == "not" and self.ts.at("(", 1):
            self.ts.next()
            self.ts.expect("(")
            inner = self.laser_elem()
            self.ts.expect(")")
            if not isinstance(inner, ExtAtom):
                raise ProgramError("not(...) needs an atom", tok.loc)
            return ExtAtom(inner.atom, inner.op, inner.window, inner.time, True, tok.loc)
        if tok.text == "COMP" or (tok.kind == "var" and tok.text == "COMP"):
            self.ts.next()
            self.ts.expect("(")
            op_tok = self.ts.next()
            op = CMP_ALIASES.get(op_tok.text, op_tok.text)
            if op not in COMPARISON_OPS:
                self.ts.fail("expected a comparison operator", op_tok)
            self.ts.expect(",")
            left = self.expr()
            self.ts.expect(",")
            right = self.expr()
            self.ts.expect(")")
            return Compare(op, left, right, tok.loc)
        if tok.text in ("time_win", "tuple_win"):
            self.ts.next()
            self.ts.expect("(")
            size_tok = self.ts.next()
            if size_tok.kind != "int":
                self.ts.fail("expected the window size", size_tok)
            window: Window
            if tok.text == "time_win":
                for expected in ("0", "1"):
                    self.ts.expect(",")
                    param = self.ts.next()
                    if param.text != expected:
                        raise ProgramError(
                            "only time_win(n, 0, 1, ...) (plain LARS time windows) is supported", param.loc
                        )
                window = TimeWindow(int(size_tok.text))
            else:
                window = TupleWindow(int(size_tok.text))
            self.ts.expect(",")
            inner = self.operator(window)
            self.ts.expect(")")
            return inner
        if tok.text in ("diamond", "box", "@") and self.ts.at("(", 1):
            return self.operator(None)
        return ExtAtom(self.atom(), loc=tok.loc)

    def operator(self, window: Window | None) -> ExtAtom:
        tok = self.ts.peek()
        if tok.text not in ("diamond", "box", "@") or not self.ts.at("(", 1):
            # an atom right inside a window: it must hold now
            return ExtAtom(self._paren_atom(), Op.NOW, None, None, False, tok.loc)
        self.ts.next()
        self.ts.expect("(")
        if tok.text == "@":
            time = self.time()
            self.ts.expect(",")
            atom = self._paren_atom()
            self.ts.expect(")")
            return ExtAtom(atom, Op.AT, window, time, False, tok.loc)
        negated = False
        if self.ts.at("not") and self.ts.at("(", 1):  # diamond(not(a)): read as not (diamond a)
            self.ts.next()
            self.ts.expect("(")
            negated = True
        atom = self._paren_atom()
        if negated:
            self.ts.expect(")")
        self.ts.expect(")")
        if window is None:  # no window: the whole timeline
            window = TimeWindow(WHOLE_TIMELINE)
        return ExtAtom(atom, Op.DIAMOND if tok.text == "diamond" else Op.BOX, window, None, negated, tok.loc)
