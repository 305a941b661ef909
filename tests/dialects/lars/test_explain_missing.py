"""``chronolog explain --why-not`` names a single missing input event only where adding it
derives the atom (issue 38, item 6): hand-derived cases (a comparison choosing the open
value, an ``at`` literal's time, a negation the event would not get past, a tuple window's
newest fact, named or rejected where it shifts another tuple window), and a property over random programs and streams: for every entry
naming a missing event, ``chronolog run`` on the stream with that event added (arriving in
time order: after the events up to its time, before the first later one) derives the atom at
T; and every rule whose head matches the atom is named, with a literal that fails.  Nested
entries (a negated literal's why-not inside a ``--why``, entries below the top level) name one
the same way, for the atom and time their ``derives`` says, checked alike."""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path

from explaining import explain, files
from hypothesis import HealthCheck, event, given, settings
from hypothesis import strategies as st
from meaning import meaning

from chronolog.cli.main import main
from chronolog.contract.models import Explanation
from chronolog.runtime import explain as runtime_explain

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


def _entries(node: dict, top: bool = True) -> Iterator[tuple[dict, bool]]:
    """Every why-not entry of a tree (whether at its top level), in premises and entries alike."""
    for entry in node.get("why_not", []):
        yield entry, top
        yield from _entries(entry, False)
    for child in node.get("premises", []):
        yield from _entries(child, False)


def test_a_negated_window_names_the_missing_event_at_t_by_hand(tmp_path, capsys):
    # alert(x) at 5: a(x) at 5, and ok(x) at none of 2..5 (window [3]); ok(X) needs b(X) at its
    # point, so b(x) at 5 added derives ok(x) at 5.  The points before T name none: the
    # evaluation of 5 derives ok(x) at 5 only (LARS.md: earlier evaluations' atoms are not carried over)
    program = "alert(X) :- a(X), not ok(X) [3].\nok(X) :- b(X).\n"
    events = [{"t": 0}, {"t": 5, "pred": "a", "args": ["x"]}, {"t": 6}]
    prog, stream = files(tmp_path, "p.lars", program, events)
    code, got, _ = explain(capsys, prog, stream, "why", "alert(x)@5")
    assert code == 0
    Explanation.model_validate(got)
    (negated,) = [c for c in got["premises"] if c.get("negated")]
    assert [e.get("missing") for e in negated["why_not"]] == [None, {
        "pred": "b", "args": ["x"], "time": 5, "text": "b(x) at 5", "derives": {"pred": "ok", "args": ["x"], "time": 5}}]
    assert negated["why_not"][0]["text"].startswith("ok(x) at 2..4: not derived by the evaluation of 5")
    assert negated["why_not"][1]["text"].endswith("; adding b(x) at 5 would derive it")
    assert not _holds(tmp_path, capsys, prog, events, "ok", ("x",), 5)
    assert _holds(tmp_path, capsys, prog, _with(events, {"time": 5, "pred": "b", "args": ["x"]}), "ok", ("x",), 5)
    # without the window: the negated literal's own why-not, at T
    prog, stream = files(tmp_path, "p.lars", "alert(X) :- a(X), not ok(X).\nok(X) :- b(X).\n", events)
    code, got, _ = explain(capsys, prog, stream, "why", "alert(x)@5")
    (negated,) = [c for c in got["premises"] if c.get("negated")]
    assert code == 0 and [e["missing"]["text"] for e in negated["why_not"]] == ["b(x) at 5"]


def test_a_why_not_below_the_top_level_names_the_missing_event_by_hand(tmp_path, capsys):
    # s(a) at 3 fails at q(a), which is derived (no event of its own to add); q(a) fails at p(a):
    # p(a) at 3 derives q(a) at 3 — but r(a) at 2 keeps s(a) out, so only the nested entry names one
    program = "s(X) :- q(X), not r(X) [1].\nq(X) :- p(X).\n"
    events = [{"t": 0}, {"t": 2, "pred": "r", "args": ["a"]}, {"t": 4}]
    prog, stream = files(tmp_path, "p.lars", program, events)
    code, got, _ = explain(capsys, prog, stream, "why-not", "s(a)@3")
    assert code == 0
    Explanation.model_validate(got)
    (top,) = got["why_not"]
    assert top["literal"] == "q(X)" and "missing" not in top
    (below,) = top["why_not"]
    assert below["missing"] == {"pred": "p", "args": ["a"], "time": 3, "text": "p(a) at 3",
                                "derives": {"pred": "q", "args": ["a"], "time": 3}}
    assert not _holds(tmp_path, capsys, prog, _with(events, below["missing"]), "s", ("a",), 3)
    assert _holds(tmp_path, capsys, prog, _with(events, below["missing"]), "q", ("a",), 3)


def test_a_failing_diamond_over_an_at_head_names_the_event_its_points_miss_by_hand(tmp_path, capsys):
    # v(a) at 5 needs w(a) at some point of [3,5] in the evaluation of 5; w(X) at U needs p(X)
    # at U and r(X) at the evaluated point.  p(a) is at 3 only, so w(a) at 5 and 4 miss p (and
    # r: one event cannot do), w(a) at 3 misses r(a) at 5 alone: adding it, the evaluation of 5
    # derives w(a) at 3 (and, with s(a) at 5, v(a) at 5: named at the top too)
    program = "v(X) :- w(X) [2], s(X).\nw(X) at U :- p(X) at U [2], r(X).\n"
    events = [{"t": 0}, {"t": 3, "pred": "p", "args": ["a"]}, {"t": 5, "pred": "s", "args": ["a"]}, {"t": 7}]
    prog, stream = files(tmp_path, "p.lars", program, events)
    code, got, _ = explain(capsys, prog, stream, "why-not", "v(a)@5")
    assert code == 0
    Explanation.model_validate(got)
    (top,) = got["why_not"]
    assert top["literal"] == "w(X) [2]" and top["missing"] == {"pred": "r", "args": ["a"], "time": 5, "text": "r(a) at 5"}
    assert [(e["text"].split(":")[0], e["literal"], e.get("missing")) for e in top["why_not"]] == [
        ("w(a) at 5", "p(X) at U [2]", None), ("w(a) at 4", "p(X) at U [2]", None),
        ("w(a) at 3", "r(X)", {"pred": "r", "args": ["a"], "time": 5, "text": "r(a) at 5",
                               "derives": {"pred": "w", "args": ["a"], "time": 3, "evaluation": 5}})]
    plus = _with(events, {"time": 5, "pred": "r", "args": ["a"]})
    assert not _holds(tmp_path, capsys, prog, events, "w", ("a",), 3)
    assert _holds(tmp_path, capsys, prog, plus, "w", ("a",), 3)
    assert not _holds(tmp_path, capsys, prog, [*plus[:2], {"t": 4}], "w", ("a",), 3)  # not before 5's evaluation
    assert not _holds(tmp_path, capsys, prog, events, "v", ("a",), 5) and _holds(tmp_path, capsys, prog, plus, "v", ("a",), 5)
    # the same as a negated window in a --why: not w(b) [2] holds at 5, r(b) at 5 would end it
    program = "v(X) :- s(X), not w(X) [2].\nw(X) at U :- p(X) at U [2], r(X).\n"
    prog, stream = files(tmp_path, "p.lars", program, [{**e, "args": ["b"]} if "args" in e else e for e in events])
    code, got, _ = explain(capsys, prog, stream, "why", "v(b)@5")
    (negated,) = [c for c in got["premises"] if c.get("negated")]
    assert code == 0 and [e.get("missing", {}).get("text") for e in negated["why_not"]] == [None, None, "r(b) at 5"]


def test_a_negated_literal_of_a_later_evaluation_names_the_event_at_its_point_by_hand(tmp_path, capsys):
    # d(a) at 3 is derived by the evaluation of 5: r(a) at 3 makes k(a) hold at 3 and 4
    # (window [1]), so the evaluations of 3 and 4 do not; at 5, not k(a) holds — and r(a) at 5
    # would make k(a) hold there (the nested atom's time is 5, not the query's 3)
    program = "d(X) at U :- p(X) at U [2], not k(X).\nk(X) :- r(X) [1].\n"
    events = [{"t": 0}, {"t": 3, "pred": "p", "args": ["a"]}, {"t": 3, "pred": "r", "args": ["a"]}, {"t": 8}]
    prog, stream = files(tmp_path, "p.lars", program, events)
    code, got, _ = explain(capsys, prog, stream, "why", "d(a)@3")
    assert code == 0 and got["text"] == "d(a) at 3 (derived by the evaluation of 5)"
    Explanation.model_validate(got)
    (negated,) = [c for c in got["premises"] if c.get("negated")]
    (entry,) = negated["why_not"]
    assert entry["missing"] == {"pred": "r", "args": ["a"], "time": 5, "text": "r(a) at 5",
                                "derives": {"pred": "k", "args": ["a"], "time": 5}}
    assert not _holds(tmp_path, capsys, prog, events, "k", ("a",), 5)
    assert _holds(tmp_path, capsys, prog, _with(events, entry["missing"]), "k", ("a",), 5)


def test_a_diamond_names_an_earlier_point_where_an_event_at_t_would_be_kept_out_by_hand(tmp_path, capsys):
    # q(a) at 4 needs p(a) in [2,4] and not p(a) at 4: p(a) at 4 fails the negation, at 3 it derives q(a)
    program = "q(X) :- p(X) [2], not p(X).\n"
    events = [{"t": 0}, {"t": 6}]
    prog, stream = files(tmp_path, "p.lars", program, events)
    code, got, _ = explain(capsys, prog, stream, "why-not", "q(a)@4")
    assert code == 0
    Explanation.model_validate(got)
    (entry,) = got["why_not"]
    assert entry["missing"] == {"pred": "p", "args": ["a"], "time": 3, "text": "p(a) at 3"}
    assert not _holds(tmp_path, capsys, prog, _with(events, {"time": 4, "pred": "p", "args": ["a"]}), "q", ("a",), 4)
    assert _holds(tmp_path, capsys, prog, _with(events, entry["missing"]), "q", ("a",), 4)


def test_a_box_names_the_one_point_of_its_window_that_lacks_the_event_by_hand(tmp_path, capsys):
    # s(a) at 4 reads q(a) at 4 (a window over a derived atom: the evaluation of 4's only), and
    # q(a) needs p(a) at 3 and 4: p(a) at 4 is there, so p(a) at 3 derives q(a) (and s(a), with r(a))
    program = "s(X) :- q(X) [3], r(X).\nq(X) :- p(X) always [1].\n"
    events = [{"t": 0}, {"t": 4, "pred": "p", "args": ["a"]}, {"t": 4, "pred": "r", "args": ["a"]}, {"t": 6}]
    prog, stream = files(tmp_path, "p.lars", program, events)
    code, got, _ = explain(capsys, prog, stream, "why-not", "s(a)@4")
    assert code == 0
    Explanation.model_validate(got)
    (top,) = got["why_not"]
    (below,) = top["why_not"]
    assert below["reason"] == "p(a) always [1] fails: no matching fact at 3 (window [3,4])"
    assert below["missing"] == {"pred": "p", "args": ["a"], "time": 3, "text": "p(a) at 3",
                                "derives": {"pred": "q", "args": ["a"], "time": 4}}
    assert top["missing"] == {"pred": "p", "args": ["a"], "time": 3, "text": "p(a) at 3"}  # (it derives s(a) too)
    plus = _with(events, below["missing"])
    assert not _holds(tmp_path, capsys, prog, events, "q", ("a",), 4)
    assert _holds(tmp_path, capsys, prog, plus, "q", ("a",), 4) and _holds(tmp_path, capsys, prog, plus, "s", ("a",), 4)
    # a box whose window lacks two points: no single event fills it, none is proposed
    prog, stream = files(tmp_path, "p.lars", program.replace("[1]", "[2]"), events)
    code, got, _ = explain(capsys, prog, stream, "why-not", "s(a)@4")
    assert code == 0 and "missing" not in got["why_not"][0]["why_not"][0]


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
    # a tuple window: the stream up to 3 is p(b) at 0 alone, so p(a) [2 #] fails; p(a) added at
    # 3 is the newest fact, and the last 2 are p(b) at 0 and p(a) at 3: both hold, so it is named
    events = [{"t": 0, "pred": "p", "args": ["b"]}, {"t": 5}]
    program = "q(X) :- p(X) [1 #].\nboth :- p(a) [2 #], p(b) [2 #].\n"
    prog, stream = files(tmp_path, "p.lars", program, events)
    code, got, _ = explain(capsys, prog, stream, "why-not", "both@3")
    (entry,) = got["why_not"]
    assert code == 0 and entry["literal"] == "p(a) [2 #]"
    assert entry["missing"] == {"pred": "p", "args": ["a"], "time": 3, "text": "p(a) at 3"}
    assert not _holds(tmp_path, capsys, prog, events, "both", (), 3)
    assert _holds(tmp_path, capsys, prog, _with(events, entry["missing"]), "both", (), 3)
    # with windows of one tuple, p(a) at 3 shifts p(b) out of p(b) [1 #]: the check rejects it
    # (and no event at another time can help: the window holds the newest fact only)
    program = "q(X) :- p(X) [1 #].\nboth :- p(a) [1 #], p(b) [1 #].\n"
    prog, stream = files(tmp_path, "p.lars", program, events)
    code, got, _ = explain(capsys, prog, stream, "why-not", "both@3")
    (entry,) = got["why_not"]
    assert code == 0 and entry["literal"] == "p(a) [1 #]" and "missing" not in entry
    assert "would derive" not in entry["text"]
    assert not _holds(tmp_path, capsys, prog, _with(events, {"time": 3, "pred": "p", "args": ["a"]}), "both", (), 3)


def test_a_tuple_window_names_the_newest_fact_that_pushes_the_oldest_out_by_hand(tmp_path, capsys):
    # q(a) at 4 needs p(a) among the last 2 facts up to 4: r(a) at 1, r(b) at 2 (r(c) at 5 is
    # later).  p(a) at 4 added is the newest: the window is r(b) at 2, p(a) at 4, so q(a) holds;
    # and s(a) (needing r(a) in the same window) is still kept out, as r(a) is pushed out
    program = "q(X) :- p(X) [2 #].\ns(X) :- p(X) [2 #], r(X) [2 #].\n"
    events = [{"t": 1, "pred": "r", "args": ["a"]}, {"t": 2, "pred": "r", "args": ["b"]},
              {"t": 5, "pred": "r", "args": ["c"]}, {"t": 6}]
    prog, stream = files(tmp_path, "p.lars", program, events)
    code, got, _ = explain(capsys, prog, stream, "why-not", "q(a)@4")
    (entry,) = got["why_not"]
    assert code == 0 and entry["missing"] == {"pred": "p", "args": ["a"], "time": 4, "text": "p(a) at 4"}
    assert entry["text"].endswith("; adding p(a) at 4 would derive it")
    Explanation.model_validate(got)
    plus = _with(events, entry["missing"])
    assert not _holds(tmp_path, capsys, prog, events, "q", ("a",), 4) and _holds(tmp_path, capsys, prog, plus, "q", ("a",), 4)
    # s(a) at 4: p(a) fails first; p(a) at 4 would push r(a) at 1 out of r(X) [2 #]: rejected
    code, got, _ = explain(capsys, prog, stream, "why-not", "s(a)@4")
    (entry,) = got["why_not"]
    assert code == 0 and entry["literal"] == "p(X) [2 #]" and "missing" not in entry
    assert not _holds(tmp_path, capsys, prog, plus, "s", ("a",), 4)



def test_a_box_over_a_tuple_window_is_proposed_only_where_one_fact_fills_it_by_hand(tmp_path, capsys, monkeypatch):
    """q(X) :- p(X) always [2 #]: the newest fact at T and the one before it fill the window,
    whose box covers every point from that one's time.  With p(b) at 3 before, p(a) at 4
    leaves 3 without p(a): not proposed, so the one check a budget of 1 allows goes to the
    next rule's r(a) at 4 (before, the box's spent it and nothing was named).  With p(a) at 3,
    p(a) at 4 fills [3,4]; with p(a) at 4 already, another p(a) at 4 fills [4,4] — named, and
    run confirms each."""
    monkeypatch.setattr(runtime_explain, "MISSING_BUDGET", 1)
    program = "q(X) :- p(X) always [2 #].\nq(X) :- r(X).\n"
    for before, named in (("p(b) at 3", ("r", 4)), ("p(a) at 3", ("p", 4)), ("p(a) at 4", ("p", 4))):
        pred, arg, at = before[0], before[2], int(before[-1])
        events = [{"t": 0}, {"t": at, "pred": pred, "args": [arg]}, {"t": 6}]
        prog, stream = files(tmp_path, "box.lars", program, events)
        code, got, err = explain(capsys, prog, stream, "why-not", "q(a)@4")
        assert code == 0, err
        box, plain = got["why_not"]
        (entry,) = [e for e in (box, plain) if "missing" in e]
        assert (entry["missing"]["pred"], entry["missing"]["time"]) == named, before
        assert _holds(tmp_path, capsys, prog, _with(events, entry["missing"]), "q", ("a",), 4)
    assert not _holds(tmp_path, capsys, prog, _with([{"t": 0}, {"t": 3, "pred": "p", "args": ["b"]}, {"t": 6}],
                                                     {"pred": "p", "args": ["a"], "time": 4}), "q", ("a",), 4)


@settings(max_examples=100, deadline=None, suppress_health_check=list(HealthCheck))
@given(size=st.integers(1, 3), events=st.lists(st.builds(lambda t, arg: {"t": t, "pred": "p", "args": [arg]},
                                                          st.integers(0, 6), st.sampled_from(["a", "b"])), max_size=6),
       t=st.integers(0, 6))
def test_a_box_over_a_tuple_window_skips_exactly_the_newest_facts_that_do_not_fill_it(tmp_path_factory, capsys,
                                                                                       size, events, t):
    """q(a) :- p(a) always [n #], where q(a) does not hold at T: p(a) at T is named exactly
    where run, with it added, derives q(a) at T — the check skipped where one fact cannot
    fill the window is skipped only where it would fail."""
    tmp = tmp_path_factory.mktemp("boxtuple")
    stream_events = [{"t": 0}, *sorted(events, key=lambda e: e["t"]), {"t": 6}]
    prog, stream = files(tmp, "box.lars", f"q(X) :- p(X) always [{size} #].\n", stream_events)
    code, got, err = explain(capsys, prog, stream, "why-not", f"q(a)@{t}")
    if code == 1:
        return
    assert code == 0, err
    (entry,) = got["why_not"]
    works = _holds(tmp, capsys, prog, _with(stream_events, {"pred": "p", "args": ["a"], "time": t}), "q", ("a",), t)
    assert ("missing" in entry) == works, entry
    event("named" if works else "none named")

RULES = ["q(X) :- p(X).", "q(X) :- p(X) [2].", "q(X) :- p(X) [2 #].", "q(X) :- p(X) always [1].",
         "q(X) :- p(X) [2], not r(X) [1].", "s(X) :- q(X), not r(X).", "s(X) :- p(X), r(X) [2].",
         "u(X) :- s(X), q(X) [1].", "q(X) :- p(X) at T [3], T > 1.", "s(X) :- r(X) at T [2], p(X) [1].",
         "u(X) :- p(X) [3], not s(X).", "v(X) :- r(X), not p(X) [2].",
         # an @-head's atoms at the points of a window: nested entries at times other than T
         "d(X) at U :- p(X) at U [2], r(X).", "s(X) :- d(X) [2].", "v(X) :- p(X), not d(X) [2].",
         "u(X) :- d(X) always [1].", "q(X) :- p(X) [2], not p(X).", "u(X) :- q(X) [2], r(X) always [2].",
         # tuple windows: an added fact is the newest, and shifts every other literal's tuple window
         "s(X) :- p(X) [1 #], r(X) [2 #].", "u(X) :- r(X) [3 #], not p(X) [1 #].", "v(X) :- p(X) always [2 #].",
         "q(X) :- p(X) at T [2 #], T > 2."]
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
    _named_events_derive(tmp, capsys, prog, stream_events, got, (pred, (arg,), t), derived)


def _named_events_derive(tmp: Path, capsys, prog: str, events: list[dict], tree: dict,  # noqa: ANN001
                         query: tuple[str, tuple, int], derived: set[str]) -> None:
    """Every missing event named anywhere in the tree, added alone, derives its atom: the
    query's at the top level, the one ``derives`` names below it (which run's answers lack;
    an @-head's atom: which the evaluation ``derives`` names derives only with the event)."""
    # the point whose evaluation the tree is about: T, or the one an @-head's --why names
    point = int(tree["text"].split("(derived by the evaluation of ")[1].split(")")[0]) \
        if "(derived by the evaluation of " in tree["text"] else query[2]
    for entry, top in _entries(tree):
        if "missing" not in entry:
            continue
        missing = entry["missing"]
        assert ("derives" in missing) is not top, entry
        goal = query if top else (missing["derives"]["pred"], tuple(missing["derives"]["args"]),
                                  missing["derives"]["time"])
        # an input predicate, on the timeline of the evaluation of T (an @-head's atom below
        # it may be dated earlier than the event)
        assert missing["time"] <= point and missing["pred"] not in derived
        evaluation = None if top else missing["derives"].get("evaluation")
        if evaluation is None:
            assert not _holds(tmp, capsys, prog, events, *goal), entry
            assert _holds(tmp, capsys, prog, _with(events, missing), *goal), entry
        else:  # an @-head's atom: that point's evaluation derives it with the event, not without
            assert evaluation == point and goal[2] <= evaluation, entry
            assert not _evaluation_derives(tmp, capsys, prog, events, goal, evaluation), entry
            assert _evaluation_derives(tmp, capsys, prog, _with(events, missing), goal, evaluation), entry


def _evaluation_derives(tmp: Path, capsys, prog: str, events: list[dict], goal: tuple[str, tuple, int],  # noqa: ANN001
                        e: int) -> bool:
    """Whether the evaluation of the point ``e`` derives the goal: ``run`` on the stream up to
    ``e`` holds it, and on the stream up to ``e - 1`` (the same evaluations before ``e``) not."""
    def upto(t: int) -> bool:
        part = [ev for ev in events if ev["t"] <= t]
        return bool(part) and _holds(tmp, capsys, prog, [*part, {"t": t}], *goal)

    return upto(e) and not upto(e - 1)


# negated derived atoms that hold, so that a --why has their why-not entries to name events in
NEGATING = ["w(X) :- r(X), not q(X).", "w(X) :- r(X), not q(X) [2].", "w(X) :- r(X), not s(X) [1].",
            "w(X) :- r(X), not d(X) [2]."]


@SETTINGS
@given(rules=st.lists(st.sampled_from(RULES), min_size=1, max_size=4, unique=True),
       negating=st.lists(st.sampled_from(NEGATING), min_size=1, max_size=2, unique=True),
       events=st.lists(EVENT, min_size=0, max_size=10), t=st.integers(0, 8), arg=st.sampled_from(["a", "b"]))
def test_a_missing_event_named_in_a_why_derives_its_atom(tmp_path_factory, capsys, rules, negating, events, t,
                                                        arg):
    tmp = tmp_path_factory.mktemp("missing-why")
    stream_events = [{"t": 0}, *events, {"t": t, "pred": "r", "args": [arg]}, {"t": 8}]  # (w's r: there)
    rules = [*rules, *negating]
    prog, stream = files(tmp, "p.lars", "\n".join(rules) + "\n", stream_events)
    code, got, err = explain(capsys, prog, stream, "why", f"w({arg})@{t}")
    if code == 1:
        return  # it does not hold
    assert code == 0, err
    Explanation.model_validate(got)
    _named_events_derive(tmp, capsys, prog, stream_events, got, ("w", (arg,), t), {r.split("(")[0] for r in rules})


# @-head rules dating d back, and rules reading d through a window (its atoms at the window's
# points, which the evaluation of T derives or not: nested entries at times before T)
DATING = ["d(X) at U :- p(X) at U [2], r(X).", "d(X) at U :- r(X) at U [2], p(X).",
          "d(X) at U :- p(X) at U [1], not r(X) [2].", "d(X) at U :- p(X) at U [2], not k(X)."]
READING = ["s(X) :- d(X) [2].", "v(X) :- p(X), not d(X) [2].", "u(X) :- d(X) always [1].", "v(X) :- d(X) at 2 [3].",
           "u(X) :- r(X), not d(X).", "k(X) :- r(X) [1]."]


@SETTINGS
@given(dating=st.lists(st.sampled_from(DATING), min_size=1, max_size=2, unique=True),
       reading=st.lists(st.sampled_from(READING), min_size=1, max_size=3, unique=True),
       events=st.lists(EVENT, min_size=1, max_size=10), t=st.integers(0, 8),
       pred=st.sampled_from(["s", "u", "v", "d"]), arg=st.sampled_from(["a", "b"]))
def test_nested_entries_at_other_times_name_events_that_derive_their_atoms(tmp_path_factory, capsys, dating, reading,
                                                                          events, t, pred, arg):
    """An atom an ``@``-head dates back, read at a window's points: a nested entry for each
    point names a missing event only where, added, it makes that point's evaluation derive
    that atom (checked with ``run``; it did not without it), in --why (a negated window) and
    --why-not (a failing diamond or box) alike; and a --why of an atom an @-head dates back
    names, for a negated literal of the later evaluation that derives it, events at that point."""
    tmp = tmp_path_factory.mktemp("dated")
    stream_events = [{"t": 0}, *events, {"t": 8}]
    rules = [*dating, *reading]
    prog, stream = files(tmp, "p.lars", "\n".join(rules) + "\n", stream_events)
    code, got, err = explain(capsys, prog, stream, "why", f"{pred}({arg})@{t}")
    if code == 1:
        code, got, err = explain(capsys, prog, stream, "why-not", f"{pred}({arg})@{t}")
    assert code == 0, err
    Explanation.model_validate(got)
    _named_events_derive(tmp, capsys, prog, stream_events, got, (pred, (arg,), t), {r.split("(")[0] for r in rules})
