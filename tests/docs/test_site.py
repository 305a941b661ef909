"""The documentation site builds with `mkdocs build --strict` and no warning,
and its generated parts cover the code: every CLI option, every metric, the
example's topology and the dashboard's panels.

CI runs the README's test command, so this is what keeps the site's links
and generated pages from breaking.  Without mkdocs (the `docs` extra) the
tests skip, except under CI, where they fail."""

from __future__ import annotations

import argparse
import html
import json
import os
import re
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]


def _mkdocs_or_skip() -> None:
    if shutil.which("mkdocs", path=str(Path(sys.executable).parent)) is None and subprocess.run(
            [sys.executable, "-c", "import mkdocs, material"], capture_output=True).returncode != 0:
        why = "mkdocs / mkdocs-material not installed (pip install -e '.[docs]')"
        if os.environ.get("CI"):
            pytest.fail(why)
        pytest.skip(why)


def build(config: Path, site: Path) -> subprocess.CompletedProcess:
    _mkdocs_or_skip()
    env = {**os.environ, "NO_MKDOCS_2_WARNING": "1"}  # material's banner about its successor is not a build warning
    return subprocess.run(
        [sys.executable, "-m", "mkdocs", "build", "--strict", "--config-file", str(config), "--site-dir", str(site)],
        capture_output=True, text=True, timeout=300, env=env, cwd=config.parent,
    )


@pytest.fixture(scope="module")
def site(tmp_path_factory) -> Path:
    out = tmp_path_factory.mktemp("site")
    proc = build(ROOT / "mkdocs.yml", out)
    log = proc.stdout + proc.stderr
    assert proc.returncode == 0, log
    warnings = [line for line in log.splitlines() if re.search(r"\bWARNING\b", line)]
    assert not warnings, "\n".join(warnings)
    return out


def page(site: Path, name: str) -> str:
    return html.unescape((site / name / "index.html").read_text(encoding="utf-8"))


def leaf_parsers(parser: argparse.ArgumentParser, words: tuple[str, ...] = ()):
    for action in parser._actions:
        if isinstance(action, argparse._SubParsersAction):
            for name, sub in action.choices.items():
                if any(isinstance(a, argparse._SubParsersAction) for a in sub._actions):
                    yield from leaf_parsers(sub, (*words, name))
                else:
                    yield (*words, name), sub


def test_cli_page_lists_every_subcommand_and_option(site):
    from chronolog.cli.main import build_parser

    raw = (site / "cli" / "index.html").read_text(encoding="utf-8")
    sections = {m.group(1): html.unescape(m.group(2))
                for m in re.finditer(r'<h3 id="([^"]+)">(.*?)(?=<h3 id=|</article>)', raw, re.S)}
    commands = list(leaf_parsers(build_parser()))
    assert {"run", "up", "service", "backfill"} <= {w[0] for w, _ in commands}
    for words, parser in commands:
        name = "chronolog-" + "-".join(words)
        assert name in sections, name
        section = sections[name]
        for action in parser._actions:
            if isinstance(action, argparse._HelpAction):
                continue
            for option in action.option_strings:
                assert f"<code>{option}</code>" in section, f"{name}: {option}"
            if action.help:  # as text: Markdown's `code` becomes <code>, and tags are dropped here
                assert action.help.replace("`", "")[:30] in re.sub(r"<[^>]+>", "", section), f"{name}: {action.dest}"


def test_metrics_page_lists_every_metric(site):
    from chronolog.runtime.fleet.metrics import METRICS

    text = page(site, "fleet/metrics")
    for name, (_kind, doc) in METRICS.items():
        assert f"<code>{name}</code>" in text, name
        assert doc[:40] in text, name


def test_topology_diagram_is_the_examples_and_renders_as_mermaid(site):
    """mkdocs-material renders `<pre class="mermaid">` blocks (superfences' custom fence)."""
    example = ROOT / "src" / "chronolog" / "examples" / "traffic.lars"
    proc = subprocess.run([sys.executable, "-m", "chronolog", "topology", str(example), "--format", "mermaid"],
                          capture_output=True, text=True, check=True)
    for name in ("", "fleet"):
        raw = (site / name / "index.html").read_text(encoding="utf-8")
        blocks = re.findall(r'<pre class="mermaid"><code>(.*?)</code></pre>', raw, re.S)
        assert blocks, f"no mermaid block on {name or 'home'}"
        assert html.unescape(blocks[0]).strip() == proc.stdout.strip()


def test_dashboard_sketch_has_every_panel(site):
    svg = (site / "fleet" / "dashboard.svg").read_text(encoding="utf-8")
    dashboard = json.loads((ROOT / "ops" / "grafana" / "chronolog.json").read_text())
    for panel in dashboard["panels"]:
        assert f">{html.escape(panel['title'])}<" in svg, panel["title"]
    assert 'src="../dashboard.svg"' in (site / "fleet" / "metrics" / "index.html").read_text(encoding="utf-8")


def test_placeholder_pages_of_work_in_progress_are_in_the_nav(site):
    for name in ("mtl", "rtec", "tms", "state"):
        assert (site / name / "index.html").is_file(), name


def test_a_broken_link_fails_the_build(tmp_path):
    """The configuration is strict: a page linking to a missing page fails the build."""
    shutil.copytree(ROOT / "docs", tmp_path / "docs")
    shutil.copy(ROOT / "mkdocs.yml", tmp_path / "mkdocs.yml")
    with (tmp_path / "docs" / "formats.md").open("a") as f:
        f.write("\nSee [nowhere](no-such-page.md).\n")
    # the hook finds the repository from its own path: point it at the real one
    (tmp_path / "docs" / "generate.py").write_text(
        (ROOT / "docs" / "generate.py").read_text().replace(
            "ROOT = Path(__file__).resolve().parents[1]", f"ROOT = Path({str(ROOT)!r})"))
    proc = build(tmp_path / "mkdocs.yml", tmp_path / "site")
    assert proc.returncode != 0
    assert "no-such-page.md" in proc.stdout + proc.stderr


def _generate():
    sys.path.insert(0, str(ROOT / "docs"))
    try:
        import generate
    finally:
        sys.path.remove(str(ROOT / "docs"))
    return generate


def test_benchmark_plot_reads_the_figures_each_target_applies_to():
    table = """
| workload | W/N/T/K | target ms/tp | eval ms/tp | process wall ms/tp | facts/s |
|---|---|---|---|---|---|
| diamond | 20/800 | ≤ 1.8 (process) | 0.58 | **1.48** | 541,878 |
| multi | 20/800 | – | 16.2 | 21.9 | 36,580 |
| worst | 3/1000 | ≤ 0.24 | **0.165** | 1.10 | 908,329 |

| workload | 1× / 5× / 10× |
"""
    assert _generate().lars_targets(table) == [("diamond", "process wall", 1.48, 1.8), ("worst", "eval", 0.165, 0.24)]


def test_benchmark_plot_on_the_site_has_every_targeted_workload(site):
    svg = (site / "benchmarks-lars.svg").read_text(encoding="utf-8")
    rows = _generate().lars_targets((ROOT / "docs" / "benchmarks.md").read_text())
    assert len(rows) >= 10
    for name, column, measured, target in rows:
        assert f">{name} ({column})<" in svg and f">{measured:g} ms/tp (target {target:g})<" in svg, name
    assert 'src="../benchmarks-lars.svg"' in (site / "benchmarks" / "index.html").read_text(encoding="utf-8")
