"""An explanation tree's renderings: DOT (one box per node, one arrow per part, quotes
escaped) and the HTML page (nested lists that parse back to the same tree, text escaped, no
external resource; its timeline's rows read off the tree).  The page as a browser draws it:
tests/runtime/test_explain_page.py."""

from __future__ import annotations

import re
from html.parser import HTMLParser

from chronolog.core.explanation import Node
from chronolog.core.explanation_page import DERIVED, EVENT, page, timeline_rows

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

    parsed = Depths()
    html = page([TREE], "why q")
    parsed.feed(html[html.index('<ul class="tree">'):].rsplit("</section>", 1)[0])
    assert parsed.items == [1, 2, 3, 2] and parsed.depth == 0  # root, literal, its event, the negation
    text = "".join(parsed.text)
    assert 'q("a b") at 2' in text and "not r(<x>) & co" in text and "from in.jsonl:3:1" in text
    assert "<x>" not in html.split("<body>")[1].replace("&lt;x&gt;", "")


def test_the_page_loads_nothing_from_outside():
    html = page([TREE], "why q")
    assert not re.search(r"<(link|img|iframe|object|embed)\b|\bsrc=|url\((?!#)|@import|https?://(?!www\.w3\.org/2000/svg)",
                         html), "the page must be self-contained"


def test_the_timeline_has_a_row_per_premise_atom():
    tree = Node("rule", "q(a) at 4", atom="q(a)", time=4, children=[
        Node("literal", "p(a) [3]: met at 2 in window [1,4]", atom="p(a) [3]", window="window [1,4]",
             children=[Node("event", "input p(a) at 2", atom="p(a)", time=2, where="in:1:1")]),
        Node("negated", "not r(a) [1]: no such fact in window [3,4]", atom="not r(a) [1]", negated=True,
             window="window [3,4]", why_not=[]),
        Node("literal", "H(a) holds on [0,5]", atom="H(a)", interval="[0,5]",
             children=[Node("event", "input H(a) on [0,5]", atom="H(a)", interval="[0,5]")])])
    rows = {r.label: r for r in timeline_rows([tree])}
    assert list(rows) == ["q(a)", "p(a)", "not r(a) [1]", "H(a)"]
    assert rows["q(a)"].points == [(4, DERIVED, "derived q(a) at 4")]
    assert rows["p(a)"].points == [(2, EVENT, "input p(a) at 2")] and rows["p(a)"].windows == [(1, 4)]
    assert rows["not r(a) [1]"].absent == [(3, 4)]
    assert rows["H(a)"].bars == [(0, 5, EVENT, "input H(a) on [0,5]")]


def test_the_timeline_shows_a_why_not_atom_absent_at_t():
    tree = Node("why-not", "open(d1) does not hold at 10", atom="open(d1)", time=10, interval="[4,9)",
                children=[Node("event", "input closed(d1) at 8", atom="closed(d1)", time=8)])
    rows = {r.label: r for r in timeline_rows([tree])}
    assert rows["open(d1)"].absent == [(10, 10)] and rows["open(d1)"].bars == [(4, 9, DERIVED, "open(d1) held on [4,9)")]
    assert rows["closed(d1)"].points == [(8, EVENT, "input closed(d1) at 8")]


def test_derivations_sharing_premises_draw_them_once():
    event = Node("event", "input p(a) at 1", atom="p(a)", time=1)
    trees = [Node("rule", "q(a) at 2", atom="q(a)", time=2, children=[
        Node("literal", "p(a) [2]", atom="p(a) [2]", window="window [0,2]", children=[event])]) for _ in range(2)]
    (q, p) = timeline_rows(trees)
    assert (len(q.points), len(p.points), p.windows) == (1, 1, [(0, 2)])
