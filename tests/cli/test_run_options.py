"""Every `chronolog run` option × every dialect: the same meaning, or refused with a reason.

The dialect-specific options are a table in the registry (``Dialect.options``);
these tests hold the command line to it, in process (``chronolog.cli.main.main``).
"""

from __future__ import annotations

import json
from fractions import Fraction
from pathlib import Path

import pytest
from dialect_programs import PROGRAMS, SUFFIX, TITLE
from meaning import sampled_meaning

from chronolog.cli.main import main

# the dialect-specific options: (option, value) -> the dialects that take it
TAKEN = {
    ("--answers", "points"): {"lars", "laser"},
    ("--mode", "tms"): {"lars", "laser"},
    ("--mode", "oneshot"): {"lars", "laser"},
    ("--seed", "3"): {"lars", "laser"},
    ("--models", "2"): {"lars", "laser"},
    ("--mode", "stream"): {"mtl"},
    ("--mode", "batch"): {"mtl"},
    ("--step", "10"): {"rtec"},
    ("--window", "10"): {"rtec"},
}


def _events(dialect: str) -> list[dict]:
    pred = PROGRAMS[dialect][1]
    if dialect == "rtec":
        return [{"t": 3, "pred": "opened", "args": ["d1"]}, {"t": 8, "pred": "closed", "args": ["d1"]},
                {"t": 21, "pred": "opened", "args": ["d1"]}]
    return [{"t": 0, "pred": pred, "args": ["a"]}, {"t": 3, "pred": pred, "args": ["b"]}, {"t": 6}]


def _run(tmp_path: Path, capsys, dialect: str, *args: str, events: list[dict] | None = None,
         extra: str = "") -> tuple[int, str, str]:
    prog = tmp_path / f"prog{SUFFIX[dialect]}"
    prog.write_text(PROGRAMS[dialect][0])
    stream = tmp_path / "in.jsonl"
    stream.write_text("".join(json.dumps(e) + "\n" for e in (events or _events(dialect))) + extra)
    capsys.readouterr()
    code = main(["run", str(prog), "--input", str(stream), *args])
    got = capsys.readouterr()
    return code, got.out, got.err


@pytest.mark.parametrize("dialect", list(PROGRAMS))
@pytest.mark.parametrize("option", list(TAKEN), ids=lambda o: " ".join(o))
def test_dialect_specific_options_are_taken_or_refused_with_a_reason(tmp_path, capsys, dialect, option):
    args = list(option)
    if dialect in TAKEN[option]:  # with what the option goes with
        args += {"--models": ["--mode", "oneshot"], "--step": ["--window", "10"]}.get(option[0], [])
    code, out, err = _run(tmp_path, capsys, dialect, *args)
    if dialect in TAKEN[option]:
        assert code == 0, err
        assert out
    else:
        shown = " ".join(option) if option[0] in ("--mode", "--answers") else option[0]
        owners = " or ".join(dict.fromkeys(TITLE[d] for d in PROGRAMS if d in TAKEN[option]))
        assert code == 2
        assert f"error: {shown} is for {owners} programs (this one is {dialect})" in err


@pytest.mark.parametrize("dialect", list(PROGRAMS))
def test_until_means_a_last_time_advance(tmp_path, capsys, dialect):
    """``--until T`` prints what the input followed by ``{"t": T}`` prints, for every dialect."""
    code, with_until, _ = _run(tmp_path, capsys, dialect, "--until", "30")
    assert code == 0
    code, with_line, _ = _run(tmp_path, capsys, dialect, extra='{"t": 30}\n')
    assert code == 0
    assert with_until == with_line


def test_until_closes_a_datalogmtl_answer(tmp_path, capsys):
    """The README's example: Hot(s1) on [0,5]; Alarm(X) holds where Hot held throughout the
    last 2, i.e. on [2,5].  Evaluated up to 10 (``--until 10``), Alarm no longer holds after 5:
    the line is the closed [2,5], not [2,inf) (which would claim Alarm at 10)."""
    prog = tmp_path / "heat.mtl"
    prog.write_text("Alarm(X):-Boxminus[0,2]Hot(X)\n")
    stream = tmp_path / "heat.jsonl"
    stream.write_text('{"interval": "[0,5]", "pred": "Hot", "args": ["s1"]}\n')
    capsys.readouterr()
    assert main(["run", str(prog), "--input", str(stream), "--until", "10"]) == 0
    lines = [json.loads(x) for x in capsys.readouterr().out.splitlines()]
    assert lines == [{"interval": "[2,5]", "pred": "Alarm", "args": ["s1"]}]


def test_until_takes_a_rational_time_for_datalogmtl(tmp_path, capsys):
    """DatalogMTL time is rational (CONTRACT §2), so is ``--until``: Hot(s1) from 1 on, the
    input up to 7/2 (Hot(s2) at 4 comes after it: ignored); Alarm(s1) on [3, 7/2]."""
    prog = tmp_path / "heat.mtl"
    prog.write_text("Alarm(X):-Boxminus[0,2]Hot(X)\n")
    stream = tmp_path / "heat.jsonl"
    stream.write_text('{"interval": "[1,9]", "pred": "Hot", "args": ["s1"]}\n'
                      '{"interval": "[4,9]", "pred": "Hot", "args": ["s2"]}\n')
    for until in ("7/2", "3.5"):
        capsys.readouterr()
        assert main(["run", str(prog), "--input", str(stream), "--until", until]) == 0
        got = capsys.readouterr()
        lines = [json.loads(x) for x in got.out.splitlines()]
        assert sampled_meaning(lines, Fraction(7, 2)) == {("Alarm", ("s1",), Fraction(q, 4)) for q in range(12, 15)}
        assert "ignored 1 events after --until 7/2" in got.err
        assert "s2" not in got.out


@pytest.mark.parametrize("option", ["--until", "--retention"])
@pytest.mark.parametrize("dialect", ["lars", "laser", "rtec"])
def test_a_fraction_of_time_is_refused_where_time_is_integer(tmp_path, capsys, dialect, option):
    code, out, err = _run(tmp_path, capsys, dialect, option, "7/2")
    assert code == 2 and out == "" and f"{option} 7/2: the time points of" in err


def test_retention_takes_the_rational_reach_check_prints_for_datalogmtl(tmp_path, capsys):
    """``chronolog check`` says a reach of 5/2 makes memory flat: ``--retention 5/2`` is taken.
    The latest time is 5 when P(c)@2 and P(d)@3 arrive: 2 is older than 5 - 5/2, 3 is not."""
    prog = tmp_path / "p.mtl"
    prog.write_text("Q(X):-Diamondminus[0,5/2]P(X)\n")
    assert main(["check", str(prog)]) == 0
    assert "--retention 5/2 makes memory flat" in capsys.readouterr().out
    stream = tmp_path / "in.jsonl"
    stream.write_text("".join(json.dumps({"t": t, "pred": "P", "args": [a]}) + "\n"
                              for t, a in ((0, "a"), (5, "b"), (2, "c"), (3, "d"))))
    assert main(["run", str(prog), "--input", str(stream), "--retention", "5/2"]) == 0
    got = capsys.readouterr()
    assert "event at t=2 is older than the retention horizon (5/2); ignored" in got.err
    lines = [json.loads(x) for x in got.out.splitlines()]
    held = {(a, x) for _, (a,), x in sampled_meaning(lines, 5)}
    assert held == {("a", Fraction(q, 4)) for q in range(0, 11)} | {("b", Fraction(5))} | {
        ("d", Fraction(q, 4)) for q in range(12, 21)}


@pytest.mark.parametrize("dialect", list(PROGRAMS))
def test_until_ignores_and_counts_later_events(tmp_path, capsys, dialect):
    until = "10" if dialect == "rtec" else "4"  # before the last event
    code, _, err = _run(tmp_path, capsys, dialect, "--until", until)
    assert code == 0
    assert f"warning: ignored 1 events after --until {until}" in err


@pytest.mark.parametrize("dialect", list(PROGRAMS))
def test_retention_ignores_and_reports_what_is_too_late(tmp_path, capsys, dialect):
    pred = PROGRAMS[dialect][1]
    events = _events(dialect) + [{"t": t} for t in range(22, 60)] + [{"t": 1, "pred": pred, "args": ["late"]}]
    # (RTEC counts back from the last window it evaluated: windows of 10 ticks, not the default 1000)
    step = ["--step", "10"] if dialect == "rtec" else []
    code, _, err = _run(tmp_path, capsys, dialect, "--retention", "3", *step, events=events)
    assert code == 0, err
    assert "ignored 1 events older than --retention 3" in err
    code, _, err = _run(tmp_path, capsys, dialect, "--retention", "inf", *step, events=events)
    assert code == 0 and "older than" not in err


@pytest.mark.parametrize("dialect", list(PROGRAMS))
def test_on_error_skip_reports_and_counts_for_every_dialect(tmp_path, capsys, dialect):
    code, out, err = _run(tmp_path, capsys, dialect, "--on-error", "skip", extra="not json\n")
    assert code == 0 and out
    assert "skipped:" in err and "skipped 1 bad input lines" in err
    code, _, err = _run(tmp_path, capsys, dialect, extra="not json\n")
    assert code == 2 and ":4:" in err


@pytest.mark.parametrize("dialect", list(PROGRAMS))
@pytest.mark.parametrize("fmt", ["lines", "meteor", "rtec"])
def test_input_formats_are_read_or_refused_with_a_reason(tmp_path, capsys, dialect, fmt):
    takes = {"lars": {"lines"}, "laser": {"lines"}, "mtl": {"meteor"}, "rtec": {"rtec"}}[dialect]
    prog = tmp_path / f"prog{SUFFIX[dialect]}"
    prog.write_text(PROGRAMS[dialect][0])
    stream = tmp_path / "in.txt"
    stream.write_text({"lines": "0 p a\n3 p b\n", "meteor": "P(a)@[0,2]\n", "rtec": "opened|3|3|d1\n"}[fmt])
    capsys.readouterr()
    code = main(["run", str(prog), "--input", str(stream), "--format", fmt])
    err = capsys.readouterr().err
    if fmt in takes:
        assert code == 0, err
    else:
        assert code == 2 and "error:" in err and f"'{fmt}'" in err


@pytest.mark.parametrize("dialect", list(PROGRAMS))
def test_output_file_holds_what_stdout_prints(tmp_path, capsys, dialect):
    code, out, _ = _run(tmp_path, capsys, dialect)
    target = tmp_path / "answers.jsonl"
    assert _run(tmp_path, capsys, dialect, "--output", str(target))[:2] == (0, "")
    assert code == 0 and target.read_text() == out
