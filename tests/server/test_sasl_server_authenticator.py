"""SaslServerAuthenticator's state machine and its PLAIN and SCRAM servers, driven directly; the
same against real clients is tests/interop/test_sasl.py."""

from __future__ import annotations

import asyncio

import pytest
from scramp import ScramClient, ScramMechanism

from franz.protocol.errors import Errors
from franz.server.sasl_server_authenticator import (
    AuthenticationFailed,
    PlainSaslServer,
    SaslListenerConfig,
    SaslServerAuthenticator,
    ScramSaslServer,
)

API_VERSIONS, METADATA, SASL_HANDSHAKE, SASL_AUTHENTICATE = 18, 3, 17, 36
CONFIG = SaslListenerConfig(("PLAIN", "SCRAM-SHA-256"), {"alice": "alice-secret"}, 0, 524288)


def _credentials(mechanism: str, user: str, password: str, iterations: int = 4096) -> dict:
    salt, stored_key, server_key, _ = ScramMechanism(mechanism).make_auth_info(password, iteration_count=iterations)
    kind = {"SCRAM-SHA-256": 1, "SCRAM-SHA-512": 2}[mechanism]
    return {(user, kind): {"salt": salt, "stored_key": stored_key, "server_key": server_key,
                           "iterations": iterations}}


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
    with pytest.raises(AuthenticationFailed, match=f"^{message}$"):
        server.evaluate(token)
    assert server.authorization_id is None


def test_plain_accepts_the_users_password_with_or_without_its_own_authorization_id():
    for token in (b"\0alice\0alice-secret", b"alice\0alice\0alice-secret"):
        server = PlainSaslServer({"alice": "alice-secret"})
        assert server.evaluate(token) == b"" and server.authorization_id == "alice"


@pytest.mark.parametrize("mechanism", ["SCRAM-SHA-256", "SCRAM-SHA-512"])
def test_scram_completes_with_the_stored_credential_and_proves_the_server(mechanism):
    credentials = _credentials(mechanism, "bob", "bob-secret")
    server = ScramSaslServer(mechanism, lambda user, kind: credentials.get((user, kind)))
    client = ScramClient([mechanism], "bob", "bob-secret")
    client.set_server_first(server.evaluate(client.get_client_first().encode()).decode())
    final = server.evaluate(client.get_client_final().encode())
    client.set_server_final(final.decode())  # raises unless the server signature is right
    assert server.authorization_id == "bob"


@pytest.mark.parametrize("user, password", [("bob", "wrong"), ("nobody", "bob-secret")])
def test_scram_refuses_a_wrong_proof_or_an_unknown_user_with_one_message(user, password):
    credentials = _credentials("SCRAM-SHA-256", "bob", "bob-secret")
    server = ScramSaslServer("SCRAM-SHA-256", lambda name, kind: credentials.get((name, kind)))
    client = ScramClient(["SCRAM-SHA-256"], user, password)
    message = ("^Authentication failed during authentication due to invalid credentials with SASL mechanism "
               "SCRAM-SHA-256$")
    with pytest.raises(AuthenticationFailed, match=message):
        client.set_server_first(server.evaluate(client.get_client_first().encode()).decode())
        server.evaluate(client.get_client_final().encode())
    assert server.authorization_id is None


def test_scram_refuses_garbage_and_a_third_token():
    credentials = _credentials("SCRAM-SHA-256", "bob", "bob-secret")
    for tokens in ([b"\xff\xfe"], [b"not a scram message"]):
        server = ScramSaslServer("SCRAM-SHA-256", lambda name, kind: credentials.get((name, kind)))
        with pytest.raises(AuthenticationFailed):
            for token in tokens:
                server.evaluate(token)


def test_the_authenticator_allows_apiversions_then_a_handshake_then_only_saslauthenticate():
    authenticator = SaslServerAuthenticator(CONFIG, lambda user, kind: None)
    assert authenticator.refusal(API_VERSIONS, "ApiVersions") is None
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
    answer = asyncio.run(refused.authenticate(b"n,,n=bob,r=abc"))  # no such user
    assert answer["error_code"] == Errors.SASL_AUTHENTICATION_FAILED and not refused.complete
    assert refused.refusal(SASL_AUTHENTICATE, "SaslAuthenticate") is not None
