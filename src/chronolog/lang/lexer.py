"""A tokenizer shared by the rule languages, with exact line:column positions."""

from __future__ import annotations

import re
from dataclasses import dataclass

from chronolog.errors import ProgramError
from chronolog.ir import Loc


@dataclass(frozen=True, slots=True)
class Token:
    kind: str  # ident, var, int, string, op, eof
    text: str
    loc: Loc


_TOKEN = re.compile(
    r"""
    (?P<ws>[ \t\r\n]+)
  | (?P<comment>%\*.*?\*%|/\*.*?\*/|%[^\n]*|//[^\n]*)
  | (?P<int>\d+)
  | (?P<ident>[a-z][A-Za-z0-9_']*)
  | (?P<var>[A-Z_][A-Za-z0-9_']*)
  | (?P<string>"(?:[^"\\\n]|\\.)*")
  | (?P<op>:-|==|!=|<=|>=|<>|[=<>+\-*/\\.,()\[\]\#@])
    """,
    re.VERBOSE | re.DOTALL,
)


def tokenize(text: str, filename: str) -> list[Token]:
    tokens: list[Token] = []
    pos, line, line_start = 0, 1, 0
    n = len(text)
    while pos < n:
        col = pos - line_start + 1
        if text.startswith("/*", pos) and text.find("*/", pos + 2) < 0:
            raise ProgramError("unterminated comment", Loc(filename, line, col))
        m = _TOKEN.match(text, pos)
        if m is None:
            if text[pos] == '"':
                raise ProgramError("unterminated string", Loc(filename, line, col))
            raise ProgramError(f"unexpected character {text[pos]!r}", Loc(filename, line, col))
        kind = m.lastgroup
        value = m.group()
        if kind not in ("ws", "comment"):
            tokens.append(Token(kind, value, Loc(filename, line, col)))  # type: ignore[arg-type]
        newlines = value.count("\n")
        if newlines:
            line += newlines
            line_start = pos + value.rindex("\n") + 1
        pos = m.end()
    tokens.append(Token("eof", "", Loc(filename, line, pos - line_start + 1)))
    return tokens


def unquote(s: str) -> str:
    body = s[1:-1]
    return re.sub(r"\\(.)", lambda m: {"n": "\n", "t": "\t"}.get(m.group(1), m.group(1)), body)


class TokenStream:
    """Cursor over tokens with helpers that raise located errors."""

    def __init__(self, tokens: list[Token]) -> None:
        self.tokens = tokens
        self.i = 0

    def peek(self, k: int = 0) -> Token:
        return self.tokens[min(self.i + k, len(self.tokens) - 1)]

    def next(self) -> Token:
        tok = self.tokens[self.i]
        if tok.kind != "eof":
            self.i += 1
        return tok

    def at(self, text: str, k: int = 0) -> bool:
        tok = self.peek(k)
        return tok.text == text and tok.kind in ("op", "ident")

    def accept(self, text: str) -> Token | None:
        if self.at(text):
            return self.next()
        return None

    def expect(self, text: str, what: str | None = None) -> Token:
        if self.at(text):
            return self.next()
        self.fail(f"expected {what or repr(text)}")
        raise AssertionError

    def fail(self, message: str, tok: Token | None = None) -> None:
        tok = tok or self.peek()
        found = "end of input" if tok.kind == "eof" else repr(tok.text)
        raise ProgramError(f"{message}, found {found}", tok.loc)
