"""Journal entries held until their epoch is committed (state/held.py): whatever
the commits lag, restoring epoch E from the durable entries and snapshot E
gives the journal as it was at the end of epoch E (checked against a model
that keeps every epoch's journal)."""

from __future__ import annotations

import pytest
from hypothesis import given
from hypothesis import strategies as st

from chronolog.state.held import HeldEntries, restore


def test_an_entry_is_written_once_its_epoch_is_committed_and_not_before():
    held = HeldEntries()
    held.end_epoch(0, [("a", b"1"), ("b", b"1")])
    held.end_epoch(1, [("a", b"2"), ("b", None)])
    assert held.carried() == [(0, {"a": b"1", "b": b"1"}), (1, {"a": b"2", "b": None})]
    assert held.commit(0) == {"a": b"1", "b": b"1"}
    assert held.carried() == [(1, {"a": b"2", "b": None})]
    assert held.commit(0) == {}  # known already
    held.end_epoch(2, [])  # nothing changed: nothing held
    assert held.commit(2) == {"a": b"2", "b": None}
    assert held.carried() == []
    with pytest.raises(ValueError, match="epoch 2 ended after epoch 2"):
        held.end_epoch(2, [("a", b"3")])


def test_restore_overlays_the_snapshots_entries_on_the_durable_ones():
    assert restore({"a": b"1", "b": b"1"}, [(3, {"a": b"2"}), (4, {"b": None, "c": b"4"})], 4) == {
        "a": b"2", "c": b"4"}
    with pytest.raises(ValueError, match="carries entries of epoch 5"):
        restore({}, [(5, {"a": b"1"})], 4)


changes = st.lists(st.tuples(st.sampled_from("abcde"), st.booleans()), max_size=4)


@given(st.lists(st.tuples(changes, st.integers(0, 3)), min_size=1, max_size=12), st.data())
def test_restoring_epoch_e_gives_the_journal_at_the_end_of_e(epochs, data):
    held = HeldEntries()
    durable: dict = {}
    journal: dict = {}
    at_end: list[dict] = []  # the model: the journal after each epoch
    snapshots: list[list] = []
    notified = -1
    for e, (changed, lag) in enumerate(epochs):
        entries = {}
        for key, delete in changed:
            if delete:
                journal.pop(key, None)
                entries[key] = None
            else:
                journal[key] = entries[key] = f"{key}@{e}".encode()
        held.end_epoch(e, entries.items())
        at_end.append(dict(journal))
        snapshots.append(held.carried())
        # the control topic says, some epochs late, which epoch every output has committed
        if e - lag > notified:
            notified = e - lag
            for key, body in held.commit(notified).items():
                if body is None:
                    durable.pop(key, None)
                else:
                    durable[key] = body
    # the crash: the epoch committed everywhere may be later than this service has heard
    committed = data.draw(st.integers(max(notified, 0), len(epochs) - 1))
    assert restore(durable, snapshots[committed], committed) == at_end[committed]
