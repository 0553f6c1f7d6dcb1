"""DelegationTokenApis: against a running broker, over PLAINTEXT every token request is
DELEGATION_TOKEN_REQUEST_NOT_ALLOWED, as Kafka answers it; driven with SASL sessions, the order of
KafkaApis' checks, the controller's answers, and DescribeDelegationToken's filter
(DelegationTokenEndToEndAuthorizationWithOwnerTest's describe cases). The Java client's own
round trip is tests/interop/test_delegation_tokens.py."""

from __future__ import annotations

import asyncio
from types import SimpleNamespace

from franz.protocol.errors import Errors
from franz.server.auth_helper import AuthHelper
from franz.server.delegation_token_apis import DelegationTokenApis
from franz.server.delegation_token_control_manager import DELEGATION_TOKENS_FILE, DelegationTokenControlManager
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
from tests.server.test_delegation_token_control_manager import write_json
from tests.support.raw_client import RawClient

CREATE, RENEW, EXPIRE, DESCRIBE = 38, 39, 40, 41
NOT_ALLOWED = Errors.DELEGATION_TOKEN_REQUEST_NOT_ALLOWED


def test_token_requests_over_plaintext_are_not_allowed_in_every_version(broker):
    renewer = {"principal_type": "User", "principal_name": "bob"}
    with RawClient(broker.bootstrap) as client:
        for version in (1, 2, 3):
            created = client.request(CREATE, version, {"renewers": [renewer], "max_lifetime_ms": -1,
                                                       "owner_principal_type": None, "owner_principal_name": None})
            assert (created["error_code"], created["principal_type"], created["principal_name"]) == (
                NOT_ALLOWED, "User", "ANONYMOUS")
            assert (created["issue_timestamp_ms"], created["token_id"], created["hmac"]) == (-1, "", b"")
            described = client.request(DESCRIBE, version, {"owners": None})
            assert (described["error_code"], described["tokens"]) == (NOT_ALLOWED, [])
        on_behalf = client.request(CREATE, 3, {"renewers": [], "max_lifetime_ms": -1,
                                               "owner_principal_type": "User", "owner_principal_name": "alice"})
        assert (on_behalf["principal_name"], on_behalf["token_requester_principal_name"]) == ("alice", "ANONYMOUS")
        # KafkaPrincipal(null, "bob") fails before the listener is checked: Kafka's error answer
        no_type = client.request(CREATE, 3, {"renewers": [], "max_lifetime_ms": -1,
                                             "owner_principal_type": None, "owner_principal_name": "bob"})
        assert (no_type["error_code"], no_type["principal_type"], no_type["principal_name"],
                no_type["token_requester_principal_name"], no_type["issue_timestamp_ms"]) == (
            Errors.UNKNOWN_SERVER_ERROR, "User", "ANONYMOUS", "ANONYMOUS", -1)
        assert client.request(DESCRIBE, 3, {"owners": None})["error_code"] == NOT_ALLOWED  # still served
        for version in (1, 2):
            renewed = client.request(RENEW, version, {"hmac": b"\x01\x02", "renew_period_ms": 1000})
            expired = client.request(EXPIRE, version, {"hmac": b"\x01\x02", "expiry_time_period_ms": -1})
            assert [(a["error_code"], a["expiry_timestamp_ms"]) for a in (renewed, expired)] == [(NOT_ALLOWED, -1)] * 2


# -- the handlers, driven with SASL sessions ----------------------------------------------------

SECRET_KEY = "secretKey"
NO_OWNER = {"owner_principal_type": None, "owner_principal_name": None}


def _apis(tmp_path, authorizer=None, secret_key: str | None = SECRET_KEY) -> DelegationTokenApis:
    tokens = DelegationTokenControlManager(tmp_path / DELEGATION_TOKENS_FILE, write_json,
                                           DelegationTokenManager(secret_key), 7 * 24 * 3_600_000, 24 * 3_600_000)
    apis = DelegationTokenApis(tokens)
    apis.register(SimpleNamespace(auth=AuthHelper(authorizer), register=lambda name, handler: None))
    return apis


def _request(name: str, token_authenticated: bool = False, api_key: int = CREATE):
    authenticator = SimpleNamespace(principal_name=name, token_authenticated=token_authenticated)
    return SimpleNamespace(session=Session(None, authenticator, "SASL_PLAINTEXT"), client_address=("127.0.0.1", 1),
                           api_key=api_key)


def _create(apis, request, renewers=(), owner=None) -> dict:
    body = {"renewers": [{"principal_type": kind, "principal_name": name} for kind, name in renewers],
            "max_lifetime_ms": -1, "owner_principal_type": "User" if owner else None, "owner_principal_name": owner}
    return asyncio.run(apis.handle_create_token(request, body))


def test_a_token_authenticated_connection_gets_no_token_api(tmp_path):
    """allowTokenRequests: even with tokens enabled and the owner's own token."""
    apis = _apis(tmp_path)
    token_hmac = _create(apis, _request("alice"))["hmac"]
    as_token = _request("alice", token_authenticated=True)
    created = _create(apis, as_token)
    assert (created["error_code"], created["issue_timestamp_ms"], created["token_id"]) == (NOT_ALLOWED, -1, "")
    for handler, body in ((apis.handle_renew_token, {"hmac": token_hmac, "renew_period_ms": -1}),
                          (apis.handle_expire_token, {"hmac": token_hmac, "expiry_time_period_ms": -1})):
        assert asyncio.run(handler(as_token, body)) == {"error_code": NOT_ALLOWED, "expiry_timestamp_ms": -1,
                                                        "throttle_time_ms": 0}
    assert asyncio.run(apis.handle_describe_tokens(as_token, {"owners": None}))["error_code"] == NOT_ALLOWED
    assert len(apis.tokens.token_manager.token_cache.tokens()) == 1


def test_the_broker_checks_come_before_the_controllers(tmp_path):
    """KafkaApis.handleCreateTokenRequest: the owner's CREATE_TOKENS, then the renewers' type, both
    answered with the broker's -1 times; a broker without a secret key answers with the
    controller's defaults (0)."""
    authorizer = StandardAuthorizer()
    authorizer.configure({"node.id": "1"})
    apis = _apis(tmp_path, authorizer)
    group = [("Group", "renewers")]
    refused = _create(apis, _request("alice"), group, owner="bob")
    assert (refused["error_code"], refused["max_timestamp_ms"]) == (Errors.DELEGATION_TOKEN_AUTHORIZATION_FAILED, -1)
    refused = _create(apis, _request("alice"), group)
    assert (refused["error_code"], refused["max_timestamp_ms"]) == (Errors.INVALID_PRINCIPAL_TYPE, -1)
    disabled = _apis(tmp_path / "disabled", secret_key=None)
    answer = _create(disabled, _request("alice"))
    assert (answer["error_code"], answer["issue_timestamp_ms"], answer["max_timestamp_ms"], answer["hmac"]) == (
        Errors.DELEGATION_TOKEN_AUTH_DISABLED, 0, 0, b"")
    assert asyncio.run(disabled.handle_renew_token(_request("alice"), {"hmac": b"x", "renew_period_ms": -1})) == {
        "error_code": Errors.DELEGATION_TOKEN_AUTH_DISABLED, "expiry_timestamp_ms": 0, "throttle_time_ms": 0}
    assert asyncio.run(disabled.handle_describe_tokens(_request("alice"), {"owners": None})) == {
        "error_code": Errors.DELEGATION_TOKEN_AUTH_DISABLED, "tokens": [], "throttle_time_ms": 0}


def test_describing_lists_a_token_to_its_owner_renewers_and_those_the_acls_let(tmp_path):
    """handleDescribeTokensRequest with DelegationTokenManager.filterToken against the
    StandardAuthorizer: DESCRIBE_TOKENS on User:alice shows carol alice's tokens, DESCRIBE on a
    token that token; an empty owner list shows nothing."""
    authorizer = StandardAuthorizer()
    authorizer.configure({"node.id": "1"})
    apis = _apis(tmp_path, authorizer)
    created = _create(apis, _request("alice"), [("User", "bob")])
    other = _create(apis, _request("dave"))

    def described(name: str, owners=None) -> list[str]:
        answer = asyncio.run(apis.handle_describe_tokens(_request(name, api_key=DESCRIBE), {"owners": owners}))
        assert answer["error_code"] == Errors.NONE
        return [token["token_id"] for token in answer["tokens"]]

    [token] = asyncio.run(apis.handle_describe_tokens(_request("bob"), {"owners": None}))["tokens"]
    assert token == {"principal_type": "User", "principal_name": "alice", "token_requester_principal_type": "User",
                     "token_requester_principal_name": "alice", "issue_timestamp": created["issue_timestamp_ms"],
                     "expiry_timestamp": created["expiry_timestamp_ms"], "max_timestamp": created["max_timestamp_ms"],
                     "token_id": created["token_id"], "hmac": created["hmac"],
                     "renewers": [{"principal_type": "User", "principal_name": "bob"}]}
    assert described("carol") == []
    authorizer.add_acl("carol-alice", StandardAcl(ResourceType.USER, "User:alice", PatternType.LITERAL, "User:carol",
                                                  "*", AclOperation.DESCRIBE_TOKENS, AclPermissionType.ALLOW))
    authorizer.add_acl("carol-dave", StandardAcl(ResourceType.DELEGATION_TOKEN, other["token_id"],
                                                 PatternType.LITERAL, "User:carol", "*", AclOperation.DESCRIBE,
                                                 AclPermissionType.ALLOW))
    assert sorted(described("carol")) == sorted([created["token_id"], other["token_id"]])
    assert described("carol", [{"principal_type": "User", "principal_name": "dave"}]) == [other["token_id"]]
    assert described("carol", []) == []


def test_renewing_and_expiring_go_through_to_the_controller(tmp_path):
    apis = _apis(tmp_path)
    created = _create(apis, _request("alice"), [("User", "bob")])
    renewed = asyncio.run(apis.handle_renew_token(_request("bob"), {"hmac": created["hmac"],
                                                                   "renew_period_ms": 1000}))
    assert renewed["error_code"] == Errors.NONE and renewed["expiry_timestamp_ms"] < created["expiry_timestamp_ms"]
    mismatch = asyncio.run(apis.handle_expire_token(_request("carol"), {"hmac": created["hmac"],
                                                                       "expiry_time_period_ms": -1}))
    assert mismatch == {"error_code": Errors.DELEGATION_TOKEN_OWNER_MISMATCH, "expiry_timestamp_ms": 0,
                        "throttle_time_ms": 0}
    expired = asyncio.run(apis.handle_expire_token(_request("alice"), {"hmac": created["hmac"],
                                                                      "expiry_time_period_ms": -1}))
    assert expired["error_code"] == Errors.NONE
    assert asyncio.run(apis.handle_describe_tokens(_request("alice"), {"owners": None}))["tokens"] == []
