"""Measured child processes, shared by the benchmarks: ``measured`` runs a command from a
small launcher (wall and CPU time, peak RSS), ``run_process`` a ``chronolog run``."""

from __future__ import annotations

import json
import subprocess
import sys
import tempfile
from dataclasses import dataclass
from pathlib import Path

from chronolog.core.errors import ChronologError


class BenchError(ChronologError):
    """The benchmark cannot run (no generator, a failing workload)."""


@dataclass
class ProcessRun:
    wall: float  # seconds
    cpu: float  # user + system seconds
    peak_rss: int  # bytes
    answers: int
    returncode: int
    stderr: str = ""


# A small launcher process starts each measured run: Linux folds the memory
# high-water mark of the process that forks into the child's peak RSS, so the
# measured command must not be forked from this (larger) process.
_LAUNCH = """
import json, os, subprocess, sys, time
with open(sys.argv[1], "wb") as err:
    start = time.perf_counter()
    proc = subprocess.Popen(sys.argv[2:], stdout=subprocess.DEVNULL, stderr=err)
    _, status, usage = os.wait4(proc.pid, 0)
    wall = time.perf_counter() - start
cpu = usage.ru_utime + usage.ru_stime
print(json.dumps({"wall": wall, "cpu": cpu, "rss": usage.ru_maxrss * 1024, "code": os.waitstatus_to_exitcode(status)}))
"""


def measured(cmd: list[str]) -> tuple[float, float, int, int, str]:
    """Run ``cmd`` from a small launcher: wall and CPU seconds, peak RSS bytes, exit code, stderr."""
    with tempfile.NamedTemporaryFile(suffix=".err") as err:
        done = subprocess.run([sys.executable, "-c", _LAUNCH, err.name, *cmd], capture_output=True, text=True)
        if done.returncode != 0:
            raise BenchError(f"error: cannot run {cmd[0]}: {done.stderr.strip()[-300:]}")
        got = json.loads(done.stdout)
        stderr = Path(err.name).read_text(errors="replace")
    return got["wall"], got["cpu"], got["rss"], got["code"], stderr


def run_process(program: Path, stream: Path, out: Path, extra: list[str] | None = None) -> ProcessRun:
    """``chronolog run`` as a child process; wall time, peak RSS and answer lines."""
    cmd = [sys.executable, "-m", "chronolog", "run", str(program), "--input", str(stream), "--output", str(out)]
    wall, cpu, rss, code, stderr = measured(cmd + (extra or []))
    answers = 0
    if out.exists():
        with open(out, "rb") as f:
            answers = sum(chunk.count(b"\n") for chunk in iter(lambda: f.read(1 << 20), b""))
    return ProcessRun(wall, cpu, rss, answers, code, stderr)
