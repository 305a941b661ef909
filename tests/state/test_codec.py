"""The explicit state encoding: exact round trips, and bytes that are not state
never crash the decoders (only StateError) and never execute."""

from __future__ import annotations

import pickle
import zlib
from pathlib import Path

import msgspec
import pytest
from hypothesis import example, given, settings
from hypothesis import strategies as st

from chronolog.dialects.lars.facts import facts_data, facts_from, imported_data, imported_from
from chronolog.evaluator import StateError
from chronolog.state.codec import decode, encode, tuples
from chronolog.state.recovery import RECORD_FORMAT, ChangelogReader, entry_record, snapshot_records
from chronolog.state.schema import read_snapshot
from chronolog.state.snapshots import restore_stage

values = st.one_of(st.text(max_size=8), st.integers(min_value=-(2**80), max_value=2**80))
plain = st.recursive(
    st.one_of(st.none(), st.booleans(), values, st.floats(allow_nan=False, allow_infinity=False)),
    lambda inner: st.one_of(st.lists(inner, max_size=4), st.dictionaries(st.text(max_size=5), inner, max_size=4)),
    max_leaves=20,
)
facts = st.lists(st.tuples(st.text(min_size=1, max_size=5), st.lists(values, max_size=3).map(tuple)), max_size=6)


@given(plain)
def test_plain_data_round_trips_exactly(data):
    assert decode(encode(data)) == data


@given(facts)
def test_facts_round_trip_with_tuples_and_big_integers(items):
    facts_in = [((p, len(a)), a) for p, a in items]
    assert facts_from(decode(encode(facts_data(facts_in)))) == facts_in


@given(st.booleans(), st.lists(st.tuples(st.text(min_size=1, max_size=4), st.lists(values, max_size=3)), max_size=5))
def test_imports_round_trip(ok, atoms):
    from chronolog.dialects.lars.engine.content import grouped
    from chronolog.dialects.lars.engine.core import ANSWERS, Imported

    flat = frozenset(((p, len(a)), tuple(a)) for p, a in atoms) | frozenset(
        ((ANSWERS, (p, len(a))), tuple(a)) for p, a in atoms[:1])
    imported = Imported(ok, grouped(flat))
    again = imported_from(decode(encode(imported_data(imported))))
    assert again.consistent == ok and again.content == grouped(flat)
    # what earlier releases stored: one [key, args] pair per atom
    earlier = imported_from(decode(encode([ok, [[list(k) if k[0] != ANSWERS else [k[0], list(k[1])], list(a)]
                                                 for k, a in flat]])))
    assert earlier.content == grouped(flat)


@settings(max_examples=300)
@given(st.binary(max_size=200))
@example(b'"\x80"')  # a JSON string that is not UTF-8: msgspec raised UnicodeDecodeError
def test_random_bytes_never_crash_the_decoder(blob):
    try:
        decode(blob)
    except StateError:
        pass


@settings(max_examples=300)
@given(st.binary(max_size=200))
def test_random_bytes_never_crash_the_changelog_reader(blob):
    reader = ChangelogReader("t.changelog", 0)
    try:
        reader.add(7, blob)
    except StateError as exc:
        assert "t.changelog partition 0 offset 7" in str(exc)


@settings(max_examples=200)
@given(plain)
def test_wrong_shapes_are_state_errors_not_crashes(data):
    from chronolog.dialects.lars.stages import GroundingStage
    from chronolog.stages.ingest import IngestStage

    for stage in (IngestStage(None, 1), GroundingStage()):
        for snap in (encode({"format": 1, "kind": type(stage).__name__, "stage": data}),  # version 1
                     encode({"kind": stage.kind, "version": 2, "stage": data})):
            try:
                restore_stage(stage, snap, [])
            except StateError:
                pass


@pytest.mark.parametrize(("record", "message"), [
    ({"format": 99, "kind": "IngestStage", "stage": {}}, "unknown state format version 99"),
    ({"kind": "ingest", "version": 3, "stage": {}}, "kind 'ingest' version 3 .this build reads versions 1 to 2"),
    ({"kind": "ingest", "version": 0, "stage": {}}, "version 0"),
    ({"kind": "sorter", "version": 1, "stage": {}}, "unknown kind 'sorter'"),
    ({"format": 1, "kind": "SorterStage", "stage": {}}, "unknown kind 'SorterStage'"),
    ({"kind": "grounding", "version": 2, "stage": {}}, "state of a 'grounding' stage, not of a 'ingest'"),
    ({"kind": "ingest", "version": 2, "stage": {"first": "x"}}, "ingest state version 2: Expected `int | null`"),
    ([1, 2], "not a snapshot object"),
])
def test_unknown_kinds_versions_and_shapes_are_refused(record, message):
    with pytest.raises(StateError, match=message):
        read_snapshot(encode(record), "ingest")
    assert tuples([1, ["a", [2]]]) == (1, ("a", (2,)))


class Marker:
    """Unpickling this would create a file: proof that a pickle ran."""

    def __init__(self, path: Path) -> None:
        self.path = path

    def __reduce__(self):
        return (Path.touch, (self.path,))


def hostile_records(marker: Path) -> list[bytes]:
    """Pickles in every position a changelog record could hold one."""
    evil = pickle.dumps(Marker(marker))
    z = zlib.compress(evil)
    entry_key, entry = entry_record("log", 5, b"x")
    entry_head = entry.split(b"\n", 1)[0]
    (_, chunk), = snapshot_records(b"x", {"a:0": 1}, 1024)
    chunk_head = chunk.split(b"\n", 1)[0]
    return [
        evil,  # the whole value
        z,
        entry_head + b"\n" + evil,  # an entry's body
        entry_head + b"\n" + z,
        chunk_head + b"\n" + evil,  # a snapshot's body
        chunk_head + b"\n" + z,
        evil + b"\n" + z,  # the header
        b'{"i": 0, "n": 1, "offsets": {"a:0": 1}}\n' + z,  # the pre-format-1 snapshot record (the attack)
        b'{"kind": "entry", "name": "log", "key": 5, "del": false}\n' + z,  # a pre-format-1 entry
        msgspec.json.encode({"kind": "snapshot", "i": 0, "n": 1, "offsets": {}, "format": 2}) + b"\n" + z,
    ]


def test_hostile_records_never_execute(tmp_path):
    from chronolog.dialects.lars.parser import parse_lars
    from chronolog.dialects.lars.plan import plan_program
    from chronolog.dialects.lars.stages import ChainStage

    marker = tmp_path / "pwned"
    plan = plan_program(parse_lars("q(X) :- p(X) [2].\n"))
    for i, value in enumerate(hostile_records(marker)):
        reader = ChangelogReader("c", 0)
        try:
            reader.add(i, value)
        except StateError as exc:
            assert f"offset {i}" in str(exc)
        else:  # accepted as a record: its body is then only ever decoded as data
            found = reader.found
            snapshot = found.snapshot if found is not None else encode({"format": 1, "kind": "ChainStage", "stage": {}})
            entries = list(reader.entries.items())
            with pytest.raises(StateError):
                restore_stage(ChainStage(plan), snapshot, [(k, v) for k, v in entries if v is not None])
        assert not marker.exists(), f"record {i} executed code"


@given(st.sampled_from(["log", "sent", "sent_ok", "lower0", "lower12_ok", 'odd"name\\']),
       st.lists(st.tuples(st.integers(-(2 ** 70), 2 ** 70), st.none() | st.binary(max_size=20)), max_size=5))
def test_entry_records_are_the_header_object_and_the_body(name, entries):
    """The batch form writes what the one-entry form always wrote: a message
    key ``j:<journal>:<time>`` and the header object, as msgspec encodes it, on the first line."""
    from chronolog.state.recovery import entry_records

    got = entry_records(name, entries)
    assert len(got) == len(entries)
    for (key, body), (k, v) in zip(entries, got):
        assert k == f"j:{name}:{key}".encode()
        head, rest = v.split(b"\n", 1)
        assert head == msgspec.json.encode({"kind": "entry", "name": name, "key": key, "format": RECORD_FORMAT,
                                            "deleted": body is None})
        assert rest == (body or b"")
