"""KafkaApis' authorization of the data path on a broker with a StandardAuthorizer: alice (PLAIN on
a SASL_PLAINTEXT listener) is refused with Kafka's error codes until an ACL lets her, while the
PLAINTEXT listener's User:ANONYMOUS, a super user, sets the stage (topics, records, ACLs)."""

from __future__ import annotations

from collections.abc import Iterator

import pytest

from franz.protocol.errors import Errors
from franz.server.standard_authorizer import StandardAuthorizer
from tests.support.broker_on_thread import BrokerOnThread
from tests.support.raw_client import RawClient, batch, create_topic, produce

PLAIN_JAAS = ('org.apache.kafka.common.security.plain.PlainLoginModule required username="admin" '
              'password="admin-secret" user_alice="alice-secret";')
SASL_HANDSHAKE, SASL_AUTHENTICATE, CREATE_ACLS = 17, 36, 30
PRODUCE, FETCH, LIST_OFFSETS, METADATA, OFFSET_FOR_LEADER_EPOCH = 0, 1, 2, 3, 23
DELETE_RECORDS, INIT_PRODUCER_ID, ALTER_REPLICA_LOG_DIRS, DESCRIBE_LOG_DIRS = 21, 22, 34, 35
DESCRIBE_CLUSTER, DESCRIBE_PRODUCERS, DESCRIBE_TOPIC_PARTITIONS = 60, 61, 75
# ResourceType, PatternType, AclOperation, AclPermissionType codes
TOPIC, CLUSTER, TRANSACTIONAL_ID, LITERAL, ALLOW = 2, 4, 5, 3, 3
READ, WRITE, CREATE, DELETE, ALTER, DESCRIBE, CLUSTER_ACTION, IDEMPOTENT_WRITE = 3, 4, 5, 6, 7, 8, 9, 12
OMITTED = -2147483648  # an authorized-operations field nobody filled in


class AclBroker:
    def __init__(self, broker: BrokerOnThread) -> None:
        self.broker = broker
        self.bootstrap = broker.bootstrap  # PLAINTEXT: User:ANONYMOUS, a super user
        self.sasl = f"127.0.0.1:{broker.server.socket_server.bound_endpoints[1].port}"

    def allow(self, principal: str, resource_type: int, name: str, operation: int) -> None:
        with RawClient(self.bootstrap) as client:
            created = client.request(CREATE_ACLS, 3, {"creations": [{
                "resource_type": resource_type, "resource_name": name, "resource_pattern_type": LITERAL,
                "principal": principal, "host": "*", "operation": operation, "permission_type": ALLOW}]})
        assert created["results"][0]["error_code"] == Errors.NONE, created

    def alice(self) -> RawClient:
        """A connection authenticated as User:alice (SASL PLAIN, by hand)."""
        client = RawClient(self.sasl)
        assert client.request(SASL_HANDSHAKE, 1, {"mechanism": "PLAIN"})["error_code"] == Errors.NONE
        answer = client.request(SASL_AUTHENTICATE, 2, {"auth_bytes": b"\0alice\0alice-secret"})
        assert answer["error_code"] == Errors.NONE, answer
        return client


@pytest.fixture
def acl_broker(tmp_path) -> Iterator[AclBroker]:
    authorizer = StandardAuthorizer()
    authorizer.configure({"node.id": "1", "super.users": "User:ANONYMOUS"})
    broker = BrokerOnThread(tmp_path / "data", {
        "listeners": "PLAINTEXT://127.0.0.1:0,SASL_PLAINTEXT://127.0.0.1:0",
        "sasl.enabled.mechanisms": "PLAIN", "inter.broker.listener.name": "PLAINTEXT",
        "listener.name.sasl_plaintext.plain.sasl.jaas.config": PLAIN_JAAS}, authorizer=authorizer)
    try:
        with RawClient(broker.bootstrap) as admin:
            create_topic(admin, "t")
            assert produce(admin, "t", batch(b"a", b"b"))["error_code"] == Errors.NONE
        yield AclBroker(broker)
    finally:
        broker.stop()


def _metadata(client: RawClient, names: list[str] | None, auto_create: bool = False, version: int = 12) -> dict:
    return client.request(METADATA, version, {
        "topics": None if names is None else [{"name": name, "topic_id": bytes(16)} for name in names],
        "allow_auto_topic_creation": auto_create, "include_topic_authorized_operations": True})


def test_metadata_hides_unauthorized_topics_and_refuses_named_ones_whether_they_exist_or_not(acl_broker):
    with acl_broker.alice() as alice:
        assert _metadata(alice, None)["topics"] == []  # left out of an all-topics answer, silently
        answer = _metadata(alice, ["t", "missing"], auto_create=True)
        assert [(t["name"], t["error_code"], t["topic_id"]) for t in answer["topics"]] == [
            ("t", Errors.TOPIC_AUTHORIZATION_FAILED, bytes(16)),
            ("missing", Errors.TOPIC_AUTHORIZATION_FAILED, bytes(16))]
        assert [t["topic_authorized_operations"] for t in answer["topics"]] == [OMITTED, OMITTED]
        acl_broker.allow("User:alice", TOPIC, "t", DESCRIBE)
        acl_broker.allow("User:alice", TOPIC, "missing", DESCRIBE)
        described = _metadata(alice, None)["topics"]
        assert [(t["name"], t["error_code"], t["topic_authorized_operations"]) for t in described] == [
            ("t", Errors.NONE, 1 << DESCRIBE)]
        # may see "missing" but not create it: TOPIC_AUTHORIZATION_FAILED, not auto-created
        answer = _metadata(alice, ["missing"], auto_create=True)
        assert answer["topics"][0]["error_code"] == Errors.TOPIC_AUTHORIZATION_FAILED
        assert _metadata(alice, ["missing"])["topics"][0]["error_code"] == Errors.UNKNOWN_TOPIC_OR_PARTITION
        acl_broker.allow("User:alice", TOPIC, "missing", CREATE)
        created = _metadata(alice, ["missing"], auto_create=True)["topics"][0]
        assert (created["error_code"], created["topic_authorized_operations"]) == (
            Errors.NONE, 1 << DESCRIBE | 1 << CREATE)


def test_metadata_by_topic_id_refuses_with_the_id_and_cluster_operations_need_describe(acl_broker):
    with RawClient(acl_broker.bootstrap) as admin:
        topic_id = _metadata(admin, ["t"])["topics"][0]["topic_id"]
    with acl_broker.alice() as alice:
        answer = alice.request(METADATA, 12, {"topics": [{"name": None, "topic_id": topic_id}],
                                              "allow_auto_topic_creation": False})
        assert [(t["name"], t["topic_id"], t["error_code"]) for t in answer["topics"]] == [
            (None, topic_id, Errors.TOPIC_AUTHORIZATION_FAILED)]
        v10 = {"topics": None, "allow_auto_topic_creation": False, "include_cluster_authorized_operations": True}
        assert alice.request(METADATA, 10, v10)["cluster_authorized_operations"] == 0
        cluster = alice.request(DESCRIBE_CLUSTER, 1, {"include_cluster_authorized_operations": True})
        assert cluster["cluster_authorized_operations"] == 0
        acl_broker.allow("User:alice", CLUSTER, "kafka-cluster", DESCRIBE)
        assert alice.request(METADATA, 10, v10)["cluster_authorized_operations"] == 1 << DESCRIBE
        cluster = alice.request(DESCRIBE_CLUSTER, 1, {"include_cluster_authorized_operations": True})
        assert cluster["cluster_authorized_operations"] == 1 << DESCRIBE


def test_describe_topic_partitions_refuses_named_topics_and_leaves_them_out_of_every_topic(acl_broker):
    with acl_broker.alice() as alice:
        answer = alice.request(DESCRIBE_TOPIC_PARTITIONS, 0, {"topics": [{"name": "t"}, {"name": "nope"}]})
        assert [(t["name"], t["error_code"], t["topic_id"]) for t in answer["topics"]] == [
            ("nope", Errors.TOPIC_AUTHORIZATION_FAILED, bytes(16)),
            ("t", Errors.TOPIC_AUTHORIZATION_FAILED, bytes(16))]
        assert alice.request(DESCRIBE_TOPIC_PARTITIONS, 0, {"topics": []})["topics"] == []
        acl_broker.allow("User:alice", TOPIC, "t", DESCRIBE)
        answer = alice.request(DESCRIBE_TOPIC_PARTITIONS, 0, {"topics": []})
        assert [(t["name"], t["error_code"], len(t["partitions"]), t["topic_authorized_operations"])
                for t in answer["topics"]] == [("t", Errors.NONE, 1, 1 << DESCRIBE)]


def test_produce_needs_write_on_the_topic_and_a_transaction_write_on_its_id(acl_broker):
    with acl_broker.alice() as alice:
        assert produce(alice, "t", batch(b"x"))["error_code"] == Errors.TOPIC_AUTHORIZATION_FAILED
        assert produce(alice, "missing", batch(b"x"))["error_code"] == Errors.TOPIC_AUTHORIZATION_FAILED
        acl_broker.allow("User:alice", TOPIC, "t", WRITE)
        assert produce(alice, "t", batch(b"x"))["error_code"] == Errors.NONE
        answer = alice.request(INIT_PRODUCER_ID, 4, {"transactional_id": "tx", "transaction_timeout_ms": 60000})
        assert answer["error_code"] == Errors.TRANSACTIONAL_ID_AUTHORIZATION_FAILED


def test_init_producer_id_idempotent_needs_idempotent_write_or_write_on_some_topic(acl_broker):
    idempotent = {"transactional_id": None, "transaction_timeout_ms": 60000}
    with acl_broker.alice() as alice:
        answer = alice.request(INIT_PRODUCER_ID, 4, idempotent)
        assert (answer["error_code"], answer["producer_id"]) == (Errors.CLUSTER_AUTHORIZATION_FAILED, -1)
        acl_broker.allow("User:alice", TOPIC, "t", WRITE)  # KIP-679: WRITE on any topic will do
        assert alice.request(INIT_PRODUCER_ID, 4, idempotent)["error_code"] == Errors.NONE


def _fetch(client: RawClient, session_epoch: int = -1, session_id: int = 0, topics: list[str] = ("t",)) -> dict:
    return client.request(FETCH, 12, {"max_wait_ms": 0, "min_bytes": 0, "isolation_level": 0,
                                      "session_id": session_id, "session_epoch": session_epoch,
                                      "topics": [{"topic": name, "partitions": [
                                          {"partition": 0, "fetch_offset": 0, "partition_max_bytes": 1 << 20}]}
                                          for name in topics],
                                      "forgotten_topics_data": [], "rack_id": ""})


def _partitions(answer: dict) -> list[tuple]:
    return [(t["topic"], p["error_code"], bool(p["records"])) for t in answer["responses"] for p in t["partitions"]]


def test_fetch_needs_read_and_a_session_does_not_keep_a_revoked_grant(acl_broker):
    with acl_broker.alice() as alice:
        assert _partitions(_fetch(alice)) == [("t", Errors.TOPIC_AUTHORIZATION_FAILED, False)]
        acl_broker.allow("User:alice", TOPIC, "t", READ)
        opened = _fetch(alice, session_epoch=0)  # a new session (KIP-227)
        assert _partitions(opened) == [("t", Errors.NONE, True)]
        session_id = opened["session_id"]
        assert session_id != 0
        with RawClient(acl_broker.bootstrap) as admin:  # the grant taken back
            deleted = admin.request(31, 3, {"filters": [{
                "resource_type_filter": TOPIC, "resource_name_filter": "t", "pattern_type_filter": LITERAL,
                "principal_filter": "User:alice", "host_filter": None, "operation": READ,
                "permission_type": ALLOW}]})
            assert len(deleted["filter_results"][0]["matching_acls"]) == 1
            assert produce(admin, "t", batch(b"c"))["error_code"] == Errors.NONE
        # the incremental fetch names no partition; the session's own is refused, its records not read
        assert _partitions(_fetch(alice, session_epoch=1, session_id=session_id, topics=[])) == [
            ("t", Errors.TOPIC_AUTHORIZATION_FAILED, False)]


def test_a_follower_fetch_needs_cluster_action(acl_broker):
    with acl_broker.alice() as alice:
        follower = {"replica_id": 2, "max_wait_ms": 0, "min_bytes": 0, "isolation_level": 0, "topics": [
            {"topic": "t", "partitions": [{"partition": 0, "fetch_offset": 0, "partition_max_bytes": 1 << 20}]}],
            "forgotten_topics_data": [], "rack_id": ""}
        acl_broker.allow("User:alice", TOPIC, "t", READ)  # a consumer's grant is not a replica's
        assert _partitions(alice.request(FETCH, 12, follower)) == [("t", Errors.TOPIC_AUTHORIZATION_FAILED, False)]
        acl_broker.allow("User:alice", CLUSTER, "kafka-cluster", CLUSTER_ACTION)
        assert _partitions(alice.request(FETCH, 12, follower)) == [("t", Errors.NONE, True)]


def test_list_offsets_and_offset_for_leader_epoch_need_describe(acl_broker):
    list_offsets = {"replica_id": -1, "isolation_level": 0, "topics": [
        {"name": "t", "partitions": [{"partition_index": 0, "timestamp": -1}]}]}
    epochs = {"topics": [{"topic": "t", "partitions": [{"partition": 0, "leader_epoch": 0}]}]}
    with acl_broker.alice() as alice:
        refused = alice.request(LIST_OFFSETS, 7, list_offsets)["topics"][0]["partitions"][0]
        assert (refused["error_code"], refused["offset"]) == (Errors.TOPIC_AUTHORIZATION_FAILED, -1)
        answer = alice.request(OFFSET_FOR_LEADER_EPOCH, 4, epochs)["topics"][0]["partitions"][0]
        assert (answer["error_code"], answer["end_offset"]) == (Errors.TOPIC_AUTHORIZATION_FAILED, -1)
        acl_broker.allow("User:alice", TOPIC, "t", DESCRIBE)
        listed = alice.request(LIST_OFFSETS, 7, list_offsets)["topics"][0]["partitions"][0]
        assert (listed["error_code"], listed["offset"]) == (Errors.NONE, 2)
        answer = alice.request(OFFSET_FOR_LEADER_EPOCH, 4, epochs)["topics"][0]["partitions"][0]
        assert (answer["error_code"], answer["end_offset"]) == (Errors.NONE, 2)


def test_delete_records_needs_delete_and_describe_producers_read(acl_broker):
    delete = {"topics": [{"name": "t", "partitions": [{"partition_index": 0, "offset": 1}]}], "timeout_ms": 5000}
    producers = {"topics": [{"name": "t", "partition_indexes": [0]}]}
    with acl_broker.alice() as alice:
        answer = alice.request(DELETE_RECORDS, 2, delete)["topics"][0]["partitions"][0]
        assert (answer["error_code"], answer["low_watermark"]) == (Errors.TOPIC_AUTHORIZATION_FAILED, -1)
        refused = alice.request(DESCRIBE_PRODUCERS, 0, producers)["topics"][0]["partitions"][0]
        assert (refused["error_code"], refused["error_message"]) == (
            Errors.TOPIC_AUTHORIZATION_FAILED, "Topic authorization failed.")
        acl_broker.allow("User:alice", TOPIC, "t", DELETE)
        acl_broker.allow("User:alice", TOPIC, "t", READ)
        answer = alice.request(DELETE_RECORDS, 2, delete)["topics"][0]["partitions"][0]
        assert (answer["error_code"], answer["low_watermark"]) == (Errors.NONE, 1)
        assert alice.request(DESCRIBE_PRODUCERS, 0, producers)["topics"][0]["partitions"][0]["error_code"] == 0


def test_log_dirs_need_describe_and_alter_on_the_cluster(acl_broker):
    with acl_broker.alice() as alice:
        described = alice.request(DESCRIBE_LOG_DIRS, 4, {"topics": None})
        assert (described["error_code"], described["results"]) == (Errors.CLUSTER_AUTHORIZATION_FAILED, [])
        alter = {"dirs": [{"path": "/nowhere", "topics": [{"name": "t", "partitions": [0]}]}]}
        altered = alice.request(ALTER_REPLICA_LOG_DIRS, 2, alter)
        assert altered["results"][0]["partitions"][0]["error_code"] == Errors.CLUSTER_AUTHORIZATION_FAILED
        acl_broker.allow("User:alice", CLUSTER, "kafka-cluster", DESCRIBE)
        acl_broker.allow("User:alice", CLUSTER, "kafka-cluster", ALTER)
        described = alice.request(DESCRIBE_LOG_DIRS, 4, {"topics": None})
        assert (described["error_code"], len(described["results"])) == (Errors.NONE, 1)
        altered = alice.request(ALTER_REPLICA_LOG_DIRS, 2, alter)
        assert altered["results"][0]["partitions"][0]["error_code"] != Errors.CLUSTER_AUTHORIZATION_FAILED


def test_confluent_kafka_producer_hears_topic_authorization_failed_until_alice_may_write(acl_broker):
    from confluent_kafka import KafkaError, Producer
    config = {"bootstrap.servers": acl_broker.sasl, "security.protocol": "SASL_PLAINTEXT", "sasl.mechanism": "PLAIN",
              "sasl.username": "alice", "sasl.password": "alice-secret", "message.timeout.ms": 10000}
    acl_broker.allow("User:alice", TOPIC, "t", DESCRIBE)  # it sees the topic, so the produce itself is refused
    reports: list = []
    producer = Producer(config)
    producer.produce("t", b"refused", on_delivery=lambda err, msg: reports.append(err))
    assert producer.flush(15) == 0
    assert [err.code() for err in reports] == [KafkaError.TOPIC_AUTHORIZATION_FAILED]
    acl_broker.allow("User:alice", TOPIC, "t", WRITE)
    reports.clear()
    producer = Producer(config)  # librdkafka keeps a topic's refusal: a new producer asks again
    producer.produce("t", b"written", on_delivery=lambda err, msg: reports.append(err))
    assert producer.flush(15) == 0
    assert reports == [None]
