"""The dialects that run on an ``Evaluator`` (``chronolog.evaluator``), in one table.

LARS and Laser compile to the engine's plan; DatalogMTL and RTEC bring their
own evaluator.  For those, everything the CLI, ``chronolog.dialects.load`` and the
fleet (``runtime/hosting.py``) need is here: how to parse the program files,
how to make the evaluator, how to read input lines, and what ``check`` and
``topology`` print.  Adding a dialect is adding a row, not an ``if``.
"""

from __future__ import annotations

import io
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from typing import IO, Any

from chronolog.core.events import Event


@dataclass(frozen=True)
class Dialect:
    parse: Callable[[list[tuple[str, str]]], Any]  # [(file name, text)] -> the program
    evaluator: Callable[[Any, Any, Callable[[str], None]], Any]  # (program, run options, warn) -> Evaluator
    read: Callable[[Any, IO[str], str, str, str, Callable[[str], None]], Iterator[Event]]
    # (program, stream, name, format, on_error, report) -> events in arrival order
    describe: Callable[[Any], list[str]]  # the lines `chronolog check` / `topology` print
    hosted: Callable[[Any], Any]  # program -> an evaluator for the fleet (stream mode)
    # (program, warn) -> the evaluator replaying a complete history (the backfill); None: ``hosted``'s
    replay: Callable[[Any, Callable[[str], None]], Any] | None = None
    # how far before a time the input can still change answers there (None: unbounded;
    # the backfill then evaluates the whole history in one segment)
    reach: Callable[[Any], Any] = lambda program: None
    # (program, N) -> the fleet's evaluator applying late events up to N back (--retention);
    # None: the dialect keeps its whole input log
    retaining: Callable[[Any, Any], Any] | None = None
    points: bool = True  # answers at one integer point are written as "t" lines
    # the time every answer line starts from, whatever the input's first time (RTEC: 0, where
    # `initially` and complement_all start); None: the history's first time (the backfill's span)
    origin: int | None = None
    # (program, window, step, warn) -> the evaluator of a windowed mode (RTEC's --window); None: no such mode
    windowed: Callable[[Any, int, int | None, Callable[[str], None]], Any] | None = None
    # ``read``'s events for ``chronolog run`` (runtime/driver.py), runs of plain facts of one time
    # as ``TimeRows`` blocks decoded in bulk; None: ``read``
    bulk_read: Callable[[Any, IO[str], str, str, str, Callable[[str], None]], Iterator[Any]] | None = None


def _mtl_parse(files: list[tuple[str, str]]) -> Any:
    from chronolog.dialects.mtl.parser import parse_mtl
    from chronolog.dialects.mtl.syntax import MtlProgram

    rules: list = []
    facts: list = []
    for name, text in files:
        parsed = parse_mtl(text, name)
        rules.extend(parsed.rules)
        facts.extend(getattr(parsed, "facts", ()))
    return MtlProgram(tuple(rules), tuple(facts))


def _mtl_evaluator(program: Any, options: Any, warn: Callable[[str], None]) -> Any:
    from chronolog.dialects.mtl.evaluator import MtlEvaluator, horizon

    return MtlEvaluator(program, getattr(options, "mode", None), warn=warn,
                        retention=horizon(program, getattr(options, "retention", None)))


def _mtl_read(program: Any, stream: IO[str], name: str, fmt: str, on_error: str,
              report: Callable[[str], None]) -> Iterator[Event]:
    from chronolog.dialects.mtl.reader import read_mtl_events

    return read_mtl_events(stream, name, fmt, on_error, report)


def _mtl_describe(program: Any) -> list[str]:
    from chronolog.evaluator import time_text
    from chronolog.dialects.mtl.evaluator import _num, input_reach, not_forward_propagating, reach, reach_retention
    from chronolog.dialects.mtl.materialise import check_program, strata
    from chronolog.dialects.mtl.syntax import atoms_of, head_atom

    check_program(program)

    def name(atom: Any) -> str:
        return f"{atom.pred}/{len(atom.args)}"

    heads = sorted({name(head_atom(r.head)) for r in program.rules})
    inputs = sorted({name(a) for r in program.rules for lit in r.body for a in atoms_of(lit)} - set(heads))
    levels = strata(program)  # by negation: a predicate read under `not` is complete in a lower stratum
    lines = [f"stratum {i}: {', '.join(sorted({name(head_atom(r.head)) for r in rules}))}"
             for i, rules in enumerate(levels, 1)]
    lines += [f"rules: {len(program.rules)}, facts in the program: {len(program.facts)}",
              f"output predicates: {', '.join(heads) or '(none)'}",
              f"input predicates: {', '.join(inputs) or '(none)'}",
              "negation: " + (f"stratified, {len(levels)} strata" if len(levels) > 1 else "none (one stratum)")]
    blocker = not_forward_propagating(program)
    if blocker is None:
        bound = reach_retention(program)
        lines.append(f"forward-propagating: evaluated as a stream (window reach {time_text(_num(reach(program)))}); "
                     f"every late event applied" + ("" if bound is None else
                                                     f" (--retention {time_text(bound)} makes memory flat)"))
        lines.append("fleet: one chain service hosting the evaluator, one partition; partition key: none "
                     "(the evaluator is not split by key)")
    else:
        lines.append(f"not forward-propagating ({blocker[0]}: {blocker[1]}): evaluated in batch mode")
        lines.append("fleet: not available (batch only: chronolog run); partition key: none")
    bound = input_reach(program)
    lines.append(f"backfill: {'one segment (no bounded input reach)' if bound is None else f'segments, input reach {bound}'}")
    return lines


def _mtl_hosted(program: Any) -> Any:
    from chronolog.dialects.mtl.evaluator import MtlEvaluator

    return MtlEvaluator(program, "stream")  # a fleet never reaches the end of its input: no batch mode


def _mtl_replay(program: Any, warn: Callable[[str], None]) -> Any:
    from chronolog.dialects.mtl.evaluator import MtlEvaluator

    return MtlEvaluator(program, warn=warn)  # streaming if the program allows it, else batch


def _mtl_reach(program: Any) -> Any:
    from chronolog.dialects.mtl.evaluator import input_reach

    return input_reach(program)


def _mtl_retaining(program: Any, retention: Any) -> Any:
    from chronolog.dialects.mtl.evaluator import MtlEvaluator, horizon

    return MtlEvaluator(program, "stream", retention=horizon(program, retention))


def _finite(retention: Any) -> Any:
    """``--retention``'s value for an evaluator: ``inf`` is no retention (None)."""
    return None if retention is None or retention == float("inf") else retention


def _rtec_parse(files: list[tuple[str, str]]) -> Any:
    from chronolog.dialects.rtec.parser import finish_program, parse_rtec

    program = None
    for name, text in files:
        program = parse_rtec(text, name, program)
    assert program is not None
    return finish_program(program)


def _rtec_evaluator(program: Any, options: Any, warn: Callable[[str], None]) -> Any:
    from chronolog.core.errors import ChronologError
    from chronolog.dialects.rtec.evaluator import RtecEvaluator

    if getattr(options, "mode", None) is not None:
        raise ChronologError(f"error: --mode {options.mode} is for DatalogMTL programs (this one is rtec)")
    retention = _finite(getattr(options, "retention", None))
    window = getattr(options, "window", None)
    if window is not None:
        if retention is not None:
            raise ChronologError("error: --window and --retention exclude each other (the window is how late an "
                                 "event may be)")
        return _rtec_windowed(program, window, getattr(options, "step", None), warn)
    return RtecEvaluator(program, getattr(options, "step", None), warn=warn, retention=retention)


def _rtec_windowed(program: Any, window: int, step: int | None, warn: Callable[[str], None]) -> Any:
    from chronolog.dialects.rtec.windowed import WindowedRtecEvaluator

    return WindowedRtecEvaluator(program, window, step, warn=warn)


def _rtec_read(program: Any, stream: IO[str], name: str, fmt: str, on_error: str,
               report: Callable[[str], None]) -> Iterator[Event]:
    from chronolog.dialects.rtec.reader import read_rtec_events

    return read_rtec_events(stream, name, fmt, on_error, report, _csv_rows(program))


def _csv_rows(program: Any) -> Any:
    from chronolog.dialects.rtec.reader import CsvRows

    return CsvRows({e.name for e in program.points + program.build_from_points},
                   {e.name for e in program.collect_intervals})


def _rtec_bulk_read(program: Any, stream: IO[str], name: str, fmt: str, on_error: str,
                    report: Callable[[str], None]) -> Iterator[Any]:
    from chronolog.dialects.rtec.reader import read_rtec_blocks

    return read_rtec_blocks(stream, name, fmt, on_error, report, _csv_rows(program))


def _rtec_describe(program: Any) -> list[str]:
    from chronolog.dialects.rtec.evaluator import Hierarchy

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
    from chronolog.dialects.rtec.partition import describe_key

    lines.append(describe_key(program))
    lines.append("fleet: one chain service hosting the evaluator (one partition)")
    return lines


def _rtec_hosted(program: Any) -> Any:
    from chronolog.dialects.rtec.evaluator import RtecEvaluator

    return RtecEvaluator(program, step=program.clock_tick)  # the stage decides when to advance


def _rtec_retaining(program: Any, retention: Any) -> Any:
    from chronolog.dialects.rtec.evaluator import RtecEvaluator

    return RtecEvaluator(program, step=program.clock_tick, retention=_finite(retention))


def _rtec_replay(program: Any, warn: Callable[[str], None]) -> Any:
    from chronolog.dialects.rtec.evaluator import RtecEvaluator

    return RtecEvaluator(program, warn=warn)


DIALECTS: dict[str, Dialect] = {
    "mtl": Dialect(_mtl_parse, _mtl_evaluator, _mtl_read, _mtl_describe, _mtl_hosted, _mtl_replay, _mtl_reach,
                   _mtl_retaining, points=False),
    "rtec": Dialect(_rtec_parse, _rtec_evaluator, _rtec_read, _rtec_describe, _rtec_hosted, _rtec_replay,
                    retaining=_rtec_retaining, origin=0, windowed=_rtec_windowed, bulk_read=_rtec_bulk_read),
}


def evaluator_dialect(name: str) -> Dialect | None:
    """The dialect's row if it runs on its own evaluator (None for LARS and Laser)."""
    return DIALECTS.get(name)


def read_line(dialect: str, program: Any, line: str, where: str) -> Iterator[Event]:
    """One input record (the fleet's reader)."""
    d = DIALECTS[dialect]
    return d.read(program, io.StringIO(line + "\n"), where, "jsonl", "fail", lambda m: None)
