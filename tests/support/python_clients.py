"""Round trips through librdkafka (confluent-kafka), kafka-python and aiokafka with given
connection settings (a security protocol's): produce `count` values, then read them back from the
earliest offset."""

from __future__ import annotations

import asyncio
import time

DEADLINE_S = 30


def values(count: int) -> list[bytes]:
    return [b"v%d" % index for index in range(count)]


def upsert_scram_credential(bootstrap: str, user: str, password: bytes, iterations: int = 8192) -> None:
    """A SCRAM-SHA-512 credential made with AlterUserScramCredentials (librdkafka's admin client)."""
    from confluent_kafka.admin import AdminClient, ScramCredentialInfo, ScramMechanism, UserScramCredentialUpsertion
    admin = AdminClient({"bootstrap.servers": bootstrap})
    upsertion = UserScramCredentialUpsertion(user, ScramCredentialInfo(ScramMechanism.SCRAM_SHA_512, iterations),
                                             password)
    for future in admin.alter_user_scram_credentials([upsertion]).values():
        future.result(DEADLINE_S)


def librdkafka_round_trip(config: dict, topic: str, count: int = 200) -> list[bytes]:
    """Idempotently produced, read by a consumer group of its own."""
    from confluent_kafka import Consumer, Producer
    failures: list = []
    producer = Producer({**config, "enable.idempotence": True})
    for index in range(count):
        producer.produce(topic, b"v%d" % index, on_delivery=lambda err, _m: err and failures.append(err))
    assert producer.flush(DEADLINE_S) == 0 and not failures, failures
    consumer = Consumer({**config, "group.id": f"{topic}-group", "auto.offset.reset": "earliest"})
    consumer.subscribe([topic])
    read: list[bytes] = []
    deadline = time.monotonic() + DEADLINE_S
    try:
        while len(read) < count and time.monotonic() < deadline:
            message = consumer.poll(0.5)
            if message is not None and message.error() is None:
                read.append(message.value())
    finally:
        consumer.close()
    return read


def kafka_python_round_trip(settings: dict, topic: str, count: int = 50) -> list[bytes]:
    from kafka import KafkaConsumer, KafkaProducer
    producer = KafkaProducer(**settings)
    for value in values(count):
        producer.send(topic, value)
    producer.flush(DEADLINE_S)
    producer.close()
    consumer = KafkaConsumer(topic, auto_offset_reset="earliest", consumer_timeout_ms=10_000, **settings)
    read = [message.value for message in consumer]
    consumer.close()
    return read[:count]


def aiokafka_round_trip(settings: dict, topic: str, count: int = 50) -> list[bytes]:
    from aiokafka import AIOKafkaConsumer, AIOKafkaProducer

    async def scenario() -> list[bytes]:
        producer = AIOKafkaProducer(**settings)
        await producer.start()
        try:
            for value in values(count):
                await producer.send_and_wait(topic, value)
        finally:
            await producer.stop()
        consumer = AIOKafkaConsumer(topic, auto_offset_reset="earliest", **settings)
        await consumer.start()
        try:
            read: list[bytes] = []
            while len(read) < count:
                batch = await asyncio.wait_for(consumer.getmany(timeout_ms=500), DEADLINE_S)
                read += [message.value for messages in batch.values() for message in messages]
            return read
        finally:
            await consumer.stop()

    return asyncio.run(scenario())
