"""``chronolog explain --why`` of a LARS rule with a negated window over a derived predicate
(``not clear(R) [1]``): the negated literal says why the derived atom does not hold at each
point of the window it needs it absent from (a ``□``: the first point where it is absent),
each point's rules with their first failing literal.  Checked by hand and against the
answers ``chronolog run`` writes (read here)."""

from __future__ import annotations

import json
from pathlib import Path

import jsonschema
from explaining import explain, files

from chronolog.cli.main import main

SCHEMA = json.loads((Path(__file__).parents[3] / "schemas" / "explanation.schema.json").read_text())
EVENTS = [{"t": 0, "pred": "free", "args": ["r1"]}, {"t": 1, "pred": "room", "args": ["r1"]},
          {"t": 2, "pred": "room", "args": ["r1"]}, {"t": 3, "pred": "free", "args": ["r1"]},
          {"t": 3, "pred": "room", "args": ["r1"]}, {"t": 5}]


def _negated(got: dict) -> dict:
    (node,) = [p for p in got["premises"] if p.get("negated")]
    return node


def _clear_at(capsys, prog: str, stream: str) -> set[int]:
    """The points where run's answers hold clear(r1) (only point lines: the rule has no window)."""
    capsys.readouterr()
    assert main(["run", prog, "--input", stream, "--answers", "points"]) == 0
    lines = [json.loads(x) for x in capsys.readouterr().out.splitlines()]
    return {x["t"] for x in lines if x["pred"] == "clear" and x.get("diff", 1) == 1}


def test_a_negated_diamond_over_a_derived_atom_says_why_not_at_every_point(tmp_path, capsys):
    prog, stream = files(tmp_path, "w.lars", "clear(R) :- free(R).\nalarm(R) :- room(R), not clear(R) [1].\n", EVENTS)
    code, got, err = explain(capsys, prog, stream, "why", "alarm(r1)@2")
    assert code == 0, err
    jsonschema.validate(got, SCHEMA)
    node = _negated(got)
    assert node["window"] == "window [1,2]"
    assert [(e["text"].split(":")[0], e["rule"]["line"], e["literal"]) for e in node["why_not"]] == [
        ("clear(r1) at 1", 1, "free(R)"), ("clear(r1) at 2", 1, "free(R)")]
    assert not {1, 2} & _clear_at(capsys, prog, stream) and 0 in _clear_at(capsys, prog, stream)


def test_a_negated_box_over_a_derived_atom_says_why_not_where_it_is_missing(tmp_path, capsys):
    prog, stream = files(tmp_path, "w.lars",
                         "clear(R) :- free(R).\nalarm(R) :- room(R), not clear(R) always [3].\n", EVENTS)
    code, got, err = explain(capsys, prog, stream, "why", "alarm(r1)@3")
    assert code == 0, err
    jsonschema.validate(got, SCHEMA)
    node = _negated(got)
    # clear(r1) holds at 0 and 3, not at 1: the first point of [0,3] where it is missing
    assert [e["text"].split(":")[0] for e in node["why_not"]] == ["clear(r1) at 1"]
    assert 1 not in _clear_at(capsys, prog, stream) and {0, 3} <= _clear_at(capsys, prog, stream)
