"""``--retention``: how far behind the latest time point an event may arrive
and still be applied (N time points, or ``inf``: every late event, the whole
input log kept).  Parsed here once for every command that takes it (``run``,
``up``, ``service``, the benches) and for the runtimes that apply it."""

from __future__ import annotations

from math import inf


def retention_value(text: str) -> int | float:
    """``--retention``'s value: N time points (an integer ≥ 0), or ``inf``
    (every late event is applied and the whole input log is kept: the
    default)."""
    if text.strip().lower() == "inf":
        return inf
    value = int(text)
    if value < 0:
        raise ValueError(text)
    return value


def lars_retention(value: int | float | None) -> int | None:
    """The LARS runtime's retention: None (unlimited) for ``inf``."""
    return None if value is None or value == inf else int(value)


retention_value.__name__ = "retention"  # argparse's message: "invalid retention value: 'x'"
