"""``chronolog explain --changes ATOM@T``: exactly the answer lines ``run`` writes that cover
the atom at T, in order, each with the input events that caused it.

The lines are checked against ``chronolog run``'s own output (the same options), read
independently; the causes against hand-derived cases."""

from __future__ import annotations

import json
from fractions import Fraction
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from meaning import covers

from chronolog.cli.main import main
from chronolog.core.errors import ChronologError
from chronolog.runtime.explain import parse_query

SETTINGS = settings(max_examples=60, deadline=None, suppress_health_check=list(HealthCheck))


def _files(tmp: Path, name: str, program: str, events: list[dict]) -> tuple[str, str]:
    (tmp / name).write_text(program)
    (tmp / "in.jsonl").write_text("".join(json.dumps(e) + "\n" for e in events))
    return str(tmp / name), str(tmp / "in.jsonl")


def _cli(capsys, *argv: str) -> tuple[int, str, str]:
    capsys.readouterr()
    code = main(list(argv))
    got = capsys.readouterr()
    return code, got.out, got.err


def _covering(run_out: str, pred: str, args: list, t: Fraction) -> list[tuple[int, dict]]:
    """The lines of a run's output about (pred, args) at t, numbered from 1 (read here, not by
    the code under test)."""
    return [(n, rec) for n, rec in enumerate(map(json.loads, run_out.splitlines()), 1)
            if rec.get("pred") == pred and rec.get("args") == args and covers(rec, t)]


def test_lars_changes_by_hand(tmp_path, capsys):
    prog, stream = _files(tmp_path, "p.lars", "q(X) :- p(X) [2].\n", [
        {"t": 0, "pred": "p", "args": ["a"]}, {"t": 3, "pred": "p", "args": ["b"]}, {"t": 6},
        {"t": 1, "pred": "p", "args": ["c"]}, {"t": 0, "pred": "p", "args": ["a"], "op": "retract"}])
    code, out, err = _cli(capsys, "explain", prog, "--input", stream, "--changes", "q(a)@1", "--as", "json")
    assert code == 0, err
    got = json.loads(out)
    # q(a) opens [0,inf) when time 0 is evaluated (after p(a) at 0, line 1), then the retraction
    # (applied with the late p(c)) takes [0,2] back
    assert [(c["line"], c["kind"]) for c in got["changes"]] == [(1, "advance"), (4, "correction")]
    assert got["changes"][0]["answer"] == {"interval": "[0,inf)", "pred": "q", "args": ["a"]}
    assert [x["where"] for x in got["changes"][0]["causes"]] == [f"{stream}:1:1"]
    causes = got["changes"][1]["causes"]
    assert {(x["pred"], x["retract"], x["where"]) for x in causes} == {
        ("p", True, f"{stream}:5:1"), ("p", False, f"{stream}:4:1")}
    code, text, _ = _cli(capsys, "explain", prog, "--input", stream, "--changes", "q(a)@1")
    assert "retraction of p(a) at 0" in text and "a correction of a time already evaluated" in text
    code, text, _ = _cli(capsys, "explain", prog, "--input", stream, "--changes", "q(z)@1")
    assert code == 0 and "no answer line covers it" in text


def test_mtl_changes_at_a_rational_time(tmp_path, capsys):
    prog, stream = _files(tmp_path, "p.mtl", "Alarm(X):-Diamondminus[0,2]Hot(X)\n", [
        {"interval": "[0,5]", "pred": "Hot", "args": ["s1"]}, {"t": 10}])
    code, out, err = _cli(capsys, "explain", prog, "--input", stream, "--changes", "Alarm(s1)@13/2", "--as", "json")
    assert code == 0, err
    code, run_out, _ = _cli(capsys, "run", prog, "--input", stream)
    want = _covering(run_out, "Alarm", ["s1"], Fraction(13, 2))
    got = json.loads(out)["changes"]
    assert [(c["line"], c["answer"]) for c in got] == want and want


def test_rtec_changes_with_a_value(tmp_path, capsys):
    program = ("initiatedAt(status(D)=open, T) :- happensAt(opened(D), T).\n"
               "initiatedAt(status(D)=closed, T) :- happensAt(closed(D), T).\n"
               "door(d1).\ngrounding(status(D)=open) :- door(D).\ngrounding(status(D)=closed) :- door(D).\n")
    prog, stream = _files(tmp_path, "p.prolog", program, [
        {"t": 3, "pred": "opened", "args": ["d1"]}, {"t": 8, "pred": "closed", "args": ["d1"]}, {"t": 12}])
    code, out, err = _cli(capsys, "explain", prog, "--input", stream, "--changes", "status(d1)=open@5", "--as", "json")
    assert code == 0, err
    code, run_out, _ = _cli(capsys, "run", prog, "--input", stream)
    want = _covering(run_out, "status", ["d1", "open"], Fraction(5))
    got = json.loads(out)["changes"]
    assert [(c["line"], c["answer"]) for c in got] == want and want


LARS_RULES = ["q(X) :- p(X).", "q(X) :- p(X) [2].", "q(X) :- p(X) [2 #].", "q(X) :- p(X) always [1].",
              "q(X) :- p(X) [2], not r(X) [1]."]
EVENT = st.builds(lambda t, pred, arg, retract: {"t": t, "pred": pred, "args": [arg],
                                                  **({"op": "retract"} if retract else {})},
                  st.integers(0, 8), st.sampled_from(["p", "r"]), st.sampled_from(["a", "b"]), st.booleans())


@SETTINGS
@given(rules=st.lists(st.sampled_from(LARS_RULES), min_size=1, max_size=2, unique=True),
       events=st.lists(EVENT, min_size=1, max_size=12), arg=st.sampled_from(["a", "b"]), t=st.integers(0, 8),
       answers=st.sampled_from(["changelog", "points"]))
def test_the_lines_are_exactly_runs_lines_covering_the_atom(tmp_path_factory, capsys, rules, events, arg, t, answers):
    tmp = tmp_path_factory.mktemp("explain")
    prog, stream = _files(tmp, "p.lars", "\n".join(rules) + "\n", [{"t": 0}, *events])
    code, out, err = _cli(capsys, "explain", prog, "--input", stream, "--changes", f"q({arg})@{t}", "--as", "json",
                          "--answers", answers)
    assert code == 0, err
    code, run_out, _ = _cli(capsys, "run", prog, "--input", stream, "--answers", answers)
    got = json.loads(out)["changes"]
    assert [(c["line"], c["answer"]) for c in got] == _covering(run_out, "q", [arg], Fraction(t))
    for c in got:  # a correction names the late input that caused it, an advance the input of its time
        assert c["causes"] or c["kind"] != "correction"


@pytest.mark.parametrize(("text", "pred", "args", "t"), [
    ("slow(a1)@5", "slow", ("a1",), 5),
    ("Alarm(s1)@7/2", "Alarm", ("s1",), Fraction(7, 2)),
    ("status(3)=voting@10", "status", (3, "voting"), 10),
    ("status(3)=true@10", "status", (3,), 10),
    ('p("a b", 2, c)@0', "p", ("a b", 2, "c"), 0),
    ("tick@4", "tick", (), 4),
])
def test_queries(text, pred, args, t):
    q = parse_query(text, integral=False)
    assert (q.pred, q.args, q.t) == (pred, args, t)


@pytest.mark.parametrize(("text", "message"), [("q(a)", "is not a query"), ("q(a)@x", "is not a query"),
                                               ("q(a)@7/2", "not an integer")])
def test_bad_queries(text, message):
    with pytest.raises(ChronologError, match=message):
        parse_query(text, integral=True)


def test_explain_follows_one_answer_stream(tmp_path, capsys):
    prog, stream = _files(tmp_path, "p.lars", "q(X) :- p(X).\n", [{"t": 0, "pred": "p", "args": ["a"]}])
    code, _, err = _cli(capsys, "explain", prog, "--input", stream, "--why", "q(a)@0", "--mode", "oneshot",
                        "--models", "2")
    assert code == 2 and "explain follows one answer stream" in err


DOOR = ("initiatedAt(status(D)=open, T) :- happensAt(opened(D), T).\n"
        "initiatedAt(status(D)=closed, T) :- happensAt(closed(D), T).\n"
        "door(d1).\ngrounding(status(D)=open) :- door(D).\ngrounding(status(D)=closed) :- door(D).\n")
DOOR_IN = [{"t": 1, "pred": "closed", "args": ["d1"]}, {"t": 3, "pred": "opened", "args": ["d1"]}, {"t": 6},
           {"t": 9}, {"t": 5, "pred": "closed", "args": ["d1"]}, {"t": 7, "pred": "opened", "args": ["d1"]}, {"t": 12}]


def test_rtec_a_correction_names_its_late_event_and_an_opening_the_events_its_window_applied(tmp_path, capsys):
    """RTEC evaluates a window once its step has passed, up to a tick before its time (what
    happens at T holds from T + 1): each line's causes are the events that window applied."""
    prog, stream = _files(tmp_path, "p.prolog", DOOR, DOOR_IN)
    code, out, err = _cli(capsys, "explain", prog, "--input", stream, "--changes", "status(d1)=closed@7",
                          "--as", "json", "--step", "1")
    assert code == 0, err
    got = [(c["line"], c["kind"], [x["where"].rsplit(":", 2)[1] for x in c["causes"]])
           for c in json.loads(out)["changes"]]
    # [2,inf) when time 3 arrived (closed at 1); its closing at 4 when 6 arrived (opened at 3,
    # applied by that window, not the one before); [6,8) a correction by the late closed at 5
    # (opened at 7 arrived late too but its time was not yet evaluated: it is not the cause)
    assert got == [(1, "advance", ["1"]), (2, "advance", ["2"]), (4, "correction", ["5"])]
    code, text, _ = _cli(capsys, "explain", prog, "--input", stream, "--changes", "status(d1)=open@5", "--step", "1")
    assert text.startswith("status(d1)=open@5: 1 answer line covers it,") and "time alone" not in text


def test_rtec_a_window_evaluated_at_the_end_is_no_correction(tmp_path, capsys):
    """With the default step the whole input is one window after the first time: the lines the
    end writes about times after the first are the end's, caused by the events, not corrections."""
    prog, stream = _files(tmp_path, "p.prolog", DOOR, DOOR_IN)
    code, out, err = _cli(capsys, "explain", prog, "--input", stream, "--changes", "status(d1)=open@5", "--as", "json")
    assert code == 0, err
    (change,) = json.loads(out)["changes"]
    assert (change["answer"]["interval"], change["kind"]) == ("[4,6)", "end")
    assert {x["where"].rsplit(":", 2)[1] for x in change["causes"]} == {"1", "2", "3", "4", "5", "6", "7"}


CTM = Path(__file__).parents[3] / "shared" / "data" / "rtec" / "ctm"


@pytest.mark.skipif(not CTM.is_dir(), reason="the shared RTEC data is not beside the repository")
def test_rtec_ctm_corrections_name_late_events(capsys):
    """The ctm application's stream (1% cut): every line --changes calls a correction names the
    late events that caused it (the report: a window's closing of [0,inf) called a correction
    "by time alone")."""
    progs = [str(CTM / f) for f in ("rules.prolog", "vehicles.prolog", "settings.prolog")]
    stream = str(Path(__file__).parents[1] / "data" / "rtec" / "ctm" / "stream-cut1.jsonl")
    code, out, err = _cli(capsys, "explain", *progs, "--input", stream, "--changes",
                          "driving_quality(75,bus)=high@5", "--as", "json")
    assert code == 0, err
    got = json.loads(out)["changes"]
    assert [(c["answer"]["interval"], c["kind"]) for c in got] == [("[0,inf)", "advance"), ("[3,8)", "end")]
    assert all(c["causes"] for c in got)
