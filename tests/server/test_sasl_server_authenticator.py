"""SaslServerAuthenticator's state machine and its PLAIN and SCRAM servers, driven directly; the
same against real clients is tests/interop/test_sasl.py; SCRAM's exchange itself is
tests/server/test_scram_sasl_server.py."""

from __future__ import annotations

import asyncio

import pytest

from franz.protocol.errors import Errors
from franz.server.sasl_server_authenticator import (
    SaslAuthenticationError,
    PlainSaslServer,
    SaslListenerConfig,
    SaslServerAuthenticator,
)
from franz.server.socket_server_metrics import SelectorMetrics

API_VERSIONS, METADATA, SASL_HANDSHAKE, SASL_AUTHENTICATE = 18, 3, 17, 36
CONFIG = SaslListenerConfig(("PLAIN", "SCRAM-SHA-256"), {"alice": "alice-secret"}, 0, 524288)


@pytest.mark.parametrize("token, message", [
    (b"\0alice\0wrong", "Authentication failed: Invalid username or password"),
    (b"\0bob\0alice-secret", "Authentication failed: Invalid username or password"),
    (b"alice\0alice-secret", "Invalid SASL/PLAIN response: expected 3 tokens, got 2"),
    (b"a\0b\0c\0d", "Invalid SASL/PLAIN response: expected 3 tokens, got 4"),
    (b"\0\0alice-secret", "Authentication failed: username not specified"),
    (b"\0alice\0", "Authentication failed: password not specified"),
    (b"admin\0alice\0alice-secret", "Authentication failed: Client requested an authorization id that is "
                                    "different from username"),
])
def test_plain_refuses_with_kafkas_messages(token, message):
    server = PlainSaslServer({"alice": "alice-secret"})
    with pytest.raises(SaslAuthenticationError, match=f"^{message}$"):
        server.evaluate(token)
    assert server.authorization_id is None


def test_plain_accepts_the_users_password_with_or_without_its_own_authorization_id():
    for token in (b"\0alice\0alice-secret", b"alice\0alice\0alice-secret"):
        server = PlainSaslServer({"alice": "alice-secret"})
        assert server.evaluate(token) == b"" and server.authorization_id == "alice"


def test_the_authenticator_allows_apiversions_then_a_handshake_then_only_saslauthenticate():
    authenticator = SaslServerAuthenticator(CONFIG, lambda user, kind: None)
    assert authenticator.refusal(API_VERSIONS, "ApiVersions") is None
    assert authenticator.refusal(API_VERSIONS, "ApiVersions") is None  # until one is answered without error
    authenticator.api_versions_answered()
    assert authenticator.refusal(API_VERSIONS, "ApiVersions") == ("Unexpected Kafka request of type ApiVersions "
                                                                  "during SASL handshake.")
    assert authenticator.refusal(METADATA, "Metadata") == "Unexpected Kafka request of type Metadata during SASL " \
                                                         "handshake."
    assert authenticator.refusal(SASL_HANDSHAKE, "SaslHandshake") is None
    assert asyncio.run(authenticator.handshake(1, "PLAIN")) == {"error_code": Errors.NONE,
                                                                "mechanisms": ["PLAIN", "SCRAM-SHA-256"]}
    assert authenticator.refusal(SASL_HANDSHAKE, "SaslHandshake") == ("Unexpected Kafka request of type "
                                                                      "SaslHandshake during SASL authentication.")
    assert authenticator.refusal(SASL_AUTHENTICATE, "SaslAuthenticate") is None
    answer = asyncio.run(authenticator.authenticate(b"\0alice\0alice-secret"))
    assert answer["error_code"] == Errors.NONE and authenticator.complete
    assert authenticator.principal_name == "alice"


def test_a_failed_step_leaves_the_authenticator_failed():
    authenticator = SaslServerAuthenticator(CONFIG, lambda user, kind: None)
    assert asyncio.run(authenticator.handshake(1, "SCRAM-SHA-512"))["error_code"] == Errors.UNSUPPORTED_SASL_MECHANISM
    assert authenticator.refusal(SASL_AUTHENTICATE, "SaslAuthenticate") is not None
    refused = SaslServerAuthenticator(CONFIG, lambda user, kind: None)
    asyncio.run(refused.handshake(1, "SCRAM-SHA-256"))
    answer = asyncio.run(refused.authenticate(b"n,,n=bob,r=abc"))  # no such user: a SaslException, told generically
    assert answer["error_code"] == Errors.SASL_AUTHENTICATION_FAILED and not refused.complete
    assert answer["error_message"] == ("Authentication failed during authentication due to invalid credentials "
                                       "with SASL mechanism SCRAM-SHA-256")
    assert refused.refusal(SASL_AUTHENTICATE, "SaslAuthenticate") is not None


def test_the_listener_counts_each_connections_authentication_once():
    """Selector's successful-authentication(-no-reauth) and failed-authentication: a client that
    sent SaslAuthenticate v0 cannot re-authenticate (KIP-368)."""
    metrics = SelectorMetrics("SASL_PLAINTEXT", 0)
    for version in (0, 1, 2):
        authenticator = SaslServerAuthenticator(CONFIG, lambda user, kind: None, metrics)
        asyncio.run(authenticator.handshake(1, "PLAIN"))
        assert asyncio.run(authenticator.authenticate(b"\0alice\0alice-secret", version))["error_code"] == 0
    refused = SaslServerAuthenticator(CONFIG, lambda user, kind: None, metrics)
    asyncio.run(refused.handshake(1, "PLAIN"))
    asyncio.run(refused.authenticate(b"\0alice\0wrong", 2))
    asyncio.run(refused.fail())  # a request after the failure fails it again: counted once
    assert (metrics.successful_authentications, metrics.successful_authentications_no_reauth,
            metrics.failed_authentications) == (3, 1, 1)
