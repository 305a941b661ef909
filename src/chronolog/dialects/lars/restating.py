"""A LARS chain upgrade's restatement made from the two versions' atoms per time point.

``keeping.evaluate_split`` evaluates the changed components of the new and of the running
version over [T - warm-up, now] point by point, each version's writer rendering its lines from
T on, and ``versions._restated_points`` then decodes the two sets of lines again to write only
the points where they differ: for a top-stratum change, most of an upgrade's work.  Where the
changed components of both versions read only the time point they evaluate (``pointwise.lift``:
no window, no ``at``, no ``@``-head, nothing that holds at every point) and the running
version's record holds the kept components' content at every point of [T, now]
(``crossing.CrossingRecord``), each version's changed components are evaluated over [T, now]
in one engine step of their lifted rules (a point's content is a function of that point's
input alone: no warm-up), and the restatement is read off the two versions' atoms: for each
atom the maximal runs of points where one version has it and the other has not, taken back
where only the running one has it, given where only the new one has — the lines
``_restated_points`` writes from the two writers' lines, in its order (the running version's
atoms, then the new one's others, each as its writer first names it: by the first point it
holds at, its predicate, its arguments sorted as the writer sorts a group; a group of more
than ``answers.SORT_LIMIT`` lines, which the writer leaves in the engine's set order, sorted).
"""

from __future__ import annotations

from math import inf
from typing import Any

from chronolog.dialects.lars.answers import args_order, runs
from chronolog.dialects.lars.crossing import CrossingRecord
from chronolog.dialects.lars.plan import Plan, PredKey
from chronolog.dialects.lars.pointwise import evaluate_span, lift, lifted_key
from chronolog.dialects.lars.reasoner import Reasoner
from chronolog.versions import run_lines

Atom = tuple[PredKey, tuple]


def restated_at_once(changed: tuple[tuple[Plan, frozenset[int]], tuple[Plan, frozenset[int]]], old: Reasoner,
                     quiet: frozenset[str], at: int, point: int, until: int, record: CrossingRecord,
                     points: bool) -> list[bytes] | None:
    """The lines restating the running version's answers from ``at`` on (its changed
    components, ``changed[1]``: its plan and their indices) as the new version's
    (``changed[0]``), both evaluated over [``point``, ``until``] on ``old``'s log and the kept
    components' content in ``record``, without the ``quiet`` answer keys (``p/1``); ``points``:
    the writers write a ``t`` line per atom and point (``answers="points"``), else changelog
    intervals.  None where it cannot: a changed component reads another point, the record
    lacks a point or a predicate (the caller evaluates point by point)."""
    entries = record.entries
    recorded = set(record.preds)
    lifts = []
    for plan, components in changed:
        got = lift(plan, [plan.components[ci] for ci in sorted(components)])
        if got is None or not got.imported <= recorded:
            return None
        lifts.append(got)
    if any(t not in entries for t in range(point, until + 1)):
        return None  # (a point without an answer set, or not recorded: no entry)
    held: list[dict[Atom, list[int]]] = []
    for (plan, _), got in zip(changed, lifts, strict=True):
        engine = evaluate_span(got, point, until, entries.get, old.log)
        assert engine is not None  # (every point has an entry)
        atoms: dict[Atom, list[int]] = {}
        for p in got.order:
            if p in plan.output and f"{p[0]}/{p[1]}" not in quiet:
                for row in engine.rels[lifted_key(p)].tuples:
                    atoms.setdefault((p, row[:-1]), []).append(row[-1])
        held.append(atoms)
    now, was = held
    order: dict[Atom, tuple] = {atom: (0, min(times), atom[0], args_order(atom[1])) for atom, times in was.items()}
    for atom, times in now.items():
        order.setdefault(atom, (1, min(times), atom[0], args_order(atom[1])))
    back: list[bytes | None] = []
    given: list[bytes | None] = []
    for atom in sorted(order, key=order.__getitem__):
        old_times, new_times = set(was.get(atom, ())), set(now.get(atom, ()))
        (pred, _), args = atom
        for lo, last, diff in runs(sorted([(t, -1) for t in old_times - new_times]
                                           + [(t, 1) for t in new_times - old_times])):
            hi: Any = inf if last == until and not points else last + 1  # (a changelog line stays open)
            if hi <= at:
                continue
            (given if diff > 0 else back).extend(run_lines(pred, args, max(lo, at), hi, diff, points))
    return [line for line in back + given if line is not None]

