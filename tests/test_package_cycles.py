"""No import cycles between chronolog's packages.

import-linter's layers contract (pyproject.toml, checked by ``lint-imports``
in CI) forbids imports upwards between the top-level layers; this test also
covers the packages inside a layer (``dialects.lars`` / ``mtl`` / ``rtec``
and the registry, ``runtime.fleet`` / ``runtime.backfill`` and the embedded
loop) and counts every import, those inside functions included.  The imports
the layers contract ignores (each being removed by another part of issue 36)
are ignored here too, and each must still exist: a stale exception fails.
"""

from __future__ import annotations

import tomllib
from collections import defaultdict
from pathlib import Path

import grimp

from chronolog.core.graph import strongly_connected

ROOT = Path(__file__).resolve().parent.parent

# A package of these is split one level further: one node per dialect, per runtime.
SPLIT = ("chronolog.dialects", "chronolog.runtime")


def package_of(module: str, packages: set[str]) -> str:
    """``chronolog.dialects.lars.engine.core`` -> ``chronolog.dialects.lars``;
    ``chronolog.dialects.registry`` -> ``chronolog.dialects``;
    ``chronolog.state.codec`` -> ``chronolog.state``; a module at the root
    (``chronolog.evaluator``) is its own node.  ``packages``: the modules
    that are packages."""
    parts = module.split(".")
    depth = 3 if ".".join(parts[:2]) in SPLIT else 2
    if len(parts) > depth:
        return ".".join(parts[:depth])
    if len(parts) == depth and depth == 3 and module not in packages:
        return ".".join(parts[:2])  # a module of the dialects or runtime package itself
    return module


def package_graph(graph: grimp.ImportGraph) -> dict[str, dict[str, list[tuple[str, str]]]]:
    """Package -> package it imports -> the module imports that make the edge."""
    packages = {m for m in graph.modules if graph.find_children(m)}
    edges: dict[str, dict[str, list[tuple[str, str]]]] = defaultdict(lambda: defaultdict(list))
    for importer in graph.modules:
        for imported in graph.find_modules_directly_imported_by(importer):
            a, b = package_of(importer, packages), package_of(imported, packages)
            if a != b and b != "chronolog":  # the root package holds only __version__
                edges[a][b].append((importer, imported))
    return edges


def cycles(edges: dict[str, dict[str, list[tuple[str, str]]]]) -> list[list[str]]:
    """The strongly connected components with more than one package (the planner's Tarjan)."""
    nodes = sorted(set(edges) | {w for targets in edges.values() for w in targets})
    graph = {v: set(edges.get(v, {})) for v in nodes}
    return [component for component in strongly_connected(nodes, graph) if len(component) > 1]


def describe(component: list[str], edges: dict[str, dict[str, list[tuple[str, str]]]]) -> str:
    lines = [" <-> ".join(component)]
    for a in component:
        for b in component:
            for importer, imported in edges.get(a, {}).get(b, []):
                lines.append(f"    {importer} -> {imported}")
    return "\n".join(lines)


def ignored_imports() -> list[tuple[str, str]]:
    config = tomllib.loads((ROOT / "pyproject.toml").read_text())
    layers = next(c for c in config["tool"]["importlinter"]["contracts"] if c["id"] == "layers")
    pairs = [tuple(part.strip() for part in line.split("->")) for line in layers.get("ignore_imports", [])]
    return [(a, b) for a, b in pairs]


def test_chronologs_packages_import_each_other_in_one_direction_only() -> None:
    graph = grimp.build_graph("chronolog", cache_dir=None)
    for importer, imported in ignored_imports():
        assert graph.direct_import_exists(importer=importer, imported=imported), \
            f"pyproject.toml ignores {importer} -> {imported}, which no longer exists: drop the exception"
        graph.remove_import(importer=importer, imported=imported)
    edges = package_graph(graph)
    found = cycles(edges)
    assert not found, "import cycles between chronolog's packages:\n" + "\n".join(describe(c, edges) for c in found)


def test_a_cycle_between_packages_is_found() -> None:
    # the check itself: state importing the fleet (the inversion issue 36 removed) is a cycle
    graph = grimp.ImportGraph()
    for module in ["chronolog", "chronolog.state", "chronolog.state.snapshots", "chronolog.runtime",
                   "chronolog.runtime.fleet", "chronolog.runtime.fleet.stages", "chronolog.dialects",
                   "chronolog.dialects.registry", "chronolog.dialects.mtl", "chronolog.dialects.mtl.parser",
                   "chronolog.evaluator"]:
        graph.add_module(module)
    graph.add_import(importer="chronolog.runtime.fleet.stages", imported="chronolog.state.snapshots")
    graph.add_import(importer="chronolog.dialects.registry", imported="chronolog.dialects.mtl.parser")
    graph.add_import(importer="chronolog.dialects.mtl.parser", imported="chronolog.evaluator")
    assert cycles(package_graph(graph)) == []
    graph.add_import(importer="chronolog.state.snapshots", imported="chronolog.runtime.fleet.stages")
    assert cycles(package_graph(graph)) == [["chronolog.runtime.fleet", "chronolog.state"]]
    # a dialect's module and the registry (a module of the dialects package itself)
    graph.add_import(importer="chronolog.evaluator", imported="chronolog.dialects.registry")
    assert ["chronolog.dialects", "chronolog.dialects.mtl", "chronolog.evaluator"] in cycles(package_graph(graph))


def test_packages_are_split_by_dialect_and_by_runtime() -> None:
    packages = {"chronolog", "chronolog.dialects", "chronolog.dialects.lars", "chronolog.dialects.lars.engine",
                "chronolog.runtime", "chronolog.runtime.fleet", "chronolog.state"}
    assert package_of("chronolog.dialects.lars.engine.core", packages) == "chronolog.dialects.lars"
    assert package_of("chronolog.dialects.lars.engine", packages) == "chronolog.dialects.lars"
    assert package_of("chronolog.dialects.lars", packages) == "chronolog.dialects.lars"
    assert package_of("chronolog.dialects.registry", packages) == "chronolog.dialects"
    assert package_of("chronolog.dialects", packages) == "chronolog.dialects"
    assert package_of("chronolog.runtime.embedded", packages) == "chronolog.runtime"
    assert package_of("chronolog.runtime.fleet.stages", packages) == "chronolog.runtime.fleet"
    assert package_of("chronolog.state.codec", packages) == "chronolog.state"
    assert package_of("chronolog.state", packages) == "chronolog.state"
    assert package_of("chronolog.evaluator", packages) == "chronolog.evaluator"
