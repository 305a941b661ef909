"""``chronolog explain --as json``: the shape the issue fixes — the top level is one node
(``--all``: a list of them), a negated literal's node has ``negated`` and its ``why_not``
entries (rule, bindings, failing literal, reason) — checked against the JSON Schema file in
``schemas/`` by ``jsonschema`` (not by the models that generate it), and against answers
derived by hand."""

from __future__ import annotations

import json
from pathlib import Path

import jsonschema
import pytest
from explaining import explain, files, walk

from chronolog.cli.main import main

SCHEMA = json.loads((Path(__file__).parents[2] / "schemas" / "explanation.schema.json").read_text())

# jam(r1) at 2 has two derivations (c1 slow from 0, c2 slow from 2); clear(r1) is derived
# only from a green light, and there is none for r1 in [1,2]
JAM = """slow(C) :- speed(C, V) [2], V < 30.
jam(R) :- slow(C), on(C, R), not clear(R).
on(c1, r1).
on(c2, r1).
clear(R) :- green(R) [1], not blocked(R).
"""
JAM_IN = [{"t": 0, "pred": "speed", "args": ["c1", 20]}, {"t": 1, "pred": "green", "args": ["r2"]},
          {"t": 2, "pred": "speed", "args": ["c2", 10]}, {"t": 4}]


def _valid(data: object) -> None:
    jsonschema.validate(data, SCHEMA)


def test_the_top_level_is_the_node_of_the_atom(tmp_path, capsys):
    prog, stream = files(tmp_path, "jam.lars", JAM, JAM_IN)
    code, got, err = explain(capsys, prog, stream, "why", "jam(r1)@2")
    assert code == 0, err
    _valid(got)
    assert isinstance(got, dict) and (got["kind"], got["atom"], got["time"]) == ("rule", "jam(r1)", 2)
    assert got["rule"] == {"file": prog, "line": 2, "text": "jam(R) :- slow(C), on(C,R), not clear(R)."}
    assert got["bindings"]["R"] == "r1" and got["bindings"]["C"] in ("c1", "c2")


def test_a_negated_literal_says_why_not_rule_by_rule(tmp_path, capsys):
    prog, stream = files(tmp_path, "jam.lars", JAM, JAM_IN)
    code, got, err = explain(capsys, prog, stream, "why", "jam(r1)@2")
    assert code == 0, err
    (negated,) = [n for n in walk(got) if n.get("negated")]
    assert (negated["kind"], negated["atom"]) == ("negated", "not clear(r1)")
    # clear(r1) has one rule; its first literal fails: no green(r1) in [1,2] (green(r2) is another road);
    # green(r1) at 2 added derives clear(r1) at 2 (nothing is blocked)
    assert negated["why_not"] == [{
        "text": "fails at body element 1: green(r1) [1] fails: no matching fact in window [1,2]; "
                "adding green(r1) at 2 would derive it",
        "rule": {"file": prog, "line": 5, "text": "clear(R) :- green(R) [1], not blocked(R)."},
        "bindings": {"R": "r1"}, "literal": "green(R) [1]",
        "reason": "green(r1) [1] fails: no matching fact in window [1,2]",
        "missing": {"pred": "green", "args": ["r1"], "time": 2, "text": "green(r1) at 2",
                    "derives": {"pred": "clear", "args": ["r1"], "time": 2}}}]
    _valid(got)


def test_all_is_a_list_of_derivations(tmp_path, capsys):
    prog, stream = files(tmp_path, "jam.lars", JAM, JAM_IN)
    code, got, err = explain(capsys, prog, stream, "why", "jam(r1)@2", "--all")
    assert code == 0, err
    _valid(got)
    assert isinstance(got, list) and [n["kind"] for n in got] == ["rule", "rule"]
    assert sorted(n["bindings"]["C"] for n in got) == ["c1", "c2"]  # by hand: c1 slow at 0, c2 at 2
    assert all(n["atom"] == "jam(r1)" and n["time"] == 2 for n in got)
    # one derivation only: still a list under --all
    code, got, err = explain(capsys, prog, stream, "why", "slow(c1)@2", "--all")
    assert code == 0 and isinstance(got, list) and len(got) == 1, (got, err)
    _valid(got)


def test_all_in_text_and_dot_draws_every_derivation(tmp_path, capsys):
    prog, stream = files(tmp_path, "jam.lars", JAM, JAM_IN)
    capsys.readouterr()
    assert main(["explain", prog, "--input", stream, "--why", "jam(r1)@2", "--all"]) == 0
    text = capsys.readouterr().out
    assert "derivation 1 of 2:" in text and "derivation 2 of 2:" in text and "alternatives" not in text
    assert main(["explain", prog, "--input", stream, "--why", "jam(r1)@2", "--all", "--as", "dot"]) == 0
    dot = capsys.readouterr().out
    assert dot.count('label="jam(r1) at 2\\nby ') == 2 and dot.count("digraph") == 1


def test_why_not_lists_its_entries(tmp_path, capsys):
    prog, stream = files(tmp_path, "jam.lars", JAM, JAM_IN)
    code, got, err = explain(capsys, prog, stream, "why-not", "slow(c1)@3")
    assert code == 0, err
    _valid(got)
    assert (got["kind"], got["atom"], got["time"]) == ("why-not", "slow(c1)", 3)
    (entry,) = got["why_not"]  # speed(c1,20) at 0 has left the window [1,3]
    assert (entry["rule"]["line"], entry["bindings"], entry["literal"]) == (1, {"C": "c1"}, "speed(C,V) [2]")
    assert entry["reason"] == "speed(c1,V) [2] fails: no matching fact in window [1,3]"
    code, got, err = explain(capsys, prog, stream, "why-not", "nothing(r1)@3")
    assert code == 0 and got["kind"] == "none" and got["why_not"] == [], (got, err)
    _valid(got)


def test_datalogmtl_negation_says_why_not(tmp_path, capsys):
    program = "Alarm(X):-Hot(X), not Smoke(X)\nSmoke(X):-Fire(X), Windy(X)\n"
    prog, stream = files(tmp_path, "heat.mtl", program, [
        {"interval": "[0,5]", "pred": "Hot", "args": ["s1"]}, {"interval": "[0,5]", "pred": "Fire", "args": ["s1"]},
        {"t": 6}])
    code, got, err = explain(capsys, prog, stream, "why", "Alarm(s1)@2")
    assert code == 0, err
    _valid(got)
    (negated,) = [n for n in walk(got) if n.get("negated")]
    (entry,) = negated["why_not"]  # Smoke needs Windy, which never holds
    assert (entry["rule"]["line"], entry["bindings"], entry["literal"]) == (2, {"X": "s1"}, "Windy(X)")


def test_the_schema_is_strict():
    with pytest.raises(jsonschema.ValidationError):
        _valid({"query": "q(a)@1", "why": {"kind": "rule", "text": "q(a) at 1"}})  # the old wrapper
    with pytest.raises(jsonschema.ValidationError):
        _valid({"kind": "negated", "text": "not r", "negated": True, "why_not": [{"text": "x", "reason": "y"}]})


def test_a_why_not_follows_a_failing_atom_of_the_program(tmp_path, capsys):
    program = ("alert(X) :- hot(X), not ok(X).\nhot(X) :- temp(X, V) [2], V > 50.\n"
               "ok(X) :- checked(X), calm(X).\ncalm(X) :- quiet(X) [1].\nchecked(X) :- inspected(X) [5].\n")
    prog, stream = files(tmp_path, "m.lars", program, [
        {"t": 0, "pred": "temp", "args": ["m1", 70]}, {"t": 1, "pred": "inspected", "args": ["m1"]}, {"t": 2}])
    code, got, err = explain(capsys, prog, stream, "why", "alert(m1)@2")
    assert code == 0, err
    _valid(got)
    (negated,) = [n for n in walk(got) if n.get("negated")]
    # ok(m1) fails at calm(m1) (checked(m1) holds: inspected at 1), and calm(m1) at quiet(m1) [1]
    (entry,) = negated["why_not"]
    assert (entry["rule"]["line"], entry["literal"]) == (3, "calm(X)")
    (inner,) = entry["why_not"]
    assert (inner["rule"]["line"], inner["bindings"], inner["literal"]) == (4, {"X": "m1"}, "quiet(X) [1]")
    assert inner["reason"] == "quiet(m1) [1] fails: no matching fact in window [1,2]" and "why_not" not in inner
    capsys.readouterr()
    assert main(["explain", prog, "--input", stream, "--why", "alert(m1)@2"]) == 0
    assert capsys.readouterr().out.count("why not:") == 2


def test_a_negated_tuple_window_cites_the_facts_that_fill_it(tmp_path, capsys):
    # at 2 the last 2 facts are x(b) at 1 and p(a) at 2: r(a) at 0 has left the window
    prog, stream = files(tmp_path, "t.lars", "q(X) :- p(X), not r(X) [2 #].\n", [
        {"t": 0, "pred": "r", "args": ["a"]}, {"t": 1, "pred": "x", "args": ["b"]},
        {"t": 2, "pred": "p", "args": ["a"]}, {"t": 3}])
    code, got, err = explain(capsys, prog, stream, "why", "q(a)@2")
    assert code == 0, err
    _valid(got)
    (negated,) = [n for n in walk(got) if n.get("negated")]
    assert [(n["atom"], n["time"], n["source"]) for n in negated["premises"]] == [
        ("x(b)", 1, f"{stream}:2:1"), ("p(a)", 2, f"{stream}:3:1")]
    assert negated["why_not"] == []  # r is an input predicate
