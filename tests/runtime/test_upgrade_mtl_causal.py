"""Causality is a property of a program, not of its dialect (``Dialect.causal``): a DatalogMTL
program without future operators evaluates a time on no later input, so an upgrade feeds its
old version nothing from its end on (its state stops growing), and the answers are still the
splice of two plain runs; a program with ``Diamondplus`` (or ``Until``, or a ``Boxminus`` head,
which dates a conclusion back before its premises) is fed the whole stream."""

from __future__ import annotations

import io
import json
from fractions import Fraction

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from meaning import sampled_meaning
from test_upgrade_rtec_causal import _lines, _make

from chronolog.dialects.registry import lookup
from chronolog.versions import versions_of

ROW = lookup("mtl")
HI = 14


def _program(text: str):  # type: ignore[no-untyped-def]
    return ROW.parse([("prog.mtl", text)])


@pytest.mark.parametrize(("text", "causal"), [
    ("Q(X):-Diamondminus[0,2]P(X)\nS(X):-Q(X),R(X)\n", True),
    ("Q(X):-Boxminus[0,1]P(X)\nS(X):-R(X) Since[0,3] Q(X)\n", True),
    ("Boxplus[0,2]Q(X):-P(X)\n", True),  # a conclusion dated ahead of its premise: still from the past
    ("Q(X):-Diamondplus[0,2]P(X)\n", False),
    ("Q(X):-P(X)\nS(X):-Boxplus[0,1]Q(X)\n", False),
    ("Q(X):-R(X) Until[0,3] P(X)\n", False),
    ("Boxminus[0,2]Q(X):-P(X)\n", False),  # P at t makes Q hold before t
])
def test_a_program_is_causal_without_operators_that_look_ahead(text: str, causal: bool) -> None:
    assert ROW.causal(_program(text)) is causal
    assert lookup("lars").causal(lookup("lars").parse([("p.lars", "q(X) at T :- p(X) at T [2].\n")]))
    rtec = lookup("rtec")
    assert rtec.causal(rtec.parse([("p.prolog", "initiatedAt(open(D)=true, T) :- happensAt(opened(D), T).\n")]))


EVENT = st.builds(lambda lo, n, pred, arg, retract: [{"interval": f"[{lo},{lo + n}]", "pred": pred, "args": [arg]}]
                  + ([{"interval": f"[{lo},{lo + n}]", "pred": pred, "args": [arg], "op": "retract"}] if retract else []),
                  st.integers(0, 11), st.integers(0, 2), st.sampled_from(["P", "R"]), st.sampled_from(["a", "b"]),
                  st.booleans())
PAST = "Q(X):-Diamondminus[0,2]P(X)\nS(X):-Diamondminus[0,1]Q(X),R(X)\n"
AHEAD = "Q(X):-Diamondplus[0,2]P(X)\nS(X):-Q(X),R(X)\n"
NEW = "Q(X):-Boxminus[0,1]P(X)\nS(X):-R(X)\n"


@settings(max_examples=40, deadline=None, suppress_health_check=list(HealthCheck))
@given(events=st.lists(EVENT, min_size=1, max_size=10), half=st.integers(2, 20), ahead=st.booleans())
def test_a_causal_old_version_is_fed_only_its_part_and_the_upgrade_is_the_splice(events, half, ahead) -> None:
    at = Fraction(half, 2)
    old, new = _program(AHEAD if ahead else PAST), _program(NEW)
    stream = [{"t": 0}, *(e for group in events for e in group), {"t": HI}]
    plain, alone = {}, {}
    for name, p in (("old", old), ("new", new)):
        alone[name] = _make(p)
        plain[name] = sampled_meaning(_lines(alone[name], p, stream), HI)
    want = {a for a in plain["old"] if a[2] < at} | {a for a in plain["new"] if a[2] >= at}
    versions = versions_of([_make(old), _make(new)], [at], [ROW.causal(old), ROW.causal(new)], ROW.discrete)
    assert sampled_meaning(_lines(versions, old, stream), HI) == want

    def facts(evaluator) -> list:  # type: ignore[no-untyped-def]
        return sorted((ev.t, ev.pred, ev.args, str(ev.span)) for ev in evaluator.retained()[1] if ev.pred is not None)
    everything = facts(alone["old"])
    # Diamondplus: the answers before T read input after it, so the old version is given it all;
    # else its input (its state) ends at its end, whatever comes later
    assert facts(versions.versions[0].evaluator) == (everything if ahead else [f for f in everything if f[0] < at])

def test_a_causal_old_versions_state_stops_growing_at_its_end() -> None:
    old, new = _program(PAST), _program(NEW)
    for causal, grows in ((ROW.causal(old), False), (False, True)):
        versions = versions_of([_make(old), _make(new)], [Fraction(3)], [causal, ROW.causal(new)], ROW.discrete)
        sizes = []
        for t in range(0, 40):
            versions.push(ROW.read(old, io.StringIO(json.dumps({"interval": f"[{t},{t + 1}]", "pred": "P",
                                                                 "args": [f"c{t}"]}) + "\n"),
                                   "s", "jsonl", "fail", lambda m: None).__next__())
            versions.advance(t)
            sizes.append(len(versions.versions[0].evaluator.export_state()["inputs"]))
        assert (sizes[-1] > sizes[5]) is grows, sizes
        assert sizes[-1] == (40 if grows else 3)
