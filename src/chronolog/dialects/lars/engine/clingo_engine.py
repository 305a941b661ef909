"""Per-time-point evaluation with clingo, for programs that are not stratified.

Ticker's "clingo" strategy: at every time point the program and the stream
facts its windows can reach are handed to clingo, and one answer set is
taken.  The interface is the incremental ``Engine``'s, so the reasoner, the
answer writer and the corrections work unchanged.
"""

from __future__ import annotations

import logging
from collections.abc import Iterable, Sequence

from chronolog.core.errors import ChronologError
from chronolog.dialects.lars.engine.asp import solve_time_point
from chronolog.dialects.lars.engine.content import Content, grouped
from chronolog.dialects.lars.engine.core import ANSWERS, Fact, StepResult
from chronolog.dialects.lars.plan import Plan, PredKey, trim_stream

log = logging.getLogger(__name__)


class ClingoEngine:
    def __init__(self, plan: Plan, t1: int) -> None:
        self.plan = plan
        self.t1 = t1
        self.t: int | None = None
        self._events: list[tuple[int, str, tuple]] = []
        self._answer: set[tuple[PredKey, tuple, int]] = set()

    def step(self, t: int, facts: Sequence[Fact], imported: object = None) -> StepResult:
        if self.t is not None and t != self.t + 1:
            raise ValueError(f"engine at {self.t} cannot step to {t}")
        self.t = t
        self._events.extend((t, key[0], args) for key, args in facts)
        self._trim(t)
        result = StepResult(t)
        try:
            found = solve_time_point(self.plan.program, self._events, self.t1, t, self.plan.model)
        except ValueError as exc:  # e.g. an integer outside clingo's 32-bit range
            raise ChronologError(f"error: cannot evaluate t={t} with clingo: {exc}") from None
        if found is None:
            log.debug("no answer set at t=%d", t)
            result.consistent = False
            result.reason = "clingo finds none"
            found = set()
        answer = {((p, len(a)), a, T) for p, a, T in found}
        timed = self.plan.timed
        before_now = {(p, a) for p, a, T in self._answer if p not in timed}
        after_now = {(p, a) for p, a, T in answer if p not in timed}
        result.now = [(p, a, 1) for p, a in after_now - before_now] + [(p, a, -1) for p, a in before_now - after_now]
        before_timed = {x for x in self._answer if x[0] in timed}
        after_timed = {x for x in answer if x[0] in timed}
        result.timed = [x + (1,) for x in after_timed - before_timed] + [x + (-1,) for x in before_timed - after_timed]
        self._answer = answer
        return result

    def _trim(self, t: int) -> None:
        trim_stream(self._events, t, self.plan)

    def holding_now(self) -> Iterable[tuple[PredKey, tuple]]:
        return [(p, a) for p, a, T in self._answer if p not in self.plan.timed]

    def exported(self) -> Content:
        """The answer as ``Imported.content`` for the fleet's output service."""
        out = []
        for p, a, T in self._answer:
            if p in self.plan.timed:
                out.append((p, a + (T,)))
                if p in self.plan.padded:
                    out.append(((ANSWERS, p), a + (T,)))
            else:
                out.append((p, a))
        return grouped(out)

    def derived_at(self) -> set[tuple[PredKey, tuple, int]]:
        return set(self._answer)
