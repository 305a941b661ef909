"""``--retention`` on programs that are not stratified (the TMS, docs/tms.md): late events and
retractions within the retention are repaired while the log and the engine's labels are
pruned at every point; the answers are what a run keeping everything prints for the same
arrivals, and each point's answer is one of the answer sets (clingo, tests/answer_sets.py) of
the corrected stream (CONTRACT §2)."""

from __future__ import annotations

import random

import orjson
from answer_sets import all_answers
from hypothesis import HealthCheck, assume, event, given, settings
from hypothesis import strategies as st
from meaning import meaning
from strategies import CHOICE_TEMPLATES, long_stream
from test_retention_random import arrivals, pruned_run

from chronolog.core.events import Event
from chronolog.dialects.lars.parser import parse_lars
from chronolog.dialects.lars.plan import plan_program
from chronolog.dialects.lars.reasoner import Reasoner


def _run(text: str, events: list[Event], seed: int, retention: int | None, mode: str) -> tuple[set, Reasoner]:
    plan = plan_program(parse_lars(text, "choice.lars"))
    plan.seed = seed
    written, reasoner = pruned_run(plan, events, retention, mode)
    times = [e.t for e in events]
    lines = [orjson.loads(x) for x in written.splitlines()]
    return meaning(lines, (min(times), max(times)), running=True), reasoner


@settings(max_examples=30, deadline=None, suppress_health_check=list(HealthCheck))
@given(st.integers(0, 10**9), st.integers(0, 3), st.sampled_from(["changelog", "points"]))
def test_late_events_within_the_retention_of_a_program_with_choices(seed: int, retention: int, mode: str) -> None:
    rng = random.Random(seed)
    templates = [CHOICE_TEMPLATES[i] for i in (0, 1, 2, 4)]  # plain heads: a point's atoms are one evaluation's
    text = "\n".join(p.format(w=rng.randint(0, 3), n=rng.randint(1, 4)) for p in rng.sample(templates, 2))
    plan = plan_program(parse_lars(text, "choice.lars"))
    assume(plan.output_reach is not None and plan.state_reach is not None)  # else nothing is pruned
    events = long_stream(rng, 3)
    arrived, corrected = arrivals(events, rng, retention + 1)
    got, pruned = _run(text, arrived, seed % 3, retention, mode)
    assert pruned.too_late == 0
    whole, _ = _run(text, arrived, seed % 3, None, mode)
    assert got == whole
    flat = [(e.t, e.pred, tuple(e.args)) for e in corrected if e.is_fact]
    t1, last = corrected[0].t, corrected[-1].t
    for t in range(t1, last + 1):
        expected = {frozenset((p, a) for p, a, _ in ans) for ans in all_answers(parse_lars(text), flat, t1, t)}
        at_t = frozenset((p, a) for p, a, T in got if T == t)
        assert at_t in expected if expected else not at_t, f"t={t}: {sorted(at_t)}"
    facts = [e.t for e in arrived if e.is_fact]
    event("log pruned" if facts and min(facts) < min(pruned.log, default=facts[-1] + 1) else "log whole")
    event("repaired" if pruned.delayed else "nothing late")
