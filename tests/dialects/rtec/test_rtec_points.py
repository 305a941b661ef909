"""Point fluents whose interval lists nothing reads are stored as points only (RtecEvaluator._unread_points)."""

from __future__ import annotations

import io
import json
import random

import pytest

from chronolog.core.events import Event, TimeRows
from chronolog.dialects.rtec.evaluator import RtecEvaluator
from chronolog.dialects.rtec.parser import finish_program, parse_rtec
from chronolog.dialects.rtec.reader import read_rtec_blocks
from chronolog.runtime.embedded import run_evaluator

# p is read only through holdsAt and start/end (as caviar's coord), q also through holdsFor
ED = """
points(p(_)=_). points(q(_)=true). buildFromPoints(p(_)=_). buildFromPoints(q(_)=true).
dynamicDomain(id(_)).
grounding(p(X)=_) :- id(X). grounding(q(X)=true) :- id(X).
initiatedAt(moved(X)=true, T) :- happensAt(start(p(X)=V), T), holdsAt(q(X)=true, T), V \\= 0.
terminatedAt(moved(X)=true, T) :- happensAt(end(p(X)=_), T).
initiatedAt(still(X)=true, T) :- happensAt(tick(X), T), holdsAt(p(X)=1, T).
terminatedAt(still(X)=true, T) :- happensAt(tick(X), T), \\+ holdsAt(p(X)=1, T).
holdsFor(both(X)=true, I) :- holdsFor(q(X)=true, Q), holdsFor(moved(X)=true, M), union_all([Q, M], I).
grounding(moved(X)=true) :- id(X). grounding(still(X)=true) :- id(X). grounding(both(X)=true) :- id(X).
"""


def _program(text: str = ED):  # noqa: ANN202
    return finish_program(parse_rtec(text, "ed.prolog"))


def test_which_lists_are_not_built() -> None:
    assert RtecEvaluator(_program()).unread_points == {"p"}
    assert RtecEvaluator(_program(ED + "holdsFor(r(X)=true, I) :- holdsFor(p(X)=1, I).\n")).unread_points == set()
    assert RtecEvaluator(_program(ED + "helper(G) :- \\+ G.\n")).unread_points == set()  # a variable goal


def _events(seed: int) -> list[Event]:
    rnd = random.Random(seed)
    out: list[Event] = []
    for t in range(60):
        for x in ("a", "b"):
            if rnd.random() < 0.6:
                out.append(Event(t, "p", (x, rnd.choice([0, 1, 2]))))
            if rnd.random() < 0.4:
                out.append(Event(t, "q", (x,)))
            if rnd.random() < 0.3:
                out.append(Event(t, "tick", (x,)))
        if out and rnd.random() < 0.2:  # a retraction or a late copy of an earlier row
            old = rnd.choice(out)
            out.append(Event(old.t, old.pred, old.args, rnd.random() < 0.5))
    return out


def _answers(events: list[Event], bulk: bool) -> list[dict]:
    if bulk:  # as chronolog run reads a file: blocks of rows (io/rtec_input.read_rtec_blocks)
        text = "".join(json.dumps({"t": e.t, "pred": e.pred, "args": list(e.args)}) + "\n" for e in events)
        items = list(read_rtec_blocks(io.StringIO(text), "s.jsonl"))
        assert any(type(x) is TimeRows for x in items)
    out = io.StringIO()
    run_evaluator(RtecEvaluator(_program(), 5), items if bulk else events, out)
    return [json.loads(line) for line in out.getvalue().splitlines()]


@pytest.mark.parametrize("seed", range(5))
@pytest.mark.parametrize("bulk", [False, True])
def test_answers_as_with_every_list_built(seed: int, bulk: bool, monkeypatch: pytest.MonkeyPatch) -> None:
    events = _events(seed)
    if bulk:
        events = [e for e in events if not e.retract]
    got = _answers(events, bulk)
    monkeypatch.setattr(RtecEvaluator, "_unread_points", lambda self: set())
    assert got == _answers(events, bulk) and got
