"""Helpers for the ops artefact tests (ops/, Dockerfile, docker-compose.yml).

External tools (``promtool``, ``prometheus``, ``docker-compose``) come from
Debian packages that ``.ci/run`` installs.  A test that needs one skips with
a reason when it is missing on a developer's machine, but fails when the
environment variable CI is set: CI must not go green by skipping.
"""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest
import yaml

ROOT = Path(__file__).resolve().parents[2]
OPS = ROOT / "ops"
EXAMPLE = ROOT / "src" / "chronolog" / "examples" / "traffic.lars"


def require_binary(name: str) -> str:
    """The path of executable ``name``; skip (fail under CI) when it is absent."""
    path = shutil.which(name)
    if path is None:
        why = f"{name} is not installed (Debian package: {'docker-compose' if 'compose' in name else 'prometheus'})"
        if os.environ.get("CI"):
            pytest.fail(f"{why}; .ci/run should have installed it")
        pytest.skip(why)
    return path


def compose_command() -> list[str]:
    """``docker-compose`` (Compose v1, Debian) or, failing that, the ``docker compose`` plugin."""
    if shutil.which("docker-compose") is None and shutil.which("docker") is not None:
        probe = subprocess.run(["docker", "compose", "version"], capture_output=True, text=True, check=False)
        if probe.returncode == 0:
            return ["docker", "compose"]
    return [require_binary("docker-compose")]


def chronolog(*args: str, **kwargs) -> subprocess.CompletedProcess:
    """Run the CLI of this checkout with the test interpreter."""
    kwargs.setdefault("capture_output", True)
    kwargs.setdefault("text", True)
    kwargs.setdefault("timeout", 120)
    kwargs.setdefault("check", False)
    return subprocess.run([sys.executable, "-m", "chronolog", *args], cwd=ROOT, **kwargs)


def load_yaml(path: Path):
    with open(path, encoding="utf-8") as fh:
        return yaml.safe_load(fh)


def allowed_series() -> dict[str, str]:
    """Series names the fleet exposes -> the METRICS entry they come from."""
    from chronolog.runtime.fleet.metrics import METRICS

    names: dict[str, str] = {}
    for name, (kind, _doc) in METRICS.items():
        if kind == "histogram":
            for suffix in ("_bucket", "_sum", "_count"):
                names[name + suffix] = name
        else:
            names[name] = name
    return names
