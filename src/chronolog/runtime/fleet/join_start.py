"""Where the reasoner of a stratum an upgrade added starts reading: the upgrade's epoch.

A per-stratum LARS fleet's upgrade that adds strata has the reasoners below them send their
content from ``T − reach`` on as seeds, in the epoch the upgrade record is in
(``dialects/lars/seeds.py``).  So an added reasoner that has committed nothing needs nothing
of its topics before that epoch: it starts as if it had restored a state committed at the
end of the epoch before (E − 1), at the last epoch marker (a barrier, or a relay's replay
record) of E − 1 or earlier on each input, and the alignment (``epochs.py``) drops what
belongs to epochs up to E − 1 as repeats.  Within epoch E its stage drops a lower stratum's
records before that stratum's seed and starts from the seeds (``ReasonerStage._joined``).

E is found by reading the grounded partition backwards from its end to the upgrade record
(the newest copy, if grounding sent it again after a restart) and then to the marker before
it: 1 + that marker's epoch.  The other inputs are read backwards to their last marker of
epoch E − 1 or earlier.  The added reasoner is started right after the upgrade is applied,
so both are near the ends: what is read is the last epochs, not the topics.  Where the
upgrade record is not found (the grounded topic no longer holds it, or the partition's end
is not known), it reads everything from the start, as any fresh service does.
"""

from __future__ import annotations

import logging
import time
from collections.abc import Iterator
from typing import Any

import orjson
from confluent_kafka import TopicPartition

from chronolog.runtime.fleet import kafka_clients
from chronolog.runtime.fleet.config import ServiceConfig, restore_settings
from chronolog.runtime.fleet.epochs import barrier_of, is_replay
from chronolog.versions import UPGRADE_KEY, UpgradeRequest

log = logging.getLogger("chronolog.service")

CHUNK = 500  # records read at a time, going backwards


def marker_epoch(value: bytes | None) -> int | None:
    """The last epoch a barrier or replay record closes (None: neither): what follows it is of
    the next one."""
    if is_replay(value):
        assert value is not None
        return int(orjson.loads(value)["replay"])
    return barrier_of(value)


def _range(reader: Any, tp: tuple[str, int], lo: int, hi: int, idle: float) -> list[tuple[int, bytes | None]]:
    """The records of partition ``tp`` at offsets ``[lo, hi)`` (fewer where none comes for ``idle`` s)."""
    reader.assign([TopicPartition(tp[0], tp[1], lo)])
    got: list[tuple[int, bytes | None]] = []
    last = time.monotonic()
    while time.monotonic() - last < idle:
        msg = reader.poll(0.1)
        if msg is None or msg.error():
            continue
        last = time.monotonic()
        if msg.offset() < hi:
            got.append((msg.offset(), msg.value()))
        if msg.offset() >= hi - 1:
            break
    return got


def backwards(reader: Any, tp: tuple[str, int], idle: float = 2.0) -> Iterator[tuple[int, bytes | None]]:
    """The records of partition ``tp``, newest first, from its end as the broker says it now."""
    low, high = reader.get_watermark_offsets(TopicPartition(tp[0], tp[1]), timeout=10)
    hi = high
    while hi > max(low, 0):
        lo = max(low, 0, hi - CHUNK)
        yield from reversed(_range(reader, tp, lo, hi, idle))
        hi = lo


def upgrade_epoch(reader: Any, tp: tuple[str, int], version: str) -> int | None:
    """The epoch of the newest copy of the upgrade record of ``version`` in ``tp`` (None: not there)."""
    found = False
    for _, value in backwards(reader, tp):
        if not found:
            if value is not None and value.startswith(UPGRADE_KEY):
                try:
                    found = UpgradeRequest.decode(value).version == version
                except ValueError:
                    continue
            continue
        epoch = marker_epoch(value)
        if epoch is not None:
            return epoch + 1
    return 0 if found else None


def epoch_start(reader: Any, tp: tuple[str, int], epoch: int) -> int:
    """Where to read ``tp`` from to see every record of the epochs after ``epoch``: its last
    marker closing ``epoch`` or an earlier one (its first offset where there is none)."""
    first = 0
    for offset, value in backwards(reader, tp):
        first = offset
        got = marker_epoch(value)
        if got is not None and got <= epoch:
            return offset
    return first


def join_start(cfg: ServiceConfig, inputs: list[tuple[str, int]], grounded: str,
               version: str) -> tuple[int, dict[tuple[str, int], int]] | None:
    """The epoch before the upgrade to ``version`` (what the added reasoner starts as having
    completed) and where it reads each input from; None: from the start."""
    reader = kafka_clients.consumer({**restore_settings(cfg), "group.id": f"{cfg.prefix}-join-start"})
    try:
        head = next((tp for tp in inputs if tp[0] == grounded), None)
        if head is None:
            return None
        epoch = upgrade_epoch(reader, head, version)
        if epoch is None or epoch == 0:
            return None
        starts = {tp: epoch_start(reader, tp, epoch - 1) for tp in inputs}
    except Exception as exc:  # noqa: BLE001 - where the ends are not known: from the start, as any fresh service
        log.warning("%s: reading its topics from the start (the upgrade that added its stratum not found: %s)",
                    cfg.instance, exc)
        return None
    finally:
        reader.close()
    log.info("%s: starts at epoch %d, the upgrade's (version %s), its inputs from %s", cfg.instance, epoch,
             version, ", ".join(f"{t}:{p}@{o}" for (t, p), o in sorted(starts.items())))
    return epoch - 1, starts
