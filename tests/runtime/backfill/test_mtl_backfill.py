"""The backfill of a DatalogMTL program: the generic path of any hosted dialect.

* ``corrections`` (published interval changes vs the true intervals) by hand
  and, on random changes, checked point by point at every end point and
  between them (this test's own count, no cells);
* segments with warm-up (``input_reach``) give the answers of one replay of
  the whole history, on random non-recursive programs, and those of
  ``chronolog run``;
* the Spark job on a real local session: published answers that missed a late
  fact and a retraction, plus the corrections, mean what ``chronolog run``
  prints on the whole history (multi-segment, one-segment recursive, and
  batch-only programs).
"""

from __future__ import annotations

import io
import random
from fractions import Fraction as F
from math import inf

import orjson
import pytest
from test_mtl_semantics import _literal, clip, drive, iv, meaning

from chronolog.core.events import Event
from chronolog.core.intervals import corrections
from chronolog.core.reach import Reach
from chronolog.dialects.mtl import intervals as I
from chronolog.dialects.mtl.evaluator import MtlEvaluator, input_reach
from chronolog.dialects.mtl.parser import parse_mtl
from chronolog.dialects.mtl.reader import read_mtl_events
from chronolog.dialects.registry import lookup
from chronolog.evaluator import Span
from chronolog.runtime.backfill.meaning import domain_of
from chronolog.runtime.backfill.segments import Segment, covering, plan_segments, replay

RATIONAL = domain_of(lookup("mtl"))


def held_at(t, changes) -> int:
    """This test's own sum of the changes covering time t."""
    return sum(d for one, d in changes if I.contains(one, t))


def probes(ivs) -> list:
    ends = sorted({e for x in ivs for e in (x[0], x[2])} - {inf, -inf})
    mids = [(a + b) / 2 for a, b in zip(ends, ends[1:])]
    return ends + mids + ([ends[0] - 1, ends[-1] + 1] if ends else [])


def test_corrections_by_hand():
    # published: [0,3] and (2,inf), then [4,4] withdrawn; true: [1,5]
    published = [(iv("[0,3]"), 1), (iv("(2,inf)"), 1), (iv("[4,4]"), -1)]
    fixes, bad = corrections([iv("[1,5]")], published)
    assert bad == 1  # (2,3] was held twice
    assert sorted(fixes) == sorted([
        (iv("[0,1)"), -1),  # held, not true
        (iv("(2,3]"), -1),  # held twice
        (iv("[4,4]"), 1),  # withdrawn, true
        (iv("(5,inf)"), -1),  # the open claim beyond the truth
    ])
    assert corrections([iv("[1,2)")], [(iv("[1,2)"), 1)]) == ([], 0)
    assert corrections([iv("[7/2,7/2]")], []) == ([(iv("[7/2,7/2]"), 1)], 0)


@pytest.mark.parametrize("seed", range(40))
def test_corrections_bring_random_changes_to_the_truth(seed):
    rng = random.Random(seed)

    def one():
        a = F(rng.randint(0, 12), 2)
        b = a + F(rng.randint(0, 6), 2)
        got = I.make(a, rng.random() < 0.7, inf if rng.random() < 0.15 else b, rng.random() < 0.7)
        return got or I.point(a)

    truth = I.coalesce(one() for _ in range(rng.randint(0, 4)))
    published = [(one(), rng.choice([1, 1, -1])) for _ in range(rng.randint(0, 6))]
    fixes, bad = corrections(truth, published)
    pts = probes(truth + [x for x, _ in published])
    for t in pts:
        assert held_at(t, published + fixes) == int(any(I.contains(x, t) for x in truth)), t
    assert bad == 0 or any(held_at(t, published) not in (0, 1) for t in pts)


# ---------------------------------------------------------------- segments = one replay = chronolog run


def non_recursive_program(rng: random.Random) -> str:
    heads = ["R", "S", "T"]
    rules = []
    for i, h in enumerate(heads):
        for _ in range(rng.randint(1, 2)):
            body = ", ".join(_literal(rng, ["P", "Q"] + heads[:i], False) for _ in range(rng.randint(1, 2)))
            if rng.random() < 0.4:  # stratified negation: everything read is of a lower level
                body += ", not " + _literal(rng, ["P", "Q"] + heads[:i], False)
            head = f"Boxplus[0,{rng.randint(0, 2)}]{h}(X)" if rng.random() < 0.2 else f"{h}(X)"
            rules.append(f"{head}:-{body}")
    return "\n".join(rules) + "\n"


def long_facts(rng: random.Random, n: int = 30) -> list[Event]:
    out = []
    for _ in range(n):
        a = F(rng.randint(0, 60), 2)
        one = I.make(a, True, a + F(rng.randint(0, 4), 2), True)
        out.append(Event(a, rng.choice(["P", "Q"]), (rng.choice("ab"),), False, None, one))
    return sorted(out, key=lambda e: e.t)


@pytest.mark.parametrize("seed", range(25))
def test_segments_with_warm_up_equal_one_replay_and_chronolog_run(seed):
    rng = random.Random(seed)
    text = non_recursive_program(rng)
    program = parse_mtl(text)
    reach = input_reach(program)
    assert reach is not None, text
    events = long_facts(rng)
    lo = events[0].t
    hi = max(max(e.t for e in events), max(e.span[2] for e in events))
    whole = clip(meaning(drive(MtlEvaluator(program), events + [Event(hi)])), hi)
    size = F(rng.randint(1, 8), 2)
    segments = plan_segments(lo, hi, hi, Reach(reach), size)
    assert len(segments) > 1 and segments[0].start == lo and segments[-1].end == hi and segments[-1].closed
    assign = covering(segments)
    per: dict[int, list] = {}
    for n, ev in enumerate(events):
        for i, row in assign((0, n, 0, ev)):
            per.setdefault(i, []).append(row[3])
    got: dict = {}
    for seg in segments:
        for atom, ivs in replay(MtlEvaluator(program), per.get(seg.index, []), seg, seg.keeps(), RATIONAL, lo).answers.items():
            got[atom] = I.coalesce(got.get(atom, []) + ivs)
    assert got == whole, (text, size)


def test_a_segment_without_events_still_starts_at_its_warm_up():
    # no heartbeat between 1 and 99: the alarm holds there, in every segment
    program = parse_mtl("Alarm:-not Heartbeat\nLate:-Diamondminus[0,2]Alarm\n")
    events = [Event(0, "Heartbeat", (), False, None, I.point(0)), Event(100, "Heartbeat", (), False, None, I.point(100))]
    whole = clip(meaning(drive(MtlEvaluator(program), events)), 100)
    assert whole[("Alarm", ())] == [iv("(0,100)")]
    got: dict = {}
    segments = plan_segments(0, 100, 100, Reach(input_reach(program)), 10)
    for seg in segments:
        mine = [e for e in events if seg.index in [i for i, _ in covering(segments)((0, 0, 0, e))]]
        for atom, ivs in replay(MtlEvaluator(program), mine, seg, seg.keeps(), RATIONAL, 0).answers.items():
            got[atom] = I.coalesce(got.get(atom, []) + ivs)
    assert got == whole


def test_input_reach_sums_along_rule_chains_and_is_unbounded_for_recursion_or_the_future():
    chain = "Q(X):-Diamondminus[1,2]P(X)\nR(X):-Boxminus[0,3]Q(X), P(X)\nBoxplus[0,1]S(X):-R(X) Since[0,1/2] P(X)\n"
    assert input_reach(parse_mtl(chain)) == F(13, 2)  # S: 1/2 + R's (3 + Q's 2) + the head's 1
    assert input_reach(parse_mtl("Q(X):-Diamondminus[1,2]Q(X)\n")) is None
    assert input_reach(parse_mtl("Q(X):-Diamondplus[1,2]P(X)\n")) is None
    assert input_reach(parse_mtl("Q(X):-Diamondminus[1,inf)P(X)\n")) is None
    assert plan_segments(0, 10, 12, None, 3) == [Segment(0, -inf, 0, 12, True, 12)]  # the whole history


# ---------------------------------------------------------------- the Spark job

CHAIN = "Q(X):-Diamondminus[1,2]P(X)\nR(X):-Boxminus[0,3]Q(X), P(X)\nBoxplus[0,1]S(X):-R(X) Since[0,1/2] P(X)\n"
RECURSIVE = "A(X):-P(X)\nA(X):-Diamondminus[3,3]A(X)\n"
FUTURE = "W(X):-Diamondplus[0,2]P(X)\n"


def history(seed: int) -> tuple[list[dict], list[dict]]:
    rng = random.Random(seed)
    prefix = []
    for t in range(0, 40):
        for x in "ab":
            if rng.random() < 0.5:
                prefix.append({"interval": f"[{t},{t + rng.choice([0, 1, 2])}]", "pred": "P", "args": [x]})
    late = [{"interval": "[12,15]", "pred": "P", "args": ["a"]},  # delayed
            dict(prefix[10], op="retract"),  # withdrawn
            {"t": "41/2", "pred": "P", "args": ["b"]},  # delayed, at a rational time
            {"interval": "[12,13)", "pred": "P", "args": ["c"]},  # a new constant, half-open
            {"t": 42}]
    return prefix, late


def chronolog_run(program: str, records: list[dict]) -> list[dict]:
    from chronolog.runtime.embedded import run_evaluator

    out = io.StringIO()
    events = read_mtl_events(io.StringIO("".join(orjson.dumps(r).decode() + "\n" for r in records)), "h")
    run_evaluator(MtlEvaluator(parse_mtl(program)), events, out, warn=lambda m: None)
    return [orjson.loads(x) for x in out.getvalue().splitlines()]


def line_meaning(lines: list[dict], hi) -> dict:
    changes = []
    for rec in lines:
        one = iv(rec["interval"]) if "interval" in rec else I.point(F(rec["t"]))
        span = Span(one[0], None if one[2] == inf else one[2], one[1], one[3])
        changes.append((rec["pred"], tuple(rec["args"]), span, rec.get("diff", 1)))
    return clip(meaning(changes), hi)


def _backfill(tmp_path, program: str, records: list[dict], published: list[dict] | None, *args: str) -> list[dict]:
    from chronolog.cli.main import main

    (tmp_path / "p.mtl").write_text(program)
    (tmp_path / "h.jsonl").write_text("".join(orjson.dumps(r).decode() + "\n" for r in records))
    extra = []
    if published is not None:
        (tmp_path / "a.jsonl").write_text("".join(orjson.dumps(r).decode() + "\n" for r in published))
        extra = ["--answers", str(tmp_path / "a.jsonl")]
    out = tmp_path / "fixes.jsonl"
    assert main(["backfill", str(tmp_path / "p.mtl"), "--history", str(tmp_path / "h.jsonl"), "--output", str(out),
                 *extra, *args]) == 0
    return [orjson.loads(x) for x in out.read_text().splitlines()]


@pytest.mark.parametrize("program, segment, want_segments", [(CHAIN, "5", 9), (RECURSIVE, "5", 1), (FUTURE, "5", 1)])
def test_backfill_brings_published_answers_to_what_run_prints(spark, tmp_path, capsys, program, segment,
                                                             want_segments):
    prefix, late = history(7)
    published = chronolog_run(program, prefix)  # the live system before the late events
    want = line_meaning(chronolog_run(program, prefix + late), 42)
    assert line_meaning(published, 42) != want  # the late events matter
    fixes = _backfill(tmp_path, program, prefix + late, published, "--from", "0", "--to", "50",
                      "--segment", segment)
    assert fixes and all(f.get("diff", 1) in (1, -1) for f in fixes)
    assert line_meaning(published + fixes, 42) == want
    err = capsys.readouterr().err
    assert f"evaluating {want_segments} segments" in err and "corrections emitted" in err

    # no published answers: the corrections are the answers themselves
    assert line_meaning(_backfill(tmp_path, program, prefix + late, None, "--from", "0", "--to", "42"), 42) == want
    # the true answers need no correction
    assert _backfill(tmp_path, program, prefix + late, chronolog_run(program, prefix + late),
                     "--from", "0", "--to", "42") == []


def test_backfill_of_a_sub_span_corrects_only_inside_it(spark, tmp_path):
    prefix, late = history(8)
    published = chronolog_run(CHAIN, prefix)
    want = line_meaning(chronolog_run(CHAIN, prefix + late), 42)
    fixes = _backfill(tmp_path, CHAIN, prefix + late, published, "--from", "21/2", "--to", "20", "--segment", "3")
    inside = (F(21, 2), True, 20, True)

    def within(m: dict) -> dict:
        out = {k: I.intersect_sets(v, [inside]) for k, v in m.items()}
        return {k: v for k, v in out.items() if v}

    got = line_meaning(published + fixes, 42)
    assert within(got) == within(want)
    before = line_meaning(published, 42)
    outside = lambda m: {k: I.subtract(v, [inside]) for k, v in m.items() if I.subtract(v, [inside])}  # noqa: E731
    assert outside(got) == outside(before)


def test_backfill_reports_bad_lines_of_the_history_and_the_answers(spark, tmp_path, capsys):
    from chronolog.cli.main import main

    (tmp_path / "p.mtl").write_text(CHAIN)
    (tmp_path / "h.jsonl").write_text('{"t": 1, "pred": "P", "args": ["a"]}\n{"t": "x", "pred": "P"}\n')
    assert main(["backfill", str(tmp_path / "p.mtl"), "--history", str(tmp_path / "h.jsonl"),
                 "--from", "0", "--to", "3"]) == 2
    err = capsys.readouterr().err
    assert f"{tmp_path / 'h.jsonl'}:2:7: error: \"t\" must be a number" in err and "Traceback" not in err
    (tmp_path / "h.jsonl").write_text('{"t": 1, "pred": "P", "args": ["a"]}\n')
    (tmp_path / "a.jsonl").write_text('{"interval": "[1,x]", "pred": "Q", "args": ["a"]}\n')
    assert main(["backfill", str(tmp_path / "p.mtl"), "--history", str(tmp_path / "h.jsonl"),
                 "--answers", str(tmp_path / "a.jsonl"), "--from", "0", "--to", "3"]) == 2
    err = capsys.readouterr().err
    assert f"{tmp_path / 'a.jsonl'}:1:14: error:" in err and "bad \"interval\"" in err and "Traceback" not in err
