"""librdkafka's share consumer (confluent-kafka's ShareConsumer, KIP-932 preview in 2.16)
against a real broker process: two partitions read once each, acknowledgements kept, and
released records handed out again with their delivery count."""

from __future__ import annotations

import time

import confluent_kafka as ck
import pytest
from confluent_kafka.admin import AdminClient, AlterConfigOpType, ConfigEntry, ConfigResource, NewTopic

pytestmark = pytest.mark.interop

FAST = {"group.share.heartbeat.interval.ms": "500", "group.share.min.heartbeat.interval.ms": "500"}
TIMEOUT_S = 30


def _prepare(bootstrap: str, topic: str, group: str, count: int) -> None:
    admin = AdminClient({"bootstrap.servers": bootstrap})
    admin.create_topics([NewTopic(topic, 2, 1)])[topic].result(TIMEOUT_S)
    resource = ConfigResource(ConfigResource.Type.GROUP, group, incremental_configs=[
        ConfigEntry("share.auto.offset.reset", "earliest", incremental_operation=AlterConfigOpType.SET)])
    admin.incremental_alter_configs([resource])[resource].result(TIMEOUT_S)
    _produce(bootstrap, topic, range(count))


def _produce(bootstrap: str, topic: str, numbers) -> None:
    producer = ck.Producer({"bootstrap.servers": bootstrap})
    for i in numbers:
        producer.produce(topic, b"v%d" % i, partition=i % 2)
    assert producer.flush(TIMEOUT_S) == 0


def _consume(bootstrap: str, topic: str, group: str, count: int, release_first: bool = False) -> list[tuple]:
    """(partition, offset, value, delivery count) of every record polled until `count` were
    accepted; with `release_first`, each record is released at its first delivery."""
    mode = "explicit" if release_first else "implicit"
    consumer = ck.ShareConsumer({"bootstrap.servers": bootstrap, "group.id": group,
                                 "share.acknowledgement.mode": mode, "log_level": 3})
    consumer.subscribe([topic])
    seen, accepted = [], 0
    deadline = time.monotonic() + TIMEOUT_S
    try:
        while accepted < count and time.monotonic() < deadline:
            for message in consumer.poll(0.5):
                assert message.error() is None, message.error()
                seen.append((message.partition(), message.offset(), message.value(), message.delivery_count()))
                if release_first:
                    first = message.delivery_count() == 1
                    consumer.acknowledge(message, ck.AcknowledgeType.RELEASE if first else ck.AcknowledgeType.ACCEPT)
                    accepted += 0 if first else 1
                else:
                    accepted += 1
            if release_first:
                consumer.commit_sync()
        consumer.commit_sync()
    finally:
        consumer.close()
    return seen


def test_librdkafka_share_consumer_reads_both_partitions_once_and_resumes(broker_factory):
    broker = broker_factory(FAST)
    _prepare(broker.bootstrap, "rd-share", "rd-queue", 20)
    first = _consume(broker.bootstrap, "rd-share", "rd-queue", 20)
    assert sorted((p, o) for p, o, _, _ in first) == sorted((i % 2, i // 2) for i in range(20))
    assert {count for *_, count in first} == {1}
    _produce(broker.bootstrap, "rd-share", range(20, 24))
    again = _consume(broker.bootstrap, "rd-share", "rd-queue", 4)
    assert sorted(value for _, _, value, _ in again) == [b"v20", b"v21", b"v22", b"v23"]


def test_librdkafka_released_records_come_back_with_delivery_count_two(broker_factory):
    broker = broker_factory(FAST)
    _prepare(broker.bootstrap, "rd-release", "rd-again", 6)
    seen = _consume(broker.bootstrap, "rd-release", "rd-again", 6, release_first=True)
    assert sorted((value, count) for _, _, value, count in seen) == sorted(
        (b"v%d" % i, n) for i in range(6) for n in (1, 2))
