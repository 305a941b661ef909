"""``chronolog explain --why / --why-not`` for LARS: derivations down to input events, and
the first failing body literal of each rule.

Hand-derived cases (windows, tuple windows, negation, program facts, an answer-set choice),
and properties over random programs: ``--why`` succeeds exactly for the atoms of ``run``'s
answer at T and ``--why-not`` exactly for the others; every input leaf names an input line
holding that fact; every rule node's instance holds (its head is the atom it explains)."""

from __future__ import annotations

import json
from pathlib import Path

from explaining import explain, files, walk
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from meaning import meaning

from chronolog.cli.main import main
from chronolog.contract.models import Explanation

SETTINGS = settings(max_examples=120, deadline=None, suppress_health_check=list(HealthCheck))

JAM = """slow(C) :- speed(C, V) [2], V < 30.
jam(R) :- slow(C), on(C, R), not clear(R) [1].
on(c1, r1).
on(c2, r1).
"""
JAM_IN = [{"t": 0, "pred": "speed", "args": ["c1", 20]}, {"t": 1, "pred": "speed", "args": ["c2", 50]},
          {"t": 2, "pred": "clear", "args": ["r2"]}, {"t": 3, "pred": "clear", "args": ["r1"]}, {"t": 4}]


def _files(tmp: Path, program: str, events: list[dict]) -> tuple[str, str]:
    return files(tmp, "p.lars", program, events)


def test_why_a_jam_by_hand(tmp_path, capsys):
    prog, stream = _files(tmp_path, JAM, JAM_IN)
    code, got, err = explain(capsys, prog, stream, "why", "jam(r1)@2")
    assert code == 0, err
    root = got
    assert root["rule"] == {"file": prog, "line": 2, "text": "jam(R) :- slow(C), on(C,R), not clear(R) [1]."}
    assert (root["atom"], root["time"]) == ("jam(r1)", 2)
    assert root["bindings"] == {"C": "c1", "R": "r1"}
    slow, on, negated = root["premises"]
    assert slow["rule"]["line"] == 1 and slow["bindings"] == {"C": "c1", "V": 20}
    speed = slow["premises"][0]
    assert speed["text"] == "speed(c1,20) [2]: met at 0 in window [0,2]"
    assert speed["window"] == "window [0,2]"
    assert speed["premises"] == [{"kind": "event", "text": "input speed(c1,20) at 0", "atom": "speed(c1,20)", "time": 0,
                                  "source": f"{stream}:1:1"}]
    assert slow["premises"][1]["text"] == "V < 30 holds (V=20)"
    assert on == {"kind": "fact", "text": "on(c1,r1): a program fact", "atom": "on(c1,r1)",
                  "rule": {"file": prog, "line": 3, "text": "on(c1,r1)."}}
    assert negated == {"kind": "negated", "text": "not clear(r1) [1]: no such fact in window [1,2]", "negated": True,
                       "atom": "not clear(r1) [1]", "window": "window [1,2]", "reason": "no such fact in window [1,2]",
                       "why_not": []}  # clear is an input predicate: no rule derives it


def test_why_not_names_the_first_failing_literal(tmp_path, capsys):
    prog, stream = _files(tmp_path, JAM, JAM_IN)
    code, got, err = explain(capsys, prog, stream, "why-not", "slow(c2)@1")
    assert code == 0, err
    (rule,) = got["why_not"]
    assert rule["text"] == "fails at body element 2: V < 30 is false (V=50)" and rule["bindings"] == {"C": "c2"}
    # at 3 slow(c1) is gone (speed at 0 left the window [1,3]): jam's first literal fails
    code, got, _ = explain(capsys, prog, stream, "why-not", "jam(r1)@3")
    (rule,) = got["why_not"]
    assert rule["text"] == "fails at body element 1: slow(C) fails: no such atom in the answer at 3"
    # a negation that fails: clear(r1) arrived at 3, so not clear(r1) [1] fails at 3 and 4
    prog2, stream2 = _files(tmp_path, "slow(C) :- speed(C, V) [5], V < 30.\n" + JAM.split("\n", 1)[1], JAM_IN)
    code, got, _ = explain(capsys, prog2, stream2, "why-not", "jam(r1)@4")
    (rule,) = got["why_not"]
    assert rule["text"] == (f"fails at body element 3: not clear(r1) [1] fails: clear(r1) [1] holds "
                            f"(at 3 from {stream2}:4:1)")
    code, got, _ = explain(capsys, prog, stream, "why-not", "nothing(r1)@3")
    assert got["text"] == "nothing(r1) at 3: no rule has a head that matches it"


def test_at_heads_are_unfolded_at_the_evaluation_that_derives_them(tmp_path, capsys):
    """The README's program: stuck at 3 reads low at 1, 2 and 3, which the evaluation of 3
    derives through the @-head from the readings at those times."""
    program = ("slow(R) :- speed(R, V) [3], V < 30.\nlow(R) at T :- speed(R, V) at T [2], V < 30.\n"
               "stuck(R) :- low(R) always [2].\n")
    events = [{"t": 0, "pred": "speed", "args": ["a1", 80]}, {"t": 1, "pred": "speed", "args": ["a1", 20]},
              {"t": 2, "pred": "speed", "args": ["a1", 25]}, {"t": 3, "pred": "speed", "args": ["a1", 22]}, {"t": 6}]
    prog, stream = _files(tmp_path, program, events)
    code, got, err = explain(capsys, prog, stream, "why", "stuck(a1)@3")
    assert code == 0, err
    lows = [n for n in walk(got) if n["text"].startswith("low(a1) at ")]
    assert [n["text"] for n in lows] == [f"low(a1) at {t} (derived by the evaluation of 3)" for t in (1, 2, 3)]
    assert [n["source"] for n in walk(got) if n["kind"] == "event"] == [f"{stream}:{n}:1" for n in (2, 3, 4)]
    code, got, _ = explain(capsys, prog, stream, "why", "low(a1)@2")  # the first evaluation deriving it: 2
    assert code == 0 and got["text"] == "low(a1) at 2 (derived by the evaluation of 2)"
    code, got, _ = explain(capsys, prog, stream, "why-not", "low(a1)@0")
    assert got["why_not"][0]["text"] == "fails at body element 2: V < 30 is false (V=80)"


def test_why_not_of_an_at_head_atom_says_why_later_evaluations_do_not_date_it_back(tmp_path, capsys):
    """r(a) at 1 could be dated by the evaluations of 1 and 2 (window [1]): at 1 ``c`` fails;
    at 2 ``c`` holds and ``not k(a)`` fails (k(a) at 2), an entry of its own; at 3 p(a) at 1
    is out of the window (beyond the rule's reach: not asked).  Adding the missing event at 1
    alone would not do: the evaluation of 2 is what the user must also change."""
    program = "r(X) at U :- p(X) at U [1], c, not k(X).\n"
    events = [{"t": 0}, {"t": 1, "pred": "p", "args": ["a"]}, {"t": 2, "pred": "c", "args": []},
              {"t": 2, "pred": "k", "args": ["a"]}, {"t": 3, "pred": "c", "args": []}, {"t": 4}]
    prog, stream = _files(tmp_path, program, events)
    code, got, err = explain(capsys, prog, stream, "why-not", "r(a)@1")
    assert code == 0, err
    texts = [e["text"] for e in got["why_not"]]
    assert len(texts) == 2 and texts[0].startswith("fails at body element 2: ") and "c" in texts[0], texts
    assert texts[1].startswith("at the evaluation of 2: fails at body element 3: "), texts
    # the program's own answers agree: no evaluation dates r(a) at 1
    capsys.readouterr()
    assert main(["run", prog, "--input", stream]) == 0
    assert '"pred":"r"' not in capsys.readouterr().out


def test_asking_the_other_way_round_exits_1(tmp_path, capsys):
    prog, stream = _files(tmp_path, JAM, JAM_IN)
    code, got, err = explain(capsys, prog, stream, "why", "jam(r1)@4")
    assert code == 1 and got is None and "jam(r1) does not hold at 4 (ask --why-not)" in err
    code, got, err = explain(capsys, prog, stream, "why-not", "jam(r1)@0")
    assert code == 1 and "jam(r1) holds at 0 (ask --why)" in err


def test_tuple_windows_and_box(tmp_path, capsys):
    program = "two(X) :- p(X) [2 #].\nsteady(X) :- p(X) always [1].\n"
    events = [{"t": 0, "pred": "p", "args": ["a"]}, {"t": 1, "pred": "p", "args": ["b"]},
              {"t": 1, "pred": "p", "args": ["a"]}, {"t": 2, "pred": "p", "args": ["c"]}, {"t": 3}]
    prog, stream = _files(tmp_path, program, events)
    code, got, _ = explain(capsys, prog, stream, "why", "two(a)@1")  # the last 2 facts at 1: p(b), p(a)
    assert code == 0
    leaf = [n for n in walk(got) if n["kind"] == "event"]
    assert leaf == [{"kind": "event", "text": "input p(a) at 1", "atom": "p(a)", "time": 1, "source": f"{stream}:3:1"}]
    code, got, _ = explain(capsys, prog, stream, "why-not", "two(a)@2")  # at 2: p(a)@1, p(c)@2 ... and p(a)
    code_b, got_b, _ = explain(capsys, prog, stream, "why-not", "two(b)@2")
    assert code_b == 0 and "p(b) [2 #] fails: no matching fact in the last 2 facts (from time 1)" in \
        got_b["why_not"][0]["text"]
    code, got, _ = explain(capsys, prog, stream, "why", "steady(a)@1")  # p(a) at 0 and 1
    assert code == 0
    assert [n["source"] for n in walk(got) if n["kind"] == "event"] == [f"{stream}:1:1", f"{stream}:3:1"]


def test_a_derivation_relative_to_the_chosen_answer_set(tmp_path, capsys):
    """Not stratified: even/odd choice; the explanation reads the answer set run chose."""
    program = "a(X) :- p(X), not b(X).\nb(X) :- p(X), not a(X).\nc(X) :- a(X).\n"
    prog, stream = _files(tmp_path, program, [{"t": 0, "pred": "p", "args": ["x"]}, {"t": 1}])
    capsys.readouterr()
    assert main(["run", prog, "--input", stream, "--answers", "points"]) == 0
    held = {(r["pred"], r["args"][0]) for r in map(json.loads, capsys.readouterr().out.splitlines())
            if r.get("t") == 0 and "pred" in r}
    chosen = "a" if ("a", "x") in held else "b"
    other = "b" if chosen == "a" else "a"
    code, got, _ = explain(capsys, prog, stream, "why", f"{chosen}(x)@0")
    negated = got["premises"][1]
    assert code == 0 and (negated["text"], negated["negated"]) == (f"not {other}(x): not in the answer at 0", True)
    code, got, _ = explain(capsys, prog, stream, "why-not", f"{other}(x)@0")
    assert code == 0 and f"not {chosen}(x) fails: {chosen}(x) holds at 0 (in the answer)" in \
        got["why_not"][0]["text"]


RULES = ["q(X) :- p(X).", "q(X) :- p(X) [2].", "q(X) :- p(X) [2 #].", "q(X) :- p(X) always [1].",
         "q(X) :- p(X) [2], not r(X) [1].", "s(X) :- q(X), not r(X).", "s(X) :- p(X), r(X) [2].",
         "u(X) :- s(X), q(X) [1].", "q(X) :- p(X) at T [3], T > 1.",
         "w(X) at U :- p(X) at U [2], not r(X) [1].", "v(X) :- w(X) always [1].", "v(X) :- w(X) [2], q(X)."]
EVENT = st.builds(lambda t, pred, arg, retract: {"t": t, "pred": pred, "args": [arg],
                                                  **({"op": "retract"} if retract else {})},
                  st.integers(0, 8), st.sampled_from(["p", "r"]), st.sampled_from(["a", "b"]), st.booleans())


@SETTINGS
@given(rules=st.lists(st.sampled_from(RULES), min_size=1, max_size=4, unique=True),
       events=st.lists(EVENT, min_size=1, max_size=12), t=st.integers(0, 8),
       pred=st.sampled_from(["q", "s", "u", "v", "w"]), arg=st.sampled_from(["a", "b"]))
def test_why_exactly_for_the_answer_and_leaves_are_input_lines(tmp_path_factory, capsys, rules, events, t, pred, arg):
    tmp = tmp_path_factory.mktemp("why")
    stream_events = [{"t": 0}, *events, {"t": 8}]
    prog, stream = _files(tmp, "\n".join(rules) + "\n", stream_events)
    capsys.readouterr()
    assert main(["run", prog, "--input", stream]) == 0
    lines = [json.loads(x) for x in capsys.readouterr().out.splitlines()]
    holds = (pred, (arg,), t) in meaning(lines, (0, 8))
    code, got, err = explain(capsys, prog, stream, "why", f"{pred}({arg})@{t}")
    assert code == (0 if holds else 1), err
    code_not, got_not, err_not = explain(capsys, prog, stream, "why-not", f"{pred}({arg})@{t}")
    assert code_not == (1 if holds else 0), err_not
    for output in (got, got_not):
        if output is not None:  # the JSON form is the contract's (schemas/explanation.schema.json)
            Explanation.model_validate(output)
    if not holds:
        return
    assert got["kind"] in ("rule", "fact", "alternatives"), got  # a derivation, not a shrug
    texts = Path(stream).read_text().splitlines()
    for node in walk(got):
        if node["kind"] == "event":  # an input line with that fact at that time
            rec = json.loads(texts[int(node["source"].split(":")[-2]) - 1])
            assert node["text"] == f"input {rec['pred']}({','.join(map(str, rec['args']))}) at {rec['t']}"
            assert "op" not in rec
        if node["kind"] == "rule":  # its head is the atom it explains
            head = node["rule"]["text"].split(" :- ")[0]
            name = head.split("(")[0]
            assert node["text"].startswith(name + "(")
            # an atom at the evaluated point, or an @-head's atom that point's evaluation derives
            assert node["text"].endswith(f" at {t}") or node["text"].endswith(f"(derived by the evaluation of {t})") \
                or "(derived by the evaluation of " in node["text"]



@SETTINGS
@given(rules=st.lists(st.sampled_from(RULES), min_size=1, max_size=4, unique=True),
       events=st.lists(EVENT, min_size=1, max_size=12), t=st.integers(0, 8),
       pred=st.sampled_from(["q", "s", "u", "v", "w"]), arg=st.sampled_from(["a", "b"]))
def test_why_is_sound_the_cited_events_alone_derive_the_atom(tmp_path_factory, capsys, rules, events, t, pred, arg):
    """The input events a --why cites, run on their own through `chronolog run` (with the
    stream's first time point and a time advance to T kept), derive the atom at T."""
    tmp = tmp_path_factory.mktemp("sound")
    stream_events = [{"t": 0}, *events, {"t": 8}]
    prog, stream = _files(tmp, "\n".join(rules) + "\n", stream_events)
    code, got, _ = explain(capsys, prog, stream, "why", f"{pred}({arg})@{t}")
    if code != 0:
        return  # the atom does not hold: nothing to re-derive
    texts = Path(stream).read_text().splitlines()
    cited = sorted({int(n["source"].split(":")[-2]) for n in walk(got) if n["kind"] == "event"})
    alone = [{"t": 0}, *(json.loads(texts[n - 1]) for n in cited), {"t": max(t, 0)}]
    (tmp / "alone.jsonl").write_text("".join(json.dumps(e) + "\n" for e in alone))
    capsys.readouterr()
    assert main(["run", prog, "--input", str(tmp / "alone.jsonl")]) == 0
    lines = [json.loads(x) for x in capsys.readouterr().out.splitlines()]
    assert (pred, (arg,), t) in meaning(lines, (0, max(t, 0))), (cited, got)


def _sound(tmp: Path, capsys, prog: str, stream: str, got: dict, atom: tuple[str, tuple, int]) -> list[int]:  # noqa: ANN001
    """The input lines a --why cites; asserts that they alone (the first time kept, time
    advanced to the atom's time) derive the atom with ``run``."""
    texts = Path(stream).read_text().splitlines()
    cited = sorted({int(n["source"].split(":")[-2]) for n in walk(got) if n["kind"] == "event"})
    alone = [{"t": 0}, *(json.loads(texts[n - 1]) for n in cited), {"t": atom[2]}]
    (tmp / "alone.jsonl").write_text("".join(json.dumps(e) + "\n" for e in alone))
    capsys.readouterr()
    assert main(["run", prog, "--input", str(tmp / "alone.jsonl")]) == 0
    assert atom in meaning([json.loads(x) for x in capsys.readouterr().out.splitlines()], (0, atom[2]))
    return cited


def test_a_box_over_a_tuple_window_cites_every_tuple(tmp_path, capsys):
    # the last 2 facts at 1 are p(a) and p(b), both at 1: the window spans [1,1], where p(a)
    # holds; with p(a) alone it would span [0,1] (fewer than 2 facts: from the stream's start)
    program = "q(X) :- p(X) always [2 #].\n"
    events = [{"t": 0}, {"t": 1, "pred": "p", "args": ["a"]}, {"t": 1, "pred": "p", "args": ["b"]}, {"t": 3}]
    prog, stream = _files(tmp_path, program, events)
    code, got, _ = explain(capsys, prog, stream, "why", "q(a)@1")
    assert code == 0
    assert _sound(tmp_path, capsys, prog, stream, got, ("q", ("a",), 1)) == [2, 3]


def test_a_negated_literal_cites_what_blocks_its_rules(tmp_path, capsys):
    """A why-not under a negated literal cites the input that makes its rule fail: the facts
    filling a tuple window (p(a) after r(a) keeps r(a) out of [1 #]), the fact a failing
    negation sees; without them the negated atom would hold and the --why not re-derive."""
    program = ("w(X) at U :- r(X) at U [2 #], not q(X).\nq(X) :- r(X) [1 #], not p(X) [3].\n"
               "s(X) :- r(X), not k(X).\nk(X) :- r(X) [2], not p(X) [3].\n")
    events = [{"t": 0}, {"t": 0, "pred": "r", "args": ["a"]}, {"t": 0, "pred": "p", "args": ["a"]},
              {"t": 1, "pred": "r", "args": ["a"]}, {"t": 3}]
    prog, stream = _files(tmp_path, program, events)
    code, got, _ = explain(capsys, prog, stream, "why", "w(a)@0")
    assert code == 0
    Explanation.model_validate(got)
    (negated,) = [c for c in got["premises"] if c.get("negated")]
    (entry,) = negated["why_not"]
    assert entry["literal"] == "r(X) [1 #]" and [p["source"] for p in entry["premises"]] == [f"{stream}:3:1"]
    assert _sound(tmp_path, capsys, prog, stream, got, ("w", ("a",), 0)) == [2, 3]
    code, got, _ = explain(capsys, prog, stream, "why", "s(a)@1")
    (negated,) = [c for c in got["premises"] if c.get("negated")]
    (entry,) = negated["why_not"]
    assert entry["literal"] == "not p(X) [3]" and [p["source"] for p in entry["premises"]] == [f"{stream}:3:1"]
    assert code == 0 and _sound(tmp_path, capsys, prog, stream, got, ("s", ("a",), 1)) == [3, 4]
    # --why-not itself names the failing literal and why, without premises
    code, got, _ = explain(capsys, prog, stream, "why-not", "k(a)@1")
    assert code == 0 and "premises" not in got["why_not"][0]


# @-heads and tuple windows combined with negation (issue 38: random programs with both)
MIXED = ["q(X) :- p(X) [2 #], not r(X) [2 #].", "w(X) at U :- p(X) at U [3], not r(X) [1 #].",
         "x(X) :- r(X) [3 #], not w(X) [2].", "q(X) :- p(X) always [2 #].", "w(X) at U :- r(X) at U [2 #], not q(X).",
         "y(X) :- w(X) at U [3], not p(X) [1 #].", "y(X) :- q(X), not w(X).", "w(X) at U :- p(X) at U [2], r(X) [1 #].",
         "x(X) :- w(X) always [1], not r(X) [3 #].", "q(X) :- r(X) [1 #], not p(X) [3]."]


@settings(max_examples=300, deadline=None, suppress_health_check=list(HealthCheck))
@given(rules=st.lists(st.sampled_from(MIXED + RULES[:5]), min_size=1, max_size=5, unique=True),
       events=st.lists(EVENT, min_size=1, max_size=12), t=st.integers(0, 8),
       pred=st.sampled_from(["q", "w", "x", "y"]), arg=st.sampled_from(["a", "b"]),
       answer=st.none() | st.integers(0, 99))
def test_why_with_at_heads_and_tuple_windows_under_negation_is_sound(tmp_path_factory, capsys, rules, events, t, pred,
                                                                      arg, answer):
    """``--why`` exactly for ``run``'s answers; the events it cites alone (the stream's first
    time kept, time advanced to the latest evaluation the tree names) derive the atom; every
    rule node's rule has the head it explains.  (``answer``: the query is one of run's
    answers, else any atom.)"""
    tmp = tmp_path_factory.mktemp("mixed")
    stream_events = [{"t": 0}, *events, {"t": 8}]
    prog, stream = _files(tmp, "\n".join(rules) + "\n", stream_events)
    capsys.readouterr()
    assert main(["run", prog, "--input", stream]) == 0
    answers = sorted(meaning([json.loads(x) for x in capsys.readouterr().out.splitlines()], (0, 8)))
    if answer is not None and answers:
        pred, (arg,), t = answers[answer % len(answers)]
    holds = (pred, (arg,), t) in answers
    code, got, err = explain(capsys, prog, stream, "why", f"{pred}({arg})@{t}")
    assert code == (0 if holds else 1), err
    if not holds:
        return
    Explanation.model_validate(got)
    from hypothesis import event
    event(f"holds {pred} neg={any(n.get('negated') for n in walk(got))} tuple={'#' in json.dumps(got)}")
    points = [t] + [int(n["text"].split("(derived by the evaluation of ")[1].split(")")[0]) for n in walk(got)
                    if "(derived by the evaluation of " in n["text"]]
    for node in walk(got):
        if node["kind"] == "rule":
            assert node["text"].startswith(node["rule"]["text"].split("(")[0] + "("), node
    texts = Path(stream).read_text().splitlines()
    cited = sorted({int(n["source"].split(":")[-2]) for n in walk(got) if n["kind"] == "event"})
    alone = [{"t": 0}, *(json.loads(texts[n - 1]) for n in cited), {"t": max(points)}]
    (tmp / "alone.jsonl").write_text("".join(json.dumps(e) + "\n" for e in alone))
    capsys.readouterr()
    assert main(["run", prog, "--input", str(tmp / "alone.jsonl")]) == 0
    lines = [json.loads(x) for x in capsys.readouterr().out.splitlines()]
    assert (pred, (arg,), t) in meaning(lines, (0, max(points))), (cited, got)


def test_a_negated_anonymous_literal_over_a_derived_predicate(tmp_path, capsys):
    """``not b(_)``: no b at all.  Its why-not reads b's rule with X open ("some value"): p(x)
    and p(y) at 0 are each blocked by r(x), r(y), which it cites; with them alone a(1) holds at 0.
    (It crashed with KeyError '_'.)  ``not p(_)`` over an input predicate: no p at 1."""
    program = "b(X) :- p(X), not r(X).\na(1) :- not b(_).\nc :- not p(_).\n"
    events = [{"t": 0, "pred": "p", "args": ["x"]}, {"t": 0, "pred": "r", "args": ["x"]},
              {"t": 0, "pred": "p", "args": ["y"]}, {"t": 0, "pred": "r", "args": ["y"]}, {"t": 1}]
    prog, stream = _files(tmp_path, program, events)
    code, got, err = explain(capsys, prog, stream, "why", "a(1)@0")
    assert code == 0, err
    Explanation.model_validate(got)
    (negated,) = got["premises"]
    assert negated["text"] == "not b(_): not in the answer at 0"
    (entry,) = negated["why_not"]
    assert entry["literal"] == "not r(X)" and entry["bindings"] == {}
    assert sorted(p["source"] for p in entry["premises"]) == [f"{stream}:2:1", f"{stream}:4:1"]
    assert _sound(tmp_path, capsys, prog, stream, got, ("a", (1,), 0)) == [2, 4]
    code, got, err = explain(capsys, prog, stream, "why", "c@1")
    assert code == 0, err
    assert got["premises"][0]["text"] == "not p(_): no such fact at 1"


def test_plain_heads_and_dated_facts_of_an_at_head_predicate(tmp_path, capsys):
    """w has an @-head rule, a plain-head rule (w(z) at the evaluated point) and a dated fact
    (w(k) at 1, off the timeline at 0: no answer set there).  By hand: the evaluation of 3
    derives w(z)@3 from r(b)@3, so v(z) holds at 3; w(k)@1 holds in every evaluation from 1
    on, so v(k) [3] holds at 1..4.  (Both were "does not hold" or a crash before.)"""
    program = "w(X) at U :- p(X) at U [2].\nw(z) :- r(X).\nw(k) at 1.\nv(X) :- w(X) [3].\n"
    events = [{"t": 0}, {"t": 1, "pred": "p", "args": ["a"]}, {"t": 3, "pred": "r", "args": ["b"]}, {"t": 4}]
    prog, stream = _files(tmp_path, program, events)
    code, got, err = explain(capsys, prog, stream, "why", "v(z)@3")
    assert code == 0, err
    (window,) = got["premises"]
    (w,) = window["premises"]
    assert (w["text"], w["bindings"]) == ("w(z) at 3 (derived by the evaluation of 3)", {"X": "b"})
    assert _sound(tmp_path, capsys, prog, stream, got, ("v", ("z",), 3)) == [3]
    code, got, err = explain(capsys, prog, stream, "why", "v(k)@4")
    assert code == 0, err
    (fact,) = got["premises"][0]["premises"]
    assert (fact["kind"], fact["text"], fact["time"]) == ("fact", "w(k) at 1: a program fact", 1)
    assert _sound(tmp_path, capsys, prog, stream, got, ("v", ("k",), 4)) == []
    code, got, err = explain(capsys, prog, stream, "why-not", "w(z)@2")
    assert code == 0, err
    assert [e["literal"] for e in got["why_not"]] == ["p(X) at U [2]", "r(X)"]


def test_an_assignment_written_value_first_binds_its_variable(tmp_path, capsys):
    """``X \\ 2 = Y`` assigns Y as ``Y = X \\ 2`` does (the head reads Y): r(3,3) at 2 gives a(1)."""
    prog, stream = _files(tmp_path, "a(Y) :- X \\ 2 = Y, r(X,X).\n",
                          [{"t": 2}, {"t": 2, "pred": "r", "args": [3, 3]}, {"t": 3}])
    code, got, err = explain(capsys, prog, stream, "why", "a(1)@2")
    assert code == 0, err
    assert got["kind"] == "rule" and got["bindings"] == {"X": 3, "Y": 1}
    assert got["premises"][0]["text"] == "X \\ 2 = Y holds (X=3, Y=1)"


def test_a_diamond_over_its_own_predicate_reads_the_earlier_atom(tmp_path, capsys):
    """a(X) at X :- p(X) and a(X) :- a(X) [2]: p(3) at 5 dates a(3)@3, which the window [3,5]
    of the evaluation of 5 sees, so a(3)@5 holds.  The diamond's witness is a(3)@3, not a(3)@5
    itself (which made it "no derivation outside a cycle")."""
    prog, stream = _files(tmp_path, "a(X) at X :- p(X).\na(X) :- a(X) [2].\n",
                          [{"t": 0}, {"t": 5, "pred": "p", "args": [3]}, {"t": 7}])
    code, got, err = explain(capsys, prog, stream, "why", "a(3)@5")
    assert code == 0, err
    assert got["kind"] == "rule" and got["rule"]["line"] == 2
    (read,) = got["premises"][0]["premises"]
    assert (read["text"], read["rule"]["line"]) == ("a(3) at 3 (derived by the evaluation of 5)", 1)
    assert _sound(tmp_path, capsys, prog, stream, got, ("a", (3,), 5)) == [2]


def test_a_positive_anonymous_literal_reads_one_atom_of_the_answer(tmp_path, capsys):
    """``q(_)`` and ``b(_) at T [0]`` read some atom of the answer (it crashed with KeyError '_'):
    r holds at 1 through q(1), which p(5) at 1 gives; b(3)@3 through the fact b(1), which holds
    at every point (b(_) at 3 is b(1) at 3, not b(3) at 3 itself)."""
    prog, stream = _files(tmp_path, "q(1) :- p(_).\nr :- q(_).\nb(1).\nb(T) at T :- b(X), b(_) at T [0].\n",
                          [{"t": 1, "pred": "p", "args": [5]}, {"t": 3}])
    code, got, err = explain(capsys, prog, stream, "why", "r@1")
    assert code == 0, err
    (q,) = got["premises"]
    assert (q["text"], q["rule"]["line"]) == ("q(1) at 1", 1)
    assert [n["source"] for n in walk(got) if n["kind"] == "event"] == [f"{stream}:1:1"]
    code, got, err = explain(capsys, prog, stream, "why", "b(3)@3")
    assert code == 0, err
    assert got["bindings"] == {"T": 3, "X": 1}
    assert [n["text"] for n in walk(got) if n["kind"] == "fact"] == ["b(1) at 3: a program fact"] * 2


def test_an_anonymous_literal_over_a_program_fact_cites_the_fact(tmp_path, capsys):
    """``a(_)`` where a is given by the program fact a(1) only: it holds through that fact (it
    crashed with KeyError '_' looking the fact up); c at 1 from the evaluation of 4 (p(1) the
    last fact there, X = 1)."""
    prog, stream = _files(tmp_path, "a(1).\nc at X :- Y = X \\ 2, p(X) [1 #], a(_).\n",
                          [{"t": 1}, {"t": 4, "pred": "p", "args": [1]}, {"t": 7}])
    code, got, err = explain(capsys, prog, stream, "why", "c@1")
    assert code == 0, err
    assert got["bindings"] == {"X": 1, "Y": 1}
    (fact,) = [n for n in walk(got) if n["kind"] == "fact"]
    assert (fact["text"], fact["rule"]["line"]) == ("a(_): a program fact", 1)


def test_a_negated_anonymous_tuple_window_fails_where_any_fact_of_it_is_last(tmp_path, capsys):
    """``not p(_) [1 #]`` fails at 3, where p(1) is the last fact, and holds at 4 (q(1) last):
    c at 2 is derived by the evaluation of 4, not 3 (the explainer read the ``_`` as a variable
    left open, "some value", and took the evaluation of 3); c at 1 is never derived (run)."""
    prog, stream = _files(tmp_path, "c at X :- not p(_) [1 #], p(X).\n",
                          [{"t": 1}, {"t": 3, "pred": "p", "args": [2]}, {"t": 3, "pred": "p", "args": [1]},
                           {"t": 4, "pred": "p", "args": [2]}, {"t": 4, "pred": "q", "args": [1]}, {"t": 5}])
    code, got, err = explain(capsys, prog, stream, "why", "c@2")
    assert code == 0, err
    assert got["text"] == "c at 2 (derived by the evaluation of 4)"
    assert sorted(n["source"] for n in walk(got) if n["kind"] == "event") == [f"{stream}:4:1", f"{stream}:5:1"]
    assert explain(capsys, prog, stream, "why", "c@1")[0] == 1


def test_a_box_over_a_derived_predicate_with_a_program_fact(tmp_path, capsys):
    """a(1) is a program fact and a rule derives a(2): a fact holds at every point, so
    ``a(1) always [1]`` holds at 3 over [2,3] (run agrees); its why cites the fact at 2 and 3
    (it was "no derivation outside a cycle")."""
    prog, stream = _files(tmp_path, "a(1).\nb(X) :- a(X) always [1].\na(2) :- p(_).\n",
                          [{"t": 2}, {"t": 3, "pred": "p", "args": [1]}, {"t": 5}])
    code, got, err = explain(capsys, prog, stream, "why", "b(1)@3")
    assert code == 0, err
    (box,) = got["premises"]
    assert [(n["kind"], n["text"]) for n in box["premises"]] == [
        ("fact", "a(1) at 2: a program fact"), ("fact", "a(1) at 3: a program fact")]
    assert _sound(tmp_path, capsys, prog, stream, got, ("b", (1,), 3)) == []
    code, got, err = explain(capsys, prog, stream, "why", "a(2)@3")
    assert code == 0 and got["rule"]["line"] == 3, err


def test_why_cites_the_events_that_keep_the_evaluation_consistent(tmp_path, capsys):
    """``a(1)@3`` needs only ``p(1)@3`` as a premise, but on that event alone ``c``'s tuple
    window [1 #] dates ``c`` at 1, outside the timeline [2,3]: no answer set at 3 (LARS.md),
    so a(1) is not derived.  ``p(2)@3`` (the last fact, dating ``c`` at 2) keeps it consistent:
    the explanation cites it under a background node, and the cited events re-derive a(1)@3."""
    events = [{"t": 2}, {"t": 3, "pred": "p", "args": [1]}, {"t": 3, "pred": "p", "args": [2]}]
    prog, stream = _files(tmp_path, "c at X :- p(X) [1 #].\na(X) :- p(X) [2 #].\n", events)
    code, got, err = explain(capsys, prog, stream, "why", "a(1)@3")
    assert code == 0, err
    Explanation.model_validate(got)
    literal, background = got["premises"]
    assert [n["source"] for n in walk(literal) if n["kind"] == "event"] == [f"{stream}:2:1"]
    assert background["kind"] == "background" and background["text"].startswith("the evaluation of 3 has an answer set")
    assert background["premises"] == [{"kind": "event", "text": "input p(2) at 3", "atom": "p(2)", "time": 3,
                                       "source": f"{stream}:3:1"}]
    for cited, derived in (([events[1]], False), ([events[1], events[2]], True)):  # by run: alone, and with it
        alone = tmp_path / "alone.jsonl"
        alone.write_text("".join(json.dumps(e) + "\n" for e in [{"t": 2}, *cited, {"t": 3}]))
        capsys.readouterr()
        assert main(["run", prog, "--input", str(alone)]) == 0
        out, err = capsys.readouterr()
        lines = [json.loads(x) for x in out.splitlines()]
        assert all("pred" in x for x in lines)  # (the point is a warning, not a line)
        assert (("a", (1,), 3) in meaning(lines, (2, 3))) is derived
        assert ("warning: no answer set at t=3 (c derived at time 1, outside the timeline [2,3])" in err) is not derived


def test_an_order_comparison_of_a_number_and_a_constant_fails_as_in_run(tmp_path, capsys):
    """``1 < a`` is false, as ``run`` reads it in every mode (order comparisons hold on integers
    only: clingo's translation subtracts): with p(1) at 1, a(1) does not hold, and its why-not
    names the comparison, not an earlier literal; ``1 < 2`` holds, so b(1) does."""
    prog, stream = _files(tmp_path, "a(X) :- p(X), X < a.\nb(X) :- p(X), X < 2.\n",
                          [{"t": 0}, {"t": 1, "pred": "p", "args": [1]}, {"t": 2}])
    code, got, err = explain(capsys, prog, stream, "why-not", "a(1)@1")
    assert code == 0, err
    (rule,) = got["why_not"]
    assert rule["text"] == "fails at body element 2: X < a is false (X=1)"
    assert explain(capsys, prog, stream, "why", "b(1)@1")[0] == 0
    assert main(["run", prog, "--input", stream]) == 0
    assert meaning([json.loads(x) for x in capsys.readouterr().out.splitlines()], (0, 2)) == {("b", (1,), 1)}
