"""Ingest validation: valid events get their partition key, bad ones become dead letters."""

from __future__ import annotations

from chronolog.engine.plan import plan_program
from chronolog.lang.lars import parse_lars
from chronolog.runtime.ingest import Accepted, ingest_record
from chronolog.schemas import DeadLetter
from chronolog.topology import build_topology

KEY = build_topology(plan_program(parse_lars("hot(S) :- temp(S, V) [3], V > 80.")), partitions=3).partition_key


def ingest(value: bytes | None, offset: int = 7):
    return ingest_record(value, topic="chronolog.facts", partition=0, offset=offset, partition_key=KEY)


def test_valid_events_are_keyed():
    got = ingest(b'{"t": 4, "pred": "temp", "args": ["s1", 90]}')
    assert isinstance(got, Accepted)
    assert (got.event.t, got.event.pred, got.event.args, got.key) == (4, "temp", ("s1", 90), "s1")
    tick = ingest(b'{"t": 5}')
    assert isinstance(tick, Accepted) and tick.key is None and tick.event.pred is None
    retract = ingest(b'{"t": 4, "pred": "temp", "args": ["s1", 90], "op": "retract"}')
    assert isinstance(retract, Accepted) and retract.event.retract and retract.key == "s1"


def test_malformed_events_become_dead_letters_with_the_reason():
    for raw, why in [
        (b'{"t": "x", "pred": "temp"}', "integer time point"),
        (b"not json", "invalid JSON"),
        (b'{"t": 1, "pred": "temp", "args": [null]}', "string or an integer"),
        (b"\xff\xfe", "invalid JSON"),
    ]:
        got = ingest(raw, offset=12)
        assert isinstance(got, DeadLetter), raw
        assert why in got.reason and got.offset == 12 and got.topic == "chronolog.facts"
        DeadLetter.model_validate_json(got.model_dump_json())  # the record itself is a valid contract


def test_empty_record_is_skipped():
    assert ingest(b"") is None and ingest(None) is None
