"""``chronolog upgrade`` that changes the number of strata of a real LARS fleet of one service
per stratum (``chronolog up`` on the bundled broker, real service processes): the supervisor
learns of it on the control topic, creates the added stratum's topics, starts its reasoner
(which starts at the upgrade's epoch, from the seeds the strata below send) and restarts the output; a removed stratum's
reasoner withdraws its answers from T on.  T in the past (a restatement), late events and a
retraction on both sides of T, a reasoner killed with SIGKILL during the upgrade (and the
added one while it catches up): the answer topic means what ``chronolog run --upgrade``
prints on the whole stream."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest
from dialect_programs import LARS_TWO_STRATA, LARS_TWO_STRATA_TOP_CHANGED, STRATA_FIRST, STRATA_SECOND, STRATA_SPAN
from hosted_fleet import answers_until, evaluated_then_planned, fleet_up, lines
from hosted_fleet import chronolog as _chronolog
from meaning import meaning

from chronolog.cli.fleet import publish_file
from chronolog.runtime.fleet.broker import LocalBroker

pytestmark = pytest.mark.fleet

TWO = LARS_TWO_STRATA  # strata: (a, c), (b)
THREE = TWO + "d(X) :- q(X) [3], not b(X).\n"  # a third stratum on top: d
TWO_CHANGED = LARS_TWO_STRATA_TOP_CHANGED
FIRST, SECOND, SPAN = STRATA_FIRST, STRATA_SECOND, STRATA_SPAN
AT = "4"


def _points(answer_lines: list[str]) -> set:
    return meaning([json.loads(x) for x in answer_lines if x.strip()], SPAN)


def _reference(tmp_path: Path, old: str, new: str) -> set:
    (tmp_path / "old.lars").write_text(old)
    (tmp_path / "new.lars").write_text(new)
    (tmp_path / "all.jsonl").write_bytes(lines(FIRST + SECOND))
    run = _chronolog("run", str(tmp_path / "old.lars"), "--input", str(tmp_path / "all.jsonl"),
                     "--upgrade", f"{AT}={tmp_path / 'new.lars'}")
    assert run.returncode == 0, run.stderr
    return _points(run.stdout.splitlines())


def _pid_of(state: Path, name: str, deadline: float, other_than: int | None = None) -> int:
    """The pid of service ``name`` (partition 0) once the supervisor lists it (``other_than``:
    once it lists another one, the service restarted)."""
    while time.monotonic() < deadline:
        info = json.loads((state / "fleet.json").read_text())
        pid = next((s["pid"] for s in info["services"] if s["name"] == name and s["pid"]), None)
        if pid is not None and pid != other_than:
            return int(pid)
        time.sleep(0.05)
    raise AssertionError(f"{name} not started")


def _upgrade(tmp_path: Path, state: Path, kill: list[str], deadline: float) -> str:
    """``chronolog upgrade new.lars --at AT``, killing the services ``kill`` (SIGKILL) while it runs
    (the output once the supervisor has restarted it to serve the new strata)."""
    output = _pid_of(state, "output", deadline)
    upgrade = subprocess.Popen([sys.executable, "-m", "chronolog", "upgrade", str(tmp_path / "new.lars"),
                                "--at", AT, "--state-dir", str(state), "--timeout", "90"],
                               stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    for name in kill:
        time.sleep(0.3)  # the request on its way, being applied, or the added reasoner catching up
        os.kill(_pid_of(state, name, deadline, output if name == "output" else None), signal.SIGKILL)
    out, err = upgrade.communicate(timeout=150)
    assert upgrade.returncode == 0, err
    assert f"from T={AT}" in out, out
    return out


@pytest.mark.parametrize(("parts", "kill"), [(1, []), (1, ["reasoner-1", "reasoner-3"]), (1, ["reasoner-3", "output"]),
                                            (3, ["reasoner-2", "reasoner-3"])],
                         ids=["plain", "sigkill", "sigkill-output", "3-partitions-sigkill"])
def test_an_upgrade_adding_a_stratum_starts_its_reasoner_and_means_run_upgrade(tmp_path: Path, parts: int,
                                                                              kill: list[str]):
    want = _reference(tmp_path, TWO, THREE)
    assert ("d", ("y",), 6) in want and ("d", ("x",), 2) not in want  # d from T on only
    state = tmp_path / "state"
    with fleet_up(tmp_path / "old.lars", state, ("--partitions", str(parts))) as (info, deadline):
        assert sorted(s["name"] for s in info["services"] if s["name"].startswith("reasoner")) == \
            sorted(["reasoner-1", "reasoner-2"] * parts)
        bootstrap = info["bootstrap"]
        plan = evaluated_then_planned(tmp_path, bootstrap, state, FIRST, tmp_path / "new.lars", AT)
        assert "stratum 3 (d/1): added: evaluated from T on by reasoner-3" in plan, plan
        assert "services started by up's supervisor: reasoner-3" in plan, plan
        assert "topics created: chronolog.stratum.3, " in plan, plan
        assert "output: restarted" in plan, plan
        _upgrade(tmp_path, state, kill, deadline + 60)
        info = json.loads((state / "fleet.json").read_text())
        assert info["strata"] == 3 and len([s for s in info["services"] if s["name"] == "reasoner-3"]) == parts
        (tmp_path / "second.jsonl").write_bytes(lines(SECOND))
        publish_file(str(tmp_path / "second.jsonl"), bootstrap, "chronolog")
        assert answers_until(bootstrap, _points, want, deadline + 150) == want


@pytest.mark.parametrize("kill", [[], ["reasoner-3"]], ids=["plain", "sigkill"])
def test_an_upgrade_removing_a_stratum_withdraws_its_answers_from_t_and_means_run_upgrade(tmp_path: Path,
                                                                                        kill: list[str]):
    want = _reference(tmp_path, THREE, TWO_CHANGED)
    assert ("d", ("x",), 2) in want and not any(p == "d" and t >= int(AT) for p, _, t in want)
    state = tmp_path / "state"
    with fleet_up(tmp_path / "old.lars", state) as (info, deadline):
        bootstrap = info["bootstrap"]
        plan = evaluated_then_planned(tmp_path, bootstrap, state, FIRST, tmp_path / "new.lars", AT)
        assert "stratum 3 (d/1): removed: reasoner-3 withdraws its answers from T on" in plan, plan
        assert "services stopped: none" in plan, plan
        _upgrade(tmp_path, state, kill, deadline + 60)
        (tmp_path / "second.jsonl").write_bytes(lines(SECOND))
        publish_file(str(tmp_path / "second.jsonl"), bootstrap, "chronolog")
        assert answers_until(bootstrap, _points, want, deadline + 150) == want


def test_a_restarted_supervisor_starts_the_strata_an_upgrade_added(tmp_path: Path):
    """The supervisor learns the strata from the control topic when it starts: the fleet taken
    down after an upgrade that added a stratum and started again with the program it started
    with runs the added stratum's reasoner and an output serving it, from their states."""
    want = _reference(tmp_path, TWO, THREE)
    broker = LocalBroker.start(log=tmp_path / "broker.log")
    state = tmp_path / "state"
    try:
        options = ("--bootstrap", broker.bootstrap)
        with fleet_up(tmp_path / "old.lars", state, options) as (info, deadline):
            (tmp_path / "first.jsonl").write_bytes(lines(FIRST))
            publish_file(str(tmp_path / "first.jsonl"), broker.bootstrap, "chronolog")
            time.sleep(2.0)
            _upgrade(tmp_path, state, [], deadline + 60)
        assert not (state / "fleet.json").exists()  # (down)
        with fleet_up(tmp_path / "old.lars", state, options) as (info, deadline):
            assert info["strata"] == 3
            assert sorted(s["name"] for s in info["services"] if s["name"].startswith("reasoner")) == \
                ["reasoner-1", "reasoner-2", "reasoner-3"]
            (tmp_path / "second.jsonl").write_bytes(lines(SECOND))
            publish_file(str(tmp_path / "second.jsonl"), broker.bootstrap, "chronolog")
            assert answers_until(broker.bootstrap, _points, want, deadline + 150) == want
    finally:
        broker.stop()


# b reads a through a window in both programs; the new one widens a's window (stratum 1 changes,
# and stratum 2 with it: it reads a changed a)
WINDOWED = "a(X) :- p(X) [2].\nb(X) :- a(X) [1], not c(X).\nc(X) :- q(X).\n"
WINDOWED_WIDER = "a(X) :- p(X) [3].\nb(X) :- a(X) [1], not c(X).\nc(X) :- q(X).\n"


def test_strata_reading_a_changed_stratum_through_a_window_mean_run_upgrade(tmp_path: Path):
    """The changed bottom reasoner and the one above it, which reads it through a window, killed
    with SIGKILL during the upgrade."""
    want = _reference(tmp_path, WINDOWED, WINDOWED_WIDER)
    old = _reference(tmp_path, WINDOWED, WINDOWED)
    assert {x for x in want ^ old if x[0] == "b"}  # (b's answers from T on change, read through the window)
    _reference(tmp_path, WINDOWED, WINDOWED_WIDER)  # (old.lars and new.lars as the fleet takes them)
    _both_strata_changed_mean(tmp_path, want)


def _both_strata_changed_mean(tmp_path: Path, want: set) -> None:
    """The fleet of old.lars upgraded to new.lars at AT, both strata changed (their reasoners
    killed with SIGKILL during the upgrade), answers what ``want`` (run --upgrade) says."""
    state = tmp_path / "state"
    with fleet_up(tmp_path / "old.lars", state) as (info, deadline):
        bootstrap = info["bootstrap"]
        plan = evaluated_then_planned(tmp_path, bootstrap, state, FIRST, tmp_path / "new.lars", AT)
        assert "stratum 1 (a/1, c/1): changed" in plan and "stratum 2 (b/1): changed" in plan, plan
        _upgrade(tmp_path, state, ["reasoner-1", "reasoner-2"], deadline + 60)
        (tmp_path / "second.jsonl").write_bytes(lines(SECOND))
        publish_file(str(tmp_path / "second.jsonl"), bootstrap, "chronolog")
        assert answers_until(bootstrap, _points, want, deadline + 150) == want


def test_a_predicate_read_through_a_window_in_the_new_program_only_means_run_upgrade(tmp_path: Path):
    """TWO's b reads a now, the new program's through a window (and not z): a is kept with its
    times from T on, which a's stratum sends in that shape and the output takes back into its
    own; both changed reasoners killed with SIGKILL during the upgrade."""
    new = "a(X) :- p(X) [2].\nb(X) :- a(X) [1], not c(X), X != z.\nc(X) :- q(X).\n"
    want = _reference(tmp_path, TWO, new)
    assert want != _reference(tmp_path, TWO, TWO)
    _reference(tmp_path, TWO, new)  # (old.lars and new.lars as the fleet takes them)
    _both_strata_changed_mean(tmp_path, want)
