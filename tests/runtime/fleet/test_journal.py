"""Journals: change tracking for incremental snapshots, nothing recorded untracked."""

from __future__ import annotations

import pytest

from chronolog.state.journal import DELETED, Journal


def test_tracked_journal_reports_sets_deletes_and_in_place_changes():
    j = Journal()
    j.track()
    j[1] = [("a",)]
    j.setdefault(2, []).append("x")
    j[3] = "gone"
    j.take()
    del j[3]
    j[1].append(("b",))
    j.touch(1)
    assert sorted(j.take(), key=lambda kv: kv[0]) == [(1, [("a",), ("b",)]), (3, DELETED)]
    assert j.take() == []


def test_untracked_journal_records_nothing():
    j = Journal()
    for t in range(1000):
        j[t] = t
    assert j.changed is None
    with pytest.raises(RuntimeError):
        j.take()


