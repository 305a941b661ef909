"""The input event contract (CONTRACT §2) stated once, as plain data.

Two validators serve it: the pydantic model ``schemas.FactEvent`` (JSON
Schema for ``schemas/``, dead-letter validation in the fleet's ingest) and
the msgspec struct of the embedded reader's fast batch path
(``io/batches.py``).  Both are built from ``FACT_EVENT`` below, so a change
to the contract is made here and reaches both; ``tests/runtime/fleet/test_contracts.py``
checks that they accept and reject the same lines.  This module imports
nothing, so the run path pays nothing for it.
"""

from __future__ import annotations

OPS = ("retract", "assert")

# field -> (kind, default, description); kinds: "time" (an integer time point),
# "pred" (a non-empty string or absent), "args" (strings and integers), "op" (one of OPS or absent)
FACT_EVENT: dict[str, tuple[str, object, str]] = {
    "t": ("time", ..., "integer time point"),
    "pred": ("pred", None, "predicate; absent for a time advance"),
    "args": ("args", (), "constants: strings and integers"),
    "op": ("op", None, '"retract" withdraws an earlier event'),
}
FACT_EVENT_DOC = "One input event on ``chronolog.facts`` (CONTRACT §2): a fact, a retraction or a time advance."
