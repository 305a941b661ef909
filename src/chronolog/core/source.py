"""Where a program or an input value comes from, and what a constant is: shared by every dialect."""

from __future__ import annotations

from chronolog.core.records import record

Value = str | int


@record(frozen=True)
class Loc:
    """A source position for error messages (1-based line and column)."""

    file: str
    line: int
    col: int

    def __str__(self) -> str:
        return f"{self.file}:{self.line}:{self.col}"
