"""Which program a stage's state was made by, and whether a service may run it with another.

A fleet service's state (RocksDB, its changelog) holds what its program derived.  Restarted
with other rules — a Helm ConfigMap changed without ``chronolog upgrade``, ``chronolog up`` of
an edited file over an old ``--state-dir`` — it would import that state into the new
program's evaluator and go on as if the new program had made it: answers of neither program.
So every stage whose state depends on the rules records the program version it was started
with (its *base*), and the versions it upgraded to are in its ``upgrades``; a service
configured with a version that is none of them refuses to start
(``runtime/fleet/restore.py``).  A pod that restarts with the old program after an upgrade,
or with the new one after ``helm upgrade``, runs on: both are versions of its state.
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any


def known_versions(base: str | None, upgrades: Iterable[dict[str, Any]]) -> list[str]:
    """The program versions a state was made by: its base, then each it upgraded to."""
    return [] if base is None else [base, *(str(u["version"]) for u in upgrades)]


def refusal(base: str | None, upgrades: Iterable[dict[str, Any]], configured: str | None) -> str | None:
    """Why a state made by ``base`` (upgraded as ``upgrades`` say) cannot run with the program
    version ``configured`` (None: it can — the state predates the record, or the service was
    given no version)."""
    known = known_versions(base, upgrades)
    if not known or configured is None or configured in known:
        return None
    made = f"program version {known[0]}" + (f", upgraded to {', '.join(known[1:])}" if len(known) > 1 else "")
    return (f"its state was made by {made}, and it is configured with program version {configured}: to change "
            f"the program of a running fleet, start it with the program it runs ({known[-1]}) and apply the new "
            "one with `chronolog upgrade NEW_FILE...` (docs/fleet/upgrade.md); to start the new program from "
            "nothing, give it an empty --state-dir and a new topic --prefix")
