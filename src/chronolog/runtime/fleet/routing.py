"""Where a service's records go.

A stage names the topic of each record it makes by its role (``Out.topic``:
ingested, grounded, stratum, control, ...), so it stays free of topic names and
of the service's place in the fleet; this turns a role into the topic and
partition for this service.  Both ways a service's records leave use it: a
relay's (``relay.py``) and a transaction's (``commit.py``).
"""

from __future__ import annotations

from chronolog.contract.topics import TopicNames
from chronolog.stages.interface import Out


class Routes:
    """The topics and partitions of one service instance's records."""

    __slots__ = ("names", "stratum", "own")

    def __init__(self, names: TopicNames, stratum: int | None, own: int) -> None:
        self.names = names
        self.stratum = stratum
        self.own = own  # the key partition the instance owns

    def topic(self, role: str) -> str:
        if role == "stratum":
            return self.names.stratum(self.stratum or 1)
        return getattr(self.names, role)

    def partition(self, out: Out) -> int:
        """Ingest routes by key; a stage's own stream stays on its partition; the
        other topics have one."""
        if out.topic == "ingested":
            return out.partition
        return self.own if out.topic in ("grounded", "stratum") else 0
