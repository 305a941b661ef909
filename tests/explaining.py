"""What the tests of ``chronolog explain --why / --why-not`` share: writing a program and a
stream, running the command in process, walking the tree it prints as JSON."""

from __future__ import annotations

import dataclasses
import json
from collections.abc import Iterator
from fractions import Fraction
from pathlib import Path
from typing import Any

from chronolog.cli.main import main
from chronolog.dialects.load import load_program
from chronolog.dialects.registry import RunOptions, lookup
from chronolog.runtime.explain import NotSo, parse_query, sliced, with_lines
from chronolog.runtime.explain import explain as explain_query


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


def sliced_and_whole(progs: list[str], stream: str, query: str) -> tuple[str, Any, Any, int]:
    """The explanation of ``query`` (--why where it holds, else --why-not) computed in process
    on the input events its rules can read (``Dialect.relevant``), evaluating only what they
    read (``Dialect.narrow``), and on the whole input with the whole program evaluated, as
    JSON; with the mode and how many input events the slice left out."""
    program = load_program(progs)
    row = lookup(program.dialect)
    whole_row = dataclasses.replace(row, relevant=lambda p: lambda atom, evaluator, events: None, narrow=None)
    with open(stream, encoding="utf-8") as f:
        events = list(with_lines(row.read, program, stream, f, "jsonl", "fail", lambda m: None))
    q = parse_query(query, not row.rational)
    out = []
    for r in (row, whole_row):
        make = lambda r=r: r.evaluator(program, RunOptions(), lambda m: None)  # noqa: E731
        try:
            node, mode = explain_query(r, program, make(), events, q, "why", fresh=make), "why"
        except NotSo:
            node, mode = explain_query(r, program, make(), events, q, "why-not", fresh=make), "why-not"
        out.append((mode, node.data()))
    left_out = sum(1 for e in events if e.pred is not None) - \
        sum(1 for e in sliced(row, program, events, (q.pred, q.args), row.evaluator(program, RunOptions(), print))
              if e.pred is not None)
    assert out[0][0] == out[1][0], (query, out[0][0], out[1][0])
    return out[0][0], out[0][1], out[1][1], left_out


def _left(e: dict) -> Fraction:
    return Fraction(e["interval"][1:].split(",")[0]) if "interval" in e else Fraction(e["t"])


def with_missing(events: list[dict], missing: dict) -> list[dict]:
    """The input with a why-not's missing fact (its JSON ``missing``) arriving right after the
    last event up to its (left end's) time, as ``confirm_missing`` places it."""
    ev = {"pred": missing["pred"], "args": missing["args"],
          **({"interval": missing["interval"]} if "interval" in missing else {"t": missing["time"]})}
    at = max((i + 1 for i, e in enumerate(events) if _left(e) <= _left(ev)), default=0)
    return [*events[:at], ev, *events[at:]]
