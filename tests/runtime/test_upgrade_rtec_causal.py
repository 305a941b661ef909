"""RTEC is causal (a fluent at t depends on events at t and before): an upgraded RTEC program's
old version is not fed the input from its end on, and the answers are still the splice of two
plain runs — on a richer pair than test_upgrade's (simple fluents feeding a statically
determined one, a deadline, late events and retractions), with either stratum changed.
Except where something holds without input (``complement_all``, a non-ground ``initially``, a
dynamic domain): an instance first seen at or after T holds before T too, and the old version
is fed the whole stream."""

from __future__ import annotations

import io
import json
from pathlib import Path

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from test_rtec import meaning

from chronolog.bench.upgrade import CASES
from chronolog.dialects.load import load_program
from chronolog.dialects.registry import RunOptions, lookup
from chronolog.dialects.rtec.hooks import rtec_causal, rtec_parse
from chronolog.runtime.embedded import run_evaluator
from chronolog.versions import versions_of

CASE = CASES["rtec"]
DEADLINE = "fi(armed(D)=true, armed(D)=false, 4).\n"  # armed for 4 ticks at most

EVENT = st.builds(lambda t, pred, door, retract: [{"t": t, "pred": pred, "args": [door]}]
                  + ([{"t": t, "pred": pred, "args": [door], "op": "retract"}] if retract else []),
                  st.integers(0, 30), st.sampled_from(["opened", "closed", "arm", "disarm"]),
                  st.sampled_from(["d0", "d1", "d2"]), st.booleans())


def _program(tmp: Path, name: str, text: str):  # type: ignore[no-untyped-def]
    path = tmp / f"{name}.prolog"
    path.write_text(text)
    return load_program([str(path)])


def _lines(evaluator, program, events: list[dict]) -> list[dict]:  # type: ignore[no-untyped-def]
    row = lookup(program.dialect)
    text = "".join(json.dumps(e) + "\n" for e in events)
    out = io.StringIO()
    run_evaluator(evaluator, list(row.read(program, io.StringIO(text), "s", "jsonl", "fail", lambda m: None)), out,
                  warn=lambda m: None)
    return [json.loads(x) for x in out.getvalue().splitlines()]


def _make(program):  # type: ignore[no-untyped-def]
    return lookup(program.dialect).evaluator(program, RunOptions(), lambda m: None)


@settings(max_examples=60, deadline=None, suppress_health_check=list(HealthCheck))
@given(events=st.lists(EVENT, min_size=1, max_size=20), at=st.integers(0, 33), top=st.booleans(),
       deadlines=st.sampled_from([(False, False), (True, False), (False, True), (True, True)]))
def test_rtec_upgrade_feeds_the_old_version_only_its_part_and_is_the_splice(tmp_path_factory, events, at, top,
                                                                              deadlines):
    tmp = tmp_path_factory.mktemp("rtec")
    old = _program(tmp, "old", CASE.old + (DEADLINE if deadlines[0] else ""))
    new = _program(tmp, "new", (CASE.top if top else CASE.bottom) + (DEADLINE if deadlines[1] else ""))
    stream = [e for group in events for e in group] + [{"t": 35}]
    plain = {name: meaning(_lines(_make(p), p, stream), horizon=40) for name, p in (("old", old), ("new", new))}
    want: dict[tuple, set[int]] = {}
    for name, keep in (("old", lambda t: t < at), ("new", lambda t: t >= at)):
        for atom, times in plain[name].items():
            want.setdefault(atom, set()).update(t for t in times if keep(t))
    row = lookup(old.dialect)
    versions = versions_of([_make(old), _make(new)], [at], [row.causal(old), row.causal(new)], row.discrete)
    got = meaning(_lines(versions, old, stream), horizon=40)
    assert got == {atom: times for atom, times in want.items() if times}
    # the old version was given no event from its end on (time advances aside)
    assert all(ev.t < at for ev in versions.versions[0].evaluator.retained()[1] if ev.pred is not None)


# quiet is the complement of open, loud = alarm union quiet; the doors are those the input shows
# (a dynamic domain: as RTEC reads nothing of a fluent without grounding/1, every fluent read is
# grounded); the new program drops quiet from loud
QUIET = ("initiatedAt(open(D)=true, T) :- happensAt(opened(D), T).\n"
         "initiatedAt(armed(D)=true, T) :- happensAt(arm(D), T).\n"
         "holdsFor(alarm(D)=true, I) :- holdsFor(open(D)=true, A), holdsFor(armed(D)=true, B), union_all([A,B], I).\n"
         "holdsFor(quiet(D)=true, I) :- holdsFor(open(D)=true, A), complement_all([A], I).\n"
         "holdsFor(loud(D)=true, I) :- holdsFor(alarm(D)=true, A), holdsFor(quiet(D)=true, B), union_all([A,B], I).\n"
         "dynamicDomain(door(_)).\ngrounding(opened(D)) :- door(D).\ngrounding(arm(D)) :- door(D).\n"
         + "".join(f"grounding({f}(D)=true) :- door(D).\n" for f in ("open", "armed", "alarm", "quiet", "loud")))
QUIET_NEW = QUIET.replace("holdsFor(quiet(D)=true, B), union_all([A,B], I)", "union_all([A], I)")


def test_an_instance_first_seen_from_t_on_holds_before_t_where_something_holds_without_input(tmp_path):
    """opened(d1) at 5, opened(d2) at 12, the upgrade at 3.  By hand, the old program over the
    whole stream: open(d1) from 6, quiet(d1) = [0,6), loud(d1) = [0,inf); likewise loud(d2)
    = [0,13) union [13,inf) — answers at 0 that only input after 3 shows (the input up to 2
    knows neither door: the domain is the doors the input shows).  The new program: loud =
    alarm, d1 from 6, d2 from 13.  So loud(d1) on [0,3) and from 6, loud(d2) on [0,3) and
    from 13; fed only the input before 3, the old version answered nothing."""
    old, new = _program(tmp_path, "old", QUIET), _program(tmp_path, "new", QUIET_NEW)
    stream = [{"t": 5, "pred": "opened", "args": ["d1"]}, {"t": 12, "pred": "opened", "args": ["d2"]}, {"t": 20}]
    row = lookup(old.dialect)
    versions = versions_of([_make(old), _make(new)], [3], [row.causal(old), row.causal(new)], row.discrete)
    got = meaning(_lines(versions, old, stream), horizon=40)
    assert {k: v for k, v in got.items() if k[0] == "loud"} == {("loud", ("d1",)): {0, 1, 2, *range(6, 41)},
                                                                ("loud", ("d2",)): {0, 1, 2, *range(13, 41)}}


def test_causal_unless_something_holds_without_input():
    assert rtec_causal(rtec_parse([("b.prolog", CASE.old)]))  # grounded doors, no complement
    assert rtec_causal(rtec_parse([("i.prolog", CASE.old + "initially(open(d1)=true).\n")]))  # a ground one
    assert not rtec_causal(rtec_parse([("q.prolog", QUIET)]))
    assert not rtec_causal(rtec_parse([("i.prolog", CASE.old + "initially(open(_)=true).\n")]))
    assert not rtec_causal(rtec_parse([("d.prolog", CASE.old + "dynamicDomain(id(_P)).\ngrounding(opened(X)) :- id(X).\n")]))
