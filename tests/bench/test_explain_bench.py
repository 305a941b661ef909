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


def test_bench_explain_on_the_process_cpu_clock(capsys):
    """``--clock cpu``: the same table, timed by this process's CPU time (on cores other work
    shares, the wall clock measures the load), and says so."""
    assert main(["bench", "explain", "--samples", "2", "--tps", "12", "--no-mtl", "--rtec-lines", "2000",
                 "--clock", "cpu", "join"]) == 0
    out = capsys.readouterr().out
    assert "CPU time of this process" in out
    rows = re.findall(r"│ (LARS join|RTEC caviar\S*)\s*│\s*[\d,]+ │\s*(\d+) │\s*(\d+) │\s*([\d.]+) │", out)
    assert {r[0] for r in rows} == {"LARS join", "RTEC caviar[:2000]"}, out
    assert all(int(asked) == 2 and int(explained) >= 1 and float(run) > 0 for _, asked, explained, run in rows)
