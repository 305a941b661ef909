"""The README is a guide that stays true: its fleet picture is what `chronolog
topology` draws, its tutorial prints what it says (also on the docs' getting
started page), its test command is CI's, and its links resolve."""

from __future__ import annotations

import re
import shlex
import subprocess
import sys
from collections import Counter
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
README = ROOT / "README.md"
TUTORIALS = [README, ROOT / "docs" / "getting-started.md"]


def fences(text: str) -> list[str]:
    """The contents of the fenced code blocks, in order (indented fences too)."""
    return [re.sub(r"^ {0,3}", "", body, flags=re.M)
            for body in re.findall(r"^ *```[a-z]*\n(.*?)^ *```$", text, re.M | re.S)]


def chronolog(*args: str, cwd: Path = ROOT) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "chronolog", *args], capture_output=True, text=True, cwd=cwd,
                          timeout=120)


def test_fleet_picture_is_chronolog_topology():
    text = README.read_text()
    marker = re.search(r"<!-- topology: chronolog (.*?) -->\n```mermaid\n(.*?)```", text, re.S)
    assert marker, "the README's topology marker and its mermaid block"
    proc = chronolog(*shlex.split(marker.group(1)))
    assert proc.returncode == 0, proc.stderr
    assert marker.group(2) == proc.stdout


def test_readme_test_command_is_what_ci_runs():
    """Set-up step 2 ends with the test command; .ci/run installs the same extras and runs it verbatim."""
    commands = [b.strip() for b in fences(README.read_text()) if "pytest" in b]
    assert commands and commands[0].startswith("python3 -m venv --clear .venv && ")
    steps = commands[0].split(" && ")
    assert steps[-1] == ".venv/bin/python -m pytest -q -n 2"
    ci = (ROOT / ".ci" / "run").read_text()
    assert re.search(r"^\.venv/bin/python -m pytest -q -n 2 \|\|", ci, re.M), "CI runs the README's test command"
    install = next(s for s in steps if "pip install" in s)
    assert install.split("pip install", 1)[1].strip() in ci, install
    assert commands[0].count("'.[test]'") == 1


def test_readme_main_job_runs_the_bundled_example():
    blocks = [b.strip() for b in fences(README.read_text()) if "chronolog up" in b]
    assert blocks
    args = shlex.split(blocks[0].split(" && ")[-1])
    assert args[:2] == [".venv/bin/chronolog", "up"]
    for path in (a for a in args if a.startswith("src/")):
        assert (ROOT / path).is_file(), path


def test_relative_links_resolve():
    for doc in (README, ROOT / "services" / "README.md", *sorted((ROOT / "services").glob("*/README.md"))):
        for target in re.findall(r"\]\(([^)#]+)(?:#[^)]*)?\)", doc.read_text()):
            if "://" not in target:
                assert (doc.parent / target).exists(), f"{doc.relative_to(ROOT)}: {target}"


def test_readme_is_a_short_guide():
    lines = README.read_text().splitlines()
    assert len(lines) <= 250, len(lines)
    assert not re.search(r"\bissue \d+", README.read_text(), re.I), "no per-issue history in the README"


def _tutorial(text: str) -> dict[str, str]:
    """The tutorial's blocks: program, input, late input, the answers printed, the corrections, check's output."""
    blocks = fences(text)
    inputs = [b for b in blocks if b.startswith('{"t": ')]
    outputs = [b for b in blocks if b.startswith(('{"t":', '{"interval":')) and not b.startswith('{"t": ')]
    return {
        "program": next(b for b in blocks if ":-" in b and not b.startswith("$")),
        "input": inputs[0],
        "late": inputs[1],
        "answers": next(b for b in blocks if b.startswith("$ chronolog run jam.lars")),
        "corrections": outputs[0],
        "check": next(b for b in blocks if b.startswith("$ chronolog check jam.lars")),
    }


def _lines(block: str) -> Counter:
    return Counter(line for line in block.splitlines() if line and not line.startswith("$"))


@pytest.mark.parametrize("doc", TUTORIALS, ids=lambda p: p.name)
def test_tutorial_prints_what_it_says(tmp_path, doc):
    """The answers (as a multiset of lines: the order within a time point is not part of the contract)."""
    t = _tutorial(doc.read_text())
    (tmp_path / "jam.lars").write_text(t["program"])
    (tmp_path / "in.jsonl").write_text(t["input"])
    proc = chronolog("run", "jam.lars", "--input", "in.jsonl", cwd=tmp_path)
    assert proc.returncode == 0, proc.stderr
    assert Counter(proc.stdout.splitlines()) == _lines(t["answers"])

    (tmp_path / "in.jsonl").write_text(t["input"] + t["late"])
    proc = chronolog("run", "jam.lars", "--input", "in.jsonl", cwd=tmp_path)
    assert proc.returncode == 0, proc.stderr
    assert Counter(proc.stdout.splitlines()) == _lines(t["answers"]) + _lines(t["corrections"])

    proc = chronolog("check", "jam.lars", cwd=tmp_path)
    assert proc.stdout.splitlines() == list(_lines(t["check"]))


@pytest.mark.parametrize("doc", TUTORIALS, ids=lambda p: p.name)
def test_tutorial_error_message_is_current(tmp_path, doc):
    message = re.search(r"jam\.lars:1:27: error: [^\n`]*(?:\n[^\n`]*)?", doc.read_text()).group(0)
    broken = _tutorial(doc.read_text())["program"].replace("speed(R, V) [3], V < 30", "speed(R, V) [3 , V < 30", 1)
    (tmp_path / "jam.lars").write_text(broken)
    proc = chronolog("check", "jam.lars", cwd=tmp_path)
    assert proc.returncode == 2
    assert proc.stderr.strip() == " ".join(message.split())


def test_other_languages_example_prints_what_it_says(tmp_path):
    """The DatalogMTL and RTEC session: the files it cats, run on the inputs its comments name,
    print its answer lines."""
    block = next(b for b in fences(README.read_text()) if b.startswith("$ cat heat.mtl"))
    inputs = {  # what the comments in the README say
        "heat.jsonl": '{"interval":"[0,5]","pred":"Hot","args":["s1"]}\n{"t":9}\n',
        "doors.jsonl": "".join(f'{{"t":{t},"pred":"{p}","args":["d1"]}}\n'
                               for t, p in ((3, "opened"), (8, "closed"), (21, "opened"), (25, "closed"))),
    }
    for name, text in inputs.items():
        (tmp_path / name).write_text(text)
    runs = 0
    for part in re.split(r"^\$ ", block, flags=re.M)[1:]:
        command, _, body = part.partition("\n")
        words = shlex.split(command.split("#")[0])
        if words[0] == "cat":
            (tmp_path / words[1]).write_text(body)
            continue
        proc = chronolog(*words[1:], cwd=tmp_path)
        assert proc.returncode == 0, proc.stderr
        assert Counter(proc.stdout.splitlines()) == Counter(x for x in body.splitlines() if x), command
        runs += 1
    assert runs == 2
