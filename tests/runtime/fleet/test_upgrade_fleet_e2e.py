"""``chronolog upgrade`` against a real fleet (``chronolog up`` on the bundled broker): the
answer topic means what ``chronolog run --upgrade`` prints on the whole stream, with late
input on both sides of T, also when the service is killed with SIGKILL right after the
request is sent (it resumes the upgrade from its state and the request on its input)."""

from __future__ import annotations

import json
import urllib.request
from pathlib import Path

import pytest
from hosted_fleet import chronolog as _chronolog
from hosted_fleet import evaluated_then_planned, fleet_up, lines, rest_answered, upgraded
from meaning import sampled_meaning

pytestmark = pytest.mark.fleet

OLD = "Q(X):-Diamondminus[0,1]P(X)\nS(X):-Q(X),R(X)\n"
NEW = "Q(X):-Diamondminus[0,3]P(X)\nS(X):-Q(X),R(X)\nS(X):-P(X)\n"
FIRST = [{"t": 0}, {"interval": "[1,2]", "pred": "P", "args": ["a"]}, {"interval": "[2,6]", "pred": "R", "args": ["a"]},
         {"interval": "[5,6]", "pred": "P", "args": ["b"]}, {"t": 8}]
SECOND = [{"interval": "[9,10]", "pred": "P", "args": ["c"]}, {"interval": "[3,4]", "pred": "P", "args": ["d"]},
          {"interval": "[1,2]", "pred": "P", "args": ["a"], "op": "retract"}, {"interval": "[7,8]", "pred": "P", "args": ["e"]},
          {"t": 14}]
HI = 14


def quarters(answer_lines: list[str]) -> set:
    """(pred, args, x) at every quarter point x of [0, HI] where the diffs sum to 1."""
    return sampled_meaning([json.loads(x) for x in answer_lines if x.strip()], HI)


def _walk(node: dict):
    yield node
    for child in node.get("premises", []):
        yield from _walk(child)


def _expected(tmp_path: Path, at: str) -> set:
    (tmp_path / "all.jsonl").write_bytes(lines(FIRST + SECOND))
    run = _chronolog("run", str(tmp_path / "old.mtl"), "--input", str(tmp_path / "all.jsonl"),
                     "--upgrade", f"{at}={tmp_path / 'new.mtl'}")
    assert run.returncode == 0, run.stderr
    return quarters(run.stdout.splitlines())


@pytest.mark.parametrize("kill", [False, True], ids=["plain", "sigkill"])
def test_upgrade_of_a_running_fleet_means_run_upgrade(tmp_path, kill):
    (tmp_path / "old.mtl").write_text(OLD)
    (tmp_path / "new.mtl").write_text(NEW)
    want = _expected(tmp_path, "4")
    state = tmp_path / "state"
    with fleet_up(tmp_path / "old.mtl", state) as (info, deadline):
        bootstrap = info["bootstrap"]
        plan = evaluated_then_planned(tmp_path, bootstrap, state, FIRST, tmp_path / "new.mtl", "4")
        assert "re-evaluated from T on" in plan and "T: 4" in plan
        chain = next(s["pid"] for s in info["services"] if s["name"] == "chain")
        out = upgraded(tmp_path / "new.mtl", "4", state, chain if kill else None)
        assert "upgraded: program version" in out
        assert rest_answered(tmp_path, bootstrap, SECOND, quarters, want, deadline + 90) == want
        versions = (state / "program-versions.jsonl").read_text().splitlines()
        assert len(versions) == 1 and json.loads(versions[0])["at"] == "4"
        version = json.loads(versions[0])["version"]
        if not kill:  # the service's metrics name the version it runs and count the upgrade
            port = next(s["metrics_port"] for s in info["services"] if s["name"] == "chain")
            text = urllib.request.urlopen(f"http://127.0.0.1:{port}/metrics", timeout=10).read().decode()
            assert f'chronolog_program_info{{partition="0",service="chain",stratum="",version="{version}"}} 1.0' in text
            assert 'chronolog_upgrades_total{partition="0",service="chain",stratum=""} 1.0' in text
        # explain on the fleet: its input topic read again, the upgrade among the causes
        for query, holds in (("Q(b)@8", 1), ("S(b)@6", 1), ("Q(a)@2", 0)):
            got = _chronolog("explain", "--changes", query, "--state-dir", str(state), "--as", "json")
            assert got.returncode == 0, got.stderr
            found = json.loads(got.stdout)["changes"]
            assert sum(c["answer"].get("diff", 1) for c in found) == holds, found
            if query == "S(b)@6":  # the old program never had S(b) (no R(b)): the upgrade gave it
                assert any(c["kind"] == "upgrade" and "from T=4" in c["upgrade"] for c in found), found
            elif query == "Q(a)@2":  # withdrawn by the late retraction of P(a), read from the input topic
                fix = [c for c in found if c["kind"] == "correction"]
                assert fix and any(x["retract"] and x["where"].startswith("chronolog.facts[0] offset ")
                                   for x in fix[-1]["causes"]), found
        # --why on the fleet: the program version in force at T explains (the old one before 4)
        for query, bound in (("Q(d)@3", "Diamondminus[0,1]"), ("Q(b)@8", "Diamondminus[0,3]")):
            got = _chronolog("explain", "--why", query, "--state-dir", str(state), "--as", "json")
            assert got.returncode == 0, got.stderr
            tree = json.loads(got.stdout)
            assert bound in tree["rule"]["text"], tree
            assert any(n.get("source", "").startswith("chronolog.facts[0] offset ") for n in _walk(tree)), tree
        # a refusal: another language, exit 2 with the reason, nothing changes
        (tmp_path / "other.prolog").write_text("door(d1).\n")
        refused = _chronolog("upgrade", str(tmp_path / "other.prolog"), "--state-dir", str(state))
        assert refused.returncode == 2 and "cannot replace" in refused.stderr
