"""``chronolog explain --why`` for DatalogMTL's binary operators and its choice among
derivations: a Since/Until literal's witness (the right operand at a time s in the operator's
range, the left operand throughout the open stretch between s and T), a Box's premise over its
whole range, and the smallest derivation (fewest rule applications) unless ``--all``.  The
expected trees are derived by hand."""

from __future__ import annotations

import json
from fractions import Fraction
from pathlib import Path

from explaining import explain, files, walk
from hypothesis import HealthCheck, event, given, settings
from hypothesis import strategies as st
from meaning import sampled_meaning

from chronolog.cli.main import main
from chronolog.contract.models import Explanation
from chronolog.dialects.mtl.explain import through_witness
from chronolog.evaluator import time_text

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


def _end(event: dict) -> Fraction:
    """The latest time an input line reaches (a time advance's, or its interval's end)."""
    if "t" in event:
        return Fraction(event["t"])
    return Fraction(event["interval"][1:-1].split(",")[1])


def _alone(tmp: Path, capsys, prog: str, stream: str, got: dict, step: Fraction = Fraction(1, 4)) -> set:  # noqa: ANN001
    """What ``run`` derives from the input lines ``got`` cites, on their own (the stream's first
    and latest times kept: a Boxplus or Diamondplus at T reads up to where the whole input
    reaches, which a fact's interval may carry past the last time advance): (pred, args, t)
    at the multiples of ``step`` up to 12."""
    texts = Path(stream).read_text().splitlines()
    cited = sorted({int(s.split(":")[-2]) for s in _sources(got)})
    latest = max(_end(json.loads(text)) for text in texts)
    alone = tmp / "alone.jsonl"
    alone.write_text("".join(json.dumps(e) + "\n" for e in [json.loads(texts[0]), *(json.loads(texts[n - 1]) for n in cited),
                                                            json.loads(texts[-1]), {"t": time_text(latest)}]))
    capsys.readouterr()
    assert main(["run", prog, "--input", str(alone)]) == 0
    return sampled_meaning([json.loads(x) for x in capsys.readouterr().out.splitlines()], 12, step)


# Q(a) at 3/2 on (1,2) reads P(a) on (0,1) (one back), and P(a)'s three input lines split that:
# a derivation of Q(a) at one point of the stretch (3/2: P at 1/2) cites one of them only
VARYING = "Q(X):-Diamondminus[1,1]P(X)\nW(X):-Q(X) Since[1,1] R(X)\n"
VARYING_IN = [{"t": 0}, {"interval": "[0,3/10]", "pred": "P", "args": ["a"]},
              {"interval": "[3/10,3/5]", "pred": "P", "args": ["a"]}, {"interval": "[3/5,2]", "pred": "P", "args": ["a"]},
              {"interval": "[1,1]", "pred": "R", "args": ["a"]}, {"t": 4}]


def test_a_derived_left_operand_is_covered_over_the_whole_stretch(tmp_path, capsys):
    prog, stream = files(tmp_path, "p.mtl", VARYING, VARYING_IN)
    code, got, err = explain(capsys, prog, stream, "why", "W(a)@2")
    assert code == 0, err
    Explanation.model_validate(got)
    (since,) = got["premises"]
    right, left = since["premises"]
    assert (right["time"], left["window"]) == (1, "(1,2)")
    # Q(a) on (1,2) needs P(a) on (0,1): all three P lines, each cited by the derivation of Q(a)
    # at a time of the stretch the ones before leave uncovered (the latest first)
    assert [n["time"] for n in left["premises"]] == ["9/5", "3/2", "23/20"]
    assert [_sources(n) for n in left["premises"]] == [[f"{stream}:4:1"], [f"{stream}:3:1"], [f"{stream}:2:1"]]
    assert ("W", ("a",), 2) in _alone(tmp_path, capsys, prog, stream, got)


def test_a_derived_box_operand_is_covered_over_its_range(tmp_path, capsys):
    # Boxminus[0,1]Q(a) at 2 needs Q(a) on [1,2], so P(a) on [0,1]: again all three lines
    prog, stream = files(tmp_path, "p.mtl", "Q(X):-Diamondminus[1,1]P(X)\nW(X):-Boxminus[0,1]Q(X)\n", VARYING_IN)
    code, got, err = explain(capsys, prog, stream, "why", "W(a)@2")
    assert code == 0, err
    assert _sources(got) == [f"{stream}:2:1", f"{stream}:3:1", f"{stream}:4:1"]
    assert ("W", ("a",), 2) in _alone(tmp_path, capsys, prog, stream, got)


# Q(a) at 3 reads P(a) anywhere in [0,3]: P(a) holds at 2 from R(a) through S (two rule
# applications) and at 1 from the input (none): the nearest witness is the costlier one
NEAR = "Q(X):-Diamondminus[0,3]P(X)\nP(X):-S(X)\nS(X):-R(X)\n"
NEAR_IN = [{"t": 0}, {"interval": "[1,1]", "pred": "P", "args": ["a"]}, {"interval": "[2,2]", "pred": "R", "args": ["a"]},
           {"t": 6}]


def test_a_diamond_is_explained_by_its_cheapest_witness_not_the_nearest(tmp_path, capsys):
    prog, stream = files(tmp_path, "p.mtl", NEAR, NEAR_IN)
    code, got, err = explain(capsys, prog, stream, "why", "Q(a)@3")
    assert code == 0, err
    assert [n["rule"]["line"] for n in walk(got) if n.get("rule")] == [1]
    assert _sources(got) == [f"{stream}:2:1"]
    (diamond,) = got["premises"]
    assert [n["interval"] for n in diamond["premises"]] == ["[1,1]"]
    assert ("Q", ("a",), 3) in _alone(tmp_path, capsys, prog, stream, got)
    # --all: both witnesses, the nearest (two rule applications) and the cheaper one
    code, every, err = explain(capsys, prog, stream, "why", "Q(a)@3", "--all")
    assert code == 0, err
    (top,) = every if isinstance(every, list) else [every]
    (alternatives,) = top["premises"][0]["premises"]
    assert alternatives["kind"] == "alternatives"
    assert [_sources(n) for n in alternatives["premises"]] == [[f"{stream}:3:1"], [f"{stream}:2:1"]]
    assert sorted(n["rule"]["line"] for n in walk(top) if n.get("rule")) == [1, 2, 3]


# P(a) at 3 by P :- B, B :- C (two applications), at 1 by P :- A (one): Q's smallest is 2 in all
DEEPER = "Q(X):-Diamondminus[0,4]P(X)\nP(X):-B(X)\nB(X):-C(X)\nP(X):-A(X)\n"
DEEPER_IN = [{"t": 0}, {"interval": "[0,1]", "pred": "A", "args": ["a"]}, {"interval": "[3,3]", "pred": "C", "args": ["a"]},
             {"t": 6}]


def test_the_cheapest_witness_counts_the_rules_below_it(tmp_path, capsys):
    prog, stream = files(tmp_path, "p.mtl", DEEPER, DEEPER_IN)
    code, got, err = explain(capsys, prog, stream, "why", "Q(a)@4")
    assert code == 0, err
    assert [n["rule"]["line"] for n in walk(got) if n.get("rule")] == [1, 4]
    assert _sources(got) == [f"{stream}:2:1"]
    # at 5 the window [1,5] still meets A(a) at 1 only at its start: still the cheaper one
    code, got, err = explain(capsys, prog, stream, "why", "Q(a)@5")
    assert code == 0, err
    assert [n["rule"]["line"] for n in walk(got) if n.get("rule")] == [1, 4]
    # at 6 the window [2,6] has only C's: the two-rule derivation is all there is
    code, got, err = explain(capsys, prog, stream, "why", "Q(a)@6")
    assert code == 0, err
    assert [n["rule"]["line"] for n in walk(got) if n.get("rule")] == [1, 2, 3]


# R(a) at 1 is an input fact, at 2 derived by two rules: Q at 3 is explained by the witness at 1
# (the longer stretch of the input P), not by the nearest at 2
CHEAP = "Q(X):-P(X) Since[0,3] R(X)\nR(X):-S(X)\nS(X):-C(X)\nU(X):-P(X) Until[0,3] R(X)\n"
CHEAP_IN = [{"t": 0}, {"interval": "[0,5]", "pred": "P", "args": ["a"]}, {"interval": "[2,2]", "pred": "C", "args": ["a"]},
            {"interval": "[3,3]", "pred": "R", "args": ["a"]}, {"interval": "[1,1]", "pred": "R", "args": ["a"]},
            {"t": 6}]


def test_a_since_is_explained_by_its_cheapest_witness_not_the_nearest(tmp_path, capsys):
    prog, stream = files(tmp_path, "p.mtl", CHEAP, CHEAP_IN)
    for query, s, line in (("Q(a)@5/2", 1, 5), ("U(a)@3/2", 3, 4)):  # Until looks ahead: R at 3 over the derived 2
        code, got, err = explain(capsys, prog, stream, "why", query)
        assert code == 0, err
        (through,) = got["premises"]
        right, left = through["premises"]
        assert right["time"] == s, (query, through["text"])
        assert [n["rule"]["line"] for n in walk(got) if n.get("rule")] == [1 if query[0] == "Q" else 4]
        assert _sources(got) == sorted([f"{stream}:2:1", f"{stream}:{line}:1"])
        t = Fraction(query.split("@")[1])
        assert (query[0], ("a",), t) in _alone(tmp_path, capsys, prog, stream, got)
    # --all: both witnesses, the nearest (two rule applications) first
    code, every, err = explain(capsys, prog, stream, "why", "Q(a)@5/2", "--all")
    assert code == 0, err
    (top,) = every if isinstance(every, list) else [every]
    (through,) = top["premises"]
    assert through["text"].endswith("(Since within [0,3]: 2 witnesses)")
    (alternatives,) = through["premises"]
    assert alternatives["kind"] == "alternatives"
    assert [n["premises"][0]["time"] for n in alternatives["premises"]] == [2, 1]


WITNESS_RULES = ["Q(X):-P(X) Since[0,3] R(X)", "Q(X):-P(X) Until[0,2] R(X)", "Q(X):-T(X) Since(0,2] R(X)",
                 "Q(X):-T(X) Until[1,3] R(X)"]
BELOW = ["R(X):-S(X)", "S(X):-C(X)", "R(X):-Diamondminus[1,1]C(X)", "T(X):-Diamondminus[1/2,1/2]P(X)", "T(X):-C(X)"]
PIECE = st.builds(lambda lo, n, pred: {"interval": f"[{time_text(Fraction(lo, 2))},{time_text(Fraction(lo + n, 2))}]",
                                       "pred": pred, "args": ["a"]},
                  st.integers(0, 16), st.integers(0, 12), st.sampled_from(["P", "P", "R", "C"]))


@settings(max_examples=60, deadline=None, suppress_health_check=list(HealthCheck))
@given(rule=st.sampled_from(WITNESS_RULES), below=st.lists(st.sampled_from(BELOW), min_size=1, max_size=3, unique=True),
       facts=st.lists(PIECE, min_size=3, max_size=8), q=st.integers(0, 40))
def test_the_chosen_witness_is_sound_and_no_larger_than_any_other(tmp_path_factory, capsys, rule, below, facts, q):
    """Where Q holds at T: the facts the --why cites alone re-derive Q at T (run), and its rule
    applications are no more than those of any witness --all lists (each the smallest below)."""
    tmp = tmp_path_factory.mktemp("cheapest")
    prog, stream = files(tmp, "p.mtl", "\n".join([rule, *below]) + "\n", [{"t": 0}, *facts, {"t": 12}])
    capsys.readouterr()
    assert main(["run", prog, "--input", stream]) == 0
    lines = [json.loads(x) for x in capsys.readouterr().out.splitlines()]
    held = sorted(x for p, _, x in sampled_meaning(lines, 12, Fraction(1, 8)) if p == "Q")
    if not held:
        event("never holds")
        return
    t = held[q % len(held)]
    code, got, err = explain(capsys, prog, stream, "why", f"Q(a)@{time_text(t)}")
    assert code == 0, err
    assert ("Q", ("a",), t) in _alone(tmp, capsys, prog, stream, got, Fraction(1, 8))
    code, every, err = explain(capsys, prog, stream, "why", f"Q(a)@{time_text(t)}", "--all")
    assert code == 0, err
    shown = sum(1 for n in walk(got) if n["kind"] == "rule")
    options = [alt for top in (every if isinstance(every, list) else [every]) for n in walk(top)
               if n["kind"] == "alternatives" and n["atom"].startswith(("P(a) S", "P(a) U", "T(a) S", "T(a) U"))
               for alt in n["premises"]]
    event(f"{len(options)} witnesses listed" if options else "one witness")
    for alt in options:
        assert shown <= 1 + sum(1 for n in walk(alt) if n["kind"] == "rule"), (got, alt)


def test_a_long_box_over_a_diamond_of_dense_readings_is_covered_by_few_derivations(tmp_path, capsys):
    # Alarm holds from a Hot reading for 10; Panic needs it throughout the last 300: covered
    # backwards, each derivation by the earliest reading in its window (each reaches 10 back), it
    # takes the 30 readings 55, 65, ..., 345 — by the latest reading at the middle of each gap it
    # took more than the 64 the guard allows, and said "not covered"
    program = "Alarm(X):-Diamondminus[0,10]Hot(X)\nPanic(X):-Boxminus[0,300]Alarm(X), Smoke(X)\n"
    events = [{"t": 0}, *({"interval": f"[{t},{t}]", "pred": "Hot", "args": ["s1"]} for t in range(400)),
              {"interval": "[350,360]", "pred": "Smoke", "args": ["s1"]}, {"t": 400}]
    prog, stream = files(tmp_path, "p.mtl", program, events)
    code, got, err = explain(capsys, prog, stream, "why", "Panic(s1)@355")
    assert code == 0, err
    assert not any("not covered" in n["text"] for n in walk(got))
    assert sum(1 for n in walk(got) if n.get("rule", {}).get("line") == 1) == 30
    assert _sources(got) == sorted([f"{stream}:{t + 2}:1" for t in range(55, 355, 10)] + [f"{stream}:402:1"])
    (tmp_path / "alone.jsonl").write_text("".join(
        json.dumps(e) + "\n" for e in [events[0], *(json.loads(Path(stream).read_text().splitlines()[int(s.split(":")[-2]) - 1])
                                                    for s in _sources(got)), events[-1]]))
    capsys.readouterr()
    assert main(["run", prog, "--input", str(tmp_path / "alone.jsonl")]) == 0
    held = [json.loads(x) for x in capsys.readouterr().out.splitlines()]
    assert any(x["pred"] == "Panic" and x["interval"] == "[355,355]" for x in held), held


DENSE_T = ["T(X):-Diamondminus[0,2]P(X)", "T(X):-Diamondplus[1,3]P(X)", "T(X):-Diamondminus(0,1]P(X)",
           "T(X):-Diamondminus[1/2,3/2]P(X)"]
DENSE_S = ["S(X):-Boxminus[0,8]T(X)", "S(X):-Boxplus[0,6]T(X)", "S(X):-R(X) Since[1,8] T(X)", "S(X):-T(X) Since[6,9] R(X)"]
def _reading(k: int) -> dict:
    return {"interval": f"[{time_text(Fraction(k, 2))},{time_text(Fraction(k, 2))}]", "pred": "P", "args": ["a"]}
R_FACT = st.builds(lambda lo, n: {"interval": f"[{lo},{lo + n}]", "pred": "R", "args": ["a"]}, st.integers(0, 10),
                   st.integers(0, 8))


@settings(max_examples=60, deadline=None, suppress_health_check=list(HealthCheck))
@given(below=st.lists(st.sampled_from(DENSE_T), min_size=1, max_size=2, unique=True), over=st.sampled_from(DENSE_S),
       readings=st.lists(st.integers(0, 24), min_size=12, max_size=24, unique=True), r=st.lists(R_FACT, max_size=2),
       q=st.integers(0, 48))
def test_a_derived_operand_over_dense_readings_is_covered_soundly(tmp_path_factory, capsys, below, over, readings, r, q):
    """A Box's range or a stretch over a Diamond of point readings: the cited readings alone
    re-derive the fact at T (run), and the cover never needs the guard's note."""
    tmp = tmp_path_factory.mktemp("dense")
    events = [{"t": 0}, *map(_reading, sorted(readings)), *r, {"t": 12}]
    prog, stream = files(tmp, "p.mtl", "\n".join([*below, over]) + "\n", events)
    capsys.readouterr()
    assert main(["run", prog, "--input", stream]) == 0
    lines = [json.loads(x) for x in capsys.readouterr().out.splitlines()]
    held = sorted(x for p, _, x in sampled_meaning(lines, 12) if p == "S")
    if not held:
        event("never holds")
        return
    t = held[q % len(held)]
    code, got, err = explain(capsys, prog, stream, "why", f"S(a)@{time_text(t)}")
    assert code == 0, err
    assert not any("not covered" in n["text"] for n in walk(got))
    event("covered by several" if sum(1 for n in walk(got) if n["kind"] == "rule") > 2 else "by one")
    assert ("S", ("a",), t) in _alone(tmp, capsys, prog, stream, got)
