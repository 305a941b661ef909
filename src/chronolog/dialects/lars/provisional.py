"""An idle flush's provisional evaluation of a program with choices, and taking it back.

A fleet stage closes the latest time point L when its input has been quiet for a
while (``--idle-flush``), so that the answers get out; ``chronolog run`` closes a
point only when a later time arrives.  For a program with choices (the TMS,
docs/tms.md) that matters: an event at L arriving after the flush is, in ``run``,
input of L's first evaluation, and a late event before L is part of the one
correction ``run`` applies before evaluating L; the TMS chooses at L with them.

So a reasoner of such a program (``Reasoner.idles``) evaluates an idle-closed L as
``run`` would at the end of its input (``Reasoner.finish``), after keeping the state
it had just before: what ``run`` holds while L is the latest time (``Firm``).  If a
later time closes L first, that evaluation is ``run``'s and the kept state is
dropped.  If an event for L or before it comes first, the reasoner goes back to the
kept state at its next ``advance`` — the answers written since are taken back (the
answer lines negated, ``AnswerWriter.take_back``; a stratum's sender re-sends what
differs by itself) — and goes on as ``run`` does.  The kept state is data in the
reasoner's checkpoint (``data``/``from_data``): a restart in between takes back the
same answers, once.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from chronolog.dialects.lars.engine.core import Fact
from chronolog.dialects.lars.engine.tms_labels import Kept
from chronolog.dialects.lars.facts import facts_data, facts_from


@dataclass
class Firm:
    """A reasoner's state before the provisional evaluation of an idle-closed time point.

    The engine is not kept: going back rebuilds it as a restart does (the log's warm-up span
    replayed following the choices as of then), which costs about what the correction that
    comes with it costs; copying it at every idle flush cost more, growing with the stream."""

    point: int  # the idle-closed time point evaluated provisionally
    state: dict[str, Any]  # the reasoner's scalars, corrections pending and held events (``Reasoner.export_state``'s)
    log: dict[int, list[Fact] | None]  # the log entries the evaluation may change, as they were (None: absent)
    labels: dict[str, Any] | Kept | None  # the TMS's choices: as data (from a checkpoint), or kept as they were
    sink: Any  # what the answer sink needs to take its lines back (``AnswerWriter.recorded``)
    stale: bool = False  # an event for the point or before it came since: take it back at the next advance

    def data(self) -> dict[str, Any]:
        """As JSON-able data, for the reasoner's checkpoint."""
        return {"point": self.point, "state": self.state, "stale": self.stale, "sink": self.sink,
                "log": [[t, None if f is None else facts_data(f)] for t, f in self.log.items()],
                "labels": self.labels.data() if isinstance(self.labels, Kept) else self.labels}

    @staticmethod
    def from_data(data: dict[str, Any]) -> Firm:
        return Firm(int(data["point"]), dict(data["state"]),
                    {int(t): None if f is None else facts_from(f) for t, f in data["log"]},
                    data.get("labels"), data.get("sink"), bool(data["stale"]))
