"""Bytes each commit of a hosted DatalogMTL or RTEC service writes to its changelog.

Not a test: ``python tests/state/commit_bytes.py [records] [batch]`` drives
``EvaluatorStage`` over the first ``records`` input lines of a benchmark
workload (../shared/data beside the repository: DatalogMTL's S1 with short_stop.mtl, RTEC's
caviar), commits after every ``batch`` records as a service does (the changed
journal entries and the snapshot, as changelog records), and prints the bytes
of the first and last commits (docs/benchmarks.md, "state per commit").
"""

from __future__ import annotations

import statistics
import sys
import time
from pathlib import Path

DATA = Path(__file__).resolve().parents[3] / "shared" / "data"  # ../shared beside the repository


def commit_bytes(stage) -> int:  # type: ignore[no-untyped-def]
    """The changelog bytes (keys and values) of one commit of ``stage``."""
    try:
        from chronolog.state.changelog import capture, changelog_records
    except ImportError:  # the code before state/changelog.py (main at 81b0828)
        from chronolog.runtime.fleet.service import CHUNK, commit_state
        from chronolog.state.recovery import snapshot_records

        entries, snapshot = commit_state(stage)
        records = [(k, v) for k, v, _ in entries] + snapshot_records(snapshot, {"chronolog.facts:0": 1}, CHUNK)
        return sum(len(k) + len(v) for k, v in records)
    got = capture(stage, {"chronolog.facts:0": 1})
    return sum(len(k) + len(v) for k, v in changelog_records(got))


def stages():  # type: ignore[no-untyped-def]
    from chronolog.dialects.load import load_program
    from chronolog.dialects.registry import RunOptions, lookup
    from chronolog.stages.interface import StageSpec

    def chain(program):  # type: ignore[no-untyped-def]  # what `chronolog up` builds for the chain service
        return lookup(program.dialect).layout(program, RunOptions()).stage(StageSpec("chain", idle_flush=1e9))

    mtl = load_program([str(DATA / "mtl" / "short_stop.mtl")])
    yield "DatalogMTL S1", chain(mtl), DATA / "mtl" / "S1.jsonl"
    caviar = DATA / "rtec" / "caviar"
    rtec = load_program([str(caviar / f) for f in ("rules.prolog", "pre-processing-portable.prolog", "settings.prolog")])
    yield "RTEC caviar", chain(rtec), caviar / "stream.jsonl"


def main(records: int = 20000, batch: int = 500) -> None:
    print("| workload | records | commits | first commit | last commit | mean | seconds |")
    print("|---|---:|---:|---:|---:|---:|---:|")
    for name, stage, path in stages():
        try:
            from chronolog.state.changelog import track
        except ImportError:
            from chronolog.runtime.fleet.service import _track as track
        track(stage)
        lines = path.read_bytes().splitlines()[:records]
        sizes = []
        t0 = time.perf_counter()
        for i in range(0, len(lines), batch):
            stage.process([("facts", "chronolog.facts", 0, i + j, v) for j, v in enumerate(lines[i:i + batch])], now=0.0)
            sizes.append(commit_bytes(stage))
        took = time.perf_counter() - t0
        print(f"| {name} | {len(lines):,} | {len(sizes)} | {sizes[0]:,} | {sizes[-1]:,} | "
              f"{statistics.mean(sizes):,.0f} | {took:.1f} |")


if __name__ == "__main__":
    main(*map(int, sys.argv[1:]))
