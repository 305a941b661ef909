"""Reads of entities without ``grounding/1`` answer as RTEC itself answered them.

The expected answers are RTEC's own output (``tests/data/rtec/ungrounded/*-rtec.txt``, with
the event descriptions and CSV streams it ran on and the command in that folder's README):
RTEC computes an entity only for the instances ``grounding/1`` admits, and a rule reading an
ungrounded fluent-value pair or derived event reads nothing — ``quiet(e)`` = ``armed(e)``
minus the ungrounded ``alarm(e)`` is all of ``armed(e)``, although ``alarm(e)``'s own rule
(a union with ``armed(e)``) would cover it.  ``chronolog run`` must give them in one
evaluation, window by window (a window per time point, and with one event arriving late),
and ``explain`` must agree.  A ``grounding(F=_)`` head grounds every value of F (``*-any``):
such a fluent is read and reported as RTEC caches it.  A grounded entity read for an instance
its grounding does not admit reads nothing too (``pairs``, ``admitted``, ``unadmit``): RTEC
caches only admitted instances, decided on the whole stream's domain — an instance admitted by
an event that comes later is read from the start, one a later event makes inadmissible (a
grounding that negates) is never read (a window per point derives them again then)."""

from __future__ import annotations

import io
import json
import re
from pathlib import Path

import pytest
from explaining import explain, walk
from meaning import meaning

from chronolog.core.events import Event
from chronolog.dialects.rtec.evaluator import RtecEvaluator
from chronolog.dialects.rtec.parser import finish_program, parse_rtec
from chronolog.dialects.rtec.windowed import WindowedRtecEvaluator
from chronolog.runtime.embedded import run_evaluator

DATA = Path(__file__).resolve().parents[2] / "data" / "rtec" / "ungrounded"
SPAN = (0, 120)  # beyond every case's last event (60) and RTEC's end time (100)
_LINE = re.compile(r"^grounded (\w+)(?:\((.*?)\))?=(\w+) \[(.*)\]$")


def _rtec(case: str) -> set:
    """RTEC's printed intervals ``(Ts,Te)`` (half-open, ``inf`` = still holding), as a meaning."""
    lines = []
    for text in (DATA / f"{case}-rtec.txt").read_text().splitlines():
        m = _LINE.match(text)
        assert m, text
        name, args, value, ivs = m.groups()
        args = args.split(",") if args else []
        if value != "true":
            args.append(value)
        for a, b in re.findall(r"\((\d+),(\w+)\)", ivs):
            lines.append({"interval": f"[{a},{b})", "pred": name, "args": args})
    return meaning(lines, SPAN)


def _events(case: str) -> list[Event]:
    """The CSV rows ``Label|Arrival|Occurrence|Args...`` as input events (all are events here)."""
    out = []
    for row in (DATA / f"{case}.csv").read_text().splitlines():
        label, _, t, *args = row.split("|")
        out.append(Event(int(t), label, tuple(args)))
    return out


def _run(case: str, arrivals: list[Event], step: int) -> set:
    program = finish_program(parse_rtec((DATA / f"{case}.prolog").read_text(), f"{case}.prolog"))
    out = io.StringIO()
    run_evaluator(RtecEvaluator(program, step), arrivals, out)
    return meaning([json.loads(x) for x in out.getvalue().splitlines()], SPAN)


def _per_point(events: list[Event], late: int = 0) -> list[Event]:
    """A time advance at every point; the ``late``-th event (1-based) arrives 7 points late."""
    held = events[late - 1] if late else None
    out: list[Event] = []
    for t in range(SPAN[1] + 1):
        out += [e for e in events if e.t == t and e is not held]
        if held is not None and t == held.t + 7:
            out.append(held)
        out.append(Event(t))
    return out


CASES = ["alarm", "doors", "alarm-any", "doors-any", "pairs", "admitted", "unadmit", "registered", "values"]


@pytest.mark.parametrize("case", CASES)
def test_one_evaluation_gives_rtecs_answer(case: str) -> None:
    assert _run(case, [*_events(case), Event(SPAN[1])], 10_000) == _rtec(case)


@pytest.mark.parametrize("case", CASES)
@pytest.mark.parametrize("late", [0, 1, 4])
def test_window_by_window_gives_rtecs_answer(case: str, late: int) -> None:
    assert _run(case, _per_point(_events(case), late), 1) == _rtec(case)


def test_a_door_registered_late_is_read_from_the_start_by_hand() -> None:
    """The ``registered`` case, read off its rules: ``d`` is pinged at 10 but registered (a
    door, so ``shut(d)`` grounded) only at 50; ``shut(d)``, the complement of a never-open
    ``open(d)``, holds from 0, so the ping at 10 initiates ``noted(d)`` and ``beep(d)``
    happens at 10 (``beeped(d)`` from 11).  Window by window, ``shut(d)`` is first computed
    at 50, with that past: what read it before (``noted``, ``beep`` and ``beeped``) is derived
    again from the start.  RTEC's one window agrees (``registered-rtec.txt``)."""
    got = _rtec("registered")
    assert {t for p, a, t in got if (p, a) == ("noted", ("d",))} == set(range(11, 71))
    assert {t for p, a, t in got if (p, a) == ("beeped", ("d",))} == set(range(11, SPAN[1] + 1))
    assert _run("registered", _per_point(_events("registered")), 1) == got


@pytest.mark.parametrize("case", ["alarm", "doors"])
@pytest.mark.parametrize("mode", ["one", "per-point", "windowed"])
def test_a_catch_all_grounding_names_nothing(case: str, mode: str) -> None:
    """``alarm`` and ``doors`` with ``grounding(_).`` added: RTEC's compiler stops on such a
    clause (an instantiation error, see the data README), so chronolog reads it as naming no
    entity — a read of ``alarm``, ``dark`` or ``alerted`` sees nothing and a statically
    determined fluent is computed only for the ground instances grounding/1 gives, none from
    a variable — and answers as RTEC does without the clause, in every mode."""
    text = (DATA / f"{case}.prolog").read_text() + "grounding(_).\n"
    program = finish_program(parse_rtec(text, f"{case}-catchall.prolog"))
    events = _events(case)
    out = io.StringIO()
    if mode == "one":
        run_evaluator(RtecEvaluator(program, 10_000), [*events, Event(SPAN[1])], out)
    elif mode == "per-point":
        run_evaluator(RtecEvaluator(program, 1), _per_point(events, 3), out)
    else:
        run_evaluator(WindowedRtecEvaluator(program, 250, 200), [*events, Event(201)], out)
    assert meaning([json.loads(x) for x in out.getvalue().splitlines()], SPAN) == _rtec(case)


def test_explain_under_a_catch_all_grounding_says_what_run_says(tmp_path: Path, capsys: pytest.CaptureFixture) -> None:
    """With ``grounding(_).``, ``quiet(e)`` holds at 20 (``alarm(e)`` read as ``[]``, cited as
    without grounding) and ``alarm(e)`` never holds, as ``run`` computes them."""
    prog, stream = _files(tmp_path, "alarm")
    prog.write_text(prog.read_text() + "grounding(_).\n")
    code, got, err = explain(capsys, str(prog), str(stream), "why", "quiet(e)@20")
    assert code == 0, err
    assert got["interval"] == "[11,41)"
    assert "no_grounding(holdsFor(alarm(D)=true,I2))" in got["rule"]["text"] and got["bindings"]["I2"] == "[]"
    code, got, err = explain(capsys, str(prog), str(stream), "why-not", "alarm(e)@20")
    assert code == 0, err
    assert got["text"].startswith("alarm(e) never holds: no grounding/1 names it")


def _files(tmp_path: Path, case: str) -> tuple[Path, Path]:
    """The case's program and its stream as JSONL input (a time advance to 100 at the end), for the CLI."""
    prog = tmp_path / f"{case}.prolog"
    prog.write_text((DATA / f"{case}.prolog").read_text())
    stream = tmp_path / f"{case}.jsonl"
    stream.write_text("".join(json.dumps({"t": e.t, "pred": e.pred, "args": list(e.args)}) + "\n"
                              for e in _events(case)) + '{"t": 100}\n')
    return prog, stream


def test_the_rtec_case_by_hand() -> None:
    """The brief's shape, read off RTEC's output: d armed on [6,31), never opened; e armed on
    [11,41) and open on [13,21).  quiet is armed minus alarm, alarm (no grounding) reads as
    []: quiet(d) = [6,31), quiet(e) = [11,41)."""
    got = _rtec("alarm")
    assert {(p, a) for p, a, _ in got} == {("armed", ("d",)), ("armed", ("e",)), ("open", ("e",)),
                                           ("quiet", ("d",)), ("quiet", ("e",))}
    assert {t for p, a, t in got if (p, a) == ("quiet", ("e",))} == set(range(11, 41))


def test_explain_cites_the_empty_read(tmp_path: Path, capsys: pytest.CaptureFixture) -> None:
    """Why quiet(e) holds at 20: its rule, with armed(e) on [11,41) and the read of alarm(e),
    which has no grounding/1, cited as such and empty — so the relative complement keeps 20;
    quiet(d) ends with armed(d) at 31."""
    prog, stream = _files(tmp_path, "alarm")
    code, got, err = explain(capsys, str(prog), str(stream), "why", "quiet(e)@20")
    assert code == 0, err
    assert got["interval"] == "[11,41)"
    assert "no_grounding(holdsFor(alarm(D)=true,I2))" in got["rule"]["text"] and got["bindings"]["I2"] == "[]"
    op = got["premises"][0]
    assert op["text"] == "relative_complement_all(I1,[I2],I) = [[11,41)]: contains 20"
    code, got, err = explain(capsys, str(prog), str(stream), "why-not", "quiet(d)@40")
    assert code == 0, err
    assert got["text"].startswith("quiet(d) does not hold at 40")
    code, got, err = explain(capsys, str(prog), str(stream), "why-not", "alarm(e)@20")  # its own rule covers 20
    assert code == 0, err
    assert got["text"].startswith("alarm(e) never holds: no grounding/1 names it")


@pytest.mark.parametrize("case", CASES)
def test_rtecs_windowed_mode_with_one_window_over_the_stream_gives_rtecs_answer(case: str) -> None:
    """``--window 250 --step 200``: the one query at 200 covers (-50, 200], the whole stream
    (RTEC's own run was the one window (-1, 100])."""
    program = finish_program(parse_rtec((DATA / f"{case}.prolog").read_text(), f"{case}.prolog"))
    out = io.StringIO()
    run_evaluator(WindowedRtecEvaluator(program, 250, 200), [*_events(case), Event(201)], out)
    assert meaning([json.loads(x) for x in out.getvalue().splitlines()], SPAN) == _rtec(case)


@pytest.mark.parametrize("at", [32, 40])
def test_a_restored_evaluator_still_admits_late(at: int) -> None:
    """Window by window, the state exported at ``at`` and imported into a new evaluator: enter(b)
    at 50 admits near(a,b), which the first evaluator derived but left out (with near(b,a) and
near(c,d), never admitted), so what reads it
    (far, met, left, rang, lone, anynear) is derived again from the start.  At 32, off(b,a) (not admitted, read by
its cycle: it keeps flip(a,b) at 35 from initiating on(a,b)) is in the state too."""
    program = finish_program(parse_rtec((DATA / "admitted.prolog").read_text(), "admitted.prolog"))
    arrivals = _per_point(_events("admitted"))
    cut = next(i for i, e in enumerate(arrivals) if e.pred is None and e.t == at)
    first = RtecEvaluator(program, 1)
    out = io.StringIO()
    run_evaluator(first, arrivals[:cut], out)
    state = json.loads(json.dumps(first.export_state()))
    near = next(e[3] for e in state["rejected"] if e[:3] == ["fluent", "near", 2])
    assert sorted(near) == [[["a", "b"], "true"], [["b", "a"], "true"], [["c", "d"], "true"]]
    second = RtecEvaluator(program, 1)
    second.import_state(state)
    run_evaluator(second, arrivals[cut:], out, latest=at - 1)
    assert meaning([json.loads(x) for x in out.getvalue().splitlines()], SPAN) == _rtec("admitted")


@pytest.mark.parametrize("at", [32, 40])
def test_a_state_from_before_admission_restores_to_what_is_kept_now(at: int) -> None:
    """A state written before admission was followed has no ``rejected`` and a store holding
    every instance its entities derived (near(b,a), near(c,d), and near(a,b) before enter(b)
    admits it; off(b,a) of the cycle): restored, the store holds what the current code keeps,
    the left-out instances are remembered and the cycle's kept aside, as an evaluator that
    always followed admission has them."""
    program = finish_program(parse_rtec((DATA / "admitted.prolog").read_text(), "admitted.prolog"))
    arrivals = _per_point(_events("admitted"))
    cut = next(i for i, e in enumerate(arrivals) if e.pred is None and e.t == at)
    now, before = RtecEvaluator(program, 1), RtecEvaluator(program, 1)
    before.admits, before.admit_keys = set(), set()  # as the code before admission: it keeps every instance
    for ev in (now, before):
        run_evaluator(ev, arrivals[:cut], io.StringIO())
    state = json.loads(json.dumps(before.export_state()))
    assert not any(e[:3] == ["fluent", "near", 2] and e[3] for e in state["rejected"])
    del state["rejected"]
    restored = RtecEvaluator(program, 1)
    restored.import_state(state)
    ent = ("fluent", ("near", 2), None)
    assert restored.rejected[ent] == now.rejected[ent] and len(now.rejected[ent]) == 3
    assert restored.store.fluents[("near", 2)] == now.store.fluents[("near", 2)]
    assert restored.hidden == now.hidden


def test_explain_cites_the_instance_not_admitted(tmp_path: Path, capsys: pytest.CaptureFixture) -> None:
    """far(c,d) holds at 10 (RTEC: from 0): the complement of near(c,d), which its rules would
    give on [7,26) but which grounding/1 never admits (d is never a person), cited as such."""
    prog, stream = _files(tmp_path, "admitted")
    code, got, err = explain(capsys, str(prog), str(stream), "why", "far(c,d)@10")
    assert code == 0, err
    assert got["interval"] == "[0,inf)"
    op = got["premises"][0]
    assert op["text"] == "complement_all([I1],I) = [[0,inf)]: contains 10"
    assert op["premises"][0]["text"].startswith("near(c,d) never holds: grounding/1 does not admit it")
    code, got, err = explain(capsys, str(prog), str(stream), "why-not", "far(a,b)@10")  # near(a,b) admitted at 50
    assert code == 0, err
    assert got["text"].startswith("far(a,b) does not hold at 10")


def test_variable_value_reads_by_hand() -> None:
    """The ``values`` case, read off its rules and RTEC's output: a read with a free value
    gives ``[]`` when nothing it can see is stored (``unmoded(f)`` = all of ``seen(f)``: f is
    never armed), and sees only the values of one cache: ``alarm(D)=_`` and ``siren(D)=_`` read
    the input entities' (``alarm``/``siren(D)=false``, named by grounding/1, no rule), so
    ``quiet`` and ``hushed`` are all of ``armed`` although ``siren(d)=true`` is computed;
    ``mode(D)=_`` reads the simple fluents' grounded value ``on`` only, not the statically
    determined ``mode(D)=broken`` (``anymode`` = ``mode=on``);
    ``rang(_)=true``, a free argument with nothing stored, reads ``[]`` too (``unrung`` = ``armed``).
    ``holdsAt(siren(D)=_, T)`` fails at the ping of e at 15 (``unsirened(e)``), though siren(e)=true holds."""
    got = _rtec("values")
    armed = {a: {t for p, x, t in got if (p, x) == ("armed", (a,))} for a in "de"}
    for name in ("quiet", "hushed", "anymode", "unlit", "unrung"):
        assert {a: {t for p, x, t in got if (p, x) == (name, (a,))} for a in "de"} == armed, name
    assert {t for p, a, t in got if (p, a) == ("siren", ("d",))} == armed["d"]
    assert {t for p, a, t in got if (p, a) == ("unmoded", ("f",))} == set(range(46, SPAN[1] + 1))
    assert not any(p == "anymode" and a == ("f",) for p, a, _ in got)
    # mode(D)=_ sees the simple fluents' cache only: not mode(e)=broken (open(e), [13,21)), which
    # is computed, so end(mode(e)=_) happens at 40 only (ended(e) from 41), not at 20
    assert {t for p, a, t in got if (p, a) == ("mode", ("e", "broken"))} == set(range(13, 21))
    assert {t for p, a, t in got if (p, a) == ("ended", ("e",))} == set(range(41, SPAN[1] + 1))
    # holdsAt, start and end of siren(D)=_ see the input entities' cache too: nothing
    assert {t for p, a, t in got if (p, a) == ("unsirened", ("e",))} == set(range(16, SPAN[1] + 1))
    assert not any(p in ("sirened", "sirenstart", "sirenend") for p, _, _ in got)


@pytest.mark.parametrize("query", ["quiet(e)@20", "hushed(e)@20"])
def test_explain_cites_the_empty_variable_value_read(tmp_path: Path, capsys: pytest.CaptureFixture, query: str) -> None:
    """Why quiet(e) (hushed(e)) holds at 20: the read with a free value found nothing it can see
    stored, so it gave [] (RTEC's fall-back), and the complement keeps all of armed(e)."""
    prog, stream = _files(tmp_path, "values")
    code, got, err = explain(capsys, str(prog), str(stream), "why", query)
    assert code == 0, err
    assert got["interval"] == "[11,41)"
    assert got["bindings"]["I2"] == "[]" and "=_,I2)" in got["rule"]["text"]
    assert got["premises"][0]["text"] == "relative_complement_all(I1,[I2],I) = [[11,41)]: contains 20"
    read = f"{query.split('(')[0].replace('quiet', 'alarm').replace('hushed', 'siren')}(e)=_ reads [], without 20: "
    assert any(n["text"] == read + "nothing is stored for false, the only value such a read sees (RTEC reads one "
               "cache for a free value); RTEC's fall-back gives []" for n in walk(got))


def test_explain_cites_a_variable_value_read_of_nothing_stored(tmp_path: Path, capsys: pytest.CaptureFixture) -> None:
    """unmoded(f) holds at 50 (seen(f) minus mode(f)=_): f is never armed, so no value of
    mode(f) is stored and the read gives []; anymode(f) (mode(f)=_ alone) does not hold."""
    prog, stream = _files(tmp_path, "values")
    read = ("mode(f)=_ reads [], without 50: nothing is stored for off, on, the only values such a read sees (RTEC "
            "reads one cache for a free value); RTEC's fall-back gives []")  # (not mode(D)=broken: not a simple value)
    code, got, err = explain(capsys, str(prog), str(stream), "why", "unmoded(f)@50")
    assert code == 0, err
    assert got["interval"] == "[46,inf)" and any(n["text"] == read for n in walk(got))
    code, got, err = explain(capsys, str(prog), str(stream), "why-not", "anymode(f)@50")
    assert code == 0, err
    assert any(n["text"] == read for n in walk(got))


@pytest.mark.parametrize("case", ["values", "alarm"])
def test_the_fleet_stage_gives_rtecs_answer(case: str) -> None:
    """The chain service's stage (``chronolog up``), fed the stream two events at a time with
    the fourth one 7 points late, evaluated to each batch's latest time and restarted from its
    stored state after every batch, means RTEC's answer."""
    import orjson

    from chronolog.dialects.registry import RunOptions, lookup
    from chronolog.stages.interface import StageSpec
    from chronolog.state.snapshots import roundtrip

    row = lookup("rtec")
    text = (DATA / f"{case}.prolog").read_text()

    def stage():  # noqa: ANN202
        return row.layout(row.parse([(f"{case}.prolog", text)]), RunOptions()).stage(StageSpec("chain", idle_flush=1000.0))

    events = [e for e in _per_point(_events(case), 4) if e.pred is not None]
    feed = [{"t": e.t, "pred": e.pred, "args": list(e.args)} for e in events] + [{"t": SPAN[1]}]
    st, lines, now = stage(), [], 0.0
    for i in range(0, len(feed), 2):
        records = [(None, "chronolog.facts", 0, i + k, orjson.dumps(e)) for k, e in enumerate(feed[i:i + 2])]
        now += 5_000.0
        lines += st.process(records, now=0.0)[1] + st.process([], now=now)[1]
        st = roundtrip(st, stage())
    assert meaning([json.loads(x) for x in lines], SPAN) == _rtec(case)


def test_explain_says_which_values_a_variable_value_holdsat_sees(tmp_path: Path, capsys: pytest.CaptureFixture) -> None:
    """unsirened(e) from the ping at 15: ``\\+ holdsAt(siren(e)=_, 15)`` holds although siren(e)=true
    holds at 15, because the read sees only the input entities' cache (siren(e)=false), as in RTEC."""
    prog, stream = _files(tmp_path, "values")
    code, got, err = explain(capsys, str(prog), str(stream), "why", "unsirened(e)@20")
    assert code == 0, err
    assert got["interval"] == "[16,inf)"
    assert any(n["text"] == "siren(e,_) does not hold at 15: such a read sees only false (RTEC reads one cache for a "
               "free value), and it does not hold there" for n in walk(got))
