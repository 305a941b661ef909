"""``chronolog explain --why-not`` for DatalogMTL names a single missing input fact only where
adding it derives the fact (issue 38, item 6): by hand (a Diamond's latest point, a Box's
window) and over random programs and inputs, each named fact re-checked by ``chronolog run``
on the input with it added."""

from __future__ import annotations

import json
from fractions import Fraction
from pathlib import Path

from explaining import explain, files, walk, with_missing
from hypothesis import HealthCheck, event, given, settings
from hypothesis import strategies as st
from meaning import sampled_meaning

from chronolog.cli.main import main
from chronolog.contract.models import Explanation
from chronolog.core.explanation import json_time
from chronolog.evaluator import time_text

PROGRAM = "Alarm(X):-Diamondminus[1,2]Hot(X)\nPanic(X):-Boxminus[0,1]Heat(X), Smoke(X)\n"
INPUT = [{"interval": "[3,4]", "pred": "Smoke", "args": ["s1"]}, {"t": 10}]



def _holds(tmp: Path, capsys, prog: str, events: list[dict], fact: tuple, t: Fraction) -> bool:  # noqa: ANN001
    (tmp / "plus.jsonl").write_text("".join(json.dumps(e) + "\n" for e in events))
    capsys.readouterr()
    assert main(["run", prog, "--input", str(tmp / "plus.jsonl")]) == 0
    lines = [json.loads(x) for x in capsys.readouterr().out.splitlines()]
    return (*fact, t) in sampled_meaning(lines, 12)


def test_a_diamond_and_a_box_by_hand(tmp_path, capsys):
    prog, stream = files(tmp_path, "p.mtl", PROGRAM, INPUT)
    code, got, _ = explain(capsys, prog, stream, "why-not", "Alarm(s1)@5")
    (entry,) = got["why_not"]
    assert code == 0 and entry["missing"] == {"pred": "Hot", "args": ["s1"], "time": 4, "text": "Hot(s1) at 4"}
    assert entry["text"].endswith("; adding Hot(s1) at 4 would derive it")  # window [3,4]: its latest point
    code, got, _ = explain(capsys, prog, stream, "why-not", "Panic(s1)@7/2")
    (entry,) = got["why_not"]
    assert entry["missing"] == {"pred": "Heat", "args": ["s1"], "time": "5/2", "interval": "[5/2,7/2]",
                                "text": "Heat(s1) on [5/2,7/2]"}
    Explanation.model_validate(got)
    assert _holds(tmp_path, capsys, prog, with_missing(INPUT, entry["missing"]), ("Panic", ("s1",)), Fraction(7, 2))
    code, got, _ = explain(capsys, prog, stream, "why-not", "Panic(s1)@6")  # Smoke fails too: no claim
    assert "missing" not in got["why_not"][0] and "would derive" not in got["why_not"][0]["text"]


def test_since_and_until_name_the_right_operand_nearest_t_by_hand(tmp_path, capsys):
    # R(a) on [0,5]: Since[1,2] at 4 needs P(a) in [2,3] and R(a) after it up to 4, so P(a) at 3
    # (the nearest point: the shortest stretch); an open (1,2] just inside, at 5/2; Until[1,2]
    # at 2 looks ahead to 3
    events = [{"interval": "[0,5]", "pred": "R", "args": ["a"]}, {"t": 6}]
    for rule, query, missing in (("Q(X):-R(X)Since[1,2]P(X)", "Q(a)@4", 3), ("Q(X):-R(X)Since(1,2]P(X)", "Q(a)@4", "5/2"),
                                 ("Q(X):-R(X)Until[1,2]P(X)", "Q(a)@2", 3)):
        prog, stream = files(tmp_path, "p.mtl", rule + "\n", events)
        code, got, err = explain(capsys, prog, stream, "why-not", query)
        assert code == 0, err
        (entry,) = got["why_not"]
        assert entry["missing"]["time"] == missing, (rule, entry)
        t = Fraction(query.split("@")[1])
        assert not _holds(tmp_path, capsys, prog, events, ("Q", ("a",)), t)
        assert _holds(tmp_path, capsys, prog, with_missing(events, entry["missing"]), ("Q", ("a",)), t)


RULES = ["Q(X):-Diamondminus[0,2]P(X)", "Q(X):-Diamondminus[1,3]P(X)", "Q(X):-Boxminus[0,1]P(X)",
         "Q(X):-P(X),R(X)", "S(X):-Diamondminus[0,1]Q(X)", "S(X):-R(X)", "S(X):-Q(X), not R(X)",
         "S(X):-Boxplus[0,1]P(X), not Diamondminus[0,1]R(X)", "Q(X):-R(X)Since[1,2]P(X)",
         "S(X):-R(X)Until(0,1]P(X)"]
FACT = st.builds(lambda lo, n, pred, arg: {"interval": f"[{lo},{lo + n}]", "pred": pred, "args": [arg]},
                 st.integers(0, 8), st.integers(0, 2), st.sampled_from(["P", "R"]), st.sampled_from(["a", "b"]))


@settings(max_examples=60, deadline=None, suppress_health_check=list(HealthCheck))
@given(rules=st.lists(st.sampled_from(RULES), min_size=1, max_size=3, unique=True),
       facts=st.lists(FACT, min_size=0, max_size=6), q=st.integers(0, 40),
       pred=st.sampled_from(["Q", "S"]), arg=st.sampled_from(["a", "b"]))
def test_a_named_missing_fact_derives_it(tmp_path_factory, capsys, rules, facts, q, pred, arg):
    tmp = tmp_path_factory.mktemp("missing")
    events = [{"t": 0}, *facts, {"t": 12}]
    prog, stream = files(tmp, "p.mtl", "\n".join(rules) + "\n", events)
    t = Fraction(q, 4)
    when = time_text(t)
    code, got, err = explain(capsys, prog, stream, "why-not", f"{pred}({arg})@{when}")
    if code == 1:
        return
    assert code == 0, err
    Explanation.model_validate(got)
    assert len(got.get("why_not", [])) == sum(r.startswith(pred + "(") for r in rules)  # every matching rule
    for entry in got.get("why_not", []):
        if "missing" in entry:
            assert entry["missing"]["pred"] not in {r.split("(")[0] for r in rules}  # an input predicate
            assert _holds(tmp, capsys, prog, with_missing(events, entry["missing"]), (pred, (arg,)), t), entry


def test_a_negated_literal_names_the_event_that_would_derive_its_atom_by_hand(tmp_path, capsys):
    # Alarm(a) at 3: Hot(a), and not Safe(a) — Safe(a) needs Cool(a): Cool(a) at 3 derives Safe(a) at 3
    program = "Alarm(X):-Hot(X), not Safe(X)\nSafe(X):-Cool(X)\n"
    events = [{"t": 0}, {"t": 3, "pred": "Hot", "args": ["a"]}, {"t": 5}]
    prog, stream = files(tmp_path, "n.mtl", program, events)
    code, got, err = explain(capsys, prog, stream, "why", "Alarm(a)@3")
    assert code == 0, err
    Explanation.model_validate(got)
    (negated,) = [c for c in got["premises"] if c.get("negated")]
    (entry,) = negated["why_not"]
    assert entry["missing"] == {"pred": "Cool", "args": ["a"], "time": 3, "text": "Cool(a) at 3",
                                "derives": {"pred": "Safe", "args": ["a"], "time": 3}}
    assert not _holds(tmp_path, capsys, prog, events, ("Safe", ("a",)), Fraction(3))
    assert _holds(tmp_path, capsys, prog, with_missing(events, entry["missing"]), ("Safe", ("a",)), Fraction(3))


Q_RULES = ["Q(X):-Diamondminus[0,2]P(X)", "Q(X):-Boxminus[0,1]P(X)", "Q(X):-R(X)Since[1,2]P(X)", "Q(X):-P(X),R(X)"]


@settings(max_examples=60, deadline=None, suppress_health_check=list(HealthCheck))
@given(rules=st.lists(st.sampled_from(Q_RULES), min_size=1, max_size=2, unique=True),
       facts=st.lists(FACT, min_size=0, max_size=5), q=st.integers(0, 40), arg=st.sampled_from(["a", "b"]))
def test_an_event_named_under_a_negated_literal_derives_its_atom(tmp_path_factory, capsys, rules, facts, q, arg):
    """W(X) :- R(X), not Q(X): every event a --why names under the negated Q, added to the
    input, makes run derive that Q at T (and Q does not hold there without it)."""
    tmp = tmp_path_factory.mktemp("missing-nested")
    events = [{"t": 0}, {"interval": "[0,10]", "pred": "R", "args": [arg]}, *facts, {"t": 12}]  # (W's R: there)
    prog, stream = files(tmp, "p.mtl", "\n".join(["W(X):-R(X), not Q(X)", *rules]) + "\n", events)
    t = Fraction(q, 4)
    when = time_text(t)
    code, got, err = explain(capsys, prog, stream, "why", f"W({arg})@{when}")
    if code == 1:
        return
    assert code == 0, err
    Explanation.model_validate(got)
    for negated in (c for c in got["premises"] if c.get("negated")):
        for entry in negated.get("why_not", []):
            if "missing" in entry:
                goal = entry["missing"]["derives"]
                fact, at = (goal["pred"], tuple(goal["args"])), Fraction(goal["time"])
                assert (fact, at) == (("Q", (arg,)), t)
                assert not _holds(tmp, capsys, prog, events, fact, at)
                assert _holds(tmp, capsys, prog, with_missing(events, entry["missing"]), fact, at), entry


def _probe(tmp: Path, capsys, program: str, literal: str, events: list[dict], t: Fraction) -> bool:  # noqa: ANN001
    """Whether ``literal`` (of X) holds for X = a at ``t`` over ``events``: ``run`` of the program
    with ``Probe(X) :- literal`` added (an independent reading of the metric literal)."""
    (tmp / "probe.mtl").write_text(program + f"Probe(X):-H(X), {literal}\n")
    return _holds(tmp, capsys, str(tmp / "probe.mtl"), events, ("Probe", ("a",)), t)


def test_a_negated_since_names_the_event_that_would_make_it_hold_by_hand(tmp_path, capsys):
    # W(a) at 4: H(a), and not (A(a) Since[1,2] B(a)) — A(a) holds on [0,10], B(a) never: B(a) at 3
    # (the range's nearest point: the shortest stretch (3,4) of A) makes the Since hold at 4, and W(a)
    # then does not hold at 4
    program = "W(X):-H(X), not A(X) Since[1,2] B(X)\n"
    events = [{"t": 0}, {"interval": "[0,10]", "pred": "A", "args": ["a"]}, {"interval": "[4,4]", "pred": "H", "args": ["a"]},
              {"t": 12}]
    prog, stream = files(tmp_path, "n.mtl", program, events)
    code, got, err = explain(capsys, prog, stream, "why", "W(a)@4")
    assert code == 0, err
    Explanation.model_validate(got)
    (negated,) = [c for c in got["premises"] if c.get("negated")]
    (entry,) = negated["why_not"]
    assert entry["literal"] == "A(X) Since[1,2] B(X)"
    assert entry["missing"] == {"pred": "B", "args": ["a"], "time": 3, "text": "B(a) at 3",
                                "blocks": {"pred": "W", "args": ["a"], "time": 4}}
    assert entry["text"].endswith("; adding B(a) at 3 would make it hold, and W(a) not hold at 4")
    plus = with_missing(events, entry["missing"])
    assert _holds(tmp_path, capsys, prog, events, ("W", ("a",)), Fraction(4))
    assert not _holds(tmp_path, capsys, prog, plus, ("W", ("a",)), Fraction(4))
    assert _probe(tmp_path, capsys, program, "A(X) Since[1,2] B(X)", plus, Fraction(4))
    # A(a) only from 7/2 on: no single B(a) makes the Since hold at 4 (its stretch needs A on (3,4)
    # at least), so none is named
    events[1] = {"interval": "[7/2,10]", "pred": "A", "args": ["a"]}
    prog, stream = files(tmp_path, "n.mtl", program, events)
    code, got, err = explain(capsys, prog, stream, "why", "W(a)@4")
    assert code == 0, err
    (negated,) = [c for c in got["premises"] if c.get("negated")]
    assert "missing" not in negated["why_not"][0]


def test_a_blocking_event_is_not_named_where_another_derivation_stays(tmp_path, capsys):
    # W(a) also from C(a): with B(a) at 3 the Since holds, but W(a) still holds at 4
    program = "W(X):-H(X), not A(X) Since[1,2] B(X)\nW(X):-C(X)\n"
    events = [{"t": 0}, {"interval": "[0,10]", "pred": "A", "args": ["a"]}, {"interval": "[4,4]", "pred": "H", "args": ["a"]},
              {"interval": "[4,4]", "pred": "C", "args": ["a"]}, {"t": 12}]
    prog, stream = files(tmp_path, "n.mtl", program, events)
    code, got, err = explain(capsys, prog, stream, "why", "W(a)@4", "--all")
    assert code == 0, err
    entries = [e for top in (got if isinstance(got, list) else [got]) for n in walk(top) if n.get("negated")
               for e in n["why_not"]]
    assert entries and all("missing" not in e for e in entries)


NEGATED = ["A(X) Since[1,2] B(X)", "A(X) Since(0,2] B(X)", "A(X) Until[1,2] B(X)", "A(X) Until[0,1] B(X)",
           "Diamondminus[0,2]B(X)", "Diamondplus(0,1]B(X)", "Boxminus[0,1]B(X)", "D(X) Since[1,2] B(X)"]
MORE = ["D(X):-Diamondminus[1/2,1/2]A(X)", "W(X):-Diamondminus[0,1]C(X)", "D(X):-C(X)"]
ANY = st.builds(lambda lo, n, pred: {"interval": f"[{lo},{lo + n}]", "pred": pred, "args": ["a"]},
                st.integers(0, 8), st.integers(0, 4), st.sampled_from(["A", "A", "B", "C"]))


@settings(max_examples=60, deadline=None, suppress_health_check=list(HealthCheck))
@given(negated=st.sampled_from(NEGATED), more=st.lists(st.sampled_from(MORE), max_size=2, unique=True),
       facts=st.lists(ANY, max_size=5), q=st.integers(0, 40))
def test_an_event_named_under_a_negated_metric_literal_makes_it_hold(tmp_path_factory, capsys, negated, more, facts, q):
    """W(X) :- H(X), not L: every event a --why names under the negated L, added to the input,
    makes L hold at T (run of the program with Probe(X) :- H(X), L) and W not hold there."""
    tmp = tmp_path_factory.mktemp("blocking")
    program = "\n".join([f"W(X):-H(X), not {negated}", *more]) + "\n"
    events = [{"t": 0}, {"interval": "[0,10]", "pred": "H", "args": ["a"]}, *facts, {"t": 12}]
    prog, stream = files(tmp, "p.mtl", program, events)
    t = Fraction(q, 4)
    code, got, err = explain(capsys, prog, stream, "why", f"W(a)@{time_text(t)}")
    if code == 1:
        event("does not hold")
        return
    assert code == 0, err
    Explanation.model_validate(got)
    named = [e["missing"] for n in walk(got) if n.get("negated") for e in n["why_not"] if "missing" in e]
    event("named" if named else "none named")
    for missing in named:
        assert missing["blocks"] == {"pred": "W", "args": ["a"], "time": json_time(t)}
        plus = with_missing(events, missing)
        assert not _holds(tmp, capsys, prog, plus, ("W", ("a",)), t), missing
        assert _probe(tmp, capsys, program, negated, plus, t), missing
