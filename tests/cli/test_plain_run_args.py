"""``chronolog run``'s argument fast path (cli/main.py ``_plain_run_args``)
parses exactly as argparse does, and leaves everything else to argparse."""

from __future__ import annotations

import contextlib
import io
import itertools
import random

import pytest

from chronolog.cli.main import _plain_run_args, build_parser

OPTIONS = ["--input", "--output", "--dialect", "--format", "--until", "--retention", "--answers", "--on-error"]
VALUES = ["a.lars", "-", "", "laser", "lines", "meteor", "x", "7", "-3", " 8", "1_0", "points", "skip", "fail"]
GOOD = {"--dialect": ["lars", "laser"], "--format": ["jsonl", "lines"], "--until": ["7", "0"], "--retention": ["3", "inf", "0"],
        "--answers": ["points", "changelog"], "--on-error": ["skip", "fail"]}
ODD = ["--inp", "--input=in.jsonl", "--", "-h", "--help", "--version", "-x"]


def _argparse(argv: list[str]) -> dict | None:
    with contextlib.redirect_stderr(io.StringIO()), contextlib.redirect_stdout(io.StringIO()):
        try:
            return vars(build_parser(light=True).parse_args(argv))
        except SystemExit:
            return None


def _check(argv: list[str]) -> bool:
    """The fast path agrees with argparse; True if it took the command line."""
    fast = _plain_run_args(argv)
    if fast is None:
        return False
    assert vars(fast) == _argparse(argv), argv
    return True


@pytest.mark.parametrize(
    "argv",
    [
        ["run", "p.lars", "--input", "in.jsonl"],
        ["run", "p.lars", "q.lars", "--input", "-", "--output", "-"],
        ["run", "--input", "in.jsonl", "p.lars", "--output", "out.jsonl"],
        ["run", "p.lars", "--input", "a", "--input", "b", "--until", "5", "--retention", "3"],
        ["run", "p.lars", "--input", "i", "--dialect", "laser", "--format", "lines", "--on-error", "skip",
         "--answers", "points", "--until", "0010"],
        ["run", "p", "--output", "p", "--input", "i"],
    ],
)
def test_plain_command_lines(argv: list[str]) -> None:
    assert _check(argv)


@pytest.mark.parametrize(
    "argv",
    [
        ["run"],
        ["run", "p.lars"],
        ["run", "--input", "i"],
        ["run", "p.lars", "--input", "i", "q.lars"],
        ["run", "p", "--input", "i", "--output", "p", "q"],
        ["run", "p.lars", "--inp", "i"],
        ["run", "p.lars", "--input=i"],
        ["run", "p.lars", "--input", "i", "--until", "x"],
        ["run", "p.lars", "--input", "i", "--until", "-3"],
        ["run", "p.lars", "--input", "i", "--format", "csv"],
        ["run", "p.lars", "--input", "i", "--", "q.lars"],
        ["run", "p.lars", "--input", "i", "--help"],
        ["run", "p.lars", "--input"],
        ["check", "p.lars"],
    ],
)
def test_other_command_lines_go_to_argparse(argv: list[str]) -> None:
    assert _plain_run_args(argv) is None


def test_random_command_lines() -> None:
    rng = random.Random(7)
    taken = 0
    for n, _ in itertools.product(range(1, 6), range(400)):
        argv = ["run"]
        for _ in range(n):  # mostly options with a value, some program files, a few odd tokens
            r = rng.random()
            if r < 0.6:
                option = rng.choice(OPTIONS)
                valid = GOOD.get(option, ["x.jsonl", "-"])
                argv += [option, rng.choice(valid if rng.random() < 0.8 else VALUES)]
            elif r < 0.95:
                argv.append(rng.choice(["p.lars", "q.lars", "a.lars"]))
            else:
                argv.append(rng.choice(ODD))
        if rng.random() < 0.7:
            argv[1:1] = ["p.lars", "--input", "i"]
        taken += _check(argv)
    assert taken > 300
