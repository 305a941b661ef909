"""The command line as users and scripts see it (CONTRACT §1): a real ``python -m chronolog`` subprocess.

Exit statuses, one-line ``file:line:col: error:`` messages without tracebacks,
stdin/stdout, files, input formats and skip mode.  Answers are compared by
meaning (tests/meaning.py), never by exact lines.
"""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
from pathlib import Path

import pytest
from meaning import meaning

from chronolog import __version__

EXAMPLES = Path(__file__).resolve().parents[2] / "src" / "chronolog" / "examples"
DIAMOND = "q(X) :- p(X) [2].\n"
# p(a) at 0 and p(b) at 3, evaluated up to 5: q(a) at 0,1,2 (p(a)@0 lies in [t-2,t]); q(b) at 3,4,5.
DIAMOND_EVENTS = '{"t": 0, "pred": "p", "args": ["a"]}\n{"t": 3, "pred": "p", "args": ["b"]}\n'
DIAMOND_ANSWERS = {("q", ("a",), t) for t in (0, 1, 2)} | {("q", ("b",), t) for t in (3, 4, 5)}


def chronolog(*args: str, stdin: str | bytes | None = None, cwd: Path | None = None) -> subprocess.CompletedProcess:
    text = not isinstance(stdin, bytes)
    return subprocess.run(
        [sys.executable, "-m", "chronolog", *map(str, args)],
        input=stdin, capture_output=True, text=text, timeout=120, cwd=cwd, check=False,
    )


def answer_meaning(stdout: str, span: tuple[int, int]) -> set:
    return meaning([json.loads(x) for x in stdout.splitlines()], span, running=True)


def assert_user_error(proc: subprocess.CompletedProcess, *fragments: str) -> None:
    """Exit 2, no traceback, and the fragments on one stderr line."""
    assert proc.returncode == 2, (proc.returncode, proc.stderr)
    assert "Traceback" not in proc.stderr, proc.stderr
    lines = [x for x in proc.stderr.splitlines() if all(f in x for f in fragments)]
    assert lines, f"no stderr line with {fragments}: {proc.stderr!r}"


# ---------------------------------------------------------------- basics


def test_version():
    proc = chronolog("--version")
    assert proc.returncode == 0 and proc.stdout.strip() == f"chronolog {__version__}"


def test_no_subcommand_is_a_usage_error():
    proc = chronolog()
    assert proc.returncode == 2 and "usage: chronolog" in proc.stderr and "Traceback" not in proc.stderr


def test_help_lists_run_and_check():
    proc = chronolog("--help")
    assert proc.returncode == 0 and "run" in proc.stdout and "check" in proc.stdout


# ---------------------------------------------------------------- check


def test_check_good_program(files):
    prog = files("p.lars", "a(X) :- p(X) [2].\nb(X) :- a(X), not c(X).\nc(X) :- q(X) always [3].\n")
    proc = chronolog("check", prog)
    assert proc.returncode == 0, proc.stderr
    out = proc.stdout.splitlines()
    assert "stratum 1: a/1, c/1" in out and "stratum 2: b/1" in out
    assert "output predicates: a/1, b/1, c/1" in out
    assert "input predicates: p/1, q/1" in out
    assert any(x.startswith("stratified") for x in out)


def test_check_non_stratified_program(files):
    proc = chronolog("check", files("p.lars", "a :- not b, p.\nb :- not a, p.\n"))
    assert proc.returncode == 0, proc.stderr
    assert "non-stratified: evaluated by truth maintenance (--mode tms, the default)" in proc.stdout


def test_check_bundled_example():
    proc = chronolog("check", EXAMPLES / "traffic.lars")
    assert proc.returncode == 0, proc.stderr
    assert "output predicates:" in proc.stdout and "jam/1" in proc.stdout


@pytest.mark.parametrize(
    "program,where",
    [
        ("q(X) :- p(X) [2].\nr(X) :- p(Y).\n", "bad.lars:2:1: error: "),  # unsafe X
        ("q(X) :- p(X) [2", "bad.lars:1:16: error: "),  # unclosed window
        ("q(X) :- p(X) [2 msec].\n", "bad.lars:1:17: error: "),
    ],
)
def test_check_bad_program_names_file_line_column(files, program, where):
    proc = chronolog("check", files("bad.lars", program))
    assert_user_error(proc, where)
    assert proc.stdout == ""


def test_check_missing_program_file(tmp_path):
    assert_user_error(chronolog("check", tmp_path / "nope.lars"), "nope.lars", "error")


def test_rtec_program_error_is_located(files):
    assert_user_error(chronolog("check", files("p.rtec", "A :- B.\n")), "p.rtec:1:1: error:", "clause head")


# ---------------------------------------------------------------- run


def test_run_hand_derived_answers(files):
    prog, stream = files("p.lars", DIAMOND), files("in.jsonl", DIAMOND_EVENTS)
    for form in ("changelog", "points"):
        proc = chronolog("run", prog, "--input", stream, "--until", "5", "--answers", form)
        assert proc.returncode == 0, proc.stderr
        assert proc.stderr == ""  # no progress bar or chatter when stderr is not a terminal
        assert answer_meaning(proc.stdout, (0, 5)) == DIAMOND_ANSWERS
        if form == "points":
            assert all("t" in json.loads(x) for x in proc.stdout.splitlines())


def test_run_output_file(files, tmp_path):
    out = tmp_path / "answers.jsonl"
    proc = chronolog("run", files("p.lars", DIAMOND), "--input", files("in.jsonl", DIAMOND_EVENTS), "--output", out, "--until", "5")
    assert proc.returncode == 0 and proc.stdout == "", proc.stderr
    assert answer_meaning(out.read_text(), (0, 5)) == DIAMOND_ANSWERS


def test_run_from_stdin(files):
    proc = chronolog("run", files("p.lars", DIAMOND), "--input", "-", "--output", "-", "--until", "5", stdin=DIAMOND_EVENTS)
    assert proc.returncode == 0, proc.stderr
    assert answer_meaning(proc.stdout, (0, 5)) == DIAMOND_ANSWERS


def test_run_lines_format(files):
    text = "# p(a) at 0, p(b) at 3, a tick at 5\n0 p a\n3 p b\n5\n"
    proc = chronolog("run", files("p.lars", DIAMOND), "--input", "-", "--format", "lines", stdin=text)
    assert proc.returncode == 0, proc.stderr
    assert answer_meaning(proc.stdout, (0, 5)) == DIAMOND_ANSWERS


def test_integer_and_string_constants_differ(files):
    # "3" (string) and 3 (integer) are different constants: only the integer passes X > 2.
    prog = files("p.lars", "big(X) :- p(X), X > 2.\nsame(X) :- p(X), p(Y), X = Y.\n")
    stream = files("in.jsonl", '{"t": 0, "pred": "p", "args": [3]}\n{"t": 0, "pred": "p", "args": ["3"]}\n')
    proc = chronolog("run", prog, "--input", stream)
    assert proc.returncode == 0, proc.stderr
    got = answer_meaning(proc.stdout, (0, 0))
    assert ("big", (3,), 0) in got and ("big", ("3",), 0) not in got
    assert {("same", (3,), 0), ("same", ("3",), 0)} <= got


def test_delayed_event_and_retraction(files):
    # As above, then p(c)@1 arrives late and p(b)@3 is withdrawn: q(a) at 0..2, q(c) at 1..3.
    stream = files(
        "in.jsonl",
        DIAMOND_EVENTS + '{"t": 5}\n{"t": 1, "pred": "p", "args": ["c"]}\n{"t": 3, "pred": "p", "args": ["b"], "op": "retract"}\n',
    )
    proc = chronolog("run", files("p.lars", DIAMOND), "--input", stream)
    assert proc.returncode == 0, proc.stderr
    assert answer_meaning(proc.stdout, (0, 5)) == {("q", ("a",), t) for t in (0, 1, 2)} | {("q", ("c",), t) for t in (1, 2, 3)}


def test_unmatched_retraction_is_reported_not_fatal(files):
    stream = files("in.jsonl", DIAMOND_EVENTS + '{"t": 0, "pred": "p", "args": ["zzz"], "op": "retract"}\n')
    proc = chronolog("run", files("p.lars", DIAMOND), "--input", stream, "--until", "5")
    assert proc.returncode == 0, proc.stderr
    assert "in.jsonl:3:" in proc.stderr and "matches no earlier event" in proc.stderr
    assert answer_meaning(proc.stdout, (0, 5)) == DIAMOND_ANSWERS


# ---------------------------------------------------------------- bad input


def test_bad_input_line_stops_with_its_location(files):
    stream = files("in.jsonl", '{"t": 0, "pred": "p", "args": ["a"]}\n{"t": 1, "pred": "p", "args": ["a", 1.5]}\n{"t": 2}\n')
    assert_user_error(chronolog("run", files("p.lars", DIAMOND), "--input", stream), "in.jsonl:2:37: error: argument 2")


def test_bad_stdin_line_is_named_stdin(files):
    proc = chronolog("run", files("p.lars", DIAMOND), "--input", "-", stdin='{"t": 0}\n{"t": 1,\n')
    assert_user_error(proc, "<stdin>:2:", "invalid JSON")


def test_undecodable_input_bytes_are_a_located_error(files):
    stream = files("in.jsonl", b'{"t": 0}\n{"t": 1, "pred": "p", "args": ["\xff"]}\n')
    assert_user_error(chronolog("run", files("p.lars", DIAMOND), "--input", stream), "in.jsonl:2:33: error:", "UTF-8")


def test_skip_mode_reports_every_line_and_counts(files):
    text = (
        '{"t": 0, "pred": "p", "args": ["a"]}\n'
        '{"t": "one"}\n'
        "garbage\n"
        '{"t": 3, "pred": "p", "args": ["b"]}\n'
        '{"t": 4, "pred": "p", "args": ["b"], "colour": "red"}\n'
    )
    proc = chronolog("run", files("p.lars", DIAMOND), "--input", files("in.jsonl", text), "--on-error", "skip", "--until", "5")
    assert proc.returncode == 0, proc.stderr
    err = proc.stderr.splitlines()
    assert any("in.jsonl:2:7: skipped:" in x for x in err)
    assert any("in.jsonl:3:1: skipped:" in x for x in err)
    assert any("in.jsonl:5:38: skipped:" in x for x in err)
    assert "skipped 3 bad input lines" in err
    assert answer_meaning(proc.stdout, (0, 5)) == DIAMOND_ANSWERS


def test_skip_mode_without_bad_lines_prints_no_summary(files):
    proc = chronolog("run", files("p.lars", DIAMOND), "--input", files("in.jsonl", DIAMOND_EVENTS), "--on-error", "skip")
    assert proc.returncode == 0 and "skipped" not in proc.stderr


def test_program_errors_come_before_input_errors(files, tmp_path):
    proc = chronolog("run", files("p.lars", "q(X) :- p(Y).\n"), "--input", tmp_path / "missing.jsonl")
    assert_user_error(proc, "p.lars:1:1: error:")


def test_missing_input_file(files, tmp_path):
    out = tmp_path / "out.jsonl"
    proc = chronolog("run", files("p.lars", DIAMOND), "--input", tmp_path / "missing.jsonl", "--output", out)
    assert_user_error(proc, "missing.jsonl", "error", "No such file")
    assert not out.exists()


def test_unwritable_output(files, tmp_path):
    proc = chronolog(
        "run", files("p.lars", DIAMOND), "--input", files("in.jsonl", DIAMOND_EVENTS), "--output", tmp_path / "no" / "dir.jsonl"
    )
    assert_user_error(proc, "dir.jsonl", "error")


def test_unsupported_input_format(files):
    proc = chronolog("run", files("p.lars", DIAMOND), "--input", files("in.txt", "Pos(a)@[1,2]\n"), "--format", "meteor")
    assert_user_error(proc, "error:", "'meteor' is not supported yet")


def test_interval_facts_need_the_mtl_dialect(files):
    stream = files("in.jsonl", '{"interval": "[2,7)", "pred": "p", "args": ["a"]}\n')
    assert_user_error(chronolog("run", files("p.lars", DIAMOND), "--input", stream),
                      "in.jsonl:1:14: error: interval facts need the mtl dialect")


def test_output_over_the_input_is_refused(files):
    stream = files("in.jsonl", DIAMOND_EVENTS)
    proc = chronolog("run", files("p.lars", DIAMOND), "--input", stream, "--output", stream)
    assert_user_error(proc, "in.jsonl: error: cannot write the output: it is the input file")
    assert stream.read_text() == DIAMOND_EVENTS


# ---------------------------------------------------------------- signals


@pytest.mark.skipif(os.name != "posix", reason="POSIX signals")
def test_interrupt_exits_130(files):
    # Skip mode reports a bad line on stderr at once, which shows the run is under way;
    # the process then waits for more input on stdin until SIGINT.
    proc = subprocess.Popen(
        [sys.executable, "-m", "chronolog", "run", files("p.lars", DIAMOND), "--input", "-", "--on-error", "skip"],
        stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
    )
    try:
        assert proc.stdin and proc.stderr
        proc.stdin.write('{"t": 0, "pred": "p", "args": ["a"]}\nbad\n')
        proc.stdin.flush()
        assert "skipped" in proc.stderr.readline()
        proc.send_signal(signal.SIGINT)
        assert proc.wait(timeout=30) == 130
        assert "Traceback" not in proc.stderr.read()
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.wait()



# ---------------------------------------------------------------- large files: decoded by a second process


@pytest.mark.parametrize("on_error", ["skip", "fail"])
def test_large_input_read_ahead_means_what_one_process_means(files, on_error):
    """A file past readahead.MIN_BYTES is decoded by a child process: the same
    answers, messages (in order) and exit status as decoding in the run itself."""
    rows = [b'{"t": %d, "pred": "p", "args": ["a%d"]}' % (i // 500, i % 700) for i in range(130_000)]
    rows[60_000] = b'{"t": 3, "pred": "p", "args": ["late"]}'  # delayed
    rows[70_000] = b'{"t": 139, "pred": "p", "args": ["a1"], "op": "retract"}'
    rows[80_000] = b'{"t": 160, "pred": "p", "args": [1.5]}'  # bad line
    rows[90_000] = b'{"t": 1, "pred": "p", "args": ["nothing"], "op": "retract"}'  # matches nothing
    stream = files("big.jsonl", b"\n".join(rows) + b"\n")
    assert stream.stat().st_size > 4 << 20
    program = files("p.lars", DIAMOND)
    runs = []
    for ahead in ("1", "0"):
        env = dict(os.environ, CHRONOLOG_READ_AHEAD=ahead)
        proc = subprocess.run(
            [sys.executable, "-m", "chronolog", "run", str(program), "--input", str(stream), "--on-error", on_error],
            capture_output=True, text=True, timeout=300, env=env, check=False,
        )
        runs.append((proc.returncode, proc.stderr, answer_meaning(proc.stdout, (0, 259))))
    assert runs[0] == runs[1]
    assert runs[0][0] == (0 if on_error == "skip" else 2)
    assert "big.jsonl:80001:" in runs[0][1]
