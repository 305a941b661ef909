"""`chronolog run` end to end (a real subprocess) on hand-derived examples.

Each expected answer is derived by hand in the comments from LARS.md's
semantics; outputs are compared by meaning (tests/meaning.py), never by lines.
"""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

from meaning import meaning


def run(tmp_path: Path, program: str, events: list[dict], *args: str, suffix: str = ".lars", until: int | None = None):
    prog = tmp_path / f"prog{suffix}"
    prog.write_text(program)
    stream = tmp_path / "in.jsonl"
    stream.write_text("".join(json.dumps(e) + "\n" for e in events))
    cmd = [sys.executable, "-m", "chronolog", "run", str(prog), "--input", str(stream), *args]
    if until is not None:
        cmd += ["--until", str(until)]
    proc = subprocess.run(cmd, capture_output=True, text=True, timeout=120)
    return proc


def answers(tmp_path: Path, program: str, events: list[dict], *args: str, until: int | None = None, suffix: str = ".lars"):
    proc = run(tmp_path, program, events, *args, until=until, suffix=suffix)
    assert proc.returncode == 0, proc.stderr
    assert "Traceback" not in proc.stderr
    times = [e["t"] for e in events]
    span = (min(times), until if until is not None else max(times))
    return meaning([json.loads(x) for x in proc.stdout.splitlines()], span)


def pts(pred: str, args: tuple, times) -> set:
    return {(pred, args, t) for t in times}


def test_diamond_time_window(tmp_path):
    # q(a) at 0..2 (p(a)@0 stays in [t-2,t]); q(b) at 3..5
    got = answers(tmp_path, "q(X) :- p(X) [2].", [{"t": 0, "pred": "p", "args": ["a"]}, {"t": 3, "pred": "p", "args": ["b"]}], until=5)
    assert got == pts("q", ("a",), range(0, 3)) | pts("q", ("b",), range(3, 6))


def test_same_program_in_laser_syntax(tmp_path):
    events = [{"t": 0, "pred": "p", "args": ["a"]}, {"t": 3, "pred": "p", "args": ["b"]}]
    got = answers(tmp_path, "q(X) :- time_win(2, 0, 1, diamond(p(X)))\n", events, until=5, suffix=".laser")
    assert got == pts("q", ("a",), range(0, 3)) | pts("q", ("b",), range(3, 6))


def test_box_clipped_at_first_time_point(tmp_path):
    # p at 0,1,2,4,5,6.  [2] at t covers max(0,t-2)..t:  t=0 [0,0] ok, t=1 [0,1] ok,
    # t=2 [0,2] ok, t=3..5 contain 3 -> no, t=6 [4,6] ok.
    events = [{"t": t, "pred": "p", "args": []} for t in (0, 1, 2, 4, 5, 6)]
    got = answers(tmp_path, "z :- p always [2].", events)
    assert got == pts("z", (), (0, 1, 2, 6))


def test_ticker_tuple_window_example(tmp_path):
    # LARS.md's example.  Stream rec(1)@0, rec(2)@1, rec(2)@2, rec(1)@3.
    # t=2: last 3 = rec(1)@0, rec(2)@1, rec(2)@2; last 2 = rec(2)@1, rec(2)@2:
    #      C=1: rec(1) at 0 in [3 #] and not in [2 #] -> third at 0.  C=2 is in [2 #].
    # t=0,1: rec(1) is among the last 2; t=3: both are among the last 2.  So third@0 only.
    program = "third at T :- car(C), rec(C) at T in [3 #], not rec(C) [2 #].\ncar(1). car(2).\n"
    events = [{"t": t, "pred": "rec", "args": [c]} for t, c in ((0, 1), (1, 2), (2, 2), (3, 1))]
    assert answers(tmp_path, program, events) == {("third", (), 0)}


def test_at_heads_and_box_over_derived_atoms(tmp_path):
    # hot at T for temp >= 100 at T within [t-3, t]: hot@0, hot@2, hot@3.
    # alarm at t needs hot at every point of [max(0,t-1), t] derived in the evaluation at t:
    # t=0: [0,0] hot@0 -> alarm@0; t=1: hot@1 missing; t=2: hot@1 missing; t=3: hot@2, hot@3 -> alarm@3.
    program = "hot at T :- temp(V) at T [3], V >= 100.\nalarm :- hot always [1].\n"
    events = [{"t": t, "pred": "temp", "args": [v]} for t, v in ((0, 120), (1, 50), (2, 110), (3, 130))]
    assert answers(tmp_path, program, events) == pts("hot", (), (0, 2, 3)) | pts("alarm", (), (0, 3))


def test_no_carry_over_and_negation(tmp_path):
    # b at T from p at T in [t-1,t]: b@0 (evaluations 0 and 1).  a :- not b (b now):
    # t=0: b@0 holds -> no a; t=1: b at 1? no -> a@1; t=2 -> a@2.
    program = "b at T :- p at T [1].\na :- not b.\n"
    got = answers(tmp_path, program, [{"t": 0, "pred": "p", "args": []}], until=2)
    assert got == {("b", (), 0), ("a", (), 1), ("a", (), 2)}


def test_builtins_and_arithmetic(tmp_path):
    # y = x + 1 for readings with 2 <= x <= 4: n(3)@0, n(4)@1 (x=5 fails leqleq)
    program = "n(Y) :- r(X), plus(X, 1, Y), leqleq(2, X, 4).\nodd(X) :- r(X), modulo(X, 2, 1).\n"
    events = [{"t": 0, "pred": "r", "args": [2]}, {"t": 1, "pred": "r", "args": [3]}, {"t": 2, "pred": "r", "args": [5]}]
    assert answers(tmp_path, program, events) == {("n", (3,), 0), ("n", (4,), 1), ("odd", (3,), 1), ("odd", (5,), 2)}


def test_non_stratified_program_one_answer_set_per_point(tmp_path):
    got = answers(tmp_path, "a :- not b, p.\nb :- not a, p.\n", [{"t": t, "pred": "p", "args": []} for t in range(4)])
    for t in range(4):
        assert len({g for g in got if g[2] == t}) == 1


def test_delayed_event_and_retraction_are_corrected(tmp_path):
    # As test_diamond_time_window, then p(c)@1 arrives late and p(a)@0 is retracted:
    # q(c) at 1..3, q(b) at 3..5, no q(a).
    events = [
        {"t": 0, "pred": "p", "args": ["a"]},
        {"t": 3, "pred": "p", "args": ["b"]},
        {"t": 5},
        {"t": 1, "pred": "p", "args": ["c"]},
        {"t": 0, "pred": "p", "args": ["a"], "op": "retract"},
    ]
    for form in ("changelog", "points"):
        got = answers(tmp_path, "q(X) :- p(X) [2].", events, "--answers", form)
        assert got == pts("q", ("c",), range(1, 4)) | pts("q", ("b",), range(3, 6))


def test_bad_program_reports_location(tmp_path):
    proc = run(tmp_path, "q(X) :- p(X) [2].\nr(X) :- p(Y).\n", [{"t": 0}])
    assert proc.returncode == 2
    assert "prog.lars:2:1: error: unsafe variable X" in proc.stderr
    assert "Traceback" not in proc.stderr
    proc = run(tmp_path, "q(X) :- p(X) [2 msec].\n", [{"t": 0}])
    assert proc.returncode == 2 and "prog.lars:1:17: error" in proc.stderr


def test_bad_input_line_fails_or_is_skipped(tmp_path):
    events_text = '{"t": 0, "pred": "p", "args": ["a"]}\n{"t": "x", "pred": "p"}\nnot json\n{"t": 2}\n'
    prog = tmp_path / "p.lars"
    prog.write_text("q(X) :- p(X) [1].")
    stream = tmp_path / "s.jsonl"
    stream.write_text(events_text)
    base = [sys.executable, "-m", "chronolog", "run", str(prog), "--input", str(stream)]
    proc = subprocess.run(base, capture_output=True, text=True)
    assert proc.returncode == 2 and "s.jsonl:2:7: error" in proc.stderr and "Traceback" not in proc.stderr
    proc = subprocess.run(base + ["--on-error", "skip"], capture_output=True, text=True)
    assert proc.returncode == 0
    assert "s.jsonl:2:7: skipped" in proc.stderr and "s.jsonl:3:" in proc.stderr
    assert "skipped 2 bad input lines" in proc.stderr
    got = meaning([json.loads(x) for x in proc.stdout.splitlines()], (0, 2))
    assert got == pts("q", ("a",), (0, 1))


def test_stdin_and_lines_format(tmp_path):
    prog = tmp_path / "p.lars"
    prog.write_text("q(X) :- p(X) [1].")
    proc = subprocess.run(
        [sys.executable, "-m", "chronolog", "run", str(prog), "--input", "-", "--format", "lines"],
        input="# comment\n0 p a\n1\n2 p 7\n", capture_output=True, text=True,
    )
    assert proc.returncode == 0, proc.stderr
    got = meaning([json.loads(x) for x in proc.stdout.splitlines()], (0, 2))
    assert got == pts("q", ("a",), (0, 1)) | {("q", (7,), 2)}


def test_check_prints_strata(tmp_path):
    prog = tmp_path / "p.lars"
    prog.write_text("a :- p [2].\nb :- not a.\nc :- not b, not c.\n")
    proc = subprocess.run([sys.executable, "-m", "chronolog", "check", str(prog)], capture_output=True, text=True)
    assert proc.returncode == 0
    assert "stratum 1: a/0" in proc.stdout and "stratum 2: b/0" in proc.stdout
    assert "non-stratified" in proc.stdout


def test_bundled_example_runs():
    root = Path(__file__).resolve().parents[2] / "src" / "chronolog" / "examples"
    proc = subprocess.run(
        [sys.executable, "-m", "chronolog", "run", str(root / "traffic.lars"), "--input", str(root / "traffic.jsonl")],
        capture_output=True, text=True, timeout=120,
    )
    assert proc.returncode == 0, proc.stderr
    lines = [json.loads(x) for x in proc.stdout.splitlines()]
    assert any(x.get("diff") == -1 for x in lines)
    assert any(x["pred"] == "jam" for x in lines)


def _laser_stream(spec: dict[int, list[tuple]]) -> list[dict]:
    out = []
    for t, facts in sorted(spec.items()):
        out.append({"t": t})
        out += [{"t": t, "pred": p, "args": list(a)} for p, *a in facts]
    return out


def test_laser_box_window_as_laser_test9(tmp_path):
    # Laser's own test9: h(Y,X) :- time_win(2,0,1, box(p(X,Y))); p(a,b) at 0..2, p(c,d) at 3..5.
    # [2] is clipped at 0: h(b,a) at 0,1,2; p(c,d) covers [3,5] only at t=5.
    spec = {t: [("p", "a", "b")] for t in range(3)} | {t: [("p", "c", "d")] for t in range(3, 6)}
    got = answers(tmp_path, "h(Y,X) :- time_win(2,0,1, box(p(X,Y)))\n", _laser_stream(spec), suffix=".laser")
    assert got == pts("h", ("b", "a"), (0, 1, 2)) | {("h", ("d", "c"), 5)}


def test_laser_diamond_window_as_laser_test10(tmp_path):
    # Laser's test10: diamond over [2]; p(a,b)@0, p(c,d)@1, p(e,f)@2, p(g,h)@3, p(i,j)@5.
    spec = {0: [("p", "a", "b")], 1: [("p", "c", "d")], 2: [("p", "e", "f")], 3: [("p", "g", "h")], 4: [], 5: [("p", "i", "j")]}
    got = answers(tmp_path, "h(Y,X) :- time_win(2,0,1, diamond(p(X,Y)))\n", _laser_stream(spec), suffix=".laser")
    expected = {0: "ba", 1: "dc ba", 2: "fe dc ba", 3: "hg fe dc", 4: "hg fe", 5: "hg ji"}
    assert got == {("h", (a[0], a[1]), t) for t, s in expected.items() for a in s.split()}


def test_closed_stdout_is_not_an_error(tmp_path):
    prog = tmp_path / "p.lars"
    prog.write_text("q(X) :- p(X) [3].")
    stream = tmp_path / "s.jsonl"
    stream.write_text("".join(json.dumps({"t": t, "pred": "p", "args": [f"c{t}_{i}"]}) + "\n" for t in range(300) for i in range(50)))
    proc = subprocess.Popen([sys.executable, "-m", "chronolog", "run", str(prog), "--input", str(stream)],
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    assert proc.stdout.readline()
    proc.stdout.close()
    proc.wait(timeout=60)
    err = proc.stderr.read()
    assert proc.returncode == 0 and "error" not in err and "Traceback" not in err


def test_clingo_limits_are_reported_not_crashed(tmp_path):
    program = "a(X) :- p(X), not b(X).\nb(X) :- p(X), not a(X).\n"
    proc = run(tmp_path, program, [{"t": 0, "pred": "p", "args": [99999999999]}], "--mode", "oneshot")
    assert proc.returncode == 2
    assert "32-bit" in proc.stderr and "Traceback" not in proc.stderr
    # the TMS mode (the default) has no such limit: one of the two answer sets
    proc = run(tmp_path, program, [{"t": 0, "pred": "p", "args": [99999999999]}])
    assert proc.returncode == 0, proc.stderr
    got = [json.loads(x) for x in proc.stdout.splitlines()]
    assert [(x["pred"], x["args"]) for x in got] in ([("a", [99999999999])], [("b", [99999999999])])
