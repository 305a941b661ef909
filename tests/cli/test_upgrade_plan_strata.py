"""``chronolog upgrade --dry-run`` on a DatalogMTL or RTEC fleet (one chain service hosting
the evaluator; its fleet file only, no broker): the plan names each stratum by content —
kept (its state taken over, not evaluated again), changed, added or removed — as the
service then does (tests/runtime/fleet/test_stage_upgrade.py checks the service)."""

from __future__ import annotations

import json

import pytest

from chronolog.cli.main import main

MTL = "Q(X):-Diamondminus[0,1]P(X)\nS(X):-Q(X),R(X)\nU(X):-Boxminus[0,1]R(X)\n"
RTEC = ("initiatedAt(open(D)=true, T) :- happensAt(opened(D), T).\n"
        "terminatedAt(open(D)=true, T) :- happensAt(closed(D), T).\n"
        "initiatedAt(armed(D)=true, T) :- happensAt(arm(D), T).\n"
        "terminatedAt(armed(D)=true, T) :- happensAt(disarm(D), T).\n"
        "holdsFor(alarm(D)=true, I) :- holdsFor(open(D)=true, A), holdsFor(armed(D)=true, B), intersect_all([A,B], I).\n"
        "door(d1).\ngrounding(open(D)=true) :- door(D).\ngrounding(armed(D)=true) :- door(D).\n"
        "grounding(alarm(D)=true) :- door(D).\n")  # armed grounded: alarm reads it (as in RTEC, a read of
# an entity no grounding/1 names sees nothing, so alarm would not depend on armed's rules)


def _plan(tmp_path, capsys, suffix: str, old: str, new: str) -> tuple[int, str]:
    (tmp_path / f"old{suffix}").write_text(old)
    (tmp_path / f"new{suffix}").write_text(new)
    state = tmp_path / "state"
    state.mkdir()
    info = {"bootstrap": "127.0.0.1:1", "prefix": "chronolog", "partitions": 1,
            "programs": [str(tmp_path / f"old{suffix}")], "dialect": None, "retention": None, "window": None,
            "chain": True, "services": []}
    (state / "fleet.json").write_text(json.dumps(info))
    capsys.readouterr()
    code = main(["upgrade", str(tmp_path / f"new{suffix}"), "--state-dir", str(state), "--dry-run", "--at", "5"])
    got = capsys.readouterr()
    return code, got.out + got.err


def _line(out: str, pred: str) -> str:
    return next(x for x in out.splitlines() if f"({pred}" in x or f", {pred}" in x)


def test_mtl_top_change_keeps_the_strata_below_and_beside(tmp_path, capsys):
    code, out = _plan(tmp_path, capsys, ".mtl", MTL, MTL.replace("S(X):-Q(X),R(X)", "S(X):-Diamondminus[0,2]Q(X),R(X)"))
    assert code == 0, out
    assert "unchanged: keeps its state" in _line(out, "Q/1") and "unchanged: keeps its state" in _line(out, "U/1")
    assert "changed: re-evaluated from T on" in _line(out, "S/1")
    assert "by the changed and added strata only" in out


def test_mtl_bottom_change_changes_what_reads_it_and_a_removed_predicate_is_withdrawn(tmp_path, capsys):
    new = MTL.replace("Diamondminus[0,1]P(X)", "Diamondminus[0,3]P(X)").replace("U(X):-Boxminus[0,1]R(X)\n",
                                                                                "V(X):-R(X)\n")
    code, out = _plan(tmp_path, capsys, ".mtl", MTL, new)
    assert code == 0, out
    assert "changed: re" in _line(out, "Q/1") and "changed: re" in _line(out, "S/1")
    assert "added: evaluated from T on" in _line(out, "V/1")
    assert "removed: U/1 (no longer defined: their answers from T on withdrawn)" in out


def test_mtl_rules_moved_and_reordered_are_the_same_strata(tmp_path, capsys):
    code, out = _plan(tmp_path, capsys, ".mtl", MTL, "\n\n" + "\n".join(reversed(MTL.splitlines())) + "\n")
    assert code == 0, out
    assert all("unchanged: keeps its state" in _line(out, p) for p in ("Q/1", "S/1", "U/1"))


@pytest.mark.parametrize(("new", "kept", "changed"), [
    (RTEC.replace("intersect_all([A,B], I)", "union_all([A,B], I)"), ["open/1", "armed/1"], ["alarm/1=true"]),
    (RTEC.replace("happensAt(arm(D), T)", "happensAt(opened(D), T)"), ["open/1"], ["armed/1", "alarm/1=true"]),
    (RTEC.replace("door(d1).", "door(d1).\ndoor(d2)."), [], ["open/1", "armed/1", "alarm/1=true"]),
    # a grounding clause is its own fluent's content: alarm's changed, open and armed kept
    (RTEC.replace("grounding(alarm(D)=true) :- door(D).", "grounding(alarm(D)=true) :- door(D), D \\= d2."),
     ["open/1", "armed/1"], ["alarm/1=true"]),
    # ... and one removed changes what reads its fluent too (it reads nothing now)
    (RTEC.replace("grounding(armed(D)=true) :- door(D).\n", ""), ["open/1"], ["armed/1", "alarm/1=true"]),
    (RTEC + "holdsFor(shut(D)=true, I) :- holdsFor(open(D)=true, A), complement_all([A], I).\n"
            "grounding(shut(D)=true) :- door(D).\n", ["open/1", "armed/1", "alarm/1=true"], []),
    # ... but not one with a variable fluent (it may name any), nor where a body calls grounding/1
    (RTEC + "grounding(F=true) :- F = lamp(D), door(D).\n", [], ["open/1", "armed/1", "alarm/1=true"]),
])
def test_rtec_plan_names_kept_and_changed_entities(tmp_path, capsys, new, kept, changed):
    """A change of background knowledge (``door/1``) changes every stratum: whatever a rule
    may read besides the entities counts as part of every rule; a ``grounding(F=V)`` clause
    only F's."""
    code, out = _plan(tmp_path, capsys, ".prolog", RTEC, new)
    assert code == 0, out
    for p in kept:
        assert "unchanged: keeps its state" in _line(out, p), out
    for p in changed:
        assert "changed: re-evaluated from T on" in _line(out, p), out


def test_rtec_grounding_read_by_a_body_counts_for_every_stratum(tmp_path, capsys):
    old = RTEC + "lit(D) :- grounding(alarm(D)=true).\n"
    new = old.replace("grounding(alarm(D)=true) :- door(D).", "grounding(alarm(D)=true) :- door(D), D \\= d2.")
    code, out = _plan(tmp_path, capsys, ".prolog", old, new)
    assert code == 0, out
    assert all("changed: re-evaluated from T on" in _line(out, p) for p in ("open/1", "armed/1", "alarm/1=true"))
    (tmp_path / "without").mkdir()
    code, out = _plan(tmp_path / "without", capsys, ".prolog", RTEC,
                      RTEC.replace("grounding(alarm(D)=true) :- door(D).",
                                   "grounding(alarm(D)=true) :- door(D), D \\= d2."))
    assert "unchanged: keeps its state" in _line(out, "open/1") and "changed: re" in _line(out, "alarm/1=true")
