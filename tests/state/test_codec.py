"""The explicit state encoding: exact round trips, and hostile bytes only ever rejected.

Round trips are checked with types (``"1"`` stays a string, ``1`` an integer,
``True`` a bool, tuples nested as they were, integers beyond 64 bits exact);
random bytes and random JSON given to every decoder raise ``StateError``
(or, on a changelog, a ``ChronologError`` naming topic, partition and
offset) and nothing else.
"""

from __future__ import annotations

import pickle
import zlib

import pytest
from hostile import Marker, hostile_records
from hypothesis import given, settings
from hypothesis import strategies as st

from chronolog.engine.core import ANSWERS, Imported
from chronolog.errors import ChronologError
from chronolog.evaluator import StateError
from chronolog.events import OnePredicate
from chronolog.state import codec
from chronolog.state.recovery import ChangelogState, entry_record
from chronolog.state.snapshot import read_entry, read_snapshot, snapshot

constants = st.one_of(
    st.text(max_size=6), st.integers(), st.integers(min_value=2**63, max_value=2**200),
    st.integers(max_value=-(2**64)), st.booleans(), st.floats(allow_nan=False, allow_infinity=False),
    st.sampled_from(["1", "-3", "true", "null", "[1]", "],["]),
)
args_st = st.recursive(st.tuples(constants), lambda inner: st.lists(st.one_of(constants, inner), max_size=3).map(tuple),
                       max_leaves=8)
preds = st.tuples(st.sampled_from(["p", "q", "#tick", "a b", "é"]), st.integers(0, 4))
keys = st.one_of(preds, preds.map(lambda k: (ANSWERS, k)))


def typed(v: object) -> object:
    """A value with the type of every part made visible (1 == True == 1.0 otherwise)."""
    if isinstance(v, (tuple, list, set, frozenset)):
        parts = [typed(x) for x in v]
        return (type(v).__name__, sorted(parts, key=repr) if isinstance(v, (set, frozenset)) else parts)
    return (type(v).__name__, v)


@given(st.lists(st.tuples(preds, args_st), max_size=8))
def test_facts_round_trip_exactly(facts):
    back = codec.decode_facts(codec.loads(codec.dumps(codec.encode_facts(facts))))
    assert typed(back) == typed(facts)


@given(preds, st.lists(args_st, max_size=5))
def test_one_predicate_facts_read_back_as_their_list(key, rows):
    facts = OnePredicate(key, rows)
    back = codec.decode_facts(codec.loads(codec.dumps(codec.encode_facts(facts))))
    assert typed(back) == typed(list(facts))


@given(st.booleans(), st.frozensets(st.tuples(keys, args_st), max_size=8))
def test_imported_content_round_trips_exactly(ok, atoms):
    imp = Imported(ok, atoms)
    back = codec.decode_imported(codec.loads(codec.dumps(codec.encode_imported(imp))))
    assert back == imp and typed(back.content) == typed(atoms) and type(back.consistent) is bool


def test_big_integers_and_lookalike_strings_stay_apart():
    facts = [(("p", 3), (2**100, "2", 2)), (("p", 3), ("x", -(2**70), (1, ("1",))))]
    back = codec.decode_facts(codec.loads(codec.dumps(codec.encode_facts(facts))))
    assert back == facts
    assert [type(a) for a in back[0][1]] == [int, str, int]
    assert back[1][1][2] == (1, ("1",)) and type(back[1][1][2][1][0]) is str


json_values = st.recursive(
    st.one_of(st.none(), st.booleans(), st.integers(), st.floats(allow_nan=False), st.text(max_size=5)),
    lambda inner: st.one_of(st.lists(inner, max_size=4), st.dictionaries(st.text(max_size=5), inner, max_size=4)),
    max_leaves=20,
)


@given(json_values)
def test_any_json_given_to_a_decoder_is_decoded_or_rejected_cleanly(value):
    for decode in (codec.decode_facts, codec.decode_atoms, codec.decode_imported, codec.args, codec.atom_key):
        try:
            decode(value)
        except StateError:
            pass


@settings(max_examples=300)
@given(st.binary(max_size=200), st.sampled_from(["log", "imports", "lower0", "sent_ok", "nosuch"]))
def test_random_bytes_never_crash_the_decoders(data, name):
    for decode in (lambda: read_entry(name, data), lambda: read_snapshot(data, "chain"),
                   lambda: read_snapshot(zlib.compress(data), "chain")):
        with pytest.raises(StateError):
            decode()


@settings(max_examples=300)
@given(st.lists(st.binary(max_size=120), min_size=1, max_size=4), st.data())
def test_random_records_on_a_changelog_stop_with_the_offset_named(records, data):
    state = ChangelogState("chronolog.chain.changelog", 2, "chain")
    for offset, value in enumerate(records):
        # sometimes a plausible header in front of random bytes
        if data.draw(st.booleans()):
            value = entry_record("log", offset, value)
        try:
            state.add(value, offset)
        except ChronologError as exc:
            assert f"chronolog.chain.changelog partition 2 offset {offset}:" in str(exc)
            return


def test_deeply_nested_arguments_are_rejected_not_a_recursion_error():
    deep = "[" * 5000 + "]" * 5000
    with pytest.raises(StateError):
        codec.decode_facts(codec.loads(f'[["p",1,[{deep}]]]'.encode()))


def test_pickles_in_every_position_are_rejected_and_never_run(tmp_path):
    marker = tmp_path / "ran"
    pickle.loads(pickle.dumps(Marker(marker)))  # the payload works when unpickled...
    assert marker.exists()
    marker.unlink()
    for value in hostile_records(marker):
        state = ChangelogState("t", 0, "reasoner")
        try:
            state.add(value, 7)
            state.result({})  # a forged snapshot that parsed as a header: its body must not decode
        except ChronologError as exc:
            assert "offset 7" in str(exc) or "no snapshot" in str(exc)
        else:
            raise AssertionError(f"accepted {value[:40]!r}")
        assert not marker.exists()  # ...and never here


def test_a_stage_snapshot_names_its_format_and_stage():
    class Tiny:
        def export_state(self) -> dict:
            return {"x": 2**80}

    data = snapshot(Tiny(), "grounding")  # type: ignore[arg-type]
    assert read_snapshot(data, "grounding") == {"x": 2**80}
    with pytest.raises(StateError, match="not 'chain'"):
        read_snapshot(data, "chain")
    future = zlib.compress(codec.dumps({"format": codec.FORMAT + 1, "stage": "grounding", "state": {}}))
    with pytest.raises(StateError, match="unknown state format version"):
        read_snapshot(future, "grounding")
