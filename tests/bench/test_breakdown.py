"""bench fleet --breakdown: histogram summaries read back from a real /metrics page."""

from __future__ import annotations

import math

import pytest
from prometheus_client import generate_latest

from chronolog.bench.breakdown import HOPS, quantile, summarise
from chronolog.runtime.fleet.metrics import ServiceMetrics


def test_quantile_interpolates_like_histogram_quantile() -> None:
    # 100 observations: 50 in (0, 0.01], 50 in (0.01, 0.1]; rank 99 lies 49/50 into the second bucket
    buckets = [(0.01, 50.0), (0.1, 100.0), (math.inf, 100.0)]
    assert quantile(0.99, buckets) == pytest.approx(0.01 + 0.09 * (49 / 50))
    assert quantile(0.5, buckets) == 0.01
    assert math.isnan(quantile(0.99, []))


def test_summary_of_a_service_registry() -> None:
    m = ServiceMetrics.create("reasoner", 2, 0)
    for v in (0.002, 0.004, 0.006):
        m.hop_fetch.observe(v)
    m.transaction.observe(0.02)
    got = summarise(generate_latest(m.registry).decode())
    mean, p99, count = got["produced->consumed"]
    assert count == 3 and abs(mean - 0.004) < 1e-12
    assert 0.005 < p99 <= 0.01  # the bucket (0.005, 0.01] holds the largest observation
    assert got["transaction"][2] == 1 and got["consumed->committed"][2] == 0
    assert set(got) == set(HOPS)
