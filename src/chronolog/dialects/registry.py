"""Every dialect in one table: LARS, Laser, DatalogMTL and RTEC, each a ``Dialect`` row.

A row says how to parse the program files, how to make the evaluator
(``chronolog.evaluator``) for ``chronolog run``, the fleet and the backfill,
how to read input lines, what ``check`` and ``topology`` print, and which
``run`` options it takes (``options``: the others are refused with a reason by
``refusal``).  Code outside ``dialects/`` asks the row, never the name: adding
a dialect is adding a row, not an ``if``.
"""

from __future__ import annotations

import io
from collections.abc import Callable, Iterator, Mapping
from typing import IO, Any

from chronolog.core.errors import ChronologError, ProgramError
from chronolog.core.events import Event
from chronolog.core.reach import Reach
from chronolog.core.records import field, record

Warn = Callable[[str], None]
Reader = Callable[[Any, IO[str], str, str, str, Warn], Iterator[Any]]
# (program, stream, name, format, on_error, report) -> events (and, for ``bulk_read``, blocks) in arrival order


@record(frozen=True)
class RunOptions:
    """The ``chronolog run`` options whose meaning depends on the dialect (the defaults mean
    "not given"); ``until``, ``--format`` and ``--on-error`` are every dialect's."""

    answers: str = "changelog"
    mode: str | None = None
    seed: int = 0
    models: int = 1
    retention: Any = None  # N time points (int, or a rational for DatalogMTL), inf, or None
    step: int | None = None
    window: int | None = None

    @classmethod
    def of(cls, source: Any) -> RunOptions:
        """The options of an argparse namespace (or any object with such attributes)."""
        given: dict[str, Any] = {name: getattr(source, name) for name in OPTIONS if hasattr(source, name)}
        return cls(**given)


OPTIONS = tuple(RunOptions.__annotations__)  # the names of the dialect-dependent run options


@record(frozen=True)
class Dialect:
    name: str
    title: str  # as messages name the language
    extensions: tuple[str, ...]  # program files of this dialect by default
    parse: Callable[[list[tuple[str, str]]], Any]  # [(file name, text)] -> the program
    evaluator: Callable[[Any, RunOptions, Warn], Any]  # (program, run options, warn) -> the Evaluator of `run`
    read: Reader  # input events one by one (a pipe; the fleet's lines)
    describe: Callable[[Any], list[str]]  # the lines `chronolog check` (and `topology` for a chain) prints
    stream: Callable[[Any], Any]  # program -> an evaluator for a stream without end (the fleet)
    # which `run` options of RunOptions it takes, each with the values it accepts (None: any)
    options: Mapping[str, tuple[str, ...] | None] = field(default_factory=dict)
    # events and ``Block``s for the evaluator's ``push_block``, read in bulk (a regular file); None: ``read``
    bulk_read: Reader | None = None
    read_ahead: bool = False  # its bulk reader is io.formats.EventReader's, which io/readahead.py can run
    # ``chronolog run`` turns the cyclic collector off around the loop (runtime/embedded.py
    # ``collecting_rarely``); False: the evaluator manages it itself (RTEC freezes its history
    # after each window: measured 1.3x slower on caviar under the runtime's policy)
    collect_rarely: bool = True
    # (program, warn) -> the evaluator replaying a complete history (the backfill); None: ``stream``'s
    replay: Callable[[Any, Warn], Any] | None = None
    # program -> how far in time input can change answers (``core.reach.Reach``; None: unbounded,
    # the backfill then evaluates the whole history in one segment)
    reach: Callable[[Any], Reach | None] = lambda program: None
    # program -> the argument position per predicate ("p/2") on which every rule joins, so that
    # each key's facts can be evaluated apart (the backfill's key partitions); None: not split by key
    partition_key: Callable[[Any], dict[str, int] | None] = lambda program: None
    # (program, N) -> the fleet's evaluator applying late events up to N back (--retention);
    # None: the dialect keeps its whole input log
    retaining: Callable[[Any, Any], Any] | None = None
    points: bool = True  # answers at one integer point are written as "t" lines
    # the time every answer line starts from, whatever the input's first time (RTEC: 0, where
    # `initially` and complement_all start); None: the history's first time (the backfill's span)
    origin: int | None = None
    # (program, window, step, warn) -> the evaluator of a windowed mode (RTEC's --window); None: no such mode
    windowed: Callable[[Any, int, int | None, Warn], Any] | None = None
    # time is integer points, each one evaluated (LARS): the backfill's --from, --to and --segment
    # must be integers (the others take rationals such as 7/2)
    discrete: bool = False
    # (text, file, line) -> the interval of an answer line over rational time (MeTeoR notation:
    # "[3,7/2)"), for the backfill's reader of published answers; None: integer points (discrete)
    interval_of: Callable[[str, str, int], Any] | None = None
    # program -> its plan by strata, for the backfill's segments by strata (LARS); None: the backfill
    # replays the evaluator
    strata: Callable[[Any], Any] | None = None
    # (program, run options) -> its fleet (chronolog.stages.FleetLayout): strata, per stratum or only
    # chained, partition key, the stage of each service; by default the evaluator as one chain service
    layout: Callable[[Any, RunOptions], Any] = field(default=lambda program, options: _evaluator_layout(program))
    # the answers at a time depend on no later input (LARS evaluates each point on its past):
    # `run --upgrade` feeds an older program version only the input before its end
    causal: bool = False
    # program -> whether an evaluation can derive answers at earlier times (LARS's @-heads)
    dates_back: Callable[[Any], bool] = lambda program: False
    # time is rational (DatalogMTL: an upgrade time may be 7/2); else integer times
    rational: bool = False
    # program -> explain(events, answer at T, atom, T, "why" | "why-not", every, depth) -> core.explanation.Node:
    # ``chronolog explain --why / --why-not`` (None: not built for this dialect yet)
    explain: Callable[[Any], Callable[..., Any]] | None = None


def _evaluator_layout(program: Any) -> Any:
    """The fleet of a dialect whose evaluator runs whole: one chain service, one
    partition, the evaluator made for each service's options (``fleet_evaluator``).
    A program the evaluator cannot take as a stream has no fleet (``unavailable``)."""
    from chronolog.stages.evaluator import evaluator_layout

    row = lookup(program.dialect)
    try:
        row.stream(program)  # refuse what cannot be hosted before anything starts
        unavailable = None
    except ChronologError as exc:
        unavailable = exc
    return evaluator_layout(program.dialect, lambda spec: fleet_evaluator(row, program, spec.retention, spec.window,
                                                                          spec.step),
                            lambda line, where: read_line(row.name, program, line, where),
                            lambda: row.describe(program), unavailable, lambda spec: upgrader(row, program, spec))


def upgrader(row: Dialect, program: Any, spec: Any) -> Any:
    """How a fleet service of ``program`` makes the evaluator of a new program version
    (``chronolog upgrade``): parsed from its files in the row's language, with the
    service's options (``stages.interface.Upgrader``)."""
    from chronolog.stages.interface import Upgrader

    def program_of(sources: Any) -> Any:
        return program if sources is None else row.parse(list(sources))

    def make(sources: Any) -> Any:
        return fleet_evaluator(row, program_of(sources), spec.retention, spec.window, spec.step)

    def back(sources: Any) -> Any:
        reach = row.reach(program_of(sources))
        return None if reach is None else reach.back

    same = tuple(name for name, other in DIALECTS.items() if other.title == row.title)
    return Upgrader(make, back, row.causal, row.discrete, not row.rational, (row.name, *(n for n in same if n != row.name)))


def fleet_evaluator(row: Dialect, program: Any, retention: Any = None, window: int | None = None,
                    step: int | None = None) -> Any:
    """The evaluator of a fleet service: ``window`` (and ``step``), the dialect's windowed mode;
    else with ``retention`` the ``retaining`` one (a dialect without it keeps its whole log)."""
    if window is not None:
        if row.windowed is None:
            raise ChronologError("error: --window is for RTEC programs")
        return row.windowed(program, window, step, lambda m: None)
    if retention is None or row.retaining is None:
        return row.stream(program)
    return row.retaining(program, retention)


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


def _mtl_evaluator(program: Any, options: RunOptions, warn: Callable[[str], None]) -> Any:
    from chronolog.dialects.mtl.evaluator import MtlEvaluator, horizon

    return MtlEvaluator(program, options.mode, warn=warn, retention=horizon(program, options.retention))


def _mtl_read(program: Any, stream: IO[str], name: str, fmt: str, on_error: str,
              report: Callable[[str], None]) -> Iterator[Event]:
    from chronolog.dialects.mtl.reader import read_mtl_events

    return read_mtl_events(stream, name, fmt, on_error, report)


def _mtl_describe(program: Any) -> list[str]:
    from chronolog.dialects.mtl.evaluator import (
        _num,
        input_reach,
        not_forward_propagating,
        reach,
        reach_retention,
    )
    from chronolog.dialects.mtl.materialise import check_program, strata
    from chronolog.dialects.mtl.syntax import atoms_of, head_atom
    from chronolog.evaluator import time_text

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


def _interval_of(text: str, file: str, line: int) -> Any:
    from chronolog.dialects.mtl.parser import interval_from_text

    return interval_from_text(text, file, line)


def _mtl_stream(program: Any) -> Any:
    from chronolog.dialects.mtl.evaluator import MtlEvaluator

    return MtlEvaluator(program, "stream")  # a fleet never reaches the end of its input: no batch mode


def _mtl_replay(program: Any, warn: Callable[[str], None]) -> Any:
    from chronolog.dialects.mtl.evaluator import MtlEvaluator

    return MtlEvaluator(program, warn=warn)  # streaming if the program allows it, else batch


def _mtl_reach(program: Any) -> Reach | None:
    from chronolog.dialects.mtl.evaluator import input_reach

    back = input_reach(program)
    return None if back is None else Reach(back)


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


def _rtec_evaluator(program: Any, options: RunOptions, warn: Callable[[str], None]) -> Any:
    from chronolog.dialects.rtec.evaluator import RtecEvaluator

    retention = _finite(options.retention)
    if options.window is not None:
        if retention is not None:
            raise ChronologError("error: --window and --retention exclude each other (the window is how late an "
                                 "event may be)")
        return _rtec_windowed(program, options.window, options.step, warn)
    return RtecEvaluator(program, options.step, warn=warn, retention=retention)


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


def _rtec_stream(program: Any) -> Any:
    from chronolog.dialects.rtec.evaluator import RtecEvaluator

    return RtecEvaluator(program, step=program.clock_tick)  # the stage decides when to advance


def _rtec_retaining(program: Any, retention: Any) -> Any:
    from chronolog.dialects.rtec.evaluator import RtecEvaluator

    return RtecEvaluator(program, step=program.clock_tick, retention=_finite(retention))


def _rtec_replay(program: Any, warn: Callable[[str], None]) -> Any:
    from chronolog.dialects.rtec.evaluator import RtecEvaluator

    return RtecEvaluator(program, warn=warn)


def _lars_parse(files: list[tuple[str, str]]) -> Any:
    from chronolog.dialects.lars.ir import Program
    from chronolog.dialects.lars.parser import parse_lars

    return Program(tuple(r for name, text in files for r in parse_lars(text, name).rules), "lars")


def _laser_parse(files: list[tuple[str, str]]) -> Any:
    from chronolog.dialects.lars.ir import Program
    from chronolog.dialects.lars.laser import parse_laser

    return Program(tuple(r for name, text in files for r in parse_laser(text, name).rules), "laser")


def _lars_plan(program: Any, options: RunOptions = RunOptions()) -> Any:  # noqa: B008 (a frozen record)
    """The program's plan (its errors: safety, windows), evaluated as ``--mode``/``--seed`` say."""
    from chronolog.dialects.lars.plan import plan_program

    plan = plan_program(program)
    plan.solver = options.mode or ("oneshot" if options.models > 1 else "tms")
    plan.seed = options.seed
    return plan


def _lars_retention(retention: Any) -> int | None:
    return None if retention is None or retention == float("inf") else int(retention)


def _lars_evaluator(program: Any, options: RunOptions, warn: Callable[[str], None]) -> Any:
    from chronolog.dialects.lars.evaluator import LarsEvaluator, LarsModels

    models = options.models
    if models < 1:
        raise ChronologError(f"error: --models must be at least 1, not {models}")
    if models > 1 and options.mode == "tms":
        raise ChronologError("error: --models enumerates answer sets with clingo: use it with --mode oneshot")
    plan = _lars_plan(program, options)
    retention = _lars_retention(options.retention)
    if models > 1:
        return LarsModels(plan, models, answers=options.answers, retention=retention, warn=warn)
    return LarsEvaluator(plan, answers=options.answers, retention=retention, warn=warn, eager=True)


def _lars_read(program: Any, stream: IO[str], name: str, fmt: str, on_error: str,
               report: Callable[[str], None]) -> Iterator[Event]:
    from chronolog.io.formats import EventReader

    return iter(EventReader(stream, name, fmt, on_error=on_error, report=report))


def _lars_bulk_read(program: Any, stream: IO[str], name: str, fmt: str, on_error: str,
                    report: Callable[[str], None]) -> Iterator[Any]:
    """Blocks of facts of one time point (``FactBatch``), cut from the file's bytes when
    ``stream`` is a file not read yet (else from its lines)."""
    from chronolog.io.formats import EventReader

    raw = getattr(stream, "buffer", None)
    return EventReader(stream, name, fmt, on_error=on_error, report=report, raw=raw).batches()


def _lars_describe(program: Any) -> list[str]:
    plan = _lars_plan(program)
    lines = [f"stratum {i}: {', '.join(stratum)}" for i, stratum in enumerate(plan.strata, 1)]
    lines.append(f"output predicates: {', '.join(sorted(f'{p}/{k}' for p, k in plan.output)) or '(none)'}")
    inputs = sorted(f"{p}/{k}" for p, k in plan.extensional if "#" not in p)
    lines.append(f"input predicates: {', '.join(inputs) or '(none)'}")
    lines.append("stratified: evaluated incrementally" if plan.stratified else
                 "non-stratified: evaluated by truth maintenance (--mode tms, the default) or clingo per time "
                 "point (--mode oneshot)")
    return lines


def _lars_stream(program: Any) -> Any:
    from chronolog.dialects.lars.evaluator import LarsEvaluator

    return LarsEvaluator(_lars_plan(program))  # the stage decides when to advance


def _lars_replay(program: Any, warn: Callable[[str], None]) -> Any:
    from chronolog.dialects.lars.evaluator import LarsEvaluator

    return LarsEvaluator(_lars_plan(program), warn=warn)


def _lars_reach(program: Any) -> Reach | None:
    """The plan's reach: its largest time window over stream predicates and largest tuple
    window, and how far back an ``@``-head derives; unbounded if either is."""
    plan = _lars_plan(program)
    if plan.state_reach is None or plan.output_reach is None:
        return None
    return Reach(plan.state_reach, plan.tuple_reach, plan.output_reach)


def _lars_partition_key(program: Any) -> dict[str, int] | None:
    from chronolog.dialects.lars.partition import partition_key

    return partition_key(_lars_plan(program))[0]


def _lars_retaining(program: Any, retention: Any) -> Any:
    from chronolog.dialects.lars.evaluator import LarsEvaluator

    return LarsEvaluator(_lars_plan(program), retention=_lars_retention(retention))


_LARS_OPTIONS: dict[str, tuple[str, ...] | None] = {
    "answers": ("changelog", "points"), "mode": ("tms", "oneshot"), "seed": None, "models": None, "retention": None}


def _lars_layout(program: Any, options: RunOptions) -> Any:
    """Its strata, per stratum or chained, partitioned by key when every rule joins on one
    (``dialects/lars/layout.py``); ``--mode``/``--seed`` as ``up`` gives them."""
    from chronolog.dialects.lars.layout import lars_layout

    return lars_layout(_lars_plan(program, options))


def _lars_dates_back(program: Any) -> bool:
    """An ``@``-head in a rule with a body: its evaluation at t may derive atoms before t."""
    return any(rule.head.time is not None and rule.body for rule in program.rules)


def _lars_explain(program: Any) -> Callable[..., Any]:
    """``chronolog explain --why / --why-not`` of a LARS program (``dialects/lars/explain.py``)."""
    from chronolog.dialects.lars.explain import Scene, answer_at, why, why_not
    from chronolog.dialects.lars.plan import plan_program

    plan = plan_program(program)

    def explain(events: Any, lines: Any, atom: Any, t: Any, mode: str, every: bool, depth: int | None) -> Any:
        scene = Scene(program, plan, events, answer_at(lines, t), t)
        return why(scene, atom, every, depth) if mode == "why" else why_not(scene, atom)

    return explain


def _mtl_explain(program: Any) -> Callable[..., Any]:
    """``chronolog explain --why / --why-not`` of a DatalogMTL program (``dialects/mtl/explain.py``)."""
    from chronolog.dialects.mtl.explain import Facts, answers_of, why, why_not

    def explain(events: Any, lines: Any, atom: Any, t: Any, mode: str, every: bool, depth: int | None) -> Any:
        facts = Facts(program, events, answers_of(lines))
        return why(facts, atom, t, every, depth) if mode == "why" else why_not(facts, atom, t)

    return explain


def _lars_row(name: str, parse: Callable[[list[tuple[str, str]]], Any]) -> Dialect:
    return Dialect(name, "LARS", (f".{name}",), parse, _lars_evaluator, _lars_read, _lars_describe, _lars_stream,
                   _LARS_OPTIONS, bulk_read=_lars_bulk_read, read_ahead=True, replay=_lars_replay,
                   retaining=_lars_retaining, reach=_lars_reach,
                   partition_key=_lars_partition_key, discrete=True, strata=_lars_plan, layout=_lars_layout,
                   causal=True, dates_back=_lars_dates_back, explain=_lars_explain)


DIALECTS: dict[str, Dialect] = {
    "lars": _lars_row("lars", _lars_parse),  # native syntax, Ticker-compatible
    "laser": _lars_row("laser", _laser_parse),  # Laser's syntax, the same engine
    "mtl": Dialect("mtl", "DatalogMTL", (".mtl",), _mtl_parse, _mtl_evaluator, _mtl_read, _mtl_describe,
                   _mtl_stream, {"mode": ("stream", "batch"), "retention": None}, replay=_mtl_replay,
                   reach=_mtl_reach, retaining=_mtl_retaining, points=False, interval_of=_interval_of,
                   rational=True, explain=_mtl_explain),
    "rtec": Dialect("rtec", "RTEC", (".rtec", ".prolog"), _rtec_parse, _rtec_evaluator, _rtec_read,
                    _rtec_describe, _rtec_stream, {"retention": None, "step": None, "window": None},
                    bulk_read=_rtec_bulk_read, replay=_rtec_replay, retaining=_rtec_retaining, origin=0,
                    windowed=_rtec_windowed, interval_of=_interval_of, collect_rarely=False),
}
DEFAULT = "lars"  # the dialect of a program file with no known extension


def lookup(name: str, where: str = "") -> Dialect:
    """The row of dialect ``name``; a ``ProgramError`` (at ``where``) naming the choices if there is none."""
    row = DIALECTS.get(name)
    if row is None:
        from chronolog.core.source import Loc

        raise ProgramError(f"unknown dialect {name!r} (choose from {', '.join(DIALECTS)})",
                           Loc(where, 1, 1) if where else None)
    return row


def refusal(row: Dialect, options: RunOptions) -> str | None:
    """Why ``row`` cannot take ``options`` (a given option it does not take, or a value it does not
    accept: "--mode tms is for LARS programs (this one is mtl)"), else None."""
    default = RunOptions()
    for name, takes in _TAKEN.items():
        value = getattr(options, name)
        if value == getattr(default, name):
            continue  # not given
        accepted = row.options.get(name, ())
        if name in row.options and (accepted is None or value in accepted):
            continue
        owners = dict.fromkeys(r.title for r in DIALECTS.values() if name in r.options
                               and (r.options[name] is None or value in r.options[name]))  # type: ignore[operator]
        shown = f"--{name}" if takes is None else f"--{name} {value}"
        return f"error: {shown} is for {' or '.join(owners)} programs (this one is {row.name})"
    return None


# each option of RunOptions: the values some dialect restricts it to (None: any value wherever it is taken)
_TAKEN: dict[str, tuple[str, ...] | None] = {
    name: (tuple(v for r in DIALECTS.values() for v in (r.options.get(name) or ()))
           if any(r.options.get(name) is not None for r in DIALECTS.values()) else None)
    for name in OPTIONS}


def read_line(dialect: str, program: Any, line: str, where: str) -> Iterator[Event]:
    """One input record (the fleet's reader)."""
    return DIALECTS[dialect].read(program, io.StringIO(line + "\n"), where, "jsonl", "fail", lambda m: None)
