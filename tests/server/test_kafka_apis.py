"""KafkaApis handlers through a real broker: idempotent produce rules, records
deletion, leader epochs, config descriptions, log dirs, cluster, offsets."""

from __future__ import annotations

import os
import time
import uuid

import pytest
from confluent_kafka import TopicPartition
from confluent_kafka.admin import AdminClient

from franz.protocol.codec import decode_response, encode_request
from franz.protocol.errors import Errors
from franz.records import MemoryRecords, SimpleRecord, build_batch
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


def test_describe_cluster_of_controllers_or_an_unknown_endpoint_type_is_refused(broker):
    """AuthHelperTest.testComputeDescribeClusterResponseV1WithUnknownEndpointType and
    ...WithUnexpectedEndpointType, from a broker's side: the error alone, every other field its
    schema default (the cluster id empty)."""
    refused = {"throttle_time_ms": 0, "endpoint_type": 1, "cluster_id": "", "controller_id": -1, "brokers": [],
               "cluster_authorized_operations": -2**31}
    with RawClient(broker.bootstrap) as client:
        for version in (1, 2):
            controllers = client.request(60, version, {"include_cluster_authorized_operations": True,
                                                       "endpoint_type": 2})
            assert controllers == {**refused, "error_code": Errors.MISMATCHED_ENDPOINT_TYPE, "error_message":
                                   "The request was sent to an endpoint of type BROKER, but we wanted an endpoint "
                                   "of type CONTROLLER"}
            for endpoint_type in (0, 3, -1):
                unknown = client.request(60, version, {"include_cluster_authorized_operations": True,
                                                       "endpoint_type": endpoint_type})
                assert unknown == {**refused, "error_code": Errors.UNSUPPORTED_ENDPOINT_TYPE,
                                   "error_message": f"Unsupported endpoint type {endpoint_type}"}
        brokers = client.request(60, 1, {"include_cluster_authorized_operations": False, "endpoint_type": 1})
        assert (brokers["error_code"], len(brokers["cluster_id"]), brokers["brokers"][0]["port"]) == (
            Errors.NONE, 22, broker.port)


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
    """ListOffsets v9+ may ask for latest tiered (-5), v11+ for earliest pending upload (-6): with
    no remote storage Kafka answers both with offset -1 and leader epoch -1, no error. Asked of
    an older version, or any other negative timestamp, is UNSUPPORTED_VERSION
    (ReplicaManager.isListOffsetsTimestampUnsupported)."""
    with RawClient(broker.bootstrap) as client:
        create_topic(client, "tiered")
        produce(client, "tiered", build_batch([SimpleRecord(value=b"v", timestamp=1_700_000_000_000)]))

        def answer_of(timestamp: int, version: int) -> dict:
            answer = client.request(2, version, {"replica_id": -1, "timeout_ms": 1000, "topics": [
                {"name": "tiered", "partitions": [{"partition_index": 0, "timestamp": timestamp}]}]})
            return answer["topics"][0]["partitions"][0]

        for version in (9, 10):  # v10 adds the request's timeout_ms (KIP-1075: for remote reads)
            partition = answer_of(-5, version)
            assert (partition["error_code"], partition["offset"], partition["timestamp"],
                    partition["leader_epoch"]) == (Errors.NONE, -1, -1, -1)
            for timestamp in (-6, -7):
                assert answer_of(timestamp, version)["error_code"] == Errors.UNSUPPORTED_VERSION
        pending = answer_of(-6, 11)
        assert (pending["error_code"], pending["offset"], pending["timestamp"], pending["leader_epoch"]) == (
            Errors.NONE, -1, -1, -1)
        assert answer_of(-7, 11)["error_code"] == Errors.UNSUPPORTED_VERSION


def _init_producer_id(client: RawClient, version: int = 4, transactional_id=None, producer_id: int = -1,
                      producer_epoch: int = -1) -> dict:
    return client.request(INIT_PRODUCER_ID, version, {"transactional_id": transactional_id,
                                                      "transaction_timeout_ms": 60_000, "producer_id": producer_id,
                                                      "producer_epoch": producer_epoch})


def _find_coordinator(client: RawClient, key: str, key_type: int) -> None:
    """FindCoordinator until it answers: the first ask creates the coordinator's topic."""
    for _ in range(100):
        if client.request(10, 3, {"key": key, "key_type": key_type})["error_code"] == Errors.NONE:
            return
        time.sleep(0.1)
    raise AssertionError(f"no coordinator for {key}")


def test_produce_is_answered_as_kafka_answers_it(broker):
    with RawClient(broker.bootstrap) as client:
        # min.insync.replicas above the replication factor counts as the factor (KAFKA-15583).
        create_topic(client, "strict", configs={"min.insync.replicas": "2"})
        assert produce(client, "strict", batch(b"all"), acks=-1)["error_code"] == Errors.NONE
        # The acks check comes after the partition's own: an unknown one is unknown first.
        assert produce(client, "nowhere", batch(b"x"), acks=2)["error_code"] == Errors.UNKNOWN_TOPIC_OR_PARTITION
        assert produce(client, "strict", batch(b"x"), acks=2)["error_code"] == Errors.INVALID_REQUIRED_ACKS
        # One append must fit in one segment.
        create_topic(client, "small", configs={"segment.bytes": "1024"})
        assert produce(client, "small", batch(b"x" * 2000))["error_code"] == Errors.RECORD_LIST_TOO_LARGE
        # A batch that the topic's codec makes larger than max.message.bytes is refused after recompression.
        incompressible = bytes(build_batch([SimpleRecord(value=os.urandom(4000))]))
        create_topic(client, "gzipped", configs={"compression.type": "gzip",
                                                 "max.message.bytes": str(len(incompressible))})
        assert produce(client, "gzipped", incompressible)["error_code"] == Errors.MESSAGE_TOO_LARGE
        # Transactional batches without a transactional id: every partition refused.
        transactional = build_batch([SimpleRecord(value=b"t")], producer_id=7, producer_epoch=0, base_sequence=0,
                                    is_transactional=True)
        assert produce(client, "strict", transactional)["error_code"] == Errors.TRANSACTIONAL_ID_AUTHORIZATION_FAILED


def test_internal_topics_take_produces_only_from_kafkas_admin_client(broker):
    with RawClient(broker.bootstrap) as client:
        _find_coordinator(client, "g", 0)  # makes __consumer_offsets
        answer = client.request(3, 12, {"topics": [{"name": "__consumer_offsets", "topic_id": b"\0" * 16}],
                                        "allow_auto_topic_creation": False,
                                        "include_topic_authorized_operations": False})
        assert answer["topics"][0]["error_code"] == Errors.NONE
        assert produce(client, "__consumer_offsets", batch(b"x"))["error_code"] == Errors.INVALID_TOPIC_EXCEPTION
        keyed = build_batch([SimpleRecord(key=b"admin", value=b"x")])  # the topic is compacted: keys only
        client.correlation_id += 1
        client.send_frame(encode_request(0, 9, client.correlation_id, "__admin_client", {
            "transactional_id": None, "acks": 1, "timeout_ms": 5000, "topic_data": [
                {"name": "__consumer_offsets", "partition_data": [{"index": 0, "records": keyed}]}]}))
        answer = decode_response(0, 9, client.receive_frame())[1]
        assert answer["responses"][0]["partition_responses"][0]["error_code"] == Errors.NONE


def test_the_share_group_state_topic_is_internal_as_in_kafka_4_3(broker):
    """Topic.isInternal of 4.3 names __share_group_state too: Metadata says so, and clients may not
    produce to it."""
    with RawClient(broker.bootstrap) as client:
        for _ in range(100):  # the first ask makes the share coordinator's topic
            answer = client.request(10, 6, {"key_type": 2, "coordinator_keys": ["g:AAAAAAAAAAAAAAAAAAAAAQ:0"]})
            if answer["coordinators"][0]["error_code"] == Errors.NONE:
                break
            time.sleep(0.1)
        metadata = client.request(3, 12, {"topics": [{"name": "__share_group_state", "topic_id": b"\0" * 16}],
                                          "allow_auto_topic_creation": False,
                                          "include_topic_authorized_operations": False})
        assert (metadata["topics"][0]["error_code"], metadata["topics"][0]["is_internal"]) == (Errors.NONE, True)
        assert produce(client, "__share_group_state", batch(b"x"))["error_code"] == Errors.INVALID_TOPIC_EXCEPTION


def test_a_duplicate_is_answered_with_its_batchs_timestamp_as_the_log_append_time(broker):
    with RawClient(broker.bootstrap) as client:
        create_topic(client, "dup")
        pid = _init_producer_id(client)["producer_id"]
        first = produce(client, "dup", _idempotent(pid, 0, b"a"))
        assert (first["error_code"], first["log_append_time_ms"]) == (Errors.NONE, -1)  # CreateTime topic
        retry = produce(client, "dup", _idempotent(pid, 0, b"a"))
        stored = MemoryRecords(bytearray(_idempotent(pid, 0, b"a")))
        assert retry["error_code"] == Errors.NONE and retry["base_offset"] == 0
        assert retry["log_append_time_ms"] > 0 and abs(retry["log_append_time_ms"] - next(
            stored.batches()).max_timestamp) < 60_000


def test_init_producer_id_refuses_half_an_identity_and_speaks_each_versions_fencing_error(broker):
    with RawClient(broker.bootstrap) as client:
        assert _init_producer_id(client, producer_id=5)["error_code"] == Errors.INVALID_REQUEST
        assert _init_producer_id(client, producer_epoch=3)["error_code"] == Errors.INVALID_REQUEST
        _find_coordinator(client, "fenced", 1)  # makes __transaction_state
        first = _init_producer_id(client, transactional_id="fenced")
        for _ in range(2):  # two newer incarnations: epoch 0 is neither the current nor the last one
            latest = _init_producer_id(client, transactional_id="fenced")
        assert latest["producer_epoch"] == 2
        stale = dict(transactional_id="fenced", producer_id=first["producer_id"], producer_epoch=0)
        assert _init_producer_id(client, version=4, **stale)["error_code"] == Errors.PRODUCER_FENCED
        assert _init_producer_id(client, version=3, **stale)["error_code"] == Errors.INVALID_PRODUCER_EPOCH


def test_a_read_committed_fetch_at_the_lso_waits_for_the_commit_not_for_open_records(broker):
    """Records of an open transaction lie past the LSO: they do not complete a parked
    read_committed fetch (DelayedFetch counts up to the LSO); the commit does."""
    from confluent_kafka import Producer
    producer = Producer({"bootstrap.servers": broker.bootstrap, "transactional.id": "open"})
    with RawClient(broker.bootstrap) as client:
        create_topic(client, "txn")
        producer.init_transactions(TIMEOUT_S)
        producer.begin_transaction()
        producer.produce("txn", value=b"pending", partition=0)
        assert producer.flush(TIMEOUT_S) == 0  # written, not committed: the LSO stays at 0
        client.correlation_id += 1
        client.send_frame(encode_request(1, 11, client.correlation_id, "raw-client", {
            "replica_id": -1, "max_wait_ms": 20_000, "min_bytes": 1, "max_bytes": 1 << 20, "isolation_level": 1,
            "session_id": 0, "session_epoch": -1, "topics": [{"topic": "txn", "partitions": [
                {"partition": 0, "current_leader_epoch": -1, "fetch_offset": 0, "log_start_offset": -1,
                 "partition_max_bytes": 1 << 20}]}], "forgotten_topics_data": [], "rack_id": ""}))
        time.sleep(0.5)  # the fetch is parked by now; an answer before the commit would carry nothing
        producer.commit_transaction(TIMEOUT_S)
        answer = decode_response(1, 11, client.receive_frame())[1]
        partition = answer["responses"][0]["partitions"][0]
        assert partition["error_code"] == Errors.NONE and partition["last_stable_offset"] > 0
        values = [r.value for b in MemoryRecords(bytearray(partition["records"])).batches() if not b.is_control_batch
                  for r in b.records()]
        assert values == [b"pending"]


def test_list_offsets_and_delete_records_are_refused_as_kafka_refuses_them(broker):
    with RawClient(broker.bootstrap) as client:
        create_topic(client, "lo")
        produce(client, "lo", batch(b"1", b"2"))

        def list_offset(version: int, timestamp: int) -> dict:
            body = {"replica_id": -1, "isolation_level": 0, "timeout_ms": 0, "topics": [
                {"name": "lo", "partitions": [{"partition_index": 0, "current_leader_epoch": -1,
                                               "timestamp": timestamp, "max_num_offsets": 1}]}]}
            return client.request(2, version, body)["topics"][0]["partitions"][0]
        # A special timestamp is answered only from the version that brought it (-3 v7, -4 v8, -5 v9).
        assert list_offset(6, -3)["error_code"] == Errors.UNSUPPORTED_VERSION
        assert list_offset(7, -3)["error_code"] == Errors.NONE
        assert list_offset(7, -4)["error_code"] == Errors.UNSUPPORTED_VERSION
        assert list_offset(9, -6)["error_code"] == Errors.UNSUPPORTED_VERSION
        # Latest carries the partition's leader epoch, even once the log is empty.
        client.request(21, 2, {"topics": [{"name": "lo", "partitions": [{"partition_index": 0, "offset": -1}]}],
                               "timeout_ms": 5000})
        latest = list_offset(9, -1)
        assert (latest["error_code"], latest["offset"], latest["leader_epoch"]) == (Errors.NONE, 2, 0)
        # Records of internal topics are not the clients' to delete.
        _find_coordinator(client, "g", 0)
        deleted = client.request(21, 2, {"topics": [{"name": "__consumer_offsets", "partitions": [
            {"partition_index": 0, "offset": -1}]}], "timeout_ms": 5000})
        assert deleted["topics"][0]["partitions"][0]["error_code"] == Errors.INVALID_TOPIC_EXCEPTION


def test_a_fetch_naming_a_missing_partition_still_waits_for_data(broker):
    """A partition the broker does not have is answered UNKNOWN_TOPIC_OR_PARTITION, but the
    fetch still waits for min_bytes on the others (KafkaApis sets it aside before the read);
    only naming nothing readable answers at once."""
    def fetch_body(*partitions: tuple[str, int]) -> dict:
        return {"replica_id": -1, "max_wait_ms": 20_000, "min_bytes": 1, "max_bytes": 1 << 20, "isolation_level": 0,
                "session_id": 0, "session_epoch": -1, "topics": [{"topic": name, "partitions": [
                    {"partition": index, "current_leader_epoch": -1, "fetch_offset": 0, "log_start_offset": -1,
                     "partition_max_bytes": 1 << 20}]} for name, index in partitions],
                "forgotten_topics_data": [], "rack_id": ""}
    with RawClient(broker.bootstrap) as client, RawClient(broker.bootstrap) as producer:
        create_topic(client, "waiting")
        nothing = client.request(1, 11, fetch_body(("absent", 0)))  # nothing readable: answered at once
        assert nothing["responses"][0]["partitions"][0]["error_code"] == Errors.UNKNOWN_TOPIC_OR_PARTITION
        client.correlation_id += 1
        client.send_frame(encode_request(1, 11, client.correlation_id, "raw-client",
                                         fetch_body(("absent", 0), ("waiting", 0))))
        time.sleep(0.5)  # parked by now; an answer before the produce would carry no records
        assert produce(producer, "waiting", batch(b"arrived"))["error_code"] == Errors.NONE
        answer = decode_response(1, 11, client.receive_frame())[1]
        by_topic = {t["topic"]: t["partitions"][0] for t in answer["responses"]}
        assert by_topic["absent"]["error_code"] == Errors.UNKNOWN_TOPIC_OR_PARTITION
        records = MemoryRecords(bytearray(by_topic["waiting"]["records"]))
        assert [r.value for b in records.batches() for r in b.records()] == [b"arrived"]


def test_produce_errors_carry_a_message_and_log_start_offset_only_where_kafka_gives_them(broker):
    with RawClient(broker.bootstrap) as client:
        create_topic(client, "errs", configs={"max.message.bytes": "1000"})
        create_topic(client, "keyed", configs={"cleanup.policy": "compact"})
        too_large = produce(client, "errs", batch(b"x" * 2000))
        assert (too_large["error_code"], too_large["log_start_offset"], too_large["error_message"]) == \
            (Errors.MESSAGE_TOO_LARGE, -1, None)  # UNKNOWN_LOG_APPEND_INFO, no message
        pid = _init_producer_id(client)["producer_id"]
        assert produce(client, "errs", _idempotent(pid, 0, b"first"))["error_code"] == Errors.NONE
        gap = produce(client, "errs", _idempotent(pid, 5, b"late"))
        assert (gap["error_code"], gap["log_start_offset"], gap["error_message"]) == \
            (Errors.OUT_OF_ORDER_SEQUENCE_NUMBER, 0, None)
        keyless = produce(client, "keyed", batch(b"no key"))  # a record-level failure: its message and index
        assert keyless["error_code"] == Errors.INVALID_RECORD and keyless["log_start_offset"] == 0
        assert keyless["error_message"] and [e["batch_index"] for e in keyless["record_errors"]] == [0]


def test_init_producer_id_answers_a_lost_bumps_retry_and_fences_another_producer_id(broker):
    """TransactionCoordinator.prepareInitProducerIdTransit: a retry with the epoch before the
    last bump gets the current identity unchanged; a producer id that is not this
    transactional id's is PRODUCER_FENCED, checked before an open transaction is aborted."""
    with RawClient(broker.bootstrap) as client:
        _find_coordinator(client, "retrying", 1)
        first = _init_producer_id(client, transactional_id="retrying")
        pid = first["producer_id"]
        bumped = _init_producer_id(client, transactional_id="retrying", producer_id=pid, producer_epoch=0)
        assert (bumped["error_code"], bumped["producer_id"], bumped["producer_epoch"]) == (Errors.NONE, pid, 1)
        retry = _init_producer_id(client, transactional_id="retrying", producer_id=pid, producer_epoch=0)
        assert (retry["error_code"], retry["producer_id"], retry["producer_epoch"]) == (Errors.NONE, pid, 1)
        create_topic(client, "retrying-topic")
        added = client.request(24, 3, {"v3_and_below_transactional_id": "retrying", "v3_and_below_producer_id": pid,
                                       "v3_and_below_producer_epoch": 1,
                                       "v3_and_below_topics": [{"name": "retrying-topic", "partitions": [0]}]})
        assert added["results_by_topic_v3_and_below"][0]["results_by_partition"][0]["partition_error_code"] \
            == Errors.NONE  # now Ongoing
        other = _init_producer_id(client, transactional_id="retrying", producer_id=pid + 1000, producer_epoch=1)
        assert other["error_code"] == Errors.PRODUCER_FENCED
        again = _init_producer_id(client, transactional_id="retrying", producer_id=pid, producer_epoch=1)
        assert again["error_code"] == Errors.CONCURRENT_TRANSACTIONS  # its own producer: the open one is aborted


def _list_offsets(client: RawClient, partitions: list[tuple[str, int, int]]) -> dict:
    """ListOffsets v9 of (topic, partition, current leader epoch), each asking for latest."""
    topics: dict[str, list] = {}
    for name, index, epoch in partitions:
        topics.setdefault(name, []).append({"partition_index": index, "current_leader_epoch": epoch, "timestamp": -1})
    answer = client.request(2, 9, {"replica_id": -1, "isolation_level": 0, "topics": [
        {"name": name, "partitions": entries} for name, entries in topics.items()]})
    return {(topic["name"], p["partition_index"]): p for topic in answer["topics"] for p in topic["partitions"]}


def test_list_offsets_checks_the_leader_epoch_and_refuses_a_partition_named_twice(broker):
    """ReplicaManager.fetchOffset: a partition named twice is answered once, INVALID_REQUEST; a
    current leader epoch newer than the partition's is UNKNOWN_LEADER_EPOCH (-1: unchecked)."""
    with RawClient(broker.bootstrap) as client:
        create_topic(client, "epochs", partitions=2)
        produce(client, "epochs", batch(b"1", b"2"))
        answers = _list_offsets(client, [("epochs", 0, 0), ("epochs", 1, -1), ("epochs", 1, 0)])
        assert len(answers) == 2
        assert (answers["epochs", 0]["error_code"], answers["epochs", 0]["offset"]) == (Errors.NONE, 2)
        assert (answers["epochs", 1]["error_code"], answers["epochs", 1]["offset"]) == (Errors.INVALID_REQUEST, -1)
        newer = _list_offsets(client, [("epochs", 0, 1)])["epochs", 0]
        assert (newer["error_code"], newer["offset"], newer["leader_epoch"]) == (Errors.UNKNOWN_LEADER_EPOCH, -1, -1)


def _fetch_v12(client: RawClient, partitions: list[dict], session_id: int = 0, session_epoch: int = -1,
               version: int = 12) -> dict:
    """A Fetch by topic name of `partitions` (topic, partition, and any fields to set)."""
    topics: dict[str, list] = {}
    for partition in partitions:
        entry = {"current_leader_epoch": -1, "fetch_offset": 0, "last_fetched_epoch": -1, "log_start_offset": -1,
                 "partition_max_bytes": 1 << 20} | partition
        topics.setdefault(entry.pop("topic"), []).append(entry)
    return client.request(1, version, {
        "replica_id": -1, "max_wait_ms": 0, "min_bytes": 0, "max_bytes": 1 << 20, "isolation_level": 0,
        "session_id": session_id, "session_epoch": session_epoch, "forgotten_topics_data": [], "rack_id": "",
        "topics": [{"topic": name, "partitions": entries} for name, entries in topics.items()]})


def test_fetch_checks_the_leader_epoch_and_answers_a_diverging_fetcher(broker):
    """Partition.readRecords: a current leader epoch newer than the partition's is
    UNKNOWN_LEADER_EPOCH; a fetcher whose last fetched epoch ended in this log before its fetch
    offset has diverged and is told where that epoch ends instead of records; an epoch this log
    never had is OFFSET_OUT_OF_RANGE."""
    with RawClient(broker.bootstrap) as client:
        create_topic(client, "diverge")
        produce(client, "diverge", batch(b"1", b"2"))

        def answer(**fields) -> dict:
            return _fetch_v12(client, [{"topic": "diverge", "partition": 0} | fields])["responses"][0]["partitions"][0]

        assert answer(current_leader_epoch=0)["records"]
        newer = answer(current_leader_epoch=1)
        assert (newer["error_code"], newer["high_watermark"], newer["records"]) == (Errors.UNKNOWN_LEADER_EPOCH, -1, b"")
        same = answer(last_fetched_epoch=0, fetch_offset=1)
        assert same["error_code"] == Errors.NONE and same["records"]
        assert same["diverging_epoch"] == {"epoch": -1, "end_offset": -1}  # the tagged field's default: absent
        ahead = answer(last_fetched_epoch=0, fetch_offset=5)
        assert (ahead["error_code"], ahead["high_watermark"], ahead["records"]) == (Errors.NONE, 2, b"")
        assert ahead["diverging_epoch"] == {"epoch": 0, "end_offset": 2}
        assert answer(last_fetched_epoch=3, fetch_offset=1)["error_code"] == Errors.OFFSET_OUT_OF_RANGE


def test_a_session_partition_keeps_its_leader_epoch_and_answers_again_once_its_error_goes(broker):
    """CachedPartition.updateRequestParams and maybeUpdateResponseData: the epoch an incremental
    fetch names stays with the partition; an error answers every time and forgets the cached
    high watermark, so the first good read after it answers even with nothing new."""
    with RawClient(broker.bootstrap) as client:
        create_topic(client, "sess-epoch")
        produce(client, "sess-epoch", batch(b"1"))
        first = _fetch_v12(client, [{"topic": "sess-epoch", "partition": 0}], session_epoch=0)
        session_id = first["session_id"]
        assert session_id and first["responses"][0]["partitions"][0]["records"]
        wrong = _fetch_v12(client, [{"topic": "sess-epoch", "partition": 0, "fetch_offset": 1,
                                     "current_leader_epoch": 7}], session_id, 1)
        assert wrong["responses"][0]["partitions"][0]["error_code"] == Errors.UNKNOWN_LEADER_EPOCH
        still = _fetch_v12(client, [], session_id, 2)  # nothing named: the session's epoch 7 stands
        assert still["responses"][0]["partitions"][0]["error_code"] == Errors.UNKNOWN_LEADER_EPOCH
        fixed = _fetch_v12(client, [{"topic": "sess-epoch", "partition": 0, "fetch_offset": 1,
                                     "current_leader_epoch": 0}], session_id, 3)
        partition = fixed["responses"][0]["partitions"][0]
        assert (partition["error_code"], partition["high_watermark"], partition["records"]) == (Errors.NONE, 1, b"")
        assert _fetch_v12(client, [], session_id, 4)["responses"] == []  # nothing new now


def test_fetch_before_v10_is_refused_a_zstd_topic(broker):
    """KafkaApis.maybeConvertFetchedData: Fetch v4-9 predates zstd, so a topic that compresses
    with zstd answers it UNSUPPORTED_COMPRESSION_TYPE; v10 reads it."""
    with RawClient(broker.bootstrap) as client:
        create_topic(client, "zstd-topic", configs={"compression.type": "zstd"})
        create_topic(client, "plain-topic")
        for name in ("zstd-topic", "plain-topic"):
            produce(client, name, batch(b"1", b"2"))
        for version in (9, 10):
            answer = _fetch_v12(client, [{"topic": "zstd-topic", "partition": 0}, {"topic": "plain-topic",
                                                                                    "partition": 0}], version=version)
            zstd, plain = (topic["partitions"][0] for topic in answer["responses"])
            assert plain["error_code"] == Errors.NONE and plain["records"]
            if version == 9:
                assert (zstd["error_code"], zstd["high_watermark"], zstd["records"]) == \
                    (Errors.UNSUPPORTED_COMPRESSION_TYPE, -1, b"")
            else:
                assert zstd["error_code"] == Errors.NONE and zstd["records"]


def _transactional_batch(producer_id: int, epoch: int, sequence: int, *values: bytes) -> bytes:
    return build_batch([SimpleRecord(value=v) for v in values], producer_id=producer_id, producer_epoch=epoch,
                       base_sequence=sequence, is_transactional=True)


def _produce_transactional(client: RawClient, transactional_id: str, partitions: dict[str, bytes],
                           version: int = 9) -> dict[str, dict]:
    answer = client.request(0, version, {"transactional_id": transactional_id, "acks": -1, "timeout_ms": 5000,
                                         "topic_data": [{"name": name, "partition_data": [
                                             {"index": 0, "records": records}]} for name, records in partitions.items()]})
    return {topic["name"]: topic["partition_responses"][0] for topic in answer["responses"]}


def _log_end(client: RawClient, topic: str) -> int:
    return _list_offsets(client, [(topic, 0, -1)])[topic, 0]["offset"]


def _new_transactional_producer(client: RawClient, transactional_id: str, *topics: str) -> tuple[int, int]:
    """(producer id, epoch) of a new producer of `transactional_id`, with `topics` created."""
    _find_coordinator(client, transactional_id, 1)
    identity = _init_producer_id(client, transactional_id=transactional_id)
    for name in topics:
        create_topic(client, name)
    return identity["producer_id"], identity["producer_epoch"]


def _add_partition(client: RawClient, transactional_id: str, pid: int, epoch: int, topic: str) -> int:
    added = client.request(24, 3, {"v3_and_below_transactional_id": transactional_id, "v3_and_below_producer_id": pid,
                                   "v3_and_below_producer_epoch": epoch,
                                   "v3_and_below_topics": [{"name": topic, "partitions": [0]}]})
    return added["results_by_topic_v3_and_below"][0]["results_by_partition"][0]["partition_error_code"]


def test_a_transactional_batch_opens_a_partition_only_its_transaction_holds(broker):
    """KIP-890 verification (transaction.partition.verification.enable, on by default): the
    first transactional batch of a partition is checked with the transaction coordinator,
    so a batch its transaction does not hold never opens a transaction no coordinator would
    end (a hanging transaction). Not added: INVALID_TXN_STATE before Produce v11,
    TRANSACTION_ABORTABLE from v11; nothing is written."""
    with RawClient(broker.bootstrap) as client:
        pid, epoch = _new_transactional_producer(client, "verified", "added", "not-added")
        assert _add_partition(client, "verified", pid, epoch, "added") == Errors.NONE
        answers = _produce_transactional(client, "verified", {"added": _transactional_batch(pid, epoch, 0, b"in"),
                                                              "not-added": _transactional_batch(pid, epoch, 0, b"out")})
        assert answers["added"]["error_code"] == Errors.NONE
        assert (answers["not-added"]["error_code"], answers["not-added"]["error_message"],
                answers["not-added"]["base_offset"]) == \
            (Errors.INVALID_TXN_STATE, "Partition was not added to the transaction", -1)
        v11 = _produce_transactional(client, "verified", {"not-added": _transactional_batch(pid, epoch, 0, b"out")},
                                     version=11)
        assert v11["not-added"]["error_code"] == Errors.TRANSACTION_ABORTABLE
        assert _log_end(client, "not-added") == 0
        # The open transaction takes further batches without asking again.
        more = _produce_transactional(client, "verified", {"added": _transactional_batch(pid, epoch, 1, b"more")})
        assert more["added"]["error_code"] == Errors.NONE
        # A wrong epoch or producer id is the coordinator's answer, as a producer error.
        fenced = _produce_transactional(client, "verified", {"not-added": _transactional_batch(pid, epoch + 1, 0,
                                                                                               b"x")})
        assert fenced["not-added"]["error_code"] == Errors.INVALID_PRODUCER_EPOCH
        stranger = _produce_transactional(client, "verified", {"not-added": _transactional_batch(pid + 99, 0, 0,
                                                                                                 b"x")})
        assert stranger["not-added"]["error_code"] == Errors.INVALID_PRODUCER_ID_MAPPING


def test_a_late_batch_after_its_transaction_ended_is_refused(broker):
    """The hanging-transaction race KIP-890 closes: a batch of a transaction the producer has
    already aborted (TV1 keeps the epoch) arrives late; the partition no longer has the
    transaction open and the coordinator no longer holds the partition."""
    with RawClient(broker.bootstrap) as client:
        pid, epoch = _new_transactional_producer(client, "late", "late-topic")
        assert _add_partition(client, "late", pid, epoch, "late-topic") == Errors.NONE
        first = _produce_transactional(client, "late", {"late-topic": _transactional_batch(pid, epoch, 0, b"a")})
        assert first["late-topic"]["error_code"] == Errors.NONE
        ended = client.request(26, 3, {"transactional_id": "late", "producer_id": pid, "producer_epoch": epoch,
                                       "committed": False})
        assert ended["error_code"] == Errors.NONE
        end_before = _log_end(client, "late-topic")
        late = _produce_transactional(client, "late", {"late-topic": _transactional_batch(pid, epoch, 1, b"late")})
        assert late["late-topic"]["error_code"] == Errors.INVALID_TXN_STATE
        assert _log_end(client, "late-topic") == end_before
        last_stable = client.request(2, 9, {"replica_id": -1, "isolation_level": 1, "topics": [
            {"name": "late-topic", "partitions": [{"partition_index": 0, "timestamp": -1}]}]})
        assert last_stable["topics"][0]["partitions"][0]["offset"] == end_before  # nothing left open


def test_transactional_batches_of_two_producers_fail_the_whole_produce(broker):
    """ReplicaManager.handleProduceAppend: one request carries one transactional producer."""
    with RawClient(broker.bootstrap) as client:
        pid, epoch = _new_transactional_producer(client, "two", "two-a", "two-b")
        answers = _produce_transactional(client, "two", {"two-a": _transactional_batch(pid, epoch, 0, b"a"),
                                                         "two-b": _transactional_batch(pid + 1, epoch, 0, b"b")})
        for answer in answers.values():
            assert (answer["error_code"], answer["error_message"]) == \
                (Errors.INVALID_PRODUCER_ID_MAPPING, "Transactional records contained more than one producer ID")


def test_add_partitions_to_txn_v4_verify_only_adds_nothing(broker):
    """AddPartitionsToTxn v4 with verify_only (what a broker sends its transaction coordinator):
    each partition's answer says whether the transaction holds it, and none is added."""
    with RawClient(broker.bootstrap) as client:
        pid, epoch = _new_transactional_producer(client, "verify-only", "vo")

        def add(verify_only: bool) -> int:
            answer = client.request(24, 4, {"transactions": [{
                "transactional_id": "verify-only", "producer_id": pid, "producer_epoch": epoch,
                "verify_only": verify_only, "topics": [{"name": "vo", "partitions": [0]}]}]})
            return answer["results_by_transaction"][0]["topic_results"][0]["results_by_partition"][0][
                "partition_error_code"]

        assert add(verify_only=True) == Errors.TRANSACTION_ABORTABLE
        assert add(verify_only=True) == Errors.TRANSACTION_ABORTABLE  # still not added
        assert add(verify_only=False) == Errors.NONE
        assert add(verify_only=True) == Errors.NONE


def _metadata(client: RawClient, name: str, auto_create: bool) -> dict:
    answer = client.request(3, 12, {"topics": [{"name": name, "topic_id": bytes(16)}],
                                    "allow_auto_topic_creation": auto_create})
    return answer["topics"][0]


def test_metadata_without_auto_creation_tells_an_invalid_name_from_a_missing_topic(broker):
    """KafkaApis.getTopicMetadata: a name no topic may have is INVALID_TOPIC_EXCEPTION (fatal to
    clients), a missing topic UNKNOWN_TOPIC_OR_PARTITION (retriable)."""
    with RawClient(broker.bootstrap) as client:
        assert _metadata(client, "bad name!", auto_create=False)["error_code"] == Errors.INVALID_TOPIC_EXCEPTION
        assert _metadata(client, "missing", auto_create=False)["error_code"] == Errors.UNKNOWN_TOPIC_OR_PARTITION


def test_auto_creating_the_offsets_topic_makes_it_as_the_group_coordinator_does(broker):
    """AutoTopicCreationManager: __consumer_offsets asked for in Metadata is made with
    offsets.topic.num.partitions compacted partitions, so every group can commit after."""
    with RawClient(broker.bootstrap) as client:
        topic = _metadata(client, "__consumer_offsets", auto_create=True)
        assert topic["error_code"] == Errors.NONE and len(topic["partitions"]) == 50
        configs = client.request(DESCRIBE_CONFIGS, 4, {"resources": [{
            "resource_type": 2, "resource_name": "__consumer_offsets", "configuration_keys": ["cleanup.policy"]}],
            "include_synonyms": False, "include_documentation": False})
        assert configs["results"][0]["configs"][0]["value"] == "compact"
        create_topic(client, "committed")
        _find_coordinator(client, "group-a", 0)
        answer = client.request(8, 8, {"group_id": "group-a", "generation_id_or_member_epoch": -1, "member_id": "",
                                       "group_instance_id": None, "topics": [{"name": "committed", "partitions": [
                                           {"partition_index": 0, "committed_offset": 3, "committed_leader_epoch": -1,
                                            "committed_metadata": ""}]}]})
        assert answer["topics"][0]["partitions"][0]["error_code"] == Errors.NONE


def test_metadata_by_topic_id_ignores_the_name_field(broker):
    """KafkaApis: a non-zero topic id names the topic whatever the name holds; the Java client
    asks by id with the name "" (MetadataRequest.Builder.forTopicIds, as its consumer does for
    a broker-side regex subscription)."""
    with RawClient(broker.bootstrap) as client:
        create_topic(client, "by-id", partitions=2)
        topic_id = bytes(_metadata(client, "by-id", auto_create=False)["topic_id"])
        answer = client.request(3, 12, {"topics": [{"name": "", "topic_id": topic_id}],
                                        "allow_auto_topic_creation": False})["topics"][0]
        assert (answer["error_code"], answer["name"], len(answer["partitions"])) == (Errors.NONE, "by-id", 2)
        unknown = client.request(3, 12, {"topics": [{"name": "", "topic_id": bytes(range(16))}],
                                         "allow_auto_topic_creation": False})["topics"][0]
        assert unknown["error_code"] == Errors.UNKNOWN_TOPIC_ID


def test_metadata_answers_a_topic_named_twice_once(broker):
    """KafkaApis.handleTopicMetadataRequest takes the request's names as a set, or its non-zero
    topic ids when it has any (then an entry naming a topic only by name goes unanswered)."""
    with RawClient(broker.bootstrap) as client:
        create_topic(client, "twice")
        by_name = client.request(3, 12, {"topics": [{"name": name, "topic_id": bytes(16)} for name in (
            "twice", "absent", "twice", "absent")], "allow_auto_topic_creation": False})
        assert [(t["name"], t["error_code"]) for t in by_name["topics"]] == [
            ("twice", Errors.NONE), ("absent", Errors.UNKNOWN_TOPIC_OR_PARTITION)]
        created = client.request(3, 12, {"topics": [{"name": "made", "topic_id": bytes(16)}] * 2,
                                         "allow_auto_topic_creation": True})
        assert [t["name"] for t in created["topics"]] == ["made"]
        topic_id, unknown = bytes(by_name["topics"][0]["topic_id"]), bytes(range(16))
        by_id = client.request(3, 12, {"topics": [
            {"name": "", "topic_id": topic_id}, {"name": "made", "topic_id": bytes(16)},
            {"name": "twice", "topic_id": topic_id}, {"name": "", "topic_id": unknown},
            {"name": None, "topic_id": unknown}], "allow_auto_topic_creation": False})
        assert [(t["name"], bytes(t["topic_id"]), t["error_code"]) for t in by_id["topics"]] == [
            ("twice", topic_id, Errors.NONE), (None, unknown, Errors.UNKNOWN_TOPIC_ID)]


@pytest.mark.parametrize("version", [10, 11])
def test_metadata_before_v12_refuses_a_null_name_or_a_topic_id(broker, version):
    """KafkaApis.handleTopicMetadataRequest: v10-11 carry topic ids in the schema but serve
    names only; either refusal is INVALID_REQUEST for every topic asked, named "" when null
    (MetadataRequest.getErrorResponse), and the connection serves on."""
    with RawClient(broker.bootstrap) as client:
        create_topic(client, "named")
        null_name = client.request(3, version, {"topics": [{"name": None, "topic_id": bytes(range(16))}],
                                                "allow_auto_topic_creation": False})
        assert [(t["error_code"], t["name"]) for t in null_name["topics"]] == [(Errors.INVALID_REQUEST, "")]
        by_id = client.request(3, version, {"topics": [{"name": "named", "topic_id": bytes(range(16))}],
                                            "allow_auto_topic_creation": False})
        assert [(t["error_code"], t["name"]) for t in by_id["topics"]] == [(Errors.INVALID_REQUEST, "named")]
        named = client.request(3, version, {"topics": [{"name": "named", "topic_id": bytes(16)}],
                                           "allow_auto_topic_creation": False})
        assert [(t["error_code"], t["name"]) for t in named["topics"]] == [(Errors.NONE, "named")]


def test_produce_v13_names_topics_by_id(broker):
    """KIP-516 in Produce (v13, the Java 4.x client's version): a topic is named by its id and
    answered under it; an id the broker does not know is UNKNOWN_TOPIC_ID; v12 still names."""
    with RawClient(broker.bootstrap) as client:
        create_topic(client, "by-id", partitions=2)
        topic_id = bytes(_metadata(client, "by-id", auto_create=False)["topic_id"])
        stranger = uuid.uuid4().bytes
        answer = client.request(0, 13, {"acks": 1, "timeout_ms": 5000, "topic_data": [
            {"topic_id": topic_id, "partition_data": [{"index": 1, "records": batch(b"one")},
                                                      {"index": 2, "records": batch(b"two")}]},
            {"topic_id": stranger, "partition_data": [{"index": 0, "records": batch(b"lost")}]}]})
        known, unknown = answer["responses"]
        assert bytes(known["topic_id"]) == topic_id and bytes(unknown["topic_id"]) == stranger
        assert sorted((p["index"], p["error_code"], p["base_offset"]) for p in known["partition_responses"]) == [
            (1, Errors.NONE, 0), (2, Errors.UNKNOWN_TOPIC_OR_PARTITION, -1)]
        assert [(p["index"], p["error_code"]) for p in unknown["partition_responses"]] == [
            (0, Errors.UNKNOWN_TOPIC_ID)]
        again = produce(client, "by-id", batch(b"named"), version=12)
        assert (again["error_code"], again["base_offset"]) == (Errors.NONE, 0)  # partition 0's first record
        # acks=0: the unknown id closes the connection, as any failed acks=0 produce does.
        client.send_frame(encode_request(0, 13, 99, "c", {"acks": 0, "timeout_ms": 5000, "topic_data": [
            {"topic_id": stranger, "partition_data": [{"index": 0, "records": batch(b"lost")}]}]}))
        assert client.receive_frame() is None


def test_produce_v12_adds_a_transactions_v2_producers_partition(broker_factory):
    """KIP-890 part 2: a v2 producer (Produce v12+) sends no AddPartitionsToTxn; the broker has
    the coordinator add the partition before the append (ReplicaManager's ADD_PARTITION), even
    with verification turned off. A producer new to the partition must start at sequence 0,
    and a fenced epoch is INVALID_PRODUCER_EPOCH. EndTxn v5 then bumps the epoch, so a late
    batch of the ended transaction is fenced rather than opening a new one."""
    broker = broker_factory({"transaction.partition.verification.enable": "false"})
    with RawClient(broker.bootstrap) as client:
        pid, epoch = _new_transactional_producer(client, "v2", "implicit")
        skipped = _produce_transactional(client, "v2", {"implicit": _transactional_batch(pid, epoch, 5, b"x")},
                                         version=12)
        assert skipped["implicit"]["error_code"] == Errors.OUT_OF_ORDER_SEQUENCE_NUMBER
        answers = _produce_transactional(client, "v2", {"implicit": _transactional_batch(pid, epoch, 0, b"in")},
                                         version=12)
        assert answers["implicit"]["error_code"] == Errors.NONE
        described = client.request(65, 0, {"transactional_ids": ["v2"]})["transaction_states"][0]
        assert (described["transaction_state"], described["topics"]) == (
            "Ongoing", [{"topic": "implicit", "partitions": [0]}])
        fenced = _produce_transactional(client, "v2", {"implicit": _transactional_batch(pid, epoch + 1, 1, b"x")},
                                        version=12)
        assert fenced["implicit"]["error_code"] == Errors.INVALID_PRODUCER_EPOCH
        ended = client.request(26, 5, {"transactional_id": "v2", "producer_id": pid, "producer_epoch": epoch,
                                       "committed": True})
        assert (ended["error_code"], ended["producer_id"], ended["producer_epoch"]) == (Errors.NONE, pid, epoch + 1)
        late = _produce_transactional(client, "v2", {"implicit": _transactional_batch(pid, epoch, 1, b"late")},
                                      version=12)
        assert late["implicit"]["error_code"] == Errors.INVALID_PRODUCER_EPOCH
        nxt = _produce_transactional(client, "v2", {"implicit": _transactional_batch(pid, epoch + 1, 0, b"next")},
                                     version=12)
        assert nxt["implicit"]["error_code"] == Errors.NONE


def test_api_versions_finalizes_transaction_version_2_and_the_group_features_at_1(broker):
    """What a new Kafka 4.3 cluster finalizes of the features franz implements (KIP-584): the
    Java client turns transactions v2 on when it reads transaction.version >= 2, share
    groups are on at share.version 1, with their APIs at 4.3's versions, and streams groups
    at streams.version 1."""
    with RawClient(broker.bootstrap) as client:
        answer = client.request(18, 3, {"client_software_name": "franz-test", "client_software_version": "1"})
    assert answer["finalized_features_epoch"] >= 0
    assert {f["name"]: (f["min_version_level"], f["max_version_level"]) for f in answer["finalized_features"]} == {
        "transaction.version": (2, 2), "group.version": (1, 1), "share.version": (1, 1), "streams.version": (1, 1)}
    assert answer["supported_features"] == []  # before v4, no feature whose minimum is 0 (KAFKA-17492)
    with RawClient(broker.bootstrap) as client:
        v4 = client.request(18, 4, {"client_software_name": "franz-test", "client_software_version": "1"})
    assert {f["name"]: (f["min_version"], f["max_version"]) for f in v4["supported_features"]} == {
        "transaction.version": (0, 2), "group.version": (0, 1), "share.version": (0, 1), "streams.version": (0, 1)}
    assert v4["finalized_features"] == answer["finalized_features"]
    ranges = {row["api_key"]: (row["min_version"], row["max_version"]) for row in answer["api_keys"]}
    assert [ranges[key] for key in (0, 24, 26, 27, 28)] == [(0, 13), (0, 5), (0, 5), (1, 2), (0, 5)]
    assert [ranges[key] for key in (76, 77, 78, 79)] == [(1, 1), (1, 1), (1, 2), (1, 2)]


def test_offset_commit_and_fetch_v10_name_topics_by_id(broker):
    """OffsetCommit and OffsetFetch v10 (what the Java 4.x consumer sends in a KIP-848 group):
    topics by id, answered by id; an id the broker does not know is UNKNOWN_TOPIC_ID; fetching
    every offset answers each committed topic under its id."""
    with RawClient(broker.bootstrap) as client:
        create_topic(client, "by-id-offsets", partitions=2)
        topic_id = bytes(_metadata(client, "by-id-offsets", auto_create=False)["topic_id"])
        stranger = uuid.uuid4().bytes
        _find_coordinator(client, "g10", 0)
        committed = client.request(8, 10, {"group_id": "g10", "generation_id_or_member_epoch": -1, "member_id": "",
                                           "group_instance_id": None, "topics": [
                                               {"topic_id": topic_id, "partitions": [
                                                   {"partition_index": 1, "committed_offset": 42,
                                                    "committed_leader_epoch": -1, "committed_metadata": "m"}]},
                                               {"topic_id": stranger, "partitions": [
                                                   {"partition_index": 0, "committed_offset": 1,
                                                    "committed_leader_epoch": -1, "committed_metadata": ""}]}]})
        assert [(bytes(t["topic_id"]), [(p["partition_index"], p["error_code"]) for p in t["partitions"]])
                for t in committed["topics"]] == [(topic_id, [(1, Errors.NONE)]),
                                                  (stranger, [(0, Errors.UNKNOWN_TOPIC_ID)])]

        def fetch(topics):
            answer = client.request(9, 10, {"groups": [{"group_id": "g10", "member_id": None, "member_epoch": -1,
                                                        "topics": topics}], "require_stable": True})
            return [(bytes(t["topic_id"]), [(p["partition_index"], p["committed_offset"], p["error_code"])
                                            for p in t["partitions"]]) for t in answer["groups"][0]["topics"]]

        assert fetch([{"topic_id": topic_id, "partition_indexes": [0, 1]},
                      {"topic_id": stranger, "partition_indexes": [0]}]) == [
            (topic_id, [(0, -1, Errors.NONE), (1, 42, Errors.NONE)]), (stranger, [(0, -1, Errors.UNKNOWN_TOPIC_ID)])]
        assert fetch(None) == [(topic_id, [(1, 42, Errors.NONE)])]
        # v9 still names them.
        named = client.request(9, 9, {"groups": [{"group_id": "g10", "member_id": None, "member_epoch": -1,
                                                  "topics": None}], "require_stable": True})
        assert named["groups"][0]["topics"][0]["name"] == "by-id-offsets"


def test_the_newest_versions_kafka_4_3_serves_answer_as_it_does(broker):
    """Versions the Java 4.3 clients speak to a 4.3 broker: Metadata v13 (a top-level error
    code), Fetch v18 (a follower's high watermark, tagged), DescribeCluster v2 (fenced brokers:
    never this one), DescribeLogDirs v5 (cordoned dirs: none), AlterPartitionReassignments v1
    (the replication-factor flag answered back)."""
    with RawClient(broker.bootstrap) as client:
        create_topic(client, "newest")
        topic_id = bytes(_metadata(client, "newest", auto_create=False)["topic_id"])
        metadata = client.request(3, 13, {"topics": [{"name": "newest", "topic_id": bytes(16)}],
                                          "allow_auto_topic_creation": False,
                                          "include_topic_authorized_operations": False})
        assert (metadata["error_code"], metadata["topics"][0]["error_code"]) == (Errors.NONE, Errors.NONE)
        produce(client, "newest", batch(b"a", b"b"))
        fetched = client.request(1, 18, {
            "replica_id": -1, "max_wait_ms": 0, "min_bytes": 0, "max_bytes": 1 << 20, "isolation_level": 0,
            "session_id": 0, "session_epoch": -1, "forgotten_topics_data": [], "rack_id": "",
            "topics": [{"topic_id": topic_id, "partitions": [{"partition": 0, "fetch_offset": 0,
                                                              "partition_max_bytes": 1 << 20,
                                                              "high_watermark": 2}]}]})
        partition = fetched["responses"][0]["partitions"][0]
        assert (partition["error_code"], partition["high_watermark"]) == (Errors.NONE, 2)
        cluster = client.request(60, 2, {"include_cluster_authorized_operations": False,
                                         "include_fenced_brokers": True})
        assert [(b["broker_id"], b["is_fenced"]) for b in cluster["brokers"]] == [(1, False)]
        dirs = client.request(35, 5, {"topics": None})
        assert dirs["error_code"] == Errors.NONE and [d["is_cordoned"] for d in dirs["results"]] == [False]
        reassigned = client.request(45, 1, {"allow_replication_factor_change": False, "topics": [
            {"name": "newest", "partitions": [{"partition_index": 0, "replicas": [1]}]}]})
        assert reassigned["allow_replication_factor_change"] is False
        assert reassigned["responses"][0]["partitions"][0]["error_code"] == Errors.NONE


def test_a_transaction_being_ended_is_told_to_v2_producers_as_it_is():
    """ReplicaManager's translation of the coordinator's answer: CONCURRENT_TRANSACTIONS became
    retriable NOT_ENOUGH_REPLICAS for transactions-v1 produces only; a v2 producer (Produce
    v12+) hears CONCURRENT_TRANSACTIONS, common while markers are still being written."""
    from franz.server.kafka_apis import _unverified_answer
    assert _unverified_answer(Errors.CONCURRENT_TRANSACTIONS, 11)["error_code"] == Errors.NOT_ENOUGH_REPLICAS
    assert _unverified_answer(Errors.CONCURRENT_TRANSACTIONS, 12) == {"error_code": Errors.CONCURRENT_TRANSACTIONS}
    assert _unverified_answer(Errors.NOT_COORDINATOR, 13)["error_code"] == Errors.NOT_ENOUGH_REPLICAS


def test_list_config_resources_refuses_a_type_it_cannot_list(broker):
    """ListConfigResources: a resource type outside the version's supported ones fails the whole
    request UNSUPPORTED_VERSION; v0 (ListClientMetricsResources) lists client metrics only."""
    with RawClient(broker.bootstrap) as client:
        assert client.request(74, 1, {"resource_types": [2, 1]})["error_code"] == Errors.UNSUPPORTED_VERSION
        assert client.request(74, 1, {"resource_types": [4]})["config_resources"] == [
            {"resource_name": "1", "resource_type": 4}]
        v0 = client.request(74, 0, {})
        assert (v0["error_code"], v0["config_resources"]) == (Errors.NONE, [])
