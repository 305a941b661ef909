"""Barrier alignment (runtime/fleet/epochs.py): between two completed epochs a service
processes exactly each input's records between those two barriers, in each
input's order, whatever the interleaving of the inputs (checked against a
model that splits every input at its barriers)."""

from __future__ import annotations

import pytest
from hypothesis import given
from hypothesis import strategies as st

from chronolog.runtime.fleet.epochs import Alignment, Completed, Deliver, barrier_of, barrier_record

BARRIER = object()


def test_a_barrier_record_round_trips_and_data_is_not_one():
    assert barrier_of(barrier_record(7)) == 7
    assert barrier_of(b'{"t":3,"pred":"p","args":[1]}') is None
    assert barrier_of(None) is None
    with pytest.raises(ValueError, match="natural number"):
        barrier_of(b'{"barrier":-1}')


def test_an_input_ahead_is_held_until_the_other_delivers_its_barrier():
    a = Alignment(["x", "y"])
    assert a.offer("x", "x1") == [Deliver("x", "x1")]
    assert a.offer("x", None, 0) == [Deliver("x", None, 0)]  # x has ended epoch 0, y has not
    assert a.paused("x") and not a.paused("y") and a.waiting()
    assert a.offer("x", "x2") == []  # epoch 1's: held
    assert a.offer("y", "y1") == [Deliver("y", "y1")]
    assert a.held() == 1
    assert a.offer("y", None, 0) == [Deliver("y", None, 0), Completed(0), Deliver("x", "x2")]
    assert a.epoch == 0 and a.held() == 0 and not a.paused("x") and not a.waiting()


def test_a_restored_alignment_holds_the_input_that_had_passed_its_barrier():
    a = Alignment(["x", "y"], epoch=0, seen={"x": 1})  # committed while x was ahead
    assert a.passed() == {"x": 1, "y": 0} and a.paused("x")
    assert a.offer("x", "x3") == []  # read again after the restart: still epoch 2's
    assert a.offer("y", None, 1) == [Deliver("y", None, 1), Completed(1), Deliver("x", "x3")]


def test_a_joined_input_whose_first_barrier_is_ahead_is_held_until_the_others_catch_up():
    """The topic of a stratum an upgrade added, its reasoner started at the upgrade's epoch 3:
    its first barrier is 4 while the reader is at epoch 1; its records wait for epoch 4, and it
    does not hold the others' epochs up.  Stored so and restored, it stays ahead."""
    a = Alignment(["x", "k"], epoch=1, seen={"x": 1, "k": -1})
    assert a.offer("k", "k4") == [Deliver("k", "k4")]  # (before its first barrier: unaligned, as a joined input's)
    assert a.offer("k", None, 4) == [Deliver("k", None, 4)]
    assert a.offer("k", "k5") == [] and a.paused("k")
    assert a.offer("x", None, 2) == [Deliver("x", None, 2), Completed(2)]
    b = Alignment(["x", "k"], epoch=2, seen=a.passed())  # restored
    assert b.offer("k", "k5") == []
    assert b.offer("x", None, 3) == [Deliver("x", None, 3), Completed(3)]
    assert b.offer("x", None, 4) == [Deliver("x", None, 4), Completed(4), Deliver("k", "k5")]
    with pytest.raises(ValueError, match="skipped from epoch 4 to barrier 6"):
        b.offer("k", None, 6)  # (once it passed a barrier, it is aligned as any)


def test_a_repeated_barrier_is_dropped_and_a_skipped_epoch_is_an_error():
    a = Alignment(["x"], epoch=4)  # restored at epoch 4
    assert a.offer("x", None, 3) == [Deliver("x", None, 3)]  # passed over: only its position moves
    assert a.offer("x", None, 5) == [Deliver("x", None, 5), Completed(5)]
    with pytest.raises(ValueError, match="skipped from epoch 5 to barrier 7"):
        a.offer("x", None, 7)
    with pytest.raises(KeyError):
        a.offer("z", "z1")
    with pytest.raises(ValueError, match="at least one input"):
        Alignment([])


def test_one_input_several_epochs_behind_releases_them_one_by_one():
    a = Alignment(["x", "y"])
    got = []
    for item, barrier in [("x1", None), (None, 0), ("x2", None), (None, 1), ("x3", None), (None, 2), ("x4", None)]:
        got += a.offer("x", item, barrier)
    assert got == [Deliver("x", "x1"), Deliver("x", None, 0)]
    got = a.offer("y", None, 0) + a.offer("y", "y2") + a.offer("y", None, 1) + a.offer("y", None, 2)
    assert got == [Deliver("y", None, 0), Completed(0), Deliver("x", "x2"), Deliver("x", None, 1),
                   Deliver("y", "y2"), Deliver("y", None, 1), Completed(1), Deliver("x", "x3"),
                   Deliver("x", None, 2), Deliver("y", None, 2), Completed(2), Deliver("x", "x4")]


@st.composite
def streams(draw):
    """Inputs, each a list of items and BARRIER marks, and an interleaving of them."""
    n = draw(st.integers(1, 3))
    inputs = []
    for s in range(n):
        segments = draw(st.lists(st.lists(st.integers(0, 99), max_size=4), min_size=1, max_size=5))
        tokens: list = []
        for k, seg in enumerate(segments):
            if k:
                tokens.append(BARRIER)
            tokens += [(s, k, i, v) for i, v in enumerate(seg)]
        inputs.append(tokens)
    order = draw(st.permutations([s for s, tokens in enumerate(inputs) for _ in tokens]))
    return inputs, order


@given(streams())
def test_each_epoch_holds_exactly_each_inputs_records_between_its_barriers(case):
    inputs, order = case
    a = Alignment(range(len(inputs)))
    nxt = [0] * len(inputs)
    barriers = [0] * len(inputs)
    events = []
    for s in order:
        token = inputs[s][nxt[s]]
        nxt[s] += 1
        if token is BARRIER:
            events += a.offer(s, None, barriers[s])
            barriers[s] += 1
        else:
            events += a.offer(s, token)
    # the model: epochs complete when every input has passed their barrier
    completed = min(barriers)
    assert [e.epoch for e in events if isinstance(e, Completed)] == list(range(completed))
    chunk, delivered, passed = 0, {}, {}
    for e in events:
        if isinstance(e, Completed):
            chunk += 1
        elif e.barrier is not None:  # a barrier passed: in order, before its epoch completes
            assert e.barrier == passed.get(e.source, -1) + 1 and e.barrier >= chunk
            passed[e.source] = e.barrier
        else:
            delivered.setdefault((e.source, chunk), []).append(e.item)
    assert all(passed.get(s, -1) == min(b - 1, completed) for s, b in enumerate(barriers))
    for s, tokens in enumerate(inputs):
        segments = _segments(tokens)
        for k in range(completed + 1):  # each completed epoch, and what the open one has so far
            assert delivered.get((s, k), []) == segments[k], (s, k)
    held = sum(len(seg) for tokens in inputs for seg in _segments(tokens)[completed + 1:])
    held += sum(max(0, b - completed - 1) for b in barriers)  # barriers past the open epoch wait too
    assert a.held() == held
    assert a.epoch == completed - 1


def _segments(tokens: list) -> list[list]:
    out: list[list] = [[]]
    for token in tokens:
        if token is BARRIER:
            out.append([])
        else:
            out[-1].append(token)
    return out


# ---------------------------------------------------------------- gated inputs (relays)


def test_a_gated_input_waits_for_its_barrier_then_passes_its_epoch_on():
    a = Alignment(["x"], gated=["x"])
    assert a.offer("x", "x1") == [] and a.offer("x", "x2") == [] and a.held() == 2
    assert a.offer("x", "b0", 0) == [Deliver("x", "x1"), Deliver("x", "x2"), Deliver("x", "b0", 0), Completed(0)]
    assert a.held() == 0


def test_a_replay_record_drops_the_unfinished_epoch_and_the_repeats_after_it():
    a = Alignment(["x"], gated=["x"])
    a.offer("x", "old-x1")
    a.offer("x", "old-b0", 0)
    a.offer("x", "old-x2")  # epoch 1, unfinished: its writer died
    # the relay restarted from epoch -1 and sends everything again
    assert a.offer("x", "replay", replay=True) == [Deliver("x", "old-x2", skip=True), Deliver("x", "replay", skip=True)]
    assert a.offer("x", "new-x1") == []
    assert a.offer("x", "new-b0", 0) == [Deliver("x", "new-x1", skip=True), Deliver("x", "new-b0", skip=True)]
    assert a.offer("x", "new-x2") == []
    assert a.offer("x", "new-b1", 1) == [Deliver("x", "new-x2"), Deliver("x", "new-b1", 1), Completed(1)]
    with pytest.raises(ValueError, match="not written by a relay"):
        Alignment(["y"]).offer("y", "replay", replay=True)
    with pytest.raises(ValueError, match="must be one of the inputs"):
        Alignment(["y"], gated=["z"])


def test_dropped_records_of_an_input_ahead_keep_their_place_behind_its_held_ones():
    a = Alignment(["x", "y"], gated=["x"])
    a.offer("x", "b0", 0)  # x is ahead: y has not ended epoch 0
    a.offer("x", "x1")
    assert a.offer("x", "b1", 1) == []  # x's epoch 1 passed its gate, held behind y
    assert a.offer("x", "again", replay=True) == []  # a replay record: held too, in x's order
    assert a.offer("y", "b0", 0) == [Deliver("y", "b0", 0), Completed(0), Deliver("x", "x1"),
                                     Deliver("x", "b1", 1)]
    assert a.held() == 1  # x is ahead again, past barrier 1: the replay record still waits
    assert a.offer("y", "b1", 1) == [Deliver("y", "b1", 1), Completed(1), Deliver("x", "again", skip=True)]


@st.composite
def relays(draw):
    """Two relays' streams, each written by several lives: a life restores an
    epoch no later than the last barrier written, writes a replay record, then
    each later epoch's records and barrier, and may die in the middle of one."""
    streams = []
    for s in range(2):
        tokens: list = []
        written = -1  # last barrier in the stream
        restored = -1
        for life in range(draw(st.integers(1, 3))):
            restored = draw(st.integers(restored, written))
            tokens.append(("replay", s, life))
            last = life == 2 or draw(st.booleans())
            epochs = draw(st.integers(0, 4))
            for e in range(restored + 1, restored + 1 + epochs):
                n = draw(st.integers(0, 3))
                if not last and e == restored + epochs:  # dies while writing it
                    tokens += [(s, life, e, i) for i in range(draw(st.integers(0, n)))]
                    break
                tokens += [(s, life, e, i) for i in range(n)] + [(BARRIER, e)]
                written = max(written, e)
            if last:
                break
        streams.append(tokens)
    order = draw(st.permutations([s for s, tokens in enumerate(streams) for _ in tokens]))
    return streams, order


@given(relays())
def test_relays_that_restart_deliver_each_epoch_once_as_its_first_complete_writer_wrote_it(case):
    streams, order = case
    a = Alignment([0, 1], gated=[0, 1])
    nxt = [0, 0]
    events = []
    for s in order:
        token = streams[s][nxt[s]]
        nxt[s] += 1
        if token[0] == "replay":
            events += a.offer(s, token, replay=True)
        elif token[0] is BARRIER:
            events += a.offer(s, token, token[1])
        else:
            events += a.offer(s, token)
    # the model: epoch e of a stream is what the first life to finish it wrote
    expected: dict[int, list[list]] = {}
    for s, tokens in enumerate(streams):
        writer = {}
        current = None  # every stream starts with its first life's replay record
        for token in tokens:  # the life that wrote each epoch's barrier first
            if token[0] is BARRIER and token[1] not in writer:
                writer[token[1]] = current
            elif token[0] == "replay":
                current = token[2]
        expected[s] = [[t for t in tokens if t[0] == s and t[2] == e and t[1] == writer[e]]
                       for e in sorted(writer)]
    completed = min(len(expected[0]), len(expected[1]))
    assert [e.epoch for e in events if isinstance(e, Completed)] == list(range(completed))
    delivered: dict[tuple[int, int], list] = {}
    chunk = 0
    for e in events:
        if isinstance(e, Completed):
            chunk += 1
        elif not e.skip and e.barrier is None:
            delivered.setdefault((e.source, chunk), []).append(e.item)
    for s in (0, 1):
        for k in range(completed):
            assert delivered.get((s, k), []) == expected[s][k], (s, k)
        # the open epoch: what passed the gate of the input that is ahead, nothing unfinished
        assert delivered.get((s, completed), []) == (expected[s][completed] if len(expected[s]) > completed else [])


def test_an_input_that_joins_a_restored_state_catches_up_unaligned_then_aligns():
    """An upgrade's added stratum: its topic is read from its start by an output at epoch 2.
    Its old epochs' records pass at once, its barriers move its own position only (kept,
    so that a restart's gate knows them), and from the epoch under way on it is aligned."""
    a = Alignment(["x", "new"], epoch=2, seen={"new": -1}, gated=["new"])
    assert a.passed() == {"x": 2, "new": -1} and not a.waiting()
    out = a.offer("new", "n0") + a.offer("new", None, 0) + a.offer("new", "n1") + a.offer("new", None, 1)
    assert out == [Deliver("new", "n0"), Deliver("new", None, 0), Deliver("new", "n1"), Deliver("new", None, 1)]
    assert a.passed()["new"] == 1 and a.epoch == 2
    again = Alignment(["x", "new"], epoch=2, seen=a.passed(), gated=["new"])  # restarted: repeats are dropped
    assert again.offer("new", "n1 again") == [] and again.offer("new", None, 1) == [
        Deliver("new", "n1 again", None, True), Deliver("new", None, None, True)]
    out = a.offer("new", "n2") + a.offer("new", None, 2)
    assert out == [Deliver("new", "n2"), Deliver("new", None, 2)] and a.epoch == 2
    assert a.offer("new", "n3") == []  # epoch 3's: gated until its barrier
    assert a.offer("new", None, 3) == [Deliver("new", "n3"), Deliver("new", None, 3)]  # now ahead of x
    assert a.paused("new") and a.offer("x", None, 3) == [Deliver("x", None, 3), Completed(3)]
