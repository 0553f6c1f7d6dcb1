"""DelegationTokenApis against a running broker: over PLAINTEXT every token request is
DELEGATION_TOKEN_REQUEST_NOT_ALLOWED, as Kafka answers it."""

from __future__ import annotations

from franz.protocol.errors import Errors
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
