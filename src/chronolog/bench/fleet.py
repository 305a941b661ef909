"""``chronolog bench fleet``: the Kafka fleet against embedded mode on one workload.

Throughput: the whole stream is published at once; the fleet's time is from
the first publish until the answer of the last time point is on the answer
topic; embedded mode evaluates the same lines in-process (JSON decoding
included).  Latency: events are published at a fixed rate; a time point's
answer latency is from the publish of the first event of the next point
(which closes it) until its first answer line is consumed from the answer
topic — what a user watching ``chronolog tail`` waits.  Both runs use a
fresh fleet on the bundled broker (or ``--bootstrap``).
"""

from __future__ import annotations

import argparse
import contextlib
import io
import math
import os
import random
import statistics
import sys
import tempfile
import threading
import time
from collections.abc import Iterator
from pathlib import Path

import orjson
from rich.console import Console
from rich.table import Table

from chronolog.bench.breakdown import scrape
from chronolog.bench.breakdown import table as hop_table
from chronolog.bench.floor import TRANSACTIONS, floor_latency
from chronolog.bench.pacing import latencies, publish_paced
from chronolog.bench.stages import stage_cpu
from chronolog.contract.topics import TopicNames
from chronolog.dialects.lars.layout import lars_layout
from chronolog.dialects.lars.parser import parse_lars
from chronolog.dialects.lars.partition import partition_key
from chronolog.dialects.lars.plan import plan_program
from chronolog.dialects.load import load_program
from chronolog.dialects.registry import RunOptions, lookup
from chronolog.io.formats import read_events
from chronolog.runtime.embedded import run_embedded
from chronolog.runtime.fleet import kafka_clients
from chronolog.runtime.fleet.config import commit_gap_for
from chronolog.runtime.fleet.kafka_clients import PUBLISH_LINGER_MS
from chronolog.runtime.fleet.supervisor import Fleet
from chronolog.runtime.fleet.topology import build_topology

FACTS = TopicNames().facts

PROGRAM = """\
% bench fleet: every time point yields answer lines (seen), two strata
seen(X) :- p(X, V) [0].
high(X) :- p(X, V) [5], V > 50.
quiet(X) :- high(X), not seen(X).
"""


POINTS_PROGRAM = """\
% bench fleet --workload points: ten events per time point (a clock fact, six
% window facts, three join facts), two strata, a top answer at every point
recent(X) :- win(X) [3].
pair(X, Y) :- link(X, Y) [0], recent(Y).
busy :- pair(X, Y).
idle(T) :- clock(T) [0], not busy.
ok(T) :- clock(T) [0], busy.
"""


def points_workload(tps: int, seed: int = 1) -> list[bytes]:
    """Many time points, few events each: the cost per time point dominates."""
    lines = []
    for t in range(tps):
        lines.append(orjson.dumps({"t": t, "pred": "clock", "args": [t]}))
        lines += [orjson.dumps({"t": t, "pred": "win", "args": [f"w{(t + i) % 20}"]}) for i in range(6)]
        lines += [orjson.dumps({"t": t, "pred": "link", "args": [f"l{t % 7}{i}", f"w{(t + 2 * i) % 20}"]})
                  for i in range(3)]
    return lines


WORKLOADS = {"default": "events keyed by X over a two-stratum program", "points": "10 events per time point"}
# time points of each workload's throughput stream: the points workload is
# issue 17's "10,000 time points x 10 events"; a fleet run takes seconds, so
# filling and draining its five-hop pipeline is not most of what is measured
TPS = {"default": 2000, "points": 10000}


def workload(tps: int, per_tp: int, seed: int = 1) -> list[bytes]:
    rng = random.Random(seed)
    return [
        orjson.dumps({"t": t, "pred": "p", "args": [f"k{t}-{i}", rng.randint(0, 100)]})
        for t in range(tps)
        for i in range(per_tp)
    ]


def _answer_time(line: bytes) -> int:
    rec = orjson.loads(line)
    if "t" in rec:
        return int(rec["t"])
    return int(rec["interval"][1:].split(",")[0])


class _Answers(threading.Thread):
    """Consumes the answer topic; remembers when each answer time was first seen."""

    def __init__(self, bootstrap: str, topic: str, wait_ms: int, only: int | None = None) -> None:
        """``only``: watch for that time alone.  The watcher shares the two cores
        with the fleet it measures, so it looks at the last line of each consumed
        batch only: the throughput run has no late events, so output publishes
        answers in time order, and the batch whose last line is at ``only`` or
        later holds the first line of ``only`` (searching every line for it cost
        the watcher 0.2 CPU-s per 80,000 lines, 0.07-0.11 s this way)."""
        super().__init__(daemon=True)
        self.bootstrap, self.topic, self.wait_ms, self.only = bootstrap, topic, wait_ms, only
        self.first_seen: dict[int, float] = {}
        self.stop = False
        self.lines = 0

    def run(self) -> None:
        from confluent_kafka import OFFSET_BEGINNING, TopicPartition  # noqa: PLC0415 (confluent-kafka: ~80 ms, only with a broker)

        consumer = kafka_clients.consumer({"bootstrap.servers": self.bootstrap, "group.id": f"bench-{os.getpid()}",
                             "enable.auto.commit": False, "isolation.level": "read_committed",
                             "fetch.wait.max.ms": self.wait_ms})  # how often an idle watcher asks the broker
        consumer.assign([TopicPartition(self.topic, 0, OFFSET_BEGINNING)])
        only = self.only
        while not self.stop:
            msgs = kafka_clients.take(consumer)
            now = time.monotonic()
            self.lines += len(msgs)
            if only is not None:
                last = next((m for m in reversed(msgs) if not m.error()), None)
                if last is not None and _answer_time(last.value()) >= only:
                    self.first_seen.setdefault(only, now)
                continue
            for msg in msgs:
                if not msg.error():
                    self.first_seen.setdefault(_answer_time(msg.value()), now)
        consumer.close()


@contextlib.contextmanager
def _running(work: Path, name: str, bootstrap: str | None, partitions: int,
             chain: bool, wait_ms: int, only: int | None = None,
             breakdown: list | None = None, linger_ms: float = PUBLISH_LINGER_MS) -> Iterator[tuple[_Answers, object]]:
    """A fresh fleet on the bench program, an answer-topic watcher and a producer;
    the fleet is stopped on leaving.  The watcher shares the machine with the
    fleet: ``wait_ms`` is its fetch wait (the time resolution of what it sees,
    against the CPU its fetches cost the broker)."""
    program = str(work / "bench.lars")
    parsed = load_program([program])
    fleet = Fleet([program], lookup(parsed.dialect).layout(parsed, RunOptions()), work / f"state-{name}", bootstrap=bootstrap,
                  partitions=partitions, idle_flush=0.5, chain=chain)
    fleet.up(lambda m: None)
    answers = _Answers(str(fleet.bootstrap), TopicNames().answers, wait_ms, only)
    try:
        answers.start()
        time.sleep(1.0)  # the watcher's first fetches (measured: ~0.5 s on tansu) are not the fleet's latency
        # publishes as ``chronolog publish`` does (kafka_clients.PUBLISH_LINGER_MS)
        # unless told otherwise: each batch is an object the bundled broker lists
        # on every fetch past it; the linger is inside the measured latency
        yield answers, kafka_clients.producer({"bootstrap.servers": str(fleet.bootstrap), "linger.ms": linger_ms})
    finally:
        answers.stop = True
        if breakdown is not None:
            breakdown.append(scrape(fleet))
        fleet.down()


def wait_for(first_seen: dict[int, float], t: int, timeout: float) -> None:
    """Until time ``t`` has been seen (a watcher's ``first_seen``) or ``timeout`` seconds."""
    deadline = time.monotonic() + timeout
    while t not in first_seen and time.monotonic() < deadline:
        time.sleep(0.005)


def run_throughput(lines: list[bytes], tps: int, bootstrap: str | None, partitions: int, work: Path,
                   chain: bool = False, breakdown: list | None = None, linger_ms: float = PUBLISH_LINGER_MS) -> float:
    with _running(work, f"throughput-{chain}-{partitions}", bootstrap, partitions, chain, 10, tps - 1,
                  breakdown, linger_ms) as (answers, producer):
        produce = kafka_clients.sender(producer)  # 100,000 events and more: wait when the queue is full
        start = time.monotonic()
        for line in lines:
            produce(FACTS, line)
            producer.poll(0)  # type: ignore[attr-defined]
        produce(FACTS, orjson.dumps({"t": tps}))
        producer.flush(60)  # type: ignore[attr-defined]
        wait_for(answers.first_seen, tps - 1, 600)
        return answers.first_seen.get(tps - 1, time.monotonic()) - start


def run_latency(lines: list[bytes], per_tp: int, rate: float, bootstrap: str | None, partitions: int,
                work: Path, chain: bool = False, breakdown: list | None = None,
                linger_ms: float = PUBLISH_LINGER_MS) -> list[float]:
    with _running(work, f"latency-{chain}-{partitions}", bootstrap, partitions, chain, 2, None, breakdown,
                  linger_ms) as (answers, producer):
        closed_at = publish_paced(producer, FACTS, lines, per_tp, rate)
        wait_for(answers.first_seen, len(lines) // per_tp - 2, ANSWER_WAIT)
        return latencies(closed_at, answers.first_seen)


# how long a latency run waits after its last publish for the last answer
ANSWER_WAIT = 60.0


def windows(lat: list[float], rate: float, per_tp: int, seconds: float = 10.0) -> list[tuple[float, float]]:
    """p50 and p99 of each ``seconds`` of a latency run (points in time order,
    ``rate / per_tp`` a second): whether the answers keep up or fall behind as
    the broker's topics grow (docs/benchmarks.md, round 10)."""
    size = max(1, int(rate / per_tp * seconds))
    return [(_pct(lat[i:i + size], 0.5), _pct(lat[i:i + size], 0.99)) for i in range(0, len(lat), size)]


def _shown(value: float, fmt: str) -> str:
    """A latency by ``fmt``; one of a point never answered is infinite: "unanswered"."""
    return "unanswered" if math.isinf(value) else fmt.format(value)


def _ms(seconds: float) -> str:
    return _shown(seconds * 1000, "{:.0f} ms")


def embedded_seconds(lines: list[bytes], program_text: str) -> float:
    return embedded_run(lines, program_text)[0]


def embedded_run(lines: list[bytes], program_text: str, clock=time.perf_counter) -> tuple[float, list[bytes]]:  # type: ignore[no-untyped-def]
    """Embedded mode on ``lines`` in this process: its time by ``clock`` and its answer lines."""
    text = (b"\n".join(lines) + b"\n").decode()
    program = parse_lars(program_text)
    out = io.StringIO()
    start = clock()
    run_embedded(program, read_events(io.StringIO(text), "<bench>"), out, warn=lambda m: None)
    return clock() - start, out.getvalue().encode().splitlines()


def _pct(values: list[float], q: float) -> float:
    if not values:
        return float("nan")
    values = sorted(values)
    return values[min(len(values) - 1, int(q * len(values)))]


def _spread(values: list[float], fmt: str) -> str:
    """Median, and the range when there are several rounds (``_shown``)."""
    mid = statistics.median(values)
    if len(values) == 1:
        return _shown(mid, fmt)
    return f"{_shown(mid, fmt)} ({_shown(min(values), fmt)}–{_shown(max(values), fmt)})"


def partition_counts(text: str) -> list[int]:
    """``--partitions 1,2``: the partition counts to run, each at least 1."""
    try:
        counts = [int(x) for x in str(text).split(",") if x.strip()]
    except ValueError:
        counts = []
    if not counts or any(n < 1 for n in counts):
        raise argparse.ArgumentTypeError(f"expected partition counts such as 1,2, got {text!r}")
    return counts


def _effective_partitions(program_text: str, asked: int) -> tuple[int, str]:
    """What the fleet really runs for ``asked`` partitions (a program that cannot
    be partitioned runs one), and why when it differs."""
    key, why = partition_key(plan_program(parse_lars(program_text)))
    return (asked, "") if key is not None or asked == 1 else (1, why)


def main(args) -> int:  # type: ignore[no-untyped-def]
    # piped (a file, a test): wide enough that no row name wraps, even with the widest
    # figures ("1,234 ms (1,000 ms–2,000 ms)" in every latency column)
    console = Console(width=None if sys.stdout.isatty() else 260)
    layouts = {"strata": [False], "chain": [True], "both": [False, True]}[args.layout]
    counts = args.partitions if isinstance(args.partitions, list) else [int(args.partitions)]
    points = getattr(args, "workload", "default") == "points"
    per_tp = 10 if points else args.facts
    make = (lambda tps, seed=1: points_workload(tps, seed)) if points else (
        lambda tps, seed=1: workload(tps, args.facts, seed))
    program = POINTS_PROGRAM if points else PROGRAM
    real = {asked: _effective_partitions(program, asked) for asked in counts}
    counts = sorted({got for got, _ in real.values()})  # a program that cannot be partitioned runs one
    runs = [(chain, n) for n in counts for chain in layouts]  # one fleet configuration each
    tps = args.tps or TPS[getattr(args, "workload", "default")]
    lines = make(tps)
    n = len(lines)
    if getattr(args, "stages", False):
        return _print_stages(console, program, lines, args.repeat, "points" if points else "default")
    hops: dict[tuple[bool, int], list] = {r: [] for r in runs} if getattr(args, "breakdown", False) else {}
    emb_rates: list[float] = []
    rates: dict[tuple[bool, int], list[float]] = {r: [] for r in runs}
    ratios: dict[tuple[bool, int], list[float]] = {r: [] for r in runs}
    pcts: dict[tuple[bool, int], dict[float, list[float]]] = {r: {0.5: [], 0.95: [], 0.99: []} for r in runs}

    floors: dict[tuple[tuple[float, ...], str], dict[float, list[float]]] = {
        floor: {0.5: [], 0.95: [], 0.99: []} for floor in floor_runs(program, runs)
    } if getattr(args, "floor", False) else {}
    with tempfile.TemporaryDirectory(prefix="chronolog-bench-") as tmp:
        work = Path(tmp)
        lat_lines = make(max(3, int(args.rate * args.seconds) // per_tp), 2)
        for r in range(args.repeat):  # each round pairs embedded and fleet runs on the same machine state
            here = work / f"round-{r}"
            here.mkdir()
            (here / "bench.lars").write_text(program)
            emb = embedded_seconds(lines, program)
            emb_rates.append(n / emb)
            print(f"round {r + 1}: embedded: {n} events in {emb:.2f} s", file=sys.stderr)
            for run in runs:
                chain, parts = run
                fleet_s = run_throughput(lines, tps, args.bootstrap, parts, here, chain, hops.get(run),
                                         args.linger_ms)
                rates[run].append(n / fleet_s)
                ratios[run].append(emb / fleet_s)
                lat = run_latency(lat_lines, per_tp, args.rate, args.bootstrap, parts, here, chain, hops.get(run),
                                  args.linger_ms)
                for q in pcts[run]:
                    pcts[run][q].append(_pct(lat, q) * 1000)
                missing = sum(math.isinf(x) for x in lat)
                print(f"round {r + 1}: fleet ({_name(run)}): {n} events in {fleet_s:.2f} s; "
                      f"{len(lat)} latency samples, p99 {_ms(_pct(lat, 0.99))}"
                      + (f", {missing} points unanswered {ANSWER_WAIT:g} s after the last publish" if missing else ""),
                      file=sys.stderr)
                if args.seconds >= 20:  # long runs: does the fleet keep up as the topics grow?
                    print(f"round {r + 1}: fleet ({_name(run)}): p50 / p99 by 10 s of the run: " + ", ".join(
                        f"{_ms(a)} / {_ms(b)}" for a, b in windows(lat, args.rate, per_tp)), file=sys.stderr)
            for (gaps, transactions), got in floors.items():  # the same publisher through hops that do nothing

                lat = floor_latency(lat_lines, per_tp, args.rate, list(gaps), args.bootstrap, args.linger_ms,
                                    transactions)[0]
                for q in got:
                    got[q].append(_pct(lat, q) * 1000)
                print(f"round {r + 1}: {_floor_name(gaps, transactions)}: {len(lat)} latency samples, "
                      f"p99 {_ms(_pct(lat, 0.99))}", file=sys.stderr)
    rounds = f", median of {args.repeat} rounds (range)" if args.repeat > 1 else ""
    table = Table(title=f"chronolog bench fleet ({'points' if points else 'default'} workload): "
                        f"{n} events ({tps} time points x {per_tp}), published with linger.ms {args.linger_ms:g}, "
                        f"{os.cpu_count()} cores{rounds}")
    for col in ("mode", "events/s", "ratio to embedded", "answer latency p50", "p95", "p99"):
        table.add_column(col, justify="right", no_wrap=col == "mode")
    table.add_row("embedded (in-process)", _spread(emb_rates, "{:,.0f}"), "1.00", "-", "-", "-")
    for run in runs:
        table.add_row(f"fleet {_name(run)}, full speed", _spread(rates[run], "{:,.0f}"),
                      _spread(ratios[run], "{:.2f}"), "-", "-", "-")
        table.add_row(f"fleet {_name(run)}, {args.rate:,.0f} events/s", "-", "-",
                      *(_spread(pcts[run][q], "{:.0f} ms") for q in (0.5, 0.95, 0.99)))
    for (gaps, transactions), got in floors.items():
        table.add_row(f"{_floor_name(gaps, transactions)}, {args.rate:,.0f} events/s", "-", "-",
                      *(_spread(got[q], "{:.0f} ms") for q in (0.5, 0.95, 0.99)))
    console.print(table)
    if floors:
        console.print("floor: the same publisher through as many hops as the layout's longest path, each "
                      "committing as the service in its place, forwarding without reasoning, one partition; "
                      "exactly-once hops commit a transaction as the services do, hops without transactions "
                      "produce idempotently and wait for the acknowledgement instead: what the transactions "
                      "cost; 'only the last exactly-once': the floor of one transaction per path, at the "
                      "answer topic (bench/floor.py, docs/design/one-transaction.md)")
    for asked, (ran, why) in real.items():
        if ran != asked:
            console.print(f"--partitions {asked}: this program runs as one partition ({why})")
    if hops:
        for run, measured in hops.items():
            console.print(hop_table(f"where the time goes, fleet {_name(run)} (throughput and latency runs; "
                                    f"medians over {len(measured)} runs)", measured))
    return 0


def _print_stages(console, program: str, lines: list[bytes], repeat: int, name: str) -> int:  # type: ignore[no-untyped-def]
    """``--stages``: each stage's CPU without Kafka, least of ``repeat`` rounds (bench/stages.py)."""

    got: dict[str, list[float]] = {}
    for r in range(repeat):
        emb, emb_answers = embedded_run(lines, program, time.process_time)
        cpu, answers = stage_cpu(program, lines)
        if sorted(answers) != sorted(emb_answers):
            console.print(f"error: the stages' {len(answers)} answer lines differ from embedded mode's {len(emb_answers)}")
            return 1
        for stage, seconds in {**cpu, "all stages": sum(cpu.values()), "embedded (in-process)": emb}.items():
            got.setdefault(stage, []).append(seconds * 1000)
        print(f"round {r + 1}: stages {sum(cpu.values()):.2f} CPU-s, embedded {emb:.2f}", file=sys.stderr)
    emb_least = min(got["embedded (in-process)"])
    table = Table(title=f"chronolog bench fleet --stages ({name} workload): {len(lines)} events, the per-stratum "
                        f"stages without Kafka, CPU ms" + (f", least of {repeat} rounds (range)" if repeat > 1 else ""))
    for col in ("stage", "CPU ms", "µs per event", "to embedded"):
        table.add_column(col, justify="right")
    for stage, values in got.items():
        least = min(values)
        spread = f"{least:,.0f} ({least:,.0f}–{max(values):,.0f})" if repeat > 1 else f"{least:,.0f}"
        table.add_row(stage, spread, f"{least * 1000 / len(lines):.1f}", f"{least / emb_least:.2f}")
    console.print(table)
    return 0


def floor_runs(program_text: str, runs: list[tuple[bool, int]]) -> list[tuple[tuple[float, ...], str]]:
    """One floor per distinct path of hops among ``runs`` (shortest first), each with every way of
    committing; "only the last exactly-once" is left out for one hop, where it is "every hop"."""
    return [(gaps, transactions) for gaps in sorted({_hop_gaps(program_text, run) for run in runs}, key=len)
            for transactions in TRANSACTIONS if transactions != "last" or len(gaps) > 1]


def _hop_gaps(program_text: str, run: tuple[bool, int]) -> tuple[float, ...]:
    """The least commit gap of each service from the input to the answer topic in ``run``'s fleet."""
    chain, parts = run
    names = TopicNames()
    path = build_topology(lars_layout(plan_program(parse_lars(program_text))), parts, chain=chain).path(names.facts, names.answers)
    return tuple(commit_gap_for(service.split("-")[0]) for service in path)


def _floor_name(gaps: tuple[float, ...], transactions: str = "every") -> str:
    first = f", the first every {gaps[0] * 1000:g} ms" if gaps and gaps[0] else ""
    hops = f"{len(gaps)} {'exactly-once ' if transactions == 'every' else ''}hop{'s' if len(gaps) > 1 else ''}"
    how = {"every": "", "last": ", only the last exactly-once", "none": " without transactions"}[transactions]
    return f"floor: {hops}{how}{first}"


def _name(run: tuple[bool, int]) -> str:
    chain, parts = run
    return f"{'chained' if chain else 'per stratum'}, {parts} partition{'s' if parts > 1 else ''}"


def add_parser(kinds) -> None:  # type: ignore[no-untyped-def]
    fleet = kinds.add_parser("fleet", help="fleet throughput and end-to-end latency versus embedded mode")
    fleet.add_argument("--tps", type=int, default=None,
                       help="time points of the throughput stream (default 2000; points workload 10000)")
    fleet.add_argument("--facts", type=int, default=10, help="events per time point (default 10)")
    fleet.add_argument("--rate", type=float, default=1000.0, help="events/s of the latency run (default 1000)")
    fleet.add_argument("--seconds", type=float, default=10.0, help="length of the latency run (default 10)")
    fleet.add_argument("--partitions", type=partition_counts, default=[1, 2], metavar="N[,N...]",
                       help="key partitions of the fleet runs, each count a run (default 1,2)")
    fleet.add_argument("--workload", choices=sorted(WORKLOADS), default="default",
                       help="default: --facts events per time point keyed for partitioning; points: many time "
                            "points of 10 events (a clock fact, six window facts, three join facts)")
    fleet.add_argument("--stages", action="store_true",
                       help="instead of fleet runs, each per-stratum stage's CPU on the workload without Kafka "
                            "(one process; least of --repeat rounds), checked against embedded mode's answers")
    fleet.add_argument("--floor", action="store_true",
                       help="also run the latency stream through as many exactly-once hops as each layout's longest "
                            "path, forwarding without reasoning: the broker's and the transactions' share (again "
                            "with only the last hop exactly-once, and with none)")
    fleet.add_argument("--breakdown", action="store_true",
                       help="also print each service's per-hop latency breakdown, from its /metrics")
    fleet.add_argument("--linger-ms", type=float, metavar="MS", default=PUBLISH_LINGER_MS,
                       help=f"the publishing producer's linger.ms, inside the measured latency (default "
                            f"{PUBLISH_LINGER_MS:g}, as chronolog publish)")
    fleet.add_argument("--bootstrap", help="use this Kafka instead of the bundled broker")
    fleet.add_argument("--layout", choices=["strata", "chain", "both"], default="both",
                       help="one service per stratum (chronolog up), chained (up --chain), or both (default)")
    fleet.add_argument("--repeat", type=int, default=1, help="rounds; medians and ranges are printed (default 1)")
    fleet.set_defaults(func=main)
