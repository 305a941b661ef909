"""A stratum's content at one time point, grouped by predicate.

What a stratum derived at a time point travels between fleet services and
into the engines above it.  It is kept as ``{key: frozenset(args...)}``
(key ``(pred, arity)``, or ``("#answers", (pred, arity))`` for padded
output predicates; timed predicates with the time last in their args)
rather than as one flat set of ``(key, args)`` atoms: the wire carries it
grouped, an engine imports it by predicate, and a change touches only the
predicates that changed, so a point costs work per changed predicate, not
per atom.  Predicates of unchanged groups share one frozenset between time
points.

A content dict is never changed after it is built (time points share it);
the functions here build new ones.  Empty groups are never stored, so two
contents are equal exactly when they hold the same atoms.
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator, Mapping

Content = Mapping  # of key -> frozenset of args tuples (never empty)

NOTHING: Mapping = {}  # the empty content (never mutated)


def grouped(atoms: Iterable[tuple]) -> dict:
    """Content from flat ``(key, args)`` atoms."""
    groups: dict = {}
    for key, args in atoms:
        rows = groups.get(key)
        if rows is None:
            groups[key] = [args]
        else:
            rows.append(args)
    return {key: frozenset(rows) for key, rows in groups.items()}


def gathered(groups: Iterable[tuple]) -> dict:
    """Content from ``(key, frozenset of args)`` groups; a key met twice gets
    the union of its groups (a decoded record may repeat a key)."""
    out: dict = {}
    _unite(out, groups)
    return out


def _unite(into: dict, groups: Iterable[tuple]) -> None:
    for key, rows in groups:
        have = into.get(key)
        into[key] = rows if have is None else have | rows


def atoms(content: Content) -> Iterator[tuple]:
    """The flat ``(key, args)`` atoms of a content."""
    for key, rows in content.items():
        for args in rows:
            yield key, args


def merged(contents: Iterable[Content]) -> Content:
    """The union of several contents (strata hold disjoint predicates, so
    this is mostly a dict merge; a shared key unites its groups)."""
    out: dict | None = None
    first: Content = NOTHING
    for c in contents:
        if not c:
            continue
        if not first:
            first = c
            continue
        if out is None:
            out = dict(first)
        _unite(out, c.items())
    return first if out is None else out


def changed(base: Content, add: Content, drop: Content) -> Content:
    """``base`` without ``drop`` and with ``add`` (in that order); unchanged
    groups stay the same objects."""
    if not add and not drop:
        return base
    out = dict(base)
    for key, rows in drop.items():
        have = out.get(key)
        if have is not None:
            left = have - rows
            if left:
                out[key] = left
            else:
                del out[key]
    _unite(out, add.items())
    return out


def difference(new: Content, base: Content) -> tuple[dict, dict, Content]:
    """(added, removed, new) from ``base`` to ``new``, where the returned
    ``new`` shares ``base``'s groups wherever they are equal (so points whose
    groups did not change hold no copy)."""
    add: dict = {}
    drop: dict = {}
    shared: dict = {}
    for key, rows in new.items():
        old = base.get(key)
        if old is None:
            add[key] = rows
        elif old is rows or old == rows:
            rows = old
        else:
            plus, minus = rows - old, old - rows
            if plus:
                add[key] = plus
            if minus:
                drop[key] = minus
        shared[key] = rows
    for key, old in base.items():
        if key not in new:
            drop[key] = old
    return add, drop, (base if not add and not drop else shared)
