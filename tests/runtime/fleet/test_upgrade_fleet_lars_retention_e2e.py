"""``chronolog upgrade`` against a real LARS fleet of one service per stratum started with a
finite ``--retention`` (the bundled broker): an upgrade whose ``T - reach`` lies before the
input the fleet holds is refused by the reasoners with the spans (exit 2), the plan says how
it is decided, and one within it is taken: the answer topic then means what ``chronolog run
--upgrade --retention`` prints, with late events on both sides of T and one too late."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from hosted_fleet import chronolog as _chronolog
from hosted_fleet import evaluated_then_planned, fleet_up, lines, rest_answered, upgraded
from meaning import meaning
from test_stage_upgrade_lars_retention import BOTTOM, FIRST_S, LATE_S, SPAN
from test_stage_upgrade_lars_strata import OLD

pytestmark = pytest.mark.fleet


@pytest.mark.parametrize(("parts", "kill"), [(1, False), (2, True)], ids=["plain", "2-partitions-sigkill"])
def test_a_per_stratum_fleet_with_a_finite_retention_refuses_beyond_it_and_takes_an_upgrade_within_it(
        tmp_path: Path, parts: int, kill: bool):
    """With 2 partitions every reasoner of both refuses alike, and reasoner-2 (of partition 0)
    is killed with SIGKILL while the upgrade is applied: it resumes it after its restart."""
    (tmp_path / "old.lars").write_text(OLD)
    (tmp_path / "new.lars").write_text(BOTTOM)
    (tmp_path / "all.jsonl").write_bytes(lines(FIRST_S + LATE_S))
    run = _chronolog("run", str(tmp_path / "old.lars"), "--input", str(tmp_path / "all.jsonl"), "--retention", "3",
                     "--upgrade", f"12={tmp_path / 'new.lars'}")
    assert run.returncode == 0, run.stderr

    def pts(answer_lines: list[str]) -> set:
        return meaning([json.loads(x) for x in answer_lines if x.strip()], SPAN)

    want = pts(run.stdout.splitlines())
    assert ("b", ("u",), 16) in want and ("a", ("v",), 5) not in want  # (p(u)@12 from T on; p(v)@5 too late)
    state = tmp_path / "state"
    with fleet_up(tmp_path / "old.lars", state, ("--retention", "3", "--partitions", str(parts))) as (_info, deadline):
        # ingest's latest is 12 once FIRST_S is read: the fleet holds the input from 8 on
        plan = evaluated_then_planned(tmp_path, _info["bootstrap"], state, FIRST_S, tmp_path / "new.lars", "11")
        assert ("  retention: 3 (the fleet holds the input from the latest time its ingest has read - 4 on, when the "
                "request reaches ingest: every service refuses it, alike, if T - 4 lies before that)") in plan, plan
        refused = _chronolog("upgrade", str(tmp_path / "new.lars"), "--at", "11", "--state-dir", str(state),
                             "--timeout", "90")
        assert refused.returncode == 2, refused.stderr
        assert ("the new program's answers from T=11 on need input from 7 on ([T - 4, now]), the retention kept it "
                "from 8 on (--retention 3)") in refused.stderr, refused.stderr
        reasoner = next(s["pid"] for s in _info["services"] if s["name"] == "reasoner-2")
        upgraded(tmp_path / "new.lars", "12", state, reasoner if kill else None)
        assert rest_answered(tmp_path, _info["bootstrap"], LATE_S, pts, want, deadline + 90) == want
