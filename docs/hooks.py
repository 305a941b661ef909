"""mkdocs hook: pages generated from the code when the site is built.

``<!-- chronolog:cli -->`` becomes the reference of every command and
option, rendered from chronolog's own argparse parsers (so it cannot drift
from ``--help``); ``<!-- chronolog:metrics -->`` the table of fleet metrics
from ``chronolog.runtime.metrics.METRICS``; ``<!-- chronolog:topology -->``
the Mermaid picture of the bundled example's fleet (``chronolog topology
--format mermaid``).
"""

from __future__ import annotations

import argparse
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]


def _cli() -> str:
    from chronolog.cli.main import build_parser

    out: list[str] = []

    def walk(parser: argparse.ArgumentParser, path: str) -> None:
        subs = [a for a in parser._actions if isinstance(a, argparse._SubParsersAction)]
        if path:
            out.append(f"### `{path}`\n")
            if parser.description:
                out.append(parser.description + "\n")
            out.append("```\n" + parser.format_usage().strip().removeprefix("usage: ") + "\n```\n")
            rows = []
            for a in parser._actions:
                if isinstance(a, (argparse._HelpAction, argparse._SubParsersAction)):
                    continue
                names = ", ".join(f"`{o}`" for o in a.option_strings) or f"`{a.dest}`"
                choices = f" (one of {', '.join(map(str, a.choices))})" if a.choices else ""
                default = "" if a.default in (None, argparse.SUPPRESS, False) or not a.option_strings \
                    else f" Default: `{a.default}`."
                text = (a.help or "").replace("|", "\\|").replace("%(default)s", str(a.default))
                rows.append(f"| {names} | {text}{choices}{default} |")
            if rows:
                out.append("| option | meaning |\n|---|---|\n" + "\n".join(rows) + "\n")
        for sub in subs:
            for name, child in sub.choices.items():
                walk(child, f"{path} {name}".strip() if path else f"chronolog {name}")

    walk(build_parser(), "")
    return "\n".join(out)


def _metrics() -> str:
    from chronolog.runtime.metrics import LABELS, METRICS

    rows = [f"| `{name}` | {kind} | {doc} |" for name, (kind, doc) in METRICS.items()]
    return (f"Labels on every series: {', '.join(f'`{x}`' for x in LABELS)}.\n\n"
            "| metric | kind | meaning |\n|---|---|---|\n" + "\n".join(rows) + "\n")


def _topology() -> str:
    from chronolog.engine.plan import plan_program
    from chronolog.lang import load_program
    from chronolog.topology import build_topology

    program = ROOT / "src" / "chronolog" / "examples" / "traffic.lars"
    topo = build_topology(plan_program(load_program([str(program)])))
    return "```mermaid\n" + topo.mermaid() + "```\n"


GENERATORS = {"<!-- chronolog:cli -->": _cli, "<!-- chronolog:metrics -->": _metrics,
              "<!-- chronolog:topology -->": _topology}


def on_page_markdown(markdown: str, **kwargs) -> str:  # noqa: ANN003 - mkdocs passes page, config, files
    for marker, make in GENERATORS.items():
        if marker in markdown:
            markdown = markdown.replace(marker, make())
    return markdown
