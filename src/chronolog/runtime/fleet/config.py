"""What a fleet service is before it runs: its configuration, its clients' settings and the
stage it runs (``make_stage``) — what ``chronolog service``, ``chronolog up``'s supervisor,
the benchmarks and the tests build a service from (``runtime/fleet/service.py`` runs it).
The settings of its Kafka clients are here too (``*_settings``): the tunables, the user's
``--kafka-config`` over them, and over both what exactly-once needs of each client."""

from __future__ import annotations

import logging
import os
from dataclasses import dataclass, field
from pathlib import Path

from chronolog.contract.topics import SERVICE_ROLES
from chronolog.core.errors import ChronologError
from chronolog.stages.interface import FleetLayout, Stage, StageSpec

# The services' own client settings, before the user's (``--kafka-config``);
# ``bench fleet --floor``'s forwarding hops use them too, so the floor keeps the
# services' shape.  Every record is produced inside a transaction, and
# committing flushes at once whatever linger.ms says (librdkafka >= 1.8): a long
# linger only makes each transaction one produce request per partition instead
# of several small ones.  Fewer requests and record batches: less CPU here and
# on the broker (docs/benchmarks.md), the same latency.
# The bundled broker answers a fetch by checking its partitions at 0, 1/2,
# 3/4, ... of the wait (a produce does not wake it), so a record that comes
# while a consumer waits is seen up to half a wait late, at every hop: 5 ms
# against 10 cut the per-stratum p50 by about 10 ms and its p99 by 15-30 ms
# once relays made four of the hops plain produces (round 14), for 5% of the
# points workload's throughput (the idle checks cost the broker CPU).  On
# Apache Kafka, which wakes a waiting fetch, a longer wait costs no latency
# (``CHRONOLOG_KAFKA_FETCH_WAIT_MAX_MS``).
CONSUMER_TUNABLES = {"fetch.wait.max.ms": 5, "session.timeout.ms": 6000}
PRODUCER_TUNABLES = {"linger.ms": 100, "transaction.timeout.ms": 60000}
# A relay's records go out as soon as they are made, without a transaction
# (docs/fleet/exactly-once.md): a short linger lets what one processed batch
# makes leave in one request per partition.
RELAY_TUNABLES = {"linger.ms": 1}
# The services in the middle of the pipeline: they relay (``Service.relay``).
RELAYS = ("grounding", "reasoner")


@dataclass
class ServiceConfig:
    service: str
    layout: FleetLayout  # the program's, as its dialect lays it out (Dialect.layout)
    bootstrap: str
    stratum: int | None = None  # 1-based, reasoners only
    partition: int = 0
    partitions: int = 1
    input_partitions: int = 1
    state_dir: Path = Path(".chronolog")
    metrics_port: int = 0
    idle_flush: float = 1.0
    retention: int | float | None = None  # --retention N; inf or None: unlimited
    window: int | None = None  # RTEC's windowed mode (--window, --step)
    step: int | None = None
    prefix: str = "chronolog"
    version: str | None = None  # the program version it was started with (versions.version_id of its files)
    versions: tuple = ()  # the program versions applied since the fleet started (StageSpec.versions)
    mark_no_answer_set: bool = False  # no_answer_set lines on the answer topic too (StageSpec)
    kafka: dict[str, str] = field(default_factory=dict)
    batch: int = 2000
    poll: float = 0.01
    # the longest wait before committing a batch that produced nothing
    commit_interval: float = float(os.environ.get("CHRONOLOG_COMMIT_INTERVAL", "0.5"))
    commit_gap: float | None = None  # least time between the starts of two transactions (None: commit_gap_for)
    hold: float = 0.05  # longest wait of records nothing downstream can use yet (runtime/fleet/batching.py)
    gc_interval: float = 600.0  # seconds between full garbage collections (Service._collect)
    # a relay stores its state at most this often, at the end of an epoch (Service.relay)
    state_interval: float = float(os.environ.get("CHRONOLOG_RELAY_STATE_INTERVAL", "0.25"))

    def __post_init__(self) -> None:
        if self.commit_gap is None:
            self.commit_gap = commit_gap_for(self.service)

    @property
    def name(self) -> str:
        """The service as the topology names it (``reasoner-2``): its changelog topic."""
        return self.service if self.stratum is None else f"{self.service}-{self.stratum}"

    @property
    def instance(self) -> str:
        """Unique per process of the fleet: names its group, transactional id and state."""
        return self.name if self.service == "ingest" else f"{self.name}-p{self.partition}"


def commit_gap_for(service: str, environ: dict | None = None) -> float:
    """Least seconds between two transactions of a service (``CHRONOLOG_COMMIT_GAP``,
    or ``CHRONOLOG_COMMIT_GAP_<SERVICE>`` for one service, e.g. ``..._OUTPUT``).

    The head of the pipeline sets the pace: ingest starts at most one
    transaction every 30 ms, and every service after it commits as soon as it
    has something for the next (no gap).  Each of those receives one upstream
    transaction at a time, so the hops run in step, each committing about as
    often as ingest, with no wait of their own.  Every transaction leaves two
    objects per partition that the bundled broker lists on every fetch
    (docs/benchmarks.md#fleet), so the pace bounds the broker's work too.
    Measured against a 20 ms gap at every hop (docs/benchmarks.md#fleet, 2026-11-25):
    per stratum p99 at 1,000 events/s 120-185 -> 88-99 ms, throughput no
    lower.  The chain commits at once."""
    env = os.environ if environ is None else environ
    for name in (f"CHRONOLOG_COMMIT_GAP_{service.upper()}", "CHRONOLOG_COMMIT_GAP"):
        if name in env:
            return float(env[name])
    return 0.03 if service == "ingest" else 0.0


def consumer_settings(cfg: ServiceConfig) -> dict:
    """The service's consumer: it reads committed records only, from the offsets its
    state names (assigned partitions, nothing committed to the group)."""
    return {"bootstrap.servers": cfg.bootstrap, **CONSUMER_TUNABLES, **cfg.kafka,
            "group.id": client_id(cfg), "enable.auto.commit": False, "isolation.level": "read_committed",
            "auto.offset.reset": "earliest"}


def producer_settings(cfg: ServiceConfig) -> dict:
    """The service's transactional producer (one transactional id per instance:
    a restarted instance fences its predecessor)."""
    return {"bootstrap.servers": cfg.bootstrap, **PRODUCER_TUNABLES, **cfg.kafka, "transactional.id": client_id(cfg)}


def relay_settings(cfg: ServiceConfig) -> dict:
    """A relay's producer of its records: idempotent (in order, no duplicates), no
    transaction; only failed deliveries are reported."""
    return {"bootstrap.servers": cfg.bootstrap, **RELAY_TUNABLES, **cfg.kafka,
            "enable.idempotence": True, "acks": "all", "delivery.report.only.error": True}


def restore_settings(cfg: ServiceConfig) -> dict:
    """The consumer that reads a service's changelog partition on start."""
    return {"bootstrap.servers": cfg.bootstrap, **cfg.kafka, "group.id": f"{cfg.prefix}-restore",
            "enable.auto.commit": False, "isolation.level": "read_committed", "fetch.wait.max.ms": 100,
            "auto.offset.reset": "earliest"}


def client_id(cfg: ServiceConfig) -> str:
    """The group and transactional id of a service instance."""
    return f"{cfg.prefix}-{cfg.instance}"


def kafka_config(path: str | None = None, environ: dict | None = None) -> dict[str, str]:
    """librdkafka settings from a properties file and ``CHRONOLOG_KAFKA_<KEY>`` variables
    (SASL/TLS for managed clusters: security.protocol, sasl.*, ssl.*)."""
    conf: dict[str, str] = {}
    if path:
        try:
            text = Path(path).read_text()
        except OSError as exc:
            raise ChronologError(f"error: cannot read --kafka-config {path}: {exc.strerror}") from None
        for n, line in enumerate(text.splitlines(), 1):
            line = line.strip()
            if not line or line.startswith("#"):
                continue
            if "=" not in line:
                raise ChronologError(f"{path}:{n}:1: error: expected key=value")
            k, v = line.split("=", 1)
            conf[k.strip()] = v.strip()
    for k, v in (os.environ if environ is None else environ).items():
        if k.startswith("CHRONOLOG_KAFKA_"):
            conf[k[len("CHRONOLOG_KAFKA_"):].lower().replace("_", ".")] = v
    return conf


def make_stage(cfg: ServiceConfig) -> Stage:
    """The service's stage, from its layout: the stratum and partition are checked
    here, with clear messages; which stage a role runs is the layout's."""
    layout = cfg.layout
    if cfg.service not in SERVICE_ROLES:
        raise ChronologError(f"error: unknown service {cfg.service!r} (one of {', '.join(SERVICE_ROLES)})")
    if layout.partition_key is None and cfg.partition > 0:
        raise ChronologError(f"error: this program cannot be partitioned ({layout.partition_reason}): run one "
                             f"partition (--partitions 1), not partition {cfg.partition}")
    if not 0 <= cfg.partition < max(1, cfg.partitions):
        raise ChronologError(f"error: --partition {cfg.partition} is outside 0..{cfg.partitions - 1}")
    strata = len(layout.strata)
    if cfg.service == "reasoner" and (cfg.stratum is None or not 1 <= cfg.stratum <= strata):
        raise ChronologError(f"error: --stratum must be between 1 and {strata} for this program")
    return layout.stage(StageSpec(
        cfg.service, cfg.stratum, cfg.partition, cfg.partitions, cfg.input_partitions, cfg.idle_flush,
        cfg.retention, cfg.window, cfg.step, chains_ingest(cfg), logging.getLogger("chronolog.service").warning,
        version=cfg.version, versions=cfg.versions, mark_no_answer_set=cfg.mark_no_answer_set))


def chains_ingest(cfg: ServiceConfig) -> bool:
    """A chain includes ingest when there is one partition: nothing to repartition."""
    return cfg.service == "chain" and (cfg.partitions <= 1 or cfg.layout.partition_key is None)
