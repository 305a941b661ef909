"""How ``chronolog up``'s supervisor learns that an upgrade changed the strata of a fleet of
one service per stratum (docs/fleet/upgrade.md).

Each reasoner that applies an upgrade says so on the control topic, with the new program's
strata (the predicates of each) and its files (``contract.models.UpgradeOutcome``).  The
supervisor reads that topic from its start — when it starts, so a restarted supervisor
learns every upgrade applied before, and then as it runs — and keeps the fleet's strata:
the most any version has (a removed stratum's reasoner stays, for the corrections before T)
and the predicates the output serves.  When an upgrade adds a stratum or an answer
predicate, it writes ``run/fleet-versions.json`` (``chronolog service --fleet-versions``),
creates the new topics, starts the added reasoners and restarts the output.  The control
topic is compacted by key, one key per upgrade and service: the outcomes stay.
"""

from __future__ import annotations

import json
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import orjson

from chronolog.runtime.fleet.topic_reader import from_the_start

Sources = tuple[tuple[str, str], ...]


@dataclass
class FleetStrata:
    """The strata a fleet runs and the program versions applied since it started."""

    strata: int  # reasoners per partition
    served: set[str]  # the predicates ("p/1") the output serves
    versions: list[Sources] = field(default_factory=list)
    seen: set[str] = field(default_factory=set)  # upgrade ids learnt

    def learn(self, outcome: dict[str, Any]) -> bool:
        """An outcome from the control topic: whether the fleet must grow (more strata, or
        predicates the output does not serve yet)."""
        rid, strata, sources = outcome.get("upgrade"), outcome.get("strata"), outcome.get("sources")
        if "refused" in outcome or rid is None or strata is None or sources is None or rid in self.seen:
            return False
        self.seen.add(str(rid))
        self.versions.append(tuple((str(n), str(t)) for n, t in sources))
        preds = {str(p) for stratum in strata for p in stratum}
        if len(strata) <= self.strata and preds <= self.served:
            return False
        self.strata = max(self.strata, len(strata))
        self.served |= preds
        return True

    def write(self, path: Path) -> None:
        """``chronolog service --fleet-versions``'s file, replaced whole."""
        tmp = path.with_suffix(".tmp")
        tmp.write_text(json.dumps({"strata": self.strata, "versions": [[list(f) for f in v] for v in self.versions]}))
        tmp.replace(path)


class ControlWatch:
    """The applied upgrades' outcomes on the control topic, read from its start."""

    def __init__(self, bootstrap: str, topic: str, conf: dict[str, Any]) -> None:
        self.consumer = from_the_start(bootstrap, topic, conf, "chronolog-supervisor")

    def poll(self, wait: float = 0.0, idle: float | None = None) -> list[dict[str, Any]]:
        """The outcomes that came: what is there now (``idle`` None), or everything up to
        where nothing came for ``idle`` seconds (the topic's end, read at start)."""
        out: list[dict[str, Any]] = []
        last = time.monotonic()
        while True:
            msg = self.consumer.poll(wait if idle is None else 0.1)
            if msg is None or msg.error():
                if idle is None or time.monotonic() - last > idle:
                    return out
                continue
            last = time.monotonic()
            key, value = msg.key() or b"", msg.value()
            if key.startswith(b"upgrade-") and value:
                try:
                    got = orjson.loads(value)
                except orjson.JSONDecodeError:
                    continue
                if isinstance(got, dict) and "strata" in got:
                    out.append(got)

    def close(self) -> None:
        self.consumer.close()
