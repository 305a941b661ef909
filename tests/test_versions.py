"""``versions.switch``, the upgrade of a running evaluator (what a fleet service does), and
``Evaluator.retained``, the input it evaluates again.

The reference is ``chronolog run --upgrade`` (tests/runtime/test_upgrade.py holds it to the
splice of two plain runs): a stream evaluated in two halves with the switch between them,
at a time before, inside or after what was already evaluated, must mean the same.
"""

from __future__ import annotations

import json
from fractions import Fraction
from pathlib import Path

import pytest
from hypothesis import HealthCheck, example, given, settings
from hypothesis import strategies as st
from meaning import meaning, sampled_meaning

from chronolog.cli.main import main
from chronolog.core.errors import InputError
from chronolog.dialects.lars.engine.core import Engine
from chronolog.dialects.lars.evaluator import LarsEvaluator
from chronolog.dialects.lars.hooks import lars_plan
from chronolog.dialects.registry import RunOptions, lookup
from chronolog.evaluator import Span
from chronolog.versions import VersionAnswers, Versions, restore, switch, version_id

# Each dialect has its own property test below, of one shape: their event strategies, time
# domains and meanings differ (integer points, rational samples, a clock grid), so they stay
# apart rather than one test parametrized over all three.
SETTINGS = settings(max_examples=60, deadline=None, suppress_health_check=list(HealthCheck))

MTL_RULES = ["Q(X):-Diamondminus[0,2]P(X)", "Q(X):-Diamondminus[1,3]P(X)", "Q(X):-Boxminus[0,1]P(X)",
             "Q(X):-P(X),R(X)", "S(X):-Diamondminus[0,1]Q(X)", "S(X):-R(X)"]
RTEC_OLD = ("initiatedAt(open(D)=true, T) :- happensAt(opened(D), T).\n"
            "terminatedAt(open(D)=true, T) :- happensAt(closed(D), T).\n"
            "door(d1).\ndoor(d2).\ngrounding(open(D)=true) :- door(D).\n")
RTEC_NEW = RTEC_OLD + "terminatedAt(open(D)=true, T) :- happensAt(locked(D), T).\n"
LARS_RULES = ["q(X) :- p(X).", "q(X) :- p(X) [2].", "q(X) :- p(X) [2 #].", "q(X) :- p(X) always [1].",
              "q(X) :- p(X) [2], not r(X) [1].", "s(X) :- q(X), not r(X)."]
ARGS = st.sampled_from(["a", "b"])
RETRACT = st.booleans()


def _evaluator(dialect: str, text: str):
    row = lookup(dialect)
    return row.evaluator(row.parse([("prog", text)]), RunOptions(), lambda m: None)


def _read(dialect: str, text: str, lines: list[str]):
    row = lookup(dialect)
    program = row.parse([("prog", text)])
    out = []
    for n, line in enumerate(lines, 1):
        try:
            out += list(row.read(program, [line], f"in:{n}", "jsonl", "fail", lambda m: None))
        except InputError:
            raise
    return out


def _drive(evaluator, events, latest=None):
    """Push events as ``chronolog run`` does; the lines, and the latest time evaluated."""
    out: list[bytes] = []
    for ev in events:
        if latest is not None and ev.t > latest:
            out += evaluator.advance(latest).lines().splitlines()
        if latest is None or ev.t > latest:
            latest = ev.t
        evaluator.push(ev)
    if latest is not None:
        out += evaluator.advance(latest).lines().splitlines()
    return out, latest


def _switched(dialect: str, old: str, new: str, at, first: list[dict], second: list[dict]) -> list[dict]:
    """The answer lines of the stream evaluated in two halves with ``switch`` between them."""
    row = lookup(dialect)
    lines = [json.dumps(e) for e in first + second]
    events = _read(dialect, old, lines)
    head, tail = events[:len(first)], events[len(first):]
    running = _evaluator(dialect, old)
    out, latest = _drive(running, head)
    sources = (("new", new),)
    def causal(src):  # type: ignore[no-untyped-def]
        return row.causal(row.parse(list(src or (("old", old),))))

    running, restated = switch(running, _evaluator(dialect, new), sources, at, latest, causal, row.discrete)
    out += restated
    # a checkpoint and a restart in the middle of it all: the versions restore from their state
    running = restore(json.loads(json.dumps(running.export_state())),
                      lambda src: _evaluator(dialect, old if src is None else src[0][1]))
    more, _ = _drive(running, tail, latest)
    out += more + running.finish(None).lines().splitlines()
    return [json.loads(x) for x in out]


def _upgrade_run(tmp: Path, capsys, dialect: str, old: str, new: str, at, events: list[dict]) -> list[dict]:
    suffix = {"lars": ".lars", "mtl": ".mtl", "rtec": ".prolog"}[dialect]
    (tmp / f"old{suffix}").write_text(old)
    (tmp / f"new{suffix}").write_text(new)
    (tmp / "in.jsonl").write_text("".join(json.dumps(e) + "\n" for e in events))
    capsys.readouterr()
    when = str(at) if not isinstance(at, Fraction) else f"{at.numerator}/{at.denominator}"
    assert main(["run", str(tmp / f"old{suffix}"), "--input", str(tmp / "in.jsonl"),
                 "--upgrade", f"{when}={tmp / f'new{suffix}'}"]) == 0
    return [json.loads(x) for x in capsys.readouterr().out.splitlines()]


MTL_EVENT = st.builds(lambda lo, n, pred, arg, retract: {"interval": f"[{lo},{lo + n}]", "pred": pred, "args": [arg],
                                                          **({"op": "retract"} if retract else {})},
                      st.integers(0, 8), st.integers(0, 2), st.sampled_from(["P", "R"]), ARGS, RETRACT)


@SETTINGS
@given(old=st.lists(st.sampled_from(MTL_RULES), min_size=1, max_size=3, unique=True),
       new=st.lists(st.sampled_from(MTL_RULES), min_size=1, max_size=3, unique=True),
       events=st.lists(MTL_EVENT, min_size=2, max_size=8), cut=st.integers(1, 7), at=st.integers(0, 24))
def test_mtl_switch_while_running_means_run_upgrade(tmp_path_factory, capsys, old, new, events, cut, at):
    old_text, new_text = "\n".join(old) + "\n", "\n".join(new) + "\n"
    stream = [{"t": 0}, *events, {"t": 12}]
    cut = min(cut, len(stream) - 1)
    when = Fraction(at, 2)
    got = _switched("mtl", old_text, new_text, when, stream[:cut], stream[cut:])
    want = _upgrade_run(tmp_path_factory.mktemp("mtl"), capsys, "mtl", old_text, new_text, when, stream)
    assert sampled_meaning(got, 12) == sampled_meaning(want, 12)


RTEC_EVENT = st.builds(lambda t, pred, arg, retract: {"t": t, "pred": pred, "args": [arg],
                                                       **({"op": "retract"} if retract else {})},
                       st.integers(0, 20), st.sampled_from(["opened", "closed", "locked"]),
                       st.sampled_from(["d1", "d2"]), RETRACT)


@SETTINGS
@given(flip=st.booleans(), events=st.lists(RTEC_EVENT, min_size=2, max_size=10), cut=st.integers(1, 9),
       at=st.integers(0, 22))
def test_rtec_switch_while_running_means_run_upgrade(tmp_path_factory, capsys, flip, events, cut, at):
    old_text, new_text = (RTEC_NEW, RTEC_OLD) if flip else (RTEC_OLD, RTEC_NEW)
    stream = [*events, {"t": 22}]
    cut = min(cut, len(stream) - 1)
    got = _switched("rtec", old_text, new_text, at, stream[:cut], stream[cut:])
    want = _upgrade_run(tmp_path_factory.mktemp("rtec"), capsys, "rtec", old_text, new_text, at, stream)
    assert meaning(got, (0, 22), running=True) == meaning(want, (0, 22))


LARS_EVENT = st.builds(lambda t, pred, arg, retract: {"t": t, "pred": pred, "args": [arg],
                                                       **({"op": "retract"} if retract else {})},
                       st.integers(0, 10), st.sampled_from(["p", "r"]), ARGS, RETRACT)


@SETTINGS
@given(old=st.lists(st.sampled_from(LARS_RULES), min_size=1, max_size=3, unique=True),
       new=st.lists(st.sampled_from(LARS_RULES), min_size=1, max_size=3, unique=True),
       events=st.lists(LARS_EVENT, min_size=2, max_size=12), cut=st.integers(1, 11), at=st.integers(0, 11))
# q(a) given again by the new program's first line, then closed and given again: only that
# first line may cancel the old one (cancelling the last gave q(a) twice at 2 for a moment)
@example(old=["q(X) :- p(X) [2]."], new=["q(X) :- p(X)."], at=2, cut=3,
         events=[{"t": 0, "pred": "p", "args": ["a"]}, {"t": 2, "pred": "p", "args": ["a"]}])
def test_lars_switch_while_running_means_run_upgrade(tmp_path_factory, capsys, old, new, events, cut, at):
    old_text, new_text = "\n".join(old) + "\n", "\n".join(new) + "\n"
    stream = [{"t": 0}, *events, {"t": 10}]
    cut = min(cut, len(stream) - 1)
    got = _switched("lars", old_text, new_text, at, stream[:cut], stream[cut:])
    want = _upgrade_run(tmp_path_factory.mktemp("lars"), capsys, "lars", old_text, new_text, at, stream)
    assert meaning(got, (0, 10), running=True) == meaning(want, (0, 10))


@pytest.mark.parametrize("answers", ["changelog", "points"])
def test_a_lars_restatement_writes_only_the_points_where_the_versions_differ(answers):
    """q(a) from p(a) at 1, 4, 6, upgraded at 5 to a window [2] after the stream reached 9: the
    old program wrote q(a) at 6 from 5 on, the new one holds it at 5..8, so the restatement is
    q(a) at 5 and at 7..8 — not every line of both versions from 5 on taken back and given
    again — and the stream then means run --upgrade's answers."""
    old, new = "q(X) :- p(X).\n", "q(X) :- p(X) [2].\n"
    stream = [{"t": 0}, *({"t": t, "pred": "p", "args": ["a"]} for t in (1, 4, 6)), {"t": 9}]
    row = lookup("lars")
    options = RunOptions(answers=answers)
    running = row.evaluator(row.parse([("prog", old)]), options, lambda m: None)
    written, latest = _drive(running, _read("lars", old, [json.dumps(e) for e in stream]))
    running, restated = switch(running, row.evaluator(row.parse([("new", new)]), options, lambda m: None),
                               (("new", new),), 5, latest, lambda src: True, True)
    got = [json.loads(x) for x in restated]
    assert got == ([{"t": 5, "pred": "q", "args": ["a"]}, {"interval": "[7,8]", "pred": "q", "args": ["a"]}]
                   if answers == "changelog" else [{"t": t, "pred": "q", "args": ["a"]} for t in (5, 7, 8)])
    lines = [json.loads(x) for x in written] + got + [json.loads(x) for x in running.finish(None).lines().splitlines()]
    assert meaning(lines, (0, 9), running=True) == {("q", ("a",), t) for t in (1, 4, 5, 6, 7, 8)}


def test_retained_input_evaluated_again_gives_the_same_answers():
    """A fresh evaluator fed ``retained()`` and advanced as far means what the original does."""
    for dialect, text, lines in [
        ("mtl", "Q(X):-Diamondminus[0,2]P(X)\n", ['{"t": 0}', '{"interval": "[1,3]", "pred": "P", "args": ["a"]}',
                                                   '{"interval": "[1,3]", "pred": "P", "args": ["a"]}',
                                                   '{"interval": "[1,3]", "pred": "P", "args": ["a"], "op": "retract"}',
                                                   '{"t": 9}']),
        ("rtec", RTEC_NEW, ['{"t": 2, "pred": "opened", "args": ["d1"]}', '{"t": 5, "pred": "locked", "args": ["d1"]}',
                            '{"t": 1, "pred": "opened", "args": ["d2"]}', '{"t": 9}']),
        ("lars", "q(X) :- p(X) [2 #].\n", ['{"t": 0, "pred": "p", "args": ["a"]}', '{"t": 0, "pred": "p", "args": ["b"]}',
                                           '{"t": 3, "pred": "p", "args": ["c"]}', '{"t": 6}']),
    ]:
        original = _evaluator(dialect, text)
        first, latest = _drive(original, _read(dialect, text, lines))
        complete, events = original.retained()
        assert complete is None
        a = [json.loads(x) for x in first + original.finish(None).lines().splitlines()]
        fresh = _evaluator(dialect, text)
        b_lines, _ = _drive(fresh, events)
        b = [json.loads(x) for x in b_lines + fresh.finish(None).lines().splitlines()]
        assert sampled_meaning(a, 9), dialect
        assert sampled_meaning(a, 9) == sampled_meaning(b, 9), dialect


def test_version_id_names_the_texts_not_the_files():
    assert version_id((("a.mtl", "Q(X):-P(X)\n"),)) == version_id((("b.mtl", "Q(X):-P(X)\n"),))
    assert version_id((("a.mtl", "Q(X):-P(X)\n"),)) != version_id((("a.mtl", "Q(X):-R(X)\n"),))
    assert len(version_id(())) == 12


def test_switch_refuses_a_time_not_after_the_latest_upgrade():
    make = lambda src: _evaluator("lars", "q(X) :- p(X).\n")  # noqa: E731
    running, _ = switch(make(None), make(None), (("n", "q(X) :- p(X).\n"),), 5, None, lambda src: True, True)
    assert isinstance(running, Versions)
    try:
        switch(running, make(None), (("n", "q(X) :- p(X).\n"),), 5, None, lambda src: True, True)
    except Exception as exc:  # noqa: BLE001
        assert "not after the latest upgrade's (5)" in str(exc)
    else:
        raise AssertionError("switch took a time that is not after the latest upgrade")


def test_version_answers_read_as_changes_however_often_they_are_read() -> None:
    """``VersionAnswers`` decodes each line once: reading it again (``len``, a second pass) gives
    the same changes, and lines added after a read are read too."""
    batch = VersionAnswers()
    batch.extend([b'{"t":3,"pred":"p","args":[1]}', None, b'{"interval":"[2,5)","pred":"q","args":[],"diff":-1}',
                  b'{"no_answer_set":true,"t":4}'])
    first = list(batch)
    assert first == [("p", (1,), Span.point(3), 1), ("q", (), Span(2, 5, True, False), -1)]
    assert len(batch) == 2 and list(batch) == first and batch.line_count == 3 and batch.corrections == 1
    batch.extend([b'{"interval":"[6,inf)","pred":"r","args":["a"]}'])
    assert list(batch) == [*first, ("r", ("a",), Span(6, None, True, False), 1)] and len(batch) == 3


@pytest.mark.parametrize(("old", "new", "first"), [
    # reach 3: the state at T - 1 (the last point skipped) made exact from T - 1 - 3 on
    ("q(X) :- p(X) [2].\n", "q(X) :- p(X) [3].\ns(X) :- q(X), not r(X) [1].\n", 40 - 1 - 3),
    # a tuple window: the state at T - 1 = 39 holds the last 2 facts before it (p at 37, 38; r at 39)
    ("q(X) :- p(X) [2].\n", "q(X) :- p(X) [2 #].\n", 37),
    ("q(X) :- p(X) [2].\n", "q(X) :- p(X) at T, T > 1.\n", 0),  # a windowless at: unbounded, from the start
])
def test_lars_switch_evaluates_the_new_version_from_t_minus_its_reach(tmp_path_factory, capsys, monkeypatch,
                                                                    old, new, first):
    """The new version (and the running one's answers taken back) evaluated only from T minus
    the new program's reach, not over the whole retained history: the evaluations made during
    the switch start there, and the answers still mean ``run --upgrade``'s."""
    stream = [{"t": 0}] + [{"t": t, "pred": "p" if t % 3 else "r", "args": [f"k{t % 4}"]} for t in range(1, 60)]
    stream.append({"t": 70})
    stepped: list[int] = []
    real = Engine.step

    def step(self, t, *args):  # type: ignore[no-untyped-def]
        stepped.append(t)
        return real(self, t, *args)

    row = lookup("lars")
    events = _read("lars", old, [json.dumps(e) for e in stream])
    made = lambda text: LarsEvaluator(lars_plan(row.parse([("prog", text)])))  # noqa: E731 (as a fleet's: not eager)
    running = made(old)
    out, latest = _drive(running, events[:-1])
    assert latest == 59
    monkeypatch.setattr(Engine, "step", step)
    running, restated = switch(running, made(new), (("new", new),), 40, latest,
                               lambda src: row.causal(row.parse(list(src or (("old", old),)))), row.discrete)
    monkeypatch.undo()
    assert min(stepped) == first
    assert sorted(set(stepped)) == list(range(first, 60))
    more, _ = _drive(running, events[-1:], latest)
    got = [json.loads(x) for x in out + restated + more + running.finish(None).lines().splitlines()]
    want = _upgrade_run(tmp_path_factory.mktemp("lars"), capsys, "lars", old, new, 40, stream)
    assert meaning(got, (0, 70), running=True) == meaning(want, (0, 70))
