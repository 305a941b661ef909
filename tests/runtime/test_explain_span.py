"""An explanation at T evaluates only the input the answers at T depend on
(``runtime.explain.reaching``), so that its time does not grow with the stream.

Checked as behaviour, not as a timing: at an early T of a long stream (late events and
retractions included), LARS's ``--why`` and ``--why-not`` give exactly what an evaluation of
the whole stream cut after T (plus the ``@``-heads' reach) gives; DatalogMTL's, whose
intervals the input before the warm-up and after T may both extend, exactly what an
evaluation of the whole input gives (a cut at the warm-up showed ``Q(a) on [1,3]`` for
``[0,3]``: the example below)."""

from __future__ import annotations

import dataclasses
import json
from fractions import Fraction

from hypothesis import HealthCheck, example, given, settings
from hypothesis import strategies as st

from chronolog.core.events import Event
from chronolog.dialects.registry import RunOptions, lookup
from chronolog.runtime.explain import NotSo, Query, explain, sliced, with_lines

SETTINGS = settings(max_examples=40, deadline=None, suppress_health_check=list(HealthCheck))
END = 60  # the long stream's last time; T stays below EARLY
EARLY = 12

LARS_RULES = ["q(X) :- p(X) [2].", "q(X) :- p(X) [2 #].", "q(X) :- p(X) always [1].",
              "q(X) :- p(X) [2], not r(X) [1].", "s(X) :- q(X), not r(X).", "s(X) :- p(X), r(X) [3].",
              "w(X) at U :- p(X) at U [2], not r(X) [1].", "v(X) :- w(X) always [1]."]
AHEAD = 2  # the @-head above derives up to 2 points back: the answers at T read the input up to T + 2
LARS_EVENT = st.builds(lambda t, pred, arg, retract: {"t": t, "pred": pred, "args": [arg],
                                                       **({"op": "retract"} if retract else {})},
                       st.integers(0, END), st.sampled_from(["p", "r"]), st.sampled_from(["a", "b"]),
                       st.booleans())


def _explained(program_text: str, name: str, streams: list[list[dict | None]], query: Query,
               mode: str) -> list:
    """The explanation (its JSON data, or the message of exit 1) on each stream, the first
    evaluated as ``explain`` does, the others on their whole input (no reach): every stream
    read under the same file name, so that sources compare (None: a blank line, so that the
    lines kept keep their numbers)."""
    program = lookup("lars" if name.endswith(".lars") else "mtl").parse([(name, program_text)])
    row = lookup(program.dialect)
    out = []
    for k, stream in enumerate(streams):
        r = row if k == 0 else dataclasses.replace(row, reach=lambda program: None)
        lines = [("" if e is None else json.dumps(e)) + "\n" for e in stream]
        events = list(with_lines(row.read, program, "in.jsonl", lines, "jsonl", "fail", lambda m: None))
        try:
            out.append(explain(r, program, r.evaluator(program, RunOptions(), lambda m: None), events, query,
                               mode).data())
        except NotSo as exc:
            out.append(str(exc))
    return out


@SETTINGS
@given(rules=st.lists(st.sampled_from(LARS_RULES), min_size=1, max_size=4, unique=True),
       early=st.lists(LARS_EVENT.filter(lambda e: e["t"] <= EARLY + AHEAD), min_size=1, max_size=10),
       rest=st.lists(LARS_EVENT, min_size=20, max_size=60), t=st.integers(0, EARLY),
       pred=st.sampled_from(["q", "s", "v", "w"]), arg=st.sampled_from(["a", "b"]))
@example(rules=["q(X) :- p(X) [2].", "w(X) at U :- p(X) at U [2], not r(X) [1].", "v(X) :- w(X) always [1]."],
         early=[{"t": 1, "pred": "p", "args": ["a"]}, {"t": 2, "pred": "p", "args": ["a"]}],
         rest=[{"t": 40, "pred": "p", "args": ["a"]}, {"t": 1, "pred": "r", "args": ["a"]},
               {"t": 3, "pred": "p", "args": ["a"]}, {"t": 2, "pred": "p", "args": ["a"], "op": "retract"}],
         t=2, pred="v", arg="a")
def test_lars_explanation_at_an_early_time_is_that_of_the_stream_cut_after_it(rules, early, rest, t, pred, arg):
    """On the stream cut after T (and the @-heads' reach), evaluated whole."""
    stream = [{"t": 0}, *early, *rest, {"t": END}]  # (rest: late events and retractions among later ones)
    horizon = t + AHEAD
    cut = [*(e if e["t"] <= horizon else None for e in stream), {"t": horizon}]
    for mode in ("why", "why-not"):
        got, want = _explained("\n".join(rules) + "\n", "p.lars", [stream, cut], Query(pred, (arg,), t, "q"), mode)
        # (an event the whole stream delivers late may be on time in the cut one, which lacks
        # the later times it arrived after: the trees agree but for that mark)
        assert _unmarked(got) == _unmarked(want)


def _unmarked(data: object) -> object:
    """The JSON data without its ``late`` marks."""
    if isinstance(data, dict):
        return {k: _unmarked(v) for k, v in data.items() if k != "late"}
    if isinstance(data, list):
        return [_unmarked(v) for v in data]
    return data




MTL_RULES = ["Q(X):-Diamondminus[0,2]P(X)", "Q(X):-Boxminus[0,1]P(X)", "Q(X):-P(X),R(X)",
             "S(X):-Diamondminus[0,1]Q(X)", "S(X):-Q(X), not R(X)"]
MTL_FACT = st.builds(lambda lo, n, pred, arg: {"interval": f"[{lo},{lo + n}]", "pred": pred, "args": [arg]},
                     st.integers(0, END), st.integers(0, 6), st.sampled_from(["P", "R"]), st.sampled_from(["a", "b"]))


@SETTINGS
@given(rules=st.lists(st.sampled_from(MTL_RULES), min_size=1, max_size=3, unique=True),
       facts=st.lists(MTL_FACT, min_size=10, max_size=40), q=st.integers(0, 4 * EARLY),
       pred=st.sampled_from(["Q", "S"]), arg=st.sampled_from(["a", "b"]))
@example(rules=["Q(X):-Diamondminus[0,2]P(X)"], facts=[{"interval": "[0,1]", "pred": "P", "args": ["a"]}] * 10,
         q=9, pred="Q", arg="a")
def test_mtl_explanation_at_an_early_time_is_that_of_the_whole_input(rules, facts, q, pred, arg):
    stream = [{"t": 0}, *facts, {"t": END + 6}]
    t = Fraction(q, 4)
    query = Query(pred, (arg,), t.numerator if t.denominator == 1 else t, "q")
    for mode in ("why", "why-not"):
        got, want = _explained("\n".join(rules) + "\n", "p.mtl", [stream, stream], query, mode)
        assert got == want


def test_lars_choices_kept_from_before_the_warm_up_are_explained_as_run_made_them() -> None:
    """a or b (window 3); r(1) at 10 rules b out there, and the TMS keeps a from then on,
    though a fresh evaluation from a later start would choose b again: at 30, ``run``'s
    answer set has a(1), and so does the explanation's (it evaluates the whole input)."""
    program = ("a(X) :- p(X) [3], not b(X).\nb(X) :- p(X) [3], not a(X).\n"
               "f(X) :- a(X), q(X) [0], not f(X).\ng(X) :- b(X), r(X) [0], not g(X).\n")
    stream: list[dict | None] = [{"t": t, "pred": "p", "args": [1]} for t in range(40)]
    stream.insert(11, {"t": 10, "pred": "r", "args": [1]})
    for t, holds, other in ((5, "b", "a"), (12, "a", "b"), (30, "a", "b")):
        why, = _explained(program, "p.lars", [stream], Query(holds, (1,), t, "q"), "why")
        assert isinstance(why, dict) and why["atom"] == f"{holds}(1)"
        not_so, = _explained(program, "p.lars", [stream], Query(other, (1,), t, "q"), "why")
        assert not_so == f"q: {other}(1) does not hold at {t} (ask --why-not)"


def test_a_slice_keeps_the_times_and_the_span_of_what_it_leaves_out():
    """``sliced``: the events the dialect's test keeps; of the others, a time advance where one
    was the latest so far (the evaluator goes through the same times) unless a kept event of
    that time comes next in the slice (it advances the time as far: caviar's slices had
    thousands of such advances), and the event itself where it reaches further than all before
    it (an interval fact's end) or starts earlier."""
    mine = lambda ev: ev.args == ("a",)  # noqa: E731
    row = dataclasses.replace(lookup("mtl"), relevant=lambda program: lambda atom, evaluator, events: mine)
    p = lambda t, arg, span=None: Event(t, "P", (arg,), span=span)  # noqa: E731
    events = [p(1, "b"), p(1, "a"), p(2, "b", (2, True, 9, True)), p(3, "b"), p(3, "b"), p(3, "a"), p(5, "b"),
              p(0, "b"), p(4, "b", (4, True, 6, True)), p(6, "b"), p(7, "a"), Event(8)]
    got = sliced(row, None, events, ("Q", ("a",)), None)
    assert got == [p(1, "a"), p(2, "b", (2, True, 9, True)), p(3, "a"), Event(5), p(0, "b"), Event(6), p(7, "a"),
                   Event(8)]
    assert sliced(dataclasses.replace(row, relevant=lambda program: lambda atom, evaluator, events: None), None,
                  events, ("Q", ("a",)), None) == events  # (a dialect that cannot tell: all of it)
