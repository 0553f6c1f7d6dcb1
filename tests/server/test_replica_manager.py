"""ReplicaManager's purgatories seen from a client: a parked fetch is answered
by the produce that brings its bytes; one that never gets them expires."""

from __future__ import annotations

from franz.protocol.codec import decode_response, encode_request
from franz.records import MemoryRecords
from tests.support.raw_client import RawClient, batch, create_topic, produce

FETCH = 1


def _fetch_body(min_bytes: int, max_wait_ms: int, offset: int = 0) -> dict:
    return {"replica_id": -1, "max_wait_ms": max_wait_ms, "min_bytes": min_bytes, "max_bytes": 1 << 20,
            "session_epoch": -1, "topics": [{"topic": "parked", "partitions": [
                {"partition": 0, "fetch_offset": offset, "partition_max_bytes": 1 << 20}]}]}


def _values(records) -> list[bytes]:
    return [record.value for record in MemoryRecords(bytes(records)).records()]


def test_a_parked_fetch_is_completed_by_the_append_it_waits_for(broker):
    with RawClient(broker.bootstrap) as consumer, RawClient(broker.bootstrap) as producer:
        create_topic(producer, "parked")
        consumer.send_frame(encode_request(FETCH, 12, 41, "c", _fetch_body(min_bytes=1, max_wait_ms=60_000)))
        assert produce(producer, "parked", batch(b"woke", b"up"))["error_code"] == 0
        correlation_id, answer = decode_response(FETCH, 12, consumer.receive_frame())
        assert correlation_id == 41
        partition = answer["responses"][0]["partitions"][0]
        assert _values(partition["records"]) == [b"woke", b"up"]
        assert partition["high_watermark"] == 2


def test_a_fetch_short_of_min_bytes_expires_with_what_there_is(broker):
    with RawClient(broker.bootstrap) as client:
        create_topic(client, "parked")
        produce(client, "parked", batch(b"small"))
        answer = client.request(FETCH, 12, _fetch_body(min_bytes=10 << 20, max_wait_ms=200))
        assert _values(answer["responses"][0]["partitions"][0]["records"]) == [b"small"]


def test_pipelined_requests_are_answered_in_order(broker):
    with RawClient(broker.bootstrap) as client:
        create_topic(client, "parked")
        client.send_frame(encode_request(FETCH, 12, 1, "c", _fetch_body(min_bytes=1, max_wait_ms=300)))
        client.send_frame(encode_request(3, 12, 2, "c", {"topics": None}))
        first = decode_response(FETCH, 12, client.receive_frame())[0]
        second = decode_response(3, 12, client.receive_frame())[0]
        assert (first, second) == (1, 2)


def test_a_batch_cut_by_the_response_limit_is_left_out_not_sent_in_part(broker):
    # Kafka's ReplicaManager.checkFetchDataInfo: from Fetch v3 on, a partition whose first
    # batch does not fit what is left of the response gets no records (a client cannot
    # parse half a batch: the Java consumer fails with "Failed to make progress").
    with RawClient(broker.bootstrap) as client:
        create_topic(client, "small")
        create_topic(client, "large")
        small, large = batch(b"s"), batch(b"L" * 4000)
        produce(client, "small", small)
        produce(client, "large", large)
        answer = client.request(FETCH, 12, {
            "replica_id": -1, "max_wait_ms": 0, "min_bytes": 0, "max_bytes": len(small) + 1000,
            "session_epoch": -1, "topics": [
                {"topic": name, "partitions": [{"partition": 0, "fetch_offset": 0, "partition_max_bytes": 1 << 20}]}
                for name in ("small", "large")]})
        by_topic = {topic["topic"]: topic["partitions"][0] for topic in answer["responses"]}
        assert _values(by_topic["small"]["records"]) == [b"s"]
        assert not by_topic["large"]["records"], "a cut batch was sent"
        assert by_topic["large"]["error_code"] == 0 and by_topic["large"]["high_watermark"] == 1
        # The first partition with data is answered whole, past the response limit (KIP-74).
        answer = client.request(FETCH, 12, {
            "replica_id": -1, "max_wait_ms": 0, "min_bytes": 0, "max_bytes": 100, "session_epoch": -1,
            "topics": [{"topic": "large", "partitions": [
                {"partition": 0, "fetch_offset": 0, "partition_max_bytes": 100}]}]})
        assert _values(answer["responses"][0]["partitions"][0]["records"]) == [b"L" * 4000]
