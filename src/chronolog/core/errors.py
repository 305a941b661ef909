"""Errors users see: every one names where it comes from.

The CLI turns these into a one-line message and exit status 2, never a
traceback.
"""

from __future__ import annotations

from chronolog.core.source import Loc


class ChronologError(Exception):
    """Base class of every error meant for the user."""


class ProgramError(ChronologError):
    """A bad program: syntax, safety, unsupported construct."""

    def __init__(self, message: str, loc: Loc | None = None) -> None:
        self.message = message
        self.loc = loc
        super().__init__(f"{loc}: error: {message}" if loc else f"error: {message}")


class InputError(ChronologError):
    """A bad input line (event); ``loc`` names file, line and column."""

    def __init__(self, message: str, loc: Loc | None = None) -> None:
        self.message = message
        self.loc = loc
        super().__init__(f"{loc}: error: {message}" if loc else f"error: {message}")
