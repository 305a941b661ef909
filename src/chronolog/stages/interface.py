"""The stage interface (``Stage``, ``Out``, ``Record``) and a program's fleet layout (``FleetLayout``).

Both live below the dialects because a dialect implements them: LARS makes
its per-stratum stages, DatalogMTL and RTEC the generic ``EvaluatorStage``,
and the runtime sees only this interface (docs/design/layout.md).
"""

from __future__ import annotations

import dataclasses
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any, ClassVar, Protocol

import msgspec
import orjson

from chronolog.core.errors import ChronologError
from chronolog.core.records import field, record
from chronolog.state.journal import Journal


@dataclass(slots=True)
class Out:
    """One record to produce: ``topic`` is a role (ingested, dlq, late, grounded,
    stratum, answers) that the service maps to a real topic name.  The payload
    stays a dict until it goes on the wire, so a chained stage reads it without
    a JSON round trip."""

    topic: str
    partition: int
    payload: bytes | dict
    key: bytes | None = None
    # whether a downstream service can make progress with it at once; ingest's
    # facts of the still open time point cannot (nothing closes before the next
    # time marker), so the service may hold them for the marker's transaction
    urgent: bool = True
    # whether to commit it at once, whatever the pace of the service's commits (an upgrade
    # request: rare, and what ``chronolog upgrade`` waits for; runtime/fleet/batching.py)
    prompt: bool = False

    @property
    def value(self) -> bytes:
        p = self.payload
        return p if isinstance(p, bytes) else orjson.dumps(p)

    @property
    def record(self) -> dict:
        p = self.payload
        return orjson.loads(p) if isinstance(p, bytes) else p


# A consumed record as stages see it: (role, topic, partition, offset, value).
# ``role`` is what the topic is to the stage: "facts", "ingested", "grounded"
# or "stratum.k" (k 1-based); ``topic`` is its real name (for dead letters).
Record = tuple[str, str, int, int, "bytes | None"]


class Stage(Protocol):
    """What every service runs: the service loop knows nothing more of it.

    ``process`` takes a consumed batch (possibly empty: the loop also calls
    it when input is idle, for idle flushes) and returns the records to
    produce and the answer lines (kept apart: the bulk of the output, sent
    as they are).  ``more`` (relays, runtime/fleet/relay.py, and the
    output, which reads relays only): the batch belongs to an epoch whose
    barrier has not come yet, so what the stage makes of it is not usable
    downstream before a later batch (its readers hold a relay's records
    until the epoch's barrier; the output cannot evaluate past the stratum
    whose barrier is missing): it may leave work for the batch that ends
    the epoch (``ReasonerStage``: corrections, so that a burst of them costs
    one replay; ``OutputStage``: one correction of the answers).  ``progress`` gives cumulative counters and the latest
    completed time point, for the metrics.  The state is explicit data:
    ``export_state``/``import_state`` (the Struct ``state.schema`` registers
    under ``kind``, the stage's stable name in stored state) plus the
    ``journals`` stored entry by entry (chronolog.state)."""

    kind: ClassVar[str]

    def process(self, records: list[Record], now: float | None = None,
                more: bool = False) -> tuple[list[Out], list[bytes]]: ...

    def progress(self) -> dict[str, int | None]: ...

    def journals(self) -> dict[str, Journal]: ...

    def export_state(self) -> msgspec.Struct: ...

    def import_state(self, state: Any) -> None: ...  # the Struct of its kind, as export_state gave it

    # why the state it restored cannot run with the program it was configured with (None: it can;
    # always None for a stage whose state does not depend on the rules): stages/program.py
    def program_refusal(self) -> str | None: ...


def quiet(message: str) -> None:
    """Default warning sink (module level, so stages stay picklable)."""


@record(frozen=True)
class StageSpec:
    """Where a service stands, as its layout's ``stage`` factory needs it: the
    service role (``contract.topics.SERVICE_ROLES``), its stratum and
    partition, and the ``chronolog service`` options every dialect reads
    (each layout uses the ones that apply to it)."""

    role: str
    stratum: int | None = None  # 1-based, reasoners only
    partition: int = 0
    partitions: int = 1  # key partitions of the fleet (1 when the program has no partition key)
    input_partitions: int = 1
    idle_flush: float = 1.0
    retention: int | float | None = None  # --retention N; inf or None: unlimited
    window: int | None = None  # a windowed mode (RTEC's --window, --step)
    step: int | None = None
    chained_ingest: bool = False  # a chain that also does ingest's work (one partition: nothing to repartition)
    warn: Callable[[str], None] = quiet
    version: str | None = None  # the program version it is configured with (versions.version_id; None: unknown)
    # the program versions upgrades applied since the fleet started (their files, oldest first), which
    # ``up``'s supervisor gives a restarted output when the strata or answer predicates changed
    versions: tuple[Any, ...] = ()
    # the answer topic holds LARS's no_answer_set lines too (``--mark-no-answer-set``; by default
    # only CONTRACT section 3 lines: the point is logged and counted instead)
    mark_no_answer_set: bool = False


@record(frozen=True)
class Upgrader:
    """What a stage needs to change its program while running (``chronolog upgrade``): an
    evaluator of a program given by its files (None: the service's own program; a
    ``ChronologError`` for a program in error or of another language), how far back its
    answers read input (None: unbounded), and how its time runs."""

    make: Callable[[Any], Any]  # Sources | None -> Evaluator
    back: Callable[[Any], Any]  # Sources | None -> Time | None
    causal: Callable[[Any], bool]  # Sources | None -> its answers at a time need no later input
    discrete: bool  # time is integer points, each evaluated (LARS)
    integral: bool  # times are integers (LARS, RTEC); else rationals (DatalogMTL)
    dialects: tuple[str, ...] = ()  # the dialect names of its language (a new program must be in one)
    # (running program's files or None: the service's own, new files) -> the answer predicates ("p/1")
    # of the strata the change leaves unchanged by content (core.strata.kept_answers), kept by switch
    kept: Callable[[Any, Any], frozenset[str]] = field(default=lambda old, new: frozenset())
    # (program files or None, its evaluator, first, last) -> ``Dialect.evaluations`` of that program
    # (``versions.switch``'s ``dated``): None where its evaluations date no atom back
    dated: Callable[[Any, Any, Any, Any], Any] = field(default=lambda sources, evaluator, first, last: None)


@record(frozen=True)
class FleetLayout:
    """How a program runs as a fleet, as its dialect says (``Dialect.layout``).

    The runtime builds topics and services from it (``runtime/fleet/topology.py``)
    and asks ``stage`` for each service's stage; what differs between dialects
    is here, as data and one factory, not in branches of the runtime.  A
    dialect without strata gives one stratum, ``per_stratum=False`` (only the
    chained layout) and no partition key."""

    # predicates each stratum's reasoner evaluates, in order (one stratum for a dialect
    # without strata: its one chain service evaluates the program whole)
    strata: tuple[tuple[str, ...], ...]
    per_stratum: bool  # it can run one service per stratum; False: only chained (`chronolog service chain`)
    partition_key: dict[str, int] | None  # predicate -> the argument it is partitioned on; None: one partition
    partition_reason: str  # why there is no partition key ("" when there is one)
    # n key partitions -> what the chain service runs, for the partitioning line of `chronolog topology`
    chain_note: Callable[[int], str]
    stage: Callable[[StageSpec], Stage]  # the stage of one service (a role at a stratum and partition)
    # the lines `chronolog topology` prints before the topics (a dialect without strata of its own: its `check`)
    about: Callable[[], list[str]] = field(default=lambda: [])
    # why the program has no fleet (e.g. a DatalogMTL program that only runs in batch), raised by ``require``
    unavailable: ChronologError | None = None

    def require(self) -> FleetLayout:
        """This layout, or the error saying why the program cannot run as a fleet."""
        if self.unavailable is not None:
            raise self.unavailable
        return self


def with_strata(layout: FleetLayout, strata: int) -> FleetLayout:
    """``layout`` with at least ``strata`` reasoners: a fleet whose upgrades added strata
    (``chronolog upgrade``) runs the reasoners of the most strata any of its versions has;
    those past the program's last evaluate nothing until a version has a stratum there."""
    missing = strata - len(layout.strata)
    return layout if missing <= 0 else dataclasses.replace(layout, strata=layout.strata + ((),) * missing)
