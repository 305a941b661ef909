"""The Parquet archive of Kafka topics, against the bundled broker (no Spark)."""

from __future__ import annotations

import re

import orjson
import pyarrow.parquet as pq
import pytest
from confluent_kafka import Producer
from confluent_kafka.admin import AdminClient, NewTopic

from chronolog.cli.main import main
from chronolog.runtime.backfill.archive import Archiver, read_archive, time_of
from chronolog.runtime.backfill.kafka_source import read_partition
from chronolog.runtime.fleet.broker import LocalBroker

pytestmark = pytest.mark.fleet


def _topics(bootstrap: str, **partitions: int) -> None:
    admin = AdminClient({"bootstrap.servers": bootstrap})
    futures = admin.create_topics([NewTopic(name.replace("_", "."), n, 1) for name, n in partitions.items()])
    for f in futures.values():
        f.result(15)


def _produce(bootstrap: str, records: list[tuple[str, int, str]]) -> None:
    producer = Producer({"bootstrap.servers": bootstrap})
    for topic, partition, value in records:
        producer.produce(topic, value.encode(), partition=partition)
    assert producer.flush(15) == 0


def test_time_of_events_and_answer_lines():
    assert time_of('{"t": 5, "pred": "p"}') == 5
    assert time_of('{"interval": "[3,inf)", "pred": "q"}') == 3
    assert time_of('{"interval": "(-2,4]", "pred": "q"}') == -2
    assert time_of('{"pred": "q"}') is None
    assert time_of("not json") is None
    assert time_of('{"t": 99999999999999999999}') is None


def test_archive_writes_partitioned_parquet_and_resumes(tmp_path, capsys):
    facts = [("chronolog.facts", i % 2, orjson.dumps({"t": i, "pred": "p", "args": [i]}).decode()) for i in range(20)]
    answers = [("chronolog.answers", 0, '{"interval":"[3,inf)","pred":"q","args":["a"]}'),
               ("chronolog.answers", 0, '{"t":4,"pred":"q","args":["a"],"diff":-1}')]
    out = tmp_path / "archive"
    with LocalBroker.start(log=tmp_path / "broker.log") as broker:
        _topics(broker.bootstrap, chronolog_facts=2, chronolog_answers=1)
        _produce(broker.bootstrap, facts[:12] + answers)
        assert main(["archive", "--bootstrap", broker.bootstrap, "--out", str(out), "--once", "--idle", "1"]) == 0
        assert "archived 14 records" in capsys.readouterr().err

        files = sorted(p.relative_to(out).as_posix() for p in out.rglob("*.parquet"))
        pattern = re.compile(
            r"^topic=chronolog\.(facts|answers)/date=\d{4}-\d\d-\d\d/hour=\d\d/partition=(\d)/part-(\d{20})-(\d{20})\.parquet$"
        )
        assert files and all(pattern.match(f) for f in files), files
        assert not list(out.rglob(".*"))  # no temporary files left
        table = pq.read_table(out / files[0])
        assert table.column_names == ["offset", "timestamp", "key", "value", "t"]
        dataset = pq.read_table(out / "topic=chronolog.facts")  # the path adds date, hour and partition
        assert {"offset", "partition", "timestamp", "key", "value", "t", "date", "hour"} <= set(dataset.column_names)

        got = list(read_archive(out, "chronolog.facts"))
        by_partition = {p: [v for q, _, v in got if q == p] for p in (0, 1)}
        assert by_partition == {p: [v for _, q, v in facts[:12] if q == p] for p in (0, 1)}
        assert [(p, o) for p, o, _ in got] == sorted((p, o) for p, o, _ in got)
        assert [v for _, _, v in read_archive(out, "chronolog.answers")] == [v for _, _, v in answers]
        rows = pq.read_table(out / "topic=chronolog.answers").to_pylist()
        assert sorted(r["t"] for r in rows) == [3, 4]

        # a second run resumes after what is archived: nothing lost, nothing twice
        _produce(broker.bootstrap, facts[12:])
        archiver = Archiver(broker.bootstrap, out, ["chronolog.facts", "chronolog.answers"])
        archiver.run(once=True, idle=1.0)
        assert archiver.records == 8
        got = list(read_archive(out, "chronolog.facts"))
        assert sorted(v for _, _, v in got) == sorted(v for _, _, v in facts)
        assert len({(p, o) for p, o, _ in got}) == len(facts) == pq.read_table(out / "topic=chronolog.facts").num_rows

        # the Kafka reader the Spark data source uses: the whole partition, in offset order
        read = list(read_partition(broker.bootstrap, "chronolog.facts", 1, idle=1.0))
        assert [v for *_, v in read] == [v for _, p, v in facts if p == 1]
        assert [o for _, o, *_ in read] == sorted(o for _, o, *_ in read)
