"""A LARS chain service's program upgrade (``chronolog upgrade`` on ``up --chain``) at the
stage, without a broker: raw input records with the upgrade record among them, a restart
from the stored state after it (or before it: the record read again), late events and a
retraction on both sides of T.  The answer lines mean what hand derivation and
``chronolog run --upgrade`` say."""

from __future__ import annotations

import json

import orjson
import pytest
from meaning import meaning

from chronolog.cli.main import main
from chronolog.contract.models import UpgradeOutcome
from chronolog.dialects.registry import RunOptions, lookup
from chronolog.stages.interface import StageSpec
from chronolog.state.journal import DELETED
from chronolog.state.schema import snapshot_bytes
from chronolog.state.snapshots import roundtrip
from chronolog.versions import UpgradeRequest, version_id

OLD = "q(X) :- p(X) [1].\nr(X) :- q(X), s(X).\n"
NEW = "q(X) :- p(X) [3].\nr(X) :- q(X), s(X).\nr(X) :- p(X).\n"  # a window widened, a rule added
FIRST = [{"t": 0}, {"t": 1, "pred": "p", "args": ["a"]}, {"t": 2, "pred": "s", "args": ["a"]},
         {"t": 3, "pred": "s", "args": ["a"]}, {"t": 4, "pred": "s", "args": ["a"]}, {"t": 6}]
# late events before T (p(b)@2) and from T on (s(b)@4, a retraction of s(a)@3), then time runs on
SECOND = [{"t": 2, "pred": "p", "args": ["b"]}, {"t": 4, "pred": "s", "args": ["b"]},
          {"t": 3, "pred": "s", "args": ["a"], "op": "retract"}, {"t": 7, "pred": "p", "args": ["c"]},
          {"t": 8, "pred": "s", "args": ["c"]}, {"t": 10}]
SPAN = (0, 10)


def _stage(text: str, retention=None):
    row = lookup("lars")
    program = row.parse([("prog", text)])
    spec = StageSpec("chain", idle_flush=1000.0, chained_ingest=True, retention=retention)
    return row.layout(program, RunOptions()).stage(spec)


def _records(events: list[dict], offset: int) -> list[tuple]:
    return [(None, "chronolog.facts", 0, offset + i, orjson.dumps(e)) for i, e in enumerate(events)]


def _request(at, new: str = NEW, rid: str = "r1") -> UpgradeRequest:
    return UpgradeRequest(rid, version_id((("new.lars", new),)), "lars", at, (("new.lars", new),))


def _fleet(at, restart: str = "after", new: str = NEW, old: str = OLD, first: list[dict] = FIRST,
           second: list[dict] = SECOND) -> tuple[list[dict], list[dict]]:
    """The chain of ``old`` fed ``first``, the upgrade (twice: every input partition carries
    it), ``second``, then idle; ``restart``: where its state is written out and read back into
    a fresh stage of the old program ("before": the upgrade record is read again after it)."""
    stage = _stage(old)
    out: list[bytes] = []
    said: list[dict] = []

    def feed(batch: list[tuple], now: float = 0.0) -> None:
        leaving, lines = stage.process(batch, now=now)
        out.extend(lines)
        for o in leaving:
            if o.topic == "control":
                UpgradeOutcome.model_validate_json(o.payload)
                said.append(orjson.loads(o.payload))

    feed(_records(first, 0))
    upgrade = [(None, "chronolog.facts", 0, 100, _request(at, new).encode())]
    if restart == "before":  # killed after the upgrade was read but before its commit: its output is lost
        saved = roundtrip(stage, _stage(old))
        kept_out, kept_said = len(out), len(said)
        feed(upgrade)
        del out[kept_out:], said[kept_said:]
        stage = saved  # the restarted service reads the record again
    feed(upgrade)
    feed([(None, "chronolog.facts", 1, 0, _request(at, new).encode())])  # the same request again: nothing
    if restart == "after":
        # upgraded: the new version's log is journaled (refused: there is none)
        assert bool(stage.journals()["vlog"]) != any("refused" in s for s in said), said
        stage = roundtrip(stage, _stage(old))
    feed(_records(second, 200))
    feed([], now=10_000.0)  # input idle: the latest time too
    return [json.loads(x) for x in out], said


def _run_upgrade(tmp_path, capsys, at: str, events: list[dict], new: str = NEW, old: str = OLD) -> list[dict]:
    (tmp_path / "old.lars").write_text(old)
    (tmp_path / "new.lars").write_text(new)
    (tmp_path / "in.jsonl").write_text("".join(json.dumps(e) + "\n" for e in events))
    capsys.readouterr()
    assert main(["run", str(tmp_path / "old.lars"), "--input", str(tmp_path / "in.jsonl"),
                 "--upgrade", f"{at}={tmp_path / 'new.lars'}"]) == 0
    return [json.loads(x) for x in capsys.readouterr().out.splitlines()]


@pytest.mark.parametrize("restart", ["after", "before", "none"])
def test_hand_derived_restatement_from_3(restart):
    """T=3 lies in the past (points up to 5 were written).  Before 3 the old program: q(a) at
    1,2 (p(a)@1, window 1), q(b) at 2 (p(b)@2, late), r(a) at 2 (q(a), s(a)); from 3 on the
    new one: q(a) at 3,4 (window 3), q(b) at 3..5, r(a) at 4 only (s(a)@3 retracted),
    r(b) at 4 (q(b), s(b)); q(c) at 7 (old window 1: 7,8; new window 3: 7..10), r(c) at 7
    (r :- p) and 8 (q(c), s(c))."""
    got, said = _fleet("3", restart)
    assert said == [{"upgrade": "r1", "version": version_id((("new.lars", NEW),)), "at": "3", "service": "chain"}]
    want = {("q", ("a",), t) for t in (1, 2, 3, 4)} | {("q", ("b",), t) for t in (2, 3, 4, 5)} \
        | {("r", ("a",), 2), ("r", ("a",), 4), ("r", ("b",), 4)} | {("q", ("c",), t) for t in (7, 8, 9, 10)} \
        | {("r", ("c",), 7), ("r", ("c",), 8)}
    assert meaning(got, SPAN, running=True) == want


@pytest.mark.parametrize("at", ["1", "3", "6", "9", None])
def test_chain_upgrade_means_run_upgrade(tmp_path, capsys, at):
    got, said = _fleet(at)
    used = at if at is not None else "6"  # without a time: the first one not evaluated (6 is read, 5 evaluated)
    assert said[0]["at"] == used
    want = _run_upgrade(tmp_path, capsys, used, FIRST + SECOND)
    assert meaning(got, SPAN, running=True) == meaning(want, SPAN)
    same = _run_upgrade(tmp_path, capsys, used, FIRST + SECOND, new=OLD)
    if used != "9":  # (from 9 on both programs agree on this stream)
        assert meaning(got, SPAN) != meaning(same, SPAN)  # the upgrade mattered


def test_two_chained_upgrades_mean_run_with_both(tmp_path, capsys):
    """P -> P' at 3 -> P'' at 8 (a negation added), the second after more input."""
    third = "q(X) :- p(X) [1].\nr(X) :- q(X), not s(X).\n"
    stage = _stage(OLD)
    out: list[bytes] = []
    out += stage.process(_records(FIRST, 0), now=0.0)[1]
    out += stage.process([(None, "chronolog.facts", 0, 100, _request("3").encode())], now=0.0)[1]
    stage = roundtrip(stage, _stage(OLD))
    out += stage.process(_records(SECOND[:3], 200), now=0.0)[1]
    leaving, lines = stage.process([(None, "chronolog.facts", 0, 300, _request("8", third, "r2").encode())], now=0.0)
    assert orjson.loads(leaving[0].payload)["at"] == "8"
    out += lines
    stage = roundtrip(stage, _stage(OLD))
    out += stage.process(_records(SECOND[3:], 400), now=0.0)[1]
    out += stage.process([], now=10_000.0)[1]
    (tmp_path / "old.lars").write_text(OLD)
    (tmp_path / "new.lars").write_text(NEW)
    (tmp_path / "third.lars").write_text(third)
    (tmp_path / "in.jsonl").write_text("".join(json.dumps(e) + "\n" for e in FIRST + SECOND))
    capsys.readouterr()
    assert main(["run", str(tmp_path / "old.lars"), "--input", str(tmp_path / "in.jsonl"), "--upgrade",
                 f"3={tmp_path / 'new.lars'}", "--upgrade", f"8={tmp_path / 'third.lars'}"]) == 0
    want = [json.loads(x) for x in capsys.readouterr().out.splitlines()]
    got = [json.loads(x) for x in out]
    assert meaning(got, SPAN, running=True) == meaning(want, SPAN)
    assert ("r", ("c",), 7) in meaning(got, SPAN)  # P' at 7: r :- p
    assert ("r", ("c",), 8) not in meaning(got, SPAN)  # P'' at 8: s(c) holds (P' said r(c))


@pytest.mark.parametrize("upgrades", [1, 2])
def test_the_newest_version_is_journaled_and_the_snapshot_does_not_grow(upgrades):
    """After an upgrade the new version's log and imports are the ``vlog`` journals (a
    commit writes the entries that changed); the old version's input ends at T."""
    stage = _stage(OLD)
    for j in stage.journals().values():
        j.track()
    stage.process(_records(FIRST, 0), now=0.0)
    stage.process([(None, "chronolog.facts", 0, 100, _request("3").encode())], now=0.0)
    if upgrades == 2:
        stage.process(_records([{"t": 7, "pred": "p", "args": ["y"]}, {"t": 8}], 150), now=0.0)
        stage.process([(None, "chronolog.facts", 0, 200, _request("8", OLD, "r2").encode())], now=0.0)
    for j in stage.journals().values():
        j.take()
    size = len(snapshot_bytes(stage))
    more = [{"t": t, "pred": "p", "args": [f"k{t}"]} for t in range(9, 3000)]
    stage.process(_records(more, 300), now=0.0)
    assert len(stage.journals()["vlog"].take()) > 2900  # the newest version's entries
    assert not stage.journals()["log"].take()  # the first version's input ended at T
    assert len(snapshot_bytes(stage)) < size + 2000  # the log is not in the snapshot
    again = roundtrip(stage, _stage(OLD))
    tail = _records([{"t": 5, "pred": "p", "args": ["late"]}, {"t": 2999, "pred": "s", "args": ["k2999"]},
                     {"t": 3001}], 4000)
    assert again.process(tail, now=0.0)[1] == stage.process(tail, now=0.0)[1]


def test_refusals_change_nothing():
    stage = _stage(OLD)
    stage.process(_records(FIRST, 0), now=0.0)
    before = stage.export_state()
    for request, reason in [
        (UpgradeRequest("r1", "v", "mtl", None, (("new.mtl", "Q(X):-P(X)\n"),)), "cannot replace this lars program"),
        (UpgradeRequest("r2", "v", "lars", None, (("new.lars", "q(X) :- p(X) [1\n"),)), "new.lars:2:1: error"),
        (UpgradeRequest("r3", "v", "lars", "x", (("new.lars", NEW),)), "'x' is not a time"),
        (UpgradeRequest("r4", "v", "lars", "7/2", (("new.lars", NEW),)), "not an integer"),
        (UpgradeRequest("r5", "v", "lars", None, (("new.lars", "r(X) at T :- p(X) at T [2], not s(X).\ns(X) :- p(X), not r(X) [2].\n"),)),
         "@-heads and is not stratified"),
    ]:
        leaving, lines = stage.process([(None, "chronolog.facts", 0, 50, request.encode())], now=0.0)
        said = [orjson.loads(o.payload) for o in leaving]
        assert lines == [] and len(said) == 1 and said[0]["upgrade"] == request.id, said
        assert reason in said[0]["refused"], said
    assert stage.export_state() == before


def test_retention_too_short_for_the_new_window_is_refused():
    """--retention 2, the stream at 0..399: the fleet holds the input from 399 - 3 = 396 on (the
    chained ingest's stamp, as every LARS fleet's), and NEW's window of 3 needs it from T - 3
    on: T=200 and T=398 (395 < 396) are refused, T=399 (396) is applied."""
    stage = _stage(OLD, retention=2)
    events = [{"t": t, "pred": "p", "args": ["a"]} for t in range(0, 400)]
    stage.process(_records(events, 0), now=0.0)
    for offset, at in ((500, "200"), (501, "398")):
        leaving, lines = stage.process([(None, "chronolog.facts", 0, offset, _request(at, rid=at).encode())], now=0.0)
        said = orjson.loads(leaving[0].payload)
        assert said["refused"] == (f"error: the retained input does not reach far enough back: the new program's "
                                   f"answers from T={at} on need input from {int(at) - 3} on ([T - 3, now]), the "
                                   "retention kept it from 396 on"), said
        assert lines == []
    leaving, _ = stage.process([(None, "chronolog.facts", 0, 502, _request("399", rid="r2").encode())], now=0.0)
    assert orjson.loads(leaving[0].payload)["at"] == "399"  # within the retention: applied


def _partitioned(at, new: str = NEW, parts: int = 2) -> tuple[list[dict], list[dict]]:
    """Ingest and ``parts`` chain partitions (``up --chain --partitions N``), records passed
    by hand: the upgrade record goes through ingest to every partition, in order with the facts."""
    row = lookup("lars")
    layout = row.layout(row.parse([("prog", OLD)]), RunOptions())
    assert layout.partition_key is not None
    ingest = layout.stage(StageSpec("ingest", partitions=parts, idle_flush=1000.0))
    chains = [layout.stage(StageSpec("chain", partition=p, partitions=parts, idle_flush=1000.0)) for p in range(parts)]
    out: list[bytes] = []
    said: list[dict] = []

    def feed(batch: list[tuple], now: float = 0.0) -> None:
        outs, _ = ingest.process(batch, now=now)
        for p, chain in enumerate(chains):
            mine = [("ingested", "chronolog.ingested", p, i, o.value) for i, o in enumerate(outs)
                    if o.topic == "ingested" and o.partition == p]
            leaving, lines = chain.process(mine, now=now)
            out.extend(lines)
            said.extend(orjson.loads(o.payload) for o in leaving if o.topic == "control")

    feed(_records(FIRST, 0))
    feed([(None, "chronolog.facts", 0, 100, _request(at, new).encode())])
    chains = [roundtrip(c, layout.stage(StageSpec("chain", partition=p, partitions=parts, idle_flush=1000.0)))
              for p, c in enumerate(chains)]
    feed(_records(SECOND, 200))
    feed([], now=10_000.0)
    return [json.loads(x) for x in out], said


@pytest.mark.parametrize("at", ["3", None])
def test_partitioned_chains_upgrade_through_ingest_at_one_time(tmp_path, capsys, at):
    got, said = _partitioned(at)
    assert sorted(s["service"] for s in said) == ["chain.0", "chain.1"]
    times = {s["at"] for s in said}
    assert len(times) == 1  # every partition from the same T (without --at: ingest sets it)
    used = times.pop()
    assert used == (at or "7")  # without a time: the one after the stream's (6)
    want = _run_upgrade(tmp_path, capsys, used, FIRST + SECOND)
    assert meaning(got, SPAN, running=True) == meaning(want, SPAN)


def test_a_new_partition_key_is_refused_by_every_partition():
    other = "q(X) :- p(X) [1].\nr(X) :- q(X), s(Y), t(X, Y).\n"  # joins across keys: not partitioned by X alone
    _, said = _partitioned("3", other)
    assert len(said) == 2 and all("not partitioned by the fleet's key" in s["refused"] for s in said), said


def test_an_unreachable_first_version_is_dropped_with_its_journal():
    """With a retention of 4, once the chain has evaluated past T + 4 no event can reach the
    first version's part (before T): it is dropped, its journaled log and imports deleted (the
    commit writes the deletions), and a restart goes on with the newest version alone."""
    stage = _stage(OLD, retention=4)
    for j in stage.journals().values():
        j.track()
    stage.process(_records(FIRST, 0), now=0.0)
    stage.process([(None, "chronolog.facts", 0, 100, _request("5").encode())], now=0.0)
    assert len(stage.evaluator.versions) == 2
    for j in stage.journals().values():
        j.take()
    stage.process(_records([{"t": 4, "pred": "p", "args": ["late"]}], 150), now=0.0)  # within the retention
    assert len(stage.evaluator.versions) == 2
    stage.process(_records([{"t": t, "pred": "p", "args": [f"k{t}"]} for t in range(7, 20)], 200), now=0.0)
    assert len(stage.evaluator.versions) == 1 and stage.evaluator.versions[0].start == 5
    stage.export_state()
    gone = stage.journals()["log"].take()
    assert gone and all(body is DELETED for _, body in gone)  # deletions only
    assert not stage.journals()["log"]
    again = roundtrip(stage, _stage(OLD, retention=4))
    assert len(again.evaluator.versions) == 1
    tail = _records([{"t": 18, "pred": "s", "args": ["k18"]}, {"t": 19, "pred": "s", "args": ["k19"]}, {"t": 21}], 400)
    assert again.process(tail, now=0.0)[1] == stage.process(tail, now=0.0)[1]


def test_a_version_in_between_is_a_journal_entry_written_when_it_changes():
    """After two upgrades the version in between (its input ended at the second T) is one
    ``vstates`` entry, not part of every snapshot: written once, again only when a late event
    changes it, and read back on restart."""
    stage = _stage(OLD)
    for j in stage.journals().values():
        j.track()
    stage.process(_records(FIRST, 0), now=0.0)
    stage.process([(None, "chronolog.facts", 0, 100, _request("3").encode())], now=0.0)
    stage.process(_records([{"t": 7, "pred": "p", "args": ["y"]}, {"t": 8}], 150), now=0.0)
    stage.process([(None, "chronolog.facts", 0, 200, _request("8", OLD, "r2").encode())], now=0.0)
    size = len(snapshot_bytes(stage))
    assert [k for k, _ in stage.journals()["vstates"].take()] == [3]  # the version from 3 to 8
    stage.process(_records([{"t": t, "pred": "p", "args": [f"k{t}"]} for t in range(9, 200)], 300), now=0.0)
    assert len(snapshot_bytes(stage)) < size + 500
    assert not stage.journals()["vstates"].take()  # unchanged: not written again
    stage.process(_records([{"t": 5, "pred": "s", "args": ["y"]}], 600), now=0.0)  # late, in its part
    # each version logs it once (the one in between no longer shares the newest's journal,
    # which counted such an event twice: a later retraction left one copy behind)
    assert [len(v.evaluator.reasoner.log.get(5, [])) for v in stage.evaluator.versions] == [0, 1, 1]
    stage.export_state()
    assert [k for k, _ in stage.journals()["vstates"].take()] == [3]
    again = roundtrip(stage, _stage(OLD))
    tail = _records([{"t": 6, "pred": "p", "args": ["late"]}, {"t": 4, "pred": "s", "args": ["late"]},
                     {"t": 201}], 700)
    assert again.process(tail, now=0.0)[1] == stage.process(tail, now=0.0)[1]
