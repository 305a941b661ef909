"""The changelog protocol of state/changelog.py without a broker: commits
appended to a list standing for the changelog partition, a memory store."""

from __future__ import annotations

from changelog_partition import Partition
from workloads import SINGLE, drive

from chronolog.state import changelog
from chronolog.state.store import MemoryStore


def run(name: str, restart_every: int, lose_store: bool):  # type: ignore[no-untyped-def]
    make, records = SINGLE[name]
    recs, lines = records(), []
    part, store = Partition(), MemoryStore()
    stage = changelog.track(make())
    for n, i in enumerate(range(0, len(recs), 3)):
        drive(stage, recs[i:i + 3], lines)
        part.commit(store, changelog.capture(stage, {"in:0": i + 3}))
        if n % restart_every == restart_every - 1:
            if lose_store and n % (2 * restart_every) == restart_every - 1:
                store = MemoryStore()  # a fresh state directory: the changelog is read
            got = changelog.restore(store, make(), part.read, "c", 0, "store: ")
            assert got is not None and got.offsets == {"in:0": i + 3}
            assert got.source == ("changelog" if store.get("changelog_at") is None else "store")
            stage = changelog.track(got.stage)
            stage.last_input = 0.0  # a restart counts as input, on this test's clock
    lines += stage.process([], now=100.0)[1]
    return lines, part


def test_restarts_from_the_store_or_the_changelog_mean_what_no_restart_means() -> None:
    for name in SINGLE:
        want, _ = run(name, 10 ** 9, False)
        assert run(name, 3, False)[0] == want, name
        assert run(name, 2, True)[0] == want, name  # (the store is refilled after a changelog restore)


def test_an_evaluator_commit_writes_the_points_whose_input_changed() -> None:
    make, records = SINGLE["rtec"]
    stage, recs = changelog.track(make()), records()
    drive(stage, recs[:20], [])
    first = changelog.capture(stage, {})
    assert b'"inputs"' not in first.snapshot and len(first.entries) > 5
    drive(stage, recs[20:21], [])
    again = changelog.capture(stage, {})
    assert [k for k, _, _ in again.entries] == [b"j:inputs:%d" % int(recs[20][4].split(b'"t":')[1].split(b",")[0])]


def test_nothing_committed_is_a_fresh_start_and_clears_the_store() -> None:
    store = MemoryStore()
    store.write({"j:inputs:3": b"[]"})
    assert changelog.restore(store, SINGLE["mtl"][0](), lambda start: [], "c", 0, "") is None
    assert list(store.items()) == []
