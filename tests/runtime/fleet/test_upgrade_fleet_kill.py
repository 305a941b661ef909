"""``chronolog upgrade`` of a DatalogMTL and an RTEC fleet (``chronolog up`` on the bundled
broker) with 1 and 3 input partitions, the chain service killed with SIGKILL *during* the
switch — after it read the request and logged that it applies it, before the transaction
holding the new version and the restatement commits (the log shows the restarted service
applying it again).  The retained input is large enough that the switch takes a few hundred
ms.  Late events and retractions on both sides of T follow; the answer topic means what
``chronolog run --upgrade T=NEW`` prints on the whole stream."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
from collections.abc import Callable
from pathlib import Path

import pytest
from hosted_fleet import answers_until, fleet_up, lines
from hosted_fleet import applying as _applying
from meaning import sampled_meaning
from test_rtec import meaning as rtec_meaning

from chronolog.cli.fleet import publish_file

pytestmark = pytest.mark.fleet

# DatalogMTL: a window widened and a rule added from T=4; 5,000 filler events make the switch slow
MTL_OLD = "Q(X):-Diamondminus[0,1]P(X)\nS(X):-Q(X),R(X)\n"
MTL_NEW = "Q(X):-Diamondminus[0,3]P(X)\nS(X):-Q(X),R(X)\nS(X):-P(X)\n"
MTL_FILLER = [{"interval": f"[{i % 12},{i % 12 + 1}]", "pred": "P", "args": [f"f{i}"]} for i in range(5000)]
MTL_FIRST = [{"t": 0}, {"interval": "[1,2]", "pred": "P", "args": ["a"]}, {"interval": "[2,6]", "pred": "R", "args": ["a"]},
             {"interval": "[5,6]", "pred": "P", "args": ["b"]}, *MTL_FILLER, {"t": 8}]
MTL_SECOND = [{"interval": "[9,10]", "pred": "P", "args": ["c"]}, {"interval": "[3,4]", "pred": "P", "args": ["d"]},
              {"interval": "[1,2]", "pred": "P", "args": ["a"], "op": "retract"},
              {"interval": "[5,6]", "pred": "P", "args": ["b"], "op": "retract"},
              {"interval": "[7,8]", "pred": "P", "args": ["e"]}, {"t": 14}]

# RTEC: a termination added from T=500 (locked closes a door); 20 doors toggling for 1,000 points
_DOORS = "".join(f"door(d{i}).\n" for i in range(1, 23))
RTEC_OLD = ("initiatedAt(open(D)=true, T) :- happensAt(opened(D), T).\n"
            "terminatedAt(open(D)=true, T) :- happensAt(closed(D), T).\n" + _DOORS
            + "grounding(open(D)=true) :- door(D).\n")
RTEC_NEW = RTEC_OLD.replace("happensAt(closed(D), T).\n", "happensAt(closed(D), T).\n"
                            "terminatedAt(open(D)=true, T) :- happensAt(locked(D), T).\n")
_OWN = {3: ("opened", "d1"), 5: ("locked", "d1"), 490: ("opened", "d2"), 505: ("locked", "d2")}
RTEC_FIRST = [ev for t in range(1000) for ev in
              [{"t": t, "pred": ("opened", "locked", "closed")[(t + i) % 3], "args": [f"d{i}"]} for i in range(3, 23)]
              + ([{"t": t, "pred": _OWN[t][0], "args": [_OWN[t][1]]}] if t in _OWN else [])]
RTEC_SECOND = [{"t": 400, "pred": "opened", "args": ["d1"]},  # late, before T
               {"t": 450, "pred": "locked", "args": ["d1"]},  # late, before T: the old rules ignore it
               {"t": 3, "pred": "opened", "args": ["d1"], "op": "retract"},  # retracted, before T
               {"t": 520, "pred": "opened", "args": ["d1"]},  # late, after T
               {"t": 530, "pred": "locked", "args": ["d1"]},  # late, after T: the new rules close d1
               {"t": 505, "pred": "locked", "args": ["d2"], "op": "retract"},  # retracted, after T
               {"t": 1100, "pred": "closed", "args": ["d2"]}, {"t": 1200}]

# kept strata: only S changes (Q keeps its state, not evaluated again); in RTEC a statically
# determined fluent is added over open with its own grounding/1 clause — the clause is shut's
# content only (rtec/changes.py), so open keeps its state and shut is derived from just before T
MTL_TOP = MTL_OLD + "S(X):-P(X)\n"
RTEC_ADDED = RTEC_OLD + ("holdsFor(shut(D)=true, I) :- holdsFor(open(D)=true, A), complement_all([A], I).\n"
                         "grounding(shut(D)=true) :- door(D).\n")

CASES = {
    "mtl": ("mtl", MTL_OLD, MTL_NEW, "4", MTL_FIRST, MTL_SECOND,
            lambda out: sampled_meaning([json.loads(x) for x in out if x.strip()], 14)),
    "mtl-keep": ("mtl", MTL_OLD, MTL_TOP, "4", MTL_FIRST, MTL_SECOND,
                 lambda out: sampled_meaning([json.loads(x) for x in out if x.strip()], 14)),
    "rtec-keep": ("prolog", RTEC_OLD, RTEC_ADDED, "500", RTEC_FIRST, RTEC_SECOND,
                  lambda out: rtec_meaning([json.loads(x) for x in out if x.strip()], horizon=1300)),
    "rtec": ("prolog", RTEC_OLD, RTEC_NEW, "500", RTEC_FIRST, RTEC_SECOND,
             lambda out: rtec_meaning([json.loads(x) for x in out if x.strip()], horizon=1300)),
}


def _expected(old: Path, new: Path, stream: Path, at: str, meaning: Callable[[list[str]], object]) -> object:
    """What ``run --upgrade at=new`` means on the whole stream (checked to differ from ``run``'s)."""
    run = subprocess.run([sys.executable, "-m", "chronolog", "run", str(old), "--input", str(stream),
                          "--upgrade", f"{at}={new}"], capture_output=True, text=True, timeout=300)
    assert run.returncode == 0, run.stderr
    want = meaning(run.stdout.splitlines())
    plain = subprocess.run([sys.executable, "-m", "chronolog", "run", str(old), "--input", str(stream)],
                           capture_output=True, text=True, timeout=300)
    assert want and want != meaning(plain.stdout.splitlines())  # the upgrade changes the answers
    return want


@pytest.mark.parametrize(("dialect", "partitions", "given"),
                         [("mtl", 1, True), ("mtl", 3, True), ("rtec", 1, True), ("rtec", 3, True), ("mtl", 3, False),
                          ("mtl-keep", 1, True), ("rtec-keep", 3, True)],
                         ids=["mtl-1", "mtl-3", "rtec-1", "rtec-3", "mtl-3-without-at", "mtl-keep-1", "rtec-keep-3"])
def test_upgrade_killed_during_the_switch_means_run_upgrade(tmp_path, dialect, partitions, given):
    """``given``: with ``--at T``; else T is the first time the service had not evaluated (the
    restarted one's, which the command prints), and the expectation is made with it."""
    ext, old_text, new_text, at, first, second, meaning = CASES[dialect]
    meaning: Callable[[list[str]], object]
    old, new = tmp_path / f"old.{ext}", tmp_path / f"new.{ext}"
    old.write_text(old_text)
    new.write_text(new_text)
    stream = tmp_path / "all.jsonl"
    stream.write_bytes(lines(first + second))
    want = _expected(old, new, stream, at, meaning) if given else None
    state = tmp_path / "state"
    options = ("--partitions", str(partitions), "--input-partitions", str(partitions))
    with fleet_up(old, state, options) as (info, deadline):
        bootstrap = info["bootstrap"]
        assert info["input_partitions"] == partitions
        (tmp_path / "first.jsonl").write_bytes(lines(first))
        publish_file(str(tmp_path / "first.jsonl"), bootstrap, "chronolog")
        time.sleep(2.0)
        log = state / "run" / "chain-p0.log"
        assert _applying(log) == 0
        upgrade = subprocess.Popen([sys.executable, "-m", "chronolog", "upgrade", str(new),
                                    *(("--at", at) if given else ()), "--state-dir", str(state), "--timeout", "120"],
                                   stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
        until = time.monotonic() + 60
        while _applying(log) == 0:
            assert time.monotonic() < until, "the service never started to apply the upgrade"
            time.sleep(0.002)
        os.kill(next(s["pid"] for s in info["services"] if s["name"] == "chain"), signal.SIGKILL)
        out, err = upgrade.communicate(timeout=180)
        assert upgrade.returncode == 0, err
        if given:
            assert f"from T={at}" in out
        else:  # where the service had evaluated to: the first half's latest time (the filler's [11,12]
            # starts at 11), evaluated by the idle flush; DatalogMTL's time is dense, so T is 11 itself
            applied = out.rsplit("from T=", 1)[1].split()[0]
            assert applied == "11", out
            want = _expected(old, new, stream, applied, meaning)
        if dialect.endswith("-keep"):  # the plan keeps the unchanged strata
            assert "(open/1): unchanged: keeps its state" in out or "(Q/1): unchanged: keeps its state" in out, out
        if "keeps its state" in out:  # the chain service (one, reading every input partition) says what it did
            assert out.count(": kept with their state: ") + out.count(": evaluated the new program whole") == 1, out
        # killed before its commit: the restarted service read the request again and applied it
        assert _applying(log) == 2, log.read_text()[-3000:]
        (tmp_path / "second.jsonl").write_bytes(lines(second))
        publish_file(str(tmp_path / "second.jsonl"), bootstrap, "chronolog")
        assert answers_until(bootstrap, meaning, want, deadline + 150) == want
