"""``chronolog explain --why`` for DatalogMTL's binary operators and its choice among
derivations: a Since/Until literal's witness (the right operand at a time s in the operator's
range, the left operand throughout the open stretch between s and T), a Box's premise over its
whole range, and the smallest derivation (fewest rule applications) unless ``--all``.  The
expected trees are derived by hand."""

from __future__ import annotations

import json
from pathlib import Path

from explaining import explain, files, walk

from chronolog.cli.main import main
from chronolog.contract.models import Explanation
from chronolog.dialects.mtl.explain import through_witness

THROUGH = "Q(X):-P(X) Since[1,3] R(X)\nU(X):-P(X) Until[1,2] R(X)\n"
# R on [1,2]; P on [1,3] and on [3,5] (two input lines, one coalesced interval [1,5])
THROUGH_IN = [{"t": 0}, {"interval": "[1,2]", "pred": "R", "args": ["a"]}, {"interval": "[1,3]", "pred": "P", "args": ["a"]},
              {"interval": "[3,5]", "pred": "P", "args": ["a"]}, {"interval": "[6,7]", "pred": "R", "args": ["a"]},
              {"t": 12}]


def _sources(node: dict) -> list[str]:
    return sorted(n["source"] for n in walk(node) if n["kind"] == "event")


def test_since_names_the_right_operand_at_s_and_the_left_throughout_the_stretch(tmp_path, capsys):
    prog, stream = files(tmp_path, "p.mtl", THROUGH, THROUGH_IN)
    code, got, err = explain(capsys, prog, stream, "why", "Q(a)@9/2")
    assert code == 0, err
    Explanation.model_validate(got)
    (since,) = got["premises"]
    # Q at 9/2: R at s with 9/2 - s in [1,3], s in [1,2]: the nearest is s = 2 (5/2 before);
    # P on (2,9/2), which needs both P lines
    assert since["text"] == ("P(a) Since[1,3] R(a) holds on [2,5] (Since within [1,3]: R(a) at 2, 5/2 before 9/2, "
                             "P(a) throughout (2,9/2))")
    right, left = since["premises"]
    assert (right["operand"], right["time"], right["interval"]) == ("right", 2, "[1,2]")
    assert (left["operand"], left["window"], left["interval"]) == ("left", "(2,9/2)", "[1,5]")
    assert _sources(right) == [f"{stream}:2:1"]
    assert _sources(left) == [f"{stream}:3:1", f"{stream}:4:1"]


def test_until_looks_ahead_for_its_witness(tmp_path, capsys):
    prog, stream = files(tmp_path, "p.mtl", THROUGH, THROUGH_IN)
    capsys.readouterr()
    assert main(["run", prog, "--input", stream]) == 0
    # U at t: R at s with s - t in [1,2], P on (t,s): R [1,2] gives t = 1 only (P starts at 1);
    # R [6,7] needs P on (t,6) with t >= 4, and P ends at 5
    assert '{"interval":"[1,1]","pred":"U","args":["a"]}' in capsys.readouterr().out
    code, got, err = explain(capsys, prog, stream, "why", "U(a)@1")
    assert code == 0, err
    (until,) = got["premises"]
    right, left = until["premises"]
    assert (right["time"], left["window"]) == (2, "(1,2)")
    assert "R(a) at 2, 1 after 1" in until["text"]
    assert _sources(got) == [f"{stream}:2:1", f"{stream}:3:1"]


def test_the_witness_by_hand():
    closed = (1, True, 3, True)
    # Since at 4 over R on [0,2], P on [1,5]: s in [1,3] ∩ [0,2] ∩ [1,5] = [1,2], the nearest 2
    assert through_witness([(1, True, 5, True)], [(0, True, 2, True)], closed, 4, True) == (
        2, (0, True, 2, True), (1, True, 5, True))
    # P starting at 3 leaves no s: (s,4) must lie in P
    assert through_witness([(3, True, 5, True)], [(0, True, 2, True)], closed, 4, True) is None
    # R at T itself with 0 in the range: nothing is needed of P
    assert through_witness([], [(3, True, 5, True)], (0, True, 1, True), 4, True) == (4, (3, True, 5, True), None)
    # an open end of R's interval: s strictly inside it
    assert through_witness([(0, True, 5, True)], [(0, True, 2, False)], closed, 4, True) == (
        2 - 1 / 2, (0, True, 2, False), (0, True, 5, True))
    # Until at 0 over R on [2,3]: s in [1,3] ∩ [2,3], the nearest 2
    assert through_witness([(0, True, 5, True)], [(2, True, 3, True)], closed, 0, False)[0] == 2


def test_a_box_cites_every_input_fact_over_its_range(tmp_path, capsys):
    prog, stream = files(tmp_path, "p.mtl", "Q(X):-Boxminus[0,2]P(X)\n",
                         [{"t": 0}, {"interval": "[0,1]", "pred": "P", "args": ["a"]},
                          {"interval": "[1,3]", "pred": "P", "args": ["a"]}, {"t": 6}])
    code, got, err = explain(capsys, prog, stream, "why", "Q(a)@2")
    assert code == 0, err
    assert _sources(got) == [f"{stream}:2:1", f"{stream}:3:1"]  # P on [0,2]: both lines


# A(a) from B(a) from C(a) (two rule applications) or from D(a) (one): the first rule is the longer
SMALL = "A(X):-B(X)\nB(X):-C(X)\nA(X):-D(X)\n"
SMALL_IN = [{"t": 0}, {"interval": "[0,2]", "pred": "C", "args": ["a"]}, {"interval": "[1,3]", "pred": "D", "args": ["a"]},
            {"t": 6}]


def test_the_smallest_derivation_is_shown_and_all_with_all(tmp_path, capsys):
    prog, stream = files(tmp_path, "p.mtl", SMALL, SMALL_IN)
    code, got, err = explain(capsys, prog, stream, "why", "A(a)@3/2")
    assert code == 0, err
    assert got["rule"]["line"] == 3 and _sources(got) == [f"{stream}:3:1"]
    assert sum(1 for n in walk(got) if n["kind"] == "rule") == 1
    code, every, err = explain(capsys, prog, stream, "why", "A(a)@3/2", "--all")
    assert code == 0, err
    nodes = every if isinstance(every, list) else [every]
    rules = sorted(n["rule"]["line"] for top in nodes for n in walk(top) if n.get("rule"))
    assert rules == [1, 2, 3]  # A by line 1 over B by line 2, and A by line 3
    # --depth cuts the tree shown, not the sizes compared (cut at once, both would count one)
    code, got, err = explain(capsys, prog, stream, "why", "A(a)@3/2", "--depth", "0")
    assert code == 0, err
    assert got["rule"]["line"] == 3 and all(n["kind"] != "event" for n in walk(got))
    # where only the longer one exists (D does not hold at 1/2), it is the one shown
    code, got, err = explain(capsys, prog, stream, "why", "A(a)@1/2")
    assert code == 0, err
    assert [n["rule"]["line"] for n in walk(got) if n.get("rule")] == [1, 2]


def test_a_cited_stretch_alone_rederives_the_since(tmp_path, capsys):
    """Soundness by hand: the input lines the Since explanation cites, run on their own, derive Q at 9/2."""
    prog, stream = files(tmp_path, "p.mtl", THROUGH, THROUGH_IN)
    code, got, _ = explain(capsys, prog, stream, "why", "Q(a)@9/2")
    assert code == 0
    texts = Path(stream).read_text().splitlines()
    cited = sorted({int(s.split(":")[-2]) for s in _sources(got)})
    alone = tmp_path / "alone.jsonl"
    alone.write_text("".join(json.dumps(e) + "\n" for e in [{"t": 0}, *(json.loads(texts[n - 1]) for n in cited), {"t": 12}]))
    capsys.readouterr()
    assert main(["run", prog, "--input", str(alone)]) == 0
    assert '{"interval":"[2,5]","pred":"Q","args":["a"]}' in capsys.readouterr().out


def test_a_head_operator_is_explained_from_the_time_its_body_holds(tmp_path, capsys):
    """Boxplus[0,2]A(X) :- B(X) with B on [1,2] puts A on [1,4]; A at 4 comes from B at 2 only
    (its head's pre-image of 4 is [2,4]).  (It used to stop with an AttributeError.)"""
    prog, stream = files(tmp_path, "h.mtl", "Boxplus[0,2]A(X):-B(X)\n",
                         [{"t": 0}, {"interval": "[1,2]", "pred": "B", "args": ["a"]}, {"t": 8}])
    code, got, err = explain(capsys, prog, stream, "why", "A(a)@4")
    assert code == 0, err
    assert got["text"] == "A(a) on [1,4]: at 4 by a rule whose body holds at 2"
    assert _sources(got) == [f"{stream}:2:1"]
    code, got, err = explain(capsys, prog, stream, "why-not", "A(a)@5")
    assert code == 0, err
    assert [e["reason"] for e in got["why_not"]] == ["B(a) does not hold at any time of [3,5]"]
