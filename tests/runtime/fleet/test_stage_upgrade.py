"""A fleet service's program upgrade (``chronolog upgrade``) at the stage, without a broker:
input records, the upgrade record among them, a checkpoint and restart after it (the state
through its codec), more input with late events on both sides of T; the answer lines mean
what ``chronolog run --upgrade`` prints, and the outcome goes to the control topic."""

from __future__ import annotations

import io
import json
from fractions import Fraction

import orjson
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from meaning import sampled_meaning

from chronolog.cli.main import main
from chronolog.cli.upgrade import kept_lines
from chronolog.contract.models import UpgradeOutcome
from chronolog.contract.models import UpgradeRequest as UpgradeRequestRecord
from chronolog.dialects.registry import RunOptions, lookup
from chronolog.stages.interface import StageSpec
from chronolog.state.snapshots import roundtrip
from chronolog.versions import UpgradeRequest, version_id

MTL_OLD = "Q(X):-Diamondminus[0,1]P(X)\nS(X):-Q(X),R(X)\n"
MTL_NEW = "Q(X):-Diamondminus[0,3]P(X)\nS(X):-Q(X),R(X)\nS(X):-P(X)\n"
MTL_FIRST = [{"t": 0}, {"interval": "[1,2]", "pred": "P", "args": ["a"]}, {"interval": "[2,6]", "pred": "R", "args": ["a"]},
             {"t": 6}]
MTL_SECOND = [{"interval": "[7,8]", "pred": "P", "args": ["b"]}, {"interval": "[3,4]", "pred": "P", "args": ["c"]},
              {"interval": "[1,2]", "pred": "P", "args": ["a"], "op": "retract"}, {"interval": "[0,1]", "pred": "P", "args": ["a"]},
              {"t": 12}]
RTEC_OLD = ("initiatedAt(open(D)=true, T) :- happensAt(opened(D), T).\n"
            "terminatedAt(open(D)=true, T) :- happensAt(closed(D), T).\n"
            "door(d1).\ndoor(d2).\ngrounding(open(D)=true) :- door(D).\n")
RTEC_NEW = RTEC_OLD + "terminatedAt(open(D)=true, T) :- happensAt(locked(D), T).\n"
RTEC_FIRST = [{"t": 1, "pred": "opened", "args": ["d1"]}, {"t": 4, "pred": "locked", "args": ["d1"]}, {"t": 9}]
RTEC_SECOND = [{"t": 11, "pred": "opened", "args": ["d2"]}, {"t": 13, "pred": "locked", "args": ["d2"]},
               {"t": 3, "pred": "locked", "args": ["d1"]}, {"t": 16, "pred": "closed", "args": ["d2"]}, {"t": 20}]


def _stage(dialect: str, text: str):
    row = lookup(dialect)
    program = row.parse([("prog", text)])
    return row.layout(program, RunOptions()).stage(StageSpec("chain", idle_flush=1000.0))


def _records(events: list[dict], offset: int) -> list[tuple]:
    return [(None, "chronolog.facts", 0, offset + i, orjson.dumps(e)) for i, e in enumerate(events)]


def _restart(dialect: str, text: str, stage):
    """The stage's state written out and read back into a fresh stage of the program the
    service was started with (as a restarted process has it)."""
    return roundtrip(stage, _stage(dialect, text))


def _fleet(dialect: str, old: str, new: str, at, first, second, restart: bool = True,
           settle: bool = False) -> tuple[list[dict], list[dict]]:
    """(``settle``: the input idle before the upgrade, so the service evaluated all it read.)"""
    stage = _stage(dialect, old)
    request = UpgradeRequest("r1", version_id((("new", new),)), dialect, at, (("new", new),))
    out: list[bytes] = []
    said: list[dict] = []
    for batch in (_records(first, 0), [(None, "chronolog.facts", 0, 100, request.encode())],
                  [(None, "chronolog.facts", 1, 0, request.encode())]):  # (the same request from a second partition)
        leaving, lines = stage.process(batch, now=0.0)
        out += lines
        if settle and batch[0][3] == 0:
            out += stage.process([], now=5_000.0)[1]
        said += [orjson.loads(o.payload) for o in leaving if o.topic == "control"]
        for o in leaving:  # the records are the topics' contracts (schemas/upgrade-*.schema.json)
            UpgradeOutcome.model_validate_json(o.payload)
    UpgradeRequestRecord.model_validate_json(request.encode())
    if restart:
        stage = _restart(dialect, old, stage)
    leaving, lines = stage.process(_records(second, 200), now=0.0)
    out += lines
    leaving, lines = stage.process([], now=10_000.0)  # input idle: the latest time too
    out += lines
    return [json.loads(x) for x in out], said


def _cancelling(lines: list[bytes]) -> list[dict]:
    """The lines of one batch that another line of it takes back (same answer, opposite diff)."""
    seen = [json.loads(x) for x in lines]
    keys = [(json.dumps({k: v for k, v in d.items() if k != "diff"}, sort_keys=True), d.get("diff", 1)) for d in seen]
    return [d for d, (k, diff) in zip(seen, keys, strict=True) if (k, -diff) in keys]


def _run_upgrade(tmp_path, capsys, dialect: str, old: str, new: str, at: str, events: list[dict]) -> list[dict]:
    suffix = {"mtl": ".mtl", "rtec": ".prolog"}[dialect]
    (tmp_path / f"old{suffix}").write_text(old)
    (tmp_path / f"new{suffix}").write_text(new)
    (tmp_path / "in.jsonl").write_text("".join(json.dumps(e) + "\n" for e in events))
    capsys.readouterr()
    assert main(["run", str(tmp_path / f"old{suffix}"), "--input", str(tmp_path / "in.jsonl"),
                 "--upgrade", f"{at}={tmp_path / f'new{suffix}'}"]) == 0
    return [json.loads(x) for x in capsys.readouterr().out.splitlines()]


@pytest.mark.parametrize("at", ["3", "7/2", "9", None])
@pytest.mark.parametrize("restart", [True, False])
def test_mtl_service_upgrade_means_run_upgrade(tmp_path, capsys, at, restart):
    got, said = _fleet("mtl", MTL_OLD, MTL_NEW, at, MTL_FIRST, MTL_SECOND, restart)
    used = at if at is not None else "2"  # without a time: the last one evaluated (rational time; 6 is read, not evaluated)
    assert said == [{"upgrade": "r1", "version": version_id((("new", MTL_NEW),)), "at": used, "service": "chain"}]
    want = _run_upgrade(tmp_path, capsys, "mtl", MTL_OLD, MTL_NEW, used, MTL_FIRST + MTL_SECOND)
    assert sampled_meaning(got, 12) == sampled_meaning(want, 12)
    assert sampled_meaning(got, 12) != sampled_meaning(_run_upgrade(tmp_path, capsys, "mtl", MTL_OLD, MTL_OLD, used,
                                                          MTL_FIRST + MTL_SECOND), 12)  # the upgrade mattered


@pytest.mark.parametrize("at", ["2", "6", "12", None])
def test_rtec_service_upgrade_means_run_upgrade(tmp_path, capsys, at):
    got, said = _fleet("rtec", RTEC_OLD, RTEC_NEW, at, RTEC_FIRST, RTEC_SECOND)
    used = at if at is not None else "5"  # without a time: the first one not evaluated (integer time; 9 is read)
    assert said[0]["at"] == used
    want = _run_upgrade(tmp_path, capsys, "rtec", RTEC_OLD, RTEC_NEW, used, RTEC_FIRST + RTEC_SECOND)
    assert sampled_meaning(got, 25) == sampled_meaning(want, 25)


def test_refusals_go_to_the_control_topic_and_change_nothing():
    stage = _stage("mtl", MTL_OLD)
    stage.process(_records(MTL_FIRST, 0), now=0.0)
    before = stage.export_state()
    for request, reason in [
        (UpgradeRequest("r1", "v", "rtec", None, (("new.prolog", RTEC_NEW),)), "cannot replace this mtl program"),
        (UpgradeRequest("r2", "v", "mtl", None, (("new.mtl", "Q(X):-Diamondminus[0,1P(X)\n"),)), "new.mtl:1:"),
        (UpgradeRequest("r3", "v", "mtl", "x", (("new.mtl", MTL_NEW),)), "'x' is not a time"),
    ]:
        leaving, lines = stage.process([(None, "chronolog.facts", 0, 50, request.encode())], now=0.0)
        said = [orjson.loads(o.payload) for o in leaving]
        assert lines == [] and len(said) == 1 and said[0]["upgrade"] == request.id, said
        assert reason in said[0]["refused"], said
    assert stage.export_state() == before


def test_retention_too_short_for_the_new_programs_reach_is_refused():
    row = lookup("mtl")
    program = row.parse([("prog", MTL_OLD)])
    stage = row.layout(program, RunOptions()).stage(StageSpec("chain", idle_flush=1000.0, retention=1))
    events = [{"t": 0}] + [{"interval": f"[{t},{t}]", "pred": "P", "args": ["a"]} for t in range(0, 200, 2)]
    stage.process(_records(events, 0), now=0.0)
    request = UpgradeRequest("r1", "v", "mtl", "150", (("new.mtl", MTL_NEW),))
    leaving, lines = stage.process([(None, "chronolog.facts", 0, 500, request.encode())], now=0.0)
    said = orjson.loads(leaving[0].payload)
    assert "the retained input does not reach far enough back" in said["refused"], said
    assert lines == []


# ---------------------------------------------------------------------------------------------
# Unchanged strata keep their state (issue 37 item 4): only the changed ones are evaluated again

MTL_KEEP_OLD = "Q(X):-Diamondminus[0,1]P(X)\nS(X):-Q(X),R(X)\nU(X):-Boxminus[0,1]R(X)\n"
MTL_KEEP_TOP = MTL_KEEP_OLD.replace("S(X):-Q(X),R(X)", "S(X):-Diamondminus[0,2]Q(X),R(X)")
MTL_KEEP_SECOND = [{"interval": "[9,11]", "pred": "R", "args": ["b"]}, *MTL_SECOND]


@pytest.mark.parametrize("at", ["3", "7/2", "9", None])
@pytest.mark.parametrize("restart", [True, False])
def test_mtl_upgrade_keeping_unchanged_strata_means_run_upgrade(tmp_path, capsys, at, restart):
    got, said = _fleet("mtl", MTL_KEEP_OLD, MTL_KEEP_TOP, at, MTL_FIRST, MTL_KEEP_SECOND, restart, settle=True)
    used = said[0]["at"]
    want = _run_upgrade(tmp_path, capsys, "mtl", MTL_KEEP_OLD, MTL_KEEP_TOP, used, MTL_FIRST + MTL_KEEP_SECOND)
    assert sampled_meaning(got, 12) == sampled_meaning(want, 12)
    assert sampled_meaning(got, 12) != sampled_meaning(_run_upgrade(tmp_path, capsys, "mtl", MTL_KEEP_OLD, MTL_KEEP_OLD,
                                                                    used, MTL_FIRST + MTL_KEEP_SECOND), 12)


def test_mtl_unchanged_strata_are_not_evaluated_again():
    """The upgrade's evaluation fires only the changed stratum's rules (a cold evaluator of the
    new program fires all of them), the kept answers are taken over as they were, and only the
    changed predicate's answers are restated."""
    stage = _stage("mtl", MTL_KEEP_OLD)
    first = [{"t": 0}, {"interval": "[1,2]", "pred": "P", "args": ["a"]}, {"interval": "[2,6]", "pred": "R", "args": ["a"]},
             {"interval": "[1,4]", "pred": "R", "args": ["b"]}, {"t": 6}]
    stage.process(_records(first, 0), now=0.0)
    stage.process([], now=10_000.0)
    old = stage.evaluator
    request = UpgradeRequest("r1", version_id((("new", MTL_KEEP_TOP),)), "mtl", "1", (("new", MTL_KEEP_TOP),))
    leaving, lines = stage.process([(None, "chronolog.facts", 0, 100, request.encode())], now=0.0)
    said = [UpgradeOutcome.model_validate_json(o.payload) for o in leaving if o.topic == "control"]
    assert [o.kept for o in said] == [["Q/1", "U/1"]]  # what chronolog upgrade prints
    new = stage.evaluator.newest.evaluator
    assert new.fired.get(("S", 1), 0) > 0
    assert new.fired.get(("Q", 1), 0) == 0 and new.fired.get(("U", 1), 0) == 0
    assert {json.loads(x)["pred"] for x in lines} == {"S"}  # Q and U are not taken back and given again
    for atom in (("Q", ("a",)), ("U", ("a",)), ("U", ("b",))):
        assert new.published[atom] == old.published[atom] and new.published[atom] is not old.published[atom]
    row = lookup("mtl")
    program = row.parse([("new", MTL_KEEP_TOP)])
    cold = row.stream(program)
    for event in row.read(program, io.StringIO("".join(json.dumps(e) + "\n" for e in first)), "in", "jsonl", "fail",
                          print):
        cold.push(event)
    cold.advance(6)
    assert cold.fired.get(("Q", 1), 0) > 0 and cold.fired.get(("U", 1), 0) > 0
    # and the kept strata go on: a later event changes Q's and U's answers through the new version
    _, lines = stage.process(_records([{"interval": "[7,8]", "pred": "P", "args": ["c"]}, {"t": 9}], 200), now=0.0)
    _, more = stage.process([], now=20_000.0)
    assert "Q" in {json.loads(x)["pred"] for x in lines + more}


def test_an_upgrade_that_cannot_hand_the_kept_strata_over_says_so():
    """The request read right after a late event the service has not evaluated yet: the new
    program is evaluated whole on the retained input, and the outcome says it kept nothing,
    where the plan said "keeps its state" — as ``chronolog upgrade`` prints it."""
    stage = _stage("mtl", MTL_KEEP_OLD)
    first = [{"t": 0}, {"interval": "[1,2]", "pred": "P", "args": ["a"]}, {"t": 6}]
    stage.process(_records(first, 0), now=0.0)
    stage.process([], now=10_000.0)  # evaluated up to 6
    request = UpgradeRequest("r1", version_id((("new", MTL_KEEP_TOP),)), "mtl", "1", (("new", MTL_KEEP_TOP),))
    late = _records([{"interval": "[2,3]", "pred": "P", "args": ["b"]}], 50)
    leaving, _ = stage.process([*late, (None, "chronolog.facts", 0, 100, request.encode())], now=10_000.0)
    said = [orjson.loads(o.payload) for o in leaving if o.topic == "control"]
    assert [o.get("kept") for o in said] == [[]], said
    new = stage.evaluator.newest.evaluator
    stage.process([], now=10_000.0)
    assert new.fired.get(("Q", 1), 0) > 0  # evaluated again: not kept
    lines = kept_lines(said)
    assert len(lines) == 1 and "evaluated the new program whole on the retained input" in lines[0]
    assert kept_lines([{"service": "chain", "kept": ["Q/1"]}]) == ["  chain: kept with their state: Q/1"]
    assert kept_lines([{"service": "chain"}]) == []


MTL_POOL = [
    "Q(X):-Diamondminus[0,2]P(X)",
    "Q(X):-Boxminus[0,1]P(X)",
    "S(X):-Diamondminus[0,1]Q(X)",
    "S(X):-R(X)",
    "U(X):-Q(X),R(X)",
    "V(X):-Diamondminus[0,1]R(X)",
    "W(X):-P(X),not V(X)",
]
_MTL_EVENT = st.builds(lambda lo, n, pred, arg, retract: {"interval": f"[{lo},{lo + n}]", "pred": pred, "args": [arg],
                                                           **({"op": "retract"} if retract else {})},
                       st.integers(0, 10), st.integers(0, 2), st.sampled_from(["P", "R"]), st.sampled_from(["a", "b"]),
                       st.booleans())


@settings(max_examples=150, deadline=None, suppress_health_check=list(HealthCheck))
@given(shared=st.lists(st.sampled_from(MTL_POOL), min_size=1, max_size=3, unique=True),
       old=st.lists(st.sampled_from(MTL_POOL), max_size=2, unique=True),
       new=st.lists(st.sampled_from(MTL_POOL), max_size=2, unique=True),
       first=st.lists(_MTL_EVENT, min_size=1, max_size=6), second=st.lists(_MTL_EVENT, max_size=6),
       upgrade=st.integers(0, 20), restart=st.booleans())
def test_mtl_random_pairs_sharing_strata_upgrade_as_run_upgrade(tmp_path_factory, capsys, shared, old, new, first,
                                                                 second, upgrade, restart):
    """Random program pairs with rules in common (so that some strata are kept, some changed,
    added or removed), late events and retractions on both sides of T: the service's answer
    lines mean what ``run --upgrade`` prints."""
    mtl_pair_upgrades_as_run(tmp_path_factory, capsys, (shared, old, new), first, second, upgrade, restart, (6, 12))


def mtl_pair_upgrades_as_run(tmp_path_factory, capsys, rules: tuple, first: list, second: list,  # noqa: ANN001
                             upgrade: int, restart: bool, ends: tuple[int, int]) -> None:
    """The chain service of the old program (``rules``: shared, old-only, new-only), upgraded
    at ``upgrade``/2 between the two parts of the input (each ending with a time advance to
    ``ends``), means what ``run --upgrade`` prints up to the last end."""
    shared, old, new = rules
    old_text = "\n".join(dict.fromkeys(shared + old)) + "\n"
    new_text = "\n".join(dict.fromkeys(shared + new)) + "\n"
    at = Fraction(upgrade, 2)
    at_text = str(at.numerator) if at.denominator == 1 else f"{at.numerator}/{at.denominator}"
    first = [{"t": 0}, *first, {"t": ends[0]}]
    second = [*second, {"t": ends[1]}]
    got, said = _fleet("mtl", old_text, new_text, at_text, first, second, restart, settle=True)
    assert said[0]["at"] == at_text, said
    want = _run_upgrade(tmp_path_factory.mktemp("mtl"), capsys, "mtl", old_text, new_text, at_text, first + second)
    assert sampled_meaning(got, ends[1]) == sampled_meaning(want, ends[1])


RTEC_KEEP_OLD = ("initiatedAt(open(D)=true, T) :- happensAt(opened(D), T).\n"
                 "terminatedAt(open(D)=true, T) :- happensAt(closed(D), T).\n"
                 "initiatedAt(armed(D)=true, T) :- happensAt(arm(D), T).\n"
                 "terminatedAt(armed(D)=true, T) :- happensAt(disarm(D), T).\n"
                 "holdsFor(alarm(D)=true, I) :- holdsFor(open(D)=true, A), holdsFor(armed(D)=true, B), "
                 "intersect_all([A,B], I).\n"
                 "door(d1).\ndoor(d2).\ngrounding(open(D)=true) :- door(D).\ngrounding(armed(D)=true) :- door(D).\n"
                 "grounding(alarm(D)=true) :- door(D).\n")
RTEC_KEEP_TOP = RTEC_KEEP_OLD.replace("intersect_all([A,B], I)", "union_all([A,B], I)")
RTEC_KEEP_BOTTOM = RTEC_KEEP_OLD.replace("terminatedAt(armed(D)=true, T) :- happensAt(disarm(D), T).\n",
                                         "terminatedAt(armed(D)=true, T) :- happensAt(disarm(D), T).\n"
                                         "terminatedAt(armed(D)=true, T) :- happensAt(closed(D), T).\n")
RTEC_KEEP_FIRST = [{"t": 1, "pred": "opened", "args": ["d1"]}, {"t": 2, "pred": "arm", "args": ["d2"]},
                   {"t": 4, "pred": "arm", "args": ["d1"]}, {"t": 6, "pred": "closed", "args": ["d1"]}, {"t": 9}]
RTEC_KEEP_SECOND = [{"t": 11, "pred": "opened", "args": ["d2"]}, {"t": 3, "pred": "closed", "args": ["d1"]},
                    {"t": 13, "pred": "disarm", "args": ["d2"]}, {"t": 7, "pred": "opened", "args": ["d1"]},
                    {"t": 16, "pred": "closed", "args": ["d2"]}, {"t": 20}]


# with a deadline: armed(D)=on turns to off 5 ticks after its initiation (fi), open kept
RTEC_FI = RTEC_KEEP_OLD.replace("armed(D)=true", "armed(D)=on") + "fi(armed(D)=on, armed(D)=off, 5).\n"
RTEC_FI_TOP = RTEC_FI.replace("intersect_all([A,B], I)", "union_all([A,B], I)")


@pytest.mark.parametrize(("old", "new"), [(RTEC_KEEP_OLD, RTEC_KEEP_TOP), (RTEC_KEEP_OLD, RTEC_KEEP_BOTTOM),
                                          (RTEC_FI, RTEC_FI_TOP)])
@pytest.mark.parametrize("at", ["2", "6", "12", None])
def test_rtec_upgrade_keeping_unchanged_strata_means_run_upgrade(tmp_path, capsys, old, new, at):
    got, said = _fleet("rtec", old, new, at, RTEC_KEEP_FIRST, RTEC_KEEP_SECOND, settle=True)
    used = said[0]["at"]
    want = _run_upgrade(tmp_path, capsys, "rtec", old, new, used, RTEC_KEEP_FIRST + RTEC_KEEP_SECOND)
    assert sampled_meaning(got, 25) == sampled_meaning(want, 25)


def test_rtec_unchanged_strata_are_not_evaluated_again():
    """A top-stratum change: the upgrade's window derives only ``alarm`` (``open`` and
    ``armed`` are kept as the old version derived them) and restates only its answers."""
    stage = _stage("rtec", RTEC_KEEP_OLD)
    stage.process(_records(RTEC_KEEP_FIRST, 0), now=0.0)
    stage.process([], now=10_000.0)
    old = stage.evaluator
    request = UpgradeRequest("r1", version_id((("new", RTEC_KEEP_TOP),)), "rtec", "2", (("new", RTEC_KEEP_TOP),))
    _, lines = stage.process([(None, "chronolog.facts", 0, 100, request.encode())], now=0.0)
    new = stage.evaluator.newest.evaluator
    derived = {e[1][0]: n for e, n in new.derived.items()}
    assert derived == {"alarm": 1}, derived
    assert lines and {json.loads(x)["pred"] for x in lines} == {"alarm"}
    assert new.store.fluents[("open", 1)] == old.store.fluents[("open", 1)]
    assert new.store.fluents[("open", 1)] is not old.store.fluents[("open", 1)]
    # the bottom changed: armed and alarm derived again, open kept
    stage = _stage("rtec", RTEC_KEEP_OLD)
    stage.process(_records(RTEC_KEEP_FIRST, 0), now=0.0)
    stage.process([], now=10_000.0)
    request = UpgradeRequest("r2", version_id((("new", RTEC_KEEP_BOTTOM),)), "rtec", "2", (("new", RTEC_KEEP_BOTTOM),))
    stage.process([(None, "chronolog.facts", 0, 100, request.encode())], now=0.0)
    assert {e[1][0] for e in stage.evaluator.newest.evaluator.derived} == {"armed", "alarm"}


_RTEC_RULES = [
    "initiatedAt(open(D)=true, T) :- happensAt(opened(D), T).",
    "terminatedAt(open(D)=true, T) :- happensAt(closed(D), T).",
    "terminatedAt(open(D)=true, T) :- happensAt(locked(D), T).",
    "initiatedAt(armed(D)=true, T) :- happensAt(arm(D), T).",
    "terminatedAt(armed(D)=true, T) :- happensAt(closed(D), T).",
    "holdsFor(alarm(D)=true, I) :- holdsFor(open(D)=true, A), holdsFor(armed(D)=true, B), intersect_all([A,B], I).",
    "holdsFor(alarm(D)=true, I) :- holdsFor(open(D)=true, A), holdsFor(armed(D)=true, B), union_all([A,B], I).",
    "happensAt(warn(D), T) :- happensAt(opened(D), T), holdsAt(armed(D)=true, T).",
    "initiatedAt(noisy(D)=true, T) :- happensAt(warn(D), T).",
]
_RTEC_GROUND = "door(d1).\ndoor(d2).\n" + "".join(f"grounding({f}(D)=true) :- door(D).\n"
                                                  for f in ("open", "armed", "alarm", "noisy"))
_RTEC_EV = st.builds(lambda t, pred, arg, retract: {"t": t, "pred": pred, "args": [arg],
                                                    **({"op": "retract"} if retract else {})},
                     st.integers(0, 20), st.sampled_from(["opened", "closed", "locked", "arm"]),
                     st.sampled_from(["d1", "d2"]), st.booleans())


@settings(max_examples=100, deadline=None, suppress_health_check=list(HealthCheck))
@given(shared=st.lists(st.sampled_from(_RTEC_RULES), min_size=1, max_size=4, unique=True),
       old=st.lists(st.sampled_from(_RTEC_RULES), max_size=2, unique=True),
       new=st.lists(st.sampled_from(_RTEC_RULES), max_size=2, unique=True),
       first=st.lists(_RTEC_EV, min_size=1, max_size=6), second=st.lists(_RTEC_EV, max_size=6),
       upgrade=st.integers(1, 20))
def test_rtec_random_pairs_sharing_strata_upgrade_as_run_upgrade(tmp_path_factory, capsys, shared, old, new, first,
                                                                  second, upgrade):
    """As the DatalogMTL property: random RTEC pairs with rules in common, late events and
    retractions on both sides of T, against ``run --upgrade``."""
    old_text = "\n".join(dict.fromkeys(shared + old)) + "\n" + _RTEC_GROUND
    new_text = "\n".join(dict.fromkeys(shared + new)) + "\n" + _RTEC_GROUND
    first = [*first, {"t": 10}]
    second = [*second, {"t": 22}]
    got, said = _fleet("rtec", old_text, new_text, str(upgrade), first, second, settle=True)
    assert said[0]["at"] == str(upgrade), said
    want = _run_upgrade(tmp_path_factory.mktemp("rtec"), capsys, "rtec", old_text, new_text, str(upgrade),
                        first + second)
    assert sampled_meaning(got, 25) == sampled_meaning(want, 25)


@pytest.mark.parametrize(("dialect", "texts", "times", "events", "hi"), [
    ("mtl", [MTL_KEEP_OLD, MTL_KEEP_TOP, MTL_KEEP_TOP.replace("U(X):-Boxminus[0,1]R(X)", "U(X):-R(X)")],
     ["3", "15/2"], MTL_FIRST + MTL_KEEP_SECOND, 12),
    ("rtec", [RTEC_KEEP_OLD, RTEC_KEEP_TOP, RTEC_KEEP_TOP.replace(
        "terminatedAt(armed(D)=true, T) :- happensAt(disarm(D), T).\n",
        "terminatedAt(armed(D)=true, T) :- happensAt(disarm(D), T).\n"
        "terminatedAt(armed(D)=true, T) :- happensAt(closed(D), T).\n")],
     ["4", "12"], RTEC_KEEP_FIRST + RTEC_KEEP_SECOND, 25),
])
def test_chained_upgrades_keeping_strata_mean_run_upgrade(tmp_path, capsys, dialect, texts, times, events, hi):
    """P -> P' at T1 -> P'' at T2, each keeping what it leaves unchanged, the service restarted
    from its snapshot between them, late events on both sides: as ``run --upgrade`` twice."""
    stage = _stage(dialect, texts[0])
    out: list[bytes] = []
    half = len(events) // 2
    out += stage.process(_records(events[:half], 0), now=0.0)[1]
    for i, (text, at) in enumerate(zip(texts[1:], times, strict=True)):
        out += stage.process([], now=5_000.0 * (i + 1))[1]
        request = UpgradeRequest(f"r{i}", version_id((("new", text),)), dialect, at, (("new", text),))
        leaving, lines = stage.process([(None, "chronolog.facts", 0, 100 + i, request.encode())], now=0.0)
        assert [orjson.loads(o.payload)["at"] for o in leaving] == [at]
        assert not _cancelling(lines), lines  # (the restatement is the difference, no +1/-1 pairs)
        out += lines
        stage = _restart(dialect, texts[0], stage)
        if i == 0:
            out += stage.process(_records(events[half:-1], 200), now=0.0)[1]
    out += stage.process(_records(events[-1:], 300), now=0.0)[1]
    out += stage.process([], now=50_000.0)[1]
    suffix = {"mtl": ".mtl", "rtec": ".prolog"}[dialect]
    for i, text in enumerate(texts):
        (tmp_path / f"p{i}{suffix}").write_text(text)
    (tmp_path / "in.jsonl").write_text("".join(json.dumps(e) + "\n" for e in events))
    capsys.readouterr()
    assert main(["run", str(tmp_path / f"p0{suffix}"), "--input", str(tmp_path / "in.jsonl"),
                 "--upgrade", f"{times[0]}={tmp_path / f'p1{suffix}'}",
                 "--upgrade", f"{times[1]}={tmp_path / f'p2{suffix}'}"]) == 0
    want = [json.loads(x) for x in capsys.readouterr().out.splitlines()]
    assert sampled_meaning([json.loads(x) for x in out], hi) == sampled_meaning(want, hi)
