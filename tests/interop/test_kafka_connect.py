"""A Kafka Connect 4.3 distributed worker against a real franz broker.

The worker (java/ConnectDriver.java) is Connect's own DistributedHerder, Worker and
Kafka-backed stores with the FileStream connectors; only its REST server is left out (it
cannot start from the jars the wheel carries). It uses what a Connect cluster needs of a
broker: its three compacted internal topics (the worker refuses a config topic that is not
compacted), the classic group protocol of type "connect" with its own assignor, reads of
those topics to their end, a sink's consumer group, and with exactly.once.source.support
transactions: the config topic written by a transactional leader, the source task's records
and offsets committed together, and zombie fencing through Admin.fenceProducers.
"""

from __future__ import annotations

import subprocess
from pathlib import Path

import pytest

from franz.protocol.errors import Errors
from tests.support.java_client import CONNECT_JARS, compile_driver_or_skip
from tests.support.raw_client import RawClient

pytestmark = pytest.mark.interop

DRIVER = Path(__file__).parent / "java" / "ConnectDriver.java"
TIMEOUT_S = 240
DESCRIBE_CONFIGS, DESCRIBE_GROUPS, OFFSET_FETCH, LIST_OFFSETS, LIST_TRANSACTIONS = 32, 15, 9, 2, 66


@pytest.fixture(scope="session")
def connect_driver() -> list[str]:
    return compile_driver_or_skip(DRIVER, CONNECT_JARS)


def _run(driver: list[str], *args: str) -> list[str]:
    result = subprocess.run([*driver, *args], capture_output=True, text=True, timeout=TIMEOUT_S)
    assert result.returncode == 0, result.stderr[-3000:]
    return result.stdout.splitlines()


def _lines(first: int, last: int) -> str:
    return "".join(f"line-{i}\n" for i in range(first, last))


def _cleanup_policies(client: RawClient, topics: list[str]) -> dict[str, str]:
    answer = client.request(DESCRIBE_CONFIGS, 4, {"resources": [
        {"resource_type": 2, "resource_name": name, "configuration_keys": ["cleanup.policy"]} for name in topics],
        "include_synonyms": False, "include_documentation": False})
    return {r["resource_name"]: r["configs"][0]["value"] for r in answer["results"]}


@pytest.mark.parametrize("exactly_once", ["disabled", "enabled"])
def test_a_connect_worker_copies_a_file_through_franz_and_resumes_after_a_restart(
        broker_factory, connect_driver, tmp_path, exactly_once):
    broker = broker_factory()
    (tmp_path / "in.txt").write_text(_lines(0, 100))
    first = _run(connect_driver, "file", broker.bootstrap, str(tmp_path), exactly_once, "100")
    assert first == ["created src true", "created sink true", "out 100", "status src RUNNING RUNNING",
                     "status sink RUNNING RUNNING", "source-position 790", "stopped"]

    # A second worker finds the connectors in the config topic and the source's position in the
    # offsets topic, and the sink's group its committed offset: only the new lines are copied.
    with open(tmp_path / "in.txt", "a") as appended:
        appended.write(_lines(100, 150))
    second = _run(connect_driver, "file", broker.bootstrap, str(tmp_path), exactly_once, "150")
    assert second[:3] == ["created src false", "created sink false", "out 150"]
    assert second[-2:] == ["source-position 1240", "stopped"]
    assert (tmp_path / "out.txt").read_text() == _lines(0, 150)

    with RawClient(broker.bootstrap) as client:
        assert _cleanup_policies(client, ["connect-configs", "connect-offsets", "connect-status"]) == {
            "connect-configs": "compact", "connect-offsets": "compact", "connect-status": "compact"}
        [workers] = client.request(DESCRIBE_GROUPS, 5, {"groups": ["connect-cluster"],
                                                        "include_authorized_operations": False})["groups"]
        assert (workers["error_code"], workers["group_state"], workers["protocol_type"]) == (
            Errors.NONE, "Empty", "connect")
        [sink] = client.request(OFFSET_FETCH, 8, {"groups": [{"group_id": "connect-sink", "topics": None}],
                                                  "require_stable": True})["groups"]
        [topic] = sink["topics"]
        committed = topic["partitions"][0]["committed_offset"]
        [[end]] = [[p["offset"] for p in t["partitions"]] for t in client.request(LIST_OFFSETS, 5, {
            "replica_id": -1, "isolation_level": 0, "topics": [{"name": "connect-lines", "partitions": [
                {"partition_index": 0, "current_leader_epoch": -1, "timestamp": -1}]}]})["topics"]]
        transactions = client.request(LIST_TRANSACTIONS, 1, {"state_filters": [], "producer_id_filters": [],
                                                             "duration_filter": -1})["transaction_states"]
        transactional_ids = sorted(t["transactional_id"] for t in transactions)
    assert topic["name"] == "connect-lines"
    if exactly_once == "enabled":
        # one commit marker per transaction (a transaction per poll of the task): the sink read
        # past all 150 records, and its position may stop short of a last marker
        assert 150 < committed <= end
        # the config topic's leader ("connect-cluster-" + group id) and the source task (group id,
        # connector, task), each its own transactional producer
        assert transactional_ids == ["connect-cluster-connect-cluster", "connect-cluster-src-0"]
    else:
        assert committed == end == 150
        assert transactional_ids == []
