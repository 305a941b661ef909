"""The Dockerfile and its build context (.dockerignore), checked without a Docker engine."""

from __future__ import annotations

import json
import shutil
import subprocess
import sys
import zipfile

from docker.utils.build import exclude_paths
from dockerfile_parse import DockerfileParser

from .conftest import ROOT, load_yaml


def parser() -> DockerfileParser:
    return DockerfileParser(str(ROOT / "Dockerfile"))


def instructions(name: str) -> list[str]:
    return [i["value"] for i in parser().structure if i["instruction"] == name]


def context() -> set[str]:
    """Files docker sends as the build context, by docker-py's .dockerignore rules."""
    lines = (ROOT / ".dockerignore").read_text(encoding="utf-8").splitlines()
    patterns = [ln.strip() for ln in lines if ln.strip() and not ln.lstrip().startswith("#")]
    return {p for p in exclude_paths(str(ROOT), patterns) if (ROOT / p).is_file()}


def package_sources() -> set[str]:
    """The files of src/ that the package is built from (tracked ones when this is a git checkout)."""
    if (ROOT / ".git").exists() and shutil.which("git"):
        out = subprocess.run(["git", "ls-files", "src"], cwd=ROOT, capture_output=True, text=True, check=True)
        return {ln for ln in out.stdout.splitlines() if (ROOT / ln).is_file()}
    return {str(p.relative_to(ROOT)) for p in (ROOT / "src").rglob("*")
            if p.is_file() and "__pycache__" not in p.parts and ".egg-info" not in str(p)}


def test_base_image_user_and_entrypoint():
    df = parser()
    assert instructions("FROM") == ["python:3.11-slim"]
    user = instructions("USER")[-1].split(":")[0]
    assert user not in ("root", "0")
    assert any("useradd" in run and user in run for run in instructions("RUN")), "the USER is never created"
    assert json.loads(instructions("ENTRYPOINT")[-1]) == ["chronolog"]
    assert any(run.startswith("pip install .") for run in instructions("RUN"))
    # the fleet interface's fallbacks: metrics on 9400, state in a volume the user owns
    assert df.envs["CHRONOLOG_METRICS_PORT"] == "9400" and "9400" in instructions("EXPOSE")
    state = df.envs["CHRONOLOG_STATE_DIR"]
    assert json.loads(instructions("VOLUME")[-1]) == [state]
    assert any(f"chown {user}:" in run and state in run for run in instructions("RUN"))


def test_compose_uses_the_image_the_way_it_is_built():
    compose = load_yaml(ROOT / "docker-compose.yml")
    env = parser().envs
    for name, svc in compose["services"].items():
        if svc.get("image") == "chronolog:local":
            assert svc.get("build") == ".", name
            assert svc.get("environment", env).get("CHRONOLOG_METRICS_PORT", "9400") == env["CHRONOLOG_METRICS_PORT"]


def test_build_context_has_the_package_and_nothing_else():
    ctx = context()
    for copy in instructions("COPY"):
        *sources, _dest = copy.split()
        for src in sources:
            assert src in ctx or any(f.startswith(src.rstrip("/") + "/") for f in ctx), f"COPY {src}: not in the context"
    missing = package_sources() - ctx
    assert not missing, f".dockerignore drops package files: {sorted(missing)[:5]}"
    assert {"pyproject.toml", "README.md"} <= ctx
    top = {f.split("/")[0] for f in ctx}
    assert top <= {"pyproject.toml", "README.md", "src", "Dockerfile", ".dockerignore"}, top
    assert not [f for f in ctx if "__pycache__" in f or ".egg-info" in f]


def test_the_context_alone_builds_the_package(tmp_path):
    """What `pip install .` does in the image works on the context: a wheel with the CLI and the examples."""
    src = tmp_path / "context"
    for rel in context():
        (src / rel).parent.mkdir(parents=True, exist_ok=True)
        shutil.copy2(ROOT / rel, src / rel)
    res = subprocess.run([sys.executable, "-m", "pip", "wheel", "-q", "--no-deps", "-w", str(tmp_path / "dist"), str(src)],
                         capture_output=True, text=True, timeout=300, check=False)
    assert res.returncode == 0, res.stderr[-3000:]
    (wheel,) = (tmp_path / "dist").glob("chronolog-*.whl")
    with zipfile.ZipFile(wheel) as zf:
        names = set(zf.namelist())
        entry = next(n for n in names if n.endswith("entry_points.txt"))
        assert "chronolog = chronolog.cli.main:main" in zf.read(entry).decode()
    assert {"chronolog/cli/main.py", "chronolog/examples/traffic.lars", "chronolog/runtime/fleet/metrics.py"} <= names
