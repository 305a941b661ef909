"""A program with choices (the TMS, docs/tms.md) chooses in the fleet as ``chronolog run`` does,
whatever the batches: a late event for a point that had closed before it arrived is a
correction of choices made without it, not input of the first evaluation of that point."""

from __future__ import annotations

import io
from collections.abc import Callable

import orjson
import pytest
from meaning import meaning

from chronolog.core.events import Event, event_json
from chronolog.dialects.lars.parser import parse_lars
from chronolog.dialects.lars.plan import plan_program
from chronolog.dialects.lars.stages import ChainStage, GroundingStage, OutputStage, ReasonerStage
from chronolog.runtime.embedded import run_embedded
from chronolog.stages.ingest import IngestStage
from chronolog.state.snapshots import roundtrip

CHOICE = parse_lars("a(X) :- p(X) [4 #], not b(X).\nb(X) :- q(X) at T [4 #], not a(X).\n")
# p(a)@7 closes 6, which run evaluates then: a(1) is chosen (b(1) has no q yet); the late q(1)@6
# then corrects it by a replay that keeps a(1) (both are answer sets)
ARRIVALS = [Event(6, "p", (1,)), Event(7, "p", ("a",)), Event(6, "q", (1,))]
SPAN = (6, 7)

# (a partition of the records into consecutive batches, restart the stage after each batch)
BATCHINGS = [([1, 1, 1], False), ([3], False), ([2, 1], False), ([1, 2], False), ([1, 1, 1], True), ([2, 1], True)]


def embedded() -> set:
    out = io.StringIO()
    run_embedded(CHOICE, ARRIVALS, out, warn=lambda m: None)
    return meaning([orjson.loads(x) for x in out.getvalue().splitlines()], SPAN)


def test_run_chooses_before_the_late_event():
    """The hand-derived answer: a(1) at 6 and 7, never b(1)."""
    assert embedded() == {("a", (1,), 6), ("a", (1,), 7), ("a", ("a",), 7)}


def batched(items: list, sizes: list[int]) -> list[list]:
    out, i = [], 0
    for n in sizes:
        out.append(items[i:i + n])
        i += n
    assert i == len(items)
    return out


def in_batches(make: Callable[[], object], records: list, sizes: list[int], restart: bool,
               *, more: bool = False) -> tuple[object, list[bytes]]:
    """``records`` through a fresh stage in the given batches (``process``, as the service
    calls it), restarted from its snapshot after each batch if ``restart``; what it sent
    (its answer lines, or its records to the next service)."""
    stage, lines = make(), []
    for batch in batched(records, sizes):
        outs, got = stage.process(batch, now=0.0, more=more)  # type: ignore[attr-defined]
        lines += got + [o.value for o in outs]
        if restart:
            stage = roundtrip(stage, make())
    return stage, lines


@pytest.mark.parametrize(("sizes", "restart"), BATCHINGS)
def test_chain_chooses_as_run_whatever_the_batches(sizes, restart):
    plan = plan_program(CHOICE)
    make = lambda: ChainStage(plan, IngestStage(None, 1), idle_flush=0.0)  # noqa: E731
    records = [("facts", "chronolog.facts", 0, i, event_json(e)) for i, e in enumerate(ARRIVALS)]
    stage, lines = in_batches(make, records, sizes, restart)
    stage.idle(now=1e9)  # type: ignore[attr-defined]
    lines += stage.flush()  # type: ignore[attr-defined]
    assert meaning([orjson.loads(x) for x in lines], SPAN, running=False) == embedded()


def grounded_records() -> list:
    """The grounding service's records for the arrivals, one ingested record at a time."""
    ingest, grounding, out = IngestStage(None, 1), GroundingStage(idle_flush=0.0), []
    for i, e in enumerate(ARRIVALS):
        for rec in ingest.process([("facts", "chronolog.facts", 0, i, event_json(e))])[0]:
            out += [o.value for o in grounding.handle(orjson.loads(rec.value), now=0.0)]
    out += [o.value for o in grounding.idle(now=1e9)]
    return [("grounded", "chronolog.grounded", 0, i, v if isinstance(v, bytes) else orjson.dumps(v))
            for i, v in enumerate(out)]


@pytest.mark.parametrize("more", [False, True])
@pytest.mark.parametrize(("sizes", "restart"), BATCHINGS)
def test_reasoner_service_chooses_as_run_whatever_the_batches(sizes, restart, more):
    """The per-stratum layout: the reasoner of the program's one stratum (it is not stratified),
    its records into the output service.  ``more``: the epoch goes on, a batch's corrections
    wait for the next (``ReasonerStage.process``)."""
    plan = plan_program(CHOICE)
    assert plan.fleet_strata == 1
    records = grounded_records()
    assert any(b'"late"' in r[-1] for r in records)  # q(1)@6 is a late record
    sizes = sizes + [len(records) - sum(sizes)] if sum(sizes) < len(records) else sizes  # the idle close
    stage, sent = in_batches(lambda: ReasonerStage(plan, 0), records, sizes, restart, more=more)
    sent += stage.flush()  # type: ignore[attr-defined]
    output = OutputStage(plan, 1)
    _, lines = output.process([("stratum.1", "chronolog.stratum.1", 0, i, v) for i, v in enumerate(sent)])
    assert meaning([orjson.loads(x) for x in lines], SPAN, running=False) == embedded()


@pytest.mark.parametrize("restart", [False, True])
def test_an_upgraded_chain_holds_late_events_as_one_reasoner(tmp_path, capsys, restart):
    """A chain upgraded to another program version (``Versions``, several versions) holds a late
    event as one reasoner does (``Reasoner.late``), in the version in force at its time: in one
    batch, p(a)@7 closes 6 and the late q(1)@6 follows; run chose a(1) at 6 before q(1) came."""
    from chronolog.cli.main import main
    from chronolog.dialects.registry import RunOptions, lookup
    from chronolog.stages.interface import StageSpec
    from chronolog.versions import UpgradeRequest, version_id

    old, new = "c(X) :- p(X).\n", "a(X) :- p(X) [4 #], not b(X).\nb(X) :- q(X) at T [4 #], not a(X).\n"
    row = lookup("lars")
    make = lambda: row.layout(row.parse([("old.lars", old)]), RunOptions()).stage(  # noqa: E731
        StageSpec("chain", idle_flush=1000.0, chained_ingest=True))
    stage, lines = make(), []
    sources = (("new.lars", new),)
    for i, batch in enumerate([[b'{"t": 0}'], [UpgradeRequest("r", version_id(sources), "lars", "2", sources).encode()],
                               [event_json(e) for e in ARRIVALS]]):
        leaving, got = stage.process([("facts", "chronolog.facts", 0, 10 * i + j, v) for j, v in enumerate(batch)],
                                     now=0.0)
        lines += got
        if restart:
            stage = roundtrip(stage, make())
    lines += stage.process([], now=10_000.0)[1]  # input idle: the latest time too
    (tmp_path / "old.lars").write_text(old)
    (tmp_path / "new.lars").write_text(new)
    (tmp_path / "in.jsonl").write_bytes(b'{"t": 0}\n' + b"".join(event_json(e) + b"\n" for e in ARRIVALS))
    capsys.readouterr()
    assert main(["run", str(tmp_path / "old.lars"), "--input", str(tmp_path / "in.jsonl"),
                 "--upgrade", f"2={tmp_path / 'new.lars'}"]) == 0
    want = meaning([orjson.loads(x) for x in capsys.readouterr().out.splitlines()], SPAN)
    assert want == {("a", (1,), 6), ("a", (1,), 7), ("a", ("a",), 7)}  # hand-derived: as embedded() without c
    assert meaning([orjson.loads(x) for x in lines], SPAN, running=False) == want


@pytest.mark.parametrize("restart", [False, True])
def test_an_older_version_applies_the_late_events_it_holds(tmp_path, capsys, restart):
    """After an upgrade at 8, the first version evaluates nothing past 7: a late retraction of
    p(1)@6 it holds is applied once the stream closes a point after the one closed at its
    arrival (``Reasoner._release``), as run applies it at the next later time: a(1) is gone at 6
    and 7.  (Held until the version evaluates past that point, it would never be applied.)"""
    from chronolog.cli.main import main
    from chronolog.dialects.registry import RunOptions, lookup
    from chronolog.stages.interface import StageSpec
    from chronolog.versions import UpgradeRequest, version_id

    old = "a(X) :- p(X) [4 #], not b(X).\nb(X) :- q(X) at T [4 #], not a(X).\n"
    new = old + "c(X) :- a(X).\n"
    row = lookup("lars")
    make = lambda: row.layout(row.parse([("old.lars", old)]), RunOptions()).stage(  # noqa: E731
        StageSpec("chain", idle_flush=1000.0, chained_ingest=True))
    sources = (("new.lars", new),)
    first = [Event(6, "p", (1,)), Event(7, "p", ("a",)), Event(8)]
    second = [Event(6, "p", (1,), True), Event(9), Event(10)]
    stage, lines = make(), []
    batches = [[event_json(e) for e in first], [UpgradeRequest("r", version_id(sources), "lars", "8", sources).encode()],
               [event_json(second[0])], [event_json(second[1])], [event_json(second[2])]]
    for i, batch in enumerate(batches):
        lines += stage.process([("facts", "chronolog.facts", 0, 10 * i + j, v) for j, v in enumerate(batch)], now=0.0)[1]
        if restart:
            stage = roundtrip(stage, make())
    lines += stage.process([], now=10_000.0)[1]  # input idle: the latest time too
    (tmp_path / "old.lars").write_text(old)
    (tmp_path / "new.lars").write_text(new)
    (tmp_path / "in.jsonl").write_bytes(b"".join(event_json(e) + b"\n" for e in first + second))
    capsys.readouterr()
    assert main(["run", str(tmp_path / "old.lars"), "--input", str(tmp_path / "in.jsonl"),
                 "--upgrade", f"8={tmp_path / 'new.lars'}"]) == 0
    span = (6, 10)
    want = meaning([orjson.loads(x) for x in capsys.readouterr().out.splitlines()], span)
    assert not any(p == "a" and args == (1,) for p, args, _ in want)  # hand-derived: retracted
    assert ("a", ("a",), 7) in want
    assert meaning([orjson.loads(x) for x in lines], span, running=False) == want
