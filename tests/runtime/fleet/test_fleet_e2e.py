"""End to end: the real bundled broker, `chronolog up` starting real service processes.

The answer topic must mean exactly what `chronolog run` prints on the same
input (tests/meaning.py also rejects any point whose diffs sum above 1, so a
duplicated answer fails): for a three-stratum program, with 1 and with 3
partitions, with delayed events, retractions and malformed lines (which land
in the dead-letter topic), and after a reasoner is killed with SIGKILL in the
middle of the stream — once with its RocksDB state deleted, so it restores
from the changelog topic.
"""

from __future__ import annotations

import io
import json
import os
import random
import shutil
import signal
import subprocess
import sys
import threading
import time
from pathlib import Path

import orjson
import pytest
from meaning import meaning

from chronolog.cli.fleet import publish_file, tail_topic
from chronolog.core.events import Event, event_json
from chronolog.dialects.lars.parser import parse_lars
from chronolog.runtime.embedded import run_embedded
from chronolog.runtime.fleet.topology import partition_of

pytestmark = pytest.mark.fleet

PROGRAM = """\
hot(S) :- temp(S, V) [3], V > 80.
warm(S) :- temp(S, V) [5], V > 50, not hot(S).
alarm(S) :- hot(S), not ok(S) [2].
alarm(S) at T :- temp(S, V) at T [2], V > 95.
calm(S) :- temp(S, V) [2], not warm(S), not alarm(S).
"""


def stream(seed: int, points: int = 30) -> list[Event]:
    rng = random.Random(seed)
    events: list[Event] = []
    for t in range(points):
        for _ in range(rng.randint(0, 4)):
            s = f"s{rng.randint(1, 6)}"
            events.append(Event(t, "ok", (s,)) if rng.random() < 0.2 else Event(t, "temp", (s, rng.randint(40, 100))))
        events.append(Event(t))
    # delayed events and retractions (arrival order is what both modes see)
    for _ in range(4):
        i = rng.choice([i for i, e in enumerate(events) if e.is_fact])
        ev = events.pop(i)
        events.insert(min(len(events), i + rng.randint(5, 25)), ev)
    facts = [e for e in events if e.is_fact]
    for ev in rng.sample(facts, 3):
        events.append(Event(ev.t, ev.pred, ev.args, True))
    return events


def expected(program: str, events: list[Event]) -> set:
    out = io.StringIO()
    run_embedded(parse_lars(program), events, out, warn=lambda m: None)
    return meaning([orjson.loads(x) for x in out.getvalue().splitlines()], span(events))


def span(events: list[Event]) -> tuple[int, int]:
    return min(e.t for e in events), max(e.t for e in events)


class Up:
    """`chronolog up` as a real process, until `chronolog down`."""

    def __init__(self, tmp: Path, program: str, *args: str) -> None:
        self.dir = tmp / "state"
        prog = tmp / "prog.lars"
        prog.write_text(program)
        self.proc = subprocess.Popen(
            [sys.executable, "-m", "chronolog", "up", str(prog), "--state-dir", str(self.dir), "--idle-flush", "0.5", *args],
            stdout=subprocess.PIPE, stderr=open(tmp / "up.err", "wb"), text=True,  # noqa: SIM115
        )
        self.lines: list[str] = []
        deadline = time.monotonic() + 90
        while time.monotonic() < deadline:
            line = self.proc.stdout.readline()  # type: ignore[union-attr]
            if not line:
                break
            self.lines.append(line)
            if line.startswith("ready"):
                break
        else:
            pass
        if not self.lines or not self.lines[-1].startswith("ready"):
            self.stop()
            raise AssertionError("no ready line: " + "".join(self.lines) + (tmp / "up.err").read_text())
        self.info = json.loads((self.dir / "fleet.json").read_text())
        self.bootstrap = self.info["bootstrap"]

    def pid(self, name: str, partition: int | None = 0) -> int:
        info = json.loads((self.dir / "fleet.json").read_text())
        return next(s["pid"] for s in info["services"] if s["name"] == name and s["partition"] == partition)

    def committed(self, name: str, partition: int | None = 0, timeout: float = 30) -> None:
        """Wait until the service has committed a transaction (its /metrics says so)."""
        import urllib.request

        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            info = json.loads((self.dir / "fleet.json").read_text())
            port = next(s["metrics_port"] for s in info["services"] if s["name"] == name and s["partition"] == partition)
            text = urllib.request.urlopen(f"http://127.0.0.1:{port}/metrics", timeout=5).read().decode()
            if any(line.startswith("chronolog_transactions_total") and float(line.split()[-1]) >= 1
                   for line in text.splitlines()):
                return
            time.sleep(0.2)
        raise AssertionError(f"{name}[{partition}] committed nothing within {timeout} s")

    def metric(self, metric: str, name: str, partition: int | None = 0) -> float:
        """One of a service's metrics, from its /metrics."""
        import urllib.request

        info = json.loads((self.dir / "fleet.json").read_text())
        port = next(s["metrics_port"] for s in info["services"] if s["name"] == name and s["partition"] == partition)
        text = urllib.request.urlopen(f"http://127.0.0.1:{port}/metrics", timeout=5).read().decode()
        return sum(float(line.split()[-1]) for line in text.splitlines() if line.startswith(metric + "{"))

    def publish(self, events: list[Event], path: Path, extra: list[bytes] = ()) -> None:  # type: ignore[assignment]
        lines = [event_json(e) for e in events]
        for i, raw in enumerate(extra):
            lines.insert(min(len(lines), 3 + 7 * i), raw)
        path.write_bytes(b"\n".join(lines) + b"\n")
        publish_file(str(path), self.bootstrap, "chronolog")

    def answers(self, topic: str = "chronolog.answers") -> list[dict]:
        out = io.StringIO()
        tail_topic(self.bootstrap, topic, idle_exit=1.5, out=out)
        return [orjson.loads(x) for x in out.getvalue().splitlines()]

    def wait_for(self, want: set, events: list[Event], timeout: float = 60) -> set:
        deadline = time.monotonic() + timeout
        got: set = set()
        while time.monotonic() < deadline:
            got = meaning(self.answers(), span(events))
            if got == want:
                return got
            time.sleep(0.5)
        return got

    def stop(self) -> None:
        subprocess.run([sys.executable, "-m", "chronolog", "down", "--state-dir", str(self.dir)],
                       capture_output=True, timeout=60)
        try:
            self.proc.wait(30)
        except subprocess.TimeoutExpired:
            self.proc.kill()


@pytest.fixture
def fleet(tmp_path):
    started: list[Up] = []

    def start(*args: str, program: str = PROGRAM) -> Up:
        up = Up(tmp_path, program, *args)
        started.append(up)
        return up

    yield start
    for up in started:
        up.stop()
        assert up.proc.poll() is not None
    leftovers = subprocess.run(["pgrep", "-f", str(tmp_path)], capture_output=True, text=True).stdout.split()
    for pid in leftovers:
        os.kill(int(pid), signal.SIGKILL)
    assert not leftovers, "processes survived chronolog down"


@pytest.mark.parametrize("partitions", [1, 3])
def test_fleet_answers_mean_what_embedded_prints(fleet, tmp_path, partitions):
    events = stream(partitions)
    want = expected(PROGRAM, events)
    up = fleet("--partitions", str(partitions))
    services = [s["name"] for s in up.info["services"]]
    assert services.count("reasoner-3") == partitions and "reasoner-4" not in services
    bad = [b'{"t": "soon", "pred": "temp"}', b"not json at all"]
    up.publish(events, tmp_path / "in.jsonl", bad)
    assert up.wait_for(want, events) == want
    dead = up.answers("chronolog.dlq")
    assert len(dead) == 2
    assert all(d["reason"] and d["topic"] == "chronolog.facts" for d in dead)
    assert {d["value"] for d in dead} == {b.decode() for b in bad}
    # each output partition says on the control topic which epochs it committed, in order
    committed: dict[int, list[int]] = {}
    for record in up.answers("chronolog.control"):
        committed.setdefault(record["partition"], []).append(record["committed"])
    assert sorted(committed) == list(range(partitions))
    assert all(all(a < b for a, b in zip(e, e[1:])) for e in committed.values()), committed


# an odd loop while q(1) is in the window [1]: q(1) at 4, so no answer set at 4 and 5 (LARS.md)
ODD = "a(X) :- p(X) [0].\nx(X) :- q(X) [1], not x(X).\n"


@pytest.mark.parametrize("mark", [False, True])
def test_points_without_an_answer_set_are_logged_and_counted_and_lines_only_on_request(fleet, tmp_path, mark):
    """The answer topic holds only CONTRACT section 3 lines; the output logs each point without
    an answer set and counts it (chronolog_no_answer_sets_total); ``up --mark-no-answer-set``
    puts the no_answer_set line of each such point on the topic too."""
    events = [Event(t, "p", (1,)) for t in range(10)] + [Event(4, "q", (1,))]
    events.sort(key=lambda e: e.t)
    want = expected(ODD, events)
    assert want == {("a", (1,), t) for t in range(10) if t not in (4, 5)}  # (nothing holds there)
    up = fleet(*(["--mark-no-answer-set"] if mark else []), program=ODD)
    up.publish(events, tmp_path / "in.jsonl")
    assert up.wait_for(want, events) == want
    answers = up.answers()
    assert sorted(x["t"] for x in answers if "pred" not in x) == ([4, 5] if mark else [])
    assert all(set(x) == {"t", "no_answer_set"} for x in answers if "pred" not in x)
    assert up.metric("chronolog_no_answer_sets_total", "output") >= 2
    log = (up.dir / "run" / "reasoner-1-p0.log").read_text()  # (the stratum that has the odd loop says why)
    assert "no answer set at t=4 (no consistent labelling: an odd loop" in log, log[-2000:]
    assert "no answer set at t=5 (no consistent labelling: an odd loop" in log, log[-2000:]


def test_transactions_larger_than_the_producer_queue_commit(fleet, tmp_path):
    """Every service's producer may queue only 8 records: each transaction with
    more (the changelog entries, output's answer lines) waits for room and
    commits, and the answers still mean what embedded mode prints."""
    events = stream(7, points=40)
    want = expected(PROGRAM, events)
    conf = tmp_path / "small-queue.properties"
    conf.write_text("queue.buffering.max.messages=8\n")
    up = fleet("--kafka-config", str(conf))
    up.publish(events, tmp_path / "in.jsonl")
    assert up.wait_for(want, events) == want
    assert "BufferError" not in "".join(p.read_text() for p in (up.dir / "run").glob("*.log"))


@pytest.mark.parametrize(("service", "partitions"), [("ingest", 1), ("grounding", 3), ("output", 3)])
def test_sigkill_of_any_service_mid_stream_loses_and_duplicates_nothing(fleet, tmp_path, service, partitions):
    """The head (its epoch counter restored), a forwarding service and the
    service that aligns every stratum (its alignment restored) each die
    mid-stream; the answers still mean what embedded mode prints."""
    events = stream(11, points=40)
    want = expected(PROGRAM, events)
    up = fleet("--partitions", str(partitions))
    where = None if service == "ingest" else partitions - 1  # ingest is one process
    half = len(events) // 2
    up.publish(events[:half], tmp_path / "first.jsonl")
    up.committed(service, where)
    victim = up.pid(service, where)
    os.kill(victim, signal.SIGKILL)
    up.publish(events[half:], tmp_path / "second.jsonl")
    assert up.wait_for(want, events) == want
    assert up.pid(service, where) != victim
    ident = service if where is None else f"{service}-p{where}"
    deadline = time.monotonic() + 30  # the answers may be complete before it has restored
    while "restored from" not in (log := (up.dir / "run" / f"{ident}.log").read_text()) and time.monotonic() < deadline:
        time.sleep(0.2)
    assert "restored from" in log and "Traceback" not in log, log[-2000:]  # it resumed and kept running


def test_relays_killed_while_the_stream_flows_lose_and_duplicate_nothing(fleet, tmp_path, monkeypatch):
    """Grounding and then a reasoner (partition 2 of 3) die while records flow
    through them: each restarts from its last stored epoch and sends again what
    followed, and the services reading it drop the repeats and the unfinished
    epoch at their gates (runtime/fleet/epochs.py).  The relays store their state
    at most every 2 s here, so what they send again is most of the stream."""
    monkeypatch.setenv("CHRONOLOG_RELAY_STATE_INTERVAL", "2")
    events = stream(13, points=60)
    want = expected(PROGRAM, events)
    up = fleet("--partitions", "3")
    n = len(events) // 6
    parts = [events[i * n:(i + 1) * n] for i in range(5)] + [events[5 * n:]]

    def feed() -> None:
        for i, part in enumerate(parts):
            up.publish(part, tmp_path / f"part{i}.jsonl")
            time.sleep(0.3)

    feeder = threading.Thread(target=feed)
    feeder.start()
    victims = {}
    for name in ("grounding", "reasoner-1"):
        time.sleep(0.6)
        victims[name] = up.pid(name, 2)
        os.kill(victims[name], signal.SIGKILL)
    feeder.join()
    assert up.wait_for(want, events) == want
    for name, victim in victims.items():
        assert up.pid(name, 2) != victim
        log = (up.dir / "run" / f"{name}-p2.log").read_text()
        assert "relays what follows epoch" in log and "Traceback" not in log, log[-2000:]
    # reasoner-2 reads both victims: each restart's replay record and the records
    # sent again were dropped at its gates, never taken for data
    assert up.metric("chronolog_repeats_dropped_total", "reasoner-2", 2) > 2


@pytest.mark.parametrize("fresh_state", [False, True])
def test_sigkill_of_a_reasoner_mid_stream_loses_and_duplicates_nothing(fleet, tmp_path, fresh_state):
    events = stream(7, points=40)
    want = expected(PROGRAM, events)
    up = fleet()
    half = len(events) // 2
    up.publish(events[:half], tmp_path / "first.jsonl")
    time.sleep(1.0)
    victim = up.pid("reasoner-2")
    if fresh_state:  # the restarted process finds no RocksDB: it must restore from the changelog
        shutil.rmtree(up.dir / "reasoner-2-p0")
    os.kill(victim, signal.SIGKILL)
    up.publish(events[half:], tmp_path / "second.jsonl")
    assert up.wait_for(want, events) == want
    assert up.pid("reasoner-2") != victim
    log = (up.dir / "run" / "reasoner-2-p0.log").read_text()
    if fresh_state:
        assert "restored from the changelog" in log
    else:  # RocksDB, unless the kill fell between a commit and the RocksDB write
        assert "restored from RocksDB" in log or "restored from the changelog" in log


@pytest.mark.parametrize("partitions", [1, 3])
def test_chained_fleet_means_what_embedded_prints_and_survives_sigkill(fleet, tmp_path, partitions):
    """``up --chain``: one chain process per partition (ingest inside it with one
    partition); dead letters, and a SIGKILL of a chain mid-stream with its
    RocksDB state deleted, so it restores from the changelog."""
    events = stream(11 + partitions, points=40)
    want = expected(PROGRAM, events)
    up = fleet("--chain", "--partitions", str(partitions))
    services = sorted(s["name"] for s in up.info["services"])
    assert services == ["chain"] * partitions + (["ingest"] if partitions > 1 else [])
    half = len(events) // 2
    bad = [b'{"t": 1, "pred": "temp", "args": "s1"}']
    up.publish(events[:half], tmp_path / "first.jsonl", bad)
    p = partition_of(str(events[-1].args[0]), partitions)  # a partition with work after the kill
    up.committed("chain", p)
    victim = up.pid("chain", p)
    shutil.rmtree(up.dir / f"chain-p{p}")
    os.kill(victim, signal.SIGKILL)
    up.publish(events[half:], tmp_path / "second.jsonl")
    assert up.wait_for(want, events) == want
    assert up.pid("chain", p) != victim
    log = up.dir / "run" / f"chain-p{p}.log"
    deadline = time.monotonic() + 30
    while log.read_text().count("ready") < 2 and time.monotonic() < deadline:
        time.sleep(0.2)
    assert "restored from the changelog" in log.read_text()
    assert [d["value"] for d in up.answers("chronolog.dlq")] == [b.decode() for b in bad]


def _backfill(program: Path, archive: Path, events: list[Event], out: Path) -> list[dict]:
    lo, hi = span(events)
    got = subprocess.run(
        [sys.executable, "-m", "chronolog", "backfill", str(program), "--history", str(archive),
         "--answers", str(archive), "--from", str(lo), "--to", str(hi), "--output", str(out)],
        capture_output=True, text=True, timeout=300,
    )
    assert got.returncode == 0, got.stderr[-3000:]
    return [orjson.loads(x) for x in out.read_text().splitlines()]


def _apply(published: set, corrections: list[dict], events: list[Event]) -> set:
    """The points that published answers plus corrections mean (each sum must be 0 or 1)."""
    total = dict.fromkeys(published, 1)
    for c in corrections:
        sign = c.get("diff", 1)
        for point in meaning([{**c, "diff": 1}], span(events)):
            total[point] = total.get(point, 0) + sign
    assert all(v in (0, 1) for v in total.values())
    return {p for p, v in total.items() if v == 1}


def test_events_past_retention_go_to_the_late_topic_and_the_backfill_repairs_them(fleet, tmp_path):
    """`--retention 3`: late events within 3 points are repaired live; older ones land on
    chronolog.late (counted), and a backfill over the archive brings the answers to
    what `chronolog run` prints on the whole stream (issue 6)."""
    pytest.importorskip("pyspark")
    events = [e for e in stream(4, points=30) if not e.retract]
    facts = [i for i, e in enumerate(events) if e.is_fact and e.t < 15]
    very_late = [events[i] for i in facts[:3]]
    for i in sorted(facts[:3], reverse=True):
        del events[i]
    events += very_late  # 15+ points late: past the horizon
    archive = tmp_path / "archive"
    up = fleet("--retention", "3", "--archive", str(archive))
    up.publish(events, tmp_path / "in.jsonl")
    out = io.StringIO()
    stats = run_embedded(parse_lars(PROGRAM), events, out, retention=3, warn=lambda m: None)
    live = meaning([orjson.loads(x) for x in out.getvalue().splitlines()], span(events))
    assert up.wait_for(live, events) == live  # what the live fleet repairs = embedded with the same horizon
    late = up.answers("chronolog.late")
    assert len(late) == stats.too_late  # the same events embedded mode reports as too old
    routed = [(r["t"], tuple(r["args"])) for r in late]
    assert all((e.t, e.args) in routed for e in very_late)
    up.stop()
    program = tmp_path / "prog.lars"
    corrections = _backfill(program, archive, events, tmp_path / "fix.jsonl")
    full = expected(PROGRAM, events)
    assert full != live
    assert _apply(live, corrections, events) == full


def test_archive_then_backfill_a_changed_program(fleet, tmp_path):
    """`up --archive` writes input and answers to Parquet; `chronolog backfill` of a new
    program version against that archive yields the corrections that turn the published
    answers into the new program's answers (a real local Spark job)."""
    pytest.importorskip("pyspark")
    events = stream(3, points=20)
    archive = tmp_path / "archive"
    up = fleet("--archive", str(archive))
    up.publish(events, tmp_path / "in.jsonl")
    want = expected(PROGRAM, events)
    assert up.wait_for(want, events) == want
    up.stop()  # the archiver flushes on SIGTERM
    assert list(archive.glob("topic=chronolog.facts/**/*.parquet"))
    assert list(archive.glob("topic=chronolog.answers/**/*.parquet"))
    changed = PROGRAM.replace("V > 80", "V > 70")
    new_program = tmp_path / "v2.lars"
    new_program.write_text(changed)
    corrections = _backfill(new_program, archive, events, tmp_path / "fix.jsonl")
    new_truth = expected(changed, events)
    assert corrections and new_truth != want
    assert _apply(want, corrections, events) == new_truth
