"""Ingest validation: valid events get their partition key, bad ones become dead letters."""

from __future__ import annotations

import orjson
from hypothesis import example, given, settings
from hypothesis import strategies as st

from chronolog.contract.models import DeadLetter
from chronolog.dialects.lars.layout import lars_layout
from chronolog.dialects.lars.parser import parse_lars
from chronolog.dialects.lars.plan import plan_program
from chronolog.runtime.fleet.topology import build_topology
from chronolog.stages.ingest import Accepted, ingest_record

KEY = build_topology(lars_layout(plan_program(parse_lars("hot(S) :- temp(S, V) [3], V > 80."))), partitions=3).partition_key


def ingest(value: bytes | None, offset: int = 7):
    return ingest_record(value, topic="chronolog.facts", partition=0, offset=offset, partition_key=KEY)


def test_valid_events_are_keyed():
    got = ingest(b'{"t": 4, "pred": "temp", "args": ["s1", 90]}')
    assert isinstance(got, Accepted)
    assert (got.event.t, got.event.pred, got.event.args, got.key) == (4, "temp", ("s1", 90), "s1")
    assert got.raw == b'{"t": 4, "pred": "temp", "args": ["s1", 90]}'  # forwarded as it came
    tick = ingest(b'{"t": 5}')
    assert isinstance(tick, Accepted) and tick.key is None and tick.event.pred is None
    retract = ingest(b'{"t": 4, "pred": "temp", "args": ["s1", 90], "op": "retract"}')
    assert isinstance(retract, Accepted) and retract.event.retract and retract.key == "s1"
    assert retract.raw is None  # not a plain fact: ingest encodes the event it read


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


def _full_check(value: bytes):
    """What the embedded reader makes of the record as one line: an event, None (blank) or the error."""
    import io

    from chronolog.core.errors import InputError
    from chronolog.io.formats import read_events

    raw = value.decode("utf-8", errors="replace").replace("\n", " ") + "\n"
    try:
        events = list(read_events(io.StringIO(raw), "x"))
    except InputError as exc:
        return exc.message
    return events[0] if events else None


_scalars = st.one_of(st.integers(-5, 5), st.text(max_size=3), st.none(), st.booleans(), st.floats(allow_nan=False))
_values = st.recursive(_scalars, lambda inner: st.lists(inner, max_size=3), max_leaves=6)
_records = st.dictionaries(st.sampled_from(["t", "pred", "args", "op", "x"]), _values, max_size=4) | _values


@settings(max_examples=400, deadline=None)
@given(_records)
def test_ingest_accepts_and_rejects_exactly_what_the_reader_does(obj):
    value = orjson.dumps(obj)
    got = ingest(value)
    want = _full_check(value)
    if isinstance(want, str):
        assert isinstance(got, DeadLetter) and got.reason == want
    elif want is None:
        assert got is None
    else:
        assert isinstance(got, Accepted)
        assert (got.event.t, got.event.pred, got.event.args, got.event.retract) == (want.t, want.pred, want.args, want.retract)


@settings(max_examples=300, deadline=None)
@given(st.lists(st.tuples(_records, st.booleans()), max_size=6))
@example([({"t": 0, "pred": "0"}, False)])  # a plain fact without "args", forwarded as its own bytes
def test_what_ingest_forwards_reads_as_the_event_the_reader_makes(items):
    """Ingest forwards a plain fact's own bytes (any spacing, any key order)
    and encodes every other event: grounding must read the same event either way."""
    from chronolog.core.events import event_record
    from chronolog.stages.ingest import IngestStage

    stage = IngestStage(None, 1)
    records, want = [], []
    for i, (obj, indent) in enumerate(items):
        value = orjson.dumps(obj, option=orjson.OPT_INDENT_2 if indent else 0)
        records.append(("facts", "chronolog.facts", 0, i, value))
        ev = _full_check(value)
        if ev is not None and not isinstance(ev, str) and ev.is_fact:
            want.append(event_record(ev))
    outs, _ = stage.process(records)
    got = []
    for out in outs:
        if out.topic == "ingested":
            rec = orjson.loads(out.value)  # as grounding reads it: a missing "args" is no arguments
            got += [{**r, "args": r.get("args", [])} for r in rec.get("batch", [rec]) if "pred" in r]
    assert got == want


_stream = st.lists(st.tuples(
    st.integers(0, 1),  # input partition
    st.one_of(
        st.builds(lambda t, k: orjson.dumps({"t": t, "pred": "temp", "args": [f"s{k}", 1]}),
                  st.integers(0, 6), st.integers(0, 3)),
        st.builds(lambda t: orjson.dumps({"t": t}), st.integers(0, 6)),
        st.builds(lambda t: orjson.dumps({"t": t, "pred": "temp", "args": ["s1", 1], "op": "retract"}),
                  st.integers(0, 6)),
        st.sampled_from([b"", b"not json", b'{"t": "x"}']),
    )), max_size=30)


@settings(max_examples=300, deadline=None)
@given(_stream, st.sampled_from([1, 3]), st.sampled_from([1, 2]), st.sampled_from([None, 1]))
def test_a_batch_gives_what_its_records_give_one_by_one(stream, partitions, inputs, retention):
    """``process`` takes a short path for the usual event; its records must be
    exactly those of ``handle`` on every record in turn (batched as ever)."""
    from chronolog.stages.ingest import IngestStage, _batched

    def stage():
        return IngestStage(KEY, partitions, input_partitions=inputs, retention=retention)

    records = [("facts", "chronolog.facts", p % inputs, i, v) for i, (p, v) in enumerate(stream)]
    fast, one_by_one = stage(), stage()
    got, _ = fast.process(records)
    want = _batched([o for _, topic, p, off, v in records for o in one_by_one.handle(v, topic, p, off)])
    assert [(o.topic, o.partition, o.value, o.key, o.urgent) for o in got] == \
        [(o.topic, o.partition, o.value, o.key, o.urgent) for o in want]
    assert fast.progress() == one_by_one.progress()
