"""Every option of `chronolog backfill` × every dialect: taken with the meaning it has for
`chronolog run`, or refused with a reason — decided before Spark starts (these tests start
none: a refusal returns first; the cases that pass the checks stop at a history file that
does not exist, or reach a recorder standing for the job, which shows what each option
passes to it).  What the job does with them to the answers is held by the Spark tests
(test_spark_backfill.py, test_mtl_backfill.py, test_rtec_backfill.py, runtime/test_upgrade.py)."""

from __future__ import annotations

from fractions import Fraction
from pathlib import Path

import orjson
import pytest
from dialect_programs import PROGRAMS, SUFFIX, TITLE

from chronolog.cli.main import main
from chronolog.dialects.load import load_program
from chronolog.dialects.registry import RunOptions, lookup


def _backfill(tmp_path: Path, capsys, dialect: str, *options: str) -> tuple[int, str]:
    prog = tmp_path / f"prog{SUFFIX[dialect]}"
    prog.write_text(PROGRAMS[dialect][0])
    capsys.readouterr()
    code = main(["backfill", str(prog), "--history", str(tmp_path / "missing.jsonl"), *options])
    return code, capsys.readouterr().err


NOT_THERE = "missing.jsonl: error: no such file or directory"  # past every option check, before Spark


@pytest.mark.parametrize("dialect", list(PROGRAMS))
@pytest.mark.parametrize("option", [("--mode", "tms"), ("--mode", "oneshot"), ("--seed", "3")],
                         ids=lambda o: " ".join(o))
def test_lars_options(tmp_path, capsys, dialect, option):
    code, err = _backfill(tmp_path, capsys, dialect, "--from", "0", "--to", "5", *option)
    assert code == 2
    if dialect in ("lars", "laser"):
        assert NOT_THERE in err
    else:
        shown = " ".join(option) if option[0] == "--mode" else option[0]
        assert f"error: {shown} is for {TITLE['lars']} programs (this one is {dialect})" in err


@pytest.mark.parametrize("dialect", list(PROGRAMS))
@pytest.mark.parametrize("option", ["--from", "--to", "--segment"])
def test_rational_times_only_where_time_is_rational(tmp_path, capsys, dialect, option):
    given = {"--from": "0", "--to": "9"}
    given[option] = "7/2" if option != "--to" else "19/2"
    argv = [x for kv in given.items() for x in kv]
    code, err = _backfill(tmp_path, capsys, dialect, *argv)
    assert code == 2
    if dialect in ("lars", "laser"):
        assert f"{option} {given[option]} is not an integer time point ({dialect} time is discrete)" in err
    else:
        assert NOT_THERE in err


@pytest.mark.parametrize("dialect", list(PROGRAMS))
def test_key_partitions_warns_where_the_program_is_not_split_by_key(tmp_path, capsys, dialect):
    code, err = _backfill(tmp_path, capsys, dialect, "--from", "0", "--to", "5", "--key-partitions", "3")
    assert code == 2 and NOT_THERE in err
    split = dialect in ("lars", "laser")  # q(X) :- p(X) [2]: every rule joins on X
    assert ("has no effect" in err) != split


@pytest.mark.parametrize("dialect", list(PROGRAMS))
def test_upgrade_keeps_the_language(tmp_path, capsys, dialect):
    other = "mtl" if dialect != "mtl" else "rtec"
    new = tmp_path / f"new{SUFFIX[other]}"
    new.write_text(PROGRAMS[other][0])
    code, err = _backfill(tmp_path, capsys, dialect, "--from", "0", "--to", "5", "--upgrade", f"3={new}")
    assert code == 2 and "cannot replace" in err and "(an upgrade keeps the language)" in err
    same = tmp_path / f"same{SUFFIX[dialect]}"
    same.write_text(PROGRAMS[dialect][0])
    code, err = _backfill(tmp_path, capsys, dialect, "--from", "0", "--to", "5", "--upgrade", f"3={same}")
    assert code == 2 and NOT_THERE in err


# ---------------------------------------------------------------- every option, where it is taken
# The job is replaced by a recorder (and the Spark session by a stand-in): what reaches it is what
# `chronolog backfill` asked for; what the job then does with it is the Spark tests'.


class Job:
    """What `chronolog backfill` passed to the job, to the Spark session and to publishing."""

    def __init__(self, monkeypatch, dialect: str) -> None:
        from types import SimpleNamespace

        from chronolog.runtime.backfill import job, spark_io

        self.call: dict = {}
        self.master: list = []
        self.published: list = []
        # one correction line in the dialect's time domain, for --output and --publish
        self.lines = [{"t": 1, "pred": "q", "args": ["a"]} if lookup(dialect).points
                      else {"interval": "[1,2]", "pred": "q", "args": ["a"]}]

        def session(master=None):  # noqa: ANN001, ANN202
            self.master.append(master)
            return SimpleNamespace(sparkContext=SimpleNamespace(uiWebUrl=None)), False

        def backfill(*args, **kwargs):  # noqa: ANN002, ANN003, ANN202
            names = ("spark", "sources", "dialect", "history", "answers", "t_from", "t_to")
            self.call = {**dict(zip(names, args, strict=True)), **kwargs}
            return list(self.lines), spark_io.BackfillStats()

        monkeypatch.setattr(spark_io, "spark_session", session)
        monkeypatch.setattr(job, "backfill", backfill)
        monkeypatch.setattr(job, "publish", lambda lines, bootstrap, topic: self.published.append((lines, bootstrap, topic)))


def _history(tmp_path: Path, dialect: str) -> Path:
    history = tmp_path / "h.jsonl"
    history.write_text(orjson.dumps({"t": 3, "pred": PROGRAMS[dialect][1], "args": ["d1"]}).decode() + "\n")
    return history


def _taken(tmp_path: Path, capsys, monkeypatch, dialect: str, *options: str, program: str | None = None):
    """(the recorded job, stderr) of a backfill of ``dialect``'s program over [0, 9] with ``options``."""
    job = Job(monkeypatch, dialect)
    if program is None:
        prog = tmp_path / f"prog{SUFFIX[dialect]}"
        prog.write_text(PROGRAMS[dialect][0])
        program = str(prog)
    capsys.readouterr()
    code = main(["backfill", program, "--history", str(_history(tmp_path, dialect)), "--from", "0", "--to", "9",
                 "--output", str(tmp_path / "fixes.jsonl"), *options])
    err = capsys.readouterr().err
    assert code == 0, err
    return job, err


def history(tmp_path, capsys, monkeypatch, dialect):  # noqa: ANN001, ANN201
    job, _ = _taken(tmp_path, capsys, monkeypatch, dialect)
    assert (job.call["history"].kind, job.call["history"].where) == ("file", str(tmp_path / "h.jsonl"))
    archive = tmp_path / "archive"
    archive.mkdir()
    job, _ = _taken(tmp_path, capsys, monkeypatch, dialect, "--history", str(archive))
    assert job.call["history"].kind == "archive"


def span(tmp_path, capsys, monkeypatch, dialect):  # noqa: ANN001, ANN201
    """--from and --to reach the job as times of the dialect: integer points, or rationals
    where time is rational (the refusal of 7/2 for LARS is test_rational_times_only_...)."""
    job, _ = _taken(tmp_path, capsys, monkeypatch, dialect, "--from", "2", "--to", "7")
    assert (job.call["t_from"], job.call["t_to"]) == (2, 7)
    if not lookup(dialect).discrete:
        job, _ = _taken(tmp_path, capsys, monkeypatch, dialect, "--from", "7/2", "--to", "15/2")
        assert (job.call["t_from"], job.call["t_to"]) == (Fraction(7, 2), Fraction(15, 2))


def answers(tmp_path, capsys, monkeypatch, dialect):  # noqa: ANN001, ANN201
    published = tmp_path / "published.jsonl"
    published.write_text("")
    job, _ = _taken(tmp_path, capsys, monkeypatch, dialect, "--answers", str(published))
    assert (job.call["answers"].kind, job.call["answers"].where) == ("file", str(published))
    assert _taken(tmp_path, capsys, monkeypatch, dialect)[0].call["answers"] is None


def output(tmp_path, capsys, monkeypatch, dialect):  # noqa: ANN001, ANN201
    job, _ = _taken(tmp_path, capsys, monkeypatch, dialect)
    assert [orjson.loads(x) for x in (tmp_path / "fixes.jsonl").read_text().splitlines()] == job.lines


def publish(tmp_path, capsys, monkeypatch, dialect):  # noqa: ANN001, ANN201
    job, err = _taken(tmp_path, capsys, monkeypatch, dialect, "--publish", "--bootstrap", "kafka.example:9093",
                      "--answers-topic", "plant7.answers")
    assert job.published == [(job.lines, "kafka.example:9093", "plant7.answers")]
    assert "published 1 correction lines to plant7.answers" in err


def kafka(tmp_path, capsys, monkeypatch, dialect):  # noqa: ANN001, ANN201
    """--history/--answers kafka read the --facts-topic and --answers-topic at --bootstrap, each
    partition until it has been idle --idle seconds."""
    job, _ = _taken(tmp_path, capsys, monkeypatch, dialect, "--history", "kafka", "--answers", "kafka", "--bootstrap",
                    "kafka.example:9093", "--facts-topic", "plant7.facts", "--answers-topic", "plant7.answers",
                    "--idle", "0.5")
    assert (job.call["history"].kind, job.call["history"].where, job.call["history"].topic) == (
        "kafka", "kafka.example:9093", "plant7.facts")
    assert (job.call["answers"].where, job.call["answers"].topic) == ("kafka.example:9093", "plant7.answers")
    assert job.call["idle"] == 0.5


def master(tmp_path, capsys, monkeypatch, dialect):  # noqa: ANN001, ANN201
    job, _ = _taken(tmp_path, capsys, monkeypatch, dialect, "--master", "local[2]")
    assert job.master == ["local[2]"]


def segment(tmp_path, capsys, monkeypatch, dialect):  # noqa: ANN001, ANN201
    """Segments of N time points where the program's input reach is bounded; where it is not
    (RTEC's inertia), one segment, and --segment says it has no effect."""
    job, err = _taken(tmp_path, capsys, monkeypatch, dialect, "--segment", "4")
    assert job.call["segment"] == 4
    bounded = lookup(dialect).reach(load_program([str(tmp_path / f"prog{SUFFIX[dialect]}")], None)) is not None
    assert bounded == (dialect != "rtec")
    assert ("--segment 4 has no effect" in err) != bounded


def key_partitions(tmp_path, capsys, monkeypatch, dialect):  # noqa: ANN001, ANN201
    job, err = _taken(tmp_path, capsys, monkeypatch, dialect, "--key-partitions", "3")
    assert job.call["key_partitions"] == 3
    assert ("--key-partitions 3 has no effect" in err) != (dialect in ("lars", "laser"))


def dialect_option(tmp_path, capsys, monkeypatch, dialect):  # noqa: ANN001, ANN201
    prog = tmp_path / "prog.txt"  # a file whose name says no language
    prog.write_text(PROGRAMS[dialect][0])
    job, _ = _taken(tmp_path, capsys, monkeypatch, dialect, "--dialect", dialect, program=str(prog))
    assert job.call["dialect"] == dialect


def upgrade(tmp_path, capsys, monkeypatch, dialect):  # noqa: ANN001, ANN201
    new = tmp_path / f"new{SUFFIX[dialect]}"
    new.write_text(PROGRAMS[dialect][0])
    job, _ = _taken(tmp_path, capsys, monkeypatch, dialect, "--upgrade", f"3={new}")
    assert job.call["upgrades"] == ((3, ((str(new), PROGRAMS[dialect][0]),)),)


def mode_and_seed(tmp_path, capsys, monkeypatch, dialect):  # noqa: ANN001, ANN201
    """As `chronolog run` evaluates the program with them: the job's evaluator has run's plan."""
    from chronolog.cli.main import build_parser, evaluator_for
    from chronolog.runtime.backfill.job import evaluator_of

    for options in (["--mode", "oneshot", "--seed", "3"], ["--mode", "tms"], ["--seed", "7"]):
        job, _ = _taken(tmp_path, capsys, monkeypatch, dialect, *options)
        program = load_program([str(tmp_path / f"prog{SUFFIX[dialect]}")], None)
        replayed = evaluator_of(dialect, program, RunOptions(mode=job.call["mode"], seed=job.call["seed"])).plan
        run = build_parser(light=True).parse_args(["run", str(tmp_path / f"prog{SUFFIX[dialect]}"), "--input", "-",
                                                    *options])
        ran = evaluator_for(run, lambda m: None)[3].plan
        assert (replayed.solver, replayed.seed) == (ran.solver, ran.seed), options
    assert job.call["seed"] == 7


EVERY = {"lars", "laser", "mtl", "rtec"}
# option -> (the dialects that take it, how it shows where it is taken); every backfill option is here
CASES = {
    "--history": (EVERY, history),
    "--from": (EVERY, span),
    "--to": (EVERY, span),
    "--answers": (EVERY, answers),
    "--output": (EVERY, output),
    "--publish": (EVERY, publish),
    "--bootstrap": (EVERY, kafka),
    "--facts-topic": (EVERY, kafka),
    "--answers-topic": (EVERY, kafka),
    "--idle": (EVERY, kafka),
    "--master": (EVERY, master),
    "--segment": (EVERY, segment),
    "--key-partitions": (EVERY, key_partitions),
    "--dialect": (EVERY, dialect_option),
    "--upgrade": (EVERY, upgrade),
    "--mode": ({"lars", "laser"}, mode_and_seed),
    "--seed": ({"lars", "laser"}, mode_and_seed),
}


def test_every_option_of_backfill_is_held_to_every_dialect():
    import argparse

    from chronolog.cli.main import build_parser

    sub = next(a for a in build_parser()._actions if isinstance(a, argparse._SubParsersAction))
    assert {a.option_strings[0] for a in sub.choices["backfill"]._actions
            if a.option_strings and a.dest != "help"} == set(CASES)


@pytest.mark.parametrize("dialect", list(PROGRAMS))
@pytest.mark.parametrize("option", list(CASES))
def test_an_option_reaches_the_job_for_every_dialect_that_takes_it_or_is_refused(tmp_path, capsys, monkeypatch,
                                                                                 option, dialect):
    takers, check = CASES[option]
    if dialect in takers:
        check(tmp_path, capsys, monkeypatch, dialect)
        return
    given = {"--mode": ["--mode", "oneshot"], "--seed": ["--seed", "3"]}[option]
    job = Job(monkeypatch, dialect)
    (tmp_path / "missing.jsonl").write_text("")  # (a history there: nothing else stops the backfill)
    code, err = _backfill(tmp_path, capsys, dialect, "--from", "0", "--to", "5", *given)
    assert code == 2 and job.call == {} and job.master == []  # refused before Spark
    owners = " or ".join(dict.fromkeys(TITLE[d] for d in PROGRAMS if d in takers))
    shown = " ".join(given) if option == "--mode" else option
    assert f"error: {shown} is for {owners} programs (this one is {dialect})" in err
