"""A finite ``--retention`` changes nothing while every late event and retraction
arrives within it, on random programs where the pruned input log matters.

The programs include stream predicates that rules derive too (``p(X) :- q(X).``
next to stream facts of p, read through windows, ``always``, ``at T`` and
``@``-heads), windows over derived predicates, nested strata and negation; the
streams span several windows, with facts delayed by at most R time points and
retractions of facts within R (of the last evaluated point: R + 1 behind the
latest time seen, the horizon's edge).  The embedded reasoner prunes its log at every
time point (``prune_every = 1``); its answers must mean what a run without a
retention prints for the same arrivals, and what the naive reference gives on
the corrected stream in time order (CONTRACT §2).  A few seeded cases go
through ``chronolog run --retention R`` itself, whose pruning runs every 64
points.
"""

from __future__ import annotations

import io
import json
import random
import subprocess
import sys
from pathlib import Path

import orjson
from hypothesis import HealthCheck, assume, event, given, settings
from hypothesis import strategies as st
from meaning import meaning
from reference import reference_answers
from strategies import long_stream, programs, random_program, streams

from chronolog.core.events import Event, event_record
from chronolog.dialects.lars.answers import AnswerWriter
from chronolog.dialects.lars.ir import Program
from chronolog.dialects.lars.plan import Plan, plan_program
from chronolog.dialects.lars.reasoner import Reasoner
from chronolog.runtime.embedded import run_embedded

SETTINGS = settings(max_examples=60, deadline=None, suppress_health_check=list(HealthCheck))


def arrivals(events: list[Event], rng: random.Random, most: int) -> tuple[list[Event], list[Event]]:
    """``events`` (time order) as they might arrive: some facts up to ``most`` points
    late, some facts (of the stream, or extra ones) retracted at most ``most`` points
    after their time and after their own arrival.  Returns the arrivals and the
    corrected stream in time order (events of a point in arrival order, a time marker
    for every point seen), which the arrivals must mean."""
    keyed: list[tuple[tuple[int, int, int], Event]] = []
    seq = 0

    def add(ev: Event, due: int, late: bool) -> None:
        nonlocal seq
        seq += 1
        keyed.append(((due, 1 if late else 0, seq), ev))  # a late event arrives after its due point's own

    for ev in events:
        delay = rng.randint(1, most) if ev.is_fact and most and rng.random() < 0.4 else 0
        add(ev, ev.t + delay, delay > 0)
    facts = [(k, ev) for k, ev in keyed if ev.is_fact]
    domain = sorted({a for _, ev in facts for a in ev.args}, key=str) or ["a"]
    times = sorted({ev.t for ev in events})
    for _ in range(rng.randint(0, 3)):
        if facts and rng.random() < 0.5:
            (due, _, _), ev = rng.choice(facts)
        else:
            t = rng.choice(times)
            ev = Event(t, rng.choice(["p", "q"]), (rng.choice(domain),))
            due = t + rng.randint(0, most)
            add(ev, due, due > t)
        add(Event(ev.t, ev.pred, ev.args, retract=True), rng.randint(due, ev.t + most), True)
    arrived = [ev for _, ev in sorted(keyed, key=lambda kv: kv[0])]
    kept: list[Event] = []
    for ev in arrived:
        if ev.retract:
            match = [i for i, k in enumerate(kept) if (k.t, k.pred, k.args) == (ev.t, ev.pred, ev.args)]
            if match:  # (a fact retracted twice: the second matches nothing and is ignored)
                del kept[match[-1]]
        else:
            kept.append(ev)
    kept += [Event(t) for t in times]
    return arrived, sorted(kept, key=lambda e: e.t)


def lines_meaning(text: str, events: list[Event]) -> set:
    times = [e.t for e in events]
    return meaning([orjson.loads(x) for x in text.splitlines()], (min(times), max(times)))


def unlimited(program: Program, events: list[Event]) -> set:
    out = io.StringIO()
    run_embedded(program, events, out, warn=lambda m: None)
    return lines_meaning(out.getvalue(), events)


def pruned_run(plan: Plan, events: list[Event], retention: int | None, mode: str) -> tuple[str, Reasoner]:
    """What the reasoner with ``retention``, its log pruned at every time point, writes; and the reasoner."""
    out = io.StringIO()
    reasoner = Reasoner(plan, AnswerWriter(out, plan, mode), retention=retention)
    reasoner.prune_every = 1
    for ev in events:
        reasoner.push(ev)
    reasoner.finish()
    return out.getvalue(), reasoner


def pruning_hard(program: Program, events: list[Event], retention: int, mode: str = "changelog") -> tuple[set, Reasoner]:
    """The reasoner with ``retention``, its log pruned at every time point: the meaning of what it writes."""
    written, reasoner = pruned_run(plan_program(program), events, retention, mode)
    return lines_meaning(written, events), reasoner


@st.composite
def long_streams(draw, most: int = 4) -> list[Event]:
    """2-4 random streams one after the other: every window expires several times."""
    events: list[Event] = []
    for _ in range(draw(st.integers(2, most))):
        offset = events[-1].t + 1 if events else 0
        events += [Event(e.t + offset, e.pred, e.args) for e in draw(streams())]
    return events


def check(program: Program, events: list[Event], rng: random.Random, retention: int) -> None:
    """(Programs whose repairs replay from the first point keep the whole log: not drawn.)"""
    plan = plan_program(program)
    assume(plan.output_reach is not None and plan.state_reach is not None)
    # up to R points behind the last evaluated one, which is one before the latest seen: the horizon's edge
    arrived, corrected = arrivals(events, rng, retention + 1)
    got, reasoner = pruning_hard(program, arrived, retention, rng.choice(["changelog", "points"]))
    assert reasoner.too_late == 0  # (the premise: every event within the horizon)
    assert got == unlimited(program, arrived)
    assert got == reference_answers(program, corrected)
    facts = [e.t for e in arrived if e.is_fact]
    event("log pruned" if facts and min(facts) < min(reasoner.log, default=facts[-1] + 1) else "log whole")
    event("repaired" if reasoner.delayed else "nothing late")
    if not plan.tuple_reach:
        # the log was pruned: nothing older than a repair within the horizon reads
        assert reasoner.evaluated is not None
        horizon = reasoner.evaluated - retention - plan.output_reach - plan.state_reach
        assert all(t >= horizon for t in reasoner.log)


@SETTINGS
@given(programs(stratified=True, mixed=True), long_streams(), st.randoms(use_true_random=False), st.integers(0, 4))
def test_retention_keeps_the_answers_of_mixed_predicates(program, events, rng, retention):
    """Stream predicates that rules derive too: every window over them, at every
    stratum, reads their stream facts and their derived atoms."""
    check(program, events, rng, retention)


@SETTINGS
@given(programs(stratified=True), long_streams(), st.randoms(use_true_random=False), st.integers(0, 4))
def test_retention_keeps_the_answers(program, events, rng, retention):
    check(program, events, rng, retention)


def _cli(program: Path, stream: Path, *extra: str) -> str:
    proc = subprocess.run(
        [sys.executable, "-m", "chronolog", "run", str(program), "--input", str(stream), *extra],
        capture_output=True, text=True, timeout=300, check=False,
    )
    assert proc.returncode == 0 and "older than the retention" not in proc.stderr, proc.stderr
    return proc.stdout


def test_cli_retention_on_long_streams(tmp_path):
    """``chronolog run --retention R`` (pruning every 64 points) on streams of a few
    hundred points: the same meaning as without a retention, and nothing too late."""
    checked = 0
    for seed in range(40):
        rng = random.Random(9100 + seed)
        program = random_program(rng, mixed=True)
        plan = plan_program(program)
        if plan.output_reach is None or plan.state_reach is None:
            continue  # the whole log is kept: nothing to prune
        checked += 1
        if checked > 3:
            break
        retention = rng.randint(1, 4)
        arrived, _ = arrivals(long_stream(rng, 40), rng, retention)
        (tmp_path / "p.lars").write_text(str(program) + "\n")
        (tmp_path / "in.jsonl").write_text("".join(json.dumps(event_record(ev)) + "\n" for ev in arrived))
        pruned = _cli(tmp_path / "p.lars", tmp_path / "in.jsonl", "--retention", str(retention), "--answers",
                      rng.choice(["changelog", "points"]))
        whole = _cli(tmp_path / "p.lars", tmp_path / "in.jsonl")
        assert lines_meaning(pruned, arrived) == lines_meaning(whole, arrived), seed
    assert checked > 3
