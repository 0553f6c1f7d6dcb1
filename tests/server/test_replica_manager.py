"""ReplicaManager's purgatories seen from a client: a parked fetch is answered
by the produce that brings its bytes; one that never gets them expires."""

from __future__ import annotations

import asyncio
import threading
import uuid

from franz.protocol.codec import decode_response, encode_request
from franz.records import CompressionType, MemoryRecords, SimpleRecord, build_batch
from franz.server.metadata_cache import MetadataCache, TopicMetadata
from franz.server.replica_manager import (INLINE_APPEND_BYTES_MAX, LOOP_APPEND_BYTES_MAX, LoopAppendBudget,
                                          ReplicaManager)
from franz.storage.log_config import LogConfig
from franz.storage.log_manager import LogManager
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


PRODUCE, CREATE_TOPICS = 0, 19


def _produce_body(partitions: dict[str, bytes]) -> dict:
    return {"transactional_id": None, "acks": 1, "timeout_ms": 5000, "topic_data": [
        {"name": name, "partition_data": [{"index": 0, "records": records}]} for name, records in partitions.items()]}


def test_appends_keep_arrival_order_when_some_go_to_the_append_thread(broker):
    """An fsyncing topic's appends run on the append thread; a request that follows one of
    them must not be appended ahead of it on the event loop."""
    with RawClient(broker.bootstrap) as client:
        create_topic(client, "ordered")
        answer = client.request(CREATE_TOPICS, 7, {"topics": [
            {"name": "fsynced", "num_partitions": 1, "replication_factor": 1,
             "configs": [{"name": "flush.messages", "value": "1"}]}], "timeout_ms": 5000})
        assert answer["topics"][0]["error_code"] == 0, answer
        sent = [b"%03d" % n for n in range(40)]
        for n, value in enumerate(sent):
            partitions = {"ordered": batch(value)}
            if n % 2:
                partitions["fsynced"] = batch(value)
            client.send_frame(encode_request(PRODUCE, 9, 100 + n, "c", _produce_body(partitions)))
        for n in range(len(sent)):
            correlation_id, answer = decode_response(PRODUCE, 9, client.receive_frame())
            assert correlation_id == 100 + n
            assert all(p["error_code"] == 0 for t in answer["responses"] for p in t["partition_responses"])
        body = _fetch_body(min_bytes=1, max_wait_ms=0)
        body["topics"][0]["topic"] = "ordered"
        fetched = client.request(FETCH, 12, body)["responses"][0]["partitions"][0]["records"]
        assert _values(fetched) == sent


def test_only_appends_that_cannot_block_run_on_the_event_loop(tmp_path):
    topic_configs = {"plain": {}, "fsynced": {"flush.messages": "1"}, "compacted": {"cleanup.policy": "compact"},
                     "converted": {"compression.type": "zstd"}}
    log_manager = LogManager([tmp_path], LogConfig.from_props({}), initial_task_delay_ms=10**9)
    log_manager.startup(start_background_tasks=False)
    metadata = MetadataCache(1, "cluster", [])
    for name, props in topic_configs.items():
        metadata.put(TopicMetadata(name, uuid.uuid4(), 1))
        log_manager.get_or_create_log(name, 0, config=LogConfig.from_props(props))
    replica_manager = ReplicaManager(1, log_manager, metadata)
    plain = batch(b"v")
    gzipped = build_batch([SimpleRecord(b"v")], compression_type=CompressionType.GZIP)
    bulk = build_batch([SimpleRecord(b"v" * 1024)] * (INLINE_APPEND_BYTES_MAX // 1024 + 1))
    too_big = build_batch([SimpleRecord(b"v" * 1024)] * (LOOP_APPEND_BYTES_MAX // 1024 + 1))
    try:
        assert replica_manager.can_append_on_loop({("plain", 0): plain})
        assert replica_manager.can_append_on_loop({("plain", 0): plain, ("missing", 0): plain})
        assert not replica_manager.can_append_on_loop({("plain", 0): plain, ("fsynced", 0): plain})
        assert not replica_manager.can_append_on_loop({("compacted", 0): plain})
        assert not replica_manager.can_append_on_loop({("converted", 0): plain})
        assert not replica_manager.can_append_on_loop({("plain", 0): gzipped})
        assert not replica_manager.can_append_on_loop({("plain", 0): too_big})
        # Over INLINE_APPEND_BYTES_MAX: on the loop only while its append budget has room.
        assert replica_manager.can_append_on_loop({("plain", 0): bulk})
        replica_manager.loop_append_budget.spend(10**12)
        assert not replica_manager.can_append_on_loop({("plain", 0): bulk})
        assert replica_manager.can_append_on_loop({("plain", 0): plain})

        async def while_the_append_thread_is_busy() -> None:
            started, release = threading.Event(), threading.Event()

            def hold_the_append_thread() -> None:
                started.set()
                release.wait(10)

            job = asyncio.ensure_future(replica_manager.run_on_append_thread(hold_the_append_thread))
            assert await asyncio.get_running_loop().run_in_executor(None, started.wait, 10)
            assert not replica_manager.can_append_on_loop({("plain", 0): plain})
            release.set()
            await job
            assert replica_manager.can_append_on_loop({("plain", 0): plain})

        asyncio.run(while_the_append_thread_is_busy())
    finally:
        replica_manager.append_thread.shutdown(wait=True)
        log_manager.shutdown()


def test_the_loop_append_budget_drains_at_its_share_of_the_time_that_passes():
    now = [0]
    budget = LoopAppendBudget(share=0.1, burst_ns=1_000, clock_ns=lambda: now[0])
    assert budget.has_room()
    budget.spend(999)
    assert budget.has_room()
    budget.spend(2_001)  # 3,000 spent: full until 2,001 of it drained, 20,010 ns at a tenth
    assert not budget.has_room()
    now[0] = 20_000
    assert not budget.has_room()
    now[0] = 20_010
    assert budget.has_room()
    now[0] = 10**9  # drained to nothing, never below
    budget.spend(999)
    assert budget.has_room()


def test_an_append_on_the_loop_is_charged_to_its_budget(tmp_path):
    log_manager = LogManager([tmp_path], LogConfig.from_props({}), initial_task_delay_ms=10**9)
    log_manager.startup(start_background_tasks=False)
    metadata = MetadataCache(1, "cluster", [])
    metadata.put(TopicMetadata("plain", uuid.uuid4(), 1))
    log_manager.get_or_create_log("plain", 0, config=LogConfig.from_props({}))
    replica_manager = ReplicaManager(1, log_manager, metadata)
    # A stopped clock: nothing drains, so any time charged leaves no room under a 1 ns burst.
    replica_manager.loop_append_budget = LoopAppendBudget(share=0.1, burst_ns=1, clock_ns=lambda: 0)
    try:
        assert replica_manager.loop_append_budget.has_room()
        results = replica_manager.append_records_on_loop(1, {("plain", 0): batch(b"v")})
        assert results[("plain", 0)]["error_code"] == 0
        assert not replica_manager.loop_append_budget.has_room()
    finally:
        replica_manager.append_thread.shutdown(wait=True)
        log_manager.shutdown()
