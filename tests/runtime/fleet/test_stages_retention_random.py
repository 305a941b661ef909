"""The fleet's stages with ``--retention`` on random programs of several strata: each stratum's
reasoner prunes its log and the lower strata's imports at every point (``prune_every = 1``), the
output stage forgets what was sent, and services restart from snapshots; with late events and
retractions within the retention the answer stream means what ``chronolog run --retention``
prints for the same arrivals (CONTRACT §2), and nothing is routed away as too late."""

from __future__ import annotations

import dataclasses
import io
import sys
from pathlib import Path
from unittest import mock

import orjson
from hypothesis import HealthCheck, assume, event, given, settings
from hypothesis import strategies as st
from meaning import meaning
from pipeline import run_chain, run_pipeline
from strategies import programs

sys.path.append(str(Path(__file__).resolve().parents[2] / "dialects" / "lars"))  # its arrivals and streams
from test_retention_random import arrivals, long_streams  # noqa: E402

from chronolog.core.events import event_json  # noqa: E402
from chronolog.dialects.lars.ir import ExtAtom, Head, Op, Program, TimeWindow, Var  # noqa: E402
from chronolog.dialects.lars.plan import plan_program  # noqa: E402
from chronolog.dialects.lars.reasoner import Reasoner  # noqa: E402
from chronolog.runtime.embedded import run_embedded  # noqa: E402

_init = Reasoner.__init__


def _pruning_every_point(self, *args, **kwargs) -> None:  # type: ignore[no-untyped-def]
    _init(self, *args, **kwargs)
    self.prune_every = 1


def bounded(program: Program) -> Program:
    """``program`` with a reach: a windowless ``at`` gets a window of 3, an ``@``-head a time
    that only a windowed ``at`` binds (else none) -- so that the strata prune their logs."""
    rules = []
    for rule in program.rules:
        body = tuple(dataclasses.replace(e, window=TimeWindow(3))
                     if isinstance(e, ExtAtom) and e.op is Op.AT and e.window is None else e for e in rule.body)
        times = {e.time.name for e in body if isinstance(e, ExtAtom) and e.op is Op.AT and isinstance(e.time, Var)}
        head = rule.head
        if head.time is not None and not (isinstance(head.time, Var) and head.time.name in times):
            head = Head(head.atom, None)
        rules.append(dataclasses.replace(rule, head=head, body=body))
    return Program(tuple(rules))


@settings(max_examples=30, deadline=None, suppress_health_check=list(HealthCheck))
@given(programs(stratified=True, mixed=True), long_streams(3), st.randoms(use_true_random=False),
       st.integers(0, 4), st.booleans(), st.integers(0, 10**6))
def test_strata_pruning_imports_mean_the_embedded_run(program, events, rng, retention, chain, seed) -> None:
    program = bounded(program)
    plan = plan_program(program)
    assume(plan.output_reach is not None and plan.state_reach is not None)  # else nothing is pruned
    assume(plan.fleet_strata > 1)
    arrived, _ = arrivals(events, rng, retention)
    span = (min(e.t for e in events), max(e.t for e in events))
    with mock.patch.object(Reasoner, "__init__", _pruning_every_point):
        out = io.StringIO()
        stats = run_embedded(program, arrived, out, retention=retention, warn=lambda m: None)
        want = meaning([orjson.loads(x) for x in out.getvalue().splitlines()], span)
        run = run_chain if chain else run_pipeline
        lines, routed = run(program, [event_json(e) for e in arrived], seed=seed, retention=retention,
                            restarts=2, idle_every=3)
    assert routed == stats.too_late == 0
    assert meaning(lines, span) == want
    event(f"{plan.fleet_strata} strata")
