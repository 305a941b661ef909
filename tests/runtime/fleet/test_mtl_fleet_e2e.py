"""DatalogMTL in the fleet (`chronolog up prog.mtl`, the bundled broker): one chain
service hosting the MTL evaluator; killed with SIGKILL mid-stream with its
RocksDB state deleted, it restores from its changelog, and the answer topic
means what `chronolog run` prints.  With `--retention 3` the delayed Q(c) (3
behind the latest time 6) is a correction and P(c) (4 behind 4) goes to the
late topic, once."""

from __future__ import annotations

from fractions import Fraction as F

import pytest
from hosted_fleet import survives_sigkill
from test_mtl_fleet_stage import changes_of
from test_mtl_semantics import clip, meaning

pytestmark = pytest.mark.fleet

PROGRAM = "R(X):-Diamondminus[0,2]P(X)\nS(X):-Boxminus[1,1]R(X), Q(X)\nBoxplus[0,1]T(X):-S(X)\n"
FIRST = [{"interval": "[1,3]", "pred": "P", "args": ["a"]}, {"interval": "[2,6]", "pred": "Q", "args": ["a"]},
         {"interval": "[4,5]", "pred": "P", "args": ["b"]}, {"interval": "[0,1]", "pred": "P", "args": ["c"]},
         {"t": 6}]
SECOND = [{"interval": "[6,9]", "pred": "P", "args": ["a"]}, {"interval": "[5,9]", "pred": "Q", "args": ["b"]},
          {"interval": "[3,4]", "pred": "Q", "args": ["c"]}, {"interval": "[9,11]", "pred": "Q", "args": ["a"]},
          {"t": 12}]
HI = 12


def test_mtl_fleet_survives_sigkill_and_means_what_run_prints(tmp_path):
    prog = tmp_path / "prog.mtl"
    prog.write_text(PROGRAM)
    stderr = survives_sigkill(tmp_path, prog, FIRST, SECOND,
                              lambda out: clip(meaning(changes_of([x.encode() for x in out])), F(HI)),
                              options=("--retention", "3"), late=[FIRST[3]])  # P(c), as published
    assert "all.jsonl:4:1: warning: event at t=0 is older than the retention horizon (1); ignored" in stderr
    assert "ignored 1 events older than --retention 3" in stderr
