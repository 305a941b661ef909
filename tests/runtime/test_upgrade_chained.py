"""``chronolog run --upgrade`` chained over two or three versions for DatalogMTL and the Event
Calculus, from wide rule pools (past and future operators, Since and Until, negation, Box heads;
RTEC inertia with several terminations, derived events, statically determined fluents with
interval operations), on streams with late events and retractions on both sides of each T: the
splice of plain runs of each version, each from its T to the next (meanings compared per point,
tests/meaning.py), whether or not a version is causal."""

from __future__ import annotations

import json
from fractions import Fraction

from hypothesis import HealthCheck, given, note, settings
from hypothesis import strategies as st
from meaning import meaning, sampled_meaning

from chronolog.cli.main import main

SETTINGS = settings(max_examples=40, deadline=None, suppress_health_check=list(HealthCheck))


def _run(capsys, program: str, stream: str, *options: str) -> list[dict]:  # noqa: ANN001
    capsys.readouterr()
    code = main(["run", program, "--input", stream, *options])
    got = capsys.readouterr()
    assert code == 0, got.err
    return [json.loads(x) for x in got.out.splitlines()]


def _spliced(plain: list[set], starts: list) -> set:
    """Version i's answers at times in [starts[i-1], starts[i]) (the first from the beginning)."""
    bounds = [None, *starts, None]
    return {a for i, answers in enumerate(plain) for a in answers
            if (bounds[i] is None or a[2] >= bounds[i]) and (bounds[i + 1] is None or a[2] < bounds[i + 1])}


def _arrivals(draw, events: list[dict]) -> list[dict]:
    """The events in a drawn arrival order, some retracted after they arrived."""
    arrived = [events[i] for i in draw(st.permutations(range(len(events))))]
    for gone in draw(st.lists(st.sampled_from(events), max_size=2)) if events else []:
        arrived.insert(draw(st.integers(arrived.index(gone) + 1, len(arrived))), {**gone, "op": "retract"})
    return arrived


MTL_POOL = ["Q(X):-Diamondminus[0,2]P(X)", "Q(X):-Boxminus[0,1]P(X)", "Q(X):-P(X),R(X)", "S(X):-Diamondminus[0,1]Q(X)",
            "S(X):-R(X)", "S(X):-Q(X), not R(X)", "Q(X):-P(X) Since[0,2] R(X)", "S(X):-Q(X) Until[1,2] R(X)",
            "Q(X):-Diamondplus[0,1]P(X)", "Boxplus[0,1]S(X):-R(X)", "Boxminus[1,2]Q(X):-R(X)",
            "S(X):-Boxplus[0,1]Q(X)", "Q(X):-Diamondminus(0,1)R(X)"]


@st.composite
def mtl_streams(draw) -> list[dict]:
    facts = draw(st.lists(st.builds(lambda lo, n, pred, arg: {"interval": f"[{lo},{lo + n}]", "pred": pred, "args": [arg]},
                                    st.integers(0, 9), st.integers(0, 2), st.sampled_from(["P", "R"]),
                                    st.sampled_from(["a", "b"])), min_size=1, max_size=7))
    return [{"t": 0}, *_arrivals(draw, facts), {"t": 12}]


@SETTINGS
@given(versions=st.lists(st.lists(st.sampled_from(MTL_POOL), min_size=1, max_size=3, unique=True), min_size=2,
                         max_size=3),
       events=mtl_streams(), halves=st.lists(st.integers(1, 22), min_size=2, max_size=2, unique=True))
def test_mtl_chained_upgrades_are_the_splice(tmp_path_factory, capsys, versions, events, halves):
    tmp = tmp_path_factory.mktemp("mtl")
    (tmp / "in.jsonl").write_text("".join(json.dumps(e) + "\n" for e in events))
    stream = str(tmp / "in.jsonl")
    files = []
    for i, rules in enumerate(versions):
        (tmp / f"p{i}.mtl").write_text("\n".join(rules) + "\n")
        files.append(str(tmp / f"p{i}.mtl"))
    starts = [Fraction(h, 2) for h in sorted(halves)][: len(versions) - 1]
    note(f"versions {versions} from {[str(s) for s in starts]}; events {events}")
    plain = [sampled_meaning(_run(capsys, f, stream), 12) for f in files]
    options = [x for s, f in zip(starts, files[1:], strict=True) for x in ("--upgrade", f"{s}={f}")]
    assert sampled_meaning(_run(capsys, files[0], stream, *options), 12) == _spliced(plain, starts)


RTEC_POOL = {
    "open": ("initiatedAt(open(D)=true, T) :- happensAt(opened(D), T).\n"
             "terminatedAt(open(D)=true, T) :- happensAt(closed(D), T).\n"),
    "locked": "terminatedAt(open(D)=true, T) :- happensAt(locked(D), T).\n",
    "shut": ("initiatedAt(shut(D)=true, T) :- happensAt(closed(D), T).\n"
             "terminatedAt(shut(D)=true, T) :- happensAt(opened(D), T).\n"),
    "ajar": "initiatedAt(open(D)=true, T) :- happensAt(locked(D), T), \\+ holdsAt(shut(D)=true, T).\n",
    "slam": ("happensAt(slam(D), T) :- happensAt(closed(D), T), holdsAt(open(D)=true, T).\n"
             "initiatedAt(slammed(D)=true, T) :- happensAt(slam(D), T).\n"
             "terminatedAt(slammed(D)=true, T) :- happensAt(opened(D), T).\n"),
    "meet": "holdsFor(meet(D)=true, I) :- holdsFor(open(D)=true, I1), holdsFor(shut(D)=true, I2), intersect_all([I1, I2], I).\n",
    "gap": "holdsFor(gap(D)=true, I) :- holdsFor(open(D)=true, I1), complement_all([I1], I).\n",
    "both": "holdsFor(either(D)=true, I) :- holdsFor(open(D)=true, I1), holdsFor(shut(D)=true, I2), union_all([I1, I2], I).\n",
    "never": ("holdsFor(quiet(D)=true, I) :- holdsFor(open(D)=true, I1), holdsFor(shut(D)=true, I2), "
              "relative_complement_all(I1, [I2], I).\n"),
}
RTEC_TAIL = ("door(d1).\ndoor(d2).\ngrounding(open(D)=true) :- door(D).\ngrounding(shut(D)=true) :- door(D).\n"
             "grounding(either(D)=true) :- door(D).\ngrounding(quiet(D)=true) :- door(D).\n"
             "grounding(meet(D)=true) :- door(D).\ngrounding(gap(D)=true) :- door(D).\n"
             "grounding(slammed(D)=true) :- door(D).\n")


@st.composite
def rtec_streams(draw) -> list[dict]:
    events = draw(st.lists(st.builds(lambda t, pred, arg: {"t": t, "pred": pred, "args": [arg]}, st.integers(0, 20),
                                     st.sampled_from(["opened", "closed", "locked"]), st.sampled_from(["d1", "d2"])),
                           min_size=1, max_size=10))
    return [*_arrivals(draw, events), {"t": 22}]


@SETTINGS
@given(versions=st.lists(st.sets(st.sampled_from(sorted(RTEC_POOL)), min_size=1), min_size=2, max_size=3),
       events=rtec_streams(), times=st.lists(st.integers(0, 22), min_size=2, max_size=2, unique=True))
def test_rtec_chained_upgrades_are_the_splice(tmp_path_factory, capsys, versions, events, times):
    tmp = tmp_path_factory.mktemp("rtec")
    (tmp / "in.jsonl").write_text("".join(json.dumps(e) + "\n" for e in events))
    stream = str(tmp / "in.jsonl")
    files = []
    for i, groups in enumerate(versions):
        (tmp / f"p{i}.prolog").write_text("".join(RTEC_POOL[g] for g in sorted(groups)) + RTEC_TAIL)
        files.append(str(tmp / f"p{i}.prolog"))
    starts = sorted(times)[: len(versions) - 1]
    note(f"versions {[sorted(v) for v in versions]} from {starts}; events {events}")
    plain = [meaning(_run(capsys, f, stream), (0, 22)) for f in files]
    options = [x for s, f in zip(starts, files[1:], strict=True) for x in ("--upgrade", f"{s}={f}")]
    assert meaning(_run(capsys, files[0], stream, *options), (0, 22), running=True) == _spliced(plain, starts)


def test_the_pools_parse(tmp_path, capsys):
    """Every pool program runs (a typo in a pool would make the properties vacuous)."""
    (tmp_path / "in.jsonl").write_text('{"t":0}\n{"t":3,"pred":"closed","args":["d1"]}\n{"t":5}\n')
    (tmp_path / "all.prolog").write_text("".join(RTEC_POOL.values()) + RTEC_TAIL)
    (tmp_path / "all.mtl").write_text("\n".join(MTL_POOL) + "\n")
    assert _run(capsys, str(tmp_path / "all.prolog"), str(tmp_path / "in.jsonl"))
    _run(capsys, str(tmp_path / "all.mtl"), str(tmp_path / "in.jsonl"))  # (exit 0: _run checks it)
