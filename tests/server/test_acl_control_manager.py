"""AclControlManager: validation and messages (AclControlManagerTest.testValidateNewAcl,
testValidateFilter), create and delete by filter (testCreateAclDeleteAcl, testDeleteDedupe),
what the file keeps across a restart, and a failed store that changes nothing."""

from __future__ import annotations

import asyncio
import dataclasses
import json
from pathlib import Path

import pytest

from franz.protocol.errors import Errors
from franz.server.acl_control_manager import ACLS_FILE, AclControlManager, validate_filter, validate_new_acl
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
