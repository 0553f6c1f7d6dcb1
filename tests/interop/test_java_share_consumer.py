"""KIP-932 share groups driven by Kafka's own Java client (KafkaShareConsumer and Admin, 4.3.0).

The driver (java/ShareDriver.java) runs one consumer per process, so several can share
a partition, and a test can stop one (SIGSTOP) to keep its records acquired, or kill
the broker under it. Heartbeats come every 500 ms here (Kafka's default 5 s would only
slow the tests: a new partition is assigned a heartbeat after its state is initialized).
"""

from __future__ import annotations

import signal
import subprocess
import time
from collections import Counter
from pathlib import Path

import pytest
from confluent_kafka import Consumer, Producer, TopicPartition
from confluent_kafka.admin import AdminClient, NewTopic

from tests.support.java_client import compile_driver_or_skip

pytestmark = pytest.mark.interop

DRIVER = Path(__file__).parent / "java" / "ShareDriver.java"
TIMEOUT_S = 120
FAST_HEARTBEATS = {"group.share.heartbeat.interval.ms": "500", "group.share.min.heartbeat.interval.ms": "500"}


@pytest.fixture(scope="session")
def share_driver() -> list[str]:
    return compile_driver_or_skip(DRIVER)


def _run(driver: list[str], *args: str) -> list[str]:
    result = subprocess.run([*driver, *args], capture_output=True, text=True, timeout=TIMEOUT_S)
    assert result.returncode == 0, result.stderr[-3000:]
    return result.stdout.splitlines()


def _records(lines: list[str]) -> list[tuple[int, str, int]]:
    """(offset, value, delivery count) of every "rec" line."""
    return [(int(w[2]), w[3], int(w[4])) for w in (line.split() for line in lines) if w and w[0] == "rec"]


def test_java_share_consumer_reads_every_record_once_and_keeps_its_acknowledgements_over_a_crash(
        broker_factory, share_driver):
    broker = broker_factory(FAST_HEARTBEATS)
    _run(share_driver, "produce", broker.bootstrap, "shared", "50", "0")
    _run(share_driver, "earliest", broker.bootstrap, "queue")
    first = _run(share_driver, "consume", broker.bootstrap, "shared", "queue", "50")
    assert first[-1] == "consumed 50"
    assert _records(first) == [(i, f"value-{i}", 1) for i in range(50)]
    _run(share_driver, "produce", broker.bootstrap, "shared", "20", "50")
    broker.restart(signal.SIGKILL)  # the acknowledgements were written to __share_group_state
    again = _run(share_driver, "consume", broker.bootstrap, "shared", "queue", "20")
    assert _records(again) == [(i, f"value-{i}", 1) for i in range(50, 70)]


def test_two_java_share_consumers_split_one_partition_with_no_record_twice(broker_factory, share_driver):
    broker = broker_factory(FAST_HEARTBEATS)
    _run(share_driver, "produce", broker.bootstrap, "split", "3000", "0")
    _run(share_driver, "earliest", broker.bootstrap, "pair")
    # slow workers (100 records a poll, 100 ms on each): neither drains the partition before the other joins
    consumers = [subprocess.Popen([*share_driver, "drain", broker.bootstrap, "split", "pair", "3000", "100"],
                                  stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True) for _ in range(2)]
    outputs = []
    for process in consumers:
        out, err = process.communicate(timeout=TIMEOUT_S)
        assert process.returncode == 0, err[-3000:]
        outputs.append(_records(out.splitlines()))
    offsets = Counter(offset for output in outputs for offset, _, _ in output)
    assert sorted(offsets) == list(range(3000)) and set(offsets.values()) == {1}
    assert all(count == 1 for output in outputs for _, _, count in output)
    assert all(outputs), [len(output) for output in outputs]  # both members got records of the one partition


def test_released_records_come_back_with_a_higher_delivery_count_and_rejected_ones_never(
        broker_factory, share_driver):
    broker = broker_factory(FAST_HEARTBEATS)
    _run(share_driver, "produce", broker.bootstrap, "again", "10", "0")
    _run(share_driver, "earliest", broker.bootstrap, "redeliver")
    released = _run(share_driver, "release", broker.bootstrap, "again", "redeliver", "10")
    assert released[-1] == "accepted 10"
    deliveries = _records(released)
    assert sorted((offset, count) for offset, _, count in deliveries) == [
        (i, n) for i in range(10) for n in (1, 2)]
    _run(share_driver, "produce", broker.bootstrap, "again", "5", "10")
    rejected = _run(share_driver, "reject", broker.bootstrap, "again", "redeliver", "5")
    assert rejected[-1] == "rejected 5 again 0"
    assert [offset for offset, _, _ in _records(rejected)] == list(range(10, 15))


def test_a_record_released_delivery_count_limit_times_is_archived(broker_factory, share_driver):
    broker = broker_factory({**FAST_HEARTBEATS, "group.share.delivery.count.limit": "2"})
    _run(share_driver, "produce", broker.bootstrap, "poison", "3", "0")
    _run(share_driver, "earliest", broker.bootstrap, "limited")
    deliveries = _records(_run(share_driver, "release-all", broker.bootstrap, "poison", "limited", "2000"))
    assert sorted((offset, count) for offset, _, count in deliveries) == [(i, n) for i in range(3) for n in (1, 2)]
    assert _run(share_driver, "drain", broker.bootstrap, "poison", "limited", "1000")[-1] == "drained 0"


def test_a_java_consumer_releasing_everything_gets_records_near_the_limit_in_halving_batches(
        broker_factory, share_driver):
    """Kafka 4.3's delivery throttling, seen by KafkaShareConsumer: with a delivery limit of 6, a
    batch of 8 released on every delivery comes whole three times, then in halves, each record
    alone on its last delivery (the order of deliveries shows it; each record still comes 6 times)."""
    broker = broker_factory({**FAST_HEARTBEATS, "group.share.delivery.count.limit": "6"})
    _run(share_driver, "produce", broker.bootstrap, "halving", "8", "0")
    _run(share_driver, "earliest", broker.bootstrap, "halves")
    deliveries = _records(_run(share_driver, "release-all", broker.bootstrap, "halving", "halves", "2000"))
    rounds = [(range(8), 1), (range(8), 2), (range(8), 3), (range(4), 4), (range(2), 5), ([0], 6), ([1], 6),
              (range(2, 4), 5), ([2], 6), ([3], 6), (range(4, 8), 4), (range(4, 6), 5), ([4], 6), ([5], 6),
              (range(6, 8), 5), ([6], 6), ([7], 6)]
    assert [(offset, count) for offset, _, count in deliveries] == [(o, n) for offsets, n in rounds for o in offsets]


def test_records_a_stopped_consumer_holds_go_to_another_once_their_lock_expires(broker_factory, share_driver):
    broker = broker_factory({**FAST_HEARTBEATS, "group.share.record.lock.duration.ms": "1000",
                             "group.share.min.record.lock.duration.ms": "1000"})
    _run(share_driver, "produce", broker.bootstrap, "locked", "10", "0")
    _run(share_driver, "earliest", broker.bootstrap, "stalled")
    holder = subprocess.Popen([*share_driver, "hold", broker.bootstrap, "locked", "stalled", "10"],
                              stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    try:
        held = []
        while True:  # bounded by the driver's own deadline: it prints "held N" either way
            line = holder.stdout.readline()
            assert line, holder.stderr.read()[-3000:]
            if line.startswith("held"):
                break
            held.append(line)
        assert _records(held) == [(i, f"value-{i}", 1) for i in range(10)]
        holder.send_signal(signal.SIGSTOP)  # its connection stays open: only the lock frees the records
        taken = _run(share_driver, "consume", broker.bootstrap, "locked", "stalled", "10")
        assert _records(taken) == [(i, f"value-{i}", 2) for i in range(10)]
    finally:
        holder.kill()
        holder.communicate(timeout=TIMEOUT_S)


def test_java_admin_lists_describes_and_deletes_a_share_group(broker_factory, share_driver):
    """Admin.listGroups and describeShareGroups see a member and its partition; a group with a
    member cannot be deleted. A consumer killed mid-way has its records released when its
    connection closes (not a lock duration later), and its member leaves at its session's end."""
    broker = broker_factory({**FAST_HEARTBEATS, "group.share.session.timeout.ms": "2000",
                             "group.share.min.session.timeout.ms": "1000"})
    _run(share_driver, "produce", broker.bootstrap, "admin-share", "5", "0")
    _run(share_driver, "earliest", broker.bootstrap, "described")
    holder = subprocess.Popen([*share_driver, "hold", broker.bootstrap, "admin-share", "described", "5"],
                              stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    try:
        while not (line := holder.stdout.readline()).startswith("held"):
            assert line, holder.stderr.read()[-3000:]
        assert _run(share_driver, "describe", broker.bootstrap, "described") == [
            "listed described Share Stable", "group described state=Stable members=1 epoch=assigned",
            "member admin-share-0"]
        assert _run(share_driver, "delete", broker.bootstrap, "described") == ["refused GroupNotEmptyException"]
    finally:
        holder.kill()
        holder.communicate(timeout=TIMEOUT_S)
    drained = _run(share_driver, "drain", broker.bootstrap, "admin-share", "described", "500")
    assert _records(drained) == [(i, f"value-{i}", 2) for i in range(5)]
    for _ in range(50):  # the killed member's 2 s session ends
        described = _run(share_driver, "describe", broker.bootstrap, "described")
        if described[1].startswith("group described state=Empty"):
            break
        time.sleep(0.2)
    # The last member's leaving moved the group epoch; no heartbeat computed a target since.
    assert described == ["listed described Share Empty", "group described state=Empty members=0 epoch=behind"]
    assert _run(share_driver, "delete", broker.bootstrap, "described") == ["deleted"]
    assert _run(share_driver, "describe", broker.bootstrap, "described") == ["missing GroupIdNotFoundException"]


def test_a_read_committed_share_group_never_hands_out_aborted_records(broker_factory, share_driver):
    broker = broker_factory(FAST_HEARTBEATS)
    _run(share_driver, "transactions", broker.bootstrap, "txn-share")
    _run(share_driver, "earliest", broker.bootstrap, "committed-only", "share.isolation.level=read_committed")
    _run(share_driver, "earliest", broker.bootstrap, "everything")
    committed = [value for _, value, _ in _records(_run(share_driver, "drain", broker.bootstrap, "txn-share",
                                                        "committed-only", "1000"))]
    assert committed == [f"committed-{i}" for i in range(10)]
    everything = [value for _, value, _ in _records(_run(share_driver, "drain", broker.bootstrap, "txn-share",
                                                         "everything", "1000"))]
    assert everything == [f"committed-{i}" for i in range(5)] + [f"aborted-{i}" for i in range(5)] + [
        f"committed-{i}" for i in range(5, 10)]


def test_java_admin_lists_resets_and_deletes_share_group_offsets(broker_factory, share_driver):
    """kafka-share-groups.sh's --describe --offsets, --reset-offsets and --delete-offsets: the start
    offset and lag of each share-partition, a new start for an empty group, and state forgotten
    until a member initializes it again."""
    broker = broker_factory(FAST_HEARTBEATS)
    _run(share_driver, "produce", broker.bootstrap, "offsets-share", "10", "0")
    _run(share_driver, "earliest", broker.bootstrap, "offsets")
    assert _run(share_driver, "consume", broker.bootstrap, "offsets-share", "offsets", "10")[-1] == "consumed 10"
    _run(share_driver, "produce", broker.bootstrap, "offsets-share", "5", "10")
    # The state holds the start offset as it was before the last acknowledgement (Kafka writes it
    # so) and the 10 records finished above it: start 0, lag 15 - 0 - 10.
    assert _run(share_driver, "offsets", broker.bootstrap, "offsets") == ["offset offsets-share-0 0 5", "offsets 1"]
    assert _run(share_driver, "reset", broker.bootstrap, "offsets", "offsets-share", "3") == ["reset"]
    assert _run(share_driver, "offsets", broker.bootstrap, "offsets") == ["offset offsets-share-0 3 12", "offsets 1"]
    again = _records(_run(share_driver, "drain", broker.bootstrap, "offsets-share", "offsets", "1000"))
    assert again == [(i, f"value-{i}", 1) for i in range(3, 15)]
    assert _run(share_driver, "forget", broker.bootstrap, "offsets", "offsets-share") == ["forgot"]
    assert _run(share_driver, "offsets", broker.bootstrap, "offsets") == ["offsets 0"]
    assert _run(share_driver, "forget", broker.bootstrap, "offsets", "offsets-share") == [
        "refused UnknownTopicOrPartitionException"]
    from_scratch = _records(_run(share_driver, "drain", broker.bootstrap, "offsets-share", "offsets", "1000"))
    assert [offset for offset, _, _ in from_scratch] == list(range(15))  # earliest again, state made anew


def test_a_record_limit_java_consumer_reads_every_record_once(broker_factory, share_driver):
    """share.acquire.mode=record_limit (KIP-1206): the Java client sends ShareFetch v2 with
    ShareAcquireMode 1 and takes the cut batches franz answers (that the broker acquires no
    more than MaxRecords is tested on the wire, tests/server/share/test_share_apis.py)."""
    broker = broker_factory(FAST_HEARTBEATS)
    _run(share_driver, "produce", broker.bootstrap, "limited-share", "10", "0")  # one producer batch
    _run(share_driver, "earliest", broker.bootstrap, "limited")
    lines = _run(share_driver, "limited", broker.bootstrap, "limited-share", "limited", "10")
    polls = [int(line.split()[1]) for line in lines if line.startswith("poll")]
    assert sum(polls) == 10 and max(polls) <= 3, polls
    assert _records(lines) == [(i, f"value-{i}", 1) for i in range(10)]


def test_java_share_consumer_is_refused_while_share_version_is_0(broker_factory, share_driver):
    """kafka-features.sh downgrade --feature share.version=0 (UpdateFeatures): the share group
    APIs answer UNSUPPORTED_VERSION, which KafkaShareConsumer reports as the cluster lacking
    share groups; upgraded again, the same group reads."""
    from tests.support.raw_client import RawClient
    broker = broker_factory(FAST_HEARTBEATS)
    _run(share_driver, "produce", broker.bootstrap, "off-and-on", "5", "0")

    def set_share_version(level: int, upgrade_type: int) -> None:
        with RawClient(broker.bootstrap) as client:
            answer = client.request(57, 2, {"timeout_ms": 30_000, "validate_only": False, "feature_updates": [
                {"feature": "share.version", "max_version_level": level, "upgrade_type": upgrade_type}]})
        assert answer["error_code"] == 0, answer

    set_share_version(0, 2)  # a safe downgrade
    refused = subprocess.run([*share_driver, "consume", broker.bootstrap, "off-and-on", "queue", "5"],
                             capture_output=True, text=True, timeout=TIMEOUT_S)
    assert refused.returncode != 0
    assert ("UnsupportedVersionException: The cluster does not support the share group protocol."
            in refused.stderr), refused.stderr[-2000:]
    set_share_version(1, 1)
    _run(share_driver, "earliest", broker.bootstrap, "queue")
    assert _run(share_driver, "consume", broker.bootstrap, "off-and-on", "queue", "5")[-1] == "consumed 5"


def test_a_persister_elsewhere_finds_this_coordinator_and_speaks_the_state_rpcs_in_the_clients_bytes(
        broker_factory, share_driver):
    """What another broker's persister sends: FindCoordinator of type SHARE, then the state RPCs
    (83-87), each built and parsed by kafka-clients' own request and response classes."""
    broker = broker_factory(FAST_HEARTBEATS)
    lines = _run(share_driver, "persister", broker.bootstrap, "remote", "persisted", "init")
    assert lines[0].startswith("coordinator NONE 1 remote:") and lines[0].endswith(":0"), lines
    assert lines[1:] == [
        "init 0 NONE", "init 1 NONE",
        "read NONE 1 0",
        "write 2 NONE null",
        "write 1 FENCED_LEADER_EPOCH The leader epoch in the request is older than the epoch on the broker.",
        "read NONE 1 0", "batch 0 2 2 1", "batch 3 4 0 1",
        "summary NONE 1 2 0 3",
        "delete 0 NONE", "delete 1 NONE",
        "summary NONE 0 0 -1 -1"]

    # The state a Java share consumer's acknowledgements wrote in-process, read as a persister reads it.
    _run(share_driver, "produce", broker.bootstrap, "persisted", "10", "0")
    _run(share_driver, "earliest", broker.bootstrap, "queue")
    assert _run(share_driver, "consume", broker.bootstrap, "persisted", "queue", "10")[-1] == "consumed 10"
    read = _run(share_driver, "persister", broker.bootstrap, "queue", "persisted")
    assert read[1].startswith("read NONE ") and read[1].endswith(" 0"), read
    assert read[2:] == ["batch 0 9 2 1", f"summary NONE {read[1].split()[2]} 0 0 10"]


def _offsets_in_log(bootstrap: str, topic: str) -> list[int]:
    consumer = Consumer({"bootstrap.servers": bootstrap, "group.id": "peek", "enable.partition.eof": True,
                         "enable.auto.commit": False})
    try:
        consumer.assign([TopicPartition(topic, 0, 0)])
        offsets = []
        for _ in range(1000):
            message = consumer.poll(5)
            if message is None or message.error():
                break
            offsets.append(message.offset())
        return offsets
    finally:
        consumer.close()


def test_a_java_share_consumer_reads_a_compacted_topic_and_acknowledges_its_holes_as_gaps(
        broker_factory, share_driver):
    """The cleaner removes 10-19 (their keys come again at 30-39). The broker hands out the runs
    around the hole whole, as Kafka does; KafkaShareConsumer acknowledges the missing offsets as
    gaps, so every record is delivered once and the share-partition's start passes the hole with
    nothing left to read."""
    broker = broker_factory({**FAST_HEARTBEATS, "log.cleaner.backoff.ms": "200"})
    admin = AdminClient({"bootstrap.servers": broker.bootstrap})
    admin.create_topics([NewTopic("compacted-share", 1, 1, config={
        "cleanup.policy": "compact", "segment.ms": "100", "min.cleanable.dirty.ratio": "0.01"})])["compacted-share"].result(10)
    producer = Producer({"bootstrap.servers": broker.bootstrap, "linger.ms": 0})
    for keys in ("a", "b", "c", "b", "d"):  # a segment each (segment.ms 100)
        for i in range(10):
            producer.produce("compacted-share", key=f"{keys}{i}", value=f"{keys}{i}")
        producer.flush()
        time.sleep(0.3)
    deadline = time.monotonic() + 60
    while 10 in (offsets := _offsets_in_log(broker.bootstrap, "compacted-share")) and time.monotonic() < deadline:
        time.sleep(0.5)
    assert offsets == [*range(10), *range(20, 50)]
    _run(share_driver, "earliest", broker.bootstrap, "compacted")
    drained = _run(share_driver, "drain", broker.bootstrap, "compacted-share", "compacted", "3000")
    assert [(offset, count) for offset, _, count in _records(drained)] == [(o, 1) for o in offsets]
    # The start offset is written as it was before each acknowledgement (as Kafka writes it), and how
    # the client groups the runs into acknowledgements depends on its timing. One more record, read
    # and acknowledged alone, writes the start that every earlier acknowledgement left: past the hole.
    producer.produce("compacted-share", key="e0", value="e0")
    producer.flush()
    drained = _run(share_driver, "drain", broker.bootstrap, "compacted-share", "compacted", "3000")
    assert [(offset, count) for offset, _, count in _records(drained)] == [(50, 1)]
    [line, count] = _run(share_driver, "offsets", broker.bootstrap, "compacted")
    assert (line.split()[1:], count) == (["compacted-share-0", "50", "0"], "offsets 1")
