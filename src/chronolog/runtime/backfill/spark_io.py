"""The backfill's input and output around Spark: where lines come from (``Source``),
the Spark session, the raw lines of a source as an RDD and the place each one
is named by in messages, and the run's report (``BackfillStats``).

Spark is imported only inside ``spark_session``: ``chronolog backfill`` says
how to install it when it is missing, and nothing else pays for it.
"""

from __future__ import annotations

import os
import sys
import tempfile
import zipfile
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import chronolog
from chronolog.core.errors import ChronologError
from chronolog.core.source import Loc
from chronolog.runtime.backfill.archive import topic_dir
from chronolog.runtime.backfill.kafka_source import KafkaTopicSource, topic_partitions


@dataclass
class Source:
    """Where lines come from: a JSONL file, an archive directory or a Kafka topic."""

    kind: str  # "file", "archive" or "kafka"
    where: str  # the path, or the bootstrap servers
    topic: str

    @classmethod
    def parse(cls, spec: str, topic: str, bootstrap: str | None) -> Source:
        if spec == "kafka":
            if not bootstrap:
                raise ChronologError(f"error: reading {topic} from Kafka needs --bootstrap HOST:PORT")
            return cls("kafka", bootstrap, topic)
        if "://" not in spec and not os.path.exists(spec):
            raise ChronologError(f"{spec}: error: no such file or directory")
        if os.path.isdir(spec):
            return cls("archive", spec, topic)
        return cls("file", spec, topic)

    def describe(self) -> str:
        return self.where if self.kind == "file" else f"{self.topic} ({self.kind} {self.where})"


@dataclass
class BackfillStats:
    events: int = 0
    facts: int = 0
    retractions: int = 0
    unmatched: int = 0
    span: tuple[int, int] | None = None  # the history's first and last time point
    window: tuple[int, int] | None = None  # [T1, T2] clipped to the span
    segments: int = 0
    key_partitions: int = 1
    evaluations: int = 0  # the evaluators' time points, warm-ups included
    recomputed: int = 0  # atoms with answers in the span, per segment and key partition
    published_lines: int = 0
    corrections: int = 0  # correction lines emitted
    bad_sums: int = 0  # stretches of time where published diffs did not sum to 0 or 1
    seconds: float = 0.0
    ui: str | None = None
    warnings: list[str] = field(default_factory=list)


# ---------------------------------------------------------------- Spark session


def spark_session(master: str | None = None) -> tuple[Any, bool]:
    """The active Spark session, or a new one (True) for ``master`` (default ``local[*]``)."""
    try:
        from pyspark.sql import SparkSession  # noqa: PLC0415 (pyspark: the optional spark extra)
    except ImportError:
        raise ChronologError("error: chronolog backfill needs PySpark: pip install 'chronolog[spark]'") from None
    active = SparkSession.getActiveSession()
    if active is not None:
        return active, False
    os.environ.setdefault("PYSPARK_PYTHON", sys.executable)  # executors run this interpreter (local mode)
    master = master or "local[*]"
    log4j = Path(__file__).with_name("log4j2.properties")
    builder = (
        SparkSession.builder.master(master).appName("chronolog-backfill")
        .config("spark.ui.showConsoleProgress", "true" if sys.stderr.isatty() else "false")
    )
    java = f"-Dlog4j2.configurationFile={log4j.as_uri()}"
    if master.startswith("local"):
        # The JVM only moves rows between Python tasks (the engine does the work), so short
        # jobs are dominated by JIT and code generation warm-up: keep both cheap.
        java += " -XX:TieredStopAtLevel=1 -XX:+UseSerialGC"
        builder = (
            builder.config("spark.sql.shuffle.partitions", str(max(2, 2 * (os.cpu_count() or 1))))
            .config("spark.sql.codegen.wholeStage", "false")
            .config("spark.sql.adaptive.enabled", "false")
        )
    builder = builder.config("spark.driver.extraJavaOptions", java)
    try:
        spark = builder.getOrCreate()
    except Exception as exc:  # noqa: BLE001 - e.g. no Java: one clear line, not a JVM trace
        raise ChronologError(f"error: cannot start Spark ({master}): {str(exc).splitlines()[0]}") from None
    spark.sparkContext.setLogLevel("ERROR")
    if not master.startswith("local"):
        ship_package(spark.sparkContext)
    return spark, True


def ship_package(sc: Any) -> None:
    """Send this chronolog package to the executors of a cluster (its dependencies —
    orjson, clingo — must be installed there)."""
    root = Path(chronolog.__file__).parent
    path = Path(tempfile.mkdtemp(prefix="chronolog-")) / "chronolog.zip"
    with zipfile.ZipFile(path, "w", zipfile.ZIP_DEFLATED) as zf:
        for f in root.rglob("*"):
            if f.is_file() and "__pycache__" not in f.parts:
                zf.write(f, Path("chronolog") / f.relative_to(root))
    sc.addPyFile(str(path))


# ---------------------------------------------------------------- reading lines


def raw_lines(spark: Any, source: Source, idle: float = 1.5) -> Any:
    """An RDD of (partition, offset, line) for ``source``: file lines get partition 0 and
    their 0-based line index as offset."""
    if source.kind == "file":
        path = source.where if "://" in source.where else os.path.abspath(source.where)
        rdd = spark.sparkContext.textFile(path, use_unicode=False).zipWithIndex()
        return rdd.map(lambda x: (0, x[1], x[0].decode("utf-8", "surrogateescape")))
    if source.kind == "archive":
        base = topic_dir(Path(source.where), source.topic)
        if not base.is_dir():
            raise ChronologError(f"{source.where}: error: the archive has no topic {source.topic} ({base} is missing)")
        df = spark.read.option("basePath", str(Path(source.where).resolve())).parquet(str(base.resolve()))
    else:
        topic_partitions(source.where, source.topic)  # a clear error for a missing topic or broker
        spark.dataSource.register(KafkaTopicSource)
        df = (spark.read.format("chronolog-kafka").option("bootstrap", source.where)
              .option("topic", source.topic).option("idle", str(idle)).load())
    df = df.select("partition", "offset", "value").dropDuplicates(["partition", "offset"])
    return df.rdd.map(lambda r: (r[0], r[1], r[2] or ""))


def locator(source: Source) -> Callable[[int, int, int], Loc]:
    """File lines are named by line number; records by ``topic[partition]`` and offset."""
    if source.kind == "file":
        name = source.where
        return lambda p, o, col: Loc(name, o + 1, col)
    topic = source.topic
    return lambda p, o, col: Loc(f"{topic}[{p}]", o, col)
