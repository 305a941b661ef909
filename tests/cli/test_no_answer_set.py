"""A LARS time point without an answer set: ``chronolog run`` writes only CONTRACT section 3
lines on stdout and warns of the point on stderr; ``--mark-no-answer-set`` puts the old
``{"t": T, "no_answer_set": true}`` line back among the answers (docs/formats.md).

The expectations are derived by hand from LARS.md: an ``@``-head dating an atom after the
current time is off the timeline (no answer set), and ``x :- q [1], not x.`` is an odd loop
wherever q is in the window."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from dialect_programs import PROGRAMS, SUFFIX

from chronolog.cli.main import main
from chronolog.contract.models import AnswerLine, NoAnswerSetLine

# c at X :- p(X) [1 #].  p(9)@3: c dated 9, after t=3 and t=4 (the last tuple is still p(9)):
# no answer set; p(4)@5: c at 4, inside [3,5]
AT = ("c at X :- p(X) [1 #].\n", [{"t": 3, "pred": "p", "args": [9]}, {"t": 5, "pred": "p", "args": [4]}])
# q@2 is in the window [1] at 2 and 3: no answer set there; a(X) holds where p(X) is
ODD = ("x :- q [1], not x.\na(X) :- p(X) [0].\n",
       [{"t": 1, "pred": "p", "args": [1]}, {"t": 2, "pred": "q", "args": []}, {"t": 5, "pred": "p", "args": [2]}])
TMS_WHY = "no consistent labelling: an odd loop through not, or a constraint"


def _run(tmp_path: Path, capsys, case: tuple[str, list[dict]], *args: str, suffix: str = ".lars") -> tuple[list, str]:
    text, events = case
    prog = tmp_path / f"prog{suffix}"
    prog.write_text(text)
    stream = tmp_path / "in.jsonl"
    stream.write_text("".join(json.dumps(e) + "\n" for e in events))
    capsys.readouterr()
    assert main(["run", str(prog), "--input", str(stream), *args]) == 0
    got = capsys.readouterr()
    return [json.loads(x) for x in got.out.splitlines()], got.err


def _warning(t: int, why: str) -> str:
    return f"warning: no answer set at t={t} ({why}); no answers for that evaluation"


def test_run_writes_answer_lines_only_and_warns_of_a_point_off_the_timeline(tmp_path, capsys):
    lines, err = _run(tmp_path, capsys, AT)
    assert lines == [{"t": 4, "pred": "c", "args": []}]
    for line in lines:
        AnswerLine.model_validate(line)
    assert err.splitlines() == [_warning(3, "c derived at time 9, outside the timeline [3,3]"),
                                _warning(4, "c derived at time 9, outside the timeline [3,4]")]


def test_mark_no_answer_set_writes_the_line_at_each_such_point(tmp_path, capsys):
    lines, err = _run(tmp_path, capsys, AT, "--mark-no-answer-set")
    assert lines == [{"t": 3, "no_answer_set": True}, {"t": 4, "no_answer_set": True}, {"t": 4, "pred": "c", "args": []}]
    NoAnswerSetLine.model_validate(lines[0])
    assert "no answer set at t=3" in err  # (the warning stays)


@pytest.mark.parametrize(("mode", "why"), [("tms", TMS_WHY), ("oneshot", "clingo finds none")])
def test_an_odd_loop_is_a_warning_and_with_the_option_a_line(tmp_path, capsys, mode, why):
    default, err = _run(tmp_path, capsys, ODD, "--mode", mode, "--answers", "points")
    assert default == [{"t": 1, "pred": "a", "args": [1]}, {"t": 5, "pred": "a", "args": [2]}]
    assert err.splitlines() == [_warning(2, why), _warning(3, why)]
    marked, _ = _run(tmp_path, capsys, ODD, "--mode", mode, "--answers", "points", "--mark-no-answer-set")
    assert marked == [default[0], {"t": 2, "no_answer_set": True}, {"t": 3, "no_answer_set": True}, default[1]]
    changelog, _ = _run(tmp_path, capsys, ODD, "--mode", mode)
    assert all("pred" in x for x in changelog) and changelog


def test_several_models_mark_each_stream(tmp_path, capsys):
    """``--models 2``: each answer stream (``"model": k``) has its own line with the option, none without."""
    default, _ = _run(tmp_path, capsys, ODD, "--mode", "oneshot", "--models", "2")
    assert default and all("pred" in x for x in default)
    marked, _ = _run(tmp_path, capsys, ODD, "--mode", "oneshot", "--models", "2", "--mark-no-answer-set")
    assert sorted((x["model"], x["t"]) for x in marked if "pred" not in x) == [(0, 2), (0, 3), (1, 2), (1, 3)]
    assert [x for x in marked if "pred" in x] == default


@pytest.mark.parametrize("dialect", list(PROGRAMS))
def test_the_option_changes_nothing_where_every_point_has_an_answer_set(tmp_path, capsys, dialect):
    text, pred = PROGRAMS[dialect][0], PROGRAMS[dialect][1]
    events = ([{"t": 3, "pred": "opened", "args": ["d1"]}, {"t": 8, "pred": "closed", "args": ["d1"]}]
              if dialect == "rtec" else [{"t": 0, "pred": pred, "args": ["a"]}, {"t": 3, "pred": pred, "args": ["b"]}])
    default, err = _run(tmp_path, capsys, (text, events), suffix=SUFFIX[dialect])
    assert default and "no answer set" not in err
    assert _run(tmp_path, capsys, (text, events), "--mark-no-answer-set", suffix=SUFFIX[dialect])[0] == default


@pytest.mark.parametrize("mark", [False, True])
def test_explain_changes_numbers_the_lines_run_writes(tmp_path, capsys, mark):
    """``explain --changes`` names the line of run's output: c@4 is the first line by
    default, the third after the two no_answer_set lines with the option."""
    option = ["--mark-no-answer-set"] if mark else []
    lines, _ = _run(tmp_path, capsys, AT, *option)
    argv = ["explain", str(tmp_path / "prog.lars"), "--input", str(tmp_path / "in.jsonl"), "--changes", "c@4",
            "--as", "json", *option]
    capsys.readouterr()
    assert main(argv) == 0
    changes = json.loads(capsys.readouterr().out)["changes"]
    assert [(c["line"], c["answer"]) for c in changes] == [(3 if mark else 1, {"t": 4, "pred": "c", "args": []})]
    assert lines[changes[0]["line"] - 1] == changes[0]["answer"]

