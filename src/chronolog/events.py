"""Input events and answer atoms: the values that flow in and out of the engine.

An ``Event`` is one line of the input stream (CONTRACT §2): a fact at a time
point, a retraction of one, or a bare time advance.  Facts are keyed by
``(pred, args)`` where ``args`` is a tuple of constants (``str`` or ``int``),
the same values the IR uses, so no conversion happens in the hot path.
"""

from __future__ import annotations


from chronolog.ir import Loc, Value
from chronolog.records import record

Args = tuple[Value, ...]


@record
class Event:
    """One input event.

    ``pred`` is None for a time-advance marker (``{"t": 9}``).  ``retract``
    withdraws the latest earlier event with the same time, pred and args.
    ``loc`` names the input line, for messages about the event.
    """

    t: int
    pred: str | None = None
    args: Args = ()
    retract: bool = False
    loc: Loc | None = None

    @property
    def is_fact(self) -> bool:
        return self.pred is not None


def event_record(ev: Event) -> dict:
    """``ev`` as the JSON object of an input line (CONTRACT §2)."""
    rec: dict = {"t": ev.t}
    if ev.pred is not None:
        rec["pred"] = ev.pred
        rec["args"] = list(ev.args)
        if ev.retract:
            rec["op"] = "retract"
    return rec


def event_json(ev: Event) -> bytes:
    """One input line (CONTRACT §2) for ``ev``: what the fleet forwards and the
    benchmarks and tests publish."""
    import orjson

    return orjson.dumps(event_record(ev))
