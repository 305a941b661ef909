"""The TMS engine's labels as JSON data, for checkpoints and replays.

A TMS atom key (nested tuples of atoms, numbers and strings) as JSON with its
tuples tagged, and the history of labels (the atoms in after each
evaluation) as changes per time point and back.  Kept apart from
``tms_engine.py`` because it is a codec: what ``TmsEngine.export_labels``
writes and ``labels_history``/``import_labels`` read; change it only together
with the stored state's schema.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any


def labels_data(t: int | None, consistent: bool, model: Any, history: dict[int, frozenset]) -> dict[str, Any]:
    """The TMS's choices as JSON-able data: the atoms in (``model``) after the evaluation
    at ``t``, and the history of labels as changes per time point (what replays follow)."""
    changes = []
    before: frozenset = frozenset()
    for t_ in sorted(history):
        now = history[t_]
        if now is not before:
            changes.append([t_, [_key_data(k) for k in sorted(now - before, key=repr)],
                            [_key_data(k) for k in sorted(before - now, key=repr)]])
        before = now
    return {"t": t, "consistent": consistent, "in": sorted((_key_data(k) for k in model), key=repr),
            "history": changes, "first": min(history, default=None)}


@dataclass(frozen=True)
class Kept:
    """``labels_data``'s arguments kept as they are (``TmsEngine.kept_labels``)."""

    t: int | None
    consistent: bool
    model: frozenset
    history: dict[int, frozenset]

    def data(self) -> dict[str, Any]:
        return labels_data(self.t, self.consistent, self.model, self.history)


def labels_history(data: dict[str, Any]) -> dict[int, frozenset]:
    """``labels_data``'s history back as labels per time point."""
    out: dict[int, frozenset] = {}
    first, last = data.get("first"), data.get("t")
    if first is None or last is None:
        return out
    changes = {int(t): (added, removed) for t, added, removed in data.get("history", [])}
    labels: frozenset = frozenset()
    for t in range(int(first), int(last) + 1):
        if t in changes:
            added, removed = changes[t]
            labels = (labels - {_key_from(x) for x in removed}) | {_key_from(x) for x in added}
        out[t] = labels
    return out


def labels_in(data: dict[str, Any]) -> list:
    """The atom keys in after the evaluation ``labels_data`` describes."""
    return [_key_from(x) for x in data["in"]]


def _key_data(key: object) -> Any:
    """A TMS atom key as JSON data: tuples become lists tagged so they come back as tuples."""
    if type(key) is tuple:
        return {"tuple": [_key_data(x) for x in key]}
    return key


def _key_from(data: Any) -> Any:
    if isinstance(data, dict):
        if "tuple" in data:
            return tuple(_key_from(x) for x in data["tuple"])
        raise ValueError("unknown key encoding")
    return data
