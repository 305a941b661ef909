"""Program upgrades under a finite retention: events too late for the stream are ignored by
every version (as a plain run of each program ignores them), and an old version whose part
of time lies before what the retention still takes is dropped (``Versions._drop_unreachable``).

The expectation is independent of ``chronolog/versions.py``: two plain ``chronolog run``s with
the same ``--retention``, their meanings cut at T by hand (tests/runtime/test_upgrade.py does
the same without a retention).
"""

from __future__ import annotations

import json
from pathlib import Path

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from meaning import meaning, sampled_meaning

from chronolog.cli.main import main
from chronolog.core.events import Event
from chronolog.dialects.registry import RunOptions, lookup
from chronolog.versions import restore, versions_of

SETTINGS = settings(max_examples=60, deadline=None, suppress_health_check=list(HealthCheck))
RTEC_OLD = ("initiatedAt(open(D)=true, T) :- happensAt(opened(D), T).\n"
            "terminatedAt(open(D)=true, T) :- happensAt(closed(D), T).\n"
            "door(d1).\ndoor(d2).\ngrounding(open(D)=true) :- door(D).\n")
RTEC_NEW = RTEC_OLD + "terminatedAt(open(D)=true, T) :- happensAt(locked(D), T).\n"
LARS_RULES = ["q(X) :- p(X).", "q(X) :- p(X) [2].", "q(X) :- p(X) always [1].", "q(X) :- p(X) [2], not r(X) [1].",
              "q(X) :- r(X) [3].", "s(X) :- q(X), not r(X)."]
MTL_RULES = ["Q(X):-Diamondminus[0,2]P(X)", "Q(X):-Boxminus[0,1]P(X)", "Q(X):-P(X),R(X)", "S(X):-R(X)"]


def _run(tmp: Path, capsys, suffix: str, text: str, events: list[dict], retention: int, *more: str) -> list[dict]:
    prog = tmp / f"p{abs(hash(text))}{suffix}"
    prog.write_text(text)
    (tmp / "in.jsonl").write_text("".join(json.dumps(e) + "\n" for e in events))
    capsys.readouterr()
    code = main(["run", str(prog), "--input", str(tmp / "in.jsonl"), "--retention", str(retention), *more])
    got = capsys.readouterr()
    assert code == 0, got.err
    return [json.loads(x) for x in got.out.splitlines()]


def _check(tmp: Path, capsys, suffix: str, old: str, new: str, events: list[dict], retention: int, at: int,
           span: tuple[int, int]) -> None:
    plain = {name: meaning(_run(tmp, capsys, suffix, text, events, retention), span)
             for name, text in (("old", old), ("new", new))}
    expected = {a for a in plain["old"] if a[2] < at} | {a for a in plain["new"] if a[2] >= at}
    newfile = tmp / f"new{suffix}"
    newfile.write_text(new)
    got = _run(tmp, capsys, suffix, old, events, retention, "--upgrade", f"{at}={newfile}")
    assert meaning(got, span, running=True) == expected


EVENT = st.builds(lambda t, pred, arg, retract: {"t": t, "pred": pred, "args": [arg],
                                                 **({"op": "retract"} if retract else {})},
                  st.integers(0, 16), st.sampled_from(["p", "r"]), st.sampled_from(["a", "b"]), st.booleans())


@SETTINGS
@given(old=st.lists(st.sampled_from(LARS_RULES), min_size=1, max_size=3, unique=True),
       new=st.lists(st.sampled_from(LARS_RULES), min_size=1, max_size=3, unique=True),
       events=st.lists(EVENT, min_size=1, max_size=14), at=st.integers(0, 16), retention=st.integers(1, 5))
def test_lars_upgrade_with_a_retention_is_the_splice_of_two_plain_runs(tmp_path_factory, capsys, old, new, events,
                                                                        at, retention):
    events = [{"t": 0}, *events, {"t": 16}]
    _check(tmp_path_factory.mktemp("lars"), capsys, ".lars", "\n".join(old) + "\n", "\n".join(new) + "\n", events,
           retention, at, (0, 16))


RTEC_EVENT = st.builds(lambda t, pred, arg: {"t": t, "pred": pred, "args": [arg]}, st.integers(0, 20),
                       st.sampled_from(["opened", "closed", "locked"]), st.sampled_from(["d1", "d2"]))


@SETTINGS
@given(flip=st.booleans(), events=st.lists(RTEC_EVENT, min_size=1, max_size=10), at=st.integers(0, 22),
       retention=st.integers(2, 8))
def test_rtec_upgrade_with_a_retention_is_the_splice_of_two_plain_runs(tmp_path_factory, capsys, flip, events, at,
                                                                        retention):
    old, new = (RTEC_NEW, RTEC_OLD) if flip else (RTEC_OLD, RTEC_NEW)
    _check(tmp_path_factory.mktemp("rtec"), capsys, ".prolog", old, new, [*events, {"t": 22}], retention, at, (0, 22))


MTL_EVENT = st.builds(lambda lo, n, pred, arg: {"interval": f"[{lo},{lo + n}]", "pred": pred, "args": [arg]},
                      st.integers(0, 14), st.integers(0, 2), st.sampled_from(["P", "R"]), st.sampled_from(["a", "b"]))


@SETTINGS
@given(old=st.lists(st.sampled_from(MTL_RULES), min_size=1, max_size=2, unique=True),
       new=st.lists(st.sampled_from(MTL_RULES), min_size=1, max_size=2, unique=True),
       events=st.lists(MTL_EVENT, min_size=1, max_size=8), at=st.integers(0, 16), retention=st.integers(1, 5))
def test_mtl_upgrade_with_a_retention_is_the_splice_of_two_plain_runs(tmp_path_factory, capsys, old, new, events, at,
                                                                       retention):
    tmp = tmp_path_factory.mktemp("mtl")
    stream = [{"t": 0}, *events, {"t": 16}]
    texts = {"old": "\n".join(old) + "\n", "new": "\n".join(new) + "\n"}
    plain = {name: sampled_meaning(_run(tmp, capsys, ".mtl", text, stream, retention), 16)
             for name, text in texts.items()}
    expected = {a for a in plain["old"] if a[2] < at} | {a for a in plain["new"] if a[2] >= at}
    (tmp / "new.mtl").write_text(texts["new"])
    got = _run(tmp, capsys, ".mtl", texts["old"], stream, retention, "--upgrade", f"{at}={tmp / 'new.mtl'}")
    assert sampled_meaning(got, 16) == expected


def _evaluator(dialect: str, text: str, retention: int | None):
    row = lookup(dialect)
    return row.evaluator(row.parse([("prog", text)]), RunOptions(retention=retention), lambda m: None)


def test_an_old_version_is_dropped_once_the_retention_passes_its_end() -> None:
    """q(X) :- p(X) [2] until 5, then q(X) :- p(X): with a retention of 3 a late p(b) at 3
    (arriving at 6, horizon 3) is still the old program's; once evaluated to 9 (horizon 6 >= 5)
    no event can reach the old version: it is dropped, and a p(c) at 4 is too late for all."""
    row = lookup("lars")
    versions = versions_of([_evaluator("lars", "q(X) :- p(X) [2].\n", 3), _evaluator("lars", "q(X) :- p(X).\n", 3)],
                           [5], [True, True], row.discrete)
    lines: list[bytes] = []

    def step(*events: Event) -> None:
        for ev in events:
            versions.push(ev)
        lines.extend(versions.advance(max(ev.t for ev in events)).lines().splitlines())

    step(Event(0), Event(1, "p", ("a",)))
    step(Event(6, "p", ("a",)))
    step(Event(3, "p", ("b",)))  # late, within the retention: the old program's [2] from 3 to 4
    assert len(versions.versions) == 2
    step(Event(9))
    assert len(versions.versions) == 1 and versions.dropped == 1
    again = restore(json.loads(json.dumps(versions.export_state())),
                    lambda src: _evaluator("lars", src[0][1] if src else "q(X) :- p(X) [2].\n", 3))
    assert len(again.versions) == 1  # nor is it in the stored state
    versions.push(Event(4, "p", ("c",)))  # too late (horizon 6): ignored, counted
    lines.extend(versions.finish(None).lines().splitlines())
    assert versions.too_late == 1
    want = {("q", ("a",), t) for t in (1, 2, 3)} | {("q", ("b",), 3), ("q", ("b",), 4), ("q", ("a",), 6)}
    assert meaning([json.loads(x) for x in lines], (0, 9), running=True) == want


def test_nothing_is_dropped_with_an_unlimited_retention() -> None:
    for dialect, old, new in (("lars", "q(X) :- p(X) [2].\n", "q(X) :- p(X).\n"),
                              ("rtec", RTEC_OLD, RTEC_NEW), ("mtl", "Q(X):-P(X)\n", "Q(X):-Diamondminus[0,1]P(X)\n")):
        row = lookup(dialect)
        versions = versions_of([_evaluator(dialect, old, None), _evaluator(dialect, new, None)], [2],
                               [row.causal(row.parse([("p", text)])) for text in (old, new)], row.discrete)
        versions.push(Event(0))
        versions.push(Event(100))
        versions.advance(100)
        assert len(versions.versions) == 2, dialect
