"""``chronolog explain --upgrade T=FILE`` (embedded): the option means what it means for
``run``.  ``--changes`` lists exactly the lines ``run --upgrade`` writes that cover the atom;
``--why`` / ``--why-not`` explain with the program version in force at the query's time."""

from __future__ import annotations

import json

import pytest
from dialect_programs import RTEC_NEW, RTEC_OLD
from explaining import explain, files, walk

from chronolog.cli.main import main
from chronolog.core import intervals as I

OLD = "slow(X) :- speed(X, V), V < 30.\n"
NEW = "slow(X) :- speed(X, V), V < 50.\n"
# speed 40 until 2, then 20: the old program answers slow(a) at 3 only, the new one at 0..3
EVENTS = [{"t": 0, "pred": "speed", "args": ["a", 40]}, {"t": 1, "pred": "speed", "args": ["a", 40]},
          {"t": 2, "pred": "speed", "args": ["a", 40]}, {"t": 3, "pred": "speed", "args": ["a", 20]}, {"t": 4}]


def _setup(tmp_path) -> tuple[str, str, str]:  # noqa: ANN001
    prog, stream = files(tmp_path, "old.lars", OLD, EVENTS)
    (tmp_path / "new.lars").write_text(NEW)
    return prog, stream, f"2={tmp_path / 'new.lars'}"


def _covering(lines: list[dict], t: int) -> list[dict]:
    return [line for line in lines if I.contains(I.of_line(line), t)]


def test_changes_lists_the_lines_run_upgrade_writes(tmp_path, capsys):
    prog, stream, upgrade = _setup(tmp_path)
    capsys.readouterr()
    assert main(["run", prog, "--input", stream, "--upgrade", upgrade]) == 0
    written = [json.loads(x) for x in capsys.readouterr().out.splitlines()]
    # by hand: the new program from 2 on ([2,inf)), closed after 3 (speed only up to 3)
    assert written == [{"interval": "[2,inf)", "pred": "slow", "args": ["a"]},
                       {"interval": "[4,inf)", "pred": "slow", "args": ["a"], "diff": -1}]
    for t in (1, 2, 3, 4):
        code, got, err = explain(capsys, prog, stream, "changes", f"slow(a)@{t}", "--upgrade", upgrade)
        assert code == 0, err
        assert [c["answer"] for c in got["changes"]] == _covering(written, t)
    # without the upgrade: the old program's line at 3 alone
    code, got, _ = explain(capsys, prog, stream, "changes", "slow(a)@2")
    assert code == 0 and got["changes"] == []


def test_why_and_why_not_explain_with_the_version_in_force(tmp_path, capsys):
    prog, stream, upgrade = _setup(tmp_path)
    code, got, err = explain(capsys, prog, stream, "why", "slow(a)@2", "--upgrade", upgrade)
    assert code == 0, err
    rules = {n["rule"]["file"].rsplit("/", 1)[-1] for n in walk(got) if n.get("rule")}
    assert rules == {"new.lars"}
    code, got, err = explain(capsys, prog, stream, "why-not", "slow(a)@1", "--upgrade", upgrade)
    assert code == 0, err
    (entry,) = got["why_not"]
    assert entry["rule"]["file"].endswith("old.lars") and entry["literal"] == "V < 30"
    # the same atom at 1 without the upgrade's version: it holds under the new program only
    code, _, err = explain(capsys, prog, stream, "why", "slow(a)@1", "--upgrade", upgrade)
    assert code == 1 and "does not hold at 1" in err


def test_upgrade_without_input_is_refused(tmp_path, capsys):
    prog, _, upgrade = _setup(tmp_path)
    capsys.readouterr()
    code = main(["explain", prog, "--why", "slow(a)@2", "--upgrade", upgrade, "--state-dir", str(tmp_path / "none")])
    assert code == 2 and "--upgrade goes with --input" in capsys.readouterr().err


@pytest.mark.parametrize("dialect", ["mtl", "rtec"])
def test_changes_follows_run_upgrade_in_every_dialect(tmp_path, capsys, dialect):
    """DatalogMTL (a diamond narrowed to a box) and RTEC (a termination added) from 4 on: the
    lines ``explain --changes --upgrade`` lists for an atom at each time are those ``run
    --upgrade`` wrote that cover it."""
    if dialect == "mtl":
        old, new, name, atom = "Q(X):-Diamondminus[0,2]P(X)\n", "Q(X):-Boxminus[0,1]P(X)\n", "p.mtl", "Q(a)"
        events = [{"t": t, "pred": "P", "args": ["a"]} for t in (0, 1, 3, 5, 6)] + [{"t": 9}]
    else:
        old, new, name, atom = RTEC_OLD, RTEC_NEW, "p.prolog", "open(d1)=true"
        events = [{"t": 1, "pred": "opened", "args": ["d1"]}, {"t": 5, "pred": "locked", "args": ["d1"]},
                  {"t": 7, "pred": "closed", "args": ["d1"]}, {"t": 9}]
    prog, stream = files(tmp_path, name, old, events)
    (tmp_path / f"new{name[1:]}").write_text(new)
    upgrade = f"4={tmp_path / f'new{name[1:]}'}"
    capsys.readouterr()
    assert main(["run", prog, "--input", stream, "--upgrade", upgrade]) == 0
    written = [json.loads(x) for x in capsys.readouterr().out.splitlines()]
    capsys.readouterr()
    assert main(["run", prog, "--input", stream]) == 0
    assert written != [json.loads(x) for x in capsys.readouterr().out.splitlines()]  # (the upgrade changes answers)
    for t in range(0, 9):
        code, got, err = explain(capsys, prog, stream, "changes", f"{atom}@{t}", "--upgrade", upgrade)
        assert code == 0, err
        assert [c["answer"] for c in got["changes"]] == _covering(written, t), t


# P0 until 3, P1 (an @-head) in [3, 6), P2 from 6 (tests/runtime/test_upgrade_lars_at.py): P1's
# evaluation at 3 dates r(a)@1, r(b)@2 and the late r(f)@2 before its own T; its evaluation at 7
# would date r(d)@5, but 7 is P2's
AT_PROGRAMS = ["q(X) :- p(X).\n", "r(X) at U :- p(X) at U [2], c.\n", "q(X) :- p(X).\n"]
AT_EVENTS = [{"t": 0}, {"t": 1, "pred": "p", "args": ["a"]}, {"t": 2, "pred": "p", "args": ["b"]},
             {"t": 3, "pred": "c", "args": []}, {"t": 4, "pred": "p", "args": ["c"]}, {"t": 5, "pred": "p", "args": ["d"]},
             {"t": 7, "pred": "c", "args": []}, {"t": 7, "pred": "p", "args": ["e"]}, {"t": 8},
             {"t": 2, "pred": "p", "args": ["f"]}]


def test_an_atom_a_later_version_dates_back_is_explained_by_that_version(tmp_path, capsys):
    """As ``run --upgrade`` counts it: the version whose evaluation (from its T on) derived it."""
    prog, stream = files(tmp_path, "p0.lars", AT_PROGRAMS[0], AT_EVENTS)
    for i in (1, 2):
        (tmp_path / f"p{i}.lars").write_text(AT_PROGRAMS[i])
    ups = ["--upgrade", f"3={tmp_path / 'p1.lars'}", "--upgrade", f"6={tmp_path / 'p2.lars'}"]
    for query, source in (("r(a)@1", ":2:1"), ("r(f)@2", ":10:1")):
        code, got, err = explain(capsys, prog, stream, "why", query, *ups)
        assert code == 0, err
        assert got["rule"]["file"].endswith("p1.lars"), got
        assert any(n.get("source", "").endswith(source) for n in walk(got)), got
    code, _, err = explain(capsys, prog, stream, "why-not", "r(a)@1", *ups)
    assert code == 1 and "holds at 1 (ask --why)" in err
    # P1's evaluation at 7 would derive r(d)@5, but 7 is P2's: not an answer of run --upgrade
    code, _, err = explain(capsys, prog, stream, "why", "r(d)@5", *ups)
    assert code == 1 and "does not hold at 5" in err
    code, got, err = explain(capsys, prog, stream, "why-not", "r(d)@5", *ups)
    assert code == 0 and got["why_not"][0]["rule"]["file"].endswith("p1.lars"), err
    code, got, err = explain(capsys, prog, stream, "why", "q(e)@7", *ups)
    assert code == 0 and got["rule"]["file"].endswith("p2.lars"), err
