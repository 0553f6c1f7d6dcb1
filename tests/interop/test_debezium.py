"""Debezium's PostgreSQL connector in a Kafka Connect worker, with franz as its Kafka.

Change data capture is one of the main things Kafka runs in the field: Debezium reads a real
PostgreSQL server's logical replication stream (pgoutput) and writes one change event per row
into a topic, and keeps its place in the WAL (the LSN) in Connect's offsets topic, on franz.
The worker (java/ConnectDriver.java, mode postgres) copies the events into a file through a
FileStreamSink. A second worker must resume from the stored LSN: a lost offset would show as a
second snapshot of the table.
"""

from __future__ import annotations

import json
import subprocess
from pathlib import Path

import pytest

from tests.support.java_client import DEBEZIUM_JARS, compile_driver_or_skip
from tests.support.postgres import PostgresServer, server_binaries

pytestmark = pytest.mark.interop

DRIVER = Path(__file__).parent / "java" / "ConnectDriver.java"
TIMEOUT_S = 240


@pytest.fixture(scope="session")
def debezium_driver() -> list[str]:
    return compile_driver_or_skip(DRIVER, DEBEZIUM_JARS)


@pytest.fixture
def postgres():
    binaries = server_binaries()
    if binaries is None:
        pytest.skip("no PostgreSQL server on this machine (scripts/test installs Debian's)")
    server = PostgresServer(binaries).start()
    yield server
    server.stop()


def _run(driver: list[str], *args: str) -> list[str]:
    result = subprocess.run([*driver, *args], capture_output=True, text=True, timeout=TIMEOUT_S)
    assert result.returncode == 0, result.stderr[-3000:]
    return result.stdout.splitlines()


def _events(path: Path) -> list[tuple[str, int, str | None]]:
    """(op, row id, name after the change) of every change event the sink wrote."""
    events = [json.loads(line) for line in path.read_text().splitlines()]
    return [(e["op"], (e["after"] or e["before"])["id"], (e["after"] or {}).get("name")) for e in events]


def test_debezium_captures_a_postgres_table_into_franz_and_resumes_from_its_stored_lsn(
        broker_factory, debezium_driver, postgres, tmp_path):
    broker = broker_factory()
    postgres.sql("CREATE TABLE items (id int PRIMARY KEY, name text); "
                 "INSERT INTO items SELECT i, 'item-' || i FROM generate_series(1, 20) i;")
    first = _run(debezium_driver, "postgres", broker.bootstrap, str(tmp_path), "disabled", "20", postgres.address)
    assert first == ["created src true", "created sink true", "out 20", "status src RUNNING RUNNING",
                     "status sink RUNNING RUNNING", "stopped"]
    assert sorted(_events(tmp_path / "out.txt")) == [("r", i, f"item-{i}") for i in range(1, 21)]  # the snapshot

    # Changes made while no worker runs wait in the replication slot; the next worker reads
    # Connect's offsets topic on franz for where it stopped and streams only them.
    postgres.sql("INSERT INTO items VALUES (21, 'item-21'), (22, 'item-22'); "
                 "UPDATE items SET name = 'renamed' WHERE id = 3; DELETE FROM items WHERE id = 4;")
    second = _run(debezium_driver, "postgres", broker.bootstrap, str(tmp_path), "disabled", "24", postgres.address)
    assert second[:3] == ["created src false", "created sink false", "out 24"]
    assert _events(tmp_path / "out.txt")[20:] == [("c", 21, "item-21"), ("c", 22, "item-22"), ("u", 3, "renamed"),
                                                   ("d", 4, None)]
