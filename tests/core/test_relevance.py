"""``core.relevance.event_filter``: an explanation's slice (``runtime.explain.sliced``), which
tests the usual event by what the filter said of the same deciding arguments (``said``), is
the slice of ``keep`` called on each event in turn — demanded events, events that only feed a
domain (the first of each fact, with ``first_feeders``), arities a demand does not name, time
advances, events out of time order."""

from __future__ import annotations

import dataclasses

from hypothesis import given, settings
from hypothesis import strategies as st

from chronolog.core.events import Event
from chronolog.core.relevance import ANY, event_filter
from chronolog.dialects.registry import lookup
from chronolog.runtime.explain import sliced

_PREDS = ("c", "o", "w")  # c(P, X) demanded for some P; o(P) and w(P, Q) feed id(P) (w: both)
_FEEDS = {"o": [("id", [0])], "w": [("id", [0]), ("id", [1])], "c": [("id", [0])]}

_events = st.lists(
    st.one_of(
        st.builds(Event, st.integers(0, 12)),  # a time advance
        st.builds(Event, st.integers(0, 12), st.sampled_from(_PREDS),
                  st.lists(st.sampled_from(["p", "q", "r", 1, 2]), min_size=1, max_size=3).map(tuple))),
    max_size=60)


@settings(max_examples=300, deadline=None)
@given(events=_events, first_feeders=st.booleans(), who=st.sampled_from(["p", "q", 1]),
       domain=st.sampled_from([{("p",)}, {(ANY,)}, set()]))
def test_the_slice_is_keep_event_by_event(events, first_feeders, who, domain):
    found = {"c": {(who, ANY)}, **({"id": domain} if domain else {})}
    one_by_one = event_filter(found, _FEEDS, first_feeders=first_feeders)
    want = _slice(lambda ev: one_by_one(ev), events)  # (a plain test: called on every event)
    assert _slice(event_filter(found, _FEEDS, first_feeders=first_feeders), events) == want


def _slice(test, events: list[Event]) -> list[Event]:
    row = dataclasses.replace(lookup("rtec"), relevant=lambda program: lambda atom, evaluator, given: test)
    return sliced(row, None, events, ("q", ()), None)


def test_the_slice_by_hand():
    """c(p, X) demanded (a longer c(p, ...) too: an input fluent's value comes last), id(P)
    for any P: of the events feeding id(q) only the first and a late one of its time (not
    c(q, _) after it: only a feeder), a time advance kept; the others leave a time advance
    where they were the latest so far."""
    found = {"c": {("p", ANY)}, "id": {(ANY,)}}
    events = [Event(1, "o", ("q",)), Event(2, "o", ("q",)), Event(2, "c", ("p", 3)), Event(3),
              Event(1, "o", ("q",)), Event(4, "c", ("q", 5)), Event(5, "c", ("q", 6)), Event(5, "c", ("p", 7, 8)),
              Event(6, "o", ("q",)), Event(6, "c", ("q", 9))]
    got = _slice(event_filter(found, _FEEDS, first_feeders=True), events)
    assert got == [events[0], events[2], events[3], events[4], Event(4), events[7], Event(6)]
