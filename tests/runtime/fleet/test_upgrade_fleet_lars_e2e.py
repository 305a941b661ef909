"""``chronolog upgrade`` against a real LARS fleet (``chronolog up --chain`` on the bundled
broker): the answer topic means what ``chronolog run --upgrade`` prints on the whole stream,
T in the past (a restatement), late input and a retraction on both sides of T, also when a
service is killed with SIGKILL right after the request is sent; chained (1 and 2 partitions)
and one service per stratum."""

from __future__ import annotations

import json
import urllib.request
from pathlib import Path

import pytest
from dialect_programs import (
    CHAIN_SECOND,
    CHAIN_SPAN,
    LARS_TWO_STRATA,
    LARS_TWO_STRATA_TOP_CHANGED,
    STRATA_FIRST,
    STRATA_SECOND,
    STRATA_SPAN,
)
from hosted_fleet import chronolog as _chronolog
from hosted_fleet import evaluated_then_planned, fleet_up, lines, rest_answered, upgraded
from meaning import meaning

pytestmark = pytest.mark.fleet

OLD = "q(X) :- p(X) [1].\nr(X) :- q(X), s(X).\n"
NEW = "q(X) :- p(X) [3].\nr(X) :- q(X), s(X).\nr(X) :- p(X).\n"
FIRST = [{"t": 0}, {"t": 1, "pred": "p", "args": ["a"]}, {"t": 2, "pred": "s", "args": ["a"]},
         {"t": 3, "pred": "s", "args": ["a"]}, {"t": 4, "pred": "s", "args": ["a"]}, {"t": 6}]
SECOND, SPAN = CHAIN_SECOND, CHAIN_SPAN


def points(answer_lines: list[str]) -> set:
    return meaning([json.loads(x) for x in answer_lines if x.strip()], SPAN)


@pytest.mark.parametrize(("parts", "kill"), [(1, False), (1, True), (2, True)],
                         ids=["plain", "sigkill", "2-partitions-sigkill"])
def test_upgrade_of_a_running_chain_fleet_means_run_upgrade(tmp_path: Path, parts: int, kill: bool):
    (tmp_path / "old.lars").write_text(OLD)
    (tmp_path / "new.lars").write_text(NEW)
    (tmp_path / "all.jsonl").write_bytes(lines(FIRST + SECOND))
    run = _chronolog("run", str(tmp_path / "old.lars"), "--input", str(tmp_path / "all.jsonl"),
                     "--upgrade", f"3={tmp_path / 'new.lars'}")
    assert run.returncode == 0, run.stderr
    want = points(run.stdout.splitlines())
    assert ("r", ("b",), 4) in want and ("q", ("a",), 4) in want  # (the new program's, from 3 on)
    state = tmp_path / "state"
    with fleet_up(tmp_path / "old.lars", state, ("--chain", "--partitions", str(parts))) as (info, deadline):
        bootstrap = info["bootstrap"]
        chains = [s for s in info["services"] if s["name"] == "chain"]
        assert len(chains) == parts
        plan = evaluated_then_planned(tmp_path, bootstrap, state, FIRST, tmp_path / "new.lars", "3")
        assert "changed: re-evaluated from T on" in plan and "T: 3" in plan
        out = upgraded(tmp_path / "new.lars", "3", state, chains[-1]["pid"] if kill else None)
        assert "upgraded: program version" in out
        assert rest_answered(tmp_path, bootstrap, SECOND, points, want, deadline + 90) == want
        versions = (state / "program-versions.jsonl").read_text().splitlines()
        assert len(versions) == 1 and json.loads(versions[0])["at"] == "3"
        if not kill:  # the service's metrics name the version it runs and count the upgrade
            version = json.loads(versions[0])["version"]
            text = urllib.request.urlopen(f"http://127.0.0.1:{chains[0]['metrics_port']}/metrics", timeout=10).read().decode()
            assert f'chronolog_program_info{{partition="0",service="chain",stratum="",version="{version}"}} 1.0' in text
            assert 'chronolog_upgrades_total{partition="0",service="chain",stratum=""} 1.0' in text


def _strata_points(answer_lines: list[str]) -> set:
    return meaning([json.loads(x) for x in answer_lines if x.strip()], STRATA_SPAN)


def _top_change_run_upgrade(tmp_path: Path) -> set:
    """The two-strata program's top change at 4: the files written, and what ``run --upgrade``
    of the whole stream means (the fleet's answers must mean the same)."""
    (tmp_path / "old.lars").write_text(LARS_TWO_STRATA)
    (tmp_path / "new.lars").write_text(LARS_TWO_STRATA_TOP_CHANGED)
    (tmp_path / "all.jsonl").write_bytes(lines(STRATA_FIRST + STRATA_SECOND))
    run = _chronolog("run", str(tmp_path / "old.lars"), "--input", str(tmp_path / "all.jsonl"),
                     "--upgrade", f"4={tmp_path / 'new.lars'}")
    assert run.returncode == 0, run.stderr
    want = _strata_points(run.stdout.splitlines())
    assert ("b", ("z",), 3) in want and ("b", ("z",), 9) not in want  # (the old program before 4, the new after)
    return want


@pytest.mark.parametrize("kill", [False, True], ids=["plain", "sigkill"])
def test_upgrade_of_a_fleet_of_one_service_per_stratum_means_run_upgrade(tmp_path: Path, kill: bool):
    """Only the top stratum changes: its reasoner evaluates the new rules from T on, the
    bottom one keeps its state; what the strata cannot do exactly is refused before sending."""
    want = _top_change_run_upgrade(tmp_path)
    state = tmp_path / "state"
    with fleet_up(tmp_path / "old.lars", state) as (info, deadline):
        bootstrap = info["bootstrap"]
        plan = evaluated_then_planned(tmp_path, bootstrap, state, STRATA_FIRST, tmp_path / "new.lars", "4")
        assert "stratum 1 (a/1, c/1): unchanged: keeps its state" in plan, plan
        assert "stratum 2 (b/1): changed" in plan, plan
        # a dated by an @-head in the new program only (its atoms before t do not convert into the
        # shape without times): refused before anything is sent
        (tmp_path / "three.lars").write_text(LARS_TWO_STRATA.replace("a(X) :- p(X) [2]", "a(X) at U :- p(X) at U [2]"))
        refused = _chronolog("upgrade", str(tmp_path / "three.lars"), "--state-dir", str(state))
        assert refused.returncode == 2 and "kept with its times" in refused.stderr, refused.stderr
        reasoner = next(s["pid"] for s in info["services"] if s["name"] == "reasoner-2")
        upgraded(tmp_path / "new.lars", "4", state, reasoner if kill else None)
        assert rest_answered(tmp_path, bootstrap, STRATA_SECOND, _strata_points, want, deadline + 90) == want


@pytest.mark.parametrize("kill", [False, True], ids=["plain", "sigkill"])
def test_top_change_of_a_chain_fleet_restated_at_once_means_run_upgrade(tmp_path: Path, kill: bool):
    """The chain keeps the bottom stratum (a, c) and its top one (b) reads only the point it
    evaluates: both versions' b over [T, now] in one step each, the restatement from their
    difference (``dialects/lars/restating.py``); the chain killed with SIGKILL right after the
    request is sent applies it again after its restart."""
    want = _top_change_run_upgrade(tmp_path)
    state = tmp_path / "state"
    with fleet_up(tmp_path / "old.lars", state, ("--chain",)) as (info, deadline):
        bootstrap = info["bootstrap"]
        plan = evaluated_then_planned(tmp_path, bootstrap, state, STRATA_FIRST, tmp_path / "new.lars", "4")
        assert "unchanged: keeps its state" in plan, plan
        chain = next(s["pid"] for s in info["services"] if s["name"] == "chain")
        upgraded(tmp_path / "new.lars", "4", state, chain if kill else None)
        assert rest_answered(tmp_path, bootstrap, STRATA_SECOND, _strata_points, want, deadline + 90) == want
