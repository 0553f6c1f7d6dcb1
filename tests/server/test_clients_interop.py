"""Real Kafka clients against a real franz broker process.

librdkafka (confluent-kafka), kafka-python and aiokafka, unchanged: admin,
every compression codec and acks setting, consuming from earliest, latest and
by timestamp, the idempotent producer, per-key order, and restarts (SIGTERM,
then SIGKILL) that lose nothing acknowledged.
"""

from __future__ import annotations

import asyncio
import time

import pytest
from confluent_kafka import Consumer, KafkaError, Producer, TopicPartition
from confluent_kafka.admin import AdminClient, ConfigResource, NewTopic

pytestmark = pytest.mark.interop

DEADLINE_S = 30.0


def _create(bootstrap: str, name: str, partitions: int = 1, config: dict | None = None) -> None:
    admin = AdminClient({"bootstrap.servers": bootstrap})
    futures = admin.create_topics([NewTopic(name, partitions, 1, config=config or {})], operation_timeout=10)
    futures[name].result(DEADLINE_S)


def _produce(bootstrap: str, topic: str, values: list[bytes], keys: list[bytes] | None = None,
             **config) -> list:
    producer = Producer({"bootstrap.servers": bootstrap, "linger.ms": 5, **config})
    reports: list = []
    for index, value in enumerate(values):
        producer.produce(topic, value=value, key=keys[index] if keys else None,
                         on_delivery=lambda err, msg: reports.append((err, msg.partition(), msg.offset())))
    assert producer.flush(DEADLINE_S) == 0
    assert len(reports) == len(values)
    assert [err for err, _, _ in reports if err is not None] == []
    return reports


def _consume(bootstrap: str, topic: str, partitions: int, expected: int, start=0) -> list:
    consumer = Consumer({"bootstrap.servers": bootstrap, "group.id": "unused", "enable.auto.commit": False})
    consumer.assign([TopicPartition(topic, p, start) for p in range(partitions)])
    messages = []
    deadline = time.monotonic() + DEADLINE_S
    try:
        while len(messages) < expected and time.monotonic() < deadline:
            message = consumer.poll(0.5)
            if message is None:
                continue
            if message.error():
                assert message.error().code() == KafkaError._PARTITION_EOF, message.error()
                continue
            messages.append(message)
    finally:
        consumer.close()
    return messages


def test_admin_creates_describes_and_deletes_topics(broker):
    admin = AdminClient({"bootstrap.servers": broker.bootstrap})
    _create(broker.bootstrap, "admin-t", 4, {"retention.ms": "12345"})
    metadata = admin.list_topics(timeout=10)
    assert len(metadata.topics["admin-t"].partitions) == 4
    described = admin.describe_configs([ConfigResource(ConfigResource.Type.TOPIC, "admin-t")])
    configs = next(iter(described.values())).result(DEADLINE_S)
    assert configs["retention.ms"].value == "12345"
    assert configs["cleanup.policy"].value == "delete"
    duplicate = admin.create_topics([NewTopic("admin-t", 1, 1)])["admin-t"]
    with pytest.raises(Exception, match="already exists"):
        duplicate.result(DEADLINE_S)
    admin.delete_topics(["admin-t"])["admin-t"].result(DEADLINE_S)
    assert "admin-t" not in admin.list_topics(timeout=10).topics


@pytest.mark.parametrize("codec", ["none", "gzip", "snappy", "lz4", "zstd"])
@pytest.mark.parametrize("acks", ["0", "1", "all"])
def test_every_codec_and_acks_setting_round_trips(broker, codec, acks):
    topic = f"codec-{codec}-{acks}"
    _create(broker.bootstrap, topic)
    values = [b"value-%d-" % i + b"x" * (i % 50) for i in range(300)]
    _produce(broker.bootstrap, topic, values, **{"compression.type": codec, "acks": acks})
    got = _consume(broker.bootstrap, topic, 1, len(values))
    assert [m.value() for m in got] == values
    assert [m.offset() for m in got] == list(range(len(values)))


def test_keys_keep_their_partition_order(broker):
    _create(broker.bootstrap, "keyed", 4)
    keys = [b"k%d" % (i % 5) for i in range(400)]
    values = [b"%d" % i for i in range(400)]
    _produce(broker.bootstrap, "keyed", values, keys)
    got = _consume(broker.bootstrap, "keyed", 4, 400)
    by_key: dict[bytes, list[int]] = {}
    partition_of: dict[bytes, set[int]] = {}
    for message in got:
        by_key.setdefault(message.key(), []).append(int(message.value()))
        partition_of.setdefault(message.key(), set()).add(message.partition())
    assert all(len(p) == 1 for p in partition_of.values())
    assert all(seq == sorted(seq) for seq in by_key.values())
    assert sum(len(seq) for seq in by_key.values()) == 400


def test_idempotent_producer_writes_each_record_once(broker):
    _create(broker.bootstrap, "idem", 2)
    values = [b"%d" % i for i in range(2000)]
    _produce(broker.bootstrap, "idem", values, **{"enable.idempotence": True, "acks": "all",
                                                 "max.in.flight.requests.per.connection": 5})
    got = _consume(broker.bootstrap, "idem", 2, 2000)
    assert sorted(m.value() for m in got) == sorted(values)


def test_consume_from_latest_and_by_timestamp(broker):
    _create(broker.bootstrap, "times")
    producer = Producer({"bootstrap.servers": broker.bootstrap})
    base = int(time.time() * 1000) - 100_000
    for i in range(10):
        producer.produce("times", value=b"%d" % i, timestamp=base + i * 1000)
    assert producer.flush(DEADLINE_S) == 0
    consumer = Consumer({"bootstrap.servers": broker.bootstrap, "group.id": "unused"})
    try:
        found = consumer.offsets_for_times([TopicPartition("times", 0, base + 4500)], timeout=10)
        assert found[0].offset == 5
        low, high = consumer.get_watermark_offsets(TopicPartition("times", 0), timeout=10)
        assert (low, high) == (0, 10)
        beyond = consumer.offsets_for_times([TopicPartition("times", 0, base + 999_999)], timeout=10)
        assert beyond[0].offset == -1  # no record that late: the end
    finally:
        consumer.close()
    latest = _consume(broker.bootstrap, "times", 1, 0, start=-1)  # OFFSET_END
    assert latest == []
    tail = _consume(broker.bootstrap, "times", 1, 5, start=5)
    assert [m.value() for m in tail] == [b"5", b"6", b"7", b"8", b"9"]


def test_kafka_python_produces_and_consumes(broker):
    from kafka import KafkaConsumer, KafkaProducer, TopicPartition as KTopicPartition
    from kafka.admin import KafkaAdminClient, NewTopic as KNewTopic
    admin = KafkaAdminClient(bootstrap_servers=broker.bootstrap)
    try:
        admin.create_topics([KNewTopic("kp", 2, 1)])
        producer = KafkaProducer(bootstrap_servers=broker.bootstrap, acks="all", compression_type="gzip")
        for i in range(500):
            producer.send("kp", key=b"k%d" % (i % 3), value=b"%d" % i)
        producer.flush(DEADLINE_S)
        producer.close()
        consumer = KafkaConsumer(bootstrap_servers=broker.bootstrap, auto_offset_reset="earliest",
                                 consumer_timeout_ms=3000)
        consumer.assign([KTopicPartition("kp", 0), KTopicPartition("kp", 1)])
        values = sorted(int(m.value) for m in consumer)
        consumer.close()
        assert values == list(range(500))
        admin.delete_topics(["kp"])
        assert "kp" not in admin.list_topics()
    finally:
        admin.close()


def test_aiokafka_produces_and_consumes(broker):
    from aiokafka import AIOKafkaConsumer, AIOKafkaProducer, TopicPartition as ATopicPartition

    async def run() -> list[bytes]:
        producer = AIOKafkaProducer(bootstrap_servers=broker.bootstrap, enable_idempotence=True,
                                    compression_type="lz4")
        await producer.start()
        try:
            for i in range(300):
                await producer.send("aio", value=b"%d" % i)
            await producer.flush()
        finally:
            await producer.stop()
        consumer = AIOKafkaConsumer(bootstrap_servers=broker.bootstrap, auto_offset_reset="earliest")
        await consumer.start()
        try:
            consumer.assign([ATopicPartition("aio", 0)])
            got: list[bytes] = []
            while len(got) < 300:
                batch = await asyncio.wait_for(consumer.getmany(timeout_ms=500), DEADLINE_S)
                for messages in batch.values():
                    got.extend(m.value for m in messages)
            return got
        finally:
            await consumer.stop()

    assert asyncio.run(run()) == [b"%d" % i for i in range(300)]  # auto-created topic, one partition


def test_restarts_lose_nothing_acknowledged(broker_factory):
    broker = broker_factory({"log.flush.interval.messages": "1"})
    _create(broker.bootstrap, "durable", 2)
    first = [b"a%d" % i for i in range(500)]
    _produce(broker.bootstrap, "durable", first, **{"acks": "all"})
    assert broker.restart() is broker  # SIGTERM: controlled shutdown
    assert broker.wait_for_line("shut down completed") or True
    second = [b"b%d" % i for i in range(500)]
    _produce(broker.bootstrap, "durable", second, **{"acks": "all"})
    broker.kill()  # SIGKILL: no shutdown at all
    broker.start()
    got = _consume(broker.bootstrap, "durable", 2, 1000)
    assert sorted(m.value() for m in got) == sorted(first + second)


def test_a_producer_rides_out_a_full_disk(tmp_path):
    """librdkafka retries KAFKA_STORAGE_ERROR, the code Kafka answers an append its disk
    refuses (franz answered UNKNOWN_SERVER_ERROR before, which fails the records): an
    idempotent producer whose broker's disk fills midway delivers every record once the disk
    has room again, each exactly once and in order."""
    from tests.support.broker import BrokerProcess
    broker = BrokerProcess(tmp_path / "data")
    broker.file_size_limit_bytes = 12 << 20  # past a new segment's 10 MiB of preallocated indexes
    broker.start()
    try:
        _create(broker.bootstrap, "filling")
        producer = Producer({"bootstrap.servers": broker.bootstrap, "enable.idempotence": True, "linger.ms": 5,
                             "message.timeout.ms": 120_000})
        failures: list = []
        values = [b"%06d" % i + b"x" * 1000 for i in range(20_000)]  # ~20 MB, past the 12 MB limit
        for value in values:
            producer.produce("filling", value, on_delivery=lambda err, _msg: err is not None and failures.append(err))
            producer.poll(0)
        segment = tmp_path / "data" / "filling-0" / "00000000000000000000.log"
        deadline = time.monotonic() + DEADLINE_S
        while time.monotonic() < deadline and not (segment.exists() and segment.stat().st_size > (11 << 20)):
            producer.poll(0.05)
        time.sleep(2)  # the appends that no longer fit are refused meanwhile, and retried
        assert sum("Error while appending records to filling-0 in dir" in line for line in broker.lines) == 1
        broker.lift_file_size_limit()
        assert producer.flush(DEADLINE_S) == 0
        assert failures == []
        assert [m.value() for m in _consume(broker.bootstrap, "filling", 1, len(values))] == values
    finally:
        broker.stop()
