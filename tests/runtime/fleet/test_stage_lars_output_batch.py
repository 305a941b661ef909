"""The LARS output service combines the strata's content once per time point of a batch:
every stratum sends a record per point, and an upgrade's restatement reaches the output as
the corrections of every point from T on from each changed stratum.  What it answers is
what ``chronolog run --upgrade`` prints (the stages without a broker)."""

from __future__ import annotations

import json

import orjson
import pytest
from meaning import meaning

from chronolog.cli.main import main
from chronolog.dialects.lars import stages
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


@pytest.mark.parametrize("restart", [False, True])
def test_an_upgrades_corrections_from_both_strata_are_combined_once_per_point(combined, tmp_path, capsys, restart):
    ingest, grounding, bottom, top, output = (_stage("ingest"), _stage("grounding"), _stage("reasoner", 1),
                                              _stage("reasoner", 2), _stage("output"))
    lines: list[bytes] = []
    offset = 0

    def feed(values: list[bytes]) -> int:
        """The values through every stage, the output given both strata's records in one batch;
        the number of stratum records it got."""
        nonlocal offset
        recs = [("facts", "chronolog.facts", 0, offset + i, v) for i, v in enumerate(values)]
        offset += len(values)
        ingested = [("ingested", "i", 0, 0, o.value) for o in ingest.process(recs, now=0.0)[0]]
        grounded = [("grounded", "g", 0, 0, o.value) for o in grounding.process(ingested, now=0.0)[0]]
        one = [("stratum.1", "s1", 0, 0, o.value) for o in bottom.process(grounded)[0] if o.topic == "stratum"]
        two = [("stratum.2", "s2", 0, 0, o.value) for o in top.process(grounded + one)[0] if o.topic == "stratum"]
        lines.extend(output.process(one + two)[1])
        return len(one) + len(two)

    feed([orjson.dumps(e) for e in _events()])
    if restart:  # (a restored output has no imports waiting)
        output = roundtrip(output, _stage("output"))
    combined.clear()
    request = UpgradeRequest("r1", version_id((("new.lars", BOTTOM),)), "lars", str(AT), (("new.lars", BOTTOM),))
    records = feed([request.encode()])
    # both strata corrected points from AT on; each point combined once, in time order
    assert records > len(set(combined)) > 0 and combined == sorted(set(combined))
    assert min(combined) >= AT

    (tmp_path / "old.lars").write_text(OLD)
    (tmp_path / "new.lars").write_text(BOTTOM)
    (tmp_path / "in.jsonl").write_text("".join(json.dumps(e) + "\n" for e in _events()))
    capsys.readouterr()
    assert main(["run", str(tmp_path / "old.lars"), "--input", str(tmp_path / "in.jsonl"),
                 "--upgrade", f"{AT}={tmp_path / 'new.lars'}"]) == 0
    want = [json.loads(x) for x in capsys.readouterr().out.splitlines()]
    got = [orjson.loads(x) for x in lines]
    assert meaning(got, (0, END - 1), running=True) == meaning(want, (0, END - 1))
