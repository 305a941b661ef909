"""An explanation as data: a tree of nodes (``chronolog explain --why / --why-not``).

Each dialect builds it from its own rules and time (``Dialect.explain``); the runtime renders
it (text, JSON) without knowing the language."""

from __future__ import annotations

from typing import Any

from chronolog.core.records import field, record


@record
class Node:
    """One step: an atom derived by a rule instance (``rule``: file:line and the rule's text;
    ``bindings``: its variables), a literal and how it was met, an input event (``where``:
    its file and line, or topic and offset), a negated literal and why it does not hold."""

    kind: str
    text: str
    rule: str = ""
    bindings: dict[str, Any] = field(default_factory=dict)
    where: str = ""
    children: list[Node] = field(default_factory=list)

    def data(self) -> dict[str, Any]:
        out: dict[str, Any] = {"kind": self.kind, "text": self.text}
        if self.rule:
            out["rule"] = self.rule
        if self.bindings:
            out["bindings"] = dict(self.bindings)
        if self.where:
            out["where"] = self.where
        if self.children:
            out["children"] = [c.data() for c in self.children]
        return out

    def lines(self, indent: int = 0) -> list[str]:
        pad = "  " * indent
        head = self.text + (f"  [{self.where}]" if self.where else "")
        out = [pad + head]
        if self.rule:
            binding = ", ".join(f"{k}={v}" for k, v in sorted(self.bindings.items()))
            out.append(pad + f"  by {self.rule}" + (f"  with {binding}" if binding else ""))
        for child in self.children:
            out += child.lines(indent + 1)
        return out
