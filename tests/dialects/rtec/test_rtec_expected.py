"""The RTEC answer meaning (tests/rtec_expected.py) on hand-made lines, and RTEC's fixtures' integrity."""

import json

import pytest
from rtec_expected import CUTS, DATA, expected_path, load_expected, rtec_meaning

APPS = ("caviar", "ctm", "voting")


def line(interval, pred="meeting", args=("id4", "id5"), diff=None):
    rec = {"interval": interval, "pred": pred, "args": list(args)}
    if diff is not None:
        rec["diff"] = diff
    return json.dumps(rec)


def test_grid_normalisation_makes_equal_point_sets_equal():
    forms = ["[6800,24400]", "[6761,24400]", "[6800,24440)", "(6760,24400]", "[6790,24439]"]
    meanings = [rtec_meaning([line(f)], "caviar") for f in forms]
    assert meanings[0] == {("meeting", ("id4", "id5"), 6800, 24400)}
    assert all(m == meanings[0] for m in meanings)
    # with tick 1 (ctm, voting) the same texts are different point sets
    voting = [rtec_meaning([line(f, "status", [3, "voting"])], "voting") for f in forms[:2]]
    assert voting[0] and voting[0] != voting[1]


def test_interval_between_grid_points_is_empty():
    assert rtec_meaning([line("[6801,6839]")], "caviar") == set()
    assert rtec_meaning([line("[6800,6840)")], "caviar") == {("meeting", ("id4", "id5"), 6800, 6800)}


def test_adjacent_and_overlapping_lines_merge_into_maximal_runs():
    lines = [line("[0,40]"), line("[80,120]"), line("[200,240)")]
    assert rtec_meaning(lines, "caviar") == {("meeting", ("id4", "id5"), 0, 120),
                                             ("meeting", ("id4", "id5"), 200, 200)}


def test_diffs_cancel():
    lines = [line("[0,200]"), line("[40,80]", diff=-1)]
    assert rtec_meaning(lines, "caviar") == {("meeting", ("id4", "id5"), 0, 0),
                                             ("meeting", ("id4", "id5"), 120, 200)}
    assert rtec_meaning([line("[0,200]"), line("[0,200]", diff=-1)], "caviar") == set()


def test_inf_and_its_correction():
    assert rtec_meaning([line("[680,inf)")], "caviar") == {("meeting", ("id4", "id5"), 680, None)}
    changelog = [line("[680,inf)"), line("[24440,inf)", diff=-1)]
    assert rtec_meaning(changelog, "caviar") == {("meeting", ("id4", "id5"), 680, 24400)}
    reopened = changelog + [line("[30000,inf)")]
    assert ("meeting", ("id4", "id5"), 30000, None) in rtec_meaning(reopened, "caviar")


def test_sums_outside_zero_one_are_rejected():
    with pytest.raises(AssertionError):
        rtec_meaning([line("[0,200]"), line("[40,80]")], "caviar")
    with pytest.raises(AssertionError):
        rtec_meaning([line("[0,200]", diff=-1)], "caviar")


def test_only_output_entities_count():
    lines = [
        line("[0,40]", "meeting", ["id0", "id1", "false"]),  # helper value, not grounded
        line("[0,40]", "person", ["id0", "false"]),  # helper value, not grounded
        line("[0,40]", "distance", ["id0", "id1", 24]),  # input fluent
        json.dumps({"t": 40, "pred": "meeting", "args": ["id0", "id1"]}),  # t lines are ignored
        line("[0,40]", "close_34", ["id0", "id1", "false"]),  # close_34=false is an output entity
        line("[0,40]", "close_34", ["id0", "id1"]),
    ]
    assert rtec_meaning(lines, "caviar") == {("close_34", ("id0", "id1", "false"), 0, 40),
                                             ("close_34", ("id0", "id1"), 0, 40)}
    ctm = [line("[0,9]", "passenger_density", [75, "bus", "low"]),
           line("[0,9]", "passenger_density", [75, "bus", "high"])]
    assert rtec_meaning(ctm, "ctm") == {("passenger_density", (75, "bus", "high"), 0, 9)}


def test_bytes_str_and_blank_lines():
    text = line("[0,40]") + "\n"
    assert rtec_meaning([text.encode(), "\n", b""], "caviar") == rtec_meaning([text], "caviar")


@pytest.mark.parametrize("app", APPS)
@pytest.mark.parametrize("cut", [None, "cut10", "cut1"])
def test_fixture_is_sorted_maximal_and_all_output_entities(app, cut):
    with expected_path(app, cut).open(encoding="utf-8") as f:
        raw = [json.loads(x) for x in f]
    keys = [(r["pred"], json.dumps(r["args"])) for r in raw]
    assert keys == sorted(keys)
    # RTEC writes maximal intervals: one line per run of the meaning, none dropped as helper
    assert len(load_expected(app, cut)) == len(raw)


def test_fixture_facts_stated_in_the_data_readme():
    # ../shared/data/rtec/README.md: auxPerCloseBallot(3)=true ends at 101 though the last event is at 99
    runs = {r for r in load_expected("voting") if r[:2] == ("auxPerCloseBallot", (3,))}
    assert max(r[3] for r in runs) == 101
    # caviar: 195 fluent instances, 876 intervals (the README's portable pre-processing check)
    caviar = load_expected("caviar")
    assert (len({r[:2] for r in caviar}), len(caviar)) == (195, 876)


@pytest.mark.parametrize("app", APPS)
@pytest.mark.parametrize("cut", ["cut10", "cut1"])
def test_cut_answer_agrees_with_whole_answer_up_to_the_cut(app, cut):
    """Up to the cut time T, the cut stream's answer is the whole stream's, for the instances it has.

    The whole stream grounds more instances (ids, vehicles, agents seen only after T), whose
    default values (close_34=false, driving_quality=high, obl=false, ...) hold from 0 there.
    """
    end = CUTS[app][cut]
    part = load_expected(app, cut)
    instances = {r[:2] for r in part}

    def upto(runs):
        return {(p, a, s, e if e is not None and e <= end else end)
                for p, a, s, e in runs if s <= end and (p, a) in instances}

    assert upto(part) == upto(load_expected(app))


def test_cut_streams_end_at_their_cut():
    for app, cuts in CUTS.items():
        for cut, end in cuts.items():
            path = DATA / app / f"stream-{cut}.jsonl"
            if path.exists():
                with path.open(encoding="utf-8") as f:
                    assert all(json.loads(x).get("t", 0) <= end for x in f)
