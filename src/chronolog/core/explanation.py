"""An explanation as data: a tree of nodes (``chronolog explain --why / --why-not``).

Each dialect builds it from its own rules and time (``Dialect.explain``); the runtime renders
it (text, JSON) without knowing the language."""

from __future__ import annotations

import html
import re
from typing import Any

from chronolog.core.records import field, record


@record
class Node:
    """One step: an atom derived by a rule instance (``rule``: file:line and the rule's text;
    ``bindings``: its variables), a literal and how it was met, an input event (``where``:
    its file and line, or topic and offset), a negated literal and why it does not hold."""

    kind: str
    text: str
    rule: str = ""  # "file:line: the rule's text"
    bindings: dict[str, Any] = field(default_factory=dict)
    where: str = ""  # an input event's source: file:line:col, or a topic's partition and offset
    children: list[Node] = field(default_factory=list)
    atom: str = ""  # the atom (or literal) the node is about, as the program writes it
    time: Any = None  # its time point (an int, or a Fraction over rational time)
    interval: str = ""  # its maximal interval, as answer lines write it
    window: str = ""  # the window or metric range a literal was read over
    literal: str = ""  # a why-not rule's failing body literal
    reason: str = ""  # why it fails
    negated: bool = False

    def data(self) -> dict[str, Any]:
        """The node as ``explain --as json`` writes it (``contract.models.ExplanationNode``)."""
        out: dict[str, Any] = {"kind": self.kind, "text": self.text}
        for name in ("atom", "interval", "window", "literal", "reason"):
            if getattr(self, name):
                out[name] = getattr(self, name)
        if self.time is not None:
            out["time"] = self.time if type(self.time) is int else _time_text(self.time)
        if self.rule:
            out["rule"] = _rule_ref(self.rule)
        if self.bindings:
            out["bindings"] = {k: v if type(v) in (int, str) else str(v) for k, v in self.bindings.items()}
        if self.negated:
            out["negated"] = True
        if self.where:
            out["source"] = self.where
        if self.children:
            out["premises"] = [c.data() for c in self.children]
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

    def dot(self) -> str:
        """The tree as a Graphviz digraph (``dot -Tsvg``): a box per node, an arrow to each part."""
        out = ["digraph explanation {", '  node [shape=box, fontname="Helvetica", fontsize=10];']
        counter = [0]

        def visit(node: Node) -> str:
            name = f"n{counter[0]}"
            counter[0] += 1
            label = "\\n".join(_dot_escape(x) for x in node._label())
            out.append(f'  {name} [label="{label}"];')
            for child in node.children:
                out.append(f"  {name} -> {visit(child)};")
            return name

        visit(self)
        out.append("}")
        return "\n".join(out) + "\n"

    def html(self, title: str) -> str:
        """The tree as a page of nested lists, each node folding its parts (``<details>``)."""
        def item(node: Node) -> str:
            text = "<br>".join(_html_escape(x) for x in node._label())
            if not node.children:
                return f"<li>{text}</li>"
            inner = "".join(item(c) for c in node.children)
            return f"<li><details open><summary>{text}</summary><ul>{inner}</ul></details></li>"

        return (f"<!doctype html><html><head><meta charset=utf-8><title>{_html_escape(title)}</title>"
                "<style>body{font-family:sans-serif} ul{list-style:none} summary{cursor:pointer}</style>"
                f"</head><body><h1>{_html_escape(title)}</h1><ul>{item(self)}</ul></body></html>\n")

    def _label(self) -> list[str]:
        parts = [self.text]
        if self.rule:
            binding = ", ".join(f"{k}={v}" for k, v in sorted(self.bindings.items()))
            parts.append(f"by {self.rule}" + (f" with {binding}" if binding else ""))
        if self.where:
            parts.append(f"from {self.where}")
        return parts


def _dot_escape(text: str) -> str:
    return text.replace("\\", "\\\\").replace('"', '\\"')


def _html_escape(text: str) -> str:
    return html.escape(text, quote=True)


def _rule_ref(text: str) -> dict[str, Any]:
    """``file:line: text`` as ``{"file", "line", "text"}``."""
    match = re.match(r"^(.*?):(\d+): (.*)$", text, re.S)
    if match is None:
        return {"file": "", "line": 0, "text": text}
    return {"file": match.group(1), "line": int(match.group(2)), "text": match.group(3)}


def _time_text(t: Any) -> Any:
    if hasattr(t, "denominator"):
        return t.numerator if t.denominator == 1 else f"{t.numerator}/{t.denominator}"
    return str(t)
