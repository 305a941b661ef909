"""``chronolog upgrade`` against a running fleet: the plan, the request on the input topic,
and the outcome the service writes to the control topic (docs/fleet/upgrade.md).

The request is a record on ``chronolog.facts`` (every input partition: a service applies a
request once), so it is read in order with the data by the service that reads that topic,
applied inside the service's transaction with the data and its state — a service killed
during an upgrade resumes it from its last committed state and reads the request again.
"""

from __future__ import annotations

import time
import uuid
from typing import Any

import orjson

from chronolog.contract.topics import TopicNames
from chronolog.core.errors import ChronologError
from chronolog.core.strata import plan_lines as plan_strata
from chronolog.dialects.registry import lookup
from chronolog.runtime.fleet import kafka_clients
from chronolog.runtime.fleet.topic_reader import from_the_start
from chronolog.versions import UNBOUNDED, UpgradeRequest, retention_back, version_id

KEPT_WHOLE = ("unchanged: keeps its state (the same rules and inputs: not evaluated again, "
              "its answers not restated)")
KEPT_RESTATED = ("unchanged: its answers are not restated (the same rules and inputs); the service evaluates "
                 "it again with the rest")


def new_request(sources: tuple[tuple[str, str], ...], dialect: str, at: str | None) -> UpgradeRequest:
    return UpgradeRequest(uuid.uuid4().hex[:16], version_id(sources), dialect, at, sources)


def plan_lines(old: Any, old_sources: tuple[tuple[str, str], ...] | None, new: Any,
               new_sources: tuple[tuple[str, str], ...], at: str | None, retention: Any,
               chained: bool = True, stamped: bool = False, input_partitions: int = 1) -> list[str]:
    """What the upgrade will do, as ``chronolog upgrade`` prints it first.  ``stamped``: the
    fleet's ingest stamps the input retained on the request (a LARS fleet), and its services
    decide on that alike (``retained_lines``); else each service checks its own input."""
    row = lookup(new.dialect)
    before = "unknown (the fleet file names no program)" if old_sources is None else version_id(old_sources)
    after = version_id(new_sources)
    lines = [f"upgrade plan: {row.title} program {before} -> {after}"]
    same = old_sources is not None and version_id(old_sources) == after
    if row.strata_changes is not None:  # strata of their own: each one's fate, by content
        lines += row.strata_changes(old, new, chained)
    elif row.content_strata is not None:  # one service hosting the evaluator, which keeps unchanged strata
        lines += plan_strata(None if old is None else row.content_strata(old), row.content_strata(new),
                             KEPT_WHOLE if row.keeps_strata else KEPT_RESTATED)
    else:
        lines.append("  stratum 1 (chain service, the whole program): "
                     + ("kept (the same rules: nothing to re-evaluate)" if same else "re-evaluated from T on"))
    reach = row.reach(new)
    back = "the whole retained input (no bounded reach)" if reach is None else f"[T - {reach.back}, now]"
    if row.keeps_strata and reach is not None:  # (the changed strata's own chain of windows: often less)
        back = f"{back} at most, by the changed and added strata only"
    elif row.keeps_strata:
        back += ", by the changed and added strata only"
    lines.append(f"  input read again: {back}")
    if row.dates_back(new):  # (LARS @-heads: the version chosen by the time point evaluated)
        far = "anywhere" if reach is None else f"up to {reach.ahead}"
        lines.append(f"  @-heads: the new program's evaluations from T on date atoms {far} before the time "
                     "evaluated, before T too: answers there beside the old program's")
    if old is not None and row.dates_back(old):
        lines.append("  @-heads of the running program: what its evaluations from T on dated (T in the past) "
                     "is taken back")
    if retention is None or retention == float("inf"):
        lines.append("  retention: inf (the whole input is kept: it covers the span)")
    elif stamped:
        lines.append(retained_line(int(retention), retention_back(reach), at is None and input_partitions == 1))
    elif reach is None:
        lines.append(f"  retention: {retention} (the new program needs all earlier input: refused if the "
                     "service has forgotten any)")
    else:
        lines.append(f"  retention: {retention} (covers the span while T - {reach.back} is within it; "
                     "the service checks and refuses otherwise)")
    lines.append(f"  T: {at}" if at is not None else "  T: the first time the service has not evaluated yet")
    return lines


def retained_line(retention: int, back: Any, default_at: bool) -> str:
    """The plan's retention line for a fleet whose ingest stamps the input retained on the
    request (``IngestStage.stamped``): every service holds the input from ingest's latest
    time M - retention - 1 on (all of it while that is at or before the first time), and every
    service refuses alike where the new program needs earlier input (``versions.retention_refusal``).
    ``default_at``: T is ingest's, M + 1 (one input partition), so a reach within
    retention + 2 is covered whenever the request arrives."""
    held = f"the fleet holds the input from the latest time its ingest has read - {retention + 1} on"
    if back is UNBOUNDED:
        return (f"  retention: {retention} ({held}; the new program reads all earlier input (a window without bound, "
                "an @-head dating anywhere back, or a tuple window, which counts facts): taken only while the fleet "
                f"has forgotten none, its latest time at most {retention + 1} after its first, else every service "
                "refuses it)")
    if default_at and back <= retention + 2:
        return (f"  retention: {retention} ({held}, and T is the time after it: it covers [T - {back}, now])")
    if default_at:
        return (f"  retention: {retention} ({held}, and T is the time after it: [T - {back}, now] reaches "
                f"{back - retention - 2} further back, so every service refuses it unless the fleet has forgotten "
                "no input yet)")
    return (f"  retention: {retention} ({held}, when the request reaches ingest: every service refuses it, alike, if "
            f"T - {back} lies before that)")


class RequestSender:
    """Sends a request to every partition of the input topic.  Not an idempotent producer: a
    request sent twice is applied once (by its id), and the bundled broker takes about a
    second to give an idempotent producer its id (measured by ``chronolog bench upgrade``:
    0.5-1 s of a 0.6-1.3 s upgrade).  One client, which asks for the topics and sends: each
    new client connects first (an admin client beside it cost 1-11 ms more).  Made before
    the plan is worked out and printed, it connects meanwhile (in the background, about
    20 ms on the bundled broker) instead of after it."""

    def __init__(self, bootstrap: str, prefix: str, conf: dict[str, Any]) -> None:
        self.bootstrap, self.topic = bootstrap, TopicNames(prefix).facts
        self.producer = kafka_clients.producer({"bootstrap.servers": bootstrap, **conf, "linger.ms": 0})
        self.partitions: list[int] | None = None

    def look_up(self) -> list[int]:
        """The input topic's partitions (an error where it does not exist), asked once: before the
        request where the caller can (a metadata request for every topic, which grows with the
        broker's topics: 0.5 ms for 100 on the bundled broker, 2 ms for 500)."""
        if self.partitions is None:
            meta = kafka_clients.topic_metadata(self.producer, self.topic, timeout=15)
            if meta is None:
                raise ChronologError(f"error: topic {self.topic} does not exist on {self.bootstrap} "
                                     "(no fleet runs there)")
            self.partitions = sorted(meta.partitions)
        return self.partitions

    def send(self, request: UpgradeRequest) -> None:
        value = request.encode()
        for p in self.look_up():
            self.producer.produce(self.topic, value, partition=p)
        if self.producer.flush(30):
            raise ChronologError(f"error: the upgrade request was not delivered to {self.topic} on {self.bootstrap}")


def send_request(bootstrap: str, prefix: str, request: UpgradeRequest, conf: dict[str, Any]) -> None:
    """The request on every partition of the input topic (``RequestSender``)."""
    RequestSender(bootstrap, prefix, conf).send(request)


class OutcomeReader:
    """The control topic, read from its start for the services' outcomes of a request.  Made
    before the request is sent (``chronolog upgrade`` makes it with its ``RequestSender``,
    before the plan): its client connects, and librdkafka fetches the topic's earlier records
    in the background, while the plan is worked out and printed, so that the outcomes are read
    as soon as the services write them.  Made after the send, as before, the command's last
    outcome came a new client's connection, a metadata round trip and a read of the topic
    from its start (a record per epoch of output's) after the service wrote it
    (docs/benchmarks.md#program-upgrades, round 11)."""

    def __init__(self, bootstrap: str, prefix: str, conf: dict[str, Any]) -> None:
        self.consumer: Any = from_the_start(bootstrap, TopicNames(prefix).control, conf, "chronolog-upgrade")

    def wait(self, request: UpgradeRequest, timeout: float, services: int = 1) -> dict[str, Any]:
        """The outcome of ``request`` once ``services`` services applied it (one per partition of
        a partitioned chain fleet, one per reasoner of a LARS fleet: its version and T, and under
        ``outcomes`` each service's), or the first refusal (the reason); a ``ChronologError``
        after ``timeout`` seconds.  The reader is closed after."""
        deadline = time.monotonic() + timeout
        applied: dict[str, dict[str, Any]] = {}
        mine = request.key + b"."
        consumer = self.consumer
        assert consumer is not None, "a reader waits for one request"
        try:
            while time.monotonic() < deadline:
                msg = consumer.poll(0.2)
                if msg is None or msg.error() or (msg.key() != request.key and not (msg.key() or b"").startswith(mine)):
                    continue
                got = dict(orjson.loads(msg.value()))
                if "refused" in got:
                    return got
                applied[str(got.get("service"))] = got
                if len(applied) >= services:
                    return {**got, "outcomes": list(applied.values())}
        finally:
            self.close()
        raise ChronologError(f"error: {len(applied)} of {services} service(s) applied the upgrade within "
                             f"{timeout:.0f} s (request {request.id} is on the input topic: a service that starts "
                             "later applies it)")

    def close(self) -> None:
        if self.consumer is not None:
            self.consumer.close()
            self.consumer = None
