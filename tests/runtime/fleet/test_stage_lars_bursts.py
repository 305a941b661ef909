"""A burst of corrections reaching a LARS stratum reasoner over several batches of one epoch
(``Stage.process(..., more=True)``: its readers hold the records until the epoch's barrier)
costs one replay, and an upgrade's version of a stratum whose lower strata change too
evaluates [T, now] once, after their corrections: the records mean what evaluating every
point in time order gives, at the stages without a broker."""

from __future__ import annotations

import orjson
import pytest

import chronolog.dialects.lars.stages as stages_module
from chronolog.dialects.lars.engine.content import NOTHING
from chronolog.dialects.lars.reasoner import Reasoner
from chronolog.dialects.lars.stages import StratumStore
from chronolog.dialects.registry import RunOptions, lookup
from chronolog.stages.interface import StageSpec
from chronolog.state.snapshots import roundtrip
from chronolog.versions import UpgradeRequest, version_id

OLD = "a(X) :- p(X) [2].\nb(X) :- a(X), not c(X).\nc(X) :- q(X).\n"  # strata: (a, c), (b)
BOTTOM = "a(X) :- p(X) [4].\nb(X) :- a(X), not c(X).\nc(X) :- q(X).\n"  # a changes; b reads it
END = 40


def _stage(role: str, k: int | None = None):
    row = lookup("lars")
    return row.layout(row.parse([("old.lars", OLD)]), RunOptions()).stage(StageSpec(role, stratum=k, idle_flush=0.0))


def _event(t: int, pred: str | None = None, arg: str = "") -> bytes:
    return orjson.dumps({"t": t} if pred is None else {"t": t, "pred": pred, "args": [arg]})


def _stream() -> list[bytes]:
    """p at every fourth point (k0, k1, k2 in turn), q(k0) at every fifth, the time up to END."""
    out = []
    for t in range(END):
        if t % 4 == 0:
            out.append(_event(t, "p", f"k{t // 4 % 3}"))
        if t % 5 == 0:
            out.append(_event(t, "q", "k0"))
    return out + [_event(END)]


LATE = [(5, "p", "z"), (12, "p", "z"), (20, "q", "k1"), (31, "p", "z")]  # each its own epoch below


class _Lower:
    """Ingest, grounding and the bottom stratum's reasoner: each input batch's grounded
    records and the stratum records the bottom reasoner makes of them."""

    def __init__(self) -> None:
        self.ingest, self.grounding, self.reasoner = _stage("ingest"), _stage("grounding"), _stage("reasoner", 1)
        self.offset = 0

    def feed(self, values: list[bytes]) -> tuple[list[tuple], list[tuple]]:
        recs = [("facts", "chronolog.facts", 0, self.offset + i, v) for i, v in enumerate(values)]
        self.offset += len(values)
        ingested = [("ingested", "i", 0, 0, o.value) for o in self.ingest.process(recs, now=0.0)[0]]
        grounded = [("grounded", "g", 0, 0, o.value) for o in self.grounding.process(ingested, now=0.0)[0]]
        stratum = [("stratum.1", "s1", 0, 0, o.value) for o in self.reasoner.process(grounded)[0]
                   if o.topic == "stratum"]
        return grounded, stratum


def _content(records: list[bytes]) -> dict[int, object]:
    """The top stratum's content per time point, as its readers rebuild it."""
    store = StratumStore()
    for value in records:
        store.apply(orjson.loads(value))
    return {t: store.content.get(t, NOTHING) for t in range(END)}


def _in_order() -> dict[int, object]:
    """Every event in time order (nothing late): the top stratum's content, independently."""
    lower, top = _Lower(), _stage("reasoner", 2)
    values = sorted(_stream() + [_event(t, p, a) for t, p, a in LATE], key=lambda v: orjson.loads(v)["t"])
    grounded, stratum = lower.feed(values)
    return _content([o.value for o in top.process(grounded + stratum)[0]])


@pytest.fixture
def replays(monkeypatch):
    """The replays of the top stratum's reasoner, counted."""
    count = [0]
    replay = Reasoner._replay_shared

    def counted(self, *args):  # type: ignore[no-untyped-def]
        if self.stratum == 1:
            count[0] += 1
        return replay(self, *args)

    monkeypatch.setattr(Reasoner, "_replay_shared", counted)
    return count


@pytest.mark.parametrize("more", [False, True])
def test_a_burst_of_corrections_over_an_epochs_batches_costs_one_replay(replays, more):
    """Four late events, each corrected by the bottom stratum in a batch of its own, reach
    the top reasoner in four batches: one replay each when every batch ends an epoch, one in
    all when they are batches of one epoch, and the top's records mean the same content as
    evaluating the stream in time order."""
    lower, top = _Lower(), _stage("reasoner", 2)
    grounded, stratum = lower.feed(_stream())
    sent = [o.value for o in top.process(grounded + stratum)[0]]
    replays[0] = 0
    for t, pred, arg in LATE:
        grounded, stratum = lower.feed([_event(t, pred, arg)])
        assert stratum  # the bottom stratum corrected the past
        sent += [o.value for o in top.process(grounded + stratum, more=more)[0]]
    assert top.waiting == more
    sent += [o.value for o in top.process([])[0]]  # the batch ending the epoch: only its barrier
    assert not top.waiting
    assert replays[0] == (1 if more else len(LATE))
    assert _content(sent) == _in_order()


@pytest.mark.parametrize("restart", [False, True])
def test_an_upgrade_evaluates_a_stratum_reading_a_changed_one_once_after_its_corrections(replays, monkeypatch,
                                                                                        restart):
    """BOTTOM changes ``a``, so ``b``'s stratum gets a version from T on too: the batch with
    the upgrade (the epoch goes on) leaves its evaluation to the batch with the bottom's
    corrections — no replay, [T, now] evaluated once (point by point or at once) — and the records mean the content of
    ``b`` under BOTTOM from T on (the old program's before), also across a restart between."""
    at = 20
    lower, top = _Lower(), _stage("reasoner", 2)
    grounded, stratum = lower.feed(_stream())
    sent = [o.value for o in top.process(grounded + stratum)[0]]
    request = UpgradeRequest("r1", version_id((("new.lars", BOTTOM),)), "lars", str(at), (("new.lars", BOTTOM),))
    grounded, stratum = lower.feed([request.encode()])
    steps = [0]
    step = Reasoner._evaluate_until

    def counting(self, end):  # type: ignore[no-untyped-def]
        if self.stratum == 1 and self.evaluated is not None:
            steps[0] += max(0, end - self.evaluated)
        return step(self, end)

    at_once = stages_module.advance_pointwise

    def counting_at_once(r, until):  # type: ignore[no-untyped-def]  # (b's stratum reads a at t only: pointwise.py)
        before = r.evaluated
        done = at_once(r, until)
        if done and r.stratum == 1:
            steps[0] += until - before
        return done

    monkeypatch.setattr(Reasoner, "_evaluate_until", counting)
    monkeypatch.setattr(stages_module, "advance_pointwise", counting_at_once)
    outs = top.process(grounded, more=True)[0]
    assert [o.topic for o in outs] == ["control"] and top.waiting and steps[0] == 0
    if restart:
        top = roundtrip(top, _stage("reasoner", 2))
    sent += [o.value for o in top.process(stratum)[0] if o.topic == "stratum"]
    assert replays[0] == 0 and steps[0] == END - at
    want = _in_order_upgraded(at)
    assert _content(sent) == want


def _in_order_upgraded(at: int) -> dict[int, object]:
    """``b``'s content: the old program's before ``at``, BOTTOM's from ``at`` on, each
    evaluated by a fresh fleet (the content at t depends on the input up to t only)."""
    old, new = _plain(OLD), _plain(BOTTOM)
    return {t: (old if t < at else new)[t] for t in range(END)}


def _plain(text: str) -> dict[int, object]:
    row = lookup("lars")
    layout = row.layout(row.parse([("p.lars", text)]), RunOptions())
    ingest, grounding = layout.stage(StageSpec("ingest", idle_flush=0.0)), layout.stage(StageSpec("grounding"))
    bottom, top = layout.stage(StageSpec("reasoner", stratum=1)), layout.stage(StageSpec("reasoner", stratum=2))
    recs = [("facts", "chronolog.facts", 0, i, v) for i, v in enumerate(_stream())]
    ingested = [("ingested", "i", 0, 0, o.value) for o in ingest.process(recs, now=0.0)[0]]
    grounded = [("grounded", "g", 0, 0, o.value) for o in grounding.process(ingested, now=0.0)[0]]
    stratum = [("stratum.1", "s1", 0, 0, o.value) for o in bottom.process(grounded)[0]]
    return _content([o.value for o in top.process(grounded + stratum)[0]])
