"""``chronolog backfill`` on a real local Spark session (one for the module) and the bundled broker.

Streams with delayed events and retractions (and one retraction matching
nothing).  The expectation is independent of the backfill: ``chronolog run``
on the *corrected* stream, put in time order with the retracted events
removed by this test's own matching (CONTRACT §2), read as a set of points.
"""

from __future__ import annotations

import io
import random

import orjson
import pytest
from confluent_kafka import Producer
from confluent_kafka.admin import AdminClient, NewTopic
from meaning import meaning

from chronolog.cli.main import main
from chronolog.core.events import Event
from chronolog.dialects.lars.parser import parse_lars
from chronolog.runtime.backfill.archive import Archiver
from chronolog.runtime.backfill.kafka_source import read_partition
from chronolog.runtime.backfill.spark_io import spark_session
from chronolog.runtime.embedded import run_embedded
from chronolog.runtime.fleet.broker import LocalBroker

pytestmark = pytest.mark.spark

pytest.importorskip("pyspark")

# time windows, a tuple window, an @-head, box over it, negation, background facts
JAM = """\
slow(R) :- speed(R, V) [3], V < 30.
low(R) at T :- speed(R, V) at T [2], V < 30.
stuck(R) :- low(R) always [2].
jam(R) :- slow(R), incident(R) [3 #].
calm(R) :- road(R), not slow(R).
road(a). road(b).
"""
# a new version: slow below 40, and a windowless @ (unbounded reach: one segment from t1)
JAM_V2 = JAM.replace("V < 30.\nlow", "V < 40.\nlow") + "ever(R, V) :- speed(R, V) at T, V < 12.\n"


def make_history(seed: int) -> tuple[list[dict], list[dict]]:
    """(in-order, retraction-free prefix, late events / retractions / more events after it)."""
    rng = random.Random(seed)
    prefix = []
    for t in range(0, 30):
        for road in ("a", "b"):
            if rng.random() < 0.8:
                prefix.append({"t": t, "pred": "speed", "args": [road, rng.choice([10, 20, 35, 60, 80])]})
        if rng.random() < 0.2:
            prefix.append({"t": t, "pred": "incident", "args": [rng.choice("ab")]})
    prefix.append({"t": 30})
    tail = []
    for _ in range(6):  # delayed readings
        tail.append({"t": rng.randint(1, 29), "pred": "speed", "args": [rng.choice("ab"), rng.choice([5, 25, 70])]})
    for ev in rng.sample([e for e in prefix if "pred" in e], 5):  # withdraw earlier events
        tail.insert(rng.randint(0, len(tail)), dict(ev, op="retract"))
    tail.append({"t": 7, "pred": "speed", "args": ["a", 99], "op": "retract"})  # matches nothing
    tail.insert(2, {"t": -2, "pred": "speed", "args": ["b", 5]})  # before the first time point: moves it
    tail += [{"t": 31, "pred": "speed", "args": ["a", 20]}, {"t": 33, "pred": "incident", "args": ["a"]}, {"t": 35}]
    return prefix, tail


def corrected(events: list[dict]) -> list[dict]:
    """The stream in time order with retracted events removed (this test's own matching)."""
    kept: list[dict] = []
    for ev in events:
        if ev.get("op") == "retract":
            same = [i for i, k in enumerate(kept) if (k["t"], k.get("pred"), k.get("args")) == (ev["t"], ev["pred"], ev["args"])]
            if same:
                del kept[same[-1]]
        else:
            kept.append(ev)
    return sorted(kept, key=lambda e: e["t"])


def span_of(events: list[dict]) -> tuple[int, int]:
    return min(e["t"] for e in events), max(e["t"] for e in events)


def run(program: str, events: list[dict]) -> list[dict]:
    out = io.StringIO()
    evs = [Event(e["t"], e.get("pred"), tuple(e.get("args", [])), e.get("op") == "retract") for e in events]
    run_embedded(parse_lars(program), evs, out, warn=lambda m: None)
    return [orjson.loads(x) for x in out.getvalue().splitlines()]


def write(path, records: list[dict]) -> str:
    path.write_text("".join(orjson.dumps(r).decode() + "\n" for r in records))
    return str(path)


def read(path) -> list[dict]:
    return [orjson.loads(x) for x in path.read_text().splitlines()]


@pytest.fixture(scope="module")
def spark():
    session, created = spark_session("local[2]")
    session.conf.set("spark.sql.shuffle.partitions", "2")
    yield session
    if created:
        session.stop()


def backfill(tmp_path, program: str, *args: str) -> tuple[list[dict], str]:
    prog = tmp_path / "jam.lars"
    prog.write_text(program)
    out = tmp_path / "corrections.jsonl"
    assert main(["backfill", str(prog), "--output", str(out), *args]) == 0
    return read(out), str(out)


def test_backfill_corrects_delayed_and_retracted_events(spark, tmp_path, capsys):
    prefix, tail = make_history(1)
    history = prefix + tail
    published = run(JAM, prefix)  # what the live system printed before the late events
    span = span_of(history)
    assert span == (-2, 35)
    want = meaning(run(JAM, corrected(history)), span)
    assert meaning(published, span) != want  # the late events matter

    fixes, _ = backfill(
        tmp_path, JAM, "--history", write(tmp_path / "h.jsonl", history), "--answers", write(tmp_path / "a.jsonl", published),
        "--from", "-5", "--to", "99", "--segment", "7",
    )
    assert fixes and all(f["diff"] in (1, -1) for f in fixes)
    assert meaning(published + fixes, span, running=True) == want
    err = capsys.readouterr().err
    assert "Spark UI: http" in err and "corrections emitted" in err and "segments" in err
    assert "ignored 1 retractions that matched no event" in err

    # a sub-span: corrections only inside [10, 20], exact there
    fixes, _ = backfill(
        tmp_path, JAM, "--history", str(tmp_path / "h.jsonl"), "--answers", str(tmp_path / "a.jsonl"),
        "--from", "10", "--to", "20", "--segment", "4",
    )
    assert fixes
    inside = lambda pts: {p for p in pts if 10 <= p[2] <= 20}  # noqa: E731
    assert all(10 <= f.get("t", 10) <= 20 for f in fixes)
    assert inside(meaning(published + fixes, span)) == inside(want)
    assert meaning(published + fixes, span) - inside(want) == meaning(published, span) - inside(meaning(published, span))

    # the true answers need no correction
    fixes, _ = backfill(
        tmp_path, JAM, "--history", str(tmp_path / "h.jsonl"), "--answers", write(tmp_path / "t.jsonl", run(JAM, history)),
        "--from", "-2", "--to", "35",
    )
    assert fixes == []

    # a bad history line stops the job with its location, no traceback
    (tmp_path / "bad.jsonl").write_text('{"t": 0, "pred": "p"}\n\n{"t": 1.5, "pred": "p"}\n')
    assert main(["backfill", str(tmp_path / "jam.lars"), "--history", str(tmp_path / "bad.jsonl"),
                 "--from", "0", "--to", "3"]) == 2
    err = capsys.readouterr().err
    assert f"{tmp_path / 'bad.jsonl'}:3:7: error: \"t\" must be an integer time point" in err and "Traceback" not in err


def _topic(bootstrap: str, name: str, partitions: int) -> None:
    admin = AdminClient({"bootstrap.servers": bootstrap})  # keep the client alive until the topic exists
    for f in admin.create_topics([NewTopic(name, partitions, 1)]).values():
        f.result(15)


def test_backfill_from_archive_and_kafka_with_a_new_program_and_publish(spark, tmp_path, capsys):
    prefix, tail = make_history(2)
    history = prefix + tail
    old = run(JAM, history)  # the old program's answers for the whole history
    span = span_of(history)
    want = meaning(run(JAM_V2, corrected(history)), span)
    assert meaning(old, span) != want
    with LocalBroker.start(log=tmp_path / "broker.log") as broker:
        b = broker.bootstrap
        _topic(b, "chronolog.facts", 1)
        _topic(b, "chronolog.answers", 1)
        producer = Producer({"bootstrap.servers": b})
        for ev in history:
            producer.produce("chronolog.facts", orjson.dumps(ev))
        for line in old:
            producer.produce("chronolog.answers", orjson.dumps(line))
        assert producer.flush(15) == 0
        Archiver(b, tmp_path / "archive", ["chronolog.facts"]).run(once=True, idle=1.0)

        fixes, _ = backfill(
            tmp_path, JAM_V2, "--history", str(tmp_path / "archive"), "--answers", "kafka", "--bootstrap", b,
            "--from", "-2", "--to", "35", "--idle", "1", "--publish",
        )
        assert "published" in capsys.readouterr().err
        assert meaning(old + fixes, span, running=True) == want
        on_topic = [orjson.loads(v) for *_, v in read_partition(b, "chronolog.answers", 0, idle=1.0)]
        assert on_topic == old + fixes  # the corrections were appended, in one transaction
