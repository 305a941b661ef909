"""MkDocs hook: the parts of the site that are generated from the code, so they
are written once (in the code) and cannot drift.

A page asks for a part with a marker line ``<!-- generated: NAME -->``:

* ``cli``: every subcommand's usage and options, from ``build_parser()``;
* ``metrics``: the Prometheus metrics, from ``runtime.metrics.METRICS``;
* ``topology``: the fleet of the bundled example as a Mermaid diagram, from
  ``build_topology`` (what ``chronolog topology --format mermaid`` prints).

``fleet/dashboard.svg`` is a sketch of the Grafana dashboard's panels, drawn
from ``ops/grafana/chronolog.json`` (titles and grid positions), and
``benchmarks-lars.svg`` plots the LARS table of ``benchmarks.md`` against its
targets, so the picture always shows the figures the table states.
"""

from __future__ import annotations

import argparse
import html
import json
import os
import re
from collections.abc import Callable, Iterator
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
EXAMPLE = ROOT / "src" / "chronolog" / "examples" / "traffic.lars"
DASHBOARD = ROOT / "ops" / "grafana" / "chronolog.json"
MARKER = re.compile(r"^<!-- generated: ([a-z]+) -->$", re.MULTILINE)


# --- CLI reference ---------------------------------------------------------

def subcommands(parser: argparse.ArgumentParser, path: tuple[str, ...] = ()) -> Iterator[
        tuple[tuple[str, ...], argparse.ArgumentParser, str]]:
    """(command words, parser, one-line help) of every leaf subcommand, in the parser's order."""
    for action in parser._actions:
        if isinstance(action, argparse._SubParsersAction):
            helps = {a.dest: a.help or "" for a in action._choices_actions}
            for name, sub in action.choices.items():
                words = (*path, name)
                if any(isinstance(a, argparse._SubParsersAction) for a in sub._actions):
                    yield from subcommands(sub, words)
                else:
                    yield words, sub, helps.get(name, "")


def _cell(text: str) -> str:
    return text.replace("|", "\\|").replace("\n", " ")


def _option_row(action: argparse.Action) -> str:
    names = ", ".join(f"`{o}`" for o in action.option_strings) or f"`{action.metavar or action.dest}`"
    if action.choices is not None:
        value = " \\| ".join(f"`{c}`" for c in action.choices)
    elif action.nargs == 0:
        value = ""
    else:
        value = f"`{action.metavar or action.dest.upper()}`"
    if action.nargs == "+":
        value += " ..."
    required = action.required or not action.option_strings
    default = "" if required or action.default in (None, False, argparse.SUPPRESS) else f"`{action.default}`"
    return f"| {names} | {value} | {'yes' if required else ''} | {default} | {_cell(action.help or '')} |"


def cli_reference() -> str:
    from chronolog.cli.main import build_parser

    os.environ["COLUMNS"] = "100"  # usage lines wrap the same on every machine
    out = []
    for words, parser, summary in subcommands(build_parser()):
        name = " ".join(words)
        out += [f"### `chronolog {name}`", "", f"{summary[:1].upper()}{summary[1:]}." if summary else "", ""]
        first, *rest = parser.format_usage().removeprefix("usage: ").strip().splitlines()
        usage = "\n".join([first, *(line.removeprefix(" " * len("usage: ")) for line in rest)])
        out += ["```", usage, "```", ""]
        rows = [a for a in parser._actions if not isinstance(a, argparse._HelpAction)]
        if rows:
            out += ["| option | value | required | default | meaning |", "|---|---|---|---|---|"]
            out += [_option_row(a) for a in rows]
            out.append("")
    return "\n".join(out)


# --- metrics -----------------------------------------------------------------

def metrics_reference() -> str:
    from chronolog.runtime.fleet.metrics import LABELS, METRICS

    out = ["| metric | type | meaning |", "|---|---|---|"]
    out += [f"| `{name}` | {kind} | {_cell(doc)} |" for name, (kind, doc) in METRICS.items()]
    out += ["", "Labels on every series: " + ", ".join(f"`{label}`" for label in LABELS) + "."]
    return "\n".join(out)


# --- topology ------------------------------------------------------------------

def example_mermaid() -> str:
    """What ``chronolog topology src/chronolog/examples/traffic.lars --format mermaid`` prints."""
    from chronolog.dialects.load import load_program
    from chronolog.dialects.registry import RunOptions, lookup
    from chronolog.runtime.fleet.topology import build_topology

    program = load_program([str(EXAMPLE)])
    return build_topology(lookup(program.dialect).layout(program, RunOptions())).mermaid()


def topology_block() -> str:
    return "```mermaid\n" + example_mermaid() + "```"


# --- dashboard sketch ------------------------------------------------------------

def panel_metrics(panel: dict) -> list[str]:
    """The chronolog metrics a panel's queries read, in order (histograms by their own name)."""
    names: list[str] = []
    for target in panel.get("targets", []):
        for name in re.findall(r"chronolog_[a-z_]+", target.get("expr", "")):
            name = name.removesuffix("_bucket")
            if name not in names:
                names.append(name)
    return names


def dashboard_svg(dashboard: dict | None = None) -> str:
    """The dashboard's panels as boxes on Grafana's grid (24 columns, rows of 30 px)."""
    dashboard = dashboard or json.loads(DASHBOARD.read_text())
    col, row = 48, 24
    panels = dashboard["panels"]
    height = max(p["gridPos"]["y"] + p["gridPos"]["h"] for p in panels) * row
    parts = [f'<svg xmlns="http://www.w3.org/2000/svg" width="{24 * col}" height="{height}" '
             f'font-family="sans-serif" font-size="13">']
    for p in panels:
        g = p["gridPos"]
        x, y, w, h = g["x"] * col, g["y"] * row, g["w"] * col, g["h"] * row
        title = html.escape(p.get("title", ""))
        if p["type"] == "row":
            parts.append(f'<text x="{x + 4}" y="{y + 17}" font-weight="bold">{title}</text>')
            continue
        parts.append(f'<rect x="{x + 2}" y="{y + 2}" width="{w - 4}" height="{h - 4}" rx="4" '
                     f'fill="#f4f5f5" stroke="#a0a4a8"/>')
        parts.append(f'<text x="{x + 10}" y="{y + 20}" font-weight="bold">{title}</text>')
        parts.append(f'<text x="{x + 10}" y="{y + 38}" fill="#666">{html.escape(p["type"])}</text>')
        for i, name in enumerate(panel_metrics(p)):
            parts.append(f'<text x="{x + 10}" y="{y + 58 + 16 * i}" font-family="monospace" font-size="12">'
                         f'{html.escape(name)}</text>')
    parts.append("</svg>")
    return "\n".join(parts) + "\n"


# --- benchmark plot ------------------------------------------------------------------

BENCHMARKS = ROOT / "docs" / "benchmarks.md"


def lars_targets(markdown: str) -> list[tuple[str, str, float, float]]:
    """(workload, measured figure's name, measured ms/tp, target ms/tp) of every row
    of the LARS table that has a target: the whole process where the target says
    "(process)", else the evaluation time."""
    header, rows = None, []
    for line in markdown.splitlines():
        cells = [c.strip().strip("*") for c in line.strip().strip("|").split("|")]
        if cells[:3] == ["workload", "W/N/T/K", "target ms/tp"]:
            header = cells
        elif header and line.startswith("|") and not set(line) <= set("|-"):
            row = dict(zip(header, (c.strip("*").strip() for c in cells)))
            target = re.match(r"≤ ([\d.]+)( \(process\))?", row["target ms/tp"])
            if target:
                column = "process wall ms/tp" if target.group(2) else "eval ms/tp"
                rows.append((row["workload"], column.split(" ms")[0], float(row[column]), float(target.group(1))))
        elif header and rows:
            break
    return rows


def benchmark_svg(markdown: str | None = None) -> str:
    """Horizontal bars: each workload's measured figure against its target (the same
    drawing as `chronolog bench lars --plot`)."""
    from chronolog.bench.plot import bars_svg

    rows = lars_targets(BENCHMARKS.read_text() if markdown is None else markdown)
    return bars_svg("chronolog bench lars: figure against target", [(f"{n} ({c})", m, t) for n, c, m, t in rows],
                    "ms/tp")


GENERATORS: dict[str, Callable[[], str]] = {
    "cli": cli_reference,
    "metrics": metrics_reference,
    "topology": topology_block,
}


def expand(markdown: str) -> str:
    """Replace each marker line by what its generator renders."""
    def render(match: re.Match) -> str:
        name = match.group(1)
        if name not in GENERATORS:
            raise ValueError(f"unknown generated part {name!r}")
        return GENERATORS[name]()

    return MARKER.sub(render, markdown)


# --- MkDocs hook events --------------------------------------------------------------

def on_files(files, config):  # noqa: ANN001, ANN201 (MkDocs' hook signature)
    from mkdocs.structure.files import File

    files.append(File.generated(config, "fleet/dashboard.svg", content=dashboard_svg()))
    files.append(File.generated(config, "benchmarks-lars.svg", content=benchmark_svg()))
    return files


def on_page_markdown(markdown, page, config, files):  # noqa: ANN001, ANN201, ARG001
    return expand(markdown)
