"""``explain --changes`` on an upgraded DatalogMTL fleet (its input topic's records read
again, no broker): the upgrade is replayed as the service applies it — an unchanged
stratum's answers are kept, not restated, so no upgrade is among their causes; a changed
stratum's answers from T on are the upgrade's."""

from __future__ import annotations

import orjson

from chronolog.dialects.registry import lookup, read_line, upgrader
from chronolog.runtime.explain import fleet_changes, parse_query
from chronolog.stages.interface import StageSpec
from chronolog.versions import UpgradeRequest, version_id

OLD = "Q(X):-Diamondminus[0,1]P(X)\nS(X):-Q(X),R(X)\n"
NEW = OLD.replace("S(X):-Q(X),R(X)", "S(X):-Diamondminus[0,2]Q(X),R(X)")
FIRST = [{"t": 0}, {"interval": "[1,2]", "pred": "P", "args": ["a"]}, {"interval": "[2,6]", "pred": "R", "args": ["a"]},
         {"t": 6}, {"t": 9}]  # (evaluated past T before the upgrade: S(a)'s end written)


def _changes(query: str) -> list:
    row = lookup("mtl")
    program = row.parse([("old.mtl", OLD)])
    request = UpgradeRequest("r1", version_id((("new.mtl", NEW),)), "mtl", "3", (("new.mtl", NEW),))
    values = [orjson.dumps(e) for e in FIRST] + [request.encode(), orjson.dumps({"t": 10})]
    records = [("chronolog.facts", 0, i, v, 0.0) for i, v in enumerate(values)]
    outcomes = {"r1": {"upgrade": "r1", "version": request.version, "at": "3", "service": "chain"}}
    read = lambda line, where: read_line("mtl", program, line, where)  # noqa: E731
    spec = StageSpec("chain")
    return fleet_changes(records, read, upgrader(row, program, spec), outcomes, parse_query(query, integral=False))


def test_a_kept_stratum_is_not_restated_and_a_changed_one_is():
    kept = _changes("Q(a)@3")  # Q(a) holds on [1,3]: from T on, the restated part were it not kept
    assert kept and not any(c.note for c in kept), kept
    assert sum(c.line.get("diff", 1) for c in kept) == 1
    changed = _changes("S(a)@4")  # S(a) holds on [2,3] under the old rules, on [2,5] under the new ones
    assert any("from T=3" in c.note for c in changed), changed
    assert sum(c.line.get("diff", 1) for c in changed) == 1
