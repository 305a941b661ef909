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

import contextlib
import io
import os
import statistics
import sys
import tempfile
import threading
import time
from pathlib import Path
from typing import Iterator

import orjson

PROGRAM = """\
% bench fleet: every time point yields answer lines (seen), two strata
seen(X) :- p(X, V) [0].
high(X) :- p(X, V) [5], V > 50.
quiet(X) :- high(X), not seen(X).
"""


def workload(tps: int, per_tp: int, seed: int = 1) -> list[bytes]:
    import random

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
        """``only``: watch for that time alone, by a byte search instead of decoding
        every line (the watcher shares the machine with the fleet)."""
        super().__init__(daemon=True)
        self.bootstrap, self.topic, self.wait_ms, self.only = bootstrap, topic, wait_ms, only
        self.first_seen: dict[int, float] = {}
        self.stop = False
        self.lines = 0

    def run(self) -> None:
        from confluent_kafka import OFFSET_BEGINNING, Consumer, TopicPartition

        consumer = Consumer({"bootstrap.servers": self.bootstrap, "group.id": f"bench-{os.getpid()}",
                             "enable.auto.commit": False, "isolation.level": "read_committed",
                             "fetch.wait.max.ms": self.wait_ms})  # tansu answers a fetch only when its wait ends
        consumer.assign([TopicPartition(self.topic, 0, OFFSET_BEGINNING)])
        needles = () if self.only is None else (f'"t":{self.only},'.encode(), f'"[{self.only},'.encode())
        while not self.stop:
            msgs = consumer.consume(1000, 0.01)
            now = time.monotonic()
            self.lines += len(msgs)
            for msg in msgs:
                if msg.error():
                    continue
                value = msg.value()
                if not needles:
                    self.first_seen.setdefault(_answer_time(value), now)
                elif any(n in value for n in needles):
                    self.first_seen.setdefault(self.only, now)  # type: ignore[arg-type]
        consumer.close()


@contextlib.contextmanager
def _running(work: Path, name: str, bootstrap: str | None, partitions: int,
             chain: bool, wait_ms: int, only: int | None = None) -> Iterator[tuple["_Answers", object]]:
    """A fresh fleet on the bench program, an answer-topic watcher and a producer;
    the fleet is stopped on leaving.  The watcher shares the machine with the
    fleet: ``wait_ms`` is its fetch wait (the time resolution of what it sees,
    against the CPU its fetches cost the broker)."""
    from confluent_kafka import Producer

    from chronolog.engine.plan import plan_program
    from chronolog.lang import load_program
    from chronolog.runtime.supervisor import Fleet

    program = str(work / "bench.lars")
    fleet = Fleet([program], plan_program(load_program([program])), work / f"state-{name}", bootstrap=bootstrap,
                  partitions=partitions, idle_flush=0.5, chain=chain)
    fleet.up(lambda m: None)
    answers = _Answers(str(fleet.bootstrap), "chronolog.answers", wait_ms, only)
    try:
        answers.start()
        time.sleep(1.0)  # the watcher's first fetches (measured: ~0.5 s on tansu) are not the fleet's latency
        yield answers, Producer({"bootstrap.servers": str(fleet.bootstrap), "linger.ms": 1})
    finally:
        answers.stop = True
        fleet.down()


def _wait_for(answers: "_Answers", t: int, timeout: float) -> None:
    deadline = time.monotonic() + timeout
    while t not in answers.first_seen and time.monotonic() < deadline:
        time.sleep(0.005)


def run_throughput(lines: list[bytes], tps: int, bootstrap: str | None, partitions: int, work: Path,
                   chain: bool = False) -> float:
    with _running(work, f"throughput-{chain}", bootstrap, partitions, chain, 10, tps - 1) as (answers, producer):
        start = time.monotonic()
        for line in lines:
            producer.produce("chronolog.facts", line)  # type: ignore[attr-defined]
            producer.poll(0)  # type: ignore[attr-defined]
        producer.produce("chronolog.facts", orjson.dumps({"t": tps}))  # type: ignore[attr-defined]
        producer.flush(60)  # type: ignore[attr-defined]
        _wait_for(answers, tps - 1, 600)
        return answers.first_seen.get(tps - 1, time.monotonic()) - start


def run_latency(lines: list[bytes], per_tp: int, rate: float, bootstrap: str | None, partitions: int,
                work: Path, chain: bool = False) -> list[float]:
    with _running(work, f"latency-{chain}", bootstrap, partitions, chain, 2) as (answers, producer):
        closed_at: dict[int, float] = {}
        start = time.monotonic()
        for n, line in enumerate(lines):
            due = start + n / rate
            while (now := time.monotonic()) < due:
                time.sleep(min(0.001, due - now))
            if n % per_tp == 0 and n:
                closed_at[n // per_tp - 1] = time.monotonic()
            producer.produce("chronolog.facts", line)  # type: ignore[attr-defined]
            producer.poll(0)  # type: ignore[attr-defined]
        producer.flush(30)  # type: ignore[attr-defined]
        _wait_for(answers, len(lines) // per_tp - 2, 60)
        return [answers.first_seen[t] - c for t, c in closed_at.items() if t in answers.first_seen]


def embedded_seconds(lines: list[bytes], program_text: str) -> float:
    from chronolog.io.formats import read_events
    from chronolog.lang.lars import parse_lars
    from chronolog.runtime.embedded import run_embedded

    text = (b"\n".join(lines) + b"\n").decode()
    program = parse_lars(program_text)
    start = time.perf_counter()
    run_embedded(program, read_events(io.StringIO(text), "<bench>"), io.StringIO(), warn=lambda m: None)
    return time.perf_counter() - start


def _pct(values: list[float], q: float) -> float:
    if not values:
        return float("nan")
    values = sorted(values)
    return values[min(len(values) - 1, int(q * len(values)))]


def _spread(values: list[float], fmt: str) -> str:
    """Median, and the range when there are several rounds."""
    mid = statistics.median(values)
    if len(values) == 1:
        return fmt.format(mid)
    return f"{fmt.format(mid)} ({fmt.format(min(values))}–{fmt.format(max(values))})"


def main(args) -> int:  # type: ignore[no-untyped-def]
    from rich.console import Console
    from rich.table import Table

    console = Console(width=None if sys.stdout.isatty() else 200)
    lines = workload(args.tps, args.facts)
    n = len(lines)
    layouts = {"strata": [False], "chain": [True], "both": [False, True]}[args.layout]
    emb_rates: list[float] = []
    rates: dict[bool, list[float]] = {c: [] for c in layouts}
    ratios: dict[bool, list[float]] = {c: [] for c in layouts}
    pcts: dict[bool, dict[float, list[float]]] = {c: {0.5: [], 0.95: [], 0.99: []} for c in layouts}
    with tempfile.TemporaryDirectory(prefix="chronolog-bench-") as tmp:
        work = Path(tmp)
        lat_lines = workload(max(3, int(args.rate * args.seconds) // args.facts), args.facts, seed=2)
        for r in range(args.repeat):  # each round pairs embedded and fleet runs on the same machine state
            here = work / f"round-{r}"
            here.mkdir()
            (here / "bench.lars").write_text(PROGRAM)
            emb = embedded_seconds(lines, PROGRAM)
            emb_rates.append(n / emb)
            print(f"round {r + 1}: embedded: {n} events in {emb:.2f} s", file=sys.stderr)
            for chain in layouts:
                name = "chained" if chain else "per stratum"
                fleet_s = run_throughput(lines, args.tps, args.bootstrap, args.partitions, here, chain)
                rates[chain].append(n / fleet_s)
                ratios[chain].append(emb / fleet_s)
                lat = run_latency(lat_lines, args.facts, args.rate, args.bootstrap, args.partitions, here, chain)
                for q in pcts[chain]:
                    pcts[chain][q].append(_pct(lat, q) * 1000)
                print(f"round {r + 1}: fleet ({name}): {n} events in {fleet_s:.2f} s; "
                      f"{len(lat)} latency samples, p99 {_pct(lat, 0.99) * 1000:.0f} ms", file=sys.stderr)
    rounds = f", median of {args.repeat} rounds (range)" if args.repeat > 1 else ""
    table = Table(title=f"chronolog bench fleet: {n} events ({args.tps} time points x {args.facts}), "
                        f"{args.partitions} partition(s), {os.cpu_count()} cores{rounds}")
    for col in ("mode", "events/s", "ratio to embedded", "answer latency p50", "p95", "p99"):
        table.add_column(col, justify="right")
    table.add_row("embedded (in-process)", _spread(emb_rates, "{:,.0f}"), "1.00", "-", "-", "-")
    for chain in layouts:
        name = "chained" if chain else "per stratum"
        table.add_row(f"fleet {name}, full speed", _spread(rates[chain], "{:,.0f}"),
                      _spread(ratios[chain], "{:.2f}"), "-", "-", "-")
        table.add_row(f"fleet {name}, {args.rate:,.0f} events/s", "-", "-",
                      *(_spread(pcts[chain][q], "{:.0f} ms") for q in (0.5, 0.95, 0.99)))
    console.print(table)
    return 0


def add_parser(kinds) -> None:  # type: ignore[no-untyped-def]
    fleet = kinds.add_parser("fleet", help="fleet throughput and end-to-end latency versus embedded mode")
    fleet.add_argument("--tps", type=int, default=2000, help="time points of the throughput stream (default 2000)")
    fleet.add_argument("--facts", type=int, default=10, help="events per time point (default 10)")
    fleet.add_argument("--rate", type=float, default=1000.0, help="events/s of the latency run (default 1000)")
    fleet.add_argument("--seconds", type=float, default=10.0, help="length of the latency run (default 10)")
    fleet.add_argument("--partitions", type=int, default=1, help="key partitions of the fleet runs (default 1)")
    fleet.add_argument("--bootstrap", help="use this Kafka instead of the bundled broker")
    fleet.add_argument("--layout", choices=["strata", "chain", "both"], default="both",
                       help="one service per stratum (chronolog up), chained (up --chain), or both (default)")
    fleet.add_argument("--repeat", type=int, default=1, help="rounds; medians and ranges are printed (default 1)")
    fleet.set_defaults(func=main)
