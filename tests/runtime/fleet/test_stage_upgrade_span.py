"""An upgrade's changed strata evaluated from T − reach only (issue 37 item 4), at the fleet's
stage without a broker: the changed and added DatalogMTL predicates are evaluated from the
upgrade time minus their warm-up (``mtl.evaluator.warm_up``), RTEC's changed statically
determined fluents from a tick before T; the answer lines still mean what ``chronolog run
--upgrade`` prints, late events and retractions on both sides of T included."""

from __future__ import annotations

import json
from fractions import Fraction

import orjson
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from meaning import sampled_meaning
from test_stage_upgrade import RTEC_KEEP_OLD, RTEC_KEEP_TOP, _fleet, _records, _run_upgrade, _stage, mtl_pair_upgrades_as_run

from chronolog.cli.main import main
from chronolog.dialects.mtl import evaluator as mtl_evaluator
from chronolog.dialects.mtl.evaluator import warm_up
from chronolog.dialects.mtl.parser import parse_mtl
from chronolog.state.snapshots import roundtrip
from chronolog.versions import UpgradeRequest, version_id

# Q (kept) over a 3-wide window of P; S changed to read Q through a 2-wide window; U kept
MTL_OLD = "Q(X):-Diamondminus[0,3]P(X)\nS(X):-Q(X),R(X)\nU(X):-Boxminus[0,1]R(X)\n"
MTL_TOP = MTL_OLD.replace("S(X):-Q(X)", "S(X):-Diamondminus[0,2]Q(X)")
# both changed: Q's window widened (Q feeds S: Q needed from T - 2 - 4 on)
MTL_BOTH = MTL_TOP.replace("[0,3]", "[0,4]")
# S recursive through time: nothing bounds how far back it reads
MTL_RECURSIVE = MTL_OLD + "S(X):-Diamondminus[1,1]S(X)\n"
MTL_FIRST = [{"t": 0}, *({"interval": f"[{t},{t}]", "pred": "P", "args": [f"k{t % 3}"]} for t in range(0, 40, 2)),
             *({"interval": f"[{t},{t + 1}]", "pred": "R", "args": [f"k{t % 3}"]} for t in range(1, 40, 3)), {"t": 40}]
MTL_SECOND = [{"interval": "[27,27]", "pred": "P", "args": ["k2"]},  # late, inside the warm-up
              {"interval": "[31,31]", "pred": "P", "args": ["k1"]},  # late, after T
              {"interval": "[26,26]", "pred": "P", "args": ["k2"], "op": "retract"},  # retracted, before T
              {"interval": "[5,5]", "pred": "P", "args": ["k0"]},  # late, long before T
              {"interval": "[42,44]", "pred": "P", "args": ["k0"]}, {"interval": "[43,46]", "pred": "R", "args": ["k0"]},
              {"t": 50}]


def test_warm_up_is_the_longest_chain_through_the_changed_predicates():
    def of(text: str, changed: set[str]) -> Fraction | float:
        return warm_up(parse_mtl(text), {(p, 1) for p in changed})

    assert of(MTL_TOP, {"S"}) == 2  # S reads the kept Q 2 back
    assert of(MTL_BOTH, {"Q", "S"}) == 6  # Q exact from T - 2 (read by S) needs P 4 before that
    assert of(MTL_BOTH, {"Q"}) == 4
    assert of("Q(X):-Boxplus[0,1]P(X)\nBoxplus[0,2]S(X):-Q(X)\n", {"Q", "S"}) == 2  # a head's forward reach
    assert of(MTL_RECURSIVE, {"S"}) == float("inf")
    assert of("Q(X):-Diamondminus[0,1]S(X)\nS(X):-Q(X)\n", {"Q", "S"}) == float("inf")  # a cycle through time
    assert of("Q(X):-Diamondminus[0,inf)P(X)\n", {"Q"}) == float("inf")


def _upgraded(old: str, new: str, at: str):
    """A stage of ``old`` given ``MTL_FIRST`` and evaluated, then upgraded to ``new`` at ``at``."""
    stage = _stage("mtl", old)
    stage.process(_records(MTL_FIRST, 0), now=0.0)
    stage.process([], now=10_000.0)
    request = UpgradeRequest("r1", version_id((("new", new),)), "mtl", at, (("new", new),))
    leaving, lines = stage.process([(None, "chronolog.facts", 0, 100, request.encode())], now=0.0)
    said = [orjson.loads(o.payload) for o in leaving if o.topic == "control"]
    return stage, said, lines


@pytest.mark.parametrize(("new", "at", "start"), [(MTL_TOP, "30", 28), (MTL_BOTH, "30", 24),
                                                  (MTL_BOTH, "61/2", Fraction(49, 2)), (MTL_RECURSIVE, "30", 0)])
def test_mtl_changed_strata_are_evaluated_from_t_minus_their_warm_up(monkeypatch, new, at, start):
    """The changed predicates' first evaluation starts at T − warm-up (the input's start for a
    recursive one): nothing before it is derived, and it reads fewer facts than evaluating
    them from the start; the restatement is the same."""
    stage, said, lines = _upgraded(MTL_OLD, new, at)
    assert said[0]["kept"] == (["U/1"] if new is MTL_BOTH else ["Q/1", "U/1"]), said
    evaluator = stage.evaluator.newest.evaluator
    changed = ["S"] if new is not MTL_BOTH else ["Q", "S"]
    firsts = [ivs[0][0] for (p, _), ivs in evaluator.published.items() if p in changed]
    assert firsts
    assert evaluator.warmed_from == start
    assert min(firsts) >= start
    monkeypatch.setattr(mtl_evaluator, "_chains", lambda program, changed: None)  # (unbounded)
    whole, _, whole_lines = _upgraded(MTL_OLD, new, at)
    assert whole.evaluator.newest.evaluator.warmed_from == 0
    if start > 0:  # (kept: the facts the evaluation read)
        assert evaluator.kept < whole.evaluator.newest.evaluator.kept
    assert sorted(lines) == sorted(whole_lines)


@pytest.mark.parametrize("new", [MTL_TOP, MTL_BOTH, MTL_RECURSIVE])
@pytest.mark.parametrize("at", ["30", "61/2", "12", "39", "45"])  # (45: after what was evaluated)
@pytest.mark.parametrize("restart", [True, False])
def test_mtl_upgrade_from_t_minus_warm_up_means_run_upgrade(tmp_path, capsys, new, at, restart):
    got, said = _fleet("mtl", MTL_OLD, new, at, MTL_FIRST, MTL_SECOND, restart, settle=True)
    want = _run_upgrade(tmp_path, capsys, "mtl", MTL_OLD, new, at, MTL_FIRST + MTL_SECOND)
    assert sampled_meaning(got, 50) == sampled_meaning(want, 50)


_POOL = [
    "Q(X):-Diamondminus[0,3]P(X)",
    "Q(X):-Boxminus[0,2]P(X)",
    "S(X):-Diamondminus[0,2]Q(X)",
    "S(X):-Q(X),Diamondminus[1,4]R(X)",
    "U(X):-Diamondminus[0,2]S(X),R(X)",
    "U(X):-P(X)Since[0,3]R(X)",
    "V(X):-Boxminus[0,1]R(X),not Q(X)",
    "W(X):-Diamondminus[2,5]U(X)",
]
_EVENT = st.builds(lambda lo, n, pred, arg, retract: {"interval": f"[{lo},{lo + n}]", "pred": pred, "args": [arg],
                                                      **({"op": "retract"} if retract else {})},
                   st.integers(0, 30), st.integers(0, 3), st.sampled_from(["P", "R"]), st.sampled_from(["a", "b"]),
                   st.booleans())


@settings(max_examples=150, deadline=None, suppress_health_check=list(HealthCheck))
@given(shared=st.lists(st.sampled_from(_POOL), min_size=1, max_size=4, unique=True),
       old=st.lists(st.sampled_from(_POOL), max_size=2, unique=True),
       new=st.lists(st.sampled_from(_POOL), max_size=2, unique=True),
       first=st.lists(_EVENT, min_size=3, max_size=14), second=st.lists(_EVENT, max_size=6),
       upgrade=st.integers(10, 60), restart=st.booleans())
def test_mtl_random_pairs_over_a_long_history_upgrade_as_run_upgrade(tmp_path_factory, capsys, shared, old, new,
                                                                     first, second, upgrade, restart):
    """Random pairs with rules in common over a history several warm-ups long (chains of
    windows, Since, negation), late events and retractions before the warm-up, inside it and
    after T: the service's lines mean what ``run --upgrade`` prints."""
    mtl_pair_upgrades_as_run(tmp_path_factory, capsys, (shared, old, new), first, second, upgrade, restart, (30, 40))


# ---------------------------------------------------------------------------------------------
# RTEC: a changed statically determined fluent that combines lists point by point is derived
# from two ticks before T; simple fluents (inertia) and what they or events read from the start

RTEC_OLD, RTEC_TOP = RTEC_KEEP_OLD, RTEC_KEEP_TOP  # door alarms: open and armed below, alarm on top
# alarm changed and read by an added simple fluent: alarm from the start too
RTEC_READ = RTEC_TOP + ("initiatedAt(rang(D)=true, T) :- happensAt(start(alarm(D)=true), T).\n"
                        "grounding(rang(D)=true) :- door(D).\n")
# an added statically determined fluent over a kept one, with its own grounding clause: open and
# armed keep their state (the clause is the new fluent's content, not every stratum's)
RTEC_ADDED = RTEC_OLD + ("holdsFor(shut(D)=true, I) :- holdsFor(open(D)=true, A), complement_all([A], I).\n"
                         "grounding(shut(D)=true) :- door(D).\n")
# alarm without a grounding: neither program computes it (the new one reads it for loud, as
# RTEC reads it: [])
RTEC_UNSEEN = RTEC_TOP.replace("grounding(alarm(D)=true) :- door(D).\n", "")
RTEC_UNSEEN_READ = RTEC_UNSEEN + ("holdsFor(loud(D)=true, I) :- holdsFor(alarm(D)=true, A), union_all([A], I).\n"
                                  "grounding(loud(D)=true) :- door(D).\n")
_DOOR = ["opened", "closed", "arm", "disarm"]
RTEC_FIRST = [{"t": t, "pred": _DOOR[(t * 7 + i) % 4], "args": [f"d{i}"]} for t in range(1, 60, 3) for i in (1, 2)]
RTEC_FIRST.append({"t": 60})
RTEC_SECOND = [{"t": 37, "pred": "opened", "args": ["d1"]},  # late, just before T
               {"t": 41, "pred": "closed", "args": ["d1"]},  # late, after T
               {"t": 4, "pred": "opened", "args": ["d2"]},  # late, long before T
               {"t": 10, "pred": _DOOR[(10 * 7 + 1) % 4], "args": ["d1"], "op": "retract"},
               {"t": 66, "pred": "arm", "args": ["d2"]}, {"t": 70}]


def _rtec_upgraded(old: str, new: str, at: str):
    stage = _stage("rtec", old)
    stage.process(_records(RTEC_FIRST, 0), now=0.0)
    stage.process([], now=10_000.0)
    request = UpgradeRequest("r1", version_id((("new", new),)), "rtec", at, (("new", new),))
    leaving, lines = stage.process([(None, "chronolog.facts", 0, 100, request.encode())], now=0.0)
    return stage, [orjson.loads(o.payload) for o in leaving if o.topic == "control"], lines


def _first(evaluator, name: str) -> int:
    return min(ivs[0][0] for args in evaluator.store.fluents[(name, 1)].values() for ivs in args.values() if ivs)


@pytest.mark.parametrize(("new", "kept", "cut"), [(RTEC_TOP, ["armed/1", "armed/2", "open/1", "open/2"], True),
                                                  (RTEC_READ, ["armed/1", "armed/2", "open/1", "open/2"], False),
                                                  (RTEC_ADDED, ["alarm/1", "armed/1", "armed/2", "open/1", "open/2"],
                                                   True)])
def test_rtec_changed_statically_determined_fluent_is_derived_from_before_t(new, kept, cut):
    stage, said, lines = _rtec_upgraded(RTEC_OLD, new, "40")
    assert said[0]["kept"] == kept, said
    evaluator = stage.evaluator.newest.evaluator
    name = "shut" if new is RTEC_ADDED else "alarm"
    assert _first(evaluator, "open") < 30  # kept: the old version's whole history
    if cut:  # derived from T - 2 ticks on only
        assert _first(evaluator, name) >= 38
    else:  # read by the added simple fluent rang, which holds by inertia: from the start
        assert _first(evaluator, name) < 30
        assert _first(evaluator, "rang") < 30
    assert {json.loads(x)["pred"] for x in lines} <= {name, "rang"}


# d1's alarm (under RTEC_READ: the union) starts at 2 and ends at 10: rang, never terminated,
# holds from 3 on — which only an alarm derived from the start shows at T = 40
RTEC_EARLY = [{"t": 2, "pred": "opened", "args": ["d1"]}, {"t": 10, "pred": "closed", "args": ["d1"]},
              {"t": 20, "pred": "arm", "args": ["d2"]}, {"t": 60}]
RTEC_EARLY_SECOND = [{"t": 30, "pred": "disarm", "args": ["d2"]}, {"t": 45, "pred": "opened", "args": ["d2"]},
                     {"t": 20, "pred": "arm", "args": ["d2"], "op": "retract"}, {"t": 70}]


@pytest.mark.parametrize(("old", "new"), [(RTEC_OLD, RTEC_TOP), (RTEC_OLD, RTEC_READ), (RTEC_OLD, RTEC_ADDED),
                                          (RTEC_UNSEEN, RTEC_UNSEEN_READ)], ids=["top", "read", "added", "unseen"])
@pytest.mark.parametrize("at", ["5", "40", "59", "64"])  # (64: after what was evaluated)
@pytest.mark.parametrize(("first", "second"), [(RTEC_FIRST, RTEC_SECOND), (RTEC_EARLY, RTEC_EARLY_SECOND)],
                         ids=["doors", "early"])
def test_rtec_upgrade_from_before_t_means_run_upgrade(tmp_path, capsys, old, new, at, first, second):
    got, said = _fleet("rtec", old, new, at, first, second, settle=True)
    assert said[0]["kept"], said
    want = _run_upgrade(tmp_path, capsys, "rtec", old, new, at, first + second)
    assert sampled_meaning(got, 75) == sampled_meaning(want, 75)


_RTEC_RULES = [
    "initiatedAt(open(D)=true, T) :- happensAt(opened(D), T).",
    "terminatedAt(open(D)=true, T) :- happensAt(closed(D), T).",
    "initiatedAt(armed(D)=true, T) :- happensAt(arm(D), T).",
    "terminatedAt(armed(D)=true, T) :- happensAt(closed(D), T).",
    "holdsFor(alarm(D)=true, I) :- holdsFor(open(D)=true, A), holdsFor(armed(D)=true, B), intersect_all([A,B], I).",
    "holdsFor(alarm(D)=true, I) :- holdsFor(open(D)=true, A), holdsFor(armed(D)=true, B), union_all([A,B], I).",
    "holdsFor(quiet(D)=true, I) :- holdsFor(open(D)=true, A), complement_all([A], I).",
    "holdsFor(quiet(D)=true, I) :- holdsFor(open(D)=true, A), holdsFor(armed(D)=true, B), "
    "relative_complement_all(A, [B], I).",
    "holdsFor(quiet(D)=true, I) :- holdsFor(armed(D)=true, A), holdsFor(alarm(D)=true, B), "
    "relative_complement_all(A, [B], I).",
    "holdsFor(loud(D)=true, I) :- holdsFor(alarm(D)=true, A), holdsFor(quiet(D)=true, B), union_all([A,B], I).",
    "happensAt(warn(D), T) :- happensAt(opened(D), T), holdsAt(alarm(D)=true, T).",
    "initiatedAt(rang(D)=true, T) :- happensAt(start(loud(D)=true), T).",
    "initiatedAt(rang(D)=true, T) :- happensAt(warn(D), T).",
    "terminatedAt(rang(D)=true, T) :- happensAt(closed(D), T).",
]
_GROUND = ["grounding(open(D)=true) :- door(D).", "grounding(armed(D)=true) :- door(D).",
           "grounding(alarm(D)=true) :- door(D).", "grounding(quiet(D)=true) :- door(D).",
           "grounding(loud(D)=true) :- door(D).", "grounding(rang(D)=true) :- door(D)."]
_RTEC_EV = st.builds(lambda t, pred, arg, retract: {"t": t, "pred": pred, "args": [arg],
                                                    **({"op": "retract"} if retract else {})},
                     st.integers(0, 40), st.sampled_from(["opened", "closed", "arm"]),
                     st.sampled_from(["d1", "d2"]), st.booleans())


@settings(max_examples=120, deadline=None, suppress_health_check=list(HealthCheck))
@given(shared=st.lists(st.sampled_from(_RTEC_RULES + _GROUND), min_size=2, max_size=9, unique=True),
       old=st.lists(st.sampled_from(_RTEC_RULES + _GROUND), max_size=3, unique=True),
       new=st.lists(st.sampled_from(_RTEC_RULES + _GROUND), max_size=3, unique=True),
       first=st.lists(_RTEC_EV, min_size=2, max_size=14), second=st.lists(_RTEC_EV, max_size=6),
       upgrade=st.integers(1, 40))
def test_rtec_random_pairs_over_a_long_history_upgrade_as_run_upgrade(tmp_path_factory, capsys, shared, old, new,
                                                                     first, second, upgrade):
    """Random RTEC pairs (statically determined fluents over kept and changed ones, events and
    simple fluents reading them, grounding clauses added and removed) over a history longer
    than what a cut statically determined fluent is derived over, late events and
    retractions on both sides of T: the service's lines mean what ``run --upgrade`` prints."""
    old_text = "\n".join(dict.fromkeys(shared + old)) + "\ndoor(d1).\ndoor(d2).\n"
    new_text = "\n".join(dict.fromkeys(shared + new)) + "\ndoor(d1).\ndoor(d2).\n"
    first = [*first, {"t": 30}]
    second = [*second, {"t": 45}]
    got, said = _fleet("rtec", old_text, new_text, str(upgrade), first, second, settle=True)
    assert said[0]["at"] == str(upgrade), said
    want = _run_upgrade(tmp_path_factory.mktemp("rtec"), capsys, "rtec", old_text, new_text, str(upgrade),
                        first + second)
    assert sampled_meaning(got, 50) == sampled_meaning(want, 50)


# a second upgrade keeping a stratum the first evaluated from before its T only, and reading it
# further back than that: the kept stratum's answers are not known there (``partial``)
MTL_WIDE = MTL_TOP + "W(X):-Diamondminus[0,10]S(X)\n"
RTEC_RANG = RTEC_TOP + ("initiatedAt(rang(D)=true, T) :- happensAt(start(alarm(D)=true), T).\n"
                        "grounding(rang(D)=true) :- door(D).\n")


@pytest.mark.parametrize(("dialect", "texts", "times", "first", "second", "hi"), [
    ("mtl", [MTL_OLD, MTL_TOP, MTL_WIDE], ["30", "31"], MTL_FIRST, MTL_SECOND, 50),
    ("mtl", [MTL_OLD, MTL_TOP, MTL_WIDE], ["30", "31"],  # S(a) holds on [21,22] only: W(a) until 32
     [{"t": 0}, {"interval": "[20,20]", "pred": "P", "args": ["a"]}, {"interval": "[21,22]", "pred": "R", "args": ["a"]},
      {"t": 40}], [{"t": 50}], 50),
    ("rtec", [RTEC_OLD, RTEC_TOP, RTEC_RANG], ["40", "41"], RTEC_EARLY, RTEC_EARLY_SECOND, 75),
], ids=["mtl", "mtl-early", "rtec"])
@pytest.mark.parametrize("restart", [False, True])
def test_a_later_upgrade_reading_a_stratum_known_from_before_t_only(tmp_path, capsys, dialect, texts, times, first,
                                                                   second, hi, restart):
    stage = _stage(dialect, texts[0])
    out: list[bytes] = []
    out += stage.process(_records(first, 0), now=0.0)[1]
    out += stage.process([], now=5_000.0)[1]
    for i, (text, at) in enumerate(zip(texts[1:], times, strict=True)):
        request = UpgradeRequest(f"r{i}", version_id((("new", text),)), dialect, at, (("new", text),))
        out += stage.process([(None, "chronolog.facts", 0, 100 + i, request.encode())], now=5_000.0)[1]
        if restart:
            stage = roundtrip(stage, _stage(dialect, texts[0]))
    out += stage.process(_records(second, 200), now=0.0)[1]
    out += stage.process([], now=50_000.0)[1]
    suffix = {"mtl": ".mtl", "rtec": ".prolog"}[dialect]
    for i, text in enumerate(texts):
        (tmp_path / f"p{i}{suffix}").write_text(text)
    (tmp_path / "in.jsonl").write_text("".join(json.dumps(e) + "\n" for e in first + second))
    capsys.readouterr()
    assert main(["run", str(tmp_path / f"p0{suffix}"), "--input", str(tmp_path / "in.jsonl"),
                 "--upgrade", f"{times[0]}={tmp_path / f'p1{suffix}'}",
                 "--upgrade", f"{times[1]}={tmp_path / f'p2{suffix}'}"]) == 0
    want = [json.loads(x) for x in capsys.readouterr().out.splitlines()]
    assert sampled_meaning([json.loads(x) for x in out], hi) == sampled_meaning(want, hi)


def _fed(stage, events: list[dict], i: int) -> list[bytes]:  # noqa: ANN001
    """The lines of a plain stage fed its ``i``-th batch of ``events`` (offsets from 100 i),
    then idle (at 5,000 (i + 1)): everything up to the batch's latest time evaluated."""
    return stage.process(_records(events, 100 * i), now=0.0)[1] + stage.process([], now=5_000.0 * (i + 1))[1]


def test_rtec_stage_answers_a_relative_complement_of_an_operand_of_a_union_as_run():
    """quiet = armed minus alarm, alarm = open union armed without grounding/1: as RTEC reads
    it, alarm(d1) is [] and quiet(d1) = armed(d1), from 1 (arm(d1) at 0); open(d1) from 2.
    The stage evaluated 1 before the event at 1 (arm(d1) at 0 alone)."""
    prog = ("initiatedAt(open(D)=true, T) :- happensAt(opened(D), T).\n"
            "holdsFor(alarm(D)=true, I) :- holdsFor(open(D)=true, A), holdsFor(armed(D)=true, B), union_all([A,B], I).\n"
            "grounding(quiet(D)=true) :- door(D).\n"
            "holdsFor(quiet(D)=true, I) :- holdsFor(armed(D)=true, A), holdsFor(alarm(D)=true, B), "
            "relative_complement_all(A, [B], I).\n"
            "initiatedAt(armed(D)=true, T) :- happensAt(arm(D), T).\ndoor(d1).\n"
            "grounding(open(D)=true) :- door(D).\ngrounding(armed(D)=true) :- door(D).\n")
    stage = _stage("rtec", prog)
    events = [{"t": 0, "pred": "arm", "args": ["d1"]}, {"t": 1, "pred": "opened", "args": ["d1"]}, {"t": 30}]
    lines = _fed(stage, events, 0)
    want = [{"interval": "[1,inf)", "pred": p, "args": ["d1"]} for p in ("quiet", "armed")]
    want.append({"interval": "[2,inf)", "pred": "open", "args": ["d1"]})
    assert sampled_meaning([json.loads(x) for x in lines], 30) == sampled_meaning(want, 30)


# quiet is the complement of open, loud = alarm union quiet; the doors are those the input shows
# (a dynamic domain) and every fluent is grounded over them (RTEC reads nothing of a fluent
# without grounding/1); the new program drops quiet from loud, the other strata are kept
RTEC_QUIET = ("initiatedAt(open(D)=true, T) :- happensAt(opened(D), T).\n"
              "initiatedAt(armed(D)=true, T) :- happensAt(arm(D), T).\n"
              "holdsFor(alarm(D)=true, I) :- holdsFor(open(D)=true, A), holdsFor(armed(D)=true, B), "
              "union_all([A,B], I).\n"
              "holdsFor(quiet(D)=true, I) :- holdsFor(open(D)=true, A), complement_all([A], I).\n"
              "holdsFor(loud(D)=true, I) :- holdsFor(alarm(D)=true, A), holdsFor(quiet(D)=true, B), "
              "union_all([A,B], I).\ndynamicDomain(door(_)).\n"
              + "".join(f"grounding({e}(D)) :- door(D).\n" for e in ("opened", "closed", "arm"))
              + "".join(f"grounding({f}(D)=true) :- door(D).\n" for f in ("open", "armed", "alarm", "quiet", "loud")))


def _only(lines: list, preds: set[str]) -> list[dict]:
    """The answer lines of the fluents ``preds`` (JSON lines or dicts)."""
    got = [x if isinstance(x, dict) else json.loads(x) for x in lines]
    return [x for x in got if x["pred"] in preds]
RTEC_QUIET_NEW = RTEC_QUIET.replace("holdsFor(quiet(D)=true, B), union_all([A,B], I)", "union_all([A], I)")


@pytest.mark.parametrize(("first", "second"), [
    ([{"t": 5, "pred": "opened", "args": ["d1"]}, {"t": 10}], [{"t": 25, "pred": "opened", "args": ["d2"]}, {"t": 45}]),
    ([{"t": 5, "pred": "opened", "args": ["d1"], "op": "retract"}, {"t": 25, "pred": "opened", "args": ["d2"]}],
     [{"t": 5, "pred": "opened", "args": ["d1"]}, {"t": 45}]),
], ids=["after-upgrade", "before-upgrade-late"])
def test_rtec_stage_instance_first_seen_after_t_holds_before_t(first, second):
    """Upgrade at 20.  By hand, the old program over the whole stream: open(d1) from 6,
    quiet(d1) = [0,6), loud(d1) = [0,inf); open(d2) from 26, loud(d2) = [0,inf) too — an
    answer at 0 that the input before 20 does not show for d2, a door first seen at 25 (the
    second case: nor for d1, whose event comes after the upgrade, late, behind a retraction
    that matches nothing).  The new program: loud = alarm, d1 from 6, d2 from 26.  Spliced: loud(d1)
    from 0 on, loud(d2) on [0,20) and from 26; a stage whose old version is fed nothing
    from 20 on has no loud(d2) before 20."""
    got, said = _fleet("rtec", RTEC_QUIET, RTEC_QUIET_NEW, "20", first, second, settle=True)
    assert "alarm/1" in said[0]["kept"], said
    meaning = sampled_meaning(_only(got, {"loud"}), 30)
    want = sampled_meaning([{"interval": "[0,inf)", "pred": "loud", "args": ["d1"]},
                            {"interval": "[0,20)", "pred": "loud", "args": ["d2"]},
                            {"interval": "[26,inf)", "pred": "loud", "args": ["d2"]}], 30)
    assert meaning == want


def test_rtec_stage_takes_away_the_past_of_an_instance_a_late_event_empties():
    """opened(d1) at 0 twice, then (late, after an evaluation to 30) closed(d1) at 0.  By hand,
    over the whole stream: open(d1) is initiated and terminated at 0 and never holds, nor does
    alarm(d1); d1 is a door (the input shows it), so quiet(d1), the complement of nothing, and
    loud(d1) hold from 0 (``run`` agrees).  Before the close, open(d1) and alarm(d1) held from
    1 and quiet(d1) on [0,1): the close takes those back and gives quiet(d1) the rest."""
    prog = RTEC_QUIET.replace("initiatedAt(armed", "terminatedAt(open(D)=true, T) :- happensAt(closed(D), T).\n"
                                                   "initiatedAt(armed")
    stage = _stage("rtec", prog)
    first = [{"t": 0, "pred": "opened", "args": ["d1"]}, {"t": 0, "pred": "opened", "args": ["d1"]}, {"t": 30}]
    lines = _fed(stage, first, 0)
    before = [{"interval": "[1,inf)", "pred": p, "args": ["d1"]} for p in ("open", "alarm")]
    before += [{"interval": "[0,1)", "pred": "quiet", "args": ["d1"]},
               {"interval": "[0,inf)", "pred": "loud", "args": ["d1"]}]
    assert sampled_meaning(_only(lines, {"open", "alarm", "quiet", "loud"}), 30) == sampled_meaning(before, 30)
    late = [{"t": 0, "pred": "closed", "args": ["d1"]}, {"t": 45}]
    lines += _fed(stage, late, 1)
    after = [{"interval": "[0,inf)", "pred": p, "args": ["d1"]} for p in ("quiet", "loud")]
    assert sampled_meaning(_only(lines, {"open", "alarm", "quiet", "loud"}), 50) == sampled_meaning(after, 50)


def test_rtec_stage_goes_on_with_an_instance_whose_input_ended_before_the_window():
    """opened(d1) at 1, closed(d1) at 5, evaluated to 10, then to 20 and 45 (in order, no
    late event).  By hand: open(d1) = [2,5], quiet(d1) = its complement = [0,1] and from 6,
    alarm(d1) = open(d1), loud(d1) = alarm union quiet = from 0 on (``run`` agrees).  A
    later window, where open(d1) holds nothing, must still give quiet(d1) from 6."""
    prog = RTEC_QUIET.replace("initiatedAt(armed", "terminatedAt(open(D)=true, T) :- happensAt(closed(D), T).\n"
                                                   "initiatedAt(armed")
    stage = _stage("rtec", prog)
    events = [{"t": 1, "pred": "opened", "args": ["d1"]}, {"t": 5, "pred": "closed", "args": ["d1"]}, {"t": 10}]
    lines = _fed(stage, events, 0)
    lines += _fed(stage, [{"t": 20}, {"t": 45}], 1)
    want = sampled_meaning([{"interval": "[0,inf)", "pred": "loud", "args": ["d1"]},
                            {"interval": "[0,2)", "pred": "quiet", "args": ["d1"]},
                            {"interval": "[6,inf)", "pred": "quiet", "args": ["d1"]}], 50)
    assert sampled_meaning(_only(lines, {"loud", "quiet"}), 50) == want


def test_rtec_stage_new_instance_past_only_from_the_rules_that_show_it():
    """quiet by two rules (the complement of open, which no rule defines, and armed minus
    alarm), without grounding/1: RTEC never computes it and reads it as [] (whatever its first
    rule, a complement of nothing, would give); alarm = armed; loud = alarm union quiet.
    arm(d1) at 1 comes late, after an evaluation to 30.  By hand: armed(d1), alarm(d1) and
    loud(d1) from 2 (``run`` agrees); nothing from 0."""
    prog = ("initiatedAt(armed(D)=true, T) :- happensAt(arm(D), T).\n"
            "holdsFor(alarm(D)=true, I) :- holdsFor(armed(D)=true, I).\n"
            "holdsFor(quiet(D)=true, I) :- holdsFor(open(D)=true, A), complement_all([A], I).\n"
            "holdsFor(quiet(D)=true, I) :- holdsFor(armed(D)=true, A), holdsFor(alarm(D)=true, B), "
            "relative_complement_all(A, [B], I).\n"
            "holdsFor(loud(D)=true, I) :- holdsFor(alarm(D)=true, A), holdsFor(quiet(D)=true, B), union_all([A,B], I).\n"
            "grounding(loud(D)=true) :- door(D).\ngrounding(alarm(D)=true) :- door(D).\n"
            "grounding(armed(D)=true) :- door(D).\ndoor(d1).\ndoor(d2).\n")
    stage = _stage("rtec", prog)
    first = [{"t": 30, "pred": "opened", "args": ["d1"]}, {"t": 30}]
    lines = _fed(stage, first, 0)
    late = [{"t": 1, "pred": "arm", "args": ["d1"]}, {"t": 45}]
    lines += _fed(stage, late, 1)
    want = sampled_meaning([{"interval": "[2,inf)", "pred": p, "args": ["d1"]} for p in ("loud", "alarm", "armed")], 50)
    assert sampled_meaning([json.loads(x) for x in lines], 50) == want


def test_rtec_stage_goes_on_with_a_union_whose_showing_operand_ended():
    """alarm = open union armed (and open intersect armed), ungrounded; quiet = armed minus
    alarm, reported, open and armed grounded.  opened(d1) and arm(d1) at 0, then (late, after
    an evaluation to 30) closed(d1) at 1.  By hand, as RTEC reads it: alarm(d1), without
    grounding/1, is [], so quiet(d1) = armed(d1) from 1; open(d1) = [1,1] (``run`` agrees)."""
    prog = ("initiatedAt(open(D)=true, T) :- happensAt(opened(D), T).\n"
            "terminatedAt(open(D)=true, T) :- happensAt(closed(D), T).\n"
            "initiatedAt(armed(D)=true, T) :- happensAt(arm(D), T).\n"
            "holdsFor(alarm(D)=true, I) :- holdsFor(open(D)=true, A), holdsFor(armed(D)=true, B), "
            "intersect_all([A,B], I).\n"
            "holdsFor(alarm(D)=true, I) :- holdsFor(open(D)=true, A), holdsFor(armed(D)=true, B), union_all([A,B], I).\n"
            "holdsFor(quiet(D)=true, I) :- holdsFor(armed(D)=true, A), holdsFor(alarm(D)=true, B), "
            "relative_complement_all(A, [B], I).\n"
            "grounding(quiet(D)=true) :- door(D).\ngrounding(open(D)=true) :- door(D).\n"
            "grounding(armed(D)=true) :- door(D).\ndoor(d1).\ndoor(d2).\n")
    stage = _stage("rtec", prog)
    first = [{"t": 0, "pred": "opened", "args": ["d1"]}, {"t": 0, "pred": "arm", "args": ["d1"]}, {"t": 30}]
    lines = _fed(stage, first, 0)
    late = [{"t": 1, "pred": "closed", "args": ["d1"]}, {"t": 45}]
    lines += _fed(stage, late, 1)
    want = [{"interval": "[1,inf)", "pred": p, "args": ["d1"]} for p in ("quiet", "armed")]
    want.append({"interval": "[1,2)", "pred": "open", "args": ["d1"]})
    assert sampled_meaning([json.loads(x) for x in lines], 50) == sampled_meaning(want, 50)
