"""The command line imports only the modules of the command given (``cli.main.GROUPS``)."""

from __future__ import annotations

import argparse
import subprocess
import sys

import pytest

from chronolog.cli.main import GROUPS, build_parser

PROBE = """
import contextlib, sys
from chronolog.cli.main import main
with contextlib.redirect_stdout(None), contextlib.suppress(SystemExit):
    main([{command!r}, "--help"])
print(" ".join(m for m in ("chronolog.bench.lars", "chronolog.cli.fleet", "chronolog.cli.backfill",
                           "chronolog.cli.upgrade") if m in sys.modules))
"""


@pytest.mark.parametrize(("command", "loaded"), [("upgrade", "chronolog.cli.upgrade"),
                                                 ("archive", "chronolog.cli.backfill"),
                                                 ("tail", "chronolog.cli.fleet")])
def test_a_command_imports_its_own_group_only(command: str, loaded: str) -> None:
    out = subprocess.run([sys.executable, "-c", PROBE.format(command=command)], capture_output=True, text=True,
                         check=True).stdout.split()
    assert out == [loaded]


def _commands(parser: argparse.ArgumentParser) -> dict[str, argparse.ArgumentParser]:
    return next(a for a in parser._actions if isinstance(a, argparse._SubParsersAction)).choices


def _options(parser: argparse.ArgumentParser) -> list[tuple]:
    return [(tuple(a.option_strings), a.dest, a.nargs, a.default) for a in parser._actions]


def test_every_command_of_a_group_has_the_options_of_the_whole_command_line() -> None:
    whole = _commands(build_parser())
    assert set(GROUPS) <= set(whole)
    for command in GROUPS:
        assert _options(_commands(build_parser(command=command))[command]) == _options(whole[command])
