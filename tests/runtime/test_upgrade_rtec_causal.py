"""RTEC is causal (a fluent at t depends on events at t and before): an upgraded RTEC program's
old version is not fed the input from its end on, and the answers are still the splice of two
plain runs — on a richer pair than test_upgrade's (simple fluents feeding a statically
determined one, a deadline, late events and retractions), with either stratum changed."""

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
