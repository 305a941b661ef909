"""``chronolog upgrade`` on a LARS fleet of one service per stratum, at the stages without a
broker: the upgrade record goes from ingest through grounding to every reasoner in order
with the facts; an unchanged stratum keeps its state, a changed one evaluates its new rules
from T on and sends the corrections; output is unchanged.  Services consume in a seeded
random order and restart from their stored state (some while the upgrade is on its way).
The answers mean what ``chronolog run --upgrade`` prints; what the fleet cannot do exactly
is refused by every reasoner alike."""

from __future__ import annotations

import contextlib
import io
import json
import random

import orjson
import pytest
from hypothesis import HealthCheck, event, given, settings
from hypothesis import strategies as st
from meaning import meaning

from chronolog.cli.main import main
from chronolog.contract.models import UpgradeOutcome
from chronolog.dialects.lars.changes import per_stratum_refusal
from chronolog.dialects.lars.hooks import lars_plan
from chronolog.dialects.lars.seeds import SEED_KEY
from chronolog.dialects.registry import RunOptions, lookup
from chronolog.stages.interface import StageSpec
from chronolog.state.schema import snapshot_bytes
from chronolog.state.snapshots import roundtrip
from chronolog.versions import UPGRADE_KEY, UpgradeRequest, version_id

OLD = "a(X) :- p(X) [2].\nb(X) :- a(X), not c(X).\nc(X) :- q(X).\n"  # strata: (a, c), (b)
TOP = "a(X) :- p(X) [2].\nb(X) :- a(X), not c(X), X != z.\nc(X) :- q(X).\n"  # the top stratum changes only
BOTTOM = "a(X) :- p(X) [4].\nb(X) :- a(X), not c(X).\nc(X) :- q(X).\n"  # the bottom one: b's input changes
# b reads a through a window: the top stratum changes, reading the unchanged a of earlier times
WINDOWED = "a(X) :- p(X) [2].\nb(X) :- a(X) [1], not c(X).\nc(X) :- q(X).\n"
WINDOWED_TOP = "a(X) :- p(X) [2].\nb(X) :- a(X) [1], not c(X), X != z.\nc(X) :- q(X).\n"
EVENTS = [{"t": 0}, {"t": 1, "pred": "p", "args": ["x"]}, {"t": 2, "pred": "q", "args": ["x"]},
          {"t": 3, "pred": "p", "args": ["y"]}, {"t": 5, "pred": "q", "args": ["y"]}, {"t": 8}]
LATE = [{"t": 2, "pred": "p", "args": ["z"]}, {"t": 6, "pred": "p", "args": ["w"]},
        {"t": 5, "pred": "q", "args": ["y"], "op": "retract"}, {"t": 9, "pred": "p", "args": ["v"]},
        {"t": 10, "pred": "q", "args": ["v"]}, {"t": 12, "pred": "p", "args": ["z"]}, {"t": 14}]
SPAN = (0, 14)


def _layout(text: str):
    row = lookup("lars")
    return row.layout(row.parse([("old.lars", text)]), RunOptions())


def _request(at, new: str, rid: str = "r1") -> bytes:
    return UpgradeRequest(rid, version_id((("new.lars", new),)), "lars", at, (("new.lars", new),)).encode()


def per_stratum(first: list[dict], upgrade: bytes, second: list[dict], seed: int = 0,
                restarts: int = 0, old: str = OLD, stages: dict | None = None,
                retention: int | None = None, from_seeds: bool = False,
                read: dict | None = None) -> tuple[list[dict], list[dict]]:
    """The fleet of ``old`` (ingest, grounding, a reasoner per stratum, output) fed ``first``,
    the upgrade record, ``second`` and then idle; the answers and the control records.  A
    reasoner's batch is at random one of an epoch that goes on (``more``: its corrections may
    wait), the rest of which follows before it is restarted and before the end.

    An added stratum's reasoner reads its topics from the start, or with ``from_seeds`` from
    the upgrade record on the grounded topic and, on a lower stratum's topic, from that
    stratum's seed (seeds.py), or from the topic's end where the seed has not come yet.
    ``read``: each service's (topic, position) of every record it was given."""
    layout = _layout(old)
    strata = len(layout.strata)
    versions: list = []  # the program versions applied, as the supervisor learns them (their files)
    served = {p for s in layout.strata for p in s}

    def fresh(role: str, k: int | None = None):
        return layout.stage(StageSpec(role, stratum=k, idle_flush=0.0, versions=tuple(versions), retention=retention))

    stages = {} if stages is None else stages  # (the caller sees them after)
    stages |= {"ingest": fresh("ingest"), "grounding": fresh("grounding"), "output": fresh("output")}
    stages |= {f"reasoner.{k}": fresh("reasoner", k) for k in range(1, strata + 1)}
    reads = {"grounding": ["ingested"], "output": [f"stratum.{j}" for j in range(1, strata + 1)]}
    reads |= {f"reasoner.{k}": ["grounded"] + [f"stratum.{j}" for j in range(1, k)] for k in range(1, strata + 1)}

    def supervise(outcome: dict) -> None:
        """What `up`'s supervisor does with an applied upgrade: the reasoners of added strata
        (reading their topics from the start), the output restarted to serve every version."""
        nonlocal strata
        new = [tuple(f) for f in outcome["sources"]]
        if "refused" in outcome or tuple(new) in [tuple(v) for v in versions]:
            return
        versions.append(tuple(new))
        preds = {p for s in outcome["strata"] for p in s}
        if len(outcome["strata"]) <= strata and preds <= served:
            return
        served.update(preds)
        for k in range(strata + 1, len(outcome["strata"]) + 1):
            stages[f"reasoner.{k}"] = fresh("reasoner", k)
            reads[f"reasoner.{k}"] = ["grounded"] + [f"stratum.{j}" for j in range(1, k)]
            if from_seeds:
                at[(f"reasoner.{k}", "grounded")] = next(
                    i for i, v in enumerate(topics["grounded"]) if v.startswith(UPGRADE_KEY)
                    and UpgradeRequest.decode(v).id == outcome["upgrade"])
                for j in range(1, strata + 1):
                    have = topics.get(f"stratum.{j}", [])
                    at[(f"reasoner.{k}", f"stratum.{j}")] = next(
                        (i for i, v in enumerate(have) if v.startswith(SEED_KEY)
                         and orjson.loads(v)["seed"] == outcome["upgrade"]), len(have))
        strata = max(strata, len(outcome["strata"]))
        reads["output"] = [f"stratum.{j}" for j in range(1, strata + 1)]
        stages["output"] = roundtrip(stages["output"], fresh("output"))
    topics: dict[str, list[bytes]] = {}
    at: dict[tuple[str, str], int] = {}
    answers: list[bytes] = []
    said: list[dict] = []
    rng = random.Random(seed)
    inputs = [orjson.dumps(e) for e in first] + [upgrade] + [e if isinstance(e, bytes) else orjson.dumps(e)
                                                             for e in second]  # (bytes: another upgrade record)

    def emit(name: str, outs, lines) -> None:
        answers.extend(lines)
        for o in outs:
            if o.topic == "control":
                UpgradeOutcome.model_validate_json(o.value)
                said.append(orjson.loads(o.value))
                if "refused" not in said[-1]:
                    noticed.append(said[-1])  # the supervisor acts on it a while later
            elif o.topic in ("ingested", "grounded"):
                topics.setdefault(o.topic, []).append(o.value)
            elif o.topic == "stratum":
                topics.setdefault(name.replace("reasoner", "stratum"), []).append(o.value)

    offset = 0
    noticed: list[dict] = []
    while True:
        moved = False
        if noticed and (rng.randrange(3) == 0 or not any(topics.values())):
            supervise(noticed.pop(0))
            moved = True
        for name in rng.sample(sorted(stages), len(stages)):
            if name == "ingest":
                n = min(len(inputs), rng.randint(1, 3))
                if n:
                    batch = [("facts", "chronolog.facts", 0, offset + i, inputs.pop(0)) for i in range(n)]
                    offset += n
                    emit(name, *stages[name].process(batch, now=0.0))
                    moved = True
                continue
            batch = []
            for topic in reads[name]:
                have = topics.get(topic, [])
                pos = at.get((name, topic), 0)
                take = have[pos:pos + rng.randint(1, 3)]
                at[(name, topic)] = pos + len(take)
                if read is not None:
                    read.setdefault(name, []).extend((topic, pos + i) for i in range(len(take)))
                batch += [(topic if topic != "ingested" else "ingested", topic, 0, pos + i, v) for i, v in enumerate(take)]
            if batch:
                more = name.startswith("reasoner") and rng.randrange(2) == 0
                emit(name, *stages[name].process(batch, now=0.0, more=more))
                moved = True
                if more and (restarts and rng.randrange(restarts) == 0 or rng.randrange(3) == 0):
                    emit(name, *stages[name].process([], now=0.0))  # the batch ending the epoch
                    more = False
                if restarts and rng.randrange(restarts) == 0:  # a restart from its stored state
                    role, _, k = name.partition(".")
                    stages[name] = roundtrip(stages[name], fresh(role, int(k) if k else None))
        if not moved and noticed:
            continue
        for name in sorted(stages):  # the epochs end
            if name.startswith("reasoner") and stages[name].waiting:
                emit(name, *stages[name].process([], now=0.0))
                moved = True
        if not moved:
            outs, lines = stages["ingest"].process([], now=1e9)  # input went quiet: the latest point closes
            if not outs:
                break
            emit("ingest", outs, lines)
    return [json.loads(a) for a in answers], said


def _run_upgrade(tmp_path, capsys, at: str, new: str, events: list[dict], old: str = OLD) -> list[dict]:
    (tmp_path / "old.lars").write_text(old)
    (tmp_path / "new.lars").write_text(new)
    (tmp_path / "in.jsonl").write_text("".join(json.dumps(e) + "\n" for e in events))
    capsys.readouterr()
    assert main(["run", str(tmp_path / "old.lars"), "--input", str(tmp_path / "in.jsonl"),
                 "--upgrade", f"{at}={tmp_path / 'new.lars'}"]) == 0
    return [json.loads(x) for x in capsys.readouterr().out.splitlines()]


def test_plain_run_of_the_driver_means_run():
    """(The driver itself: without an upgrade the fleet means what run prints.)"""
    got, said = per_stratum(EVENTS, _request("3", OLD), LATE)
    assert len(said) == 2 and all(s["at"] == "3" for s in said)  # the same program: every stratum kept
    assert meaning(got, SPAN, running=True) == {
        ("a", ("x",), t) for t in (1, 2, 3)} | {("a", ("y",), t) for t in (3, 4, 5)} | {
        ("a", ("z",), t) for t in (2, 3, 4, 12, 13, 14)} | {("a", ("w",), t) for t in (6, 7, 8)} | {
        ("a", ("v",), t) for t in (9, 10, 11)} | {("b", ("x",), t) for t in (1, 3)} | {
        ("b", ("y",), t) for t in (3, 4, 5)} | {("b", ("z",), t) for t in (2, 3, 4, 12, 13, 14)} | {
        ("b", ("w",), t) for t in (6, 7, 8)} | {("b", ("v",), t) for t in (9, 11)} | {
        ("c", ("x",), 2), ("c", ("v",), 10)}


def _means_run_upgrade(tmp_path, capsys, old: str, new: str, at, seed: int, strata: int) -> None:  # noqa: ANN001
    """A per-stratum fleet upgraded from ``old`` to ``new`` (restarted 4 times): each of its
    ``strata`` reasoners applied it at one T (``at`` where given), its answers mean ``run
    --upgrade`` at that T, and the upgrade changes them."""
    got, said = per_stratum(EVENTS, _request(at, new), LATE, seed=seed, restarts=4, old=old)
    assert sorted(s["service"] for s in said) == [f"reasoner.{k}" for k in range(1, strata + 1)], said
    times = {s["at"] for s in said}
    assert len(times) == 1, said
    used = times.pop()
    if at is not None:
        assert used == at
    want = _run_upgrade(tmp_path, capsys, used, new, EVENTS + LATE, old)
    assert meaning(got, SPAN, running=True) == meaning(want, SPAN)
    assert meaning(want, SPAN) != meaning(_run_upgrade(tmp_path, capsys, used, old, EVENTS + LATE, old), SPAN)


@pytest.mark.parametrize(("old", "new"), [(OLD, TOP), (OLD, BOTTOM), (WINDOWED, WINDOWED_TOP)], ids=["top", "bottom", "window"])
@pytest.mark.parametrize("at", ["4", "7", None])
@pytest.mark.parametrize("seed", [0, 1, 2])
def test_per_stratum_upgrade_means_run_upgrade(tmp_path, capsys, old, new, at, seed):
    _means_run_upgrade(tmp_path, capsys, old, new, at, seed, strata=2)


@pytest.mark.parametrize(("new", "after"), [("a(X) :- b(X) [3].\n", set()), ("a(X) :- b(X) [3].\nb(2).\n", {2})],
                         ids=["removed", "changed"])
@pytest.mark.parametrize("seed", [0, 1, 2])
def test_a_changed_program_fact_changes_the_stratum_reading_it(tmp_path, capsys, new, after, seed):
    """The program fact b(1) holds at every point, so a(1) does before T=2; from 2 on a(X)
    for the new program's facts b(X) only: a's stratum changed though its rule did not."""
    old = "a(X) :- b(X) [3].\nb(1).\n"
    events = [{"t": 0}, {"t": 5, "pred": "p", "args": [1]}, {"t": 7}]
    got, said = per_stratum(events, _request("2", new), [{"t": 9}], seed=seed, restarts=3, old=old)
    assert [s.get("at") for s in said] == ["2"], said
    want = {("a", (1,), 0), ("a", (1,), 1)} | {("a", (x,), t) for x in after for t in range(2, 10)}
    assert meaning(got, (0, 9), running=True) == want
    assert meaning(_run_upgrade(tmp_path, capsys, "2", new, events + [{"t": 9}], old), (0, 9)) == want


@pytest.mark.parametrize(("new", "versions"), [(OLD, [0, 0]), (TOP, [0, 1]), (BOTTOM, [1, 1])])
def test_an_unchanged_stratum_keeps_its_state_a_changed_one_gets_a_version(new, versions):
    """Strata by content: TOP changes b's rule only (a and c keep their reasoner); BOTTOM
    widens a's window, so b, whose rule text is the same, reads a changed a."""
    stages: dict = {}
    per_stratum(EVENTS, _request("4", new), LATE, stages=stages)
    assert [len(stages[f"reasoner.{k}"].later) for k in (1, 2)] == versions


def test_a_changed_strata_newest_version_is_journaled_and_the_snapshot_does_not_grow():
    stage = _layout(OLD).stage(StageSpec("reasoner", stratum=1, idle_flush=0.0))
    for j in stage.journals().values():
        j.track()

    def grounded(points: list[tuple[int, list]], upto: int) -> list[tuple]:
        return [("grounded", "chronolog.grounded", 0, 0, orjson.dumps({"upto": upto, "first": 0, "points": points}))]

    stage.process(grounded([(t, [["p", [f"k{t}"], False]]) for t in range(0, 10)], 9))
    stage.process([("grounded", "chronolog.grounded", 0, 1, _request("5", BOTTOM))])
    assert len(stage.later) == 1
    for j in stage.journals().values():
        j.take()
    size = len(snapshot_bytes(stage))
    stage.process(grounded([(t, [["p", [f"k{t}"], False]]) for t in range(10, 3000)], 2999))
    assert len(stage.journals()["vlog"].take()) > 2900 and not stage.journals()["log"].take()
    assert len(snapshot_bytes(stage)) < size + 2000
    again = roundtrip(stage, _layout(OLD).stage(StageSpec("reasoner", stratum=1, idle_flush=0.0)))
    tail = grounded([(3000, [["p", ["x"], False]])], 3000) + [
        ("grounded", "chronolog.grounded", 0, 9, orjson.dumps({"late": [[7, "p", ["late"], False]]}))]
    assert [o.value for o in again.process(tail)[0]] == [o.value for o in stage.process(tail)[0]]


@pytest.mark.parametrize(("old", "new", "reason"), [
    (OLD, "a(X) :- p(X) [2].\nb(X) :- a(X), not c(X), r(X).\nc(X) :- q(X).\n", "did not keep: r/1"),
    # d derived in stratum 2 from T on: its stream facts (d#in) are input the service did not keep
    (OLD, OLD.replace("[2]", "[3]") + "d(X) :- b(X) [2], not c(X).\n", "did not keep: d/1"),
    # a dated by an @-head in the new program only: its atoms before t do not convert
    (OLD, "a(X) at U :- p(X) at U [2].\nb(X) :- a(X), not c(X).\nc(X) :- q(X).\n", "kept with its times"),
    # not stratified (a request sent by hand: `chronolog upgrade` refuses it before sending)
    (OLD, "a(X) :- p(X) [2], not c(X).\nc(X) :- q(X), not a(X).\nb(X) :- a(X).\n", "the new program is not stratified"),
    (OLD, "a(X) at U :- p(X) at U [2], not c(X).\nc(X) :- q(X), not a(X).\n", "@-heads and is not stratified"),
])
def test_what_the_strata_cannot_do_exactly_is_refused_by_every_reasoner(old, new, reason):
    got, said = per_stratum(EVENTS, _request("4", new), LATE, old=old)
    assert len(said) == 2 and all(reason in s.get("refused", "") for s in said), said
    plain, _ = per_stratum(EVENTS, _request("4", old), LATE, old=old)
    assert meaning(got, SPAN) == meaning(plain, SPAN)  # nothing changed


# a lower stratum changed and read through a window by the one above it: a window over a derived
# predicate sees only what the evaluation at t derives (LARS.md), which the stratum below sends
# with the content of t, from T on the new program's (and WIDER's a holds longer, so b does)
WIDER = "a(X) :- p(X) [3].\nb(X) :- a(X) [1], not c(X).\nc(X) :- q(X).\n"
NARROWER = "a(X) :- p(X) [1].\nb(X) :- a(X) [2], not c(X).\nc(X) :- q(X).\n"
NEGATED = "a(X) :- p(X) [2], not q(X) [1].\nb(X) :- a(X) [1], not c(X).\nc(X) :- q(X).\n"
# three strata, each reading the one below through a window; the bottom one changes
CHAIN3 = "a(X) :- p(X) [2].\nb(X) :- a(X) [2], not c(X).\nc(X) :- q(X).\nd(X) :- a(X) [3], not b(X) [1].\n"
CHAIN3_BOTTOM = CHAIN3.replace("p(X) [2]", "p(X) [3]")
# an added stratum reading a changed one through a window
ADDED_READS = WIDER + "d(X) :- a(X) [2], not b(X).\n"


@pytest.mark.parametrize(("old", "new", "strata"), [
    (WINDOWED, WIDER, 2), (WINDOWED, NARROWER, 2), (WINDOWED, NEGATED, 2), (CHAIN3, CHAIN3_BOTTOM, 3),
    (WINDOWED, ADDED_READS, 3),
], ids=["wider", "narrower", "negated", "chain3", "added-reads"])
@pytest.mark.parametrize("at", ["3", "4", "7", "11", None])
@pytest.mark.parametrize("seed", [0, 1, 2])
def test_a_stratum_reading_a_changed_one_through_a_window_means_run_upgrade(tmp_path, capsys, old, new, strata,
                                                                             at, seed):
    """T in the past (3, 4, 7: events already evaluated) and in the future (11), late events
    and a retraction on both sides of it; the fleet restarted 4 times on the way."""
    _means_run_upgrade(tmp_path, capsys, old, new, at, seed, strata)


@pytest.mark.parametrize("cut", [4, len(EVENTS)], ids=["future", "past"])
@pytest.mark.parametrize("seed", [0, 1, 2])
def test_a_window_over_a_changed_stratum_hand_derived(cut, seed):
    """WINDOWED -> WIDER (a's window 2 -> 3) at T=5, on EVENTS (p(x)@1, q(x)@2, p(y)@3, q(y)@5).
    b's window [1] over the derived a sees only what the evaluation at t derives (LARS.md: no
    @-heads, so a at t), never the a of t-1: b = a and not c.  Old: a(x) 1..3, a(y) 3..5, b(x)
    1,3, b(y) 3,4.  New: a(x) 1..4, a(y) 3..6, b(x) 1,3,4, b(y) 3,4,6.  The splice: the old
    answers before 5, the new from 5 on.  T lies after the input read (future) or inside it,
    already evaluated (past: a(y)@5 restated, b(y)@6 added)."""
    got, said = per_stratum(EVENTS[:cut], _request("5", WIDER), EVENTS[cut:], seed=seed, restarts=3, old=WINDOWED)
    assert [s.get("at") for s in said] == ["5", "5"], said
    old = {("a", ("x",), t) for t in (1, 2, 3)} | {("a", ("y",), t) for t in (3, 4)} | {
        ("b", ("x",), t) for t in (1, 3)} | {("b", ("y",), t) for t in (3, 4)} | {("c", ("x",), 2)}
    new = {("a", ("y",), t) for t in (5, 6)} | {("b", ("y",), 6), ("c", ("y",), 5)}
    assert meaning(got, (0, 8), running=True) == old | new


@pytest.mark.parametrize(("old", "new"), [(OLD, WINDOWED_TOP), (WINDOWED, TOP)], ids=["window-added", "window-dropped"])
@pytest.mark.parametrize("at", ["3", "4", "7", "11", None])
@pytest.mark.parametrize("seed", [0, 1, 2])
def test_a_predicate_read_through_a_window_in_one_program_only_means_run_upgrade(tmp_path, capsys, old, new, at,
                                                                                 seed):
    """a is kept with its times where b reads it through a window (WINDOWED's), without them
    where b reads it now: a's stratum sends each time point in the shape of the version
    evaluating it, and each reader (the reasoners' versions, the output) takes it in its own."""
    _means_run_upgrade(tmp_path, capsys, old, new, at, seed, strata=2)


@pytest.mark.parametrize("cut", [4, len(EVENTS) + 1], ids=["future", "past"])
@pytest.mark.parametrize("seed", [0, 1, 2, 3])
def test_a_window_added_over_a_derived_predicate_with_stream_facts_hand_derived(cut, seed):
    """OLD -> WINDOWED_TOP at T=4: b reads a through [1] and not z from then on; the stream also
    has a fact of the derived a, a(u)@7.  a: p within [2], or a(u) at 7; c: q now.  OLD's b = a
    and not c at each point.  From 4 on a is kept with its times: the evaluation at 8 derives
    a(u)@7 through a's stream facts (within b's window, not an answer: a's answers are those at
    the time evaluated), so b(u)@8 too; b(z) goes from 4 on.  The output serves a without its
    times (OLD's shape): a(u) only at 7."""
    stream = [*EVENTS, {"t": 7, "pred": "a", "args": ["u"]}, *LATE]
    got, said = per_stratum(stream[:cut], _request("4", WINDOWED_TOP), stream[cut:], seed=seed, restarts=3)
    assert [s.get("at") for s in said] == ["4", "4"], said
    a = {("a", ("x",), t) for t in (1, 2, 3)} | {("a", ("y",), t) for t in (3, 4, 5)} | {
        ("a", ("z",), t) for t in (2, 3, 4, 12, 13, 14)} | {("a", ("w",), t) for t in (6, 7, 8)} | {
        ("a", ("v",), t) for t in (9, 10, 11)} | {("a", ("u",), 7)}
    b = {("b", ("x",), t) for t in (1, 3)} | {("b", ("y",), t) for t in (3, 4, 5)} | {("b", ("z",), t) for t in (2, 3)} | {
        ("b", ("w",), t) for t in (6, 7, 8)} | {("b", ("v",), t) for t in (9, 11)} | {("b", ("u",), t) for t in (7, 8)}
    assert meaning(got, SPAN, running=True) == a | b | {("c", ("x",), 2), ("c", ("v",), 10)}


THREE = OLD + "d(X) :- q(X) [3], not b(X).\n"  # a third stratum on top
NEW_PRED = OLD + "e(X) :- a(X), q(X).\n"  # another answer predicate in the bottom stratum
TWO_CHANGED = TOP


@pytest.mark.parametrize(("old", "new", "strata"), [
    (OLD, THREE, 3), (THREE, TWO_CHANGED, 3), (OLD, NEW_PRED, 2), (THREE, OLD, 3),
    # the added stratum reads an unchanged one through a window (a: kept with its times in both)
    (WINDOWED, WINDOWED + "d(X) :- a(X) [1], not b(X).\n", 3),
], ids=["grow", "shrink", "new-answers", "remove-top", "grow-window"])
@pytest.mark.parametrize("at", ["4", "7", None])
@pytest.mark.parametrize("seed", [0, 1, 2])
def test_an_upgrade_changing_the_strata_or_answers_means_run_upgrade(tmp_path, capsys, old, new, strata, at, seed):
    """The number of strata and the answer predicates change: the supervisor (the driver's
    ``supervise``, acting a while after the outcome) starts an added stratum's reasoner, which
    reads its inputs from their start (and starts from the seeds at the upgrade), and restarts the output; a removed stratum's reasoner
    withdraws its answers from T on and stays for the corrections before T."""
    _means_run_upgrade(tmp_path, capsys, old, new, at, seed, strata)


@pytest.mark.parametrize("seed", [0, 1, 2, 3])
def test_chained_upgrades_grow_then_shrink_the_strata(tmp_path, capsys, seed):
    """OLD (2 strata) -> THREE at 4 -> TOP (2 strata, b changed) at 9: reasoner 3 is started
    by the first and withdraws its answers from 9 on by the second; late events everywhere."""
    second = [*LATE[:3], _request("9", TOP, "r2"), *LATE[3:]]
    got, said = per_stratum(EVENTS, _request("4", THREE), second, seed=seed, restarts=4)
    assert sorted((s["upgrade"], s["service"]) for s in said) == [
        (r, f"reasoner.{k}") for r in ("r1", "r2") for k in (1, 2, 3)], said
    (tmp_path / "old.lars").write_text(OLD)
    (tmp_path / "three.lars").write_text(THREE)
    (tmp_path / "top.lars").write_text(TOP)
    (tmp_path / "in.jsonl").write_text("".join(json.dumps(e) + "\n" for e in EVENTS + LATE))
    capsys.readouterr()
    assert main(["run", str(tmp_path / "old.lars"), "--input", str(tmp_path / "in.jsonl"),
                 "--upgrade", f"4={tmp_path / 'three.lars'}", "--upgrade", f"9={tmp_path / 'top.lars'}"]) == 0
    want = meaning([json.loads(x) for x in capsys.readouterr().out.splitlines()], SPAN)
    assert any(p == "d" for p, _, _ in want) and not any(p == "d" and t >= 9 for p, _, t in want)
    assert meaning(got, SPAN, running=True) == want


def test_a_restarted_output_writes_the_answers_of_a_predicate_it_did_not_serve_from_where_they_begin():
    """The output restarted to serve an upgrade's new answer predicate after the strata already
    sent its content: what it stored and could not import comes out, as corrections."""
    layout = _layout(OLD)

    def records(t: int, bottom: list) -> list[tuple]:
        return [(f"stratum.{k}", f"chronolog.stratum.{k}", 0, t, orjson.dumps(
            {"t": t, "t1": 0, "ok": True, "add": bottom if k == 1 else [], "del": []})) for k in (1, 2)]

    output = layout.stage(StageSpec("output"))
    out = output.process(records(0, []) + records(1, [[["c", 1], [["x"]]]]))[1]
    out += output.process(records(2, [[["e", 1], [["x"]]]]) + records(3, []))[1]
    assert not [x for x in out if b'"e"' in x]  # (a predicate the old program has not: not served)
    again = roundtrip(output, layout.stage(StageSpec("output", versions=((("new.lars", NEW_PRED),),))))
    out += again.process(records(4, []))[1]
    got = meaning([json.loads(x) for x in out], (0, 4), running=True)
    assert got == {("c", ("x",), t) for t in (1, 2, 3, 4)} | {("e", ("x",), t) for t in (2, 3, 4)}  # (records are diffs)


# ---------------------------------------------------------------------------------------------
# random program pairs: the fleet's answers are the splice of two plain runs, or it refuses


RULES = [
    "q(X) :- p(X).",
    "q(X) :- p(X) [2].",
    "q(X) :- p(X) [1 #].",
    "q(X) :- p(X) always [1].",
    "q(X) :- p(X) [2], not r(X) [1].",
    "q(X) :- r(X) [3].",
    "s(X) :- q(X), not r(X).",
    "s(X) :- p(X), r(X) [2].",
    "u(X) :- s(X), not q(X).",
    "u(X) :- p(X), not s(X).",
    # derived predicates read through windows (sent with their times in both programs when both read them so)
    "s(X) :- q(X) [2], not r(X).",
    "u(X) :- s(X) [1], not q(X) [1].",
    "u(X) :- q(X) [3], p(X), not s(X) [2].",
]
EVENT = st.builds(lambda t, pred, arg, retract: {"t": t, "pred": pred, "args": [arg],
                                                  **({"op": "retract"} if retract else {})},
                  st.integers(0, 10), st.sampled_from(["p", "r"]), st.sampled_from(["a", "b"]), st.booleans())


def _plain(tmp, text: str, events: list[dict]) -> list[dict]:
    (tmp / "p.lars").write_text(text)
    (tmp / "in.jsonl").write_text("".join(json.dumps(e) + "\n" for e in events))
    out = io.StringIO()
    with contextlib.redirect_stdout(out), contextlib.redirect_stderr(io.StringIO()):
        assert main(["run", str(tmp / "p.lars"), "--input", str(tmp / "in.jsonl")]) == 0
    return [json.loads(x) for x in out.getvalue().splitlines()]


def _chained(old: str, first: list[dict], upgrade: bytes, second: list[dict]) -> tuple[list[dict], list[dict]]:
    stage = _layout(old).stage(StageSpec("chain", idle_flush=1000.0, chained_ingest=True))
    out: list[bytes] = []
    said: list[dict] = []
    for batch in ([orjson.dumps(e) for e in first], [upgrade], [orjson.dumps(e) for e in second]):
        leaving, lines = stage.process([(None, "chronolog.facts", 0, i, v) for i, v in enumerate(batch)], now=0.0)
        out += lines
        said += [orjson.loads(o.value) for o in leaving if o.topic == "control"]
        stage = roundtrip(stage, _layout(old).stage(StageSpec("chain", idle_flush=1000.0, chained_ingest=True)))
    out += stage.process([], now=1e9)[1]
    return [json.loads(x) for x in out], said


@settings(max_examples=60, deadline=None, suppress_health_check=list(HealthCheck))
@given(old=st.lists(st.sampled_from(RULES), min_size=1, max_size=3, unique=True),
       new=st.lists(st.sampled_from(RULES), min_size=1, max_size=3, unique=True),
       events=st.lists(EVENT, min_size=1, max_size=12), cut=st.integers(0, 12), at=st.integers(0, 11),
       seed=st.integers(0, 3))
def test_random_program_pairs_splice_or_refuse(tmp_path_factory, old, new, events, cut, at, seed):
    tmp = tmp_path_factory.mktemp("pair")
    old_text, new_text = "\n".join(old) + "\n", "\n".join(new) + "\n"
    events = [{"t": 0}, *events, {"t": 11}]
    first, second = events[:cut + 1], events[cut + 1:]
    span = (0, 11)
    before = {a for a in meaning(_plain(tmp, old_text, events), span) if a[2] < at}
    after = {a for a in meaning(_plain(tmp, new_text, events), span) if a[2] >= at}
    request = _request(str(at), new_text)
    got, said = _chained(old_text, first, request, second)
    assert [s.get("at") for s in said] == [str(at)], said
    assert meaning(got, span, running=True) == before | after
    old_plan, new_plan = (lars_plan(lookup("lars").parse([("x", t)])) for t in (old_text, new_text))
    why = per_stratum_refusal(old_plan, new_plan)
    event("per stratum: " + ("applied" if why is None else why.split(" ")[1]))
    got, said = per_stratum(first, request, second, seed=seed, restarts=3, old=old_text)
    if why is None:
        strata = max(old_plan.fleet_strata, new_plan.fleet_strata)  # (added strata: reasoners of their own)
        assert len(said) == strata and all(s.get("at") == str(at) for s in said), said
        assert meaning(got, span, running=True) == before | after
    else:
        assert said and all(why in s.get("refused", "") for s in said), (why, said)
        assert meaning(got, span) == meaning(_plain(tmp, old_text, events), span)


@pytest.mark.parametrize("new", [TOP, BOTTOM], ids=["top", "bottom"])
@pytest.mark.parametrize("at", ["4", "7"])
def test_the_top_strata_span_at_once_sends_what_stepping_it_does(monkeypatch, new, at):
    """b's stratum reads only the point it evaluates: its new version (TOP changes its rule; BOTTOM
    a's, which it reads) evaluates [T, now] in one step of its rules over time-stamped atoms
    (pointwise.py: at the request, or when the corrections from below are in), the fleet
    restarted on the way; its answers are line for line those of the same fleet stepping every
    point (in the seeded orders where it had evaluated past T when the upgrade came, at least)."""
    import chronolog.dialects.lars.stages as stages_module  # noqa: PLC0415 (the function the stage calls)

    at_once = stages_module.advance_pointwise
    first = EVENTS + [{"t": t, "pred": "p", "args": [f"k{t % 3}"]} for t in range(9, 20)]
    later = [{"t": 6, "pred": "p", "args": ["z"]}, {"t": 21, "pred": "q", "args": ["k1"]}, {"t": 23}]
    span = (0, 23)
    lifted = 0
    for seed in range(8):
        calls: list[bool] = []

        def counted(r, until, calls=calls):  # noqa: ANN001, ANN202
            calls.append(at_once(r, until))
            return calls[-1]

        monkeypatch.setattr(stages_module, "advance_pointwise", counted)
        got, said = per_stratum(first, _request(at, new), later, seed=seed, restarts=4)
        lifted += True in calls
        monkeypatch.setattr(stages_module, "advance_pointwise", lambda r, until: False)
        stepped, said_stepped = per_stratum(first, _request(at, new), later, seed=seed, restarts=4)
        assert got == stepped and said == said_stepped
        assert meaning(got, span) != meaning(per_stratum(first, _request(at, OLD), later, seed=seed)[0], span)
    assert lifted >= 2
