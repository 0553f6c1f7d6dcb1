"""StandardAuthorizer's decisions, ported from Kafka's StandardAuthorizerTest (matching,
super users, the default result, audit lines), StandardAclTest (equality), the
authorizeByResourceType cases of BaseAuthorizerTest, and ResourcePatternFilterTest /
AclBindingFilterTest for the filters DescribeAcls and DeleteAcls use."""

from __future__ import annotations

import logging
import uuid

import pytest

from franz.server.logging_controller import TRACE
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
    _find_result,
    from_code,
    java_host_address,
)

TOPIC, GROUP, CLUSTER, TXN = ResourceType.TOPIC, ResourceType.GROUP, ResourceType.CLUSTER, ResourceType.TRANSACTIONAL_ID
LITERAL, PREFIXED = PatternType.LITERAL, PatternType.PREFIXED
ALL, READ, WRITE, CREATE, DELETE, ALTER, DESCRIBE = (AclOperation.ALL, AclOperation.READ, AclOperation.WRITE,
                                                     AclOperation.CREATE, AclOperation.DELETE, AclOperation.ALTER,
                                                     AclOperation.DESCRIBE)
DESCRIBE_CONFIGS, ALTER_CONFIGS = AclOperation.DESCRIBE_CONFIGS, AclOperation.ALTER_CONFIGS
ALLOW, DENY = AclPermissionType.ALLOW, AclPermissionType.DENY
ALLOWED, DENIED = AuthorizationResult.ALLOWED, AuthorizationResult.DENIED
LOCALHOST = "127.0.0.1"


def new_action(operation, resource_type, name, log_if_allowed=False, log_if_denied=False) -> Action:
    return Action(operation, resource_type, name, 1, log_if_allowed, log_if_denied)


def new_authorizer(**configs) -> StandardAuthorizer:
    authorizer = StandardAuthorizer()
    authorizer.configure({"super.users": "User:superman", **configs})
    return authorizer


def add(authorizer: StandardAuthorizer, *acls: StandardAcl) -> list[uuid.UUID]:
    ids = []
    for acl in acls:
        ids.append(uuid.uuid4())
        authorizer.add_acl(ids[-1], acl)
    return ids


def authorize(authorizer, user, *actions, host=LOCALHOST) -> list[AuthorizationResult]:
    return authorizer.authorize(f"User:{user}", host, actions, "Fetch")


def foo_acl(operation, permission) -> StandardAcl:
    return StandardAcl(TOPIC, "foo_", PREFIXED, "User:bob", "*", operation, permission)


def bar_acl(operation, permission) -> StandardAcl:
    return StandardAcl(GROUP, "bar", LITERAL, "User:*", "*", operation, permission)


def test_configured_super_users_are_trimmed_and_each_must_be_a_principal():
    assert new_authorizer(**{"super.users": None}).super_users == frozenset()
    assert new_authorizer(**{"super.users": " "}).super_users == frozenset()
    assert new_authorizer(**{"super.users": "User:bob;User:alice "}).super_users == {"User:bob", "User:alice"}
    assert new_authorizer(**{"super.users": ";  User:bob  ;  User:alice "}).super_users == {"User:bob", "User:alice"}
    with pytest.raises(ValueError, match="^expected a string in format principalType:principalName but got bob$"):
        new_authorizer(**{"super.users": "bob;:alice"})


def test_default_result_follows_allow_everyone_if_no_acl_found():
    assert new_authorizer().default_result is DENIED
    assert new_authorizer(**{"allow.everyone.if.no.acl.found": "true"}).default_result is ALLOWED
    assert new_authorizer(**{"allow.everyone.if.no.acl.found": "false"}).default_result is DENIED


@pytest.mark.parametrize("allow_everyone, on_resource_without_acls", [("true", ALLOWED), ("false", DENIED)])
def test_allow_everyone_applies_only_to_a_resource_no_acl_bears_on(allow_everyone, on_resource_without_acls):
    authorizer = new_authorizer(**{"super.users": "User:alice;User:chris",
                                   "allow.everyone.if.no.acl.found": allow_everyone})
    add(authorizer, StandardAcl(TOPIC, "topic1", LITERAL, "User:Alice", "*", READ, ALLOW))
    assert authorize(authorizer, "Bob", new_action(READ, TOPIC, "topic1")) == [DENIED]
    assert authorize(authorizer, "Bob", new_action(READ, TOPIC, "topic2")) == [on_resource_without_acls]


def test_allow_acls_imply_describe_and_describe_configs_but_deny_acls_imply_nothing():
    bob = ("User:bob", "User:*")
    describe = new_action(DESCRIBE, TOPIC, "foo_bar")
    for operation in (DESCRIBE, READ, WRITE, DELETE, ALTER):
        assert _find_result(describe, bob, LOCALHOST, foo_acl(operation, ALLOW)) is ALLOWED
    assert _find_result(describe, bob, LOCALHOST, foo_acl(CREATE, ALLOW)) is None
    for operation in (READ, WRITE, DELETE, ALTER):
        assert _find_result(describe, bob, LOCALHOST, foo_acl(operation, DENY)) is None
    assert _find_result(describe, bob, LOCALHOST, foo_acl(DESCRIBE, DENY)) is DENIED
    describe_configs = new_action(DESCRIBE_CONFIGS, TOPIC, "foo_bar")
    for operation in (DESCRIBE_CONFIGS, ALTER_CONFIGS):
        assert _find_result(describe_configs, bob, LOCALHOST, foo_acl(operation, ALLOW)) is ALLOWED
    assert _find_result(describe_configs, bob, LOCALHOST, foo_acl(ALTER_CONFIGS, DENY)) is None
    assert _find_result(new_action(ALTER_CONFIGS, TOPIC, "foo_bar"), bob, LOCALHOST,
                        foo_acl(ALTER_CONFIGS, DENY)) is DENIED


def test_an_acl_applies_to_its_principal_and_the_wildcard_principal_to_everyone():
    read = new_action(READ, TOPIC, "foo_bar")
    assert _find_result(read, ("User:bob", "User:*"), LOCALHOST, foo_acl(READ, ALLOW)) is ALLOWED
    assert _find_result(read, ("User:alice", "User:*"), LOCALHOST, foo_acl(READ, ALLOW)) is None
    assert _find_result(new_action(READ, GROUP, "bar"), ("User:alice", "User:*"), LOCALHOST,
                        bar_acl(READ, DENY)) is DENIED


def test_acls_lists_what_a_filter_matches_and_forgets_a_removed_acl():
    authorizer = new_authorizer()
    foo_ids = add(authorizer, foo_acl(READ, ALLOW), foo_acl(WRITE, ALLOW))
    add(authorizer, bar_acl(DESCRIBE_CONFIGS, DENY), bar_acl(ALTER_CONFIGS, DENY))
    assert authorizer.acls(ANY_FILTER) == [foo_acl(READ, ALLOW), foo_acl(WRITE, ALLOW),
                                           bar_acl(DESCRIBE_CONFIGS, DENY), bar_acl(ALTER_CONFIGS, DENY)]
    authorizer.remove_acl(foo_ids[1])
    assert authorizer.acls(ANY_FILTER) == [foo_acl(READ, ALLOW), bar_acl(DESCRIBE_CONFIGS, DENY),
                                           bar_acl(ALTER_CONFIGS, DENY)]
    topics = AclBindingFilter(ResourcePatternFilter(TOPIC, None, PatternType.ANY), ANY_FILTER.entry_filter)
    assert authorizer.acls(topics) == [foo_acl(READ, ALLOW)]
    assert authorizer.acl_count() == 3


def test_simple_authorizations():
    authorizer = new_authorizer()
    add(authorizer, foo_acl(READ, ALLOW), foo_acl(WRITE, ALLOW), bar_acl(DESCRIBE_CONFIGS, ALLOW),
        bar_acl(ALTER_CONFIGS, ALLOW))
    assert authorize(authorizer, "bob", new_action(READ, TOPIC, "foo_")) == [ALLOWED]
    assert authorize(authorizer, "fred", new_action(ALTER_CONFIGS, GROUP, "bar")) == [ALLOWED]


def test_a_deny_of_all_wins_over_every_allow():
    authorizer = new_authorizer()
    add(authorizer,
        StandardAcl(TOPIC, "foo", LITERAL, "User:alice", "*", ALL, DENY),
        StandardAcl(TOPIC, "foo", PREFIXED, "User:alice", "*", READ, ALLOW),
        StandardAcl(TOPIC, "foo", LITERAL, "User:*", "*", ALL, DENY),
        StandardAcl(TOPIC, "foo", PREFIXED, "User:*", "*", DESCRIBE, ALLOW))
    assert authorize(authorizer, "alice", new_action(WRITE, TOPIC, "foo"), new_action(READ, TOPIC, "foo"),
                     new_action(DESCRIBE, TOPIC, "foo"), new_action(READ, TOPIC, "foobar")) == [
        DENIED, DENIED, DENIED, ALLOWED]
    assert authorize(authorizer, "bob", new_action(DESCRIBE, TOPIC, "foo"), new_action(READ, TOPIC, "foo"),
                     new_action(WRITE, TOPIC, "foo"), new_action(DESCRIBE, TOPIC, "foobaz"),
                     new_action(READ, TOPIC, "foobaz")) == [DENIED, DENIED, DENIED, ALLOWED, DENIED]


def test_an_allow_of_all_allows_every_operation():
    authorizer = new_authorizer()
    add(authorizer,
        StandardAcl(TOPIC, "foo", LITERAL, "User:*", "*", ALL, ALLOW),
        StandardAcl(TOPIC, "bar", PREFIXED, "User:alice", "*", ALL, ALLOW),
        StandardAcl(TOPIC, "baz", LITERAL, "User:bob", "*", ALL, ALLOW))
    assert authorize(authorizer, "alice", new_action(WRITE, TOPIC, "foo"), new_action(DESCRIBE_CONFIGS, TOPIC, "bar"),
                     new_action(DESCRIBE, TOPIC, "baz")) == [ALLOWED, ALLOWED, DENIED]
    assert authorize(authorizer, "bob", new_action(WRITE, TOPIC, "foo"), new_action(READ, TOPIC, "bar"),
                     new_action(DESCRIBE, TOPIC, "baz")) == [ALLOWED, DENIED, ALLOWED]
    assert authorize(authorizer, "malory", new_action(DESCRIBE, TOPIC, "foo"), new_action(WRITE, TOPIC, "bar"),
                     new_action(READ, TOPIC, "baz")) == [ALLOWED, DENIED, DENIED]


def test_an_acl_applies_to_its_host_and_the_wildcard_host_to_every_host():
    host1, host2, local = "192.168.1.1", "192.168.1.2", "10.0.0.7"
    authorizer = new_authorizer()
    add(authorizer,
        StandardAcl(TOPIC, "foo", LITERAL, "User:alice", host1, READ, DENY),
        StandardAcl(TOPIC, "foo", LITERAL, "User:alice", "*", READ, ALLOW),
        StandardAcl(TOPIC, "bar", LITERAL, "User:bob", host2, READ, ALLOW),
        StandardAcl(TOPIC, "bar", LITERAL, "User:*", local, DESCRIBE, ALLOW))
    actions = (new_action(READ, TOPIC, "foo"), new_action(READ, TOPIC, "bar"), new_action(DESCRIBE, TOPIC, "bar"))
    assert authorize(authorizer, "alice", *actions, host=local) == [ALLOWED, DENIED, ALLOWED]
    assert authorize(authorizer, "alice", *actions, host=host1) == [DENIED, DENIED, DENIED]
    assert authorize(authorizer, "alice", *actions, host=host2) == [ALLOWED, DENIED, DENIED]
    assert authorize(authorizer, "bob", *actions, host=local) == [DENIED, DENIED, ALLOWED]
    assert authorize(authorizer, "bob", *actions, host=host1) == [DENIED, DENIED, DENIED]
    assert authorize(authorizer, "bob", *actions, host=host2) == [DENIED, ALLOWED, ALLOWED]


def test_a_client_address_is_matched_in_the_form_java_prints_it():
    assert java_host_address("::1") == "0:0:0:0:0:0:0:1"
    assert java_host_address("fe80::1:2") == "fe80:0:0:0:0:0:1:2"
    assert java_host_address("::ffff:192.168.1.1") == "192.168.1.1"
    assert java_host_address("192.168.1.1") == "192.168.1.1"
    authorizer = new_authorizer()
    add(authorizer, StandardAcl(TOPIC, "foo", LITERAL, "User:bob", "0:0:0:0:0:0:0:1", READ, ALLOW))
    assert authorize(authorizer, "bob", new_action(READ, TOPIC, "foo"), host="::1") == [ALLOWED]


def add_many_acls(authorizer: StandardAuthorizer) -> None:
    add(authorizer,
        StandardAcl(TOPIC, "green2", LITERAL, "User:*", "*", READ, ALLOW),
        StandardAcl(TOPIC, "green", PREFIXED, "User:bob", "*", READ, ALLOW),
        StandardAcl(TOPIC, "betamax4", LITERAL, "User:bob", "*", READ, ALLOW),
        StandardAcl(TOPIC, "betamax", LITERAL, "User:bob", "*", READ, ALLOW),
        StandardAcl(TOPIC, "beta", PREFIXED, "User:*", "*", READ, ALLOW),
        StandardAcl(TOPIC, "alpha", PREFIXED, "User:*", "*", READ, ALLOW),
        StandardAcl(TOPIC, "alp", PREFIXED, "User:bob", "*", READ, DENY),
        StandardAcl(GROUP, "*", LITERAL, "User:bob", "*", WRITE, ALLOW),
        StandardAcl(GROUP, "wheel", LITERAL, "User:*", "*", WRITE, DENY))


def test_authorization_with_many_acls():
    authorizer = new_authorizer()
    add_many_acls(authorizer)
    assert authorize(authorizer, "bob", new_action(READ, TOPIC, "green1"), new_action(WRITE, GROUP, "wheel")) == [
        ALLOWED, DENIED]
    assert authorize(authorizer, "bob", new_action(READ, TOPIC, "alpha"), new_action(WRITE, GROUP, "arbitrary"),
                     new_action(READ, TOPIC, "ala")) == [DENIED, ALLOWED, DENIED]


def test_a_super_user_may_do_anything_despite_a_deny():
    authorizer = new_authorizer()
    add_many_acls(authorizer)
    assert authorize(authorizer, "superman", new_action(READ, TOPIC, "alpha"), new_action(WRITE, GROUP, "wheel")) == [
        ALLOWED, ALLOWED]


def test_prefix_acls_match_names_they_begin_and_literal_acls_only_their_own_name():
    authorizer = new_authorizer()
    add(authorizer,
        StandardAcl(TOPIC, "fooa", PREFIXED, "User:alice", "*", ALL, ALLOW),
        StandardAcl(TOPIC, "foobar", LITERAL, "User:bob", "*", ALL, ALLOW),
        StandardAcl(TOPIC, "f", PREFIXED, "User:bob", "*", ALL, ALLOW))
    assert authorize(authorizer, "bob", new_action(WRITE, TOPIC, "foobarr"), new_action(READ, TOPIC, "goobar"),
                     new_action(READ, TOPIC, "fooa")) == [ALLOWED, DENIED, ALLOWED]
    assert authorize(authorizer, "alice", new_action(DESCRIBE, TOPIC, "fooa"), new_action(WRITE, TOPIC, "bar"),
                     new_action(READ, TOPIC, "baz")) == [ALLOWED, DENIED, DENIED]


def test_a_removed_prefix_no_longer_bears_on_a_resource():
    authorizer = new_authorizer(**{"allow.everyone.if.no.acl.found": "true"})
    (acl_id,) = add(authorizer, StandardAcl(TOPIC, "fo", PREFIXED, "User:alice", "*", READ, ALLOW))
    assert authorize(authorizer, "bob", new_action(READ, TOPIC, "foo")) == [DENIED]
    authorizer.remove_acl(acl_id)
    assert authorize(authorizer, "bob", new_action(READ, TOPIC, "foo")) == [ALLOWED]


@pytest.mark.parametrize("name, logs, result, level, rule", [
    ("alpha", True, DENIED, logging.INFO, "resourceName=alp, patternType=PREFIXED, principal=User:bob, host=*, "
                                          "operation=READ, permissionType=DENY"),
    ("alpha", False, DENIED, TRACE, "resourceName=alp, patternType=PREFIXED, principal=User:bob, host=*, "
                                    "operation=READ, permissionType=DENY"),
    ("green1", True, ALLOWED, logging.DEBUG, "resourceName=green, patternType=PREFIXED, principal=User:bob, host=*, "
                                             "operation=READ, permissionType=ALLOW"),
    ("green1", False, ALLOWED, TRACE, "resourceName=green, patternType=PREFIXED, principal=User:bob, host=*, "
                                      "operation=READ, permissionType=ALLOW")])
def test_a_decision_is_logged_at_kafkas_level_naming_its_rule(caplog, name, logs, result, level, rule):
    """A denial at INFO when the caller acts on it, an allowance at DEBUG; TRACE when it only asks."""
    authorizer = new_authorizer()
    add_many_acls(authorizer)
    caplog.set_level(TRACE, logger="kafka.authorizer.logger")
    action = Action(READ, TOPIC, name, 1, log_if_allowed=logs, log_if_denied=logs)
    assert authorizer.authorize("User:bob", "127.0.0.1", [action], "Fetch") == [result]
    verb = "Allowed" if result is ALLOWED else "Denied"
    assert [(r.levelno, r.getMessage()) for r in caplog.records if r.name == "kafka.authorizer.logger"] == [(
        level, f"Principal = User:bob is {verb} operation = READ from host = 127.0.0.1 on resource = "
               f"Topic:LITERAL:{name} for request = Fetch with resourceRefCount = 1 based on rule "
               f"MatchingAcl(acl=StandardAcl(resourceType=TOPIC, {rule}))")]


def test_acls_are_equal_only_when_every_field_is():
    acls = [StandardAcl(CLUSTER, "kafka-cluster", LITERAL, "User:*", "*", ALTER, ALLOW),
            StandardAcl(TOPIC, "foo_", PREFIXED, "User:*", "*", READ, ALLOW),
            StandardAcl(GROUP, "mygroup", LITERAL, "User:foo", "*", READ, DENY),
            StandardAcl(GROUP, "mygroup", PREFIXED, "User:foo", "*", READ, DENY),
            StandardAcl(GROUP, "foo", PREFIXED, "User:foo", "*", READ, DENY)]
    for i, left in enumerate(acls):
        for j, right in enumerate(acls):
            assert (left == right) is (i == j)


def test_unknown_codes_read_as_unknown():
    assert from_code(AclOperation, 99) is AclOperation.UNKNOWN
    assert from_code(AclOperation, 15) is AclOperation.TWO_PHASE_COMMIT
    assert from_code(ResourceType, 8) is ResourceType.UNKNOWN


# -- authorizeByResourceType (BaseAuthorizerTest) ---------------------------------------------

U1, H1, H2 = "User:user1", "192.168.1.1", "192.168.1.2"


def by_type(authorizer, operation, resource_type, principal=U1, host=H1) -> bool:
    return authorizer.authorize_by_resource_type(principal, host, operation, resource_type) is ALLOWED


def test_by_resource_type_follows_acls_added_and_removed():
    authorizer = new_authorizer()
    assert not by_type(authorizer, READ, TOPIC)
    (allow_id,) = add(authorizer, StandardAcl(TOPIC, "sb1", LITERAL, U1, H1, READ, ALLOW))
    assert by_type(authorizer, READ, TOPIC)
    for _ in range(3):
        (deny_id,) = add(authorizer, StandardAcl(TOPIC, "sb1", LITERAL, U1, H1, READ, DENY))
        assert not by_type(authorizer, READ, TOPIC)
        authorizer.remove_acl(deny_id)
        assert by_type(authorizer, READ, TOPIC)
    authorizer.remove_acl(allow_id)
    assert not by_type(authorizer, READ, TOPIC)


def test_by_resource_type_an_unrelated_deny_does_not_dominate_an_allow():
    authorizer = new_authorizer()
    add(authorizer, *(StandardAcl(TOPIC, "sb1", LITERAL, principal, host, operation, permission)
                      for principal, host, operation, permission in (
                          (U1, H1, READ, DENY), ("User:user2", H1, READ, DENY), (U1, H2, WRITE, DENY),
                          ("User:user2", H2, READ, DENY), (U1, H2, READ, ALLOW))))
    add(authorizer, StandardAcl(TOPIC, "sb2", LITERAL, U1, H2, READ, DENY),
        StandardAcl(GROUP, "s", PREFIXED, U1, H2, READ, DENY))
    for resource_type in (TOPIC, GROUP, TXN, CLUSTER):
        assert not by_type(authorizer, READ, resource_type)
    assert by_type(authorizer, READ, TOPIC, host=H2)


def test_by_resource_type_a_prefixed_deny_dominates_the_allows_it_covers():
    authorizer = new_authorizer()
    allow = lambda name: StandardAcl(GROUP, name, PREFIXED, U1, H1, READ, ALLOW)  # noqa: E731
    deny = lambda name: StandardAcl(GROUP, name, PREFIXED, U1, H1, READ, DENY)  # noqa: E731
    for acl, expected in ((allow("abcde"), True), (deny("abcd"), False), (allow("abc"), True), (deny("a"), False),
                          (allow("ab"), False)):
        add(authorizer, acl)
        assert by_type(authorizer, READ, GROUP) is expected, acl


def test_by_resource_type_a_wildcard_deny_dominates_everything():
    authorizer = new_authorizer()
    for acl, expected in ((StandardAcl(GROUP, "hello", PREFIXED, U1, H1, WRITE, ALLOW), True),
                          (StandardAcl(GROUP, "*", LITERAL, U1, H1, WRITE, DENY), False),
                          (StandardAcl(GROUP, "*", LITERAL, U1, H1, WRITE, ALLOW), False),
                          (StandardAcl(GROUP, "aloha", LITERAL, U1, H1, WRITE, ALLOW), False)):
        add(authorizer, acl)
        assert by_type(authorizer, WRITE, GROUP) is expected, acl


def test_by_resource_type_counts_all_but_no_implied_operation():
    authorizer = new_authorizer()
    add(authorizer, StandardAcl(TOPIC, "t", LITERAL, U1, H1, WRITE, ALLOW))
    assert not by_type(authorizer, DESCRIBE, TOPIC)
    add(authorizer, StandardAcl(TOPIC, "sb1", LITERAL, U1, H1, WRITE, DENY),
        StandardAcl(TOPIC, "sb1", LITERAL, U1, H1, ALL, ALLOW))
    assert by_type(authorizer, READ, TOPIC)
    add(authorizer, StandardAcl(TOPIC, "sb1", LITERAL, U1, H1, ALL, DENY))
    assert not by_type(authorizer, READ, TOPIC)


def test_by_resource_type_wildcard_principal_and_host():
    authorizer = new_authorizer()
    add(authorizer, StandardAcl(TOPIC, "r1", LITERAL, "User:*", "*", READ, ALLOW))
    assert by_type(authorizer, READ, TOPIC, principal="User:user2", host=H2)
    add(authorizer, StandardAcl(TOPIC, "r1", LITERAL, "User:*", "*", READ, DENY))
    assert not by_type(authorizer, READ, TOPIC, principal="User:user2", host=H2)


def test_by_resource_type_a_super_user_has_access_despite_denies():
    authorizer = new_authorizer(**{"super.users": "User:superuser1; User:superuser2"})
    for resource_type, name in ((TOPIC, "*"), (CLUSTER, "kafka-cluster"), (GROUP, "*"), (TXN, "*")):
        add(authorizer, StandardAcl(resource_type, name, LITERAL, "User:*", "*", ALL, DENY))
    for resource_type in (TOPIC, CLUSTER, GROUP, TXN):
        assert by_type(authorizer, READ, resource_type, principal="User:superuser1")
        assert not by_type(authorizer, READ, resource_type)


def test_by_resource_type_refuses_filter_codes():
    authorizer = new_authorizer()
    with pytest.raises(ValueError, match="^Must specify a non-filter resource type for authorizeByResourceType$"):
        authorizer.authorize_by_resource_type(U1, H1, READ, ResourceType.ANY)
    with pytest.raises(ValueError, match="^Unknown operation type$"):
        authorizer.authorize_by_resource_type(U1, H1, AclOperation.UNKNOWN, TOPIC)


# -- filters (ResourcePatternFilterTest, AclBindingFilterTest) ----------------------------------

def pattern(resource_type, name, pattern_type) -> StandardAcl:
    return StandardAcl(resource_type, name, pattern_type, "User:a", "*", READ, ALLOW)


@pytest.mark.parametrize("filter_args, acl_args, matches", [
    ((TOPIC, "Name", PatternType.ANY), (GROUP, "Name", LITERAL), False),
    ((ResourceType.ANY, "Name", PatternType.ANY), (GROUP, "Name", LITERAL), True),
    ((TOPIC, "Name", PREFIXED), (TOPIC, "Name", LITERAL), False),
    ((TOPIC, "Name", PatternType.ANY), (TOPIC, "Name", PREFIXED), True),
    ((TOPIC, None, LITERAL), (TOPIC, "Name", LITERAL), True),
    ((TOPIC, "Name", LITERAL), (TOPIC, "Different", LITERAL), False),
    ((TOPIC, "Name", LITERAL), (TOPIC, "*", LITERAL), False),  # LITERAL: "*" is a name like any
    ((TOPIC, "Name", PatternType.ANY), (TOPIC, "*", LITERAL), False),
    ((TOPIC, "Name", PatternType.MATCH), (TOPIC, "*", LITERAL), True),  # MATCH: what bears on "Name"
    ((TOPIC, "Name", PatternType.MATCH), (TOPIC, "Name", LITERAL), True),
    ((TOPIC, "Name", PatternType.MATCH), (TOPIC, "Na", PREFIXED), True),
    ((TOPIC, "Name", PatternType.MATCH), (TOPIC, "Name", PREFIXED), True),
    ((TOPIC, "Name", PatternType.MATCH), (TOPIC, "Names", PREFIXED), False),
    ((TOPIC, "Name", PatternType.MATCH), (TOPIC, "Na", LITERAL), False),
    ((TOPIC, "Name", PREFIXED), (TOPIC, "Na", PREFIXED), False),  # PREFIXED: the exact prefix only
    ((TOPIC, "Name", PREFIXED), (TOPIC, "Name", PREFIXED), True),
])
def test_resource_pattern_filter_matches(filter_args, acl_args, matches):
    assert ResourcePatternFilter(*filter_args).matches(pattern(*acl_args)) is matches


def test_entry_filter_compares_strings_exactly_and_codes_unless_any():
    acl = StandardAcl(TOPIC, "t", LITERAL, "User:a", "*", READ, ALLOW)
    assert AccessControlEntryFilter(None, None, AclOperation.ANY, AclPermissionType.ANY).matches(acl)
    assert AccessControlEntryFilter("User:a", "*", READ, ALLOW).matches(acl)
    assert not AccessControlEntryFilter("User:*", None, AclOperation.ANY, AclPermissionType.ANY).matches(acl)
    assert not AccessControlEntryFilter(None, "10.0.0.1", AclOperation.ANY, AclPermissionType.ANY).matches(acl)
    assert not AccessControlEntryFilter(None, None, WRITE, AclPermissionType.ANY).matches(acl)
    assert not AccessControlEntryFilter(None, None, AclOperation.ANY, DENY).matches(acl)
    unknown = AclBindingFilter(ResourcePatternFilter(TOPIC, None, PatternType.UNKNOWN), ANY_FILTER.entry_filter)
    assert unknown.is_unknown() and not ANY_FILTER.is_unknown()
