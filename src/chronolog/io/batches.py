"""The batch path of the JSONL reader: blocks of lines decoded at once into ``FactBatch``es.

The embedded runtime's input is mostly runs of facts at one time point, and
deciding each line in Python (a dict per line, an ``Event`` per fact) cost
more than evaluating it.  ``decode_block`` decodes a block of lines joined
into one JSON array with msgspec (typed decoding and validation in C) and
groups it into one ``FactBatch`` per run of facts at one time point, in the
engine's ``(pred key, args)`` form.  Its typed schema accepts a subset of
what the per-line checks (``io/event_checks.py``) accept; for a block with
anything else it answers None, and ``EventReader`` (``io/formats.py``) reads
that block again line by line, so errors and positions are those of the
per-line path.  ``flatten`` turns batches back into events.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Iterator
from itertools import groupby
from operator import attrgetter
from typing import TYPE_CHECKING, Annotated, Literal

from chronolog.contract.events import FACT_EVENT, OPS
from chronolog.core.events import Event, OnePredicate
from chronolog.core.records import record
from chronolog.core.source import Loc

if TYPE_CHECKING:
    from fractions import Fraction


@record
class FactBatch:
    """Consecutive input events at one time point: asserted facts (``facts``,
    the engine's ``(pred key, args)`` in arrival order) or, with no facts, one
    time advance.  ``line`` is the line number of the first event, ``events``
    how many input events the batch stands for."""

    t: int
    facts: list | OnePredicate
    file: str
    line: int
    events: int

    def locs(self) -> list[Loc]:
        """The location of each fact's line (of the time advance's, without facts)."""
        return [Loc(self.file, self.line + i, 1) for i in range(max(1, len(self.facts)))]

    def unpacked(self) -> Iterator[Event]:
        if not self.facts:
            yield Event(self.t, loc=Loc(self.file, self.line, 1))
        for ((pred, _), args), loc in zip(self.facts, self.locs()):
            yield Event(self.t, pred, args, False, loc)


def _block_decoder() -> tuple[Callable, tuple[type[Exception], ...]]:
    """The batch path's decoder and the errors it raises.  msgspec is imported
    on first use, not with this module: ``chronolog run`` forks its read-ahead
    child (io/readahead.py) right after importing the reader, and the child
    and the parent (whose answer writer needs msgspec too) then load it in
    parallel on the two cores instead of the fork waiting for it."""
    global _decoder
    if _decoder is None:
        import msgspec  # noqa: PLC0415 (start-up: see the docstring)

        # The typed schema of the batch path: a strict subset of what event_checks accepts.
        Int64 = Annotated[int, msgspec.Meta(ge=-(2**63), le=2**63 - 1)]
        Pred = Annotated[str, msgspec.Meta(min_length=1)]

        kinds = {
            "time": Int64,
            "pred": Pred | None,
            "args": tuple[str | Int64, ...],
            "op": Literal[OPS] | None,
        }
        line = msgspec.defstruct(
            "_Line",
            [(name, kinds[kind]) if default is ... else (name, kinds[kind], default)
             for name, (kind, default, _) in FACT_EVENT.items()],
            forbid_unknown_fields=True, gc=False, module=__name__,
        )

        # A block is decoded as one array: "[" + ",".join(lines) + "]".  It parses only if
        # every line holds values and no line is blank, and with one element per line
        # each line holds exactly one value, as the per-line path requires.
        _decoder = (
            msgspec.json.Decoder(list[line]).decode,  # type: ignore[valid-type]  # a struct made at run time
            (msgspec.DecodeError, msgspec.ValidationError, UnicodeError),
        )
    return _decoder


_decoder: tuple[Callable, tuple[type[Exception], ...]] | None = None
_get_t = attrgetter("t")
_get_pred = attrgetter("pred")
_get_args = attrgetter("args")
_get_op = attrgetter("op")
_NONE = {None}


def decode_block(array: str | bytes, n: int, filename: str, first: int) -> list[FactBatch | Event] | None:
    """The items of a block of ``n`` lines joined into one JSON array, or None
    if the block needs the per-line path (any line the typed schema does not
    accept as is)."""
    decode, errors = _decoder or _block_decoder()
    try:
        lines = decode(array)
    except errors:
        return None
    if len(lines) != n:  # a line with several values
        return None
    items: list[FactBatch | Event] = []
    number = first
    # No "op" key anywhere (nor a key spelled with escapes): no check per run.
    check_ops = not isinstance(array, bytes) or b'"op"' in array or b"\\u" in array
    for t, group in groupby(lines, _get_t):
        run = list(group)
        preds = set(map(_get_pred, run))
        if None not in preds and (not check_ops or set(map(_get_op, run)) == _NONE):
            # The engine's facts ((pred, arity), args), built without Python code per fact.
            args = list(map(_get_args, run))
            facts: list | OnePredicate
            if len(preds) == 1 and len(arities := set(map(len, args))) == 1:
                facts = OnePredicate((preds.pop(), arities.pop()), args)
            else:
                facts = list(zip(zip(map(_get_pred, run), map(len, args)), args))
            items.append(FactBatch(t, facts, filename, number, len(run)))
            number += len(run)
            continue
        batch: FactBatch | None = None
        for e in run:
            if e.pred is None:
                if e.args or e.op == "retract":
                    return None  # an error: reported by the per-line path
                items.append(FactBatch(t, [], filename, number, 1))
                batch = None
            elif e.op == "retract":
                items.append(Event(t, e.pred, e.args, True, Loc(filename, number, 1)))
                batch = None
            else:
                if batch is None:
                    batch = FactBatch(t, [], filename, number, 0)
                    items.append(batch)
                batch.facts.append(((e.pred, len(e.args)), e.args))  # type: ignore[union-attr]  # a list, made above
                batch.events += 1
            number += 1
    return items


def flatten(items: Iterable[FactBatch | Event]) -> Iterator[Event]:
    """The events of batches (``loc`` on delayed ones, as the per-line reader sets it)."""
    latest: int | Fraction | None = None
    for item in items:
        if isinstance(item, FactBatch):
            t = item.t
            delayed = latest is not None and t < latest
            if not delayed:
                latest = t
            if not item.facts:
                yield Event(t, loc=Loc(item.file, item.line, 1) if delayed else None)
            for i, ((pred, _), args) in enumerate(item.facts):
                yield Event(t, pred, args, False, Loc(item.file, item.line + i, 1) if delayed else None)
        else:
            if latest is None or item.t >= latest:
                latest = item.t
            yield item
