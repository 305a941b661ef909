"""The meaning of an answer stream (CONTRACT §3), independent of its form.

Expands ``t`` and ``interval`` lines over the integer points of the input
span, sums the diffs per (pred, args, point), checks every sum is 0 or 1 and
returns the atoms whose sum is 1.  Tests compare meanings, never exact lines.
"""

from __future__ import annotations

import re

_INTERVAL = re.compile(r"^([\[(])\s*(-?\d+)\s*,\s*(-?\d+|inf)\s*([\])])$")


def points(when: str, span: tuple[int, int]) -> range:
    m = _INTERVAL.match(when)
    assert m, f"bad interval {when!r}"
    lo = int(m.group(2)) + (1 if m.group(1) == "(" else 0)
    if m.group(3) == "inf":
        hi = span[1]
    else:
        hi = int(m.group(3)) - (1 if m.group(4) == ")" else 0)
    return range(max(lo, span[0]), min(hi, span[1]) + 1)


def meaning(lines: list[dict], span: tuple[int, int]) -> set[tuple[str, tuple, int]]:
    total: dict[tuple[str, tuple, int], int] = {}
    for rec in lines:
        diff = rec.get("diff", 1)
        key = (rec["pred"], tuple(rec.get("args", [])))
        ts = points(rec["interval"], span) if "interval" in rec else [rec["t"]]
        for t in ts:
            if span[0] <= t <= span[1]:
                k = key + (t,)
                total[k] = total.get(k, 0) + diff
    bad = {k: v for k, v in total.items() if v not in (0, 1)}
    assert not bad, f"points summing outside 0..1: {sorted(bad.items())[:5]}"
    return {k for k, v in total.items() if v == 1}
