"""``chronolog explain --why / --why-not`` for the Event Calculus: the initiatedAt rule at the
initiation point with its conditions unfolded down to input events, "not terminated", the
interval operations of statically determined fluents with their operands; why not: never
initiated, or terminated at t1 by an event, and per rule the first condition that fails.

Checked against hand-derived trees and, for random event descriptions (inertia, several
values, derived events, start/end, negation, the four interval operations) and streams,
against ``chronolog run``'s answers: the verdict, every fluent node's interval and every
why-not node, each failing condition (read in the input and the answers), and soundness
(the cited input events alone derive the atom at T)."""

from __future__ import annotations

import dataclasses
import json
import random
import re
from pathlib import Path

import pytest
from explaining import explain, files, sliced_and_whole, walk
from hypothesis import HealthCheck, event, example, given, settings
from hypothesis import strategies as st
from hypothesis.control import currently_in_test_context
from meaning import meaning
from rtec_expected import DATA, TICK, load_expected, rtec_meaning

from chronolog.cli.main import main
from chronolog.contract.models import Explanation
from chronolog.core.events import Event
from chronolog.dialects.load import load_program
from chronolog.dialects.registry import RunOptions, lookup
from chronolog.dialects.rtec import explain as rtec_explain
from chronolog.dialects.rtec.blocking import Blocking, _first_goal, _loose
from chronolog.dialects.rtec.explain import Explainer
from chronolog.dialects.rtec.parser import parse_rtec
from chronolog.dialects.rtec.relevance import demands
from chronolog.runtime.explain import explain as explain_query
from chronolog.runtime.explain import parse_query, with_lines

DOORS = ("initiatedAt(open(D)=true, T) :- happensAt(opened(D), T).\n"
         "terminatedAt(open(D)=true, T) :- happensAt(closed(D), T).\n"
         "door(d1).\ndoor(d2).\ngrounding(open(D)=true) :- door(D).\n")
EVENTS = [{"t": 3, "pred": "opened", "args": ["d1"]}, {"t": 8, "pred": "closed", "args": ["d1"]}, {"t": 12}]


def _files(tmp: Path, events: list[dict]) -> tuple[str, str]:
    return files(tmp, "doors.prolog", DOORS, events)


def test_why_and_why_not_by_hand(tmp_path, capsys):
    prog, stream = _files(tmp_path, EVENTS)
    code, got, err = explain(capsys, prog, stream, "why", "open(d1)@5")
    assert code == 0, err
    root = got
    assert root["text"] == "open(d1) on [4,9): initiated at 3, not terminated in [3,5)"
    assert root["rule"] == {"file": prog, "line": 1, "text": "initiatedAt(open(D)=true,T) :- happensAt(opened(D),T)"}
    assert root["bindings"] == {"D": "d1", "T": 3} and root["interval"] == "[4,9)"
    assert [(n["text"], n["source"]) for n in walk(root) if n["kind"] == "event"] == [
        ("input opened(d1) at 3", f"{stream}:1:1")]
    code, got, _ = explain(capsys, prog, stream, "why-not", "open(d1)@10")
    assert got["text"] == f"open(d1) does not hold at 10: initiated at 3, terminated at 8 by closed(d1) ({stream}:2:1)"
    assert [n["source"] for n in walk(got) if n["kind"] == "event"] == [f"{stream}:2:1"]
    code, got, _ = explain(capsys, prog, stream, "why-not", "open(d2)@10")
    assert got["text"] == "open(d2) never holds: never initiated"
    code, got, _ = explain(capsys, prog, stream, "why-not", "open(d1)@2")
    assert got["text"] == "open(d1) does not hold at 2: first initiated at 3, it holds from 4"
    code, _, err = explain(capsys, prog, stream, "why", "open(d1)@10")
    assert code == 1 and "ask --why-not" in err


EVENT = st.builds(lambda t, pred, arg: {"t": t, "pred": pred, "args": [arg]},
                  st.integers(0, 20), st.sampled_from(["opened", "closed"]), st.sampled_from(["d1", "d2"]))


@settings(max_examples=150, deadline=None, suppress_health_check=list(HealthCheck))
@given(events=st.lists(EVENT, min_size=1, max_size=10), t=st.integers(0, 22), door=st.sampled_from(["d1", "d2"]))
def test_the_verdict_is_runs_and_the_cited_events_are_the_inputs_at_the_ends(tmp_path_factory, capsys, events, t,
                                                                            door):
    tmp = tmp_path_factory.mktemp("ec")
    prog, stream = _files(tmp, [*events, {"t": 22}])
    capsys.readouterr()
    assert main(["run", prog, "--input", stream]) == 0
    holds = ("open", (door,), t) in meaning([json.loads(x) for x in capsys.readouterr().out.splitlines()], (0, 22))
    code, got, err = explain(capsys, prog, stream, "why", f"open({door})@{t}")
    assert code == (0 if holds else 1), err
    code_not, got_not, err_not = explain(capsys, prog, stream, "why-not", f"open({door})@{t}")
    assert code_not == (1 if holds else 0), err_not
    tree = got if holds else got_not
    Explanation.model_validate(got if holds else got_not)
    texts = Path(stream).read_text().splitlines()
    for node in walk(tree):
        if node["kind"] == "event":  # an input line with that event at that time, of this door
            rec = json.loads(texts[int(node["source"].split(":")[-2]) - 1])
            assert node["text"] == f"input {rec['pred']}({rec['args'][0]}) at {rec['t']}" and rec["args"] == [door]
    if holds:  # initiated by an `opened` of this door (at least one), the time before the interval starts
        cited = [n["text"].split(" at ")[0] for n in walk(tree) if n["kind"] == "event"]
        assert cited and set(cited) == {f"input opened({door})"}


POOL = {
    "f": "initiatedAt(f(X)=true, T) :- happensAt(a(X), T).\nterminatedAt(f(X)=true, T) :- happensAt(b(X), T).\n",
    "g": "initiatedAt(g(X)=on, T) :- happensAt(a(X), T), holdsAt(f(X)=true, T).\n"
         "initiatedAt(g(X)=off, T) :- happensAt(c(X), T), \\+ holdsAt(f(X)=true, T).\n",
    "h": "initiatedAt(h(X)=true, T) :- happensAt(start(f(X)=true), T).\n"
         "terminatedAt(h(X)=true, T) :- happensAt(c(X), T), \\+ happensAt(a(X), T).\n",
    "m": "happensAt(ab(X), T) :- happensAt(a(X), T), holdsAt(h(X)=true, T).\n"
         "initiatedAt(m(X)=true, T) :- happensAt(ab(X), T).\n"
         "terminatedAt(m(X)=true, T) :- happensAt(end(g(X)=on), T).\n",
    "u": "holdsFor(u(X)=true, I) :- holdsFor(f(X)=true, I1), holdsFor(g(X)=on, I2), union_all([I1,I2], I).\n",
    "v": "holdsFor(v(X)=true, I) :- holdsFor(f(X)=true, I1), holdsFor(h(X)=true, I2), intersect_all([I1,I2], I).\n",
    "w": "holdsFor(w(X)=true, I) :- holdsFor(h(X)=true, I1), holdsFor(g(X)=off, I2), "
         "relative_complement_all(I1, [I2], I).\n",
    "n": "holdsFor(n(X)=true, I) :- holdsFor(f(X)=true, I1), complement_all([I1], I).\n",
    "init": "initially(f(x2)=true).\n",
    "fi": "fi(g(X)=on, g(X)=off, 3).\n",  # a deadline: g=on turns off 3 after its initiation
}
# ab, a derived event, is grounded too: RTEC reads nothing of an event without grounding/1
GROUNDING = "id(x1).\nid(x2).\ngrounding(ab(X)) :- id(X).\n" + "".join(f"grounding({f}(X)={v}) :- id(X).\n" for f, v in [
    ("f", "true"), ("g", "on"), ("g", "off"), ("h", "true"), ("m", "true"), ("u", "true"), ("v", "true"),
    ("w", "true"), ("n", "true")])
ATOMS = [("f", ()), ("g", ("on",)), ("g", ("off",)), ("h", ()), ("m", ()), ("u", ()), ("v", ()), ("w", ()), ("n", ())]
END = 14


def _program(groups: list[str]) -> str:
    return "".join(POOL[g] for g in ["f", *sorted(set(groups) - {"f"})]) + GROUNDING


def test_conditions_and_interval_operations_by_hand(tmp_path, capsys):
    events = [{"t": 1, "pred": "a", "args": ["x1"]}, {"t": 3, "pred": "a", "args": ["x1"]},
              {"t": 4, "pred": "c", "args": ["x1"]}, {"t": 6, "pred": "b", "args": ["x1"]},
              {"t": 7, "pred": "c", "args": ["x1"]}, {"t": 12}]
    prog, stream = files(tmp_path, "ec.prolog", _program([g for g in POOL if g != "fi"]), events)
    # g(x1)=off initiated at 7 by c(x1) (line 5) while f(x1) does not hold: f was terminated at 6 by b(x1)
    code, got, err = explain(capsys, prog, stream, "why", "g(x1,off)@8")
    assert code == 0, err
    root = got
    assert root["text"] == "g(x1,off) on [8,inf): initiated at 7, not terminated in [7,8)"
    assert root["rule"]["line"] == 4 and root["bindings"] == {"X": "x1", "T": 7}
    happens, negated, checked = root["premises"]
    assert [n["source"] for n in walk(happens) if n["kind"] == "event"] == [f"{stream}:5:1"]
    assert negated["negated"] and negated["premises"][0]["text"] == \
        f"f(x1) does not hold at 7: initiated at 1, terminated at 6 by b(x1) ({stream}:4:1)"
    assert checked["window"] == "[7,8)" and [p["rule"]["line"] for p in checked["premises"]] == [3]
    # m(x1) from the derived event ab(x1) at 3: a(x1) at 3 while h(x1) holds, h from the start of f at 1
    code, got, _ = explain(capsys, prog, stream, "why", "m(x1)@5")
    assert got["text"] == "m(x1) on [4,8): initiated at 3, not terminated in [3,5)"
    assert {n["source"] for n in walk(got) if n["kind"] == "event"} == {f"{stream}:1:1", f"{stream}:2:1"}
    # w(x1) = h(x1) minus g(x1)=off: h holds at 3, g=off does not (negated, with its why-not)
    code, got, _ = explain(capsys, prog, stream, "why", "w(x1)@3")
    op = got["premises"][0]
    assert op["kind"] == "operation" and op["text"] == "relative_complement_all(I1,[I2],I) = [[2,5)]: contains 3"
    base, minus = op["premises"]
    assert base["text"].startswith("h(x1) on [2,5): initiated at 1") and minus["negated"]
    assert minus["text"] == "g(x1,off) does not hold at 3: first initiated at 7, it holds from 8"
    # why not: w(x1) at 8 — h(x1) was terminated at 4 by c(x1); the rule's start(f) fails at 7
    code, got, _ = explain(capsys, prog, stream, "why-not", "w(x1)@8")
    assert code == 0 and got["why_not"][0]["literal"] == "relative_complement_all(I1,[I2],I)"
    h = got["why_not"][0]["premises"][0]["premises"][0]
    assert h["text"] == f"h(x1) does not hold at 8: initiated at 1, terminated at 4 by c(x1) ({stream}:3:1)"
    assert h["why_not"][-1]["reason"] == "happensAt(start(f(x1)=true),7) does not hold"


EC_EVENT = st.builds(lambda t, pred, arg, retract: {"t": t, "pred": pred, "args": [arg],
                                                     **({"op": "retract"} if retract else {})},
                     st.integers(0, 12), st.sampled_from(["a", "b", "c"]), st.sampled_from(["x1", "x2"]),
                     st.sampled_from([False] * 9 + [True]))


def _entries(tree: dict):  # noqa: ANN202
    """Every why-not entry in a tree (the rule, its failing literal and the reason)."""
    for node in walk(tree):
        stack = list(node.get("why_not", []))
        while stack:
            entry = stack.pop()
            yield entry
            stack += entry.get("why_not", [])


def _reference(events: list[dict], lines: list[dict]) -> tuple[set, set]:
    """The answers' points and the input events (retractions applied), as an independent oracle."""
    held = meaning(lines, (0, END))
    seen: list[tuple] = []
    for e in events:
        if "pred" in e:
            key = (e["pred"], e["args"][0], e["t"])
            if e.get("op") == "retract":
                if key in seen:
                    seen.remove(key)
            else:
                seen.append(key)
    return held, set(seen)


def _atom(text: str) -> tuple[str, tuple]:
    m = re.fullmatch(r"(\w+)(?:\((.*)\))?", text)
    assert m, text
    return m.group(1), tuple(m.group(2).split(",")) if m.group(2) else ()


def _fluent(text: str) -> tuple[str, tuple]:
    """``g(x1)=on`` as an answer atom ``("g", ("x1", "on"))``."""
    f, v = text.split("=")
    name, args = _atom(f)
    return name, args + (() if v == "true" else (v,))


def _goal_holds(goal: str, held: set, inputs: set) -> bool:
    """Whether a ground body goal of the POOL holds, read in the answers and the input alone."""
    if goal.startswith("\\+(") and goal.endswith(")"):
        return not _goal_holds(goal[3:-1], held, inputs)
    m = re.fullmatch(r"happensAt\((start|end)\((.*)\),(\d+)\)", goal)
    if m:
        (name, args), t = _fluent(m.group(2)), int(m.group(3))
        now, then = (name, args, t) in held, (name, args, t + 1) in held
        return (not now and then) if m.group(1) == "start" else (now and not then)
    m = re.fullmatch(r"happensAt\((\w+)\((\w+)\),(\d+)\)", goal)
    if m:
        e, x, t = m.group(1), m.group(2), int(m.group(3))
        if e == "ab":  # the derived event of POOL["m"]
            return ("a", x, t) in inputs and ("h", (x,), t) in held
        return (e, x, t) in inputs
    m = re.fullmatch(r"holdsAt\((.*),(\d+)\)", goal)
    assert m, f"a goal the oracle cannot read: {goal}"
    name, args = _fluent(m.group(1))
    return (name, args, int(m.group(2))) in held


def test_an_end_a_deadline_would_move_is_blocked_up_to_the_end_of_the_window(tmp_path, capsys):
    """m(x2) holds on [9,13) until end(g(x2)=on) at 12 (g=on from a(x2) at 9, off 3 later).
    Without b(x2) at 0, f(x2) would hold at 8 (initially), g=on start from a(x2) at 8 and its
    deadline end it at 11, inside m's window [8,12), where nothing happens with the input: so
    the explanation must keep end(g=on) from happening up to 11 and cite b(x2) at 0 (found by
    the random test below; its soundness check runs here)."""
    events = [{"t": 0}, {"t": 0, "pred": "a", "args": ["x1"]}, {"t": 0, "pred": "b", "args": ["x2"]},
              {"t": 8, "pred": "a", "args": ["x2"]}, {"t": 9, "pred": "a", "args": ["x2"]}, {"t": END}]
    groups = sorted(POOL)
    prog, stream = files(tmp_path, "ec.prolog", _program(groups), events)
    capsys.readouterr()
    assert main(["run", prog, "--input", stream]) == 0
    lines = [json.loads(line) for line in capsys.readouterr().out.splitlines()]
    held, inputs = _reference(events, lines)
    assert ("m", ("x2",), 12) in held and ("m", ("x2",), 13) not in held
    code, got, err = explain(capsys, prog, stream, "why", "m(x2)@12")
    assert code == 0, err
    assert f"{stream}:3:1" in {n["source"] for n in walk(got) if n["kind"] == "event"}  # b(x2) at 0
    _check(tmp_path, capsys, prog, stream, groups, held, inputs, "m", ("x2",), 12)


@settings(max_examples=100, deadline=None, suppress_health_check=list(HealthCheck))
@given(dropped=st.sets(st.sampled_from(sorted(POOL)), max_size=2),
       events=st.lists(EC_EVENT, min_size=3, max_size=14), data=st.data())
def test_random_event_descriptions_against_run(tmp_path_factory, capsys, dropped, events, data):
    """Every fluent of the description asked at one T, mostly just after an event of the
    queried argument (where an initiation could have been)."""
    groups = sorted(set(POOL) - dropped)
    x = data.draw(st.sampled_from(sorted({e["args"][0] for e in events})))
    t = data.draw(st.sampled_from([e["t"] + 1 for e in events if e["args"] == [x]]) | st.integers(0, END))
    tmp = tmp_path_factory.mktemp("ec")
    stream_events = [{"t": 0}, *events, {"t": END}]
    prog, stream = files(tmp, "ec.prolog", _program(groups), stream_events)
    capsys.readouterr()
    assert main(["run", prog, "--input", stream]) == 0
    lines = [json.loads(line) for line in capsys.readouterr().out.splitlines()]
    held, inputs = _reference(stream_events, lines)
    for atom in ATOMS:
        _check(tmp, capsys, prog, stream, groups, held, inputs, atom[0], (x, *atom[1]), t)


def _note(text: str) -> None:
    """Hypothesis's ``event``, where a Hypothesis test runs (``_check`` is also called by hand)."""
    if currently_in_test_context():
        event(text)


def _check(tmp: Path, capsys, prog: str, stream: str, groups: list[str], held: set, inputs: set,  # noqa: ANN001
           name: str, args: tuple, t: int) -> None:
    query = f"{name}({','.join(args)})@{t}"
    holds = (name, args, t) in held
    _note(f"{name} holds" if holds else f"{name} does not hold")
    code, got, err = explain(capsys, prog, stream, "why" if holds else "why-not", query)
    assert code == 0, err
    Explanation.model_validate(got)
    tree = got
    texts = Path(stream).read_text().splitlines()
    for node in walk(tree):
        if node["kind"] == "event":  # an input line with that event at that time
            rec = json.loads(texts[int(node["source"].split(":")[-2]) - 1])
            assert node["text"] == f"input {rec['pred']}({rec['args'][0]}) at {rec['t']}" and "op" not in rec
            assert (rec["pred"], rec["args"][0], rec["t"]) in inputs
        if node.get("interval") and node["kind"] in ("rule", "initially") and node.get("atom"):
            a, b = node["interval"][1:-1].split(",")  # a fluent node: it holds on its interval (in the span)
            pred, fargs = _atom(node["atom"])
            _note("a fluent node's interval checked")
            for p in range(int(a), min(END, int(b) - 1 if b != "inf" else END) + 1):
                assert (pred, fargs, p) in held, (node["text"], p)
        if node["kind"] == "why-not" and node.get("atom") and node.get("time") is not None:
            pred, fargs = _atom(node["atom"])
            assert (pred, fargs, node["time"]) not in held, node["text"]
    _check_missing(tmp, capsys, prog, [json.loads(line) for line in Path(stream).read_text().splitlines()], tree,
                   (name, args, t))
    if any("missing" in entry for entry in _entries(tree)):
        _note("a missing event named in a why" if holds else "a missing event named")
    if not holds and name in ("u", "v", "w", "n") and any("missing" in entry for entry in tree.get("why_not", [])):
        _note("a statically determined fluent's own entry names one")
    for entry in _entries(tree):
        if entry["reason"].endswith(" does not hold"):
            goal = entry["reason"].removesuffix(" does not hold")  # the first failing condition fails
            assert not _goal_holds(goal, held, inputs), (goal, entry)
            _note(f"failing condition {entry['text'].split(':')[0].split(' at ')[0]}")
    if not holds:
        rules = [n for n in tree.get("why_not", []) if "initiatedAt(" + name in n["rule"]["text"].split(" :- ")[0]]
        if name not in ("u", "v", "w", "n") and t > 0:  # every initiatedAt rule of the value is named
            heads = [line for line in _program(groups).splitlines()
                     if line.startswith(f"initiatedAt({name}(X)={args[1] if len(args) > 1 else 'true'}")]
            assert len(rules) == len(heads), tree
        return
    # sound: the cited input events alone (the first time point and a time advance to T kept) derive it
    cited = sorted({int(n["source"].split(":")[-2]) for n in walk(tree) if n["kind"] == "event"})
    alone = [{"t": 0}, *(json.loads(texts[n - 1]) for n in cited), {"t": t}]
    (tmp / "alone.jsonl").write_text("".join(json.dumps(e) + "\n" for e in alone))
    capsys.readouterr()
    assert main(["run", prog, "--input", str(tmp / "alone.jsonl")]) == 0
    again = [json.loads(line) for line in capsys.readouterr().out.splitlines()]
    assert (name, args, t) in meaning(again, (0, END)), (cited, tree)
    _note("sound")


def test_a_deadline_met_by_an_initiation_of_another_value_is_cited(tmp_path, capsys):
    """fi(g=on, g=off, 3): g=on is initiated at 3 and again at 6, where the deadline's g=off
    meets it: RTEC starts neither, so w(x2) (h minus g=off) still holds at 7.  The explanation
    must cite a(x2) at 6: without it, the cited events alone end w(x2) at 7 (a case Hypothesis
    found, which failed now and then)."""
    groups = sorted(POOL)
    events = [{"t": 0}, {"t": 0, "pred": "a", "args": ["x1"]}, {"t": 3, "pred": "a", "args": ["x2"]},
              {"t": 3, "pred": "c", "args": ["x2"]}, {"t": 6, "pred": "a", "args": ["x2"]}, {"t": END}]
    prog, stream = files(tmp_path, "ec.prolog", _program(groups), events)
    capsys.readouterr()
    assert main(["run", prog, "--input", stream]) == 0
    held, inputs = _reference(events, [json.loads(line) for line in capsys.readouterr().out.splitlines()])
    assert ("w", ("x2",), 7) in held and ("g", ("x2", "off"), 7) not in held
    _check(tmp_path, capsys, prog, stream, groups, held, inputs, "w", ("x2",), 7)  # sound, among the rest
    code, got, err = explain(capsys, prog, stream, "why", "w(x2)@7")
    cancelled = [n for n in walk(got) if n["text"].startswith("g(x2,on) initiated at 6, as the deadline")]
    assert len(cancelled) == 1 and f"{stream}:5:1" in json.dumps(cancelled[0])


SHARED = Path(__file__).resolve().parents[3].parent / "shared" / "data" / "rtec"
APP_FILES = {
    "caviar": ["rules.prolog", "pre-processing-portable.prolog", "settings.prolog"],
    "ctm": ["rules.prolog", "vehicles.prolog", "settings.prolog"],
    "voting": ["rules.prolog", "voting_static_generator.prolog", "settings.prolog"],
}


def _runs_hold(runs: set, pred: str, args: tuple, t: int, tick: int) -> bool:
    return any(r[0] == pred and tuple(r[1]) == args and r[2] <= t and (r[3] is None or t <= r[3])
               for r in runs)


@pytest.mark.skipif(not SHARED.is_dir(), reason="the shared RTEC data is not beside the repository")
@pytest.mark.parametrize("app", ["caviar", "ctm", "voting"])
def test_the_apps_answers_are_explained_soundly_against_rtecs_own(app, tmp_path, capsys):
    """Answers of RTEC's example applications (its own answers on the 1% cut, tests/data/rtec):
    --why of a random point of a random answer exits 0, every fluent node the tree names holds
    on its interval in RTEC's answer, and the input events it cites, run alone, derive it."""
    want = load_expected(app, "cut1")
    tick = TICK[app]
    progs = [str(SHARED / app / f) for f in APP_FILES[app]]
    stream = DATA / app / "stream-cut1.jsonl"
    texts = stream.read_text().splitlines()
    rng = random.Random(38)
    checked = 0
    for pred, args, first, last in rng.sample(sorted(want, key=repr), 6):
        t = rng.randrange(first, (last if last is not None else first + 10 * tick) + 1, tick)
        shown = ",".join(json.dumps(a) if "(" in str(a) else str(a) for a in args)
        capsys.readouterr()
        code = main(["explain", *progs, "--input", str(stream), "--why", f"{pred}({shown})@{t}", "--as", "json"])
        printed = capsys.readouterr()
        assert code == 0, printed.err
        tree = json.loads(printed.out)
        for node in walk(tree):
            if node["kind"] in ("rule", "initially") and node.get("interval") and "(" in node["atom"]:
                name, inner = node["atom"].split("(", 1)
                a, b = node["interval"][1:-1].split(",")
                if any(r[0] == name for r in want):  # an output entity: RTEC has it on that interval
                    fargs = tuple(json.loads(x) if x.lstrip("-").isdigit() else x for x in _split_args(inner[:-1]))
                    for p in (int(a), int(b) - tick if b != "inf" else int(a)):
                        assert _runs_hold(want, name, fargs, p, tick), (node["text"], p)
                    checked += 1
        cited = sorted({int(n["source"].split(":")[-2]) for n in walk(tree) if n["kind"] == "event"})
        alone = tmp_path / "alone.jsonl"
        alone.write_text("".join(texts[n - 1] + "\n" for n in cited) + json.dumps({"t": t}) + "\n")
        out = tmp_path / "alone.answers"
        assert main(["run", *progs, "--input", str(alone), "--output", str(out)]) == 0
        assert _runs_hold(rtec_meaning(out.read_text().splitlines(), app), pred, tuple(args), t, tick), (t, cited)
    assert checked  # the trees named output entities with their intervals


def _split_args(text: str) -> list[str]:
    """``declare(1,2,x),false`` as its top-level arguments."""
    out, depth, cur = [], 0, ""
    for ch in text:
        if ch == "," and depth == 0:
            out.append(cur)
            cur = ""
            continue
        depth += ch == "("
        depth -= ch == ")"
        cur += ch
    return [*out, cur]


def _with(events: list[dict], missing: dict) -> list[dict]:
    """The input with the missing event arriving right after the last event up to its time (an
    interval fluent's line, ``collectIntervals``, by its left end)."""
    at = max((i + 1 for i, e in enumerate(events) if _start(e) <= missing["time"]), default=0)
    line = {"interval": missing["interval"]} if "interval" in missing else {"t": missing["time"]}
    return [*events[:at], {**line, "pred": missing["pred"], "args": missing["args"]}, *events[at:]]


def _start(line: dict) -> int:
    """An input line's time: its ``t``, or an interval's left end."""
    return line["t"] if "t" in line else int(line["interval"][1:].split(",")[0])


def test_why_not_names_the_missing_event_by_hand(tmp_path, capsys):
    prog, stream = _files(tmp_path, EVENTS)
    code, got, _ = explain(capsys, prog, stream, "why-not", "open(d2)@10")
    (entry,) = got["why_not"]  # opened(d2) at 9: open(d2) holds from 10
    assert code == 0 and entry["missing"] == {"pred": "opened", "args": ["d2"], "time": 9, "text": "opened(d2) at 9"}
    assert entry["text"].endswith("; adding opened(d2) at 9 would derive it")
    # closed(d1) at 9 as well: an opened(d1) at 9 is undone at once, so nothing is claimed
    prog, stream = _files(tmp_path, [*EVENTS[:2], {"t": 9, "pred": "closed", "args": ["d1"]}, {"t": 12}])
    code, got, _ = explain(capsys, prog, stream, "why-not", "open(d1)@10")
    assert code == 0 and all("missing" not in e for e in got["why_not"]), got["why_not"]


@settings(max_examples=60, deadline=None, suppress_health_check=list(HealthCheck))
@given(dropped=st.sets(st.sampled_from(sorted(POOL)), max_size=3),
       events=st.lists(EC_EVENT, min_size=1, max_size=10), t=st.integers(1, END),
       x=st.sampled_from(["x1", "x2"]), atom=st.sampled_from(ATOMS))
def test_a_named_missing_event_derives_the_fluent(tmp_path_factory, capsys, dropped, events, t, x, atom):
    tmp = tmp_path_factory.mktemp("ecmissing")
    stream_events = [{"t": 0}, *events, {"t": END}]
    prog, stream = files(tmp, "ec.prolog", _program(sorted(set(POOL) - dropped)), stream_events)
    name, args = atom[0], (x, *atom[1])
    code, got, err = explain(capsys, prog, stream, "why-not", f"{name}({','.join(args)})@{t}")
    if code == 1:
        return
    assert code == 0, err
    Explanation.model_validate(got)
    _check_missing(tmp, capsys, prog, stream_events, got, (name, args, t))


def _check_missing(tmp: Path, capsys, prog: str, stream_events: list[dict], tree: dict,  # noqa: ANN001
                   query: tuple[str, tuple, int]) -> None:
    """Every missing event named anywhere in the tree (nested entries too: the atom they
    derive) makes ``run`` derive its atom at its time once added to the input."""
    for entry in _entries(tree):
        if "missing" in entry:
            missing = entry["missing"]
            derives = missing.get("derives")
            name, args, t = query if derives is None else (derives["pred"], tuple(derives["args"]), derives["time"])
            assert missing["pred"] in ("a", "b", "c") and missing["time"] < t
            _note("a missing event named" + (" (nested)" if derives else ""))
            assert _holds_with(tmp, capsys, prog, stream_events, missing, name, args, t), entry


# rules that read other entities than their head's: any value (k), a constant (p), a domain (q)
CROSS = {
    "k": "initiatedAt(k(X)=true, T) :- happensAt(c(X), T), holdsAt(f(Y)=true, T), X \\= Y.\n"
         "terminatedAt(k(X)=true, T) :- happensAt(b(X), T).\n",
    "p": "initiatedAt(p(X)=true, T) :- happensAt(b(X), T), holdsAt(g(x2)=on, T).\n"
         "terminatedAt(p(X)=true, T) :- happensAt(a(x1), T).\n",
}
CROSS_GROUNDING = "".join(f"grounding({f}(X)=true) :- id(X).\n" for f in CROSS)
# the domain from the input instead (each event of a, b, c puts its argument in it): an
# explanation keeps the earliest events that put the query's constants there
DYNAMIC = "dynamicDomain(id(_P)).\n" + "".join(f"grounding({e}(X)) :- id(X).\n" for e in "abc")


@settings(max_examples=60, deadline=None, suppress_health_check=list(HealthCheck))
@given(groups=st.sets(st.sampled_from(sorted(POOL) + sorted(CROSS)), min_size=1),
       events=st.lists(EC_EVENT, min_size=3, max_size=14), t=st.integers(0, END), x=st.sampled_from(["x1", "x2"]),
       dynamic=st.booleans())
def test_the_explanation_on_the_events_its_rules_read_is_the_whole_inputs(tmp_path_factory, groups, events, t, x,
                                                                          dynamic):
    """An explanation evaluates only the input its rules can read with the query's constants
    (rtec/relevance.py): for random event descriptions, with rules that read another entity
    (by a variable bound in the body, by a constant), the domain given or read from the
    input, every why and why-not is the one computed on the whole input."""
    program = _program(sorted(set(groups) - set(CROSS))) + "".join(CROSS[g] for g in sorted(set(groups) & set(CROSS)))
    if dynamic:
        program = program.replace("id(x1).\nid(x2).\n", DYNAMIC)
    prog, stream = files(tmp_path_factory.mktemp("ec"), "ec.prolog", program + CROSS_GROUNDING,
                         [{"t": 0}, *events, {"t": END}])
    for name, args in [*ATOMS, ("k", ()), ("p", ())]:
        mode, sliced, whole, left_out = sliced_and_whole([prog], stream, f"{name}({','.join((x, *args))})@{t}")
        assert sliced == whole
        event(f"{mode}, {'events left out' if left_out else 'nothing left out'}")


def test_the_rules_read_only_the_queried_entities_events():
    """caviar's meeting(id1,id2) reads id1's and id2's events, closeness in both orders, and
    the coordinates of both at any position; a rule reading a fluent named by a variable gives up."""
    found = demands(load_program([str(SHARED / "caviar" / f) for f in APP_FILES["caviar"]]), "meeting", ("id1", "id2"))
    assert found is not None
    assert found["coord"] == {("id1", None, None), ("id2", None, None)}
    assert found["close_25"] == {("id1", "id2"), ("id2", "id1")} and found["id"] == {("id1",), ("id2",)}
    assert "appear" not in found and "orientation" not in found  # (kept only as they feed id/1)
    assert all(a in ("id1", "id2") for patterns in found.values() for p in patterns for a in p[:2] if a is not None)
    anything = "initiatedAt(f(X)=true, T) :- happensAt(a(X), T), holdsAt(G=true, T).\n"  # (a fluent named by G)
    assert demands(parse_rtec(anything, "v.prolog"), "f", ("x",)) is None


def test_an_explanation_evaluates_only_the_entities_its_rules_read(tmp_path):
    """``Dialect.narrow``: explaining ``open(d1)`` derives ``open`` and not ``lit`` (which reads
    other events), and the explanation is the one with every entity evaluated."""
    program = DOORS + ("initiatedAt(lit(D)=true, T) :- happensAt(switched(D), T).\n"
                       "grounding(lit(D)=true) :- door(D).\n")
    prog, stream = files(tmp_path, "doors.prolog", program, [*EVENTS[:2], {"t": 9, "pred": "switched", "args": ["d1"]},
                                                             {"t": 12}])
    loaded = load_program([prog])
    row = lookup("rtec")
    ev = row.evaluator(loaded, RunOptions(), lambda m: None)
    events = [Event(e["t"], e.get("pred"), tuple(e.get("args", ()))) for e in map(json.loads, Path(stream).read_text().splitlines())]
    explain_query(row, loaded, ev, events, parse_query("open(d1)@5", True), "why")
    assert {e[1][0] for e in ev.derived} == {"open"}
    _, sliced, whole, _ = sliced_and_whole([prog], stream, "open(d1)@5")
    assert sliced == whole


@pytest.mark.skipif(not SHARED.is_dir(), reason="the shared RTEC data is not beside the repository")
@pytest.mark.parametrize("app", ["caviar", "ctm", "voting"])
def test_the_apps_explanations_on_the_events_their_rules_read_are_the_whole_inputs(app):
    """Random answers of RTEC's applications on the 1% cut, and the point just after each
    (mostly a why-not): the same explanation on the slice as on the whole input."""
    progs = [str(SHARED / app / f) for f in APP_FILES[app]]
    want = load_expected(app, "cut1")
    rng = random.Random(7)
    left_out = 0
    for pred, args, first, last in rng.sample(sorted(want, key=repr), 5):
        shown = ",".join(json.dumps(a) if "(" in str(a) else str(a) for a in args)
        for t in (rng.randrange(first, (last if last is not None else first + 10 * TICK[app]) + 1, TICK[app]),
                  (last if last is not None else first) + TICK[app]):
            _, sliced, whole, n = sliced_and_whole(progs, str(DATA / app / "stream-cut1.jsonl"), f"{pred}({shown})@{t}")
            assert sliced == whole, (pred, args, t)
            left_out += n
    assert left_out or app == "voting"  # (voting's rules read every voter)


def test_a_blocking_search_is_shared_only_by_heads_it_does_not_read():
    """``_loose``: a head argument used only by the rule's last goal, whose failure cites nothing,
    does not change a blocking search (caviar's distance threshold); one a negation, an earlier
    goal or a second place in the head reads does."""
    prog = parse_rtec(
        "initiatedAt(d(A,B,Th)=true, T) :- happensAt(start(c(A,X)=true), T), holdsAt(c(B,Y)=true, T), near(X,Y,Th).\n"
        "terminatedAt(d(A,B,Th)=true, T) :- happensAt(start(c(A,X)=true), T), \\+ near(X,X,Th).\n"
        "initiatedAt(e(A,Th)=true, T) :- happensAt(p(A,Th), T), near(A,A,Th).\n"
        "initiatedAt(k(A,A)=true, T) :- happensAt(p(A), T), near(A,A,A).\n"
        "near(X,Y,Th) :- X < Th, Y < Th.\n", "v.prolog")
    by_head = {rule.head[1][1][0] + ":" + kind: rule for kind, rule in prog.rules}
    (slot, path), = _loose(by_head["d:initiatedAt"])
    assert path == (1, 1, 3) and by_head["d:initiatedAt"].names[slot] == "Th"
    assert _loose(by_head["d:terminatedAt"]) == () and _loose(by_head["e:initiatedAt"]) == ()
    assert _loose(by_head["k:initiatedAt"]) == ()


# g=on needs a c while f holds: f held on [3,5) (a at 2, b at 4), c came at 6
NESTED = ("initiatedAt(f(X)=true, T) :- happensAt(a(X), T).\n"
          "terminatedAt(f(X)=true, T) :- happensAt(b(X), T).\n"
          "initiatedAt(g(X)=on, T) :- happensAt(c(X), T), holdsAt(f(X)=true, T).\n"
          "id(x1).\ngrounding(f(X)=true) :- id(X).\ngrounding(g(X)=on) :- id(X).\n")
NESTED_EVENTS = [{"t": 0}, {"t": 2, "pred": "a", "args": ["x1"]}, {"t": 4, "pred": "b", "args": ["x1"]},
                 {"t": 6, "pred": "c", "args": ["x1"]}, {"t": 12}]


def _holds_with(tmp: Path, capsys, prog: str, events: list[dict], missing: dict, pred: str, args: tuple,  # noqa: ANN001
                t: int) -> bool:
    """Whether ``run`` on the input with the missing event added holds ``pred(args)`` at ``t``."""
    (tmp / "plus.jsonl").write_text("".join(json.dumps(e) + "\n" for e in _with(events, missing)))
    capsys.readouterr()
    assert main(["run", prog, "--input", str(tmp / "plus.jsonl")]) == 0
    lines = [json.loads(line) for line in capsys.readouterr().out.splitlines()]
    return (pred, args, t) in meaning(lines, (0, END))


# input point fluents (README's mapping: hot(x1) at 4 is the line {"t": 4, "pred": "hot", "args": ["x1"]},
# pos(x1)=fast at 6 the line {"t": 6, "pred": "pos", "args": ["x1", "fast"]})
POINTS = ("points(hot(_)=true). points(pos(_)=_).\n"
          "initiatedAt(alarm(X)=true, T) :- happensAt(a(X), T), holdsAt(hot(X)=true, T).\n"
          "terminatedAt(alarm(X)=true, T) :- happensAt(b(X), T).\n"
          "initiatedAt(moving(X)=true, T) :- happensAt(start(pos(X)=fast), T).\n"
          "terminatedAt(moving(X)=true, T) :- happensAt(end(pos(X)=fast), T).\n"
          "id(x1).\ngrounding(alarm(X)=true) :- id(X).\ngrounding(moving(X)=true) :- id(X).\n")


def test_a_failing_holdsat_or_start_of_an_input_point_fluent_names_its_input_point_by_hand(tmp_path, capsys):
    """alarm(x1) does not hold at 6: a(x1) happened at 4 (the rule's closest time) but
    hot(x1) was not given at 4 (only at 2) — its point at 4 would initiate alarm there, holding
    from 5.  moving(x1) needs start(pos(x1)=fast): at 5 (T − 1, no pos given), a point
    pos(x1)=fast at 6 starts it at 5, so moving holds from 6 (its end at 6 terminates it at 6,
    which still holds at 6).  With b(x1) at 5, alarm initiated at 4 ends at 5: the hot point is
    proposed but rejected, as run confirms."""
    events = [{"t": 0}, {"t": 2, "pred": "hot", "args": ["x1"]}, {"t": 4, "pred": "a", "args": ["x1"]}, {"t": 12}]
    prog, stream = files(tmp_path, "points.prolog", POINTS, events)
    code, got, err = explain(capsys, prog, stream, "why-not", "alarm(x1)@6")
    assert code == 0, err
    Explanation.model_validate(got)
    (entry,) = got["why_not"]
    assert entry["reason"] == "holdsAt(hot(x1)=true,4) does not hold"
    assert entry["missing"] == {"pred": "hot", "args": ["x1"], "time": 4, "text": "hot(x1) at 4"}
    assert entry["text"].endswith("; adding hot(x1) at 4 would derive it")
    assert not _holds_with(tmp_path, capsys, prog, events, {"pred": "b", "args": ["x1"], "time": 12}, "alarm",
                           ("x1",), 6)
    assert _holds_with(tmp_path, capsys, prog, events, entry["missing"], "alarm", ("x1",), 6)
    code, got, err = explain(capsys, prog, stream, "why-not", "moving(x1)@6")
    assert code == 0, err
    (entry,) = got["why_not"]
    assert entry["reason"] == "happensAt(start(pos(x1)=fast),5) does not hold"
    assert entry["missing"] == {"pred": "pos", "args": ["x1", "fast"], "time": 6, "text": "pos(x1, fast) at 6"}
    assert _holds_with(tmp_path, capsys, prog, events, entry["missing"], "moving", ("x1",), 6)
    # b(x1) at 5 ends an alarm initiated at 4 before 6: hot(x1) at 4 would not do, nothing is named
    ended = [*events[:3], {"t": 5, "pred": "b", "args": ["x1"]}, events[3]]
    prog, stream = files(tmp_path, "points.prolog", POINTS, ended)
    code, got, err = explain(capsys, prog, stream, "why-not", "alarm(x1)@6")
    (entry,) = got["why_not"]
    assert code == 0 and entry["reason"] == "holdsAt(hot(x1)=true,4) does not hold" and "missing" not in entry
    assert not _holds_with(tmp_path, capsys, prog, ended, {"pred": "hot", "args": ["x1"], "time": 4}, "alarm",
                           ("x1",), 6)


POINT_EVENT = st.one_of(
    st.builds(lambda t, pred, x: {"t": t, "pred": pred, "args": [x]},
              st.integers(0, 12), st.sampled_from(["a", "b", "hot"]), st.sampled_from(["x1", "x2"])),
    st.builds(lambda t, x, v: {"t": t, "pred": "pos", "args": [x, v]},
              st.integers(0, 12), st.sampled_from(["x1", "x2"]), st.sampled_from(["fast", "slow"])))


@settings(max_examples=150, deadline=None, suppress_health_check=list(HealthCheck))
@given(events=st.lists(POINT_EVENT, min_size=1, max_size=10), t=st.integers(1, END),
       x=st.sampled_from(["x1", "x2"]), pred=st.sampled_from(["alarm", "moving"]))
def test_a_named_input_point_derives_the_fluent(tmp_path_factory, capsys, events, t, x, pred):
    """Every input point (or event) a why-not of ``POINTS`` names, added to the input, makes
    ``run`` derive the fluent at T (which it does not without: the why-not was answered)."""
    tmp = tmp_path_factory.mktemp("ecpoints")
    stream_events = [{"t": 0}, *events, {"t": END}]
    prog, stream = files(tmp, "points.prolog", POINTS + "id(x2).\n", stream_events)
    code, got, err = explain(capsys, prog, stream, "why-not", f"{pred}({x})@{t}")
    if code == 1:
        return
    assert code == 0, err
    Explanation.model_validate(got)
    for entry in _entries(got):
        if "missing" in entry:
            missing = entry["missing"]
            assert "derives" not in missing and missing["time"] <= t
            _note(f"named: {missing['pred']}")
            assert _holds_with(tmp, capsys, prog, stream_events, missing, pred, (x,), t), entry


# an input interval fluent (README's mapping: turn(x1)=left on [1,3) is the line
# {"interval": "[1,3)", "pred": "turn", "args": ["x1", "left"]})
INTERVALS = ("collectIntervals(turn(_)=_).\n"
             "initiatedAt(sharp(X)=true, T) :- happensAt(a(X), T), holdsAt(turn(X)=left, T).\n"
             "terminatedAt(sharp(X)=true, T) :- happensAt(b(X), T).\n"
             "initiatedAt(swerve(X)=true, T) :- happensAt(start(turn(X)=right), T).\n"
             "terminatedAt(swerve(X)=true, T) :- happensAt(end(turn(X)=right), T).\n"
             "holdsFor(aligned(X)=true, I) :- holdsFor(sharp(X)=true, I1), holdsFor(turn(X)=left, I2), "
             "intersect_all([I1,I2], I).\n"
             "id(x1).\nid(x2).\n" + "".join(f"grounding({f}(X)=true) :- id(X).\n" for f in ("sharp", "swerve", "aligned")))


def test_a_failing_holdsat_or_start_of_an_input_interval_fluent_names_its_interval_by_hand(tmp_path, capsys):
    """sharp(x1) does not hold at 6: a(x1) happened at 4 (the rule's closest time), but
    turn(x1)=left was given on [1,3) only — the interval [4,5) would initiate sharp at 4 (an
    interval line: given with a ``t`` it would be an event).  swerve(x1) needs
    start(turn(x1)=right) at 5: turn right on [6,7) starts it there, so swerve holds from 6
    (its end at 6 ends it after 6).  With b(x1) at 5, sharp initiated at 4 ends at 5: the
    interval is proposed but rejected, as run confirms."""
    events = [{"t": 0}, {"interval": "[1,3)", "pred": "turn", "args": ["x1", "left"]},
              {"t": 4, "pred": "a", "args": ["x1"]}, {"t": 12}]
    prog, stream = files(tmp_path, "turns.prolog", INTERVALS, events)
    code, got, err = explain(capsys, prog, stream, "why-not", "sharp(x1)@6")
    assert code == 0, err
    Explanation.model_validate(got)
    (entry,) = got["why_not"]
    assert entry["reason"] == "holdsAt(turn(x1)=left,4) does not hold"
    assert entry["missing"] == {"pred": "turn", "args": ["x1", "left"], "time": 4, "interval": "[4,5)",
                                "text": "turn(x1, left) on [4,5)"}
    assert entry["text"].endswith("; adding turn(x1, left) on [4,5) would derive it")
    assert _holds_with(tmp_path, capsys, prog, events, entry["missing"], "sharp", ("x1",), 6)
    code, got, err = explain(capsys, prog, stream, "why-not", "swerve(x1)@6")
    assert code == 0, err
    (entry,) = got["why_not"]
    assert entry["reason"] == "happensAt(start(turn(x1)=right),5) does not hold"
    assert entry["missing"]["text"] == "turn(x1, right) on [6,7)"
    assert _holds_with(tmp_path, capsys, prog, events, entry["missing"], "swerve", ("x1",), 6)
    # aligned(x1) (sharp while turning left) at 6, with turn left on [3,5): sharp holds from 5,
    # turn left not at 6 — its operand's interval [6,7) is tried for aligned's own entry
    turning = [events[0], {"interval": "[3,5)", "pred": "turn", "args": ["x1", "left"]}, *events[2:]]
    prog, stream = files(tmp_path, "turns.prolog", INTERVALS, turning)
    code, got, err = explain(capsys, prog, stream, "why-not", "aligned(x1)@6")
    assert code == 0, err
    (entry,) = got["why_not"]
    assert entry["missing"]["text"] == "turn(x1, left) on [6,7)" and "derives" not in entry["missing"]
    assert _holds_with(tmp_path, capsys, prog, turning, entry["missing"], "aligned", ("x1",), 6)
    ended = [*events[:3], {"t": 5, "pred": "b", "args": ["x1"]}, events[3]]
    prog, stream = files(tmp_path, "turns.prolog", INTERVALS, ended)
    code, got, err = explain(capsys, prog, stream, "why-not", "sharp(x1)@6")
    (entry,) = got["why_not"]
    assert code == 0 and entry["reason"] == "holdsAt(turn(x1)=left,4) does not hold" and "missing" not in entry
    assert not _holds_with(tmp_path, capsys, prog, ended, {"pred": "turn", "args": ["x1", "left"], "time": 4,
                                                            "interval": "[4,5)"}, "sharp", ("x1",), 6)


# an input fluent keeps a rule from firing: sharp ends on b only while turning right, warm
# starts on c only where hot, calm starts on d only where not warm
KEPT_INPUT = ("points(hot(_)=true).\ncollectIntervals(turn(_)=_).\n"
              "initiatedAt(sharp(X)=true, T) :- happensAt(a(X), T).\n"
              "terminatedAt(sharp(X)=true, T) :- happensAt(b(X), T), holdsAt(turn(X)=right, T).\n"
              "initiatedAt(warm(X)=true, T) :- happensAt(c(X), T), holdsAt(hot(X)=true, T).\n"
              "initiatedAt(calm(X)=true, T) :- happensAt(d(X), T), \\+ holdsAt(warm(X)=true, T).\n"
              "initiatedAt(dull(X)=true, T) :- happensAt(e(X), T), \\+ holdsAt(sharp(X)=true, T).\n"
              "id(x1).\n" + "".join(f"grounding({f}(X)=true) :- id(X).\n" for f in ("sharp", "warm", "calm", "dull")))
KEPT_INPUT_EVENTS = [{"t": 0}, {"t": 1, "pred": "a", "args": ["x1"]},
                     {"interval": "[2,6)", "pred": "turn", "args": ["x1", "left"]},
                     {"t": 4, "pred": "b", "args": ["x1"]}, {"t": 5, "pred": "c", "args": ["x1"]},
                     {"t": 6, "pred": "e", "args": ["x1"]}, {"t": 7, "pred": "d", "args": ["x1"]}, {"t": 12}]


def test_an_input_fluent_that_keeps_a_rule_from_firing_names_its_line_by_hand(tmp_path, capsys):
    """By hand: sharp(x1) (from a at 1) holds at 6 since b at 4 came while turn(x1)=right did
    not hold, so dull(x1), which e at 6 initiates where sharp(x1) does not hold, never holds:
    the interval [4,5) would end sharp at 4 — named in the why-not of dull(x1), blocking
    sharp(x1) at 6.  calm(x1) holds at 9 since d at 7 came while warm(x1) did not hold, which
    c at 5 would have initiated had hot(x1) held at 5: the point hot(x1) at 5 is named in the
    why-not of warm(x1) at 7.  Run writes no input fluent: each is checked by what the rule it
    keeps silent would do, and run confirms each.  A why shows the same entries and names no
    line (each would cost an evaluation of the input: ``Explainer.proposes_inputs``)."""
    events = KEPT_INPUT_EVENTS
    prog, stream = files(tmp_path, "kept_input.prolog", KEPT_INPUT, events)
    code, got, err = explain(capsys, prog, stream, "why-not", "dull(x1)@8")
    assert code == 0, err
    Explanation.model_validate(got)
    (keeps,) = [n for n in walk(got) if n["text"] == "what keeps those rules from firing there"]
    (turn,) = keeps["premises"]
    assert turn["negated"] and turn["text"] == "turn(x1,right) does not hold at 4: no input gives it there, " \
                                              "no rule derives it"
    (entry,) = turn["why_not"]
    assert entry["rule"]["text"] == "collectIntervals(turn(_)=_)"
    assert entry["missing"] == {"pred": "turn", "args": ["x1", "right"], "time": 4, "interval": "[4,5)",
                                "text": "turn(x1, right) on [4,5)",
                                "blocks": {"pred": "sharp", "args": ["x1"], "time": 6}}
    assert entry["text"] == "no input gives it at 4; adding turn(x1, right) on [4,5) would make it hold, and " \
                            "sharp(x1) not hold at 6"
    assert not _holds_with(tmp_path, capsys, prog, events, entry["missing"], "sharp", ("x1",), 6)
    assert _holds_with(tmp_path, capsys, prog, events, entry["missing"], "dull", ("x1",), 8)
    code, got, err = explain(capsys, prog, stream, "why", "sharp(x1)@6")
    assert code == 0, err
    (keeps,) = [n for n in walk(got) if n["text"] == "what keeps those rules from firing there"]
    (turn,) = keeps["premises"]
    (entry,) = turn["why_not"]
    assert entry["text"] == "no input gives it at 4" and "missing" not in entry
    code, got, err = explain(capsys, prog, stream, "why-not", "warm(x1)@7")
    assert code == 0, err
    Explanation.model_validate(got)
    (top,) = got["why_not"]
    assert top["missing"] == {"pred": "hot", "args": ["x1"], "time": 5, "text": "hot(x1) at 5"}
    assert top["text"].endswith("; adding hot(x1) at 5 would derive it")
    assert _holds_with(tmp_path, capsys, prog, events, top["missing"], "warm", ("x1",), 7)


INTERVAL_EVENT = st.one_of(
    st.builds(lambda t, pred, x: {"t": t, "pred": pred, "args": [x]},
              st.integers(0, 12), st.sampled_from(["a", "b"]), st.sampled_from(["x1", "x2"])),
    st.builds(lambda t, n, x, v: {"interval": f"[{t},{t + n})", "pred": "turn", "args": [x, v]},
              st.integers(0, 12), st.integers(1, 3), st.sampled_from(["x1", "x2"]),
              st.sampled_from(["left", "right"])))


KEPT_INPUT_EVENT = st.one_of(
    st.builds(lambda t, pred: {"t": t, "pred": pred, "args": ["x1"]}, st.integers(0, 12),
              st.sampled_from(["a", "b", "c", "d", "e", "hot"])),
    st.builds(lambda t, n, v: {"interval": f"[{t},{t + n})", "pred": "turn", "args": ["x1", v]},
              st.integers(0, 12), st.integers(1, 3), st.sampled_from(["left", "right"])))


@settings(max_examples=100, deadline=None, suppress_health_check=list(HealthCheck))
@given(events=st.lists(KEPT_INPUT_EVENT, min_size=1, max_size=8), base=st.booleans(), t=st.integers(1, END),
       pred=st.sampled_from(["sharp", "warm", "calm", "dull"]), mode=st.sampled_from(["why", "why-not"]))
def test_a_named_input_line_that_a_rule_reads_does_what_it_says(tmp_path_factory, capsys, events, base, t, pred,
                                                                mode):
    """Every input line a why or why-not of ``KEPT_INPUT`` names, added to the input, makes
    ``run`` derive the atom its entry names at its time (``derives``, or the query's), or no
    longer hold it (``blocks``: an input fluent keeping a rule that would end it silent).
    ``base``: the hand-derived test's events with the random ones, so that rules are kept
    silent often."""
    tmp = tmp_path_factory.mktemp("eckeptinput")
    given_events = [*(KEPT_INPUT_EVENTS[1:-1] if base else []), *events]
    stream_events = [{"t": 0}, *sorted(given_events, key=_start), {"t": END}]
    prog, stream = files(tmp, "kept_input.prolog", KEPT_INPUT, stream_events)
    code, got, err = explain(capsys, prog, stream, mode, f"{pred}(x1)@{t}")
    if code == 1:
        return
    assert code == 0, err
    Explanation.model_validate(got)
    for entry in _entries(got):
        if "missing" in entry:
            missing = entry["missing"]
            aim = missing.get("derives") or missing.get("blocks")
            name, args, at = (pred, ("x1",), t) if aim is None else (aim["pred"], tuple(aim["args"]), aim["time"])
            _note("named: " + ("blocks" if "blocks" in missing else "derives" if aim else "the query"))
            assert _holds_with(tmp, capsys, prog, stream_events, missing, name, args, at) != ("blocks" in missing), \
                entry


@settings(max_examples=100, deadline=None, suppress_health_check=list(HealthCheck))
@given(events=st.lists(INTERVAL_EVENT, min_size=1, max_size=10), t=st.integers(1, END),
       x=st.sampled_from(["x1", "x2"]), pred=st.sampled_from(["sharp", "swerve", "aligned"]))
def test_a_named_input_interval_derives_the_fluent(tmp_path_factory, capsys, events, t, x, pred):
    """Every input interval (or event) a why-not of ``INTERVALS`` names, added to the input,
    makes ``run`` derive the fluent at T (which it does not without: the why-not was answered)."""
    tmp = tmp_path_factory.mktemp("ecintervals")
    stream_events = [{"t": 0}, *sorted(events, key=_start), {"t": END}]
    prog, stream = files(tmp, "turns.prolog", INTERVALS, stream_events)
    code, got, err = explain(capsys, prog, stream, "why-not", f"{pred}({x})@{t}")
    if code == 1:
        return
    assert code == 0, err
    Explanation.model_validate(got)
    for entry in _entries(got):
        if "missing" in entry:
            missing = entry["missing"]
            assert missing["time"] <= t
            _note(f"named: {missing['pred']}")
            derives = missing.get("derives")
            name, args, at = (pred, (x,), t) if derives is None else \
                (derives["pred"], tuple(derives["args"]), derives["time"])
            assert _holds_with(tmp, capsys, prog, stream_events, missing, name, args, at), entry


def test_a_direct_why_not_reports_where_the_rule_came_closest_and_a_nested_one_names_its_event(tmp_path, capsys):
    """By hand: g(x1)=on does not hold at 10 — its rule came closest at 6 (c happened; f did
    not hold: terminated at 4 by b), not at 9; below it, f(x1) would hold at 6 with an a at 5,
    which run confirms (and then g(x1)=on holds at 10 too)."""
    prog, stream = files(tmp_path, "ec.prolog", NESTED, NESTED_EVENTS)
    code, got, err = explain(capsys, prog, stream, "why-not", "g(x1)=on@10")
    assert code == 0, err
    Explanation.model_validate(got)
    (entry,) = got["why_not"]
    assert entry["bindings"] == {"X": "x1", "T": 6} and entry["literal"] == "holdsAt(f(X)=true,T)"
    assert entry["reason"] == "holdsAt(f(x1)=true,6) does not hold" and "missing" not in entry
    assert entry["text"].startswith("fails at condition 2 at 6, the latest time in [0,10) its event happens")
    (below,) = entry["premises"]
    assert below["text"] == f"f(x1) does not hold at 6: initiated at 2, terminated at 4 by b(x1) ({stream}:3:1)"
    (inner,) = below["why_not"]
    assert inner["reason"] == "happensAt(a(x1),5) does not hold"
    assert inner["missing"] == {"pred": "a", "args": ["x1"], "time": 5, "text": "a(x1) at 5",
                                "derives": {"pred": "f", "args": ["x1"], "time": 6}}
    assert _holds_with(tmp_path, capsys, prog, NESTED_EVENTS, inner["missing"], "f", ("x1",), 6)
    assert _holds_with(tmp_path, capsys, prog, NESTED_EVENTS, inner["missing"], "g", ("x1", "on"), 10)
    assert not _holds_with(tmp_path, capsys, prog, NESTED_EVENTS, {"pred": "b", "args": ["x1"], "time": 1}, "f",
                           ("x1",), 6)  # (the oracle can fail)
    # no c since the termination: the latest initiation that would make it hold, T - 1
    prog, stream = _files(tmp_path, EVENTS)
    code, got, _ = explain(capsys, prog, stream, "why-not", "open(d1)@10")
    (entry,) = got["why_not"]
    assert entry["bindings"] == {"D": "d1", "T": 9} and entry["text"].startswith("fails at condition 1: ")
    assert entry["missing"]["time"] == 9


def test_background_conditions_are_leaves_with_their_source(tmp_path, capsys):
    """A static condition is shown with the clause that gives it (a fact, a rule: its line),
    not unfolded; one of the dynamic domain with the input event that put it there."""
    program = ("initiatedAt(f(X)=true, T) :- happensAt(a(X), T), limit(X, L), L > 2, big(X), id(X).\n"
               "terminatedAt(f(X)=true, T) :- happensAt(b(X), T).\n"
               "limit(x1, 5).\nlimit(x2, 1).\n"
               "big(X) :- limit(X, L), L > 4.\n"
               "dynamicDomain(id(_P)).\ngrounding(f(X)=true) :- id(X).\ngrounding(a(X)) :- id(X).\n")
    events = [{"t": 0}, {"t": 2, "pred": "a", "args": ["x1"]}, {"t": 12}]
    prog, stream = files(tmp_path, "bg.prolog", program, events)
    code, got, err = explain(capsys, prog, stream, "why", "f(x1)@5")
    assert code == 0, err
    Explanation.model_validate(got)
    static = [(n["text"], n.get("rule", {}).get("line"), n.get("bindings"),
               [c["source"] for c in n.get("premises", [])]) for n in walk(got) if n["kind"] == "background"]
    assert static == [
        ("limit(x1,5): background knowledge, a fact of the program", 3, None, []),
        ("big(x1): background knowledge, a rule of the program", 5, {"L": 5, "X": "x1"}, []),
        ("id(x1): in the dynamic domain, from the input", None, None, [f"{stream}:2:1"])]
    assert [n["text"] for n in walk(got) if n["kind"] == "condition"] == ["5>2 holds"]


def test_an_explanation_with_a_retention_evaluates_only_the_entities_its_rules_read(tmp_path):
    """``Dialect.narrow`` with ``--retention``: the evaluator ``run`` drives and the one the
    explanation reads derive ``open`` only, and the explanation (a late event repaired within
    the retention included) is the one with every entity evaluated."""
    program = DOORS + ("initiatedAt(lit(D)=true, T) :- happensAt(switched(D), T).\n"
                       "grounding(lit(D)=true) :- door(D).\n")
    stream = [{"t": 3, "pred": "opened", "args": ["d1"]}, {"t": 9, "pred": "switched", "args": ["d1"]},
              {"t": 11, "pred": "switched", "args": ["d2"]}, {"t": 8, "pred": "closed", "args": ["d1"]}, {"t": 14}]
    prog, path = files(tmp_path, "doors.prolog", program, stream)
    loaded = load_program([prog])
    row = lookup("rtec")
    with open(path, encoding="utf-8") as f:
        events = list(with_lines(row.read, loaded, path, f, "jsonl", "fail", lambda m: None))
    options = RunOptions(retention=10)
    out = []
    for r in (row, dataclasses.replace(row, narrow=None)):
        for query, mode in (("open(d1)@5", "why"), ("open(d1)@10", "why-not"), ("open(d2)@6", "why-not")):
            make = lambda r=r: r.evaluator(loaded, options, lambda m: None)  # noqa: E731
            ev = make()
            node = explain_query(r, loaded, ev, events, parse_query(query, True), mode, fresh=make)
            out.append(node.data())
            assert ({e[1][0] for e in ev.derived} == {"open"}) is (r is row), ev.derived
    assert out[:3] == out[3:]
    assert out[1]["text"].startswith("open(d1) does not hold at 10: initiated at 3, terminated at 8 by closed(d1)")
    assert out[2]["why_not"][0]["missing"]["text"] == "opened(d2) at 5"


def test_rules_that_start_alike_share_a_search_that_fails_at_their_first_goal(tmp_path, monkeypatch):
    """``Blocking._first_key``: the initiation and the terminations of ``d`` start from the same
    goal (their own variable names), so where it fails one search serves both terminations
    (checked at the same times: why d(p) holds at 3); a rule starting from ``c`` with its
    arguments swapped does not share it.  The explanations are the ones made with every
    search run."""
    program = ("initiatedAt(d(A)=true, T) :- happensAt(start(c(A,X)=true), T), big(X).\n"
               "terminatedAt(d(B)=true, T) :- happensAt(start(c(B,Y)=true), T), \\+ big(Y).\n"
               "terminatedAt(d(B)=true, T) :- happensAt(start(c(B,W)=true), T), W > 100.\n"
               "initiatedAt(e(A)=true, T) :- happensAt(start(c(X,A)=true), T), X @< q.\n"
               "initiatedAt(c(A,X)=true, T) :- happensAt(put(A,X), T).\n"
               "terminatedAt(c(A,X)=true, T) :- happensAt(take(A,X), T).\n"
               "big(X) :- X > 5.\nid(p).\nid(q).\nv(3).\nv(7).\n"
               "grounding(c(A,X)=true) :- id(A), v(X).\ngrounding(d(A)=true) :- id(A).\n"
               "grounding(e(A)=true) :- v(A).\n")
    prog = parse_rtec(program, "s.prolog")
    firsts = {kind + ":" + rule.head[1][1][0]: _first_goal(rule) for kind, rule in prog.rules if len(rule.body) > 1}
    assert _first_goal(prog.rules[1][1])[0] == _first_goal(prog.rules[2][1])[0]
    # the same goal, its variables in order; e's head variable is the second (a different key for e(7) than d(7))
    assert firsts["initiatedAt:d"][0] == firsts["terminatedAt:d"][0] == firsts["initiatedAt:e"][0]
    by_name = {kind + ":" + rule.head[1][1][0]: rule for kind, rule in prog.rules if len(rule.body) > 1}
    assert [by_name["initiatedAt:e"].names[i] for i in firsts["initiatedAt:e"][1]][:2] == ["X", "A"]
    calls = []
    real = Blocking._failed_by
    monkeypatch.setattr(Blocking, "_failed_by", lambda self, goal: calls.append(1) or real(self, goal))
    stream = [{"t": 1, "pred": "put", "args": ["p", 7]}, {"t": 4, "pred": "take", "args": ["p", 7]},
              {"t": 5, "pred": "put", "args": ["p", 3]}, {"t": 6, "pred": "put", "args": ["q", 7]}, {"t": 12}]
    path, data = files(tmp_path, "s.prolog", program, stream)
    queries = ["d(p)@3", "d(p)@9", "d(q)@9", "e(7)@9", "e(3)@9"]
    shared = [sliced_and_whole([path], data, q)[1] for q in queries]
    # d(p) held from 2 (c(p,7) started at 1), until c(p,3) started at 5 (put at 5; 3 is not big)
    assert shared[1]["text"] == "d(p) does not hold at 9: initiated at 1, terminated at 5 by " \
                                "happensAt(start(c(p,3)=true),5)"
    with_sharing = len(calls)
    monkeypatch.setattr(Blocking, "_first_key", lambda self, rule, vs, budget: None)
    assert [sliced_and_whole([path], data, q)[1] for q in queries] == shared
    assert with_sharing < len(calls) - with_sharing  # (one search served both terminations somewhere)
    assert any("checked at the" in json.dumps(tree) for tree in shared)


# h needs an e while k holds: k held on [3,5) (c at 2, b at 4), e came at 1 and at 5
KEPT = ("initiatedAt(k(X)=true, T) :- happensAt(c(X), T).\n"
        "terminatedAt(k(X)=true, T) :- happensAt(b(X), T).\n"
        "initiatedAt(h(X)=true, T) :- happensAt(e(X), T), holdsAt(k(X)=true, T).\n"
        "initiatedAt(q(X)=true, T) :- happensAt(z(X), T), holdsAt(h(X)=true, T).\n"
        "id(x1).\n" + "".join(f"grounding({f}(X)=true) :- id(X).\n" for f in "khq"))
KEPT_EVENTS = [{"t": 0}, {"t": 1, "pred": "e", "args": ["x1"]}, {"t": 2, "pred": "c", "args": ["x1"]},
               {"t": 4, "pred": "b", "args": ["x1"]}, {"t": 5, "pred": "e", "args": ["x1"]},
               {"t": 7, "pred": "z", "args": ["x1"]}, {"t": 12}]


def test_a_why_not_names_the_missing_event_of_what_keeps_a_rule_from_firing(tmp_path, capsys):
    """By hand: q(x1) does not hold at 8 — h(x1) does not hold at 7, its rule kept from firing at
    1 and at 5 by k(x1) not holding there.  At 5 an initiation of k at 4 would be ended at once
    (b at 4): none named; at 1, a c(x1) at 0 would make k hold at 1, which run confirms (only
    the failing condition's why-not at 5 named one before)."""
    prog, stream = files(tmp_path, "kept.prolog", KEPT, KEPT_EVENTS)
    code, got, err = explain(capsys, prog, stream, "why-not", "q(x1)@8")
    assert code == 0, err
    Explanation.model_validate(got)
    (keeps,) = [n for n in walk(got) if n["text"] == "what keeps those rules from firing there"]
    at1, at5 = keeps["premises"]
    assert at1["negated"] and at1["text"] == "k(x1) does not hold at 1: first initiated at 2, it holds from 3"
    (entry,) = at1["why_not"]
    assert entry["missing"] == {"pred": "c", "args": ["x1"], "time": 0, "text": "c(x1) at 0",
                                "derives": {"pred": "k", "args": ["x1"], "time": 1}}
    assert _holds_with(tmp_path, capsys, prog, KEPT_EVENTS, entry["missing"], "k", ("x1",), 1)
    assert at5["text"].startswith("k(x1) does not hold at 5: initiated at 2, terminated at 4")
    assert all("missing" not in e for e in at5["why_not"])
    _check_missing(tmp_path, capsys, prog, KEPT_EVENTS, got, ("q", ("x1",), 8))


STARTS = ("initiatedAt(f(X)=true, T) :- happensAt(a(X), T).\n"
          "terminatedAt(f(X)=true, T) :- happensAt(b(X), T).\n"
          "initiatedAt(k(X)=true, T) :- happensAt(c(X), T).\n"
          "initiatedAt(s(X)=true, T) :- happensAt(start(f(X)=true), T), holdsAt(k(X)=true, T).\n"
          "id(x1).\n" + "".join(f"grounding({f}(X)=true) :- id(X).\n" for f in "fks"))


def test_a_direct_why_not_reports_where_a_rule_from_a_start_came_closest(tmp_path, capsys):
    """By hand: s(x1) (f starting while k holds) does not hold at 10 — f started at 2 (a at 2),
    when k did not hold yet (c at 6): the rule came closest at 2, not at 9 where f does not
    start; with a c(x1) at 1, k holds at 2 and so s(x1) from 3 on."""
    events = [{"t": 0}, {"t": 2, "pred": "a", "args": ["x1"]}, {"t": 4, "pred": "b", "args": ["x1"]},
              {"t": 6, "pred": "c", "args": ["x1"]}, {"t": 12}]
    prog, stream = files(tmp_path, "starts.prolog", STARTS, events)
    code, got, err = explain(capsys, prog, stream, "why-not", "s(x1)@10")
    assert code == 0, err
    (entry,) = got["why_not"]
    assert entry["bindings"] == {"X": "x1", "T": 2} and entry["reason"] == "holdsAt(k(x1)=true,2) does not hold"
    assert entry["text"].startswith("fails at condition 2 at 2, the latest time in [0,10) its event happens")
    (below,) = entry["premises"]
    (inner,) = below["why_not"]
    assert inner["missing"]["text"] == "c(x1) at 1"
    assert _holds_with(tmp_path, capsys, prog, events, inner["missing"], "s", ("x1",), 10)


BUSY = ("happensAt(a(X), T) :- happensAt(p(X), T).\n"
        "initiatedAt(f(X)=true, T) :- happensAt(a(X), T), holdsAt(g(X)=true, T).\n"
        "terminatedAt(f(X)=true, T) :- happensAt(a(Y), T), Y \\= X, holdsAt(g(Y)=true, T).\n"
        "initiatedAt(g(X)=true, T) :- happensAt(q(X), T).\n"
        "id(x1).\nid(x2).\ngrounding(f(X)=true) :- id(X).\ngrounding(g(X)=true) :- id(X).\n"
        "grounding(a(X)) :- id(X).\n")  # RTEC reads nothing of a derived event without grounding/1


def test_the_closest_time_search_is_bounded_on_a_busy_event_type(tmp_path, capsys, monkeypatch):
    """f(x1) reads the derived a(x1), and its termination a(Y) of anyone: x2's 19 a events come
    after x1's only one, at 1.  The search finds 1 within ``CLOSEST_TRIES`` tries; with fewer
    tries than x2's events it gives up for T − tick (and tries no more than that)."""
    events = [{"t": 0}, {"t": 1, "pred": "p", "args": ["x1"]},
              *({"t": t, "pred": "p", "args": ["x2"]} for t in range(2, 21)), {"t": 30}]
    prog, stream = files(tmp_path, "busy.prolog", BUSY, events)
    code, got, err = explain(capsys, prog, stream, "why-not", "f(x1)@25")
    assert code == 0, err
    assert got["why_not"][0]["bindings"]["T"] == 1 and got["why_not"][0]["literal"] == "holdsAt(g(X)=true,T)"
    calls = []
    real = Explainer._first_holds
    monkeypatch.setattr(Explainer, "_first_holds", lambda self, rule, head: calls.append(head) or real(self, rule, head))
    monkeypatch.setattr(rtec_explain, "CLOSEST_TRIES", 3)
    code, got, err = explain(capsys, prog, stream, "why-not", "f(x1)@25")
    assert code == 0, err
    assert got["why_not"][0]["bindings"]["T"] == 24 and got["why_not"][0]["literal"] == "happensAt(a(X),T)"
    assert [h[2] for h in calls] == [20, 19, 18]


# f from a, h from f's start, u the union of f and h, s f's start with a c, g a c without f starting,
# f ended by b only while j holds
ABSENT = ("initiatedAt(f(X)=true, T) :- happensAt(a(X), T).\n"
          "terminatedAt(f(X)=true, T) :- happensAt(b(X), T), holdsAt(j(X)=true, T).\n"
          "initiatedAt(j(X)=true, T) :- happensAt(c(X), T).\n"
          "initiatedAt(h(X)=true, T) :- happensAt(start(f(X)=true), T).\n"
          "holdsFor(u(X)=true, I) :- holdsFor(f(X)=true, I1), holdsFor(h(X)=true, I2), union_all([I1,I2], I).\n"
          "initiatedAt(s(X)=true, T) :- happensAt(start(f(X)=true), T), happensAt(c(X), T).\n"
          "initiatedAt(g(X)=true, T) :- happensAt(c(X), T), \\+ happensAt(start(f(X)=true), T).\n"
          "id(x1).\n" + "".join(f"grounding({f}(X)=true) :- id(X).\n" for f in "fjhusg"))


def _named(tree: dict) -> list[tuple[str, str, tuple]]:
    """(missing text, derived atom or '', its pred/args/time) of every entry that names one."""
    out = []
    for entry in _entries(tree):
        if "missing" in entry:
            d = entry["missing"].get("derives")
            out.append((entry["missing"]["text"], "" if d is None else f"{d['pred']}{tuple(d['args'])}@{d['time']}"))
    return out


def test_missing_events_of_operands_boundaries_and_what_keeps_a_rule_from_firing(tmp_path, capsys):
    """By hand, with only c(x1) at 2: u(x1) (f or h) does not hold at 6 — neither operand
    does, and an a(x1) at 5 makes both hold at 6: named on u's own entry and on f's below it;
    h(x1)'s rule fails at start(f(x1)=true): an a(x1) at 5 starts f, named on h's entry; s(x1)
    needs a c at the same time too: named for f below, not for s.  In --why trees: g(x1)
    holds since c at 2 came without f starting (an a at 2 would start it: named, deriving f at
    3); with a(x1) at 1 and b(x1) at 4, f(x1) holds at 6 because j(x1) did not hold at 4 (an
    c(x1) at 3 would make it hold: named, deriving j at 4).  run confirms each."""
    events = [{"t": 0}, {"t": 2, "pred": "c", "args": ["x1"]}, {"t": 12}]
    prog, stream = files(tmp_path, "absent.prolog", ABSENT, events)
    code, got, err = explain(capsys, prog, stream, "why-not", "u(x1)@6")
    assert code == 0, err
    Explanation.model_validate(got)
    (entry,) = got["why_not"]
    assert entry["text"].startswith("its interval operations give [], without 6") and \
        entry["missing"]["text"] == "a(x1) at 5" and "derives" not in entry["missing"]
    assert ("a(x1) at 5", "f('x1',)@6") in _named(got)
    assert _holds_with(tmp_path, capsys, prog, events, entry["missing"], "u", ("x1",), 6)
    code, got, err = explain(capsys, prog, stream, "why-not", "h(x1)@6")
    (entry,) = got["why_not"]
    assert entry["reason"] == "happensAt(start(f(x1)=true),5) does not hold"
    assert entry["missing"]["text"] == "a(x1) at 5" and "derives" not in entry["missing"]
    assert _holds_with(tmp_path, capsys, prog, events, entry["missing"], "h", ("x1",), 6)
    code, got, err = explain(capsys, prog, stream, "why-not", "s(x1)@6")
    (entry,) = got["why_not"]
    assert "missing" not in entry and _named(got) == [("a(x1) at 5", "f('x1',)@6")]
    assert not _holds_with(tmp_path, capsys, prog, events, {"pred": "a", "args": ["x1"], "time": 5}, "s", ("x1",), 6)
    code, got, err = explain(capsys, prog, stream, "why", "g(x1)@6")
    assert code == 0, err
    assert _named(got) == [("a(x1) at 2", "f('x1',)@3")]
    _check_missing(tmp_path, capsys, prog, events, got, ("g", ("x1",), 6))
    events = [{"t": 0}, {"t": 1, "pred": "a", "args": ["x1"]}, {"t": 4, "pred": "b", "args": ["x1"]}, {"t": 12}]
    prog, stream = files(tmp_path, "absent.prolog", ABSENT, events)
    code, got, err = explain(capsys, prog, stream, "why", "f(x1)@6")
    assert code == 0, err
    (keeps,) = [n for n in walk(got) if n["text"] == "what keeps those rules from firing there"]
    assert keeps["premises"][0]["text"] == "j(x1) never holds: never initiated"
    assert _named(got) == [("c(x1) at 3", "j('x1',)@4")]
    _check_missing(tmp_path, capsys, prog, events, got, ("f", ("x1",), 6))
    assert not _holds_with(tmp_path, capsys, prog, events, {"pred": "c", "args": ["x1"], "time": 4}, "j", ("x1",), 4)


@settings(max_examples=100, deadline=None, suppress_health_check=list(HealthCheck))
@given(events=st.lists(st.tuples(st.integers(0, 6), st.sampled_from("abc"), st.sampled_from(["x1", "x2", "x3"]),
                                 st.integers(0, 2), st.booleans()), max_size=14))
@example(events=[(5, "a", "x1", 0, False), (2, "a", "x1", 1, False), (2, "a", "x1", 0, False)])  # a(x1,0) first
def test_the_earliest_domain_feeders_are_those_of_the_input_index(events):
    """The earliest event that puts each value in the dynamic domain, read straight off the
    events (``Explainer._earliest``), is the one the index of the input gives (``inputs``'
    order: the first arrival of its arguments, then arrival), ties at the earliest time, late
    events and retractions included."""
    program = parse_rtec("dynamicDomain(id(_P)).\n" + "".join(f"grounding({e}(X,Y)) :- id(X).\n" for e in "abc")
                         + "initiatedAt(f(X)=true, T) :- happensAt(a(X,_), T).\n"
                         + "grounding(f(X)=true) :- id(X).\n", "feeds.prolog")
    evs = [Event(t, p, (x, y), retract) for t, p, x, y, retract in events]
    ev = lookup("rtec").evaluator(program, RunOptions(), print)  # (its solver: nothing is evaluated)
    got, want = Explainer(program, ev, evs), Explainer(program, ev, evs)
    for pred in "abc":
        feeds = [(("id", 1), [0])]
        assert got._earliest(pred, feeds) == want._earliest_indexed(pred, feeds), pred


# far(A,B): the complement of d(A,B,3) union d(A,B,8), d initiated where c(A) starts near c(B)
FAR = ("initiatedAt(d(A,B,Th)=true, T) :- happensAt(start(c(A,X)=true), T), holdsAt(c(B,Y)=true, T), "
       "near(X,Y,Th).\n"
       "terminatedAt(d(A,B,Th)=true, T) :- happensAt(end(c(A,_)=true), T).\n"
       "holdsFor(u(A,B)=true, I) :- holdsFor(d(A,B,3)=true, I1), holdsFor(d(A,B,8)=true, I2), "
       "union_all([I1,I2], I).\n"
       "holdsFor(far(A,B)=true, I) :- holdsFor(u(A,B)=true, I1), complement_all([I1], I).\n"
       "near(X,Y,Th) :- member(Th,[3,8]), D is abs(X-Y), D < Th.\n"
       "points(c(_,_)=true).\nid(p).\nid(q).\n"
       "grounding(c(A,X)=true) :- id(A), member(X,[0,10,20,30]).\n"
       "grounding(d(A,B,Th)=true) :- id(A), id(B), A @< B, member(Th,[3,8]).\n"
       "grounding(u(A,B)=true) :- id(A), id(B), A @< B.\n"
       "grounding(far(A,B)=true) :- id(A), id(B), A @< B.\n")


def test_a_blocking_search_over_a_span_is_shared_by_the_thresholds(tmp_path, monkeypatch):
    """``Blocking._blockers_over``: far(p,q) (neither d(p,q,3) nor d(p,q,8) ever holds: c(p)
    and c(q) are never near enough) explains why neither threshold's d was initiated before T
    with one pass over the times for the first threshold; the second reuses it.  The trees are
    the ones made time by time."""
    program = FAR
    stream = [{"t": t, "pred": "c", "args": [who, x]} for t, who, x in
              [(1, "p", 0), (1, "q", 20), (2, "p", 0), (2, "q", 20), (3, "p", 10), (3, "q", 30), (5, "q", 0),
               (6, "p", 30), (6, "q", 0)]] + [{"t": 12}]
    path, data = files(tmp_path, "far.prolog", program, stream)
    calls = []
    real = Blocking._blockers
    monkeypatch.setattr(Blocking, "_blockers", lambda self, rule, head, budget=16: calls.append(head) or
                        real(self, rule, head, budget))
    mode, shared, whole, _ = sliced_and_whole([path], data, "far(p,q)@8")
    assert mode == "why" and shared == whole
    thresholds = {h[1][1][3] for h in calls}
    assert thresholds == {3}, thresholds  # (8's blockers over the span: the pass for 3)
    assert "checked at the" in json.dumps(shared)
    monkeypatch.setattr(Blocking, "_blockers_over", lambda self, rule, head, lo, t, times:
                        [x for p in times for x in Blocking._blockers(self, rule, (*head, p))])
    calls.clear()
    assert sliced_and_whole([path], data, "far(p,q)@8")[1] == shared
    assert {h[1][1][3] for h in calls} == {3, 8}
