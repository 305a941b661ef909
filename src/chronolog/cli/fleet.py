"""Fleet subcommands: ``up``, ``down``, ``publish``, ``tail``, ``service``, ``create-topics`` (CONTRACT §4)."""

from __future__ import annotations

import argparse
import json
import logging
import math
import os
import sys
import threading
import time
from collections.abc import Callable
from pathlib import Path
from typing import IO

import orjson

from chronolog.cli import main as command_line
from chronolog.contract.topics import SERVICE_ROLES, TopicNames
from chronolog.core.errors import ChronologError
from chronolog.core.retention import retention_value
from chronolog.dialects.load import DIALECTS, load_program
from chronolog.dialects.registry import RunOptions, lookup, refusal
from chronolog.runtime.fleet import kafka_clients
from chronolog.runtime.fleet.broker import create_topics
from chronolog.runtime.fleet.config import ServiceConfig, kafka_config
from chronolog.runtime.fleet.config import kafka_config as settings_of  # (where a parameter is named kafka_config)
from chronolog.runtime.fleet.kafka_clients import PUBLISH_LINGER_MS, publish_settings
from chronolog.runtime.fleet.service import Service
from chronolog.runtime.fleet.supervisor import Fleet, read_fleet_file, stop_fleet
from chronolog.runtime.fleet.topic_reader import from_the_start
from chronolog.runtime.fleet.topology import build_topology
from chronolog.stages.interface import FleetLayout, with_strata
from chronolog.versions import version_id

PROGRAM_HELP = "program file(s)"
DIALECT_HELP = "rule language (default: by extension)"


def _env_default(name: str, default: object = None) -> object:
    return os.environ.get(name, default)


def _evaluation_options(p: argparse.ArgumentParser) -> None:
    """The options `up` and `service` share that shape the evaluation, as `chronolog run`'s do."""
    p.add_argument("--window", type=int, metavar="TICKS", help="RTEC programs: RTEC's windowed mode (as chronolog run)")
    p.add_argument("--step", type=int, metavar="TICKS", help="RTEC programs, with --window: ticks between query times")
    p.add_argument("--mode", choices=["tms", "oneshot"], help="LARS programs that are not stratified: tms (truth "
                                                              "maintenance, default) or oneshot (clingo per time point)")
    p.add_argument("--seed", type=int, default=0, help="--mode tms: the seed of the choices (default 0)")
    p.add_argument("--mark-no-answer-set", action="store_true",
                   help="LARS: also put {\"t\": T, \"no_answer_set\": true} on the answer topic at a time point "
                        "without an answer set (default: answer lines only; the point is logged and counted)")
    p.add_argument("--kafka-config", help="librdkafka properties file (SASL/TLS ...)")
    p.add_argument("--topic-prefix", default="chronolog", help="topic names are PREFIX.facts, PREFIX.answers, ...")


def add_fleet_commands(sub: argparse._SubParsersAction) -> None:
    up = sub.add_parser("up", help="start the Kafka fleet (bundled broker unless --bootstrap) and supervise it")
    up.add_argument("program", nargs="+", help=PROGRAM_HELP)
    up.add_argument("--dialect", choices=DIALECTS, help=DIALECT_HELP)
    up.add_argument("--bootstrap", help="Kafka bootstrap HOST:PORT (default: start the bundled broker)")
    up.add_argument("--partitions", type=int, default=1, help="parallelism of internal topics and services")
    up.add_argument("--input-partitions", type=int, default=1, help="partitions of the input topic")
    up.add_argument("--state-dir", default=".chronolog", help="RocksDB state, logs and fleet.json (default .chronolog)")
    up.add_argument("--idle-flush", type=float, default=1.0, help="evaluate the latest time point after this many idle seconds")
    up.add_argument("--retention", type=retention_value, metavar="N",
                    help="repair late events up to N time points back; older ones go to the late topic "
                         "(default, or inf: unlimited)")
    _evaluation_options(up)
    up.add_argument("--archive", metavar="DIR", help="also archive the input and answer topics to Parquet in DIR "
                    "(for `chronolog backfill --history DIR`)")
    up.add_argument("--chain", action="store_true",
                    help="run grounding, the stratum reasoners and output chained in one process per partition "
                         "(ingest too with one partition): fewer hops, one transaction per batch")
    up.add_argument("--publish", metavar="FILE", help="after ready, publish this JSONL file to the input topic")
    up.add_argument("--tail", action="store_true", help="after ready, print the answer topic on stdout")
    up.set_defaults(func=cmd_up)

    down = sub.add_parser("down", help="stop the fleet started by `chronolog up`")
    down.add_argument("--state-dir", default=".chronolog", help="the state directory given to `chronolog up`")
    down.set_defaults(func=cmd_down)

    pub = sub.add_parser("publish", help="send an input file (JSONL, one event per line) to the input topic")
    pub.add_argument("file", help="input file, or - for stdin")
    pub.add_argument("--linger-ms", type=float, metavar="MS",
                     help=f"longest wait gathering events into one produce batch (default {PUBLISH_LINGER_MS:g}, "
                          "or linger.ms from --kafka-config); fewer, larger batches cost a broker less")
    _client_args(pub)
    pub.set_defaults(func=cmd_publish)

    tail = sub.add_parser("tail", help="print the answer topic (committed answers only)")
    _client_args(tail)
    tail.add_argument("--idle-exit", type=float, metavar="S", help="stop after S seconds without a new answer")
    tail.add_argument("--count", type=int, metavar="N", help="stop after N answer lines")
    tail.add_argument("--topic", help="topic to read (default PREFIX.answers)")
    tail.set_defaults(func=cmd_tail)

    svc = sub.add_parser("service", help="run one fleet service (started by `chronolog up`, Helm or compose)")
    svc.add_argument("service", choices=SERVICE_ROLES, help="which service (services/SERVICE/README.md)")
    svc.add_argument("program", nargs="+", help=PROGRAM_HELP)
    svc.add_argument("--dialect", choices=DIALECTS, help=DIALECT_HELP)
    svc.add_argument("--bootstrap", default=_env_default("CHRONOLOG_BOOTSTRAP"),
                     help="Kafka bootstrap HOST:PORT (default: $CHRONOLOG_BOOTSTRAP)")
    svc.add_argument("--stratum", type=int, help="reasoner: the stratum it evaluates (1-based)")
    svc.add_argument("--partition", type=int, default=0, help="the key partition this instance owns")
    svc.add_argument("--partitions", type=int, default=1, help="key partitions of the fleet")
    svc.add_argument("--input-partitions", type=int, default=1, help="partitions of the input topic")
    svc.add_argument("--state-dir", default=_env_default("CHRONOLOG_STATE_DIR", ".chronolog"),
                     help="RocksDB state (default: $CHRONOLOG_STATE_DIR or .chronolog)")
    svc.add_argument("--metrics-port", type=int, default=int(str(_env_default("CHRONOLOG_METRICS_PORT", 9400))),
                     help="HTTP port of /metrics (default: $CHRONOLOG_METRICS_PORT or 9400; 0: any free port)")
    svc.add_argument("--idle-flush", type=float, default=1.0, help="grounding: close the latest time point after "
                     "this many idle seconds")
    svc.add_argument("--retention", type=retention_value, metavar="N",
                     help="repair late events up to N time points back (inf: all)")
    _evaluation_options(svc)
    svc.add_argument("--ready-file", help="write {pid, metrics_port} here once the service runs")
    svc.add_argument("--fleet-versions", metavar="FILE", help="JSON {strata, versions}: the fleet's reasoners per "
                     "partition and the program versions applied since it started (written by up's supervisor "
                     "when an upgrade adds strata or answer predicates; docs/fleet/upgrade.md)")
    svc.set_defaults(func=cmd_service)

    ct = sub.add_parser("create-topics", help="create the topics of a program's fleet on a Kafka cluster")
    ct.add_argument("program", nargs="+", help=PROGRAM_HELP)
    ct.add_argument("--dialect", choices=DIALECTS, help=DIALECT_HELP)
    ct.add_argument("--bootstrap", required=True, help="Kafka bootstrap HOST:PORT")
    ct.add_argument("--partitions", type=int, default=1, help="partitions of the internal topics")
    ct.add_argument("--input-partitions", type=int, default=1, help="partitions of the input topic")
    ct.add_argument("--kafka-config", help="librdkafka properties file (SASL/TLS ...)")
    ct.add_argument("--topic-prefix", default="chronolog", help="topic names are PREFIX.facts, PREFIX.answers, ...")
    ct.add_argument("--chain", action="store_true", help="the topics of a chained fleet (up --chain)")
    ct.add_argument("--replication-factor", type=int, default=1, help="replicas per topic (default 1)")
    ct.set_defaults(func=cmd_create_topics)


def _client_args(p: argparse.ArgumentParser) -> None:
    p.add_argument("--bootstrap", help="Kafka bootstrap HOST:PORT (default: the fleet in --state-dir)")
    p.add_argument("--state-dir", default=".chronolog", help="the fleet's state directory, for its bootstrap")
    p.add_argument("--kafka-config", help="librdkafka properties file (SASL/TLS ...)")
    p.add_argument("--topic-prefix", default=None, help="topic prefix (default: the fleet's, else chronolog)")


def _say(msg: str) -> None:
    print(msg, flush=True)


def fleet_layout(args: argparse.Namespace) -> FleetLayout:
    """The program's fleet as its dialect lays it out (``Dialect.layout``), or the
    error saying why it has none; ``--window``/``--step`` checked as ``chronolog run`` does."""

    program = load_program(args.program, args.dialect)
    row = lookup(program.dialect)
    options = RunOptions(mode=getattr(args, "mode", None), seed=getattr(args, "seed", 0) or 0,
                         retention=getattr(args, "retention", None), window=getattr(args, "window", None),
                         step=getattr(args, "step", None))
    why = refusal(row, options)  # the same options as `chronolog run`, refused the same way
    if why is not None:
        raise ChronologError(why)
    retention = options.retention
    if retention is not None and type(retention) is not int and retention != math.inf:  # (a DatalogMTL rational)
        raise ChronologError(f"error: --retention {retention}: the fleet keeps a whole number of time points "
                             f"(--retention {math.ceil(retention)} applies every event {retention} would)")
    layout = row.layout(program, options)
    layout.require()
    if getattr(args, "step", None) is not None and getattr(args, "window", None) is None:
        raise ChronologError("error: in the fleet --step goes with --window (RTEC's windowed mode)")
    # what `chronolog run` refuses of these options together, refused the same way (RTEC: --window
    # with a finite --retention, which the windowed evaluator would ignore)
    row.evaluator(program, options, lambda message: None)
    return layout


def _fleet(args: argparse.Namespace, layout: FleetLayout) -> Fleet:
    """The fleet ``up`` starts for ``args`` (nothing started yet)."""
    return Fleet(
        programs=[os.path.abspath(p) for p in args.program], layout=layout, state_dir=Path(args.state_dir).resolve(),
        bootstrap=args.bootstrap, partitions=args.partitions, input_partitions=args.input_partitions,
        idle_flush=args.idle_flush, retention=args.retention, window=args.window, step=args.step,
        kafka_config=os.path.abspath(args.kafka_config) if args.kafka_config else None, prefix=args.topic_prefix,
        mode=args.mode, seed=args.seed, dialect=args.dialect, mark_no_answer_set=args.mark_no_answer_set,
        archive=os.path.abspath(args.archive) if args.archive else None, chain=args.chain,
    )


def cmd_up(args: argparse.Namespace) -> int:
    layout = fleet_layout(args)
    if args.partitions > 1 and layout.partition_key is None:
        print(f"warning: this program cannot be partitioned ({layout.partition_reason}); running one partition",
              file=sys.stderr, flush=True)
    fleet = _fleet(args, layout)
    try:
        fleet.up(_say)
        _say(f"ready {len(fleet.children)} services, bootstrap {fleet.bootstrap}, "
             f"input topic {TopicNames(args.topic_prefix).facts}, answers {TopicNames(args.topic_prefix).answers}")
        if args.publish:
            n = publish_file(args.publish, fleet.bootstrap, args.topic_prefix, fleet.kafka_config)  # type: ignore[arg-type]
            print(f"published {n} lines from {args.publish}", file=sys.stderr, flush=True)
        if args.tail:
            threading.Thread(
                target=tail_topic, args=(fleet.bootstrap, TopicNames(args.topic_prefix).answers, fleet.kafka_config),
                kwargs={"stop": lambda: fleet.stopping}, daemon=True,
            ).start()
        fleet.supervise(lambda m: print(m, file=sys.stderr, flush=True))
    finally:
        fleet.down()
    return 0


def cmd_down(args: argparse.Namespace) -> int:
    stop_fleet(Path(args.state_dir))
    return 0


def _bootstrap(args: argparse.Namespace) -> tuple[str, str]:
    """Bootstrap and topic prefix: from the flags, else from the running fleet."""
    if args.bootstrap:
        return args.bootstrap, args.topic_prefix or "chronolog"

    info = read_fleet_file(Path(args.state_dir))
    return info["bootstrap"], args.topic_prefix or info.get("prefix", "chronolog")


def publish_file(path: str, bootstrap: str, prefix: str, kafka_config: str | None = None,
                 linger_ms: float | None = None) -> int:
    """Send every non-empty line as one record.  With several input partitions, a line
    whose time is later than any before also goes as a time advance to every other
    partition (CONTRACT §4), so each partition's time keeps up."""

    conf = {"bootstrap.servers": bootstrap, **settings_of(kafka_config)}
    topic = TopicNames(prefix).facts
    meta = kafka_clients.topic_metadata(kafka_clients.admin(conf), topic, timeout=15)
    if meta is None:
        raise ChronologError(f"error: topic {topic} does not exist on {bootstrap} (start the fleet with `chronolog up`)")
    parts = max(1, len(meta.partitions))
    producer = kafka_clients.producer(publish_settings(conf, linger_ms))
    produce = kafka_clients.sender(producer)  # a file longer than the producer's queue waits, never fails
    latest: int | None = None
    sent = 0
    stream = sys.stdin if path == "-" else open(path, encoding="utf-8")  # noqa: SIM115
    try:
        for n, line in enumerate(stream):
            line = line.strip()
            if not line:
                continue
            t = None
            try:
                obj = orjson.loads(line)
                if isinstance(obj, dict) and type(obj.get("t")) is int:
                    t = obj["t"]
            except orjson.JSONDecodeError:
                pass
            part = n % parts if parts > 1 else 0
            produce(topic, line.encode(), partition=part)
            sent += 1
            if parts > 1 and t is not None and (latest is None or t > latest):
                latest = t
                for other in range(parts):
                    if other != part:
                        produce(topic, orjson.dumps({"t": t}), partition=other)
            producer.poll(0)
    except OSError as exc:
        raise ChronologError(f"error: cannot read {path}: {exc.strerror}") from None
    except BufferError as exc:
        raise ChronologError(f"error: publishing to {bootstrap} after {sent} lines: {exc}") from None
    finally:
        if stream is not sys.stdin:
            stream.close()
    left = producer.flush(30)
    if left:
        raise ChronologError(f"error: {left} records were not delivered to {bootstrap}")
    return sent


def cmd_publish(args: argparse.Namespace) -> int:
    bootstrap, prefix = _bootstrap(args)
    n = publish_file(args.file, bootstrap, prefix, args.kafka_config, args.linger_ms)
    print(f"published {n} lines to {TopicNames(prefix).facts}", file=sys.stderr)
    return 0


def tail_topic(
    bootstrap: str, topic: str, kafka_config: str | None = None, *, idle_exit: float | None = None,
    count: int | None = None, stop: Callable[[], bool] = lambda: False, out: IO[str] | None = None,
) -> int:
    out = out or sys.stdout
    consumer = from_the_start(bootstrap, topic, settings_of(kafka_config), "chronolog-tail")
    seen = 0
    last = time.monotonic()
    try:
        while not stop():
            msg = consumer.poll(0.1)
            if msg is None or msg.error():
                if idle_exit is not None and time.monotonic() - last > idle_exit:
                    break
                continue
            last = time.monotonic()
            out.write(msg.value().decode("utf-8", errors="replace") + "\n")
            out.flush()
            seen += 1
            if count is not None and seen >= count:
                break
    finally:
        consumer.close()
    return seen


def cmd_tail(args: argparse.Namespace) -> int:
    bootstrap, prefix = _bootstrap(args)
    tail_topic(bootstrap, args.topic or TopicNames(prefix).answers, args.kafka_config, idle_exit=args.idle_exit, count=args.count)
    return 0


def _version(paths: list[str]) -> str:
    """The program version of the files (``versions.version_id``)."""

    texts = []
    for path in paths:
        with open(path, encoding="utf-8") as f:
            texts.append((path, f.read()))
    return version_id(texts)


def cmd_service(args: argparse.Namespace) -> int:
    if not args.bootstrap:
        raise ChronologError("error: --bootstrap (or CHRONOLOG_BOOTSTRAP) is required")

    logging.basicConfig(level=logging.INFO, format=f"%(asctime)s {args.service} %(levelname)s %(message)s")
    cfg = service_config(args)
    service = Service(cfg)

    def ready(svc: Service) -> None:
        print(f"ready {cfg.instance} metrics=:{svc.port}", flush=True)
        if args.ready_file:
            tmp = Path(args.ready_file + ".tmp")
            tmp.write_text(json.dumps({"pid": os.getpid(), "metrics_port": svc.port}))
            tmp.replace(args.ready_file)

    service.run(ready)
    return 0


def fleet_versions(path: str | None) -> tuple[int, tuple]:
    """``--fleet-versions FILE``: the fleet's reasoners per partition (0: the program's) and the
    program versions applied since it started, each as its files' (name, text)."""
    if path is None:
        return 0, ()
    try:
        got = json.loads(Path(path).read_text())
        versions = tuple(tuple((str(n), str(t)) for n, t in v) for v in got["versions"])
        return int(got["strata"]), versions
    except (OSError, ValueError, KeyError, TypeError) as exc:
        raise ChronologError(f"error: cannot read --fleet-versions {path}: {exc}") from None


def service_config(args: argparse.Namespace) -> ServiceConfig:
    """The configuration of the service ``chronolog service`` runs for ``args`` (nothing started)."""
    strata, versions = fleet_versions(getattr(args, "fleet_versions", None))
    return ServiceConfig(
        service=args.service, layout=with_strata(fleet_layout(args), strata), bootstrap=args.bootstrap, stratum=args.stratum,
        partition=args.partition, partitions=args.partitions, input_partitions=args.input_partitions,
        state_dir=Path(args.state_dir), metrics_port=args.metrics_port, idle_flush=args.idle_flush,
        retention=args.retention, window=args.window, step=args.step, prefix=args.topic_prefix,
        kafka=kafka_config(args.kafka_config), version=_version(args.program), versions=versions,
        mark_no_answer_set=bool(getattr(args, "mark_no_answer_set", False)),
    )


def cmd_create_topics(args: argparse.Namespace) -> int:
    topology = build_topology(fleet_layout(args), args.partitions, args.input_partitions, args.topic_prefix, chain=args.chain)
    created = create_topics(args.bootstrap, topology, extra=kafka_config(args.kafka_config),
                            replication=args.replication_factor)
    for name in created:
        print(f"created {name}")
    print(f"{len(topology.topics)} topics present, {len(created)} created")
    return 0


def service_main(service: str, argv: list[str] | None = None) -> None:
    """Entry point of ``services/SERVICE/main.py``: exactly ``chronolog service
    SERVICE ARGS...`` (ARGS from the command line), so the folder and the CLI
    start the same runner."""
    sys.exit(command_line.main(["service", service, *(sys.argv[1:] if argv is None else argv)]))
