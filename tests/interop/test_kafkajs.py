"""KafkaJS against a broker process: a client written from the protocol in JavaScript, sharing no
code with librdkafka or the Java client (tests/interop/node/kafkajs_driver.js). Its admin client,
an idempotent gzip or snappy producer whose records librdkafka reads back, a group of two members,
transactions under its read_committed consumer, and SASL/SCRAM."""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.support.broker import BrokerProcess, free_port
from tests.support.kafkajs import run_kafkajs
from tests.support.python_clients import upsert_scram_credential
from tests.support.tls import CertificateAuthority, write_pem_key_store

pytestmark = pytest.mark.interop

SCRAM_JAAS = "org.apache.kafka.common.security.scram.ScramLoginModule required;"
DEADLINE_S = 30


class JsBroker:
    def __init__(self, process: BrokerProcess, sasl_port: int, ssl_port: int, ca_file: Path) -> None:
        self.process = process
        self.bootstrap = process.bootstrap
        self.sasl = f"127.0.0.1:{sasl_port}"
        self.ssl = f"127.0.0.1:{ssl_port}"
        self.ca_file = ca_file


@pytest.fixture(scope="module")
def js_broker(tmp_path_factory):
    """PLAINTEXT, SASL_PLAINTEXT with SCRAM-SHA-512 (user carol), and SSL (a PEM key store)."""
    directory = tmp_path_factory.mktemp("kafkajs")
    ca = CertificateAuthority()
    ca_file = directory / "ca.pem"
    ca_file.write_bytes(ca.identity.certificate_pem())
    key_store = write_pem_key_store(directory / "broker.pem", ca.broker(), ca)
    sasl_port, ssl_port = free_port(), free_port()
    process = BrokerProcess(directory / "data", {
        "listener.security.protocol.map": "PLAINTEXT:PLAINTEXT,SASL_PLAINTEXT:SASL_PLAINTEXT,SSL:SSL",
        "sasl.enabled.mechanisms": "SCRAM-SHA-512",
        "listener.name.sasl_plaintext.scram-sha-512.sasl.jaas.config": SCRAM_JAAS,
        "ssl.keystore.type": "PEM", "ssl.keystore.location": str(key_store),
        "num.partitions": "1", "group.initial.rebalance.delay.ms": "0",  # groups form at once
    })
    process.overrides["listeners"] = (f"PLAINTEXT://127.0.0.1:{process.port},SASL_PLAINTEXT://127.0.0.1:{sasl_port},"
                                      f"SSL://127.0.0.1:{ssl_port}")
    process.start()
    try:
        upsert_scram_credential(process.bootstrap, "carol", b"carol-secret")
        yield JsBroker(process, sasl_port, ssl_port, ca_file)
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


def test_kafkajs_reads_from_the_log_start_after_delete_records_and_seeks_below_it(js_broker):
    """DeleteRecords through KafkaJS's admin client; a new group from the beginning, and a seek
    below the log start (OFFSET_OUT_OF_RANGE, reset to earliest), both start at the log start."""
    seen = run_kafkajs("truncated", js_broker.bootstrap, "js-truncated", "30", "12")
    assert (seen["low"], seen["high"], seen["first"]) == ("12", "30", "12")
    assert seen["values"] == [f"t{i}" for i in range(12, 30)] and seen["paused"] == ["js-truncated"]
    assert seen["reread"] == [str(offset) for offset in range(12, 30)]


def test_kafkajs_over_tls(js_broker):
    """KafkaJS (Node's TLS) trusting the broker's CA: a producer and a group, as over PLAINTEXT."""
    from confluent_kafka.admin import AdminClient, NewTopic
    admin = AdminClient({"bootstrap.servers": js_broker.bootstrap})
    admin.create_topics([NewTopic("js-tls", num_partitions=2)])["js-tls"].result(DEADLINE_S)
    placed = run_kafkajs("produce", js_broker.ssl, "js-tls", "60", "gzip", ca_file=js_broker.ca_file)["placed"]
    assert {partition for partition, _o, _e in placed} == {0, 1} and {error for _p, _o, error in placed} == {0}
    seen = run_kafkajs("group", js_broker.ssl, "js-tls", "60", ca_file=js_broker.ca_file)
    assert sorted(int(record["value"][1:]) for record in seen["seen"]) == list(range(60))
