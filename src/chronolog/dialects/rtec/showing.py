"""RTEC terms and rules as an explanation shows them (``explain.py``, ``blocking.py``):
variables by their names in the source, interval lists as answer lines write intervals."""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any

from chronolog.core import intervals as I
from chronolog.dialects.rtec.hierarchy import Key
from chronolog.dialects.rtec.prolog import INFIX, term_text
from chronolog.dialects.rtec.terms import Ivs, Rule, Slot, Var, deref, resolve

Fluent = tuple[Key, tuple, Any]  # (functor and arity, arguments, value)


def show(term: Any, names: dict[int, str] | None = None) -> str:
    """A term as the program writes it (variables by their names, ``_`` if unnamed)."""
    term = deref(term)
    if type(term) is Slot:
        return (names or {}).get(term.i, "_")
    if type(term) is Var:
        return "_"
    if type(term) is Ivs:
        return ivs_text(term.pairs)
    if isinstance(term, tuple):
        if term[0] == "." and len(term) == 3:
            items = []
            while isinstance(term, tuple) and term[0] == "." and len(term) == 3:
                items.append(show(term[1], names))
                term = deref(term[2])
            return "[" + ",".join(items) + ("" if term == "[]" else "|" + show(term, names)) + "]"
        if len(term) == 3 and term[0] in INFIX and not term[0].isalpha():
            return f"{show(term[1], names)}{term[0]}{show(term[2], names)}"
        return f"{term[0]}({','.join(show(a, names) for a in term[1:])})"
    return term_text(term)


def ivs_text(pairs: Iterable[tuple]) -> str:
    """An RTEC interval list as answer lines write intervals: ``[[4,9),[12,inf)]``."""
    return "[" + ",".join(I.text((a, True, b, False)) for a, b in pairs) + "]"


def rule_text(rule: Rule) -> str:
    """``file:line: the clause`` (what ``Node.rule`` holds)."""
    where = f"{rule.loc.file}:{rule.loc.line}: " if rule.loc is not None else ""
    head = show(rule.head, rule.names)
    return where + (head + " :- " + ", ".join(show(g, rule.names) for g in rule.body) if rule.body else head)


def bindings(rule: Rule, vs: list) -> dict[str, Any]:
    out = {}
    for i, name in sorted(rule.names.items()):
        value = resolve(vs[i])
        if not name.startswith("_") and type(value) is not Var and not has_var(value):
            out[name] = value if type(value) in (int, str) else show(value)
    return out


def has_var(t: Any) -> bool:
    t = deref(t)
    return type(t) is Var or (type(t) is tuple and any(has_var(a) for a in t[1:]))


def value_of(rule: Rule) -> Any:
    """The value a rule's head gives its fluent (None where it is a variable)."""
    fv = rule.head[1]
    v = fv[2] if isinstance(fv, tuple) and len(fv) == 3 else None
    return None if type(v) is Slot or (isinstance(v, tuple) and any(type(x) is Slot for x in v[1:])) else v


def plain(a: Any) -> Any:
    """A term as input and answer lines write it: a number or a constant as is, a compound by its text."""
    return a if type(a) in (int, str) else term_text(a)


def answer_atom(f: Fluent) -> tuple[str, tuple]:
    """F=V as the atom answer (and input) lines write it: F's arguments, V last unless ``true``."""
    key, args, value = f
    return key[0], tuple(plain(a) for a in args) + (() if value == "true" else (plain(value),))
