"""``chronolog explain --changes ATOM@T [--upgrade ...]`` for random programs of each dialect
(random LARS programs, tests/strategies.py; DatalogMTL and RTEC from the chained-upgrade pools of
runtime/test_upgrade_chained.py), chained upgrades, late events and retractions: exactly the lines
``run`` (with the same options) wrote that cover the atom at T, in order, a correction always
with the late input that caused it."""

from __future__ import annotations

import json
from fractions import Fraction
from pathlib import Path

from hypothesis import HealthCheck, event, given, note, settings
from hypothesis import strategies as st
from meaning import covers
from strategies import programs
from test_upgrade_chained import MTL_POOL, RTEC_POOL, RTEC_TAIL, mtl_streams, rtec_streams
from test_upgrade_lars_random import late_streams

from chronolog.cli.main import main
from chronolog.evaluator import atom_text

SETTINGS = settings(max_examples=30, deadline=None, suppress_health_check=list(HealthCheck))


def _check(capsys, tmp: Path, files: list[str], events: list[dict], starts: list, pick: int,  # noqa: ANN001
           at: Fraction) -> None:
    (tmp / "in.jsonl").write_text("".join(json.dumps(e) + "\n" for e in events))
    stream = str(tmp / "in.jsonl")
    options = [x for s, f in zip(starts, files[1:], strict=False) for x in ("--upgrade", f"{s}={f}")]
    capsys.readouterr()
    assert main(["run", files[0], "--input", stream, *options]) == 0
    written = [json.loads(x) for x in capsys.readouterr().out.splitlines()]
    atoms = sorted({(w["pred"], tuple(w["args"])) for w in written if "pred" in w}, key=repr)
    if not atoms:
        return
    pred, args = atoms[pick % len(atoms)]
    if pick % 2:  # mostly a time one of its lines starts at (corrections included)
        mine = [w for w in written if w.get("pred") == pred and tuple(w.get("args", ())) == args]
        line = mine[pick // 2 % len(mine)]
        at = Fraction(line["t"]) if "t" in line else Fraction(line["interval"][1:-1].split(",")[0]) + (
            Fraction(1, 4) if line["interval"][0] == "(" else 0)
    name = atom_text(pred, args)  # (RTEC: the pools' fluents are all =true, which a query may leave out)
    query = f"{name}@{at.numerator if at.denominator == 1 else f'{at.numerator}/{at.denominator}'}"
    note(f"{query} with {options}; written {written}")
    capsys.readouterr()
    code = main(["explain", files[0], "--input", stream, *options, "--changes", query, "--as", "json"])
    got = capsys.readouterr()
    assert code == 0, got.err
    changes = json.loads(got.out)["changes"]
    want = [(n, w) for n, w in enumerate(written, 1)
            if w.get("pred") == pred and tuple(w.get("args", ())) == args and covers(w, at)]
    assert [(c["line"], c["answer"]) for c in changes] == want
    event(f"{min(len(want), 3)} lines, {sorted({c['kind'] for c in changes})}")
    for c in changes:
        assert c["causes"] or c["kind"] != "correction", c


@SETTINGS
@given(versions=st.lists(programs(stratified=True), min_size=1, max_size=3), events=late_streams(),
       times=st.lists(st.integers(1, 7), min_size=2, max_size=2, unique=True), pick=st.integers(0, 99),
       t=st.integers(0, 7))
def test_lars(tmp_path_factory, capsys, versions, events, times, pick, t):
    tmp = tmp_path_factory.mktemp("lars")
    files = []
    for i, p in enumerate(versions):
        (tmp / f"p{i}.lars").write_text(str(p))
        files.append(str(tmp / f"p{i}.lars"))
    _check(capsys, tmp, files, events, sorted(times), pick, Fraction(t))


@SETTINGS
@given(versions=st.lists(st.lists(st.sampled_from(MTL_POOL), min_size=1, max_size=3, unique=True), min_size=1,
                         max_size=3),
       events=mtl_streams(), halves=st.lists(st.integers(1, 22), min_size=2, max_size=2, unique=True),
       pick=st.integers(0, 99), q=st.integers(0, 48))
def test_mtl(tmp_path_factory, capsys, versions, events, halves, pick, q):
    tmp = tmp_path_factory.mktemp("mtl")
    files = []
    for i, rules in enumerate(versions):
        (tmp / f"p{i}.mtl").write_text("\n".join(rules) + "\n")
        files.append(str(tmp / f"p{i}.mtl"))
    starts = [f"{h}/2" for h in sorted(halves)]
    _check(capsys, tmp, files, events, starts, pick, Fraction(q, 4))


@SETTINGS
@given(versions=st.lists(st.sets(st.sampled_from(sorted(RTEC_POOL)), min_size=1), min_size=1, max_size=3),
       events=rtec_streams(), times=st.lists(st.integers(0, 22), min_size=2, max_size=2, unique=True),
       pick=st.integers(0, 99), t=st.integers(0, 22))
def test_rtec(tmp_path_factory, capsys, versions, events, times, pick, t):
    tmp = tmp_path_factory.mktemp("rtec")
    files = []
    for i, groups in enumerate(versions):
        (tmp / f"p{i}.prolog").write_text("".join(RTEC_POOL[g] for g in sorted(groups)) + RTEC_TAIL)
        files.append(str(tmp / f"p{i}.prolog"))
    _check(capsys, tmp, files, events, sorted(times), pick, Fraction(t))
