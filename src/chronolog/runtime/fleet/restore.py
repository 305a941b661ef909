"""How a fleet service starts again: the state of its last committed transaction.

A service keeps its state twice, on its compacted changelog partition and in
RocksDB under ``--state-dir`` (docs/state.md).  On start it takes the RocksDB
state if the changelog shows it is the last committed one, otherwise the
changelog's last snapshot (a fresh state dir, or a crash between the commit
and the RocksDB write), and resumes each input at the offsets the snapshot
carries (``state.changelog.restore`` decides; this module gives it the
service's store, its changelog partition as read from the broker, and turns
its answer into where the loop resumes).
"""

from __future__ import annotations

import logging
from dataclasses import dataclass
from functools import partial

from confluent_kafka import TopicPartition

from chronolog.core.errors import ChronologError
from chronolog.evaluator import StateError
from chronolog.runtime.fleet import kafka_clients
from chronolog.runtime.fleet.config import ServiceConfig, make_stage, restore_settings
from chronolog.runtime.fleet.epochs import epoch_state
from chronolog.runtime.fleet.topic_reader import FIRST_OFFSET
from chronolog.stages.interface import Stage
from chronolog.state import changelog
from chronolog.state.recovery import read_tail
from chronolog.state.store import RocksStore, Store

log = logging.getLogger("chronolog.service")


@dataclass
class Restored:
    """The state a service resumes from."""

    stage: Stage  # tracked (state.changelog.track): its commits write only what changed
    resume: dict[tuple[str, int], int]  # each input's offset to read from
    epoch: int  # the last epoch it committed (runtime/fleet/epochs.py)
    passed: dict[tuple[str, int], int]  # each input's last barrier passed


def open_store(cfg: ServiceConfig) -> Store:
    """The service's RocksDB state under ``--state-dir``."""
    return RocksStore(cfg.state_dir / cfg.instance / "rocksdb")


def read_changelog(cfg: ServiceConfig, part: tuple[str, int], start: int | None, timeout: float = 60.0,
                   quiet: float = 1.0) -> list[tuple[int, bytes]]:
    """The committed records of the changelog partition ``part`` (topic, partition)
    from ``start`` (None: its beginning) to where it stays quiet for ``quiet`` s."""
    reader = kafka_clients.consumer(restore_settings(cfg))
    topic, partition = part
    reader.assign([TopicPartition(topic, partition, FIRST_OFFSET if start is None else start)])
    try:
        return read_tail(reader, quiet, timeout)
    finally:
        reader.close()


def local_snapshot(cfg: ServiceConfig, db: Store, part: tuple[str, int]) -> tuple[bytes, dict] | None:
    """The store's snapshot and offsets if they are the last committed ones."""
    return changelog.local_snapshot(db, partial(read_changelog, cfg, part))


def check_program(cfg: ServiceConfig, stage: Stage) -> None:
    """Refuse to run a restored state made by another program than the service's
    (``stages/program.py``): ``ChronologError`` naming both versions and what to do."""
    why = stage.program_refusal()
    if why is not None:
        raise ChronologError(f"error: {cfg.instance} (state in {cfg.state_dir} and its changelog): {why}")


def last_committed(cfg: ServiceConfig, db: Store, part: tuple[str, int],
                   inputs: list[tuple[str, int]]) -> Restored | None:
    """The state of the last committed transaction of the service whose changelog
    partition is ``part`` and whose inputs are ``inputs``; None if it committed
    nothing yet."""
    where = f"{cfg.state_dir / cfg.instance / 'rocksdb'}: "
    try:
        got = changelog.restore(db, make_stage(cfg), partial(read_changelog, cfg, part), *part, where)
    except (StateError, ValueError) as exc:
        raise ChronologError(f"error: {cfg.instance}: cannot restore its state: {exc}") from None
    if got is None:
        log.info("%s: nothing committed yet: fresh state", cfg.instance)
        return None
    check_program(cfg, got.stage)
    if got.source == "store":
        log.info("%s: state restored from RocksDB", cfg.instance)
    else:
        log.info("%s: state restored from the changelog %s", cfg.instance, part[0])
    offsets = got.offsets
    epoch, passed = epoch_state(offsets, inputs)
    resume = {}
    for name, off in offsets.items():
        if name.startswith("@"):  # the epoch's state, not an input offset
            continue
        topic, _, p = name.rpartition(":")
        if (topic, int(p)) in inputs:
            resume[(topic, int(p))] = int(off)
    return Restored(changelog.track(got.stage), resume, epoch, passed)
