"""The native ``lars`` dialect: Ticker's rule syntax (../spec/LARS.md) into the IR."""

from __future__ import annotations

from chronolog.errors import ProgramError
from chronolog.ir import (
    COMPARISON_OPS,
    Atom,
    BinOp,
    BodyElem,
    Compare,
    Const,
    Expr,
    ExtAtom,
    Head,
    Op,
    Program,
    Rule,
    Term,
    TimeWindow,
    TupleWindow,
    Var,
    Window,
)
from chronolog.lang.lexer import TokenStream, tokenize, unquote

UNITS = {"sec": 1, "s": 1, "min": 60, "h": 3600}
REJECTED_UNITS = ("msec", "ms")
CMP_ALIASES = {"==": "=", "<>": "!="}
BINARY_BUILTINS = {"eq": "=", "neq": "!=", "lt": "<", "leq": "<=", "gt": ">", "geq": ">="}
ARITH_BUILTINS = {"plus": "+", "minus": "-", "times": "*", "divide": "/", "modulo": "mod"}
RANGE_BUILTINS = {"leqleq": ("<=", "<="), "ltlt": ("<", "<"), "ltleq": ("<", "<="), "leqlt": ("<=", "<")}


def parse_lars(text: str, filename: str = "<program>") -> Program:
    parser = _Parser(TokenStream(tokenize(text, filename)))
    rules: list[Rule] = []
    while parser.ts.peek().kind != "eof":
        rules.append(parser.rule())
    return Program(tuple(rules), "lars")


class _Parser:
    def __init__(self, ts: TokenStream) -> None:
        self.ts = ts

    def rule(self) -> Rule:
        start = self.ts.peek()
        head = self.head()
        body: list[BodyElem] = []
        if self.ts.accept(":-"):
            body.extend(self.elem())
            while self.ts.accept(","):
                body.extend(self.elem())
        self.ts.expect(".", "'.' at the end of the rule" if body else "':-' or '.' after the head")
        return Rule(head, tuple(body), start.loc)

    def head(self) -> Head:
        atom = self.atom()
        if self.ts.accept("at"):
            return Head(atom, self.time())
        return Head(atom)

    def elem(self) -> list[BodyElem]:
        """One body element (a range built-in gives two comparisons)."""
        tok = self.ts.peek()
        if tok.kind == "ident" and tok.text == "not" and self.ts.peek(1).kind == "ident":
            self.ts.next()
            ext = self.ext()
            if ext.negated:
                raise ProgramError("negated twice ('not ... not in')", tok.loc)
            return [ExtAtom(ext.atom, ext.op, ext.window, ext.time, True, tok.loc)]
        if tok.kind == "ident" and self.ts.at("(", 1) and tok.text in _BUILTINS:
            return self.builtin()
        if tok.kind == "ident" and not self._ident_compare():
            return [self.ext()]
        left = self.expr()
        op_tok = self.ts.peek()
        op = CMP_ALIASES.get(op_tok.text, op_tok.text)
        if op_tok.kind != "op" or op not in COMPARISON_OPS:
            self.ts.fail("expected a comparison operator (= != < <= > >=)")
        self.ts.next()
        return [Compare(op, left, self.expr(), tok.loc)]

    def _ident_compare(self) -> bool:
        """``a = b``: a constant on the left of a comparison, not an atom."""
        nxt = self.ts.peek(1)
        return nxt.kind == "op" and CMP_ALIASES.get(nxt.text, nxt.text) in COMPARISON_OPS

    def builtin(self) -> list[BodyElem]:
        name = self.ts.next()
        self.ts.expect("(")
        args = [self.expr()]
        while self.ts.accept(","):
            args.append(self.expr())
        self.ts.expect(")")
        n, loc = name.text, name.loc
        want = 2 if n in BINARY_BUILTINS or n == "incr" else 3
        if len(args) != want:
            raise ProgramError(f"built-in {n} takes {want} arguments, not {len(args)}", loc)
        if n in BINARY_BUILTINS:
            return [Compare(BINARY_BUILTINS[n], args[0], args[1], loc)]
        if n == "incr":
            return [Compare("=", args[1], BinOp("+", args[0], Const(1)), loc)]
        if n in ARITH_BUILTINS:
            return [Compare("=", args[2], BinOp(ARITH_BUILTINS[n], args[0], args[1]), loc)]
        first, second = RANGE_BUILTINS[n]
        return [Compare(first, args[0], args[1], loc), Compare(second, args[1], args[2], loc)]

    def ext(self) -> ExtAtom:
        start = self.ts.peek()
        atom = self.atom()
        if self.ts.accept("at"):
            time = self.time()
            neg = self._postfix_not()
            window = self.window() if self._window_follows() else None
            return ExtAtom(atom, Op.AT, window, time, neg, start.loc)
        if self.ts.accept("always"):
            neg = self._postfix_not()
            if not self._window_follows():
                self.ts.fail("expected a window like [3] after 'always'")
            return ExtAtom(atom, Op.BOX, self.window(), None, neg, start.loc)
        neg = self._postfix_not()
        if self._window_follows():
            return ExtAtom(atom, Op.DIAMOND, self.window(), None, neg, start.loc)
        if neg:
            self.ts.fail("expected a window after 'not'")
        return ExtAtom(atom, Op.NOW, None, None, False, start.loc)

    def _postfix_not(self) -> bool:
        """Ticker also writes ``p not in [3]`` / ``p not [3]`` for ``not p [3]``."""
        if self.ts.at("not") and (self.ts.at("in", 1) or self.ts.at("[", 1)):
            self.ts.next()
            return True
        return False

    def _window_follows(self) -> bool:
        return self.ts.at("[") or (self.ts.at("in") and self.ts.at("[", 1))

    def window(self) -> Window:
        self.ts.accept("in")
        self.ts.expect("[", "a window '['")
        if self.ts.at("t") and self.ts.peek(1).kind == "int":
            self.ts.next()  # older Ticker programs write time windows as [t 300]
        tok = self.ts.next()
        if tok.kind != "int":
            self.ts.fail("expected the window size (an integer)", tok)
        size = int(tok.text)
        if self.ts.accept("#"):
            self.ts.expect("]")
            if size < 1:
                raise ProgramError("a tuple window needs at least 1 tuple", tok.loc)
            return TupleWindow(size)
        unit = self.ts.peek()
        if unit.kind == "ident":
            self.ts.next()
            if unit.text in REJECTED_UNITS:
                raise ProgramError(f"unit {unit.text!r} is finer than one time point (1 time point = 1 sec)", unit.loc)
            if unit.text not in UNITS:
                raise ProgramError(f"unknown time unit {unit.text!r} (use sec, s, min or h)", unit.loc)
            size *= UNITS[unit.text]
        self.ts.expect("]", "']' closing the window")
        return TimeWindow(size)

    def time(self) -> Term:
        tok = self.ts.next()
        if tok.kind == "var":
            return Var(tok.text)
        if tok.kind == "int":
            return Const(int(tok.text))
        self.ts.fail("expected a time (a variable or an integer)", tok)
        raise AssertionError

    def atom(self) -> Atom:
        tok = self.ts.next()
        if tok.kind != "ident":
            self.ts.fail("expected a predicate (starting with a lowercase letter)", tok)
        args: list[Term] = []
        if self.ts.accept("("):
            args.append(self.term())
            while self.ts.accept(","):
                args.append(self.term())
            self.ts.expect(")", "',' or ')'")
        return Atom(tok.text, tuple(args))

    def term(self) -> Term:
        tok = self.ts.next()
        if tok.kind == "var":
            return Var(tok.text)
        if tok.kind == "int":
            return Const(int(tok.text))
        if tok.kind == "ident":
            return Const(tok.text)
        if tok.kind == "string":
            return Const(unquote(tok.text))
        if tok.text == "-" and self.ts.peek().kind == "int":
            return Const(-int(self.ts.next().text))
        self.ts.fail("expected a term (variable, integer, constant or string)", tok)
        raise AssertionError

    # expressions: sum := product (("+"|"-") product)*; product := unary (("*"|"/"|"\\") unary)*
    def expr(self) -> Expr:
        left = self.product()
        while self.ts.at("+") or self.ts.at("-"):
            op = self.ts.next().text
            left = BinOp(op, left, self.product())
        return left

    def product(self) -> Expr:
        left = self.unary()
        while self.ts.at("*") or self.ts.at("/") or self.ts.at("\\"):
            op = self.ts.next().text
            left = BinOp("mod" if op == "\\" else op, left, self.unary())
        return left

    def unary(self) -> Expr:
        if self.ts.at("-"):
            self.ts.next()
            inner = self.unary()
            if isinstance(inner, Const) and isinstance(inner.value, int):
                return Const(-inner.value)
            return BinOp("-", Const(0), inner)
        if self.ts.accept("("):
            e = self.expr()
            self.ts.expect(")")
            return e
        tok = self.ts.peek()
        if tok.kind in ("var", "int", "ident", "string"):
            return self.term()
        self.ts.fail("expected an expression")
        raise AssertionError


_BUILTINS = set(BINARY_BUILTINS) | set(ARITH_BUILTINS) | set(RANGE_BUILTINS) | {"incr"}
