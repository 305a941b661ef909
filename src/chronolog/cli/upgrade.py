"""``chronolog upgrade NEW_FILE... [--at T] [--dry-run] [--state-dir D | --bootstrap B]``:
change the program of a running fleet from an event time on (docs/fleet/upgrade.md).

Prints the plan first; ``--dry-run`` stops there.  Otherwise it puts the request on the
input topic and waits for the service's outcome on the control topic: exit 0 with the new
program version and T once it is applied, 2 with the reason when it is refused (also for
errors in the new program, another language, a time that is not one), 1 when no service
answers in time.
"""

from __future__ import annotations

import argparse
import json
import os
import sys
from pathlib import Path
from typing import Any

from chronolog.contract.topics import TopicNames
from chronolog.core.errors import ChronologError
from chronolog.dialects.load import DIALECTS, load_program
from chronolog.dialects.registry import RunOptions, lookup
from chronolog.runtime.upgrade import dated_refusal
from chronolog.versions import parse_time

VERSIONS_FILE = "program-versions.jsonl"  # under the state directory: each upgrade applied, oldest first


def register(sub: argparse._SubParsersAction) -> None:
    p = sub.add_parser("upgrade", help="change the program of a running fleet from a time on, its state carried over")
    p.add_argument("program", nargs="+", help="the new program's file(s)")
    p.add_argument("--at", metavar="T", help="the upgrade time, as input times are written (7, 7/2); default: "
                                              "the first time the fleet has not evaluated yet")
    p.add_argument("--dry-run", action="store_true", help="print the plan only (the strata kept, changed, added and "
                   "removed; for a per-stratum fleet, the services and topics up's supervisor starts and creates)")
    p.add_argument("--dialect", choices=DIALECTS, help="rule language (default: by extension)")
    p.add_argument("--state-dir", default=os.environ.get("CHRONOLOG_STATE_DIR", ".chronolog"),
                   help="the running fleet's state directory (default .chronolog, as chronolog up's)")
    p.add_argument("--bootstrap", metavar="HOST:PORT", help="Kafka bootstrap servers (instead of --state-dir)")
    p.add_argument("--topic-prefix", default=None, help="topic prefix (default: the fleet's, else chronolog)")
    p.add_argument("--kafka-config", metavar="FILE", help="librdkafka settings (key=value lines)")
    p.add_argument("--timeout", type=float, default=60.0, metavar="S",
                   help="seconds to wait for the service to apply it (default 60)")
    p.set_defaults(func=cmd_upgrade)


def _sources(paths: list[str]) -> tuple[tuple[str, str], ...]:
    out = []
    for path in paths:
        with open(path, encoding="utf-8") as f:
            out.append((os.path.basename(path), f.read()))
    return tuple(out)


def _running(state_dir: Path, info: dict) -> tuple[list[str] | None, str | None]:
    """The files and dialect of the program the fleet runs now: the latest upgrade applied
    through this state directory, else the program ``up`` started with."""
    files, dialect = info.get("programs"), info.get("dialect")
    log = state_dir / VERSIONS_FILE
    if log.exists():
        for line in log.read_text().splitlines():
            if line.strip():
                files = json.loads(line)["programs"]
    return files, dialect


def _lars_fleet(row: Any, old: Any, new: Any, info: dict) -> int:
    """How many services of a LARS fleet say what they did with the upgrade (a chain per
    partition; a reasoner per stratum and partition); a refusal, before anything is sent,
    for what they cannot do: a fleet known only by its broker, @-heads in a program that is
    not stratified (for one service per stratum ``Dialect.strata_changes`` says what else it
    cannot do).  Whether a finite retention still holds the input the new program needs is
    decided by the services, alike, on ingest's stamp of the request (the plan says how)."""
    if not info:
        raise ChronologError(f"error: a {row.title} fleet is upgraded through its fleet file (--state-dir), which "
                             "says how it runs (chained or one service per stratum)")
    refusal = dated_refusal(new)
    if refusal is not None:
        raise ChronologError(f"error: {refusal}")
    layout = None if old is None else row.layout(old, RunOptions())
    keyed = layout is None or layout.partition_key is not None  # (a program without a key runs one partition)
    partitions = int(info.get("partitions") or 1) if keyed else 1
    if info.get("chain"):
        return partitions
    if layout is None:
        raise ChronologError("error: the fleet file names no program: the strata that change are unknown")
    # every reasoner says what it did: the fleet's (an earlier upgrade may have added some) and the added ones
    return partitions * max(int(info.get("strata") or 0), len(layout.strata), len(row.layout(new, RunOptions()).strata))


def _layout_lines(row: Any, old: Any, new: Any, info: dict, prefix: str) -> list[str]:
    """The plan's lines on the services and topics of a fleet of one service per stratum:
    what ``up``'s supervisor starts and creates for the strata the new program adds."""
    if old is None or info.get("chain") or row.strata is None:
        return []
    before, after = row.layout(old, RunOptions()).strata, row.layout(new, RunOptions()).strata
    running = max(int(info.get("strata") or 0), len(before))
    names = TopicNames(prefix)
    parts = int(info.get("partitions") or 1) if row.layout(old, RunOptions()).partition_key is not None else 1
    where = "partition 0" if parts == 1 else f"partitions 0..{parts - 1}"
    lines = []
    added = range(running + 1, len(after) + 1)
    if added:
        reach = row.reach(new)
        if reach is not None and not reach.facts:  # seeded (dialects/lars/seeds.py, runtime/fleet/join_start.py)
            how = (f"from the upgrade's epoch on: the strata below send them their content, and the lowest its "
                   f"input, from T - {reach.back + 1} on, so nothing of their topics before is read")
        else:
            how = ("from the start of their input topics: the new program reads all earlier input (a window "
                   "without bound, a tuple window or an @-head dating anywhere back)")
        lines.append("  services started by up's supervisor: " + ", ".join(f"reasoner-{k}" for k in added)
                     + f" ({where}; {how})")
        lines.append("  topics created: " + ", ".join(t for k in added for t in (names.stratum(k),
                                                                                 names.changelog(f"reasoner-{k}"))))
    served = set(info.get("served") or {p for s in before for p in s})
    if added or not {p for s in after for p in s} <= served:
        lines.append("  output: restarted by up's supervisor, serving every version's strata and answers")
    if len(after) < running:
        lines.append("  services stopped: none (" + ", ".join(f"reasoner-{k}" for k in range(len(after) + 1, running + 1))
                     + " withdraw their answers from T on and stay for the corrections before T)")
    return lines


def cmd_upgrade(args: argparse.Namespace) -> int:
    from chronolog.runtime.fleet.config import kafka_config  # noqa: PLC0415 (confluent-kafka: only here)
    from chronolog.runtime.fleet.supervisor import read_fleet_file  # noqa: PLC0415
    from chronolog.runtime.fleet.upgrade import (  # noqa: PLC0415
        OutcomeReader,
        RequestSender,
        new_request,
        plan_lines,
    )

    state_dir = Path(args.state_dir)
    info: dict = {}
    if args.bootstrap is None:
        info = read_fleet_file(state_dir)
    bootstrap = args.bootstrap or info["bootstrap"]
    prefix = args.topic_prefix or info.get("prefix", "chronolog")
    old_files, old_dialect = _running(state_dir, info) if info else (None, None)
    new = load_program(args.program, args.dialect)  # errors: file:line:col, exit 2
    row = lookup(new.dialect)
    old = None
    if old_files:
        old = load_program(old_files, old_dialect)
        if lookup(old.dialect).title != row.title:
            raise ChronologError(f"error: a {row.title} program cannot replace the fleet's "
                                 f"{lookup(old.dialect).title} program (an upgrade keeps the language)")
    services = _lars_fleet(row, old, new, info) if row.strata is not None else 1
    if info.get("window") is not None:
        raise ChronologError("error: a fleet in RTEC's windowed mode (--window) cannot change its program while running")
    if args.at is not None:
        parse_time(args.at, not row.rational, "--at")
    conf = kafka_config(args.kafka_config)
    sender = None if args.dry_run else RequestSender(bootstrap, prefix, conf)  # connects while the plan is made
    reader = None if args.dry_run else OutcomeReader(bootstrap, prefix, conf)  # and reads the control topic
    if sender is not None:
        sender.look_up()  # (connected meanwhile)
    sources = _sources(args.program)
    old_sources = _sources(old_files) if old_files else None
    stamped = row.strata is not None  # a LARS fleet: its ingest stamps the input retained on the request
    for line in plan_lines(old, old_sources, new, sources, args.at, info.get("retention"), bool(info.get("chain", True)),
                           stamped, int(info.get("input_partitions") or 1)):
        print(line, flush=True)
    for line in _layout_lines(row, old, new, info, prefix) if info else ():
        print(line, flush=True)
    if sender is None or reader is None:
        return 0
    request = new_request(sources, new.dialect, args.at)
    sender.send(request)
    print(f"requested upgrade {request.id} on {bootstrap}; waiting for the service", file=sys.stderr, flush=True)
    outcome = reader.wait(request, args.timeout, services)
    if "refused" in outcome:
        raise ChronologError(f"upgrade refused by the {outcome.get('service', '?')} service: {outcome['refused']}")
    if info:
        with open(state_dir / VERSIONS_FILE, "a", encoding="utf-8") as f:
            f.write(json.dumps({"id": request.id, "version": outcome["version"], "at": outcome["at"],
                                "programs": [os.path.abspath(p) for p in args.program]}) + "\n")
    at = outcome["at"] if outcome["at"] is not None else "the start of the stream"
    print(f"upgraded: program version {outcome['version']} from T={at}", flush=True)
    for line in kept_lines(outcome.get("outcomes", [outcome])):
        print(line, flush=True)
    return 0


def kept_lines(outcomes: list[dict]) -> list[str]:
    """What the services that keep unchanged strata did with them (``UpgradeOutcome.kept``):
    the plan's "keeps its state" holds where the running version can hand its state over
    when the request is applied; where it cannot, the service evaluated the new program whole
    on the retained input — the same answers, more work — and the user is told so."""
    out = []
    for got in outcomes:
        kept = got.get("kept")
        if kept is None:
            continue
        service = got.get("service", "?")
        if kept:
            out.append(f"  {service}: kept with their state: {', '.join(kept)}")
        else:
            out.append(f"  {service}: evaluated the new program whole on the retained input (the unchanged strata "
                       "could not be handed over at that moment, e.g. late events not evaluated yet); the answers "
                       "are the same")
    return out



