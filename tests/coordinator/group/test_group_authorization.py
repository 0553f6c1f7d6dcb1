"""The group, transaction and share-state APIs on a broker with a StandardAuthorizer: a
principal (ANONYMOUS on the PLAINTEXT listener) without the ACL gets Kafka's refusal, with it
the API's answer. ACLs are made by a super user through confluent-kafka's admin on a
SASL_PLAINTEXT listener beside it."""

from __future__ import annotations

import time
from collections.abc import Iterator

import pytest
from confluent_kafka import Producer
from confluent_kafka.admin import (
    AclBinding,
    AclOperation,
    AclPermissionType,
    AdminClient,
    NewTopic,
    ResourcePatternType,
    ResourceType,
)

from franz.protocol.errors import Errors
from franz.server.standard_authorizer import StandardAuthorizer
from tests.support.broker_on_thread import BrokerOnThread
from tests.support.raw_client import RawClient

FIND_COORDINATOR, JOIN_GROUP, OFFSET_COMMIT, OFFSET_FETCH = 10, 11, 8, 9
DESCRIBE_GROUPS, LIST_GROUPS, DELETE_GROUPS, OFFSET_DELETE = 15, 16, 42, 47
END_TXN, ADD_OFFSETS_TO_TXN, DESCRIBE_TRANSACTIONS, LIST_TRANSACTIONS = 26, 25, 65, 66
READ_SHARE_GROUP_STATE = 84
STREAMS_GROUP_HEARTBEAT, STREAMS_GROUP_DESCRIBE = 88, 89
TIMEOUT_S = 30
PLAIN_JAAS = ('org.apache.kafka.common.security.plain.PlainLoginModule required username="admin" '
              'password="admin-secret" user_admin="admin-secret";')


class AclBroker:
    def __init__(self, broker: BrokerOnThread) -> None:
        self.broker = broker
        self.bootstrap = broker.bootstrap  # PLAINTEXT: the principal under test, User:ANONYMOUS
        sasl_port = broker.server.socket_server.bound_endpoints[1].port
        self.admin_config = {"bootstrap.servers": f"127.0.0.1:{sasl_port}", "security.protocol": "SASL_PLAINTEXT",
                             "sasl.mechanism": "PLAIN", "sasl.username": "admin", "sasl.password": "admin-secret"}
        self.admin = AdminClient(self.admin_config)

    def allow(self, resource_type, name: str, operation) -> None:
        binding = AclBinding(resource_type, name, ResourcePatternType.LITERAL, "User:ANONYMOUS", "*", operation,
                             AclPermissionType.ALLOW)
        for future in self.admin.create_acls([binding]).values():
            future.result(TIMEOUT_S)

    def create_topic(self, name: str) -> None:
        for future in self.admin.create_topics([NewTopic(name, 1, 1)]).values():
            future.result(TIMEOUT_S)


@pytest.fixture
def acl_broker(tmp_path) -> Iterator[AclBroker]:
    authorizer = StandardAuthorizer()
    authorizer.configure({"node.id": "1", "super.users": "User:admin"})
    broker = BrokerOnThread(tmp_path / "data", {
        "listeners": "PLAINTEXT://127.0.0.1:0,SASL_PLAINTEXT://127.0.0.1:0",
        "sasl.enabled.mechanisms": "PLAIN", "listener.name.sasl_plaintext.plain.sasl.jaas.config": PLAIN_JAAS,
        "inter.broker.listener.name": "PLAINTEXT"}, authorizer=authorizer)
    try:
        yield AclBroker(broker)
    finally:
        broker.stop()


def _commit(group: str, topic: str) -> dict:
    return {"group_id": group, "generation_id_or_member_epoch": -1, "member_id": "", "group_instance_id": None,
            "topics": [{"name": topic, "partitions": [{"partition_index": 0, "committed_offset": 5,
                                                         "committed_leader_epoch": -1, "committed_metadata": ""}]}]}


def _fetch(group: str, topic: str | None) -> dict:
    topics = None if topic is None else [{"name": topic, "partition_indexes": [0]}]
    return {"groups": [{"group_id": group, "topics": topics}], "require_stable": False}


def _codes(answer: dict) -> list[int]:
    return [p["error_code"] for t in answer["topics"] for p in t["partitions"]]


def test_find_coordinator_needs_describe_on_the_group_or_transactional_id(acl_broker):
    with RawClient(acl_broker.bootstrap) as client:
        def find(key_type: int, key: str) -> int:
            answer = client.request(FIND_COORDINATOR, 4, {"key_type": key_type, "coordinator_keys": [key]})
            return answer["coordinators"][0]["error_code"]
        assert find(0, "g") == Errors.GROUP_AUTHORIZATION_FAILED
        assert find(1, "tx") == Errors.TRANSACTIONAL_ID_AUTHORIZATION_FAILED
        # a share-state coordinator is for brokers: the whole request fails without CLUSTER_ACTION
        shared = client.request(FIND_COORDINATOR, 6, {"key_type": 2, "coordinator_keys": ["g:id:0"]})
        assert shared["coordinators"][0]["error_code"] == Errors.CLUSTER_AUTHORIZATION_FAILED
        acl_broker.allow(ResourceType.GROUP, "g", AclOperation.DESCRIBE)
        acl_broker.allow(ResourceType.TRANSACTIONAL_ID, "tx", AclOperation.DESCRIBE)
        assert find(0, "g") in (Errors.NONE, Errors.COORDINATOR_NOT_AVAILABLE)
        assert find(1, "tx") in (Errors.NONE, Errors.COORDINATOR_NOT_AVAILABLE)


def test_join_group_needs_read_on_the_group(acl_broker):
    body = {"group_id": "g", "session_timeout_ms": 10000, "rebalance_timeout_ms": 10000, "member_id": "",
            "group_instance_id": None, "protocol_type": "consumer", "protocols": [{"name": "range", "metadata": b""}]}
    with RawClient(acl_broker.bootstrap) as client:
        assert client.request(JOIN_GROUP, 5, body)["error_code"] == Errors.GROUP_AUTHORIZATION_FAILED
        acl_broker.allow(ResourceType.GROUP, "g", AclOperation.READ)
        assert client.request(JOIN_GROUP, 5, body)["error_code"] == Errors.MEMBER_ID_REQUIRED


def test_offset_commit_and_fetch_check_the_group_then_each_topic(acl_broker):
    acl_broker.create_topic("t")
    with RawClient(acl_broker.bootstrap) as client:
        assert _codes(client.request(OFFSET_COMMIT, 8, _commit("g", "t"))) == [Errors.GROUP_AUTHORIZATION_FAILED]
        fetched = client.request(OFFSET_FETCH, 8, _fetch("g", "t"))["groups"][0]
        assert (fetched["error_code"], fetched["topics"]) == (Errors.GROUP_AUTHORIZATION_FAILED, [])
        acl_broker.allow(ResourceType.GROUP, "g", AclOperation.READ)  # READ implies DESCRIBE
        # the topic unauthorized whether it exists or not: its existence is not told
        assert _codes(client.request(OFFSET_COMMIT, 8, _commit("g", "t"))) == [Errors.TOPIC_AUTHORIZATION_FAILED]
        assert _codes(client.request(OFFSET_COMMIT, 8, _commit("g", "nope"))) == [Errors.TOPIC_AUTHORIZATION_FAILED]
        acl_broker.allow(ResourceType.TOPIC, "t", AclOperation.READ)
        assert _codes(client.request(OFFSET_COMMIT, 8, _commit("g", "t"))) == [Errors.NONE]
        fetched = client.request(OFFSET_FETCH, 8, _fetch("g", "t"))["groups"][0]
        assert [(p["committed_offset"], p["error_code"]) for p in fetched["topics"][0]["partitions"]] == [
            (5, Errors.NONE)]
        assert [t["name"] for t in client.request(OFFSET_FETCH, 8, _fetch("g", None))["groups"][0]["topics"]] == ["t"]


def test_offset_fetch_hides_offsets_of_topics_the_principal_may_not_describe(acl_broker):
    acl_broker.create_topic("t")
    acl_broker.allow(ResourceType.GROUP, "g", AclOperation.READ)
    acl_broker.allow(ResourceType.TOPIC, "t", AclOperation.READ)
    with RawClient(acl_broker.bootstrap) as client:
        assert _codes(client.request(OFFSET_COMMIT, 8, _commit("g", "t"))) == [Errors.NONE]
        acl_broker.allow(ResourceType.GROUP, "other", AclOperation.READ)
        assert _codes(client.request(OFFSET_COMMIT, 8, _commit("other", "t"))) == [Errors.NONE]
    # a second principal's view: ANONYMOUS loses READ on the topic by a DENY
    binding = AclBinding(ResourceType.TOPIC, "t", ResourcePatternType.LITERAL, "User:ANONYMOUS", "*",
                         AclOperation.DESCRIBE, AclPermissionType.DENY)
    for future in acl_broker.admin.create_acls([binding]).values():
        future.result(TIMEOUT_S)
    with RawClient(acl_broker.bootstrap) as client:
        assert client.request(OFFSET_FETCH, 8, _fetch("g", None))["groups"][0]["topics"] == []
        partition = client.request(OFFSET_FETCH, 8, _fetch("g", "t"))["groups"][0]["topics"][0]["partitions"][0]
        assert (partition["committed_offset"], partition["error_code"]) == (-1, Errors.TOPIC_AUTHORIZATION_FAILED)


def test_describe_list_and_delete_groups_check_each_group(acl_broker):
    acl_broker.create_topic("t")
    acl_broker.allow(ResourceType.TOPIC, "t", AclOperation.READ)
    for group in ("a", "b"):
        acl_broker.allow(ResourceType.GROUP, group, AclOperation.READ)
    with RawClient(acl_broker.bootstrap) as client:
        for group in ("a", "b"):
            assert _codes(client.request(OFFSET_COMMIT, 8, _commit(group, "t"))) == [Errors.NONE]
        described = client.request(DESCRIBE_GROUPS, 5, {"groups": ["x", "a"], "include_authorized_operations": True})
        assert [(g["group_id"], g["error_code"]) for g in described["groups"]] == [
            ("x", Errors.GROUP_AUTHORIZATION_FAILED), ("a", Errors.NONE)]
        # READ on the group, and the DESCRIBE it implies
        assert described["groups"][1]["authorized_operations"] == (1 << 3) | (1 << 8)
        listed = client.request(LIST_GROUPS, 4, {"states_filter": []})
        assert sorted(g["group_id"] for g in listed["groups"]) == ["a", "b"]
        deleted = client.request(DELETE_GROUPS, 2, {"groups_names": ["a", "b"]})
        assert [(r["group_id"], r["error_code"]) for r in deleted["results"]] == [
            ("a", Errors.GROUP_AUTHORIZATION_FAILED), ("b", Errors.GROUP_AUTHORIZATION_FAILED)]
        acl_broker.allow(ResourceType.GROUP, "a", AclOperation.DELETE)
        deleted = client.request(DELETE_GROUPS, 2, {"groups_names": ["b", "a"]})
        assert [(r["group_id"], r["error_code"]) for r in deleted["results"]] == [
            ("a", Errors.NONE), ("b", Errors.GROUP_AUTHORIZATION_FAILED)]
        acl_broker.allow(ResourceType.GROUP, "b", AclOperation.DESCRIBE)
    binding = AclBinding(ResourceType.GROUP, "b", ResourcePatternType.LITERAL, "User:ANONYMOUS", "*",
                         AclOperation.DESCRIBE, AclPermissionType.DENY)
    for future in acl_broker.admin.create_acls([binding]).values():
        future.result(TIMEOUT_S)
    with RawClient(acl_broker.bootstrap) as client:  # no DESCRIBE on the cluster: the groups it may describe
        assert [g["group_id"] for g in client.request(LIST_GROUPS, 4, {"states_filter": []})["groups"]] == []


def test_transaction_apis_need_the_transactional_id(acl_broker):
    with RawClient(acl_broker.bootstrap) as client:
        end = client.request(END_TXN, 3, {"transactional_id": "tx", "producer_id": 1, "producer_epoch": 0,
                                          "committed": True})
        assert end["error_code"] == Errors.TRANSACTIONAL_ID_AUTHORIZATION_FAILED
        offsets = {"transactional_id": "tx", "producer_id": 1, "producer_epoch": 0, "group_id": "g"}
        assert client.request(ADD_OFFSETS_TO_TXN, 3, offsets)["error_code"] == (
            Errors.TRANSACTIONAL_ID_AUTHORIZATION_FAILED)
        described = client.request(DESCRIBE_TRANSACTIONS, 0, {"transactional_ids": ["tx"]})
        assert described["transaction_states"][0]["error_code"] == Errors.TRANSACTIONAL_ID_AUTHORIZATION_FAILED
        acl_broker.allow(ResourceType.TRANSACTIONAL_ID, "tx", AclOperation.WRITE)
        assert client.request(ADD_OFFSETS_TO_TXN, 3, offsets)["error_code"] == Errors.GROUP_AUTHORIZATION_FAILED
        acl_broker.allow(ResourceType.GROUP, "g", AclOperation.READ)
        assert client.request(ADD_OFFSETS_TO_TXN, 3, offsets)["error_code"] == Errors.INVALID_PRODUCER_ID_MAPPING
        described = client.request(DESCRIBE_TRANSACTIONS, 0, {"transactional_ids": ["tx"]})
        assert described["transaction_states"][0]["error_code"] == Errors.TRANSACTIONAL_ID_NOT_FOUND


def test_share_group_state_apis_need_cluster_action(acl_broker):
    body = {"group_id": "g", "topics": [{"topic_id": bytes(16), "partitions": [
        {"partition": 0, "leader_epoch": 0}]}]}
    with RawClient(acl_broker.bootstrap) as client:
        answer = client.request(READ_SHARE_GROUP_STATE, 0, body)
        assert [p["error_code"] for r in answer["results"] for p in r["partitions"]] == [
            Errors.CLUSTER_AUTHORIZATION_FAILED]


SHARE_GROUP_HEARTBEAT, SHARE_FETCH, SHARE_ACKNOWLEDGE = 76, 78, 79


def test_share_fetch_and_acknowledge_need_read_on_each_topic(acl_broker):
    """KafkaApis.handleShareFetchRequest and handleAcknowledgements: with READ on the share group
    but not on the topic, the topic's partitions are answered TOPIC_AUTHORIZATION_FAILED, its
    acknowledgements not applied; READ on the topic lets the same session fetch."""
    acl_broker.create_topic("shared")
    acl_broker.allow(ResourceType.GROUP, "sg", AclOperation.READ)
    with RawClient(acl_broker.bootstrap) as client:
        topic_id, epoch = None, 0
        for _ in range(100):  # heartbeats until the partition is assigned
            answer = client.request(SHARE_GROUP_HEARTBEAT, 1, {"group_id": "sg", "member_id": "m-1",
                                                               "member_epoch": epoch, "rack_id": None,
                                                               "subscribed_topic_names": ["shared"]})
            assert answer["error_code"] == Errors.NONE, answer
            epoch = answer["member_epoch"]
            if answer["assignment"] and answer["assignment"]["topic_partitions"]:
                topic_id = bytes(answer["assignment"]["topic_partitions"][0]["topic_id"])
                break
            time.sleep(0.1)
        assert topic_id is not None

        def fetch(session_epoch: int, acks=(), max_wait_ms: int = 0) -> dict:
            return client.request(SHARE_FETCH, 1, {
                "group_id": "sg", "member_id": "m-1", "share_session_epoch": session_epoch,
                "max_wait_ms": max_wait_ms,
                "min_bytes": 1, "max_bytes": 1 << 20, "max_records": 500, "batch_size": 500,
                "forgotten_topics_data": [], "topics": [{"topic_id": topic_id, "partitions": [
                    {"partition_index": 0, "acknowledgement_batches": list(acks)}]}]})

        def codes(answer: dict, field: str = "error_code") -> list[int]:
            assert answer["error_code"] == Errors.NONE, answer
            return [p[field] for t in answer["responses"] for p in t["partitions"]]

        assert codes(fetch(0)) == [Errors.TOPIC_AUTHORIZATION_FAILED]
        refused = client.request(SHARE_ACKNOWLEDGE, 1, {
            "group_id": "sg", "member_id": "m-1", "share_session_epoch": 1, "topics": [
                {"topic_id": topic_id, "partitions": [{"partition_index": 0, "acknowledgement_batches": [
                    {"first_offset": 0, "last_offset": 0, "acknowledge_types": [1]}]}]}]})
        assert codes(refused) == [Errors.TOPIC_AUTHORIZATION_FAILED]
        acl_broker.allow(ResourceType.TOPIC, "shared", AclOperation.READ)
        assert Errors.TOPIC_AUTHORIZATION_FAILED not in codes(fetch(2))  # readable: its share state starts
        producer = Producer({**acl_broker.admin_config})
        producer.produce("shared", b"now readable")
        assert producer.flush(TIMEOUT_S) == 0
        answer = fetch(3, max_wait_ms=5000)
        assert codes(answer, "acquired_records") == [[{"first_offset": 0, "last_offset": 0, "delivery_count": 1}]]


DESCRIBE_SHARE_GROUP_OFFSETS, ALTER_SHARE_GROUP_OFFSETS, DELETE_SHARE_GROUP_OFFSETS = 90, 91, 92


def test_share_group_offset_apis_check_the_group_then_each_topic(acl_broker):
    """kafka-share-groups --describe --offsets / --reset-offsets / --delete-offsets: DESCRIBE, READ
    and DELETE on the group, then DESCRIBE or READ on each topic."""
    acl_broker.create_topic("kept")
    refused_group, refused_topic = Errors.GROUP_AUTHORIZATION_FAILED, Errors.TOPIC_AUTHORIZATION_FAILED
    describe = {"groups": [{"group_id": "sg2", "topics": [{"topic_name": "kept", "partitions": [0]}]}]}
    alter = {"group_id": "sg2", "topics": [{"topic_name": "kept", "partitions": [
        {"partition_index": 0, "start_offset": 0}]}]}
    delete = {"group_id": "sg2", "topics": [{"topic_name": "kept"}]}
    with RawClient(acl_broker.bootstrap) as client:
        assert client.request(DESCRIBE_SHARE_GROUP_OFFSETS, 0, describe)["groups"][0]["error_code"] == refused_group
        assert client.request(ALTER_SHARE_GROUP_OFFSETS, 0, alter)["error_code"] == refused_group
        assert client.request(DELETE_SHARE_GROUP_OFFSETS, 0, delete)["error_code"] == refused_group
        for operation in (AclOperation.DESCRIBE, AclOperation.READ, AclOperation.DELETE):
            acl_broker.allow(ResourceType.GROUP, "sg2", operation)
        group = client.request(DESCRIBE_SHARE_GROUP_OFFSETS, 0, describe)["groups"][0]
        assert [p["error_code"] for t in group["topics"] for p in t["partitions"]] == [refused_topic]
        altered = client.request(ALTER_SHARE_GROUP_OFFSETS, 0, alter)
        assert [p["error_code"] for t in altered["responses"] for p in t["partitions"]] == [refused_topic]
        deleted = client.request(DELETE_SHARE_GROUP_OFFSETS, 0, delete)
        assert [t["error_code"] for t in deleted["responses"]] == [refused_topic]
        acl_broker.allow(ResourceType.TOPIC, "kept", AclOperation.READ)  # READ implies DESCRIBE
        group = client.request(DESCRIBE_SHARE_GROUP_OFFSETS, 0, describe)["groups"][0]
        assert refused_topic not in [p["error_code"] for t in group["topics"] for p in t["partitions"]]
        altered = client.request(ALTER_SHARE_GROUP_OFFSETS, 0, alter)
        assert refused_topic not in [p["error_code"] for t in altered["responses"] for p in t["partitions"]]


CONSUMER_GROUP_HEARTBEAT = 68


def _consumer_heartbeat(client: RawClient, group: str, epoch: int, names=None, regex=None, owned=()) -> dict:
    """A full ConsumerGroupHeartbeat v1 of member m-1: its answer always carries the assignment."""
    return client.request(CONSUMER_GROUP_HEARTBEAT, 1, {
        "group_id": group, "member_id": "m-1", "member_epoch": epoch, "instance_id": None, "rack_id": None,
        "rebalance_timeout_ms": 10_000, "subscribed_topic_names": names, "subscribed_topic_regex": regex,
        "server_assignor": None, "topic_partitions": [{"topic_id": t, "partitions": ps} for t, ps in owned]})


def test_consumer_group_heartbeat_needs_describe_on_every_topic_it_names(acl_broker):
    """KafkaApis.handleConsumerGroupHeartbeat (Kafka 4.2's, as 4.3 keeps it): READ on the group
    first; then one topic named that the principal may not DESCRIBE fails the whole heartbeat
    with TOPIC_AUTHORIZATION_FAILED and nothing else: no message, no topic named, the same
    whether the topic exists or not, and no member made."""
    acl_broker.create_topic("visible")
    acl_broker.create_topic("hidden")
    with RawClient(acl_broker.bootstrap) as client:
        refused_group = _consumer_heartbeat(client, "cg", 0, names=["visible"])
        assert refused_group["error_code"] == Errors.GROUP_AUTHORIZATION_FAILED
        acl_broker.allow(ResourceType.GROUP, "cg", AclOperation.READ)
        acl_broker.allow(ResourceType.TOPIC, "visible", AclOperation.DESCRIBE)
        refusal = {"throttle_time_ms": 0, "error_code": Errors.TOPIC_AUTHORIZATION_FAILED, "error_message": None,
                   "member_id": None, "member_epoch": 0, "heartbeat_interval_ms": 0, "assignment": None}
        assert _consumer_heartbeat(client, "cg", 0, names=["visible", "hidden"]) == refusal
        assert _consumer_heartbeat(client, "cg", 0, names=["visible", "nonexistent"]) == refusal
        joined = _consumer_heartbeat(client, "cg", 0, names=["visible"])
        assert (joined["error_code"], joined["member_epoch"]) == (Errors.NONE, 2)  # the first member of cg


def test_a_regex_subscription_is_assigned_only_topics_the_principal_may_describe(acl_broker):
    """GroupMetadataManager's regex resolution (TopicRegexResolver.filterTopicDescribeAuthorizedTopics):
    the regex matches both topics, the member is assigned the one its principal may DESCRIBE;
    a DESCRIBE granted later shows at the resolution the refresh interval calls for (ten
    minutes by default: the coordinator's clock is moved past it rather than waited for)."""
    for name in ("orders-eu", "orders-secret"):
        acl_broker.create_topic(name)
    acl_broker.allow(ResourceType.GROUP, "rg", AclOperation.READ)
    acl_broker.allow(ResourceType.TOPIC, "orders-eu", AclOperation.DESCRIBE)
    service = acl_broker.broker.server.group_coordinator
    ids = {name: service.metadata.get(name).topic_id.bytes for name in ("orders-eu", "orders-secret")}

    def assigned_until(client: RawClient, epoch: int, owned: list, wanted: dict) -> tuple[int, list]:
        deadline = time.monotonic() + TIMEOUT_S
        while True:
            answer = _consumer_heartbeat(client, "rg", epoch, regex="orders-.*", owned=owned)
            assert answer["error_code"] == Errors.NONE, answer
            epoch = answer["member_epoch"]
            owned = [(bytes(t["topic_id"]), t["partitions"]) for t in answer["assignment"]["topic_partitions"]]
            if dict(owned) == wanted:
                return epoch, owned
            assert time.monotonic() < deadline, f"still assigned {owned}"
            time.sleep(0.05)

    with RawClient(acl_broker.bootstrap) as client:
        joined = _consumer_heartbeat(client, "rg", 0, regex="orders-.*")
        assert (joined["error_code"], joined["assignment"]) == (Errors.NONE, {"topic_partitions": []})
        epoch, owned = assigned_until(client, joined["member_epoch"], [], {ids["orders-eu"]: [0]})
        acl_broker.allow(ResourceType.TOPIC, "orders-secret", AclOperation.DESCRIBE)
        again = _consumer_heartbeat(client, "rg", epoch, regex="orders-.*", owned=owned)
        assert (again["member_epoch"], again["assignment"]["topic_partitions"]) == (
            epoch, [{"topic_id": ids["orders-eu"], "partitions": [0]}])  # the grant waits for a resolution
        clock = service.consumer_groups._clock_ms
        service.consumer_groups._clock_ms = lambda: clock() + 11 * 60_000
        later, _ = assigned_until(client, epoch, owned, {ids["orders-eu"]: [0], ids["orders-secret"]: [0]})
        assert later > epoch


def test_a_streams_group_heartbeat_needs_read_on_the_group_describe_on_its_topics_and_create_for_new_ones(
        acl_broker):
    from tests.coordinator.group.streams.test_streams_group_coordinator import CHANGELOG, beat_body
    acl_broker.create_topic("in")
    body = beat_body("m1", 0)
    with RawClient(acl_broker.bootstrap) as client:
        def beat(request: dict) -> dict:
            return client.request(STREAMS_GROUP_HEARTBEAT, 0, request)
        assert beat(body)["error_code"] == Errors.GROUP_AUTHORIZATION_FAILED
        acl_broker.allow(ResourceType.GROUP, "app", AclOperation.READ)
        # every topic of the topology: the source topic and the changelog alike
        assert beat(body)["error_code"] == Errors.TOPIC_AUTHORIZATION_FAILED
        acl_broker.allow(ResourceType.TOPIC, "in", AclOperation.DESCRIBE)
        acl_broker.allow(ResourceType.TOPIC, CHANGELOG, AclOperation.DESCRIBE)
        joined = beat(body)
        assert joined["error_code"] == Errors.NONE
        assert [s["status_detail"] for s in joined["status"] if s["status_code"] == 3] == [  # MISSING_INTERNAL_TOPICS
            f"Internal topics are missing: {CHANGELOG}; Unauthorized to CREATE on topics {CHANGELOG}."]
        acl_broker.allow(ResourceType.TOPIC, CHANGELOG, AclOperation.CREATE)
        again = beat(beat_body("m1", joined["member_epoch"], active_tasks=[], standby_tasks=[], warmup_tasks=[]))
        assert again["error_code"] == Errors.NONE
        deadline = time.monotonic() + TIMEOUT_S
        while acl_broker.broker.server.metadata.get(CHANGELOG) is None:
            assert time.monotonic() < deadline, "the changelog was not created"
            time.sleep(0.05)
        described = client.request(STREAMS_GROUP_DESCRIBE, 0, {"group_ids": ["app"],
                                                                "include_authorized_operations": False})
        assert described["groups"][0]["error_code"] == Errors.NONE  # READ implies DESCRIBE


def test_a_streams_group_using_a_topic_the_principal_may_not_describe_is_described_by_its_id_alone(acl_broker):
    """KafkaApis.handleStreamsGroupDescribe answers such a group with a new DescribedGroup: its id
    and TOPIC_AUTHORIZATION_FAILED, no topology, state or epochs."""
    from tests.coordinator.group.streams.test_streams_group_coordinator import CHANGELOG, beat_body
    acl_broker.create_topic("in")
    acl_broker.allow(ResourceType.GROUP, "app", AclOperation.READ)
    for operation in (AclOperation.DESCRIBE, AclOperation.CREATE):
        for topic in ("in", CHANGELOG):
            acl_broker.allow(ResourceType.TOPIC, topic, operation)
    with RawClient(acl_broker.bootstrap) as client:
        assert client.request(STREAMS_GROUP_HEARTBEAT, 0, beat_body("m1", 0))["error_code"] == Errors.NONE
        binding = AclBinding(ResourceType.TOPIC, "in", ResourcePatternType.LITERAL, "User:ANONYMOUS", "*",
                             AclOperation.DESCRIBE, AclPermissionType.DENY)
        for future in acl_broker.admin.create_acls([binding]).values():
            future.result(TIMEOUT_S)
        described = client.request(STREAMS_GROUP_DESCRIBE, 0, {"group_ids": ["app"],
                                                                "include_authorized_operations": False})
    group = described["groups"][0]
    assert (group["error_code"], group["group_id"], group["group_state"], group["group_epoch"], group["topology"],
            group["members"]) == (Errors.TOPIC_AUTHORIZATION_FAILED, "app", "", 0, None, [])
