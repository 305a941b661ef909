"""One end-to-end check for every dialect the fleet hosts through its evaluator
(DatalogMTL, RTEC): `chronolog up` on the bundled broker, the first half of a
stream published, the chain service killed with SIGKILL and its RocksDB state
deleted, the second half (with late input) published; the service restores
from its changelog and the answer topic means what `chronolog run` prints."""

from __future__ import annotations

import io
import json
import os
import shutil
import signal
import subprocess
import sys
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from pathlib import Path

import orjson

from chronolog.cli.fleet import publish_file, tail_topic

APPLYING = "applying version"  # a service's log line when it starts to apply an upgrade


def chronolog(*args: str, timeout: float = 120) -> subprocess.CompletedProcess:
    """``python -m chronolog ARGS`` in a fresh process (the fleet commands keep no state in-process)."""
    return subprocess.run([sys.executable, "-m", "chronolog", *args], capture_output=True, text=True, timeout=timeout)


def applying(log: Path) -> int:
    """How often the service log says an upgrade started to be applied (a kill is aimed after it)."""
    return log.read_text(errors="replace").count(APPLYING) if log.exists() else 0


def lines(events: list[dict]) -> bytes:
    return b"".join(orjson.dumps(e) + b"\n" for e in events)


def answers_until(bootstrap: str, meaning: Callable[[list[str]], object], want: object, deadline: float) -> object:
    """The meaning of the answer topic, read again until it is ``want`` or the deadline passes."""
    got: object = None
    while time.monotonic() < deadline:
        out = io.StringIO()
        tail_topic(bootstrap, "chronolog.answers", idle_exit=1.5, out=out)
        got = meaning(out.getvalue().splitlines())
        if got == want:
            break
        time.sleep(0.5)
    return got


def evaluated_then_planned(tmp_path: Path, bootstrap: str, state: Path, first: list[dict], new: Path,
                           at: str) -> str:
    """The first part of a stream published and given time to be evaluated and committed (so
    that an upgrade at ``at`` restates from there on), then the plan ``chronolog upgrade new
    --at AT --dry-run`` prints."""
    (tmp_path / "first.jsonl").write_bytes(lines(first))
    publish_file(str(tmp_path / "first.jsonl"), bootstrap, "chronolog")
    time.sleep(2.0)
    plan = chronolog("upgrade", str(new), "--at", at, "--state-dir", str(state), "--dry-run")
    assert plan.returncode == 0, plan.stderr
    return plan.stdout


def upgraded(new: Path, at: str, state: Path, kill: int | None = None) -> str:
    """``chronolog upgrade NEW --at AT`` against the fleet of ``state``, the service of pid
    ``kill`` (if given) killed with SIGKILL 0.3 s after it starts (the request on its way or
    being applied); its output, checked to say the upgrade applies from T=AT."""
    upgrade = subprocess.Popen([sys.executable, "-m", "chronolog", "upgrade", str(new), "--at", at,
                                "--state-dir", str(state), "--timeout", "90"],
                               stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    if kill is not None:
        time.sleep(0.3)
        os.kill(kill, signal.SIGKILL)
    out, err = upgrade.communicate(timeout=120)
    assert upgrade.returncode == 0, err
    assert f"from T={at}" in out, out
    return out


def rest_answered(tmp_path: Path, bootstrap: str, second: list[dict], meaning: Callable[[list[str]], object],
                  want: object, deadline: float) -> object:
    """The rest of the stream published; the meaning of the answer topic once it is ``want``
    (or the deadline passed: ``answers_until``)."""
    (tmp_path / "second.jsonl").write_bytes(lines(second))
    publish_file(str(tmp_path / "second.jsonl"), bootstrap, "chronolog")
    return answers_until(bootstrap, meaning, want, deadline)


@contextmanager
def fleet_up(prog: Path, state: Path, options: tuple[str, ...] = ()) -> Iterator[tuple[dict, float]]:
    """``chronolog up prog`` on the bundled broker until ``ready``; yields (fleet.json, the
    deadline the ready line met: 90 s from the start) and takes the fleet down after."""
    up = subprocess.Popen([sys.executable, "-m", "chronolog", "up", str(prog), "--state-dir", str(state),
                           "--idle-flush", "0.3", *options], stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, text=True)
    try:
        deadline = time.monotonic() + 90
        while not (line := up.stdout.readline()).startswith("ready"):  # type: ignore[union-attr]
            assert line and time.monotonic() < deadline, "no ready line"
        yield json.loads((state / "fleet.json").read_text()), deadline
    finally:
        subprocess.run([sys.executable, "-m", "chronolog", "down", "--state-dir", str(state)], capture_output=True,
                       timeout=60)
        up.wait(30)


def survives_sigkill(tmp_path: Path, prog: Path, first: list[dict], second: list[dict],
                     meaning: Callable[[list[str]], object], options: tuple[str, ...] = (),
                     late: list[dict] | None = None) -> str:
    """``meaning``: the answer lines (JSON text) -> what they mean, compared fleet vs run;
    ``options`` for both; ``late``: the records the late-events topic must hold (exactly
    once, across the restart).  Returns what ``chronolog run`` wrote on stderr."""
    (tmp_path / "all.jsonl").write_bytes(lines(first + second))
    run = subprocess.run([sys.executable, "-m", "chronolog", "run", str(prog), "--input", str(tmp_path / "all.jsonl"),
                          *options], capture_output=True, timeout=120, check=True, text=True)
    want = meaning(run.stdout.splitlines())
    assert want
    state = tmp_path / "state"
    with fleet_up(prog, state, options) as (info, deadline):
        bootstrap = info["bootstrap"]
        assert [s["name"] for s in info["services"]] == ["chain"]
        (tmp_path / "first.jsonl").write_bytes(lines(first))
        publish_file(str(tmp_path / "first.jsonl"), bootstrap, "chronolog")
        log = state / "run" / "chain-p0.log"
        time.sleep(3.0)  # committed (the idle flush answers the first half)
        victim = next(s["pid"] for s in info["services"] if s["name"] == "chain")
        shutil.rmtree(state / "chain-p0")
        os.kill(victim, signal.SIGKILL)
        (tmp_path / "second.jsonl").write_bytes(lines(second))
        publish_file(str(tmp_path / "second.jsonl"), bootstrap, "chronolog")
        assert answers_until(bootstrap, meaning, want, deadline + 60) == want
        assert "restored from the changelog" in log.read_text()
        if late is not None:
            out = io.StringIO()
            tail_topic(bootstrap, "chronolog.late", idle_exit=1.5, out=out)
            assert [orjson.loads(x) for x in out.getvalue().splitlines()] == late
    return run.stderr
