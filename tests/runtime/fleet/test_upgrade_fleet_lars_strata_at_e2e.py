"""``chronolog upgrade`` of a real LARS fleet of one service per stratum (``chronolog up`` on the
bundled broker) to a program whose ``@``-head dates atoms further back: T in the past (a
restatement), late input and a retraction on both sides of T, the changed bottom reasoner killed
with SIGKILL during the upgrade.  The version is chosen by the time point evaluated: the answer
topic means the splice per evaluated point (tests/reference.py), which is also what ``chronolog
run --upgrade`` prints."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from hosted_fleet import chronolog as _chronolog
from hosted_fleet import evaluated_then_planned, fleet_up, lines, rest_answered, upgraded
from meaning import meaning
from reference import reference_splice

pytestmark = pytest.mark.fleet

# w dates p back over [1] when s holds now, then over [3]; v (the stratum above: it negates z)
# reads w through 'at' over [1]; partitioned on X
OLD = "w(X) at U :- p(X) at U [1], s(X).\nz(X) :- q(X).\nv(X) :- w(X) at U [1], not z(X).\n"
NEW = OLD.replace("p(X) at U [1]", "p(X) at U [3]")
FIRST = [{"t": 0}, {"t": 1, "pred": "p", "args": ["a"]}, {"t": 2, "pred": "s", "args": ["a"]},
         {"t": 2, "pred": "p", "args": ["e"]}, {"t": 4, "pred": "p", "args": ["d"]},
         {"t": 5, "pred": "s", "args": ["d"]}, {"t": 5, "pred": "s", "args": ["e"]}, {"t": 6}]
# late on both sides of T: s(b)@4 with p(b)@2 (dated back from 4), f before T, s(a)@2 retracted
SECOND = [{"t": 2, "pred": "p", "args": ["b"]}, {"t": 4, "pred": "s", "args": ["b"]},
          {"t": 1, "pred": "p", "args": ["f"]}, {"t": 2, "pred": "s", "args": ["f"]},
          {"t": 2, "pred": "s", "args": ["a"], "op": "retract"}, {"t": 7, "pred": "p", "args": ["c"]},
          {"t": 8, "pred": "s", "args": ["c"]}, {"t": 10}]
SPAN = (0, 10)


def points(answer_lines: list[str]) -> set:
    return meaning([json.loads(x) for x in answer_lines if x.strip()], SPAN)


@pytest.mark.parametrize("parts", [1, 3], ids=["1-partition", "3-partitions"])
def test_per_stratum_fleet_upgraded_to_a_wider_at_head_means_the_splice(tmp_path: Path, parts: int):
    (tmp_path / "old.lars").write_text(OLD)
    (tmp_path / "new.lars").write_text(NEW)
    (tmp_path / "all.jsonl").write_bytes(lines(FIRST + SECOND))
    want = reference_splice([(None, OLD), (3, NEW)], FIRST + SECOND)
    # NEW's evaluations date w(e)@2 (at 5, restated by the upgrade: 3 points back, beyond OLD's
    # reach, where the first content that changes is 5's) and w(b)@2 (at 4, from late input) before
    # T; OLD alone dates neither.  Before T the late f counts and the retracted s(a) takes w(a)@1 back
    old = reference_splice([(None, OLD)], FIRST + SECOND)
    assert {("w", ("e",), 2), ("w", ("b",), 2)} <= want - old
    assert ("w", ("f",), 1) in want and ("w", ("a",), 1) not in want
    run = _chronolog("run", str(tmp_path / "old.lars"), "--input", str(tmp_path / "all.jsonl"),
                     "--upgrade", f"3={tmp_path / 'new.lars'}")
    assert run.returncode == 0, run.stderr
    assert points(run.stdout.splitlines()) == want
    state = tmp_path / "state"
    with fleet_up(tmp_path / "old.lars", state, ("--partitions", str(parts))) as (info, deadline):
        bootstrap = info["bootstrap"]
        bottom = [s for s in info["services"] if s["name"] == "reasoner-1"]
        assert len(bottom) == parts
        plan = evaluated_then_planned(tmp_path, bootstrap, state, FIRST, tmp_path / "new.lars", "3")
        assert "stratum 1 (w/1, z/1): changed" in plan and "stratum 2 (v/1): changed" in plan, plan
        assert "@-heads: the new program's evaluations from T on date atoms up to 3" in plan, plan
        upgraded(tmp_path / "new.lars", "3", state, bottom[-1]["pid"])
        assert rest_answered(tmp_path, bootstrap, SECOND, points, want, deadline + 120) == want
