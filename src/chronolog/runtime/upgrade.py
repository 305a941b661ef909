"""``chronolog run --upgrade T=FILE[,FILE...]`` and ``backfill --upgrade``: the new program
versions read as ``run`` reads programs, checked, and made into one ``versions.Versions``."""

from __future__ import annotations

from typing import Any

from chronolog.core.errors import ChronologError
from chronolog.dialects.load import load_program
from chronolog.dialects.registry import lookup
from chronolog.evaluator import Evaluator, Time
from chronolog.versions import Versions, parse_time, versions_of


def parse_upgrade(value: str) -> tuple[str, list[str]]:
    """``T=FILE[,FILE...]`` -> (T as written, the files)."""
    when, sep, files = value.partition("=")
    names = [f for f in files.split(",") if f]
    if not sep or not when.strip() or not names:
        raise ChronologError(f"error: --upgrade {value!r}: write it as T=FILE[,FILE...]")
    return when.strip(), names


def check_replacement(old: Any, new: Any, what: str) -> None:
    """A new program may replace ``old``: the same language, and (LARS) ``@``-heads, which date
    atoms back, only in a stratified program: its evaluations from T on are evaluated apart
    from those before (``Dialect.evaluations``), which an answer set keeping the choices of
    earlier time points (``Dialect.keeps_choices``, the TMS) does not allow."""
    row, new_row = lookup(old.dialect), lookup(new.dialect)
    if new_row.title != row.title:
        raise ChronologError(f"error: {what}: a {new_row.title} program cannot replace a "
                             f"{row.title} program (an upgrade keeps the language)")
    refusal = dated_refusal(new)
    if refusal is not None:
        raise ChronologError(f"error: {what}: {refusal}")


def dated_refusal(new: Any) -> str | None:
    """Why a new program that dates atoms back cannot replace another from a time on (None: it can)."""
    row = lookup(new.dialect)
    if row.dates_back(new) and row.keeps_choices(new):
        return ("the new program has @-heads and is not stratified: its answer sets follow the choices of "
                "earlier time points, so its evaluations from T on cannot be taken apart from those before "
                "(upgrades take @-heads in stratified programs only)")
    return None


def new_versions(program: Any, upgrades: list[str], dialect: str | None) -> list[tuple[Time, list[str], Any]]:
    """The ``--upgrade T=FILE[,FILE...]`` values as (T, files, program): each new program read
    as ``run`` reads programs (``--dialect``, else by extension; errors with file:line:col),
    in the old one's language; the times increasing."""
    row = lookup(program.dialect)
    versions: list[tuple[Time, list[str], Any]] = []
    for value in upgrades:
        when, files = parse_upgrade(value)
        t = parse_time(when, integral=row.discrete, what=f"--upgrade {value}")
        new = load_program(files, dialect)
        check_replacement(program, new, f"--upgrade {value}")
        if versions and t <= versions[-1][0]:
            raise ChronologError(f"error: --upgrade {value}: upgrade times must increase")
        versions.append((t, files, new))
    return versions


def upgraded(program: Any, evaluator: Evaluator, options: Any, upgrades: list[str], dialect: str | None,
             warn: Any) -> Versions:
    """``chronolog run``'s evaluator with its ``--upgrade`` versions, each with the same options."""
    versions = new_versions(program, upgrades, dialect)
    evaluators = [evaluator, *(lookup(new.dialect).evaluator(new, options, warn) for _, _, new in versions)]
    return program_versions([program, *(new for _, _, new in versions)], evaluators, [t for t, _, _ in versions])


def program_versions(programs: list[Any], evaluators: list[Evaluator], times: list[Time]) -> Versions:
    """The versions of ``programs`` (oldest first, each with its fresh evaluator), the i-th from
    ``times[i-1]`` on: ``run --upgrade``'s and the backfill's.  A new version whose evaluations
    date atoms back answers what its evaluations from its T on derive (``Dialect.evaluations``)."""
    row = lookup(programs[0].dialect)
    dated = [None, *(row.evaluations(p, e, t, None) for p, e, t in zip(programs[1:], evaluators[1:], times, strict=True))]
    return versions_of(evaluators, times, [row.causal(p) for p in programs], row.discrete, dated=dated)
