"""``chronolog`` subcommands: thin wrappers that parse arguments and call the library.

Every user error (bad program, bad input line, unreadable file) ends as one
``file:line:col: error: ...`` line on stderr and exit status 2, never a
traceback.
"""

from __future__ import annotations

import argparse
import contextlib
import os
import sys
from typing import IO, Iterator, Sequence

from chronolog import __version__
from chronolog.errors import ChronologError

EXIT_USAGE = 2


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(prog="chronolog", description="Stream reasoning over timestamped facts.")
    parser.add_argument("--version", action="version", version=f"chronolog {__version__}")
    sub = parser.add_subparsers(dest="command", required=True)

    run = sub.add_parser("run", help="evaluate a program on an input stream (embedded mode, no broker)")
    run.add_argument("program", nargs="+", help="program file(s)")
    run.add_argument("--input", required=True, help="input stream file, or - for stdin")
    run.add_argument("--output", default="-", help="answer stream file, or - for stdout (default)")
    run.add_argument("--dialect", choices=["lars", "laser", "mtl", "rtec"], help="rule language (default: by extension)")
    run.add_argument("--format", default="jsonl", choices=["jsonl", "lines", "meteor", "rtec"], help="input format")
    run.add_argument("--until", type=int, help="evaluate up to this time point")
    run.add_argument("--on-error", default="fail", choices=["fail", "skip"], help="bad input lines: stop (exit 2) or skip and count")
    run.add_argument("--retention", type=int, metavar="N",
                     help="repair late events up to N time points back; older ones are reported and ignored (default: unlimited)")
    run.add_argument("--answers", default="changelog", choices=["changelog", "points"], help="answer form (default: changelog)")
    run.set_defaults(func=cmd_run)

    check = sub.add_parser("check", help="parse and stratify a program; print its strata")
    check.add_argument("program", nargs="+")
    check.add_argument("--dialect", choices=["lars", "laser", "mtl", "rtec"])
    check.set_defaults(func=cmd_check)
    topo = sub.add_parser("topology", help="print the Kafka topics and services derived from a program")
    topo.add_argument("program", nargs="+")
    topo.add_argument("--dialect", choices=["lars", "laser", "mtl", "rtec"])
    topo.add_argument("--partitions", type=int, default=1, help="parallelism of internal topics and services")
    topo.add_argument("--input-partitions", type=int, default=1, help="partitions of chronolog.facts")
    topo.add_argument("--format", default="text", choices=["text", "mermaid"], help="text, or a Mermaid diagram")
    topo.set_defaults(func=cmd_topology)

    schemas = sub.add_parser("schemas", help="print or write the JSON Schemas of the topic contracts")
    schemas.add_argument("--write", metavar="DIR", help="write one .schema.json file per contract into DIR")
    schemas.set_defaults(func=cmd_schemas)
    return parser


def main(argv: Sequence[str] | None = None) -> int:
    args = build_parser().parse_args(argv)
    try:
        return int(args.func(args) or 0)
    except ChronologError as exc:
        print(str(exc), file=sys.stderr)
        return EXIT_USAGE
    except BrokenPipeError:  # the reader went away (e.g. `| head`): stop quietly
        with contextlib.suppress(Exception):
            os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())
        return 0
    except OSError as exc:
        name = f"{exc.filename}: " if getattr(exc, "filename", None) else ""
        print(f"{name}error: {exc.strerror or exc}", file=sys.stderr)
        return EXIT_USAGE
    except KeyboardInterrupt:
        return 130


@contextlib.contextmanager
def _open_in(path: str) -> Iterator[IO[str]]:
    if path == "-":
        yield sys.stdin
    else:
        with open(path, encoding="utf-8") as f:
            yield f


@contextlib.contextmanager
def _open_out(path: str) -> Iterator[IO[str]]:
    if path == "-":
        yield sys.stdout
        sys.stdout.flush()
    else:
        with open(path, "w", encoding="utf-8", buffering=1 << 20) as f:
            yield f


def _progress(stream: IO[str], path: str) -> contextlib.AbstractContextManager:
    """A progress bar on stderr for regular input files when stderr is a terminal."""
    if path == "-" or not sys.stderr.isatty() or not os.path.isfile(path):
        return contextlib.nullcontext(stream)
    from rich.progress import Progress

    progress = Progress(transient=True, console=None)

    @contextlib.contextmanager
    def bar() -> Iterator[IO[str]]:
        with progress:
            task = progress.add_task("reading", total=os.path.getsize(path))

            class Tracked:
                def __iter__(self) -> Iterator[str]:
                    for line in stream:
                        progress.advance(task, len(line))
                        yield line

            yield Tracked()  # type: ignore[misc]

    return bar()


def cmd_run(args: argparse.Namespace) -> int:
    from chronolog.io.formats import EventReader
    from chronolog.lang import load_program
    from chronolog.runtime.embedded import run_embedded

    program = load_program(args.program, args.dialect)
    report = lambda msg: print(msg, file=sys.stderr)  # noqa: E731
    with _open_in(args.input) as raw, _progress(raw, args.input) as stream:
        name = "<stdin>" if args.input == "-" else args.input
        reader = EventReader(stream, name, args.format, on_error=args.on_error, report=report)
        with _open_out(args.output) as out:
            stats = run_embedded(
                program, reader, out, answers=args.answers, until=args.until, retention=args.retention, warn=report
            )
    if reader.skipped:
        print(f"skipped {reader.skipped} bad input lines", file=sys.stderr)
    if stats.too_late:
        print(f"ignored {stats.too_late} events older than --retention {args.retention}", file=sys.stderr)
    if stats.unmatched_retractions:
        print(f"ignored {stats.unmatched_retractions} retractions that matched no event", file=sys.stderr)
    return 0


def cmd_check(args: argparse.Namespace) -> int:
    from chronolog.engine.plan import plan_program
    from chronolog.lang import load_program

    program = load_program(args.program, args.dialect)
    plan = plan_program(program)
    for i, stratum in enumerate(plan.strata, 1):
        print(f"stratum {i}: {', '.join(stratum)}")
    print(f"output predicates: {', '.join(sorted(f'{p}/{k}' for p, k in plan.output)) or '(none)'}")
    inputs = sorted(f"{p}/{k}" for p, k in plan.extensional if "#" not in p)
    print(f"input predicates: {', '.join(inputs) or '(none)'}")
    if plan.stratified:
        print("stratified: evaluated incrementally")
    else:
        print("non-stratified: evaluated with clingo per time point")
    return 0


def cmd_topology(args: argparse.Namespace) -> int:
    from chronolog.engine.plan import plan_program
    from chronolog.lang import load_program
    from chronolog.topology import build_topology

    topology = build_topology(plan_program(load_program(args.program, args.dialect)), args.partitions, args.input_partitions)
    print(topology.mermaid() if args.format == "mermaid" else topology.describe(), end="")
    return 0


def cmd_schemas(args: argparse.Namespace) -> int:
    from pathlib import Path

    from chronolog.schemas import json_schemas, write_schemas

    if args.write:
        for path in write_schemas(Path(args.write)):
            print(path)
    else:
        for name, text in json_schemas().items():
            print(f"# {name}\n{text}")
    return 0
