"""LARS as an ``Evaluator`` (``chronolog.evaluator``): the Reasoner and its answer writer.

The runtimes that host any dialect (the fleet's chain service) drive this
class through the interface every evaluator shares: push events, advance to
a time, take the answer changes, export and import the state as explicit
data.  LARS keeps its own fast path inside: the answer writer renders lines
directly (``advance_lines``); ``advance`` reads them back as ``AnswerChange``
values for hosts that want changes.  ``chronolog run`` does not go through
this class (``run_embedded`` drives the Reasoner itself).
"""

from __future__ import annotations

import io
from typing import Any, Callable, ClassVar

import msgspec

from chronolog.engine.plan import Plan
from chronolog.evaluator import STATE_FORMAT, AnswerChange, Span, Time, check_state_header
from chronolog.events import Event
from chronolog.runtime.answers import AnswerWriter
from chronolog.runtime.reasoner import Reasoner
from chronolog.state import codec as c


class LineBuffer:
    """An answer writer's output kept as UTF-8 bytes (the writer writes whole
    time points to ``buffer`` directly): lines leave without a text round trip."""

    encoding = "utf-8"

    def __init__(self) -> None:
        self.buffer = io.BytesIO()

    def write(self, text: str) -> None:
        self.buffer.write(text.encode())

    def flush(self) -> None:
        pass

    def take(self) -> list[bytes]:
        data = self.buffer.getvalue()
        self.buffer.seek(0)
        self.buffer.truncate()
        return data.splitlines()


def writer_state(w: AnswerWriter) -> dict:
    recent = [[T, [[p, list(tuples)] for p, tuples in by_pred.items()]] for T, by_pred in w.recent.items()]
    return {"recent": recent, "lines": w.lines, "corrections": w.corrections}


def load_writer_state(w: AnswerWriter, data: Any) -> None:
    c.obj(data, "recent", "lines", "corrections")
    w.recent = c.pairs(data["recent"], c.integer, _published)
    w.lines, w.corrections = c.integer(data["lines"]), c.integer(data["corrections"])


def _published(v: object) -> dict:
    """The writer's atoms published at one time: pred -> set of ``args + (T,)``."""
    return c.pairs(v, c.pred_key, lambda rows: {c.args(a) for a in c.array(rows)})


def answer_change(line: bytes) -> AnswerChange:
    """An answer line (CONTRACT §3) as the change it stands for."""
    rec = msgspec.json.decode(line)
    when = rec.get("interval")
    if when is None:
        span = Span.point(rec["t"])
    else:
        lo, hi = when[1:-1].split(",")
        span = Span(int(lo), None if hi == "inf" else int(hi), when[0] == "[", when[-1] == "]")
    return rec["pred"], c.args(rec["args"]), span, rec.get("diff", 1)


class LarsEvaluator:
    """A LARS program (stratified: the incremental engine; else clingo per time point)."""

    dialect: ClassVar[str] = "lars"

    def __init__(self, plan: Plan, answers: str = "changelog", warn: Callable[[str], None] = lambda m: None,
                 retention: int | None = None) -> None:
        self.out = LineBuffer()
        self.writer = AnswerWriter(self.out, plan, answers)  # type: ignore[arg-type]
        self.reasoner = Reasoner(plan, self.writer, warn=warn, auto_advance=False, retention=retention)

    def push(self, event: Event) -> None:
        self.reasoner.push(event)

    def push_batch(self, t: int, facts: list[tuple[str, tuple, bool]]) -> None:
        """All events of one time point (``Reasoner.push_batch``): the fleet's grounded batches."""
        self.reasoner.push_batch(t, facts)

    def advance_lines(self, until: int) -> list[bytes]:
        """``advance`` as the answer lines themselves (the hot path of hosts that publish lines)."""
        self.reasoner.advance(until)
        return self.out.take()

    def advance(self, until: Time) -> list[AnswerChange]:
        return [answer_change(line) for line in self.advance_lines(int(until))]

    def finish(self, until: Time | None = None) -> list[AnswerChange]:
        self.reasoner.finish(None if until is None else int(until))
        return [answer_change(line) for line in self.out.take()]

    @property
    def delayed(self) -> int:
        return self.reasoner.delayed

    @property
    def unmatched_retractions(self) -> int:
        return self.reasoner.unmatched_retractions

    def export_state(self) -> dict[str, Any]:
        r = self.reasoner
        state = {
            "format": STATE_FORMAT, "dialect": self.dialect, "reasoner": r.export_state(),
            "log": [[t, c.encode_facts(f)] for t, f in r.log.items()],
            "imports": [[t, c.encode_imported(i)] for t, i in r.imports.items()],
            "writer": writer_state(self.writer),
        }
        return msgspec.json.decode(c.dumps(state))  # JSON values only (tuples and sets as lists)

    def import_state(self, data: dict[str, Any]) -> None:
        check_state_header(data, self.dialect)
        c.obj(data, "reasoner", "log", "imports", "writer")
        load_writer_state(self.writer, data["writer"])
        log = c.pairs(data["log"], c.integer, c.decode_facts)
        imports = c.pairs(data["imports"], c.integer, c.decode_imported)
        self.reasoner.import_state(data["reasoner"], log, imports)

