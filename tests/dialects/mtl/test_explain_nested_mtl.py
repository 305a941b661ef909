"""DatalogMTL why-not entries below the top level (issue 38, item 6): a failing literal over a
derived atom says why that atom does not hold where it is read (a Diamond's point, a
Since/Until's right operand, a plain atom), rule by rule, and names the single input event that
derives it there (``missing.derives``: at any time, not only T); a negated metric literal over a
derived atom does the same and names the event that ends its rule's atom (``missing.blocks``),
in rule instances at any time of the tree.  Every event named is checked against ``chronolog
run`` on the input with it added, read at the exact (rational) time."""

from __future__ import annotations

import json
from fractions import Fraction
from pathlib import Path
from typing import Any

from explaining import explain, files, walk, with_missing
from hypothesis import HealthCheck, event, given, settings
from hypothesis import strategies as st
from meaning import covers

from chronolog.cli.main import main
from chronolog.contract.models import Explanation
from chronolog.evaluator import time_text


def _holds(tmp: Path, capsys: Any, prog: str, events: list[dict], fact: tuple, t: Fraction) -> bool:
    """Whether ``run`` of ``prog`` on ``events`` holds ``fact`` at exactly ``t`` (diffs summed)."""
    (tmp / "plus.jsonl").write_text("".join(json.dumps(e) + "\n" for e in events))
    capsys.readouterr()
    assert main(["run", prog, "--input", str(tmp / "plus.jsonl")]) == 0
    lines = [json.loads(x) for x in capsys.readouterr().out.splitlines()]
    total = sum(line.get("diff", 1) for line in lines
                if (line.get("pred"), tuple(line.get("args", []))) == fact and covers(line, t))
    assert total in (0, 1)
    return total == 1


def _entries(got: Any) -> list[dict]:
    """Every why-not entry anywhere in the tree(s), nested ones included."""
    out: list[dict] = []

    def visit(entry: dict) -> None:
        out.append(entry)
        for inner in entry.get("why_not", []):
            visit(inner)

    for top in got if isinstance(got, list) else [got]:
        for node in walk(top):
            for entry in node.get("why_not", []):
                visit(entry)
    return out


def _check(tmp: Path, capsys: Any, prog: str, events: list[dict], query: tuple, t: Fraction, got: Any) -> int:
    """Each named missing event, added to the input, does what its entry says: derives its atom
    where it did not hold (the query's at the top), or ends the holding of the atom it blocks."""
    named = 0
    for entry in _entries(got):
        missing = entry.get("missing")
        if missing is None:
            continue
        named += 1
        goal = missing.get("derives") or missing.get("blocks")
        fact, at = (query, t) if goal is None else ((goal["pred"], tuple(goal["args"])), Fraction(goal["time"]))
        blocks = "blocks" in missing
        assert _holds(tmp, capsys, prog, events, fact, at) == blocks, entry
        assert _holds(tmp, capsys, prog, with_missing(events, missing), fact, at) != blocks, entry
    return named


def test_a_diamond_over_a_derived_atom_says_why_it_fails_at_its_point_and_names_the_event(tmp_path, capsys):
    # Z(a) at 5 reads W(a) in [3,4]; W needs H and C: H(a) on [3,4], no C: C(a) at 4 derives W(a)
    # at 4 (the window's latest point), and Z(a) at 5 with it
    program = "Z(X):-Diamondminus[1,2]W(X)\nW(X):-H(X), C(X)\n"
    events = [{"t": 0}, {"interval": "[3,4]", "pred": "H", "args": ["a"]}, {"t": 12}]
    prog, stream = files(tmp_path, "w.mtl", program, events)
    code, got, err = explain(capsys, prog, stream, "why-not", "Z(a)@5")
    assert code == 0, err
    Explanation.model_validate(got)
    (top,) = got["why_not"]
    assert top["literal"] == "Diamondminus[1,2]W(X)"  # the event below derives Z(a) too: named at the top
    assert top["missing"] == {"pred": "C", "args": ["a"], "time": 4, "text": "C(a) at 4"}
    (inner,) = top["why_not"]
    assert inner["literal"] == "C(X)" and inner["rule"]["line"] == 2
    assert inner["missing"] == {"pred": "C", "args": ["a"], "time": 4, "text": "C(a) at 4",
                                "derives": {"pred": "W", "args": ["a"], "time": 4}}
    assert _check(tmp_path, capsys, prog, events, ("Z", ("a",)), Fraction(5), got) == 2
    capsys.readouterr()  # (the text form: nested under "why not:")
    assert main(["explain", prog, "--input", stream, "--why-not", "Z(a)@5"]) == 0
    out = capsys.readouterr().out
    assert "    why not:\n      fails at body element 2: C(a) does not hold at 4; adding C(a) at 4 would derive it" in out
    # where Z also needs G(a), which fails too, the event that derives W(a) does not derive Z(a):
    # named below only
    prog, stream = files(tmp_path, "w.mtl", program.replace("W(X)\n", "W(X), G(X)\n", 1), events)
    code, got, err = explain(capsys, prog, stream, "why-not", "Z(a)@5")
    assert code == 0, err
    (top,) = got["why_not"]
    assert "missing" not in top and top["why_not"][0]["missing"]["derives"] == {"pred": "W", "args": ["a"], "time": 4}


def test_a_since_over_a_derived_right_operand_names_the_event_at_its_nearest_point(tmp_path, capsys):
    # Q(a) at 4: R(a) Since[1,2] P(a), R on [0,5], P(a) from C(a): C(a) at 3 derives P(a) at 3
    program = "Q(X):-R(X) Since[1,2] P(X)\nP(X):-C(X)\n"
    events = [{"t": 0}, {"interval": "[0,5]", "pred": "R", "args": ["a"]}, {"t": 6}]
    prog, stream = files(tmp_path, "s.mtl", program, events)
    code, got, err = explain(capsys, prog, stream, "why-not", "Q(a)@4")
    assert code == 0, err
    (inner,) = got["why_not"][0]["why_not"]
    assert inner["missing"]["derives"] == {"pred": "P", "args": ["a"], "time": 3}
    assert got["why_not"][0]["missing"]["time"] == 3
    assert _check(tmp_path, capsys, prog, events, ("Q", ("a",)), Fraction(4), got) == 2


def test_a_negated_diamond_over_a_derived_atom_names_the_event_that_ends_its_head(tmp_path, capsys):
    # V(a) at 4: H(a) and not Diamondminus[0,1]W(a); C(a) at 4 derives W(a) at 4, so the Diamond
    # holds and V(a) no longer does (blocks); below, the same event derives W(a) at 4
    program = "V(X):-H(X), not Diamondminus[0,1]W(X)\nW(X):-H(X), C(X)\n"
    events = [{"t": 0}, {"interval": "[3,4]", "pred": "H", "args": ["a"]}, {"t": 12}]
    prog, stream = files(tmp_path, "v.mtl", program, events)
    code, got, err = explain(capsys, prog, stream, "why", "V(a)@4")
    assert code == 0, err
    Explanation.model_validate(got)
    (negated,) = [c for c in got["premises"] if c.get("negated")]
    (entry,) = negated["why_not"]
    assert entry["missing"]["blocks"] == {"pred": "V", "args": ["a"], "time": 4}
    assert entry["why_not"][0]["missing"]["derives"] == {"pred": "W", "args": ["a"], "time": 4}
    assert _check(tmp_path, capsys, prog, events, ("V", ("a",)), Fraction(4), got) == 2


def test_a_blocking_event_is_named_in_a_rule_instance_at_another_time(tmp_path, capsys):
    # Z(a) at 5 from W(a) at 4, whose not A(a) Since[1,2] B(a) an event B(a) at 3 would end
    program = "Z(X):-Diamondminus[1,1]W(X)\nW(X):-H(X), not A(X) Since[1,2] B(X)\n"
    events = [{"t": 0}, {"interval": "[0,10]", "pred": "A", "args": ["a"]}, {"interval": "[4,4]", "pred": "H", "args": ["a"]},
              {"t": 12}]
    prog, stream = files(tmp_path, "z.mtl", program, events)
    code, got, err = explain(capsys, prog, stream, "why", "Z(a)@5")
    assert code == 0, err
    (entry,) = _entries(got)
    assert entry["missing"] == {"pred": "B", "args": ["a"], "time": 3, "text": "B(a) at 3",
                                "blocks": {"pred": "W", "args": ["a"], "time": 4}}
    assert _check(tmp_path, capsys, prog, events, ("Z", ("a",)), Fraction(5), got) == 1


def test_a_box_over_a_derived_atom_says_why_it_fails_at_a_point_its_range_lacks(tmp_path, capsys):
    # Z(a) at 5 needs W(a) throughout [3,5]; W needs H and C, C(a) on [0,3) and (3,10]: W(a)
    # fails at 3 alone, so C(a) at 3 derives W(a) there — and, filling the range, Z(a) at 5
    program = "Z(X):-Boxminus[0,2]W(X)\nW(X):-H(X), C(X)\n"
    events = [{"t": 0}, {"interval": "[0,10]", "pred": "H", "args": ["a"]},
              {"interval": "[0,3)", "pred": "C", "args": ["a"]}, {"interval": "(3,10]", "pred": "C", "args": ["a"]},
              {"t": 12}]
    prog, stream = files(tmp_path, "b.mtl", program, events)
    code, got, err = explain(capsys, prog, stream, "why-not", "Z(a)@5")
    assert code == 0, err
    Explanation.model_validate(got)
    (top,) = got["why_not"]
    (inner,) = top["why_not"]
    assert inner["text"].startswith("W(a) at 3: fails at body element 2: C(a) does not hold at 3")
    assert inner["missing"]["derives"] == {"pred": "W", "args": ["a"], "time": 3}
    assert top["missing"]["text"] == "C(a) at 3"
    assert _check(tmp_path, capsys, prog, events, ("Z", ("a",)), Fraction(5), got) == 2
    # C(a) on [0,3] and [9/2,10]: W(a) lacks (3,9/2), which a point of it alone does not fill:
    # the entry below names C(a) at the stretch's middle, 15/4 (deriving W there), the Box's entry
    # what fills the stretch, C(a) on (3,9/2)
    events[2:4] = [{"interval": "[0,3]", "pred": "C", "args": ["a"]}, {"interval": "[9/2,10]", "pred": "C", "args": ["a"]}]
    prog, stream = files(tmp_path, "b.mtl", program, events)
    code, got, err = explain(capsys, prog, stream, "why-not", "Z(a)@5")
    assert code == 0, err
    Explanation.model_validate(got)
    (top,) = got["why_not"]
    (inner,) = top["why_not"]
    assert inner["missing"]["derives"] == {"pred": "W", "args": ["a"], "time": "15/4"}
    assert top["missing"] == {"pred": "C", "args": ["a"], "time": 3, "interval": "(3,9/2)", "text": "C(a) on (3,9/2)"}
    assert not _holds(tmp_path, capsys, prog, with_missing(events, inner["missing"]), ("Z", ("a",)), Fraction(5))
    assert _check(tmp_path, capsys, prog, events, ("Z", ("a",)), Fraction(5), got) == 2
    # with C(a) on [7/2,4] too, W(a) lacks (3,7/2) and (4,9/2): one fact over both, C(a) on (3,9/2)
    events[3:3] = [{"interval": "[7/2,4]", "pred": "C", "args": ["a"]}]
    prog, stream = files(tmp_path, "b.mtl", program, events)
    code, got, err = explain(capsys, prog, stream, "why-not", "Z(a)@5")
    assert code == 0, err
    (top,) = got["why_not"]
    assert [e["missing"]["derives"]["time"] for e in top["why_not"]] == ["17/4", "13/4"]
    assert top["missing"]["text"] == "C(a) on (3,9/2)"
    assert _check(tmp_path, capsys, prog, events, ("Z", ("a",)), Fraction(5), got) == 3


def test_the_nested_why_not_follows_each_way_the_literals_before_hold(tmp_path, capsys):
    # Z(a) reads W(Y) for each P(a,Y): Y=b lacks H(b) and C(b) (no single event), Y=c lacks
    # C(c) alone — the first grounding (b) was the only one followed, so nothing was named
    program = "Z(X):-P(X,Y), Diamondminus[0,1]W(Y)\nW(Y):-H(Y), C(Y)\n"
    events = [{"t": 0}, {"interval": "[0,10]", "pred": "P", "args": ["a", "b"]},
              {"interval": "[0,10]", "pred": "P", "args": ["a", "c"]}, {"interval": "[0,10]", "pred": "H", "args": ["c"]},
              {"t": 12}]
    prog, stream = files(tmp_path, "g.mtl", program, events)
    code, got, err = explain(capsys, prog, stream, "why-not", "Z(a)@5")
    assert code == 0, err
    Explanation.model_validate(got)
    (top,) = got["why_not"]
    assert [(e["text"].split(":")[0], e["bindings"], e.get("missing", {}).get("text")) for e in top["why_not"]] == [
        ("W(b) at 5", {"Y": "b"}, None), ("W(c) at 5", {"Y": "c"}, "C(c) at 5")]
    assert top["missing"]["text"] == "C(c) at 5"
    assert _check(tmp_path, capsys, prog, events, ("Z", ("a",)), Fraction(5), got) == 2


def test_an_entry_deep_in_the_tree_is_tried_where_those_above_propose_many_events(tmp_path, capsys):
    # six rules each propose three A_i(a,v) events that fail (K(a) is missing too): 18 checks,
    # more than the budget; the rule over W, after them, and its entry below still get theirs
    program = "".join(f"Z(X):-E(Y), A{i}(X,Y), K(X)\n" for i in range(6)) + \
        "Z(X):-Diamondminus[0,1]W(X)\nW(X):-H(X), C(X)\n"
    events = [{"t": 0}, {"interval": "[0,10]", "pred": "H", "args": ["a"]},
              *({"interval": "[0,10]", "pred": "E", "args": [f"v{i}"]} for i in range(3)), {"t": 12}]
    prog, stream = files(tmp_path, "u.mtl", program, events)
    code, got, err = explain(capsys, prog, stream, "why-not", "Z(a)@5")
    assert code == 0, err
    *proposing, last = got["why_not"]
    assert len(proposing) == 6 and not any("missing" in e for e in proposing)
    assert last["missing"]["text"] == "C(a) at 5"
    assert last["why_not"][0]["missing"]["derives"] == {"pred": "W", "args": ["a"], "time": 5}
    assert _check(tmp_path, capsys, prog, events, ("Z", ("a",)), Fraction(5), got) == 2


TOP = ["Z(X):-Diamondminus[1,2]W(X)", "Z(X):-Diamondplus(0,1]W(X)", "Z(X):-R(X) Since[1,2] W(X)",
       "Z(X):-R(X) Until[0,1] W(X)", "Z(X):-W(X), R(X)", "Z(X):-H(X), not Diamondminus[0,1]W(X)",
       "Z(X):-Diamondminus[1,1]V(X)", "Z(X):-Boxminus[0,1]W(X)", "Z(X):-Boxplus(0,1/2]W(X)",
       "Z(X):-N(X,Y), Diamondminus[0,1]W(Y)", "Z(X):-H(X), not Boxminus[0,1]W(X)"]
BELOW = ["W(X):-H(X), C(X)", "W(X):-Diamondminus[0,1]C(X)", "W(X):-R(X) Since(0,1] C(X)", "W(X):-U(X)",
         "U(X):-C(X), not R(X)", "V(X):-H(X), not R(X) Since[1,2] C(X)", "V(X):-H(X), not Diamondplus[0,1]W(X)"]
FACT = st.one_of(
    st.builds(lambda lo, n, pred, arg: {"interval": f"[{lo},{lo + n}]", "pred": pred, "args": [arg]},
              st.integers(0, 8), st.integers(0, 3), st.sampled_from(["H", "R", "C"]), st.sampled_from(["a", "b"])),
    st.builds(lambda lo, n, arg: {"interval": f"[{lo},{lo + n}]", "pred": "N", "args": ["a", arg]},  # Z's other ways
              st.integers(0, 8), st.integers(0, 6), st.sampled_from(["a", "b", "c"])))


@settings(max_examples=80, deadline=None, suppress_health_check=list(HealthCheck))
@given(top=st.lists(st.sampled_from(TOP), min_size=1, max_size=2, unique=True),
       below=st.lists(st.sampled_from(BELOW), min_size=1, max_size=3, unique=True),
       facts=st.lists(FACT, max_size=5), q=st.integers(0, 40))
def test_every_event_named_at_any_depth_does_what_its_entry_says(tmp_path_factory, capsys, top, below, facts, q):
    """For random two-level programs, --why (where Z holds) or --why-not (where not): every missing
    event anywhere in the tree, added, derives its entry's atom at its time (or the query), or
    ends the holding of the atom it blocks — by run, at the exact time."""
    tmp = tmp_path_factory.mktemp("nested")
    events = [{"t": 0}, *facts, {"t": 12}]
    prog, stream = files(tmp, "p.mtl", "\n".join([*top, *below]) + "\n", events)
    t = Fraction(q, 4)
    mode = "why-not"
    code, got, err = explain(capsys, prog, stream, mode, f"Z(a)@{time_text(t)}")
    if code == 1:
        mode = "why"
        code, got, err = explain(capsys, prog, stream, mode, f"Z(a)@{time_text(t)}")
    assert code == 0, err
    Explanation.model_validate(got)
    named = _check(tmp, capsys, prog, events, ("Z", ("a",)), t, got)
    nested = sum("derives" in e.get("missing", {}) or "blocks" in e.get("missing", {}) for e in _entries(got))
    event(f"{mode}: {'nested named' if nested else 'named' if named else 'none named'}")
    if any("interval" in e.get("missing", {}) for e in _entries(got)):
        event("a fact over a stretch named (a Box's gaps filled)")


NEGATED = ["A(X) Since[1,2] B(X)", "Diamondminus[0,2]W(X)", "Diamondplus(0,1]W(X)", "A(X) Since[0,1] W(X)",
           "A(X) Until[1,2] B(X)", "W(X)"]
W_RULES = ["W(X):-A(X), B(X)", "W(X):-Diamondminus[0,1]B(X)", "W(X):-A(X) Since(0,1] B(X)", "W(X):-B(X), not C(X)",
           "W(X):-Diamondminus[1/2,1]D(X)\nD(X):-B(X), C(X)"]
ANY = st.builds(lambda lo, n, pred: {"interval": f"[{lo},{lo + n}]", "pred": pred, "args": ["a"]},
                st.integers(0, 8), st.integers(0, 4), st.sampled_from(["A", "A", "B", "C"]))


@settings(max_examples=80, deadline=None, suppress_health_check=list(HealthCheck))
@given(negated=st.sampled_from(NEGATED), shift=st.sampled_from(["[1,1]", "[0,2]", "(0,1]"]),
       more=st.lists(st.sampled_from(W_RULES), min_size=1, max_size=3, unique=True),
       facts=st.lists(ANY, max_size=5), q=st.integers(0, 48))
def test_events_named_in_rule_instances_at_other_times_do_what_they_say(tmp_path_factory, capsys, negated, shift,
                                                                         more, facts, q):
    """Z(X) :- Diamondminus{shift}V(X), V(X) :- H(X), not L: the --why of Z at T cites V at an
    earlier time, whose negated L (over an input or a derived atom) names events that, added,
    end V's holding there (blocks) or derive L's atom where it is read (derives)."""
    tmp = tmp_path_factory.mktemp("other-times")
    program = "\n".join([f"Z(X):-Diamondminus{shift}V(X)", f"V(X):-H(X), not {negated}", *more]) + "\n"
    events = [{"t": 0}, {"interval": "[0,10]", "pred": "H", "args": ["a"]}, *facts, {"t": 12}]
    prog, stream = files(tmp, "p.mtl", program, events)
    t = Fraction(q, 4)
    code, got, err = explain(capsys, prog, stream, "why", f"Z(a)@{time_text(t)}")
    if code == 1:
        event("does not hold")
        return
    assert code == 0, err
    Explanation.model_validate(got)
    _check(tmp, capsys, prog, events, ("Z", ("a",)), t, got)
    kinds = {k for e in _entries(got) for k in ("derives", "blocks") if k in e.get("missing", {})
             and Fraction(e["missing"][k]["time"]) != t}
    event("named at another time: " + ", ".join(sorted(kinds)) if kinds else "none at another time")
