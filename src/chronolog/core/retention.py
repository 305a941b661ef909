"""``--retention``: how far behind the latest time point an event may arrive
and still be applied (N time points, or ``inf``: every late event, the whole
input log kept).  Parsed here once for every command that takes it (``run``,
``up``, ``service``, the benches) and for the runtimes that apply it; and the
times of the command line (``run --until``, ``backfill --from/--to``)."""

from __future__ import annotations

from math import inf
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from fractions import Fraction


def retention_value(text: str) -> int | float | Fraction:
    """``--retention``'s value: N time points (≥ 0: an integer, or for DatalogMTL a rational
    such as 5/2, the reach ``chronolog check`` prints; ``registry.refusal`` refuses a fraction
    for the dialects with integer time), or ``inf`` (every late event is applied and the
    whole input log is kept: the default)."""
    if text.strip().lower() == "inf":
        return inf
    value = time_value(text)
    if value < 0:
        raise ValueError(text)
    return value


def lars_retention(value: int | float | None) -> int | None:
    """The LARS runtime's retention: None (unlimited) for ``inf``."""
    return None if value is None or value == inf else int(value)


retention_value.__name__ = "retention"  # argparse's message: "invalid retention value: 'x'"


def time_value(text: str) -> int | Fraction:
    """A time on the command line: an integer, or a rational (``7/2``, ``3.5``) for DatalogMTL
    (whose time is rational; the dialects with integer time refuse a fraction)."""
    from fractions import Fraction  # noqa: PLC0415 (start-up: only when a time is given)

    try:
        value = Fraction(text)
    except (ValueError, ZeroDivisionError):
        raise ValueError(f"{text!r} is not a time (an integer, or a rational such as 7/2)") from None
    return value.numerator if value.denominator == 1 else value


time_value.__name__ = "time"  # argparse's message: "invalid time value: 'x'"
