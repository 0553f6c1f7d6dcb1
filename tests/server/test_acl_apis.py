"""AclApis against a running broker: no authorizer, so every ACL request is SECURITY_DISABLED."""

from __future__ import annotations

from franz.protocol.codec import encode_request
from franz.protocol.errors import Errors
from franz.server.acl_apis import NO_AUTHORIZER
from tests.support.raw_client import RawClient

DESCRIBE_ACLS, CREATE_ACLS, DELETE_ACLS = 29, 30, 31
TOPIC, LITERAL, READ, ALLOW, ANY = 2, 3, 3, 3, 1


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
