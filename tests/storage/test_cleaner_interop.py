"""Log compaction seen by real clients: a broker process compacts a topic and __consumer_offsets while
confluent-kafka (librdkafka) produces, consumes and commits.

Every wait is bounded by a deadline; clients are closed in `finally`.
"""

from __future__ import annotations

import time

import pytest
from confluent_kafka import OFFSET_BEGINNING, Consumer, Producer, TopicPartition
from confluent_kafka.admin import AdminClient, NewTopic

from franz.records import MemoryRecords

pytestmark = pytest.mark.interop

DEADLINE_S = 60.0
KEYS, ROUNDS = 10, 20
CLEANER_OVERRIDES = {"log.cleaner.backoff.ms": "100", "offsets.topic.num.partitions": "1",
                     "offsets.topic.segment.bytes": "2048", "group.initial.rebalance.delay.ms": "0"}


def _produce_rounds(bootstrap: str, topic: str) -> None:
    # Batches under the topic's 2,048-byte segments: a larger one is refused (RECORD_LIST_TOO_LARGE).
    producer = Producer({"bootstrap.servers": bootstrap, "linger.ms": 0, "batch.size": 1024})
    for round_ in range(ROUNDS):
        for key in range(KEYS):
            producer.produce(topic, key=b"key-%d" % key, value=b"round-%d" % round_)
        assert producer.flush(DEADLINE_S) == 0
    producer.produce(topic, key=b"key-0", value=None)  # a tombstone
    assert producer.flush(DEADLINE_S) == 0  # in a batch of its own, not in the fillers' (active) one
    # Filler with other keys, so that the records above leave the active segment.
    for filler in range(40):
        producer.produce(topic, key=b"filler-%d" % filler, value=b"x" * 100)
    assert producer.flush(DEADLINE_S) == 0


def _read_all(bootstrap: str, topic: str) -> list:
    consumer = Consumer({"bootstrap.servers": bootstrap, "group.id": "reader", "enable.auto.commit": False})
    try:
        consumer.assign([TopicPartition(topic, 0, OFFSET_BEGINNING)])
        _, high = consumer.get_watermark_offsets(TopicPartition(topic, 0), timeout=DEADLINE_S)
        records = []
        deadline = time.monotonic() + DEADLINE_S
        while not records or records[-1].offset() < high - 1:
            assert time.monotonic() < deadline, "gave up reading"
            message = consumer.poll(0.2)
            if message is not None and not message.error():
                records.append(message)
        return records
    finally:
        consumer.close()


def test_a_compacted_topic_keeps_the_latest_value_of_each_key_at_its_offset(broker_factory):
    broker = broker_factory(CLEANER_OVERRIDES)
    admin = AdminClient({"bootstrap.servers": broker.bootstrap})
    admin.create_topics([NewTopic("compacted", 1, 1, config={
        "cleanup.policy": "compact", "segment.bytes": "2048", "min.cleanable.dirty.ratio": "0.01"})])[
        "compacted"].result(DEADLINE_S)
    _produce_rounds(broker.bootstrap, "compacted")
    assert broker.wait_cleaned("compacted", 0, KEYS * ROUNDS + 1, DEADLINE_S), "never cleaned past the keys"

    records = _read_all(broker.bootstrap, "compacted")
    offsets = [m.offset() for m in records]
    assert offsets == sorted(offsets) and len(offsets) < KEYS * ROUNDS
    latest = {}
    for message in records:
        latest[message.key()] = (message.value(), message.offset())
    for key in range(1, KEYS):
        # The latest value survives at the offset it was written at: the last round's, key by key.
        assert latest[b"key-%d" % key] == (b"round-%d" % (ROUNDS - 1), (ROUNDS - 1) * KEYS + key)
    assert latest[b"key-0"] == (None, ROUNDS * KEYS)  # the tombstone stays for delete.retention.ms
    assert not any(m.key().startswith(b"key-") and m.value() == b"round-0" for m in records)
    low, high = Consumer({"bootstrap.servers": broker.bootstrap, "group.id": "w"}).get_watermark_offsets(
        TopicPartition("compacted", 0), timeout=DEADLINE_S)
    assert (low, high) == (0, KEYS * ROUNDS + 41)  # compaction moves neither end


def test_a_compacted_consumer_offsets_topic_still_loads_the_last_commit(broker_factory):
    broker = broker_factory(CLEANER_OVERRIDES)
    admin = AdminClient({"bootstrap.servers": broker.bootstrap})
    admin.create_topics([NewTopic("events", 1, 1)])["events"].result(DEADLINE_S)
    consumer = Consumer({"bootstrap.servers": broker.bootstrap, "group.id": "committer",
                         "enable.auto.commit": False})
    try:
        for offset in range(1, 61):
            consumer.commit(offsets=[TopicPartition("events", 0, offset)], asynchronous=False)
    finally:
        consumer.close()
    assert broker.wait_for_line("cleaned log __consumer_offsets-0", DEADLINE_S)
    broker.stop()
    on_disk = [r for path in sorted((broker.data_dir / "__consumer_offsets-0").glob("*.log"))
               for r in MemoryRecords(path.read_bytes()).records()]
    assert 0 < len(on_disk) < 60  # commits of the same group-topic-partition key were compacted away
    broker.start()
    consumer = Consumer({"bootstrap.servers": broker.bootstrap, "group.id": "committer"})
    try:
        (committed,) = consumer.committed([TopicPartition("events", 0)], timeout=DEADLINE_S)
        assert committed.offset == 60
    finally:
        consumer.close()


def test_delete_records_on_a_compact_only_topic_is_a_policy_violation(broker):
    admin = AdminClient({"bootstrap.servers": broker.bootstrap})
    admin.create_topics([NewTopic("keyed", 1, 1, config={"cleanup.policy": "compact"})])["keyed"].result(DEADLINE_S)
    producer = Producer({"bootstrap.servers": broker.bootstrap})
    producer.produce("keyed", key=b"k", value=b"v")
    assert producer.flush(DEADLINE_S) == 0
    result = admin.delete_records([TopicPartition("keyed", 0, 1)])
    with pytest.raises(Exception, match="POLICY_VIOLATION|policy"):
        next(iter(result.values())).result(DEADLINE_S)


def _read_values(bootstrap: str, topic: str, isolation: str) -> dict:
    """key -> latest value read from offset 0 to the end, at `isolation`."""
    consumer = Consumer({"bootstrap.servers": bootstrap, "group.id": "reader", "enable.auto.commit": False,
                         "isolation.level": isolation, "enable.partition.eof": True})
    latest = {}
    try:
        consumer.assign([TopicPartition(topic, 0, OFFSET_BEGINNING)])
        deadline = time.monotonic() + DEADLINE_S
        while True:
            assert time.monotonic() < deadline, "gave up reading"
            message = consumer.poll(0.2)
            if message is None:
                continue
            if message.error():
                break  # _PARTITION_EOF: the end, at this isolation level
            latest[message.key()] = message.value()
    finally:
        consumer.close()
    return latest


def test_compaction_drops_aborted_transactions_and_keeps_committed_ones(broker_factory):
    """Ten transactions over the same keys, every third aborted, each aborted one with a key of its own:
    once compacted, neither isolation level sees an aborted record, and the committed latest values remain."""
    broker = broker_factory(CLEANER_OVERRIDES)
    admin = AdminClient({"bootstrap.servers": broker.bootstrap})
    admin.create_topics([NewTopic("tx-compacted", 1, 1, config={
        "cleanup.policy": "compact", "segment.bytes": "2048", "min.cleanable.dirty.ratio": "0.01"})])[
        "tx-compacted"].result(DEADLINE_S)
    producer = Producer({"bootstrap.servers": broker.bootstrap, "transactional.id": "compacting"})
    producer.init_transactions(DEADLINE_S)
    for round_ in range(10):
        producer.begin_transaction()
        for key in range(5):
            producer.produce("tx-compacted", key=b"key-%d" % key, value=b"round-%d" % round_, partition=0)
        aborted = round_ % 3 == 2
        if aborted:
            producer.produce("tx-compacted", key=b"aborted-%d" % round_, value=b"never", partition=0)
        producer.flush(DEADLINE_S)
        if aborted:
            producer.abort_transaction(DEADLINE_S)
        else:
            producer.commit_transaction(DEADLINE_S)
    filler = Producer({"bootstrap.servers": broker.bootstrap, "batch.size": 1024})  # batches fit a segment
    for i in range(40):  # moves the transactions out of the active segment
        filler.produce("tx-compacted", key=b"filler-%d" % i, value=b"x" * 100, partition=0)
    assert filler.flush(DEADLINE_S) == 0
    assert broker.wait_cleaned("tx-compacted", 0, 63, DEADLINE_S)  # past all 63 records and markers
    for isolation in ("read_committed", "read_uncommitted"):
        latest = _read_values(broker.bootstrap, "tx-compacted", isolation)
        assert {latest[b"key-%d" % key] for key in range(5)} == {b"round-9"}, isolation
        assert not [k for k in latest if k.startswith(b"aborted-")], isolation
