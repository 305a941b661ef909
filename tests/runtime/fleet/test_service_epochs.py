"""Epochs in the service loop (runtime/fleet/service.py with runtime/fleet/epochs.py): the
head writes a barrier into every partition it feeds at each commit, a service
with several inputs cuts a consumed batch where an epoch completes and holds
the records of an input that is ahead, and forwards the barrier if it feeds
another service.  Without Kafka: the services are built but never run; the
end-to-end fleet tests run them on the bundled broker."""

from __future__ import annotations

import threading
from dataclasses import dataclass

import pytest

from chronolog.contract.models import Committed
from chronolog.dialects.lars.layout import lars_layout
from chronolog.dialects.lars.parser import parse_lars
from chronolog.dialects.lars.plan import plan_program
from chronolog.runtime.fleet.commit import Commits
from chronolog.runtime.fleet.config import ServiceConfig
from chronolog.runtime.fleet.epochs import (
    Alignment,
    Skipped,
    barrier_record,
    cut,
    epoch_offsets,
    epoch_state,
    replay_record,
)
from chronolog.runtime.fleet.relay import RelaySender
from chronolog.runtime.fleet.service import Service
from chronolog.runtime.fleet.topology import build_topology
from chronolog.stages.interface import Out
from chronolog.state.changelog import Captured

PROGRAM = "a(X) :- p(X) [2].\nb(X) :- p(X), not a(X).\n"  # two strata, joined on X: partitionable


@dataclass
class Msg:
    """What a consumed confluent-kafka message gives the loop."""

    t: str
    p: int
    o: int
    v: bytes

    def topic(self) -> str:
        return self.t

    def partition(self) -> int:
        return self.p

    def offset(self) -> int:
        return self.o

    def value(self) -> bytes:
        return self.v

    def error(self) -> None:
        return None


def service(name: str, tmp_path, stratum: int | None = None, partitions: int = 1, partition: int = 0) -> Service:
    plan = plan_program(parse_lars(PROGRAM))
    return Service(ServiceConfig(name, lars_layout(plan), "unused:9092", stratum=stratum, partitions=partitions,
                                 partition=partition, state_dir=tmp_path))


def epochs(svc: Service, msgs: list) -> list:
    """A consumed batch cut as the service's loop cuts it."""
    return cut(msgs, svc.alignment, svc.gated)


def test_ingest_ends_an_epoch_at_each_commit_in_every_partition_it_feeds(tmp_path):
    ingest = service("ingest", tmp_path, partitions=2)
    assert ingest.head and ingest.forwards
    first = ingest._barriers(None)
    assert [(o.topic, o.partition, o.value) for o in first] == [
        ("ingested", 0, barrier_record(0)), ("ingested", 1, barrier_record(0))]
    assert [o.value for o in ingest._barriers(None)] == [barrier_record(1)] * 2
    assert ingest.epoch == 1


def test_a_reasoner_forwards_a_completed_epoch_and_output_records_it(tmp_path):
    reasoner = service("reasoner", tmp_path, stratum=2)
    assert not reasoner.head and reasoner._barriers(None) == []
    (out,) = reasoner._barriers(3)
    assert (out.topic, out.value, reasoner.epoch) == ("stratum", barrier_record(3), 3)
    output = service("output", tmp_path)
    (control,) = output._barriers(3)  # output records the epoch on the control topic, in its transaction
    assert (control.topic, control.partition, control.key, output.epoch) == ("control", 0, b"output-0", 3)
    assert Committed.model_validate_json(control.value) == Committed(committed=3, partition=0)
    assert output._barriers(None) == [] and output.epoch == 3  # a commit that completed no epoch


def test_each_output_partition_has_its_own_record_on_the_compacted_control_topic(tmp_path):
    outputs = [service("output", tmp_path, partitions=2, partition=p) for p in range(2)]
    keys = {o._barriers(5)[0].key for o in outputs}
    assert keys == {b"output-0", b"output-1"}
    (control,) = [t for t in build_topology(outputs[0].cfg.layout, 2).topics if t.name == "chronolog.control"]
    assert (control.partitions, control.cleanup) == (1, "compact")
    # a chained fleet has no output epochs; its control topic holds the services' upgrade outcomes
    (chained,) = [t for t in build_topology(outputs[0].cfg.layout, 2, chain=True).topics if t.name == "chronolog.control"]
    assert (chained.partitions, chained.cleanup) == (1, "compact")


def test_a_consumed_batch_is_cut_where_an_epoch_completes(tmp_path):
    output = service("output", tmp_path)  # reads stratum.1 and stratum.2
    assert [t for t, _ in output.inputs] == ["chronolog.stratum.1", "chronolog.stratum.2"]
    output.alignment = Alignment(output.inputs)
    s1, s2 = "chronolog.stratum.1", "chronolog.stratum.2"
    batch = [Msg(s1, 0, 0, b'{"t":0}'), Msg(s1, 0, 1, barrier_record(0)), Msg(s1, 0, 2, b'{"t":1}'),
             Msg(s2, 0, 0, b'{"t":0}'), Msg(s2, 0, 1, barrier_record(0)), Msg(s2, 0, 2, b'{"t":1}')]
    (done, epoch), (rest, open_epoch) = epochs(output, batch)
    assert epoch == 0 and open_epoch is None
    # epoch 0: each input's records up to its barrier (the barriers move the positions)
    assert [(m.t, m.o) for m in done] == [(s1, 0), (s1, 1), (s2, 0), (s2, 1)]
    # stratum.1's record after its barrier was held until stratum.2's barrier came
    assert [(m.t, m.o) for m in rest] == [(s1, 2), (s2, 2)]


def test_the_alignment_is_saved_with_the_offsets_and_restored(tmp_path):
    reasoner = service("reasoner", tmp_path, stratum=2)
    ahead = Alignment(reasoner.inputs, 4, {("chronolog.stratum.1", 0): 5})  # committed while stratum.1 was ahead
    saved = {"chronolog.grounded:0": 17, "chronolog.stratum.1:0": 9, **epoch_offsets(4, ahead)}
    assert saved["@barrier:chronolog.stratum.1:0"] == 5
    epoch, passed = epoch_state(saved, reasoner.inputs)
    again = Alignment(reasoner.inputs, epoch, passed)
    assert again.passed() == ahead.passed() and again.paused(("chronolog.stratum.1", 0))
    assert epoch_state({"chronolog.grounded:0": 17}, reasoner.inputs) == (-1, {})  # from before epochs
    assert epoch_offsets(2, None) == {"@epoch": 2}  # the head: no inputs to align


def test_a_batch_without_barriers_is_still_held_while_an_input_is_ahead(tmp_path):
    output = service("output", tmp_path)
    output.alignment = Alignment(output.inputs)
    s1, s2 = "chronolog.stratum.1", "chronolog.stratum.2"
    plain = [Msg(s1, 0, 0, b'{"t":0}'), Msg(s2, 0, 0, b'{"t":0}')]
    assert epochs(output, plain) == [(plain, None)]  # nothing to align: one chunk as consumed
    assert [[m.o for m in c] for c, _ in epochs(output, [Msg(s1, 0, 1, barrier_record(0))])] == [[1]]
    assert epochs(output, [Msg(s1, 0, 2, b'{"t":1}')]) == [([], None)]  # stratum.1 is ahead: held
    (done, epoch), (rest, _) = epochs(output, [Msg(s2, 0, 1, barrier_record(0))])
    assert epoch == 0 and [(m.t, m.o) for m in done] == [(s2, 1)] and [(m.t, m.o) for m in rest] == [(s1, 2)]


class Sent:
    """A producer that keeps what it is given."""

    def __init__(self) -> None:
        self.records: list[tuple] = []

    def produce(self, topic, value, key, partition):  # type: ignore[no-untyped-def]
        self.records.append((topic, partition, value))

    def poll(self, timeout: float) -> int:
        return 0


def test_grounding_and_reasoners_relay_and_their_readers_gate_them(tmp_path):
    grounding = service("grounding", tmp_path)
    reasoner = service("reasoner", tmp_path, stratum=2, partitions=2, partition=1)
    output = service("output", tmp_path)
    ingest = service("ingest", tmp_path)
    assert grounding.relay and reasoner.relay and not output.relay and not ingest.relay
    assert grounding.gated == []  # ingested is ingest's: transactional
    assert reasoner.gated == reasoner.inputs == [("chronolog.grounded", 1), ("chronolog.stratum.1", 1)]
    assert output.gated == output.inputs
    sender = RelaySender(reasoner.cfg, reasoner.routes, reasoner.metrics, Sent())
    sender.send([Out(reasoner._feeds(), 0, replay_record(4))])  # what a relay sends first
    assert sender.producer.records == [("chronolog.stratum.2", 1, b'{"replay":4}')]


def test_what_a_restarted_relay_sends_again_only_moves_the_positions(tmp_path):
    output = service("output", tmp_path)
    s1, s2 = "chronolog.stratum.1", "chronolog.stratum.2"
    output.alignment = Alignment(output.inputs, 0, gated=output.gated)  # restored at epoch 0
    output.positions, output._counted = {(s1, 0): 5, (s2, 0): 5}, {}
    batch = [Msg(s1, 0, 5, b'{"t":1}'),  # epoch 1, unfinished: its writer died
             Msg(s1, 0, 6, replay_record(-1)), Msg(s1, 0, 7, b'{"t":0}'), Msg(s1, 0, 8, barrier_record(0))]
    ((chunk, epoch),) = epochs(output, batch)
    assert epoch is None and all(isinstance(m, Skipped) for m in chunk) and [m.offset() for m in chunk] == [5, 6, 7, 8]
    outs, lines, _, consumed = output._process(chunk)
    assert (outs, lines, consumed) == ([], [], False)  # the stage saw none of it
    assert output.positions == {(s1, 0): 9, (s2, 0): 5}
    assert output.metrics.repeats_dropped._value.get() == 4  # chronolog_repeats_dropped_total


def test_a_commit_where_an_epoch_completes_saves_that_epochs_alignment_not_the_batchs(tmp_path):
    output = service("output", tmp_path)
    s1, s2 = "chronolog.stratum.1", "chronolog.stratum.2"
    output.alignment = Alignment(output.inputs, gated=output.gated)
    batch = [Msg(s1, 0, 0, barrier_record(0)), Msg(s2, 0, 0, barrier_record(0)),
             Msg(s1, 0, 1, b'{"t":1}'), Msg(s1, 0, 2, barrier_record(1))]  # stratum.1 ends epoch 1 too
    (done, epoch), _ = epochs(output, batch)
    output.epoch = epoch
    saved = output._saved_epoch(at_epoch=True)  # committed after the first chunk: positions at barrier 0
    restored = Alignment(output.inputs, *epoch_state(saved, output.inputs), output.gated)
    # read again after a restart: stratum.1's epoch 1 is not a repeat
    got = restored.offer((s1, 0), "t1") + restored.offer((s1, 0), "b1", 1)
    assert [d.item for d in got if not d.skip] == ["t1", "b1"]


def test_a_relay_writes_its_state_on_its_state_thread_one_commit_at_a_time(tmp_path):
    def commits(svc: Service) -> Commits:  # as the service makes them when it runs (no broker: never used)
        relay = RelaySender(svc.cfg, svc.routes, svc.metrics, Sent()) if svc.relay else None
        return Commits(None, None, svc.names, svc.changelog, svc.routes, svc.metrics, relay)

    reasoner = commits(service("reasoner", tmp_path, stratum=1))
    assert reasoner.thread is not None and commits(service("output", tmp_path)).thread is None
    release, written = threading.Event(), []

    def slow_write(state, outs, lines, stamps):  # type: ignore[no-untyped-def]
        release.wait(10)
        written.append((threading.current_thread().name, state.offsets, outs, lines))

    reasoner.write = slow_write
    reasoner.store(Captured([], b"s1", {"@epoch": 1}))
    assert reasoner.stored() is False and written == []  # in flight: the loop goes on relaying
    threading.Timer(0.2, release.set).start()
    reasoner.store(Captured([], b"s2", {"@epoch": 2}))  # waits for the first: one at a time, in order
    reasoner.storing.result(10)
    assert reasoner.stored() is True and reasoner.storing is None
    assert [(name.startswith("state"), offsets) for name, offsets, _, _ in written] == [
        (True, {"@epoch": 1}), (True, {"@epoch": 2})]

    def failing_write(state, outs, lines, stamps):  # type: ignore[no-untyped-def]
        raise RuntimeError("the broker refused the transaction")

    reasoner.write = failing_write
    reasoner.store(Captured([], b"s3", {"@epoch": 3}))
    reasoner.storing.exception(10)  # done
    with pytest.raises(RuntimeError, match="refused"):
        reasoner.stored()  # the loop stops the service here
    reasoner.close()
