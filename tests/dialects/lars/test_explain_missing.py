"""``chronolog explain --why-not`` names a single missing input event only where adding it
derives the atom (issue 38, item 6): hand-derived cases (a comparison choosing the open
value, an ``at`` literal's time, a negation the event would not get past, a tuple window
the event would shift), and a property over random programs and streams: for every entry
naming a missing event, ``chronolog run`` on the stream with that event added (arriving in
time order: after the events up to its time, before the first later one) derives the atom at
T; and every rule whose head matches the atom is named, with a literal that fails."""

from __future__ import annotations

import json
from pathlib import Path

from explaining import explain, files
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from meaning import meaning

from chronolog.cli.main import main
from chronolog.contract.models import Explanation

SETTINGS = settings(max_examples=150, deadline=None, suppress_health_check=list(HealthCheck))


def _with(events: list[dict], missing: dict) -> list[dict]:
    """The stream with the missing event arriving right after the last event of a time up to its own."""
    ev = {"t": missing["time"], "pred": missing["pred"], "args": missing["args"]}
    at = max((i + 1 for i, e in enumerate(events) if e["t"] <= ev["t"]), default=0)
    return [*events[:at], ev, *events[at:]]


def _holds(tmp: Path, capsys, prog: str, events: list[dict], pred: str, args: tuple, t: int) -> bool:  # noqa: ANN001
    stream = tmp / "plus.jsonl"
    stream.write_text("".join(json.dumps(e) + "\n" for e in [*events, {"t": max(t, events[-1]["t"])}]))
    capsys.readouterr()
    assert main(["run", prog, "--input", str(stream)]) == 0
    lines = [json.loads(x) for x in capsys.readouterr().out.splitlines()]
    return (pred, args, t) in meaning(lines, (0, max(t, events[-1]["t"])))


def test_the_missing_speed_reading_by_hand(tmp_path, capsys):
    program = "slow(V) :- speed(V, S) [3], S < 30.\n"
    events = [{"t": 0, "pred": "speed", "args": ["a1", 50]}, {"t": 5}]
    prog, stream = files(tmp_path, "p.lars", program, events)
    code, got, _ = explain(capsys, prog, stream, "why-not", "slow(a1)@4")
    (entry,) = got["why_not"]
    assert code == 0 and entry["missing"] == {"pred": "speed", "args": ["a1", 29], "time": 4,
                                              "text": "speed(a1, 29) at 4"}
    assert entry["text"].endswith("; adding speed(a1, 29) at 4 would derive it")
    Explanation.model_validate(got)
    assert _holds(tmp_path, capsys, prog, _with(events, entry["missing"]), "slow", ("a1",), 4)


def test_an_at_literal_names_its_time(tmp_path, capsys):
    program = "late(X) :- p(X) at U [3], U > 2.\n"
    events = [{"t": 0, "pred": "p", "args": ["a"]}, {"t": 6}]
    prog, stream = files(tmp_path, "p.lars", program, events)
    code, got, _ = explain(capsys, prog, stream, "why-not", "late(a)@5")
    (entry,) = got["why_not"]
    assert code == 0 and entry["missing"]["text"] == "p(a) at 5"  # window [2,5], U > 2: the latest, 5


def test_no_claim_where_a_negation_blocks_or_a_tuple_window_shifts(tmp_path, capsys):
    # q(a) needs p(a) in [2] and no r(a) in [1]: r(a) at 3 blocks it whatever p event is added
    prog, stream = files(tmp_path, "p.lars", "q(X) :- p(X) [2], not r(X) [1].\n",
                         [{"t": 3, "pred": "r", "args": ["a"]}, {"t": 5}])
    code, got, _ = explain(capsys, prog, stream, "why-not", "q(a)@3")
    assert code == 0 and "missing" not in got["why_not"][0] and "would derive" not in got["why_not"][0]["text"]
    # without r(a) the same question names p(a) at 3
    prog, stream = files(tmp_path, "p.lars", "q(X) :- p(X) [2], not r(X) [1].\n", [{"t": 0}, {"t": 5}])
    code, got, _ = explain(capsys, prog, stream, "why-not", "q(a)@3")
    assert got["why_not"][0]["missing"]["text"] == "p(a) at 3"
    # a tuple window: a p(a) added at 3 is the last fact, so it is claimed; b's rule needs both
    prog, stream = files(tmp_path, "p.lars", "q(X) :- p(X) [1 #].\nboth :- p(a) [2 #], p(b) [2 #].\n",
                         [{"t": 0, "pred": "p", "args": ["b"]}, {"t": 5}])
    code, got, _ = explain(capsys, prog, stream, "why-not", "both@3")
    assert code == 0 and "missing" not in got["why_not"][0]  # tuple windows: never claimed


RULES = ["q(X) :- p(X).", "q(X) :- p(X) [2].", "q(X) :- p(X) [2 #].", "q(X) :- p(X) always [1].",
         "q(X) :- p(X) [2], not r(X) [1].", "s(X) :- q(X), not r(X).", "s(X) :- p(X), r(X) [2].",
         "u(X) :- s(X), q(X) [1].", "q(X) :- p(X) at T [3], T > 1.", "s(X) :- r(X) at T [2], p(X) [1].",
         "u(X) :- p(X) [3], not s(X).", "v(X) :- r(X), not p(X) [2]."]
EVENT = st.builds(lambda t, pred, arg, retract: {"t": t, "pred": pred, "args": [arg],
                                                  **({"op": "retract"} if retract else {})},
                  st.integers(0, 8), st.sampled_from(["p", "r"]), st.sampled_from(["a", "b"]), st.booleans())


@SETTINGS
@given(rules=st.lists(st.sampled_from(RULES), min_size=1, max_size=4, unique=True),
       events=st.lists(EVENT, min_size=0, max_size=10), t=st.integers(0, 8),
       pred=st.sampled_from(["q", "s", "u", "v"]), arg=st.sampled_from(["a", "b"]))
def test_a_named_missing_event_derives_the_atom(tmp_path_factory, capsys, rules, events, t, pred, arg):
    tmp = tmp_path_factory.mktemp("missing")
    stream_events = [{"t": 0}, *events, {"t": 8}]
    prog, stream = files(tmp, "p.lars", "\n".join(rules) + "\n", stream_events)
    code, got, err = explain(capsys, prog, stream, "why-not", f"{pred}({arg})@{t}")
    if code == 1:
        return  # it holds
    assert code == 0, err
    Explanation.model_validate(got)
    heads = [r for r in rules if r.startswith(pred + "(")]
    entries = got.get("why_not", [])
    assert [e["rule"]["text"].split(" :- ")[0].split("(")[0] for e in entries] == [pred] * len(heads)
    capsys.readouterr()
    assert main(["run", prog, "--input", stream]) == 0
    reference = meaning([json.loads(x) for x in capsys.readouterr().out.splitlines()], (0, 8))
    derived = {r.split("(")[0] for r in rules}
    for entry in entries:
        assert entry.get("literal") or "answer set" in entry["text"], entry  # a failing literal, named
        name, _, var = entry.get("literal", "").partition("(")
        if name in derived and var.endswith(")") and var[:-1] in entry["bindings"]:  # an atom read at T
            assert (name, (entry["bindings"][var[:-1]],), t) not in reference, entry  # fails in run's answers
        if "missing" in entry:
            assert entry["missing"]["time"] <= t and entry["missing"]["pred"] not in derived  # an input predicate
            assert _holds(tmp, capsys, prog, _with(stream_events, entry["missing"]), pred, (arg,), t), entry
