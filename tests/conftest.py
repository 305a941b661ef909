"""Test helpers (reference evaluator, generators, answer meaning) live in tests/."""

import sys
from pathlib import Path

import pytest

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


@pytest.fixture(scope="module")
def spark():
    """A local PySpark session (2 cores) for the backfill tests of the hosted dialects."""
    pytest.importorskip("pyspark")
    from chronolog.runtime.backfill.spark_io import spark_session

    session, created = spark_session("local[2]")
    yield session
    if created:
        session.stop()
