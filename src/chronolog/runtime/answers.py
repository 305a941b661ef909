"""Answer lines (CONTRACT §3): the engine's changes written as JSON Lines.

Two forms with the same meaning:

* ``changelog`` (default): an atom of a now-predicate gets ``[t,inf)`` when
  it starts to hold and ``[t,inf)`` with ``diff: -1`` when it stops; atoms at
  explicit times (``@``-heads) get one ``t`` line when first derived.
* ``points``: one ``t`` line per atom and time point.

Corrections (delayed events, retractions) are written as ``diff`` lines,
consecutive points of one atom merged into one interval.
"""

from __future__ import annotations

from typing import IO, Iterable

import orjson

from chronolog.engine.core import Engine, StepResult
from chronolog.engine.plan import Plan, PredKey
from chronolog.runtime.reasoner import Change

Atom = tuple[PredKey, tuple]


def _order(item: tuple) -> tuple:
    """Deterministic output order across runs for mixed str/int arguments."""
    (pred, _), args = item[0], item[1]
    return (pred, tuple((type(a) is str, a) for a in args)) + tuple(item[2:])


class AnswerWriter:
    def __init__(self, out: IO[str], plan: Plan, mode: str = "changelog") -> None:
        if mode not in ("changelog", "points"):
            raise ValueError(f"unknown answer form {mode!r}")
        self.out = out
        self.plan = plan
        self.mode = mode
        self.open: set[Atom] = set()  # changelog: atoms with an unclosed [s,inf) line
        self.recent: dict[int, set[Atom]] = {}  # points published for timed predicates
        self.lines = 0
        self.corrections = 0

    # ------------------------------------------------------------ writing

    def _write(self, pred: PredKey, args: tuple, when: str | int, diff: int = 1) -> None:
        rec: dict = {"interval": when} if isinstance(when, str) else {"t": when}
        rec["pred"] = pred[0]
        rec["args"] = list(args)
        if diff != 1:
            rec["diff"] = diff
        self.out.write(orjson.dumps(rec).decode())
        self.out.write("\n")
        self.lines += 1

    # ------------------------------------------------------------ live steps

    def step(self, result: StepResult, engine: Engine) -> None:
        t = result.t
        lines: list[bytes] = []
        dumps = orjson.dumps
        if self.mode == "changelog":
            since = f"[{t},inf)"
            opened = self.open
            for pred, args, sign in result.now:
                if sign > 0:
                    opened.add((pred, args))
                    lines.append(dumps({"interval": since, "pred": pred[0], "args": args}))
                else:
                    opened.discard((pred, args))
                    lines.append(dumps({"interval": since, "pred": pred[0], "args": args, "diff": -1}))
        else:
            lines.extend(dumps({"t": t, "pred": p[0], "args": args}) for p, args in engine.holding_now())
        for pred, args, T, sign in result.timed:
            if sign > 0:
                seen = self.recent.setdefault(T, set())
                if (pred, args) not in seen:
                    seen.add((pred, args))
                    lines.append(dumps({"t": T, "pred": pred[0], "args": args}))
        if lines:
            lines.sort()  # the same order in every run, whatever the hash seed
            self.out.write(b"\n".join(lines).decode())
            self.out.write("\n")
            self.lines += len(lines)
        reach = self.plan.output_reach
        if reach is not None:
            for T in [T for T in self.recent if T < t - reach]:
                del self.recent[T]

    # ------------------------------------------------------------ corrections

    def correct(self, changes: list[Change], engine: Engine, upto: int) -> None:
        now = {a for a in engine.holding_now()}
        by_atom: dict[Atom, list[tuple[int, int]]] = {}
        for pred, args, T, sign in changes:
            by_atom.setdefault((pred, args), []).append((T, sign))
            if pred in self.plan.timed:
                if sign > 0:
                    self.recent.setdefault(T, set()).add((pred, args))
                else:
                    self.recent.get(T, set()).discard((pred, args))
        for atom in sorted(by_atom, key=_order):
            for lo, hi, sign in _runs(sorted(by_atom[atom])):
                # A run that reaches the present merges with the open changelog line.
                if self.mode == "changelog" and hi == upto and atom[0] not in self.plan.timed:
                    if sign > 0 and atom in now and atom not in self.open:
                        self.open.add(atom)
                        self._write(*atom, f"[{lo},inf)", 1)
                        self.corrections += 1
                        continue
                    if sign < 0 and atom not in now and atom in self.open:
                        self.open.discard(atom)
                        self._write(*atom, f"[{lo},inf)", -1)
                        self.corrections += 1
                        continue
                self._write(*atom, f"[{lo},{hi}]" if lo != hi else lo, sign)
                self.corrections += 1
        if self.mode == "changelog":  # the open lines must claim exactly what holds now
            for atom in sorted(now - self.open, key=_order):
                self.open.add(atom)
                self._write(*atom, f"[{upto + 1},inf)", 1)
            for atom in sorted(self.open - now, key=_order):
                self.open.discard(atom)
                self._write(*atom, f"[{upto + 1},inf)", -1)


def _runs(points: Iterable[tuple[int, int]]) -> list[tuple[int, int, int]]:
    """Merge sorted (time, sign) points into maximal runs of consecutive times with one sign."""
    runs: list[tuple[int, int, int]] = []
    for T, sign in points:
        if runs and runs[-1][2] == sign and runs[-1][1] == T - 1:
            runs[-1] = (runs[-1][0], T, sign)
        else:
            runs.append((T, T, sign))
    return runs
