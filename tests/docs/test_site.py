"""The documentation site builds strictly: no broken link, no page outside the
nav, every generated section (CLI, metrics, topology) rendered from the code."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]


def test_mkdocs_build_strict(tmp_path):
    got = subprocess.run([sys.executable, "-m", "mkdocs", "build", "--strict", "--site-dir", str(tmp_path / "site")],
                         cwd=ROOT, capture_output=True, text=True, timeout=300,
                         env={**os.environ, "NO_MKDOCS_2_WARNING": "1"})
    assert got.returncode == 0, got.stderr[-3000:]
    assert "WARNING" not in got.stderr, got.stderr[-3000:]
    cli = (tmp_path / "site" / "cli" / "index.html").read_text()
    for option in ("--retention", "--partitions", "--history", "--breakdown", "--format"):
        assert option in cli, option  # from the argparse parsers, not retyped
    fleet = (tmp_path / "site" / "fleet" / "index.html").read_text()
    from chronolog.runtime.metrics import METRICS

    assert all(name in fleet for name in METRICS)
    assert 'class="mermaid"' in (tmp_path / "site" / "index.html").read_text()


def test_readme_is_a_short_guide_linking_into_the_site():
    readme = (ROOT / "README.md").read_text()
    assert len(readme.splitlines()) <= 250
    for page in ("docs/getting-started.md", "docs/fleet.md", "docs/cli.md", "docs/benchmarks.md"):
        assert page in readme and (ROOT / page).exists(), page
