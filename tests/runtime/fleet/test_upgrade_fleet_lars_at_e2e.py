"""``chronolog upgrade`` of a real LARS chain fleet (``up --chain`` on the bundled broker) to a
program with ``@``-heads, T in the past, both programs dating atoms back, late input and a
retraction on both sides of T; also with 2 partitions and a chain killed with SIGKILL right
after the request is sent.  The answer topic means the splice per evaluated time point
(tests/reference.py), which is also what ``chronolog run --upgrade`` prints."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from dialect_programs import CHAIN_SECOND, CHAIN_SPAN
from hosted_fleet import chronolog as _chronolog
from hosted_fleet import evaluated_then_planned, fleet_up, lines, rest_answered, upgraded
from meaning import meaning
from reference import reference_splice

pytestmark = pytest.mark.fleet

# both date atoms back, on the partition key X: the old one w over [1], the new one v over [3]
OLD = "q(X) :- p(X) [1].\nr(X) :- q(X), s(X).\nw(X) at U :- p(X) at U [1], s(X).\n"
NEW = "q(X) :- p(X) [3].\nr(X) :- q(X), s(X).\nv(X) at U :- p(X) at U [3], s(X).\n"
FIRST = [{"t": 0}, {"t": 1, "pred": "p", "args": ["a"]}, {"t": 2, "pred": "s", "args": ["a"]},
         {"t": 3, "pred": "s", "args": ["a"]}, {"t": 4, "pred": "s", "args": ["a"]},
         {"t": 4, "pred": "p", "args": ["d"]}, {"t": 5, "pred": "s", "args": ["d"]}, {"t": 6}]
SECOND, SPAN = CHAIN_SECOND, CHAIN_SPAN


def points(answer_lines: list[str]) -> set:
    return meaning([json.loads(x) for x in answer_lines if x.strip()], SPAN)


@pytest.mark.parametrize(("parts", "kill"), [(1, False), (2, True)], ids=["plain", "2-partitions-sigkill"])
def test_chain_fleet_upgraded_to_at_heads_means_the_splice(tmp_path: Path, parts: int, kill: bool):
    (tmp_path / "old.lars").write_text(OLD)
    (tmp_path / "new.lars").write_text(NEW)
    (tmp_path / "all.jsonl").write_bytes(lines(FIRST + SECOND))
    want = reference_splice([(None, OLD), (3, NEW)], FIRST + SECOND)
    # the new program dates v(b)@2 and v(a)@1 before T; the old one's evaluation at 5 (>= T)
    # would date w(d)@4: not an answer
    assert {("v", ("a",), 1), ("v", ("b",), 2), ("w", ("a",), 1)} <= want and ("w", ("d",), 4) not in want
    run = _chronolog("run", str(tmp_path / "old.lars"), "--input", str(tmp_path / "all.jsonl"),
                     "--upgrade", f"3={tmp_path / 'new.lars'}")
    assert run.returncode == 0, run.stderr
    assert points(run.stdout.splitlines()) == want
    state = tmp_path / "state"
    with fleet_up(tmp_path / "old.lars", state, ("--chain", "--partitions", str(parts))) as (info, deadline):
        bootstrap = info["bootstrap"]
        chains = [s for s in info["services"] if s["name"] == "chain"]
        assert len(chains) == parts
        plan = evaluated_then_planned(tmp_path, bootstrap, state, FIRST, tmp_path / "new.lars", "3")
        assert "@-heads: the new program's evaluations from T on date atoms up to 3" in plan, plan
        assert "@-heads of the running program" in plan, plan
        upgraded(tmp_path / "new.lars", "3", state, chains[-1]["pid"] if kill else None)
        assert rest_answered(tmp_path, bootstrap, SECOND, points, want, deadline + 90) == want
