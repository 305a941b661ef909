"""A statically determined fluent's rules run without the resolution engine.

RTEC's usual ``holdsFor`` body reads ground interval lists and combines them:
``holdsFor(G=V2, I1)`` with G's arguments from the head, ``union_all``,
``intersect_all``, ``relative_complement_all``, ``complement_all`` over those
lists, ``\\+ I = []`` checks and a cut (CAVIAR's and CTM's rules are all such
bodies).  Each window asks every grounded head again (ctm: ~900 heads per
window), so such a rule is compiled to a list of steps over an array of values
and run directly: the result is the first solution the solver would give
(rules in order; a failure after a cut gives none).  Any other rule shape
gives None and the fluent keeps the generic solver.
"""

from __future__ import annotations

from typing import Any

from chronolog.dialects.rtec import intervals as IV
from chronolog.dialects.rtec.terms import Rule, Slot

_LISTS = {"union_all": 2, "intersect_all": 2, "complement_all": 2, "relative_complement_all": 3}


class SdfRule:
    """A compiled rule: how the head's arguments bind, the steps of the body, where the result is."""

    __slots__ = ("match", "steps", "out", "nvars")

    def __init__(self, match: list[tuple[str, Any]], steps: list[tuple], out: int | None, nvars: int) -> None:
        self.match = match  # per head argument: ("bind" | "eq", slot) or ("const", value)
        self.steps = steps
        self.out = out  # the slot of the result; None: the empty list (a fact ``holdsFor(F=V, [])``)
        self.nvars = nvars


def compile_sdf(rule: Rule) -> SdfRule | None:
    """``rule`` (``holdsFor(F=V, I) :- Body``) as an ``SdfRule``; None if its shape is another."""
    f = rule.head[1][1]
    match: list[tuple[str, Any]] = []
    ground: set[int] = set()  # slots bound to a head argument
    lists: set[int] = set()  # slots bound to an interval list
    for a in f[1:] if type(f) is tuple else ():
        if type(a) is Slot:
            match.append(("eq" if a.i in ground else "bind", a.i))
            ground.add(a.i)
        elif type(a) is str or type(a) is int:
            match.append(("const", a))
        else:
            return None
    steps: list[tuple] = []
    for g in rule.body:
        step = _step(g, ground, lists)
        if step is None:
            return None
        steps.append(step)
    out = rule.head[2]
    if type(out) is Slot and out.i in lists:
        return SdfRule(match, steps, out.i, rule.nvars)
    if out == "[]":
        return SdfRule(match, steps, None, rule.nvars)
    return None


def _step(g: Any, ground: set[int], lists: set[int]) -> tuple | None:
    if g == "!":
        return ("!",)
    if type(g) is not tuple:
        return None
    name = g[0]
    if name == "holdsFor" and len(g) == 3:
        fv, out = g[1], g[2]
        if type(fv) is not tuple or fv[0] != "=" or len(fv) != 3 or not _fresh(out, ground, lists):
            return None
        f = fv[1]
        if type(f) is tuple:
            key, fargs = (f[0], len(f) - 1), f[1:]
        elif type(f) is str:
            key, fargs = (f, 0), ()
        else:
            return None
        specs = []
        for a in (*fargs, fv[2]):
            if type(a) is Slot and a.i in ground:
                specs.append((True, a.i))
            elif type(a) is str or type(a) is int:
                specs.append((False, a))
            else:
                return None
        lists.add(out.i)
        return ("holdsFor", out.i, key, specs)
    if name in _LISTS and len(g) == _LISTS[name] + 1:
        base = None
        if name == "relative_complement_all":
            if type(g[1]) is not Slot or g[1].i not in lists:
                return None
            base = g[1].i
        items = _list_slots(g[-2], lists)
        if items is None or not _fresh(g[-1], ground, lists):
            return None
        lists.add(g[-1].i)
        return (name, g[-1].i, items, base)
    if name == "\\+" and len(g) == 2:
        t = g[1]
        if type(t) is tuple and len(t) == 3 and t[0] == "=" and type(t[1]) is Slot and t[1].i in lists \
                and t[2] == "[]":
            return ("nonempty", t[1].i)
    return None


def _fresh(t: Any, ground: set[int], lists: set[int]) -> bool:
    return type(t) is Slot and t.i not in ground and t.i not in lists


def _list_slots(t: Any, lists: set[int]) -> list[int | None] | None:
    """The slots of a list term of interval lists (None for a ``[]`` item); None if it is not one."""
    out: list[int | None] = []
    while type(t) is tuple and len(t) == 3 and t[0] == ".":
        x = t[1]
        if type(x) is Slot and x.i in lists:
            out.append(x.i)
        elif x == "[]":
            out.append(None)
        else:
            return None
        t = t[2]
    return out if t == "[]" else None


def run_sdf(rules: list[SdfRule], fluents: dict, fargs: tuple, clip_lo: float) -> list | None:
    """The interval list of the head with arguments ``fargs``: the first rule's whose body
    holds (``fluents``: the store's lists; ``clip_lo``: where the lists read are cut, as
    ``holdsFor`` and ``complement_all`` cut them); None if no rule gives one."""
    for rule in rules:
        if len(rule.match) != len(fargs):
            continue
        env: list[Any] = [None] * rule.nvars
        for (how, x), a in zip(rule.match, fargs):
            if how == "bind":
                env[x] = a
            elif (env[x] if how == "eq" else x) != a:
                break
        else:
            cut = False
            for step in rule.steps:
                op = step[0]
                if op == "holdsFor":
                    _, out, key, specs = step
                    args = tuple([env[x] if slot else x for slot, x in specs])
                    by_args = fluents.get(key)
                    vals = by_args.get(args[:-1]) if by_args is not None else None
                    got = vals.get(args[-1]) if vals is not None else None
                    env[out] = IV.clip(got, clip_lo) if got else []
                elif op == "nonempty":
                    if not env[step[1]]:
                        break
                elif op == "!":
                    cut = True
                else:
                    _, out, items, base = step
                    lists = [env[i] if i is not None else [] for i in items]
                    if op == "union_all":
                        env[out] = IV.union_all(lists)
                    elif op == "intersect_all":
                        env[out] = IV.intersect_all(lists)
                    elif op == "relative_complement_all":
                        env[out] = IV.relative_complement_all(env[base], lists)
                    else:
                        env[out] = IV.complement(IV.union_all(lists), max(0, clip_lo))
            else:
                return env[rule.out] if rule.out is not None else []
            if cut:
                return None
    return None
