"""``chronolog run --upgrade`` with LARS ``@``-heads in the new program (docs/reference/contract.md §6):
the program is chosen by the time point evaluated, so an atom the new program dates back
before T with an ``@``-head is an answer, and an ``@``-head of an older version evaluated
from T on dates nothing.  Hand-derived cases, and a property test against a naive
evaluator per time point (tests/reference.py), with late events and retractions."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from dialect_programs import LARS_AT_EVENT, LARS_AT_PROGRAM
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from meaning import meaning
from reference import reference_splice

from chronolog.cli.main import main
from chronolog.core.events import Event
from chronolog.core.reach import widest
from chronolog.dialects.registry import RunOptions, lookup
from chronolog.runtime.backfill.meaning import domain_of
from chronolog.runtime.backfill.segments import truth as segment_truth
from chronolog.runtime.upgrade import program_versions

SETTINGS = settings(max_examples=120, deadline=None, suppress_health_check=list(HealthCheck))


def _write(path: Path, text: str) -> str:
    path.write_text(text)
    return str(path)


def _run(capsys, tmp: Path, programs: list[str], events: list[dict], *options: str) -> list[dict]:
    """``chronolog run`` of programs[0] upgraded to programs[i] at each ``--upgrade``."""
    stream = _write(tmp / "in.jsonl", "".join(json.dumps(e) + "\n" for e in events))
    capsys.readouterr()
    code = main(["run", programs[0], "--input", stream, *options])
    got = capsys.readouterr()
    assert code == 0, got.err
    return [json.loads(x) for x in got.out.splitlines()]


def _files(tmp: Path, *texts: str) -> list[str]:
    return [_write(tmp / f"p{i}.lars", text) for i, text in enumerate(texts)]


def _span(events: list[dict]) -> tuple[int, int]:
    times = [e["t"] for e in events]
    return min(times), max(times)


def p(t: int, arg: str, pred: str = "p", retract: bool = False) -> dict:
    return {"t": t, "pred": pred, "args": [arg], **({"op": "retract"} if retract else {})}


def c(t: int) -> dict:
    return {"t": t, "pred": "c", "args": []}


@pytest.mark.parametrize("answers", ["changelog", "points"])
def test_new_at_head_dates_atoms_before_t_with_late_events_on_both_sides(tmp_path, capsys, answers):
    """P: q(X) :- p(X).  P' from 4: q over [1], and r(X) at U for p(X) at U within [3] when c
    holds.  p(d)@3 arrives late (before T: P's q(d)@3, and P''s evaluation at 4 dates r(d)@3);
    p(e)@5 arrives late after T; p(b)@2's retraction comes last (P's q(b)@2 and the r(b)@2 of
    P''s evaluation at 4 both withdrawn)."""
    files = _files(tmp_path, "q(X) :- p(X).\n", "q(X) :- p(X) [1].\nr(X) at U :- p(X) at U [3], c.\n")
    events = [{"t": 0}, p(1, "a"), p(2, "b"), c(4), p(5, "c"), c(6), p(3, "d"), p(5, "e"), {"t": 8},
              p(2, "b", retract=True)]
    lines = _run(capsys, tmp_path, files, events, "--upgrade", f"4={files[1]}", "--answers", answers)
    assert meaning(lines, (0, 8), running=True) == {
        ("q", ("a",), 1), ("q", ("d",), 3),  # P, evaluations 0..3
        ("q", ("d",), 4), ("q", ("c",), 5), ("q", ("e",), 5), ("q", ("c",), 6), ("q", ("e",), 6),  # P' [1]
        ("r", ("a",), 1), ("r", ("d",), 3),  # P''s evaluation at 4 (c), window [1,4]: before T
        ("r", ("c",), 5), ("r", ("e",), 5),  # and at 6 (c), window [3,6]
    }


def test_an_at_head_of_a_version_evaluated_from_the_next_upgrade_on_dates_nothing(tmp_path, capsys):
    """P0 until 3, P1 (an @-head) in [3, 6), P2 from 6.  P1's evaluation at 3 dates r(a)@1,
    r(b)@2 and the late r(f)@2 before its own T; its evaluation at 7 (c holds) would date
    r(d)@5 and r(e)@7, but 7 is P2's."""
    files = _files(tmp_path, "q(X) :- p(X).\n", "r(X) at U :- p(X) at U [2], c.\n", "q(X) :- p(X).\n")
    events = [{"t": 0}, p(1, "a"), p(2, "b"), c(3), p(4, "c"), p(5, "d"), c(7), p(7, "e"), {"t": 8}, p(2, "f")]
    lines = _run(capsys, tmp_path, files, events, "--upgrade", f"3={files[1]}", "--upgrade", f"6={files[2]}")
    assert meaning(lines, (0, 8), running=True) == {
        ("q", ("a",), 1), ("q", ("b",), 2), ("q", ("f",), 2),
        ("r", ("a",), 1), ("r", ("b",), 2), ("r", ("f",), 2),
        ("q", ("e",), 7),
    }


def test_two_chained_upgrades_each_with_at_heads(tmp_path, capsys):
    """P1 from 3 dates r before 3; P2 from 6 dates s before 6 (and before 3's P1 evaluations'
    atoms are P1's); P1's evaluation at 7 would date r(d)@5: not an answer."""
    files = _files(tmp_path, "q(X) :- p(X).\n", "r(X) at U :- p(X) at U [2], c.\n",
                   "s(X) at U :- p(X) at U [4], c.\n")
    events = [{"t": 0}, p(1, "a"), p(2, "b"), c(3), p(4, "c"), p(5, "d"), c(7), {"t": 8}]
    lines = _run(capsys, tmp_path, files, events, "--upgrade", f"3={files[1]}", "--upgrade", f"6={files[2]}")
    assert meaning(lines, (0, 8), running=True) == {
        ("q", ("a",), 1), ("q", ("b",), 2), ("r", ("a",), 1), ("r", ("b",), 2), ("s", ("c",), 4), ("s", ("d",), 5)}


def test_a_late_event_after_t_changes_what_the_new_program_dates_before_t(tmp_path, capsys):
    """The late p(x)@4 (>= T) changes nothing before T by itself, but P''s evaluation at 5 reads
    it together with p(a)@2 (before T) and dates w(a)@2: a correction before T from P'."""
    files = _files(tmp_path, "q(X) :- p(X).\n", "w(X) at U :- p(X) at U [3], p(x) [1].\n")
    events = [{"t": 0}, p(2, "a"), {"t": 7}, p(4, "x")]
    lines = _run(capsys, tmp_path, files, events, "--upgrade", f"3={files[1]}")
    assert meaning(lines, (0, 7), running=True) == {
        ("q", ("a",), 2),  # P's evaluation at 2
        ("w", ("a",), 2), ("w", ("x",), 4),  # P''s at 4 (window [1,4]) and 5 ([2,5])
    }


def test_one_version_withdrawing_what_another_answers_at_the_same_late_event_writes_nothing(tmp_path, capsys):
    """P: w(X) :- p(X), not r(X).  P' from 4: w(X) at U for p(X) at U within [3] when r(X)
    holds within [3].  p(a)@2: P's evaluation at 2 gives w(a)@2.  The late r(a)@2 takes it from
    P's evaluation at 2 and gives it to P''s at 4 (r(a)@2 and p(a)@2 within [1,4]): w(a)@2 still
    holds, so nothing is written for it — not its -1 from P followed by its +1 from P' (the
    union of the versions' answers at 2 changed hands, not its content)."""
    files = _files(tmp_path, "w(X) :- p(X), not r(X).\n", "w(X) at U :- p(X) at U [3], r(X) [3].\n")
    events = [{"t": 0}, p(2, "a"), {"t": 6}, p(2, "a", "r"), {"t": 7}]
    lines = _run(capsys, tmp_path, files, events, "--upgrade", f"4={files[1]}", "--answers", "points")
    assert lines == [{"t": 2, "pred": "w", "args": ["a"]}]
    # changelog: P's [2,inf) cut to its part as points 2 and 3 (3 provisional, as the open
    # interval is), then at the late event only 3 taken back; 2 changes hands, writes nothing
    lines = _run(capsys, tmp_path, files, events, "--upgrade", f"4={files[1]}")
    assert lines == [{"t": 2, "pred": "w", "args": ["a"]}, {"t": 3, "pred": "w", "args": ["a"]},
                     {"t": 3, "pred": "w", "args": ["a"], "diff": -1}]
    assert meaning(lines, (0, 7), running=True) == {("w", ("a",), 2)}


def test_a_dated_fact_of_the_new_program_dates_its_atom_before_t(tmp_path, capsys):
    """P' from 1 has the fact a(2) at 0 (a is an output predicate: a rule derives a(1)).  Every
    evaluation of P' (1, 2, 3) holds a(2)@0, so it is an answer though 0 < T; a(1) holds where
    no p does (the late p(x)@2 withdraws it there)."""
    files = _files(tmp_path, "q(X) :- p(X).\n", "a(2) at 0.\na(1) :- not p(_).\n")
    events = [{"t": 0}, {"t": 3}, p(2, "x")]
    for answers in ("changelog", "points"):
        lines = _run(capsys, tmp_path, files, events, "--upgrade", f"1={files[1]}", "--answers", answers)
        assert meaning(lines, (0, 3), running=True) == {("a", (2,), 0), ("a", (1,), 1), ("a", (1,), 3)}


def test_a_not_stratified_new_program_with_at_heads_is_refused(tmp_path, capsys):
    files = _files(tmp_path, "q(X) :- p(X).\n",
                   "r(X) at T :- p(X) at T [2], not s(X).\ns(X) :- p(X), not r(X) [2].\n")
    stream = _write(tmp_path / "in.jsonl", json.dumps(p(0, "a")) + "\n")
    capsys.readouterr()
    assert main(["run", files[0], "--input", stream, "--upgrade", f"1={files[1]}"]) == 2
    got = capsys.readouterr()
    assert "not stratified" in got.err and "@-heads" in got.err
    assert got.out == ""


# ---------------------------------------------------------------------------------------------
# property: the splice per evaluated time point, from a naive evaluator of each point

@SETTINGS
@given(programs=st.lists(LARS_AT_PROGRAM, min_size=2, max_size=3), events=st.lists(LARS_AT_EVENT, min_size=1, max_size=14),
       times=st.lists(st.integers(1, 11), min_size=2, max_size=2, unique=True))
def test_run_upgrade_is_the_splice_per_evaluated_point(tmp_path_factory, capsys, programs, events, times):
    tmp = tmp_path_factory.mktemp("at")
    events = [{"t": 0}, *events]
    texts = ["\n".join(rules) + "\n" for rules in programs]
    files = _files(tmp, *texts)
    starts = sorted(times)[: len(texts) - 1]
    options = [x for start, f in zip(starts, files[1:], strict=True) for x in ("--upgrade", f"{start}={f}")]
    lines = _run(capsys, tmp, files, events, *options)
    expected = reference_splice([(None, texts[0]), *zip(starts, texts[1:], strict=True)], events)
    assert meaning(lines, _span(events), running=True) == expected


@SETTINGS
@given(programs=st.lists(LARS_AT_PROGRAM, min_size=2, max_size=2), events=st.lists(LARS_AT_EVENT, min_size=1, max_size=14),
       upgrade=st.integers(1, 11), size=st.integers(1, 5))
def test_backfill_segments_with_an_upgrade_mean_the_splice(tmp_path_factory, programs, events, upgrade, size):
    """The backfill's segments (as its Spark tasks compute them, in this process) with a new
    version that dates atoms back: the same splice per evaluated point."""
    row = lookup("lars")
    texts = ["\n".join(rules) + "\n" for rules in programs]
    parsed = [row.parse([(f"p{i}.lars", text)]) for i, text in enumerate(texts)]
    events = [{"t": 0}, *events]
    history = [Event(e["t"], e.get("pred"), tuple(e.get("args", ())), e.get("op") == "retract") for e in events]

    def make():
        return program_versions(parsed, [row.evaluator(p, RunOptions(), lambda m: None) for p in parsed], [upgrade])

    lo, hi = _span(events)
    got = segment_truth(make, history, domain_of(row), widest([row.reach(p) for p in parsed]), lo, hi, size)
    points = {(pred, args, t) for (pred, args), ivs in got.items() for iv in ivs for t in range(iv[0], iv[2])}
    assert points == reference_splice([(None, texts[0]), (upgrade, texts[1])], events)
