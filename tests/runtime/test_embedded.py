"""The one embedded loop: what was evaluated before a bad input line stopped the run is written."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

JAM = """slow(R) :- speed(R, V) [3], V < 30.
low(R) at T :- speed(R, V) at T [2], V < 30.
stuck(R) :- low(R) always [2].
"""
STREAM = [
    '{"t": 0, "pred": "speed", "args": ["a1", 80]}',
    '{"t": 1, "pred": "speed", "args": ["a1", 20]}',
    '{"t": 2, "pred": "speed", "args": ["a1", 25]}',
    '{"t": 3, "pred": "speed", "args": ["a1", 22]}',
    '{"t": 6}',
]


def run(tmp_path: Path, lines: list[str], *options: str) -> subprocess.CompletedProcess:
    program, stream = tmp_path / "jam.lars", tmp_path / "in.jsonl"
    program.write_text(JAM)
    stream.write_text("\n".join(lines) + "\n")
    return subprocess.run([sys.executable, "-m", "chronolog", "run", str(program), "--input", str(stream), *options],
                          capture_output=True, text=True)


def test_a_bad_line_stops_the_run_after_writing_every_time_already_final(tmp_path):
    """At {"t": 6} the times up to 5 are final (CONTRACT §2) and LARS evaluates them: a bad
    line after it stops the run (exit 2), and the answers up to 5 are on the output, as
    they are when the input ends there with --until 5 (the same final time advance)."""
    bad = run(tmp_path, [*STREAM, '{"t": 7, "pred": "speed", "args": ["a1"'])
    assert bad.returncode == 2 and "in.jsonl:6:" in bad.stderr
    upto5 = run(tmp_path, STREAM[:-1], "--until", "5")
    assert upto5.returncode == 0
    assert bad.stdout == upto5.stdout
    assert '{"interval":"[4,inf)","pred":"stuck","args":["a1"],"diff":-1}' in bad.stdout.splitlines()
