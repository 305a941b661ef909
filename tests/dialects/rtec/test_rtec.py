"""The rtec dialect: reader errors, RTEC semantics on hand-built event descriptions with
hand-derived intervals, corrections, restore, the two input formats and the shipped apps."""

from __future__ import annotations

import io
import json
import random
from collections.abc import Callable
from pathlib import Path

import pytest

from chronolog.cli.main import main
from chronolog.core.errors import ProgramError
from chronolog.core.events import Event
from chronolog.dialects.load import load_program
from chronolog.dialects.rtec.evaluator import RtecEvaluator
from chronolog.dialects.rtec.parser import finish_program, parse_rtec
from chronolog.dialects.rtec.prolog import read_clauses
from chronolog.runtime.embedded import run_evaluator

DATA = Path(__file__).resolve().parents[4] / "shared" / "data" / "rtec"
if not DATA.exists():
    DATA = Path(__file__).resolve().parents[3] / ".." / "shared" / "data" / "rtec"


def program(text: str, name: str = "ed.prolog"):
    return finish_program(parse_rtec(text, name))


def meaning(lines: list[dict], tick: int = 1, horizon: int = 1000) -> dict[tuple, set[int]]:
    """Grid points per atom after all diffs (CONTRACT §3); ``inf`` read up to ``horizon``."""
    total: dict[tuple, int] = {}
    for rec in lines:
        if "t" in rec:
            continue
        lo_s, hi_s = rec["interval"][1:-1].split(",")
        lo = int(lo_s) + (0 if rec["interval"][0] == "[" else 1)
        hi = horizon if hi_s == "inf" else int(hi_s) - (1 if rec["interval"][-1] == ")" else 0)
        for t in range(lo, hi + 1):
            if t % tick == 0:
                k = (rec["pred"], tuple(rec["args"]), t)
                total[k] = total.get(k, 0) + rec.get("diff", 1)
    assert all(v in (0, 1) for v in total.values())
    out: dict[tuple, set[int]] = {}
    for (p, a, t), v in total.items():
        if v:
            out.setdefault((p, a), set()).add(t)
    return out


def run(prog, events: list[Event], step: int | None = None) -> list[dict]:
    out = io.StringIO()
    run_evaluator(RtecEvaluator(prog, step), events, out)
    return [json.loads(x) for x in out.getvalue().splitlines()]


def ev(t: int, pred: str, *args) -> Event:
    return Event(t, pred, tuple(args))


def pts(lo: int, hi: int) -> set[int]:
    return set(range(lo, hi + 1))


# ------------------------------------------------------------------ reader


def test_reads_every_shipped_file() -> None:
    for app, files in {"caviar": ["rules", "pre-processing-portable", "settings"],
                       "ctm": ["rules", "vehicles", "settings"],
                       "voting": ["rules", "voting_static_generator", "settings"]}.items():
        p = load_program([str(DATA / app / f"{f}.prolog") for f in files])
        assert p.dialect == "rtec" and p.rules
    clauses = read_clauses("a('x y', [1,2|T], \"s\") :- \\+ b(X), X is 3 mod 2, !. % c\n/* d */ e.", "f")
    assert len(clauses) == 2 and clauses[0].term[1] == ("a", "x y", (".", 1, (".", 2, clauses[0].term[1][2][2][2])), "s")


@pytest.mark.parametrize("text, where, what", [
    ("a :- b(.\n", "f.prolog:1:8", "unexpected"),
    ("a :- b\n", "f.prolog:2:1", "end of file"),
    ("p(X) :-\n  q(X),\n  assertz(r(X)).\nq(1).\nr(1).\n", "f.prolog:3:3", "assertz/1"),
    ("p :- undefined_thing(1).\n", "f.prolog:1:6", "unknown predicate undefined_thing/1"),
    ("/* open\n", "f.prolog:1:1", "unterminated"),
])
def test_errors_name_file_line_column(text: str, where: str, what: str) -> None:
    with pytest.raises(ProgramError) as exc:
        program(text, "f.prolog")
    assert str(exc.value).startswith(where) and what in str(exc.value)


def test_rtec_internals_refused_with_location() -> None:
    with pytest.raises(ProgramError, match=r"pre-processing.prolog:12:2: error: iePList/4 is an RTEC engine internal"):
        load_program([str(DATA / "caviar" / "rules.prolog"), str(DATA / "caviar" / "pre-processing.prolog")])


# ------------------------------------------------------------------ semantics (hand-derived)

SIMPLE = """
initially(light=off).
initiatedAt(light=on, T) :- happensAt(switch_on, T).
initiatedAt(light=off, T) :- happensAt(switch_off, T).
terminatedAt(light=on, T) :- happensAt(fuse, T).
fi(alarm(X)=armed, alarm(X)=idle, 3).
initiatedAt(alarm(X)=armed, T) :- happensAt(arm(X), T).
initiatedAt(count(X)=true, T) :- happensAt(start(light=on), T), happensAt(tag(X), T).
grounding(light=on). grounding(light=off). grounding(alarm(X)=armed) :- zone(X).
grounding(count(X)=true) :- zone(X).
zone(a). zone(b).
"""


def test_inertia_initially_other_value_fuse_and_deadline() -> None:
    lines = run(program(SIMPLE), [ev(2, "switch_on"), ev(2, "tag", "a"), ev(5, "switch_off"), ev(7, "switch_on"),
                                  ev(9, "fuse"), ev(10, "arm", "b"), ev(11, "tick")])
    m = meaning(lines, horizon=30)
    # on: initiated at 2 holds 3..5 (switch_off at 5 initiates off: on holds up to 5); again 8..9 (fuse at 9)
    assert m[("light", ("on",))] == pts(3, 5) | pts(8, 9)
    # off: initially 0..2 (on initiated at 2), off initiated at 5 → 6..7; after the fuse nothing initiates off
    assert m[("light", ("off",))] == pts(0, 2) | pts(6, 7)
    # deadline 3: armed initiated at 10 holds 11..13, idle from 14 (idle is not grounded: not reported)
    assert m[("alarm", ("b", "armed"))] == pts(11, 13)
    # start(light=on) happens at 2 (the last point before it holds) together with tag(a)
    assert m[("count", ("a",))] == pts(3, 30)


SDF = """
holdsFor(u=true, I) :- holdsFor(a=true, A), holdsFor(b=true, B), union_all([A,B], I).
holdsFor(n=true, I) :- holdsFor(a=true, A), holdsFor(b=true, B), intersect_all([A,B], I).
holdsFor(r=true, I) :- holdsFor(a=true, A), holdsFor(b=true, B), relative_complement_all(A, [B], I).
holdsFor(c=true, I) :- holdsFor(a=true, A), complement_all([A], I).
holdsFor(k=true, I) :- holdsFor(a=true, A), \\+ A=[], holdsFor(b=true, B), \\+ B=[], !, intersect_all([A,B], I).
holdsFor(k=true, []).
initiatedAt(big(M)=true, T) :- happensAt(vote(M), T), findall(V, happensAt(vote(V), T), L), length(L, N), N >= 2.
initiatedAt(e=true, T) :- happensAt(end(u=true), T).
initiatedAt(quiet=true, T) :- happensAt(ping, T), \\+ holdsAt(a=true, T).
points(a=true). points(b=true). buildFromPoints(a=true). buildFromPoints(b=true).
grounding(u=true). grounding(n=true). grounding(r=true). grounding(c=true). grounding(k=true).
grounding(big(M)=true) :- m(M). grounding(e=true). grounding(quiet=true).
m(1). m(2).
"""


def test_interval_builtins_cut_fallback_findall_negation_end() -> None:
    events = [ev(t, "a") for t in (2, 3, 4, 5)] + [ev(t, "b") for t in (4, 5, 6)] + [
        ev(8, "vote", 1), ev(8, "vote", 2), ev(9, "vote", 1), ev(3, "ping"), ev(9, "ping")]
    events.sort(key=lambda e: e.t)
    m = meaning(run(program(SDF), events), horizon=20)
    assert m[("u", ())] == pts(2, 6)
    assert m[("n", ())] == pts(4, 5)
    assert m[("r", ())] == pts(2, 3)
    assert m[("c", ())] == pts(0, 1) | pts(6, 20)
    assert m[("k", ())] == pts(4, 5)
    assert m[("big", (1,))] == pts(9, 20) and m[("big", (2,))] == pts(9, 20)  # two votes at 8, one at 9
    assert m[("e", ())] == pts(7, 20)  # end(u=true) at 6, the last point of u
    assert m[("quiet", ())] == pts(10, 20)  # at 3 a holds: only the ping at 9 initiates


def test_cut_fallback_gives_empty_when_a_check_fails() -> None:
    m = meaning(run(program(SDF), [ev(2, "a"), ev(3, "a"), ev(9, "ping")]), horizon=20)
    assert ("k", ()) not in m and m[("r", ())] == pts(2, 3) and ("n", ()) not in m


REPEATED = """
person(a). person(b).
grounding(pair(A,B)=true) :- person(A), person(B).
initiatedAt(pair(A,B)=true, T) :- happensAt(meet(A,B), T).
terminatedAt(pair(X,X)=true, T) :- happensAt(reset, T).
terminatedAt(pair(X,Y)=true, T) :- happensAt(part, T), X @< Y.
"""


def test_a_head_variable_repeated_and_unbound_expands_to_matching_instances_only() -> None:
    """``terminatedAt(pair(X,X)=true, T)`` with X free ends pair(a,a) and pair(b,b), never
    pair(a,b) (as Prolog unifies the head with each grounded instance); a free head with a
    check on its variables (``X @< Y``) ends only the instances that pass it."""
    events = [ev(1, "meet", "a", "b"), ev(1, "meet", "a", "a"), ev(1, "meet", "b", "a"), ev(5, "reset"),
              ev(9, "meet", "b", "b"), ev(12, "part")]
    m = meaning(run(program(REPEATED), events), horizon=20)
    assert m[("pair", ("a", "a"))] == pts(2, 5)
    assert m[("pair", ("a", "b"))] == pts(2, 12)  # only part (a @< b) ends it
    assert m[("pair", ("b", "a"))] == pts(2, 20)
    assert m[("pair", ("b", "b"))] == pts(10, 20)


# ------------------------------------------------------------------ corrections, restore, formats


def _stream(seed: int) -> list[Event]:
    rnd = random.Random(seed)
    out = []
    for t in range(0, 60):
        for name in ("switch_on", "switch_off", "fuse", "arm"):
            if rnd.random() < 0.15:
                out.append(ev(t, name, *(("a",) if name == "arm" else ())))
    return out


def _sdf_stream(seed: int) -> list[Event]:
    rnd = random.Random(seed)
    out = []
    for t in range(0, 60):
        for name, p in (("a", 0.5), ("b", 0.4), ("ping", 0.1)):
            if rnd.random() < p:
                out.append(ev(t, name))
        if rnd.random() < 0.1:
            out.append(ev(t, "vote", rnd.choice([1, 2])))
    return out


@pytest.mark.parametrize("seed", range(12))
@pytest.mark.parametrize("which", ["simple", "sdf"])
def test_delayed_and_retracted_events_mean_the_stream_in_time_order(seed: int, which: str) -> None:
    text = SIMPLE if which == "simple" else SDF
    prog = program(text)
    events = _stream(seed) if which == "simple" else _sdf_stream(seed)
    rnd = random.Random(100 + seed)
    late = sorted(events, key=lambda e: e.t + (rnd.randint(1, 15) if rnd.random() < 0.3 else 0))
    noise = [Event(e.t, e.pred, e.args) for e in rnd.sample(events, min(3, len(events)))]
    withdrawn = [Event(e.t, e.pred, e.args, retract=True) for e in noise]
    mixed = late[: len(late) // 2] + noise + late[len(late) // 2:] + withdrawn
    expected = meaning(run(prog, events, step=1), horizon=200)
    assert meaning(run(program(text), events, step=1000), horizon=200) == expected  # one window
    assert meaning(run(program(text), mixed, step=1), horizon=200) == expected
    assert meaning(run(program(text), mixed, step=7), horizon=200) == expected


def run_restored(make: Callable[[], RtecEvaluator], events: list[Event], horizon: int) -> dict:
    """The meaning of a run whose evaluator is exported (as JSON) halfway and restored into a new one."""
    first = make()
    lines: list = []
    half = len(events) // 2
    latest = None
    for e in events[:half]:
        if latest is not None and e.t > latest:
            lines += first.advance(latest)
        latest = e.t if latest is None else max(latest, e.t)
        first.push(e)
    state = json.loads(json.dumps(first.export_state()))
    second = make()
    second.import_state(state)
    for e in events[half:]:
        if e.t > latest:
            lines += second.advance(latest)
            latest = e.t
        second.push(e)
    lines += second.finish()
    from chronolog.evaluator import interval_line

    return meaning([json.loads(interval_line(*c)) for c in lines], horizon=horizon)


def test_restored_evaluator_continues_identically() -> None:
    events = _stream(3)
    whole = meaning(run(program(SIMPLE), events, step=2), horizon=200)
    assert run_restored(lambda: RtecEvaluator(program(SIMPLE), 2), events, 200) == whole


def test_state_of_another_dialect_is_refused() -> None:
    from chronolog.evaluator import StateError

    with pytest.raises(StateError):
        RtecEvaluator(program(SIMPLE)).import_state({"format": 1, "dialect": "mtl"})


def test_jsonl_and_rtec_csv_mean_the_same(tmp_path: Path, capsys) -> None:
    app = DATA / "ctm"
    csv = (app / "stream.csv").read_text().splitlines()[:1500]
    jsonl = (app / "stream.jsonl").read_text().splitlines()[:1500]
    (tmp_path / "s.csv").write_text("\n".join(csv) + "\n")
    (tmp_path / "s.jsonl").write_text("\n".join(jsonl) + "\n")
    files = [str(app / f) for f in ("rules.prolog", "vehicles.prolog", "settings.prolog")]
    assert main(["run", *files, "--input", str(tmp_path / "s.jsonl"), "--output", str(tmp_path / "a")]) == 0
    assert main(["run", *files, "--input", str(tmp_path / "s.csv"), "--format", "rtec",
                 "--output", str(tmp_path / "b")]) == 0
    a = [json.loads(x) for x in (tmp_path / "a").read_text().splitlines()]
    b = [json.loads(x) for x in (tmp_path / "b").read_text().splitlines()]
    assert a and meaning(a, horizon=3000) == meaning(b, horizon=3000)


def test_check_prints_the_hierarchy(capsys) -> None:
    app = DATA / "voting"
    assert main(["check", *(str(app / f) for f in ("rules.prolog", "voting_static_generator.prolog",
                                                   "settings.prolog"))]) == 0
    out = capsys.readouterr().out
    assert "stratum 1: status/1 (simple fluent)" in out and "sanctioned/1 (simple fluent)" in out


def test_bad_input_line_is_a_user_error(tmp_path: Path, capsys) -> None:
    (tmp_path / "p.prolog").write_text(SIMPLE)
    (tmp_path / "in.jsonl").write_text('{"t": 1, "pred": "switch_on"}\n{"t": "x", "pred": "fuse"}\n')
    assert main(["run", str(tmp_path / "p.prolog"), "--input", str(tmp_path / "in.jsonl")]) == 2
    assert "in.jsonl:2:7: error: \"t\" must be an integer time" in capsys.readouterr().err


GROWING = """
dynamicDomain(room(_)).
grounding(enter(X)) :- room(X).
initially(light(_)=off).
initiatedAt(light(X)=on, T) :- happensAt(enter(X), T).
initiatedAt(alarm(X)=true, T) :- happensAt(bell, T), room(X).
grounding(light(X)=off) :- room(X). grounding(light(X)=on) :- room(X). grounding(alarm(X)=true) :- room(X).
"""


@pytest.mark.parametrize("step", [1, 3, 1000])
def test_a_growing_domain_counts_from_time_zero(step: int) -> None:
    """RTEC's one-window meaning: room r2, first seen at 50, is a room from 0 (lit off from 0,
    alarmed by the bell at 5), whatever the windows."""
    m = meaning(run(program(GROWING), [ev(1, "enter", "r1"), ev(5, "bell"), ev(50, "enter", "r2"), ev(60, "tick")],
                    step=step), horizon=80)
    assert m[("light", ("r1", "off"))] == pts(0, 1) and m[("light", ("r1", "on"))] == pts(2, 80)
    assert m[("light", ("r2", "off"))] == pts(0, 50) and m[("light", ("r2", "on"))] == pts(51, 80)
    assert m[("alarm", ("r1",))] == pts(6, 80) == m[("alarm", ("r2",))]


def test_a_point_given_twice_holds_until_retracted_twice() -> None:
    # u=true is the union of a's and b's points; a at 4 is given twice, then withdrawn once, then again
    prog = program(SDF)
    a4, retract_a4 = ev(4, "a"), Event(4, "a", (), retract=True)
    base = [ev(2, "b"), a4, ev(6, "b")]
    once = meaning(run(prog, base + [a4, retract_a4, ev(9, "ping")], step=1), horizon=20)
    assert once[("u", ())] == {2, 4, 6}
    state_free = meaning(run(program(SDF), base + [a4, retract_a4, retract_a4, ev(9, "ping")], step=1), horizon=20)
    assert state_free[("u", ())] == {2, 6}
