"""Strongly connected components (Tarjan's, without recursion): the LARS planner's strata and
RTEC's hierarchy.  A module of its own so that RTEC runs do not import the planner."""

from __future__ import annotations

from typing import Any, Protocol, TypeVar


class _Node(Protocol):
    def __hash__(self) -> int: ...

    def __lt__(self, other: Any, /) -> bool: ...


N = TypeVar("N", bound=_Node)  # a node: hashable and ordered


def strongly_connected(nodes: list[N], edges: dict[N, set[N]]) -> list[list[N]]:
    """Strongly connected components, each after the components it depends on."""
    index: dict[N, int] = {}
    low: dict[N, int] = {}
    on_stack: set[N] = set()
    stack: list[N] = []
    out: list[list[N]] = []
    counter = 0

    for root in nodes:
        if root in index:
            continue
        work: list[tuple[N, list[N]]] = [(root, sorted(edges[root]))]
        index[root] = low[root] = counter
        counter += 1
        stack.append(root)
        on_stack.add(root)
        while work:
            v, todo = work[-1]
            if todo:
                w = todo.pop()
                if w not in index:
                    index[w] = low[w] = counter
                    counter += 1
                    stack.append(w)
                    on_stack.add(w)
                    work.append((w, sorted(edges[w])))
                elif w in on_stack:
                    low[v] = min(low[v], index[w])
                continue
            work.pop()
            if work:
                low[work[-1][0]] = min(low[work[-1][0]], low[v])
            if low[v] == index[v]:
                scc = []
                while True:
                    w = stack.pop()
                    on_stack.discard(w)
                    scc.append(w)
                    if w == v:
                        break
                out.append(sorted(scc))
    return out
