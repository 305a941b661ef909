"""An explanation as data: a tree of nodes (``chronolog explain --why / --why-not``).

Each dialect builds it from its own rules and time (``Dialect.explain``); the renderers here
(text, JSON, DOT) and in ``explanation_page`` (HTML) draw it without knowing the language."""

from __future__ import annotations

import re
from typing import Any

from chronolog.core import intervals as I
from chronolog.core.records import field, record


@record
class Node:
    """One step: an atom derived by a rule instance (``rule``: file:line and the rule's text;
    ``bindings``: its variables), a literal and how it was met, an input event (``where``:
    its file and line, or topic and offset), a negated literal and why it does not hold
    (``why_not``: for each rule whose head matches its atom, that rule with its first failing
    literal and the reason, as ``--why-not`` gives them)."""

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
    operand: str = ""  # a Since/Until literal's premise: "right" (at the witness time) or "left" (the stretch to it)
    why_not: list[Node] | None = None  # why-not entries (a rule, its failing literal, why); None: not told
    late: bool = False  # an input event that arrived after the stream had passed its time (CONTRACT 2)
    missing: Any = None  # a why-not entry's one missing input event (an ``Event``), once confirmed to derive the atom
    candidates: list[Any] = field(default_factory=list)  # input events that might be it (unconfirmed: never shown)
    # a nested entry's events for the entry above it instead of ``candidates`` (a DatalogMTL Box's
    # operand: what fills the range's gaps, where its own candidates fill one point); None: those
    above: list[Any] | None = None
    # a nested entry's atom and time (pred, args, t) its candidates must derive, and (a LARS @-head's
    # atom dated back) the point e whose evaluation must: (pred, args, t, e); None: the query's
    goal: Any = None
    blocks: bool = False  # a negated metric literal's entry: its candidates make the operand hold, so ``goal`` fails
    derived_by: Any = None  # a LARS @-head's atom: the point whose evaluation derived it (not written out)

    @property
    def entries(self) -> list[Node]:
        """The why-not entries (none: no rule derives the atom, or they are not told)."""
        return self.why_not or []

    @property
    def says_why_not(self) -> bool:
        """Whether the node tells why an atom does not hold, rule by rule (even by no rule)."""
        return self.why_not is not None or self.kind == "none"

    def data(self) -> dict[str, Any]:
        """The node as ``explain --as json`` writes it (``contract.models.ExplanationNode``)."""
        out: dict[str, Any] = {"kind": self.kind, "text": self.text}
        for name in ("atom", "interval", "window", "literal", "reason"):
            if getattr(self, name):
                out[name] = getattr(self, name)
        if self.time is not None:
            out["time"] = json_time(self.time)
        if self.rule:
            out["rule"] = _rule_ref(self.rule)
        if self.bindings:
            out["bindings"] = _bindings(self.bindings)
        if self.negated:
            out["negated"] = True
        if self.operand:
            out["operand"] = self.operand
        if self.where:
            out["source"] = self.where
        if self.late:
            out["late"] = True
        if self.children:
            out["premises"] = [c.data() for c in self.children]
        if self.says_why_not:
            out["why_not"] = [entry.entry_data() for entry in self.entries]
        return out

    def entry_data(self) -> dict[str, Any]:
        """The node as a why-not entry (``contract.models.WhyNotEntry``): the rule, the bindings
        the query fixes, the failing literal (none when the body holds) and the reason."""
        out: dict[str, Any] = {"text": self.text, "rule": _rule_ref(self.rule), "bindings": _bindings(self.bindings),
                               "reason": self.reason or self.text}
        if self.literal:
            out["literal"] = self.literal
        if self.missing is not None:
            ev = self.missing
            out["missing"] = {"pred": ev.pred, "args": list(_bindings(dict(enumerate(ev.args))).values()),
                              "time": json_time(ev.t), "text": missing_text(ev)}
            if _spread(ev):
                out["missing"]["interval"] = I.text(I.of_span(ev.span))
            if self.goal is not None:  # a nested entry: the atom it derives (or blocks) is not the query's
                pred, args, t = self.goal[:3]
                key = "blocks" if self.blocks else "derives"
                out["missing"][key] = {"pred": pred, "args": list(_bindings(dict(enumerate(args))).values()),
                                       "time": json_time(t)}
                if len(self.goal) > 3:  # (a LARS @-head's atom: the point whose evaluation derives it)
                    out["missing"][key]["evaluation"] = self.goal[3]
        if self.children:
            out["premises"] = [c.data() for c in self.children]
        if self.why_not is not None:
            out["why_not"] = [entry.entry_data() for entry in self.why_not]
        return out

    def lines(self, indent: int = 0) -> list[str]:
        pad = "  " * indent
        head = self.text + (f"  [{self.where}]" if self.where else "") + ("  (arrived late)" if self.late else "")
        out = [pad + head]
        if self.rule:
            binding = ", ".join(f"{k}={v}" for k, v in sorted(self.bindings.items()))
            out.append(pad + f"  by {self.rule}" + (f"  with {binding}" if binding else ""))
        for child in self.children:
            out += child.lines(indent + 1)
        if self.why_not and self.kind not in ("why-not", "none"):
            out.append(pad + "  why not:")
            indent += 1
        for entry in self.entries:
            out += entry.lines(indent + 1)
        return out

    def dot(self) -> str:
        """The tree as a Graphviz digraph (``dot -Tsvg``): a box per node, an arrow to each part."""
        return dot([self])

    def label(self) -> list[str]:
        """The node's lines in a box of a drawing: its text, the rule and bindings, the source."""
        parts = [self.text]
        if self.rule:
            binding = ", ".join(f"{k}={v}" for k, v in sorted(self.bindings.items()))
            parts.append(f"by {self.rule}" + (f" with {binding}" if binding else ""))
        if self.where:
            parts.append(f"from {self.where}" + (" (arrived late)" if self.late else ""))
        return parts


def mark_late(trees: list[Node], late: set[str]) -> None:
    """Mark the input events (leaves) whose source is in ``late`` as having arrived late, in
    the premises and the why-not subtrees alike."""
    if not late:
        return
    todo = list(trees)
    while todo:
        node = todo.pop()
        if node.where and node.where in late:
            node.late = True
        todo += node.children
        todo += node.why_not or []


def dot(trees: list[Node]) -> str:
    """Trees (``--all``: every derivation) as one Graphviz digraph: a box per node, an arrow to
    each premise, a dashed arrow to each why-not entry."""
    out = ["digraph explanation {", '  node [shape=box, fontname="Helvetica", fontsize=10];']
    counter = [0]

    def visit(node: Node) -> str:
        name = f"n{counter[0]}"
        counter[0] += 1
        label = "\\n".join(_dot_escape(x) for x in node.label())
        out.append(f'  {name} [label="{label}"];')
        for child in node.children:
            out.append(f"  {name} -> {visit(child)};")
        for entry in node.entries:
            out.append(f'  {name} -> {visit(entry)} [style=dashed, label="why not"];')
        return name

    for tree in trees:
        visit(tree)
    out.append("}")
    return "\n".join(out) + "\n"


def text(trees: list[Node]) -> str:
    """Trees as the indented text a person reads in a terminal (``--all``: numbered)."""
    if len(trees) == 1:
        return "\n".join(trees[0].lines()) + "\n"
    out = []
    for k, tree in enumerate(trees, 1):
        out.append(f"derivation {k} of {len(trees)}:")
        out += tree.lines(1)
    return "\n".join(out) + "\n"


def json_time(t: Any) -> Any:
    """A time as the JSON writes it: an integer, or ``"7/2"`` for a rational time."""
    if type(t) is int:
        return t
    if hasattr(t, "denominator"):
        return t.numerator if t.denominator == 1 else f"{t.numerator}/{t.denominator}"
    return str(t)


def missing_text(ev: Any) -> str:
    """A missing input event as the text form names it: ``speed(a1, 20) at 4``."""
    atom = f"{ev.pred}({', '.join(str(a) for a in ev.args)})" if ev.args else ev.pred
    return f"{atom} on {I.text(I.of_span(ev.span))}" if _spread(ev) else f"{atom} at {json_time(ev.t)}"


def _spread(ev: Any) -> bool:
    """Whether an event holds on an interval (DatalogMTL's; RTEC's ``collectIntervals``), not at one point."""
    if ev.span is None:
        return False
    iv = I.of_span(ev.span)
    return iv[0] != iv[2]


def _bindings(b: dict[Any, Any]) -> dict[str, Any]:
    return {k: v if type(v) in (int, str) else str(v) for k, v in b.items()}


def _dot_escape(text: str) -> str:
    return text.replace("\\", "\\\\").replace('"', '\\"')


def _rule_ref(text: str) -> dict[str, Any]:
    """``file:line: text`` as ``{"file", "line", "text"}``."""
    match = re.match(r"^(.*?):(\d+): (.*)$", text, re.S)
    if match is None:
        return {"file": "", "line": 0, "text": text}
    return {"file": match.group(1), "line": int(match.group(2)), "text": match.group(3)}
