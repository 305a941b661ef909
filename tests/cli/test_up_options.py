"""Every option of `chronolog up` × every dialect: taken, with the meaning it has for
`chronolog run` where it is a run option too, or refused with a reason before anything starts.

Nothing starts here (no broker, no service process): an option that is taken is followed
from `up`'s command line to the command line of every service the supervisor would start
(``Fleet.plan_children``), parsed as ``chronolog service`` parses it, to the configuration
and the stage each service would run (``service_config``, ``make_stage``).  The refusals of
the dialect-specific options are in test_fleet_options.py (for `up` and `service`).
"""

from __future__ import annotations

import argparse
import sys
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
from dialect_programs import PROGRAMS, SUFFIX, TITLE

from chronolog.cli.fleet import _fleet, fleet_layout, service_config
from chronolog.cli.main import build_parser, evaluator_for, main
from chronolog.dialects.load import load_program
from chronolog.runtime.fleet.config import make_stage
from chronolog.runtime.fleet.topology import build_topology

DIALECTS = list(PROGRAMS)
LARS = {"lars", "laser"}


def _program(tmp_path: Path, dialect: str, suffix: str | None = None) -> str:
    prog = tmp_path / f"prog{SUFFIX[dialect] if suffix is None else suffix}"
    prog.write_text(PROGRAMS[dialect][0])
    return str(prog)


class Planned:
    """What `up` would start for a command line: the fleet, and per service process its
    parsed `chronolog service` arguments, configuration and stage (None for the archiver)."""

    def __init__(self, argv: list[str]) -> None:
        args = build_parser().parse_args(argv)
        self.layout = fleet_layout(args)
        self.fleet = _fleet(args, self.layout)
        if self.fleet.bootstrap is None:
            self.fleet.bootstrap = "127.0.0.1:1"  # (what `up` would take from the bundled broker)
        fleet = self.fleet
        self.topology = build_topology(self.layout, fleet.partitions, fleet.input_partitions, fleet.prefix,
                                       chain=fleet.chain)
        fleet.plan_children(self.topology)
        self.children: list[tuple[Any, argparse.Namespace, Any, Any]] = []
        for child in fleet.children:
            assert child.argv[:3] == [sys.executable, "-m", "chronolog"]
            sub = build_parser().parse_args(child.argv[3:])
            if sub.command == "service":
                cfg = service_config(sub)
                self.children.append((child, sub, cfg, make_stage(cfg)))
            else:
                self.children.append((child, sub, None, None))

    @property
    def services(self) -> list[tuple[Any, argparse.Namespace, Any, Any]]:
        return [c for c in self.children if c[2] is not None]

    @property
    def stages(self) -> list[Any]:
        return [stage for *_, stage in self.services]

    def argv(self) -> list[list[str]]:
        return [child.argv for child, *_ in self.children]


def _up(tmp_path: Path, dialect: str, *options: str, program: str | None = None) -> Planned:
    return Planned(["up", program or _program(tmp_path, dialect), "--state-dir", str(tmp_path / "state"), *options])


def _run_evaluator(tmp_path: Path, dialect: str, *options: str) -> Any:
    """The evaluator `chronolog run` makes of the same program and options."""
    args = build_parser(light=True).parse_args(["run", _program(tmp_path, dialect), "--input", "-", *options])
    return evaluator_for(args, lambda message: None)[3]


def _reasoners(planned: Planned) -> list[Any]:
    return [stage.reasoner for stage in planned.stages if hasattr(stage, "reasoner")]


# ---------------------------------------------------------------- each option: what it means where it is taken


def retention(tmp_path: Path, dialect: str) -> None:
    planned = _up(tmp_path, dialect, "--retention", "5")
    if dialect in LARS:  # ingest routes older events to the late topic; the reasoners prune one point later
        ingest = [s for s in planned.stages if type(s).__name__ == "IngestStage"]
        assert [s.retention for s in ingest] == [5]
        assert {r.retention for r in _reasoners(planned)} == {6}
    else:  # the chain service's evaluator applies it as run's does
        (stage,) = planned.stages
        assert stage.evaluator.retention == _run_evaluator(tmp_path, dialect, "--retention", "5").retention == 5
    unlimited = _up(tmp_path, dialect, "--retention", "inf")
    assert all("--retention" in argv and "inf" in argv for argv in unlimited.argv())


def window_and_step(tmp_path: Path, dialect: str) -> None:
    (stage,) = _up(tmp_path, dialect, "--window", "10", "--step", "5").stages
    run = _run_evaluator(tmp_path, dialect, "--window", "10", "--step", "5")
    assert type(stage.evaluator) is type(run)
    assert (stage.evaluator.window, stage.evaluator.step) == (run.window, run.step) == (10, 5)


def mode_and_seed(tmp_path: Path, dialect: str) -> None:
    for options in (["--mode", "oneshot", "--seed", "3"], ["--mode", "tms"], ["--seed", "7"]):
        plans = {(r.plan.solver, r.plan.seed) for r in _reasoners(_up(tmp_path, dialect, *options))}
        run = _run_evaluator(tmp_path, dialect, *options).plan
        assert plans == {(run.solver, run.seed)}, options
    assert {r.plan.seed for r in _reasoners(_up(tmp_path, dialect, "--seed", "7"))} == {7}


def mark_no_answer_set(tmp_path: Path, dialect: str) -> None:
    """Every service is told (a no-op where the program has an answer set at every point:
    DatalogMTL, RTEC); a LARS fleet's stage writing the answer topic keeps the no_answer_set
    lines with it, and only with it."""
    for chain in ([], ["--chain"]):
        for given in (False, True):
            planned = _up(tmp_path, dialect, *chain, *(["--mark-no-answer-set"] if given else []))
            assert planned.fleet.mark_no_answer_set is given
            assert {cfg.mark_no_answer_set for _, _, cfg, _ in planned.children if cfg is not None} == {given}
            writing = [s for s in planned.stages if s.kind in ("output", "chain") and hasattr(s, "writer")]
            assert bool(writing) is (dialect in LARS), (chain, planned.stages)
            assert all(s.mark is given for s in writing), (chain, given)


def idle_flush(tmp_path: Path, dialect: str) -> None:
    """The latest time point is evaluated after this many idle seconds: by ingest's idle
    record in a per-stratum LARS fleet, by the chain's own clock otherwise."""
    for chain in ([], ["--chain"]):
        stages = _up(tmp_path, dialect, "--idle-flush", "0.25", *chain).stages
        flushes = [getattr(s, "idle_flush", None) for s in stages]
        flushes += [s.grounding.idle_flush for s in stages if hasattr(s, "grounding")]
        assert 0.25 in flushes and 1.0 not in flushes, (chain, flushes)


def dialect_option(tmp_path: Path, dialect: str) -> None:
    """A program file whose name says no language, read in the one --dialect names, by every service."""
    program = _program(tmp_path, dialect, ".txt")
    planned = _up(tmp_path, dialect, "--dialect", dialect, program=program)
    assert planned.services
    for _, sub, cfg, _ in planned.services:
        assert load_program(sub.program, sub.dialect).dialect == dialect
        assert cfg.layout.per_stratum == planned.layout.per_stratum


def bootstrap(tmp_path: Path, dialect: str) -> None:
    planned = _up(tmp_path, dialect, "--bootstrap", "kafka.example:9093")
    assert planned.fleet.bootstrap == "kafka.example:9093"
    assert {cfg.bootstrap for *_, cfg, _ in planned.services} == {"kafka.example:9093"}


def partitions(tmp_path: Path, dialect: str) -> None:
    """Key partitions where the program is split by key (q(X) :- p(X) [2] is); one otherwise."""
    planned = _up(tmp_path, dialect, "--partitions", "2")
    split = planned.layout.partition_key is not None
    assert split == (dialect in LARS)
    owned = {cfg.partition for *_, cfg, _ in planned.services if cfg.service != "ingest"}
    assert owned == ({0, 1} if split else {0})
    assert {cfg.partitions for *_, cfg, _ in planned.services} == ({2} if split else {1})


def input_partitions(tmp_path: Path, dialect: str) -> None:
    planned = _up(tmp_path, dialect, "--input-partitions", "3")
    facts = [t for t in planned.topology.topics if t.name == "chronolog.facts"]
    assert [t.partitions for t in facts] == [3]
    assert {cfg.input_partitions for *_, cfg, _ in planned.services} == {3}


def state_dir(tmp_path: Path, dialect: str) -> None:
    planned = _up(tmp_path, dialect)  # (_up gives --state-dir)
    assert {Path(cfg.state_dir) for *_, cfg, _ in planned.services} == {(tmp_path / "state").resolve()}
    assert (tmp_path / "state" / "run").is_dir() and not (tmp_path / ".chronolog").exists()


def kafka_config(tmp_path: Path, dialect: str) -> None:
    props = tmp_path / "client.properties"
    props.write_text("security.protocol=SASL_SSL\n")
    planned = _up(tmp_path, dialect, "--kafka-config", str(props))
    assert {cfg.kafka.get("security.protocol") for *_, cfg, _ in planned.services} == {"SASL_SSL"}


def topic_prefix(tmp_path: Path, dialect: str) -> None:
    planned = _up(tmp_path, dialect, "--topic-prefix", "plant7")
    assert {t.name.split(".")[0] for t in planned.topology.topics} == {"plant7"}
    assert {cfg.prefix for *_, cfg, _ in planned.services} == {"plant7"}


def archive(tmp_path: Path, dialect: str) -> None:
    planned = _up(tmp_path, dialect, "--archive", str(tmp_path / "arch"))
    (sub,) = [sub for _, sub, cfg, _ in planned.children if cfg is None]
    assert sub.command == "archive" and sub.out == str(tmp_path / "arch")
    assert set(sub.topics.split(",")) == {"chronolog.facts", "chronolog.answers"}


def chain(tmp_path: Path, dialect: str) -> None:
    """Every partition's evaluation in one chain service (a DatalogMTL or RTEC fleet is one anyway)."""
    chained = _up(tmp_path, dialect, "--chain")
    assert {cfg.service for *_, cfg, _ in chained.services} == {"chain"}
    assert {type(s).__name__ for s in chained.stages} == ({"ChainStage"} if dialect in LARS else {"EvaluatorStage"})
    assert ({cfg.service for *_, cfg, _ in _up(tmp_path, dialect).services} == {"chain"}) == (dialect not in LARS)


def after_ready(tmp_path: Path, dialect: str) -> None:
    """--publish and --tail act on the topics once the fleet is ready: the same fleet either way."""
    events = tmp_path / "in.jsonl"
    events.write_text('{"t": 0}\n')
    plain = _up(tmp_path, dialect).argv()
    assert _up(tmp_path, dialect, "--publish", str(events), "--tail").argv() == plain


# option -> (the dialects that take it, how it shows where it is taken); every `up` option is here
CASES: dict[str, tuple[set[str], Callable[[Path, str], None]]] = {
    "--retention": (set(DIALECTS), retention),
    "--window": ({"rtec"}, window_and_step),
    "--step": ({"rtec"}, window_and_step),
    "--mode": (LARS, mode_and_seed),
    "--seed": (LARS, mode_and_seed),
    "--mark-no-answer-set": (set(DIALECTS), mark_no_answer_set),
    "--idle-flush": (set(DIALECTS), idle_flush),
    "--dialect": (set(DIALECTS), dialect_option),
    "--bootstrap": (set(DIALECTS), bootstrap),
    "--partitions": (set(DIALECTS), partitions),
    "--input-partitions": (set(DIALECTS), input_partitions),
    "--state-dir": (set(DIALECTS), state_dir),
    "--kafka-config": (set(DIALECTS), kafka_config),
    "--topic-prefix": (set(DIALECTS), topic_prefix),
    "--archive": (set(DIALECTS), archive),
    "--chain": (set(DIALECTS), chain),
    "--publish": (set(DIALECTS), after_ready),
    "--tail": (set(DIALECTS), after_ready),
}
# a value for the refusal of each dialect-specific option (with --window for --step: alone it is refused anyway)
REFUSED_WITH = {"--window": ["--window", "10"], "--step": ["--window", "10", "--step", "5"],
                "--mode": ["--mode", "oneshot"], "--seed": ["--seed", "3"]}


def _options(command: str) -> set[str]:
    parser = build_parser()
    sub = next(a for a in parser._actions if isinstance(a, argparse._SubParsersAction))
    return {a.option_strings[0] for a in sub.choices[command]._actions if a.option_strings and a.dest != "help"}


def test_every_option_of_up_is_held_to_every_dialect():
    assert _options("up") == set(CASES)


@pytest.mark.parametrize("dialect", DIALECTS)
@pytest.mark.parametrize("option", list(CASES))
def test_an_option_means_the_same_for_every_dialect_that_takes_it_or_is_refused(tmp_path, capsys, option, dialect):
    takers, check = CASES[option]
    if dialect in takers:
        check(tmp_path, dialect)
        return
    capsys.readouterr()
    argv = ["up", _program(tmp_path, dialect), *REFUSED_WITH[option], "--state-dir", str(tmp_path / "state")]
    assert main(argv) == 2
    owners = " or ".join(dict.fromkeys(TITLE[d] for d in DIALECTS if d in takers))
    assert f" is for {owners} programs (this one is {dialect})" in capsys.readouterr().err
    assert not (tmp_path / "state").exists()  # refused before anything started


@pytest.mark.parametrize("dialect", DIALECTS)
@pytest.mark.parametrize("mode", ["stream", "batch"])
def test_datalogmtl_run_modes_are_no_fleet_mode(tmp_path, capsys, dialect, mode):
    """A fleet evaluates a stream without end: run's DatalogMTL --mode has no meaning there."""
    capsys.readouterr()
    with pytest.raises(SystemExit) as exc:
        main(["up", _program(tmp_path, dialect), "--mode", mode, "--state-dir", str(tmp_path / "state")])
    assert exc.value.code == 2
    assert f"argument --mode: invalid choice: '{mode}'" in capsys.readouterr().err
    assert not (tmp_path / "state").exists()


def test_window_with_a_retention_is_refused_as_run_refuses_it(tmp_path, capsys):
    """RTEC's window is how late an event may be: with a finite --retention too, run refuses,
    and so does up (its windowed evaluator would ignore the retention)."""
    program = _program(tmp_path, "rtec")
    stream = tmp_path / "in.jsonl"
    stream.write_text('{"t": 3, "pred": "opened", "args": ["d1"]}\n')
    both = ["--window", "10", "--retention", "5"]
    capsys.readouterr()
    assert main(["run", program, "--input", str(stream), *both]) == 2
    said = capsys.readouterr().err
    assert "--window and --retention exclude each other" in said
    assert main(["up", program, *both, "--state-dir", str(tmp_path / "state")]) == 2
    assert capsys.readouterr().err == said
    assert not (tmp_path / "state").exists()
    (stage,) = _up(tmp_path, "rtec", "--window", "10", "--retention", "inf").stages  # unlimited: the window rules
    assert stage.evaluator.window == 10
