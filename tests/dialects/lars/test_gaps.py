"""Quiet gaps jumped over (dialects/lars/gaps.py) give the answers stepping every point gives.

Random shift-invariant programs (time windows, ``always``, negation, comparisons on
arguments, program facts of stream and derived predicates, windows over derived ones)
on streams with long gaps, with facts arriving late into the gaps and retractions,
with and without a retention, in both answer forms: the lines are byte for byte those
of the same reasoner forced to step (``gaps.SKIP_GAPS = False``), and the jumps did
happen (far fewer engine steps).  Hand cases at the window boundaries check the
answers themselves; a restart in the middle of a gap continues as stepping does; and
a stream from 0 to 10**12 completes.
"""

from __future__ import annotations

import io
import random

import pytest
from hypothesis import HealthCheck, event, given, settings
from hypothesis import strategies as st

from chronolog.core.events import Event
from chronolog.dialects.lars import gaps
from chronolog.dialects.lars.engine.core import Engine
from chronolog.dialects.lars.evaluator import LarsEvaluator
from chronolog.dialects.lars.parser import parse_lars
from chronolog.dialects.lars.plan import plan_program
from chronolog.runtime.embedded import run_embedded

SETTINGS = settings(max_examples=80, deadline=None, suppress_health_check=list(HealthCheck))


def random_quiet_program(rng: random.Random) -> str:
    """Rules over stream predicates p/1, q/1 and derived a/1, b/1, c/0 (strata in that order)."""

    def literal(preds: list[str], var: str, negated: bool) -> str:
        pred = rng.choice(preds)
        form = rng.choice(["now", "diamond", "box"])
        n = rng.randint(0, 6)
        text = f"{pred}({var})" + ("" if form == "now" else f" [{n}]" if form == "diamond" else f" always [{n}]")
        return ("not " if negated else "") + text

    rules: list[str] = []
    lower = ["p", "q"]
    for head in ("a", "b"):
        for _ in range(rng.randint(1, 2)):
            body = [literal(lower, "X", False)]
            if rng.random() < 0.6:
                body.append(literal(lower, "X", True))
            if rng.random() < 0.3:
                body.append(f"X != {rng.randint(0, 2)}")
            rules.append(f"{head}(X) :- {', '.join(body)}.")
        lower = [*lower, head]
    rules.append(f"c :- {literal(['a', 'b'], 'X', False)}, not {rng.choice(['p', 'q'])}({rng.randint(0, 2)}) [{rng.randint(1, 5)}].")
    if rng.random() < 0.5:
        rules.append(f"alarm :- not {rng.choice(['p', 'a'])}(1) [{rng.randint(1, 6)}].")
    if rng.random() < 0.3:
        rules.append(f"q({rng.randint(0, 2)}).")  # a program fact of a stream predicate
    if rng.random() < 0.3:
        rules.append(f"a({rng.randint(0, 2)}).")  # a program fact of a derived predicate
    return "\n".join(rules) + "\n"


def gapped_stream(rng: random.Random) -> list[Event]:
    """Bursts of facts separated by gaps of up to a few hundred points; some facts late
    (into the gap after them), some retracted late; time markers for the gaps."""
    events: list[Event] = []
    t = rng.randint(0, 3)
    for _ in range(rng.randint(2, 4)):
        for _ in range(rng.randint(1, 4)):
            if rng.random() < 0.8:
                events.append(Event(t, rng.choice(["p", "q"]), (rng.randint(0, 2),)))
            t += rng.randint(0, 2)
        events.append(Event(t))
        t += rng.choice([1, 7, 20, 60, 300])
    events.append(Event(t))
    arrived: list[tuple[int, int, Event]] = []
    for i, ev in enumerate(events):
        delay = rng.choice([0, 0, 0, 5, 40, 200]) if ev.is_fact else 0
        arrived.append((ev.t + delay, i, ev))
        if ev.is_fact and rng.random() < 0.15:
            arrived.append((ev.t + delay + rng.randint(0, 250), len(events) + i, Event(ev.t, ev.pred, ev.args, retract=True)))
    return [ev for _, _, ev in sorted(arrived, key=lambda x: (x[0], x[1]))]


def steps_of(monkeypatch: pytest.MonkeyPatch) -> list[int]:
    """Count the engine's steps (a list whose length is the count)."""
    counted: list[int] = []
    original = Engine.step

    def step(self, t, *args, **kw):  # type: ignore[no-untyped-def]
        counted.append(t)
        return original(self, t, *args, **kw)

    monkeypatch.setattr(Engine, "step", step)
    return counted


def run(text: str, events: list[Event], skip: bool, monkeypatch: pytest.MonkeyPatch, **options: object) -> str:
    monkeypatch.setattr(gaps, "SKIP_GAPS", skip)
    out = io.StringIO()
    run_embedded(parse_lars(text), events, out, warn=lambda m: None, **options)
    return out.getvalue()


@SETTINGS
@given(st.integers(0, 2**32), st.sampled_from(["changelog", "points"]), st.sampled_from([None, 3, 60]))
def test_jumping_gaps_writes_what_stepping_writes(seed, answers, retention):
    with pytest.MonkeyPatch.context() as mp:
        rng = random.Random(seed)
        text = random_quiet_program(rng)
        assert gaps.quiet_margin(plan_program(parse_lars(text)), None) is not None
        events = gapped_stream(rng)
        counted = steps_of(mp)
        stepped = run(text, events, False, mp, answers=answers, retention=retention)
        stepping = len(counted)
        counted.clear()
        jumped = run(text, events, True, mp, answers=answers, retention=retention)
        assert jumped == stepped
        event("jumped" if len(counted) < stepping else "stepped")


def test_random_cases_do_jump(monkeypatch):
    """The property above is not vacuous: on most of its cases the jumps save steps."""
    saved = 0
    for seed in range(30):
        rng = random.Random(seed)
        text, events = random_quiet_program(rng), gapped_stream(rng)
        counted = steps_of(monkeypatch)
        run(text, events, False, monkeypatch)
        stepping = len(counted)
        counted.clear()
        run(text, events, True, monkeypatch)
        saved += len(counted) < stepping
        monkeypatch.undo()
    assert saved > 15


ALARM = "alarm :- not p [5].\nseen(X) :- p(X) [3].\nok :- q always [2].\nq.\n"


def test_window_boundaries(monkeypatch):
    """Facts at 0, 2 and 100 (``p/0`` at 0 and 100, ``p(7)`` at 2): alarm stops at 0 and holds
    again from 6 (5 points after p), until 100; seen(7) holds [2,5]; ok from the first point
    (its window clipped at 0) throughout.  Jumped from about 7 to 94."""
    events = [Event(0, "p", ()), Event(2, "p", (7,)), Event(100, "p", ())]
    counted = steps_of(monkeypatch)
    got = run(ALARM, events, True, monkeypatch)
    assert got.splitlines() == [
        '{"interval":"[0,inf)","pred":"ok","args":[]}',
        '{"interval":"[2,inf)","pred":"seen","args":[7]}',
        '{"interval":"[6,inf)","pred":"alarm","args":[]}',
        '{"interval":"[6,inf)","pred":"seen","args":[7],"diff":-1}',
        '{"interval":"[100,inf)","pred":"alarm","args":[],"diff":-1}',
    ]
    assert len(counted) < 60
    points = run(ALARM, events, True, monkeypatch, answers="points")
    assert points == run(ALARM, events, False, monkeypatch, answers="points")
    assert points.count('"pred":"ok"') == 101 and points.count('"pred":"alarm"') == 100 - 6


def test_late_fact_into_a_jumped_gap(monkeypatch):
    """p at 50 arrives after 100 was evaluated: alarm's [6,100) splits around [50,55] (p [5] sees 50 until 55)."""
    events = [Event(0, "p", ()), Event(100, "p", ()), Event(101), Event(50, "p", ()), Event(102)]
    got = run(ALARM, events, True, monkeypatch)
    assert got == run(ALARM, events, False, monkeypatch)
    assert '{"interval":"[50,55]","pred":"alarm","args":[],"diff":-1}' in got.splitlines()


def test_restart_in_a_gap(monkeypatch):
    """Exported in the middle of a gap and imported into a new evaluator: the lines after it
    are those of an evaluator that stepped throughout."""
    plan = plan_program(parse_lars(ALARM))

    def lines(skip: bool) -> bytes:
        monkeypatch.setattr(gaps, "SKIP_GAPS", skip)
        first = LarsEvaluator(plan)
        for ev in (Event(0, "p", ()), Event(3, "p", (1,)), Event(500)):
            first.push(ev)
        out = first.advance(250).lines()
        second = LarsEvaluator(plan)
        second.import_state(first.export_state())
        second.push(Event(700, "p", ()))
        return out + second.advance(699).lines() + second.finish().lines()

    assert lines(True) == lines(False)


def test_a_gap_of_a_trillion_points(monkeypatch):
    """{"t":0} then a fact at 10**12: the answers, with a handful of engine steps."""
    counted = steps_of(monkeypatch)
    got = run(ALARM, [Event(0), Event(10**12, "p", ())], True, monkeypatch)
    assert got.splitlines() == [
        '{"interval":"[0,inf)","pred":"alarm","args":[]}',
        '{"interval":"[0,inf)","pred":"ok","args":[]}',
        '{"interval":"[1000000000000,inf)","pred":"alarm","args":[],"diff":-1}',
    ]
    assert len(counted) < 100


def test_programs_that_read_the_time_step():
    """``at``, ``@``-heads and tuple windows read absolute times or old facts: no margin."""
    for text in ("a(T) :- p at T [3].", "a at T :- p at T [3].", "a :- p [3 #].", "a :- p at 5."):
        assert gaps.quiet_margin(plan_program(parse_lars(text)), None) is None
    assert gaps.quiet_margin(plan_program(parse_lars("a :- p [3], not q always [7].")), None) == 7


def test_correction_replays_jump_the_gap(monkeypatch):
    """p at 50 arrives after 100,000 was evaluated: the replay from 50 jumps the rest of the
    gap in both its runs (a few hundred steps, not 200,000), and alarm's [6,100000) splits
    around [50,55] as stepping gives it."""
    events = [Event(0, "p", ()), Event(100_000, "p", ()), Event(100_001), Event(50, "p", ()), Event(100_002)]
    counted = steps_of(monkeypatch)
    got = run(ALARM, events, True, monkeypatch)
    assert len(counted) < 1000
    assert got == run(ALARM, events, False, monkeypatch)
    assert '{"interval":"[50,55]","pred":"alarm","args":[],"diff":-1}' in got.splitlines()


def test_a_retraction_before_a_gap(monkeypatch):
    """q at 2 retracted after 5,000 was evaluated: ``late`` (p(1) within 4, no q within 3) held
    [0,1] and now holds [0,4] too, so [2,4] is added; the replay from 2 jumps the gap."""
    text = "seen(X) :- p(X) [3].\nlate :- not q [3], p(1) [4].\n"
    events = [Event(0, "p", (1,)), Event(2, "q", ()), Event(5000, "p", (2,)), Event(5001),
              Event(2, "q", (), retract=True), Event(5002)]
    counted = steps_of(monkeypatch)
    got = run(text, events, True, monkeypatch)
    assert len(counted) < 1000
    assert got == run(text, events, False, monkeypatch)
    assert got.splitlines()[-1] == '{"interval":"[2,4]","pred":"late","args":[]}'


def test_a_late_fact_seen_only_points_later(monkeypatch):
    """q at 50 arrives after 100,000 was evaluated: ``x`` (q within 5, none within 2) changes
    nothing at 50-52 and holds [53,55]: a replay that jumped where the two runs agree just after
    the late fact (before its reach) would lose that."""
    text = "x :- q [5], not q [2].\n"
    events = [Event(0, "p", ()), Event(100_000, "p", ()), Event(100_001), Event(50, "q", ()), Event(100_002)]
    counted = steps_of(monkeypatch)
    got = run(text, events, True, monkeypatch)
    assert len(counted) < 1000
    assert got.splitlines() == ['{"interval":"[53,55]","pred":"x","args":[]}']
    assert got == run(text, events, False, monkeypatch)
