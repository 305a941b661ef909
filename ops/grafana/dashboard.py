"""Generate the chronolog Grafana dashboard (ops/grafana/chronolog.json).

Built with the typed grafana-foundation-sdk (the ``test`` extra installs it):

    python ops/grafana/dashboard.py            # rewrite ops/grafana/chronolog.json
    python ops/grafana/dashboard.py --check    # exit 1 if the checked-in JSON is stale

Every query uses only the series of ``chronolog.runtime.fleet.metrics.METRICS``
(``tests/ops/test_grafana.py`` checks that, and that the JSON is up to date).
All series carry the labels ``service`` (ingest, grounding, reasoner, output),
``stratum`` ("" outside reasoners) and ``partition``, so the dashboard fits
the fleet of any program.  The Prometheus data source is a dashboard variable
(``$datasource``); ``$service`` filters the services shown.
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

from grafana_foundation_sdk.builders import common as common_b
from grafana_foundation_sdk.builders import dashboard as dash_b
from grafana_foundation_sdk.builders import prometheus as prom_b
from grafana_foundation_sdk.builders import stat as stat_b
from grafana_foundation_sdk.builders import statetimeline as statetimeline_b
from grafana_foundation_sdk.builders import timeseries as timeseries_b
from grafana_foundation_sdk.cog.encoder import JSONEncoder
from grafana_foundation_sdk.models import common as common_m
from grafana_foundation_sdk.models import dashboard as dash_m

OUT = Path(__file__).with_name("chronolog.json")
# the Helm chart's copy (Helm reads files only inside the chart; tests require the two equal)
CHART_COPY = Path(__file__).resolve().parents[2] / "helm" / "chronolog" / "dashboards" / "chronolog.json"
UID = "chronolog-fleet"

DATASOURCE = dash_m.DataSourceRef(type_val="prometheus", uid="${datasource}")
# the label filter every query carries
SEL = 'service=~"$service"'
# a service instance in legends: "reasoner 2 p0", "ingest p0"
INSTANCE = "{{service}} {{stratum}} p{{partition}}"
BY_INSTANCE = "service, stratum, partition"


def query(expr: str, legend: str, ref: str = "A") -> prom_b.Dataquery:
    return prom_b.Dataquery().expr(expr).legend_format(legend).ref_id(ref).range()


def legend() -> common_b.VizLegendOptions:
    return (
        common_b.VizLegendOptions()
        .display_mode(common_m.LegendDisplayMode.TABLE)
        .placement(common_m.LegendPlacement.BOTTOM)
        .show_legend(True)
        .calcs(["lastNotNull", "max"])
    )


def timeseries(title: str, description: str, unit: str, *targets: prom_b.Dataquery, width: int = 12) -> timeseries_b.Panel:
    panel = (
        timeseries_b.Panel()
        .title(title)
        .description(description)
        .datasource(DATASOURCE)
        .unit(unit)
        .min(0)
        .height(8)
        .span(width)
        .fill_opacity(10)
        .legend(legend())
    )
    for t in targets:
        panel = panel.with_target(t)
    return panel


def up_panel() -> statetimeline_b.Panel:
    mappings = [
        dash_m.ValueMap(
            options={
                "0": dash_m.ValueMappingResult(text="down", color="red", index=0),
                "1": dash_m.ValueMappingResult(text="up", color="green", index=1),
            }
        )
    ]
    return (
        statetimeline_b.Panel()
        .title("Service up")
        .description(
            "chronolog_up: 1 while a service's processing loop runs.  A gap means its /metrics endpoint "
            "was not scraped (process gone); see the ChronologTargetDown alert."
        )
        .datasource(DATASOURCE)
        .height(6)
        .span(24)
        .mappings(mappings)
        .show_value(common_m.VisibilityMode.NEVER)
        .with_target(query(f"max by ({BY_INSTANCE}) (chronolog_up{{{SEL}}})", INSTANCE))
    )


def stat(title: str, description: str, expr: str, unit: str, red_at: float) -> stat_b.Panel:
    thresholds = (
        dash_b.ThresholdsConfig()
        .mode(dash_m.ThresholdsMode.ABSOLUTE)
        .steps([dash_m.Threshold(value=None, color="green"), dash_m.Threshold(value=red_at, color="red")])
    )
    return (
        stat_b.Panel()
        .title(title)
        .description(description)
        .datasource(DATASOURCE)
        .unit(unit)
        .height(4)
        .span(6)
        .thresholds(thresholds)
        .color_mode(common_m.BigValueColorMode.BACKGROUND)
        .graph_mode(common_m.BigValueGraphMode.NONE)
        .with_target(prom_b.Dataquery().expr(expr).legend_format("__auto").ref_id("A").instant())
    )


def build() -> dash_b.Dashboard:
    rate = "[$__rate_interval]"
    datasource = dash_b.DatasourceVariable("datasource").label("Data source").type("prometheus")
    service = (
        dash_b.QueryVariable("service")
        .label("Service")
        .datasource(DATASOURCE)
        .query({"query": "label_values(chronolog_up, service)", "refId": "service"})
        .refresh(dash_m.VariableRefresh.ON_TIME_RANGE_CHANGED)
        .sort(dash_m.VariableSort.ALPHABETICAL_ASC)
        .multi(True)
        .include_all(True)
        .all_value(".*")
    )

    def latency(q: str, ref: str) -> prom_b.Dataquery:
        expr = (
            f"histogram_quantile({q}, sum by (le, service, stratum) "
            f"(rate(chronolog_processing_latency_seconds_bucket{{{SEL}}}{rate})))"
        )
        return query(expr, f"p{int(float(q) * 100)} {{{{service}}}} {{{{stratum}}}}", ref)

    def hop(metric: str, ref: str, what: str = "") -> prom_b.Dataquery:
        expr = f"histogram_quantile(0.99, sum by (le, service, stratum) (rate({metric}_bucket{{{SEL}}}{rate})))"
        return query(expr, f"{what + ' ' if what else ''}{{{{service}}}} {{{{stratum}}}}", ref)

    return (
        dash_b.Dashboard("chronolog fleet")
        .uid(UID)
        .description("Kafka fleet of chronolog: ingest -> grounding -> one reasoner per stratum -> output")
        .tags(["chronolog", "kafka", "stream-reasoning"])
        .editable()
        .tooltip(dash_m.DashboardCursorSync.CROSSHAIR)
        .refresh("10s")
        .time("now-30m", "now")
        .timezone("browser")
        .with_variable(datasource)
        .with_variable(service)
        .with_row(dash_b.Row("Health"))
        .with_panel(up_panel())
        .with_panel(
            stat(
                "Consumer lag (total)",
                "Records fetched but not yet processed, summed over the selected services.",
                f"sum(chronolog_consumer_lag_records{{{SEL}}})",
                "short",
                10000,
            )
        )
        .with_panel(
            stat(
                "Dead letters (range)",
                "Malformed events sent to chronolog.dlq in the dashboard's time range.",
                f"sum(increase(chronolog_dead_letters_total{{{SEL}}}[$__range]))",
                "short",
                1,
            )
        )
        .with_panel(
            stat(
                "Late events (range)",
                "Events older than the retention horizon, routed to chronolog.late, in the time range.",
                f"sum(increase(chronolog_late_events_total{{{SEL}}}[$__range]))",
                "short",
                1,
            )
        )
        .with_panel(
            stat(
                "Latency p99",
                "99th percentile of broker timestamp -> commit, over all selected services (5m).",
                f"histogram_quantile(0.99, sum by (le) (rate(chronolog_processing_latency_seconds_bucket{{{SEL}}}[5m])))",
                "s",
                0.1,
            )
        )
        .with_row(dash_b.Row("Flow"))
        .with_panel(
            timeseries(
                "Consumer lag",
                "chronolog_consumer_lag_records per service instance: records fetched but not yet processed.",
                "short",
                query(f"sum by ({BY_INSTANCE}) (chronolog_consumer_lag_records{{{SEL}}})", INSTANCE),
            )
        )
        .with_panel(
            timeseries(
                "Throughput",
                "Records consumed (in) and produced (out) per second, per service.",
                "ops",
                query(f"sum by (service, stratum) (rate(chronolog_events_in_total{{{SEL}}}{rate}))",
                      "in {{service}} {{stratum}}", "A"),
                query(f"sum by (service, stratum) (rate(chronolog_events_out_total{{{SEL}}}{rate}))",
                      "out {{service}} {{stratum}}", "B"),
            )
        )
        .with_panel(
            timeseries(
                "Answers and corrections",
                "Answer lines published per second, the part of them that corrects earlier answers "
                "(diff lines of replays), the delayed events and retractions that caused replays, and "
                "the time points without an answer set (an odd loop or a constraint: logged; no answer line "
                "unless --mark-no-answer-set).",
                "ops",
                query(f"sum(rate(chronolog_answers_total{{{SEL}}}{rate}))", "answers", "A"),
                query(f"sum(rate(chronolog_corrections_total{{{SEL}}}{rate}))", "corrections", "B"),
                query(f"sum(rate(chronolog_delayed_events_total{{{SEL}}}{rate}))", "delayed events repaired", "C"),
                query(f"sum(rate(chronolog_no_answer_sets_total{{{SEL}}}{rate}))", "points without an answer set", "D"),
            )
        )
        .with_panel(
            timeseries(
                "Processing latency p50 / p99",
                "Time from a record's broker timestamp to the commit of what it caused "
                "(histogram_quantile over chronolog_processing_latency_seconds).",
                "s",
                latency("0.5", "A"),
                latency("0.99", "B"),
            )
        )
        .with_row(dash_b.Row("Where the time goes (per hop)"))
        .with_panel(
            timeseries(
                "Hop: produced -> consumed p99",
                "Per service: from a record's broker timestamp until this service consumed it "
                "(upstream commit visibility, fetch wait, broker).",
                "s",
                hop("chronolog_hop_fetch_seconds", "A"),
            )
        )
        .with_panel(
            timeseries(
                "Hop: consumed -> committed p99",
                "Per service: from consuming a batch until its transaction committed, split into the "
                "stage's Python work per batch and the Kafka transaction itself.",
                "s",
                hop("chronolog_hop_commit_seconds", "A"),
                hop("chronolog_batch_process_seconds", "B", "process"),
                hop("chronolog_transaction_commit_seconds", "C", "transaction"),
            )
        )
        .with_row(dash_b.Row("Time and state"))
        .with_panel(
            timeseries(
                "Time point per stratum",
                "Last time point each service has completed.  Reasoners of higher strata follow lower ones; "
                "a flat line while input flows means progress stopped (ChronologTimePointStalled).",
                "none",
                query(f"max by (service, stratum) (chronolog_time_point{{{SEL}}})", "{{service}} {{stratum}}"),
            )
        )
        .with_panel(
            timeseries(
                "Program version and upgrades",
                "The program version each service instance runs (chronolog_program_info: 1 for its version, "
                "the legend names it) and the upgrades it applied (chronolog upgrade; changes of the program "
                "from an event time on, docs/fleet/upgrade.md).",
                "none",
                query(f"max by ({BY_INSTANCE}, version) (chronolog_program_info{{{SEL}}})",
                      INSTANCE + " {{version}}", "A"),
                query(f"sum by ({BY_INSTANCE}) (chronolog_upgrades_total{{{SEL}}})", "upgrades " + INSTANCE, "B"),
            )
        )
        .with_panel(
            timeseries(
                "State size",
                "Size of the last state snapshot (RocksDB and changelog) per service instance.",
                "bytes",
                query(f"sum by ({BY_INSTANCE}) (chronolog_state_size_bytes{{{SEL}}})", INSTANCE),
            )
        )
        .with_panel(
            timeseries(
                "Dead letters and late events",
                "Malformed events to chronolog.dlq and events older than the retention horizon "
                "to chronolog.late, per second.",
                "ops",
                query(f"sum by (service) (rate(chronolog_dead_letters_total{{{SEL}}}{rate}))",
                      "dead letters {{service}}", "A"),
                query(f"sum by (service) (rate(chronolog_late_events_total{{{SEL}}}{rate}))",
                      "late {{service}}", "B"),
            )
        )
        .with_panel(
            timeseries(
                "Kafka transactions and dropped repeats",
                "Transactions committed per second (ingest's and output's make their records and offsets "
                "visible; a relay's, grounding's and the reasoners', store its state), and records that a "
                "restarted relay sent again, dropped at its readers' gates.",
                "ops",
                query(f"sum by (service, stratum) (rate(chronolog_transactions_total{{{SEL}}}{rate}))",
                      "{{service}} {{stratum}}", "A"),
                query(f"sum by (service, stratum) (rate(chronolog_repeats_dropped_total{{{SEL}}}{rate}))",
                      "repeats dropped {{service}} {{stratum}}", "B"),
            )
        )
    )


def render() -> str:
    model = build().build()
    for i, panel in enumerate(model.panels or [], 1):  # unique, stable panel ids in layout order
        panel.id_val = i
    return JSONEncoder(sort_keys=True, indent=2).encode(model) + "\n"


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--check", action="store_true", help="only check that the checked-in JSON is current")
    ap.add_argument("--output", type=Path, help="one file to write or check (default: ops' and the chart's copies)")
    args = ap.parse_args(argv)
    text = render()
    outputs = [args.output] if args.output else [OUT, CHART_COPY]
    if args.check:
        stale = [o for o in outputs if (o.read_text(encoding="utf-8") if o.exists() else "") != text]
        for o in stale:
            print(f"{o} is stale: run python ops/grafana/dashboard.py", file=sys.stderr)
        return 1 if stale else 0
    for o in outputs:
        o.write_text(text, encoding="utf-8")
    return 0


if __name__ == "__main__":
    sys.exit(main())
