"""Rule languages: each dialect's parser produces the same IR (``chronolog.dialects.lars.ir``).

``load_program`` is what the CLI calls: it picks the dialect from the option
or the file extension, reads the files and concatenates their rules.
"""

from __future__ import annotations

import os

from chronolog.core.errors import ProgramError
from chronolog.core.source import Loc
from chronolog.dialects.lars.ir import Program
from chronolog.dialects.registry import DEFAULT, lookup
from chronolog.dialects.registry import DIALECTS as _REGISTRY

DIALECTS = tuple(_REGISTRY)
_EXTENSIONS = {ext: row.name for row in _REGISTRY.values() for ext in row.extensions}


def dialect_for(path: str, explicit: str | None = None) -> str:
    """The explicit dialect if given, else the one of the file extension (default ``lars``)."""
    if explicit:
        return explicit
    return _EXTENSIONS.get(os.path.splitext(path)[1].lower(), DEFAULT)


def parse_program(text: str, filename: str, dialect: str) -> Program:
    """One program file of ``dialect``."""
    return lookup(dialect, filename).parse([(filename, text)])


def load_program(paths: list[str], dialect: str | None = None) -> Program:
    """Read and parse program files (all of one dialect) into one program."""
    if not paths:
        raise ProgramError("no program file given")
    chosen: str | None = None
    sources: list[tuple[str, str]] = []
    for path in paths:
        if path == "-":
            raise ProgramError("a program cannot be read from standard input ('-'); name a file", Loc("-", 1, 1))
        d = dialect_for(path, dialect)
        if chosen is not None and d != chosen:
            raise ProgramError(f"all program files must have one dialect ({chosen}, not {d})", Loc(path, 1, 1))
        chosen = d
        lookup(d, path)  # fail on the dialect before touching the file
        try:
            with open(path, encoding="utf-8") as f:
                text = f.read()
        except OSError as exc:
            raise ProgramError(f"cannot read program: {exc.strerror or exc}", Loc(path, 1, 1)) from None
        except UnicodeDecodeError as exc:
            raise ProgramError(f"program is not UTF-8 text ({exc.reason})", Loc(path, 1, 1)) from None
        sources.append((path, text))
    return program_from_sources(sources, chosen or DEFAULT)


def program_from_sources(sources: list[tuple[str, str]] | tuple[tuple[str, str], ...], dialect: str) -> Program:
    """One program of the (file name, text) pairs of one dialect: what ``load_program``
    reads, and what a Spark task rebuilds from the texts it was sent."""
    return lookup(dialect).parse(list(sources))
