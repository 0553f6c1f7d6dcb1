"""A local SparkSession per test module, with franz's data sources registered."""

from __future__ import annotations

import pytest


@pytest.fixture(scope="module")
def spark():
    pytest.importorskip("pyspark")
    import franz.spark  # noqa: PLC0415 - only where pyspark is installed
    session = franz.spark.session()
    yield session
    session.stop()
