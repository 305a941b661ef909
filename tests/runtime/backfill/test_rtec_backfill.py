"""``chronolog backfill`` of an RTEC event description on a real local PySpark session: the
answers published live (before delayed events and a retraction arrived), plus the backfill's
corrections, mean what ``chronolog run`` prints on the whole history, over the backfilled span
[A,B] (and nothing changes outside it).  Hand-built event description (simple and statically
determined fluents, ``complement_all``) and a cut of RTEC's CAVIAR application."""

from __future__ import annotations

import io
import json
import random
from pathlib import Path

import pytest
from test_rtec import meaning

from chronolog.cli.main import main

pytestmark = pytest.mark.spark

SHARED = Path(__file__).resolve().parents[3].parent / "shared" / "data" / "rtec"

LAMPS = """
initiatedAt(on(X)=true, T) :- happensAt(switch_on(X), T).
terminatedAt(on(X)=true, T) :- happensAt(switch_off(X), T).
holdsFor(both=true, I) :- holdsFor(on(a)=true, A), holdsFor(on(b)=true, B), intersect_all([A,B], I).
holdsFor(dark(X)=true, I) :- holdsFor(on(X)=true, A), complement_all([A], I).
grounding(on(X)=true) :- lamp(X). grounding(both=true). grounding(dark(X)=true) :- lamp(X).
lamp(a). lamp(b).
"""


def lamp_history(seed: int) -> tuple[list[dict], list[dict]]:
    """A random history of switchings, and what arrives late: two delayed events, a retraction."""
    rng = random.Random(seed)
    prefix = [{"t": t, "pred": rng.choice(["switch_on", "switch_off"]), "args": [x]}
              for t in range(60) for x in "ab" if rng.random() < 0.15]
    late = [{"t": 12, "pred": "switch_off", "args": ["a"]}, dict(prefix[5], op="retract"),
            {"t": 31, "pred": "switch_on", "args": ["b"]}, {"t": 62}]
    return prefix, late


def _write(path: Path, records: list[dict]) -> Path:
    path.write_text("".join(json.dumps(r) + "\n" for r in records))
    return path


def chronolog_run(files: list[str], history: Path) -> list[dict]:
    out = io.StringIO()
    from contextlib import redirect_stdout

    with redirect_stdout(out):
        assert main(["run", *files, "--input", str(history)]) == 0
    return [json.loads(x) for x in out.getvalue().splitlines()]


def backfill(files: list[str], history: Path, published: Path | None, lo: int, hi: int, tmp: Path) -> list[dict]:
    out = tmp / "fixes.jsonl"
    extra = ["--answers", str(published)] if published is not None else []
    assert main(["backfill", *files, "--history", str(history), "--from", str(lo), "--to", str(hi),
                 "--output", str(out), *extra]) == 0
    return [json.loads(x) for x in out.read_text().splitlines()]


def within(m: dict, lo: int, hi: int, inside: bool = True) -> dict:
    out = {k: {t for t in v if (lo <= t <= hi) == inside} for k, v in m.items()}
    return {k: v for k, v in out.items() if v}


def test_backfill_of_an_event_description_gives_what_run_prints(spark, tmp_path: Path, capsys) -> None:
    ed = tmp_path / "lamps.prolog"
    ed.write_text(LAMPS)
    prefix, late = lamp_history(3)
    live = _write(tmp_path / "live.jsonl", prefix)
    whole = _write(tmp_path / "history.jsonl", prefix + late)
    published_lines = chronolog_run([str(ed)], live)  # what the live system published
    published = _write(tmp_path / "published.jsonl", published_lines)
    want = meaning(chronolog_run([str(ed)], whole), horizon=62)
    assert meaning(published_lines, horizon=62) != want  # the late events matter

    fixes = backfill([str(ed)], whole, published, 0, 62, tmp_path)
    assert fixes and all(f.get("diff", 1) in (1, -1) for f in fixes)
    assert meaning(published_lines + fixes, horizon=62) == want
    assert "with the rtec evaluator" in capsys.readouterr().err

    # a sub-span: corrected inside [20,50], untouched outside
    fixes = backfill([str(ed)], whole, published, 20, 50, tmp_path)
    got = meaning(published_lines + fixes, horizon=62)
    assert within(got, 20, 50) == within(want, 20, 50)
    assert within(got, 20, 50, False) == within(meaning(published_lines, horizon=62), 20, 50, False)
    # no published answers: the corrections are the answer; the true answer needs none
    assert meaning(backfill([str(ed)], whole, None, 0, 62, tmp_path), horizon=62) == want
    assert backfill([str(ed)], whole, _write(tmp_path / "true.jsonl", chronolog_run([str(ed)], whole)),
                    0, 62, tmp_path) == []


@pytest.mark.skipif(not SHARED.is_dir(), reason="the shared RTEC data is not beside the repository")
def test_backfill_of_caviar_with_delayed_rows_and_a_retraction(spark, tmp_path: Path) -> None:
    from rtec_expected import DATA, rtec_meaning

    files = [str(SHARED / "caviar" / f) for f in ("rules.prolog", "pre-processing-portable.prolog", "settings.prolog")]
    rows = [json.loads(x) for x in (DATA / "caviar" / "stream-cut1.jsonl").read_text().splitlines()]
    rng = random.Random(5)
    held = [r for r in rows if r["t"] > 2000 and rng.random() < 0.1]  # these arrive late
    live_rows = [r for r in rows if r not in held]
    gone = live_rows[len(live_rows) // 2]
    late = held + [dict(gone, op="retract")]
    published_lines = chronolog_run(files, _write(tmp_path / "live.jsonl", live_rows))
    whole = _write(tmp_path / "history.jsonl", live_rows + late)
    want = rtec_meaning(chronolog_run(files, whole), "caviar")
    assert rtec_meaning(published_lines, "caviar") != want
    fixes = backfill(files, whole, _write(tmp_path / "published.jsonl", published_lines), 0, 10_000, tmp_path)
    assert rtec_meaning(published_lines + fixes, "caviar") == want
