"""Deeply nested JSON in stored state is rejected cleanly: a ``StateError`` (the
service's clean stop), never a ``RecursionError`` traceback.  A forged
changelog record of a few kilobytes of brackets used to escape every check."""

from __future__ import annotations

import zlib

import pytest

from chronolog.dialects.lars.parser import parse_lars
from chronolog.dialects.lars.plan import plan_program
from chronolog.dialects.lars.stages import ChainStage
from chronolog.evaluator import StateError
from chronolog.state.codec import decode
from chronolog.state.recovery import ChangelogReader, entry_record, snapshot_records
from chronolog.state.snapshots import restore_stage, snapshot_bytes

DEEP = ("[" * 100_000 + "]" * 100_000).encode()


def chain() -> ChainStage:
    return ChainStage(plan_program(parse_lars("q(X) :- p(X) [2].")))


def test_the_codec_rejects_deep_nesting():
    with pytest.raises(StateError):
        decode(zlib.compress(DEEP))


@pytest.mark.parametrize("where", ["entry", "snapshot"])
def test_a_deep_body_is_a_state_error_naming_the_record(where):
    bad = zlib.compress(DEEP)
    stage = chain()
    entries = [(("log", 3), bad)] if where == "entry" else []
    snapshot = bad if where == "snapshot" else snapshot_bytes(chain())
    with pytest.raises(StateError, match="offset 9: "):
        restore_stage(stage, snapshot, entries, where=lambda key: "chronolog.chain.changelog partition 0 offset 9: ")


def test_a_deep_header_is_a_state_error_naming_the_offset():
    reader = ChangelogReader("chronolog.chain.changelog", 0)
    _, good = entry_record("log", 1, b"[]")
    reader.add(0, good)
    with pytest.raises(StateError, match="partition 0 offset 1: "):
        reader.add(1, DEEP + b"\n[]")
    _, chunk = snapshot_records(b"", {}, 1 << 20)[0]
    with pytest.raises(StateError, match="offset 2: "):
        reader.add(2, b'{"kind": "snapshot", "x": ' + DEEP + b"}\n" + chunk)
