"""Forged changelog records: pickles in every position a record can hold them (issue 13)."""

from __future__ import annotations

import pickle
import zlib
from pathlib import Path

from chronolog.state.recovery import entry_record, snapshot_records


class Marker:
    """Unpickling this creates the marker file: proof that a pickle ran."""

    def __init__(self, path: Path) -> None:
        self.path = path

    def __reduce__(self):  # type: ignore[no-untyped-def]
        return (open, (str(self.path), "w"))


def hostile_records(marker: Path) -> list[bytes]:
    """Pickles in every position a changelog record can hold them: the whole
    value, a snapshot chunk (raw and compressed, under the old header and the
    new), an entry body, and the header line itself."""
    evil = pickle.dumps(Marker(marker))
    return [
        evil,
        b'{"i": 0, "n": 1, "offsets": {}}\n' + zlib.compress(evil),  # the format before issue 13
        snapshot_records(zlib.compress(evil), {}, 1 << 20)[0],
        snapshot_records(evil, {}, 1 << 20)[0],
        entry_record("log", 3, evil),
        entry_record("imports", 3, zlib.compress(evil)),
        b'{"kind": "entry", "name": "log", "key": 1, "del": false}\n' + evil,
        evil + b"\n" + evil,
    ]
