"""The LARS output service combines the strata's content once per time point of a batch, and
corrects its answers once per epoch: every stratum sends a record per point, and an upgrade's
restatement reaches the output as the corrections of every point from T on from each changed
stratum, over several batches of one epoch.  What it answers is what ``chronolog run
--upgrade`` prints (the stages without a broker)."""

from __future__ import annotations

import json

import orjson
import pytest
from meaning import meaning

from chronolog.cli.main import main
from chronolog.dialects.lars import stages
from chronolog.dialects.lars.reasoner import Reasoner
from chronolog.dialects.registry import RunOptions, lookup
from chronolog.stages.interface import StageSpec
from chronolog.state.snapshots import roundtrip
from chronolog.versions import UpgradeRequest, version_id

OLD = "a(X) :- p(X) [2].\nb(X) :- a(X), not c(X).\nc(X) :- q(X).\n"  # strata: (a, c), (b)
BOTTOM = "a(X) :- p(X) [4].\nb(X) :- a(X), not c(X).\nc(X) :- q(X).\n"  # a changes, so b does
END, AT = 30, 12


def _events() -> list[dict]:
    """p at every third point (k0, k1 in turn), q(k1) at every fourth, the time up to END."""
    out: list[dict] = []
    for t in range(END):
        if t % 3 == 0:
            out.append({"t": t, "pred": "p", "args": [f"k{t // 3 % 2}"]})
        if t % 4 == 0:
            out.append({"t": t, "pred": "q", "args": ["k1"]})
    return out + [{"t": END}]


def _stage(role: str, k: int | None = None):
    row = lookup("lars")
    return row.layout(row.parse([("old.lars", OLD)]), RunOptions()).stage(StageSpec(role, stratum=k, idle_flush=0.0))


@pytest.fixture
def combined(monkeypatch):
    """The time points the output service combined the strata's content at, in order."""
    seen: list[int] = []
    combine = stages._combine

    def counted(stores, t):  # type: ignore[no-untyped-def]
        if len(stores) == 2:  # (the output's: the top reasoner reads one stratum)
            seen.append(t)
        return combine(stores, t)

    monkeypatch.setattr(stages, "_combine", counted)
    return seen


@pytest.fixture
def corrections(monkeypatch):
    """How many times the output service corrected its answers."""
    count = [0]
    correct = Reasoner._imported_changes

    def counted(self, *args):  # type: ignore[no-untyped-def]
        count[0] += 1
        return correct(self, *args)

    monkeypatch.setattr(Reasoner, "_imported_changes", counted)
    return count


@pytest.mark.parametrize("restart", [False, True])
def test_an_upgrades_corrections_from_both_strata_are_combined_once_per_point(combined, tmp_path, capsys, restart):
    lines = _upgraded(lambda output, records: output.process(records)[1], restart, combined.clear)
    # both strata corrected points from AT on; each point combined once, in time order
    assert len(combined) == len(set(combined)) > 0 and combined == sorted(combined) and min(combined) >= AT
    assert _meaning(lines) == _run_upgrade(tmp_path, capsys)


@pytest.mark.parametrize("restart", [False, True])
def test_an_upgrades_corrections_over_several_batches_of_an_epoch_are_one_correction(corrections, tmp_path,
                                                                                     capsys, restart):
    """The output given the restatement in batches of 5 records, the epoch going on (``more``)
    but for the last, empty one (the batch of the barriers): one correction of the answers,
    also when a restart comes between (its state stored mid-epoch)."""
    def batches(output, records):  # type: ignore[no-untyped-def]
        got: list[bytes] = []
        for i in range(0, len(records), 5):
            got += output.process(records[i:i + 5], more=True)[1]
        assert not got  # (nothing before the epoch's end)
        if restart:
            output = roundtrip(output, _stage("output"))
        return got + output.process([])[1]

    lines = _upgraded(batches, False, lambda: corrections.__setitem__(0, 0))
    assert corrections[0] == 1
    assert _meaning(lines) == _run_upgrade(tmp_path, capsys)


def _upgraded(give, restart: bool, reset) -> list[bytes]:  # type: ignore[no-untyped-def]
    """The answer lines of the fleet of OLD on ``_events()`` and then the upgrade to BOTTOM at
    AT, the output given the upgrade's stratum records by ``give(output, records)``; ``reset``
    called before the upgrade; ``restart``: the output restored from its state before it."""
    ingest, grounding, bottom, top, output = (_stage("ingest"), _stage("grounding"), _stage("reasoner", 1),
                                              _stage("reasoner", 2), _stage("output"))
    lines: list[bytes] = []
    offset = 0

    def feed(values: list[bytes], give) -> int:  # type: ignore[no-untyped-def]
        """The values through every stage, the output given both strata's records by ``give``;
        the number of stratum records it got."""
        nonlocal offset
        recs = [("facts", "chronolog.facts", 0, offset + i, v) for i, v in enumerate(values)]
        offset += len(values)
        ingested = [("ingested", "i", 0, 0, o.value) for o in ingest.process(recs, now=0.0)[0]]
        grounded = [("grounded", "g", 0, 0, o.value) for o in grounding.process(ingested, now=0.0)[0]]
        one = [("stratum.1", "s1", 0, 0, o.value) for o in bottom.process(grounded)[0] if o.topic == "stratum"]
        two = [("stratum.2", "s2", 0, 0, o.value) for o in top.process(grounded + one)[0] if o.topic == "stratum"]
        lines.extend(give(output, one + two))
        return len(one) + len(two)

    feed([orjson.dumps(e) for e in _events()], lambda output, records: output.process(records)[1])
    if restart:  # (a restored output has no imports waiting)
        output = roundtrip(output, _stage("output"))
    reset()
    request = UpgradeRequest("r1", version_id((("new.lars", BOTTOM),)), "lars", str(AT), (("new.lars", BOTTOM),))
    assert feed([request.encode()], give) > 0
    return lines


def _meaning(lines: list[bytes]) -> set:
    return meaning([orjson.loads(x) for x in lines], (0, END - 1), running=True)


def _run_upgrade(tmp_path, capsys) -> set:  # type: ignore[no-untyped-def]
    (tmp_path / "old.lars").write_text(OLD)
    (tmp_path / "new.lars").write_text(BOTTOM)
    (tmp_path / "in.jsonl").write_text("".join(json.dumps(e) + "\n" for e in _events()))
    capsys.readouterr()
    assert main(["run", str(tmp_path / "old.lars"), "--input", str(tmp_path / "in.jsonl"),
                 "--upgrade", f"{AT}={tmp_path / 'new.lars'}"]) == 0
    return meaning([json.loads(x) for x in capsys.readouterr().out.splitlines()], (0, END - 1))
