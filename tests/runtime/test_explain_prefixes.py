"""``--why-not``'s missing-event check evaluates the input before each candidate's place once
and each candidate from its place on (``explain.Prefixes``, an evaluator's state kept and
given to a new one mid-stream): its answer lines mean exactly what evaluating the whole input
with the candidate added means (``answers_with``, one new evaluator from the start), for
random programs, streams (late events and retractions included) and candidates of every
dialect."""

from __future__ import annotations

import io
import json

import pytest
from dialect_programs import LARS_RULES, MTL_RULES, RTEC_NEW, RTEC_OLD
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from meaning import meaning, sampled_meaning

from chronolog.dialects.registry import RunOptions, lookup
from chronolog.runtime.explain import Prefixes, answers_with, parse_query, place

SETTINGS = settings(max_examples=40, deadline=None, suppress_health_check=list(HealthCheck))
HI = 12
ARGS = st.sampled_from(["a", "b"])


def _check(dialect: str, text: str, stream: list[dict], candidates: list[dict], query: str,
           sense) -> None:  # type: ignore[no-untyped-def]
    row = lookup(dialect)
    program = row.parse([("prog", text)])

    def read(records: list[dict]) -> list:
        lines = "".join(json.dumps(e) + "\n" for e in records)
        return list(row.read(program, io.StringIO(lines), "s", "jsonl", "fail", lambda m: None))

    events, extra = read(stream), read(candidates)
    q = parse_query(query, row.discrete)
    fresh = lambda: row.evaluator(program, RunOptions(), lambda m: None)  # noqa: E731
    prefixes = Prefixes(fresh, events, {place(events, ev) for ev in extra})
    assert prefixes.kept, "no state kept: the check would compare the whole run with itself"
    for ev in extra:
        want = answers_with(fresh(), events, ev, q)
        got = prefixes.answers_with(ev, q)
        assert sense(got) == sense(want), (ev, query)
        assert q.holds(got) == q.holds(want)


POINT = st.builds(lambda t, pred, arg, retract: {"t": t, "pred": pred, "args": [arg], **({"op": "retract"} if retract else {})},
                  st.integers(0, HI), st.sampled_from(["p", "r"]), ARGS, st.sampled_from([False] * 4 + [True]))


@SETTINGS
@given(rules=st.lists(st.sampled_from([*LARS_RULES, "q(X) at T :- p(X) at T [2], r(X)."]), min_size=1, max_size=3,
                      unique=True),
       events=st.lists(POINT, min_size=1, max_size=10), candidates=st.lists(POINT, min_size=1, max_size=4),
       query=st.tuples(st.sampled_from(["q", "s"]), ARGS, st.integers(0, HI)))
def test_lars(rules, events, candidates, query) -> None:
    _check("lars", "\n".join(rules) + "\n", [{"t": 0}, *events, {"t": HI}],
           [{k: v for k, v in c.items() if k != "op"} for c in candidates], f"{query[0]}({query[1]})@{query[2]}",
           lambda lines: meaning(lines, (0, HI)))


INTERVAL = st.builds(lambda lo, n, pred, arg, retract: {"interval": f"[{lo},{lo + n}]", "pred": pred, "args": [arg],
                                                         **({"op": "retract"} if retract else {})},
                     st.integers(0, HI), st.integers(0, 2), st.sampled_from(["P", "R"]), ARGS,
                     st.sampled_from([False] * 4 + [True]))


@SETTINGS
@given(rules=st.lists(st.sampled_from([*MTL_RULES, "Q(X):-Diamondplus[0,1]P(X)", "S(X):-Q(X),not R(X)"]), min_size=1,
                      max_size=3, unique=True),
       events=st.lists(INTERVAL, min_size=1, max_size=8), candidates=st.lists(INTERVAL, min_size=1, max_size=4),
       query=st.tuples(st.sampled_from(["Q", "S"]), ARGS, st.integers(0, 2 * HI)))
def test_mtl(rules, events, candidates, query) -> None:
    _check("mtl", "\n".join(rules) + "\n", [{"t": 0}, *events, {"t": HI}],
           [{k: v for k, v in c.items() if k != "op"} for c in candidates],
           f"{query[0]}({query[1]})@{query[2]}/2", lambda lines: sampled_meaning(lines, HI + 2))


DOOR = st.builds(lambda t, pred, arg, retract: {"t": t, "pred": pred, "args": [arg], **({"op": "retract"} if retract else {})},
                 st.integers(0, HI), st.sampled_from(["opened", "closed", "locked"]), st.sampled_from(["d1", "d2"]),
                 st.sampled_from([False] * 4 + [True]))


@SETTINGS
@given(new=st.booleans(), events=st.lists(DOOR, min_size=1, max_size=10), candidates=st.lists(DOOR, min_size=1, max_size=4),
       query=st.tuples(st.sampled_from(["d1", "d2"]), st.integers(0, HI + 2)))
def test_rtec(new, events, candidates, query) -> None:
    _check("rtec", RTEC_NEW if new else RTEC_OLD, [{"t": 0}, *events, {"t": HI}],
           [{k: v for k, v in c.items() if k != "op"} for c in candidates], f"open({query[0]})@{query[1]}",
           lambda lines: meaning(lines, (0, HI + 2)))


# -- the capability: Evaluator.resumes_mid_stream decides, an error is not hidden -----------

DOORS = [{"t": 0}, {"t": 1, "pred": "opened", "args": ["d1"]}, {"t": 3, "pred": "closed", "args": ["d1"]},
         {"t": 5, "pred": "opened", "args": ["d1"]}, {"t": 8}]
LATE = [{"t": 4, "pred": "opened", "args": ["d1"]}, {"t": 6, "pred": "closed", "args": ["d1"]}]


def _doors(options: RunOptions) -> tuple:  # type: ignore[type-arg]
    row = lookup("rtec")
    program = row.parse([("prog", RTEC_NEW)])

    def read(records: list[dict]) -> list:
        lines = "".join(json.dumps(e) + "\n" for e in records)
        return list(row.read(program, io.StringIO(lines), "s", "jsonl", "fail", lambda m: None))

    return (lambda: row.evaluator(program, options, lambda m: None)), read(DOORS), read(LATE)


def test_an_evaluator_that_resumes_mid_stream_keeps_its_state_at_each_place() -> None:
    fresh, events, extra = _doors(RunOptions())
    assert fresh().resumes_mid_stream
    prefixes = Prefixes(fresh, events, {place(events, ev) for ev in extra})
    assert sorted(prefixes.kept) == sorted({place(events, ev) for ev in extra})
    q = parse_query("open(d1)@7", True)
    for ev in extra:
        assert prefixes.answers_with(ev, q) == answers_with(fresh(), events, ev, q)


def test_an_evaluator_that_cannot_resume_takes_the_whole_input_per_candidate() -> None:
    fresh, events, extra = _doors(RunOptions(window=4, step=2))  # RTEC's windows
    assert not fresh().resumes_mid_stream
    prefixes = Prefixes(fresh, events, {place(events, ev) for ev in extra})
    assert prefixes.kept == {}
    q = parse_query("open(d1)@7", True)
    for ev in extra:
        assert prefixes.answers_with(ev, q) == answers_with(fresh(), events, ev, q)


def test_a_failure_of_an_evaluator_that_says_it_resumes_is_not_hidden() -> None:
    fresh, events, extra = _doors(RunOptions())

    def broken():  # type: ignore[no-untyped-def]
        evaluator = fresh()

        def export_state() -> dict:
            raise TypeError("a bug in export_state")

        evaluator.export_state = export_state
        return evaluator

    with pytest.raises(TypeError, match="a bug in export_state"):
        Prefixes(broken, events, {place(events, ev) for ev in extra})
