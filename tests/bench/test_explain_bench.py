"""``chronolog bench explain``: the table, on tiny workloads, with every sampled answer explained
(a sampled answer is an answer line `run` printed, so --why must find it unless a later line
took it back) and times that are numbers."""

from __future__ import annotations

import re

from chronolog.cli.main import main


def test_bench_explain_times_random_answers(capsys):
    assert main(["bench", "explain", "--samples", "3", "--tps", "12", "--no-mtl", "--rtec-lines", "2000"]) == 0
    out = capsys.readouterr().out
    rows = {m.group(1): m.groups()[1:] for m in re.finditer(
        r"│ (LARS \w+|RTEC caviar\S*)\s*│\s*([\d,]+) │\s*(\d+) │\s*(\d+) │\s*([\d.]+) │\s*([\d,]+) │\s*(\d+) │"
        r"\s*(\d+) │", out)}
    assert set(rows) == {"LARS cooling", "LARS join", "RTEC caviar[:2000]"}, out
    for events, asked, explained, run, rate, p50, p99 in rows.values():
        assert int(events.replace(",", "")) > 0 and float(run) > 0 and int(rate.replace(",", "")) > 0
        assert int(asked) == 3 and int(explained) >= 1 and int(p50) <= int(p99)
