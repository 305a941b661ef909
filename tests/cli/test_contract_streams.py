"""CONTRACT §2-§3 and LARS.md through `chronolog run`, on hand-made streams with hand-derived answers.

The edges the texts imply: every LARS operator at its window's ends, which event a
retraction withdraws, where a delayed fact stands in a tuple window, an empty stream,
blank lines, negative and large times and non-ASCII constants.
"""

from __future__ import annotations

import json

from test_cli import answer_meaning, chronolog

# One rule per operator of LARS.md (with `in`, units and every comment form).
OPERATORS = """\
% diamond, box, [0], the clipped box
d :- p(a) [2].
bx :- p(a) always in [1].
b0 :- p(a) [0].
bx0 :- p(a) always [0].
at1(T) :- p(a) at T in [2].   // @_T inside a window binds T
at2(T) :- p(a) at T.          /* @_T on the timeline [t1, now] */
fix :- p(a) at 4 [3].
nd :- not p(a) [1].
twb :- b [2 #].               %* tuple windows: the last 2 stream facts *%
twbox :- p(a) always [2 #].
twat(T) :- p(a) at T [2 #].
late at T :- b, p(a) at T [2].
sec :- b [2 sec].
mn :- b [1 min].
"""
# p(a) at 2, 4, 5; b at 3; the stream ends at 8 (t1 = 2: windows are clipped there).
OPERATOR_EVENTS = [{"t": 2, "pred": "p", "args": ["a"]}, {"t": 3, "pred": "b", "args": []},
                   {"t": 4, "pred": "p", "args": ["a"]}, {"t": 5, "pred": "p", "args": ["a"]}, {"t": 8}]
OPERATOR_ANSWERS = {
    ("d", ()): [2, 3, 4, 5, 6, 7],  # some p(a) in [t-2, t]: none in [6, 8]
    ("bx", ()): [2, 5],  # [2,2] (clipped at t1) and [4,5] are all p(a)
    ("b0", ()): [2, 4, 5],
    ("bx0", ()): [2, 4, 5],
    ("at1", (2,)): [2, 3, 4], ("at1", (4,)): [4, 5, 6], ("at1", (5,)): [5, 6, 7],
    ("at2", (2,)): [2, 3, 4, 5, 6, 7, 8], ("at2", (4,)): [4, 5, 6, 7, 8], ("at2", (5,)): [5, 6, 7, 8],
    ("fix", ()): [4, 5, 6, 7],  # 4 in [t-3, t]
    ("nd", ()): [7, 8],  # no p(a) in [t-1, t]
    ("twb", ()): [3, 4],  # b among the last two facts: {p@2, b@3}, {b@3, p@4}
    # fewer than 2 facts at 2: timeline [t1, 2]; at 5 the last two are p@4, p@5: [4, 5] is all p(a);
    # at 6.. the same two facts, but the timeline [4, t] has no p(a) at 6
    ("twbox", ()): [2, 5],
    ("twat", (2,)): [2, 3], ("twat", (4,)): [4, 5, 6, 7, 8], ("twat", (5,)): [5, 6, 7, 8],
    ("late", ()): [2],  # derived at 3 (b), dated 2 by the @-head
    ("sec", ()): [3, 4, 5],
    ("mn", ()): [3, 4, 5, 6, 7, 8],
}


def _jsonl(events: list[dict]) -> str:
    return "".join(json.dumps(e, ensure_ascii=False) + "\n" for e in events)


def _run(files, program: str, events: list[dict] | str, *args: str):
    text = events if isinstance(events, str) else _jsonl(events)
    proc = chronolog("run", files("p.lars", program), "--input", files("in.jsonl", text), *args)
    assert proc.returncode == 0, proc.stderr
    return proc


def test_every_lars_operator_at_the_ends_of_its_window(files):
    proc = _run(files, OPERATORS, OPERATOR_EVENTS)
    want = {(p, a, t) for (p, a), ts in OPERATOR_ANSWERS.items() for t in ts}
    assert answer_meaning(proc.stdout, (2, 8)) == want


def test_a_retraction_withdraws_the_latest_matching_event(files):
    # At 5 the facts arrive p(a), q(b), p(a); the retraction takes the second p(a) away,
    # so the last fact of time 5 is q(b): s(b) holds and r(a) does not.  Withdrawing the
    # first p(a) instead would leave p(a) last.
    program = "r(X) :- p(X) [1 #].\ns(X) :- q(X) [1 #].\n"
    p, q = {"t": 5, "pred": "p", "args": ["a"]}, {"t": 5, "pred": "q", "args": ["b"]}
    proc = _run(files, program, [p, q, p, {**p, "op": "retract"}])
    assert answer_meaning(proc.stdout, (5, 5)) == {("s", ("b",), 5)}


def test_a_retraction_before_its_event_matches_nothing(files):
    program = "r(X) :- p(X) [1 #].\n"
    p = {"t": 5, "pred": "p", "args": ["a"]}
    proc = _run(files, program, [{**p, "op": "retract"}, p, {"t": 6}])
    assert "in.jsonl:1:" in proc.stderr and "matches no earlier event" in proc.stderr
    assert answer_meaning(proc.stdout, (5, 6)) == {("r", ("a",), 5), ("r", ("a",), 6)}


def test_a_delayed_fact_counts_in_a_tuple_window_among_the_facts_of_its_own_time(files):
    # p(b)@5 arrives after q@6: in time order the stream is p(a)@5, p(b)@5, q@6.
    program = "one(X) :- p(X) [1 #].\nlastq :- q [1 #].\ntwo(X) :- p(X) [2 #].\n"
    events = [{"t": 5, "pred": "p", "args": ["a"]}, {"t": 6, "pred": "q", "args": []},
              {"t": 5, "pred": "p", "args": ["b"]}, {"t": 7}]
    proc = _run(files, program, events)
    assert answer_meaning(proc.stdout, (5, 7)) == {
        ("one", ("b",), 5), ("two", ("a",), 5), ("two", ("b",), 5),
        ("lastq", (), 6), ("lastq", (), 7), ("two", ("b",), 6), ("two", ("b",), 7)}


def test_an_empty_stream_answers_nothing_and_blank_lines_are_skipped(files):
    program = "q(X) :- p(X) [2].\nalways_on :- not p(zzz).\n"
    proc = _run(files, program, "")
    assert proc.stdout == "" and proc.stderr == ""
    proc = _run(files, program, '\n{"t": 1, "pred": "p", "args": ["a"]}\n\n  \n{"t": 3}\n')
    assert answer_meaning(proc.stdout, (1, 3)) == {("q", ("a",), t) for t in (1, 2, 3)} | {
        ("always_on", (), t) for t in (1, 2, 3)}


def test_negative_and_large_times_and_non_ascii_constants_keep_their_values(files):
    program = "q(X, Y) :- p(X, Y) [2].\n"
    proc = _run(files, program, [{"t": -2, "pred": "p", "args": ["ü→é", -3]}, {"t": 0}])
    assert answer_meaning(proc.stdout, (-2, 0)) == {("q", ("ü→é", -3), t) for t in (-2, -1, 0)}
    big = 10**12  # (every point of the span is evaluated: the stream starts there)
    proc = _run(files, program, [{"t": big, "pred": "p", "args": ["名前", 2**62]}, {"t": big + 3}])
    assert answer_meaning(proc.stdout, (big, big + 3)) == {("q", ("名前", 2**62), t) for t in (big, big + 1, big + 2)}
