"""Benchmark plots as self-contained SVG (no plotting library): ``bench ... --plot FILE``.

One horizontal bar per row; with a target, the bar is green when the figure
meets it and red when not, and the target is marked on the row.  The docs
site draws its benchmark picture with the same function.
"""

from __future__ import annotations

import html


def bars_svg(title: str, rows: list[tuple[str, float, float | None]], unit: str) -> str:
    """``rows``: (label, value, target or None)."""
    label, width, bar = 260, 420, 22
    top = max([1e-9] + [v for _, v, _ in rows] + [t for _, _, t in rows if t is not None])
    scale = width / top
    height = 40 + bar * len(rows) + 16
    parts = [f'<svg xmlns="http://www.w3.org/2000/svg" width="{label + width + 160}" height="{height}" '
             f'font-family="sans-serif" font-size="13">',
             f'<text x="8" y="18" font-weight="bold">{html.escape(title)}</text>']
    for i, (name, value, target) in enumerate(rows):
        y = 30 + i * bar
        colour = "#4a7ebb" if target is None else ("#4a8f5c" if value <= target else "#c0504d")
        parts.append(f'<text x="{label - 8}" y="{y + 15}" text-anchor="end">{html.escape(name)}</text>')
        parts.append(f'<rect x="{label}" y="{y + 3}" width="{value * scale:.1f}" height="{bar - 6}" fill="{colour}"/>')
        text = f"{value:g} {unit}" + ("" if target is None else f" (target {target:g})")
        parts.append(f'<text x="{label + max(value, target or 0) * scale + 6:.1f}" y="{y + 15}">{html.escape(text)}</text>')
        if target is not None:
            x = label + target * scale
            parts.append(f'<line x1="{x:.1f}" y1="{y + 1}" x2="{x:.1f}" y2="{y + bar - 1}" stroke="#333" '
                         f'stroke-width="2"/>')
    parts.append("</svg>")
    return "\n".join(parts) + "\n"
