"""DatalogMTL in the fleet (`chronolog up prog.mtl`, the bundled broker): one chain
service hosting the MTL evaluator; killed with SIGKILL mid-stream with its
RocksDB state deleted, it restores from its changelog, and the answer topic
means what `chronolog run` prints.  With `--retention 3` the delayed Q(c) (3
behind the latest time 6) is a correction and P(c) (4 behind 4) goes to the
late topic, once."""

from __future__ import annotations

import io
import json
import os
import shutil
import signal
import subprocess
import sys
import time
from fractions import Fraction as F

import orjson
from test_mtl_fleet_stage import changes_of
from test_mtl_semantics import clip, meaning

from chronolog.cli.fleet import publish_file, tail_topic

PROGRAM = "R(X):-Diamondminus[0,2]P(X)\nS(X):-Boxminus[1,1]R(X), Q(X)\nBoxplus[0,1]T(X):-S(X)\n"
FIRST = [{"interval": "[1,3]", "pred": "P", "args": ["a"]}, {"interval": "[2,6]", "pred": "Q", "args": ["a"]},
         {"interval": "[4,5]", "pred": "P", "args": ["b"]}, {"interval": "[0,1]", "pred": "P", "args": ["c"]},
         {"t": 6}]
SECOND = [{"interval": "[6,9]", "pred": "P", "args": ["a"]}, {"interval": "[5,9]", "pred": "Q", "args": ["b"]},
          {"interval": "[3,4]", "pred": "Q", "args": ["c"]}, {"interval": "[9,11]", "pred": "Q", "args": ["a"]},
          {"t": 12}]
HI = 12


def lines(events: list[dict]) -> bytes:
    return b"".join(orjson.dumps(e) + b"\n" for e in events)


def test_mtl_fleet_survives_sigkill_and_means_what_run_prints(tmp_path):
    prog = tmp_path / "prog.mtl"
    prog.write_text(PROGRAM)
    (tmp_path / "all.jsonl").write_bytes(lines(FIRST + SECOND))
    run = subprocess.run([sys.executable, "-m", "chronolog", "run", str(prog), "--input", str(tmp_path / "all.jsonl"),
                          "--retention", "3"], capture_output=True, timeout=120, check=True)
    assert b"all.jsonl:4:1: warning: event at t=0 is older than the retention horizon (1); ignored" in run.stderr
    assert b"ignored 1 events older than --retention 3" in run.stderr
    want = clip(meaning(changes_of(run.stdout.splitlines())), F(HI))
    state = tmp_path / "state"
    up = subprocess.Popen([sys.executable, "-m", "chronolog", "up", str(prog), "--state-dir", str(state),
                           "--idle-flush", "0.3", "--retention", "3"], stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, text=True)
    try:
        deadline = time.monotonic() + 90
        while not (line := up.stdout.readline()).startswith("ready"):  # type: ignore[union-attr]
            assert line and time.monotonic() < deadline, "no ready line"
        info = json.loads((state / "fleet.json").read_text())
        bootstrap = info["bootstrap"]
        assert [s["name"] for s in info["services"]] == ["chain"]
        (tmp_path / "first.jsonl").write_bytes(lines(FIRST))
        publish_file(str(tmp_path / "first.jsonl"), bootstrap, "chronolog")
        log = state / "run" / "chain-p0.log"
        time.sleep(3.0)  # committed (the idle flush answers the first half)
        victim = next(s["pid"] for s in info["services"] if s["name"] == "chain")
        shutil.rmtree(state / "chain-p0")
        os.kill(victim, signal.SIGKILL)
        (tmp_path / "second.jsonl").write_bytes(lines(SECOND))
        publish_file(str(tmp_path / "second.jsonl"), bootstrap, "chronolog")
        got: dict = {}
        while time.monotonic() < deadline + 60:
            out = io.StringIO()
            tail_topic(bootstrap, "chronolog.answers", idle_exit=1.5, out=out)
            got = clip(meaning(changes_of([x.encode() for x in out.getvalue().splitlines()])), F(HI))
            if got == want:
                break
            time.sleep(0.5)
        assert got == want
        assert "restored from the changelog" in log.read_text()
        late = io.StringIO()
        tail_topic(bootstrap, "chronolog.late", idle_exit=1.5, out=late)
        assert [orjson.loads(x) for x in late.getvalue().splitlines()] == [FIRST[3]]  # P(c), as published
    finally:
        subprocess.run([sys.executable, "-m", "chronolog", "down", "--state-dir", str(state)], capture_output=True,
                       timeout=60)
        up.wait(30)
