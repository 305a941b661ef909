"""``chronolog explain --upgrade T=FILE`` for LARS ``@``-heads (issue 38): an atom dated before
T can be derived by an evaluation from T on, which the new version makes (contract section 6:
the version is chosen by the time point evaluated).  ``--why`` explains it with the version
that derived it, ``--why-not`` and ``--changes`` follow the lines ``run --upgrade`` writes.

By hand, with T = 4: the old program needs ``a(X)`` at the evaluated point, the new one
``b(X)``; ``p(x)`` and ``p(y)`` at 3, ``p(z)`` at 2.
* ``late(x)@3``: b(x) at 5, so the new version's evaluation of 5 (window [2,5]) derives it;
  the old one's of 6 (a(x) at 6) would too, but that evaluation is the new version's.
* ``late(y)@3``: only the old version's evaluation of 6 (a(y) at 6) would: not an answer.
* ``late(z)@2``: a(z) at 3, so the old version's evaluation of 3 derives it (before T)."""

from __future__ import annotations

import json
from pathlib import Path

from dialect_programs import LARS_AT_EVENT, LARS_AT_PROGRAM, LARS_AT_RULES, LARS_DATED_EVENTS, LARS_DATED_NEW, LARS_DATED_OLD
from explaining import explain, files, walk
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from meaning import meaning

from chronolog.cli.main import main
from chronolog.contract.models import Explanation

OLD, NEW, EVENTS = LARS_DATED_OLD, LARS_DATED_NEW, LARS_DATED_EVENTS


def _setup(tmp_path: Path) -> tuple[str, str, str]:
    prog, stream = files(tmp_path, "old.lars", OLD, EVENTS)
    (tmp_path / "new.lars").write_text(NEW)
    return prog, stream, f"4={tmp_path / 'new.lars'}"


def _with(events: list[dict], missing: dict) -> list[dict]:
    """The stream with a missing event arriving right after the last event of a time up to its own."""
    ev = {"t": missing["time"], "pred": missing["pred"], "args": missing["args"]}
    at = max((i + 1 for i, e in enumerate(events) if e["t"] <= ev["t"]), default=0)
    return [*events[:at], ev, *events[at:]]


def _run(capsys, prog: str, stream: str, *more: str) -> list[dict]:  # noqa: ANN001
    capsys.readouterr()
    assert main(["run", prog, "--input", stream, *more]) == 0
    return [json.loads(x) for x in capsys.readouterr().out.splitlines()]


def test_run_upgrade_answers_by_hand(tmp_path, capsys):
    prog, stream, upgrade = _setup(tmp_path)
    assert meaning(_run(capsys, prog, stream, "--upgrade", upgrade), (0, 8)) == {("late", ("x",), 3),
                                                                                ("late", ("z",), 2)}
    assert meaning(_run(capsys, prog, stream), (0, 8)) == {("late", (a,), t) for a, t in
                                                           (("x", 3), ("y", 3), ("z", 2))}


def test_why_explains_with_the_version_of_the_evaluation_that_derived_it(tmp_path, capsys):
    prog, stream, upgrade = _setup(tmp_path)
    code, got, err = explain(capsys, prog, stream, "why", "late(x)@3", "--upgrade", upgrade)
    assert code == 0, err
    Explanation.model_validate(got)
    assert got["text"] == "late(x) at 3 (derived by the evaluation of 5)"
    assert got["rule"]["file"].endswith("new.lars") and got["bindings"] == {"X": "x", "U": 3}
    cited = [n["source"] for n in walk(got) if n["kind"] == "event"]
    assert cited == [f"{stream}:3:1", f"{stream}:6:1"]  # p(x) at 3, b(x) at 5
    # sound: the cited events alone (the first time kept, time advanced to the evaluation) derive it
    lines = Path(stream).read_text().splitlines()
    (tmp_path / "alone.jsonl").write_text("\n".join([json.dumps({"t": 0}), lines[2], lines[5], json.dumps({"t": 5})]))
    assert ("late", ("x",), 3) in meaning(_run(capsys, prog, str(tmp_path / "alone.jsonl"), "--upgrade", upgrade),
                                          (0, 5))
    # before T, the old version's evaluation derives late(z) at 2
    code, got, err = explain(capsys, prog, stream, "why", "late(z)@2", "--upgrade", upgrade)
    assert code == 0, err
    assert got["text"] == "late(z) at 2 (derived by the evaluation of 3)" and got["rule"]["file"].endswith("old.lars")
    code, _, err = explain(capsys, prog, stream, "why-not", "late(x)@3", "--upgrade", upgrade)
    assert code == 1 and "late(x) holds at 3 (ask --why)" in err


def test_why_not_follows_run_upgrade(tmp_path, capsys):
    prog, stream, upgrade = _setup(tmp_path)
    # the old program alone derives late(y) at 3 (its evaluation of 6): run --upgrade does not
    code, _, err = explain(capsys, prog, stream, "why", "late(y)@3")
    assert code == 0, err
    code, _, err = explain(capsys, prog, stream, "why", "late(y)@3", "--upgrade", upgrade)
    assert code == 1 and "late(y) does not hold at 3 (ask --why-not)" in err
    code, got, err = explain(capsys, prog, stream, "why-not", "late(y)@3", "--upgrade", upgrade)
    assert code == 0, err
    Explanation.model_validate(got)
    # the evaluation of 3 by the old version, and the new version's first evaluation (4)
    assert [(e["rule"]["file"].rsplit("/", 1)[-1], e["literal"]) for e in got["why_not"]] == \
        [("old.lars", "a(X)"), ("new.lars", "b(X)")]
    assert got["why_not"][0]["text"] == ("fails at body element 2: a(y) fails: no matching fact at 3; adding a(y) "
                                         "at 3 would derive it")
    assert got["why_not"][1]["text"] == ("at the evaluation of 4 (the program version from 4): fails at body "
                                         "element 2: b(y) fails: no matching fact at 4; adding b(y) at 4 would derive it")
    # each named event, added, makes run --upgrade answer late(y) at 3 (the old version's
    # evaluation of 3, the new one's of 4)
    for entry in got["why_not"]:
        missing = entry["missing"]
        plus = _with(EVENTS, missing)
        (tmp_path / "plus.jsonl").write_text("".join(json.dumps(e) + "\n" for e in plus))
        assert ("late", ("y",), 3) in meaning(_run(capsys, prog, str(tmp_path / "plus.jsonl"), "--upgrade", upgrade),
                                              (0, 8))


def test_changes_name_the_evaluation_that_dates_the_atom_back(tmp_path, capsys):
    prog, stream, upgrade = _setup(tmp_path)
    written = _run(capsys, prog, stream, "--upgrade", upgrade)
    code, got, err = explain(capsys, prog, stream, "changes", "late(x)@3", "--upgrade", upgrade)
    assert code == 0, err
    (change,) = got["changes"]
    assert change["answer"] == {"t": 3, "pred": "late", "args": ["x"]} and change["answer"] in written
    # written when the evaluation of 5 dated it back, after b(x) at 5 arrived: not a correction
    assert (change["kind"], change["until"]) == ("advance", "5")
    assert [(c["pred"], c["args"], c["t"]) for c in change["causes"]] == [("b", ["x"], "5")]
    code, got, _ = explain(capsys, prog, stream, "changes", "late(y)@3", "--upgrade", upgrade)
    assert code == 0 and got["changes"] == []
    capsys.readouterr()
    assert main(["explain", prog, "--input", stream, "--changes", "late(x)@3", "--upgrade", upgrade]) == 0
    assert "its evaluation dates the atom back to 3" in capsys.readouterr().out


# new programs with an @-head that dates atoms back (and whatever else LARS_AT_PROGRAM draws)
DATING = st.tuples(st.sampled_from(LARS_AT_RULES[:4] + LARS_AT_RULES[5:]), LARS_AT_PROGRAM).map(
    lambda d: list(dict.fromkeys([d[0], *d[1]])))
SETTINGS = settings(max_examples=200, deadline=None, suppress_health_check=list(HealthCheck))


def _evaluated(node: dict, t: int) -> int:
    """The point whose evaluation a rule node's atom comes from: an @-head's names it, else its own time."""
    text = node["text"]
    if "(derived by the evaluation of " in text:
        return int(text.split("(derived by the evaluation of ")[1].split(")")[0])
    return node.get("time", t)


@SETTINGS
@given(old=LARS_AT_PROGRAM, new=DATING, at=st.integers(1, 9), events=st.lists(LARS_AT_EVENT, min_size=2, max_size=12),
       t=st.integers(0, 10), pred=st.sampled_from(["w", "v", "q", "s"]), arg=st.sampled_from(["a", "b"]),
       answer=st.none() | st.integers(0, 99))
def test_random_upgrades_with_at_heads_explain_run_upgrades_answers(tmp_path_factory, capsys, old, new, at, events, t,
                                                                     pred, arg, answer):
    """``--why`` exactly for ``run --upgrade``'s answers and ``--why-not`` for the others; every
    rule node cites the version in force at the point whose evaluation it is; the events a
    ``--why`` cites, alone (the first time kept, time advanced to the latest evaluation it
    names), derive the atom under ``run --upgrade``.  (``answer``: the query is one of the
    answers, most often one an ``@``-head dates back, else any atom.)"""
    tmp = tmp_path_factory.mktemp("dated")
    stream_events = [{"t": 0}, *events, {"t": 10}]
    prog, stream = files(tmp, "old.lars", "\n".join(old) + "\n", stream_events)
    (tmp / "new.lars").write_text("\n".join(new) + "\n")
    upgrade = f"{at}={tmp / 'new.lars'}"
    answers = sorted(meaning(_run(capsys, prog, stream, "--upgrade", upgrade), (0, 10)))
    if answer is not None and answers:
        dated = [a for a in answers if a[0] == "w"] or answers
        pred, (arg,), t = dated[answer % len(dated)]
    holds = (pred, (arg,), t) in answers
    query = f"{pred}({arg})@{t}"
    code, got, err = explain(capsys, prog, stream, "why", query, "--upgrade", upgrade)
    assert code == (0 if holds else 1), err
    code_not, got_not, err_not = explain(capsys, prog, stream, "why-not", query, "--upgrade", upgrade)
    assert code_not == (1 if holds else 0), err_not
    for output in (got, got_not):
        if output is not None:
            Explanation.model_validate(output)
    if not holds:  # a top-level entry's missing event, added, makes run --upgrade answer the atom
        for entry in got_not["why_not"]:
            if "missing" in entry:
                missing = entry["missing"]
                plus = _with(stream_events, missing)
                (tmp / "plus.jsonl").write_text("".join(json.dumps(e) + "\n" for e in plus))
                assert (pred, (arg,), t) in meaning(_run(capsys, prog, str(tmp / "plus.jsonl"), "--upgrade", upgrade),
                                                    (0, 10)), entry
        return
    points = [t]
    for node in walk(got):
        if node["kind"] == "rule":
            e = _evaluated(node, t)
            points.append(e)
            assert node["rule"]["file"].endswith("old.lars" if e < at else "new.lars"), (e, node)
    texts = Path(stream).read_text().splitlines()
    cited = sorted({int(n["source"].split(":")[-2]) for n in walk(got) if n["kind"] == "event"})
    alone = [{"t": 0}, *(json.loads(texts[n - 1]) for n in cited), {"t": max(points)}]
    (tmp / "alone.jsonl").write_text("".join(json.dumps(e) + "\n" for e in alone))
    assert (pred, (arg,), t) in meaning(_run(capsys, prog, str(tmp / "alone.jsonl"), "--upgrade", upgrade),
                                        (0, max(points))), (cited, got)
