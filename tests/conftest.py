"""Test helpers (reference evaluator, generators, answer meaning) live in tests/."""

import os
import sys
from pathlib import Path

import pytest
from hypothesis import settings

sys.path.insert(0, str(Path(__file__).resolve().parent))
# The runtime tests (tests/runtime/...) reuse the dialects' semantics helpers and
# fixtures (test_mtl_semantics, test_rtec, ...), whichever folder pytest collects first.
for _dialect in ("mtl", "rtec"):
    sys.path.append(str(Path(__file__).resolve().parent / "dialects" / _dialect))

TESTS = Path(__file__).resolve().parent
DEPLOY_TOOLS = (TESTS / "deploy", TESTS / "ops")  # Helm's SDK, promtool, prometheus, docker-compose


def pytest_collection_modifyitems(items: list[pytest.Item]) -> None:
    """The markers of pyproject.toml that follow from where a test is or what it uses:
    ``deploy`` for tests/deploy and tests/ops, ``spark`` for a test of the ``spark``
    fixture.  ``fleet`` (a real broker and service processes) is written in the
    test modules themselves (``pytestmark``), as is ``spark`` where no fixture says it."""
    for item in items:
        path = Path(str(item.fspath)).resolve()
        if any(d in path.parents for d in DEPLOY_TOOLS):
            item.add_marker(pytest.mark.deploy)
        if "spark" in getattr(item, "fixturenames", ()):
            item.add_marker(pytest.mark.spark)
        if item.get_closest_marker("spark"):  # one worker of ``-n 2`` runs them: one Spark at a time
            item.add_marker(pytest.mark.xdist_group("spark"))
        _scale_examples(item)


def _scale_examples(item: pytest.Item) -> None:
    """``CHRONOLOG_EXAMPLES=N`` runs every hypothesis test with N times its
    ``max_examples``: the committed counts are sized for CI, a bug hunt runs more."""
    scale = int(os.environ.get("CHRONOLOG_EXAMPLES", "1"))
    test = getattr(item, "obj", None)
    inner = getattr(test, "hypothesis", None)
    if scale <= 1 or inner is None:
        return
    target = inner.inner_test if hasattr(inner, "inner_test") else test
    for holder in (test, target):
        current = getattr(holder, "_hypothesis_internal_use_settings", None)
        if current is not None:
            holder._hypothesis_internal_use_settings = settings(current, max_examples=current.max_examples * scale)


@pytest.fixture(scope="module")
def spark():
    """A local PySpark session (2 cores) for the backfill tests of the hosted dialects."""
    pytest.importorskip("pyspark")
    from chronolog.runtime.backfill.spark_io import spark_session

    session, created = spark_session("local[2]")
    yield session
    if created:
        session.stop()
