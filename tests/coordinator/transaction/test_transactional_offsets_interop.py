"""Exactly-once consume-transform-produce with librdkafka against a real broker process:
the consumer's offsets go into the producer's transaction (send_offsets_to_transaction:
AddOffsetsToTxn + TxnOffsetCommit) and are committed with it, dropped with an abort,
and what was committed survives a SIGKILL of the broker while what was aborted does not.

Every wait is bounded by a deadline; clients are closed in `finally`.
"""

from __future__ import annotations

import time

import pytest
from confluent_kafka import OFFSET_INVALID, Consumer, Producer, TopicPartition

from franz.coordinator.group.group_coordinator_record_serde import partition_for
from tests.support.raw_client import RawClient, create_topic

pytestmark = pytest.mark.interop

TIMEOUT_S = 30.0
DESCRIBE_TRANSACTIONS, WRITE_TXN_MARKERS = 65, 27
OVERRIDES = {"group.initial.rebalance.delay.ms": "0", "group.min.session.timeout.ms": "1000",
             "offsets.topic.num.partitions": "5", "transaction.state.log.num.partitions": "5"}


@pytest.fixture
def eos_broker(broker_factory):
    return broker_factory(OVERRIDES)


def _setup(bootstrap: str, records: int) -> None:
    with RawClient(bootstrap) as client:
        create_topic(client, "in")
        create_topic(client, "out")
    producer = Producer({"bootstrap.servers": bootstrap})
    for i in range(records):
        producer.produce("in", value=b"v%d" % i, partition=0)
    assert producer.flush(TIMEOUT_S) == 0


def _transactional_producer(bootstrap: str, transactional_id: str) -> Producer:
    producer = Producer({"bootstrap.servers": bootstrap, "transactional.id": transactional_id,
                         "transaction.timeout.ms": 60_000})
    producer.init_transactions(TIMEOUT_S)
    return producer


def _consumer(bootstrap: str, group: str) -> Consumer:
    return Consumer({"bootstrap.servers": bootstrap, "group.id": group, "auto.offset.reset": "earliest",
                     "enable.auto.commit": False, "isolation.level": "read_committed",
                     "session.timeout.ms": 6000, "heartbeat.interval.ms": 300})


def _consume(consumer: Consumer, count: int) -> list[bytes]:
    values: list[bytes] = []
    deadline = time.monotonic() + TIMEOUT_S
    while len(values) < count:
        assert time.monotonic() < deadline, f"read {len(values)} of {count} records"
        message = consumer.poll(0.2)
        if message is not None and not message.error():
            values.append(message.value())
    return values


def _step(producer: Producer, consumer: Consumer, count: int, commit: bool = True) -> list[bytes]:
    """One consume-transform-produce transaction over the next `count` records; their values."""
    values = _consume(consumer, count)
    producer.begin_transaction()
    for value in values:
        producer.produce("out", value=value.upper(), partition=0)
    positions = consumer.position(consumer.assignment())
    producer.send_offsets_to_transaction(positions, consumer.consumer_group_metadata(), TIMEOUT_S)
    if commit:
        producer.commit_transaction(TIMEOUT_S)
    else:
        producer.abort_transaction(TIMEOUT_S)
    return values


def _committed(bootstrap: str, group: str) -> int:
    """The group's committed offset of in-0, as a new member of the group asks for it
    (read_committed: require_stable)."""
    consumer = _consumer(bootstrap, group)
    try:
        return consumer.committed([TopicPartition("in", 0)], timeout=TIMEOUT_S)[0].offset
    finally:
        consumer.close()


def test_offsets_sent_to_a_committed_transaction_are_the_groups_committed_offsets(eos_broker):
    _setup(eos_broker.bootstrap, 5)
    producer = _transactional_producer(eos_broker.bootstrap, "eos-commit")
    consumer = _consumer(eos_broker.bootstrap, "eos-group")
    try:
        consumer.subscribe(["in"])  # a real member: TxnOffsetCommit carries its generation and member id
        _step(producer, consumer, 3)
        assert _committed(eos_broker.bootstrap, "eos-group") == 3
        _step(producer, consumer, 2)
    finally:
        consumer.close()
    assert _committed(eos_broker.bootstrap, "eos-group") == 5


def _commit_then_abort(bootstrap: str, producer: Producer, group: str, committed: int, aborted: int) -> None:
    """From the start of in-0: a transaction over `committed` records, then one over `aborted` aborted."""
    consumer = _consumer(bootstrap, group)
    try:
        consumer.assign([TopicPartition("in", 0, 0)])
        _step(producer, consumer, committed)
        _step(producer, consumer, aborted, commit=False)
    finally:
        consumer.close()


def test_offsets_sent_to_an_aborted_transaction_are_not_committed(eos_broker):
    _setup(eos_broker.bootstrap, 4)
    producer = _transactional_producer(eos_broker.bootstrap, "eos-abort")
    _commit_then_abort(eos_broker.bootstrap, producer, "abort-group", committed=2, aborted=2)
    assert (_committed(eos_broker.bootstrap, "abort-group"), _committed(eos_broker.bootstrap, "never-committed")) \
        == (2, OFFSET_INVALID)


def test_committed_transactional_offsets_survive_a_broker_kill_and_aborted_ones_do_not(eos_broker):
    _setup(eos_broker.bootstrap, 6)
    producer = _transactional_producer(eos_broker.bootstrap, "eos-kill")
    _commit_then_abort(eos_broker.bootstrap, producer, "kill-group", committed=4, aborted=2)
    eos_broker.kill()
    eos_broker.start()
    assert _committed(eos_broker.bootstrap, "kill-group") == 4
    # the restarted broker still runs the transactions: the next one moves the offsets on
    again = _transactional_producer(eos_broker.bootstrap, "eos-kill")
    consumer = _consumer(eos_broker.bootstrap, "kill-group")
    try:
        consumer.assign([TopicPartition("in", 0, 4)])
        assert _step(again, consumer, 2) == [b"v4", b"v5"]
    finally:
        consumer.close()
    assert _committed(eos_broker.bootstrap, "kill-group") == 6


def test_a_commit_marker_written_by_an_operator_commits_the_transactions_offsets(eos_broker):
    """WriteTxnMarkers into the group's partition of __consumer_offsets (what a transaction
    coordinator sends, or an operator ending a transaction by hand) hands the marker to the
    group coordinator: the offsets sent to the still-open transaction become committed."""
    _setup(eos_broker.bootstrap, 3)
    producer = _transactional_producer(eos_broker.bootstrap, "eos-marker")
    consumer = _consumer(eos_broker.bootstrap, "marker-group")
    try:
        consumer.assign([TopicPartition("in", 0, 0)])
        values = _consume(consumer, 3)
        producer.begin_transaction()
        producer.send_offsets_to_transaction([TopicPartition("in", 0, len(values))],
                                             consumer.consumer_group_metadata(), TIMEOUT_S)
    finally:
        consumer.close()
    with RawClient(eos_broker.bootstrap) as client:
        described = client.request(DESCRIBE_TRANSACTIONS, 0, {"transactional_ids": ["eos-marker"]})
        state = described["transaction_states"][0]
        partition = partition_for("marker-group", int(OVERRIDES["offsets.topic.num.partitions"]))
        written = client.request(WRITE_TXN_MARKERS, 1, {"markers": [{
            "producer_id": state["producer_id"], "producer_epoch": state["producer_epoch"],
            "transaction_result": True, "coordinator_epoch": 0,
            "topics": [{"name": "__consumer_offsets", "partition_indexes": [partition]}]}]})
        assert written["markers"][0]["topics"][0]["partitions"][0]["error_code"] == 0
    assert _committed(eos_broker.bootstrap, "marker-group") == 3
