"""``chronolog run --upgrade T=FILE``: the old program's answers before T, the new one's from T on.

The expectation is computed independently of the splice: two plain ``chronolog run``s (one
per program, ``--answers points`` for LARS) whose meanings are cut at T by hand, and for
hand-picked cases the answers written out.  Meanings are compared point by point
(tests/meaning.py), over rational sample points for DatalogMTL.
"""

from __future__ import annotations

import json
from fractions import Fraction
from pathlib import Path

import pytest
from dialect_programs import LARS_RULES, MTL_RULES, RTEC_NEW, RTEC_OLD
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from meaning import meaning, sampled_meaning

from chronolog.cli.main import main
from chronolog.core.events import Event
from chronolog.core.reach import widest
from chronolog.dialects.registry import RunOptions, lookup
from chronolog.runtime.backfill.meaning import domain_of
from chronolog.runtime.backfill.segments import truth as segment_truth
from chronolog.versions import UpgradeRequest, version_id, versions_of

# Each dialect has its own property test below, of one shape: their event strategies, time
# domains and meanings differ (integer points, rational samples, a clock grid), so they stay
# apart rather than one test parametrized over all three.
SETTINGS = settings(max_examples=100, deadline=None, suppress_health_check=list(HealthCheck))


def _write(path: Path, text: str) -> str:
    path.write_text(text)
    return str(path)


def _stream(path: Path, events: list[dict]) -> str:
    return _write(path, "".join(json.dumps(e) + "\n" for e in events))


def _run(capsys, *argv: str) -> tuple[int, list[dict], str]:
    capsys.readouterr()
    code = main(["run", *argv])
    got = capsys.readouterr()
    return code, [json.loads(x) for x in got.out.splitlines()], got.err


def _span(events: list[dict]) -> tuple[int, int]:
    times = [e["t"] for e in events]
    return min(times), max(times)


# ---------------------------------------------------------------------------------------------
# LARS


def test_lars_window_narrowed_at_4_by_hand(tmp_path, capsys):
    """q(X) :- p(X) [2] until 4, then [1]; a late p(c) at 1 is corrected by the old program."""
    old = _write(tmp_path / "old.lars", "q(X) :- p(X) [2].\n")
    new = _write(tmp_path / "new.lars", "q(X) :- p(X) [1].\n")
    events = [{"t": 0, "pred": "p", "args": ["a"]}, {"t": 3, "pred": "p", "args": ["b"]}, {"t": 6},
              {"t": 1, "pred": "p", "args": ["c"]}]
    code, lines, err = _run(capsys, old, "--input", _stream(tmp_path / "in.jsonl", events), "--upgrade", f"4={new}")
    assert code == 0, err
    assert meaning(lines, (0, 6), running=True) == {
        ("q", ("a",), 0), ("q", ("a",), 1), ("q", ("a",), 2),  # [2] (old)
        ("q", ("b",), 3), ("q", ("b",), 4),  # 3 by the old program, 4 by the new one's [1]
        ("q", ("c",), 1), ("q", ("c",), 2), ("q", ("c",), 3),  # the late event, before 4: old
    }


def test_lars_two_chained_upgrades_and_a_negation_added(tmp_path, capsys):
    p0 = _write(tmp_path / "p0.lars", "q(X) :- p(X).\n")
    p1 = _write(tmp_path / "p1.lars", "q(X) :- p(X), not r(X) [1].\n")
    p2 = _write(tmp_path / "p2.lars", "q(X) :- r(X) [3].\n")
    events = [{"t": t, "pred": "p", "args": ["a"]} for t in range(0, 9)]
    events += [{"t": 3, "pred": "r", "args": ["a"]}, {"t": 4, "pred": "r", "args": ["a"]},
               {"t": 7, "pred": "r", "args": ["a"], "op": "retract"}]
    events.insert(5, {"t": 7, "pred": "r", "args": ["a"]})
    code, lines, err = _run(capsys, p0, "--input", _stream(tmp_path / "in.jsonl", events),
                            "--upgrade", f"3={p1}", "--upgrade", f"6={p2}")
    assert code == 0, err
    # 0..2: p(a) → q(a); 3..5: q(a) unless r(a) at t or t-1 (r at 3, 4): only... none of 3,4,5;
    # 6..8: r(a) within [3] (r at 3, 4; the one at 7 withdrawn): 6 and 7 (4 is within 3 of 7)
    assert meaning(lines, (0, 8), running=True) == {("q", ("a",), t) for t in (0, 1, 2, 6, 7)}


def test_lars_old_program_at_heads_of_later_evaluations_do_not_count(tmp_path, capsys):
    """An @-head of the old program evaluated from T on would date an atom before T: the
    evaluation is the new program's, so that atom is not written."""
    old = _write(tmp_path / "old.lars", "r(X) at U :- p(X) at T [3], U = T - 2.\nq(X) :- p(X).\n")
    new = _write(tmp_path / "new.lars", "q(X) :- p(X).\n")
    events = [{"t": 0}, {"t": 2, "pred": "p", "args": ["a"]}, {"t": 5, "pred": "p", "args": ["b"]}, {"t": 6}]
    code, lines, err = _run(capsys, old, "--input", _stream(tmp_path / "in.jsonl", events), "--upgrade", f"4={new}")
    assert code == 0, err
    # r(a) at 0 (from the evaluation at 2 < 4); r(b) at 3 would come from evaluating 5 >= 4: not written
    assert meaning(lines, (0, 6)) == {("r", ("a",), 0), ("q", ("a",), 2), ("q", ("b",), 5)}


ARGS = st.sampled_from(["a", "b"])
LARS_EVENT = st.builds(lambda t, pred, arg, retract: {"t": t, "pred": pred, "args": [arg],
                                                       **({"op": "retract"} if retract else {})},
                       st.integers(0, 10), st.sampled_from(["p", "r"]), ARGS, st.booleans())


@SETTINGS
@given(old=st.lists(st.sampled_from(LARS_RULES), min_size=1, max_size=3, unique=True),
       new=st.lists(st.sampled_from(LARS_RULES), min_size=1, max_size=3, unique=True),
       events=st.lists(LARS_EVENT, min_size=1, max_size=14), upgrade=st.integers(0, 11))
def test_lars_upgrade_is_the_splice_of_two_plain_runs(tmp_path_factory, capsys, old, new, events, upgrade):
    tmp = tmp_path_factory.mktemp("lars")
    events = [{"t": 0}, *events]  # (the stream starts at 0 whatever arrives late)
    stream = _stream(tmp / "in.jsonl", events)
    span = _span(events)
    plain = {}
    for name, rules in (("old", old), ("new", new)):
        prog = _write(tmp / f"{name}.lars", "\n".join(rules) + "\n")
        code, lines, err = _run(capsys, prog, "--input", stream)
        assert code == 0, err
        plain[name] = meaning(lines, span)
    expected = {a for a in plain["old"] if a[2] < upgrade} | {a for a in plain["new"] if a[2] >= upgrade}
    code, lines, err = _run(capsys, str(tmp / "old.lars"), "--input", stream, "--upgrade", f"{upgrade}={tmp / 'new.lars'}")
    assert code == 0, err
    assert meaning(lines, span, running=True) == expected


# ---------------------------------------------------------------------------------------------
# DatalogMTL (rational time: meanings compared at every quarter point of the span)


def test_mtl_bound_widened_at_7_over_2_by_hand(tmp_path, capsys):
    old = _write(tmp_path / "old.mtl", "Alarm(X):-Diamondminus[0,1]Hot(X)\n")
    new = _write(tmp_path / "new.mtl", "Alarm(X):-Diamondminus[0,3]Hot(X)\n")
    events = [{"interval": "[0,1]", "pred": "Hot", "args": ["s1"]}, {"t": 10}]
    code, lines, err = _run(capsys, old, "--input", _stream(tmp_path / "in.jsonl", events),
                            "--upgrade", f"7/2={new}")
    assert code == 0, err
    # old: Alarm on [0,2]; new: Alarm on [0,4]; spliced: [0,2] and [7/2,4]
    got = sampled_meaning(lines, 10)
    want = {("Alarm", ("s1",), x) for x in (Fraction(k, 4) for k in range(41))
            if x <= 2 or Fraction(7, 2) <= x <= 4}
    assert got == want


MTL_EVENT = st.builds(lambda lo, n, pred, arg, retract: {"interval": f"[{lo},{lo + n}]", "pred": pred, "args": [arg],
                                                          **({"op": "retract"} if retract else {})},
                      st.integers(0, 8), st.integers(0, 2), st.sampled_from(["P", "R"]), ARGS, st.booleans())


@SETTINGS
@given(old=st.lists(st.sampled_from(MTL_RULES), min_size=1, max_size=3, unique=True),
       new=st.lists(st.sampled_from(MTL_RULES), min_size=1, max_size=3, unique=True),
       events=st.lists(MTL_EVENT, min_size=1, max_size=8), upgrade=st.integers(0, 20))
def test_mtl_upgrade_is_the_splice_of_two_plain_runs(tmp_path_factory, capsys, old, new, events, upgrade):
    tmp = tmp_path_factory.mktemp("mtl")
    when = Fraction(upgrade, 2)
    events = [{"t": 0}, *events, {"t": 12}]
    stream = _stream(tmp / "in.jsonl", events)
    plain = {}
    for name, rules in (("old", old), ("new", new)):
        prog = _write(tmp / f"{name}.mtl", "\n".join(rules) + "\n")
        code, lines, err = _run(capsys, prog, "--input", stream)
        assert code == 0, err
        plain[name] = sampled_meaning(lines, 12)
    expected = {a for a in plain["old"] if a[2] < when} | {a for a in plain["new"] if a[2] >= when}
    at = str(when.numerator) if when.denominator == 1 else f"{when.numerator}/{when.denominator}"
    code, lines, err = _run(capsys, str(tmp / "old.mtl"), "--input", stream, "--upgrade", f"{at}={tmp / 'new.mtl'}")
    assert code == 0, err
    assert sampled_meaning(lines, 12) == expected


# ---------------------------------------------------------------------------------------------
# The Event Calculus


def test_rtec_termination_added_at_10_by_hand(tmp_path, capsys):
    old = _write(tmp_path / "old.prolog", RTEC_OLD)
    new = _write(tmp_path / "new.prolog", RTEC_NEW)
    events = [{"t": 3, "pred": "opened", "args": ["d1"]}, {"t": 5, "pred": "locked", "args": ["d1"]},
              {"t": 12, "pred": "opened", "args": ["d2"]}, {"t": 15, "pred": "locked", "args": ["d2"]},
              {"t": 20, "pred": "closed", "args": ["d2"]}, {"t": 25}]
    code, lines, err = _run(capsys, old, "--input", _stream(tmp_path / "in.jsonl", events), "--upgrade", f"10={new}")
    assert code == 0, err
    # d1: open from 4 (initiated at 3) for ever under the old rules; the new ones terminated it at 5,
    # so from 10 on it is not open.  d2: opened at 12, locked at 15 (new rules): open 13..15.
    held = meaning(lines, (0, 25), running=True)
    assert held == {("open", ("d1",), t) for t in range(4, 10)} | {("open", ("d2",), t)
                                                                          for t in range(13, 16)}


def test_rtec_a_version_whose_part_ends_before_the_first_event(tmp_path, capsys):
    """P1 (from 2 to 4) adds gap = the complement of open; the first event, locked(d1), comes at
    6.  RTEC's timeline starts at 0 whatever the first event, so P1 has answers in [2,4): gap
    there (open holds only from 7).  P1 was never evaluated, as nothing reached it before its end."""
    ground = "door(d1).\ngrounding(open(D)=true) :- door(D).\ngrounding(gap(D)=true) :- door(D).\n"
    p0 = _write(tmp_path / "p0.prolog", "initiatedAt(open(D)=true, T) :- happensAt(locked(D), T).\n" + ground)
    p1 = _write(tmp_path / "p1.prolog", "initiatedAt(open(D)=true, T) :- happensAt(locked(D), T).\n"
                "holdsFor(gap(D)=true, I) :- holdsFor(open(D)=true, I1), complement_all([I1], I).\n" + ground)
    stream = _stream(tmp_path / "in.jsonl", [{"t": 6, "pred": "locked", "args": ["d1"]}, {"t": 12}])
    code, lines, err = _run(capsys, p0, "--input", stream, "--upgrade", f"2={p1}", "--upgrade", f"4={p0}")
    assert code == 0, err
    assert meaning(lines, (0, 12), running=True) == {("open", ("d1",), t) for t in range(7, 13)} | {
        ("gap", ("d1",), 2), ("gap", ("d1",), 3)}


RTEC_EVENT = st.builds(lambda t, pred, arg, retract: {"t": t, "pred": pred, "args": [arg],
                                                       **({"op": "retract"} if retract else {})},
                       st.integers(0, 20), st.sampled_from(["opened", "closed", "locked"]), st.sampled_from(["d1", "d2"]),
                       st.booleans())


@SETTINGS
@given(flip=st.booleans(), events=st.lists(RTEC_EVENT, min_size=1, max_size=10), upgrade=st.integers(0, 22))
def test_rtec_upgrade_is_the_splice_of_two_plain_runs(tmp_path_factory, capsys, flip, events, upgrade):
    tmp = tmp_path_factory.mktemp("rtec")
    texts = {"old": RTEC_NEW if flip else RTEC_OLD, "new": RTEC_OLD if flip else RTEC_NEW}
    events = [*events, {"t": 22}]
    stream = _stream(tmp / "in.jsonl", events)
    plain = {}
    for name, text in texts.items():
        prog = _write(tmp / f"{name}.prolog", text)
        code, lines, err = _run(capsys, prog, "--input", stream)
        assert code == 0, err
        plain[name] = meaning(lines, (0, 22))
    expected = {a for a in plain["old"] if a[2] < upgrade} | {a for a in plain["new"] if a[2] >= upgrade}
    code, lines, err = _run(capsys, str(tmp / "old.prolog"), "--input", stream,
                            "--upgrade", f"{upgrade}={tmp / 'new.prolog'}")
    assert code == 0, err
    assert meaning(lines, (0, 22), running=True) == expected


# ---------------------------------------------------------------------------------------------
# Refusals: exit 2, the reason on stderr, nothing evaluated


@pytest.mark.parametrize(("new_text", "suffix", "upgrade", "message"), [
    ("q(X) :- p(X", ".lars", "4", "new.lars:1:"),
    ("Q(X):-P(X)\n", ".mtl", "4", "a DatalogMTL program cannot replace a LARS program"),
    ("q(X) :- p(X).\n", ".lars", "x", "'x' is not a time"),
    ("q(X) :- p(X).\n", ".lars", "7/2", "is not an integer"),
])
def test_refusals(tmp_path, capsys, new_text, suffix, upgrade, message):
    old = _write(tmp_path / "old.lars", "q(X) :- p(X) [2].\n")
    new = _write(tmp_path / f"new{suffix}", new_text)
    stream = _stream(tmp_path / "in.jsonl", [{"t": 0, "pred": "p", "args": ["a"]}])
    code, lines, err = _run(capsys, old, "--input", stream, "--upgrade", f"{upgrade}={new}")
    assert code == 2
    assert message in err
    assert lines == []


def test_times_must_increase_and_the_form_is_checked(tmp_path, capsys):
    old = _write(tmp_path / "old.lars", "q(X) :- p(X) [2].\n")
    stream = _stream(tmp_path / "in.jsonl", [{"t": 0, "pred": "p", "args": ["a"]}])
    code, _, err = _run(capsys, old, "--input", stream, "--upgrade", f"5={old}", "--upgrade", f"3={old}")
    assert code == 2 and "must increase" in err
    code, _, err = _run(capsys, old, "--input", stream, "--upgrade", old)
    assert code == 2 and "T=FILE" in err


# ---------------------------------------------------------------------------------------------
# The backfill: segments of history replayed with the version in force at each time


def _segment_truth(dialect: str, old: str, new: str, when, events: list[dict], lo, hi, size):
    """The backfill's answers in [lo, hi], segment by segment in this process (as its Spark
    tasks compute them) with the two program versions."""
    row = lookup(dialect)
    programs = [row.parse([("old", old)]), row.parse([("new", new)])]
    reach = widest([row.reach(p) for p in programs])
    history = [Event(e["t"], e.get("pred"), tuple(e.get("args", ())), e.get("op") == "retract") for e in events]

    def make():
        return versions_of([row.evaluator(p, RunOptions(), lambda m: None) for p in programs], [when],
                           [row.causal(p) for p in programs], row.discrete)

    return segment_truth(make, history, domain_of(row), reach, lo, hi, size)


@SETTINGS
@given(old=st.lists(st.sampled_from(LARS_RULES), min_size=1, max_size=3, unique=True),
       new=st.lists(st.sampled_from(LARS_RULES), min_size=1, max_size=3, unique=True),
       events=st.lists(LARS_EVENT, min_size=1, max_size=14), upgrade=st.integers(0, 11), size=st.integers(1, 5))
def test_lars_backfill_segments_with_an_upgrade_mean_what_run_upgrade_prints(
        tmp_path_factory, capsys, old, new, events, upgrade, size):
    tmp = tmp_path_factory.mktemp("lars")
    events = [{"t": 0}, *events]
    stream = _stream(tmp / "in.jsonl", events)
    span = _span(events)
    _write(tmp / "old.lars", "\n".join(old) + "\n")
    _write(tmp / "new.lars", "\n".join(new) + "\n")
    code, lines, err = _run(capsys, str(tmp / "old.lars"), "--input", stream, "--upgrade", f"{upgrade}={tmp / 'new.lars'}")
    assert code == 0, err
    got = _segment_truth("lars", "\n".join(old), "\n".join(new), upgrade, events, span[0], span[1], size)
    points = {(pred, args, t) for (pred, args), ivs in got.items() for iv in ivs for t in range(iv[0], iv[2])}
    assert points == meaning(lines, span)


@pytest.mark.spark
def test_backfill_command_with_an_upgrade_corrects_to_run_upgrade(tmp_path, capsys):
    """``chronolog backfill --upgrade`` (a real local Spark session): the published answers of
    the old program alone plus the corrections mean what ``run --upgrade`` prints."""
    old = _write(tmp_path / "old.lars", "q(X) :- p(X) [2].\ns(X) :- q(X), not r(X) [1].\n")
    new = _write(tmp_path / "new.lars", "q(X) :- p(X) [1 #].\ns(X) :- q(X), not r(X).\n")
    events = [{"t": t, "pred": "p", "args": [f"a{t % 3}"]} for t in range(20)]
    events += [{"t": 6, "pred": "r", "args": ["a0"]}, {"t": 14, "pred": "r", "args": ["a2"]},
               {"t": 3, "pred": "p", "args": ["a0"], "op": "retract"}]
    stream = _stream(tmp_path / "in.jsonl", events)
    code, published, err = _run(capsys, old, "--input", stream)
    assert code == 0, err
    code, want, err = _run(capsys, old, "--input", stream, "--upgrade", f"9={new}")
    assert code == 0, err
    assert meaning(published, (0, 19)) != meaning(want, (0, 19))  # the upgrade matters
    answers = _stream(tmp_path / "answers.jsonl", published)
    # the history as a fleet's input topic holds it after `chronolog upgrade`: the request among the events
    request = UpgradeRequest("r1", version_id((("new.lars", Path(new).read_text()),)), "lars", "9",
                             (("new.lars", Path(new).read_text()),))
    history = tmp_path / "history.jsonl"
    history.write_text(Path(stream).read_text() + request.encode().decode() + "\n")
    out = tmp_path / "fixes.jsonl"
    capsys.readouterr()
    assert main(["backfill", old, "--upgrade", f"9={new}", "--history", str(history), "--answers", answers,
                 "--from", "0", "--to", "19", "--segment", "4", "--master", "local[2]", "--output", str(out)]) == 0
    assert "the history holds 1 program upgrade requests" in capsys.readouterr().err
    fixes = [json.loads(x) for x in out.read_text().splitlines()]
    assert meaning(published + fixes, (0, 19), running=True) == meaning(want, (0, 19))


# issue 37: a complement_all fluent holding from 0, an upgrade before the first event, and a
# simple fluent initiated by its start; ``run --upgrade`` must be the splice of the plain runs
RTEC_GAP = ("door(d1).\ngrounding(open(D)=true) :- door(D).\ngrounding(gap(D)=true) :- door(D).\n"
            "grounding(rang(D)=true) :- door(D).\n"
            "initiatedAt(open(D)=true, T) :- happensAt(locked(D), T).\n"
            "holdsFor(gap(D)=true, I) :- holdsFor(open(D)=true, I1), complement_all([I1], I).\n"
            "initiatedAt(rang(D)=true, T) :- happensAt(start(gap(D)=true), T).\n")


def test_rtec_old_part_before_the_first_event_is_answered(tmp_path, capsys):
    """P has gap (the complement of open) from 0; P' (from 4) has no gap; the first event comes at
    6.  P's part [0,4) holds gap and rang (as P's plain run has them from 0); P' has open from 7
    only."""
    p0 = _write(tmp_path / "p0.prolog", RTEC_GAP)
    p1 = _write(tmp_path / "p1.prolog", RTEC_GAP.split("holdsFor(gap")[0])
    stream = _stream(tmp_path / "in.jsonl", [{"t": 6, "pred": "locked", "args": ["d1"]}, {"t": 12}])
    code, lines, err = _run(capsys, p0, "--input", stream, "--upgrade", f"4={p1}")
    assert code == 0, err
    assert meaning(lines, (0, 12), running=True) == {("open", ("d1",), t) for t in range(7, 13)} | {
        (name, ("d1",), t) for name in ("gap", "rang") for t in range(4)}


def test_rtec_start_of_a_fluent_from_0_kept_across_an_upgrade(tmp_path, capsys):
    """P' only adds an unrelated fluent (the gap and rang strata are kept): the splice is P's plain
    run, whose answers for gap, rang and open are the same in P'."""
    p0 = _write(tmp_path / "p0.prolog", RTEC_GAP)
    p1 = _write(tmp_path / "p1.prolog", RTEC_GAP + "grounding(shut(D)=true) :- door(D).\n"
                "initiatedAt(shut(D)=true, T) :- happensAt(closed(D), T).\n")
    stream = _stream(tmp_path / "in.jsonl", [{"t": 6, "pred": "locked", "args": ["d1"]}, {"t": 12}])
    _, plain, _ = _run(capsys, p0, "--input", stream)
    code, lines, err = _run(capsys, p0, "--input", stream, "--upgrade", f"4={p1}")
    assert code == 0, err
    assert meaning(lines, (0, 12), running=True) == meaning(plain, (0, 12), running=True)
