"""``chronolog explain --why / --why-not`` for the Event Calculus, from the fluents' maximal
intervals and the input at their ends: initiated at t0 by the events the initiatedAt rules
read, not terminated up to T; never initiated, first initiated after T, or terminated at t1."""

from __future__ import annotations

import json
from pathlib import Path

from explaining import explain, files, walk
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from meaning import meaning

from chronolog.cli.main import main
from chronolog.contract.models import Explanation

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
    assert root["text"] == "open(d1) on [4,9): initiated at 3, not terminated in (3,5]"
    assert root["rule"] == {"file": prog, "line": 1, "text": "initiatedAt rule"} and root["interval"] == "[4,9)"
    assert [(n["text"], n["source"]) for n in walk(root) if n["kind"] == "event"] == [
        ("input opened(d1) at 3", f"{stream}:1:1")]
    code, got, _ = explain(capsys, prog, stream, "why-not", "open(d1)@10")
    assert got["text"] == "open(d1) does not hold at 10: initiated at 3, terminated at 8"
    assert [n["source"] for n in walk(got) if n["kind"] == "event"] == [f"{stream}:2:1"]
    code, got, _ = explain(capsys, prog, stream, "why-not", "open(d2)@10")
    assert got["text"] == "open(d2) never holds: never initiated"
    code, got, _ = explain(capsys, prog, stream, "why-not", "open(d1)@2")
    assert got["text"] == "open(d1) does not hold at 2: first initiated at 3, after 2"
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
