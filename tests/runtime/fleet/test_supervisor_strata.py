"""What ``up``'s supervisor learns from the upgrade outcomes on the control topic
(runtime/fleet/strata.py): the fleet grows when an applied upgrade has more strata or answer
predicates the output does not serve; refusals, repeats (one outcome per reasoner) and
programs within what runs change nothing; the file the services read says it all."""

from __future__ import annotations

import json

import pytest

from chronolog.cli.fleet import fleet_versions
from chronolog.core.errors import ChronologError
from chronolog.runtime.fleet.strata import FleetStrata


def _outcome(rid: str, strata: list[list[str]], service: str = "reasoner.1", **more) -> dict:
    return {"upgrade": rid, "version": "v", "at": "4", "service": service, "strata": strata,
            "sources": [["new.lars", f"program of {rid}"]], **more}


def test_an_applied_upgrade_with_more_strata_grows_the_fleet_once(tmp_path):
    fleet = FleetStrata(2, {"a/1", "b/1", "c/1"})
    grown = [["a/1", "c/1"], ["b/1"], ["d/1"]]
    assert fleet.learn(_outcome("r1", grown))
    assert not fleet.learn(_outcome("r1", grown, "reasoner.2"))  # the same upgrade from another reasoner
    assert fleet.strata == 3 and fleet.served == {"a/1", "b/1", "c/1", "d/1"} and len(fleet.versions) == 1
    assert not fleet.learn(_outcome("r2", [["a/1", "c/1"], ["b/1"]]))  # fewer strata: the reasoners stay
    assert fleet.strata == 3 and len(fleet.versions) == 2
    assert fleet.learn(_outcome("r3", [["a/1", "c/1", "e/1"], ["b/1"]]))  # an answer predicate not served
    assert fleet.strata == 3 and "e/1" in fleet.served
    fleet.write(tmp_path / "fleet-versions.json")
    strata, versions = fleet_versions(str(tmp_path / "fleet-versions.json"))
    assert strata == 3 and versions == tuple((("new.lars", f"program of r{i}"),) for i in (1, 2, 3))
    assert json.loads((tmp_path / "fleet-versions.json").read_text())["strata"] == 3


def test_refusals_and_outcomes_without_strata_teach_nothing():
    fleet = FleetStrata(2, {"a/1"})
    assert not fleet.learn({"upgrade": "r1", "refused": "error: no", "service": "reasoner.1"})
    assert not fleet.learn({"upgrade": "r2", "version": "v", "at": "4", "service": "chain"})  # a chain's
    assert fleet.strata == 2 and not fleet.versions


def test_a_bad_fleet_versions_file_is_a_clear_error(tmp_path):
    (tmp_path / "bad.json").write_text('{"strata": 3}')
    with pytest.raises(ChronologError, match="cannot read --fleet-versions .*bad.json"):
        fleet_versions(str(tmp_path / "bad.json"))
    with pytest.raises(ChronologError, match="cannot read --fleet-versions"):
        fleet_versions(str(tmp_path / "missing.json"))
