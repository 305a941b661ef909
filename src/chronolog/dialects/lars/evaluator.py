"""LARS behind the dialect-neutral ``Evaluator`` interface (chronolog.evaluator).

The LARS runtimes keep their tuned path (``Reasoner`` + ``AnswerWriter``
rendering whole time points); this adapter puts the same two behind the
interface every dialect implements, so code written for any evaluator —
``run_evaluator``, evaluator-hosting stages, tests comparing dialects —
drives LARS unchanged: answers come out as ``AnswerChange`` values, and the
state is explicit data (the log, the imports, the counters and the writer's
published timed atoms; the engine is rebuilt by replay on import).
"""

from __future__ import annotations

from typing import Any, Callable, ClassVar

import msgspec

from chronolog.dialects.lars.plan import Plan
from chronolog.evaluator import AnswerChange, Span, Time, check_state_header
from chronolog.core.events import Event
from chronolog.dialects.lars.answers import AnswerWriter
from chronolog.dialects.lars.reasoner import Reasoner
from chronolog.state.codec import reading, versioned
from chronolog.state.facts import facts_data, facts_from, imported_data, imported_from


def change_of(line: dict) -> AnswerChange:
    """An answer line (CONTRACT §3, LARS: integer times) as an ``AnswerChange``."""
    args = tuple(line["args"])
    diff = line.get("diff", 1)
    if "t" in line:
        return line["pred"], args, Span.point(line["t"]), diff
    lo_text, hi_text = line["interval"][1:-1].split(",")
    if hi_text == "inf":
        return line["pred"], args, Span(int(lo_text), None), diff
    return line["pred"], args, Span(int(lo_text), int(hi_text), True, True), diff


class _Null:
    def write(self, text: str) -> int:
        return len(text)

    def flush(self) -> None:
        pass


class _ChangeWriter(AnswerWriter):
    """The answer writer's decisions (what opens, closes, corrects) as changes, not text."""

    def __init__(self, plan: Plan) -> None:
        super().__init__(_Null(), plan, "changelog")  # type: ignore[arg-type]
        self.changes: list[AnswerChange] = []
        self._decode = msgspec.json.Decoder().decode

    def _emit(self, data: bytes, lines: int) -> None:
        for line in data.splitlines():
            got = self._decode(line)
            if "pred" in got:  # (a no_answer_set line carries no change)
                self.changes.append(change_of(got))
        self.lines += lines

    def _write(self, pred: Any, args: tuple, when: str | int, diff: int = 1) -> None:
        rec: dict = {"interval": when} if isinstance(when, str) else {"t": when}
        self.changes.append(change_of({**rec, "pred": pred[0], "args": list(args), "diff": diff}))
        self.lines += 1


class LarsEvaluator:
    """A LARS program (its ``Plan``) as an ``Evaluator``."""

    dialect: ClassVar[str] = "lars"

    def __init__(self, plan: Plan, *, retention: int | None = None,
                 warn: Callable[[str], None] = lambda m: None) -> None:
        self.plan = plan
        self.writer = _ChangeWriter(plan)
        self.reasoner = Reasoner(plan, self.writer, warn=warn, retention=retention, auto_advance=False)

    def push(self, event: Event) -> None:
        self.reasoner.push(event)

    def _taken(self) -> list[AnswerChange]:
        out, self.writer.changes = self.writer.changes, []
        return out

    def advance(self, until: Time) -> list[AnswerChange]:
        self.reasoner.advance(int(until))
        return self._taken()

    def finish(self, until: Time | None = None) -> list[AnswerChange]:
        self.reasoner.finish(None if until is None else int(until))
        return self._taken()

    # the run statistics run_evaluator reports
    @property
    def unmatched_retractions(self) -> int:
        return self.reasoner.unmatched_retractions

    @property
    def delayed(self) -> int:
        return self.reasoner.delayed

    @property
    def too_late(self) -> int:
        return self.reasoner.too_late

    @property
    def time_points(self) -> int:
        r = self.reasoner
        return 0 if r.t1 is None or r.evaluated is None else r.evaluated - r.t1 + 1

    def export_state(self) -> dict[str, Any]:
        r = self.reasoner
        return versioned({
            "dialect": self.dialect,
            "reasoner": r.export_state(),
            "log": [[t, facts_data(facts)] for t, facts in r.log.items()],
            "imports": [[t, imported_data(i)] for t, i in r.imports.items()],
            "writer": self.writer.export_state(),
        })

    def import_state(self, data: dict[str, Any]) -> None:
        check_state_header(data, self.dialect)
        r = self.reasoner
        with reading("LARS evaluator state"):
            for t, facts in data["log"]:
                dict.__setitem__(r.log, int(t), facts_from(facts))
            for t, imported in data["imports"]:
                dict.__setitem__(r.imports, int(t), imported_from(imported))
            self.writer.import_state(data["writer"])
            r.import_state(data["reasoner"])
