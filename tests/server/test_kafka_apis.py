"""KafkaApis handlers through a real broker: idempotent produce rules, records
deletion, leader epochs, config descriptions, log dirs, cluster, offsets."""

from __future__ import annotations

import pytest
from confluent_kafka import TopicPartition
from confluent_kafka.admin import AdminClient

from franz.protocol.errors import Errors
from franz.records import SimpleRecord, build_batch
from tests.support.raw_client import RawClient, batch, create_topic, produce

INIT_PRODUCER_ID, OFFSET_FOR_LEADER_EPOCH, DESCRIBE_LOG_DIRS, DESCRIBE_CONFIGS = 22, 23, 35, 32
TIMEOUT_S = 30


def _idempotent(producer_id: int, sequence: int, *values: bytes) -> bytes:
    return build_batch([SimpleRecord(value=v) for v in values], producer_id=producer_id, producer_epoch=0,
                       base_sequence=sequence)


def test_idempotent_retries_get_the_original_offsets_and_gaps_are_refused(broker):
    with RawClient(broker.bootstrap) as client:
        create_topic(client, "idem")
        answer = client.request(INIT_PRODUCER_ID, 4, {"transactional_id": None, "transaction_timeout_ms": -1,
                                                      "producer_id": -1, "producer_epoch": -1})
        assert answer["error_code"] == 0
        pid = answer["producer_id"]
        assert produce(client, "idem", _idempotent(pid, 0, b"a", b"b"))["base_offset"] == 0
        assert produce(client, "idem", _idempotent(pid, 2, b"c"))["base_offset"] == 2
        retry = produce(client, "idem", _idempotent(pid, 0, b"a", b"b"))
        assert (retry["error_code"], retry["base_offset"]) == (0, 0)
        gap = produce(client, "idem", _idempotent(pid, 9, b"z"))
        assert gap["error_code"] == Errors.OUT_OF_ORDER_SEQUENCE_NUMBER
        again = client.request(INIT_PRODUCER_ID, 4, {"transactional_id": None, "transaction_timeout_ms": -1,
                                                     "producer_id": -1, "producer_epoch": -1})
        assert again["producer_id"] != pid


def test_producer_ids_are_not_reused_after_a_crash(broker):
    request = {"transactional_id": None, "transaction_timeout_ms": -1, "producer_id": -1, "producer_epoch": -1}
    with RawClient(broker.bootstrap) as client:
        first = client.request(INIT_PRODUCER_ID, 4, request)["producer_id"]
    broker.kill()
    broker.start()
    with RawClient(broker.bootstrap) as client:
        assert client.request(INIT_PRODUCER_ID, 4, request)["producer_id"] > first


def test_delete_records_moves_the_log_start_offset(broker):
    admin = AdminClient({"bootstrap.servers": broker.bootstrap})
    with RawClient(broker.bootstrap) as client:
        create_topic(client, "del")
        produce(client, "del", batch(b"1", b"2", b"3", b"4"))
    result = admin.delete_records([TopicPartition("del", 0, 3)])
    deleted = next(iter(result.values())).result(TIMEOUT_S)
    assert deleted.low_watermark == 3
    beyond = admin.delete_records([TopicPartition("del", 0, 99)])
    with pytest.raises(Exception, match="OFFSET_OUT_OF_RANGE|out of range"):
        next(iter(beyond.values())).result(TIMEOUT_S)


def test_offsets_for_leader_epoch_ends_at_the_log_end(broker):
    with RawClient(broker.bootstrap) as client:
        create_topic(client, "epochs")
        produce(client, "epochs", batch(b"a", b"b", b"c"))
        answer = client.request(OFFSET_FOR_LEADER_EPOCH, 4, {"replica_id": -1, "topics": [
            {"topic": "epochs", "partitions": [{"partition": 0, "current_leader_epoch": 0, "leader_epoch": 0}]}]})
        partition = answer["topics"][0]["partitions"][0]
        assert (partition["error_code"], partition["leader_epoch"], partition["end_offset"]) == (0, 0, 3)
        fenced = client.request(OFFSET_FOR_LEADER_EPOCH, 4, {"replica_id": -1, "topics": [
            {"topic": "epochs", "partitions": [{"partition": 0, "current_leader_epoch": 5, "leader_epoch": 0}]}]})
        assert fenced["topics"][0]["partitions"][0]["error_code"] == Errors.UNKNOWN_LEADER_EPOCH


def test_broker_configs_are_described_with_their_source(broker):
    with RawClient(broker.bootstrap) as client:
        answer = client.request(DESCRIBE_CONFIGS, 4, {"resources": [
            {"resource_type": 4, "resource_name": "1", "configuration_keys": ["num.partitions", "log.dirs"]}],
            "include_synonyms": False})
        configs = {c["name"]: c for c in answer["results"][0]["configs"]}
        assert configs["num.partitions"]["value"] == "1"
        assert configs["num.partitions"]["config_source"] == 5  # DEFAULT_CONFIG
        assert configs["log.dirs"]["config_source"] == 4  # STATIC_BROKER_CONFIG


def test_describe_log_dirs_and_cluster(broker):
    with RawClient(broker.bootstrap) as client:
        create_topic(client, "dirs", 2)
        produce(client, "dirs", batch(b"x" * 100))
        answer = client.request(DESCRIBE_LOG_DIRS, 4, {"topics": None})
        result = answer["results"][0]
        assert result["log_dir"] == str(broker.data_dir.resolve())
        partitions = {p["partition_index"]: p for p in result["topics"][0]["partitions"]}
        assert partitions[0]["partition_size"] > 100 and partitions[1]["partition_size"] == 0
        cluster = client.request(60, 1, {})
        assert cluster["brokers"][0]["port"] == broker.port and cluster["controller_id"] == 1


def test_list_offsets_earliest_latest_max_timestamp_and_by_time(broker):
    with RawClient(broker.bootstrap) as client:
        create_topic(client, "lo")
        stamps = [1_700_000_000_000 + delta for delta in (5, 50, 20)]
        for stamp in stamps:
            produce(client, "lo", build_batch([SimpleRecord(value=b"v", timestamp=stamp)]))

        def offset_of(timestamp: int) -> tuple[int, int]:
            answer = client.request(2, 7, {"replica_id": -1, "topics": [
                {"name": "lo", "partitions": [{"partition_index": 0, "timestamp": timestamp}]}]})
            partition = answer["topics"][0]["partitions"][0]
            assert partition["error_code"] == 0
            return partition["offset"], partition["timestamp"]

        assert offset_of(-2)[0] == 0
        assert offset_of(-1)[0] == 3
        assert offset_of(-3) == (1, stamps[1])  # the record with the largest timestamp
        assert offset_of(stamps[0] + 1) == (1, stamps[1])  # first record at or after the time
        assert offset_of(stamps[1] + 1)[0] == -1


def test_list_offsets_of_tiered_storage_and_unknown_negative_timestamps_answer_as_kafka(broker):
    """ListOffsets v9+ may ask for latest tiered (-5) and v11 for earliest pending upload (-6):
    with no remote storage Kafka answers offset -1 and leader epoch -1, no error. Another
    negative timestamp is a search by time, which finds the first record."""
    with RawClient(broker.bootstrap) as client:
        create_topic(client, "tiered")
        produce(client, "tiered", build_batch([SimpleRecord(value=b"v", timestamp=1_700_000_000_000)]))

        def answer_of(timestamp: int, version: int) -> dict:
            answer = client.request(2, version, {"replica_id": -1, "timeout_ms": 1000, "topics": [
                {"name": "tiered", "partitions": [{"partition_index": 0, "timestamp": timestamp}]}]})
            return answer["topics"][0]["partitions"][0]

        for version in (9, 10):  # v10 adds the request's timeout_ms (KIP-1075: for remote reads)
            for timestamp in (-5, -6):
                partition = answer_of(timestamp, version)
                assert (partition["error_code"], partition["offset"], partition["timestamp"],
                        partition["leader_epoch"]) == (Errors.NONE, -1, -1, -1)
            partition = answer_of(-7, version)
            assert (partition["error_code"], partition["offset"], partition["timestamp"]) == \
                   (Errors.NONE, 0, 1_700_000_000_000)
