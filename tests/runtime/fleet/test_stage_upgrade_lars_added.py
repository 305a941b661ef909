"""An upgrade adding a stratum to a LARS fleet of one service per stratum, at the stages
without a broker: the added stratum's reasoner starts from ``T − reach``, not from the start
of its topics.  The reasoners below send their content from there on (and the lowest one its
log) as a seed when they apply the upgrade (``dialects/lars/seeds.py``); the added reasoner is
given the grounded topic from the upgrade record on and each lower stratum's topic from its
seed on, and its answers still mean what ``chronolog run --upgrade`` prints."""

from __future__ import annotations

import contextlib
import io
import json
import random

import pytest
from hypothesis import HealthCheck, event, given, settings
from hypothesis import strategies as st
from meaning import meaning
from test_stage_upgrade_lars_strata import EVENT, LATE, OLD, RULES, SPAN, _plain, _request, _run_upgrade, per_stratum

from chronolog.cli.main import main
from chronolog.contract.models import StratumSeed
from chronolog.dialects.lars import seeds
from chronolog.dialects.lars.changes import per_stratum_refusal
from chronolog.dialects.lars.hooks import lars_plan
from chronolog.dialects.registry import lookup

# a third stratum reading an input predicate through a window of 3 and b: its answers from T on
# read r over [T - 3, now] and b from T on
ADDED = OLD + "d(X) :- r(X) [3], not b(X).\n"
T = 150


def _stream(rng: random.Random) -> tuple[list[dict], list[dict]]:
    """A long stream before T (what the added stratum never needs), the rest after it, late
    events on both sides of T — before T − 3 (which change nothing from T on) and within it."""
    first = [{"t": 0}]
    for t in range(1, T):
        for pred in ("p", "q", "r"):
            if rng.randrange(4) == 0:
                first.append({"t": t, "pred": pred, "args": [rng.choice("xyz")]})
    first += [{"t": T - 2, "pred": "r", "args": ["x"]}, {"t": T - 1, "pred": "p", "args": ["x"]},
              {"t": T - 2, "pred": "r", "args": ["w"]},  # (d(w) from T to T + 1: only through the window)
              {"t": T - 10, "pred": "r", "args": ["v"]}]  # (d(v) only through a window of 12 or more)
    second = [{"t": T, "pred": "p", "args": ["y"]}, {"t": T + 1, "pred": "r", "args": ["y"]},
              {"t": 40, "pred": "r", "args": ["z"]}, {"t": T - 3, "pred": "r", "args": ["y"]},
              {"t": T + 2, "pred": "p", "args": ["z"]}, {"t": T - 1, "pred": "r", "args": ["z"]},
              {"t": T + 2, "pred": "p", "args": ["z"], "op": "retract"}, {"t": T + 6}]
    return first, second


@pytest.mark.parametrize("at", [str(T), "120", "153"])
@pytest.mark.parametrize("seed", [0, 1, 2])
def test_an_added_stratum_reads_from_t_minus_reach_and_means_run_upgrade(tmp_path, capsys, at, seed):
    """T the first time not evaluated, in the past (a restatement) and in the future: the added
    reasoner reads the grounded topic from the upgrade record on and the lower strata's from
    their seeds on (restarted now and then), its log holds no input before T − 4 but the late
    events after the upgrade, and the answers are ``run --upgrade``'s — d's among them, which
    need r from T − 3 on."""
    first, second = _stream(random.Random(seed))
    stages: dict = {}
    read: dict = {}
    got, said = per_stratum(first, _request(at, ADDED), second, seed=seed, restarts=4, stages=stages,
                            from_seeds=True, read=read)
    assert sorted(s["service"] for s in said) == ["reasoner.1", "reasoner.2", "reasoner.3"], said
    want = _run_upgrade(tmp_path, capsys, at, ADDED, first + second)
    span = (0, T + 6)
    assert meaning(got, span, running=True) == meaning(want, span)
    assert int(at) > T or ("d", ("w",), T + 1) in meaning(want, span)
    grounded = [pos for topic, pos in read["reasoner.3"] if topic == "grounded"]
    # (the records before the upgrade record: one per closed point, and the rest)
    assert len(grounded) < len([pos for topic, pos in read["reasoner.1"] if topic == "grounded"]) / 3
    added = stages["reasoner.3"]
    late = {e["t"] for e in second}
    for r, _ in added._parts():
        assert all(t >= int(at) - 4 or t in late for t, facts in r.log.items() if facts), sorted(r.log)


def test_without_seeds_an_added_stratum_needs_its_topics_from_the_start(tmp_path, capsys, monkeypatch):
    """Nothing seeded (as for a program that reads all earlier input): an added reasoner given
    its topics from the upgrade record on lacks the input before T its window reads — which is
    why it then reads them from the start."""
    monkeypatch.setattr(seeds, "seeded", lambda old, new: False)
    first, second = _stream(random.Random(0))
    got, _ = per_stratum(first, _request(str(T), ADDED), second, from_seeds=True)
    want = _run_upgrade(tmp_path, capsys, str(T), ADDED, first + second)
    assert meaning(got, (0, T + 6), running=True) != meaning(want, (0, T + 6))
    got, _ = per_stratum(first, _request(str(T), ADDED), second)
    assert meaning(got, (0, T + 6), running=True) == meaning(want, (0, T + 6))


@pytest.mark.parametrize("new", [
    "a(X) :- p(X) [2].\nb(X) :- a(X), not c(X).\nc(X) :- q(X).\nd(X) :- q(X) [3], not b(X).\n",
    # two strata added at once: the lower of them sends its seed to the upper one too
    OLD + "d(X) :- r(X) [3], not b(X).\ne(X) :- p(X) [2], not d(X).\n",
    # a tuple window (the last 2 facts, however old): nothing seeded, the added reasoner reads
    # its topics from the start
    OLD + "d(X) :- r(X) [2 #], not b(X).\n",
], ids=["grow", "grow-two", "tuple"])
@pytest.mark.parametrize("at", ["4", "9", None])
@pytest.mark.parametrize("seed", [0, 1, 2, 3])
def test_strata_added_from_their_seeds_mean_run_upgrade(tmp_path, capsys, new, at, seed):
    """The hand cases of late events on both sides of T, the added reasoners given their topics
    from the upgrade record and the seeds on (from the start where nothing is seeded)."""
    events = [{"t": 0}, {"t": 1, "pred": "p", "args": ["x"]}, {"t": 2, "pred": "q", "args": ["x"]},
              {"t": 3, "pred": "r", "args": ["y"]}, {"t": 3, "pred": "p", "args": ["y"]}, {"t": 5, "pred": "q", "args": ["y"]},
              {"t": 6, "pred": "r", "args": ["x"]}, {"t": 8}]
    bounded = lars_plan(lookup("lars").parse([("new.lars", new)])).tuple_reach == 0
    got, said = per_stratum(events, _request(at, new), LATE, seed=seed, restarts=4, from_seeds=bounded)
    used = {s["at"] for s in said}
    assert len(used) == 1, said
    want = _run_upgrade(tmp_path, capsys, used.pop(), new, events + LATE)
    assert meaning(got, SPAN, running=True) == meaning(want, SPAN)


# rules on top of RULES' predicates: with negation or a window over a derived one, a stratum of their own
TOP = ["w(X) :- p(X), not u(X).", "w(X) :- r(X) [2], not s(X).", "w(X) :- q(X) [1], not s(X) [2].",
       "v(X) :- w(X) [1], not q(X).", "v(X) :- p(X), not w(X)."]


@settings(max_examples=100, deadline=None, suppress_health_check=list(HealthCheck))
@given(old=st.lists(st.sampled_from(RULES), min_size=1, max_size=3, unique=True),
       new=st.lists(st.sampled_from(RULES), min_size=1, max_size=3, unique=True),
       top=st.lists(st.sampled_from(TOP), min_size=0, max_size=2, unique=True), on_old=st.booleans(),
       events=st.lists(EVENT, min_size=1, max_size=12), cut=st.integers(0, 12), at=st.integers(0, 11),
       seed=st.integers(0, 3))
def test_random_pairs_adding_strata_from_their_seeds_splice(tmp_path_factory, old, new, top, on_old, events, cut, at,
                                                            seed):
    """Random pairs where the new program has more strata and the fleet takes it: with the added
    reasoners given their topics from the upgrade record and the seeds on, the answers are the
    splice of two plain runs."""
    old_text, new_text = "\n".join(old) + "\n", "\n".join((old if on_old else new) + top) + "\n"
    old_plan, new_plan = (lars_plan(lookup("lars").parse([("x", t)])) for t in (old_text, new_text))
    grows = new_plan.fleet_strata > old_plan.fleet_strata and per_stratum_refusal(old_plan, new_plan) is None
    event("strata added, " + ("seeded" if grows and seeds.seeded(old_plan, new_plan) else "from the start")
          if grows else "not a pair adding strata")
    if not grows:
        return
    tmp = tmp_path_factory.mktemp("pair")
    events = [{"t": 0}, *events, {"t": 11}]
    span = (0, 11)
    before = {a for a in meaning(_plain(tmp, old_text, events), span) if a[2] < at}
    after = {a for a in meaning(_plain(tmp, new_text, events), span) if a[2] >= at}
    got, said = per_stratum(events[:cut + 1], _request(str(at), new_text), events[cut + 1:], seed=seed,
                            restarts=3, old=old_text, from_seeds=seeds.seeded(old_plan, new_plan))
    assert len(said) == new_plan.fleet_strata and all(s.get("at") == str(at) for s in said), said
    assert meaning(got, span, running=True) == before | after


def test_the_seed_records_carry_the_content_and_log_from_t_minus_reach():
    """What the reasoners below send (hand-derived): the lowest one's log from T − 4 on (the
    window of 3 before T − 1), each one's content from the point before that on."""
    new = lars_plan(lookup("lars").parse([("new.lars", ADDED)]))
    assert seeds.seeded(lars_plan(lookup("lars").parse([("old.lars", OLD)])), new)
    assert seeds.seed_from(new, 0, T) == T - 4 and seeds.seed_from(new, T - 2, T) == T - 2
    log = seeds.log_part({t: [(("p", 1), ("x",))] for t in range(T)}, T - 4)
    assert [t for t, _ in log] == [T - 4, T - 3, T - 2, T - 1]
    sent = {t: {("a", 1): frozenset({("x",)})} for t in range(T)}
    records = seeds.seed_records("r1", sent, {}, T - 4, {"t1": 0})
    got = seeds.Seed()
    for rec in records:
        StratumSeed.model_validate_json(rec)
        got.add(json.loads(rec))
    assert got.ended and got.scalars == {"t1": 0}
    assert [(t, ok, c) for t, ok, c in got.content()] == [(t, True, sent[t]) for t in range(T - 5, T)]


WIDER = ADDED.replace("r(X) [3]", "r(X) [20]")


@pytest.mark.parametrize("seed", [0, 1])
def test_a_later_upgrade_reading_an_added_stratum_before_its_seed_is_refused_by_every_reasoner(seed):
    """The added reasoner holds its input from T − 4 = 146 on: a second upgrade widening d's
    window to 20 at 152 would read it from 131 on — refused, by every reasoner alike (each
    knows where the seeds started), the fleet running the first upgrade's program on."""
    first, second = _stream(random.Random(seed))
    later = [*second[:3], _request("152", WIDER, "r2"), *second[3:]]
    got, said = per_stratum(first, _request(str(T), ADDED), later, seed=seed, restarts=3, from_seeds=True)
    refused = [s for s in said if s["upgrade"] == "r2"]
    assert sorted(s["service"] for s in refused) == ["reasoner.1", "reasoner.2", "reasoner.3"], said
    assert all("stratum 3's reasoner holds its input from 146 on" in s["refused"] for s in refused), refused
    plain, _ = per_stratum(first, _request(str(T), ADDED), second, seed=seed, from_seeds=True)
    assert meaning(got, (0, T + 6), running=True) == meaning(plain, (0, T + 6), running=True)


@pytest.mark.parametrize("seed", [0, 1])
def test_a_later_upgrade_reading_an_added_stratum_from_its_seed_on_means_run_upgrade(tmp_path, seed):
    """The same widening at 167 reads d's input from 146 on, all of it held: taken, and the
    answers mean ``run OLD --upgrade 150=ADDED --upgrade 167=WIDER``."""
    first, second = _stream(random.Random(seed))
    second = [*second, {"t": T + 10, "pred": "r", "args": ["v"]}, {"t": T + 17, "pred": "r", "args": ["u"]},
              {"t": T + 30}]
    later = [*second[:5], _request("167", WIDER, "r2"), *second[5:]]
    got, said = per_stratum(first, _request(str(T), ADDED), later, seed=seed, restarts=3, from_seeds=True)
    assert not [s for s in said if "refused" in s], said
    for name, text in (("old.lars", OLD), ("added.lars", ADDED), ("wider.lars", WIDER)):
        (tmp_path / name).write_text(text)
    (tmp_path / "in.jsonl").write_text("".join(json.dumps(e) + "\n" for e in first + second))
    out = io.StringIO()
    with contextlib.redirect_stdout(out):
        assert main(["run", str(tmp_path / "old.lars"), "--input", str(tmp_path / "in.jsonl"), "--upgrade",
                     f"{T}={tmp_path / 'added.lars'}", "--upgrade", f"167={tmp_path / 'wider.lars'}"]) == 0
    want = meaning([json.loads(x) for x in out.getvalue().splitlines()], (0, T + 30))
    assert ("d", ("u",), T + 30) in want
    assert meaning(got, (0, T + 30), running=True) == want


@pytest.mark.parametrize("new", [
    # w joins q's stratum (u is never derived), v's stratum is added
    "q(X) :- p(X).\nw(X) :- p(X), not u(X).\nv(X) :- p(X), not w(X).\n",
    # u derived: w's stratum and v's on top of it both added
    "q(X) :- p(X).\nu(X) :- r(X).\nw(X) :- p(X), not u(X).\nv(X) :- p(X), not w(X).\n",
], ids=["one-added", "two-added"])
@pytest.mark.parametrize("seed", range(20))
def test_strata_added_at_zero_before_any_input_read_the_points_sent_after_the_upgrade(new, seed):
    """The upgrade at T = 0 comes before any input, p(a) at 0 right after it: a lower reasoner
    has read nothing when it applies the upgrade, and may evaluate p(a) in the very flush that
    sends its seed — its records of 0 then precede the seed on its topic, and the added
    reasoner, dropping them, has them from the seed only.  Hand-derived: u never holds, so
    w(a) and q(a) hold at 0 and v(a) never does."""
    events = [{"t": 0}, {"t": 0, "pred": "p", "args": ["a"]}, {"t": 11}]
    got, said = per_stratum(events[:1], _request("0", new), events[1:], seed=seed, restarts=3,
                            old="q(X) :- p(X).\n", from_seeds=True)
    strata = lars_plan(lookup("lars").parse([("new.lars", new)])).fleet_strata
    assert len(said) == strata and all(s.get("at") == "0" for s in said), said
    assert meaning(got, (0, 11), running=True) == {("q", ("a",), 0), ("w", ("a",), 0)}
