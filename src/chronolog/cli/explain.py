"""``chronolog explain PROGRAM... --input S --changes ATOM@T [--as text|json]``: why an answer
changed — the answer lines ``run`` writes (with the same options) that cover ATOM at T, each
with the input events whose arrival caused it (``runtime/explain.py``).  ``--why`` and
``--why-not`` are named in the command line and refused until they are built."""

from __future__ import annotations

import argparse
import sys

from chronolog.core.errors import ChronologError


def register(sub: argparse._SubParsersAction, add_run_options) -> None:  # noqa: ANN001 (cli.main's helper)
    p = sub.add_parser("explain", help="why an answer holds, why not, or why it changed (embedded)")
    p.add_argument("program", nargs="+", help="program file(s)")
    mode = p.add_mutually_exclusive_group(required=True)
    mode.add_argument("--changes", metavar="ATOM@T",
                      help="the answer lines covering ATOM at T, in order, each with the input that caused it")
    mode.add_argument("--why", metavar="ATOM@T", help="the derivation of ATOM at T (not built yet)")
    mode.add_argument("--why-not", metavar="ATOM@T", help="why ATOM does not hold at T (not built yet)")
    p.add_argument("--as", dest="form", default="text", choices=["text", "json"], help="output form (default text)")
    add_run_options(p)
    p.set_defaults(func=cmd_explain)


def cmd_explain(args: argparse.Namespace) -> int:
    from chronolog.cli.main import _error, _open_in  # noqa: PLC0415 (cli.main imports this module)
    from chronolog.dialects.load import load_program  # noqa: PLC0415
    from chronolog.dialects.registry import RunOptions, lookup, refusal  # noqa: PLC0415
    from chronolog.runtime.explain import (  # noqa: PLC0415
        changes,
        parse_query,
        render_json,
        render_text,
        with_lines,
    )

    if args.changes is None:
        flag = "--why" if args.why is not None else "--why-not"
        raise ChronologError(f"error: {flag} is not built yet (issue 38); --changes ATOM@T is")
    program = load_program(args.program, args.dialect)
    row = lookup(program.dialect)
    options = RunOptions.of(args)
    why = refusal(row, options)
    if why is not None:
        raise ChronologError(why)
    query = parse_query(args.changes, integral=not row.rational)
    evaluator = row.evaluator(program, options, lambda m: None)
    skipped = []
    with _open_in(args.input) as stream:
        name = "<stdin>" if args.input == "-" else args.input
        events = with_lines(row.read, program, name, stream, args.format, args.on_error, skipped.append)
        found = changes(evaluator, events, query, until=args.until)
    for message in skipped:
        _error(message)
    sys.stdout.write((render_json if args.form == "json" else render_text)(query, found))
    return 0
