"""``chronolog explain --changes`` against a running LARS fleet (``chronolog up`` on the bundled
broker): its input topic read again by offset gives the lines ``explain --input`` gives on the
same stream, each cause named by topic, partition and offset."""

from __future__ import annotations

import json
import subprocess
import sys
import time

import pytest
from hosted_fleet import fleet_up, lines

from chronolog.cli.fleet import publish_file

pytestmark = pytest.mark.fleet

PROGRAM = "q(X) :- p(X) [2].\ns(X) :- q(X), not r(X) [1].\n"
EVENTS = [{"t": 0, "pred": "p", "args": ["a"]}, {"t": 2, "pred": "r", "args": ["a"]}, {"t": 4, "pred": "p", "args": ["b"]},
          {"t": 1, "pred": "p", "args": ["a"], "op": "retract"}, {"t": 1, "pred": "p", "args": ["c"]}, {"t": 7}]


def _explain(*args: str) -> dict:
    got = subprocess.run([sys.executable, "-m", "chronolog", "explain", *args, "--as", "json"], capture_output=True,
                         text=True, timeout=120)
    assert got.returncode == 0, got.stderr
    return json.loads(got.stdout)


def test_explain_changes_on_a_lars_fleet(tmp_path):
    prog = tmp_path / "prog.lars"
    prog.write_text(PROGRAM)
    (tmp_path / "all.jsonl").write_bytes(lines(EVENTS))
    state = tmp_path / "state"
    with fleet_up(prog, state) as (info, _):
        publish_file(str(tmp_path / "all.jsonl"), info["bootstrap"], "chronolog")
        time.sleep(2.0)
        for query in ("q(a)@1", "s(a)@1", "q(c)@2"):
            fleet = _explain("--changes", query, "--state-dir", str(state))["changes"]
            local = _explain(str(prog), "--input", str(tmp_path / "all.jsonl"), "--changes", query)["changes"]
            assert [(c["line"], c["answer"], c["kind"]) for c in fleet] == \
                [(c["line"], c["answer"], c["kind"]) for c in local] and fleet
            for c in fleet:
                for cause in c["causes"]:
                    n = int(cause["where"].rsplit(" ", 1)[1])  # chronolog.facts[0] offset N: the N-th record
                    assert cause["where"] == f"chronolog.facts[0] offset {n}"
                    rec = EVENTS[n]
                    assert (cause["pred"], cause["args"], cause["retract"]) == (
                        rec.get("pred"), rec.get("args", []), rec.get("op") == "retract")
