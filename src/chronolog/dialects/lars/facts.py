"""Facts, atoms and imports as plain data (the pieces every stage's state is made of).

A fact ``((pred, arity), args)`` is ``[pred, [args...]]``; an atom of a
stratum's content is a group ``[key, [[args...], ...]]`` per key, with key
``[pred, arity]`` or ``["#answers", [pred, arity]]``; an ``Imported`` is
``[consistent, groups]``.
Arguments are strings and integers (any size), as in the input.
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any

from chronolog.dialects.lars.engine.content import Content, gathered
from chronolog.dialects.lars.engine.core import ANSWERS, Imported


def _args(items: Any) -> tuple:
    if type(items) is not list:
        raise TypeError("arguments are not a list")
    for a in items:
        if type(a) is not str and type(a) is not int:
            raise TypeError(f"argument {a!r} is neither a string nor an integer")
    return tuple(items)


def facts_data(facts: Iterable[tuple[tuple[str, int], tuple]]) -> list:
    return [[key[0], list(args)] for key, args in facts]


def facts_from(data: Any) -> list[tuple[tuple[str, int], tuple]]:
    out = []
    for pred, args in data:
        if type(pred) is not str:
            raise TypeError("a predicate is not a string")
        args = _args(args)
        out.append(((pred, len(args)), args))
    return out


def _key(key: Any) -> tuple:
    if key[0] == ANSWERS:
        return (ANSWERS, (str(key[1][0]), int(key[1][1])))
    if type(key[0]) is not str or type(key[1]) is not int:
        raise TypeError("an atom key is not [pred, arity]")
    return (key[0], key[1])


def atoms_data(content: Content) -> list:
    """A stratum's content as ``(key, rows)`` groups, written as ``[key, [args,
    ...]]``: msgspec writes tuples and frozensets as arrays, so the rows are
    not copied into lists first (orjson takes no sets: encode with msgspec)."""
    return list(content.items())


def atoms_from(data: Any) -> Content:
    """Content from ``atoms_data``'s groups, or from the flat ``[key, args]``
    atoms earlier releases stored (a group's rows are lists; an atom's args
    are strings and integers)."""
    return gathered(map(_group, data))


def _group(item: Any) -> tuple:
    k, rows = item
    if type(rows) is list and rows and type(rows[0]) is list:
        return _key(k), frozenset(map(_timed_args, rows))
    return _key(k), frozenset((_timed_args(rows),))


def _timed_args(items: Any) -> tuple:
    """Content args may end with the time of a timed predicate: still strings and integers."""
    return _args(items)


def imported_data(imported: Imported) -> list:
    return [bool(imported.consistent), atoms_data(imported.content)]


def imported_from(data: Any) -> Imported:
    ok, atoms = data
    if type(ok) is not bool:
        raise TypeError("consistency is not a boolean")
    return Imported(ok, atoms_from(atoms))
