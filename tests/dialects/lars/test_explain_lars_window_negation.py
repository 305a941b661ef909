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
    # the evaluation of 2 sees only the clear(r1) it derives itself (LARS.md: atoms of earlier
    # evaluations are not carried over): none at 1, and at 2 its rule fails at free(R)
    before, at_t = node["why_not"]
    assert before["text"].startswith("clear(r1) at 1: not derived by the evaluation of 2,") and before["rule"]["line"] == 1
    assert "literal" not in before and "earlier evaluations are not carried over" in before["reason"]
    assert (at_t["text"].split(":")[0], at_t["rule"]["line"], at_t["literal"]) == ("clear(r1) at 2", 1, "free(R)")
    assert not {1, 2} & _clear_at(capsys, prog, stream) and 0 in _clear_at(capsys, prog, stream)


def test_a_derived_atom_of_an_earlier_evaluation_does_not_block_a_negated_window(tmp_path, capsys):
    """clear(r1) is an answer at 1, yet alarm(r1) holds at 2 with not clear(r1) [1]: run's
    evaluation of 2 does not see it, and the explanation says so rather than that clear(r1)
    fails at 1 (which the answers at 1 contradict)."""
    events = [{"t": 0}, {"t": 1, "pred": "free", "args": ["r1"]}, {"t": 2, "pred": "room", "args": ["r1"]}, {"t": 3}]
    prog, stream = files(tmp_path, "c.lars", "clear(R) :- free(R).\nalarm(R) :- room(R), not clear(R) [1].\n", events)
    assert _clear_at(capsys, prog, stream) == {1}
    code, got, err = explain(capsys, prog, stream, "why", "alarm(r1)@2")
    assert code == 0, err
    jsonschema.validate(got, SCHEMA)
    texts = [e["text"] for e in _negated(got)["why_not"]]
    assert texts[0].startswith("clear(r1) at 1: not derived by the evaluation of 2,")
    assert texts[1].startswith("clear(r1) at 2: fails at body element 1: free(r1) fails")


def test_a_negated_box_over_a_derived_atom_says_why_not_where_it_is_missing(tmp_path, capsys):
    prog, stream = files(tmp_path, "w.lars",
                         "clear(R) :- free(R).\nalarm(R) :- room(R), not clear(R) always [3].\n", EVENTS)
    code, got, err = explain(capsys, prog, stream, "why", "alarm(r1)@3")
    assert code == 0, err
    jsonschema.validate(got, SCHEMA)
    node = _negated(got)
    # clear(r1) is an answer at 0 and 3, but the evaluation of 3 derives it at 3 only: the
    # box over [0,3] fails at its first point, 0
    assert [e["text"].split(":")[0] for e in node["why_not"]] == ["clear(r1) at 0"]
    assert 1 not in _clear_at(capsys, prog, stream) and {0, 3} <= _clear_at(capsys, prog, stream)
