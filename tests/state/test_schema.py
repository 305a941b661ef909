"""Stored state with a schema: records written by main before it (state format 1,
tests/state/fixtures/v1.json, made by make_v1.py) restore through the migrations,
as the same stage state, and the stages then mean what stages that never
stopped mean."""

from __future__ import annotations

import base64
import json
from pathlib import Path

import pytest
from workloads import SINGLE, Pipeline, drive, lars_events

from chronolog.state.schema import KINDS, read_snapshot
from chronolog.state.snapshots import restore_stage

V1 = json.loads((Path(__file__).parent / "fixtures" / "v1.json").read_text())


def from_v1(name: str, fresh):  # type: ignore[no-untyped-def]
    stored = V1[name]
    entries = [((journal, key), base64.b64decode(body)) for journal, key, body in stored["entries"]]
    return restore_stage(fresh, base64.b64decode(stored["snapshot"]), entries)


# journals a version 1 state has no entries of: a chain's record of what crosses its program's
# components (dialects/lars/crossing.py), kept from the first point evaluated after the restart
LATER = ("crossing",)


def same_state(a, b) -> None:  # type: ignore[no-untyped-def]
    """``b`` restored from version 1 holds ``a``'s state, but for the journals it did not have."""
    assert a.export_state() == b.export_state()  # (an evaluator stage's journal is brought up to date here)
    assert {n: dict(j) for n, j in a.journals().items() if n not in LATER} \
        == {n: dict(j) for n, j in b.journals().items() if n not in LATER}
    assert not any(b.journals().get(n) for n in LATER)


def test_the_fixture_is_version_1() -> None:
    for name, stored in V1.items():
        head = json.loads(base64.b64decode(stored["snapshot"]).split(b"\n")[0]) if stored["snapshot"] else {}
        assert head.get("format") == 1 and "version" not in head, name


@pytest.mark.parametrize("name", sorted(SINGLE))
def test_a_v1_stage_restores_through_the_migration(name: str) -> None:
    make, records = SINGLE[name]
    recs = records()
    half = len(recs) // 2
    kept, lines_kept = make(), []
    drive(kept, recs[:half], lines_kept)
    restored = from_v1(name, make())
    same_state(kept, restored)
    lines_restored = list(lines_kept)
    drive(kept, recs[half:], lines_kept)
    drive(restored, recs[half:], lines_restored)
    lines_kept += kept.process([], now=100.0)[1]  # idle: the latest time too
    lines_restored += restored.process([], now=100.0)[1]
    assert lines_restored == lines_kept
    assert len(lines_kept) > 2


def test_a_v1_per_stratum_fleet_restores_through_the_migration() -> None:
    events = lars_events()
    half = len(events) // 2
    kept, moved = Pipeline(), Pipeline()
    for pipe in (kept, moved):
        for i in range(0, half, 4):
            pipe.feed(events[i:min(i + 4, half)])
    fresh = Pipeline()
    for name in list(moved.stages):
        moved.stages[name] = from_v1(name, fresh.stages[name])
        same_state(kept.stages[name], moved.stages[name])
    for pipe in (kept, moved):
        for i in range(half, len(events), 4):
            pipe.feed(events[i:i + 4])
        pipe.close()
    assert moved.answers == kept.answers
    assert len(kept.answers) > 20


def test_every_kind_reads_its_v1_record_and_has_a_migration_per_version() -> None:
    for kind in KINDS.values():
        assert sorted(kind.migrations) == list(range(1, kind.version)), kind.name
    names = {"chain": "chain", "mtl": "evaluator", "rtec": "evaluator", "ingest": "ingest", "grounding": "grounding",
             "reasoner0": "reasoner", "reasoner1": "reasoner", "output": "output"}
    for name, stored in V1.items():
        got = read_snapshot(base64.b64decode(stored["snapshot"]), names[name])
        assert isinstance(got, KINDS[names[name]].struct)
