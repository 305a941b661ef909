"""The fleet's topic names and service roles, stated once (CONTRACT §4).

Every topic name comes from ``TopicNames``: a fixed set of roles under a
prefix (``chronolog`` unless ``--topic-prefix`` says otherwise).  An unknown
role is an ``AttributeError``, never a new topic name, so a typo cannot
create a topic that nothing reads.
"""

from __future__ import annotations

from dataclasses import dataclass

DEFAULT_PREFIX = "chronolog"

# The services of a fleet, by role: ``chronolog service ROLE``.  ``reasoner`` runs
# one stratum (``--stratum k``); ``chain`` runs ingest to answers in one process.
SERVICE_ROLES = ("ingest", "grounding", "reasoner", "output", "chain")


@dataclass(frozen=True, slots=True)
class TopicNames:
    """The topic names of one fleet, under ``prefix``."""

    prefix: str = DEFAULT_PREFIX

    @property
    def facts(self) -> str:
        """Input events (CONTRACT §2), written by users."""
        return f"{self.prefix}.facts"

    @property
    def answers(self) -> str:
        """Answer lines (CONTRACT §3)."""
        return f"{self.prefix}.answers"

    @property
    def dlq(self) -> str:
        """Dead letters: malformed input records with the reason."""
        return f"{self.prefix}.dlq"

    @property
    def late(self) -> str:
        """Events older than the retention, kept for a backfill."""
        return f"{self.prefix}.late"

    @property
    def ingested(self) -> str:
        return f"{self.prefix}.ingested"

    @property
    def grounded(self) -> str:
        return f"{self.prefix}.grounded"

    @property
    def control(self) -> str:
        """The output partitions' committed epochs (compacted)."""
        return f"{self.prefix}.control"

    def stratum(self, k: int) -> str:
        """Diffs of stratum k (1-based, as in ``chronolog service reasoner --stratum k``)."""
        return f"{self.prefix}.stratum.{k}"

    def changelog(self, service: str) -> str:
        """The changelog topic backing a service's state (``reasoner-2``, ``output``...)."""
        return f"{self.prefix}.{service}.changelog"
