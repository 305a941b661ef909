"""A LARS chain upgrade whose changed strata read only the point they evaluate makes its
restatement from the two versions' atoms per point (``dialects/lars/restating.py``): each
version's changed components over [T, now] in one step of their lifted rules, on the kept
components' recorded content.  The expectation is the other way the chain upgrades: both
versions' changed components stepped point by point, each writer rendering its lines from T
on, and the two sets of lines compared (``keeping.evaluate_split``, ``versions._restated_points``)
— the same answer lines byte for byte, at the upgrade and after it (late events, a retraction, a
restart), with ``--at`` and without it (T the first point not evaluated)."""

from __future__ import annotations

import random

import pytest
from strategies import long_stream, random_program
from test_stage_upgrade_lars import _records, _request, _stage

import chronolog.dialects.lars.evaluator as lars_evaluator
from chronolog.bench.upgrade import CASES, _lars_events
from chronolog.core.errors import ProgramError
from chronolog.core.events import Event
from chronolog.dialects.lars.evaluator import LarsEvaluator
from chronolog.dialects.lars.hooks import lars_parse, lars_plan
from chronolog.dialects.lars.ir import ExtAtom, Head, Rule
from chronolog.dialects.lars.keeping import kept_answers
from chronolog.dialects.lars.plan import plan_program
from chronolog.dialects.lars.restating import restated_at_once
from chronolog.state.snapshots import roundtrip
from chronolog.versions import switch

_AT_ONCE = restated_at_once


def _at_t(rule: Rule) -> Rule:
    """``rule`` with every atom read at t (no window, no ``at``) and its head not dated."""
    return Rule(Head(rule.head.atom), tuple(ExtAtom(b.atom, negated=b.negated) if isinstance(b, ExtAtom) else b
                                            for b in rule.body))


def _text(rules) -> str:  # type: ignore[no-untyped-def]
    return "".join(f"{r}\n" for r in rules)


def _pair(seed: int) -> tuple[str, str] | None:
    """A random stratified program, most of its rules read at t only, and the same with a rule
    of another random program added (read at t only) or one of its rules removed; None where
    the pair keeps no answers (nothing for the chain to keep) or is no program."""
    rng = random.Random(seed)
    old = [r if rng.random() < 0.1 else _at_t(r) for r in random_program(rng, True, mixed=seed % 3 == 0).rules
           if r.head.time is None and (r.body or rng.random() < 0.3)]
    new = list(old)
    if len(old) > 1 and rng.random() < 0.4:
        del new[rng.randrange(len(old))]
    else:
        other = [_at_t(r) for r in random_program(rng).rules if r.body]
        if not other:
            return None
        new.append(rng.choice(other))
    try:
        kept = kept_answers(*(lars_plan(lars_parse([("p.lars", _text(x))])) for x in (old, new)))
    except ProgramError:
        return None
    return (_text(old), _text(new)) if kept else None


def _streams(seed: int) -> tuple[list[dict], list[dict]]:
    """A random stream cut in two; the second part arrives after the upgrade in a random order
    (late events on both sides of T), with a retraction of an earlier fact."""
    rng = random.Random(seed)
    events = [{"t": e.t, "pred": e.pred, "args": list(e.args)} if e.pred else {"t": e.t}
              for e in long_stream(rng, 3)]
    cut = rng.randint(len(events) // 2, len(events))
    first, rest = events[:cut], events[cut:]
    rng.shuffle(rest)
    facts = [e for e in first if "pred" in e]
    if facts:
        rest.append({**rng.choice(facts), "op": "retract"})
    last = max(e["t"] for e in events)
    return first + [{"t": last + 1}], [*rest, {"t": last + 3}]


class _Counted:
    """``restated_at_once``, counting the upgrades it made the restatement of."""

    def __init__(self, off: bool) -> None:
        self.off, self.made = off, 0

    def __call__(self, *args, **kwargs):  # type: ignore[no-untyped-def]
        if self.off:
            return None
        got = _AT_ONCE(*args, **kwargs)
        self.made += got is not None
        return got


def _chain(monkeypatch, old: str, new: str, first: list[dict], second: list[dict], at: str | None, restart: bool,
           off: bool) -> tuple[list[bytes], int]:
    """The chain of ``old`` given ``first``, the upgrade to ``new`` from ``at``, ``second``; its
    answer lines, and how many restatements were made at once (``off``: none, stepped)."""
    counted = _Counted(off)
    monkeypatch.setattr(lars_evaluator, "restated_at_once", counted)
    stage = _stage(old)
    out = stage.process(_records(first, 0), now=0.0)[1]
    out += stage.process([(None, "chronolog.facts", 0, 500, _request(at, new).encode())], now=0.0)[1]
    if restart:
        stage = roundtrip(stage, _stage(old))
    for i, e in enumerate(second):
        out += stage.process(_records([e], 1000 + i), now=0.0)[1]
    return out, counted.made


@pytest.mark.parametrize("block", range(6))
def test_random_pairs_restate_at_once_what_stepping_restates(monkeypatch, block):
    """Random program pairs (the changed strata reading only their own point where the fast way
    applies), each with ``--at`` at a random point and without it, restarted or not."""
    made = cases = 0
    seed = 1000 * block
    while cases < 12:
        seed += 1
        pair = _pair(seed)
        if pair is None:
            continue
        cases += 1
        old, new = pair
        first, second = _streams(seed)
        rng = random.Random(seed)
        for at in (str(rng.randint(0, max(e["t"] for e in first))), None):
            restart = rng.random() < 0.5
            stepped, none = _chain(monkeypatch, old, new, first, second, at, restart, off=True)
            at_once, count = _chain(monkeypatch, old, new, first, second, at, restart, off=False)
            assert none == 0 and at_once == stepped, (seed, at, old, new)
            made += count
    assert made  # (the changed strata of some pairs read only their own point)


def test_the_bench_programs_top_change_restates_at_once_what_stepping_restates(monkeypatch):
    """``bench upgrade``'s two-strata LARS program, its top stratum changed (``X != k0``), 400
    points, T = 200 and T the first point not evaluated; then 20 more points and a late one."""
    case = CASES["lars-strata"]
    first = [e for t in range(400) for e in _lars_events(t)] + [{"t": 400}]
    second = [e for t in range(400, 420) for e in _lars_events(t)]
    second += [{"t": 250, "pred": "p", "args": ["k0"]}, {"t": 415, "pred": "r", "args": ["k1"]}, {"t": 421}]
    for at in ("200", None):
        stepped, _ = _chain(monkeypatch, case.old, case.top, first, second, at, False, off=True)
        at_once, made = _chain(monkeypatch, case.old, case.top, first, second, at, False, off=False)
        assert made == 1 and at_once == stepped
        assert any(b'"diff":-1' in line for line in at_once)  # (s(k0) taken back from T on)


def _evaluator(text: str, answers: str) -> LarsEvaluator:
    return LarsEvaluator(plan_program(lars_parse([("p.lars", text)])), answers=answers)


@pytest.mark.parametrize("answers", ["changelog", "points"])
@pytest.mark.parametrize("at", [0, 3, 9, 13])
def test_a_switch_restates_at_once_in_both_answer_forms(monkeypatch, answers, at):
    """``versions.switch`` of a running evaluator keeping its record, in both answer forms (a
    fleet writes the changelog; ``points`` a ``t`` line per point): the restatement and what
    the versions write next are those of stepping.  T from before the first point to after
    the last one evaluated (12)."""
    old = "a(X) :- p(X) [2].\nc(X) :- q(X).\nb(X) :- a(X), not c(X).\nd(X) :- a(X), w(X), not c(X).\n"
    new = old.replace("not c(X).", "not c(X), X != 2.").replace("w(X), not c", "not w(X), not c")
    rng = random.Random(at)
    events = [(t, pred, (rng.randint(0, 3),)) for t in range(2, 13) for pred in ("p", "q", "w") if rng.random() < 0.6]
    got = []
    for off in (True, False):
        counted = _Counted(off)
        monkeypatch.setattr(lars_evaluator, "restated_at_once", counted)
        running = _evaluator(old, answers)
        running.record_crossing()
        latest = None
        for t, pred, args in [(2, None, ()), *events]:
            if latest is not None and t > latest:
                running.advance(latest)
            latest = t
            running.push(Event(t, pred, args))
        running.advance(12)
        versions, lines = switch(running, _evaluator(new, answers), (("new.lars", new),), at, 12,
                                 lambda sources: True, True, None, kept_answers(running.plan, _evaluator(new, answers).plan))
        for t, pred, args in ((13, "p", (2,)), (7, "w", (1,)), (14, "q", (0,))):
            versions.push(Event(t, pred, args))
        later = versions.advance(13).lines()
        assert counted.made == (0 if off else 1)
        got.append((lines, later))
    assert got[1] == got[0]
    assert got[0][0] or (answers == "points" and at > 12)  # (something restated: a t line from 13 on, none)
