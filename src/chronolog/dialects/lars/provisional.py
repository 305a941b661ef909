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

import pickle
from dataclasses import dataclass
from typing import Any

from chronolog.dialects.lars.engine.core import Engine, Fact
from chronolog.dialects.lars.facts import facts_data, facts_from
from chronolog.dialects.lars.plan import Plan, plan_by_reference


@dataclass
class Firm:
    """A reasoner's state before the provisional evaluation of an idle-closed time point."""

    point: int  # the idle-closed time point evaluated provisionally
    state: dict[str, Any]  # the reasoner's scalars, corrections pending and held events (``Reasoner.export_state``'s)
    log: dict[int, list[Fact] | None]  # the log entries the evaluation may change, as they were (None: absent)
    engine: Engine | None  # a copy of the engine (None after a restore: rebuilt from ``labels``)
    labels: dict[str, Any] | None  # the engine's choices as data (TMS), read from a checkpoint
    sink: Any  # what the answer sink needs to take its lines back (``AnswerWriter.recorded``)
    stale: bool = False  # an event for the point or before it came since: take it back at the next advance

    def data(self) -> dict[str, Any]:
        """As JSON-able data, for the reasoner's checkpoint."""
        labels = self.labels
        if labels is None and self.engine is not None and hasattr(self.engine, "export_labels"):
            labels = self.engine.export_labels()
        return {"point": self.point, "state": self.state, "stale": self.stale, "sink": self.sink,
                "log": [[t, None if f is None else facts_data(f)] for t, f in self.log.items()], "labels": labels}

    @staticmethod
    def from_data(data: dict[str, Any]) -> Firm:
        return Firm(int(data["point"]), dict(data["state"]),
                    {int(t): None if f is None else facts_from(f) for t, f in data["log"]}, None,
                    data.get("labels"), data.get("sink"), bool(data["stale"]))


def engine_copy(engine: Engine, plan: Plan) -> Engine:
    """An independent copy of ``engine`` (as replays clone one: the plan by reference)."""
    with plan_by_reference(plan, "provisional"):
        return pickle.loads(pickle.dumps(engine, protocol=pickle.HIGHEST_PROTOCOL))  # type: ignore[no-any-return]
