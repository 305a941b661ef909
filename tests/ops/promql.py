"""Which series a PromQL expression reads, from its syntax tree (promql-parser)."""

from __future__ import annotations

import re

import promql_parser

# Grafana's template variables, replaced by values of the same PromQL type.
GRAFANA_VARIABLES = {
    "$__rate_interval": "1m",
    "$__interval": "1m",
    "$__range": "1h",
    "${datasource}": "prometheus",
    "$service": ".*",
}
LABEL_VALUES = re.compile(r"^\s*label_values\(\s*([a-zA-Z_:][a-zA-Z0-9_:]*)\s*,\s*[a-zA-Z_][a-zA-Z0-9_]*\s*\)\s*$")


def substitute(expr: str) -> str:
    for var in sorted(GRAFANA_VARIABLES, key=len, reverse=True):
        expr = expr.replace(var, GRAFANA_VARIABLES[var])
    if "$" in expr:
        raise ValueError(f"unknown template variable in {expr!r}")
    return expr


def series_names(expr: str) -> set[str]:
    """The metric names of every vector selector in ``expr`` (a syntax error raises)."""
    m = LABEL_VALUES.match(expr)
    if m:  # Grafana's label_values(metric, label) variable query
        return {m.group(1)}
    names: set[str] = set()
    regex_names: list[str] = []

    def visit(node):
        if isinstance(node, promql_parser.VectorSelector):
            if node.name:
                names.add(node.name)
            for matcher in node.matchers.matchers:
                if matcher.name == "__name__":
                    if str(matcher.op).endswith("Equal") and "Not" not in str(matcher.op):
                        names.add(matcher.value)
                    else:
                        regex_names.append(matcher.value)
        return True

    promql_parser.walk(promql_parser.parse(substitute(expr)), visit)
    if regex_names:
        raise ValueError(f"{expr!r} selects metric names by a pattern ({regex_names}); name them")
    return names
