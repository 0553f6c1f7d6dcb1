"""Transactions end to end: librdkafka's transactional producer against a real
broker; read_committed consumers see committed records only; aborted ones are
skipped; a producer with the same transactional id fences the old one; an
unfinished transaction does not survive the broker's restart half-done."""

from __future__ import annotations

import time

import pytest
from confluent_kafka import Consumer, KafkaException, Producer, TopicPartition

from franz.protocol.errors import Errors
from tests.support.raw_client import RawClient, create_topic

pytestmark = pytest.mark.interop

TIMEOUT_S = 30.0


def _producer(bootstrap: str, transactional_id: str) -> Producer:
    producer = Producer({"bootstrap.servers": bootstrap, "transactional.id": transactional_id,
                         "transaction.timeout.ms": 60_000})
    producer.init_transactions(TIMEOUT_S)
    return producer


def _open_transaction(bootstrap: str, transactional_id: str, topic: str, value: bytes) -> Producer:
    """A producer whose transaction holds `value`, sent to partition 0 and not yet ended."""
    producer = _producer(bootstrap, transactional_id)
    producer.begin_transaction()
    producer.produce(topic, value=value, partition=0)
    producer.flush(TIMEOUT_S)  # else librdkafka may purge it unsent when the transaction ends
    return producer


def _read(bootstrap: str, topic: str, isolation: str, until: int) -> list[bytes]:
    consumer = Consumer({"bootstrap.servers": bootstrap, "group.id": "unused", "enable.auto.commit": False,
                         "isolation.level": isolation, "enable.partition.eof": True})
    consumer.assign([TopicPartition(topic, 0, 0)])
    values: list[bytes] = []
    deadline = time.monotonic() + TIMEOUT_S
    try:
        while time.monotonic() < deadline:
            message = consumer.poll(0.5)
            if message is None:
                continue
            if message.error():
                if message.offset() >= until:  # _PARTITION_EOF at the end we expect
                    break
                continue
            values.append(message.value())
    finally:
        consumer.close()
    return values


@pytest.mark.parametrize("topic_codec", [None, "zstd"])
def test_committed_records_are_read_and_aborted_ones_skipped(broker, topic_codec):
    # With a topic codec, data batches are recompressed and the markers must stay control batches.
    with RawClient(broker.bootstrap) as client:
        create_topic(client, "tx", configs={"compression.type": topic_codec} if topic_codec else None)
    producer = _producer(broker.bootstrap, "tx-1")
    producer.begin_transaction()
    for i in range(3):
        producer.produce("tx", value=b"c%d" % i, partition=0)
    producer.commit_transaction(TIMEOUT_S)
    producer.begin_transaction()
    for i in range(3):
        producer.produce("tx", value=b"a%d" % i, partition=0)
    producer.flush(TIMEOUT_S)  # else librdkafka purges them unsent and nothing reaches the log
    producer.abort_transaction(TIMEOUT_S)
    producer.begin_transaction()
    producer.produce("tx", value=b"c3", partition=0)
    producer.commit_transaction(TIMEOUT_S)
    # 3 + marker + 3 + marker + 1 + marker = offsets 0..9, LSO/HW 10
    assert _read(broker.bootstrap, "tx", "read_committed", 10) == [b"c0", b"c1", b"c2", b"c3"]
    uncommitted = _read(broker.bootstrap, "tx", "read_uncommitted", 10)
    assert uncommitted == [b"c0", b"c1", b"c2", b"a0", b"a1", b"a2", b"c3"]


def test_an_open_transaction_holds_back_read_committed_consumers(broker):
    with RawClient(broker.bootstrap) as client:
        create_topic(client, "open")
    producer = _open_transaction(broker.bootstrap, "tx-open", "open", b"pending")
    consumer = Consumer({"bootstrap.servers": broker.bootstrap, "group.id": "unused",
                         "isolation.level": "read_committed"})
    try:
        low, high = consumer.get_watermark_offsets(TopicPartition("open", 0), timeout=10)
        assert high == 0  # the LSO: nothing is stable yet
    finally:
        consumer.close()
    producer.commit_transaction(TIMEOUT_S)
    assert _read(broker.bootstrap, "open", "read_committed", 2) == [b"pending"]


def test_a_new_producer_with_the_same_id_fences_the_old_one(broker):
    with RawClient(broker.bootstrap) as client:
        create_topic(client, "fence")
    old = _open_transaction(broker.bootstrap, "tx-fence", "fence", b"zombie")
    new = _producer(broker.bootstrap, "tx-fence")  # aborts the open transaction
    new.begin_transaction()
    new.produce("fence", value=b"live", partition=0)
    new.commit_transaction(TIMEOUT_S)
    with pytest.raises(KafkaException):
        old.commit_transaction(TIMEOUT_S)
    assert _read(broker.bootstrap, "fence", "read_committed", 4) == [b"live"]


def test_transactions_survive_a_broker_kill(broker):
    with RawClient(broker.bootstrap) as client:
        create_topic(client, "durable-tx")
    producer = _producer(broker.bootstrap, "tx-durable")
    producer.begin_transaction()
    producer.produce("durable-tx", value=b"kept", partition=0)
    producer.commit_transaction(TIMEOUT_S)
    broker.kill()
    broker.start()
    again = _producer(broker.bootstrap, "tx-durable")  # the id is known: same producer id, next epoch
    again.begin_transaction()
    again.produce("durable-tx", value=b"after", partition=0)
    again.commit_transaction(TIMEOUT_S)
    assert _read(broker.bootstrap, "durable-tx", "read_committed", 4) == [b"kept", b"after"]


DESCRIBE_TRANSACTIONS, LIST_TRANSACTIONS = 65, 66


def test_list_and_describe_transactions_report_each_ids_state_as_kafka_names_it(broker):
    """kafka-transactions.sh list / describe: ListTransactions (filters by state name, producer
    id, from v1 duration, from v2 an id pattern) and DescribeTransactions (an open one's partitions)."""
    with RawClient(broker.bootstrap) as client:
        create_topic(client, "listed")
    _open_transaction(broker.bootstrap, "tx-done", "listed", b"d").commit_transaction(TIMEOUT_S)
    open_ = _open_transaction(broker.bootstrap, "tx-open-listed", "listed", b"o")
    with RawClient(broker.bootstrap) as client:
        def listed(version: int = 1, **filters) -> dict:
            body = {"state_filters": [], "producer_id_filters": [], "duration_filter": -1, **filters}
            answer = client.request(LIST_TRANSACTIONS, version, body)
            assert answer["error_code"] == Errors.NONE
            return answer

        states = {s["transactional_id"]: s for s in listed(version=0)["transaction_states"]}
        assert {name: s["transaction_state"] for name, s in states.items()} == {
            "tx-done": "CompleteCommit", "tx-open-listed": "Ongoing"}
        assert [s["transactional_id"] for s in listed(state_filters=["Ongoing"])["transaction_states"]] == [
            "tx-open-listed"]
        unknown = listed(state_filters=["Bogus"])
        assert (unknown["transaction_states"], unknown["unknown_state_filters"]) == ([], ["Bogus"])
        done_id = states["tx-done"]["producer_id"]
        assert [s["transactional_id"] for s in listed(producer_id_filters=[done_id])["transaction_states"]] == [
            "tx-done"]
        assert listed(duration_filter=3_600_000)["transaction_states"] == []  # none has run for an hour
        # v2 (KIP-1152): the whole id must match the pattern; one that does not compile is refused.
        assert [s["transactional_id"] for s in listed(version=2, transactional_id_pattern="tx-open.*")[
            "transaction_states"]] == ["tx-open-listed"]
        assert listed(version=2, transactional_id_pattern="open")["transaction_states"] == []
        assert len(listed(version=2, transactional_id_pattern="")["transaction_states"]) == 2
        for java_syntax in (r"tx-\Qopen\E-.*", "(?<kind>tx)-open.*", r"\w\w-open-\w+"):
            assert [s["transactional_id"] for s in listed(version=2, transactional_id_pattern=java_syntax)[
                "transaction_states"]] == ["tx-open-listed"], java_syntax
        for bad_pattern in ("tx-([", "(?P<kind>tx).*"):  # the second is Python's syntax, not Java's
            bad = client.request(LIST_TRANSACTIONS, 2, {"state_filters": [], "producer_id_filters": [],
                                                        "duration_filter": -1, "transactional_id_pattern": bad_pattern})
            assert (bad["error_code"], bad["transaction_states"]) == (Errors.INVALID_REGULAR_EXPRESSION, [])

        described = client.request(DESCRIBE_TRANSACTIONS, 0, {
            "transactional_ids": ["tx-open-listed", "tx-nope", ""]})["transaction_states"]
        ongoing, missing, empty = described
        assert (ongoing["error_code"], ongoing["transaction_state"], ongoing["topics"]) == (
            Errors.NONE, "Ongoing", [{"topic": "listed", "partitions": [0]}])
        assert ongoing["producer_id"] == states["tx-open-listed"]["producer_id"]
        assert ongoing["transaction_timeout_ms"] == 60_000 and ongoing["transaction_start_time_ms"] > 0
        assert missing["error_code"] == Errors.TRANSACTIONAL_ID_NOT_FOUND
        assert empty["error_code"] == Errors.INVALID_REQUEST
    open_.abort_transaction(TIMEOUT_S)
