"""``chronolog explain --as html``: one self-contained page (no external resource, so it can be
mailed or attached to a ticket) with the explanation tree, each node folding its parts, and a
timeline of the atom's premises: one row per atom, where input events happened (blue), where
derived atoms hold (green), the windows the literals read (shaded) and where a negated
literal's atom is absent (red hatching), with T marked.

The timeline is read off the tree (``atom``, ``time``, ``interval``, ``window`` of the nodes),
so it draws any dialect's explanation the same way."""

from __future__ import annotations

import html
import re
from collections.abc import Iterator
from fractions import Fraction
from typing import Any

from chronolog.core.explanation import Node, json_time
from chronolog.core.records import field, record

# colours the page and its browser test agree on (tests/runtime/test_explain_page.py)
EVENT = "#1f6feb"  # an input event
DERIVED = "#1a7f37"  # a derived atom, a program fact
NEGATED = "#cf222e"  # a negated literal: its atom absent
WINDOW = "#d0e2ff"  # the window a literal read
WINDOW_EDGE = "#6e9be6"
QUERY = "#bf5b00"  # T

WIDTH, LABEL, PLOT, ROW = 960, 250, 680, 28  # the timeline's geometry in CSS pixels
_POINT = re.compile(r"^\s*at\s+(-?[0-9/.]+)\s*$")
_INTERVAL = re.compile(r"([\[(])\s*(-?[0-9/.]+)\s*,\s*(-?[0-9/.]+|inf)\s*([\])])")


@record
class Row:
    """One atom of the timeline and what is drawn on it."""

    label: str
    points: list[tuple[Fraction, str, str]] = field(default_factory=list)  # time, colour, tooltip
    bars: list[tuple[Fraction, Fraction | None, str, str]] = field(default_factory=list)  # lo, hi (None: inf)
    windows: list[tuple[Fraction, Fraction]] = field(default_factory=list)
    absent: list[tuple[Fraction, Fraction]] = field(default_factory=list)  # a negated literal's window
    always: bool = False  # a program fact: at every time


def page(trees: list[Node], title: str, t: Any = None) -> str:
    """The page of one explanation (``--all``: of each derivation), ``t`` the queried time
    (default: the first tree's)."""
    if t is None and trees:
        t = trees[0].time
    at = _fraction(t) if t is not None else None
    rows = timeline_rows(trees)
    body = [f"<h1>{_e(title)}</h1>",
            '<p class="tools"><button type="button" id="open-all">expand all</button> '
            '<button type="button" id="close-all">collapse all</button></p>',
            "<section><h2>Timeline</h2>", timeline_svg(rows, at), _legend(), "</section>",
            "<section><h2>Derivation" + ("s" if len(trees) > 1 else "") + "</h2>"]
    for k, tree in enumerate(trees, 1):
        if len(trees) > 1:
            body.append(f"<h3>derivation {k} of {len(trees)}</h3>")
        body.append(f'<ul class="tree">{_item(tree)}</ul>')
    body.append("</section>")
    return (f"<!doctype html>\n<html lang=en><head><meta charset=utf-8><title>{_e(title)}</title>"
            f"<meta name=viewport content='width=device-width'><style>{_CSS}</style></head>"
            f"<body>{''.join(body)}<script>{_JS}</script></body></html>\n")


# ------------------------------------------------------------------------------ the timeline


def timeline_rows(trees: list[Node]) -> list[Row]:
    """The rows of the timeline, in the order their atoms first appear in the trees."""
    rows: dict[str, Row] = {}

    def row(label: str) -> Row:
        return rows.setdefault(label, Row(label))

    for node, parent in _walk(trees):
        if node.negated and node.atom:
            span = _window(node) or _interval(node.interval)
            if span is not None and span[1] is not None:
                row(node.atom).absent.append((span[0], span[1]))
            continue
        if node.kind in ("why-not", "none") and node.atom and node.time is not None:  # the atom asked about
            at = _fraction(node.time)
            row(node.atom).absent.append((at, at))
            iv = _interval(node.interval)
            if iv is not None:  # where it held before (the Event Calculus: until it was terminated)
                row(node.atom).bars.append((iv[0], iv[1], DERIVED, f"{node.atom} held on {node.interval}"))
            continue
        if not node.atom or node.kind in ("literal", "test", "negated", "why-not", "none"):
            continue
        colour = EVENT if node.kind in ("event", "input") else DERIVED
        what = "input" if node.kind in ("event", "input") else "derived"
        iv = _interval(node.interval)
        if iv is not None:
            row(node.atom).bars.append((iv[0], iv[1], colour, f"{what} {node.atom} on {node.interval}"))
        elif node.time is not None:
            row(node.atom).points.append((_fraction(node.time), colour, f"{what} {node.atom} at {json_time(node.time)}"))
        elif node.kind == "fact":
            row(node.atom).always = True
        if parent is not None and parent.kind == "literal":
            window = _window(parent)
            if window is not None and window[1] is not None:
                row(node.atom).windows.append((window[0], window[1]))
    for r in rows.values():  # --all: derivations share premises; each mark once
        r.points, r.bars = list(dict.fromkeys(r.points)), list(dict.fromkeys(r.bars))
        r.windows, r.absent = list(dict.fromkeys(r.windows)), list(dict.fromkeys(r.absent))
    return list(rows.values())


def _walk(trees: list[Node]) -> Iterator[tuple[Node, Node | None]]:
    stack: list[tuple[Node, Node | None]] = [(tree, None) for tree in reversed(trees)]
    while stack:
        node, parent = stack.pop()
        yield node, parent
        stack += [(c, node) for c in reversed([*node.children, *node.entries])]


def _window(node: Node) -> tuple[Fraction, Fraction | None] | None:
    """The first interval a literal's ``window`` text names (``window [0,2]``, ``every point
    of [5/2,7/2] at 7/2, range [0,1]``), or the point of ``at 2`` (a literal read at T)."""
    got = _interval(node.window)
    if got is None and (match := _POINT.match(node.window or "")) is not None:
        try:
            return Fraction(match.group(1)), Fraction(match.group(1))
        except (ValueError, ZeroDivisionError):
            return None
    return got


def _interval(text: str) -> tuple[Fraction, Fraction | None] | None:
    match = _INTERVAL.search(text or "")
    if match is None:
        return None
    try:
        lo = Fraction(match.group(2))
        hi = None if match.group(3) == "inf" else Fraction(match.group(3))
    except (ValueError, ZeroDivisionError):
        return None
    return lo, hi


def _fraction(t: Any) -> Fraction:
    try:
        return Fraction(str(json_time(t)))
    except (ValueError, ZeroDivisionError):
        return Fraction(0)


def axis(rows: list[Row], t: Fraction | None) -> tuple[Fraction, Fraction]:
    """The times the timeline spans: every mark and window, and T, with a margin of one unit."""
    times = [x for r in rows for x, _, _ in r.points]
    times += [x for r in rows for lo, hi, _, _ in r.bars for x in (lo, hi) if x is not None]
    times += [x for r in rows for span in (*r.windows, *r.absent) for x in span]
    if t is not None:
        times.append(t)
    if not times:
        return Fraction(0), Fraction(1)
    lo, hi = min(times), max(times)
    margin = max((hi - lo) / 20, Fraction(1, 2))
    return lo - margin, hi + margin


def x_of(time: Fraction, span: tuple[Fraction, Fraction]) -> float:
    """The x coordinate (CSS pixels from the SVG's left) of a time."""
    lo, hi = span
    return LABEL + float((time - lo) / (hi - lo)) * PLOT


def _ticks(span: tuple[Fraction, Fraction], rows: list[Row]) -> list[Fraction]:
    """Round times across the axis: whole numbers where every time is one, else halves too."""
    lo, hi = span
    width = hi - lo
    whole = all(x.denominator == 1 for r in rows for x, _, _ in r.points) and all(
        x is None or x.denominator == 1 for r in rows for a, b, _, _ in r.bars for x in (a, b))
    step = Fraction(1) if whole or width > 8 else Fraction(1, 2)
    for candidate in (1, 2, 5, 10, 20, 50, 100, 200, 500, 1000, 2000, 5000, 10000, 20000, 50000, 100000):
        if width / max(step, Fraction(candidate)) <= 16:
            step = max(step, Fraction(candidate))
            break
    else:
        step = width / 10
    first = -(-lo // step) * step
    out = []
    x = first
    while x <= hi:
        out.append(x)
        x += step
    return out


def timeline_svg(rows: list[Row], t: Fraction | None) -> str:
    """The timeline as an inline SVG: a label column, then one band per row over the axis."""
    span = axis(rows, t)
    top, height = 26, 26 + ROW * max(len(rows), 1) + 8
    out = [f'<svg id="timeline" xmlns="http://www.w3.org/2000/svg" width="{WIDTH}" height="{height}" '
           f'viewBox="0 0 {WIDTH} {height}" role="img" aria-label="timeline of the premises">',
           '<defs><pattern id="absent" width="6" height="6" patternUnits="userSpaceOnUse" '
           f'patternTransform="rotate(45)"><rect width="3" height="6" fill="{NEGATED}"/></pattern></defs>']
    for tick in _ticks(span, rows):
        x = x_of(tick, span)
        out.append(f'<line class="tick" data-time="{_time_text(tick)}" x1="{x:.2f}" x2="{x:.2f}" y1="{top - 4}" '
                   f'y2="{height - 6}" stroke="#e4e7eb"/>'
                   f'<text class="tick-label" x="{x:.2f}" y="{top - 8}" text-anchor="middle">{_time_text(tick)}</text>')
    for k, r in enumerate(rows):
        y = top + k * ROW
        out.append(f'<g class="row" data-atom="{_e(r.label)}">')
        if k % 2:
            out.append(f'<rect x="0" y="{y}" width="{WIDTH}" height="{ROW}" fill="#f6f8fa"/>')
        label = r.label if len(r.label) <= 34 else r.label[:33] + "…"
        out.append(f'<text class="row-label" x="{LABEL - 10}" y="{y + ROW / 2 + 4}" text-anchor="end">'
                   f'<title>{_e(r.label)}</title>{_e(label)}</text>')
        out += _marks(r, y, span)
        out.append("</g>")
    if t is not None:
        x = x_of(t, span)
        out.append(f'<line id="query-time" x1="{x:.2f}" x2="{x:.2f}" y1="{top - 4}" y2="{height - 4}" '
                   f'stroke="{QUERY}" stroke-width="2" stroke-dasharray="5 3"/>'
                   f'<text x="{x + 4:.2f}" y="{height - 2}" fill="{QUERY}" class="query-label">T={_time_text(t)}</text>')
    out.append("</svg>")
    return "".join(out)


def _marks(r: Row, y: int, span: tuple[Fraction, Fraction]) -> list[str]:
    mid, out = y + ROW / 2, []
    end = LABEL + PLOT
    for lo, hi in r.windows:
        a, b = x_of(lo, span), x_of(hi, span)
        out.append(f'<rect class="window" x="{a - 6:.2f}" y="{y + 3}" width="{b - a + 12:.2f}" height="{ROW - 6}" '
                   f'rx="6" fill="{WINDOW}"><title>window [{_time_text(lo)},{_time_text(hi)}]</title></rect>')
    for lo, hi in r.absent:
        a, b = x_of(lo, span), x_of(hi, span)
        out.append(f'<rect class="absent" x="{a - 6:.2f}" y="{y + 5}" width="{b - a + 12:.2f}" height="{ROW - 10}" '
                   f'fill="url(#absent)" stroke="{NEGATED}"><title>absent in [{_time_text(lo)},{_time_text(hi)}]'
                   "</title></rect>")
    if r.always:
        out.append(f'<rect class="fact" x="{LABEL}" y="{mid - 2}" width="{PLOT}" height="4" fill="{DERIVED}" '
                   'opacity="0.5"><title>a program fact: at every time</title></rect>')
    for start, stop, colour, tip in r.bars:
        a = x_of(start, span)
        b = end if stop is None else x_of(stop, span)
        out.append(f'<rect class="bar" x="{a:.2f}" y="{mid - 6}" width="{max(b - a, 3):.2f}" height="12" rx="3" '
                   f'fill="{colour}"><title>{_e(tip)}</title></rect>')
    for lo, hi in r.windows:  # the window's outline over the bars it frames
        a, b = x_of(lo, span), x_of(hi, span)
        out.append(f'<rect class="window-edge" x="{a - 6:.2f}" y="{y + 3}" width="{b - a + 12:.2f}" '
                   f'height="{ROW - 6}" rx="6" fill="none" stroke="{WINDOW_EDGE}" stroke-dasharray="4 3"/>')
    for at, colour, tip in r.points:
        out.append(f'<circle class="point" cx="{x_of(at, span):.2f}" cy="{mid}" r="6" fill="{colour}">'
                   f"<title>{_e(tip)}</title></circle>")
    return out


def _legend() -> str:
    def item(swatch: str, text: str) -> str:
        return f'<span class="key"><svg width="22" height="12">{swatch}</svg>{text}</span>'

    return ('<p class="legend">'
            + item(f'<circle cx="11" cy="6" r="5" fill="{EVENT}"/>', "input event")
            + item(f'<circle cx="11" cy="6" r="5" fill="{DERIVED}"/>', "derived atom")
            + item(f'<rect x="1" y="1" width="20" height="10" rx="3" fill="{WINDOW}" stroke="{WINDOW_EDGE}" '
                   'stroke-dasharray="4 3"/>', "window a literal read")
            + item(f'<rect x="1" y="2" width="20" height="8" fill="none" stroke="{NEGATED}"/>',
                   "negated literal: its atom absent")
            + item(f'<line x1="11" x2="11" y1="0" y2="12" stroke="{QUERY}" stroke-width="2"/>', "T")
            + "</p>")


# ------------------------------------------------------------------------------ the tree


def _item(node: Node) -> str:
    head = _summary(node)
    parts = "".join(_item(c) for c in node.children)
    if node.says_why_not:
        entries = "".join(_item(e) for e in node.entries) or '<li><div class="leaf none">no rule derives it</div></li>'
        if node.kind in ("why-not", "none"):
            parts += entries
        else:
            parts += f'<li class="why-not"><div class="why-not-head">why not</div><ul>{entries}</ul></li>'
    if not parts:
        return f'<li><div class="leaf {_kind_class(node)}">{head}</div></li>'
    return (f'<li><details open class="{_kind_class(node)}"><summary>{head}</summary>'
            f"<ul>{parts}</ul></details></li>")


def _summary(node: Node) -> str:
    out = [f'<span class="kind k-{_kind_class(node)}">{_e(node.kind)}</span> <span class="text">{_e(node.text)}</span>']
    if node.rule:
        out.append(f'<div class="by-rule"><span class="by">by</span> <code>{_e(node.rule)}</code></div>')
    if node.bindings:
        chips = "".join(f'<span class="chip">{_e(k)} = {_e(str(v))}</span>' for k, v in sorted(node.bindings.items()))
        out.append(f'<div class="bindings">{chips}</div>')
    if node.where:
        late = ' <span class="late">arrived late</span>' if node.late else ""
        out.append(f'<div class="source">from <code>{_e(node.where)}</code>{late}</div>')
    return "".join(out)


def _kind_class(node: Node) -> str:
    return "negated" if node.negated else re.sub(r"[^a-z-]", "", node.kind) or "node"


def _time_text(t: Fraction) -> str:
    return str(t.numerator) if t.denominator == 1 else f"{t.numerator}/{t.denominator}"


def _e(text: str) -> str:
    return html.escape(text, quote=True)


_CSS = """
:root{--fg:#1f2328;--muted:#59636e;--line:#d1d9e0}
body{font:15px/1.45 system-ui,-apple-system,"Segoe UI",Helvetica,Arial,sans-serif;color:var(--fg);
 margin:24px auto;max-width:1000px;padding:0 16px;background:#fff}
h1{font-size:20px;font-weight:600;margin:0 0 8px;font-family:ui-monospace,Menlo,Consolas,monospace}
h2{font-size:15px;text-transform:uppercase;letter-spacing:.06em;color:var(--muted);margin:22px 0 8px}
h3{font-size:14px;margin:14px 0 4px}
button{font:inherit;font-size:13px;padding:3px 10px;border:1px solid var(--line);border-radius:6px;background:#f6f8fa;
 cursor:pointer}
svg text{font:12px ui-monospace,Menlo,Consolas,monospace;fill:var(--fg)}
svg .tick-label{fill:var(--muted)}
svg .query-label{fill:#bf5b00;font-weight:600}
.legend{font-size:13px;color:var(--muted);display:flex;flex-wrap:wrap;gap:14px}
.key svg{vertical-align:-1px;margin-right:4px}
ul.tree,ul.tree ul{list-style:none;margin:0;padding-left:20px}
ul.tree{padding-left:0}
ul.tree ul{border-left:1px solid var(--line);margin-left:7px;padding-left:16px}
ul.tree li{margin:4px 0}
summary{cursor:pointer;list-style:none}
summary::-webkit-details-marker{display:none}
summary::before{content:"\\25BE";display:inline-block;width:14px;color:var(--muted)}
details:not([open])>summary::before{content:"\\25B8"}
.leaf{padding-left:14px}
.kind{display:inline-block;font-size:11px;text-transform:uppercase;letter-spacing:.04em;padding:0 6px;
 border-radius:9px;background:#eef1f4;color:var(--muted);vertical-align:1px}
.k-rule,.k-fact,.k-atom,.k-alternatives{background:#dafbe1;color:#1a7f37}
.k-event{background:#ddf4ff;color:#0969da}
.k-input{background:#eaf3ff;color:#0969da}
.k-negated,.k-why-not,.k-none,li.why-not .kind{background:#ffebe9;color:#cf222e}
.text{font-family:ui-monospace,Menlo,Consolas,monospace;font-size:13.5px}
.by-rule,.source,.bindings{margin-left:14px;font-size:13px;color:var(--muted)}
.late{color:#b35c00;font-weight:600}
.by{font-style:italic}
code{font-family:ui-monospace,Menlo,Consolas,monospace;font-size:12.5px;color:var(--fg)}
.chip{display:inline-block;margin:2px 4px 0 0;padding:0 7px;border-radius:9px;background:#fff8c5;
 font-family:ui-monospace,Menlo,Consolas,monospace;font-size:12px;color:var(--fg)}
li.why-not>ul{border-left:2px solid #cf222e}
.why-not-head{color:#cf222e;font-size:13px;font-weight:600}
.none{color:var(--muted);font-style:italic}
"""

_JS = """
for (const [id, open] of [["open-all", true], ["close-all", false]]) {
  document.getElementById(id).addEventListener("click", () => {
    for (const d of document.querySelectorAll("details")) d.open = open;
  });
}
"""
