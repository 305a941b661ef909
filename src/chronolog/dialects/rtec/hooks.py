"""What the registry's RTEC row calls (``dialects/registry.py``): parsing, the evaluators
(windowed or not), the readers and what ``check`` prints.  The registry loads this module
when an RTEC program is first used."""

from __future__ import annotations

from collections.abc import Callable, Iterator
from typing import IO, Any

from chronolog.core.errors import ChronologError
from chronolog.core.events import Event
from chronolog.dialects.rtec import changes
from chronolog.dialects.rtec.analysis import holds_before_its_input
from chronolog.dialects.rtec.evaluator import Hierarchy, RtecEvaluator
from chronolog.dialects.rtec.parser import finish_program, parse_rtec
from chronolog.dialects.rtec.partition import describe_key
from chronolog.dialects.rtec.reader import CsvRows, read_rtec_blocks, read_rtec_events
from chronolog.dialects.rtec.windowed import WindowedRtecEvaluator


def _finite(retention: Any) -> Any:
    """``--retention``'s value for an evaluator: ``inf`` is no retention (None)."""
    return None if retention is None or retention == float("inf") else retention


def rtec_parse(files: list[tuple[str, str]]) -> Any:
    program = None
    for name, text in files:
        program = parse_rtec(text, name, program)
    assert program is not None
    return finish_program(program)


def rtec_evaluator(program: Any, options: Any, warn: Callable[[str], None]) -> Any:
    retention = _finite(options.retention)
    if options.window is not None:
        if retention is not None:
            raise ChronologError("error: --window and --retention exclude each other (the window is how late an "
                                 "event may be)")
        return rtec_windowed(program, options.window, options.step, warn)
    return RtecEvaluator(program, options.step, warn=warn, retention=retention)


def rtec_windowed(program: Any, window: int, step: int | None, warn: Callable[[str], None]) -> Any:
    return WindowedRtecEvaluator(program, window, step, warn=warn)


def rtec_read(program: Any, stream: IO[str], name: str, fmt: str, on_error: str,
              report: Callable[[str], None]) -> Iterator[Event]:
    return read_rtec_events(stream, name, fmt, on_error, report, _csv_rows(program))


def _csv_rows(program: Any) -> Any:
    return CsvRows({e.name for e in program.points + program.build_from_points},
                   {e.name for e in program.collect_intervals})


def rtec_bulk_read(program: Any, stream: IO[str], name: str, fmt: str, on_error: str,
                   report: Callable[[str], None]) -> Iterator[Any]:
    return read_rtec_blocks(stream, name, fmt, on_error, report, _csv_rows(program))


def rtec_describe(program: Any) -> list[str]:
    h = Hierarchy(program)
    lines = [f"rules: {len(program.rules)}, background clauses: "
             f"{sum(len(v) for v in program.background.values())}, clock tick: {program.clock_tick}"]
    levels: dict[int, list[str]] = {}
    for ent, lvl in h.level.items():
        name = f"{ent[1][0]}/{ent[1][1]}" + (f"={ent[2]}" if ent[0] == "fluent" and ent[2] is not None else "")
        kind = {"simple": "simple fluent", "sdf": "statically determined", "event": "event"}[h.kind[ent]]
        levels.setdefault(lvl, []).append(f"{name} ({kind})")
    for lvl in sorted(levels):
        lines.append(f"stratum {lvl}: {', '.join(sorted(levels[lvl]))}")
    inputs = sorted({f"{e.name}/{e.arity}" for e in program.points + program.build_from_points
                     + program.collect_intervals})
    lines.append(f"input fluents: {', '.join(inputs) or '(none)'}")

    lines.append(describe_key(program))
    lines.append("fleet: one chain service hosting the evaluator (one partition)")
    return lines


def rtec_stream(program: Any) -> Any:
    return RtecEvaluator(program, step=program.clock_tick)  # the stage decides when to advance


def rtec_causal(program: Any) -> bool:
    """A fluent at t follows from the events up to t (initiation, termination, inertia) —
    unless something holds without input for instances that later input shows
    (``holds_before_its_input``): then an old program version is fed the whole stream, its
    answers before its end included those of instances first seen after it."""
    return not holds_before_its_input(program)


def rtec_retaining(program: Any, retention: Any) -> Any:
    return RtecEvaluator(program, step=program.clock_tick, retention=_finite(retention))


def rtec_replay(program: Any, warn: Callable[[str], None]) -> Any:
    return RtecEvaluator(program, warn=warn)


def rtec_strata(program: Any) -> Any:
    return changes.rtec_strata(program)
