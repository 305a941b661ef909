"""DatalogMTL end to end: corrections, input formats, the CLI, errors, the shipped data."""

from __future__ import annotations

import io
import random
import subprocess
import sys
from fractions import Fraction as F
from pathlib import Path

import orjson
import pytest
from meaning import sampled_meaning
from test_mtl_semantics import clip, drive, iv, meaning, random_facts, random_program

from chronolog.core.errors import InputError, ProgramError
from chronolog.core.events import Event
from chronolog.dialects.mtl.evaluator import MtlEvaluator
from chronolog.dialects.mtl.parser import parse_mtl
from chronolog.dialects.mtl.reader import read_mtl_events
from chronolog.state.codec import decode, encode

DATA = Path(__file__).resolve().parents[4] / "shared" / "data" / "mtl"


def chronolog(*args: str, stdin: str | None = None) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "chronolog", *args], input=stdin, capture_output=True, text=True,
                          timeout=300)


def _events(facts):
    return sorted((Event(iv(w)[0], p, a, False, None, iv(w)) for p, a, w in facts), key=lambda e: e.t)


@pytest.mark.parametrize("seed", range(40))
def test_delayed_and_retracted_facts_mean_the_stream_in_time_order(seed):
    rng = random.Random(seed)
    text = random_program(rng)
    facts = random_facts(rng) + random_facts(rng)
    ordered = _events(facts)
    arrival = list(ordered)
    for _ in range(2):  # delay two facts past later ones
        i = rng.randrange(len(arrival))
        ev = arrival.pop(i)
        arrival.insert(min(len(arrival), i + rng.randint(1, 4)), ev)
    gone = rng.sample(ordered, 2)  # and withdraw two, after they arrived
    arrival += [Event(e.t, e.pred, e.args, True, None, e.span) for e in gone]
    kept = list(ordered)
    for e in gone:
        kept.remove(e)
    hi = max(max(e.t for e in ordered), max(e.span[2] for e in ordered))
    want = clip(meaning(drive(MtlEvaluator(parse_mtl(text), "batch"), kept + [Event(hi)])), hi)
    got = clip(meaning(drive(MtlEvaluator(parse_mtl(text), "stream"), arrival + [Event(hi)])), hi)
    assert got == want, text


def test_state_restores_in_a_fresh_evaluator_and_continues_exactly():
    rng = random.Random(5)
    for _ in range(20):
        text = random_program(rng)
        events = _events(random_facts(rng) + random_facts(rng))
        cut = rng.randrange(1, len(events))
        whole = meaning(drive(MtlEvaluator(parse_mtl(text), "stream"), events))
        first = MtlEvaluator(parse_mtl(text), "stream")
        changes, latest = [], None
        for e in events[:cut]:
            if latest is not None and e.t > latest:
                changes += first.advance(latest)
            latest = e.t if latest is None or e.t > latest else latest
            first.push(e)
        again = MtlEvaluator(parse_mtl(text), "stream")
        again.import_state(decode(encode(first.export_state())))
        rest = []
        for e in events[cut:]:
            if e.t > latest:
                rest += again.advance(latest)
                latest = e.t
            again.push(e)
        assert meaning(changes + rest + again.finish()) == whole, text


@pytest.mark.parametrize("text, where, message", [
    ("Q(X):-Boxminus[1,2P(X)", ":1:", "expected ']' or ')'"),
    ("Q(X):-Boxminus[2,1]P(X)", ":1:", "empty interval"),
    ("Q(X):-P(X)\nR(Y):-P(X)", ":2:", "unsafe rule: head variable Y"),
    ("Q(X):-not P(X)", ":1:1", "head variable X does not occur in a positive body literal"),
    ("Q(X):-R(X), not P(X,Y)", ":1:13", "unsafe negation: variable Y"),
    ("Q(X):-R(X), Boxminus[0,1] not P(X)", ":1:27", "'not' goes only in front of a whole body literal"),
    ("Q(X):-R(X), NOT P(X)", ":1:13", "negation is written 'not'"),
    ("not Q(X):-R(X)", ":1:1", "'not' goes only in front"),
    ("Diamondminus[1,2]Q(X):-P(X)", ":1:1", "not allowed in a rule head"),
    ("Q(X):-Boxminus[1,inf]P(X)", ":1:", "open on the right"),
])
def test_program_errors_name_file_line_and_column(text, where, message):
    with pytest.raises(ProgramError) as exc:
        parse_mtl(text, "p.mtl")
    assert f"p.mtl{where}" in str(exc.value) and message in str(exc.value)


def test_input_lines_jsonl_and_meteor_mean_the_same():
    jsonl = ('{"interval": "[1,3)", "pred": "P", "args": ["a"]}\n{"t": "7/2", "pred": "P", "args": ["a"]}\n'
             '{"t": 5}\n{"interval": "(2,7.5]", "pred": "P", "args": ["b"], "op": "retract"}\n')
    meteor = "P(a)@[1,3)\nP(a)@[7/2,7/2]\n"
    got = list(read_mtl_events(io.StringIO(jsonl), "in.jsonl"))
    assert [(e.t, e.pred, e.args, e.retract, e.span) for e in got[:2]] == [
        (F(1), "P", ("a",), False, iv("[1,3)")), (F(7, 2), "P", ("a",), False, iv("[7/2,7/2]"))]
    assert got[2].pred is None and got[2].t == 5 and got[3].retract and got[3].span == iv("(2,15/2]")
    again = list(read_mtl_events(io.StringIO(meteor), "in.txt", "meteor"))
    assert [(e.t, e.span) for e in again] == [(e.t, e.span) for e in got[:2]]
    with pytest.raises(InputError, match="in.jsonl:1:"):
        list(read_mtl_events(io.StringIO('{"interval": "[3,1]", "pred": "P"}\n'), "in.jsonl"))


@pytest.mark.parametrize("line, col, message", [
    ('{"interval": "[1,x]", "pred": "P", "args": ["a"]}', 18, "expected a number or inf"),
    ('{"pred": "P", "args": ["a"], "interval": "[3,1]"}', 43, "empty interval"),
    ('{"pred": "P", "args": ["a"], "interval": 5}', 42, '"interval" must be a string'),
    ('{"pred": "P", "args": ["a"], "interval": "(-inf,2]"}', 42, "an input interval needs a finite left end"),
    ('{"pred": "P", "args": ["a"], "t": "x"}', 35, '"t" must be a number or a rational string'),
    ('{"pred": "P", "args": ["a", 1.5], "t": 1}', 29, "argument 2 must be a string or an integer"),
    ('{"pred": "P", "t": 1, "zz": 1}', 23, "unknown key 'zz'"),
    ('{"args": ["a"], "t": 1}', 2, 'a fact needs "pred"'),
    ('{"t": 1, "op": "x", "pred": "P"}', 16, '"op" must be'),
])
def test_a_bad_input_line_names_the_column_of_what_is_wrong(tmp_path, line, col, message):
    prog = tmp_path / "p.mtl"
    prog.write_text("Q(X):-P(X)\n")
    got = chronolog("run", str(prog), "--input", "-", stdin='{"t": 0}\n' + line + "\n")
    assert got.returncode == 2 and f"<stdin>:2:{col}: error: {message}" in got.stderr, got.stderr


def test_rational_times_meteor_points_and_constants_of_any_script(tmp_path):
    """Times as numbers, rational strings and decimals are one time line (a retraction at 3.5
    withdraws the fact at "7/2"); MeTeoR's data files write a point as ``P(a)@3`` and take any
    characters in a constant, as MeTeoR reads them."""
    prog = tmp_path / "p.mtl"
    prog.write_text("Q(X):-Diamondminus[0,1]P(X)\nR:-P(ü)\n")
    jsonl = ('{"t": "7/2", "pred": "P", "args": ["a"]}\n{"interval": "[4.0,5]", "pred": "P", "args": ["a"]}\n'
             '{"t": "1/2", "pred": "P", "args": ["a"]}\n{"t": 3.5, "pred": "P", "args": ["a"], "op": "retract"}\n'
             '{"t": 2.5, "pred": "P", "args": ["ü"]}\n{"t": 6, "pred": "Q", "args": ["c"]}\n{"t": 7}\n')
    meteor = "P(a)@[4,5]\nP(a)@1/2\nP(ü)@2.5\nP(名)@7\n"
    # P(a) on {1/2} and [4,5]: Q(a) on [1/2,3/2] and [4,6]; P(ü) at 5/2: Q(ü) on [5/2,7/2], R at 5/2
    want = [{"interval": "[1/2,3/2]", "pred": "Q", "args": ["a"]}, {"interval": "[4,6]", "pred": "Q", "args": ["a"]},
            {"interval": "[5/2,7/2]", "pred": "Q", "args": ["ü"]}, {"interval": "[5/2,5/2]", "pred": "R", "args": []}]
    for name, text, extra in (("in.jsonl", jsonl, []), ("in.txt", meteor, ["--format", "meteor"])):
        (tmp_path / name).write_text(text, encoding="utf-8")
        got = chronolog("run", str(prog), "--input", str(tmp_path / name), *extra)
        assert got.returncode == 0, got.stderr
        lines = [orjson.loads(x) for x in got.stdout.splitlines()]
        also = [{"interval": "[7,7]", "pred": "Q", "args": ["名"]} if name == "in.txt" else  # (a head predicate's
                {"t": 6, "pred": "Q", "args": ["c"]}]  # input fact is an answer too: CONTRACT §3)
        assert sampled_meaning(lines, 7, F(1, 4)) == sampled_meaning(want + also, 7, F(1, 4)), got.stdout


def test_cli_runs_streams_notes_batch_and_refuses_misuse(tmp_path):
    prog = tmp_path / "p.mtl"
    prog.write_text("Q(X):-Boxminus[1,2]P(X)\n")
    data = tmp_path / "d.txt"
    data.write_text("P(a)@[0,5]\nP(a)@[8,8]\n")
    got = chronolog("run", str(prog), "--input", str(data), "--format", "meteor")
    assert got.returncode == 0, got.stderr
    assert [orjson.loads(x) for x in got.stdout.splitlines()] == [
        {"interval": "[2,6]", "pred": "Q", "args": ["a"]}]
    future = tmp_path / "f.mtl"
    future.write_text("Q(X):-Diamondplus[1,1]P(X)\n")
    got = chronolog("run", str(future), "--input", str(data), "--format", "meteor")
    assert got.returncode == 0 and "f.mtl:1:1: Diamondplus is not forward-propagating" in got.stderr
    assert {"interval": "[7,7]", "pred": "Q", "args": ["a"]} in [orjson.loads(x) for x in got.stdout.splitlines()]
    got = chronolog("run", str(future), "--input", str(data), "--format", "meteor", "--mode", "stream")
    assert got.returncode == 2 and "cannot be evaluated as a stream" in got.stderr and "Traceback" not in got.stderr
    got = chronolog("up", str(future))  # the fleet hosts MTL as a stream only (tests/runtime/fleet/test_mtl_fleet_e2e.py)
    assert got.returncode == 2 and "cannot be evaluated as a stream" in got.stderr and "Traceback" not in got.stderr
    got = chronolog("check", str(prog))
    assert "forward-propagating: evaluated as a stream" in got.stdout


def test_check_and_topology_describe_strata_streaming_and_the_partition_key(tmp_path):
    # Q reads R under not: R/1 in stratum 1, Q/1 in 2; a step's window reaches back the longest rule's
    # look-back (2: R's seeded values before it are final), the backfill's warm-up the chain's (1 + 2)
    prog = tmp_path / "p.mtl"
    prog.write_text("R(X):-Boxminus[0,2]S(X)\nQ(X):-P(X), not Diamondminus[1,1]R(X)\n")
    got = chronolog("check", str(prog))
    assert got.returncode == 0, got.stderr
    lines = got.stdout.splitlines()
    assert lines[:2] == ["stratum 1: R/1", "stratum 2: Q/1"]
    assert "negation: stratified, 2 strata" in lines and "input predicates: P/1, S/1" in lines
    assert ("forward-propagating: evaluated as a stream (window reach 2); every late event applied "
            "(--retention 2 makes memory flat)") in lines
    assert "backfill: segments, input reach 3" in lines
    assert any(x.startswith("fleet: one chain service") and "partition key: none" in x for x in lines)
    topo = chronolog("topology", str(prog))
    assert topo.returncode == 0 and topo.stdout.startswith(got.stdout)  # the description, then the fleet
    rest = topo.stdout[len(got.stdout):]
    assert "chronolog.late" in rest and "  chain: `chronolog service chain`" in rest
    assert "writes: chronolog.answers, chronolog.control, chronolog.dlq, chronolog.late" in rest
    assert "partitioning: one partition: the mtl evaluator is not split by key" in rest
    mermaid = chronolog("topology", str(prog), "--format", "mermaid")
    assert mermaid.stdout.startswith("flowchart LR") and "S0[chain]" in mermaid.stdout
    future = tmp_path / "f.mtl"
    future.write_text("Q(X):-Diamondplus[1,1]P(X)\n")
    got = chronolog("topology", str(future))
    assert got.returncode == 0 and "stratum 1: Q/1" in got.stdout and "topics:" not in got.stdout
    assert "not forward-propagating (" in got.stdout and "fleet: not available" in got.stdout
    got = chronolog("topology", str(future), "--format", "mermaid")
    assert got.returncode == 2 and "cannot be evaluated as a stream" in got.stderr


@pytest.fixture
def short_stop():
    if not (DATA / "S1.jsonl").exists():
        pytest.skip("../shared/data/mtl not found beside the repository")
    return DATA


def _direct_short_stops(path: Path) -> set[tuple[str, int]]:
    """ShortStop computed directly from its definition (seed 002's Hackathon query), not by rules:
    moving at t (NotPos or NotOnMap), standing at t-1..t-k and moving at t-k-1, for k = 1..4."""
    at: dict[tuple[str, int], set[str]] = {}
    for line in path.read_text().splitlines():
        rec = orjson.loads(line)
        t = int(rec["interval"][1:].split(",")[0])
        at.setdefault((rec["args"][0], t), set()).add(rec["pred"])

    def moving(v: str, t: int) -> bool:
        return bool(at.get((v, t), set()) & {"NotPos", "NotOnMap"})

    def standing(v: str, t: int) -> bool:
        return "Pos" in at.get((v, t), set())

    out = set()
    for v, t in at:
        if moving(v, t):
            for k in range(1, 5):
                if all(standing(v, t - i) for i in range(1, k + 1)) and moving(v, t - k - 1):
                    out.add((v, t))
    return out


@pytest.mark.parametrize("stream", ["S1", "S2"])
def test_short_stop_streams_the_directly_computed_answer(short_stop, tmp_path, stream):
    got = chronolog("run", str(short_stop / "short_stop.mtl"), "--input", str(short_stop / f"{stream}.jsonl"))
    assert got.returncode == 0, got.stderr
    lines = [orjson.loads(x) for x in got.stdout.splitlines()]
    held = meaning([(x["pred"], tuple(x["args"]), _span_of(x["interval"]), x.get("diff", 1)) for x in lines])
    stops = {(args[0], int(ivl[0])) for (pred, args), ivs in clip(held, 200).items() if pred == "ShortStop"
             for ivl in ivs}
    for (pred, _), ivs in held.items():
        if pred == "ShortStop":
            assert all(x[0] == x[2] or x[2] == float("inf") for x in ivs)  # punctual (or still open)
    assert stops == _direct_short_stops(short_stop / f"{stream}.jsonl") and stops


def test_lubm_nonrecursive_streams_the_directly_computed_answer(short_stop):
    """Π_nr on L1 computed from its definition on a ruler of cells (points k and gaps (k, k+1);
    every interval of L1 and of Π_nr has integral ends and is closed): Diamondminus[1,1] and
    Boxminus[1,1] both move a cell by one time unit, two cells."""
    facts: dict[tuple[str, tuple], set[int]] = {}
    for line in (short_stop / "lubm_L1.jsonl").read_text().splitlines():
        rec = orjson.loads(line)
        lo, hi = (int(x) for x in rec["interval"][1:-1].split(","))
        facts.setdefault((rec["pred"], tuple(rec["args"])), set()).update(range(2 * lo, 2 * hi + 1))
    last = 2 * 300

    def cells(pred: str) -> dict[tuple, set[int]]:
        return {args: c for (p, args), c in facts.items() if p == pred}

    later = lambda c: {x + 2 for x in c if x + 2 <= last}  # noqa: E731  (one time unit on, within the span)
    want: dict[tuple[str, tuple], set[int]] = {}
    for (x,), c in cells("a1:Lecturer").items():
        want[("a1:AssistantProfessorCandidate", (x,))] = later(c)
    universities = cells("a1:University")
    for (x, y), c in cells("a1:doctoralDegreeFrom").items():
        got = c & later(universities.get((y,), set()))
        want.setdefault(("a1:AssociateProfessorCandidate", (x,)), set()).update(got)
    for (pred, (x,)), c in list(want.items()):
        if pred == "a1:AssistantProfessorCandidate":
            want.setdefault(("a1:AssociateProfessorCandidate", (x,)), set()).update(later(c))
    want = {k: v for k, v in want.items() if v}

    got = chronolog("run", str(short_stop / "lubm_nonrecursive.mtl"), "--input", str(short_stop / "lubm_L1.jsonl"))
    assert got.returncode == 0, got.stderr
    lines = [orjson.loads(x) for x in got.stdout.splitlines()]
    held = clip(meaning([(x["pred"], tuple(x["args"]), _span_of(x["interval"]), x.get("diff", 1)) for x in lines]), 300)
    as_cells = {}
    for atom, ivs in held.items():
        c = set()
        for lo, lc, hi, hc in ivs:
            c.update(range(2 * lo + (0 if lc else 1), 2 * hi + (1 if hc else 0)))
        as_cells[atom] = c
    heads = {"a1:AssistantProfessorCandidate", "a1:AssociateProfessorCandidate"}
    assert {k: v for k, v in as_cells.items() if k[0] in heads} == want and want


@pytest.mark.parametrize("data", ["lubm_L1.jsonl", "lubm_L1h.jsonl"])
def test_lubm_recursive_streams_the_directly_computed_answer(short_stop, data):
    """Π_r from its definition on punctual data (every interval of L1 and L1h is a point, some at
    halves): ScientistCandidate at t when a doctoralDegreeFrom held at t - 1; Scientist at t when
    ScientistCandidate or FullProfessor held at t - 1 (Boxminus and Diamondminus [1,1] of points);
    FullProfessor at t when Scientist held at t - 1; inputs of those predicates hold too; all within
    the input's span [0, 300]."""
    points: dict[tuple[str, tuple], set[F]] = {}
    for line in (short_stop / data).read_text().splitlines():
        rec = orjson.loads(line)
        lo, _, hi, _ = iv(rec["interval"])
        assert lo == hi
        points.setdefault((rec["pred"], tuple(rec["args"])), set()).add(F(lo))
    step = {"a1:ScientistCandidate": "a1:Scientist", "a1:FullProfessor": "a1:Scientist",
            "a1:Scientist": "a1:FullProfessor"}  # what holding at t makes hold at t + 1
    todo = []
    for (p, args), ts in points.items():
        for t in ts:
            todo.append((("a1:ScientistCandidate", args[:1]), t + 1) if p == "a1:doctoralDegreeFrom" else ((p, args), t))
    want: dict[tuple[str, tuple], set[F]] = {}
    while todo:
        atom, t = todo.pop()
        if t > 300 or t in want.get(atom, set()):
            continue
        want.setdefault(atom, set()).add(t)
        if atom[0] in step:
            todo.append(((step[atom[0]], atom[1]), t + 1))
    heads = set(step) | {"a1:ScientistCandidate"}
    want = {k: v for k, v in want.items() if k[0] in heads}

    got = chronolog("run", str(short_stop / "lubm_recursive.mtl"), "--input", str(short_stop / data))
    assert got.returncode == 0, got.stderr
    lines = [orjson.loads(x) for x in got.stdout.splitlines()]
    held = clip(meaning([(x["pred"], tuple(x["args"]), _span_of(x["interval"]), x.get("diff", 1)) for x in lines]), 300)
    as_points = {}
    for atom, ivs in held.items():
        assert all(lo == hi for lo, _, hi, _ in ivs)
        as_points[atom] = {F(lo) for lo, _, _, _ in ivs}
    assert as_points == want and sum(len(v) for v in want.values()) > 1000


def _span_of(text: str):
    from chronolog.evaluator import Span

    lo, lc, hi, hc = iv(text)
    return Span(lo, None if hi == float("inf") else hi, lc, hc)


@pytest.mark.parametrize("program, data", [("lubm_recursive.mtl", "lubm_L1h.jsonl"),
                                           ("lubm_nonrecursive.mtl", "lubm_L1.jsonl")])
def test_lubm_stream_equals_batch(short_stop, program, data):
    runs = {}
    for mode in ("stream", "batch"):
        got = chronolog("run", str(short_stop / program), "--input", str(short_stop / data), "--mode", mode)
        assert got.returncode == 0, got.stderr
        lines = [orjson.loads(x) for x in got.stdout.splitlines()]
        runs[mode] = clip(meaning([(x["pred"], tuple(x["args"]), _span_of(x["interval"]), x.get("diff", 1))
                                   for x in lines]), 300)
    assert runs["stream"] == runs["batch"] and runs["batch"]


def test_bench_mtl_prints_its_table(short_stop):
    got = chronolog("bench", "mtl", "L1")
    assert got.returncode == 0, got.stderr
    (row,) = [line for line in got.stdout.splitlines() if line.startswith("│ ")]
    cells = [c.strip() for c in row.split("│")[1:-1]]
    assert cells[0] == "L1" and cells[1] == "14,162" and float(cells[2]) > 0 and cells[-1].endswith("MiB")
    got = chronolog("bench", "mtl", "nope")
    assert got.returncode == 2 and "unknown workload 'nope'" in got.stderr
