"""AclControlManager: validation and messages (AclControlManagerTest.testValidateNewAcl,
testValidateFilter), create and delete by filter (testCreateAclDeleteAcl, testDeleteDedupe),
what the file keeps across a restart, a failed store that changes nothing, and the records one
request may make (testDeleteExceedsMaxRecords)."""

from __future__ import annotations

import asyncio
import dataclasses
import json
from pathlib import Path

import pytest

from franz.protocol.errors import Errors
from franz.server.acl_control_manager import (
    ACLS_FILE,
    RECORDS_PER_USER_OP_MAX,
    AclControlManager,
    validate_filter,
    validate_new_acl,
)
from franz.server.controller import ApiError
from franz.server.standard_authorizer import (
    ANY_FILTER,
    AccessControlEntryFilter,
    AclBindingFilter,
    AclOperation,
    AclPermissionType,
    Action,
    AuthorizationResult,
    PatternType,
    ResourcePatternFilter,
    ResourceType,
    StandardAcl,
    StandardAuthorizer,
)
from franz.storage.checkpoint import uuid_from_kafka_string

TOPIC, GROUP, CLUSTER = ResourceType.TOPIC, ResourceType.GROUP, ResourceType.CLUSTER
LITERAL, PREFIXED = PatternType.LITERAL, PatternType.PREFIXED
ALTER, READ, ALL = AclOperation.ALTER, AclOperation.READ, AclOperation.ALL
ALLOW, DENY = AclPermissionType.ALLOW, AclPermissionType.DENY
# StandardAclTest.TEST_ACLS
TEST_ACLS = (StandardAcl(CLUSTER, "kafka-cluster", LITERAL, "User:*", "*", ALTER, ALLOW),
             StandardAcl(TOPIC, "foo_", PREFIXED, "User:*", "*", READ, ALLOW),
             StandardAcl(GROUP, "mygroup", LITERAL, "User:foo", "*", READ, DENY),
             StandardAcl(GROUP, "mygroup", PREFIXED, "User:foo", "*", READ, DENY),
             StandardAcl(GROUP, "foo", PREFIXED, "User:foo", "*", READ, DENY))


async def write_json(path: Path, rows: object) -> None:
    path.write_text(json.dumps(rows), encoding="utf-8")


async def fail_to_store(path: Path, rows: object) -> None:
    raise ApiError(Errors.KAFKA_STORAGE_ERROR, f"Could not store {path.name}: disk full")


def new_manager(data_dir: Path, write=write_json) -> tuple[AclControlManager, StandardAuthorizer]:
    authorizer = StandardAuthorizer()
    authorizer.configure({})
    return AclControlManager(data_dir / ACLS_FILE, write, authorizer), authorizer


def entry_filter(principal=None, host=None, operation=AclOperation.ANY, permission=AclPermissionType.ANY):
    return AccessControlEntryFilter(principal, host, operation, permission)


def messages(results) -> list[str | None]:
    return [None if error is None else error.message for error in results]


def test_validate_new_acl_names_the_first_fault_as_kafka_does():
    acl = StandardAcl(TOPIC, "*", LITERAL, "User:*", "*", ALTER, ALLOW)
    assert validate_new_acl(acl) is None
    cases = [({"pattern_type": PatternType.UNKNOWN}, "Invalid patternType UNKNOWN"),
             ({"pattern_type": PatternType.MATCH}, "Invalid patternType MATCH"),
             ({"pattern_type": PatternType.ANY}, "Invalid patternType ANY"),
             ({"resource_type": ResourceType.UNKNOWN}, "Invalid resourceType UNKNOWN"),
             ({"resource_type": ResourceType.ANY}, "Invalid resourceType ANY"),
             ({"operation": AclOperation.UNKNOWN}, "Invalid operation UNKNOWN"),
             ({"operation": AclOperation.ANY}, "Invalid operation ANY"),
             ({"permission_type": AclPermissionType.UNKNOWN}, "Invalid permissionType UNKNOWN"),
             ({"permission_type": AclPermissionType.ANY}, "Invalid permissionType ANY"),
             ({"resource_name": ""}, "Resource name should not be empty"),
             ({"principal": "alice"}, "Could not parse principal from `alice` (no colon is present separating the "
                                      "principal type from the principal name)")]
    for changes, message in cases:
        error = validate_new_acl(dataclasses.replace(acl, **changes))
        assert (error.code, error.message) == (Errors.INVALID_REQUEST, message)
    assert validate_new_acl(StandardAcl(TOPIC, "t", LITERAL, "User:", "", ALTER, ALLOW)) is None  # no host check


def test_validate_filter_refuses_unknown_codes():
    assert validate_filter(AclBindingFilter(ResourcePatternFilter(ResourceType.ANY, "*", LITERAL),
                                            entry_filter("User:*", "*"))) is None
    assert validate_filter(AclBindingFilter(ResourcePatternFilter(ResourceType.ANY, "*", PatternType.UNKNOWN),
                                            entry_filter("User:*", "*"))).message == "Unknown patternFilter."
    assert validate_filter(AclBindingFilter(ResourcePatternFilter(ResourceType.ANY, "*", PatternType.MATCH),
                                            entry_filter("User:*", "*", permission=AclPermissionType.UNKNOWN)
                                            )).message == "Unknown entryFilter."


def test_create_then_delete_by_filter(tmp_path):
    manager, authorizer = new_manager(tmp_path)
    invalid = StandardAcl(TOPIC, "*", PatternType.UNKNOWN, "User:*", "*", ALTER, ALLOW)
    created = asyncio.run(manager.create_acls([*TEST_ACLS[:3], invalid]))
    assert messages(created) == [None, None, None, "Invalid patternType UNKNOWN"]
    assert sorted(manager.id_to_acl.values(), key=str) == sorted(TEST_ACLS[:3], key=str)
    assert authorizer.acl_count() == 3
    literal = AclBindingFilter(ResourcePatternFilter(ResourceType.ANY, None, LITERAL), entry_filter())
    unknown = AclBindingFilter(ResourcePatternFilter(ResourceType.UNKNOWN, None, LITERAL), entry_filter())
    first, second = asyncio.run(manager.delete_acls([literal, unknown]))
    assert first.error is None and set(first.deleted) == {TEST_ACLS[0], TEST_ACLS[2]}
    assert (second.error.code, second.error.message, second.deleted) == (
        Errors.INVALID_REQUEST, "Unknown patternFilter.", ())
    assert list(manager.id_to_acl.values()) == [TEST_ACLS[1]]
    assert authorizer.acls(ANY_FILTER) == [TEST_ACLS[1]]


def test_an_acl_created_twice_is_stored_once_and_two_filters_delete_it_once(tmp_path):
    manager, _ = new_manager(tmp_path)
    acl = StandardAcl(TOPIC, "topic-1", LITERAL, "User:user", "10.0.0.1", ALL, ALLOW)
    assert messages(asyncio.run(manager.create_acls([acl, acl]))) == [None, None]
    assert messages(asyncio.run(manager.create_acls([acl]))) == [None]
    assert list(manager.id_to_acl.values()) == [acl]
    exact = AclBindingFilter(ResourcePatternFilter(TOPIC, "topic-1", LITERAL),
                             entry_filter("User:user", "10.0.0.1", ALL, ALLOW))
    results = asyncio.run(manager.delete_acls([ANY_FILTER, exact]))
    assert [(result.error, result.deleted) for result in results] == [(None, (acl,)), (None, (acl,))]
    assert manager.id_to_acl == {}
    assert [(result.error, result.deleted) for result in asyncio.run(manager.delete_acls([ANY_FILTER]))] == [
        (None, ())]


def test_a_match_filter_deletes_every_acl_bearing_on_the_name(tmp_path):
    manager, _ = new_manager(tmp_path)
    asyncio.run(manager.create_acls(list(TEST_ACLS)))
    match = AclBindingFilter(ResourcePatternFilter(GROUP, "mygroup", PatternType.MATCH), entry_filter())
    (result,) = asyncio.run(manager.delete_acls([match]))
    assert set(result.deleted) == {TEST_ACLS[2], TEST_ACLS[3]}  # not PREFIXED "foo": no prefix of "mygroup"


def test_the_acls_and_their_ids_are_kept_across_a_restart_and_enforced_at_once(tmp_path):
    manager, _ = new_manager(tmp_path)
    asyncio.run(manager.create_acls(list(TEST_ACLS)))
    rows = json.loads((tmp_path / ACLS_FILE).read_text())
    assert rows[2] == {"id": rows[2]["id"], "resource_type": 3, "resource_name": "mygroup", "pattern_type": 3,
                       "principal": "User:foo", "host": "*", "operation": 3, "permission_type": 2}
    assert all(len(row["id"]) == 22 and not row["id"].startswith("-") for row in rows)
    restarted, authorizer = new_manager(tmp_path)
    assert restarted.id_to_acl == manager.id_to_acl
    assert {uuid_from_kafka_string(row["id"]) for row in rows} == set(manager.id_to_acl)
    assert authorizer.authorize("User:foo", "10.0.0.1", [Action(READ, GROUP, "mygroup")]) == [
        AuthorizationResult.DENIED]


def test_a_change_that_cannot_be_stored_changes_nothing(tmp_path):
    manager, authorizer = new_manager(tmp_path)
    asyncio.run(manager.create_acls([TEST_ACLS[0]]))
    manager._write = fail_to_store
    with pytest.raises(ApiError) as created:
        asyncio.run(manager.create_acls([TEST_ACLS[1]]))
    assert created.value.code == Errors.KAFKA_STORAGE_ERROR
    with pytest.raises(ApiError):
        asyncio.run(manager.delete_acls([ANY_FILTER]))
    assert list(manager.id_to_acl.values()) == [TEST_ACLS[0]] and authorizer.acls(ANY_FILTER) == [TEST_ACLS[0]]
    # The authorizer answers every binding and filter of the request with the error.
    assert messages(asyncio.run(authorizer.create_acls([TEST_ACLS[1], TEST_ACLS[2]]))) == [
        "Could not store acls.json: disk full"] * 2
    assert [r.error.code for r in asyncio.run(authorizer.delete_acls([ANY_FILTER]))] == [Errors.KAFKA_STORAGE_ERROR]


def test_an_unreadable_file_stops_the_start(tmp_path):
    (tmp_path / ACLS_FILE).write_text("[{\"id\": \"not a uuid\"}]")
    with pytest.raises(RuntimeError, match="Cannot read the ACLs in"):
        new_manager(tmp_path)


def _topic_acls(count: int, start: int = 0) -> list[StandardAcl]:
    return [StandardAcl(TOPIC, f"mytopic_{i}", LITERAL, "User:alice", "127.0.0.1", READ, ALLOW)
            for i in range(start, start + count)]


def test_a_create_of_more_new_acls_than_one_operation_may_record_fails_whole(tmp_path):
    """QuorumController.MAX_RECORDS_PER_USER_OP through createAcls' BoundedList: past it the
    controller's PolicyViolationException; ACLs there already make no record and do not count."""
    manager, authorizer = new_manager(tmp_path)
    too_many = _topic_acls(RECORDS_PER_USER_OP_MAX + 1)
    with pytest.raises(ApiError) as refused:
        asyncio.run(manager.create_acls(too_many))
    assert (refused.value.code, refused.value.message) == (
        Errors.POLICY_VIOLATION, "Unable to perform excessively large batch operation.")
    assert manager.id_to_acl == {} and authorizer.acl_count() == 0 and not (tmp_path / ACLS_FILE).exists()
    # the whole failure reaches every binding, the invalid one too
    invalid = dataclasses.replace(too_many[0], resource_name="")
    assert {(error.code, error.message) for error in asyncio.run(authorizer.create_acls([*too_many, invalid]))} == {
        (Errors.POLICY_VIOLATION, "Unable to perform excessively large batch operation.")}
    assert messages(asyncio.run(manager.create_acls(too_many[:RECORDS_PER_USER_OP_MAX]))) == [
        None] * RECORDS_PER_USER_OP_MAX  # exactly the limit
    assert messages(asyncio.run(manager.create_acls([*too_many, invalid]))) == [
        None] * len(too_many) + ["Resource name should not be empty"]  # one new record
    assert authorizer.acl_count() == RECORDS_PER_USER_OP_MAX + 1


def test_a_delete_past_the_records_of_one_operation_fails_whole(tmp_path):
    """AclControlManagerTest.testDeleteExceedsMaxRecords (Kafka 4.1+, KAFKA-19411), its ACLs made
    in two creates; one filter matching them all stands for its one filter per ACL, which here
    would match every ACL against every filter."""
    manager, authorizer = new_manager(tmp_path)
    half = RECORDS_PER_USER_OP_MAX // 2 + 1
    assert messages(asyncio.run(manager.create_acls(_topic_acls(half)))) == [None] * half
    assert messages(asyncio.run(manager.create_acls(_topic_acls(half, half)))) == [None] * half
    stored = (tmp_path / ACLS_FILE).read_text()
    literal_topic = AclBindingFilter(ResourcePatternFilter(TOPIC, "mytopic_0", LITERAL), entry_filter())
    with pytest.raises(ApiError) as refused:
        asyncio.run(manager.delete_acls([literal_topic, ANY_FILTER]))
    assert (refused.value.code, refused.value.message) == (
        Errors.INVALID_REQUEST, "Cannot remove more than 10000 acls in a single delete operation.")
    assert len(manager.id_to_acl) == authorizer.acl_count() == 2 * half
    assert (tmp_path / ACLS_FILE).read_text() == stored
    results = asyncio.run(authorizer.delete_acls([literal_topic, ANY_FILTER]))
    assert [(r.error.code, r.error.message, r.deleted) for r in results] == [
        (Errors.INVALID_REQUEST, "Cannot remove more than 10000 acls in a single delete operation.", ())] * 2


def test_a_delete_of_the_limit_passes_but_a_second_match_of_one_gathered_fails_it(tmp_path):
    """The 4.1+ check comes before each match is added: with as many removals gathered as one
    operation may record, a further match fails the request even when it adds nothing."""
    manager, authorizer = new_manager(tmp_path)
    asyncio.run(manager.create_acls(_topic_acls(RECORDS_PER_USER_OP_MAX)))
    literal_topic = AclBindingFilter(ResourcePatternFilter(TOPIC, "mytopic_0", LITERAL), entry_filter())
    with pytest.raises(ApiError) as refused:
        asyncio.run(manager.delete_acls([ANY_FILTER, literal_topic]))
    assert refused.value.message == "Cannot remove more than 10000 acls in a single delete operation."
    assert authorizer.acl_count() == RECORDS_PER_USER_OP_MAX
    (result,) = asyncio.run(manager.delete_acls([ANY_FILTER]))
    assert result.error is None and len(result.deleted) == RECORDS_PER_USER_OP_MAX
    assert manager.id_to_acl == {} and authorizer.acl_count() == 0
