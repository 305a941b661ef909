"""``chronolog explain``: why an answer changed (``--changes ATOM@T``), embedded or on a fleet.

Embedded (``PROGRAM... --input S``): the answer lines ``run`` writes (with the same options)
that cover ATOM at T, each with the input events whose arrival caused it.  On a running
fleet (no ``--input``; ``--state-dir`` or ``--bootstrap``): the same from its input topic,
read again by offset (no service stops, nothing is written), program upgrades included.
``--why`` and ``--why-not``: the derivation of ATOM at T, or why it has none, against the
same evaluation (``runtime/explain.py``; on a fleet, the program version in force at T)."""

from __future__ import annotations

import argparse
import os
import sys
from collections.abc import Callable
from pathlib import Path
from typing import Any

from chronolog.core import explanation, explanation_page
from chronolog.core.errors import ChronologError


def register(sub: argparse._SubParsersAction, add_run_options: Callable[[argparse.ArgumentParser], None]) -> None:
    p = sub.add_parser("explain", help="why an answer holds, why not, or why it changed")
    p.add_argument("program", nargs="*", help="program file(s) (on a fleet: default the fleet's)")
    mode = p.add_mutually_exclusive_group(required=True)
    mode.add_argument("--changes", metavar="ATOM@T",
                      help="the answer lines covering ATOM at T, in order, each with the input that caused it")
    mode.add_argument("--why", metavar="ATOM@T", help="the derivation of ATOM at T down to input events")
    mode.add_argument("--why-not", metavar="ATOM@T",
                      help="for each rule whose head matches, the first body literal that fails at T")
    p.add_argument("--as", dest="form", default="text", choices=["text", "json", "dot", "html"],
                   help="output form (default text; dot: a Graphviz graph and html: a page, for --why and --why-not)")
    p.add_argument("--all", action="store_true", help="--why: every derivation, not only a smallest one")
    p.add_argument("--depth", type=int, metavar="N", help="--why: cut the tree N rule applications deep")
    add_run_options(p)
    p.add_argument("--upgrade", action="append", metavar="T=FILE[,FILE...]",
                   help="as run's (with --input): --changes follows the lines run --upgrade writes; --why and "
                        "--why-not explain with the program version in force at T")
    p.add_argument("--mark-no-answer-set", action="store_true",
                   help="as run's: --changes numbers the lines run --mark-no-answer-set writes (on a fleet: "
                        "as its fleet file says)")
    fleet = p.add_argument_group("a running fleet (without --input)")
    fleet.add_argument("--state-dir", default=os.environ.get("CHRONOLOG_STATE_DIR", ".chronolog"),
                       help="the fleet's state directory (default .chronolog, as chronolog up's)")
    fleet.add_argument("--bootstrap", metavar="HOST:PORT", help="Kafka bootstrap servers (with the program files)")
    fleet.add_argument("--topic-prefix", default=None, help="topic prefix (default: the fleet's, else chronolog)")
    fleet.add_argument("--kafka-config", metavar="FILE", help="librdkafka settings (key=value lines)")
    p.set_defaults(func=cmd_explain)


def cmd_explain(args: argparse.Namespace) -> int:
    if getattr(args, "models", 1) != 1:
        raise ChronologError("error: explain follows one answer stream: --models N (several answer sets per time "
                             "point, each its own stream) is not taken; --seed picks the one to explain")
    return _explain(args)


def _explain(args: argparse.Namespace) -> int:
    from chronolog.runtime.explain import render_json, render_text  # noqa: PLC0415

    if args.upgrade and args.input is None:
        raise ChronologError("error: --upgrade goes with --input (a running fleet's explanation follows the "
                             "upgrades the fleet applied)")
    if args.changes is None:
        return _why(args)
    if args.form in ("dot", "html"):
        raise ChronologError(f"error: --as {args.form} draws the tree of --why or --why-not; --changes is a list "
                             "(--as text or json)")
    found, query = (_embedded(args) if args.input is not None else _fleet(args))
    sys.stdout.write((render_json if args.form == "json" else render_text)(query, found))
    return 0


def _embedded(args: argparse.Namespace) -> tuple[Any, Any]:  # (changes, query)
    from chronolog.cli.main import _error, _open_in, evaluator_for  # noqa: PLC0415 (cli.main imports this module)
    from chronolog.runtime.explain import changes, parse_query, with_lines  # noqa: PLC0415
    from chronolog.runtime.upgrade import upgraded  # noqa: PLC0415

    if not args.program:
        raise ChronologError("error: explain --input needs the program file(s)")
    program, row, options, evaluator = evaluator_for(args, lambda m: None)
    if args.upgrade:  # the lines `run --upgrade` writes
        evaluator = upgraded(program, evaluator, options, args.upgrade, args.dialect, _error)
    query = parse_query(args.changes, integral=not row.rational)
    skipped: list[str] = []
    with _open_in(args.input) as stream:
        name = "<stdin>" if args.input == "-" else args.input
        events = with_lines(row.read, program, name, stream, args.format, args.on_error, skipped.append)
        found = changes(evaluator, events, query, until=args.until, mark=args.mark_no_answer_set)
    for message in skipped:
        _error(message)
    return found, query


def _why(args: argparse.Namespace) -> int:
    """``--why`` / ``--why-not``: the tree, or exit 1 saying the atom does (not) hold."""
    import msgspec  # noqa: PLC0415

    from chronolog.cli.main import _error, _open_in, evaluator_for  # noqa: PLC0415 (cli.main imports this module)
    from chronolog.runtime.explain import NotSo, explain, in_force, parse_query, with_lines  # noqa: PLC0415
    from chronolog.runtime.upgrade import new_versions  # noqa: PLC0415

    mode, text = ("why", args.why) if args.why is not None else ("why-not", args.why_not)
    if args.input is None:
        programs, row, options, events, query = _why_on_fleet(args, text)
    else:
        if not args.program:
            raise ChronologError("error: explain --input needs the program file(s)")
        first, row, options, _ = evaluator_for(args, lambda m: None)
        query = parse_query(text, integral=not row.rational)
        skipped: list[str] = []
        with _open_in(args.input) as stream:
            name = "<stdin>" if args.input == "-" else args.input
            events = list(with_lines(row.read, first, name, stream, args.format, args.on_error, skipped.append))
        for message in skipped:
            _error(message)
        programs = [(None, first), *((at, new) for at, _, new in new_versions(first, args.upgrade or [], args.dialect))]
    # the version in force at T (the last upgrade at or before it), as on a fleet; where a
    # version dates atoms back, run --upgrade's answers, each evaluation with its own version
    program, fresh, versions = in_force(row, programs, query.t,
                                        lambda p: row.evaluator(p, options, lambda m: None))  # (run's options)
    evaluator = fresh()
    try:
        node = explain(row, program, evaluator, events, query, mode, args.all, args.depth, fresh, versions)
    except NotSo as exc:
        print(str(exc), file=sys.stderr, flush=True)
        return 1
    # --all: every derivation, each a tree (the dialect gathers them under one "alternatives" node)
    trees = node.children if args.all and mode == "why" and node.kind == "alternatives" else [node]
    if args.form == "json":  # one node; --all: a list of them (schemas/explanation.schema.json)
        data = [tree.data() for tree in trees] if args.all and mode == "why" else node.data()
        sys.stdout.write(msgspec.json.encode(data).decode() + "\n")
    elif args.form == "dot":
        sys.stdout.write(explanation.dot(trees))
    elif args.form == "html":
        sys.stdout.write(explanation_page.page(trees, f"chronolog explain --{mode} {query.text}", query.t))
    else:
        sys.stdout.write(explanation.text(trees))
    return 0


def _fleet_input(args: argparse.Namespace, text: str) -> tuple[Any, ...]:  # what a fleet's explanation reads
    """A running fleet's program (the one it started with), the query, its input topic's
    records and the outcomes of program upgrades, and the service options of its fleet file."""
    import orjson  # noqa: PLC0415

    from chronolog.contract.topics import TopicNames  # noqa: PLC0415
    from chronolog.dialects.load import load_program  # noqa: PLC0415
    from chronolog.dialects.registry import lookup  # noqa: PLC0415
    from chronolog.runtime.explain import parse_query  # noqa: PLC0415
    from chronolog.runtime.fleet.config import kafka_config  # noqa: PLC0415
    from chronolog.runtime.fleet.supervisor import read_fleet_file  # noqa: PLC0415
    from chronolog.runtime.fleet.topic_reader import read_topic  # noqa: PLC0415

    info: dict = {} if args.bootstrap else read_fleet_file(Path(args.state_dir))
    bootstrap = args.bootstrap or info["bootstrap"]
    prefix = args.topic_prefix or info.get("prefix", "chronolog")
    files = args.program or info.get("programs")  # the program it started with: upgrades are on its input
    if not files:
        raise ChronologError("error: name the fleet's program files (the fleet file names none)")
    program = load_program(files, args.dialect or info.get("dialect"))
    row = lookup(program.dialect)
    query = parse_query(text, integral=not row.rational)
    names = TopicNames(prefix)
    conf = kafka_config(args.kafka_config)
    outcomes = {}
    for _, _, _, value, _ in read_topic(bootstrap, names.control, conf):
        got = orjson.loads(value)
        if isinstance(got, dict) and "upgrade" in got:
            outcomes[str(got["upgrade"])] = got
    retention = info.get("retention") if args.retention is None else args.retention
    mark = args.mark_no_answer_set or bool(info.get("mark_no_answer_set"))  # (the answer topic's lines)
    return (program, row, query, read_topic(bootstrap, names.facts, conf), outcomes, retention, info.get("window"),
            mark)


def _fleet(args: argparse.Namespace) -> tuple[Any, Any]:  # (changes, query)
    from chronolog.dialects.registry import RunOptions, read_line, upgrader  # noqa: PLC0415
    from chronolog.runtime.explain import changes, fleet_changes, topic_events  # noqa: PLC0415
    from chronolog.stages.interface import StageSpec  # noqa: PLC0415

    program, row, query, records, outcomes, retention, window, mark = _fleet_input(args, args.changes)
    spec = StageSpec("chain", retention=retention, window=window if window is not None else args.window,
                     step=args.step)
    read = lambda line, where: read_line(row.name, program, line, where)  # noqa: E731
    if row.strata is None or _upgraded(records, outcomes):
        # a chain service hosting the evaluator: as it evaluates, upgrades included (a LARS
        # fleet's strata, upgraded, mean what its chain service writes: docs/fleet/upgrade.md)
        return fleet_changes(records, read, upgrader(row, program, spec), outcomes, query, mark), query
    # LARS's strata: their answers mean what run prints on the input (CONTRACT section 4)
    options = RunOptions(mode=args.mode, seed=args.seed, retention=retention)
    return changes(row.evaluator(program, options, lambda m: None), topic_events(records, read), query,
                   mark=mark), query


def _upgraded(records: list, outcomes: dict[str, dict]) -> bool:
    """Whether the input topic holds an upgrade request the fleet applied."""
    from chronolog.runtime.explain import applied_upgrade  # noqa: PLC0415

    return any(applied_upgrade(value, outcomes, set()) is not None for _, _, _, value, _ in records)


def _why_on_fleet(args: argparse.Namespace, text: str) -> tuple[Any, ...]:  # (programs, row, options, events, query)
    """What ``--why`` / ``--why-not`` read on a running fleet: its input topic, and the program
    versions it applied, each from its T on (``at`` None: from the start, in place of all
    before), for ``in_force`` to choose from as embedded ``--upgrade``'s (contract section 6),
    with the fleet's options."""
    from chronolog.dialects.registry import RunOptions, read_line  # noqa: PLC0415
    from chronolog.runtime.explain import applied_upgrade, topic_events  # noqa: PLC0415
    from chronolog.versions import parse_time  # noqa: PLC0415

    program, row, query, records, outcomes, retention, *_ = _fleet_input(args, text)
    programs: list[tuple[Any, Any]] = [(None, program)]
    applied: set[str] = set()
    for _, _, _, value, _ in records:
        got = applied_upgrade(value, outcomes, applied)
        if got is None:
            continue
        request, outcome = got
        at = outcome.get("at")
        new = row.parse(list(request.sources))
        if at is None:
            programs = [(None, new)]
        else:
            programs.append((parse_time(at, not row.rational, "upgrade"), new))
    options = RunOptions(mode=args.mode, seed=args.seed, retention=retention)
    events = list(topic_events(records, lambda line, where: read_line(row.name, program, line, where)))
    return programs, row, options, events, query
