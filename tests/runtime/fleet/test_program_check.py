"""A service restarted with another program than the one its state was made by refuses to
run (``stages/program.py``, ``runtime/fleet/restore.check_program``), at the stages without a
broker: each stage's state written out and read back into a stage configured with a program
version, as a restarted service has it.  A version the state upgraded to, or its base one,
runs on; a state written before the record was kept runs as before."""

from __future__ import annotations

from pathlib import Path

import orjson
import pytest

import chronolog.cli.fleet as fleet_cli
from chronolog.cli.main import main
from chronolog.core.errors import ChronologError
from chronolog.dialects.registry import RunOptions, lookup
from chronolog.runtime.fleet.config import ServiceConfig, make_stage
from chronolog.runtime.fleet.restore import check_program
from chronolog.stages.interface import StageSpec
from chronolog.state.schema import read_snapshot, snapshot_bytes
from chronolog.state.snapshots import roundtrip
from chronolog.versions import UpgradeRequest, version_id

MTL_OLD = "Q(X):-Diamondminus[0,1]P(X)\n"
MTL_NEW = "Q(X):-Diamondminus[0,3]P(X)\n"
MTL_OTHER = "Q(X):-P(X)\n"
MTL_EVENTS = [{"t": 0}, {"interval": "[1,2]", "pred": "P", "args": ["a"]}, {"t": 6}]
LARS_OLD = "a(X) :- p(X) [2].\nb(X) :- a(X), not c(X).\nc(X) :- q(X).\n"  # strata: (a, c), (b)
LARS_TOP = "a(X) :- p(X) [2].\nb(X) :- a(X), not c(X), X != z.\nc(X) :- q(X).\n"  # the same strata and answers
LARS_MORE = LARS_OLD + "d(X) :- b(X).\n"  # another answer predicate
LARS_EVENTS = [{"t": 0}, {"t": 1, "pred": "p", "args": ["x"]}, {"t": 2, "pred": "q", "args": ["x"]}, {"t": 5}]


def v(text: str) -> str:
    return version_id((("prog", text),))


def stage(dialect: str, text: str, role: str = "chain", version: str | None = "own", stratum: int | None = None):
    """The stage of a service running ``text``, configured with its version (``"own"``)."""
    row = lookup(dialect)
    layout = row.layout(row.parse([("prog", text)]), RunOptions())
    return layout.stage(StageSpec(role, stratum=stratum, idle_flush=1000.0, chained_ingest=dialect == "lars",
                                  version=v(text) if version == "own" else version))


def feed(s, events: list[dict]) -> None:
    s.process([(None, "chronolog.facts", 0, i, orjson.dumps(e)) for i, e in enumerate(events)], now=0.0)
    s.process([], now=10_000.0)


def upgrade(s, dialect: str, new: str, at: str, role: str = "facts") -> None:
    request = UpgradeRequest("r1", v(new), dialect, at, (("prog", new),)).encode()
    outs, _ = s.process([(role, "chronolog.facts", 0, 100, request)], now=0.0)
    said = [orjson.loads(o.payload) for o in outs if o.topic == "control"]
    assert said and "refused" not in said[0], said


@pytest.mark.parametrize(("dialect", "old", "new", "events"), [
    ("mtl", MTL_OLD, MTL_NEW, MTL_EVENTS), ("lars", LARS_OLD, LARS_TOP, LARS_EVENTS)])
def test_a_state_refuses_another_program(dialect, old, new, events) -> None:
    running = stage(dialect, old)
    feed(running, events)
    assert roundtrip(running, stage(dialect, old)).program_refusal() is None  # a plain restart
    restarted = roundtrip(running, stage(dialect, new))
    why = restarted.program_refusal()
    assert why is not None and f"made by program version {v(old)}" in why
    assert f"configured with program version {v(new)}" in why and "chronolog upgrade NEW_FILE" in why
    cfg = ServiceConfig("chain", None, "broker:9092", state_dir=Path("sd"))  # type: ignore[arg-type]
    with pytest.raises(ChronologError, match=rf"^error: chain-p0 \(state in sd and its changelog\): its state was "
                                             rf"made by program version {v(old)}"):
        check_program(cfg, restarted)


@pytest.mark.parametrize(("dialect", "old", "new", "other", "events", "at"), [
    ("mtl", MTL_OLD, MTL_NEW, MTL_OTHER, MTL_EVENTS, "3"), ("lars", LARS_OLD, LARS_TOP, LARS_MORE, LARS_EVENTS, "3")])
def test_after_an_upgrade_the_old_and_the_new_program_run_on(dialect, old, new, other, events, at) -> None:
    running = stage(dialect, old)
    feed(running, events)
    upgrade(running, dialect, new, at)
    # a pod that restarts with the old ConfigMap, and one restarted after `helm upgrade`
    assert roundtrip(running, stage(dialect, old)).program_refusal() is None
    again = roundtrip(running, stage(dialect, new))
    assert again.program_refusal() is None
    why = roundtrip(again, stage(dialect, other)).program_refusal()  # the record survives a restart
    assert why is not None and f"made by program version {v(old)}, upgraded to {v(new)}" in why
    assert f"configured with program version {v(other)}" in why and f"the program it runs ({v(new)})" in why


def test_a_state_written_before_the_record_runs_as_before() -> None:
    running = stage("mtl", MTL_OLD, version=None)  # as a service of an earlier build wrote it
    feed(running, MTL_EVENTS)
    assert b"base_version" not in snapshot_bytes(running)
    assert roundtrip(running, stage("mtl", MTL_NEW)).program_refusal() is None
    assert stage("mtl", MTL_NEW).program_refusal() is None  # a fresh state: the configured program's


def test_the_record_is_in_each_kind_that_depends_on_the_rules() -> None:
    kinds = {"chain": stage("lars", LARS_OLD), "evaluator": stage("mtl", MTL_OLD),
             "reasoner": stage("lars", LARS_OLD, "reasoner", stratum=1), "output": stage("lars", LARS_OLD, "output")}
    for kind, s in kinds.items():
        assert read_snapshot(snapshot_bytes(s), kind).base_version == s.version, kind  # type: ignore[attr-defined]
    for role in ("ingest", "grounding"):  # their state holds no derived facts: any program reads it
        s = stage("lars", LARS_OLD, role)
        assert roundtrip(s, stage("lars", LARS_MORE, role)).program_refusal() is None


def test_per_stratum_services() -> None:
    """A reasoner checks its program like a chain; an upgrade record it applied (here at a
    stratum whose rules do not change: it records the upgrade all the same) lets the new
    program run.  The output sees no upgrade record and depends on the strata and answer
    predicates only, which an upgrade keeps: another program with the same ones runs on."""
    for k in (1, 2):
        reasoner = stage("lars", LARS_OLD, "reasoner", stratum=k)
        assert roundtrip(reasoner, stage("lars", LARS_TOP, "reasoner", stratum=k)).program_refusal() is not None
        upgrade(reasoner, "lars", LARS_TOP, "3", role="grounded")
        assert roundtrip(reasoner, stage("lars", LARS_TOP, "reasoner", stratum=k)).program_refusal() is None
        assert roundtrip(reasoner, stage("lars", LARS_OLD, "reasoner", stratum=k)).program_refusal() is None
    output = stage("lars", LARS_OLD, "output")
    assert roundtrip(output, stage("lars", LARS_TOP, "output")).program_refusal() is None
    why = roundtrip(output, stage("lars", LARS_MORE, "output")).program_refusal()
    assert why is not None and v(LARS_OLD) in why and v(LARS_MORE) in why and "answers a/1,b/1,c/1" in why


def test_service_exits_2_naming_both_versions(tmp_path, capsys, monkeypatch) -> None:
    """``chronolog service`` of a changed file over a state of the old one: the stage made
    from its configuration (the version of its files) refuses the restored state, and the
    command exits 2 with the message (``up`` reports a service that exits while starting,
    with its log)."""

    class Restoring:  # the service up to its restore (no broker): the state is the old program's
        def __init__(self, cfg: ServiceConfig) -> None:
            self.cfg = cfg

        def run(self, ready) -> None:
            old = stage("mtl", MTL_OLD)
            feed(old, MTL_EVENTS)
            check_program(self.cfg, roundtrip(old, make_stage(self.cfg)))

    monkeypatch.setattr(fleet_cli, "Service", Restoring)
    (tmp_path / "new.mtl").write_text(MTL_NEW)
    code = main(["service", "chain", str(tmp_path / "new.mtl"), "--bootstrap", "localhost:1",
                 "--state-dir", str(tmp_path / "sd")])
    err = capsys.readouterr().err
    assert code == 2, err
    assert f"made by program version {v(MTL_OLD)}" in err and f"configured with program version {v(MTL_NEW)}" in err
