"""Bad input against a running broker process: the right Kafka error code, or
that one connection closed cleanly; the broker stays up, serves others and
loses nothing."""

from __future__ import annotations

import socket
import struct

from franz.protocol.codec import encode_request
from franz.protocol.errors import Errors
from tests.support.raw_client import RawClient, batch, create_topic, produce

PRODUCE, FETCH, LIST_OFFSETS, METADATA, API_VERSIONS, CREATE_TOPICS = 0, 1, 2, 3, 18, 19


def _still_serving(broker) -> None:
    with RawClient(broker.bootstrap) as client:
        answer = client.request(API_VERSIONS, 3, {"client_software_name": "t", "client_software_version": "1"})
        assert answer["error_code"] == 0


def test_garbage_bytes_close_only_that_connection(broker):
    with RawClient(broker.bootstrap) as other:
        with socket.create_connection(("127.0.0.1", broker.port), timeout=10) as sock:
            sock.sendall(struct.pack(">i", 12) + b"\xff" * 12)
            assert sock.recv(1) == b""
        assert other.request(METADATA, 12, {"topics": None})["brokers"]


def test_a_two_gib_size_prefix_is_refused_before_reading_the_body(broker):
    with socket.create_connection(("127.0.0.1", broker.port), timeout=10) as sock:
        sock.sendall(struct.pack(">i", 2**31 - 1))
        assert sock.recv(1) == b""
    _still_serving(broker)


def test_a_truncated_frame_then_close_leaves_the_broker_serving(broker):
    with socket.create_connection(("127.0.0.1", broker.port), timeout=10) as sock:
        sock.sendall(struct.pack(">i", 100) + b"\x00\x03\x00\x0c")
    _still_serving(broker)


def test_an_unknown_api_key_closes_the_connection(broker):
    with RawClient(broker.bootstrap) as client:
        client.send_frame(struct.pack(">hhih", 9999, 0, 1, -1))
        assert client.receive_frame() is None
    assert broker.wait_for_line("unknown API key 9999")
    _still_serving(broker)


def test_an_unsupported_api_versions_version_is_answered_in_v0_with_the_ranges(broker):
    with RawClient(broker.bootstrap) as client:
        client.send_frame(struct.pack(">hhih", API_VERSIONS, 99, 5, -1) + b"\x00")  # header v2
        frame = client.receive_frame()
        from franz.protocol.codec import decode_response
        correlation_id, answer = decode_response(API_VERSIONS, 0, frame)
        assert correlation_id == 5
        assert answer["error_code"] == Errors.UNSUPPORTED_VERSION
        assert any(row["api_key"] == PRODUCE for row in answer["api_keys"])


def test_an_unsupported_metadata_version_gets_unsupported_version_or_a_clean_close(broker):
    with RawClient(broker.bootstrap) as client:
        client.send_frame(struct.pack(">hhih", METADATA, 99, 5, -1))
        assert client.receive_frame() is None  # Metadata has no top-level error code
    with RawClient(broker.bootstrap) as client:
        client.send_frame(struct.pack(">hhih", PRODUCE, 2, 6, -1) + b"\x00" * 10)
        assert client.receive_frame() is None  # below Kafka 4.x's baseline: closed, as Kafka does
    _still_serving(broker)


def test_a_malformed_body_closes_the_connection(broker):
    with RawClient(broker.bootstrap) as client:
        client.send_frame(struct.pack(">hhih", METADATA, 1, 1, -1) + struct.pack(">i", 1000))
        assert client.receive_frame() is None
    _still_serving(broker)


def test_a_batch_with_a_bad_crc_is_refused_with_corrupt_message_and_not_written(broker):
    with RawClient(broker.bootstrap) as client:
        create_topic(client, "crc")
        good = batch(b"kept")
        assert produce(client, "crc", good)["error_code"] == 0
        bad = bytearray(batch(b"lost"))
        bad[-1] ^= 0xFF
        answer = produce(client, "crc", bytes(bad))
        assert answer["error_code"] == Errors.CORRUPT_MESSAGE
        offsets = client.request(LIST_OFFSETS, 7, {"replica_id": -1, "topics": [
            {"name": "crc", "partitions": [{"partition_index": 0, "timestamp": -1}]}]})
        assert offsets["topics"][0]["partitions"][0]["offset"] == 1


def test_a_corrupt_first_batch_header_fails_the_whole_produce_as_kafka_does(broker):
    """KafkaApis walks every partition's first batch (hasTransactionalRecords) before any check
    of its own; a batch size below the smallest record stops the walk with CorruptRecordException,
    which answers every partition of the request CORRUPT_MESSAGE with its message, the good one
    included, and writes nothing. With acks=0 there is no answer to give: the connection closes."""
    corrupt = struct.pack(">qi", 0, 5) + bytes(20)

    def body(acks: int) -> dict:
        return {"acks": acks, "timeout_ms": 5000, "topic_data": [{"name": "whole", "partition_data": [
            {"index": 0, "records": batch(b"good")}, {"index": 1, "records": corrupt}]}]}

    with RawClient(broker.bootstrap) as client:
        create_topic(client, "whole", partitions=2)
        answer = client.request(PRODUCE, 9, body(acks=1))
        partitions = answer["responses"][0]["partition_responses"]
        assert [(p["index"], p["error_code"], p["base_offset"]) for p in partitions] == \
            [(0, Errors.CORRUPT_MESSAGE, -1), (1, Errors.CORRUPT_MESSAGE, -1)]
        assert partitions[0]["error_message"] == "Record size 5 is less than the minimum record overhead (14)"
        offsets = client.request(LIST_OFFSETS, 7, {"replica_id": -1, "topics": [
            {"name": "whole", "partitions": [{"partition_index": 0, "timestamp": -1}]}]})
        assert offsets["topics"][0]["partitions"][0]["offset"] == 0
        client.send_frame(encode_request(PRODUCE, 9, 99, "raw-client", body(acks=0)))
        assert client.receive_frame() is None
    _still_serving(broker)


def test_an_oversized_batch_is_refused_with_message_too_large(broker_factory):
    broker = broker_factory({"message.max.bytes": "1000"})
    with RawClient(broker.bootstrap) as client:
        create_topic(client, "big")
        answer = produce(client, "big", batch(b"x" * 5000))
        assert answer["error_code"] == Errors.MESSAGE_TOO_LARGE


def _end_offset(client: RawClient, topic: str, partition: int) -> int:
    offsets = client.request(LIST_OFFSETS, 7, {"replica_id": -1, "topics": [
        {"name": topic, "partitions": [{"partition_index": partition, "timestamp": -1}]}]})
    return offsets["topics"][0]["partitions"][0]["offset"]


def test_two_batches_for_one_partition_are_refused_and_the_other_partitions_append(broker):
    # ProduceRequest.validateRecords: from v3 on, exactly one batch per partition.
    with RawClient(broker.bootstrap) as client:
        create_topic(client, "twice", partitions=2)
        answer = client.request(PRODUCE, 9, {"acks": 1, "timeout_ms": 5000, "topic_data": [
            {"name": "twice", "partition_data": [{"index": 0, "records": batch(b"a") + batch(b"b")},
                                                 {"index": 1, "records": batch(b"c")}]}]})
        by_partition = {p["index"]: p for p in answer["responses"][0]["partition_responses"]}
        assert by_partition[0]["error_code"] == Errors.INVALID_RECORD
        assert by_partition[0]["error_message"] is None  # KafkaApis answers the error code alone
        assert by_partition[1]["error_code"] == 0
        assert (_end_offset(client, "twice", 0), _end_offset(client, "twice", 1)) == (0, 1)
    _still_serving(broker)


def test_a_partial_batch_after_the_one_batch_is_dropped_as_kafka_drops_it(broker):
    with RawClient(broker.bootstrap) as client:
        create_topic(client, "tail")
        answer = produce(client, "tail", batch(b"a", b"b") + batch(b"lost")[:40])
        assert (answer["error_code"], answer["base_offset"]) == (0, 0)
        assert produce(client, "tail", batch(b"c"))["base_offset"] == 2
        assert _end_offset(client, "tail", 0) == 3


def test_zstd_in_a_produce_below_v7_is_an_unsupported_compression_type(broker):
    from franz.records import CompressionType, MemoryRecords, SimpleRecord
    zstd = bytes(MemoryRecords.with_records([SimpleRecord(value=b"z")], compression_type=CompressionType.ZSTD).buffer)
    with RawClient(broker.bootstrap) as client:
        create_topic(client, "zstd")
        assert produce(client, "zstd", zstd, version=6)["error_code"] == Errors.UNSUPPORTED_COMPRESSION_TYPE
        assert produce(client, "zstd", zstd, version=7)["error_code"] == 0
        assert _end_offset(client, "zstd", 0) == 1


def test_produce_to_a_missing_topic_without_auto_create(broker_factory):
    broker = broker_factory({"auto.create.topics.enable": "false"})
    with RawClient(broker.bootstrap) as client:
        assert produce(client, "missing", batch(b"v"))["error_code"] == Errors.UNKNOWN_TOPIC_OR_PARTITION
        metadata = client.request(METADATA, 12, {"topics": [{"name": "missing"}]})
        assert metadata["topics"][0]["error_code"] == Errors.UNKNOWN_TOPIC_OR_PARTITION


def test_fetch_out_of_range_answers_offset_out_of_range(broker):
    with RawClient(broker.bootstrap) as client:
        create_topic(client, "oor")
        produce(client, "oor", batch(b"a", b"b"))
        answer = client.request(FETCH, 12, {"replica_id": -1, "max_wait_ms": 0, "min_bytes": 1,
                                            "max_bytes": 1 << 20, "isolation_level": 0, "session_epoch": -1,
                                            "topics": [{"topic": "oor", "partitions": [
                                                {"partition": 0, "fetch_offset": 50,
                                                 "partition_max_bytes": 1 << 20}]}]})
        assert answer["responses"][0]["partitions"][0]["error_code"] == Errors.OFFSET_OUT_OF_RANGE


def test_an_acks_zero_produce_that_fails_closes_the_connection(broker):
    with RawClient(broker.bootstrap) as client:
        client.correlation_id += 1
        from franz.protocol.codec import encode_request
        client.send_frame(encode_request(PRODUCE, 9, 1, "c", {"acks": 0, "timeout_ms": 1000, "topic_data": [
            {"name": "nope", "partition_data": [{"index": 0, "records": batch(b"x")}]}]}))
        assert client.receive_frame() is None


def test_a_thousand_idle_connections_at_once(broker):
    sockets = []
    try:
        for _ in range(1000):
            sockets.append(socket.create_connection(("127.0.0.1", broker.port), timeout=10))
        _still_serving(broker)
    finally:
        for sock in sockets:
            sock.close()
    _still_serving(broker)


# -- found by a fuzz campaign that compared franz with kafka-clients 4.3's parser ----------

WRITE_TXN_MARKERS, CREATE_DELEGATION_TOKEN, OFFSET_COMMIT, FIND_COORDINATOR = 27, 38, 8, 10


def test_an_acks_all_produce_with_a_negative_timeout_is_answered_with_its_offset(broker):
    """DelayedProduce accepts any timeout: a negative one is due at once, and on one node the
    append has completed it anyway. Told UNKNOWN_SERVER_ERROR, a producer would write it again."""
    with RawClient(broker.bootstrap) as client:
        create_topic(client, "negative-timeout")
        answer = client.request(PRODUCE, 9, {"acks": -1, "timeout_ms": -1, "topic_data": [
            {"name": "negative-timeout", "partition_data": [{"index": 0, "records": batch(b"a")}]}]})
        partition = answer["responses"][0]["partition_responses"][0]
        assert (partition["error_code"], partition["base_offset"]) == (Errors.NONE, 0)


def test_a_fetch_partition_that_fails_to_read_fails_alone(broker):
    """ReplicaManager.readFromLog catches each partition's error: a negative partition_max_bytes
    fails that partition (LogSegment.read refuses it), the other is served."""
    with RawClient(broker.bootstrap) as client:
        create_topic(client, "two-reads", partitions=2)
        client.request(PRODUCE, 9, {"acks": 1, "timeout_ms": 5000, "topic_data": [{
            "name": "two-reads", "partition_data": [{"index": 0, "records": batch(b"a")},
                                                    {"index": 1, "records": batch(b"b")}]}]})
        answer = client.request(FETCH, 11, {"replica_id": -1, "max_wait_ms": 0, "min_bytes": 0,
                                            "max_bytes": 1 << 20, "isolation_level": 0, "session_epoch": -1,
                                            "topics": [{"topic": "two-reads", "partitions": [
                                                {"partition": 1, "fetch_offset": 0, "partition_max_bytes": -1},
                                                {"partition": 0, "fetch_offset": 0,
                                                 "partition_max_bytes": 1 << 20}]}]})
        failed, served = answer["responses"][0]["partitions"]
        assert answer["error_code"] == Errors.NONE
        assert (failed["error_code"], failed["high_watermark"]) == (Errors.UNKNOWN_SERVER_ERROR, -1)
        assert (served["error_code"], served["high_watermark"], len(served["records"]) > 0) == (Errors.NONE, 1, True)


def test_an_offset_commit_retention_wraps_as_a_java_long(broker):
    """OffsetMetadataManager.expireTimestampMs: now + retention in a Java long (only -1 means the
    broker's retention), so Long.MAX_VALUE commits instead of failing the encode."""
    with RawClient(broker.bootstrap) as client:
        create_topic(client, "retained")
        for _ in range(50):  # the first ask makes __consumer_offsets
            if client.request(FIND_COORDINATOR, 3, {"key": "retention-group", "key_type": 0})["error_code"] == 0:
                break
        for retention in (2**63 - 1, -5):
            answer = client.request(OFFSET_COMMIT, 4, {
                "group_id": "retention-group", "generation_id_or_member_epoch": -1, "member_id": "",
                "retention_time_ms": retention, "topics": [{"name": "retained", "partitions": [
                    {"partition_index": 0, "committed_offset": 1, "committed_metadata": ""}]}]})
            assert answer["topics"][0]["partitions"][0]["error_code"] == Errors.NONE


def test_write_txn_markers_that_no_marker_can_carry_are_answered(broker):
    """KafkaApis: partitions this broker lacks are UNKNOWN_TOPIC_OR_PARTITION before any marker
    is built; a producer id no marker can carry fails the request, every partition answered
    UNKNOWN_SERVER_ERROR (WriteTxnMarkersRequest.getErrorResponse), the connection kept."""
    def markers(topic: str) -> dict:
        return {"markers": [{"producer_id": -1, "producer_epoch": 0, "transaction_result": False,
                             "topics": [{"name": topic, "partition_indexes": [0]}], "coordinator_epoch": 0}]}
    with RawClient(broker.bootstrap) as client:
        create_topic(client, "marked")
        missing = client.request(WRITE_TXN_MARKERS, 1, markers("no-such-topic"))
        assert missing["markers"][0]["topics"][0]["partitions"][0]["error_code"] == Errors.UNKNOWN_TOPIC_OR_PARTITION
        refused = client.request(WRITE_TXN_MARKERS, 1, markers("marked"))
        assert refused["markers"][0]["topics"][0]["partitions"][0]["error_code"] == Errors.UNKNOWN_SERVER_ERROR
        assert produce(client, "marked", batch(b"after"))["base_offset"] == 0  # nothing was written


def test_a_result_the_encoder_refuses_is_answered_with_the_error_response(broker):
    """A handler's answer that cannot be written (here CreateDelegationToken v3 echoing a null
    owner type, where Kafka's KafkaPrincipal throws) is the request's error response, as a
    failed handler's is; the connection serves on."""
    with RawClient(broker.bootstrap) as client:
        answer = client.request(CREATE_DELEGATION_TOKEN, 3, {"owner_principal_type": None,
                                                             "owner_principal_name": "alice", "renewers": [],
                                                             "max_lifetime_ms": -1})
        assert answer["error_code"] == Errors.UNKNOWN_SERVER_ERROR
    _still_serving(broker)


def test_a_compact_count_of_2_to_the_31_or_more_reads_as_null(broker):
    """Kafka reads a flexible length into a Java int: Metadata v10's topics count 0xffffff9d is
    -100, null, so all topics are described rather than the connection closed."""
    with RawClient(broker.bootstrap) as client:
        create_topic(client, "all-of-them")
        client.send_frame(struct.pack(">hhih", METADATA, 10, 77, 2) + b"fz" + b"\x00"
                          + b"\x9d\xff\xff\xff\x0f" + b"\x00\x00\x00\x00")
        frame = client.receive_frame()
        assert frame is not None and struct.unpack_from(">i", frame)[0] == 77
        from franz.protocol.codec import decode_response
        _, answer = decode_response(METADATA, 10, frame)
        assert "all-of-them" in [topic["name"] for topic in answer["topics"]]
