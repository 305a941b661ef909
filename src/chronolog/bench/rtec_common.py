"""What ``chronolog bench rtec`` and its ``--delays`` experiment share: feeding an RTEC
evaluator as ``chronolog run`` does, and the meaning of its answer changes."""

from __future__ import annotations

from chronolog.dialects.rtec import intervals as IV


def feed(evaluator, events: list) -> list:  # type: ignore[no-untyped-def]
    """Push ``events`` in arrival order as ``chronolog run`` does; all the answer changes."""
    out: list = []
    latest = None
    for e in events:
        if latest is not None and e.t > latest:
            out += evaluator.advance(latest)
        latest = e.t if latest is None or e.t > latest else latest
        evaluator.push(e)
    out += evaluator.finish()
    return out


def _meaning(changes: list) -> dict:
    """The meaning of answer changes (CONTRACT §3): per atom, the maximal intervals where the
    diffs sum to 1 (a sweep over the interval ends)."""
    ends: dict = {}
    for pred, args, span, diff in changes:
        hi = IV.INF if span.hi is None else span.hi
        ends.setdefault((pred, args), []).extend([(span.lo, diff), (hi, -diff)])
    out = {}
    for key, items in ends.items():
        items.sort(key=lambda x: x[0])
        runs, level, start = [], 0, None
        for t, d in items:
            level += d
            if level > 0 and start is None:
                start = t
            elif level <= 0 and start is not None:
                if t > start:
                    runs.append((start, t))
                start = None
        runs = IV.coalesce(runs)
        if runs:
            out[key] = runs
    return out
