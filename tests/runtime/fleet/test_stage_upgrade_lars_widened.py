"""A LARS upgrade that widens the bottom stratum's window (so every stratum above it changes
input) on random streams long enough for many batches per epoch: the per-stratum fleet
(reasoners taking an epoch in several batches, restarted mid-epoch) and the chain service
(which keeps the unchanged strata, ``dialects/lars/keeping.py``) answer what ``chronolog run
--upgrade`` prints.  The hand-written cases of test_stage_upgrade_lars_strata.py use one
stream; the random pairs there rarely keep a program's shape while changing its bottom."""

from __future__ import annotations

import contextlib
import io
import json

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from meaning import meaning
from test_stage_upgrade_lars_strata import _chained, _request, per_stratum

from chronolog.cli.main import main
from chronolog.dialects.lars.changes import per_stratum_refusal
from chronolog.dialects.lars.hooks import lars_plan
from chronolog.dialects.registry import lookup

TOP = "b(X) :- a(X), not c(X).\nc(X) :- q(X).\n"
WINDOW_TOP = "m(X) :- a(X) [2], not c(X).\nb(X) :- m(X), not q(X) [1].\nc(X) :- q(X).\n"
PAIRS = {  # (old, new): the bottom rule's window widened, the strata above unchanged in text
    "time": ("a(X) :- p(X) [2].\n" + TOP, "a(X) :- p(X) [4].\n" + TOP),
    "always": ("a(X) :- p(X) always [1].\n" + TOP, "a(X) :- p(X) always [2].\n" + TOP),
    "tuple": ("a(X) :- p(X) [1 #].\n" + TOP, "a(X) :- p(X) [3 #].\n" + TOP),
    "read-through-window": ("a(X) :- p(X) [1].\n" + WINDOW_TOP, "a(X) :- p(X) [3].\n" + WINDOW_TOP),
}
END = 16


def _strata(text: str) -> int:
    return lars_plan(lookup("lars").parse([("x", text)])).fleet_strata


@pytest.mark.parametrize("pair", sorted(PAIRS))
def test_every_pair_is_applied_per_stratum_and_changes_the_bottom(pair):
    """(So the random test below exercises the upgrade, not a refusal.)"""
    old, new = PAIRS[pair]
    plans = [lars_plan(lookup("lars").parse([("x", t)])) for t in (old, new)]
    assert per_stratum_refusal(*plans) is None
    assert plans[0].fleet_strata == plans[1].fleet_strata >= 2


def _run(tmp, old: str, new: str, at: int, events: list[dict]) -> list[dict]:
    (tmp / "old.lars").write_text(old)
    (tmp / "new.lars").write_text(new)
    (tmp / "in.jsonl").write_text("".join(json.dumps(e) + "\n" for e in events))
    out = io.StringIO()
    with contextlib.redirect_stdout(out), contextlib.redirect_stderr(io.StringIO()):
        assert main(["run", str(tmp / "old.lars"), "--input", str(tmp / "in.jsonl"),
                     "--upgrade", f"{at}={tmp / 'new.lars'}"]) == 0
    return [json.loads(x) for x in out.getvalue().splitlines()]


@st.composite
def late_stream(draw) -> list[dict]:
    """Events of p and q over [0, END], partly out of time order, some retracted later."""
    facts = draw(st.lists(st.builds(lambda t, pred, arg: {"t": t, "pred": pred, "args": [arg]},
                                    st.integers(0, END - 1), st.sampled_from(["p", "p", "q"]),
                                    st.sampled_from(["x", "y"])), min_size=1, max_size=20))
    if draw(st.booleans()):
        facts = sorted(facts, key=lambda e: e["t"])
    for _ in range(draw(st.integers(0, 2))):
        gone = draw(st.sampled_from(facts))
        facts.insert(draw(st.integers(facts.index(gone) + 1, len(facts))), {**gone, "op": "retract"})
    return [{"t": 0}, *facts, {"t": END}]


@settings(max_examples=40, deadline=None, suppress_health_check=list(HealthCheck))
@given(pair=st.sampled_from(sorted(PAIRS)), events=late_stream(), cut=st.integers(1, 22), at=st.integers(1, END - 2),
       seed=st.integers(0, 2**16), restarts=st.integers(2, 4))
def test_a_widened_bottom_window_means_run_upgrade(tmp_path_factory, pair, events, cut, at, seed, restarts):
    tmp = tmp_path_factory.mktemp("widened")
    old, new = PAIRS[pair]
    first, second = events[:cut], events[cut:]
    want = meaning(_run(tmp, old, new, at, events), (0, END))
    got, said = per_stratum(first, _request(str(at), new), second, seed=seed, restarts=restarts, old=old)
    assert len(said) == _strata(old) and all(s.get("at") == str(at) for s in said), said
    assert meaning(got, (0, END), running=True) == want
    got, said = _chained(old, first, _request(str(at), new), second)
    assert [s.get("at") for s in said] == [str(at)], said
    assert meaning(got, (0, END), running=True) == want
