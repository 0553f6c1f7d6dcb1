"""AlterReplicaLogDirs against real broker processes with two log dirs: the answers Kafka gives,
a move under a live idempotent producer that loses and duplicates nothing, and a move cut short
by a crash that the next start finishes. (tests/interop/test_java_client.py moves a replica
through Kafka's Admin client.)"""

from __future__ import annotations

import os
import shutil
import signal
import time
from pathlib import Path

from confluent_kafka import Consumer, Producer, TopicPartition

from franz.protocol.errors import Errors
from franz.records import SimpleRecord, build_batch
from tests.support.raw_client import RawClient, create_topic, produce

ALTER_REPLICA_LOG_DIRS, DESCRIBE_LOG_DIRS, LIST_OFFSETS, DELETE_RECORDS, DELETE_TOPICS = 34, 35, 2, 21, 20
INCREMENTAL_ALTER_CONFIGS, TOPIC_RESOURCE = 44, 2
TIMEOUT_S = 60


def _alter(client: RawClient, path: str, topic: str, *partitions: int) -> dict[int, int]:
    answer = client.request(ALTER_REPLICA_LOG_DIRS, 2, {"dirs": [
        {"path": path, "topics": [{"name": topic, "partitions": list(partitions)}]}]})
    [result] = answer["results"]
    assert result["topic_name"] == topic
    return {p["partition_index"]: p["error_code"] for p in result["partitions"]}


def _replicas(client: RawClient, topic: str) -> dict[tuple[str, bool], tuple[int, int]]:
    """(log dir, is future) -> (partition size, offset lag) of partition 0 of `topic`."""
    answer = client.request(DESCRIBE_LOG_DIRS, 4, {"topics": [{"topic": topic, "partitions": [0]}]})
    return {(result["log_dir"], p["is_future_key"]): (p["partition_size"], p["offset_lag"])
            for result in answer["results"] for t in result["topics"] for p in t["partitions"]}


def _wait_moved(client: RawClient, topic: str, log_dir: Path) -> None:
    deadline = time.monotonic() + TIMEOUT_S
    while time.monotonic() < deadline:
        replicas = _replicas(client, topic)
        if list(replicas) == [(str(log_dir), False)]:
            return
        time.sleep(0.05)
    raise AssertionError(f"not moved to {log_dir}: {_replicas(client, topic)}")


def _read_all(bootstrap: str, topic: str, expected: int) -> list[bytes]:
    consumer = Consumer({"bootstrap.servers": bootstrap, "group.id": "reader", "enable.auto.commit": False})
    consumer.assign([TopicPartition(topic, 0, 0)])
    values: list[bytes] = []
    deadline = time.monotonic() + TIMEOUT_S
    try:
        while len(values) < expected and time.monotonic() < deadline:
            values += [m.value() for m in consumer.consume(1000, 0.2) if not m.error()]
    finally:
        consumer.close()
    return values


def _producer(bootstrap: str) -> Producer:
    """An idempotent producer whose batches fit the tests' 64 KiB segments; a failed delivery fails the test."""
    def delivered(error, _message) -> None:
        assert error is None, error
    return Producer({"bootstrap.servers": bootstrap, "enable.idempotence": True, "linger.ms": 1,
                     "batch.size": 16384, "on_delivery": delivered})


def _two_dirs(tmp_path: Path) -> tuple[Path, Path, dict[str, str]]:
    first, second = (tmp_path / "dir-a").resolve(), (tmp_path / "dir-b").resolve()
    return first, second, {"log.dirs": f"{first},{second}", "log.segment.bytes": "65536"}


def test_requests_are_answered_as_kafka_answers_them(broker_factory, tmp_path):
    first, second, overrides = _two_dirs(tmp_path)
    broker = broker_factory(overrides)
    with RawClient(broker.bootstrap) as client:
        create_topic(client, "placed", 2)
        current = {p: next(d for d in (first, second) if (d / f"placed-{p}").exists()) for p in (0, 1)}
        assert _alter(client, "/not/a/log/dir", "placed", 0) == {0: Errors.LOG_DIR_NOT_FOUND}
        assert _alter(client, "dir-a", "placed", 0) == {0: Errors.LOG_DIR_NOT_FOUND}  # an absolute path only
        # Its own dir already: nothing to move.
        assert _alter(client, str(current[0]), "placed", 0) == {0: Errors.NONE}
        assert list(_replicas(client, "placed")) == [(str(current[0]), False)]
        # A partition no topic has: UNKNOWN_TOPIC_OR_PARTITION, and if it comes, its log is made there.
        assert _alter(client, str(second), "later", 0) == {0: Errors.UNKNOWN_TOPIC_OR_PARTITION}
        create_topic(client, "later", 1)
        assert (second / "later-0").is_dir() and not (first / "later-0").exists()
        assert _alter(client, str(first), "placed", 7) == {7: Errors.UNKNOWN_TOPIC_OR_PARTITION}


def test_a_move_under_an_idempotent_producer_loses_and_duplicates_nothing(broker_factory, tmp_path):
    first, second, overrides = _two_dirs(tmp_path)
    broker = broker_factory(overrides)
    producer = _producer(broker.bootstrap)
    with RawClient(broker.bootstrap) as client:
        create_topic(client, "moving", 1)
        source = next(d for d in (first, second) if (d / "moving-0").exists())
        target = second if source == first else first
        for i in range(20_000):
            producer.produce("moving", value=b"before-%d" % i, partition=0)
        assert producer.flush(TIMEOUT_S) == 0
        assert _alter(client, str(target), "moving", 0) == {0: Errors.NONE}
        for i in range(20_000):  # while the copy runs, and across the swap
            producer.produce("moving", value=b"during-%d" % i, partition=0)
            if i % 1000 == 0:
                producer.poll(0)
        assert producer.flush(TIMEOUT_S) == 0
        _wait_moved(client, "moving", target)
    assert (target / "moving-0").is_dir() and not (source / "moving-0").exists()
    values = _read_all(broker.bootstrap, "moving", 40_000)
    assert len(values) == 40_000 and len(set(values)) == 40_000
    assert values[:2] == [b"before-0", b"before-1"] and values[-1] == b"during-19999"

    broker.restart()
    assert len(_read_all(broker.bootstrap, "moving", 40_000)) == 40_000


def test_a_move_cut_short_by_a_crash_is_finished_by_the_next_start(broker_factory, tmp_path):
    """The state a SIGKILL mid-move leaves (the current log, and a future log in the other dir
    holding its first segment only) is made here by hand, so the test does not race the copy."""
    first, second, overrides = _two_dirs(tmp_path)
    broker = broker_factory(overrides)
    producer = _producer(broker.bootstrap)
    with RawClient(broker.bootstrap) as client:
        create_topic(client, "crashed", 1)
    for i in range(10_000):
        producer.produce("crashed", value=b"v-%d" % i, partition=0)
    assert producer.flush(TIMEOUT_S) == 0
    broker.stop(signal.SIGKILL)
    source = next(d for d in (first, second) if (d / "crashed-0").exists())
    target = second if source == first else first
    future = target / f"crashed-0.{'ab' * 16}-future"
    future.mkdir()
    segments = sorted((source / "crashed-0").glob("*.log"))
    assert len(segments) > 2
    for name in ("partition.metadata", segments[0].name):
        shutil.copy(source / "crashed-0" / name, future / name)

    broker.start()
    with RawClient(broker.bootstrap) as client:
        _wait_moved(client, "crashed", target)
    assert (target / "crashed-0").is_dir() and not future.exists() and not (source / "crashed-0").exists()
    values = _read_all(broker.bootstrap, "crashed", 10_000)
    assert values == [b"v-%d" % i for i in range(10_000)]


def test_a_moved_compacted_partition_is_cleaned_in_its_new_dir(broker_factory, tmp_path):
    """Cleaning is paused for the move and resumed after it, with the cleaned offset carried
    to the new dir's cleaner-offset-checkpoint (LogCleanerManager.alterCheckpointDir)."""
    from confluent_kafka.admin import AdminClient, NewTopic

    from franz.storage.checkpoint import CheckpointError, OffsetCheckpointFile
    first, second, overrides = _two_dirs(tmp_path)
    broker = broker_factory({**overrides, "log.cleaner.backoff.ms": "100"})
    admin = AdminClient({"bootstrap.servers": broker.bootstrap})
    admin.create_topics([NewTopic("kept", 1, 1, config={
        "cleanup.policy": "compact", "segment.bytes": "2048", "min.cleanable.dirty.ratio": "0.01"})])[
        "kept"].result(TIMEOUT_S)
    source = next(d for d in (first, second) if (d / "kept-0").exists())
    target = second if source == first else first

    def write_rounds(prefix: str) -> None:
        producer = Producer({"bootstrap.servers": broker.bootstrap, "batch.size": 1024, "linger.ms": 0})
        for i in range(240):  # 200 keyed records, then 40 fillers that close the segments above them
            if i < 200:
                producer.produce("kept", key=b"key-%d" % (i % 10), value=b"%s-%d" % (prefix.encode(), i), partition=0)
            else:
                producer.produce("kept", key=b"filler-%s-%d" % (prefix.encode(), i), value=b"x" * 100, partition=0)
        assert producer.flush(TIMEOUT_S) == 0

    def cleaned(log_dir: Path, offset: int) -> bool:
        deadline = time.monotonic() + TIMEOUT_S
        while time.monotonic() < deadline:
            try:
                if OffsetCheckpointFile(log_dir / "cleaner-offset-checkpoint").read().get(("kept", 0), -1) >= offset:
                    return True
            except (CheckpointError, OSError):
                pass
            time.sleep(0.05)
        return False

    write_rounds("old")
    assert cleaned(source, 200)
    with RawClient(broker.bootstrap) as client:
        assert _alter(client, str(target), "kept", 0) == {0: Errors.NONE}
        _wait_moved(client, "kept", target)
    assert OffsetCheckpointFile(target / "cleaner-offset-checkpoint").read().get(("kept", 0), -1) >= 200
    write_rounds("new")
    assert cleaned(target, 440)


def _earliest(client: RawClient, topic: str) -> int:
    answer = client.request(LIST_OFFSETS, 7, {"replica_id": -1, "isolation_level": 0, "topics": [
        {"name": topic, "partitions": [{"partition_index": 0, "current_leader_epoch": -1, "timestamp": -2}]}]})
    return answer["topics"][0]["partitions"][0]["offset"]


def _delete_records(client: RawClient, topic: str, offset: int) -> int:
    answer = client.request(DELETE_RECORDS, 2, {"timeout_ms": 5000, "topics": [
        {"name": topic, "partitions": [{"partition_index": 0, "offset": offset}]}]})
    partition = answer["topics"][0]["partitions"][0]
    assert partition["error_code"] == Errors.NONE, partition
    return partition["low_watermark"]


def test_a_move_keeps_the_log_start_offset_and_copies_batches_above_max_message_bytes(broker_factory, tmp_path):
    """The log start offset inside a batch (DeleteRecords) and batches larger than a
    max.message.bytes lowered since: the copy starts at that batch and takes every batch, as
    Kafka's follower append does, and the start offset moved during the move is kept. The old
    log's files are closed when its delayed deletion runs."""
    first, second, overrides = _two_dirs(tmp_path)
    broker = broker_factory({**overrides, "log.segment.delete.delay.ms": "200"})
    with RawClient(broker.bootstrap) as client:
        create_topic(client, "trimmed", 1)
        for round_ in range(20):  # batches of 10 records, 2 KiB each: offsets 0-199
            assert produce(client, "trimmed", build_batch([SimpleRecord(value=b"%d-%d" % (round_, i) + b"x" * 2048)
                                                           for i in range(10)]))["error_code"] == 0
        assert _delete_records(client, "trimmed", 15) == 15  # inside the batch of offsets 10-19
        answer = client.request(INCREMENTAL_ALTER_CONFIGS, 1, {"validate_only": False, "resources": [
            {"resource_type": TOPIC_RESOURCE, "resource_name": "trimmed",
             "configs": [{"name": "max.message.bytes", "config_operation": 0, "value": "4096"}]}]})
        assert answer["responses"][0]["error_code"] == Errors.NONE
        source = next(d for d in (first, second) if (d / "trimmed-0").exists())
        target = second if source == first else first
        assert _alter(client, str(target), "trimmed", 0) == {0: Errors.NONE}
        low_watermark = _delete_records(client, "trimmed", 37)  # during the move, or after it
        _wait_moved(client, "trimmed", target)
        assert low_watermark == 37 and _earliest(client, "trimmed") == 37
    consumer = Consumer({"bootstrap.servers": broker.bootstrap, "group.id": "r", "enable.auto.commit": False,
                         "auto.offset.reset": "earliest"})
    consumer.assign([TopicPartition("trimmed", 0, 37)])
    values = []
    deadline = time.monotonic() + TIMEOUT_S
    while len(values) < 163 and time.monotonic() < deadline:
        values += [m.value()[:8] for m in consumer.consume(100, 0.2) if not m.error()]
    consumer.close()
    assert len(values) == 163 and values[0].startswith(b"3-7x")
    deadline = time.monotonic() + TIMEOUT_S
    while time.monotonic() < deadline:
        held = [os.readlink(f"/proc/{broker.process.pid}/fd/{fd}") for fd in os.listdir(f"/proc/{broker.process.pid}/fd")]
        if not any("-delete" in path for path in held):
            break
        time.sleep(0.1)
    assert not any("-delete" in path for path in held), held


def test_a_topic_deleted_mid_move_is_deleted_and_its_name_can_be_used_again(broker_factory, tmp_path):
    """ReplicaManager.stopPartitions: the move stops before the logs are deleted."""
    first, second, overrides = _two_dirs(tmp_path)
    broker = broker_factory(overrides)
    big = build_batch([SimpleRecord(value=b"y" * 1024) for _ in range(500)])  # 0.5 MiB a batch
    with RawClient(broker.bootstrap) as client:
        create_topic(client, "doomed", 1, {"segment.bytes": str(16 << 20)})
        for _ in range(100):  # 50 MiB: a copy that takes a while
            assert produce(client, "doomed", big)["error_code"] == 0
        target = second if (first / "doomed-0").exists() else first
        assert _alter(client, str(target), "doomed", 0) == {0: Errors.NONE}
        answer = client.request(DELETE_TOPICS, 6, {"topics": [{"name": "doomed", "topic_id": bytes(16)}],
                                                   "timeout_ms": 30_000})
        assert answer["responses"][0]["error_code"] == Errors.NONE
        create_topic(client, "doomed", 1)
        assert produce(client, "doomed", build_batch([SimpleRecord(value=b"again")]))["error_code"] == 0
    assert _read_all(broker.bootstrap, "doomed", 1) == [b"again"]
    assert not [line for line in broker.lines if "ERROR" in line or "Traceback" in line]
