"""``chronolog explain --why-not`` for DatalogMTL names a single missing input fact only where
adding it derives the fact (issue 38, item 6): by hand (a Diamond's latest point, a Box's
window) and over random programs and inputs, each named fact re-checked by ``chronolog run``
on the input with it added."""

from __future__ import annotations

import json
from fractions import Fraction
from pathlib import Path

from explaining import explain, files
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from meaning import sampled_meaning

from chronolog.cli.main import main
from chronolog.contract.models import Explanation
from chronolog.evaluator import time_text

PROGRAM = "Alarm(X):-Diamondminus[1,2]Hot(X)\nPanic(X):-Boxminus[0,1]Heat(X), Smoke(X)\n"
INPUT = [{"interval": "[3,4]", "pred": "Smoke", "args": ["s1"]}, {"t": 10}]


def _left(e: dict) -> Fraction:
    return Fraction(e["interval"][1:].split(",")[0]) if "interval" in e else Fraction(e["t"])


def _with(events: list[dict], missing: dict) -> list[dict]:
    """The input with the missing fact arriving right after the last event up to its (left end's) time."""
    ev = {"pred": missing["pred"], "args": missing["args"],
          **({"interval": missing["interval"]} if "interval" in missing else {"t": missing["time"]})}
    at = max((i + 1 for i, e in enumerate(events) if _left(e) <= _left(ev)), default=0)
    return [*events[:at], ev, *events[at:]]


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
    assert _holds(tmp_path, capsys, prog, _with(INPUT, entry["missing"]), ("Panic", ("s1",)), Fraction(7, 2))
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
        assert _holds(tmp_path, capsys, prog, _with(events, entry["missing"]), ("Q", ("a",)), t)


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
            assert _holds(tmp, capsys, prog, _with(events, entry["missing"]), (pred, (arg,)), t), entry


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
    assert _holds(tmp_path, capsys, prog, _with(events, entry["missing"]), ("Safe", ("a",)), Fraction(3))


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
                assert _holds(tmp, capsys, prog, _with(events, entry["missing"]), fact, at), entry
