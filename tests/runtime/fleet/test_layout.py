"""Every dialect lays its program out for the fleet (``Dialect.layout``): the runtime builds
topics and services from that layout alone, whatever the dialect."""

from __future__ import annotations

import pytest

from chronolog.core.errors import ChronologError
from chronolog.dialects.lars.stages import ChainStage, GroundingStage, OutputStage, ReasonerStage
from chronolog.dialects.load import load_program
from chronolog.dialects.registry import RunOptions, lookup
from chronolog.runtime.fleet.config import ServiceConfig, make_stage
from chronolog.runtime.fleet.topology import build_topology
from chronolog.stages.evaluator import EvaluatorStage
from chronolog.stages.ingest import IngestStage

LARS = "a(X) :- p(X) [3].\nb(X) :- a(X), not c(X).\nc(X) :- q(X).\n"
LASER = "a(X) :- time_win(3, 0, 1, box(p(X))).\n"
MTL = "Alarm(X):-Boxminus[0,2]Hot(X)\n"
BATCH_MTL = "Q(X):-Boxplus[0,1]P(X)\n"
RTEC = """\
initiatedAt(open(D)=true, T) :- happensAt(opened(D), T).
terminatedAt(open(D)=true, T) :- happensAt(closed(D), T).
door(d1).
grounding(open(D)=true) :- door(D).
"""


def layout(tmp_path, name: str, text: str, options: RunOptions = RunOptions()):  # noqa: B008 (a frozen record)
    path = tmp_path / name
    path.write_text(text)
    program = load_program([str(path)])
    return lookup(program.dialect).layout(program, options)


def test_lars_lays_out_its_strata_per_stratum_and_by_key(tmp_path) -> None:
    got = layout(tmp_path, "p.lars", LARS)
    assert got.per_stratum and len(got.strata) == 2 and got.partition_key == {
        "a/1": 0, "b/1": 0, "c/1": 0, "p/1": 0, "q/1": 0}
    assert got.about() == [] and got.require() is got
    kinds = {role: type(make_stage(ServiceConfig(role, got, "localhost:0", stratum=1 if role == "reasoner" else None,
                                                 partitions=2)))
             for role in ("ingest", "grounding", "reasoner", "output", "chain")}
    assert kinds == {"ingest": IngestStage, "grounding": GroundingStage, "reasoner": ReasonerStage,
                     "output": OutputStage, "chain": ChainStage}
    services = [s.name for s in build_topology(got, 2).services]
    assert services == ["ingest", "grounding", "reasoner-1", "reasoner-2", "output"]
    assert [s.name for s in build_topology(got, 2, chain=True).services] == ["ingest", "chain"]
    assert make_stage(ServiceConfig("chain", got, "localhost:0")).ingest is not None  # type: ignore[attr-defined]


def test_laser_is_laid_out_by_the_lars_engine(tmp_path) -> None:
    got = layout(tmp_path, "p.laser", LASER)
    assert got.per_stratum and got.strata == (("a/1",),)


def test_lars_options_reach_the_stages(tmp_path) -> None:
    got = layout(tmp_path, "p.lars", "a :- not b.\nb :- not a.\n", RunOptions(mode="oneshot", seed=3))
    stage = make_stage(ServiceConfig("chain", got, "localhost:0"))
    assert stage.reasoner.plan.solver == "oneshot" and stage.reasoner.plan.seed == 3  # type: ignore[attr-defined]


@pytest.mark.parametrize(("name", "text", "dialect"), [("p.mtl", MTL, "mtl"), ("p.prolog", RTEC, "rtec")])
def test_an_evaluator_dialect_is_one_chain_on_one_partition(tmp_path, name: str, text: str, dialect: str) -> None:
    got = layout(tmp_path, name, text)
    assert got.strata == ((),) and not got.per_stratum and got.partition_key is None
    assert got.partition_reason == f"the {dialect} evaluator is not split by key"
    assert got.about() == lookup(dialect).describe(load_program([str(tmp_path / name)]))  # topology prints it first
    topology = build_topology(got, partitions=3)
    assert [s.name for s in topology.services] == ["chain"]
    assert topology.partition_reason.endswith("; one chain service reads the input topic and hosts the evaluator")
    assert isinstance(make_stage(ServiceConfig("chain", got, "localhost:0")), EvaluatorStage)
    with pytest.raises(ChronologError, match=f"a {dialect} program runs as one chain service"):
        make_stage(ServiceConfig("ingest", got, "localhost:0"))


def test_a_program_without_a_fleet_says_why_when_required(tmp_path) -> None:
    got = layout(tmp_path, "q.mtl", BATCH_MTL)
    assert got.unavailable is not None and "not forward-propagating" in str(got.unavailable)
    assert any(line.startswith("fleet: not available") for line in got.about())
    with pytest.raises(ChronologError, match="cannot be evaluated as a stream"):
        got.require()
