"""What a hosted DatalogMTL or RTEC service's commits write after a program upgrade: as before
it, only what changed — the input log's entries of the points whose input changed, a snapshot
the size of the one before the upgrade, and an older program version's state only when that
version changed (once after the upgrade, again for a late event in its part of time).  The
state restored from those commits (the changelog read from its start, or the local store)
goes on as if there had been no restart.  Without a broker: the commits go to a list standing
for the changelog partition, as ``tests/state/test_changelog.py`` does."""

from __future__ import annotations

import json

import msgspec
import orjson
import pytest
from changelog_partition import Partition
from meaning import sampled_meaning

from chronolog.bench.upgrade import CASES
from chronolog.dialects.registry import RunOptions, lookup
from chronolog.stages.evaluator import EvaluatorStage
from chronolog.stages.interface import StageSpec
from chronolog.state import changelog
from chronolog.state.codec import encode
from chronolog.state.recovery import snapshot_records
from chronolog.state.schema import KINDS
from chronolog.state.store import MemoryStore
from chronolog.versions import UpgradeRequest, version_id

POINTS = 60  # the input before the upgrade
AT = 30  # the upgrade time (a restatement: the middle of that input)
LATER = 12  # points after the upgrade


def _stage(dialect: str, retention: int | None = None):  # type: ignore[no-untyped-def]
    row = lookup(dialect)
    program = row.parse([("old", CASES[dialect].old)])
    return row.layout(program, RunOptions()).stage(StageSpec("chain", idle_flush=1000.0, retention=retention))


def _point(dialect: str, t: int) -> list[bytes]:
    """The events of point ``t`` and the time advance that closes it."""
    return [orjson.dumps(e) for e in CASES[dialect].events(t)] + [orjson.dumps({"t": t + 1})]


class Service:
    """A stage committing after every batch, as a service does, restarted where asked."""

    def __init__(self, dialect: str, retention: int | None = None) -> None:
        self.dialect, self.retention = dialect, retention
        self.stage = changelog.track(_stage(dialect, retention))
        self.part, self.store = Partition(), MemoryStore()
        self.offset = 0
        self.lines: list[bytes] = []
        self.entries: list[list[str]] = []  # per commit: the journal entries' keys
        self.snapshots: list[int] = []  # per commit: the snapshot's bytes

    def batch(self, values: list[bytes]) -> None:
        records = [(None, "chronolog.facts", 0, self.offset + i, v) for i, v in enumerate(values)]
        self.offset += len(values)
        self.lines += self.stage.process(records, now=0.0)[1]
        state = changelog.capture(self.stage, {"chronolog.facts:0": self.offset})
        self.entries.append(sorted(k.decode() for k, _, _ in state.entries))
        self.snapshots.append(len(state.snapshot))
        self.part.commit(self.store, state)

    def restart(self, lose_store: bool) -> None:
        if lose_store:
            self.store = MemoryStore()  # a fresh state directory: the changelog is read
        got = changelog.restore(self.store, _stage(self.dialect, self.retention), self.part.read, "c", 0, "store: ")
        assert got is not None and got.offsets == {"chronolog.facts:0": self.offset}
        assert got.source == ("store" if not lose_store else "changelog")
        self.stage = changelog.track(got.stage)

    def meaning(self) -> set:
        return sampled_meaning([json.loads(x) for x in self.lines], POINTS + LATER + 2)


def _run(dialect: str, restarts: tuple[bool, ...] = ()) -> Service:
    """The old program over POINTS points, the upgrade of its top stratum at AT, LATER points,
    a late event before AT, two more points; a restart (``restarts[i]``: losing the store)
    after each of the first commits after the upgrade."""
    case = CASES[dialect]
    svc = Service(dialect)
    svc.batch([v for t in range(POINTS) for v in _point(dialect, t)])
    request = UpgradeRequest("r1", version_id((("new", case.top),)), dialect, str(AT), (("new", case.top),))
    svc.batch([request.encode()])
    for n, t in enumerate(range(POINTS, POINTS + LATER)):
        svc.batch(_point(dialect, t))
        if n < len(restarts):
            svc.restart(restarts[n])
    late = [e for e in case.events(AT - 7) if e.get("pred") not in ("Clock", "opened")]  # (a change before AT)
    svc.batch([orjson.dumps({**e, "args": ["k-late" if dialect == "mtl" else "d1"]}) for e in late[:1]])
    for t in range(POINTS + LATER, POINTS + LATER + 2):
        svc.batch(_point(dialect, t))
    return svc


@pytest.mark.parametrize("dialect", ["mtl", "rtec"])
def test_commits_after_an_upgrade_write_only_what_changed(dialect):
    svc = _run(dialect)
    before, upgrade, first, later = svc.entries[0:1], svc.entries[1], svc.entries[2], svc.entries[3:2 + LATER]
    assert any(k.startswith("j:inputs:") for k in before[0])
    # the upgrade's commit: the old version's state, once; the log stays the same journal
    assert [k for k in upgrade if not k.startswith("j:inputs:")] == ["j:versions:0"], upgrade
    assert [k for k in first if k.startswith("j:versions:")] in ([], ["j:versions:0"])  # (its end reached once)
    for t, keys in zip(range(POINTS + 1, POINTS + LATER), later, strict=True):
        assert keys == [f"j:inputs:{t}"], (t, keys)  # as before the upgrade: the new point's input only
    # the snapshot stays the size it had before the upgrade (it held both versions' whole state)
    assert max(svc.snapshots[3:2 + LATER]) < 1.5 * svc.snapshots[0] + 2000, svc.snapshots
    late = svc.entries[2 + LATER]
    assert "j:versions:0" in late and all(k.startswith(("j:inputs:", "j:versions:")) for k in late), late


@pytest.mark.parametrize("dialect", ["mtl", "rtec"])
def test_restored_from_the_incremental_commits_the_answers_are_the_same(dialect):
    want = _run(dialect).meaning()
    assert want == _run(dialect, (True, False, True)).meaning()
    assert want == _run(dialect, (False, True)).meaning()
    # and the upgrade mattered (the old program's answers differ from T on)
    case = CASES[dialect]
    plain = Service(dialect)
    plain.batch([v for t in range(POINTS + LATER) for v in _point(dialect, t)])
    assert sampled_meaning([json.loads(x) for x in plain.lines], POINTS + LATER) != \
        {k for k in want if k[2] <= POINTS + LATER}
    assert case.top != case.old


@pytest.mark.parametrize("dialect", ["mtl", "rtec"])
def test_a_state_stored_whole_after_an_upgrade_is_journaled_by_the_next_commit(dialect):
    """A state an earlier build wrote after an upgrade (every version's row whole in the
    snapshot, no journal entries) restores, and the commits after it write the journals,
    so that a restart from them (the changelog read from its start) goes on as without one."""
    want = _run(dialect).meaning()
    case = CASES[dialect]
    svc = Service(dialect)
    svc.batch([v for t in range(POINTS) for v in _point(dialect, t)])
    request = UpgradeRequest("r1", version_id((("new", case.top),)), dialect, str(AT), (("new", case.top),))
    svc.batch([request.encode()])
    for t in range(POINTS, POINTS + 3):  # (the old version stopped at its end: untouched from here)
        svc.batch(_point(dialect, t))
    stage = svc.stage
    whole = msgspec.structs.replace(stage.export_state(), evaluator=stage.evaluator.export_state())
    kind = KINDS["evaluator"]
    blob = encode(kind.record(kind.version, whole))
    svc.part, svc.store = Partition(), MemoryStore()  # a changelog holding only that snapshot
    svc.part.records.append((0, snapshot_records(blob, {"chronolog.facts:0": svc.offset}, 1 << 20)[0][1]))
    svc.restart(lose_store=True)
    svc.batch([b"not an event"])  # a commit that evaluates nothing (a dead letter), then a restart from it
    assert "j:versions:0" in svc.entries[-1]  # the old version journaled at the first commit after the restore
    svc.restart(lose_store=True)
    for n, t in enumerate(range(POINTS + 3, POINTS + LATER)):
        svc.batch(_point(dialect, t))
        if n in (0, 3):
            svc.restart(lose_store=True)
    late = [e for e in case.events(AT - 7) if e.get("pred") not in ("Clock", "opened")]
    svc.batch([orjson.dumps({**e, "args": ["k-late" if dialect == "mtl" else "d1"]}) for e in late[:1]])
    svc.restart(lose_store=True)
    for t in range(POINTS + LATER, POINTS + LATER + 2):
        svc.batch(_point(dialect, t))
    assert svc.meaning() == want


@pytest.mark.parametrize("dialect", ["mtl"])  # (an RTEC program needs all earlier input: refused under a retention)
def test_versions_dropped_under_a_retention_leave_the_journal(dialect):
    """Two upgrades under a finite retention: once the retention passes a version's end it is
    dropped (``Versions._drop_unreachable``), the versions after it move up, and the journal
    follows (the entry of the last position deleted, the others written again); restarts from
    the changelog go on as without them."""
    case = CASES[dialect]

    def run(restart_at: set[int]) -> tuple[list[list[str]], set]:
        svc = Service(dialect, retention=20)
        svc.batch([v for t in range(POINTS) for v in _point(dialect, t)])
        for n, (at, text) in enumerate([(POINTS + 2, case.top), (POINTS + 6, case.bottom)]):
            request = UpgradeRequest(f"r{n}", version_id((("new", text),)), dialect, str(at), (("new", text),))
            svc.batch([request.encode()])
        for t in range(POINTS, POINTS + 40):
            svc.batch(_point(dialect, t))
            if t in restart_at:
                svc.restart(lose_store=True)
        assert len(svc.stage.evaluator.versions) == 1 and not svc.stage.old  # both older ones dropped, and their entries
        return svc.entries, {k for k in svc.meaning() if k[2] <= POINTS + 38}

    entries, want = run(set())
    olds = [sorted(k for k in keys if k.startswith("j:versions:")) for keys in entries]
    assert ["j:versions:0", "j:versions:1"] in olds  # two older versions journaled
    assert olds[-1] == [] and any(k == ["j:versions:0"] for k in olds[olds.index(["j:versions:0", "j:versions:1"]) + 1:])
    assert run({POINTS + 5, POINTS + 21, POINTS + 25, POINTS + 27})[1] == want


@pytest.mark.parametrize("dialect", ["mtl", "rtec"])
def test_an_older_version_shares_the_newest_versions_input_log(dialect):
    """The old version's entry holds its program, answers and the rest of its state, not its
    input log again: the log is the ``inputs`` journal's up to its last point (the versions
    were given the same stream).  A late event after T goes to the new version only, and
    changes the journal at a point the old version's log reads: its entry is written again,
    holding that point's old items itself; restored from the changelog after it, the answers
    are those of the run without restarts."""
    case = CASES[dialect]

    def run(restart: bool) -> Service:
        svc = Service(dialect)
        svc.batch([v for t in range(POINTS) for v in _point(dialect, t)])
        request = UpgradeRequest("r1", version_id((("new", case.top),)), dialect, str(AT), (("new", case.top),))
        svc.batch([request.encode()])
        row = svc.stage.old[0]
        assert EvaluatorStage.LOG not in row["state"] and row["log"] == {"upto": POINTS - 1, "own": []}, row["log"]
        for t in range(POINTS, POINTS + 3):
            svc.batch(_point(dialect, t))
        late = [e for e in case.events(AT + 5) if e.get("pred") not in ("Clock", "opened")][:1]
        svc.batch([orjson.dumps({**e, "args": ["k-late" if dialect == "mtl" else "d1"]}) for e in late])
        assert "j:versions:0" in svc.entries[-1], svc.entries[-1]  # (not the old version's part: stale)
        assert [k for k, _ in svc.stage.old[0]["log"]["own"]] == [AT + 5]
        if restart:  # the old version's log restored as it was (the late event not in it)
            log = sorted(map(repr, svc.stage.evaluator.versions[0].evaluator.export_state()[EvaluatorStage.LOG]))
            svc.restart(lose_store=True)
            assert sorted(map(repr, svc.stage.evaluator.versions[0].evaluator.export_state()[EvaluatorStage.LOG])) == log
        for t in range(POINTS + 3, POINTS + 6):
            svc.batch(_point(dialect, t))
            if restart:
                svc.restart(lose_store=t % 2 == 0)
        return svc

    assert run(True).meaning() == run(False).meaning()
