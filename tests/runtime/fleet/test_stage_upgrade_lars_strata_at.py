"""``chronolog upgrade`` of a LARS fleet of one service per stratum to and from programs with
``@``-heads, at the stages without a broker (the driver of ``test_stage_upgrade_lars_strata``:
seeded consumption order, restarts from stored state, the supervisor acting a while after the
outcome).  The version is chosen by the time point evaluated, and a stratum's record of time t
is the content of the evaluation at t, dated atoms included: from T on the new reasoner's.  The
output widens how far back it looks (its corrections, the dated atoms it remembers so as to
write each once) as the content shows a later version dates further back than the program it
serves.  Hand-derived, and random programs, streams and upgrade times against the naive
evaluator per time point (``reference_splice``, what ``run --upgrade`` prints)."""

from __future__ import annotations

import pytest
from dialect_programs import LARS_AT_RULES, LARS_RULES
from hypothesis import HealthCheck, event, given, settings
from hypothesis import strategies as st
from meaning import meaning
from reference import reference_splice
from test_stage_upgrade_lars_strata import _request, _run_upgrade, per_stratum

from chronolog.dialects.lars.changes import per_stratum_refusal
from chronolog.dialects.lars.hooks import lars_plan
from chronolog.dialects.registry import lookup

# w dates p back when s holds now: over [1] in NARROW, over [3] in WIDE; v reads w through
# 'at' over [1], in the stratum above w's (it negates z, which no input makes hold), changed
# with it (it reads a changed stratum).  NARROW's reach is 1: what the output serving it
# remembers and replays
NARROW = "w(X) at U :- p(X) at U [1], s(X).\nz(X) :- q(X).\nv(X) :- w(X) at U [1], not z(X).\n"
WIDE = NARROW.replace("p(X) at U [1]", "p(X) at U [3]")
# a new answer predicate w with an @-head (read now, not through a window: not kept with its times)
DATED = "w(X) at U :- p(X) at U [3], s(X).\nz(X) :- q(X).\nv(X) :- w(X), not z(X).\n"
PLAIN = "x(X) :- p(X) [1], s(X).\nz(X) :- q(X).\nv(X) :- x(X), not z(X).\n"  # x: at the time evaluated
STREAM = [{"t": 0}, {"t": 2, "pred": "p", "args": ["a"]}, {"t": 3, "pred": "s", "args": ["a"]},
          {"t": 4, "pred": "p", "args": ["b"]}, {"t": 5, "pred": "s", "args": ["a"]},
          {"t": 7, "pred": "s", "args": ["b"]}, {"t": 8}]
SPAN = (0, 8)


def _points(first: list[dict], new: str, at: str, second: list[dict], old: str, seed: int) -> set:
    got, said = per_stratum(first, _request(at, new), second, seed=seed, restarts=3, old=old)
    assert len(said) == 2 and all(s.get("at") == at for s in said), said
    return meaning(got, SPAN, running=True)


@pytest.mark.parametrize("cut", [3, len(STREAM)], ids=["future", "past"])
@pytest.mark.parametrize("seed", [0, 1, 2])
def test_a_wider_at_head_from_t_on_dates_atoms_the_output_had_forgotten(cut, seed):
    """NARROW -> WIDE at T=3.  Evaluations 0..2 (NARROW): no s, nothing.  From 3 (WIDE): at 3
    s(a), p(a)@2 in [0,3]: w(a)@2; at 5 s(a), p(a)@2 in [2,5]: w(a)@2 again (written once: at 4
    it was not derived, and 2 < 5 - 1, the narrow program's reach); at 7 s(b), p(b)@4 in [4,7]:
    w(b)@4.  v at e for a w in e's content within [e-1, e]: v(a)@3 only.  NARROW alone gives
    w(a)@2 and v(a)@3.  With T in the past (the whole stream evaluated first)
    the output widens its reach before the restated content: w(b)@4 comes out as a correction
    though 4 < 7 - 1."""
    got = _points(STREAM[:cut], WIDE, "3", STREAM[cut:], NARROW, seed)
    want = {("w", ("a",), 2), ("w", ("b",), 4), ("v", ("a",), 3)}
    assert got == want == reference_splice([(None, NARROW), (3, WIDE)], STREAM)


@pytest.mark.parametrize("seed", [0, 1, 2])
def test_a_narrower_at_head_takes_back_what_the_old_one_dated_from_t_on(seed):
    """WIDE -> NARROW at T=3, the whole stream evaluated first (a restatement): WIDE's
    evaluation at 7 dated w(b)@4: taken back.  NARROW at 3: p(a)@2 in [2,3] with s(a): w(a)@2,
    so v(a)@3; at 5 and 7 nothing within [1]."""
    got = _points(STREAM, NARROW, "3", [], WIDE, seed)
    assert got == {("w", ("a",), 2), ("v", ("a",), 3)} == reference_splice([(None, WIDE), (3, NARROW)], STREAM)


@pytest.mark.parametrize("cut", [4, len(STREAM)], ids=["future", "past"])
@pytest.mark.parametrize("seed", [0, 1, 2])
def test_an_at_head_added_from_t_on_dates_atoms_before_t(cut, seed):
    """PLAIN (x at the time evaluated: p within [1] and s now; v reads it) -> DATED at T=6: w
    is a new answer predicate (the supervisor restarts the output to serve it, with the new
    program's reach), v reads w now.  Before 6 PLAIN: at 3 p(a)@2 in [2,3] and s(a): x(a)@3,
    v(a)@3; at 5 nothing.  From 6 DATED: at 7 s(b) and p(b)@4 in [4,7]: w(b)@4, dated before T
    by an evaluation from T on (v reads w at 7: none)."""
    got = _points(STREAM[:cut], DATED, "6", STREAM[cut:], PLAIN, seed)
    want = {("x", ("a",), 3), ("v", ("a",), 3), ("w", ("b",), 4)}
    assert got == want == reference_splice([(None, PLAIN), (6, DATED)], STREAM)


@pytest.mark.parametrize("seed", [0, 1, 2])
def test_late_events_on_both_sides_of_t(tmp_path, capsys, seed):
    """NARROW -> WIDE at 5 (in the past), then late p(b)@3 (NARROW's evaluations before 5 see
    it: none with s(b)) and s(b)@6 (WIDE's evaluation at 6 dates p(b)@3 and p(b)@4 back), and a
    retraction of s(a)@5 (WIDE's evaluation at 5 no longer dates w(a)@2)."""
    late = [{"t": 3, "pred": "p", "args": ["b"]}, {"t": 6, "pred": "s", "args": ["b"]},
            {"t": 5, "pred": "s", "args": ["a"], "op": "retract"}]
    got, said = per_stratum(STREAM, _request("5", WIDE), late, seed=seed, restarts=3, old=NARROW)
    assert [s.get("at") for s in said] == ["5", "5"], said
    want = reference_splice([(None, NARROW), (5, WIDE)], STREAM + late)
    assert {("w", ("b",), 3), ("w", ("b",), 4)} <= want and ("v", ("a",), 5) not in want
    assert meaning(got, SPAN, running=True) == want
    assert meaning(_run_upgrade(tmp_path, capsys, "5", WIDE, STREAM + late, NARROW), SPAN) == want


# random pairs: @-heads of several reaches, windows over the dated predicate, plain rules
AT_POOL = [*LARS_AT_RULES, *LARS_RULES[:3], "w(X) at U :- p(X) at U [4], r(X).", "w(X) at U :- r(X) at U [1].",
           "u(X) :- w(X) at U [2], not r(X)."]
EVENT = st.builds(lambda t, pred, arg, retract: {"t": t, "pred": pred, "args": [arg],
                                                 **({"op": "retract"} if retract else {})},
                  st.integers(0, 10), st.sampled_from(["p", "r"]), st.sampled_from(["a", "b"]),
                  st.sampled_from([False, False, False, True]))
PROGRAM = st.lists(st.sampled_from(AT_POOL), min_size=1, max_size=3, unique=True)


@settings(max_examples=120, deadline=None, suppress_health_check=list(HealthCheck))
@given(old=PROGRAM, new=PROGRAM, events=st.lists(EVENT, min_size=1, max_size=12), cut=st.integers(0, 12),
       at=st.integers(0, 11), seed=st.integers(0, 3))
def test_random_at_head_pairs_mean_the_splice_per_evaluated_point(old, new, events, cut, at, seed):
    old_text, new_text = "\n".join(old) + "\n", "\n".join(new) + "\n"
    events = [{"t": 0}, *events, {"t": 11}]
    first, second = events[:cut + 1], events[cut + 1:]
    old_plan, new_plan = (lars_plan(lookup("lars").parse([("x", t)])) for t in (old_text, new_text))
    why = per_stratum_refusal(old_plan, new_plan)
    event("refused" if why is not None else "applied")
    got, said = per_stratum(first, _request(str(at), new_text), second, seed=seed, restarts=3, old=old_text)
    if why is not None:
        assert said and all(why in s.get("refused", "") for s in said), (why, said)
        return
    assert said and all(s.get("at") == str(at) for s in said), said
    assert meaning(got, (0, 11), running=True) == reference_splice([(None, old_text), (at, new_text)], events)
