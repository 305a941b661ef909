"""The Kafka topology of a program: topics and services derived from its fleet layout.

Described as data first (like Kafka Streams' ``Topology.describe()``), so
that ``chronolog topology`` can print it and the fleet can create exactly
these topics and start exactly these services.  What differs between
programs and dialects — the strata, whether they can run per stratum, the
partition key — is the program's ``FleetLayout`` (``chronolog.stages``),
which its dialect makes; nothing here knows a dialect.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from chronolog.contract.topics import TopicNames
from chronolog.stages.ingest import partition_of
from chronolog.stages.interface import FleetLayout

# partition_of: the backfill routes by it (runtime/backfill/)
__all__ = ["Service", "Topic", "Topology", "build_topology", "partition_of"]


@dataclass(frozen=True, slots=True)
class Topic:
    name: str
    partitions: int
    key: str
    cleanup: str  # "delete" or "compact"
    purpose: str


@dataclass(slots=True)
class Service:
    name: str
    command: str
    reads: list[str]
    writes: list[str]
    state: str | None = None  # changelog topic backing its RocksDB state
    preds: list[str] = field(default_factory=list)


@dataclass(slots=True)
class Topology:
    topics: list[Topic]
    services: list[Service]
    partition_key: dict[str, int] | None  # predicate -> argument position, None: one partition
    partition_reason: str

    def describe(self) -> str:
        lines = ["topics:"]
        for t in self.topics:
            lines.append(f"  {t.name}  partitions={t.partitions} key={t.key} cleanup={t.cleanup}  # {t.purpose}")
        lines.append("services:")
        for s in self.services:
            lines.append(f"  {s.name}: `{s.command}`")
            lines.append(f"    reads:  {', '.join(s.reads)}")
            lines.append(f"    writes: {', '.join(s.writes)}")
            if s.state:
                lines.append(f"    state:  RocksDB, changelog {s.state}")
            if s.preds:
                lines.append(f"    evaluates: {', '.join(s.preds)}")
        lines.append(f"partitioning: {self.partition_reason}")
        return "\n".join(lines) + "\n"

    def path(self, source: str, sink: str) -> list[str]:
        """The services on the longest path from topic ``source`` to topic ``sink``
        (empty when none leads there): the transactions an event passes before its
        answers are out, each a fetch and a commit of latency (``bench fleet --floor``)."""
        memo: dict[str, list[str] | None] = {}

        def longest(topic: str) -> list[str] | None:
            if topic == sink:
                return []
            if topic not in memo:
                memo[topic] = None  # the graph is acyclic; this only guards a mistake
                paths = [[s.name] + rest for s in self.services if topic in s.reads
                         for w in s.writes if (rest := longest(w)) is not None]
                memo[topic] = max(paths, key=len, default=None)
            return memo[topic]

        return longest(source) or []

    def mermaid(self) -> str:
        out = ["flowchart LR"]
        ids = {t.name: f"T{i}" for i, t in enumerate(self.topics)}
        # the data's flow: compacted topics (changelogs, the control topic) are bookkeeping
        flow = {t.name for t in self.topics if t.cleanup == "delete"}
        for t in self.topics:
            if t.name in flow:
                out.append(f"  {ids[t.name]}[({t.name})]")
        for i, s in enumerate(self.services):
            sid = f"S{i}"
            out.append(f"  {sid}[{s.name}]")
            for r in s.reads:
                out.append(f"  {ids[r]} --> {sid}")
            for w in s.writes:
                if w in flow:
                    out.append(f"  {sid} --> {ids[w]}")
        return "\n".join(out) + "\n"


def build_topology(layout: FleetLayout, partitions: int = 1, input_partitions: int = 1, prefix: str = "chronolog",
                   chain: bool = False) -> Topology:
    """``chain``: grounding, the reasoners and the output run chained in one
    service per partition (``chronolog up --chain``), ingest too when there is
    one partition; only the repartitioning topic stays between services.
    A layout that cannot run per stratum is always chained."""
    chain = chain or not layout.per_stratum
    names = TopicNames(prefix)
    FACTS, ANSWERS, DLQ, LATE, INGESTED, GROUNDED = (  # noqa: N806
        names.facts, names.answers, names.dlq, names.late, names.ingested, names.grounded
    )
    key, reason = layout.partition_key, layout.partition_reason
    n = partitions if key is not None else 1
    if key is None:
        reason = f"one partition: {reason}"
    else:
        reason = "by key: " + ", ".join(f"{p} argument {i + 1}" for p, i in sorted(key.items())) + f" ({n} partitions)"
    topics = [
        Topic(FACTS, input_partitions, "partition key or null", "delete", "input events (CONTRACT §2)"),
        Topic(DLQ, 1, "null", "delete", "malformed events with the reason"),
        Topic(LATE, 1, "null", "delete", "events older than the retention horizon, for the backfill"),
    ]
    strata = [list(s) for s in layout.strata]
    if chain:
        return _chained(layout, names, topics, n, key, reason, strata)
    topics.append(Topic(INGESTED, n, "partition key", "delete", "validated events with watermarks"))
    topics.append(Topic(GROUNDED, n, "partition key", "delete", "closed time points: each point's input facts as one batch"))
    services = [
        Service("ingest", "chronolog service ingest", [FACTS], [INGESTED, DLQ, LATE], names.changelog("ingest")),
        Service("grounding", "chronolog service grounding", [INGESTED], [GROUNDED], names.changelog("grounding")),
    ]
    for k, _preds in enumerate(strata, 1):
        topics.append(Topic(names.stratum(k), n, "partition key", "delete", f"diffs of stratum {k}"))
    reads_lower = [GROUNDED]
    for k, preds in enumerate(strata, 1):
        out = names.stratum(k)
        services.append(
            Service(f"reasoner-{k}", f"chronolog service reasoner --stratum {k}", list(reads_lower), [out],
                    names.changelog(f"reasoner-{k}"), preds)
        )
        reads_lower.append(out)
    topics.append(Topic(ANSWERS, 1, "null", "delete", "answer lines (CONTRACT §3)"))
    topics.append(Topic(names.control, 1, "output partition", "compact",
                        "the last epoch each output partition committed (docs/design/one-transaction.md)"))
    services.append(
        Service("output", "chronolog service output", [names.stratum(k) for k in range(1, len(strata) + 1)],
                [ANSWERS, names.control], names.changelog("output"))
    )
    for s in services:
        if s.state:
            topics.append(Topic(s.state, n, "state key", "compact", f"changelog of {s.name}'s RocksDB state"))
    return Topology(topics, services, key, reason)


def _chained(layout: FleetLayout, names: TopicNames, topics: list[Topic], n: int, key: dict[str, int] | None, reason: str,
             strata: list[list[str]]) -> Topology:
    preds = [p for s in strata for p in s]
    services = []
    if n > 1:
        topics.append(Topic(names.ingested, n, "partition key", "delete", "validated events with watermarks"))
        services.append(Service("ingest", "chronolog service ingest", [names.facts],
                                [names.ingested, names.dlq, names.late], names.changelog("ingest")))
        services.append(Service("chain", "chronolog service chain", [names.ingested],
                                [names.answers, names.control], names.changelog("chain"), preds))
    else:
        services.append(Service("chain", "chronolog service chain", [names.facts],
                                [names.answers, names.control, names.dlq, names.late], names.changelog("chain"), preds))
    topics.append(Topic(names.answers, 1, "null", "delete", "answer lines (CONTRACT §3)"))
    topics.append(Topic(names.control, 1, "upgrade request and service", "compact",
                        "each service's outcome of a program upgrade (chronolog upgrade waits for it)"))
    reason += f"; {layout.chain_note(n)}"
    for s in services:
        topics.append(Topic(s.state, n, "state key", "compact", f"changelog of {s.name}'s RocksDB state"))  # type: ignore[arg-type]
    return Topology(topics, services, key, reason)
