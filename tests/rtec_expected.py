"""RTEC's own answers for its example applications, and the meaning of an RTEC answer stream.

The fixtures under ``tests/data/rtec/<app>/`` were computed by RTEC itself (see the README
there); tests compare a chronolog answer stream with them by meaning, never by lines:
``rtec_meaning(lines, app) == load_expected(app)``.

Meaning (``../shared/data/rtec/README.md``): after applying diffs, every interval is the set of
clock-grid points it contains, restricted to the app's output entities (fluent-value pairs named
in ``grounding/1``); ``t`` lines (output events) and helper values are ignored.
"""

from __future__ import annotations

import json
from collections.abc import Iterable
from functools import cache
from pathlib import Path

from meaning import GridRun, grid_meaning

DATA = Path(__file__).resolve().parent / "data" / "rtec"

TICK = {"caviar": 40, "ctm": 1, "voting": 1}

# Output entities, from the grounding/1 declarations of each event description:
# (functor, arity of the fluent, value).  A value other than "true" is the answer's last argument.
OUTPUT_ENTITIES: dict[str, frozenset[tuple[str, int, str]]] = {
    "caviar": frozenset(
        [(f, 1, "true") for f in ("person", "activeOrInactivePerson")]
        + [(f, 2, "true") for f in ("close_24", "close_25", "close_30", "close_34", "closeSymmetric_30",
                                     "greeting1", "greeting2", "leaving_object", "meeting", "moving",
                                     "fighting")]
        + [("close_34", 2, "false")]
    ),
    "ctm": frozenset(
        [("punctuality", 2, v) for v in ("punctual", "non_punctual")]
        + [("driving_style", 2, v) for v in ("unsafe", "uncomfortable")]
        + [("driving_quality", 2, v) for v in ("high", "medium", "low")]
        + [(f, 2, "reducing") for f in ("passenger_comfort", "driver_comfort", "passenger_satisfaction")]
        + [("passenger_density", 2, "high"), ("noise_level", 2, "high")]
        + [("internal_temperature", 2, v) for v in ("very_warm", "very_cold")]
    ),
    "voting": frozenset(
        [("status", 1, v) for v in ("null", "proposed", "voting", "voted")]
        + [("voted", 2, v) for v in ("aye", "nay")]
        + [("outcome", 1, v) for v in ("carried", "not_carried")]
        + [(f, 1, v) for f in ("auxPerCloseBallot", "per", "obl", "sanctioned") for v in ("true", "false")]
    ),
}

# Time-prefix cuts of each stream (events with time <= T): name -> T.  See tests/data/rtec/README.md.
CUTS = {
    "caviar": {"cut10": 100_000, "cut1": 10_000},
    "ctm": {"cut10": 5_000, "cut1": 500},
    "voting": {"cut10": 9, "cut1": 0},
}


def parse_lines(lines: Iterable[bytes | str | dict]) -> list[dict]:
    """Answer lines (JSON text, bytes or already decoded), blank lines skipped."""
    out = []
    for line in lines:
        if isinstance(line, dict):
            out.append(line)
        elif line.strip():
            out.append(json.loads(line))
    return out


def is_output_entity(rec: dict, app: str) -> bool:
    """Whether an answer line names one of the app's output fluent-value pairs."""
    args = rec.get("args", [])
    for pred, arity, value in OUTPUT_ENTITIES[app]:
        if rec["pred"] != pred:
            continue
        if value == "true" and len(args) == arity:
            return True
        if value != "true" and len(args) == arity + 1 and args[-1] == value:
            return True
    return False


def rtec_meaning(lines: Iterable[bytes | str | dict], app: str) -> set[GridRun]:
    """The meaning of an answer stream for ``app``: maximal grid runs of its output entities."""
    kept = [r for r in parse_lines(lines) if "interval" in r and is_output_entity(r, app)]
    return grid_meaning(kept, TICK[app])


def expected_path(app: str, cut: str | None = None) -> Path:
    """The fixture file: ``expected.jsonl`` for the whole stream, ``expected-<cut>.jsonl`` for a cut."""
    return DATA / app / ("expected.jsonl" if cut is None else f"expected-{cut}.jsonl")


@cache
def load_expected(app: str, cut: str | None = None) -> frozenset[GridRun]:
    """RTEC's answer for ``app`` (whole stream or a named cut), as its meaning (read once)."""
    with expected_path(app, cut).open(encoding="utf-8") as f:
        return frozenset(rtec_meaning(f, app))


def differing_instances(got: set[GridRun], want: set[GridRun]) -> set[tuple[str, tuple]]:
    """The fluent-value instances (pred, args) whose grid points differ between two meanings."""
    return {run[:2] for run in got ^ want}
