"""KafkaJS against a broker process: a client written from the protocol in JavaScript, sharing no
code with librdkafka or the Java client (tests/interop/node/kafkajs_driver.js). Its admin client,
an idempotent gzip or snappy producer whose records librdkafka reads back, a group of two members,
transactions under its read_committed consumer, and SASL/SCRAM."""

from __future__ import annotations

import pytest

from tests.support.broker import BrokerProcess, free_port
from tests.support.kafkajs import run_kafkajs
from tests.support.python_clients import upsert_scram_credential

pytestmark = pytest.mark.interop

SCRAM_JAAS = "org.apache.kafka.common.security.scram.ScramLoginModule required;"
DEADLINE_S = 30


class JsBroker:
    def __init__(self, process: BrokerProcess, sasl_port: int) -> None:
        self.process = process
        self.bootstrap = process.bootstrap
        self.sasl = f"127.0.0.1:{sasl_port}"


@pytest.fixture(scope="module")
def js_broker(tmp_path_factory):
    """PLAINTEXT, and SASL_PLAINTEXT with SCRAM-SHA-512 (user carol)."""
    sasl_port = free_port()
    process = BrokerProcess(tmp_path_factory.mktemp("kafkajs") / "data", {
        "sasl.enabled.mechanisms": "SCRAM-SHA-512",
        "listener.name.sasl_plaintext.scram-sha-512.sasl.jaas.config": SCRAM_JAAS,
        "num.partitions": "1",
    })
    process.overrides["listeners"] = f"PLAINTEXT://127.0.0.1:{process.port},SASL_PLAINTEXT://127.0.0.1:{sasl_port}"
    process.start()
    try:
        upsert_scram_credential(process.bootstrap, "carol", b"carol-secret")
        yield JsBroker(process, sasl_port)
    finally:
        process.stop()


def test_kafkajs_admin_creates_describes_alters_grows_and_deletes_a_topic(js_broker):
    seen = run_kafkajs("admin", js_broker.bootstrap, "js-admin")
    assert seen["created"] is True and seen["again"] is False  # TOPIC_ALREADY_EXISTS, as KafkaJS reads it
    assert seen["partitions"] == 2 and seen["leaders"] == [1, 1]
    assert seen["described"] == {"retention.ms": ["3600000", False], "cleanup.policy": ["delete", True]}
    # AlterConfigs replaces a topic's whole set: retention.ms went back to its default
    assert seen["altered"] == {"cleanup.policy": ["compact", False], "retention.ms": ["604800000", True]}
    assert seen["grown"] == 4 and seen["offsets"] == [[p, "0", "0"] for p in range(4)]
    assert seen["listed"] and seen["deleted"]
    assert seen["brokers"] == [[1, "127.0.0.1", js_broker.process.port]] and seen["controller"] == 1


@pytest.mark.parametrize("codec", ["gzip", "snappy"])
def test_kafkajs_produces_what_librdkafka_reads(js_broker, codec):
    """Idempotent compressed batches with keys and headers: each key in one partition, in order,
    and librdkafka reads back the values, keys and headers KafkaJS sent."""
    from confluent_kafka import Consumer
    from confluent_kafka.admin import AdminClient, NewTopic
    topic = f"js-produce-{codec}"
    admin = AdminClient({"bootstrap.servers": js_broker.bootstrap})
    admin.create_topics([NewTopic(topic, num_partitions=3)])[topic].result(DEADLINE_S)
    placed = run_kafkajs("produce", js_broker.bootstrap, topic, "200", codec)["placed"]
    assert {error for _partition, _offset, error in placed} == {0}
    consumer = Consumer({"bootstrap.servers": js_broker.bootstrap, "group.id": f"rd-reads-{topic}",
                         "auto.offset.reset": "earliest"})
    consumer.subscribe([topic])
    records = []
    try:
        for _ in range(200):
            if len(records) == 200:
                break
            for message in consumer.consume(200, 0.5):
                assert message.error() is None, message.error()
                records.append((message.partition(), message.offset(), message.key().decode(),
                                message.value().decode(), dict(message.headers() or [])))
    finally:
        consumer.close()
    assert sorted(int(value[1:]) for _p, _o, _k, value, _h in records) == list(range(200))
    for _partition, _offset, key, value, headers in records:
        assert key == f"k{int(value[1:]) % 10}" and headers == {"index": value[1:].encode()}
    partitions_of_key: dict[str, set[int]] = {}
    for partition, _offset, key, _value, _headers in records:
        partitions_of_key.setdefault(key, set()).add(partition)
    assert all(len(partitions) == 1 for partitions in partitions_of_key.values())
    for key in partitions_of_key:  # in send order within the key's partition
        ordered = [int(v[1:]) for _p, _o, k, v, _h in sorted(records, key=lambda r: r[1]) if k == key]
        assert ordered == sorted(ordered)


def test_two_kafkajs_members_share_a_group_commit_reset_and_delete_it(js_broker):
    from confluent_kafka import Producer
    from confluent_kafka.admin import AdminClient, NewTopic
    admin = AdminClient({"bootstrap.servers": js_broker.bootstrap})
    admin.create_topics([NewTopic("js-group", num_partitions=4)])["js-group"].result(DEADLINE_S)
    producer = Producer({"bootstrap.servers": js_broker.bootstrap})
    for index in range(120):
        producer.produce("js-group", b"r%d" % index, partition=index % 4)
    assert producer.flush(DEADLINE_S) == 0
    seen = run_kafkajs("group", js_broker.bootstrap, "js-group", "120")
    assert sorted(record["value"] for record in seen["seen"])[:3] == ["r0", "r1", "r10"]
    assert len({record["value"] for record in seen["seen"]}) == 120
    assert seen["members"] == 2 and seen["state"] == "Stable"
    assert sorted(seen["committed"]) == [[p, "30"] for p in range(4)]
    # KafkaJS's resetOffsets commits the EARLIEST sentinel itself; Kafka stores a commit as sent
    assert sorted(seen["reset"]) == [[p, "-2"] for p in range(4)]
    assert seen["listed"] and seen["deleted"]


def test_kafkajs_transactions_commit_and_abort_under_read_committed(js_broker):
    values = run_kafkajs("transactions", js_broker.bootstrap, "js-transactions")["values"]
    assert values == [f"kept-{i}" for i in range(5)] + [f"also-kept-{i}" for i in range(5)]


def test_kafkajs_authenticates_with_scram_and_hears_a_wrong_password(js_broker):
    assert run_kafkajs("scram", js_broker.sasl, "js-scram", "carol", "carol-secret") == {"sent": True}
    refused = run_kafkajs("scram", js_broker.sasl, "js-scram", "carol", "wrong")
    assert refused["sent"] is False and refused["error"] == "KafkaJSSASLAuthenticationError", refused
    assert "Authentication failed during authentication due to invalid credentials with SASL mechanism " \
           "SCRAM-SHA-512" in refused["message"], refused
