"""``chronolog bench gaps``: the table on a tiny workload, with the jumping and stepping runs'
answers the same and the gapped stream cheaper to jump than to step in engine steps (no
timing asserted: the times are only numbers)."""

from __future__ import annotations

import re

import pytest

from chronolog.cli.main import main
from chronolog.dialects.lars.engine.core import Engine


def test_bench_gaps_table(capsys, monkeypatch: pytest.MonkeyPatch):
    steps = [0]
    original = Engine.step

    def step(self, t, *args, **kw):  # type: ignore[no-untyped-def]
        steps[0] += 1
        return original(self, t, *args, **kw)

    monkeypatch.setattr(Engine, "step", step)
    assert main(["bench", "gaps", "box", "--tps", "30", "--gap", "2000", "--repeat", "1"]) == 0
    out = capsys.readouterr().out
    row = re.search(r"│\s*box\s*│\s*(\d+) │(\s*[\d.]+ │){5}\s*[\d.]+x │\s*(\w+) │", out)
    assert row is not None, out
    assert row.group(1) == "20" and row.group(3) == "yes"
    # steady twice (30 points), gapped stepped (30 points and a gap of 2,000 after each 10) and
    # jumped: about 6,100 + 1,000 steps at most, where stepping both gapped runs is over 12,000
    assert steps[0] < 2 * 31 + 6100 + 1000
