"""``bench fleet --breakdown``: where each hop's time goes, read from the services' own metrics.

Every service exports, per consumed batch, how long its records waited
between their producer and it (``chronolog_hop_fetch_seconds``), the stage's
Python work (``chronolog_batch_process_seconds``), the Kafka transaction
(``chronolog_transaction_commit_seconds``) and consumed -> committed
(``chronolog_hop_commit_seconds``).  After a bench run the fleet's
``/metrics`` endpoints are scraped and each histogram summarised by its mean
and an interpolated p99 (what Prometheus's ``histogram_quantile`` computes).
"""

from __future__ import annotations

import math
import statistics
import urllib.request

from prometheus_client.parser import text_string_to_metric_families
from rich.table import Table

HOPS = {
    "produced->consumed": "chronolog_hop_fetch_seconds",
    "process": "chronolog_batch_process_seconds",
    "transaction": "chronolog_transaction_commit_seconds",
    "consumed->committed": "chronolog_hop_commit_seconds",
}


def quantile(q: float, buckets: list[tuple[float, float]]) -> float:
    """``histogram_quantile``: linear interpolation inside the bucket holding rank q·count.
    ``buckets`` are cumulative (upper bound, count), ascending, ending with +Inf."""
    if not buckets or buckets[-1][1] <= 0:
        return math.nan
    rank = q * buckets[-1][1]
    lower, below = 0.0, 0.0
    for upper, count in buckets:
        if count >= rank:
            if math.isinf(upper):
                return lower
            inside = count - below
            return lower + (upper - lower) * ((rank - below) / inside if inside else 1.0)
        lower, below = upper, count
    return lower


def summarise(text: str) -> dict[str, tuple[float, float, int]]:
    """Per HOPS entry: (mean, p99, observations) from one ``/metrics`` page."""
    out: dict[str, tuple[float, float, int]] = {}
    families = {f.name: f for f in text_string_to_metric_families(text)}
    for label, name in HOPS.items():
        fam = families.get(name)
        if fam is None:
            continue
        buckets, total, count = [], 0.0, 0.0
        for s in fam.samples:
            if s.name.endswith("_bucket"):
                buckets.append((float(s.labels["le"]), s.value))
            elif s.name.endswith("_sum"):
                total = s.value
            elif s.name.endswith("_count"):
                count = s.value
        buckets.sort()
        out[label] = (total / count if count else math.nan, quantile(0.99, buckets), int(count))
    return out


def scrape(fleet) -> dict[str, dict[str, tuple[float, float, int]]]:  # type: ignore[no-untyped-def]
    """Each running service of a ``supervisor.Fleet``: its hop summaries."""
    got = {}
    for child in fleet.children:
        if child.metrics_port is None:
            continue
        try:
            with urllib.request.urlopen(f"http://127.0.0.1:{child.metrics_port}/metrics", timeout=5) as r:
                got[child.label] = summarise(r.read().decode())
        except OSError:
            continue
    return got


def table(title: str, rounds: list[dict[str, dict[str, tuple[float, float, int]]]]):  # type: ignore[no-untyped-def]
    """A rich table: per service, each hop's mean and p99 in ms (medians over rounds)."""
    t = Table(title=title)
    t.add_column("service", justify="left")
    for label in HOPS:
        t.add_column(f"{label} mean / p99", justify="right")
    t.add_column("batches", justify="right")
    services = sorted({s for r in rounds for s in r})
    for service in services:
        cells = []
        for label in HOPS:
            vals = [r[service][label] for r in rounds if service in r and label in r[service]]
            if not vals:
                cells.append("-")
                continue
            mean = statistics.median(v[0] for v in vals) * 1000
            p99 = statistics.median(v[1] for v in vals) * 1000
            cells.append(f"{mean:.1f} / {p99:.1f} ms")
        batches = [r[service].get("process", (0, 0, 0))[2] for r in rounds if service in r]
        t.add_row(service, *cells, str(int(statistics.median(batches))) if batches else "-")
    return t
