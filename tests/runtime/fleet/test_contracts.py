"""Topic contracts (schemas/) and derived topologies (topology/) stay true."""

from __future__ import annotations

import io
import subprocess
import sys
from pathlib import Path

import pytest
from pydantic import ValidationError

from chronolog.contract.models import AnswerLine, FactEvent, json_schemas
from chronolog.core.errors import InputError
from chronolog.dialects.lars.layout import lars_layout
from chronolog.dialects.lars.parser import parse_lars
from chronolog.dialects.lars.plan import plan_program
from chronolog.dialects.load import load_program
from chronolog.io.formats import read_events
from chronolog.runtime.fleet.topology import build_topology

ROOT = Path(__file__).resolve().parents[3]


def test_checked_in_schemas_match_the_models():
    for name, text in json_schemas().items():
        path = ROOT / "schemas" / name
        assert path.exists(), f"missing {path}: run chronolog schemas --write schemas"
        assert path.read_text() == text, f"{path} is stale: run chronolog schemas --write schemas"


@pytest.mark.parametrize(
    "line",
    [
        '{"t": 5, "pred": "p", "args": ["a", 3]}',
        '{"t": 9}',
        '{"t": 5, "pred": "p", "args": ["a"], "op": "retract"}',
        '{"t": 5.5, "pred": "p"}',
        '{"t": 5, "pred": "p", "args": [true]}',
        '{"t": 5, "pred": "p", "args": [1.5]}',
        '{"t": 5, "pred": "p", "extra": 1}',
        '{"t": 5, "pred": "p", "op": "delete"}',
        '{"t": "5", "pred": "p"}',
        '{"t": 5, "pred": ""}',
    ],
)
def test_schema_and_reader_agree(line):
    try:
        FactEvent.model_validate_json(line)
        schema_ok = True
    except ValidationError:
        schema_ok = False
    try:
        list(read_events(io.StringIO(line + "\n"), "x.jsonl"))
        reader_ok = True
    except InputError:
        reader_ok = False
    assert schema_ok == reader_ok


def test_answer_lines_validate():
    AnswerLine.model_validate_json('{"interval": "[5,inf)", "pred": "q", "args": ["a"], "diff": -1}')
    AnswerLine.model_validate_json('{"t": 3, "pred": "q", "args": []}')
    with pytest.raises(ValidationError):
        AnswerLine.model_validate_json('{"interval": "5..7", "pred": "q"}')


def test_topology_has_one_reasoner_per_stratum():
    plan = plan_program(parse_lars("a(X) :- p(X) [3].\nb(X) :- a(X), not c(X).\nc(X) :- q(X).\nd(X) :- b(X), not a(X).\n"))
    topo = build_topology(lars_layout(plan), partitions=4)
    reasoners = [s for s in topo.services if s.name.startswith("reasoner-")]
    assert len(reasoners) == len(plan.strata) == 2
    assert [s.name for s in topo.services][:2] == ["ingest", "grounding"] and topo.services[-1].name == "output"
    # each reasoner reads every lower stratum's topic
    assert reasoners[1].reads == ["chronolog.grounded", "chronolog.stratum.1"]
    assert topo.partition_key == {"a/1": 0, "b/1": 0, "c/1": 0, "d/1": 0, "p/1": 0, "q/1": 0}
    assert all(t.partitions == 4 for t in topo.topics if t.name.startswith("chronolog.stratum."))
    assert {t.cleanup for t in topo.topics if t.name.endswith(".changelog")} == {"compact"}


@pytest.mark.parametrize(
    "program,strata",
    [
        ("a(X) :- p(X) [3].", 1),
        ("a(X) :- p(X) [3].\nb(X) :- a(X), not c(X).\nc(X) :- q(X).\nd(X) :- b(X), not a(X).\n", 2),
        ("a(X) :- p(X).\nb(X) :- p(X), not a(X).\nc(X) :- p(X), not b(X).\n", 3),
    ],
)
def test_path_is_the_longest_row_of_services_to_the_answers(program, strata):
    plan = plan_program(parse_lars(program))
    assert plan.fleet_strata == strata

    def path(partitions: int, chain: bool = False, sink: str = "chronolog.answers") -> list[str]:
        return build_topology(lars_layout(plan), partitions=partitions, chain=chain).path("chronolog.facts", sink)

    # each reasoner reads the one below it, so the row passes every one
    assert path(2) == ["ingest", "grounding"] + [f"reasoner-{k}" for k in range(1, strata + 1)] + ["output"]
    assert path(1, chain=True) == ["chain"]
    assert path(2, chain=True) == ["ingest", "chain"]
    assert path(2, sink="chronolog.dlq") == ["ingest"]
    assert build_topology(lars_layout(plan), partitions=2).path("chronolog.answers", "chronolog.facts") == []


@pytest.mark.parametrize(
    "program,why",
    [
        ("q(X,Z) :- p(X,Y), p(Y,Z).", "no argument position"),
        ("a(X) :- p(X) [3 #].", "tuple window"),
        ("a :- p.", "without arguments"),
    ],
)
def test_unpartitionable_programs_say_why(program, why):
    topo = build_topology(lars_layout(plan_program(parse_lars(program))), partitions=3)
    assert topo.partition_key is None and why in topo.partition_reason
    assert all(t.partitions == 1 for t in topo.topics)


def test_example_topology_files_are_current():
    prog = str(ROOT / "src" / "chronolog" / "examples" / "traffic.lars")
    topo = build_topology(lars_layout(plan_program(load_program([prog]))))
    assert (ROOT / "topology" / "traffic.txt").read_text() == topo.describe()
    assert (ROOT / "topology" / "traffic.mmd").read_text() == topo.mermaid()
    proc = subprocess.run([sys.executable, "-m", "chronolog", "topology", prog], capture_output=True, text=True)
    assert proc.returncode == 0 and proc.stdout == topo.describe()
