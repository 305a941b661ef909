"""RTEC in the fleet (`chronolog up ed.prolog`, the bundled broker): one chain service hosting the
RTEC evaluator; killed with SIGKILL mid-stream with its RocksDB state deleted, it restores from its
changelog, and the answer topic means what `chronolog run` prints."""

from __future__ import annotations

import json

from hosted_fleet import survives_sigkill
from test_rtec import SIMPLE, meaning

FIRST = [{"t": 2, "pred": "switch_on"}, {"t": 2, "pred": "tag", "args": ["a"]}, {"t": 5, "pred": "switch_off"},
         {"t": 6, "pred": "arm", "args": ["a"]}]
SECOND = [{"t": 4, "pred": "arm", "args": ["b"]},  # late: its own time is before what was evaluated
          {"t": 7, "pred": "switch_on"}, {"t": 9, "pred": "fuse"}, {"t": 10, "pred": "arm", "args": ["b"]},
          {"t": 30}]


def test_rtec_fleet_survives_sigkill_and_means_what_run_prints(tmp_path):
    prog = tmp_path / "ed.prolog"
    prog.write_text(SIMPLE)
    survives_sigkill(tmp_path, prog, FIRST, SECOND, lambda out: meaning([json.loads(x) for x in out], horizon=40))
