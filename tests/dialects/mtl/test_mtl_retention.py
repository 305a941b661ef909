"""DatalogMTL corrections from the affected time on, and ``--retention N``.

Expectations are this test's own: which events are too late (older than the
latest time seen before them minus N), and the batch evaluation of the
remaining events in time order.
"""

from __future__ import annotations

import random
from fractions import Fraction as F

import pytest
from test_mtl_runtime import _events, chronolog
from test_mtl_semantics import clip, drive, meaning, random_facts, random_program

from chronolog.core.events import Event
from chronolog.dialects.mtl.evaluator import MtlEvaluator
from chronolog.dialects.mtl.parser import parse_mtl


def arrival(rng: random.Random, ordered: list[Event], delays: int, retractions: int) -> list[Event]:
    out = list(ordered)
    for _ in range(delays):
        i = rng.randrange(len(out))
        ev = out.pop(i)
        out.insert(min(len(out), i + rng.randint(1, 8)), ev)
    for gone in rng.sample([e for e in ordered if e.pred], min(retractions, len(ordered))):
        out.insert(rng.randint(out.index(gone) + 1, len(out)), Event(gone.t, gone.pred, gone.args, True, None, gone.span))
    return out


def kept_after_retention(events: list[Event], n) -> tuple[list[Event], int]:
    """The events a retention of ``n`` applies (this test's rule), in arrival order, and how many it drops."""
    kept, dropped, latest = [], 0, None
    for e in events:
        if e.pred is not None and n is not None and latest is not None and e.t < latest - n:
            dropped += 1
            continue
        latest = e.t if latest is None or e.t > latest else latest
        kept.append(e)
    return kept, dropped


def time_order(events: list[Event]) -> list[Event]:
    """The stream in time order with retracted facts removed (this test's own matching)."""
    facts: list[Event] = []
    for e in events:
        if e.retract:
            same = [i for i, k in enumerate(facts) if (k.pred, k.args, k.span) == (e.pred, e.args, e.span)]
            if same:
                del facts[same[-1]]
        elif e.pred is not None:
            facts.append(e)
    return sorted(facts, key=lambda e: e.t)


@pytest.mark.parametrize("seed", range(30))
@pytest.mark.parametrize("n", [None, 1, F(5, 2)])
def test_corrections_within_the_retention_mean_the_kept_stream_in_time_order(seed, n):
    corrections_mean_the_kept_stream(random.Random(300 + seed), n, ("P", "Q"))


@pytest.mark.parametrize("seed", range(30))
@pytest.mark.parametrize("n", [1, F(5, 2)])
def test_input_facts_of_derived_predicates_within_the_retention(seed, n):
    """Input facts of rule heads (R, S, T) as well: the pruned log keeps what the rules
    reading them through their windows need, as it does for P and Q."""
    corrections_mean_the_kept_stream(random.Random(700 + seed), n, ("P", "Q", "R", "S", "T"))


def corrections_mean_the_kept_stream(rng: random.Random, n, preds: tuple[str, ...]) -> None:
    text = random_program(rng)
    ordered = _events(random_facts(rng, preds) + random_facts(rng, preds) + random_facts(rng, preds))
    hi = max(max(e.t for e in ordered), max(e.span[2] for e in ordered))
    ticks = [Event(F(k, 2)) for k in range(0, int(2 * hi) + 1)]  # a step at every half unit
    stream = arrival(rng, sorted(ordered + ticks, key=lambda e: e.t), delays=4, retractions=2)
    kept, dropped = kept_after_retention(stream, n)
    want = clip(meaning(drive(MtlEvaluator(parse_mtl(text), "batch"), time_order(kept) + [Event(hi)])), hi)
    ev = MtlEvaluator(parse_mtl(text), "stream", retention=n)
    ev.prune_every = rng.choice([1, 2, 64])  # cut the log and the published record at every step, or rarely
    got = clip(meaning(drive(ev, stream + [Event(hi)])), hi)
    assert got == want, text
    assert ev.too_late == dropped


def test_the_input_log_is_bounded_by_the_retention():
    program = parse_mtl("Q(X):-Diamondminus[0,2]P(X)\nR(X):-Boxminus[1,1]Q(X), P(X)\n")
    sizes, published = {}, {}
    for n in (None, 3):
        ev = MtlEvaluator(program, "stream", retention=n)
        most = held = 0
        for t in range(2000):
            for x in ("a", "b", "c"):
                ev.push(Event(t, "P", (x,), False, None, (t, True, t, True)))
            ev.advance(t)
            most = max(most, len(ev.inputs))
            held = max(held, sum(len(ivs) for ivs in ev.published.values()))
        sizes[n], published[n] = most, held
    assert sizes[None] == 6000 and published[None] >= 3 * 1999  # R(x) at every point from 1: punctual
    bound = 3 * (3 + 2 + 64 + 2)  # N + W + the pruning period, three facts a time point
    assert sizes[3] <= bound and published[3] <= 2 * bound


def test_cli_reports_events_older_than_the_retention(tmp_path):
    (tmp_path / "p.mtl").write_text("Q(X):-Diamondminus[0,1]P(X)\n")
    lines = [f'{{"t": {t}, "pred": "P", "args": ["a"]}}' for t in range(10)] + ['{"t": 2, "pred": "P", "args": ["b"]}',
                                                                                 '{"t": 8, "pred": "P", "args": ["c"]}']
    (tmp_path / "in.jsonl").write_text("\n".join(lines) + "\n")
    got = chronolog("run", str(tmp_path / "p.mtl"), "--input", str(tmp_path / "in.jsonl"), "--retention", "3")
    assert got.returncode == 0, got.stderr
    assert "in.jsonl:11:1: warning: event at t=2 is older than the retention horizon (6); ignored" in got.stderr
    assert "ignored 1 events older than --retention 3" in got.stderr
    assert '"args":["b"]' not in got.stdout and '"args":["c"]' in got.stdout


def test_a_retraction_withdraws_answers_that_ended_long_before():
    # Q(a) held on [1,2] and was closed at 2; withdrawing P(a) at 7 withdraws it, nothing else changes
    ev = MtlEvaluator(parse_mtl("Q(X):-P(X)\nR(X):-Diamondminus[0,1]Q(X)\n"), "stream")
    p = Event(1, "P", ("a",), False, None, (1, True, 2, True))
    events = [Event(0), p, Event(3, "P", ("b",), False, None, (3, True, 3, True))] + [Event(t) for t in range(4, 8)]
    events.append(Event(p.t, p.pred, p.args, True, None, p.span))
    got = clip(meaning(drive(ev, events + [Event(8)])), 8)
    assert got == {("Q", ("b",)): [(3, True, 3, True)], ("R", ("b",)): [(3, True, 4, True)]}


def restored_case(seed: int) -> bool:
    """A stream with delays and a retraction; at the first advance that has a
    correction pending, the state goes through its encoding into a fresh
    evaluator. The meaning must be that of one evaluator; True if restored."""
    from chronolog.state.codec import decode, encode

    rng = random.Random(700 + seed)
    text = random_program(rng)
    ordered = _events(random_facts(rng) + random_facts(rng))
    hi = max(max(e.t for e in ordered), max(e.span[2] for e in ordered))
    stream = arrival(rng, sorted(ordered + [Event(F(k, 2)) for k in range(int(2 * hi) + 1)], key=lambda e: e.t),
                     delays=3, retractions=1) + [Event(hi)]
    whole = meaning(drive(MtlEvaluator(parse_mtl(text), "stream", retention=2), stream))
    first = MtlEvaluator(parse_mtl(text), "stream", retention=2)
    first.prune_every = 1
    changes, latest, restored = [], None, False
    for e in stream:
        if latest is not None and e.t > latest:
            if first.dirty and not restored:  # a delayed event or retraction waits for this advance
                again = MtlEvaluator(parse_mtl(text), "stream", retention=2)
                again.import_state(decode(encode(first.export_state())))
                assert again.redo == first.redo is not None
                first, restored = again, True
            changes += first.advance(latest)
        latest = e.t if latest is None or e.t > latest else latest
        first.push(e)
    assert meaning(changes + first.finish()) == whole, text
    return restored


def test_a_state_exported_with_a_pending_correction_continues_exactly():
    assert sum(restored_case(seed) for seed in range(15)) >= 10  # most streams had a correction pending


def test_run_applies_every_late_event_unless_a_retention_bounds_it(tmp_path):
    # W = 2 (Diamondminus[0,2]): after P(a) at 0..9, P(b) at 7 is 2 behind the latest time 9, P(c) at 6
    # is 3 behind: both applied by default (CONTRACT §2); --retention 2 (the reach) applies P(b) only
    (tmp_path / "p.mtl").write_text("Q(X):-Diamondminus[0,2]P(X)\n")
    lines = [f'{{"t": {t}, "pred": "P", "args": ["a"]}}' for t in range(10)]
    lines += ['{"t": 7, "pred": "P", "args": ["b"]}', '{"t": 6, "pred": "P", "args": ["c"]}']
    (tmp_path / "in.jsonl").write_text("\n".join(lines) + "\n")
    every = chronolog("run", str(tmp_path / "p.mtl"), "--input", str(tmp_path / "in.jsonl"))
    assert every.returncode == 0 and "ignored" not in every.stderr
    assert '{"interval":"[6,8]","pred":"Q","args":["c"]}' in every.stdout.splitlines()  # 6 + [0,2]
    assert '{"interval":"[7,inf)","pred":"Q","args":["b"]}' in every.stdout.splitlines()
    got = chronolog("run", str(tmp_path / "p.mtl"), "--input", str(tmp_path / "in.jsonl"), "--retention", "2")
    assert got.returncode == 0, got.stderr
    assert "in.jsonl:12:1: warning: event at t=6 is older than the retention horizon (7); ignored" in got.stderr
    assert "ignored 1 events older than --retention 2" in got.stderr
    assert '"args":["c"]' not in got.stdout
    assert '{"interval":"[7,inf)","pred":"Q","args":["b"]}' in got.stdout.splitlines()
    batch = chronolog("run", str(tmp_path / "p.mtl"), "--input", str(tmp_path / "in.jsonl"), "--mode", "batch")
    assert batch.returncode == 0 and "ignored" not in batch.stderr  # batch reads everything first: nothing is late
    assert '{"interval":"[6,8]","pred":"Q","args":["c"]}' in batch.stdout.splitlines()


def test_memory_is_flat_with_the_reach_as_retention_and_grows_without():
    from types import SimpleNamespace

    from chronolog.dialects.registry import DIALECTS

    program = parse_mtl("Q(X):-Diamondminus[0,2]P(X)\nR(X):-Boxminus[1,1]Q(X), P(X)\n")  # W = 2
    held = {}
    for retention in (2, None):  # --retention 2 (the program's reach), and not given (unlimited)
        ev = DIALECTS["mtl"].evaluator(program, SimpleNamespace(mode=None, retention=retention), lambda m: None)
        sizes = []
        for t in range(3000):
            for x in ("a", "b", "c"):
                ev.push(Event(t, "P", (x,), False, None, (t, True, t, True)))
            ev.advance(t)
            sizes.append(len(ev.inputs) + sum(len(ivs) for ivs in ev.published.values()))
        held[retention] = sizes
    # three facts a time point; inputs and R's punctual answers kept for N + W + the pruning period (64)
    assert max(held[2]) <= 2 * 3 * (2 + 2 + 64 + 2)
    assert max(held[2][:300]) == max(held[2])  # flat: the first tenth of the stream already had the peak
    assert held[None][-1] >= 2 * 3 * 2999  # the whole log and record
