"""The chained fleet (``up --chain``) jumps over quiet gaps as ``chronolog run`` does
(dialects/lars/gaps.py): on random shift-invariant programs and gapped streams with late
facts and retractions, random batch boundaries, idle flushes, restarts from snapshots and a
retention, its answer lines are those of the same schedule forced to step every point; a
program whose components read one another keeps its crossing record (a point jumped over
has no entry), and the one-partition chain on a trillion-point gap finishes."""

from __future__ import annotations

import random
import sys
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from pipeline import run_chain

sys.path.append(str(Path(__file__).resolve().parents[2] / "dialects" / "lars"))  # its programs and streams
from test_gaps import gapped_stream, random_quiet_program, steps_of  # noqa: E402

from chronolog.core.events import Event, event_json  # noqa: E402
from chronolog.dialects.lars import gaps  # noqa: E402
from chronolog.dialects.lars.parser import parse_lars  # noqa: E402


def chain(text: str, events: list[Event], skip: bool, mp: pytest.MonkeyPatch, **options: object) -> list[dict]:
    mp.setattr(gaps, "SKIP_GAPS", skip)
    got, dead = run_chain(parse_lars(text), [event_json(e) for e in events], **options)  # type: ignore[arg-type]
    return got


@settings(max_examples=30, deadline=None, suppress_health_check=list(HealthCheck))
@given(st.integers(0, 2**32), st.sampled_from([None, 60]), st.integers(0, 3), st.integers(0, 4))
def test_chain_jumping_writes_what_stepping_writes(seed, retention, restarts, idle_every):
    rng = random.Random(seed)
    text, events = random_quiet_program(rng), gapped_stream(rng)
    options = {"seed": seed, "retention": retention, "restarts": restarts, "idle_every": idle_every}
    with pytest.MonkeyPatch.context() as mp:
        assert chain(text, events, True, mp, **options) == chain(text, events, False, mp, **options)


def test_chain_with_a_crossing_record_jumps(monkeypatch):
    """alarm reads seen, another component: the chain records seen per point, and still jumps."""
    text = "seen(X) :- p(X) [3].\nalarm :- not seen(1), q(2) always [4].\nq(2).\n"
    events = [Event(0, "p", (1,)), Event(5, "p", (2,)), Event(3000, "p", (1,)), Event(3001)]
    counted = steps_of(monkeypatch)
    jumped = chain(text, events, True, monkeypatch)
    assert len(counted) < 500
    assert jumped == chain(text, events, False, monkeypatch)
    assert {"interval": "[4,inf)", "pred": "alarm", "args": []} in jumped


def test_chain_over_a_trillion_points(monkeypatch):
    got = chain("alarm :- not p [5].\n", [Event(0), Event(10**12, "p", ())], True, monkeypatch)
    assert got == [{"interval": "[0,inf)", "pred": "alarm", "args": []},
                   {"interval": "[1000000000000,inf)", "pred": "alarm", "args": [], "diff": -1}]


@pytest.mark.parametrize("restart", ["after", "before", "none"])
@pytest.mark.parametrize("at", ["1500", "3003"])
def test_chain_upgrade_after_a_jumped_gap(monkeypatch, restart, at):
    """A chain whose crossing record has no entries for a gap it jumped, upgraded at T inside the
    gap or after it (the top stratum kept or not): the answers and outcomes are those of the
    chain that stepped every point."""
    from test_stage_upgrade_lars import _fleet  # noqa: PLC0415 (a sibling test module, on the path there)
    from test_stage_upgrade_lars_keep import OLD, TOP  # noqa: PLC0415

    first = [{"t": 0}, {"t": 1, "pred": "p", "args": ["x"]}, {"t": 2, "pred": "q", "args": ["x"]},
             {"t": 3000, "pred": "p", "args": ["z"]}, {"t": 3004, "pred": "p", "args": ["y"]}, {"t": 3006}]
    second = [{"t": 2, "pred": "p", "args": ["w"]}, {"t": 3004, "pred": "q", "args": ["z"]},
              {"t": 6007, "pred": "p", "args": ["z"]}, {"t": 6009}]
    counted = steps_of(monkeypatch)
    got = {}
    for skip in (True, False):
        monkeypatch.setattr(gaps, "SKIP_GAPS", skip)
        counted.clear()
        got[skip] = _fleet(at, restart, TOP, OLD, first, second)
        if skip:
            jumped = len(counted)
    assert got[True] == got[False]
    if at == "1500" and restart == "before":
        # T inside the jumped gap: the crossing record has no entries there, so the upgrade steps
        # [T - 2, now] (restating.py needs every point); restarted from the snapshot before it,
        # it does so twice, which costs more than the gap jumped before it saved
        return
    assert jumped < len(counted)
