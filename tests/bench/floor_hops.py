"""Which ``bench fleet --floor`` hop processes are running (tests/bench)."""

from __future__ import annotations

import os
import subprocess


def hop_processes(pid: int | None = None) -> list[str]:
    """Hop processes started by process ``pid`` (default: this one; their topics name it)."""
    got = subprocess.run(["ps", "-eo", "args"], capture_output=True, text=True).stdout
    mark = f"chronolog-floor-{os.getpid() if pid is None else pid}-"
    return [line for line in got.splitlines() if "chronolog.bench.floor" in line and mark in line]
