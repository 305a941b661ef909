"""``chronolog bench upgrade``: a running fleet's program change (``chronolog upgrade``, issue 37)
against starting the new program cold, and the answer latency while it happens.

For each dialect row and each change (the top stratum only, the bottom stratum), on a real
fleet (``chronolog up``'s supervisor on the bundled broker, or ``--bootstrap``):

1. a fleet of the old program is started and a stream of ``--tps`` time points is published at
   once (the retained input);
2. points are then published at ``--rate`` events a second; a third of the way through the
   upgrade request is sent with T in the middle of the retained input (a restatement: every
   answer from T on is withdrawn and given again by the new program);
3. **upgrade**: from sending the request to the arrival of the last corrected answer, i.e. the
   last answer line at a time before the paced points that arrives after the request (the
   restatement is one transaction, so it is the end of it);
4. **cold**: in the same round, a fresh fleet of the new program is given the same input the
   old one had when the request was sent (published at once, then a time advance): from the
   first publish to the answer of the last point;
5. **latency**: each paced point's answer latency (from the publish that closes it to its first
   answer line on the answer topic, as ``bench fleet`` measures it): steady state (the points
   closed before the request) against the points closed while the upgrade ran (from the
   request to its last corrected answer, at least the first point closed after the request),
   and the points closed after it (the old version goes on evaluating beside the new one).

The targets (issue 37): upgrade / cold at most 0.2 for a top-stratum change; the p99 during
an upgrade at most one commit interval (``CHRONOLOG_COMMIT_INTERVAL``, 0.5 s by default)
above the steady-state p99.  A dialect is one ``Case`` row in ``CASES``.
"""

from __future__ import annotations

import math
import os
import statistics
import sys
import tempfile
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass
from fractions import Fraction
from pathlib import Path
from typing import Any

import orjson
from rich.console import Console
from rich.table import Table

from chronolog.bench.process import BenchError
from chronolog.contract.topics import TopicNames
from chronolog.core.errors import ChronologError
from chronolog.dialects.load import load_program
from chronolog.dialects.registry import RunOptions, lookup
from chronolog.runtime.fleet import kafka_clients
from chronolog.runtime.fleet.broker import LocalBroker
from chronolog.runtime.fleet.config import ServiceConfig
from chronolog.runtime.fleet.supervisor import Fleet
from chronolog.runtime.fleet.topic_reader import from_the_start
from chronolog.runtime.fleet.upgrade import OutcomeReader, RequestSender, new_request
from chronolog.versions import UpgradeRequest

KEYS = 10  # the keys (DatalogMTL constants, RTEC doors) the workloads cycle through


@dataclass(frozen=True)
class Case:
    """A dialect's row: the old program, the same with its top stratum changed and with its
    bottom stratum changed, and the events of each time point ``t``, which give an answer
    line starting at ``t + shift`` (what a point's latency waits for)."""

    title: str
    ext: str
    old: str
    top: str
    bottom: str
    events: Callable[[int], list[dict[str, Any]]]
    shift: int = 0
    changes: tuple[str, str] = ("top stratum", "bottom stratum")  # what the two changes change, as the table says


MTL_OLD = """\
% bench upgrade: Seen answers every point; Q (bottom) feeds S (top)
Seen(T) :- Clock(T)
Q(X) :- Diamondminus[0,2] P(X)
S(X) :- Q(X), R(X)
"""


def _mtl_events(t: int) -> list[dict[str, Any]]:
    return [{"t": t, "pred": "Clock", "args": [t]}, {"t": t, "pred": "P", "args": [f"k{t % KEYS}"]},
            {"t": t, "pred": "R", "args": [f"k{(3 * t) % KEYS}"]}]


_DOORS = "".join(f"door(d{i}).\n" for i in range(KEYS))
RTEC_OLD = f"""\
% bench upgrade: open and armed (bottom) feed alarm (top)
initiatedAt(open(D)=true, T) :- happensAt(opened(D), T).
terminatedAt(open(D)=true, T) :- happensAt(closed(D), T).
initiatedAt(armed(D)=true, T) :- happensAt(arm(D), T).
terminatedAt(armed(D)=true, T) :- happensAt(disarm(D), T).
holdsFor(alarm(D)=true, I) :- holdsFor(open(D)=true, A), holdsFor(armed(D)=true, B), intersect_all([A,B], I).
{_DOORS}grounding(open(D)=true) :- door(D).
grounding(armed(D)=true) :- door(D).
grounding(alarm(D)=true) :- door(D).
"""


def _rtec_events(t: int) -> list[dict[str, Any]]:
    """Door ``t mod KEYS`` opens at t (open from t + 1: a line at every point), another closes."""
    out = [{"t": t, "pred": "opened", "args": [f"d{t % KEYS}"]},
           {"t": t, "pred": "closed", "args": [f"d{(t + KEYS // 2) % KEYS}"]}]
    if t % 3 == 0:
        out.append({"t": t, "pred": "arm" if t % 2 else "disarm", "args": [f"d{(t // 3) % KEYS}"]})
    return out


LARS_OLD = """\
% bench upgrade: tick answers every point; q (bottom) feeds s (top)
tick(T) :- clock(T) [0].
q(X) :- p(X) [2].
s(X) :- q(X), r(X) [0].
"""


def _lars_events(t: int) -> list[dict[str, Any]]:
    return [{"t": t, "pred": "clock", "args": [t]}, {"t": t, "pred": "p", "args": [f"k{t % KEYS}"]},
            {"t": t, "pred": "r", "args": [f"k{(3 * t) % KEYS}"]}]


# LARS's strata are those of negation: LARS_OLD's q and s are one stratum (one reasoner service),
# so its "top" change re-evaluates that whole stratum from T on; here s, negating b, is a stratum
# of its own (a second reasoner service), and its change re-evaluates only it.  This is the LARS
# row by default: a change of "only the top stratum" (issue 37's target) needs a program with two
# strata at least, and LARS_OLD has one
LARS_STRATA_OLD = """\
% bench upgrade: two strata; tick, q and b the lower one, s (negating b) the top one
tick(T) :- clock(T) [0].
q(X) :- p(X) [2].
b(X) :- r(X) [0].
s(X) :- q(X), not b(X).
"""

CASES: dict[str, Case] = {
    "mtl": Case("DatalogMTL", "mtl", MTL_OLD,
                MTL_OLD.replace("S(X) :- Q(X), R(X)", "S(X) :- Q(X), Diamondminus[0,1] R(X)"),
                MTL_OLD.replace("Diamondminus[0,2] P(X)", "Diamondminus[0,4] P(X)"), _mtl_events),
    "rtec": Case("RTEC", "prolog", RTEC_OLD,
                 RTEC_OLD.replace("intersect_all([A,B], I)", "union_all([A,B], I)"),
                 RTEC_OLD.replace("happensAt(arm(D), T)", "happensAt(opened(D), T)"), _rtec_events, shift=1),
    "lars": Case("LARS, one stratum", "lars", LARS_OLD, LARS_OLD.replace("r(X) [0].", "r(X) [1]."),
                 LARS_OLD.replace("p(X) [2].", "p(X) [4]."), _lars_events,
                 changes=("s's rule (its only stratum)", "q's rule (its only stratum)")),
    "lars-strata": Case("LARS, two strata", "lars", LARS_STRATA_OLD,
                        LARS_STRATA_OLD.replace("not b(X).", "not b(X), X != k0."),
                        LARS_STRATA_OLD.replace("p(X) [2].", "p(X) [4]."), _lars_events),
}
DEFAULT = ("mtl", "rtec", "lars-strata")  # (lars: a LARS program of one stratum, s's and q's rules changed)
CHANGES = ("top", "bottom")


def _lines(case: Case, first: int, last: int) -> list[tuple[int, bytes]]:
    """(time point, input line) of the points ``first`` .. ``last - 1``."""
    return [(t, orjson.dumps(ev)) for t in range(first, last) for ev in case.events(t)]


def _start(line: bytes) -> int:
    """The (integer part of the) time an answer line starts at."""
    rec = orjson.loads(line)
    if "t" in rec:
        return int(rec["t"])
    return math.floor(Fraction(rec["interval"][1:].split(",")[0]))


class _Watcher(threading.Thread):
    """Every line of the answer topic as (arrival, start time), and each start time's first arrival."""

    def __init__(self, bootstrap: str, topic: str) -> None:
        super().__init__(daemon=True)
        self.bootstrap, self.topic = bootstrap, topic
        self.seen: list[tuple[float, int]] = []
        self.first: dict[int, float] = {}
        self.stop = False
        self.ready = threading.Event()

    def run(self) -> None:
        consumer = from_the_start(self.bootstrap, self.topic, {}, "bench-upgrade")
        self.ready.set()
        try:
            while not self.stop:
                msgs = kafka_clients.take(consumer, 1000, 0.005)
                now = time.monotonic()
                for msg in msgs:
                    if msg.error() or not msg.value():
                        continue
                    t = _start(msg.value())
                    self.seen.append((now, t))
                    self.first.setdefault(t, now)
        finally:
            consumer.close()

    def wait_for(self, t: int, timeout: float) -> float:
        """When a line starting at ``t`` first arrived (a ``BenchError`` after ``timeout`` s)."""
        deadline = time.monotonic() + timeout
        while t not in self.first:
            if time.monotonic() > deadline:
                raise BenchError(f"error: no answer at {t} within {timeout:g} s")
            time.sleep(0.005)
        return self.first[t]

    def quiet(self, seconds: float, timeout: float = 60.0) -> None:
        """Until no line arrived for ``seconds``."""
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            last = self.seen[-1][0] if self.seen else 0.0
            if time.monotonic() - last >= seconds:
                return
            time.sleep(0.05)


class _Running:
    """A fleet of one program on a fresh state directory, with its answer watcher and a producer."""

    def __init__(self, program: Path, work: Path, bootstrap: str | None, prefix: str, chain: bool = False) -> None:
        parsed = load_program([str(program)])
        self.fleet = Fleet([str(program)], lookup(parsed.dialect).layout(parsed, RunOptions()), work,
                           bootstrap=bootstrap, idle_flush=0.5, prefix=prefix, chain=chain)
        self.prefix = prefix
        self.names = TopicNames(prefix)
        self.steps = (math.nan, math.nan)  # an upgrade's: seconds to the request's delivery, to its outcome

    def __enter__(self) -> _Running:
        self.fleet.up(lambda m: None)
        self.bootstrap = str(self.fleet.bootstrap)
        self.watcher = _Watcher(self.bootstrap, self.names.answers)
        self.watcher.start()
        self.watcher.ready.wait(30)
        self.producer = kafka_clients.producer({"bootstrap.servers": self.bootstrap, "linger.ms": 1})
        self.produce = kafka_clients.sender(self.producer)
        return self

    def publish(self, lines: list[bytes]) -> None:
        for line in lines:
            self.produce(self.names.facts, line)
            self.producer.poll(0)
        self.producer.flush(60)

    def __exit__(self, *exc: object) -> None:
        self.watcher.stop = True
        self.fleet.down()


@dataclass
class Result:
    upgrade: float  # seconds from the request to the last corrected answer
    cold: float  # seconds from the first publish to the last answer, new program, fresh fleet
    retained: int  # input lines the old fleet had when the request was sent
    corrected: int  # answer lines at retained times that arrived after the request
    steady: list[float]  # answer latencies (s) of points closed before the request
    during: list[float]  # ... closed while the upgrade ran
    later: list[float]  # ... closed after it (both versions evaluate what comes: versions.Versions)


def run_case(case: Case, change: str, tps: int, rate: float, seconds: float, work: Path,
             bootstrap: str | None, say: Callable[[str], None], prefix: str = "bench", chain: bool = False) -> Result:
    """One paired measurement (module docstring); its two fleets' topics are named
    ``PREFIX-upgrade.*`` and ``PREFIX-cold.*``; ``chain``: both fleets ``up --chain``'s."""
    work.mkdir(parents=True)
    old, new = work / f"old.{case.ext}", work / f"new.{case.ext}"
    old.write_text(case.old)
    new.write_text(case.top if change == "top" else case.bottom)
    per_tp = len(case.events(0))
    points = max(4, int(rate * seconds / per_tp))
    at = tps // 2
    with _Running(old, work / "upgrade", bootstrap, f"{prefix}-upgrade", chain) as fleet:
        bulk = _lines(case, 0, tps)
        fleet.publish([line for _, line in bulk] + [orjson.dumps({"t": tps})])
        fleet.watcher.wait_for(tps - 1 + case.shift, 300)
        fleet.watcher.quiet(0.5)
        request = new_request(((new.name, new.read_text()),), load_program([str(new)]).dialect, str(at))
        sent, published, closed, outcome = _paced(fleet, case, tps, points, rate, request)
        if "refused" in outcome:
            raise BenchError(f"error: the upgrade was refused: {outcome['refused']}")
        fleet.watcher.wait_for(tps + points - 2 + case.shift, 120)
        fleet.watcher.quiet(1.0)
        fixed = [arrived for arrived, t in fleet.watcher.seen if arrived > sent and t < tps]
        if not fixed:
            raise BenchError("error: no corrected answer arrived after the upgrade")
        done = max(fixed)
        retained = len(bulk) + published
        lat = {p: fleet.watcher.first.get(p + case.shift, math.inf) - c for p, c in closed.items()}
        steps = fleet.steps
    steady = [x for p, x in lat.items() if closed[p] < sent]
    after = sorted((c, p) for p, c in closed.items() if c >= sent)
    during = [lat[p] for c, p in after if c <= done] or [lat[p] for _, p in after[:1]]
    later = [lat[p] for c, p in after[len(during):]]
    say(f"{case.title} ({change}): upgrade {done - sent:.2f} s (request delivered after {steps[0]:.2f} s, the "
        f"outcome read from the control topic after {steps[1]:.2f} s), {len(fixed)} corrected lines")
    cold = _cold(case, new, work / "cold", bootstrap, retained, tps, points, f"{prefix}-cold", chain)
    say(f"{case.title} ({change}): cold start {cold:.2f} s, ratio {(done - sent) / cold:.2f}")
    return Result(done - sent, cold, retained, len(fixed), steady, during, later)


def _paced_lines(case: Case, tps: int, points: int) -> list[tuple[int, bytes]]:
    return _lines(case, tps, tps + points)


def _paced(fleet: _Running, case: Case, tps: int, points: int, rate: float,
           request: UpgradeRequest) -> tuple[float, int, dict[int, float], dict[str, Any]]:
    """The paced points published (as ``bench fleet``'s latency run), the request sent a third
    of the way through from another thread: when it was sent, the paced lines published before,
    when each point was closed (the first line of the next one published), and the service's
    outcome."""
    lines = _paced_lines(case, tps, points)
    send_at = len(lines) // 3
    got: dict[str, Any] = {}

    sender = RequestSender(fleet.bootstrap, fleet.prefix, {})  # as chronolog upgrade does, before its plan
    reader = OutcomeReader(fleet.bootstrap, fleet.prefix, {})
    sender.look_up()

    def upgrade() -> None:  # as chronolog upgrade does, after printing its plan
        got["sent"] = time.monotonic()
        try:
            sender.send(request)
            got["delivered"] = time.monotonic()
            got["outcome"] = reader.wait(request, 60)
        except ChronologError as exc:  # (a fleet whose services do not take upgrades: none answers)
            got["error"] = str(exc)
        got["applied"] = time.monotonic()

    asking = threading.Thread(target=upgrade, daemon=True)
    closed: dict[int, float] = {}
    start = time.monotonic()
    previous = tps
    for n, (t, line) in enumerate(lines):
        due = start + n / rate
        while (now := time.monotonic()) < due:
            time.sleep(min(0.001, due - now))
        if n == send_at:
            asking.start()
        if t != previous:
            closed[previous] = time.monotonic()
            previous = t
        fleet.produce(fleet.names.facts, line)
        fleet.producer.poll(0)
    closed[previous] = time.monotonic()
    fleet.produce(fleet.names.facts, orjson.dumps({"t": previous + 1}))
    fleet.producer.flush(30)
    asking.join(90)
    if "outcome" not in got:
        raise BenchError(got.get("error", "error: the upgrade was not applied within 60 s"))
    fleet.steps = (got["delivered"] - got["sent"], got["applied"] - got["sent"])
    return got["sent"], send_at, closed, got["outcome"]


def _cold(case: Case, new: Path, work: Path, bootstrap: str | None, retained: int, tps: int, points: int,
          prefix: str, chain: bool = False) -> float:
    """A fresh fleet of the new program given the old one's retained input at once."""
    lines = (_lines(case, 0, tps) + _paced_lines(case, tps, points))[:retained]
    last = lines[-1][0]
    with _Running(new, work, bootstrap, prefix, chain) as fleet:
        start = time.monotonic()
        fleet.publish([line for _, line in lines] + [orjson.dumps({"t": last + 1})])
        return fleet.watcher.wait_for(last + case.shift, 300) - start


def _pct(values: list[float], q: float) -> float:
    if not values:
        return math.nan
    values = sorted(values)
    return values[min(len(values) - 1, int(q * len(values)))]


def _ms(seconds: float) -> str:
    if math.isnan(seconds):
        return "-"
    return "unanswered" if math.isinf(seconds) else f"{seconds * 1000:,.0f} ms"


def _median(values: list[float]) -> float:
    return statistics.median(values) if values else math.nan


def main(args: Any) -> int:
    console = Console(width=None if sys.stdout.isatty() else 260)
    dialects = [d for d in args.dialect.split(",") if d]
    unknown = [d for d in dialects if d not in CASES]
    if unknown:
        console.print(f"error: unknown dialect {unknown[0]!r} (one of {', '.join(CASES)})")
        return 2
    interval = ServiceConfig.commit_interval

    def say(text: str) -> None:
        print(text, file=sys.stderr, flush=True)

    results: dict[tuple[str, str], list[Result]] = {}
    with tempfile.TemporaryDirectory(prefix="chronolog-bench-upgrade-") as tmp:
        # one bundled broker for every fleet (each under its own topic prefix): stopping one
        # that served clients takes its 5 s grace (broker.LocalBroker.stop)
        broker = LocalBroker.start(log=Path(tmp) / "broker.log") if args.bootstrap is None else None
        bootstrap = args.bootstrap if broker is None else broker.bootstrap
        try:
            for r in range(args.repeat):
                for name in dialects:
                    for change in CHANGES:
                        got = run_case(CASES[name], change, args.tps, args.rate, args.seconds,
                                       Path(tmp) / f"{r}-{name}-{change}", bootstrap, say,
                                       f"bench{os.getpid()}-{r}-{name}-{change}", args.chain)
                        results.setdefault((name, change), []).append(got)
        finally:
            if broker is not None:
                broker.stop()
    rounds = f", medians of {args.repeat} rounds (the ratio's of the paired ratios)" if args.repeat > 1 else ""
    table = Table(title=f"chronolog bench upgrade: {args.tps} time points retained, then {args.rate:g} events/s "
                        f"for {args.seconds:g} s, the upgrade restating from the middle of the retained input; "
                        f"{'chained fleets (up --chain); ' if args.chain else ''}"
                        f"{os.cpu_count()} cores{rounds}")
    for col in ("dialect", "change", "retained events", "corrected lines", "upgrade to last corrected answer",
                "cold start of the new program", "ratio (target <= 0.2 for top)", "steady p50", "steady p99",
                "during upgrade p50", "during upgrade p99", "p99 target (steady + commit interval)",
                "after upgrade p50", "after upgrade p99"):
        table.add_column(col, justify="right", no_wrap=col in ("dialect", "change"))
    for (name, change), runs in results.items():
        up, cold = _median([x.upgrade for x in runs]), _median([x.cold for x in runs])
        steady99 = _median([_pct(x.steady, 0.99) for x in runs])
        during99 = _median([_pct(x.during, 0.99) for x in runs])
        target = steady99 + interval
        table.add_row(CASES[name].title, CASES[name].changes[CHANGES.index(change)], f"{runs[0].retained:,}", f"{runs[0].corrected:,}",
                      f"{up:.2f} s", f"{cold:.2f} s", f"{_median([x.upgrade / x.cold for x in runs]):.2f}",
                      _ms(_median([_pct(x.steady, 0.5) for x in runs])), _ms(steady99),
                      _ms(_median([_pct(x.during, 0.5) for x in runs])), _ms(during99),
                      f"{_ms(target)} ({'met' if during99 <= target else 'missed'})",
                      _ms(_median([_pct(x.later, 0.5) for x in runs])), _ms(_median([_pct(x.later, 0.99) for x in runs])))
    console.print(table)
    console.print(f"commit interval: {interval:g} s (CHRONOLOG_COMMIT_INTERVAL); 'during upgrade': the points "
                  "closed from the request to the last corrected answer (at least one)")
    return 0


def add_parser(kinds: Any) -> None:
    p = kinds.add_parser("upgrade", help="a running fleet's program upgrade against a cold start of the new "
                                         "program, and the answer latency during it")
    p.add_argument("--dialect", default=",".join(DEFAULT), metavar="D[,D...]",
                   help=f"dialect rows to run, of {', '.join(CASES)} (default {','.join(DEFAULT)})")
    p.add_argument("--tps", type=int, default=1500, help="time points of the retained input (default 1500)")
    p.add_argument("--rate", type=float, default=300.0, help="events/s of the paced run (default 300)")
    p.add_argument("--seconds", type=float, default=4.0, help="length of the paced run (default 4)")
    p.add_argument("--bootstrap", help="use this Kafka instead of the bundled broker")
    p.add_argument("--repeat", type=int, default=1, help="rounds; medians are printed (default 1)")
    p.add_argument("--chain", action="store_true", help="chained fleets (up --chain: one service evaluates the "
                                                        "whole program) instead of the dialect's default layout")
    p.set_defaults(func=main)
