"""Test helpers (reference evaluator, generators, answer meaning) live in tests/."""

import sys
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).resolve().parent))


@pytest.fixture(scope="module")
def spark():
    """A local PySpark session (2 cores) for the backfill tests of the hosted dialects."""
    pytest.importorskip("pyspark")
    from chronolog.runtime.backfill.spark_io import spark_session

    session, created = spark_session("local[2]")
    yield session
    if created:
        session.stop()
