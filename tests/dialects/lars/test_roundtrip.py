"""Properties of the parsers: printed IR parses back equal, the benchmark programs parse in both
dialects to the same rules, and no input makes a parser raise anything but a located ProgramError."""

from __future__ import annotations

import importlib.util
import subprocess
import sys
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from chronolog.core.errors import ProgramError
from chronolog.dialects.lars.ir import (
    COMPARISON_OPS,
    Atom,
    BinOp,
    Compare,
    Const,
    ExtAtom,
    Head,
    Op,
    Program,
    Rule,
    TimeWindow,
    TupleWindow,
    Var,
)
from chronolog.dialects.lars.laser import parse_laser
from chronolog.dialects.lars.parser import BUILTINS, parse_lars

SHARED = Path(__file__).resolve().parents[3].parent / "shared"
GEN = SHARED / "bench" / "lars" / "gen.py"

# ------------------------------------------------------------ the benchmark programs


def _workloads() -> list[str]:
    if not GEN.is_file():
        return []
    spec = importlib.util.spec_from_file_location("lars_bench_gen", GEN)
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return sorted(module.WORKLOADS)


WORKLOADS = _workloads()


def test_benchmark_generator_found():
    if not GEN.is_file():
        pytest.skip(f"the shared benchmark generator {GEN} is missing (../shared not checked out next to the repo)")
    assert {"diamond", "box", "join", "multi", "cooling", "tickerA", "tickerB"} <= set(WORKLOADS)


@pytest.mark.skipif(not WORKLOADS, reason=f"the shared benchmark generator {GEN} is missing")
@pytest.mark.parametrize("workload", WORKLOADS or ["none"])
@pytest.mark.parametrize("win", [1, 20])
def test_benchmark_programs_parse_in_both_dialects(tmp_path, workload, win):
    out = tmp_path / workload
    subprocess.run(
        [sys.executable, str(GEN), workload, "--facts", "3", "--tps", "4", "--rules", "3",
         "--win", str(win), "--out", str(out)],
        check=True, capture_output=True, text=True,
    )
    lars_text = (out / "program.lars").read_text()
    lars = parse_lars(lars_text, str(out / "program.lars"))
    assert len(lars.rules) >= len([line for line in lars_text.splitlines() if line.strip()])
    assert parse_lars(str(lars)) == lars
    laser_file = out / "program.laser"
    if workload in ("tickerA", "tickerB"):
        assert not laser_file.exists()  # gen.py writes Laser programs only where Laser can express them
        return
    laser = parse_laser(laser_file.read_text(), str(laser_file))
    assert laser.dialect == "laser" and lars.dialect == "lars"
    assert laser.rules == lars.rules
    assert [r.loc.line for r in laser.rules if r.loc] == list(range(1, len(laser.rules) + 1))


# ------------------------------------------------------------ random IR prints and parses back

KEYWORDS = {"not"} | BUILTINS  # reserved at the start of a body element
preds = st.from_regex(r"[a-z][a-zA-Z0-9_]{0,5}", fullmatch=True).filter(lambda p: p not in KEYWORDS)
variables = st.builds(Var, st.from_regex(r"[A-Z_][a-zA-Z0-9_]{0,4}", fullmatch=True))
integers = st.integers(-(10**15), 10**15)
constants = st.builds(
    Const,
    st.one_of(
        integers,
        st.text(max_size=6),
        st.sampled_from(["not", "at", "always", "in", "lt", "a", "sec", "t", "-1", "A", "_", "a b", '"', "\\", "%"]),
        st.from_regex(r"[a-z][a-zA-Z0-9_]{0,5}", fullmatch=True),
    ),
)
terms = st.one_of(variables, constants)
times = st.one_of(variables, st.builds(Const, integers))
windows = st.one_of(
    st.builds(TimeWindow, st.integers(0, 10**9)), st.builds(TupleWindow, st.integers(1, 10**9))
)
atoms = st.builds(Atom, preds, st.lists(terms, max_size=3).map(tuple))
exprs = st.recursive(
    terms,
    lambda inner: st.builds(BinOp, st.sampled_from(["+", "-", "*", "/", "mod"]), inner, inner),
    max_leaves=6,
)


@st.composite
def ext_atoms(draw: st.DrawFn) -> ExtAtom:
    op = draw(st.sampled_from(list(Op)))
    atom, negated = draw(atoms), draw(st.booleans())
    if op is Op.NOW:
        return ExtAtom(atom, op, negated=negated)
    if op is Op.AT:
        return ExtAtom(atom, op, draw(st.none() | windows), draw(times), negated)
    return ExtAtom(atom, op, draw(windows), negated=negated)


compares = st.builds(Compare, st.sampled_from(COMPARISON_OPS), exprs, exprs)
heads = st.builds(Head, atoms, st.none() | times)
rules = st.builds(Rule, heads, st.lists(st.one_of(ext_atoms(), compares), max_size=4).map(tuple))
programs = st.builds(Program, st.lists(rules, max_size=4).map(tuple))


@settings(max_examples=300, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(programs)
def test_printed_ir_parses_back_equal(program):
    text = str(program)
    assert parse_lars(text) == program, text


@settings(max_examples=200, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(programs)
def test_parsed_locations_point_at_the_printed_rules(program):
    parsed = parse_lars(str(program), "p.lars")
    lines = str(program).split("\n")
    for rule in parsed.rules:
        assert rule.loc is not None and rule.loc.file == "p.lars"
        assert lines[rule.loc.line - 1][rule.loc.col - 1 :].startswith(rule.head.atom.pred)
        for e in rule.body:
            assert e.loc is not None


# ------------------------------------------------------------ garbage in, located ProgramError out

LARS_PIECES = list("ab XY_(),.:-[]#%*/\"'0123456789 \n\t=<>!\\+@") + [
    "not ", "at ", "always ", "in ", " sec", " ms", "lt(", "plus(", "%*", "*%", "/*", "*/", ":-", "//",
]
LASER_PIECES = LARS_PIECES + [
    "time_win(", "tuple_win(", "diamond(", "box(", "@(", "COMP(", "MATH(", " and ", " or ", "'", "#",
]


def _only_located_program_errors(parse, text: str) -> None:
    try:
        parse(text, "g")
    except ProgramError as err:
        assert err.loc is not None and err.loc.file == "g"
        assert 1 <= err.loc.line <= text.count("\n") + 1
        assert err.loc.col >= 1
        assert str(err).startswith(f"g:{err.loc.line}:{err.loc.col}: error: ")


@settings(max_examples=500, deadline=None)
@given(st.lists(st.sampled_from(LARS_PIECES), max_size=40).map("".join))
def test_lars_garbage_raises_only_program_errors(text):
    _only_located_program_errors(parse_lars, text)


@settings(max_examples=500, deadline=None)
@given(st.lists(st.sampled_from(LASER_PIECES), max_size=40).map("".join))
def test_laser_garbage_raises_only_program_errors(text):
    _only_located_program_errors(parse_laser, text)


@settings(max_examples=300, deadline=None)
@given(st.text(max_size=60))
def test_arbitrary_text_raises_only_program_errors(text):
    _only_located_program_errors(parse_lars, text)
    _only_located_program_errors(parse_laser, text)


@settings(max_examples=200, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(programs, st.data())
def test_mutated_programs_raise_only_program_errors(program, data):
    text = str(program)
    if text:
        i = data.draw(st.integers(0, len(text) - 1))
        piece = data.draw(st.sampled_from(LASER_PIECES + [""]))
        text = text[:i] + piece + text[i + 1 :]
    _only_located_program_errors(parse_lars, text)
    _only_located_program_errors(parse_laser, text)


def test_deep_nesting_is_a_program_error():
    for text in ("a :- X = " + "(" * 5000 + "1.", "a :- X = " + "-" * 5000 + "1.", "a :- " + "not(" * 5000):
        with pytest.raises(ProgramError, match="nested more than"):
            parse_lars(text) if "not(" not in text else parse_laser(text)
