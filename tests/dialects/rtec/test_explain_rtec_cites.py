"""RTEC explanations cite an input fluent's points at a time by bisection over its events'
times (``Explainer._point_times``) where they are points in time order, and by a scan
otherwise: the trees are the same either way — for a coordinate that stays put (one event
per time, cited at many times), and for one given out of time order (a late event)."""

from __future__ import annotations

import pytest
from explaining import explain, files, walk
from test_explain_rtec import FAR

from chronolog.dialects.rtec.explain import Explainer


def _stream(late: bool) -> list[dict]:
    """p stays at 0 from 1 to 14, q moves between 20 and 30 (never near); with ``late``, p's
    point at 6 arrives after the one at 9."""
    out = []
    for t in range(1, 15):
        if not (late and t == 6):
            out.append({"t": t, "pred": "c", "args": ["p", 0]})
        out.append({"t": t, "pred": "c", "args": ["q", 20 if t % 4 < 2 else 30]})
        if late and t == 9:
            out.append({"t": 6, "pred": "c", "args": ["p", 0]})
    return [*out, {"t": 20}]


@pytest.mark.parametrize("late", [False, True])
def test_points_cited_by_bisection_are_those_a_scan_finds(tmp_path, capsys, monkeypatch, late):
    prog, stream = files(tmp_path, "far.prolog", FAR, _stream(late))
    code, fast, _ = explain(capsys, prog, stream, "why", "far(p,q)@12")
    assert code == 0
    cited = [n for n in walk(fast) if n.get("kind") == "event" and n.get("atom") == "c(p,0)"]
    assert len({n["time"] for n in cited}) >= 8  # (p's point cited at many times)
    assert all(n.get("late", False) == (late and n["time"] == 6) for n in cited)
    monkeypatch.setattr(Explainer, "_point_times", lambda self, pred_args, given: None)
    assert explain(capsys, prog, stream, "why", "far(p,q)@12")[1] == fast
