"""A restarting service trusts its RocksDB state only if the changelog shows
it is the last committed one (no consumer-group offsets are committed: the
changelog snapshot carries them).  Checked on the real bundled broker:
a changelog that lost the snapshot (a broker whose topics are new), a later
committed transaction, and an aborted one (the bundled broker shows aborted
records to read_committed consumers, so anything after the snapshot sends
the service to read the whole changelog)."""

from __future__ import annotations

import orjson
import pytest

from chronolog.dialects.lars.layout import lars_layout
from chronolog.dialects.lars.parser import parse_lars
from chronolog.dialects.lars.plan import plan_program
from chronolog.runtime.fleet import kafka_clients
from chronolog.runtime.fleet.broker import LocalBroker, create_topics
from chronolog.runtime.fleet.config import ServiceConfig
from chronolog.runtime.fleet.restore import local_snapshot, open_store
from chronolog.runtime.fleet.service import Service
from chronolog.runtime.fleet.topology import build_topology
from chronolog.state.changelog import CHUNK
from chronolog.state.recovery import snapshot_records
from chronolog.state.snapshots import snapshot_bytes

pytestmark = pytest.mark.fleet


def _transaction(producer, topic: str, records: list[tuple[bytes, bytes]], commit: bool = True) -> int:
    """Produce ``records`` in one transaction; the offset of the last one."""
    landed: list[int] = []
    producer.begin_transaction()
    for i, (key, value) in enumerate(records):
        last = i == len(records) - 1
        producer.produce(topic, value, key, partition=0,
                         on_delivery=(lambda err, msg: landed.append(msg.offset())) if last else None)
    if commit:
        producer.commit_transaction(10)
    else:
        producer.flush(10)
        producer.abort_transaction(10)
    return landed[-1] if landed else -1


def test_rocksdb_state_is_used_only_while_it_is_the_changelogs_last(tmp_path):
    plan = plan_program(parse_lars("q(X) :- p(X) [2].\n"))
    with LocalBroker.start(log=tmp_path / "broker.log") as broker:
        create_topics(broker.bootstrap, build_topology(lars_layout(plan)))
        service = Service(ServiceConfig("grounding", lars_layout(plan), broker.bootstrap, state_dir=tmp_path / "state"))
        service.db = open_store(service.cfg)
        topic = service.changelog[0]
        offsets = {"chronolog.ingested:0": 7}
        snapshot = snapshot_bytes(service.stage)
        chunks = snapshot_records(snapshot, offsets, CHUNK)
        service.db.write({"snapshot": snapshot, "offsets": orjson.dumps(offsets), "changelog_at": b"1"})

        # the changelog does not hold that snapshot (new topics, same state dir): not trusted
        assert local_snapshot(service.cfg, service.db, service.changelog) is None

        producer = kafka_clients.producer({"bootstrap.servers": broker.bootstrap, "transactional.id": "check"})
        producer.init_transactions(10)
        at = _transaction(producer, topic, [(b"j:log:1", b"entry"), *chunks])
        service.db.write({"changelog_at": str(at).encode()})
        assert local_snapshot(service.cfg, service.db, service.changelog) == (snapshot, offsets)

        # a later committed transaction (a crash before the RocksDB write): not trusted
        moved = {"chronolog.ingested:0": 9}
        at = _transaction(producer, topic, snapshot_records(snapshot, moved, CHUNK))
        assert local_snapshot(service.cfg, service.db, service.changelog) is None
        service.db.write({"changelog_at": str(at).encode(), "offsets": orjson.dumps(moved)})  # RocksDB catches up
        assert local_snapshot(service.cfg, service.db, service.changelog) == (snapshot, moved)

        # records of an aborted transaction after it: tansu shows them, so not trusted either
        _transaction(producer, topic, chunks, commit=False)
        assert local_snapshot(service.cfg, service.db, service.changelog) is None
