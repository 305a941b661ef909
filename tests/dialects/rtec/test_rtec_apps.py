"""RTEC's example applications on chronolog against RTEC's own answers (tests/rtec_expected.py):
time-prefix cuts of the streams from JSONL, from RTEC's CSV, and the delayed CAVIAR stream's cut;
the whole streams with CHRONOLOG_RTEC_FULL=1 (minutes)."""

from __future__ import annotations

import json
import os
from pathlib import Path

import pytest
from rtec_expected import CUTS, DATA, differing_instances, load_expected, rtec_meaning

from chronolog.cli.main import main

SHARED = Path(__file__).resolve().parents[3].parent / "shared" / "data" / "rtec"
FILES = {
    "caviar": ["rules.prolog", "pre-processing-portable.prolog", "settings.prolog"],
    "ctm": ["rules.prolog", "vehicles.prolog", "settings.prolog"],
    "voting": ["rules.prolog", "voting_static_generator.prolog", "settings.prolog"],
}
pytestmark = pytest.mark.skipif(not SHARED.is_dir(), reason="the shared RTEC data is not beside the repository")


def _cut_lines(app: str, cut: str, source: str = "stream.jsonl") -> list[str]:
    """The rows of a stream (in arrival order) whose time is at most the cut's (RTEC's cut rule)."""
    limit = CUTS[app][cut]
    out = []
    for line in (SHARED / app / source).read_text().splitlines():
        rec = json.loads(line)
        t = rec["t"] if "t" in rec else int(rec["interval"][1:].split(",")[0])
        if t <= limit:
            out.append(line)
    return out


def _run(app: str, stream: Path, tmp: Path, *extra: str) -> set:
    out = tmp / f"{app}-{stream.stem}.answers"
    assert main(["run", *(str(SHARED / app / f) for f in FILES[app]), "--input", str(stream),
                 "--output", str(out), *extra]) == 0
    return rtec_meaning(out.read_text().splitlines(), app)


@pytest.mark.parametrize("app, cut", [("caviar", "cut10"), ("ctm", "cut10"), ("voting", "cut10"),
                                      ("caviar", "cut1"), ("ctm", "cut1"), ("voting", "cut1")])
def test_cut_stream_gives_rtecs_answer(app: str, cut: str, tmp_path: Path) -> None:
    stream = DATA / app / f"stream-{cut}.jsonl"
    if not stream.exists():
        stream = tmp_path / f"stream-{cut}.jsonl"
        stream.write_text("\n".join(_cut_lines(app, cut)) + "\n")
    got, want = _run(app, stream, tmp_path), load_expected(app, cut)
    assert want and not differing_instances(got, set(want))


def test_ctm_from_rtec_csv_gives_rtecs_answer(tmp_path: Path) -> None:
    rows = (SHARED / "ctm" / "stream.csv").read_text().splitlines()
    lines = (SHARED / "ctm" / "stream.jsonl").read_text().splitlines()
    keep = set(_cut_lines("ctm", "cut10"))
    csv = tmp_path / "cut10.csv"
    csv.write_text("\n".join(r for r, j in zip(rows, lines) if j in keep) + "\n")
    got = _run("ctm", csv, tmp_path, "--format", "rtec")
    assert not differing_instances(got, set(load_expected("ctm", "cut10")))


def test_delayed_caviar_cut_gives_the_undelayed_answer(tmp_path: Path) -> None:
    stream = tmp_path / "delayed-cut10.jsonl"
    stream.write_text("\n".join(_cut_lines("caviar", "cut10", "caviar-delayed.jsonl")) + "\n")
    for step in ("1000", "25"):
        got = _run("caviar", stream, tmp_path, "--step", step)
        assert not differing_instances(got, set(load_expected("caviar", "cut10")))


def test_caviar_cut_with_a_retention_gives_rtecs_answer(tmp_path: Path) -> None:
    """--retention forgets what no repair can read: 100 ticks back on the stream in time order, and
    6,000 ms on the delayed stream (its rows are at most 125 ticks = 5,000 ms late)."""
    want = set(load_expected("caviar", "cut10"))
    stream = tmp_path / "cut10.jsonl"
    stream.write_text("\n".join(_cut_lines("caviar", "cut10")) + "\n")
    assert not differing_instances(_run("caviar", stream, tmp_path, "--retention", "4000"), want)
    delayed = tmp_path / "delayed-cut10.jsonl"
    delayed.write_text("\n".join(_cut_lines("caviar", "cut10", "caviar-delayed.jsonl")) + "\n")
    assert not differing_instances(_run("caviar", delayed, tmp_path, "--retention", "6000"), want)


@pytest.mark.skipif(not os.environ.get("CHRONOLOG_RTEC_FULL"), reason="whole streams: set CHRONOLOG_RTEC_FULL=1")
@pytest.mark.parametrize("app, source", [("caviar", "stream.jsonl"), ("caviar", "caviar-delayed.jsonl"),
                                         ("ctm", "stream.jsonl"), ("voting", "stream.jsonl")])
def test_whole_stream_gives_rtecs_answer(app: str, source: str, tmp_path: Path) -> None:
    got = _run(app, SHARED / app / source, tmp_path)
    assert not differing_instances(got, set(load_expected(app)))
