"""Every option of `chronolog backfill` × every dialect: taken with the meaning it has for
`chronolog run`, or refused with a reason — decided before Spark starts (these tests start
none: a refusal returns first, and the cases that pass the checks stop at a history file
that does not exist).  What the taken options do to the answers is held by the Spark tests
(test_spark_backfill.py, test_mtl_backfill.py, test_rtec_backfill.py, runtime/test_upgrade.py)."""

from __future__ import annotations

from pathlib import Path

import pytest
from dialect_programs import PROGRAMS, SUFFIX, TITLE

from chronolog.cli.main import main


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
