"""``chronolog`` subcommands: thin wrappers that parse arguments and call the library.

Every user error (bad program, bad input line, unreadable file) ends as one
``file:line:col: error: ...`` line on stderr and exit status 2, never a
traceback.
"""

from __future__ import annotations

import contextlib
import os
import sys
from collections.abc import Callable, Iterable, Iterator, Sequence
from types import SimpleNamespace
from typing import IO, TYPE_CHECKING, Any, cast

from chronolog import __version__
from chronolog.cli import explain, retention_value
from chronolog.core.errors import ChronologError
from chronolog.core.retention import time_value
from chronolog.dialects.load import DIALECTS as _DIALECTS
from chronolog.dialects.load import dialect_for, load_program
from chronolog.dialects.registry import DIALECTS as ROWS
from chronolog.dialects.registry import RunOptions, lookup, refusal
from chronolog.io import readahead
from chronolog.io.formats import EventReader
from chronolog.runtime.embedded import collecting_rarely, run_evaluator

if TYPE_CHECKING:
    import argparse

    from rich.progress import TaskID

    from chronolog.evaluator import Evaluator

EXIT_USAGE = 2
EMBEDDED = ("run", "check", "topology", "schemas", "explain")  # the commands of the light parser
# the other commands, by the group of modules that registers them (``build_parser``)
GROUPS = {**dict.fromkeys(("up", "down", "publish", "tail", "service", "create-topics"), "fleet"), "bench": "bench",
          "backfill": "backfill", "archive": "backfill", "upgrade": "upgrade"}
DIALECTS = list(_DIALECTS)
# `chronolog run`'s options with a value: dest, default, and the choices (a list) or the type (a function).
RUN_OPTIONS: dict[str, tuple[str, object, list[str] | Callable[[str], Any] | None]] = {
    "--input": ("input", None, None),
    "--output": ("output", "-", None),
    "--dialect": ("dialect", None, DIALECTS),
    "--format": ("format", "jsonl", ["jsonl", "lines", "meteor", "rtec"]),
    "--until": ("until", None, time_value),
    "--on-error": ("on_error", "fail", ["fail", "skip"]),
    "--retention": ("retention", None, retention_value),
    "--answers": ("answers", "changelog", ["changelog", "points"]),
    "--mode": ("mode", None, ["stream", "batch", "tms", "oneshot"]),
    "--step": ("step", None, int),
    "--window": ("window", None, int),
    "--seed": ("seed", 0, int),
    "--models": ("models", 1, int),
}


def build_parser(*, light: bool = False, command: str | None = None) -> argparse.ArgumentParser:
    """The command line.  ``light``: only the embedded commands (``EMBEDDED``),
    without importing the fleet, backfill and benchmark modules, which import
    the fleet's runtime (pydantic, confluent-kafka, prometheus-client: about
    150 ms; docs/design/layout.md, "Imports") — those commands start faster.
    ``command``: one of the other commands, whose group of modules (``GROUPS``)
    is the only one imported (the benchmarks' modules cost a fleet command
    about 150 ms more); None or an unknown command: all of them."""
    import argparse  # noqa: PLC0415 (start-up: a plain run parses without it, see _plain_run_args)

    parser = argparse.ArgumentParser(prog="chronolog", description="Stream reasoning over timestamped facts.")
    parser.add_argument("--version", action="version", version=f"chronolog {__version__}")
    sub = parser.add_subparsers(dest="command", required=True)

    run = sub.add_parser("run", help="evaluate a program on an input stream (embedded mode, no broker)")
    run.add_argument("program", nargs="+", help="program file(s)")
    run_help: dict[str, dict[str, Any]] = {
        "--input": {"required": True, "help": "input stream file, or - for stdin"},
        "--output": {"help": "answer stream file, or - for stdout (default)"},
        "--dialect": {"help": "rule language (default: by extension)"},
        "--format": {"help": "input format"},
        "--until": {"help": "evaluate up to this time point (DatalogMTL: a rational such as 7/2 too)"},
        "--on-error": {"help": "bad input lines: stop (exit 2) or skip and count"},
        "--retention": {"metavar": "N",
                        "help": "repair late events up to N time points back; older ones are reported and ignored; "
                                "inf: all (default: inf for LARS; for a DatalogMTL stream, the program's reach)"},
        "--answers": {"help": "answer form (default: changelog)"},
        "--mode": {"help": "LARS programs that are not stratified: tms (incremental truth maintenance, the default) "
                           "or oneshot (clingo per time point).  DatalogMTL: stream (answers as time advances; "
                           "forward-propagating programs) or batch (when the input ends); default: stream when "
                           "the program allows it"},
        "--step": {"metavar": "TICKS", "help": "RTEC: evaluate a window once the stream has advanced this much "
                                                "(default: 1000 clock ticks; answers are the same); with --window: "
                                                "the ticks between RTEC's query times"},
        "--window": {"metavar": "TICKS", "help": "RTEC: RTEC's windowed mode: at every --step ticks Q (default: the "
                                                  "window), only the input in (Q-TICKS, Q] counts, older delayed input "
                                                  "is ignored (default: no window, delayed input repaired exactly)"},
        "--seed": {"help": "LARS, --mode tms: the seed of the choices among several answer sets (default 0)"},
        "--models": {"metavar": "N", "help": "LARS, --mode oneshot: N answer sets per time point, each its own "
                                             "answer stream, lines tagged \"model\": k (default 1)"},
    }

    def add_run_options(p: argparse.ArgumentParser) -> None:
        """``run``'s options (input, dialect, format and every option shaping the evaluation)."""
        for option, (_, default, kind) in RUN_OPTIONS.items():
            if option == "--output" and p is not run:
                continue
            given = {k: v for k, v in run_help[option].items() if p is run or k != "required"}
            if isinstance(kind, list):
                p.add_argument(option, default=default, choices=kind, **given)
            elif kind is None:
                p.add_argument(option, default=default, **given)
            else:
                p.add_argument(option, default=default, type=kind, **given)

    add_run_options(run)
    run.add_argument("--upgrade", action="append", metavar="T=FILE[,FILE...]",
                     help="from time T on, the answers of the program in FILE (repeatable, T increasing): "
                          "the old program's answers before T, the new one's from T on")
    run.add_argument("--mark-no-answer-set", action="store_true",
                     help="LARS: write {\"t\": T, \"no_answer_set\": true} into the answers at a time point without "
                          "an answer set (default: the answers hold only answer lines; a warning on stderr says it)")
    run.set_defaults(func=cmd_run)

    check = sub.add_parser("check", help="parse and stratify a program; print its strata")
    check.add_argument("program", nargs="+", help="program file(s)")
    check.add_argument("--dialect", choices=DIALECTS, help="rule language (default: by extension)")
    check.set_defaults(func=cmd_check)
    topo = sub.add_parser("topology", help="print the Kafka topics and services derived from a program")
    topo.add_argument("program", nargs="+", help="program file(s)")
    topo.add_argument("--dialect", choices=DIALECTS, help="rule language (default: by extension)")
    topo.add_argument("--partitions", type=int, default=1, help="parallelism of internal topics and services")
    topo.add_argument("--input-partitions", type=int, default=1, help="partitions of chronolog.facts")
    topo.add_argument("--chain", action="store_true", help="the chained fleet (chronolog up --chain)")
    topo.add_argument("--format", default="text", choices=["text", "mermaid", "helm-values", "compose"],
                      help="text; a Mermaid diagram; Helm values for helm/chronolog; a docker-compose file")
    topo.add_argument("--mount", default="./programs",
                      help="compose: the host folder holding the program files (default ./programs)")
    topo.add_argument("--window", type=int, metavar="TICKS", help="helm-values: every service's --window, as "
                                                                  "`chronolog up --window` (RTEC's windowed mode)")
    topo.add_argument("--step", type=int, metavar="TICKS", help="helm-values: every service's --step, as "
                                                                "`chronolog up --step` (RTEC, with --window)")
    topo.add_argument("--mode", choices=["tms", "oneshot"], help="helm-values, compose: every service's --mode, as "
                                                                 "`chronolog up --mode` (LARS programs that are not "
                                                                 "stratified; default tms)")
    topo.add_argument("--seed", type=int, default=0, help="helm-values, compose: every service's --seed, as "
                                                          "`chronolog up --seed` (default 0)")
    topo.add_argument("--mark-no-answer-set", action="store_true",
                      help="helm-values, compose: every service's --mark-no-answer-set, as `chronolog up`'s")
    topo.set_defaults(func=cmd_topology)

    schemas = sub.add_parser("schemas", help="print or write the JSON Schemas of the topic contracts")
    schemas.add_argument("--write", metavar="DIR", help="write one .schema.json file per contract into DIR")
    schemas.set_defaults(func=cmd_schemas)
    explain.register(sub, add_run_options)

    if light:
        return parser
    group = GROUPS.get(command or "")  # None: every group (the top-level help lists them all)
    if group in (None, "fleet"):
        from chronolog.cli.fleet import add_fleet_commands  # noqa: PLC0415 (start-up: not for the light parser)

        add_fleet_commands(sub)
    if group in (None, "bench"):
        from chronolog.bench.lars import add_parser as add_bench  # noqa: PLC0415 (start-up: only for bench)

        add_bench(sub)
    if group in (None, "backfill"):
        from chronolog.cli import backfill  # noqa: PLC0415 (start-up: only for backfill and archive)

        backfill.register(sub)
    if group in (None, "upgrade"):
        from chronolog.cli import upgrade  # noqa: PLC0415 (start-up: only for upgrade)

        upgrade.register(sub)
    return parser


def _plain_run_args(argv: list[str]) -> SimpleNamespace | None:
    """The parsed arguments of a plain ``chronolog run`` command line, as argparse
    would parse them, without building the parser (about 10 ms of start-up with
    the imports of argparse, gettext, locale and shutil).

    Plain: ``run``, one group of program files, and options of RUN_OPTIONS
    spelled out in full, each followed by a valid value that does not start
    with "-" (except "-" itself).  None for anything else (help, abbreviations,
    ``--opt=value``, ``--``, bad or missing values, a second group of files):
    argparse parses and reports those."""
    if argv[:1] != ["run"]:
        return None
    values: dict[str, object] = {dest: default for dest, default, _ in RUN_OPTIONS.values()}
    programs: list[str] = []
    groups = 0  # runs of consecutive program files
    last = 0  # index of the latest program file
    i, n = 1, len(argv)
    while i < n:
        arg = argv[i]
        if not arg:
            return None
        if arg[0] != "-":
            if last != i - 1 or not programs:
                groups += 1
            programs.append(arg)
            last = i
            i += 1
            continue
        spec = RUN_OPTIONS.get(arg)
        if spec is None or i + 1 == n:
            return None
        dest, _, kind = spec
        value: Any = argv[i + 1]
        if not value or (value[0] == "-" and value != "-"):
            return None
        if callable(kind):
            try:
                value = kind(value)
            except ValueError:
                return None
        elif isinstance(kind, list) and value not in kind:
            return None
        values[dest] = value
        i += 2
    if groups != 1 or values["input"] is None:
        return None
    return SimpleNamespace(command="run", program=programs, **values, upgrade=None, mark_no_answer_set=False,
                           func=cmd_run)


def main(argv: Sequence[str] | None = None) -> int:
    """Run one subcommand; the exit status (0 ok, 2 user error, 130 interrupted)."""
    argv = sys.argv[1:] if argv is None else list(argv)
    args = _plain_run_args(argv) or build_parser(light=argv[:1] != [] and argv[0] in EMBEDDED,
                                                            command=argv[0] if argv else None).parse_args(argv)
    try:
        return int(args.func(args) or 0)
    except ChronologError as exc:
        _error(str(exc))
        return EXIT_USAGE
    except BrokenPipeError:  # the reader went away (e.g. `| head`): stop quietly
        with contextlib.suppress(Exception):
            os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())
        return 0
    except OSError as exc:
        name = f"{exc.filename}: " if getattr(exc, "filename", None) else ""
        _error(f"{name}error: {exc.strerror or exc}")
        return EXIT_USAGE
    except KeyboardInterrupt:
        return 130


def _error(line: str) -> None:
    with contextlib.suppress(OSError):
        print(line, file=sys.stderr, flush=True)


class FileError(ChronologError):
    """An input or output file that cannot be opened: ``path: error: ...``."""

    def __init__(self, path: str, what: str, exc: OSError) -> None:
        super().__init__(f"{path}: error: cannot {what}: {exc.strerror or exc}")


@contextlib.contextmanager
def _open_in(path: str) -> Iterator[IO[str]]:
    """The input stream, decoded as UTF-8; undecodable bytes reach the reader, which reports their line."""
    if path == "-":
        with contextlib.suppress(AttributeError, ValueError):
            sys.stdin.reconfigure(encoding="utf-8", errors="surrogateescape")  # type: ignore[union-attr]
        yield sys.stdin
        return
    try:
        f = open(path, encoding="utf-8", errors="surrogateescape")  # noqa: SIM115 (closed below)
    except OSError as exc:
        raise FileError(path, "read the input", exc) from None
    with f:
        yield f


@contextlib.contextmanager
def _open_out(path: str) -> Iterator[IO[str]]:
    """The answer stream: stdout (UTF-8) or a file, both buffered."""
    if path == "-":
        with contextlib.suppress(AttributeError, ValueError):
            sys.stdout.reconfigure(encoding="utf-8")  # type: ignore[union-attr]
        yield sys.stdout
        sys.stdout.flush()
        return
    try:
        f = open(path, "w", encoding="utf-8", buffering=1 << 20)  # noqa: SIM115 (closed below)
    except OSError as exc:
        raise FileError(path, "write the output", exc) from None
    with f:
        yield f


def _progress(stream: IO[str], path: str) -> contextlib.AbstractContextManager:
    """A progress bar (bytes read) on stderr for a regular input file when stderr is a terminal."""
    if path == "-" or not sys.stderr.isatty() or not os.path.isfile(path):
        return contextlib.nullcontext(stream)
    from rich.console import Console  # noqa: PLC0415 (rich: ~25 ms, only with a terminal)
    from rich.progress import (  # noqa: PLC0415
        BarColumn,
        DownloadColumn,
        Progress,
        TextColumn,
        TimeRemainingColumn,
    )

    progress = Progress(
        TextColumn("reading {task.description}"), BarColumn(), DownloadColumn(), TimeRemainingColumn(),
        console=Console(stderr=True), transient=True, redirect_stdout=False,  # stdout carries the answers
    )
    buffer = getattr(stream, "buffer", None)

    def tracked(task: TaskID) -> Iterator[str]:
        for n, line in enumerate(stream, 1):
            yield line
            if not n & 4095 and buffer is not None:
                progress.update(task, completed=buffer.tell())

    @contextlib.contextmanager
    def bar() -> Iterator[Iterable[str]]:
        with progress:
            yield tracked(progress.add_task(os.path.basename(path), total=os.path.getsize(path)))

    return bar()


def _same_file(a: str, b: str) -> bool:
    try:
        return os.path.samefile(a, b)
    except OSError:
        return False


class _Skipped:
    """The reader's report of each bad line skipped (``--on-error skip``), counted."""

    def __init__(self) -> None:
        self.count = 0

    def __call__(self, message: str) -> None:
        self.count += 1
        _error(message)


def _read_ahead(args: argparse.Namespace, report: _Skipped) -> readahead.ReadAhead | None:
    """A large regular JSONL input file is decoded by a child process, started
    before the program is loaded so that the two overlap (io/readahead.py);
    None where that does not apply (then the input is opened as usual, and its
    errors come after the program's)."""
    if args.input == "-" or args.format != "jsonl" or sys.stderr.isatty():  # a progress bar reads the lines
        return None
    row = ROWS.get(dialect_for(args.program[0], args.dialect)) if args.program else None
    if row is None or not row.read_ahead:  # another reader: the child's work would be wasted
        return None
    if not readahead.usable(args.input):
        return None
    try:
        stream = open(args.input, encoding="utf-8", errors="surrogateescape")  # noqa: SIM115 (closed below)
    except OSError:
        return None
    with stream:
        reader = EventReader(stream, args.input, "jsonl", on_error=args.on_error, report=report, raw=cast(IO[bytes], stream.buffer))
        return readahead.ReadAhead(reader)


def cmd_run(args: argparse.Namespace) -> int:
    report = _Skipped()
    ahead = _read_ahead(args, report)
    try:
        return _run(args, ahead, report)
    finally:
        if ahead is not None:
            ahead.close()


def evaluator_for(args: argparse.Namespace, warn: Callable[[str], None]) -> tuple[Any, Any, RunOptions, Evaluator]:
    """The program of ``args`` and its row's evaluator with ``run``'s options (refused with the
    reason where the dialect cannot take one): what ``run`` and ``explain`` evaluate with."""
    program = load_program(args.program, args.dialect)
    row = lookup(program.dialect)
    options = RunOptions.of(args)
    why = refusal(row, options)
    if why is not None:
        raise ChronologError(why)
    until = getattr(args, "until", None)
    if until is not None and type(until) is not int and not row.rational:
        raise ChronologError(f"error: --until {until}: the time points of {row.title} programs are integers")
    return program, row, options, row.evaluator(program, options, warn)


def _run(args: argparse.Namespace, ahead: readahead.ReadAhead | None, report: _Skipped) -> int:
    """``chronolog run`` for every dialect: its row's evaluator, its reader, the one loop."""
    program, row, options, evaluator = evaluator_for(args, _error)  # program errors before any input is read
    if args.upgrade:
        from chronolog.runtime.upgrade import upgraded  # noqa: PLC0415 (start-up: ~5 ms, only with --upgrade)

        evaluator = upgraded(program, evaluator, options, args.upgrade, args.dialect, _error)
    if args.input != "-" and args.output != "-" and _same_file(args.input, args.output):
        raise FileError(args.output, "write the output", OSError(0, "it is the input file"))
    collecting = collecting_rarely if row.collect_rarely else contextlib.nullcontext  # else the evaluator's own policy
    mark = bool(getattr(args, "mark_no_answer_set", False))  # no_answer_set lines among the answers (opt-in)
    if ahead is not None:  # decoded by a second process
        with _open_out(args.output) as out, collecting():
            stats = run_evaluator(evaluator, iter(ahead), out, until=args.until, warn=_error, mark=mark)
            del evaluator  # freed while the collector is off (else its first collection walks all it holds)
    else:
        with _open_in(args.input) as raw, _progress(raw, args.input) as stream:
            name = "<stdin>" if args.input == "-" else args.input
            # A regular file is read in blocks (from its bytes unless a progress bar counts the
            # lines); a pipe line by line, so that answers follow the input as it arrives.
            regular = args.input != "-" and os.path.isfile(args.input)
            read = (row.bulk_read or row.read) if regular else row.read
            events = read(program, stream, name, args.format, args.on_error, report)
            with _open_out(args.output) as out, collecting():
                stats = run_evaluator(evaluator, events, out, until=args.until, warn=_error, mark=mark)
                del evaluator, events  # (as above)
    if report.count:
        _error(f"skipped {report.count} bad input lines")
    if stats.too_late and options.window is not None:
        _error(f"ignored {stats.too_late} events older than the window (--window {args.window}): "
               f"they arrived after RTEC forgets their time")
    elif stats.too_late:
        _error(f"ignored {stats.too_late} events older than --retention {args.retention}")
    if stats.unmatched_retractions:
        _error(f"ignored {stats.unmatched_retractions} retractions that matched no event")
    return 0


def cmd_check(args: argparse.Namespace) -> int:
    program = load_program(args.program, args.dialect)
    for line in lookup(program.dialect).describe(program):
        print(line)
    return 0


def cmd_topology(args: argparse.Namespace) -> int:
    from chronolog.runtime.fleet.topology import build_topology  # noqa: PLC0415 (pydantic: ~100 ms that run and check do not need)

    program = load_program(args.program, args.dialect)
    layout = lookup(program.dialect).layout(program, RunOptions())
    if args.mode is not None or args.seed or args.mark_no_answer_set or args.window is not None or args.step is not None:
        from chronolog.cli.fleet import fleet_layout  # noqa: PLC0415 (the fleet's imports: only with its options)

        layout = fleet_layout(args)  # --window, --step, --mode, --seed refused where `chronolog up` refuses them
    if args.format == "text":
        for line in layout.about():  # a dialect without strata of its own: what the program is, then its fleet
            print(line)
        if layout.unavailable is not None:
            return 0  # the description said why it has no fleet (batch only)
    layout.require()
    if args.format == "compose" and not layout.per_stratum:
        raise ChronologError(f"error: a {program.dialect} program runs as one chain service: use "
                             f"docker-compose.chain.yml, or --format helm-values")
    topology = build_topology(layout, args.partitions, args.input_partitions, chain=args.chain)
    from chronolog.runtime.fleet.deploy import Evaluation, compose_file, helm_values  # noqa: PLC0415 (pydantic: ~100 ms that run and check do not need)

    evaluation = Evaluation(args.mode, args.seed, args.mark_no_answer_set, args.window, args.step)
    if args.format == "helm-values":
        print(helm_values(topology, args.program, args.dialect, args.partitions, args.input_partitions,
                          "chronolog", args.chain or not layout.per_stratum, evaluation), end="")
    elif args.format == "compose":

        if args.chain or args.partitions != 1:
            raise ChronologError("error: --format compose writes the per-stratum layout on one partition "
                                 "(use docker-compose.chain.yml for the chained one)")
        print(compose_file(topology, args.program, args.dialect, args.mount, evaluation), end="")
    else:
        print(topology.mermaid() if args.format == "mermaid" else topology.describe(), end="")
    return 0


def cmd_schemas(args: argparse.Namespace) -> int:
    from chronolog.contract.models import json_schemas, write_schemas  # noqa: PLC0415 (pydantic: ~100 ms that run and check do not need)

    if args.write:
        for path in write_schemas(args.write):
            print(path)
    else:
        for name, text in json_schemas().items():
            print(f"# {name}\n{text}")
    return 0
