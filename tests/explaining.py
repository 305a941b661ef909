"""What the tests of ``chronolog explain --why / --why-not`` share: writing a program and a
stream, running the command in process, walking the tree it prints as JSON."""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path
from typing import Any

from chronolog.cli.main import main


def files(tmp: Path, name: str, program: str, events: list[dict]) -> tuple[str, str]:
    (tmp / name).write_text(program)
    (tmp / "in.jsonl").write_text("".join(json.dumps(e) + "\n" for e in events))
    return str(tmp / name), str(tmp / "in.jsonl")


def explain(capsys, prog: str, stream: str, mode: str, query: str, *more: str) -> tuple[int, Any, str]:  # noqa: ANN001
    """Exit status, the JSON printed (None if nothing: the tree's top node, with --all a list
    of them), stderr."""
    capsys.readouterr()
    code = main(["explain", prog, "--input", stream, f"--{mode}", query, "--as", "json", *more])
    got = capsys.readouterr()
    return code, (json.loads(got.out) if got.out.strip() else None), got.err


def walk(node: dict) -> Iterator[dict]:
    """The node and every node below it: its premises, and those of its why-not entries."""
    yield node
    for child in node.get("premises", []):
        yield from walk(child)
    for entry in node.get("why_not", []):
        yield from _entry_nodes(entry)


def _entry_nodes(entry: dict) -> Iterator[dict]:
    for child in entry.get("premises", []):
        yield from walk(child)
    for inner in entry.get("why_not", []):
        yield from _entry_nodes(inner)
