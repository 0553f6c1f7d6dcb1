"""The authorization checks of the admin and controller APIs (ControllerApis, ConfigHelper,
KafkaApis, AclApis), against a broker with a StandardAuthorizer and no super user: its PLAINTEXT
clients are User:ANONYMOUS, refused until an ACL allows them, which the tests add through the
authorizer itself (the ACL APIs being among those refused)."""

from __future__ import annotations

import asyncio
from collections.abc import Iterator
from types import SimpleNamespace

import pytest
from confluent_kafka.admin import AdminClient, ConfigResource, NewTopic

from franz.protocol.api_keys import SCHEMAS_BY_NAME as API
from franz.protocol.errors import Errors
from franz.server.auth_helper import AuthHelper
from franz.server.delegation_token_apis import DelegationTokenApis
from franz.server.delegation_token_control_manager import DelegationTokenControlManager
from franz.server.delegation_token_manager import DelegationTokenManager
from franz.server.request_channel import Session
from franz.server.standard_authorizer import (
    AclOperation,
    AclPermissionType,
    PatternType,
    ResourceType,
    StandardAcl,
    StandardAuthorizer,
)
from tests.support.broker_on_thread import BrokerOnThread
from tests.support.raw_client import RawClient

TIMEOUT_S = 30
TAF, CAF = Errors.TOPIC_AUTHORIZATION_FAILED, Errors.CLUSTER_AUTHORIZATION_FAILED
TOPIC_RESOURCE, BROKER_RESOURCE, BROKER_LOGGER_RESOURCE = 2, 4, 8


@pytest.fixture
def secured(tmp_path) -> Iterator[BrokerOnThread]:
    authorizer = StandardAuthorizer()
    authorizer.configure({"node.id": "1"})
    broker = BrokerOnThread(tmp_path / "data", authorizer=authorizer)
    try:
        yield broker
    finally:
        broker.stop()


def _allow(broker: BrokerOnThread, operation: AclOperation, resource_type: ResourceType, name: str,
           principal: str = "User:ANONYMOUS") -> None:
    acl = StandardAcl(resource_type, name, PatternType.LITERAL, principal, "*", operation, AclPermissionType.ALLOW)
    assert broker.call(broker.server.authorizer.create_acls([acl])) == [None]


def _request(client: RawClient, name: str, body: dict, version: int | None = None) -> dict:
    schema = API[name]
    return client.request(schema.api_key, schema.max_version if version is None else version, body)


def _create(client: RawClient, *names: str) -> list[dict]:
    body = {"topics": [{"name": name, "num_partitions": 1, "replication_factor": 1} for name in names],
            "timeout_ms": 5000}
    return _request(client, "CreateTopics", body)["topics"]


def test_create_topics_needs_create_and_returns_configs_only_to_whom_may_describe_them(secured):
    with RawClient(secured.bootstrap) as client:
        assert [(t["name"], t["error_code"], t["error_message"]) for t in _create(client, "a", "b")] == [
            ("a", TAF, "Authorization failed."), ("b", TAF, "Authorization failed.")]
        _allow(secured, AclOperation.CREATE, ResourceType.TOPIC, "a")
        a, b = _create(client, "a", "b")
        assert (a["error_code"], a["topic_config_error_code"], a["num_partitions"], a["configs"]) == (0, TAF, -1, [])
        assert b["error_code"] == TAF
        _allow(secured, AclOperation.CREATE, ResourceType.CLUSTER, "kafka-cluster")
        _allow(secured, AclOperation.DESCRIBE_CONFIGS, ResourceType.TOPIC, "c")
        (c,) = _create(client, "c")
        assert (c["error_code"], c["topic_config_error_code"], c["num_partitions"]) == (0, 0, 1)
        assert any(entry["name"] == "cleanup.policy" for entry in c["configs"])


def test_delete_topics_tells_whom_may_not_describe_a_topic_nothing_of_it(secured):
    _allow(secured, AclOperation.CREATE, ResourceType.CLUSTER, "kafka-cluster")
    with RawClient(secured.bootstrap) as client:
        topic_id = _create(client, "t")[0]["topic_id"]

        def delete(by_name=(), by_id=()):
            topics = [{"name": name, "topic_id": bytes(16)} for name in by_name]
            topics += [{"name": None, "topic_id": ident} for ident in by_id]
            answer = _request(client, "DeleteTopics", {"topics": topics, "timeout_ms": 5000})
            return [(r["name"], r["error_code"]) for r in answer["responses"]]

        assert delete(by_name=["t", "missing"]) == [("t", TAF), ("missing", TAF)]
        assert delete(by_id=[topic_id]) == [(None, TAF)]  # the id's name is not told
        _allow(secured, AclOperation.DESCRIBE, ResourceType.TOPIC, "t")
        _allow(secured, AclOperation.DESCRIBE, ResourceType.TOPIC, "missing")
        assert delete(by_id=[topic_id]) == [("t", TAF)]
        assert delete(by_name=["missing"]) == [("missing", Errors.UNKNOWN_TOPIC_OR_PARTITION)]
        _allow(secured, AclOperation.DELETE, ResourceType.TOPIC, "t")
        assert delete(by_name=["t"]) == [("t", 0)]


def test_create_partitions_needs_alter_on_the_topic(secured):
    _allow(secured, AclOperation.CREATE, ResourceType.CLUSTER, "kafka-cluster")
    with RawClient(secured.bootstrap) as client:
        _create(client, "t")
        body = {"topics": [{"name": "t", "count": 2, "assignments": None}], "timeout_ms": 5000}
        result = _request(client, "CreatePartitions", body)["results"][0]
        assert (result["error_code"], result["error_message"]) == (TAF, None)
        _allow(secured, AclOperation.ALTER, ResourceType.TOPIC, "t")
        assert _request(client, "CreatePartitions", body)["results"][0]["error_code"] == 0


def test_configs_are_described_and_altered_with_describe_configs_and_alter_configs(secured):
    _allow(secured, AclOperation.CREATE, ResourceType.CLUSTER, "kafka-cluster")
    with RawClient(secured.bootstrap) as client:
        _create(client, "t")
        resources = [{"resource_type": BROKER_RESOURCE, "resource_name": "1", "configuration_keys": None},
                     {"resource_type": TOPIC_RESOURCE, "resource_name": "t", "configuration_keys": None}]
        body = {"resources": resources, "include_synonyms": False, "include_documentation": False}
        described = _request(client, "DescribeConfigs", body)["results"]
        assert [(r["resource_name"], r["error_code"], r["error_message"], r["configs"]) for r in described] == [
            ("1", CAF, "Cluster authorization failed.", []), ("t", TAF, "Topic authorization failed.", [])]
        _allow(secured, AclOperation.DESCRIBE_CONFIGS, ResourceType.TOPIC, "t")
        described = _request(client, "DescribeConfigs", body)["results"]  # ConfigHelper: the authorized first
        assert [(r["resource_name"], r["error_code"]) for r in described] == [("t", 0), ("1", CAF)]
        assert described[0]["configs"]

        def alter(api, resource_type, name, key, value, version=None):
            config = {"name": key, "value": value, "config_operation": 0}
            body = {"resources": [{"resource_type": resource_type, "resource_name": name, "configs": [config]}],
                    "validate_only": False}
            (response,) = _request(client, api, body, version)["responses"]
            return response["error_code"], response["error_message"]

        assert alter("IncrementalAlterConfigs", TOPIC_RESOURCE, "t", "retention.ms", "1000") == (
            TAF, "Topic authorization failed.")
        assert alter("AlterConfigs", TOPIC_RESOURCE, "t", "retention.ms", "1000") == (
            TAF, "Topic authorization failed.")
        assert alter("IncrementalAlterConfigs", BROKER_LOGGER_RESOURCE, "1", "root", "INFO") == (CAF, None)
        assert alter("IncrementalAlterConfigs", BROKER_RESOURCE, "1", "log.cleaner.threads", "2") == (
            CAF, "Cluster authorization failed.")
        # ConfigAdminManager.preprocess validates a broker's changes before the controller authorizes
        refused = alter("IncrementalAlterConfigs", BROKER_RESOURCE, "2", "log.cleaner.threads", "2")
        assert refused[0] == Errors.INVALID_REQUEST
        _allow(secured, AclOperation.ALTER_CONFIGS, ResourceType.TOPIC, "t")
        assert alter("IncrementalAlterConfigs", TOPIC_RESOURCE, "t", "retention.ms", "1000") == (0, None)
        assert alter("AlterConfigs", TOPIC_RESOURCE, "t", "retention.ms", "2000") == (0, None)


def test_confluent_kafka_admin_reads_the_refusals_of_create_topics_and_describe_configs(secured):
    admin = AdminClient({"bootstrap.servers": secured.bootstrap})
    with pytest.raises(Exception, match="TOPIC_AUTHORIZATION_FAILED"):
        admin.create_topics([NewTopic("x", 1, 1)])["x"].result(TIMEOUT_S)
    with pytest.raises(Exception, match="CLUSTER_AUTHORIZATION_FAILED"):
        broker = ConfigResource(ConfigResource.Type.BROKER, "1")
        admin.describe_configs([broker])[broker].result(TIMEOUT_S)
    _allow(secured, AclOperation.CREATE, ResourceType.TOPIC, "x")
    assert admin.create_topics([NewTopic("x", 1, 1)])["x"].result(TIMEOUT_S) is None


def _top_level(answer: dict) -> int:
    return answer["error_code"]


# (API, body, the cluster operation it needs, where its error is)
CLUSTER_CHECKS = [
    ("ElectLeaders", {"election_type": 0, "topic_partitions": None, "timeout_ms": 5000}, AclOperation.ALTER,
     _top_level),
    ("AlterPartitionReassignments", {"topics": [], "timeout_ms": 5000}, AclOperation.ALTER, _top_level),
    ("ListPartitionReassignments", {"topics": None, "timeout_ms": 5000}, AclOperation.DESCRIBE, _top_level),
    ("UpdateFeatures", {"feature_updates": [], "timeout_ms": 5000}, AclOperation.ALTER, _top_level),
    ("UnregisterBroker", {"broker_id": 1}, AclOperation.ALTER, _top_level),
    ("DescribeClientQuotas", {"components": [], "strict": False}, AclOperation.DESCRIBE_CONFIGS, _top_level),
    ("AlterClientQuotas", {"entries": [{"entity": [{"entity_type": "user", "entity_name": "u"}], "ops": [
        {"key": "producer_byte_rate", "value": 1024.0, "remove": False}]}], "validate_only": True},
     AclOperation.ALTER_CONFIGS, lambda answer: answer["entries"][0]["error_code"]),
    ("DescribeUserScramCredentials", {"users": None}, AclOperation.DESCRIBE, _top_level),
    ("AlterUserScramCredentials", {"deletions": [{"name": "u", "mechanism": 1}], "upsertions": []},
     AclOperation.ALTER, lambda answer: answer["results"][0]["error_code"]),
    ("ListConfigResources", {"resource_types": []}, AclOperation.DESCRIBE_CONFIGS, _top_level),
    ("DescribeAcls", {"resource_type_filter": 1, "resource_name_filter": None, "pattern_type_filter": 1,
                      "principal_filter": None, "host_filter": None, "operation": 1, "permission_type": 1},
     AclOperation.DESCRIBE, _top_level),
    ("CreateAcls", {"creations": [{"resource_type": 2, "resource_name": "t", "resource_pattern_type": 3,
                                   "principal": "User:a", "host": "*", "operation": 3, "permission_type": 3}]},
     AclOperation.ALTER, lambda answer: answer["results"][0]["error_code"]),
    ("WriteTxnMarkers", {"markers": [{"producer_id": 1, "producer_epoch": 0, "transaction_result": True,
                                      "topics": [{"name": "t", "partition_indexes": [0]}],
                                      "coordinator_epoch": 0}]},
     AclOperation.CLUSTER_ACTION, lambda answer: answer["markers"][0]["topics"][0]["partitions"][0]["error_code"]),
]


@pytest.mark.parametrize(("api", "body", "operation", "error_of"), CLUSTER_CHECKS,
                         ids=[check[0] for check in CLUSTER_CHECKS])
def test_cluster_apis_need_their_operation_on_the_cluster(secured, api, body, operation, error_of):
    with RawClient(secured.bootstrap) as client:
        assert error_of(_request(client, api, body)) == CAF
        _allow(secured, operation, ResourceType.CLUSTER, "kafka-cluster")
        assert error_of(_request(client, api, body)) != CAF


def test_a_cluster_operation_refused_says_so_in_kafkas_words(secured):
    with RawClient(secured.bootstrap) as client:
        answer = _request(client, "AlterPartitionReassignments", {"topics": [], "timeout_ms": 5000})
        assert answer["error_message"].startswith("Request Request(connectionId=")
        assert answer["error_message"].endswith(" is not authorized.")
        assert "session=Session(User:ANONYMOUS,/127.0.0.1)" in answer["error_message"]
        quotas = _request(client, "DescribeClientQuotas", {"components": [], "strict": False})
        assert quotas["error_message"] is None  # Errors.CLUSTER_AUTHORIZATION_FAILED.exception: the default text


def test_write_txn_markers_is_allowed_by_alter_on_the_cluster_too(secured):
    (_api, body, _operation, error_of) = CLUSTER_CHECKS[-1]
    _allow(secured, AclOperation.ALTER, ResourceType.CLUSTER, "kafka-cluster")
    with RawClient(secured.bootstrap) as client:
        assert error_of(_request(client, "WriteTxnMarkers", body)) != CAF


def test_a_token_for_another_owner_needs_create_tokens_on_that_user(tmp_path):
    """Over SASL (token requests are refused over PLAINTEXT before any ACL is asked), alice may
    ask a token for herself; for bob only with CREATE_TOKENS on User:bob. The handler is driven
    directly, with a SASL session, and a broker without delegation.token.secret.key, whose
    controller answers an allowed request DELEGATION_TOKEN_AUTH_DISABLED."""
    authorizer = StandardAuthorizer()
    authorizer.configure({"node.id": "1"})
    never_written = tmp_path / "delegation-tokens.json"
    apis = DelegationTokenApis(DelegationTokenControlManager(never_written, None, DelegationTokenManager(None), 1, 1))
    apis.register(SimpleNamespace(auth=AuthHelper(authorizer), register=lambda name, handler: None))
    session = Session("alice", security_protocol="SASL_PLAINTEXT")
    request = SimpleNamespace(session=session, client_address=("127.0.0.1", 1),
                              api_key=API["CreateDelegationToken"].api_key)

    def create(owner):
        body = {"renewers": [], "max_lifetime_ms": -1, "owner_principal_type": "User" if owner else None,
                "owner_principal_name": owner}
        return asyncio.run(apis.handle_create_token(request, body))["error_code"]

    assert create(None) == Errors.DELEGATION_TOKEN_AUTH_DISABLED
    assert create("alice") == Errors.DELEGATION_TOKEN_AUTH_DISABLED
    assert create("bob") == Errors.DELEGATION_TOKEN_AUTHORIZATION_FAILED
    authorizer.add_acl("bob-tokens", StandardAcl(ResourceType.USER, "User:bob", PatternType.LITERAL, "User:alice",
                                                 "*", AclOperation.CREATE_TOKENS, AclPermissionType.ALLOW))
    assert create("bob") == Errors.DELEGATION_TOKEN_AUTH_DISABLED
