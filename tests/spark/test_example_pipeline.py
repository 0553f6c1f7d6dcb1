"""examples/spark_pipeline.py runs end to end against a real broker, twice, and
its checkpoint makes the second run add only the new views."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

pytest.importorskip("pyspark")

pytestmark = pytest.mark.slow
EXAMPLE = Path(__file__).resolve().parents[2] / "examples" / "spark_pipeline.py"


def test_the_example_pipeline_ingests_aggregates_and_reads_back(broker, tmp_path):
    command = [sys.executable, str(EXAMPLE), "--bootstrap", broker.bootstrap, "--work", str(tmp_path),
               "--views", "400"]
    first = subprocess.run(command, capture_output=True, text=True, timeout=300)
    assert first.returncode == 0, first.stderr[-3000:]
    assert json.loads(first.stdout.strip().splitlines()[-1]) == {"/": 100, "/blog": 100, "/docs": 100, "/pricing": 100}
    second = subprocess.run(command, capture_output=True, text=True, timeout=300)
    assert second.returncode == 0, second.stderr[-3000:]
    assert json.loads(second.stdout.strip().splitlines()[-1]) == {"/": 200, "/blog": 200, "/docs": 200, "/pricing": 200}
