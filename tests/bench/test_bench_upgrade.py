"""`chronolog bench upgrade`: its rows change what they say they change, and a tiny run on
the bundled broker prints one consistent row per dialect and change."""

from __future__ import annotations

import re
import subprocess
import sys

import pytest

from chronolog.bench.upgrade import CASES, CHANGES, DEFAULT, _start
from chronolog.dialects.load import load_program
from chronolog.dialects.registry import RunOptions, lookup


def _changed(old: str, new: str) -> tuple[set[str], set[str]]:
    a, b = set(old.splitlines()), set(new.splitlines())
    return a - b, b - a


@pytest.mark.parametrize("name", sorted(CASES))
def test_each_row_changes_one_rule_of_the_stratum_it_names(tmp_path, name):
    """Top: a rule of the atom nothing depends on; bottom: a rule of one the top depends on."""
    case = CASES[name]
    lars = {"top": "s(X)", "bottom": "q(X)"}
    heads = {"mtl": {"top": "S(X)", "bottom": "Q(X)"}, "lars": lars, "lars-strata": lars,
             "rtec": {"top": "holdsFor(alarm(D)=true", "bottom": "initiatedAt(armed(D)=true"}}[name]
    for change in CHANGES:
        new = case.top if change == "top" else case.bottom
        gone, added = _changed(case.old, new)
        assert len(gone) == len(added) == 1
        assert next(iter(gone)).startswith(heads[change]) and next(iter(added)).startswith(heads[change])
        path = tmp_path / f"{change}.{case.ext}"
        path.write_text(new)
        load_program([str(path)])  # a valid program of the dialect
    # the top atom's rule reads the bottom one's atom
    top_rule = next(line for line in case.old.splitlines() if line.startswith(heads["top"]))
    assert {"mtl": "Q(X)", "lars": "q(X)", "lars-strata": "q(X)", "rtec": "armed(D)=true"}[name] in top_rule.split(":-")[1]


def test_the_lars_rows_fleet_strata():
    """LARS's strata are negation's: the lars row's q and s are one reasoner service's, the
    lars-strata row's s (negating b) a stratum of its own, unchanged by either change."""
    row = lookup("lars")
    for name, want in (("lars", [("q/1", "s/1", "tick/1")]), ("lars-strata", [("b/1", "q/1", "tick/1"), ("s/1",)])):
        case = CASES[name]
        for text in (case.old, case.top, case.bottom):
            assert [tuple(s) for s in row.layout(row.parse([("p.lars", text)]), RunOptions()).strata] == want, name


def test_every_point_of_a_workload_has_its_events():
    for case in CASES.values():
        for t in (0, 7, 31):
            events = case.events(t)
            assert events and all(ev["t"] == t for ev in events)


def test_answer_lines_start_where_their_time_says():
    assert _start(b'{"interval":"[3,inf)","pred":"Q","args":["a"]}') == 3
    assert _start(b'{"interval":"(7/2,9]","pred":"Q","args":["a"],"diff":-1}') == 3
    assert _start(b'{"t":12,"pred":"open","args":["d1"]}') == 12


def test_an_unknown_dialect_is_refused_before_any_fleet_starts():
    got = subprocess.run([sys.executable, "-m", "chronolog", "bench", "upgrade", "--dialect", "mtl,klingon"],
                         capture_output=True, text=True, timeout=60)
    assert got.returncode == 2 and "unknown dialect 'klingon'" in got.stdout


def _ms(text: str) -> float:
    return float(text.removesuffix(" ms").replace(",", ""))


@pytest.mark.fleet
def test_bench_upgrade_prints_a_consistent_row_per_dialect_and_change():
    got = subprocess.run([sys.executable, "-m", "chronolog", "bench", "upgrade", "--tps", "60", "--rate", "150",
                          "--seconds", "1.5"], capture_output=True, text=True, timeout=600)
    assert got.returncode == 0, got.stderr[-2000:]
    rows = [[c.strip() for c in m.group(1).split("│")] for m in re.finditer(r"^│(.*)│$", got.stdout, re.M)]
    assert [(r[0], r[1]) for r in rows] == [(CASES[n].title, f"{c} stratum") for n in DEFAULT for c in CHANGES]
    assert "lars-strata" in DEFAULT  # (a LARS change of only the top stratum needs two strata)
    for row in rows:
        retained, corrected = int(row[2].replace(",", "")), int(row[3].replace(",", ""))
        per_tp = len(next(c for c in CASES.values() if c.title == row[0]).events(0))
        assert retained >= 60 * per_tp and corrected > 0
        upgrade, cold, ratio = float(row[4].removesuffix(" s")), float(row[5].removesuffix(" s")), float(row[6])
        assert upgrade > 0 and cold > 0
        # one round: the ratio is upgrade / cold, each of the three rounded to two places
        assert (upgrade - 0.005) / (cold + 0.005) - 0.005 <= ratio <= (upgrade + 0.005) / (cold - 0.005) + 0.005
        steady50, steady99, during50, during99 = (_ms(x) for x in row[7:11])
        assert 0 < steady50 <= steady99 and 0 < during50 <= during99
        target, verdict = re.fullmatch(r"([\d,]+ ms) \((met|missed)\)", row[11]).groups()
        assert abs(_ms(target) - (steady99 + 500)) <= 1
        assert verdict == ("met" if during99 <= _ms(target) else "missed")
        after50, after99 = (_ms(x) for x in row[12:14])
        assert 0 < after50 <= after99
