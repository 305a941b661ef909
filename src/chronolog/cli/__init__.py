"""The ``chronolog`` command line."""

from __future__ import annotations

# parsed once in core (the fleet's services apply the same retention)
from chronolog.core.retention import lars_retention, retention_value

__all__ = ["lars_retention", "retention_value"]
