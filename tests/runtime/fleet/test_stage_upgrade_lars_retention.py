"""``chronolog upgrade`` on LARS fleets with a finite ``--retention``, at the stages without a
broker: ingest stamps on the request the time from which every service holds the input (its
latest time - retention - 1), and every reasoner of a fleet of one service per stratum (and
every chain of a partitioned chained fleet) takes the upgrade when the new program's
``T - reach`` lies there, or refuses it with the spans, alike — whatever each one has
evaluated and pruned.  Taken, the answers mean what ``chronolog run --upgrade --retention``
prints on the same stream (late events on both sides of T, some too late for both)."""

from __future__ import annotations

import contextlib
import io
import json

import pytest
from hypothesis import HealthCheck, assume, event, given, settings
from hypothesis import strategies as st
from meaning import meaning
from test_stage_upgrade_lars import FIRST, SECOND, _records
from test_stage_upgrade_lars import NEW as CHAIN_NEW
from test_stage_upgrade_lars import OLD as CHAIN_OLD
from test_stage_upgrade_lars import _request as chain_request
from test_stage_upgrade_lars_strata import OLD, RULES, THREE, _request, per_stratum

from chronolog.cli.main import main
from chronolog.dialects.lars.changes import per_stratum_refusal
from chronolog.dialects.lars.hooks import lars_plan
from chronolog.dialects.lars.plan import plan_back
from chronolog.dialects.registry import RunOptions, lookup
from chronolog.stages.interface import StageSpec
from chronolog.state.snapshots import roundtrip

BOTTOM = OLD.replace("p(X) [2]", "p(X) [4]")  # a's window widened: the new program reaches 4 back
TUPLE = OLD.replace("p(X) [2]", "p(X) [2 #]")  # a tuple window counts facts: all earlier input

# the stream up to 12 when the request arrives (ingest's latest: 12, so with --retention 3 the
# fleet holds the input from 12 - 4 = 8 on); then late events before T=12 (p(z)@11) and from it
# on (p(u)@12, after 13), one too late for both (p(v)@5: older than 13 - 1 - 3)
FIRST_S = [{"t": 0}, {"t": 1, "pred": "p", "args": ["x"]}, {"t": 2, "pred": "q", "args": ["x"]},
           {"t": 9, "pred": "p", "args": ["y"]}, {"t": 10, "pred": "q", "args": ["y"]}, {"t": 12}]
LATE_S = [{"t": 11, "pred": "p", "args": ["z"]}, {"t": 13, "pred": "p", "args": ["w"]},
          {"t": 12, "pred": "p", "args": ["u"]}, {"t": 5, "pred": "p", "args": ["v"]}, {"t": 16}]
SPAN = (0, 16)


def _run_upgrade(tmp_path, capsys, at: str, new: str, events: list[dict], retention: int,  # noqa: ANN001
                 span: tuple[int, int] = SPAN, old: str = OLD) -> set:
    """What ``chronolog run old --upgrade AT=new --retention R`` means on ``events``
    (``capsys``: pytest's, or None to take the output here)."""
    (tmp_path / "old.lars").write_text(old)
    (tmp_path / "new.lars").write_text(new)
    (tmp_path / "in.jsonl").write_text("".join(json.dumps(e) + "\n" for e in events))
    argv = ["run", str(tmp_path / "old.lars"), "--input", str(tmp_path / "in.jsonl"), "--retention", str(retention),
            "--upgrade", f"{at}={tmp_path / 'new.lars'}"]
    if capsys is None:
        out = io.StringIO()
        with contextlib.redirect_stdout(out), contextlib.redirect_stderr(io.StringIO()):
            assert main(argv) == 0
        text = out.getvalue()
    else:
        capsys.readouterr()
        assert main(argv) == 0
        text = capsys.readouterr().out
    return meaning([json.loads(x) for x in text.splitlines()], span)


@pytest.mark.parametrize("seed", [0, 1, 2])
def test_taken_within_the_retention_hand_derived(tmp_path, capsys, seed):
    """OLD -> BOTTOM at T=12 with --retention 3: T - 4 = 8 is where the input is held from.
    Before 12 OLD's answers: a = p within [2], c = q now, b = a and not c: a(x) 1..3, b(x) 1,3,
    c(x)@2, a(y) 9..11, b(y) 9,11, c(y)@10, and the late p(z)@11 gives a(z), b(z) at 11.  From
    12 on BOTTOM's (p within [4]): a(y), b(y) 12..13, a(z), b(z) 12..15, a(w), b(w) 13..16, the
    late p(u)@12 gives a(u), b(u) 12..16; p(v)@5 is too late (ignored)."""
    got, said = per_stratum(FIRST_S, _request("12", BOTTOM), LATE_S, seed=seed, restarts=3, retention=3)
    assert sorted((s["service"], s.get("at")) for s in said) == [("reasoner.1", "12"), ("reasoner.2", "12")], said

    def both(x: str, times) -> set:  # noqa: ANN001
        return {(p, (x,), t) for p in "ab" for t in times}

    old = {("a", ("x",), t) for t in (1, 2, 3)} | {("b", ("x",), t) for t in (1, 3)} | {("c", ("x",), 2)} | {
        ("a", ("y",), t) for t in (9, 10, 11)} | {("b", ("y",), t) for t in (9, 11)} | {("c", ("y",), 10)} | both("z", [11])
    new = both("y", [12, 13]) | both("z", range(12, 16)) | both("w", range(13, 17)) | both("u", range(12, 17))
    assert meaning(got, SPAN, running=True) == old | new
    assert meaning(got, SPAN, running=True) == _run_upgrade(tmp_path, capsys, "12", BOTTOM, FIRST_S + LATE_S, 3)


@pytest.mark.parametrize("seed", [0, 1])
def test_refused_beyond_the_retention_by_every_reasoner_with_the_spans(tmp_path, capsys, seed):
    """T=11: BOTTOM needs the input from 7 on, the fleet holds it from 8 on: every reasoner
    refuses, naming both, and the answers stay OLD's."""
    got, said = per_stratum(FIRST_S, _request("11", BOTTOM), LATE_S, seed=seed, restarts=3, retention=3)
    want = ("error: the retained input does not reach far enough back: the new program's answers from T=11 on need "
            "input from 7 on ([T - 4, now]), the retention kept it from 8 on (--retention 3)")
    assert sorted(s["service"] for s in said) == ["reasoner.1", "reasoner.2"] and all(
        s.get("refused") == want for s in said), said
    plain, _ = per_stratum(FIRST_S, _request("11", OLD), LATE_S, seed=seed, retention=3)
    assert meaning(got, SPAN, running=True) == meaning(plain, SPAN, running=True) == _run_upgrade(
        tmp_path, capsys, "11", OLD, FIRST_S + LATE_S, 3)


def test_a_program_reading_all_earlier_input_is_taken_only_while_nothing_is_forgotten(tmp_path, capsys):
    """A tuple window counts facts, which may lie anywhere before: taken while ingest's latest
    time (4) minus 4 is not after the first (0): the stamp says the whole input is held; on
    the longer stream (12: held from 8) refused."""
    short, late = FIRST_S[:3] + [{"t": 4}], [{"t": 3, "pred": "p", "args": ["z"]}, {"t": 6, "pred": "q", "args": ["z"]}]
    got, said = per_stratum(short, _request("3", TUPLE), late, retention=3)
    assert [s.get("at") for s in said] == ["3", "3"], said
    (tmp_path / "short").mkdir()
    assert meaning(got, SPAN, running=True) == _run_upgrade(tmp_path / "short", capsys, "3", TUPLE, short + late, 3)
    _, said = per_stratum(FIRST_S, _request("12", TUPLE), LATE_S, retention=3)
    assert len(said) == 2 and all(s.get("refused", "").endswith(
        "answers from T=12 on need all earlier input, the retention kept it from 8 on (--retention 3)") for s in said), said


# a stream long enough that every reasoner has pruned its log (every 64 points), at its own pace
LONG = [{"t": 0}] + [e for t in range(1, 150) for e in (
    [{"t": t, "pred": "p", "args": [f"k{t % 7}"]}] + ([{"t": t, "pred": "q", "args": [f"k{t % 5}"]}] if t % 3 == 0 else []))]
LONG_LATE = [{"t": 148, "pred": "q", "args": ["k1"]}, {"t": 151, "pred": "p", "args": ["n"]},
             {"t": 149, "pred": "p", "args": ["m"]}, {"t": 150, "pred": "q", "args": ["k2"], "op": "retract"},
             {"t": 150, "pred": "q", "args": ["k2"]}, {"t": 120, "pred": "p", "args": ["old"]}, {"t": 156}]


@pytest.mark.parametrize(("new", "at", "strata"), [(BOTTOM, "149", 2), (BOTTOM, None, 2), (THREE, "148", 3)],
                         ids=["at-the-edge", "default-T", "added-stratum"])
@pytest.mark.parametrize("seed", [0, 1])
def test_taken_after_the_logs_were_pruned_means_run_upgrade(tmp_path, capsys, new, at, strata, seed):
    """Ingest's latest is 149, so with --retention 4 the input is held from 144 on: BOTTOM at
    149 (needs 145 on), without --at (T=150), and THREE at 148 (its added stratum reads q
    through [3]: 145) are taken by every reasoner, and mean run --upgrade --retention 4."""
    got, said = per_stratum(LONG, _request(at, new), LONG_LATE, seed=seed, restarts=6, retention=4)
    assert sorted(s["service"] for s in said) == [f"reasoner.{k}" for k in range(1, strata + 1)], said
    times = {s.get("at") for s in said}
    assert times == {at or "150"}, said
    span = (0, 156)
    want = _run_upgrade(tmp_path, capsys, at or "150", new, LONG + LONG_LATE, 4, span)
    assert meaning(got, span, running=True) == want
    assert want != _run_upgrade(tmp_path, capsys, at or "150", OLD, LONG + LONG_LATE, 4, span)


# after the request: late events before T=10 (within the retention, and one too late) and from it on
TAIL = [{"t": 9, "pred": "p", "args": ["d"]}, {"t": 11, "pred": "s", "args": ["d"]}, {"t": 10, "pred": "s", "args": ["c"]},
        {"t": 2, "pred": "p", "args": ["e"]}, {"t": 12, "pred": "p", "args": ["f"]}, {"t": 13, "pred": "s", "args": ["f"]},
        {"t": 15}]


def _partitioned(at: str, retention: int, parts: int = 2) -> tuple[list[dict], list[dict]]:
    """Ingest and ``parts`` chains (``up --chain --partitions N --retention R``) fed FIRST and
    SECOND, the request, then TAIL and idle: the answers, and what each chain said."""
    row = lookup("lars")
    layout = row.layout(row.parse([("prog", CHAIN_OLD)]), RunOptions())
    ingest = layout.stage(StageSpec("ingest", partitions=parts, idle_flush=1000.0, retention=retention))

    def chain(p: int):  # noqa: ANN202
        return layout.stage(StageSpec("chain", partition=p, partitions=parts, idle_flush=1000.0, retention=retention))

    chains = [chain(p) for p in range(parts)]
    said: list[dict] = []
    out: list[bytes] = []

    def feed(batch: list[tuple], now: float = 0.0) -> None:
        outs, _ = ingest.process(batch, now=now)
        for p, c in enumerate(chains):
            mine = [("ingested", "chronolog.ingested", p, i, o.value) for i, o in enumerate(outs)
                    if o.topic == "ingested" and o.partition == p]
            leaving, lines = c.process(mine, now=now)
            out.extend(lines)
            said.extend(json.loads(o.payload) for o in leaving if o.topic == "control")

    feed(_records(FIRST + SECOND, 0))  # ingest's latest: 10
    chains = [roundtrip(c, chain(p)) for p, c in enumerate(chains)]
    feed([(None, "chronolog.facts", 0, 100, chain_request(at).encode())])
    feed(_records(TAIL, 200))
    feed([], now=10_000.0)
    return [json.loads(x) for x in out], said


def test_partitioned_chains_decide_alike_on_ingests_stamp(tmp_path, capsys):
    """--retention 2, ingest's latest 10: the input is held from 7 on; the new program's window
    of 3 needs it from T - 3 on: T=10 is taken by both partitions (their answers mean run
    --upgrade --retention 2), T=9 refused by both."""
    got, said = _partitioned("10", 2)
    assert sorted((s["service"], s.get("at")) for s in said) == [("chain.0", "10"), ("chain.1", "10")], said
    (tmp_path / "old.lars").write_text(CHAIN_OLD)
    (tmp_path / "new.lars").write_text(CHAIN_NEW)
    (tmp_path / "in.jsonl").write_text("".join(json.dumps(e) + "\n" for e in FIRST + SECOND + TAIL))
    capsys.readouterr()
    assert main(["run", str(tmp_path / "old.lars"), "--input", str(tmp_path / "in.jsonl"), "--retention", "2",
                 "--upgrade", f"10={tmp_path / 'new.lars'}"]) == 0
    want = meaning([json.loads(x) for x in capsys.readouterr().out.splitlines()], (0, 15))
    assert meaning(got, (0, 15), running=True) == want
    _, said = _partitioned("9", 2)
    assert sorted(s["service"] for s in said) == ["chain.0", "chain.1"] and all(
        "need input from 6 on ([T - 3, now]), the retention kept it from 7 on" in s["refused"] for s in said), said


def test_an_unreachable_old_version_is_dropped_and_memory_stays_flat(tmp_path, capsys):
    """Once every reasoner has evaluated past T + retention + 1, no event can reach the old
    program's part of time (older than the newest version's horizon): its version is dropped
    (the new one in its place, restarts included), and the logs, the lower strata's content
    and what was sent are pruned as before the upgrade.  The answers still mean run --upgrade."""
    more = [e for t in range(151, 450) for e in (
        [{"t": t, "pred": "p", "args": [f"k{t % 7}"]}] + ([{"t": t, "pred": "q", "args": [f"k{t % 5}"]}] if t % 3 == 0 else []))]
    second = LONG_LATE[:-1] + more + [{"t": 300, "pred": "p", "args": ["late"]}, {"t": 140, "pred": "p", "args": ["gone"]},
                                      {"t": 452}]
    stages: dict = {}
    got, said = per_stratum(LONG, _request("149", BOTTOM), second, seed=3, restarts=40, retention=4, stages=stages)
    assert [s.get("at") for s in said] == ["149", "149"], said
    for k in (1, 2):
        stage = stages[f"reasoner.{k}"]
        assert stage.later == [] and stage.first is not None and stage.first[1] == 149
        assert stage.reasoner.plan.state_reach == 4  # BOTTOM's
        assert len(stage.reasoner.log) < 150 and not stage.vlog
        assert len(stage.sender.sent) < 150
        assert all(len(store.content) < 150 for store in stage.lower.values())
    span = (0, 452)
    assert meaning(got, span, running=True) == _run_upgrade(tmp_path, capsys, "149", BOTTOM, LONG + second, 4, span)


LONG_EVENT = st.builds(lambda t, pred, arg, retract: {"t": t, "pred": pred, "args": [arg],
                                                       **({"op": "retract"} if retract else {})},
                       st.integers(0, 24), st.sampled_from(["p", "r"]), st.sampled_from(["a", "b"]), st.booleans())


@settings(max_examples=50, deadline=None, suppress_health_check=list(HealthCheck))
@given(old=st.lists(st.sampled_from(RULES), min_size=1, max_size=3, unique=True),
       new=st.lists(st.sampled_from(RULES), min_size=1, max_size=3, unique=True),
       events=st.lists(LONG_EVENT, min_size=1, max_size=16), cut=st.integers(0, 16), shift=st.integers(-8, 4),
       retention=st.integers(1, 6), seed=st.integers(0, 3))
def test_random_program_pairs_with_a_retention_mean_run_upgrade_or_are_refused_alike(
        tmp_path_factory, old, new, events, cut, shift, retention, seed):
    """Taken exactly when T - reach is at or after ingest's latest time at the request - R - 1
    (or nothing is forgotten yet): then the answers mean run --upgrade --retention R; else every
    reasoner refuses with the spans and the answers are the old program's plain run.  T lies
    ``shift`` from ingest's latest time (in the past, or the future)."""
    tmp = tmp_path_factory.mktemp("pair")
    old_text, new_text = "\n".join(old) + "\n", "\n".join(new) + "\n"
    old_plan, new_plan = (lars_plan(lookup("lars").parse([("x", t)])) for t in (old_text, new_text))
    assume(per_stratum_refusal(old_plan, new_plan) is None)
    events = [{"t": 0}, *events, {"t": 25}]
    first, second = events[:cut + 1], events[cut + 1:]
    floor = max(e["t"] for e in first) - 1 - retention  # (the first time is 0: nothing before it)
    at = max(0, floor + 1 + retention + shift)
    back = plan_back(new_plan)
    taken = floor <= 0 or (back is not None and at - back >= floor)
    event("taken" if taken else "refused")
    got, said = per_stratum(first, _request(str(at), new_text), second, seed=seed, restarts=3, old=old_text,
                            retention=retention)
    strata = max(old_plan.fleet_strata, new_plan.fleet_strata) if taken else old_plan.fleet_strata
    assert len(said) == strata, said
    span = (0, 25)
    if taken:
        assert all(s.get("at") == str(at) for s in said), said
        want = _run_upgrade(tmp, None, str(at), new_text, events, retention, span, old_text)
    else:
        assert all(s.get("refused", "").endswith(f"the retention kept it from {floor} on (--retention {retention})")
                   for s in said), said
        want = _run_upgrade(tmp, None, str(at), old_text, events, retention, span, old_text)
    assert meaning(got, span, running=True) == want
