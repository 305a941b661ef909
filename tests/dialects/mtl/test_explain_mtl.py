"""``chronolog explain --why / --why-not`` for DatalogMTL: rule instances with the intervals
their premises hold on and the operators' ranges, down to input facts; the first failing
literal of each rule.  Hand-derived cases and a property: ``--why`` exactly where ``run``'s
answers hold (at rational times), ``--why-not`` exactly elsewhere."""

from __future__ import annotations

import json
from fractions import Fraction
from pathlib import Path

from explaining import explain, files, sliced_and_whole, walk
from hypothesis import HealthCheck, event, given, settings
from hypothesis import strategies as st
from meaning import sampled_meaning

from chronolog.cli.main import main
from chronolog.contract.models import Explanation
from chronolog.dialects.mtl.parser import parse_mtl
from chronolog.dialects.mtl.relevance import demands
from chronolog.evaluator import time_text

HEAT = "Alarm(X):-Diamondminus[0,2]Hot(X)\nPanic(X):-Boxminus[0,1]Alarm(X), Smoke(X)\n"
HEAT_IN = [{"interval": "[0,5]", "pred": "Hot", "args": ["s1"]}, {"interval": "[3,4]", "pred": "Smoke", "args": ["s1"]},
           {"t": 10}]


def _files(tmp: Path, program: str, events: list[dict]) -> tuple[str, str]:
    return files(tmp, "p.mtl", program, events)


def test_why_panic_by_hand(tmp_path, capsys):
    prog, stream = _files(tmp_path, HEAT, HEAT_IN)
    code, got, err = explain(capsys, prog, stream, "why", "Panic(s1)@7/2")
    assert code == 0, err
    root = got
    assert root["text"] == "Panic(s1) on [3,4]: at 7/2 by a rule whose body holds at 7/2"
    assert root["rule"] == {"file": prog, "line": 2, "text": "Panic(X) :- Boxminus[0,1]Alarm(X), Smoke(X)"}
    assert root["bindings"] == {"X": "s1"} and (root["atom"], root["interval"], root["time"]) == ("Panic(s1)", "[3,4]", "7/2")
    box, smoke = root["premises"]
    assert box["text"] == "Boxminus[0,1]Alarm(s1) holds on [1,7] (every point of [5/2,7/2] at 7/2, range [0,1])"
    alarm = box["premises"][0]
    assert alarm["rule"] == {"file": prog, "line": 1, "text": "Alarm(X) :- Diamondminus[0,2]Hot(X)"}
    leaves = [n for n in walk(got) if n["kind"] == "event"]
    assert [(n["text"], n["interval"], n["source"]) for n in leaves] == [
        ("input Hot(s1) on [0,5]", "[0,5]", f"{stream}:1:1"), ("input Smoke(s1) on [3,4]", "[3,4]", f"{stream}:2:1")]
    assert smoke["text"] == "Smoke(s1) holds on [3,4]"


def test_why_not_by_hand(tmp_path, capsys):
    prog, stream = _files(tmp_path, HEAT, HEAT_IN)
    code, got, _ = explain(capsys, prog, stream, "why-not", "Panic(s1)@5")
    assert code == 0
    assert [c["text"] for c in got["why_not"]] == [  # Alarm(s1) holds on [0,7]: Smoke(s1) at 5 is all it needs
        "fails at body element 2: Smoke(s1) does not hold at 5; adding Smoke(s1) at 5 would derive it"]
    code, got, _ = explain(capsys, prog, stream, "why-not", "Alarm(s1)@15/2")
    assert [c["text"] for c in got["why_not"]] == [
        "fails at body element 1: Diamondminus[0,2]Hot(s1) does not hold at 15/2; adding Hot(s1) at 15/2 would derive it"]
    code, _, err = explain(capsys, prog, stream, "why", "Alarm(s1)@15/2")
    assert code == 1 and "Alarm(s1) does not hold at 15/2 (ask --why-not)" in err


RULES = ["Q(X):-Diamondminus[0,2]P(X)", "Q(X):-Diamondminus[1,3]P(X)", "Q(X):-Boxminus[0,1]P(X)",
         "Q(X):-P(X),R(X)", "S(X):-Diamondminus[0,1]Q(X)", "S(X):-R(X)", "S(X):-Q(X), not R(X)",
         "Q(X):-P(X) Since[0,2] R(X)", "Q(X):-P(X) Until[1,2] R(X)", "S(X):-Q(X) Since[1,2] R(X)"]
FACT = st.builds(lambda lo, n, pred, arg: {"interval": f"[{lo},{lo + n}]", "pred": pred, "args": [arg]},
                 st.integers(0, 8), st.integers(0, 2), st.sampled_from(["P", "R"]), st.sampled_from(["a", "b"]))


@settings(max_examples=40, deadline=None, suppress_health_check=list(HealthCheck))
@given(rules=st.lists(st.sampled_from(RULES), min_size=1, max_size=3, unique=True),
       facts=st.lists(FACT, min_size=1, max_size=6), q=st.integers(0, 48),
       pred=st.sampled_from(["Q", "S"]), arg=st.sampled_from(["a", "b"]))
def test_why_exactly_where_run_holds(tmp_path_factory, capsys, rules, facts, q, pred, arg):
    tmp = tmp_path_factory.mktemp("why")
    prog, stream = _files(tmp, "\n".join(rules) + "\n", [{"t": 0}, *facts, {"t": 12}])
    capsys.readouterr()
    assert main(["run", prog, "--input", stream]) == 0
    lines = [json.loads(x) for x in capsys.readouterr().out.splitlines()]
    t = Fraction(q, 4)
    holds = (pred, (arg,), t) in sampled_meaning(lines, 12)
    when = time_text(t)
    code, got, err = explain(capsys, prog, stream, "why", f"{pred}({arg})@{when}")
    assert code == (0 if holds else 1), err
    code_not, got_not, err_not = explain(capsys, prog, stream, "why-not", f"{pred}({arg})@{when}")
    assert code_not == (1 if holds else 0), err_not
    for output in (got, got_not):  # the JSON form is the contract's (schemas/explanation.schema.json)
        if output is not None:
            Explanation.model_validate(output)
    if holds:
        texts = Path(stream).read_text().splitlines()
        leaves = [n for n in walk(got) if n["kind"] == "event"]
        assert leaves  # every derivation ends in input facts
        for leaf in leaves:
            rec = json.loads(texts[int(leaf["source"].split(":")[-2]) - 1])
            assert leaf["text"] == f"input {rec['pred']}({rec['args'][0]}) on {rec['interval']}"


@settings(max_examples=40, deadline=None, suppress_health_check=list(HealthCheck))
@given(rules=st.lists(st.sampled_from(RULES), min_size=1, max_size=3, unique=True),
       facts=st.lists(FACT, min_size=1, max_size=6), q=st.integers(0, 48),
       pred=st.sampled_from(["Q", "S"]), arg=st.sampled_from(["a", "b"]))
def test_why_is_sound_the_cited_facts_alone_derive_it(tmp_path_factory, capsys, rules, facts, q, pred, arg):
    """The input facts a --why cites, run on their own (the stream's span kept), derive the fact at T."""
    _sound(tmp_path_factory.mktemp("sound"), capsys, rules, facts, q, pred, arg)


THROUGH = RULES[-3:] + ["Q(X):-Boxminus[0,2]P(X)", "S(X):-Q(X) Until[0,1] P(X)", "Boxplus[0,1]S(X):-R(X)",
                        "Boxminus[1,2]Q(X):-R(X)"]
LONG = st.builds(lambda lo, n, pred, arg: {"interval": f"[{lo},{lo + n}]", "pred": pred, "args": [arg]},
                 st.integers(0, 8), st.integers(0, 4), st.sampled_from(["P", "P", "R"]), st.sampled_from(["a", "b"]))


@settings(max_examples=60, deadline=None, suppress_health_check=list(HealthCheck))
@given(rules=st.lists(st.sampled_from(THROUGH), min_size=1, max_size=3, unique=True),
       facts=st.lists(LONG, min_size=2, max_size=8), q=st.integers(0, 48),
       pred=st.sampled_from(["Q", "S"]), arg=st.sampled_from(["a", "b"]))
def test_since_and_until_witnesses_are_sound(tmp_path_factory, capsys, rules, facts, q, pred, arg):
    """As above, for programs of Since, Until and Box over long, overlapping facts: the witness's
    right operand and every input line of its left stretch are cited."""
    _sound(tmp_path_factory.mktemp("through"), capsys, rules, facts, q, pred, arg)


# a derived left operand that varies along the stretch: T from P shifted (a Diamond over a
# point range), boxed, or from R; P given as adjacent pieces (input lines one coalesced
# interval splits into), so one derivation of T at a point cites only a part of the stretch
VARYING = ["T(X):-Diamondminus[1/2,1/2]P(X)", "T(X):-Diamondminus[1,1]P(X)", "T(X):-Boxminus[0,1/2]P(X)",
           "T(X):-R(X)", "T(X):-Diamondplus[1/4,1/4]P(X)"]
OVER = ["S(X):-T(X) Since[1,2] R(X)", "S(X):-T(X) Since(0,3] R(X)", "S(X):-T(X) Until[1/2,2] R(X)",
        "S(X):-Boxminus[0,1]T(X)"]
PIECES = st.builds(lambda lo, cuts: [
    {"interval": f"[{time_text(Fraction(a, 4))},{time_text(Fraction(b, 4))}]", "pred": "P", "args": ["a"]}
    for a, b in zip([lo, *(lo + c for c in cuts)], [*(lo + c for c in cuts), lo + 16], strict=False)],
    st.integers(0, 16), st.lists(st.integers(1, 15), max_size=4, unique=True).map(sorted))
POINT = st.builds(lambda at: {"interval": f"[{at},{at}]", "pred": "R", "args": ["a"]}, st.integers(0, 10))


@settings(max_examples=80, deadline=None, suppress_health_check=list(HealthCheck))
@given(varying=st.lists(st.sampled_from(VARYING), min_size=1, max_size=2, unique=True),
       over=st.sampled_from(OVER), pieces=PIECES, points=st.lists(POINT, min_size=1, max_size=3), q=st.integers(0, 48))
def test_a_derived_varying_left_operand_is_covered_soundly(tmp_path_factory, capsys, varying, over, pieces, points, q):
    """The left stretch (and a Box's range) over a derived operand: the derivations cited cover
    it, so the cited input lines alone re-derive the fact (a derivation at a sample point of the
    stretch, citing one piece of P, would not)."""
    _sound(tmp_path_factory.mktemp("varying"), capsys, [*varying, over], [*pieces, *points], q, "S", "a")


def _sound(tmp: Path, capsys, rules: list[str], facts: list[dict], q: int, pred: str, arg: str) -> None:  # noqa: ANN001
    prog, stream = _files(tmp, "\n".join(rules) + "\n", [{"t": 0}, *facts, {"t": 12}])
    capsys.readouterr()
    assert main(["run", prog, "--input", stream]) == 0
    meant = sampled_meaning([json.loads(x) for x in capsys.readouterr().out.splitlines()], 12)
    held = [Fraction(k, 4) for k in range(49) if (pred, (arg,), Fraction(k, 4)) in meant]
    t = held[q % len(held)] if held else Fraction(q, 4)  # a time where it holds, where there is one
    when = time_text(t)
    code, got, _ = explain(capsys, prog, stream, "why", f"{pred}({arg})@{when}")
    if code != 0:
        event("does not hold")
        return
    event("a Since/Until stretch" if any(n.get("operand") == "left" for n in walk(got)) else "holds")
    texts = Path(stream).read_text().splitlines()
    cited = sorted({int(n["source"].split(":")[-2]) for n in walk(got) if n["kind"] == "event"})
    alone = [{"t": 0}, *(json.loads(texts[n - 1]) for n in cited), {"t": 12}]
    (tmp / "alone.jsonl").write_text("".join(json.dumps(e) + "\n" for e in alone))
    capsys.readouterr()
    assert main(["run", prog, "--input", str(tmp / "alone.jsonl")]) == 0
    lines = [json.loads(x) for x in capsys.readouterr().out.splitlines()]
    assert (pred, (arg,), t) in sampled_meaning(lines, 12), (cited, got)


# rules that read other constants than their head's: any value (T), a constant (U)
CROSS = ["T(X):-P(X), Diamondminus[0,2]R(Y)", "U(X):-Boxminus[0,1]P(X), R(b)", "S(X):-T(X)"]


@settings(max_examples=100, deadline=None, suppress_health_check=list(HealthCheck))
@given(rules=st.lists(st.sampled_from(RULES + CROSS), min_size=1, max_size=4, unique=True),
       facts=st.lists(FACT, min_size=3, max_size=10), q=st.integers(0, 20), arg=st.sampled_from(["a", "b"]),
       data=st.data())
def test_the_explanation_on_the_facts_its_rules_read_is_the_whole_inputs(tmp_path_factory, rules, facts, q, arg,
                                                                          data):
    """An explanation evaluates only the facts its rules can read with the query's constants
    (mtl/relevance.py): the same why or why-not as on the whole input, for random programs
    with rules that read another constant's facts."""
    pred = data.draw(st.sampled_from(sorted({r.split("(")[0] for r in rules})))
    prog, stream = _files(tmp_path_factory.mktemp("mtl"), "\n".join(rules) + "\n", [*facts, {"t": 12}])
    t = Fraction(q, 2)
    mode, sliced, whole, left_out = sliced_and_whole([prog], stream, f"{pred}({arg})@{t}")
    assert sliced == whole
    event(f"{mode}, {'facts left out' if left_out else 'nothing left out'}")


def test_short_stop_reads_one_vehicles_three_predicates():
    program = parse_mtl("NotPos(V):-NotOnMap(V)\nShortStop(V):-NotPos(V), Boxminus[1,1]Pos(V), "
                             "Boxminus[2,2]NotPos(V)\n")
    assert demands(program, "ShortStop", ("veh3",)) == {"ShortStop": {("veh3",)}, "NotPos": {("veh3",)},
                                                         "Pos": {("veh3",)}, "NotOnMap": {("veh3",)}}
