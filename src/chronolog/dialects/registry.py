"""Every dialect in one table: LARS, Laser, DatalogMTL and RTEC, each a ``Dialect`` row.

A row says how to parse the program files, how to make the evaluator
(``chronolog.evaluator``) for ``chronolog run``, the fleet and the backfill,
how to read input lines, what ``check`` and ``topology`` print, and which
``run`` options it takes (``options``: the others are refused with a reason by
``refusal``).  Code outside ``dialects/`` asks the row, never the name: adding
a dialect is adding a row, not an ``if``.
"""

from __future__ import annotations

import importlib
import io
from collections.abc import Callable, Iterator, Mapping
from math import inf
from typing import IO, Any

from chronolog.core.errors import ChronologError, ProgramError
from chronolog.core.events import Event
from chronolog.core.reach import Reach
from chronolog.core.records import field, record
from chronolog.core.source import Loc
from chronolog.core.strata import kept_answers

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
    # program -> whether its answers at a time follow choices made before it (LARS not
    # stratified: the TMS keeps an answer set's choices from one time to the next), which no
    # evaluation from a later start reproduces: an explanation then evaluates the whole input
    keeps_choices: Callable[[Any], bool] = lambda program: False
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
    # program -> whether its answers at a time depend on no later input (LARS evaluates each point
    # on its past, RTEC a fluent at t on the events up to t, a DatalogMTL program without future
    # operators): `run --upgrade` and an upgraded fleet service feed an older version of such a
    # program only the input before its end
    causal: Callable[[Any], bool] = lambda program: False
    # program -> whether an evaluation can derive answers at earlier times (LARS's @-heads)
    dates_back: Callable[[Any], bool] = lambda program: False
    # (program, its evaluator, first, last) -> for a program that ``dates_back``: its evaluator set to
    # answer only what its evaluations at points in [first, last] derive (None: no bound), and how far
    # before the time evaluated they date atoms (inf: anywhere): a program version is chosen by the
    # time point evaluated (``versions.Version.dated``); None: nothing set, its lines cut to its part
    # (an evaluator None: nothing set either, only the answer)
    evaluations: Callable[[Any, Any, Any, Any], Any] = lambda program, evaluator, first, last: None
    # time is rational (DatalogMTL: an upgrade time may be 7/2); else integer times
    rational: bool = False
    # program -> explain(events, answer lines, atom, T, "why" | "why-not", every, depth, evaluator=E
    # [, versions=[(from T or None, program, its answer lines)]: a dialect whose programs date atoms
    # back, each evaluation explained with the version in force at its point]) -> core.explanation.Node:
    # ``chronolog explain --why / --why-not`` (E: the evaluator that wrote the answer lines, having
    # evaluated the events, for a dialect to read; None: not built for this dialect yet)
    explain: Callable[[Any], Callable[..., Any]] | None = None
    # program -> ((answer atom (pred, args), the evaluator of the explanation, the input events) ->
    # which input events can matter to the atom, as a test of an event; None: all): an explanation
    # evaluates only those (runtime.explain.sliced; RTEC: rtec/relevance.py)
    relevant: Callable[[Any], Callable[[tuple[str, tuple], Any, list], Callable[[Any], bool] | None]] = \
        lambda program: lambda atom, evaluator, events: None
    # program -> ((answer atom, the evaluator of the explanation) -> None): makes that evaluator
    # derive only what the atom's explanation can read (RTEC: rtec/relevance.py); None: all of it
    narrow: Callable[[Any], Callable[[tuple[str, tuple], Any], None]] | None = None
    # (old program or None, new program, chained) -> ``chronolog upgrade``'s plan line per stratum
    # (kept, changed, added, removed); None: the program is one stratum, re-evaluated whole
    strata_changes: Callable[[Any, Any, bool], list[str]] | None = None
    # program -> its strata identified by content (core.strata.Stratum, lowest first), for an
    # upgrade of a fleet hosting the whole evaluator to keep the unchanged ones; None: re-evaluated whole
    content_strata: Callable[[Any], Any] | None = None
    # its stream evaluator keeps the unchanged strata's state (``evaluator.KeepsStrata``): they are not
    # evaluated again; else they are, with the rest, and only their answers are not restated
    keeps_strata: bool = False


def _evaluator_layout(program: Any) -> Any:
    """The fleet of a dialect whose evaluator runs whole: one chain service, one
    partition, the evaluator made for each service's options (``fleet_evaluator``).
    A program the evaluator cannot take as a stream has no fleet (``unavailable``)."""
    evaluator_layout = _load("chronolog.stages.evaluator:evaluator_layout")
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
    Upgrader = _load("chronolog.stages.interface:Upgrader")

    def program_of(sources: Any) -> Any:
        return program if sources is None else row.parse(list(sources))

    def make(sources: Any) -> Any:
        return fleet_evaluator(row, program_of(sources), spec.retention, spec.window, spec.step)

    def back(sources: Any) -> Any:
        reach = row.reach(program_of(sources))
        return None if reach is None else reach.back

    def kept(old: Any, new: Any) -> frozenset[str]:
        if row.content_strata is None:
            return frozenset()
        return kept_answers(row.content_strata(program_of(old)), row.content_strata(program_of(new)))

    def causal(sources: Any) -> bool:
        return bool(row.causal(program_of(sources)))

    def dated(sources: Any, evaluator: Any, first: Any, last: Any) -> Any:
        return row.evaluations(program_of(sources), evaluator, first, last)

    same = tuple(name for name, other in DIALECTS.items() if other.title == row.title)
    names = (row.name, *(n for n in same if n != row.name))
    return Upgrader(make, back, causal, row.discrete, not row.rational, names, kept, dated)


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


# The rows name their functions as "module:function", imported on first call (``_lazy``):
# a ``chronolog run`` imports only its own dialect.  Importing all three costs about
# 70 ms of a run's 90 (docs/design/layout.md, "Imports").
def _load(target: str) -> Any:
    """The function (or class) ``target`` names, "package.module:name", its module imported
    if it was not: the one place where chronolog imports its own modules on demand."""
    module, _, name = target.partition(":")
    return getattr(importlib.import_module(module), name)


def _lazy(target: str) -> Callable[..., Any]:
    """A function that calls ``target`` (``_load``), resolved on the first call."""
    resolved: list[Callable[..., Any]] = []

    def call(*args: Any, **kwargs: Any) -> Any:
        if not resolved:
            resolved.append(_load(target))
        return resolved[0](*args, **kwargs)

    call.__qualname__ = call.__name__ = target
    return call


def _hooks(dialect: str) -> Callable[[str], Callable[..., Any]]:
    """``name`` -> the function ``name`` of ``dialects/<dialect>/hooks.py``, loaded lazily."""
    return lambda name: _lazy(f"chronolog.dialects.{dialect}.hooks:{name}")


_lars, _mtl, _rtec = _hooks("lars"), _hooks("mtl"), _hooks("rtec")
_interval_of = _lazy("chronolog.dialects.mtl.parser:interval_from_text")  # MeTeoR's notation: DatalogMTL and RTEC
_LARS_OPTIONS: dict[str, tuple[str, ...] | None] = {
    "answers": ("changelog", "points"), "mode": ("tms", "oneshot"), "seed": None, "models": None, "retention": None}


def _lars_row(name: str, parse: Callable[[list[tuple[str, str]]], Any]) -> Dialect:
    return Dialect(name, "LARS", (f".{name}",), parse, _lars("lars_evaluator"), _lars("lars_read"),
                   _lars("lars_describe"), _lars("lars_stream"), _LARS_OPTIONS, bulk_read=_lars("lars_bulk_read"),
                   read_ahead=True, replay=_lars("lars_replay"), retaining=_lars("lars_retaining"),
                   reach=_lars("lars_reach"), partition_key=_lazy("chronolog.dialects.lars.partition:program_partition_key"), discrete=True,
                   strata=_lars("lars_plan"), layout=_lazy("chronolog.dialects.lars.layout:program_layout"), causal=_lars("lars_causal"),
                   dates_back=_lars("lars_dates_back"), evaluations=_lars("lars_evaluations"),
                   explain=_lazy("chronolog.dialects.lars.explain:explainer"),
                   strata_changes=_lazy("chronolog.dialects.lars.changes:strata_changes"),
                   keeps_choices=_lars("lars_keeps_choices"))


DIALECTS: dict[str, Dialect] = {
    "lars": _lars_row("lars", _lars("lars_parse")),  # native syntax, Ticker-compatible
    "laser": _lars_row("laser", _lazy("chronolog.dialects.lars.laser:laser_program")),  # Laser's syntax, the same engine
    "mtl": Dialect("mtl", "DatalogMTL", (".mtl",), _mtl("mtl_parse"), _mtl("mtl_evaluator"), _mtl("mtl_read"),
                   _mtl("mtl_describe"), _mtl("mtl_stream"), {"mode": ("stream", "batch"), "retention": None},
                   replay=_mtl("mtl_replay"), reach=_mtl("mtl_reach"), retaining=_mtl("mtl_retaining"), points=False,
                   interval_of=_interval_of, rational=True, causal=_mtl("mtl_causal"),
                   explain=_lazy("chronolog.dialects.mtl.explain:explainer"), content_strata=_mtl("mtl_strata"),
                   keeps_strata=True, relevant=_lazy("chronolog.dialects.mtl.relevance:relevant")),
    "rtec": Dialect("rtec", "RTEC", (".rtec", ".prolog"), _rtec("rtec_parse"), _rtec("rtec_evaluator"),
                    _rtec("rtec_read"), _rtec("rtec_describe"), _rtec("rtec_stream"),
                    {"retention": None, "step": None, "window": None}, bulk_read=_rtec("rtec_bulk_read"),
                    replay=_rtec("rtec_replay"), retaining=_rtec("rtec_retaining"), origin=0,
                    windowed=_rtec("rtec_windowed"), interval_of=_interval_of, collect_rarely=False, causal=_rtec("rtec_causal"),
                    explain=_lazy("chronolog.dialects.rtec.explain:explainer"), content_strata=_rtec("rtec_strata"),
                    keeps_strata=True, relevant=_lazy("chronolog.dialects.rtec.relevance:relevant"),
                    narrow=_lazy("chronolog.dialects.rtec.relevance:narrow")),
}
DEFAULT = "lars"  # the dialect of a program file with no known extension


def lookup(name: str, where: str = "") -> Dialect:
    """The row of dialect ``name``; a ``ProgramError`` (at ``where``) naming the choices if there is none."""
    row = DIALECTS.get(name)
    if row is None:
        raise ProgramError(f"unknown dialect {name!r} (choose from {', '.join(DIALECTS)})",
                           Loc(where, 1, 1) if where else None)
    return row


def refusal(row: Dialect, options: RunOptions) -> str | None:
    """Why ``row`` cannot take ``options`` (a given option it does not take, or a value it does not
    accept: "--mode tms is for LARS programs (this one is mtl)"), else None."""
    default = RunOptions()
    retention = options.retention
    if retention is not None and type(retention) is not int and retention != inf and not row.rational:
        return f"error: --retention {retention}: the time points of {row.title} programs are integers"
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
