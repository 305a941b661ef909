"""A LARS chain service's upgrade keeps the strata the change leaves alone (issue 37 item 4,
``dialects/lars/keeping.py``): their answers are neither taken back nor written again, and
over the restated span [T, now] they are evaluated once (to give the changed strata their
input), not once for the new version and again for what the running one wrote.  The answers
mean what hand derivation and ``chronolog run --upgrade`` say; random program pairs (one
rule added or removed: the other strata kept) with late events on both sides of T too."""

from __future__ import annotations

import json
import random
from collections import Counter

import orjson
import pytest
from hypothesis import HealthCheck, Phase, assume, event, given, settings
from hypothesis import strategies as st
from meaning import meaning
from strategies import random_program, streams
from test_stage_upgrade_lars import _fleet, _records, _request, _run_upgrade, _stage

from chronolog.cli.main import main
from chronolog.dialects.lars.engine.core import Engine
from chronolog.dialects.lars.hooks import lars_parse, lars_plan
from chronolog.dialects.lars.keeping import kept_answers, split
from chronolog.state.changelog import track
from chronolog.state.snapshots import roundtrip
from chronolog.versions import Versions

OLD = "a(X) :- p(X) [2].\nb(X) :- a(X), not c(X).\nc(X) :- q(X).\n"  # strata: (a, c), (b)
TOP = "a(X) :- p(X) [2].\nb(X) :- a(X), not c(X), X != z.\nc(X) :- q(X).\n"  # only the top one changes
FIRST = [{"t": 0}, {"t": 1, "pred": "p", "args": ["x"]}, {"t": 2, "pred": "q", "args": ["x"]},
         {"t": 3, "pred": "p", "args": ["z"]}, {"t": 4, "pred": "p", "args": ["y"]}, {"t": 6}]
# late events before T=3 (p(w)@2) and from it on (q(z)@4), then time runs on
SECOND = [{"t": 2, "pred": "p", "args": ["w"]}, {"t": 4, "pred": "q", "args": ["z"]},
          {"t": 7, "pred": "p", "args": ["z"]}, {"t": 9}]
SPAN = (0, 9)
NO_EXPLAIN = (Phase.explicit, Phase.reuse, Phase.generate, Phase.target, Phase.shrink)


def _plan(text: str):
    return lars_plan(lars_parse([("p.lars", text)]))


def test_the_plan_keeps_the_lower_stratum_only():
    assert kept_answers(_plan(OLD), _plan(TOP)) == {"a/1", "c/1"}
    assert kept_answers(_plan(OLD), _plan(OLD.replace("[2]", "[3]"))) == set()  # a's window: b reads it
    dated = "a(X) at U :- p(X) at U [2].\nb(X) :- a(X), not c(X).\nc(X) :- q(X).\n"
    assert split(_plan(dated), _plan(dated.replace("not c(X).", "not c(X), X != z.")), None) is None  # @-heads


@pytest.mark.parametrize("restart", ["after", "before", "none"])
def test_top_change_restated_from_3_hand_derived(tmp_path, capsys, restart):
    """a(X) while p(X) within [t-2, t], c(X) at q(X)'s points, b(X) :- a(X), not c(X) (from 3
    on X != z too).  a: x at 1-3, w at 2-4 (late), z at 3-5 and 7-9, y at 4-6; c: x at 2, z at 4
    (late, after T).  b before 3 (the old program): x at 1, w at 2; from 3 on (the new one):
    x at 3, w at 3 and 4, y at 4-6, no z."""
    got, said = _fleet("3", restart, TOP, OLD, FIRST, SECOND)
    assert said[0]["kept"] == ["a/1", "c/1"]  # the outcome names the kept answers
    a = {("a", ("x",), t) for t in (1, 2, 3)} | {("a", ("w",), t) for t in (2, 3, 4)} \
        | {("a", ("z",), t) for t in (3, 4, 5, 7, 8, 9)} | {("a", ("y",), t) for t in (4, 5, 6)}
    b = {("b", ("x",), 1), ("b", ("w",), 2), ("b", ("x",), 3), ("b", ("w",), 3), ("b", ("w",), 4)} \
        | {("b", ("y",), t) for t in (4, 5, 6)}
    want = a | b | {("c", ("x",), 2), ("c", ("z",), 4)}
    assert meaning(got, SPAN, running=True) == want
    run = _run_upgrade(tmp_path, capsys, "3", FIRST + SECOND, TOP, OLD)
    assert meaning(run, SPAN) == want


def test_two_chained_upgrades_each_keeping_mean_run_with_both(tmp_path, capsys):
    """OLD -> TOP at 3 -> TOP2 at 7 (b also without y), the second after late input and a
    restart: each keeps a and c; the second's running version was made by the first's keep."""
    top2 = TOP.replace("X != z.", "X != z, X != y.")
    stage = _stage(OLD)
    out = stage.process(_records(FIRST, 0), now=0.0)[1]
    leaving, lines = stage.process([(None, "chronolog.facts", 0, 100, _request("3", TOP).encode())], now=0.0)
    out += lines
    stage = roundtrip(stage, _stage(OLD))
    out += stage.process(_records(SECOND[:3], 200), now=0.0)[1]
    leaving, lines = stage.process([(None, "chronolog.facts", 0, 300, _request("5", top2, "r2").encode())], now=0.0)
    assert orjson.loads(leaving[0].payload)["kept"] == ["a/1", "c/1"]
    out += lines
    out += stage.process(_records(SECOND[3:], 400), now=0.0)[1]
    out += stage.process([], now=10_000.0)[1]
    for name, text in (("old", OLD), ("top", TOP), ("top2", top2)):
        (tmp_path / f"{name}.lars").write_text(text)
    (tmp_path / "in.jsonl").write_text("".join(json.dumps(e) + "\n" for e in FIRST + SECOND))
    capsys.readouterr()
    assert main(["run", str(tmp_path / "old.lars"), "--input", str(tmp_path / "in.jsonl"), "--upgrade",
                 f"3={tmp_path / 'top.lars'}", "--upgrade", f"5={tmp_path / 'top2.lars'}"]) == 0
    want = meaning([json.loads(x) for x in capsys.readouterr().out.splitlines()], SPAN)
    assert meaning([json.loads(x) for x in out], SPAN, running=True) == want
    assert ("b", ("y",), 4) in want and ("b", ("y",), 5) not in want  # TOP at 4, TOP2 from 5 on


@pytest.mark.parametrize("at", ["2", "5"])
@pytest.mark.parametrize("restart", ["after", "none"])
def test_a_kept_component_in_a_changed_stratum_is_written_once(tmp_path, capsys, at, restart):
    """b's rule is the same in both programs, but the added a(X) :- p(X), b(X) joins b's
    stratum, so only c's answers are kept; b's component is still kept (the running version
    does not evaluate it again, so nothing of b is taken back) and the new version must not
    write b again either.  Hand derived: b(1) and a(1) (from T on) at 5, c at every point."""
    old = "c :- not b(2).\nb(X) :- p(X).\n"
    new = old + "a(X) :- p(X), b(X).\n"
    first = [{"t": 0}, {"t": 5, "pred": "p", "args": [1]}, {"t": 7}]
    got, said = _fleet(at, restart, new, old, first, [{"t": 9}])
    assert said[0]["kept"] == ["c/0"]
    assert all("pred" in x for x in got)  # (the answer topic: the point without one is no line)
    want = {("b", (1,), 5), ("a", (1,), 5)} | {("c", (), t) for t in range(10)}
    assert meaning(got, (0, 9), running=True) == want
    assert meaning(_run_upgrade(tmp_path, capsys, at, first + [{"t": 9}], new, old), (0, 9)) == want


FACT_CHANGES = {  # a reads b's program facts: its rule's text is the same, its answers are not
    "removed": ("a(X) :- b(X) [3].\nb(1).\n", "a(X) :- b(X) [3].\n", set()),
    "changed": ("a(X) :- b(X) [3].\nb(1).\n", "a(X) :- b(X) [3].\nb(2).\n", {2}),
}


@pytest.mark.parametrize("change", sorted(FACT_CHANGES))
@pytest.mark.parametrize("restart", ["after", "none"])
def test_a_changed_program_fact_changes_the_component_reading_it(tmp_path, capsys, change, restart):
    """A program fact holds at every point: a(1) at every point before T=2 (the old b(1)),
    from 2 on a(X) for the new program's b(X) only.  Nothing is kept."""
    old, new, after = FACT_CHANGES[change]
    assert kept_answers(_plan(old), _plan(new)) == set()
    events = [{"t": 0}, {"t": 5, "pred": "p", "args": [1]}, {"t": 7}]
    got, said = _fleet("2", restart, new, old, events, [{"t": 9}])
    assert "kept" not in said[0]
    want = {("a", (1,), 0), ("a", (1,), 1)} | {("a", (x,), t) for x in after for t in range(2, 10)}
    assert meaning(got, (0, 9), running=True) == want
    assert meaning(_run_upgrade(tmp_path, capsys, "2", events + [{"t": 9}], new, old), (0, 9)) == want


@pytest.mark.parametrize(("at", "before"), [("1", set()), ("3", {("b", (3,), 2)})])
@pytest.mark.parametrize("restart", ["after", "none"])
def test_a_kept_component_dated_outside_the_timeline_leaves_no_answer_set(tmp_path, capsys, at, before, restart):
    """a(1) at 2 lies outside the timeline [1, 1], so neither program has an answer set at 1,
    though no changed component reads a.  c holds at 1-3 (p(1) at 1, window 2): at 2 and 3
    (kept); b(3), a program fact the new program drops, at 2 before T only."""
    old = "a(1) at 2.\nb(3).\nb(X) :- q(X), not c.\nc :- p(1) [2].\n"
    new = old.replace("b(3).\n", "")
    first = [{"t": 1, "pred": "p", "args": [1]}, {"t": 7}]
    got, said = _fleet(at, restart, new, old, first, [{"t": 9}])
    assert said[0]["kept"] == ["c/0"]
    want = {("c", (), 2), ("c", (), 3)} | before
    assert meaning(got, (1, 9), running=True) == want
    assert meaning(_run_upgrade(tmp_path, capsys, at, first + [{"t": 9}], new, old), (1, 9)) == want


def _evaluations(monkeypatch, records: list, pred: tuple, forget: bool = False, restart: bool = False) -> Counter:
    """Per time point, how many engine steps computed ``pred``'s component while the chain of
    OLD, given ``records`` first, read an upgrade to TOP from 3 on (``forget``: its record of
    what crosses components emptied first, as a state written before it kept one;
    ``restart``: its state written out and read back first)."""
    stage = _stage(OLD)
    stage.process(_records(records, 0), now=0.0)
    if forget:
        stage.journals()["crossing"].clear()
    if restart:
        stage = roundtrip(stage, _stage(OLD))
    seen: Counter = Counter()
    step = Engine.step

    def counting(engine, t, facts, imported=None):
        if any(pred in c.preds and engine._role[i] == "compute" for i, c in enumerate(engine.plan.components)):
            seen[t] += 1
        return step(engine, t, facts, imported)

    monkeypatch.setattr(Engine, "step", counting)
    stage.process([(None, "chronolog.facts", 0, 100, _request("3", TOP).encode())], now=0.0)
    monkeypatch.setattr(Engine, "step", step)
    assert isinstance(stage.evaluator, Versions)
    return seen


RECORDS = FIRST[:-1] + [{"t": t, "pred": "p", "args": [f"k{t}"]} for t in range(6, 16)] + [{"t": 16}]


def test_the_kept_stratum_is_not_evaluated_over_the_restated_span(monkeypatch):
    """Evaluated up to 15, restated from 3: the kept a (window 2) and c are read from the
    chain's record of what crosses components (``crossing.py``), not evaluated over [T's
    warm-up, 15]: only at 13-15, the new version's engine warmed up as after a restart.  The
    changed b reads only the point it evaluates: each version's b is evaluated over [3, 15]
    in one step of its rules with a time argument (``b/2``, ``restating.py``), not point by
    point (the new version, and what the running one wrote)."""
    kept = _evaluations(monkeypatch, RECORDS, ("a", 1))
    assert kept == Counter({13: 1, 14: 1, 15: 1})
    assert _evaluations(monkeypatch, RECORDS, ("c", 1)) == Counter({13: 1, 14: 1, 15: 1})
    assert _evaluations(monkeypatch, RECORDS, ("b", 1)) == Counter({13: 1, 14: 1, 15: 1})
    assert _evaluations(monkeypatch, RECORDS, ("b", 2)) == Counter({15: 2})


def test_the_record_is_part_of_the_chain_state(monkeypatch):
    """Restarted from its stored state before the upgrade (the record a journal of it), the
    chain still reads the kept strata from the record."""
    assert _evaluations(monkeypatch, RECORDS, ("a", 1), restart=True) == Counter({13: 1, 14: 1, 15: 1})


@pytest.mark.parametrize("restart", [False, True])
def test_a_second_upgrade_reads_the_record_the_first_one_made(monkeypatch, restart):
    """OLD -> TOP at 3 (the new version's record made from 3 on by the upgrade, then by its
    evaluations), 10 more points, then TOP -> TOP2 at 14 (a restart between them with
    ``restart``: the newest version's record a journal too): the second upgrade evaluates
    the kept a only where the new version's engine warms up at the end (23-25)."""
    top2 = TOP.replace("X != z.", "X != z, X != k7.")
    stage = _stage(OLD)
    stage.process(_records(RECORDS, 0), now=0.0)
    stage.process([(None, "chronolog.facts", 0, 100, _request("3", TOP).encode())], now=0.0)
    more = [{"t": t, "pred": "p", "args": [f"k{t}"]} for t in range(16, 26)] + [{"t": 26}]
    stage.process(_records(more, 200), now=0.0)
    if restart:
        stage = roundtrip(stage, _stage(OLD))
    seen: Counter = Counter()
    step = Engine.step

    def counting(engine, t, facts, imported=None):
        if any(("a", 1) in c.preds and engine._role[i] == "compute" for i, c in enumerate(engine.plan.components)):
            seen[t] += 1
        return step(engine, t, facts, imported)

    monkeypatch.setattr(Engine, "step", counting)
    leaving, _ = stage.process([(None, "chronolog.facts", 0, 300, _request("14", top2, "r2").encode())], now=0.0)
    monkeypatch.setattr(Engine, "step", step)
    assert orjson.loads(leaving[0].payload)["kept"] == ["a/1", "c/1"]
    assert seen == Counter({23: 1, 24: 1, 25: 1})


def test_a_top_change_takes_the_record_over_as_it_is():
    """The record holds a and c, both kept by the top change and nothing dating a head: the new
    version goes on with the same entries, and the upgrade's commit writes none of them.  A
    change that makes b read by a new rule records b too: the new version's record is made
    from T on by the upgrade's evaluation (and then holds b)."""
    stage = track(_stage(OLD))
    stage.process(_records(RECORDS, 0), now=0.0)
    journal = stage.journals()["crossing"]
    entries = dict(journal)
    journal.take()
    stage.process([(None, "chronolog.facts", 0, 100, _request("3", TOP).encode())], now=0.0)
    assert stage.newest.crossing.entries is journal and journal.take() == [] and dict(journal) == entries
    stage = track(_stage(OLD))
    stage.process(_records(RECORDS, 0), now=0.0)
    reads_b = TOP + "d(X) :- b(X) [1].\n"
    stage.process([(None, "chronolog.facts", 0, 100, _request("3", reads_b).encode())], now=0.0)
    assert sorted(journal := stage.journals()["crossing"]) == list(range(3, 16))
    assert {p for entry in journal.values() for p in entry} == {("a", 1), ("b", 1)}  # (c holds at 2 only)


def test_without_the_record_the_kept_stratum_is_evaluated_once(monkeypatch):
    """The same with the record gone (a state written by a release that kept none): the
    kept a is evaluated once at each point from T's warm-up (1) to 12, and at 13-15 once
    more (the warm-up after); without keeping it would be twice at every point."""
    kept = _evaluations(monkeypatch, RECORDS, ("a", 1), forget=True)
    assert kept == Counter({**dict.fromkeys(range(1, 13), 1), 13: 2, 14: 2, 15: 2})


@st.composite
def pairs(draw) -> tuple[str, str]:
    """A random stratified program (tests/strategies.py, seeded) and the same with one rule of
    another added, or one of its rules removed: the strata that neither define nor read the
    rule's head are kept.  Mostly without ``@``-heads (a program with them keeps nothing:
    ``keeping.split``), and mostly a pair that keeps some answers."""
    rng = random.Random(draw(st.integers(0, 2**32)))
    dated = rng.random() < 0.2
    undated = lambda rules: [r for r in rules if dated or r.head.time is None]  # noqa: E731
    old = undated(random_program(rng).rules)
    new = list(old)
    if len(old) > 1 and rng.random() < 0.4:
        del new[rng.randrange(len(old))]
    else:
        other = [r for r in undated(random_program(rng).rules) if r.body]
        if other:
            new.append(rng.choice(other))
    text = lambda rules: "".join(f"{r}\n" for r in rules)  # noqa: E731
    if draw(st.integers(0, 3)):
        assume(kept_answers(_plan(text(old)), _plan(text(new))))
    return text(old), text(new)


@st.composite
def split_streams(draw) -> tuple[list[dict], list[dict]]:
    """A random stream cut in two: the second part arrives after the upgrade, in a random
    order (late events on both sides of T), some of the first part retracted after it."""
    events = [{"t": e.t, "pred": e.pred, "args": list(e.args)} if e.pred else {"t": e.t} for e in draw(streams())]
    cut = draw(st.integers(1, len(events)))
    first, rest = events[:cut], events[cut:]
    assume(any("pred" in e for e in first))  # (a log to take over)
    rest = [rest[i] for i in draw(st.permutations(range(len(rest))))]
    facts = [e for e in first if "pred" in e]
    if facts and draw(st.booleans()):
        rest.append({**draw(st.sampled_from(facts)), "op": "retract"})
    last = max(e["t"] for e in events)
    return first + [{"t": last + 1}], [*rest, {"t": last + 3}]  # (the first part's points closed)


@settings(max_examples=150, deadline=None, suppress_health_check=list(HealthCheck), phases=NO_EXPLAIN)
@given(pair=pairs(), parts=split_streams(), at=st.integers(0, 8), restart=st.sampled_from(["after", "none"]))
def test_random_pairs_keeping_strata_mean_run_upgrade(tmp_path_factory, capsys, pair, parts, at, restart):
    old, new = pair
    first, second = parts
    kept = kept_answers(_plan(old), _plan(new))
    event("keeps strata" if kept else "keeps none")
    got, said = _fleet(str(at), restart, new, old, first, second)
    if "refused" in said[0]:
        event("refused")
        return
    assert said[0].get("kept", []) == sorted(kept)
    events = first + second
    span = (min(e["t"] for e in events), max(e["t"] for e in events))
    tmp = tmp_path_factory.mktemp("keep")
    want = _run_upgrade(tmp, capsys, str(at), events, new, old)
    assert meaning(got, span, running=True) == meaning(want, span), (old, new, at)
