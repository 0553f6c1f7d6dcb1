"""MetadataCache: a partition whose log a disk error took offline has no leader, as Kafka's
controller leaves a partition whose only replica's dir failed; Metadata, DescribeTopicPartitions
and FindCoordinator answer so until the topic is deleted or a restart recovers the log."""

from __future__ import annotations

import os
import re
import time
import urllib.request

from franz.common.utils import partition_for_key
from franz.coordinator.group.group_coordinator_record_serde import partition_for
from franz.protocol.errors import Errors
from tests.support.broker import free_port
from tests.support.broker_on_thread import BrokerOnThread
from tests.support.failing_disk import descriptor_swapped
from tests.support.raw_client import RawClient, batch, create_topic, produce

METADATA, FIND_COORDINATOR, OFFSET_COMMIT, DELETE_TOPICS, DESCRIBE_TOPIC_PARTITIONS = 3, 10, 8, 20, 75
OFFSET_FETCH, HEARTBEAT, DESCRIBE_GROUPS, LIST_GROUPS, INIT_PRODUCER_ID = 9, 12, 15, 16, 22
DESCRIBE_TRANSACTIONS, LIST_TRANSACTIONS, CONSUMER_GROUP_DESCRIBE = 65, 66, 69
ALTER_REPLICA_LOG_DIRS, ELECT_LEADERS, DESCRIBE_SHARE_GROUP_OFFSETS = 34, 43, 90
LEADER_ROWS = ("error_code", "partition_index", "leader_id", "replica_nodes", "isr_nodes", "offline_replicas")


def _metadata(client: RawClient, topic: str) -> list[tuple]:
    answer = client.request(METADATA, 12, {"topics": [{"name": topic, "topic_id": bytes(16)}],
                                           "allow_auto_topic_creation": False,
                                           "include_topic_authorized_operations": False})
    return [tuple(p[key] for key in LEADER_ROWS) for p in answer["topics"][0]["partitions"]]


def _described(client: RawClient, topic: str) -> list[tuple]:
    answer = client.request(DESCRIBE_TOPIC_PARTITIONS, 0, {"topics": [{"name": topic}],
                                                           "response_partition_limit": 100, "cursor": None})
    return [tuple(p[key] for key in LEADER_ROWS) for p in answer["topics"][0]["partitions"]]


def _coordinators(client: RawClient, groups: list[str]) -> list[tuple[int, int]]:
    answer = client.request(FIND_COORDINATOR, 4, {"key_type": 0, "coordinator_keys": groups})
    return [(c["error_code"], c["node_id"]) for c in answer["coordinators"]]


def _commit(client: RawClient, group: str, topic: str) -> int:
    answer = client.request(OFFSET_COMMIT, 8, {
        "group_id": group, "generation_id_or_member_epoch": -1, "member_id": "", "group_instance_id": None,
        "topics": [{"name": topic, "partitions": [{"partition_index": 1, "committed_offset": 1,
                                                   "committed_leader_epoch": -1, "committed_metadata": ""}]}]})
    return answer["topics"][0]["partitions"][0]["error_code"]


def _segment_descriptor(broker: BrokerOnThread, topic: str, partition: int) -> int:
    return broker.server.log_manager.get_log(topic, partition).local_log.segments.active_segment.log.fd


def test_an_offline_partition_has_no_leader_and_a_coordinator_on_one_is_not_found_until_a_restart(tmp_path):
    """Every append is fsynced (log.flush.interval.messages=1), and the fsync of a segment whose
    descriptor was made /dev/null's fails (EINVAL): that log goes offline. Metadata answers its
    partition LEADER_NOT_AVAILABLE with leader -1 and this node offline; DescribeTopicPartitions
    leader -1; the partition beside it, and a group on another __consumer_offsets partition, are
    answered as before. The topic made again after a deletion, and everything after a restart,
    has its leader back."""
    overrides = {"log.flush.interval.messages": "1", "offsets.topic.num.partitions": "2"}
    lost, kept = (next(g for g in ("g0", "g1", "g2", "g3") if partition_for(g, 2) == p) for p in (0, 1))
    live = [(0, 0, 1, [1], [1], []), (0, 1, 1, [1], [1], [])]
    broker = BrokerOnThread(tmp_path / "data", overrides)
    try:
        with RawClient(broker.bootstrap) as client:
            create_topic(client, "t", 2)
            for _ in range(100):  # the first ask creates __consumer_offsets
                if _coordinators(client, [lost, kept]) == [(0, 1), (0, 1)]:
                    break
                time.sleep(0.05)
            assert _commit(client, lost, "t") == _commit(client, kept, "t") == 0
            assert _metadata(client, "t") == _described(client, "t") == live

            with descriptor_swapped(_segment_descriptor(broker, "t", 0), os.devnull, os.O_RDWR):
                assert produce(client, "t", batch(b"lost"))["error_code"] == Errors.KAFKA_STORAGE_ERROR
            leaderless = (Errors.LEADER_NOT_AVAILABLE, 0, -1, [1], [1], [1])
            assert _metadata(client, "t") == [leaderless, live[1]]
            assert _described(client, "t") == [(0, *leaderless[1:]), live[1]]

            with descriptor_swapped(_segment_descriptor(broker, "__consumer_offsets", 0), os.devnull, os.O_RDWR):
                assert _commit(client, lost, "t") == Errors.NOT_COORDINATOR
            assert _coordinators(client, [lost, kept]) == [(Errors.COORDINATOR_NOT_AVAILABLE, -1), (0, 1)]
            assert _commit(client, kept, "t") == 0

            deleted = client.request(DELETE_TOPICS, 4, {"topic_names": ["t"], "timeout_ms": 10_000})
            assert deleted["responses"][0]["error_code"] == 0
            create_topic(client, "t", 2)
            assert _metadata(client, "t") == live
    finally:
        broker.stop()
    broker = BrokerOnThread(tmp_path / "data", overrides)
    try:
        with RawClient(broker.bootstrap) as client:
            assert _coordinators(client, [lost, kept]) == [(0, 1), (0, 1)]
            assert _commit(client, lost, "t") == 0
    finally:
        broker.stop()


def test_the_coordinators_resign_an_offline_partition(tmp_path):
    """Kafka's coordinators resign a partition that lost its leader: its groups and transactional
    ids are answered NOT_COORDINATOR (one group's APIs as a whole, the batched ones per group or
    id) and left out of ListGroups and ListTransactions; the other partition serves on."""
    overrides = {"log.flush.interval.messages": "1", "offsets.topic.num.partitions": "2",
                 "transaction.state.log.num.partitions": "2"}
    lost, kept = (next(g for g in ("g0", "g1", "g2", "g3") if partition_for(g, 2) == p) for p in (0, 1))
    lost_tx, kept_tx = (next(t for t in ("t0", "t1", "t2", "t3") if partition_for_key(t, 2) == p) for p in (0, 1))
    broker = BrokerOnThread(tmp_path / "data", overrides)
    try:
        with RawClient(broker.bootstrap) as client:
            create_topic(client, "t", 2)
            for key_type, keys in ((0, [lost, kept]), (1, [lost_tx, kept_tx])):  # makes the internal topics
                for _ in range(100):
                    answer = client.request(FIND_COORDINATOR, 4, {"key_type": key_type, "coordinator_keys": keys})
                    if all(c["error_code"] == 0 for c in answer["coordinators"]):
                        break
                    time.sleep(0.05)
            assert _commit(client, lost, "t") == _commit(client, kept, "t") == 0
            assert [_init_producer_id(client, tx) for tx in (lost_tx, kept_tx)] == [0, 0]

            for topic, write in (("__consumer_offsets", lambda: _commit(client, lost, "t")),
                                 ("__transaction_state", lambda: _init_producer_id(client, lost_tx))):
                with descriptor_swapped(_segment_descriptor(broker, topic, 0), os.devnull, os.O_RDWR):
                    assert write() == Errors.NOT_COORDINATOR  # the write failed: KAFKA_STORAGE_ERROR, mapped

            heartbeat = client.request(HEARTBEAT, 4, {"group_id": lost, "generation_id": 1, "member_id": "m",
                                                      "group_instance_id": None})
            assert heartbeat["error_code"] == Errors.NOT_COORDINATOR
            asked = [{"group_id": group, "topics": None} for group in (lost, kept)]
            fetched = client.request(OFFSET_FETCH, 8, {"require_stable": False, "groups": asked})
            assert [(g["error_code"], len(g["topics"])) for g in fetched["groups"]] == [(Errors.NOT_COORDINATOR, 0),
                                                                                        (0, 1)]
            described = client.request(DESCRIBE_GROUPS, 5, {"groups": [lost, kept],
                                                            "include_authorized_operations": False})
            assert [(g["error_code"], g["group_state"]) for g in described["groups"]] == [
                (Errors.NOT_COORDINATOR, ""), (0, "Empty")]
            listed = client.request(LIST_GROUPS, 4, {"states_filter": []})
            assert [g["group_id"] for g in listed["groups"]] == [kept]
            described = client.request(CONSUMER_GROUP_DESCRIBE, 0, {"group_ids": [lost, kept],
                                                                    "include_authorized_operations": False})
            assert [(g["error_code"], g["group_state"]) for g in described["groups"]] == [
                (Errors.NOT_COORDINATOR, ""), (Errors.GROUP_ID_NOT_FOUND, "")]  # kept: a classic group
            share_offsets = client.request(DESCRIBE_SHARE_GROUP_OFFSETS, 0, {
                "groups": [{"group_id": group, "topics": None} for group in (lost, kept)]})
            assert [(g["error_code"], g["error_message"]) for g in share_offsets["groups"]] == [
                (Errors.NOT_COORDINATOR, "This is not the correct coordinator."), (0, None)]

            assert _init_producer_id(client, lost_tx) == Errors.NOT_COORDINATOR
            transactions = client.request(DESCRIBE_TRANSACTIONS, 0, {"transactional_ids": [lost_tx, kept_tx]})
            assert [t["error_code"] for t in transactions["transaction_states"]] == [Errors.NOT_COORDINATOR, 0]
            listed = client.request(LIST_TRANSACTIONS, 0, {"state_filters": [], "producer_id_filters": []})
            assert [t["transactional_id"] for t in listed["transaction_states"]] == [kept_tx]
            assert _commit(client, kept, "t") == _init_producer_id(client, kept_tx) == 0
    finally:
        broker.stop()


def _init_producer_id(client: RawClient, transactional_id: str) -> int:
    return client.request(INIT_PRODUCER_ID, 4, {"transactional_id": transactional_id, "transaction_timeout_ms": 60_000,
                                                "producer_id": -1, "producer_epoch": -1})["error_code"]


def test_an_offline_partition_is_not_elected_moved_or_counted_as_led(tmp_path):
    """ElectLeaders answers the leaderless partition as ReplicationControlManager.electLeader
    does (no replica to elect) and lists it when asked for every partition; AlterReplicaLogDirs
    refuses to move it (KAFKA_STORAGE_ERROR, HostedPartition.Offline); the metrics count it
    offline and drop its partition and log gauges, as Kafka's markPartitionOffline does."""
    first, second, port = tmp_path / "a", tmp_path / "b", free_port()
    broker = BrokerOnThread(first, {"log.dirs": f"{first},{second}", "metrics.port": str(port),
                                    "log.flush.interval.messages": "1"})
    try:
        with RawClient(broker.bootstrap) as client:
            create_topic(client, "t", 2)
            with descriptor_swapped(_segment_descriptor(broker, "t", 0), os.devnull, os.O_RDWR):
                assert produce(client, "t", batch(b"lost"))["error_code"] == Errors.KAFKA_STORAGE_ERROR

            def elect(election_type: int, partitions: list[int] | None) -> list[tuple[str, int, int, str]]:
                answer = client.request(ELECT_LEADERS, 2, {"election_type": election_type, "timeout_ms": 5000,
                                                           "topic_partitions": None if partitions is None else [
                                                               {"topic": "t", "partitions": partitions}]})
                return [(r["topic"], p["partition_id"], p["error_code"], p["error_message"])
                        for r in answer["replica_election_results"] for p in r["partition_result"]]

            assert elect(0, [0, 1]) == [("t", 0, Errors.PREFERRED_LEADER_NOT_AVAILABLE,
                                         "The preferred leader was not available."),
                                        ("t", 1, Errors.ELECTION_NOT_NEEDED,
                                         "Leader election not needed for topic partition.")]
            assert elect(1, None) == [("t", 0, Errors.ELIGIBLE_LEADERS_NOT_AVAILABLE,
                                       "Eligible topic partition leaders are not available.")]
            elsewhere = {log.topic_partition: str(second if log.dir.parent == first else first)
                         for log in broker.server.log_manager.all_logs()}
            moved = {}
            for index in (0, 1):
                answer = client.request(ALTER_REPLICA_LOG_DIRS, 2, {"dirs": [
                    {"path": elsewhere[f"t-{index}"], "topics": [{"name": "t", "partitions": [index]}]}]})
                moved[index] = answer["results"][0]["partitions"][0]["error_code"]
            assert moved == {0: Errors.KAFKA_STORAGE_ERROR, 1: 0}

            with urllib.request.urlopen(f"http://127.0.0.1:{port}/metrics", timeout=10) as response:
                text = response.read().decode()
            counts = {name: float(re.search(rf"^kafka_\w+_{name} (\S+)$", text, re.MULTILINE).group(1))
                      for name in ("OfflinePartitionsCount", "LeaderCount", "AtMinIsrPartitionCount")}
            assert counts == {"OfflinePartitionsCount": 1, "LeaderCount": 1, "AtMinIsrPartitionCount": 1}
            gauged = {re.search(r'partition="(\d+)"', line).group(1) for line in text.splitlines()
                      if line.startswith(("kafka_log_Log_", "kafka_cluster_Partition_")) and 'topic="t"' in line}
            assert gauged == {"1"}
    finally:
        broker.stop()
