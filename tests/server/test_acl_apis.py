"""AclApis against a running broker: with no authorizer every ACL request is SECURITY_DISABLED; with a
StandardAuthorizer, confluent-kafka's admin and raw requests create, describe and delete ACLs."""

from __future__ import annotations

import subprocess
from collections.abc import Iterator
from pathlib import Path

import pytest
from confluent_kafka.admin import (
    AclBinding,
    AclBindingFilter,
    AclOperation,
    AclPermissionType,
    AdminClient,
    ResourcePatternType,
    ResourceType,
)

from franz.protocol.codec import encode_request
from franz.protocol.errors import Errors
from franz.server.acl_apis import NO_AUTHORIZER
from franz.server.standard_authorizer import StandardAuthorizer
from tests.support.broker_on_thread import BrokerOnThread
from tests.support.java_client import compile_driver_or_skip
from tests.support.raw_client import RawClient

DESCRIBE_ACLS, CREATE_ACLS, DELETE_ACLS = 29, 30, 31
TOPIC, LITERAL, READ, ALLOW, ANY = 2, 3, 3, 3, 1
TIMEOUT_S = 30


def _acl(principal: str) -> dict:
    return {"resource_type": TOPIC, "resource_name": "t", "resource_pattern_type": LITERAL,
            "principal": principal, "host": "*", "operation": READ, "permission_type": ALLOW}


def _filter() -> dict:
    """A filter matching every ACL: DescribeAcls' body, and each of DeleteAcls' filters."""
    return {"resource_type_filter": ANY, "resource_name_filter": None, "pattern_type_filter": ANY,
            "principal_filter": None, "host_filter": None, "operation": ANY, "permission_type": ANY}


def test_every_acl_request_is_answered_security_disabled_in_each_of_its_entries(broker):
    with RawClient(broker.bootstrap) as client:
        for version in (1, 3):  # before and after flexible versions
            described = client.request(DESCRIBE_ACLS, version, _filter())
            assert (described["error_code"], described["error_message"], described["resources"]) == (
                Errors.SECURITY_DISABLED, NO_AUTHORIZER, [])
            created = client.request(CREATE_ACLS, version, {"creations": [_acl("User:a"), _acl("User:b")]})
            assert [(r["error_code"], r["error_message"]) for r in created["results"]] == [
                (Errors.SECURITY_DISABLED, NO_AUTHORIZER)] * 2
            deleted = client.request(DELETE_ACLS, version, {"filters": [_filter()]})
            assert [(r["error_code"], r["matching_acls"]) for r in deleted["filter_results"]] == [
                (Errors.SECURITY_DISABLED, [])]


def test_a_request_naming_an_unknown_code_closes_the_connection_as_kafkas_parser_does(broker):
    """DescribeAclsRequest, CreateAclsRequest and DeleteAclsRequest refuse the UNKNOWN code (0) of
    any of their enums while the request is parsed: no answer, the connection closed."""
    for api_key, body in ((DESCRIBE_ACLS, {**_filter(), "resource_type_filter": 0}),
                          (CREATE_ACLS, {"creations": [_acl("User:a"), {**_acl("User:b"), "operation": 0}]}),
                          (DELETE_ACLS, {"filters": [{**_filter(), "pattern_type_filter": 0}]})):
        with RawClient(broker.bootstrap) as client:
            client.send_frame(encode_request(api_key, 2, 1, "c", body))
            assert client.receive_frame() is None
    with RawClient(broker.bootstrap) as client:  # the broker serves on
        assert client.request(DESCRIBE_ACLS, 2, _filter())["error_code"] == Errors.SECURITY_DISABLED


# -- with a StandardAuthorizer (KafkaServer's constructor argument; no config key sets one yet) --

@pytest.fixture
def acl_broker(tmp_path) -> Iterator[BrokerOnThread]:
    broker = BrokerOnThread(tmp_path / "data", authorizer=_authorizer())
    try:
        yield broker
    finally:
        broker.stop()


def _authorizer() -> StandardAuthorizer:
    """The PLAINTEXT clients here are User:ANONYMOUS, a super user: the ACL APIs themselves need
    DESCRIBE or ALTER on the cluster (test_admin_api_authorization)."""
    authorizer = StandardAuthorizer()
    authorizer.configure({"node.id": "1", "super.users": "User:ANONYMOUS"})
    return authorizer


def _wait(futures: dict) -> dict:
    return {key: future.result(TIMEOUT_S) for key, future in futures.items()}


def _key(binding) -> tuple:
    return (binding.restype, binding.name, binding.resource_pattern_type, binding.principal, binding.host,
            binding.operation, binding.permission_type)


def test_confluent_kafka_admin_creates_describes_and_deletes_acls_kept_across_a_restart(tmp_path):
    read_foo = AclBinding(ResourceType.TOPIC, "foo", ResourcePatternType.LITERAL, "User:alice", "*",
                          AclOperation.READ, AclPermissionType.ALLOW)
    write_pre = AclBinding(ResourceType.TOPIC, "pre", ResourcePatternType.PREFIXED, "User:*", "10.0.0.1",
                           AclOperation.WRITE, AclPermissionType.DENY)
    group_all = AclBinding(ResourceType.GROUP, "*", ResourcePatternType.LITERAL, "User:bob", "*",
                           AclOperation.ALL, AclPermissionType.ALLOW)
    everything = AclBindingFilter(ResourceType.ANY, None, ResourcePatternType.ANY, None, None, AclOperation.ANY,
                                  AclPermissionType.ANY)
    broker = BrokerOnThread(tmp_path / "data", authorizer=_authorizer())
    try:
        admin = AdminClient({"bootstrap.servers": broker.bootstrap})
        assert _wait(admin.create_acls([read_foo, write_pre, group_all])) == {
            read_foo: None, write_pre: None, group_all: None}
        assert _wait(admin.create_acls([read_foo])) == {read_foo: None}  # there already: no error, stored once
        described = admin.describe_acls(everything).result(TIMEOUT_S)
        assert sorted(map(_key, described)) == sorted(map(_key, [read_foo, write_pre, group_all]))
        # MATCH: every ACL that bears on the topic "prefix-1", its PREFIXED "pre" among them
        match = AclBindingFilter(ResourceType.TOPIC, "prefix-1", ResourcePatternType.MATCH, None, None,
                                 AclOperation.ANY, AclPermissionType.ANY)
        assert list(map(_key, admin.describe_acls(match).result(TIMEOUT_S))) == [_key(write_pre)]
    finally:
        broker.stop()
    broker = BrokerOnThread(tmp_path / "data", authorizer=_authorizer())
    try:
        admin = AdminClient({"bootstrap.servers": broker.bootstrap})
        groups = AclBindingFilter(ResourceType.GROUP, None, ResourcePatternType.ANY, None, None, AclOperation.ANY,
                                  AclPermissionType.ANY)
        deleted = _wait(admin.delete_acls([groups, everything]))
        assert list(map(_key, deleted[groups])) == [_key(group_all)]
        assert sorted(map(_key, deleted[everything])) == sorted(map(_key, [read_foo, write_pre, group_all]))
        assert admin.describe_acls(everything).result(TIMEOUT_S) == []
    finally:
        broker.stop()


def test_creations_are_answered_one_by_one_with_kafkas_refusals(acl_broker):
    ok = {**_acl("User:a"), "host": ""}  # Kafka checks no host
    creations = [ok, {**_acl("User:a"), "resource_type": 4, "resource_name": "my-cluster"},
                 {**_acl("User:a"), "resource_name": ""}, _acl("alice"),
                 {**_acl("User:a"), "resource_type": 4, "resource_name": "kafka-cluster", "operation": 7}]
    with RawClient(acl_broker.bootstrap) as client:
        created = client.request(CREATE_ACLS, 3, {"creations": creations})
        assert [(r["error_code"], r["error_message"]) for r in created["results"]] == [
            (Errors.NONE, None),
            (Errors.INVALID_REQUEST, "The only valid name for the CLUSTER resource is kafka-cluster"),
            (Errors.INVALID_REQUEST, "Invalid empty resource name"),
            (Errors.INVALID_REQUEST, "Could not parse principal from `alice` (no colon is present separating the "
                                     "principal type from the principal name)"),
            (Errors.NONE, None)]
        # ANY fails the request's conversion to bindings: nothing is created, every creation says so
        for field, code in (("resource_type", ANY), ("resource_pattern_type", 2), ("operation", ANY),
                            ("permission_type", ANY)):
            failed = client.request(CREATE_ACLS, 3, {"creations": [_acl("User:b"), {**_acl("User:b"), field: code}]})
            assert [(r["error_code"], r["error_message"]) for r in failed["results"]] == [
                (Errors.UNKNOWN_SERVER_ERROR, None)] * 2
        described = client.request(DESCRIBE_ACLS, 3, _filter())
        assert (described["error_code"], described["error_message"]) == (Errors.NONE, None)
        # one entry per resource pattern, with all its ACLs
        assert sorted((r["resource_type"], r["resource_name"], r["pattern_type"],
                       sorted((a["principal"], a["host"], a["operation"], a["permission_type"]) for a in r["acls"]))
                      for r in described["resources"]) == [
            (TOPIC, "t", LITERAL, [("User:a", "", READ, ALLOW)]),
            (4, "kafka-cluster", LITERAL, [("User:a", "*", 7, ALLOW)])]
        deleted = client.request(DELETE_ACLS, 3, {"filters": [{**_filter(), "resource_type_filter": TOPIC}]})
        assert deleted["filter_results"] == [{"error_code": Errors.NONE, "error_message": None, "matching_acls": [
            {"error_code": Errors.NONE, "error_message": None, "resource_type": TOPIC, "resource_name": "t",
             "pattern_type": LITERAL, "principal": "User:a", "host": "", "operation": READ,
             "permission_type": ALLOW}]}]


def test_a_code_kafka_does_not_know_closes_the_connection_as_unknown_does(acl_broker):
    with RawClient(acl_broker.bootstrap) as client:
        client.send_frame(encode_request(DESCRIBE_ACLS, 2, 1, "c", {**_filter(), "operation": 99}))
        assert client.receive_frame() is None


def test_kafkas_java_admin_creates_describes_and_deletes_acls(acl_broker):
    """The reference client: its futures carry the broker's errors and messages as exceptions."""
    command = compile_driver_or_skip(Path(__file__).parent / "java" / "AclAdminDriver.java")
    done = subprocess.run([*command, acl_broker.bootstrap], capture_output=True, text=True, timeout=120)
    assert done.returncode == 0, done.stderr
    foo = ("(pattern=ResourcePattern(resourceType=TOPIC, name=foo, patternType=LITERAL), entry=(principal=User:alice, "
           "host=*, operation=READ, permissionType=ALLOW))")
    pre = ("(pattern=ResourcePattern(resourceType=TOPIC, name=pre, patternType=PREFIXED), entry=(principal=User:*, "
           "host=*, operation=WRITE, permissionType=DENY))")
    assert done.stdout.splitlines() == [
        "create foo: ok", "create pre: ok",
        "create my-cluster: InvalidRequestException: The only valid name for the CLUSTER resource is kafka-cluster",
        "create g: InvalidRequestException: Could not parse principal from `alice` (no colon is present separating "
        "the principal type from the principal name)",
        f"describe {foo}", f"describe {pre}", f"delete {pre}", "left 1"]


def _topic_acl(index: int) -> dict:
    return {**_acl("User:a"), "resource_name": f"t{index}"}


def test_a_request_past_the_records_of_one_controller_operation_is_refused_whole(acl_broker):
    """QuorumController.MAX_RECORDS_PER_USER_OP (10,000): a CreateAcls making more new ACLs is
    answered POLICY_VIOLATION for every binding the controller was given (AclApis' own refusals
    keep theirs); a DeleteAcls matching more (Kafka 4.1+) INVALID_REQUEST for every filter. Nothing
    changes either way."""
    limit = 10_000
    excessive = (Errors.POLICY_VIOLATION, "Unable to perform excessively large batch operation.")
    with RawClient(acl_broker.bootstrap) as client:
        creations = [_topic_acl(i) for i in range(limit + 1)]
        created = client.request(CREATE_ACLS, 3, {"creations": [*creations, {**_acl("User:a"), "resource_name": ""}]})
        assert [(r["error_code"], r["error_message"]) for r in created["results"]] == [excessive] * (limit + 1) + [
            (Errors.INVALID_REQUEST, "Invalid empty resource name")]
        assert client.request(DESCRIBE_ACLS, 3, _filter())["resources"] == []
        created = client.request(CREATE_ACLS, 3, {"creations": creations[:limit]})  # exactly the limit
        assert {r["error_code"] for r in created["results"]} == {Errors.NONE}
        created = client.request(CREATE_ACLS, 3, {"creations": creations})  # one new ACL
        assert {r["error_code"] for r in created["results"]} == {Errors.NONE}
        deleted = client.request(DELETE_ACLS, 3, {"filters": [{**_filter(), "resource_name_filter": "t0"}, _filter()]})
        assert deleted["filter_results"] == [
            {"error_code": Errors.INVALID_REQUEST, "matching_acls": [],
             "error_message": "Cannot remove more than 10000 acls in a single delete operation."}] * 2
        assert len(client.request(DESCRIBE_ACLS, 3, _filter())["resources"]) == limit + 1
