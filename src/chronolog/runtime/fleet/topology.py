"""The Kafka topology of a program: topics and services derived from its strata.

Described as data first (like Kafka Streams' ``Topology.describe()``), so
that ``chronolog topology`` can print it and the fleet can create exactly
these topics and start exactly these services.  Partitioning by a key is
possible when every rule joins all its atoms on one variable standing at the
same argument position of each predicate (an entity id); tuple windows count
facts across all keys and rule it out.
"""

from __future__ import annotations

import zlib
from dataclasses import dataclass, field
from itertools import product

from chronolog.contract.topics import TopicNames
from chronolog.dialects.lars.ir import ExtAtom, TupleWindow, Var
from chronolog.dialects.lars.plan import Plan


def partition_of(key: str | None, partitions: int) -> int:
    """The partition of a partition-key value: stable across processes and
    runtimes (Python's ``hash`` is salted per process), so the fleet's ingest
    and the backfill route every key alike."""
    if key is None or partitions == 1:
        return 0
    return zlib.crc32(key.encode()) % partitions


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


def build_topology(plan: Plan, partitions: int = 1, input_partitions: int = 1, prefix: str = "chronolog",
                   chain: bool = False) -> Topology:
    """``chain``: grounding, the reasoners and the output run chained in one
    service per partition (``chronolog up --chain``), ingest too when there is
    one partition; only the repartitioning topic stays between services.
    A hosted dialect's program (``runtime/hosting.py``) is always one chain."""
    chain = chain or getattr(plan, "hosted", False)
    names = TopicNames(prefix)
    FACTS, ANSWERS, DLQ, LATE, INGESTED, GROUNDED = (  # noqa: N806
        names.facts, names.answers, names.dlq, names.late, names.ingested, names.grounded
    )
    key, reason = partition_key(plan)
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
    strata = fleet_strata(plan)
    if chain:
        return _chained(plan, names, topics, n, key, reason, strata)
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


def _chained(plan: Plan, names: TopicNames, topics: list[Topic], n: int, key: dict[str, int] | None, reason: str,
             strata: list[list[str]]) -> Topology:
    preds = [p for s in strata for p in s]
    services = []
    if n > 1:
        topics.append(Topic(names.ingested, n, "partition key", "delete", "validated events with watermarks"))
        services.append(Service("ingest", "chronolog service ingest", [names.facts],
                                [names.ingested, names.dlq, names.late], names.changelog("ingest")))
        services.append(Service("chain", "chronolog service chain", [names.ingested],
                                [names.answers], names.changelog("chain"), preds))
    else:
        services.append(Service("chain", "chronolog service chain", [names.facts],
                                [names.answers, names.dlq, names.late], names.changelog("chain"), preds))
    topics.append(Topic(names.answers, 1, "null", "delete", "answer lines (CONTRACT §3)"))
    what = "ingest, " if n == 1 else ""
    if getattr(plan, "hosted", False):
        reason += "; one chain service reads the input topic and hosts the evaluator"
    else:
        reason += f"; chained: {what}grounding, {len(strata)} stratum reasoner(s) and output in one service per partition"
    for s in services:
        topics.append(Topic(s.state, n, "state key", "compact", f"changelog of {s.name}'s RocksDB state"))  # type: ignore[arg-type]
    return Topology(topics, services, key, reason)


def fleet_strata(plan: Plan) -> list[list[str]]:
    """Predicates per fleet reasoner: the strata, or everything in one for a
    program that is not stratified (clingo evaluates it whole)."""
    if plan.stratified:
        return plan.strata
    return [sorted({p for s in plan.strata for p in s})]


def partition_key(plan: Plan) -> tuple[dict[str, int] | None, str]:
    """An argument position per predicate on which every rule joins, if there is one."""
    if getattr(plan, "hosted", False):
        return None, f"the {plan.dialect} evaluator is not split by key"  # type: ignore[attr-defined]
    rules = [r for r in plan.rules if r.body]
    for r in rules:
        for b in r.body:
            if isinstance(b, ExtAtom) and isinstance(b.window, TupleWindow):
                return None, "a tuple window counts facts of all keys"
    if any(not r.body and r.head.atom.key in plan.intensional for r in plan.program.rules):
        return None, "program facts of derived predicates would be answered by every partition"
    static = _static_preds(plan)
    for r in rules:
        if not any(isinstance(b, ExtAtom) and not b.negated and b.atom.key not in static for b in r.body):
            where = f" ({r.loc.file}:{r.loc.line})" if r.loc else ""
            return None, f"a rule reads only program facts{where}: every partition would derive it"
    preds: dict[str, int] = {}
    for r in plan.rules:
        for a in [r.head.atom] + [b.atom for b in r.body if isinstance(b, ExtAtom)]:
            if "#" in a.pred:
                continue
            preds[f"{a.pred}/{len(a.args)}"] = len(a.args)
    if any(n == 0 for n in preds.values()):
        return None, "a predicate without arguments cannot be partitioned"
    names = sorted(preds)
    if not names:
        return None, "no predicates"
    choices = [range(preds[p]) for p in names]
    budget = 4096
    for combo in product(*choices):
        budget -= 1
        if budget < 0:
            break
        key = dict(zip(names, combo))
        if all(_joins_on_key(r, key) for r in rules):
            return key, ""
    return None, "no argument position on which every rule joins all its atoms"


def _static_preds(plan: Plan) -> set:
    """Predicates that hold independently of the stream: program facts and what only they derive."""
    static = set(plan.background)
    changed = True
    while changed:
        changed = False
        for r in plan.rules:
            key = r.head.atom.key
            if key in static or not r.body or "#" in key[0]:
                continue
            heads = [x for x in plan.rules if x.head.atom.key == key]
            if all(
                x.body and all(not isinstance(b, ExtAtom) or b.negated or b.atom.key in static for b in x.body)
                for x in heads
            ):
                static.add(key)
                changed = True
    return static


def _joins_on_key(rule, key: dict[str, int]) -> bool:  # type: ignore[no-untyped-def]
    atoms = [rule.head.atom] + [b.atom for b in rule.body if isinstance(b, ExtAtom) and "#" not in b.atom.pred]
    terms = set()
    for a in atoms:
        if "#" in a.pred:
            continue
        term = a.args[key[f"{a.pred}/{len(a.args)}"]]
        if not isinstance(term, Var):
            return False
        terms.add(term.name)
    return len(terms) == 1
