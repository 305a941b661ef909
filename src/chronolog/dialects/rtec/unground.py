"""Reads of what RTEC never computes: a derived fluent-value pair or event without ``grounding/1``.

Why: RTEC computes (caches) an entity defined by rules only for the instances its
``grounding/1`` admits — its compiler writes a ``cachingOrder2`` clause only for an entity
with a ``grounding`` clause — and a rule body reads nothing but that cache: ``holdsFor`` of
an uncached fluent-value pair is ``[]`` (the fall-back clause of
``holdsForProcessedSDFluent``/``holdsForProcessedSimpleFluent``, also with free arguments,
which stay free), ``holdsAt`` of it fails, and ``start``/``end`` of it, like a derived event
without a grounding, never happen.  So an ungrounded helper such as
``alarm(D)=true`` (a union of ``open(D)`` and ``armed(D)``) reads as empty wherever another
rule reads it, whatever its own rules say (checked against RTEC: see
``tests/data/rtec/ungrounded/``).  Wrapping these reads once, when the program is loaded, in
``no_grounding/1`` (a background fact: ``holdsFor`` gives ``[]``, the others fail) gives every
mode that runs the rules — ``run``, windows, the fleet, ``--upgrade``, ``explain`` — the same
reading, lets ``explain`` cite the read as written, and leaves the ungrounded entity itself
unread (so not computed, as in RTEC, unless it is a value of a fluent with grounded values).
"""

from __future__ import annotations

from typing import Any

from chronolog.dialects.rtec.terms import Rule, Slot

Key = tuple[str, int]
NO_GROUNDING = "no_grounding"  # no_grounding(G): G reads an entity RTEC never computes
# its one clause: holdsFor gives [] (its arguments stay as they are); holdsAt and happensAt fail
NO_GROUNDING_FACT = Rule((NO_GROUNDING, ("holdsFor", Slot(0), "[]")), [], 1, None, {})
_WRAPPERS = {(",", 2), (";", 2), ("->", 2), ("\\+", 1), ("not", 1), ("once", 1)}
_FLUENT_RULES = ("initiatedAt", "terminatedAt", "holdsFor")


def _key(t: Any) -> Key | None:
    if type(t) is tuple:
        return t[0], len(t) - 1
    return (t, 0) if type(t) is str else None


def _fv_key(t: Any) -> tuple[Key, Any] | None:
    """(key of F, V) of a compiled ``F=V`` whose F is not a variable."""
    if type(t) is not tuple or t[0] != "=" or len(t) != 3:
        return None
    k = _key(t[1])
    return None if k is None else (k, t[2])


class Ungrounded:
    """Which reads of a program can never see anything (see the module's docstring)."""

    def __init__(self, rules: list[tuple[str, Rule]], grounding: list[Rule]) -> None:
        self.fluents: set[Key] = set()  # fluents defined by rules
        self.events: set[Key] = set()  # events defined by rules
        for kind, rule in rules:
            if kind in _FLUENT_RULES:
                got = _fv_key(rule.head[1])
                if got is not None:
                    self.fluents.add(got[0])
            elif kind == "happensAt":
                k = _key(rule.head[1])
                if k is not None:
                    self.events.add(k)
        self.values: dict[Key, list[Any]] = {}  # fluent -> the values its grounding heads name (a Slot: any)
        self.grounded_events: set[Key] = set()
        for rule in grounding:
            # a variable (grounding(X), or F in grounding(F=V)) names no entity: RTEC's compiler
            # stops on such a clause; here a read of what no other clause names sees nothing, as
            # without it (and a statically determined fluent gets no instance from it, _derive_sdf)
            arg = rule.head[1] if type(rule.head) is tuple and len(rule.head) == 2 else None
            got = _fv_key(arg)
            if got is not None:
                self.values.setdefault(got[0], []).append(got[1])
            else:
                k = _key(arg)
                if k is not None:
                    self.grounded_events.add(k)

    def never_pair(self, fv: Any) -> bool:
        """No ``grounding/1`` clause can admit this rule-defined ``F=V`` (V as the read spells it)."""
        got = _fv_key(fv)
        if got is None or got[0] not in self.fluents:
            return False
        key, value = got
        named = self.values.get(key, [])
        if type(value) is Slot or (type(value) is tuple and _has_slot(value)):
            return not named
        return not any(type(v) is Slot or (type(v) is tuple and _has_slot(v)) or v == value for v in named)

    def never_event(self, e: Any) -> bool:
        k = _key(e)
        return k is not None and k in self.events and k not in self.grounded_events

    def goal(self, g: Any) -> Any:
        """``g`` with every read of an ungrounded entity replaced by what RTEC reads there."""
        if type(g) is not tuple:
            return g
        k = (g[0], len(g) - 1)
        if k in _WRAPPERS:
            new = (g[0], *[self.goal(a) for a in g[1:]])
            return g if new == g else new
        if k == ("findall", 3):
            inner = self.goal(g[2])
            return g if inner is g[2] else (g[0], g[1], inner, g[3])
        if k in (("holdsFor", 2), ("holdsAt", 2)):
            return (NO_GROUNDING, g) if self.never_pair(g[1]) else g
        if k == ("happensAt", 2):
            e = g[1]
            if type(e) is tuple and e[0] in ("start", "end") and len(e) == 2:
                return (NO_GROUNDING, g) if self.never_pair(e[1]) else g
            return (NO_GROUNDING, g) if self.never_event(e) else g
        return g

    def rule(self, rule: Rule) -> Rule:
        body = [self.goal(g) for g in rule.body]
        if body == rule.body:
            return rule
        return Rule(rule.head, body, rule.nvars, rule.loc, rule.names)


def _has_slot(t: Any) -> bool:
    if type(t) is Slot:
        return True
    return type(t) is tuple and any(_has_slot(a) for a in t[1:])


_READS = {("holdsFor", 2), ("holdsAt", 2)}


def read_values(rules: list[tuple[str, Rule]], grounding: list[Rule]) -> dict[Key, frozenset]:
    """Fluent -> the only values a read of it with a variable value (``holdsFor(F=V, I)``,
    ``holdsAt``, ``start``/``end``, V free) sees, for the fluents whose values RTEC keeps in
    different caches.

    Why: RTEC's compiler sends such a read to one cache, chosen by the first declaration any
    value of F matches (``compileConditions1``): the simple fluents' if a value of F is one
    (initiated or terminated by a rule), else the input entities' if a value of F is one (a
    value ``grounding/1`` names, or a rule reads, that no rule defines: ``alarm(D)=false``
    next to a rule-defined ``alarm(D)=true``), else the statically determined fluents'.  The
    read sees only the values of that cache: ``holdsFor(alarm(D)=V, I)`` reads ``[]`` although
    ``alarm(d)=true`` is computed (checked against RTEC: ``tests/data/rtec/ungrounded/values``).
    Only fluents with values of more than one kind are listed (the others see every value)."""
    simple: dict[Key, set] = {}
    sdf: dict[Key, set] = {}
    named: dict[Key, set] = {}
    for kind, rule in rules:
        got = _fv_key(rule.head[1]) if kind in _FLUENT_RULES else None
        if got is not None and not _has_slot(got[1]):
            (sdf if kind == "holdsFor" else simple).setdefault(got[0], set()).add(got[1])
        for g in rule.body:
            _body_reads(g, named)
    for rule in grounding:
        arg = rule.head[1] if type(rule.head) is tuple and len(rule.head) == 2 else None
        got = _fv_key(arg)
        if got is not None and not _has_slot(got[1]):
            named.setdefault(got[0], set()).add(got[1])
    out: dict[Key, frozenset] = {}
    for key in simple.keys() | sdf.keys():
        defined = simple.get(key, set()) | sdf.get(key, set())
        inputs = named.get(key, set()) - defined
        if simple.get(key) and (sdf.get(key) or inputs):
            out[key] = frozenset(simple[key])
        elif not simple.get(key) and inputs:
            out[key] = frozenset(inputs)
    return out


def _body_reads(g: Any, named: dict[Key, set]) -> None:
    """Record the ground values ``g`` (a body goal) reads of each fluent."""
    if type(g) is not tuple:
        return
    k = (g[0], len(g) - 1)
    if k in _WRAPPERS or k == (NO_GROUNDING, 1):
        for a in g[1:]:
            _body_reads(a, named)
        return
    if k == ("findall", 3):
        _body_reads(g[2], named)
        return
    fv = g[1] if k in _READS else None
    if k == ("happensAt", 2) and type(g[1]) is tuple and g[1][0] in ("start", "end") and len(g[1]) == 2:
        fv = g[1][1]
    got = _fv_key(fv)
    if got is not None and not _has_slot(got[1]):
        named.setdefault(got[0], set()).add(got[1])
