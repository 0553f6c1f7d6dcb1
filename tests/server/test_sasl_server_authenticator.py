"""SaslServerAuthenticator's state machine and its PLAIN and SCRAM servers, driven directly; the
same against real clients is tests/interop/test_sasl.py; SCRAM's exchange itself is
tests/server/test_scram_sasl_server.py."""

from __future__ import annotations

import asyncio
import dataclasses

import pytest
from scramp import ScramClient

from franz.protocol.errors import Errors
from franz.server.oauth_bearer_unsecured_validator import OAuthBearerUnsecuredValidator
from franz.server.sasl_server_authenticator import (
    BareTokenFailure,
    SaslAuthenticationError,
    PlainSaslServer,
    SaslListenerConfig,
    SaslServerAuthenticator,
)
from franz.server.delegation_token_cache import TokenInformation
from franz.server.delegation_token_manager import (
    DelegationTokenManager,
    create_hmac,
    hmac_as_base64,
    scram_credential,
)
from franz.server.socket_server_metrics import SelectorMetrics
from tests.server.test_delegation_token_manager import token_scram_exchange
from tests.server.test_oauth_bearer_unsecured_validator import NOW_MS, jws

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


def test_a_saslhandshake_v0_makes_the_next_frames_bare_tokens_until_the_exchange_completes():
    metrics = SelectorMetrics("SASL_PLAINTEXT", 0)
    authenticator = SaslServerAuthenticator(CONFIG, lambda user, kind: None, metrics)
    assert asyncio.run(authenticator.handshake(0, "PLAIN"))["error_code"] == Errors.NONE
    assert authenticator.reads_bare_tokens
    assert asyncio.run(authenticator.authenticate_bare(b"\0alice\0alice-secret")) == b""  # Java's byte[0], sent
    assert authenticator.complete and not authenticator.reads_bare_tokens and authenticator.principal_name == "alice"
    # the client cannot re-authenticate: it never sent SaslAuthenticate v1+
    assert (metrics.successful_authentications, metrics.successful_authentications_no_reauth) == (1, 1)
    versioned = SaslServerAuthenticator(CONFIG, lambda user, kind: None)
    asyncio.run(versioned.handshake(1, "PLAIN"))
    assert not versioned.reads_bare_tokens


def test_a_failed_bare_token_is_a_failed_authentication_only_for_a_saslauthenticationexception():
    """Kafka's Selector counts and logs an AuthenticationException; a SaslException (SCRAM's
    unknown user, say) is an IOException to it, closed at once and not counted."""
    metrics = SelectorMetrics("SASL_PLAINTEXT", 0)
    refused = SaslServerAuthenticator(CONFIG, lambda user, kind: None, metrics)
    asyncio.run(refused.handshake(0, "PLAIN"))
    with pytest.raises(BareTokenFailure, match="^Authentication failed: Invalid username or password$") as failure:
        asyncio.run(refused.authenticate_bare(b"\0alice\0wrong"))
    assert failure.value.failed_authentication and not failure.value.unexpected
    assert refused.refusal(METADATA, "Metadata") is not None
    unknown = SaslServerAuthenticator(CONFIG, lambda user, kind: None, metrics)
    asyncio.run(unknown.handshake(0, "SCRAM-SHA-256"))
    with pytest.raises(BareTokenFailure) as failure:
        asyncio.run(unknown.authenticate_bare(b"n,,n=bob,r=abc"))
    assert not failure.value.failed_authentication and not failure.value.unexpected
    assert metrics.failed_authentications == 1


# -- re-authentication (KIP-368) ------------------------------------------------------------------

class Clock:
    """clock_ns and wall_clock_ms for the authenticator, moved by hand."""

    def __init__(self) -> None:
        self.ns = 5_000_000_000
        self.wall_ms = 1_700_000_000_000

    def advance_ms(self, ms: int) -> None:
        self.ns += ms * 1_000_000
        self.wall_ms += ms


def authenticated(config: SaslListenerConfig, clock: Clock, metrics: SelectorMetrics | None = None,
                  token: bytes = b"\0alice\0alice-secret", mechanism: str = "PLAIN") -> SaslServerAuthenticator:
    authenticator = SaslServerAuthenticator(config, lambda user, kind: None, metrics, clock_ns=lambda: clock.ns,
                                            wall_clock_ms=lambda: clock.wall_ms)
    assert asyncio.run(authenticator.handshake(1, mechanism))["error_code"] == Errors.NONE
    answer = asyncio.run(authenticator.authenticate(token, 2))
    assert answer["error_code"] == Errors.NONE and authenticator.complete, answer
    return authenticator


def reauthenticating(max_reauth_ms: int = 2000) -> tuple[SaslServerAuthenticator, Clock, SelectorMetrics]:
    clock, metrics = Clock(), SelectorMetrics("SASL_PLAINTEXT", 0)
    config = dataclasses.replace(CONFIG, max_reauth_ms={"PLAIN": max_reauth_ms, "SCRAM-SHA-256": max_reauth_ms})
    authenticator = authenticated(config, clock, metrics)
    clock.advance_ms(1500)
    assert authenticator.maybe_begin_reauthentication(clock.ns)
    return authenticator, clock, metrics


def oauth_config(max_reauth_ms: int) -> SaslListenerConfig:
    validator = OAuthBearerUnsecuredValidator({}, lambda: NOW_MS)
    return SaslListenerConfig(("OAUTHBEARER",), {}, 0, 524288, validator, {"OAUTHBEARER": max_reauth_ms})


def oauth_token(exp_ms: int, sub: str = "alice") -> bytes:
    token = jws({"sub": sub, "iat": (min(NOW_MS, exp_ms) - 10_000) / 1000, "exp": exp_ms / 1000})
    return f"n,,\x01auth=Bearer {token}\x01\x01".encode()


@pytest.mark.parametrize("max_reauth_ms, token_lifetime_ms, lifetime_ms", [
    (0, None, 0),  # Kafka's default: the session never expires
    (-5, None, 0),  # not positive: not set
    (2000, None, 2000),
    (0, 60_000, 60_000),  # a token's exp bounds the session even with re-authentication off
    (2000, 60_000, 2000),
    (120_000, 60_000, 60_000),
    (2000, -1000, 0),  # past its exp within the allowed clock skew: expires at once
])
def test_the_session_lifetime_is_the_least_of_max_reauth_and_the_credentials(max_reauth_ms, token_lifetime_ms,
                                                                             lifetime_ms):
    """ReauthInfo.calcCompletionTimesAndReturnSessionLifetimeMs, as answered in SaslAuthenticate."""
    clock = Clock()
    clock.wall_ms = NOW_MS
    if token_lifetime_ms is None:
        config = dataclasses.replace(CONFIG, max_reauth_ms={"PLAIN": max_reauth_ms})
        authenticator = SaslServerAuthenticator(config, lambda user, kind: None, clock_ns=lambda: clock.ns,
                                                wall_clock_ms=lambda: clock.wall_ms)
        asyncio.run(authenticator.handshake(1, "PLAIN"))
        answer = asyncio.run(authenticator.authenticate(b"\0alice\0alice-secret", 2))
    else:
        config = dataclasses.replace(oauth_config(max_reauth_ms), oauth_bearer_validator=OAuthBearerUnsecuredValidator(
            {"unsecuredValidatorAllowableClockSkewMs": "5000"}, lambda: NOW_MS))
        authenticator = SaslServerAuthenticator(config, lambda user, kind: None, clock_ns=lambda: clock.ns,
                                                wall_clock_ms=lambda: clock.wall_ms)
        asyncio.run(authenticator.handshake(1, "OAUTHBEARER"))
        answer = asyncio.run(authenticator.authenticate(oauth_token(NOW_MS + token_lifetime_ms), 2))
    assert answer["error_code"] == Errors.NONE and answer["session_lifetime_ms"] == lifetime_ms, answer
    assert authenticator.complete
    expires = max_reauth_ms > 0 or token_lifetime_ms is not None
    assert authenticator.session_expiration_ns == (clock.ns + lifetime_ms * 1_000_000 if expires else None)
    assert authenticator.session_expired(clock.ns + lifetime_ms * 1_000_000 + 1) is expires
    assert not authenticator.session_expired(clock.ns + lifetime_ms * 1_000_000)


@pytest.mark.parametrize("expiry_ms, lifetime_ms", [(60_000, 60_000), (-1, 0)])
def test_a_token_authenticates_its_owner_for_the_tokens_remaining_life(expiry_ms, lifetime_ms):
    """SaslServerAuthenticator.principal: User:<owner>, token-authenticated; the token's expiry is
    the credential's (CREDENTIAL_LIFETIME_MS), one already past leaving a session that has ended.
    A re-authentication with the owner's password is no longer token-authenticated."""
    clock = Clock()
    clock.wall_ms = NOW_MS
    tokens = DelegationTokenManager("secretKey")
    tokens.update_token(TokenInformation("tokenid", ("User", "alice"), ("User", "alice"), (), 0, NOW_MS + 120_000,
                                         NOW_MS + expiry_ms))
    alice = scram_credential(1, "alice-secret")
    authenticator = SaslServerAuthenticator(CONFIG, lambda user, kind: alice if user == "alice" else None,
                                            clock_ns=lambda: clock.ns, wall_clock_ms=lambda: clock.wall_ms,
                                            token_credential_of=tokens.token_credential)
    asyncio.run(authenticator.handshake(1, "SCRAM-SHA-256"))
    answers = []

    def evaluate(token: bytes) -> bytes:
        answers.append(asyncio.run(authenticator.authenticate(token, 2)))
        return answers[-1]["auth_bytes"]

    token_scram_exchange(evaluate, "tokenid", hmac_as_base64(create_hmac("tokenid", "secretKey")), "SCRAM-SHA-256")
    assert answers[-1]["error_code"] == Errors.NONE and answers[-1]["session_lifetime_ms"] == lifetime_ms
    assert (authenticator.principal_name, authenticator.token_authenticated) == ("alice", True)
    assert authenticator.session_expired(clock.ns + lifetime_ms * 1_000_000 + 1)
    clock.advance_ms(1000)
    assert authenticator.maybe_begin_reauthentication(clock.ns)
    asyncio.run(authenticator.handshake(1, "SCRAM-SHA-256"))
    client = ScramClient(["SCRAM-SHA-256"], "alice", "alice-secret")
    client.set_server_first(evaluate(client.get_client_first().encode()).decode())
    client.set_server_final(evaluate(client.get_client_final().encode()).decode())
    assert answers[-1]["session_lifetime_ms"] == 0 and authenticator.complete
    assert (authenticator.principal_name, authenticator.token_authenticated) == ("alice", False)


def test_a_session_without_expiration_never_begins_a_reauthentication():
    """KafkaChannel.maybeBeginServerReauthentication: the handshake is then an ordinary request."""
    clock = Clock()
    authenticator = authenticated(CONFIG, clock)
    clock.advance_ms(10_000_000)
    assert not authenticator.maybe_begin_reauthentication(clock.ns) and authenticator.complete
    assert not authenticator.session_expired(clock.ns)


def test_a_reauthentication_takes_a_handshake_then_saslauthenticate_and_keeps_the_principal_until_complete():
    authenticator, clock, metrics = reauthenticating()
    assert not authenticator.complete and authenticator.reauthenticating
    assert authenticator.principal_name == "alice"  # the session's, until the new exchange completes
    assert authenticator.refusal(METADATA, "Metadata") == "Unexpected Kafka request of type Metadata during SASL " \
                                                         "handshake."
    assert authenticator.refusal(SASL_HANDSHAKE, "SaslHandshake") is None
    assert asyncio.run(authenticator.handshake(1, "PLAIN"))["error_code"] == Errors.NONE
    assert authenticator.refusal(METADATA, "Metadata") == ("Unexpected Kafka request of type Metadata during SASL "
                                                           "authentication.")
    assert authenticator.principal_name == "alice" and not authenticator.complete
    clock.advance_ms(3)
    answer = asyncio.run(authenticator.authenticate(b"\0alice\0alice-secret", 2))
    assert answer == {"error_code": Errors.NONE, "error_message": None, "auth_bytes": b"", "session_lifetime_ms": 2000}
    assert authenticator.complete and not authenticator.reauthenticating
    assert authenticator.session_expiration_ns == clock.ns + 2_000_000_000
    assert authenticator.reauthentication_latency_ms == 3
    assert (metrics.successful_authentications, metrics.successful_reauthentications,
            metrics.failed_authentications, metrics.failed_reauthentications) == (1, 1, 0, 0)
    # at most one re-authentication a second; the handshake is then an ordinary request
    clock.advance_ms(996)  # 999 ms after the last one began
    assert not authenticator.maybe_begin_reauthentication(clock.ns) and authenticator.complete
    clock.advance_ms(1)
    assert authenticator.maybe_begin_reauthentication(clock.ns)


def test_a_reauthentication_as_another_principal_fails_with_kafkas_message():
    authenticator, clock, metrics = reauthenticating()
    plain = dataclasses.replace(authenticator.config, plain_users={"alice": "alice-secret", "bob": "bob-secret"})
    authenticator.config = plain
    asyncio.run(authenticator.handshake(1, "PLAIN"))
    answer = asyncio.run(authenticator.authenticate(b"\0bob\0bob-secret", 2))
    assert (answer["error_code"], answer["error_message"]) == (
        Errors.SASL_AUTHENTICATION_FAILED, "Cannot change principals during re-authentication from User.alice: "
                                           "User.bob")
    assert not authenticator.complete and authenticator.principal_name == "alice"
    assert authenticator.refusal(METADATA, "Metadata") is not None
    assert (metrics.successful_authentications, metrics.successful_reauthentications,
            metrics.failed_authentications, metrics.failed_reauthentications) == (1, 0, 0, 1)


def test_a_reauthentication_with_another_mechanism_is_answered_then_fails_unanswered():
    """ReauthInfo.saslMechanismUnchanged: the handshake is answered NONE; whatever comes next fails
    the connection (REAUTH_BAD_MECHANISM), counted as a failed re-authentication."""
    authenticator, clock, metrics = reauthenticating()
    assert asyncio.run(authenticator.handshake(1, "SCRAM-SHA-256")) == {"error_code": Errors.NONE,
                                                                        "mechanisms": ["PLAIN", "SCRAM-SHA-256"]}
    assert not authenticator.handshaken
    message = ("SASL mechanism 'SCRAM-SHA-256' requested by client is not supported for re-authentication of "
               "mechanism 'PLAIN'")
    assert authenticator.refusal(SASL_AUTHENTICATE, "SaslAuthenticate") == message
    asyncio.run(authenticator.fail())
    assert (metrics.failed_authentications, metrics.failed_reauthentications) == (0, 1)
    # one the listener does not enable: UNSUPPORTED_SASL_MECHANISM, as at first
    other, _, metrics = reauthenticating()
    assert asyncio.run(other.handshake(1, "GSSAPI"))["error_code"] == Errors.UNSUPPORTED_SASL_MECHANISM
    assert (metrics.failed_authentications, metrics.failed_reauthentications) == (0, 1)


def test_a_reauthentication_with_bad_credentials_is_told_as_a_reauthentication():
    clock, metrics = Clock(), SelectorMetrics("SASL_PLAINTEXT", 0)
    clock.wall_ms = NOW_MS
    authenticator = authenticated(oauth_config(0), clock, metrics, oauth_token(NOW_MS + 60_000), "OAUTHBEARER")
    clock.advance_ms(30_000)
    assert authenticator.maybe_begin_reauthentication(clock.ns)
    asyncio.run(authenticator.handshake(1, "OAUTHBEARER"))
    answer = asyncio.run(authenticator.authenticate(b"n,,\x01\x01", 2))
    assert answer["error_message"] == ("Authentication failed during re-authentication due to invalid credentials "
                                       "with SASL mechanism OAUTHBEARER")
    assert (metrics.successful_authentications, metrics.failed_reauthentications) == (1, 1)


def test_an_oauthbearer_reauthentication_with_a_new_token_extends_the_session():
    clock = Clock()
    clock.wall_ms = NOW_MS
    authenticator = authenticated(oauth_config(0), clock, None, oauth_token(NOW_MS + 60_000), "OAUTHBEARER")
    clock.advance_ms(50_000)
    assert authenticator.maybe_begin_reauthentication(clock.ns)
    asyncio.run(authenticator.handshake(1, "OAUTHBEARER"))
    answer = asyncio.run(authenticator.authenticate(oauth_token(NOW_MS + 120_000), 2))
    assert answer["session_lifetime_ms"] == 70_000 and authenticator.complete
    assert not authenticator.session_expired(clock.ns + 69_000_000_000)
