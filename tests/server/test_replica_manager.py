"""ReplicaManager seen from a client: a parked fetch is answered by the produce
that brings its bytes, one that never gets them expires; appends on the loop or
the append thread; and disk errors, answered KAFKA_STORAGE_ERROR per partition."""

from __future__ import annotations

import asyncio
import logging
import os
import threading
import uuid

from franz.protocol.codec import decode_response, encode_request
from franz.protocol.errors import Errors
from franz.records import CompressionType, MemoryRecords, SimpleRecord, build_batch
from franz.server.metadata_cache import MetadataCache, TopicMetadata
from franz.server.replica_manager import (INLINE_APPEND_BYTES_MAX, LOOP_APPEND_BYTES_MAX, LoopAppendBudget,
                                          PartitionFetch, ReplicaManager)
from franz.storage.log_config import LogConfig
from franz.storage.log_manager import LogManager
from franz.storage.unified_log import FetchIsolation
from tests.support.broker import BrokerProcess
from tests.support.broker_on_thread import BrokerOnThread
from tests.support.failing_disk import descriptor_swapped
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


def _replica_manager_of(log_dir, topic_configs: dict[str, dict[str, str]]):
    """A ReplicaManager with no server around it, over one-partition topics made with these
    configs; its caller shuts down the append thread and the log manager."""
    log_manager = LogManager([log_dir], LogConfig.from_props({}), initial_task_delay_ms=10**9)
    log_manager.startup(start_background_tasks=False)
    metadata = MetadataCache(1, "cluster", [])
    for name, props in topic_configs.items():
        metadata.put(TopicMetadata(name, uuid.uuid4(), 1))
        log_manager.get_or_create_log(name, 0, config=LogConfig.from_props(props))
    return log_manager, metadata, ReplicaManager(1, log_manager, metadata)


def test_only_appends_that_cannot_block_run_on_the_event_loop(tmp_path):
    topic_configs = {"plain": {}, "fsynced": {"flush.messages": "1"}, "compacted": {"cleanup.policy": "compact"},
                     "converted": {"compression.type": "zstd"}}
    log_manager, _, replica_manager = _replica_manager_of(tmp_path, topic_configs)
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


def test_a_partition_is_gone_once_its_topic_is_unpublished_while_its_log_is_still_there(tmp_path):
    """DeleteTopics unpublishes the topic first and removes its logs afterwards, on a worker
    thread. In between, a ListOffsets, Produce or Fetch from another connection must find no
    partition (UNKNOWN_TOPIC_OR_PARTITION), not the log about to go: a produce answered then
    would be acknowledged into a deleted topic."""
    log_manager, metadata, replica_manager = _replica_manager_of(tmp_path, {"doomed": {}})
    try:
        assert replica_manager.get_partition("doomed", 0) is not None
        metadata.remove("doomed")
        assert log_manager.get_log("doomed", 0) is not None
        assert replica_manager.get_partition("doomed", 0) is None
        assert replica_manager.log_of(("doomed", 0)) is None
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
    log_manager, _, replica_manager = _replica_manager_of(tmp_path, {"plain": {}})
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


# -- a full disk: KAFKA_STORAGE_ERROR, the partition kept online -------------------------------

FILE_SIZE_LIMIT_BYTES = 12 << 20  # past each new segment's 10 MiB of preallocated index files


def _produce_until_refused(client: RawClient, topic: str) -> tuple[int, int]:
    """Produce batches of 100 x 1 KB until one is refused: (records acknowledged, its error)."""
    acknowledged = 0
    for _ in range(1000):  # bounded: the limit is reached after ~120 batches
        error = produce(client, topic, batch(*[b"x" * 1000] * 100))["error_code"]
        if error != 0:
            return acknowledged, error
        acknowledged += 100
    raise AssertionError("the file size limit was never reached")


def _end_offset(client: RawClient, topic: str) -> int:
    answer = client.request(2, 5, {"replica_id": -1, "isolation_level": 0, "topics": [{"name": topic, "partitions": [
        {"partition_index": 0, "current_leader_epoch": -1, "timestamp": -1}]}]})
    found = answer["topics"][0]["partitions"][0]
    assert found["error_code"] == 0
    return found["offset"]


def test_a_full_disk_is_answered_kafka_storage_error_and_nothing_acknowledged_is_lost(tmp_path):
    """As Kafka answers an append its disk refuses (KafkaStorageException); franz keeps the
    partition online (Kafka takes the dir offline: TEAM_NOTES), so once the disk has room the
    producer's retry is appended at the next offset, and a crash afterwards recovers exactly
    the acknowledged records."""
    broker = BrokerProcess(tmp_path / "data")
    broker.file_size_limit_bytes = FILE_SIZE_LIMIT_BYTES
    broker.start()
    try:
        with RawClient(broker.bootstrap) as client:
            create_topic(client, "full")
            acknowledged, error = _produce_until_refused(client, "full")
            assert error == Errors.KAFKA_STORAGE_ERROR and acknowledged > 0
            still_full = produce(client, "full", batch(*[b"y" * 1000] * 100))  # no more room than before
            assert still_full["error_code"] == Errors.KAFKA_STORAGE_ERROR
            assert _end_offset(client, "full") == acknowledged
            disk_errors = [line for line in broker.lines if "Error while appending records to full-0 in dir" in line]
            assert len(disk_errors) == 1 and "File too large" in disk_errors[0]  # once, not once per request
            assert "Traceback" not in broker.output()
            broker.lift_file_size_limit()  # room again
            retried = produce(client, "full", batch(b"room again"))
            assert (retried["error_code"], retried["base_offset"]) == (0, acknowledged)
        broker.kill()
        broker.file_size_limit_bytes = None
        broker.start()
        with RawClient(broker.bootstrap) as client:
            assert _end_offset(client, "full") == acknowledged + 1
            fetched = client.request(FETCH, 12, {**_fetch_body(0, 0, offset=acknowledged), "topics": [
                {"topic": "full", "partitions": [
                    {"partition": 0, "fetch_offset": acknowledged, "partition_max_bytes": 1 << 20}]}]})
            assert _values(fetched["responses"][0]["partitions"][0]["records"]) == [b"room again"]
    finally:
        broker.stop()


def test_a_disk_error_in_a_read_fails_only_that_partition_and_is_logged_once(tmp_path, caplog):
    """A read the disk fails (here pread's EISDIR: the segment's descriptor made a directory's)
    answers that partition KAFKA_STORAGE_ERROR and the others their records, as Kafka's
    readFromLog; logged once by the log, not once per fetch with a traceback."""
    log_manager = LogManager([tmp_path / "data"], LogConfig.from_props({}), initial_task_delay_ms=10**9)
    log_manager.startup(start_background_tasks=False)
    metadata = MetadataCache(1, "cluster", [])
    for name in ("failing", "healthy"):
        metadata.put(TopicMetadata(name, uuid.uuid4(), 1))
        partition_log = log_manager.get_or_create_log(name, 0, config=LogConfig.from_props({}))
        for value in (b"first", b"second"):
            partition_log.append_as_leader(MemoryRecords(bytearray(batch(value))), 0)
        partition_log.maybe_increment_high_watermark(partition_log.log_end_offset)
    replica_manager = ReplicaManager(1, log_manager, metadata)
    descriptor = log_manager.get_log("failing", 0).local_log.segments.active_segment.log.fd
    caplog.set_level(logging.ERROR)
    try:
        with descriptor_swapped(descriptor, tmp_path):
            for _ in range(2):
                fetches = [PartitionFetch("failing", 0, 1, 1 << 20), PartitionFetch("healthy", 0, 1, 1 << 20)]
                replica_manager.read_from_log(fetches, FetchIsolation.HIGH_WATERMARK, 1 << 20, False)
                assert [fetch.error for fetch in fetches] == [Errors.KAFKA_STORAGE_ERROR, Errors.NONE]
                records = fetches[1].records  # bytes, or a slice of the segment file to send
                assert _values(records if isinstance(records, bytes)
                               else records.read_bytes(0, fetches[1].size_bytes)) == [b"second"]
    finally:
        replica_manager.append_thread.shutdown(wait=True)
        log_manager.shutdown()
    logged = [record.getMessage() for record in caplog.records]
    assert [m for m in logged if "Exception while reading from failing-0 in dir" in m] == [logged[0]]
    assert len(logged) == 1 and "Is a directory" in logged[0]


def test_a_log_taken_offline_answers_kafka_storage_error_and_its_neighbours_serve_on(tmp_path):
    """A record reaches the segment and its fsync fails (flush.messages=1, the descriptor made
    /dev/null's: EINVAL), so the log goes offline (UnifiedLog.take_offline). Produce, Fetch,
    ListOffsets, DeleteRecords, OffsetsForLeaderEpoch and DescribeProducers answer that
    partition KAFKA_STORAGE_ERROR, each partition on its own as Kafka's ReplicaManager does,
    and the other partition of the same requests its own answer."""
    broker = BrokerOnThread(tmp_path / "data")
    try:
        with RawClient(broker.bootstrap) as client:
            create_topic(client, "t", 2, {"flush.messages": "1"})

            def produce_to(partition: int, value: bytes) -> int:
                answer = client.request(0, 9, {"acks": 1, "timeout_ms": 5000, "topic_data": [
                    {"name": "t", "partition_data": [{"index": partition, "records": batch(value)}]}]})
                return answer["responses"][0]["partition_responses"][0]["error_code"]

            assert produce_to(0, b"a") == produce_to(1, b"a") == 0
            failing = broker.server.log_manager.get_log("t", 0)
            descriptor = failing.local_log.segments.active_segment.log.fd

            def list_offsets(timestamp: int) -> list[tuple[int, int]]:
                listed = client.request(2, 5, {"replica_id": -1, "isolation_level": 0, "topics": [{
                    "name": "t", "partitions": [{"partition_index": p, "current_leader_epoch": -1,
                                                 "timestamp": timestamp} for p in (0, 1)]}]})
                return [(p["error_code"], p["offset"]) for p in listed["topics"][0]["partitions"]]

            # A read the disk fails (pread on a directory: EISDIR) fails that partition alone and
            # leaves the log online.
            with descriptor_swapped(descriptor, tmp_path):
                assert list_offsets(0) == [(Errors.KAFKA_STORAGE_ERROR, -1), (0, 0)]
            assert not failing.offline and list_offsets(0) == [(0, 0), (0, 0)]

            with descriptor_swapped(descriptor, os.devnull, os.O_RDWR):
                assert produce_to(0, b"b") == Errors.KAFKA_STORAGE_ERROR
            assert failing.offline  # and stays so with the descriptor back
            assert produce_to(0, b"c") == Errors.KAFKA_STORAGE_ERROR
            assert produce_to(1, b"b") == 0
            assert list_offsets(-1) == [(Errors.KAFKA_STORAGE_ERROR, -1), (0, 2)]
            fetched = client.request(FETCH, 12, {**_fetch_body(0, 0), "topics": [{"topic": "t", "partitions": [
                {"partition": p, "fetch_offset": 0, "partition_max_bytes": 1 << 20} for p in (0, 1)]}]})
            answers = fetched["responses"][0]["partitions"]
            assert [p["error_code"] for p in answers] == [Errors.KAFKA_STORAGE_ERROR, 0]
            assert _values(answers[1]["records"]) == [b"a", b"b"]
            deleted = client.request(21, 2, {"topics": [{"name": "t", "partitions": [
                {"partition_index": p, "offset": 1} for p in (0, 1)]}], "timeout_ms": 5000})
            assert [(p["error_code"], p["low_watermark"]) for p in deleted["topics"][0]["partitions"]] == [
                (Errors.KAFKA_STORAGE_ERROR, -1), (0, 1)]
            epochs = client.request(23, 4, {"replica_id": -1, "topics": [{"topic": "t", "partitions": [
                {"partition": p, "current_leader_epoch": -1, "leader_epoch": 0} for p in (0, 1)]}]})
            assert [p["error_code"] for p in epochs["topics"][0]["partitions"]] == [Errors.KAFKA_STORAGE_ERROR, 0]
            producers = client.request(61, 0, {"topics": [{"name": "t", "partition_indexes": [0, 1]}]})
            assert [p["error_code"] for p in producers["topics"][0]["partitions"]] == [Errors.KAFKA_STORAGE_ERROR, 0]
    finally:
        broker.stop()
    assert not (tmp_path / "data" / ".kafka_cleanshutdown").exists()  # recovered at the next start


def test_a_deleted_topics_partitions_are_no_longer_hosted(tmp_path):
    """stopPartitions drops a deleted topic's partitions from allPartitions; franz kept each
    Partition, with its closed log, until the same name was looked up again."""
    broker = BrokerOnThread(tmp_path / "data")
    try:
        with RawClient(broker.bootstrap) as client:
            for index in range(20):
                create_topic(client, f"churn-{index}", 2)
                assert produce(client, f"churn-{index}", batch(b"v"))["error_code"] == 0
                answer = client.request(20, 5, {"topic_names": [f"churn-{index}"], "timeout_ms": 5000})
                assert answer["responses"][0]["error_code"] == 0
            create_topic(client, "kept", 1)
            assert produce(client, "kept", batch(b"v"))["error_code"] == 0
        hosted = broker.call(_hosted(broker.server.replica_manager))
    finally:
        broker.stop()
    assert hosted == [("kept", 0)]


async def _hosted(replica_manager: ReplicaManager) -> list:
    return sorted(replica_manager._partitions)


def test_the_purge_interval_keys_reach_the_purgatories(tmp_path):
    """fetch.purgatory.purge.interval.requests and producer.purgatory.purge.interval.requests were
    accepted and ignored: both purgatories purged at the default 1,000."""
    broker = BrokerOnThread(tmp_path / "data", {"fetch.purgatory.purge.interval.requests": "7",
                                                "producer.purgatory.purge.interval.requests": "11"})
    try:
        replica_manager = broker.server.replica_manager
        intervals = (replica_manager.fetch_purgatory._purge_interval, replica_manager.produce_purgatory._purge_interval)
    finally:
        broker.stop()
    assert intervals == (7, 11)
