"""``chronolog upgrade --dry-run`` on a LARS fleet (its fleet file only, no broker): the plan
says which strata are unchanged (by their rules' content and what they read, not their
position), changed, added or removed; and what LARS fleets cannot do is refused with exit
2 and the reason before anything is sent."""

from __future__ import annotations

import json

import pytest

from chronolog.cli.main import main

OLD = "a(X) :- p(X) [2].\nb(X) :- a(X), not c(X).\nc(X) :- q(X).\n"


def _fleet(tmp_path, **over) -> str:
    (tmp_path / "old.lars").write_text(OLD)
    state = tmp_path / "state"
    state.mkdir()
    info = {"bootstrap": "127.0.0.1:1", "prefix": "chronolog", "partitions": 1, "programs": [str(tmp_path / "old.lars")],
            "dialect": None, "retention": None, "window": None, "chain": True, "services": []}
    (state / "fleet.json").write_text(json.dumps({**info, **over}))
    return str(state)


def _plan(tmp_path, capsys, new: str, at: str | None = "5", **over) -> tuple[int, str, str]:
    state = _fleet(tmp_path, **over)
    (tmp_path / "new.lars").write_text(new)
    capsys.readouterr()
    code = main(["upgrade", str(tmp_path / "new.lars"), "--state-dir", state, "--dry-run",
                 *(["--at", at] if at is not None else [])])
    got = capsys.readouterr()
    return code, got.out, got.err


def _line(out: str, pred: str) -> str:
    return next(x for x in out.splitlines() if f"({pred}" in x or f", {pred}" in x)


def test_top_stratum_changed_the_lower_ones_unchanged(tmp_path, capsys):
    code, out, _ = _plan(tmp_path, capsys, OLD.replace("not c(X)", "not c(X), X != z"))
    assert code == 0, out
    assert "unchanged" in _line(out, "a/1") and "unchanged" in _line(out, "c/1")
    assert "changed: re-evaluated from T on" in _line(out, "b/1") and "T: 5" in out


def test_a_chain_keeps_the_unchanged_strata_but_of_a_program_with_at_heads(tmp_path, capsys):
    """The chain keeps their state (``dialects/lars/keeping.py``); a program with ``@``-heads
    it evaluates whole, the unchanged strata with the rest."""
    code, out, _ = _plan(tmp_path, capsys, OLD.replace("not c(X)", "not c(X), X != z"))
    assert code == 0 and "unchanged: keeps its state" in _line(out, "a/1"), out
    (tmp_path / "dated").mkdir()
    dated = OLD.replace("not c(X)", "not c(X), X != z") + "w(X) at U :- b(X) at U [3].\n"  # (above a, c)
    code, out, _ = _plan(tmp_path / "dated", capsys, dated)
    assert code == 0 and "so it is evaluated again with the rest" in _line(out, "a/1"), out


def test_a_changed_lower_stratum_changes_what_reads_it(tmp_path, capsys):
    """b's rule is the same text, but it reads a, whose window widened: b is changed too."""
    code, out, _ = _plan(tmp_path, capsys, OLD.replace("p(X) [2]", "p(X) [4]"))
    assert code == 0
    assert "changed: re" in _line(out, "a/1") and "changed: re" in _line(out, "b/1")
    assert "input read again: [T - 4, now]" in out  # the widened window's reach


def test_per_stratum_fleet_plan_keeps_the_state_of_unchanged_strata(tmp_path, capsys):
    code, out, _ = _plan(tmp_path, capsys, OLD.replace("not c(X)", "not c(X), X != z"), chain=False)
    assert code == 0, out
    assert "unchanged: keeps its state" in _line(out, "a/1")
    assert "changed: re-evaluated from T on" in _line(out, "b/1")


def test_added_and_removed_strata(tmp_path, capsys):
    code, out, _ = _plan(tmp_path, capsys, "c(X) :- q(X).\na(X) :- p(X) [2].\nd(X) :- p(X), not c(X).\n")
    assert code == 0
    assert "unchanged" in _line(out, "a/1") and "added" in _line(out, "d/1")  # (its rules in another order)
    assert any(x.startswith("  removed:") and "b/1" in x for x in out.splitlines()), out


def test_per_stratum_plan_names_the_services_and_topics_of_added_strata(tmp_path, capsys):
    code, out, _ = _plan(tmp_path, capsys, OLD + "d(X) :- p(X), not b(X).\n", chain=False, partitions=2)
    assert code == 0, out
    assert "added: evaluated from T on by reasoner-3" in _line(out, "d/1")
    assert ("  services started by up's supervisor: reasoner-3 (partitions 0..1; from the upgrade's epoch on: the "
            "strata below send them their content, and the lowest its input, from T - 3 on") in out, out  # ([2] + 1)
    assert "  topics created: chronolog.stratum.3, chronolog.reasoner-3.changelog" in out, out
    assert "  output: restarted by up's supervisor" in out


def test_per_stratum_plan_says_an_added_stratum_reading_all_earlier_input_reads_from_the_start(tmp_path, capsys):
    """A tuple window counts facts however old: nothing is sent from T - reach, the added
    stratum's reasoner reads its topics from their start."""
    code, out, _ = _plan(tmp_path, capsys, OLD + "d(X) :- p(X) [2 #], not b(X).\n", chain=False)
    assert code == 0, out
    assert ("  services started by up's supervisor: reasoner-3 (partition 0; from the start of their input topics: "
            "the new program reads all earlier input") in out, out


def test_per_stratum_plan_of_removed_strata(tmp_path, capsys):
    code, out, _ = _plan(tmp_path, capsys, "a(X) :- p(X) [2].\nc(X) :- q(X).\n", chain=False)
    assert code == 0, out
    assert "removed: reasoner-2 withdraws its answers from T on and stays for the corrections before T" in out, out
    assert "services stopped: none (reasoner-2 withdraw" in out
    assert "services started" not in out and "output: restarted" not in out


def test_per_stratum_plan_of_a_fleet_an_earlier_upgrade_grew(tmp_path, capsys):
    """The fleet file says 3 strata run: a 3-stratum program needs no new service."""
    code, out, _ = _plan(tmp_path, capsys, OLD + "d(X) :- p(X), not b(X).\n", chain=False, strata=3,
                         served=["a/1", "b/1", "c/1", "d/1"])
    assert code == 0, out
    assert "services started" not in out and "topics created" not in out and "output: restarted" not in out


@pytest.mark.parametrize(("over", "new", "reason"), [
    ({"chain": False}, OLD.replace("a(X) :- p(X) [2]", "a(X) at U :- p(X) at U [2]"), "kept with its times"),
    # b read through a window in the new program only is taken, but d, now derived in stratum 2,
    # may have stream facts (d#in) that stratum 2's service did not keep before T
    ({"chain": False}, OLD.replace("[2]", "[3]") + "d(X) :- b(X) [2], not c(X).\n", "did not keep: d/1"),
    ({}, "r(X) at T :- p(X) at T [2], not s(X).\ns(X) :- p(X), not r(X) [2].\n", "@-heads and is not stratified"),
    ({"chain": False}, "r(X) at T :- p(X) at T [2], not s(X).\ns(X) :- p(X), not r(X) [2].\n",
     "@-heads and is not stratified"),
    # without @-heads too: one reasoner would evaluate it whole, not the fleet's stratum by stratum
    ({"chain": False}, "r(X) :- p(X) [2], not s(X).\ns(X) :- p(X), not r(X).\n",
     "the new program is not stratified: a fleet of one service per stratum runs such a program as one reasoner"),
    ({}, "a(X) :- p(X) [2\n", "new.lars:2:1"),
])
def test_refused_before_anything_is_sent(tmp_path, capsys, over, new, reason):
    code, out, err = _plan(tmp_path, capsys, new, **over)
    assert code == 2 and reason in err, (out, err)
    assert "upgrade plan" not in out


@pytest.mark.parametrize("chain", [True, False], ids=["chained", "per-stratum"])
def test_a_fleet_takes_at_heads_and_the_plan_says_what_they_date(tmp_path, capsys, chain):
    code, out, err = _plan(tmp_path, capsys, OLD + "w(X) at U :- p(X) at U [3].\n", chain=chain)
    assert code == 0, err
    assert "@-heads: the new program's evaluations from T on date atoms up to 3 before the time evaluated" in out


# a finite retention: the fleet's ingest stamps the input every service holds on the request,
# from its latest time - (retention + 1) on, and every service decides on that alike
@pytest.mark.parametrize("over", [{"chain": False}, {"chain": True, "partitions": 3}, {"chain": True}],
                         ids=["per-stratum", "partitioned-chain", "chain"])
@pytest.mark.parametrize(("new", "at", "says"), [
    # --at 5 and a reach of 4: decided when the request reaches ingest
    (OLD.replace("p(X) [2]", "p(X) [4]"), "5", "from the latest time its ingest has read - 6 on, when the request "
     "reaches ingest: every service refuses it, alike, if T - 4 lies before that)"),
    # T the time after ingest's latest M: [M + 1 - 7, now] lies within [M - 6, now]
    (OLD.replace("p(X) [2]", "p(X) [7]"), None, "and T is the time after it: it covers [T - 7, now])"),
    # a reach of 9 is 2 further back than the 7 it holds before T
    (OLD.replace("p(X) [2]", "p(X) [9]"), None, "[T - 9, now] reaches 2 further back, so every service refuses it "
     "unless the fleet has forgotten no input yet)"),
    # a tuple window counts facts: all earlier input
    (OLD.replace("p(X) [2]", "p(X) [2 #]"), "5", "reads all earlier input"),
])
def test_a_finite_retention_is_taken_and_the_plan_says_when_it_covers_the_span(tmp_path, capsys, over, new, at, says):
    code, out, err = _plan(tmp_path, capsys, new, at=at, retention=5, **over)
    assert code == 0, err
    (line,) = [x for x in out.splitlines() if x.startswith("  retention:")]
    assert line.startswith("  retention: 5 (the fleet holds the input from the latest time its ingest has read - 6 on")
    assert says in line, line
