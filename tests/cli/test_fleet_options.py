"""Every option of `chronolog up` (and `chronolog service`, which takes the same) × every
dialect: it means what it means for `chronolog run`, or it is refused with run's reason
before anything starts (no broker, no service).  Where an option is taken, what it does to
the services `up` starts is held by test_up_options.py."""

from __future__ import annotations

from pathlib import Path

import pytest
from dialect_programs import PROGRAMS, SUFFIX, TITLE

from chronolog.cli.main import build_parser, main

# the dialect-dependent options of `up`: (option, value) -> the dialects that take it
TAKEN = {
    ("--mode", "tms"): {"lars", "laser"},
    ("--mode", "oneshot"): {"lars", "laser"},
    ("--seed", "3"): {"lars", "laser"},
    ("--window", "10"): {"rtec"},
    ("--step", "10"): {"rtec"},
    ("--retention", "5"): {"lars", "laser", "mtl", "rtec"},
}


def _program(tmp_path: Path, dialect: str) -> str:
    prog = tmp_path / f"prog{SUFFIX[dialect]}"
    prog.write_text(PROGRAMS[dialect][0])
    return str(prog)


REFUSED = [(d, o) for o, ds in TAKEN.items() for d in PROGRAMS if d not in ds]


@pytest.mark.parametrize("command", ["up", "service chain"])
@pytest.mark.parametrize(("dialect", "option"), REFUSED, ids=[f"{d} {' '.join(o)}" for d, o in REFUSED])
def test_an_option_the_dialect_does_not_take_is_refused_before_anything_starts(tmp_path, capsys, command, dialect,
                                                                              option):
    argv = [*command.split(), _program(tmp_path, dialect), *option, "--state-dir", str(tmp_path / "s")]
    if command != "up":
        argv += ["--bootstrap", "127.0.0.1:1"]
    capsys.readouterr()
    assert main(argv) == 2
    shown = " ".join(option) if option[0] == "--mode" else option[0]
    owners = " or ".join(dict.fromkeys(TITLE[d] for d in PROGRAMS if d in TAKEN[option]))
    assert f"error: {shown} is for {owners} programs (this one is {dialect})" in capsys.readouterr().err
    assert not (tmp_path / "s").exists()  # nothing started, nothing written


def test_step_without_window_is_refused_in_the_fleet(tmp_path, capsys):
    capsys.readouterr()
    assert main(["up", _program(tmp_path, "rtec"), "--step", "10", "--state-dir", str(tmp_path / "s")]) == 2
    assert "in the fleet --step goes with --window" in capsys.readouterr().err


@pytest.mark.parametrize("dialect", list(PROGRAMS))
def test_a_fraction_of_retention_is_refused_before_anything_starts(tmp_path, capsys, dialect):
    """``run`` takes ``--retention 5/2`` for DatalogMTL; the fleet keeps whole time points (and
    the dialects with integer time refuse a fraction as ``run`` does)."""
    capsys.readouterr()
    assert main(["up", _program(tmp_path, dialect), "--retention", "5/2", "--state-dir", str(tmp_path / "s")]) == 2
    err = capsys.readouterr().err
    assert ("the fleet keeps a whole number of time points (--retention 3" if dialect == "mtl"
            else "--retention 5/2: the time points of") in err
    assert not (tmp_path / "s").exists()


def test_the_commands_that_find_a_fleet_look_where_up_keeps_it(monkeypatch):
    monkeypatch.delenv("CHRONOLOG_STATE_DIR", raising=False)  # (the defaults are read when the parser is built)
    parse = build_parser().parse_args
    up = parse(["up", "p.mtl"]).state_dir
    assert parse(["upgrade", "new.mtl"]).state_dir == up == parse(["down"]).state_dir
    assert parse(["explain", "--changes", "q(a)@1"]).state_dir == up
