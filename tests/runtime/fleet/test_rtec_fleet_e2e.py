"""RTEC in the fleet (`chronolog up ed.prolog`, the bundled broker): one chain service hosting the
RTEC evaluator; killed with SIGKILL mid-stream with its RocksDB state deleted, it restores from its
changelog, and the answer topic means what `chronolog run` prints; with RTEC's windows
(`--window`, `--step`) too."""

from __future__ import annotations

import json
import subprocess
import sys

import pytest
from hosted_fleet import answers_until, fleet_up, lines, survives_sigkill
from test_rtec import SIMPLE, meaning

from chronolog.cli.fleet import publish_file

pytestmark = pytest.mark.fleet

FIRST = [{"t": 2, "pred": "switch_on"}, {"t": 2, "pred": "tag", "args": ["a"]}, {"t": 5, "pred": "switch_off"},
         {"t": 6, "pred": "arm", "args": ["a"]}]
SECOND = [{"t": 4, "pred": "arm", "args": ["b"]},  # late: its own time is before what was evaluated
          {"t": 7, "pred": "switch_on"}, {"t": 9, "pred": "fuse"}, {"t": 10, "pred": "arm", "args": ["b"]},
          {"t": 30}]


def test_rtec_fleet_survives_sigkill_and_means_what_run_prints(tmp_path):
    prog = tmp_path / "ed.prolog"
    prog.write_text(SIMPLE)
    survives_sigkill(tmp_path, prog, FIRST, SECOND, lambda out: meaning([json.loads(x) for x in out], horizon=40))


def test_rtec_fleet_with_rtecs_windows_means_what_run_prints(tmp_path):
    """`chronolog up ed.prolog --window 10 --step 10`: the chain service runs RTEC's windowed mode;
    the answer topic means what `chronolog run --window 10 --step 10 --until <last>` prints."""
    from test_rtec_windowed import LAMP, LAMP_STREAM

    prog = tmp_path / "lamp.prolog"
    prog.write_text(LAMP)
    events = [{"t": t, "pred": p} for t, p in LAMP_STREAM + [(33, "switch_off"), (41, "switch_on"),
                                                            (38, "switch_on")]] + [{"t": 50}]
    (tmp_path / "all.jsonl").write_bytes(lines(events))
    window = ["--window", "10", "--step", "10"]

    def run(*extra: str) -> dict:
        done = subprocess.run([sys.executable, "-m", "chronolog", "run", str(prog), "--input",
                               str(tmp_path / "all.jsonl"), "--until", "50", *extra],
                              capture_output=True, timeout=120, check=True, text=True)
        return meaning([json.loads(x) for x in done.stdout.splitlines()], horizon=60)

    want = run(*window)
    assert want and want != run()  # the windows matter: two late events are ignored
    with fleet_up(prog, tmp_path / "state", tuple(window)) as (info, deadline):
        bootstrap = info["bootstrap"]
        publish_file(str(tmp_path / "all.jsonl"), bootstrap, "chronolog")
        assert answers_until(bootstrap, lambda out: meaning([json.loads(x) for x in out], horizon=60), want,
                             deadline + 60) == want
