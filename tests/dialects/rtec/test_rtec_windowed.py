"""RTEC's windowed mode (``--window ω --step s``): hand-derived window edges, and RTEC's own
windowed answers for its example applications (fixtures computed by RTEC itself with the same
settings, tests/data/rtec/README.md, "RTEC's windows")."""

from __future__ import annotations

import io
import json
import os
from pathlib import Path

import pytest
from rtec_expected import DATA, differing_instances, expected_path, load_expected, rtec_meaning
from test_rtec import meaning, program, pts

from chronolog.cli.main import main
from chronolog.core.events import Event
from chronolog.dialects.rtec.windowed import WindowedRtecEvaluator
from chronolog.evaluator import interval_line
from chronolog.runtime.embedded import run_evaluator

SHARED = Path(__file__).resolve().parents[3].parent / "shared" / "data" / "rtec"
FILES = {
    "caviar": ["rules.prolog", "pre-processing-portable.prolog", "settings.prolog"],
    "ctm": ["rules.prolog", "vehicles.prolog", "settings.prolog"],
    "voting": ["rules.prolog", "voting_static_generator.prolog", "settings.prolog"],
}

LAMP = """
initiatedAt(on=true, T) :- happensAt(switch_on, T).
terminatedAt(on=true, T) :- happensAt(switch_off, T).
holdsFor(dark=true, I) :- holdsFor(on=true, A), complement_all([A], I).
grounding(on=true). grounding(dark=true).
"""
# switch_off at 8 arrives late: after the event at 12 (so after the query at 10)
LAMP_STREAM = [(3, "switch_on"), (12, "ping"), (8, "switch_off"), (15, "switch_off"), (27, "switch_on")]


def _windowed(window: int, step: int, events: list[tuple[int, str]],
              until: int | None = None) -> tuple[dict, WindowedRtecEvaluator]:
    ev = WindowedRtecEvaluator(program(LAMP), window, step)
    out = io.StringIO()
    run_evaluator(ev, [Event(t, p) for t, p in events], out, until=until)
    return meaning([json.loads(x) for x in out.getvalue().splitlines()], horizon=40), ev


def test_window_equal_to_step_forgets_late_events_and_carries_at_the_edge() -> None:
    m, ev = _windowed(10, 10, LAMP_STREAM)
    # Q=10, window (0,10]: on from 4 (open).  Q=20, window (10,20]: the switch_off at 8 is older
    # than 10: ignored; `on` holds at 11 by the previous query, so its start 4 is carried and the
    # switch_off at 15 ends it: 4..15.  Q=30: initiated at 27: from 28, open.
    assert m[("on", ())] == pts(4, 15) | pts(28, 40)
    # dark is complemented within each window: from 1 (no window covers 0: the first is (0,10]),
    # in (10,20] from 16, in (20,30] up to 27
    assert m[("dark", ())] == pts(1, 3) | pts(16, 27)
    assert ev.too_late == 1


def test_window_longer_than_step_absorbs_the_delay() -> None:
    m, ev = _windowed(15, 10, LAMP_STREAM)
    # Q=20, window (5,20]: the late switch_off at 8 counts; `on` (carried from 4) ends at 8.
    assert m[("on", ())] == pts(4, 8) | pts(28, 40)
    # the first window (-5,10] reaches 0: dark from 0; then from 9 (window (5,20]) to 27
    assert m[("dark", ())] == pts(0, 3) | pts(9, 27)
    assert ev.too_late == 0


def test_the_windows_before_the_first_input_are_evaluated_too() -> None:
    """RTEC queries at Q = s, 2s, ... from its start time 0 whether input arrived or not: the
    windows before the first event carry ``initially`` (and complement within themselves)."""
    ev = WindowedRtecEvaluator(program(LAMP + "initially(on=true).\n"), 10, 10)
    out = io.StringIO()
    run_evaluator(ev, [Event(25, "switch_off"), Event(35, "ping")], out)
    m = meaning([json.loads(x) for x in out.getvalue().splitlines()], horizon=40)
    # Q=10, window (0,10]: `on` initially, from 1 (no window covers 0), carried at Q=20 and
    # ended by switch_off at 25 in (20,30]; dark complements it: from 26
    assert m[("on", ())] == pts(1, 25)
    assert m[("dark", ())] == pts(26, 40)


def test_an_event_before_the_first_arrival_within_the_window_is_used() -> None:
    """The late switch_off at 18 arrives first after ping at 22 (a delay of 4 with ω - s = 10):
    the answer of the stream in time order, `on` initially from 0 (the first window (-10,5]
    reaches 0) to 18."""
    for order in ([(22, "ping"), (18, "switch_off")], [(18, "switch_off"), (22, "ping")]):
        ev = WindowedRtecEvaluator(program(LAMP + "initially(on=true).\n"), 15, 5)
        out = io.StringIO()
        run_evaluator(ev, [Event(t, p) for t, p in order], out)
        m = meaning([json.loads(x) for x in out.getvalue().splitlines()], horizon=40)
        assert m[("on", ())] == pts(0, 18), order
        assert m[("dark", ())] == pts(19, 40), order


def test_rtec_csv_arrival_times_decide_the_window(tmp_path: Path) -> None:
    """A delayed CSV row (arrival 12, occurrence 8) arrives after the query at 10, as RTEC loads it;
    the same rows as JSONL (no arrival time) reach the query at 10 in time."""
    ed = tmp_path / "lamp.prolog"
    ed.write_text(LAMP)
    csv = tmp_path / "s.csv"
    csv.write_text("switch_on|3|3\nswitch_off|12|8\nswitch_off|15|15\nswitch_on|27|27\n")
    jsonl = tmp_path / "s.jsonl"
    jsonl.write_text("".join(json.dumps({"t": t, "pred": p, "args": []}) + "\n"
                             for t, p in [(3, "switch_on"), (8, "switch_off"), (15, "switch_off"),
                                          (27, "switch_on")]))
    got = {}
    for name, extra in (("csv", ["--format", "rtec"]), ("jsonl", [])):
        out = tmp_path / f"{name}.out"
        assert main(["run", str(ed), "--input", str(tmp_path / f"s.{name}"), "--output", str(out),
                     "--window", "10", "--step", "10", *extra]) == 0
        got[name] = meaning([json.loads(x) for x in out.read_text().splitlines()], horizon=40)
    assert got["csv"][("on", ())] == pts(4, 15) | pts(28, 40)
    assert got["jsonl"][("on", ())] == pts(4, 8) | pts(28, 40)


def test_late_events_are_reported(tmp_path: Path, capsys) -> None:
    ed = tmp_path / "lamp.prolog"
    ed.write_text(LAMP)
    stream = tmp_path / "s.jsonl"
    stream.write_text("".join(json.dumps({"t": t, "pred": p, "args": []}) + "\n" for t, p in LAMP_STREAM))
    assert main(["run", str(ed), "--input", str(stream), "--window", "10", "--step", "10"]) == 0
    assert "ignored 1 events older than the window (--window 10)" in capsys.readouterr().err


def test_a_bad_input_line_stops_a_windowed_run_with_its_error(tmp_path: Path, capsys) -> None:
    """The windows evaluated before the bad line are written (``pending``, which the windowed
    evaluator once shadowed with a list of its own: a TypeError instead of the error)."""
    ed = tmp_path / "lamp.prolog"
    ed.write_text(LAMP)
    stream = tmp_path / "s.jsonl"
    stream.write_text('{"t": 3, "pred": "switch_on", "args": []}\n{"t": 12, "pred": "ping", "args": []}\n'
                      '{"t": 14, "pred": "ping", "args": []}\nnot json\n')
    out = tmp_path / "out.jsonl"
    assert main(["run", str(ed), "--input", str(stream), "--window", "10", "--step", "10", "--output", str(out)]) == 2
    err = capsys.readouterr().err
    assert "s.jsonl:4:1: error: invalid JSON" in err and "Traceback" not in err
    # the window (0,10] was evaluated when 14 arrived (time reached 12): on from 4, open; dark
    # the rest of the window, from its first time 1
    assert [json.loads(x) for x in out.read_text().splitlines()] == [
        {"interval": "[1,4)", "pred": "dark", "args": []}, {"interval": "[4,inf)", "pred": "on", "args": []}]


def test_window_is_refused_for_other_dialects(tmp_path: Path, capsys) -> None:
    prog = tmp_path / "p.lars"
    prog.write_text("b(X) :- a(X).\n")
    stream = tmp_path / "s.jsonl"
    stream.write_text('{"t": 1, "pred": "a", "args": [1]}\n')
    assert main(["run", str(prog), "--input", str(stream), "--window", "10"]) == 2
    err = capsys.readouterr().err
    assert "--window is for RTEC programs" in err and "Traceback" not in err


def test_restored_windowed_evaluator_continues_identically() -> None:
    events = [Event(t, p) for t, p in LAMP_STREAM + [(33, "switch_off"), (41, "switch_on"), (38, "switch_on")]]
    whole, _ = _windowed(15, 10, [(e.t, e.pred) for e in events])
    first = WindowedRtecEvaluator(program(LAMP), 15, 10)
    changes: list = []
    for e in events[:4]:
        changes += first.advance(e.t - 1)
        first.push(e)
    second = WindowedRtecEvaluator(program(LAMP), 15, 10)
    second.import_state(json.loads(json.dumps(first.export_state())))
    for e in events[4:]:
        changes += second.advance(e.t - 1)
        second.push(e)
    changes += second.finish()
    lines = [json.loads(interval_line(*c)) for c in changes]
    assert meaning(lines, horizon=40) == whole


# ------------------------------------------------------------------ RTEC's own windowed answers

needs_data = pytest.mark.skipif(not SHARED.is_dir(), reason="the shared RTEC data is not beside the repository")


def _windowed_app(app: str, stream: Path, window: int, step: int, tmp: Path, *extra: str) -> set:
    out = tmp / f"{app}.answers"
    assert main(["run", *(str(SHARED / app / f) for f in FILES[app]), "--input", str(stream), "--output", str(out),
                 "--window", str(window), "--step", str(step), *extra]) == 0
    return rtec_meaning(out.read_text().splitlines(), app)


def _fixture(app: str, name: str) -> set:
    with (DATA / app / name).open(encoding="utf-8") as f:
        return rtec_meaning(f, app)


# (app, input stream, window, step, fixture): RTEC's own settings (settings.env) for caviar and voting
CASES = {
    "caviar-own": ("caviar", "stream.jsonl", 100_000, 100_000, "expected-window-100000-100000.jsonl"),
    "voting-own": ("voting", "stream.jsonl", 10, 10, "expected-window-10-10.jsonl"),
    "ctm-cut10": ("ctm", "cut10", 300, 250, "expected-cut10-window-300-250.jsonl"),
    "caviar-delayed": ("caviar", "caviar-delayed.jsonl", 105_000, 100_000,
                       "expected-delayed-window-105000-100000.jsonl"),
}
FULL = {"caviar-delayed"}


@needs_data
@pytest.mark.parametrize("case", [pytest.param(c, marks=pytest.mark.skipif(
    c in FULL and not os.environ.get("CHRONOLOG_RTEC_FULL"), reason="set CHRONOLOG_RTEC_FULL=1")) for c in CASES])
def test_rtecs_own_windows_give_rtecs_windowed_answer(case: str, tmp_path: Path) -> None:
    app, source, window, step, fixture = CASES[case]
    stream = DATA / app / f"stream-{source}.jsonl" if source.startswith("cut") else SHARED / app / source
    got, want = _windowed_app(app, stream, window, step, tmp_path), _fixture(app, fixture)
    assert want and not differing_instances(got, want)
    # the windows matter: RTEC's windowed answer is not its one-window answer
    one = set(load_expected(app, "cut10" if source.startswith("cut") else None))
    assert differing_instances(want, one)


def test_fixtures_exist() -> None:
    for app, _, _, _, fixture in CASES.values():
        assert (DATA / app / fixture).stat().st_size > 0
    assert expected_path("caviar").exists()


# ------------------------------------------------------------------ the fleet


def test_the_fleet_stage_hosts_the_windowed_mode(tmp_path: Path) -> None:
    """``chronolog up --window 15 --step 10``: the chain service's evaluator is the windowed one;
    records in batches, with restarts from the stored state, mean what ``run --window ... --until
    <latest>`` prints (a stream has no end: its idle flush evaluates the queries up to the latest time)."""
    from chronolog.core.events import event_json
    from chronolog.dialects.registry import RunOptions, lookup
    from chronolog.runtime.fleet.config import ServiceConfig, make_stage
    from chronolog.stages.evaluator import EvaluatorStage
    from chronolog.state.snapshots import roundtrip

    events = [Event(t, p) for t, p in LAMP_STREAM + [(33, "switch_off"), (41, "switch_on"), (38, "switch_on")]]
    want, _ = _windowed(15, 10, [(e.t, e.pred) for e in events], until=41)
    prog = program(LAMP)
    stage = make_stage(ServiceConfig("chain", lookup("rtec").layout(prog, RunOptions()), "localhost:0", window=15, step=10))
    assert isinstance(stage, EvaluatorStage) and isinstance(stage.evaluator, WindowedRtecEvaluator)
    records = [("facts", "chronolog.facts", 0, i, event_json(e)) for i, e in enumerate(events)]
    lines: list = []
    for i in range(0, len(records), 2):
        lines += stage.process(records[i:i + 2], now=0.0)[1]
        fresh = make_stage(ServiceConfig("chain", lookup("rtec").layout(prog, RunOptions()), "localhost:0", window=15,
                                         step=10, idle_flush=1.0))
        stage = roundtrip(stage, fresh)
        stage.last_input = 0.0
    lines += stage.process([], now=100.0)[1]
    assert meaning([json.loads(x) for x in lines], horizon=40) == want
    assert stage.progress()["late_events"] == 0
    # with window = step the late switch_off@8 (after the query at 10) and switch_on@38 (after the
    # query at 40) are ignored: the service counts them (chronolog_late_events_total)
    stage = make_stage(ServiceConfig("chain", lookup("rtec").layout(prog, RunOptions()), "localhost:0", window=10,
                                     step=10, idle_flush=1.0))
    stage.process(records, now=0.0)
    assert stage.progress()["late_events"] == 2


def test_up_refuses_window_for_other_dialects(tmp_path: Path, capsys) -> None:
    prog = tmp_path / "p.lars"
    prog.write_text("b(X) :- a(X).\n")
    assert main(["up", str(prog), "--window", "10", "--state-dir", str(tmp_path / "s")]) == 2
    assert "--window is for RTEC programs" in capsys.readouterr().err


def test_up_passes_the_window_to_its_chain_service(tmp_path: Path) -> None:
    """The supervisor starts the chain service with --window/--step, and the service's command
    line builds the windowed stage from them."""
    from chronolog.cli.main import build_parser
    from chronolog.dialects.registry import RunOptions, lookup
    from chronolog.runtime.fleet.supervisor import Fleet
    from chronolog.runtime.fleet.topology import build_topology

    ed = tmp_path / "lamp.prolog"
    ed.write_text(LAMP)
    layout = lookup("rtec").layout(program(LAMP), RunOptions())
    fleet = Fleet(programs=[str(ed)], layout=layout, state_dir=tmp_path, bootstrap="localhost:1", window=15, step=10)
    fleet.plan_children(build_topology(layout, 1, 1))
    [child] = fleet.children
    argv = child.argv[child.argv.index("service"):]
    assert argv[argv.index("--window") + 1] == "15" and argv[argv.index("--step") + 1] == "10"
    args = build_parser().parse_args(argv)
    assert (args.window, args.step) == (15, 10)


@pytest.mark.parametrize("seed", range(10))
@pytest.mark.parametrize("which", ["simple", "sdf"])
def test_a_window_reaching_back_to_zero_gives_the_exact_answer(seed: int, which: str) -> None:
    """When every window starts before 0 (ω beyond the stream), RTEC's windowed mode computes each
    query from scratch over everything: the exact (default) answer with the events up to the last
    query time Q, late events included (two evaluation modes, one meaning).  (The default mode's
    ``until`` evaluates the events before it: Q + 1 takes those at Q.)"""
    import random

    from test_rtec import SDF, SIMPLE, _sdf_stream, _stream

    from chronolog.dialects.rtec.evaluator import RtecEvaluator

    rng = random.Random(seed)
    text = SIMPLE if which == "simple" else SDF
    events = _stream(seed) if which == "simple" else _sdf_stream(seed)
    for _ in range(5):  # some arrive late
        i = rng.randrange(len(events))
        events.insert(min(len(events), i + rng.randint(1, 8)), events.pop(i))
    step = rng.choice([1, 3, 7, 10])
    last = max(e.t for e in events)
    last_q = last + (-last) % step
    got = io.StringIO()
    run_evaluator(WindowedRtecEvaluator(program(text), 10_000, step), events, got)
    want = io.StringIO()
    run_evaluator(RtecEvaluator(program(text)), events, want, until=last_q + 1)

    def upto_q(out: io.StringIO) -> dict:  # the points up to Q (an interval reaching past Q is open at Q)
        got = meaning([json.loads(x) for x in out.getvalue().splitlines()], horizon=last_q)
        return {k: {t for t in v if t <= last_q} for k, v in got.items() if any(t <= last_q for t in v)}

    assert upto_q(got) == upto_q(want)
