"""``chronolog explain``: an input event cited in an explanation says whether it arrived late —
after the stream had already passed its time (CONTRACT section 2: a delayed event) — in the
text, the JSON (``late: true``, schemas/explanation.schema.json) and the HTML page.  The
expectations are read from the stream here, in arrival order, not by the code under test."""

from __future__ import annotations

import json
from pathlib import Path

import jsonschema
from explaining import explain, files, walk
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from chronolog.cli.main import main

SCHEMA = json.loads((Path(__file__).parents[2] / "schemas" / "explanation.schema.json").read_text())
LARS = "q(X) :- p(X) [2].\nr(X) :- p(X), not s(X) [1].\n"
STREAM = [{"t": 0, "pred": "p", "args": ["a"]}, {"t": 3, "pred": "p", "args": ["b"]}, {"t": 6},
          {"t": 1, "pred": "p", "args": ["c"]}, {"t": 5, "pred": "s", "args": ["b"]},
          {"t": 6, "pred": "p", "args": ["d"]}]


def _late_lines(events: list[dict]) -> set[int]:
    """The 1-based lines of the facts whose time lies before the latest time of an earlier line."""
    out, latest = set(), None
    for n, ev in enumerate(events, 1):
        if latest is not None and ev["t"] < latest and "pred" in ev:
            out.add(n)
        latest = ev["t"] if latest is None else max(latest, ev["t"])
    return out


def _leaves(got: dict) -> dict[str, bool]:
    return {n["source"]: n.get("late", False) for n in walk(got) if n["kind"] == "event"}


def test_a_delayed_event_is_marked_late_in_json_text_and_html(tmp_path, capsys):
    prog, stream = files(tmp_path, "p.lars", LARS, STREAM)
    code, got, err = explain(capsys, prog, stream, "why", "q(c)@2")
    assert code == 0, err
    jsonschema.validate(got, SCHEMA)
    assert _leaves(got) == {f"{stream}:4:1": True}  # p(c) at 1 arrived after time 6
    code, got, _ = explain(capsys, prog, stream, "why", "q(b)@4")
    assert _leaves(got) == {f"{stream}:2:1": False} and "late" not in json.dumps(got)
    code, got, _ = explain(capsys, prog, stream, "why", "q(d)@6")  # at the latest time: not late
    assert _leaves(got) == {f"{stream}:6:1": False}
    capsys.readouterr()
    assert main(["explain", prog, "--input", stream, "--why", "r(c)@1"]) == 0
    text = capsys.readouterr().out
    assert f"input p(c) at 1  [{stream}:4:1]  (arrived late)" in text.splitlines()[3]
    assert main(["explain", prog, "--input", stream, "--why", "q(c)@2", "--as", "html"]) == 0
    assert '</code> <span class="late">arrived late</span></div>' in capsys.readouterr().out
    assert main(["explain", prog, "--input", stream, "--why", "q(c)@2", "--as", "dot"]) == 0
    assert "(arrived late)" in capsys.readouterr().out


def test_a_delayed_interval_fact_of_datalogmtl_is_late(tmp_path, capsys):
    prog, stream = files(tmp_path, "p.mtl", "Alarm(X):-Diamondminus[0,2]Hot(X)\n", [
        {"interval": "[0,1]", "pred": "Hot", "args": ["s1"]}, {"t": 10},
        {"interval": "[5,6]", "pred": "Hot", "args": ["s1"]}])
    code, got, err = explain(capsys, prog, stream, "why", "Alarm(s1)@7")
    assert code == 0, err
    assert _leaves(got) == {f"{stream}:3:1": True}
    code, got, err = explain(capsys, prog, stream, "why", "Alarm(s1)@2")
    assert _leaves(got) == {f"{stream}:1:1": False}


EVENT = st.fixed_dictionaries({"t": st.integers(0, 8), "pred": st.sampled_from(["p", "s"]),
                               "args": st.sampled_from([["a"], ["b"]])})


@settings(max_examples=25, deadline=None, suppress_health_check=list(HealthCheck))
@given(events=st.lists(EVENT, min_size=1, max_size=10), t=st.integers(0, 8))
def test_late_exactly_where_the_stream_had_passed_the_time(tmp_path_factory, capsys, events, t):
    prog, stream = files(tmp_path_factory.mktemp("late"), "p.lars", LARS, [*events, {"t": 8}])
    late = _late_lines(events)
    for atom in ("q(a)", "r(b)"):
        code, got, _ = explain(capsys, prog, stream, "why", f"{atom}@{t}")
        if code != 0:
            continue
        for source, marked in _leaves(got).items():
            assert marked == (int(source.rsplit(":", 2)[1]) in late), (source, got)
