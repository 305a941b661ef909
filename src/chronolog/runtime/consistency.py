"""The input events that keep an evaluation consistent, for ``explain --why`` of a program
whose evaluations date atoms (LARS ``@``-heads, ``Dialect.dates_back``).

A derivation's cited events re-derive its atom only where the evaluation on them alone has an
answer set: an ``@``-head whose time comes from a window (``c at X :- p(X) [1 #].``) can date
an atom outside the timeline once the other events are gone (LARS.md: then no answer set), so
the atom is not derived although every premise holds.  Where that happens, the explanation
also cites the fewest other events (of those the evaluation reads, nearest T first) that give
the evaluation an answer set again, under a "background" node: why there is an answer set at
T.  Only such trees change; the check is one evaluation of the cited events."""

from __future__ import annotations

from collections.abc import Callable, Iterator
from typing import TYPE_CHECKING

from chronolog.core.events import Event
from chronolog.core.explanation import Node
from chronolog.evaluator import Evaluator, atom_text

if TYPE_CHECKING:
    from chronolog.runtime.explain import Query


def keep_consistent(node: Node, events: list[Event], query: Query, fresh: Callable[[], Evaluator],
                    answers: Callable[[Evaluator, list[Event]], list[dict]]) -> None:
    """Add the background node to each derivation of ``node`` (one, or ``--all``'s) whose
    cited events alone leave the evaluation that derives it without an answer set."""
    trees = node.children if node.kind == "alternatives" else [node]
    for tree in trees:
        if tree.kind == "rule":
            _keep(tree, events, query, fresh, answers)


def _nodes(node: Node) -> Iterator[Node]:
    yield node
    for child in node.children:
        yield from _nodes(child)
    for entry in node.entries if node.says_why_not else []:
        yield from _nodes(entry)


def _keep(tree: Node, events: list[Event], query: Query, fresh: Callable[[], Evaluator],
          answers: Callable[[Evaluator, list[Event]], list[dict]]) -> None:
    t = query.t
    points = [t, *(n.derived_by for n in _nodes(tree) if n.derived_by is not None)]
    at = max(points)  # the evaluation that derives the tree's atom
    cited = {n.where for n in _nodes(tree) if n.kind == "event" and n.where}
    facts = [i for i, ev in enumerate(events) if ev.pred is not None and not ev.retract]
    kept = [i for i in facts if str(events[i].loc) in cited]
    if not facts or len(kept) < len(cited):
        return  # (an event the tree cites is not one of the input's facts: nothing to check)
    first = min(ev.t for ev in events if not ev.retract)

    def run(chosen: set[int]) -> list[dict]:
        return answers(fresh(), [Event(first), *(events[i] for i in sorted(chosen)), Event(at)])

    def derives(chosen: set[int]) -> bool:
        return query.holds(run(chosen))

    alone = run(set(kept))
    if query.holds(alone) or not any(line.get("no_answer_set") and line.get("t") == at for line in alone):
        return  # (sound as it is, or not for want of an answer set: left as it is)
    others = sorted((i for i in facts if i not in kept and events[i].t <= at), key=lambda i: (-events[i].t, -i))
    extra = next(([i] for i in others if derives({*kept, i})), None)
    if extra is None:  # no single event: all of them, then each left out that is not needed
        if not derives({*kept, *others}):
            return  # (not a matter of these events: left as it is)
        extra = list(others)
        for i in list(extra):
            if derives({*kept, *(j for j in extra if j != i)}):
                extra.remove(i)
    leaves = [Node("event", f"input {atom_text(events[i].pred or '', events[i].args)} at {events[i].t}",
                   where=str(events[i].loc) if events[i].loc else "", atom=atom_text(events[i].pred or '', events[i].args),
                   time=events[i].t) for i in sorted(extra, key=lambda i: (events[i].t, i))]
    tree.children.append(Node("background", f"the evaluation of {at} has an answer set: without these events it has "
                                            "none (as where an @-head would date an atom outside the timeline)",
                              children=leaves))
