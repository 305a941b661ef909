"""The native ``lars`` dialect (Ticker's rule syntax, ../spec/LARS.md) into the IR.

A hand-written lexer and recursive-descent parser, so that every error names
the exact line and column of the offending token and says what was expected.
The lexer and the term/expression parser are shared with the Laser dialect
(``chronolog.dialects.lars.laser``).
"""

from __future__ import annotations

from typing import NoReturn

from chronolog.core.errors import ProgramError
from chronolog.core.records import record
from chronolog.dialects.lars.ir import (
    COMPARISON_OPS,
    Atom,
    BinOp,
    BodyElem,
    Compare,
    Const,
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
    Var,
    Window,
)

UNITS = {"sec": 1, "s": 1, "min": 60, "h": 3600}  # 1 time point = 1 second
SUB_SECOND_UNITS = ("msec", "ms")
CMP_ALIASES = {"==": "=", "<>": "!="}
ARITH_TOKENS = {"+": "+", "-": "-", "*": "*", "/": "/", "\\": "mod"}
BINARY_BUILTINS = {"eq": "=", "neq": "!=", "lt": "<", "leq": "<=", "gt": ">", "geq": ">="}
ARITH_BUILTINS = {"plus": "+", "minus": "-", "times": "*", "divide": "/", "modulo": "mod"}
RANGE_BUILTINS = {"leqleq": ("<=", "<="), "ltlt": ("<", "<"), "ltleq": ("<", "<="), "leqlt": ("<=", "<")}
BUILTINS = frozenset(BINARY_BUILTINS) | frozenset(ARITH_BUILTINS) | frozenset(RANGE_BUILTINS) | {"incr"}
MAX_NESTING = 100  # parentheses; deeper input is rejected instead of exhausting the Python stack

_OPERATORS = (":-", "==", "!=", "<=", ">=", "<>", "=", "<", ">", "+", "-", "*", "/", "\\", ".", ",", "(", ")", "[", "]", "#", "@")
_SPACE = " \t\r\f\v"


# ------------------------------------------------------------------ lexer


@record(frozen=True)
class Token:
    kind: str  # ident, var, int, string, op, newline, eof
    text: str  # the source text; for strings the unquoted value
    loc: Loc

    def shown(self) -> str:
        if self.kind == "eof":
            return "end of input"
        if self.kind == "newline":
            return "end of line"
        if self.kind == "string":
            return f"the string {self.text!r}"
        return repr(self.text)


def tokenize(text: str, filename: str, laser: bool = False) -> list[Token]:
    """Split ``text`` into tokens with 1-based line:column locations.

    Comments: ``% ...``, ``// ...``, ``/* ... */`` and ``%* ... *%``.  With
    ``laser``: also ``# ...``; ``'...'`` quotes (Laser's IRIs) as well as
    ``"..."``; and a ``newline`` token ends a rule (except inside parentheses).
    """
    tokens: list[Token] = []
    pos, line, line_start, n, depth = 0, 1, 0, len(text), 0

    def loc_at(p: int) -> Loc:
        return Loc(filename, line, p - line_start + 1)

    while pos < n:
        c = text[pos]
        if c == "\n":
            if laser and depth == 0 and tokens and tokens[-1].kind != "newline":
                tokens.append(Token("newline", "\n", loc_at(pos)))
            pos += 1
            line, line_start = line + 1, pos
            continue
        if c in _SPACE:
            pos += 1
            continue
        block_end = {"%*": "*%", "/*": "*/"}.get(text[pos : pos + 2])
        if block_end is not None:
            end = text.find(block_end, pos + 2)
            if end < 0:
                raise ProgramError(
                    f"unterminated comment: {text[pos:pos + 2]!r} is never closed by {block_end!r}", loc_at(pos)
                )
            end += 2
            line += text.count("\n", pos, end)
            if "\n" in text[pos:end]:
                line_start = text.rindex("\n", pos, end) + 1
            pos = end
            continue
        if c == "%" or text.startswith("//", pos) or (laser and c == "#"):
            end = text.find("\n", pos)
            pos = n if end < 0 else end
            continue
        start = pos
        if c.isascii() and c.isdigit():
            while pos < n and text[pos].isascii() and text[pos].isdigit():
                pos += 1
            tokens.append(Token("int", text[start:pos], loc_at(start)))
            continue
        if c.isascii() and (c.isalpha() or c == "_"):
            while pos < n and text[pos].isascii() and (text[pos].isalnum() or text[pos] == "_"):
                pos += 1
            kind = "ident" if c.islower() else "var"
            tokens.append(Token(kind, text[start:pos], loc_at(start)))
            continue
        if c == '"' or (laser and c == "'"):
            value, pos, lines, last_nl = _string(text, pos, loc_at(start))
            tokens.append(Token("string", value, loc_at(start)))
            if lines:
                line, line_start = line + lines, last_nl + 1
            continue
        op = next((o for o in _OPERATORS if text.startswith(o, pos)), None)
        if op is None:
            raise ProgramError(f"unexpected character {c!r}", loc_at(pos))
        if laser and op in ("(", ")"):
            depth = max(0, depth + (1 if op == "(" else -1))
        tokens.append(Token("op", op, loc_at(pos)))
        pos += len(op)
    tokens.append(Token("eof", "", loc_at(pos)))
    return tokens


def _string(text: str, pos: int, loc: Loc) -> tuple[str, int, int, int]:
    """A quoted string starting at ``pos``: (value, end, newlines inside, index of the last one).

    Double quotes take the escapes ``\\\\ \\" \\n \\t``; Laser's single quotes
    take none (as in Laser's tokenizer)."""
    quote = text[pos]
    out: list[str] = []
    i, lines, last_nl = pos + 1, 0, -1
    while i < len(text):
        c = text[i]
        if c == quote:
            return "".join(out), i + 1, lines, last_nl
        if c == "\\" and quote == '"' and i + 1 < len(text):
            i += 1
            c = {"n": "\n", "t": "\t"}.get(text[i], text[i])
            if text[i] == "\n":
                lines, last_nl = lines + 1, i
        elif c == "\n":
            lines, last_nl = lines + 1, i
        out.append(c)
        i += 1
    raise ProgramError("unterminated string: the closing quote is missing", loc)


# ------------------------------------------------------------------ parser


class Parser:
    """Cursor over tokens, and the parts both dialects share: atoms, terms, expressions."""

    def __init__(self, tokens: list[Token]) -> None:
        self.tokens = tokens
        self.i = 0
        self.depth = 0

    # cursor
    def peek(self, k: int = 0) -> Token:
        return self.tokens[min(self.i + k, len(self.tokens) - 1)]

    def next(self) -> Token:
        tok = self.tokens[self.i]
        if tok.kind != "eof":
            self.i += 1
        return tok

    def at(self, text: str, k: int = 0) -> bool:
        tok = self.peek(k)
        return tok.text == text and tok.kind in ("op", "ident", "var")

    def accept(self, text: str) -> Token | None:
        return self.next() if self.at(text) else None

    def expect(self, text: str, what: str | None = None) -> Token:
        if not self.at(text):
            self.fail(f"expected {what or repr(text)}")
        return self.next()

    def fail(self, message: str, tok: Token | None = None) -> NoReturn:
        tok = tok or self.peek()
        raise ProgramError(f"{message}, found {tok.shown()}", tok.loc)

    def nest(self, tok: Token) -> None:
        self.depth += 1
        if self.depth > MAX_NESTING:
            raise ProgramError(f"nested more than {MAX_NESTING} levels deep", tok.loc)

    # shared grammar
    def atom(self) -> Atom:
        tok = self.next()
        if tok.kind != "ident":
            self.fail("expected a predicate (a name starting with a lowercase letter)", tok)
        return Atom(tok.text, self.arguments())

    def arguments(self) -> tuple[Term, ...]:
        args: list[Term] = []
        if self.accept("("):
            args.append(self.term())
            while self.accept(","):
                args.append(self.term())
            self.expect(")", "',' or ')' in the argument list")
        return tuple(args)

    def term(self) -> Term:
        tok = self.next()
        if tok.kind == "var":
            return Var(tok.text)
        if tok.kind == "int":
            return Const(int(tok.text))
        if tok.kind in ("ident", "string"):
            return Const(tok.text)
        if tok.text == "-" and tok.kind == "op" and self.peek().kind == "int":
            return Const(-int(self.next().text))
        self.fail("expected a term (a variable, an integer, a constant or a quoted string)", tok)

    def time(self) -> Term:
        tok = self.peek()
        if tok.kind == "var" or tok.kind == "int" or (tok.text == "-" and self.peek(1).kind == "int"):
            return self.term()
        self.fail("expected a time (a variable or an integer)")

    # expressions: sum := product (("+"|"-") product)*; product := unary (("*"|"/"|"\") unary)*
    def expr(self) -> Expr:
        left = self.product()
        while self.peek().kind == "op" and self.peek().text in ("+", "-"):
            op = self.next().text
            left = BinOp(op, left, self.product())
        return left

    def product(self) -> Expr:
        left = self.unary()
        while self.peek().kind == "op" and self.peek().text in ("*", "/", "\\"):
            op = ARITH_TOKENS[self.next().text]
            left = BinOp(op, left, self.unary())
        return left

    def unary(self) -> Expr:
        tok = self.peek()
        if tok.kind == "op" and tok.text == "-":
            self.next()
            self.nest(tok)
            inner = self.unary()
            self.depth -= 1
            if isinstance(inner, Const) and isinstance(inner.value, int):
                return Const(-inner.value)
            return BinOp("-", Const(0), inner)
        if tok.kind == "op" and tok.text == "(":
            self.next()
            self.nest(tok)
            e = self.expr()
            self.depth -= 1
            self.expect(")", "')' closing the parenthesis")
            return e
        if tok.kind in ("var", "int", "ident", "string"):
            return self.term()
        self.fail("expected an expression (a term, '-' or '(')")

    def comparison_op(self) -> str:
        tok = self.peek()
        op = CMP_ALIASES.get(tok.text, tok.text)
        if tok.kind != "op" or op not in COMPARISON_OPS:
            self.fail("expected a comparison operator (= != < <= > >=)")
        self.next()
        return op


def builtin(name: Token, args: list[Expr]) -> list[BodyElem]:
    """Ticker's built-in predicates as comparisons (a range built-in gives two)."""
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


class LarsParser(Parser):
    def program(self) -> list[Rule]:
        rules: list[Rule] = []
        while self.peek().kind != "eof":
            rules.append(self.rule())
        return rules

    def rule(self) -> Rule:
        start = self.peek()
        if start.text == "import" and self.peek(1).kind == "ident":
            raise ProgramError("Ticker's 'import' of window functions is not supported", start.loc)
        head = self.head()
        body: list[BodyElem] = []
        if self.accept(":-"):
            body.extend(self.elem())
            while self.accept(","):
                body.extend(self.elem())
            self.expect(".", "'.' ending the rule or ',' before the next body element")
        else:
            self.expect(".", "':-' or '.' after the head")
        return Rule(head, tuple(body), start.loc)

    def head(self) -> Head:
        atom = self.atom()
        if self.accept("at"):
            return Head(atom, self.time())
        return Head(atom)

    def elem(self) -> list[BodyElem]:
        """One body element (a range built-in gives two comparisons)."""
        tok, nxt = self.peek(), self.peek(1)
        if tok.kind not in ("ident", "var", "int", "string") and tok.text not in ("(", "-"):
            self.fail("expected a body element (an atom, 'not ...', a built-in or a comparison)")
        if tok.kind != "ident" or (nxt.kind == "op" and (nxt.text in ARITH_TOKENS or _is_cmp(nxt))):
            left = self.expr()
            op = self.comparison_op()
            return [Compare(op, left, self.expr(), tok.loc)]
        if tok.text == "not":
            self.next()
            target = self.peek()
            if target.text == "(":
                self.fail("expected an atom after 'not' (write 'not p(X)', not 'not(p(X))')", target)
            if target.text in BUILTINS and self.at("(", 1):
                raise ProgramError(f"built-in {target.text} cannot be negated: use the opposite comparison", tok.loc)
            ext = self.ext(tok.loc)
            if ext.negated:
                raise ProgramError("negated twice ('not' before the atom and after it)", tok.loc)
            return [ExtAtom(ext.atom, ext.op, ext.window, ext.time, True, tok.loc)]
        if tok.text in BUILTINS and nxt.text == "(" and nxt.kind == "op":
            self.next()
            self.next()
            args = [self.expr()]
            while self.accept(","):
                args.append(self.expr())
            self.expect(")", "',' or ')' in the argument list")
            return builtin(tok, args)
        return [self.ext(tok.loc)]

    def ext(self, loc: Loc) -> ExtAtom:
        atom = self.atom()
        if self.accept("at"):
            time = self.time()
            neg = self.postfix_not()
            window = self.window() if self.window_follows() else None
            if neg and window is None:
                self.fail("expected a window after 'not'")
            return ExtAtom(atom, Op.AT, window, time, neg, loc)
        if self.accept("always"):
            neg = self.postfix_not()
            if not self.window_follows():
                self.fail("expected a window like [3] after 'always'")
            return ExtAtom(atom, Op.BOX, self.window(), None, neg, loc)
        neg = self.postfix_not()
        if self.window_follows():
            return ExtAtom(atom, Op.DIAMOND, self.window(), None, neg, loc)
        if neg:
            self.fail("expected a window after 'not'")
        return ExtAtom(atom, Op.NOW, None, None, False, loc)

    def postfix_not(self) -> bool:
        """Ticker also writes ``p not in [3]`` / ``p always not [3]`` for ``not p [3]``."""
        if self.at("not") and (self.at("in", 1) or self.at("[", 1)):
            self.next()
            return True
        return False

    def window_follows(self) -> bool:
        return self.at("[") or (self.at("in") and self.at("[", 1))

    def window(self) -> Window:
        if self.accept("in") is None and not self.at("["):
            self.fail("expected a window '['")
        self.expect("[", "a window '['")
        tok = self.peek()
        if tok.kind == "ident" and tok.text == "t" and self.peek(1).kind == "int":
            self.next()  # older Ticker programs write [t 300] for [300]
            return TimeWindow(self._window_end(self._size()))
        if tok.text == "#" and self.peek(1).kind == "int":
            self.next()  # older Ticker programs write [# 10] for [10 #]
            size = self._size()
            self.expect("]", "']' closing the tuple window")
            return self._tuple(size, tok)
        size_tok = self.peek()
        size = self._size()
        if self.accept("#"):
            self.expect("]", "']' closing the tuple window")
            return self._tuple(size, size_tok)
        return TimeWindow(self._window_end(size))

    def _size(self) -> int:
        tok = self.peek()
        if tok.kind != "int":
            self.fail("expected the window size (a non-negative integer)")
        self.next()
        return int(tok.text)

    def _window_end(self, size: int) -> int:
        unit = self.peek()
        if unit.kind == "ident":
            if unit.text in SUB_SECOND_UNITS:
                raise ProgramError(
                    f"unit {unit.text!r} is finer than one time point (1 time point = 1 sec; use sec, min or h)",
                    unit.loc,
                )
            if unit.text not in UNITS:
                raise ProgramError(f"unknown time unit {unit.text!r} (use sec, s, min or h, or '#')", unit.loc)
            self.next()
            size *= UNITS[unit.text]
        self.expect("]", "']' closing the window (or a unit: sec, min, h, #)")
        return size

    @staticmethod
    def _tuple(size: int, tok: Token) -> TupleWindow:
        if size < 1:
            raise ProgramError("a tuple window needs at least 1 tuple", tok.loc)
        return TupleWindow(size)


def _is_cmp(tok: Token) -> bool:
    return CMP_ALIASES.get(tok.text, tok.text) in COMPARISON_OPS


def parse_lars(text: str, filename: str = "<program>") -> Program:
    """Parse a program in the native ``lars`` syntax; errors are ``ProgramError`` with a location."""
    return Program(tuple(LarsParser(tokenize(text, filename)).program()), "lars")
