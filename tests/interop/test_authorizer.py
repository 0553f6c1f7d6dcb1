"""A broker with authorizer.class.name=org.apache.kafka.metadata.authorizer.StandardAuthorizer,
driven by real clients over SASL/PLAIN: ACLs made with librdkafka's AdminClient decide what each
principal may produce, consume and see, and survive a restart; super.users may do anything."""

from __future__ import annotations

import pytest

from tests.support.broker import BrokerProcess, free_port

pytestmark = pytest.mark.interop

PLAIN_JAAS = ('org.apache.kafka.common.security.plain.PlainLoginModule required '
              'user_admin="admin-secret" user_alice="alice-secret" user_bob="bob-secret";')
DEADLINE_S = 30


class AclBroker:
    def __init__(self, process: BrokerProcess, sasl_port: int) -> None:
        self.process = process
        self.plaintext = process.bootstrap  # User:ANONYMOUS, a super user here
        self.sasl = f"127.0.0.1:{sasl_port}"

    def client(self, user: str, **extra) -> dict:
        return {"bootstrap.servers": self.sasl, "security.protocol": "SASL_PLAINTEXT", "sasl.mechanism": "PLAIN",
                "sasl.username": user, "sasl.password": f"{user}-secret", **extra}


@pytest.fixture(scope="module")
def acl_broker(tmp_path_factory):
    sasl_port = free_port()
    process = BrokerProcess(tmp_path_factory.mktemp("acls") / "data", {
        "authorizer.class.name": "org.apache.kafka.metadata.authorizer.StandardAuthorizer",
        "super.users": "User:admin;User:ANONYMOUS",
        "sasl.enabled.mechanisms": "PLAIN", "listener.name.sasl_plaintext.plain.sasl.jaas.config": PLAIN_JAAS,
        "group.initial.rebalance.delay.ms": "0", "num.partitions": "1",
    })
    process.overrides["listeners"] = f"PLAINTEXT://127.0.0.1:{process.port},SASL_PLAINTEXT://127.0.0.1:{sasl_port}"
    process.start()
    try:
        broker = AclBroker(process, sasl_port)
        _grant(broker)
        yield broker
    finally:
        process.stop()


def _grant(broker: AclBroker) -> None:
    """Topics orders and secrets; alice may write, read and describe orders and read groups named
    alice-*; bob may only describe orders."""
    from confluent_kafka.admin import (AclBinding, AclOperation, AclPermissionType, AdminClient, NewTopic,
                                       ResourcePatternType, ResourceType)
    admin = AdminClient(broker.client("admin"))
    for future in admin.create_topics([NewTopic("orders", 2), NewTopic("secrets", 1)]).values():
        future.result(DEADLINE_S)
    allow = AclPermissionType.ALLOW
    bindings = [AclBinding(ResourceType.TOPIC, "orders", ResourcePatternType.LITERAL, "User:alice", "*", operation,
                           allow) for operation in (AclOperation.WRITE, AclOperation.READ)]
    bindings.append(AclBinding(ResourceType.GROUP, "alice-", ResourcePatternType.PREFIXED, "User:alice", "*",
                               AclOperation.READ, allow))
    bindings.append(AclBinding(ResourceType.TOPIC, "orders", ResourcePatternType.LITERAL, "User:bob", "*",
                               AclOperation.DESCRIBE, allow))
    for future in admin.create_acls(bindings).values():
        future.result(DEADLINE_S)


def _produce(config: dict, topic: str, count: int) -> list:
    """Each record's delivery error (None when delivered)."""
    from confluent_kafka import Producer
    errors: list = []
    producer = Producer({**config, "message.timeout.ms": 10000})
    for index in range(count):
        producer.produce(topic, b"v%d" % index, on_delivery=lambda err, _message: errors.append(err))
    producer.flush(DEADLINE_S)
    return errors


def _consume(config: dict, topic: str, group: str, count: int) -> tuple[list[bytes], list]:
    """(values read, errors seen) of a group member reading `topic` from the start."""
    from confluent_kafka import Consumer
    consumer = Consumer({**config, "group.id": group, "auto.offset.reset": "earliest"})
    consumer.subscribe([topic])
    values, errors = [], []
    try:
        for _ in range(DEADLINE_S * 2):
            if len(values) >= count or errors:
                break
            message = consumer.poll(0.5)
            if message is None:
                continue
            if message.error() is not None:
                errors.append(message.error())
            else:
                values.append(message.value())
    finally:
        consumer.close()
    return values, errors


def test_a_principal_with_acls_produces_and_consumes_and_one_without_is_refused(acl_broker):
    from confluent_kafka import KafkaError
    assert _produce(acl_broker.client("alice"), "orders", 20) == [None] * 20
    values, errors = _consume(acl_broker.client("alice"), "orders", "alice-readers", 20)
    assert sorted(values) == sorted(b"v%d" % i for i in range(20)) and errors == []
    refused = _produce(acl_broker.client("bob"), "orders", 1)
    assert [error.code() for error in refused] == [KafkaError.TOPIC_AUTHORIZATION_FAILED]
    assert {error.code() for error in _produce(acl_broker.client("alice"), "secrets", 1)} == {
        KafkaError.TOPIC_AUTHORIZATION_FAILED}
    _, errors = _consume(acl_broker.client("alice"), "orders", "not-alices", 1)  # READ on the group first
    assert errors and errors[0].code() == KafkaError.GROUP_AUTHORIZATION_FAILED, errors
    assert _produce(acl_broker.client("admin"), "secrets", 3) == [None] * 3  # a super user


def test_metadata_shows_a_principal_only_the_topics_it_may_describe(acl_broker):
    from confluent_kafka.admin import AdminClient
    admins = {user: AdminClient(acl_broker.client(user)) for user in ("alice", "bob", "admin")}
    seen = {user: set(admin.list_topics(timeout=DEADLINE_S).topics) for user, admin in admins.items()}
    assert seen["alice"] == {"orders"} and seen["bob"] == {"orders"}  # READ and WRITE imply DESCRIBE
    assert {"orders", "secrets"} <= seen["admin"]


def test_the_acl_apis_need_the_cluster_and_acls_survive_a_restart(acl_broker):
    """kafka-python's admin client (librdkafka's DescribeAcls result drops the answer's top-level
    error): DescribeAcls needs DESCRIBE on the cluster."""
    from confluent_kafka import KafkaError
    from kafka.admin import ACLFilter, ACLOperation, ACLPermissionType, KafkaAdminClient, ResourcePatternFilter
    from kafka.admin import ACLResourcePatternType, ResourceType
    from kafka.errors import ClusterAuthorizationFailedError
    everything = ACLFilter(None, None, ACLOperation.ANY, ACLPermissionType.ANY,
                           ResourcePatternFilter(ResourceType.ANY, None, ACLResourcePatternType.ANY))

    def admin(user: str) -> KafkaAdminClient:
        return KafkaAdminClient(bootstrap_servers=acl_broker.sasl, security_protocol="SASL_PLAINTEXT",
                                sasl_mechanism="PLAIN", sasl_plain_username=user,
                                sasl_plain_password=f"{user}-secret")
    alice, boss = admin("alice"), admin("admin")
    try:
        with pytest.raises(ClusterAuthorizationFailedError):
            alice.describe_acls(everything)
        acls, error = boss.describe_acls(everything)
        assert len(acls) == 4 and error.errno == 0
    finally:
        alice.close()
        boss.close()
    acl_broker.process.stop()
    acl_broker.process.start()
    assert _produce(acl_broker.client("alice"), "orders", 2) == [None] * 2
    assert {error.code() for error in _produce(acl_broker.client("bob"), "orders", 1)} == {
        KafkaError.TOPIC_AUTHORIZATION_FAILED}
