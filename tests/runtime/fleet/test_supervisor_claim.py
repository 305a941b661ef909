"""One supervisor per state dir: a second ``up`` on a state dir whose fleet runs, or whose
services an earlier (killed) supervisor left running, is refused before it starts anything —
a second copy of every service would fence the first one's transactions and share its state."""

from __future__ import annotations

import io
import json
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

from chronolog.core.errors import ChronologError
from chronolog.dialects.load import load_program
from chronolog.dialects.registry import RunOptions, lookup
from chronolog.runtime.fleet.supervisor import FLEET_FILE, Fleet, stop_fleet

PROGRAM = "slow(X) :- speed(X, V), V < 30.\n"


def _fleet(tmp_path: Path, state: Path) -> Fleet:
    (tmp_path / "p.lars").write_text(PROGRAM)
    program = load_program([str(tmp_path / "p.lars")], None)
    return Fleet([str(tmp_path / "p.lars")], lookup(program.dialect).layout(program, RunOptions()), state)


def test_a_second_supervisor_of_the_same_state_dir_is_refused_until_the_first_is_down(tmp_path):
    state = tmp_path / "state"
    first, second = _fleet(tmp_path, state), _fleet(tmp_path, state)
    first.claim()
    (state / FLEET_FILE).write_text(json.dumps({"supervisor_pid": 4242, "services": []}))
    with pytest.raises(ChronologError, match=r"already running from .*supervisor pid 4242.*chronolog down"):
        second.claim()
    second.down()  # the refused one leaves the running fleet's file alone
    assert (state / FLEET_FILE).exists()
    first.down()
    assert not (state / FLEET_FILE).exists()
    second.claim()  # free again
    second.down()


def test_services_an_earlier_supervisor_left_running_are_refused_and_dead_ones_are_not(tmp_path):
    state = tmp_path / "state"
    state.mkdir()
    # a process that looks like a service of the earlier fleet (its command line names one)
    orphan = subprocess.Popen([sys.executable, "-c", "import time; time.sleep(60)", "chronolog", "service"])
    try:
        cmdline = Path(f"/proc/{orphan.pid}/cmdline")
        while b"service" not in cmdline.read_bytes():  # (until the child has exec'd)
            time.sleep(0.01)
        (state / FLEET_FILE).write_text(json.dumps({"supervisor_pid": 999999, "services": [
            {"name": "reasoner-1", "partition": 0, "pid": orphan.pid}]}))
        with pytest.raises(ChronologError, match=rf"still run \(reasoner-1 pid {orphan.pid}\).*chronolog down"):
            _fleet(tmp_path, state).claim()
    finally:
        orphan.kill()
        orphan.wait()
    fleet = _fleet(tmp_path, state)
    fleet.claim()  # the pid is gone: a stale file does not block a restart
    fleet.down()


def test_up_on_a_state_dir_whose_fleet_runs_exits_2_without_starting_a_broker(tmp_path):
    state = tmp_path / "state"
    holder = _fleet(tmp_path, state)
    holder.claim()
    try:
        got = subprocess.run([sys.executable, "-m", "chronolog", "up", str(tmp_path / "p.lars"),
                              "--state-dir", str(state)], capture_output=True, text=True, timeout=60)
        assert got.returncode == 2, got.stderr
        assert "a fleet is already running from" in got.stderr and "Traceback" not in got.stderr
        assert "broker" not in got.stdout
    finally:
        holder.down()


def _process(*argv: str) -> subprocess.Popen:
    """A sleeping process whose command line reads ``argv`` (once it has exec'd)."""
    proc = subprocess.Popen([sys.executable, "-c", "import time; time.sleep(60)", *argv])
    cmdline = Path(f"/proc/{proc.pid}/cmdline")
    while argv[-1].encode() not in cmdline.read_bytes():
        time.sleep(0.01)
    return proc


def test_down_stops_a_supervisor_started_by_the_script_and_spares_a_recycled_pid(tmp_path):
    state = tmp_path / "state"
    state.mkdir()
    supervisor = _process("/opt/venv/bin/chronolog", "up")  # started as the console script
    stranger = _process("something", "else")  # a pid the fleet file names, now another program's
    try:
        (state / FLEET_FILE).write_text(json.dumps({"supervisor_pid": supervisor.pid, "services": [
            {"name": "reasoner-1", "partition": 0, "pid": stranger.pid}]}))
        stop_fleet(state, timeout=10, out=io.StringIO())
        assert supervisor.wait(10) == -signal.SIGTERM
        assert stranger.poll() is None
        (state / FLEET_FILE).write_text(json.dumps({"supervisor_pid": stranger.pid, "services": []}))
        stop_fleet(state, timeout=1, out=io.StringIO())
        assert stranger.poll() is None and not (state / FLEET_FILE).exists()
    finally:
        for proc in (supervisor, stranger):
            proc.kill()
            proc.wait()
