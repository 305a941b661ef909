"""An explanation tree's renderings: DOT (one box per node, one arrow per part, quotes
escaped) and HTML (nested lists that parse back to the same tree, text escaped)."""

from __future__ import annotations

import re
from html.parser import HTMLParser

from chronolog.core.explanation import Node

TREE = Node("rule", 'q("a b") at 2', rule="p.lars:1: q(X) :- p(X).", bindings={"X": "a b"}, children=[
    Node("literal", "p(a b) [2]: met at 1", children=[Node("event", "input p(a b) at 1", where="in.jsonl:3:1")]),
    Node("negated", "not r(<x>) & co: no such fact"),
])


def _nodes(node: Node) -> list[Node]:
    return [node, *(n for c in node.children for n in _nodes(c))]


def test_dot_has_a_box_per_node_and_an_arrow_per_part():
    text = TREE.dot()
    boxes = re.findall(r'^  (n\d+) \[label="((?:[^"\\]|\\.)*)"\];$', text, re.M)
    arrows = re.findall(r"^  (n\d+) -> (n\d+);$", text, re.M)
    assert len(boxes) == len(_nodes(TREE)) and len(arrows) == len(_nodes(TREE)) - 1
    assert boxes[0][1].startswith('q(\\"a b\\") at 2\\nby p.lars:1: q(X) :- p(X). with X=a b')
    assert ("n1", "n2") in arrows and text.startswith("digraph explanation {") and text.rstrip().endswith("}")


def test_html_nests_as_the_tree_does():
    class Depths(HTMLParser):
        def __init__(self) -> None:
            super().__init__()
            self.depth, self.items, self.text = 0, [], []

        def handle_starttag(self, tag: str, attrs: list) -> None:
            if tag == "ul":
                self.depth += 1
            if tag == "li":
                self.items.append(self.depth)

        def handle_endtag(self, tag: str) -> None:
            if tag == "ul":
                self.depth -= 1

        def handle_data(self, data: str) -> None:
            self.text.append(data)

    page = Depths()
    page.feed(TREE.html("why q"))
    assert page.items == [1, 2, 3, 2] and page.depth == 0  # root, literal, its event, the negation
    text = "".join(page.text)
    assert 'q("a b") at 2' in text and "not r(<x>) & co" in text and "from in.jsonl:3:1" in text
    assert "<x>" not in TREE.html("why q").split("<body>")[1].replace("&lt;x&gt;", "")
