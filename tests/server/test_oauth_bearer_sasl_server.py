"""OAUTHBEARER's server and the client message it reads, with the cases of Kafka's
OAuthBearerClientInitialResponseTest and OAuthBearerSaslServerTest, then the exchange as
SaslServerAuthenticator runs it (error challenge, %x01, failure; counts)."""

from __future__ import annotations

import asyncio

import pytest

from franz.protocol.errors import Errors
from franz.server.oauth_bearer_sasl_server import (
    OAuthBearerClientInitialResponse,
    OAuthBearerSaslServer,
    SaslServerFault,
)
from franz.server.oauth_bearer_unsecured_validator import OAuthBearerUnsecuredValidator
from franz.server.sasl_server_authenticator import SaslAuthenticationError, SaslListenerConfig, SaslServerAuthenticator
from franz.server.scram_sasl_server import SaslError
from franz.server.socket_server_metrics import SelectorMetrics
from tests.server.test_oauth_bearer_unsecured_validator import NOW_MS, jws

USER = "user"
TOKEN = jws({"sub": USER, "iat": NOW_MS / 1000, "exp": NOW_MS / 1000 + 3600})


def message(token: str = TOKEN, authorization_id: str | None = None, **extensions: str) -> bytes:
    """OAuthBearerClientInitialResponse.toBytes."""
    pairs = "".join(f"\x01{key}={value}" for key, value in extensions.items())
    return f"n,{'a=' + authorization_id if authorization_id else ''},\x01auth=Bearer {token}{pairs}\x01\x01".encode()


def server(**options: str) -> OAuthBearerSaslServer:
    return OAuthBearerSaslServer(OAuthBearerUnsecuredValidator(options, lambda: NOW_MS))


# -- OAuthBearerClientInitialResponseTest ------------------------------------------------------

def test_token():
    response = OAuthBearerClientInitialResponse(b"n,,\x01auth=Bearer 123.345.567\x01\x01")
    assert (response.token_value, response.authorization_id, response.extensions) == ("123.345.567", "", {})


def test_authorization_id():
    response = OAuthBearerClientInitialResponse(b"n,a=myuser,\x01auth=Bearer 345\x01\x01")
    assert (response.token_value, response.authorization_id) == ("345", "myuser")


def test_extensions():
    response = OAuthBearerClientInitialResponse(b"n,,\x01propA=valueA1, valueA2\x01auth=Bearer 567\x01propB=valueB"
                                                b"\x01\x01")
    assert response.token_value == "567" and response.authorization_id == ""
    assert response.extensions == {"propA": "valueA1, valueA2", "propB": "valueB"}
    built = OAuthBearerClientInitialResponse(b"n,,\x01auth=Bearer 123.345.567\x01nineteen=42\x01\x01")
    assert built.extensions == {"nineteen": "42"}


@pytest.mark.parametrize("token", ["vF9dft4qmTc2Nvb3RlckBhbHRhdmlzdGEuY29tCg",  # testRfc7688Example
                                   "vF-9.df_t4qm~Tc2Nvb3RlckBhbHR+hdmlzdGEuY29/tCg=="])  # RFC 6750's characters
def test_rfc_7628_example(token):
    response = OAuthBearerClientInitialResponse(
        f"n,a=user@example.com,\x01host=server.example.com\x01port=143\x01auth=Bearer {token}\x01\x01".encode())
    assert (response.token_value, response.authorization_id) == (token, "user@example.com")
    assert response.extensions == {"host": "server.example.com", "port": "143"}
    bare = OAuthBearerClientInitialResponse(f"n,a=user@example.com,\x01auth=Bearer {token}\x01\x01".encode())
    assert bare.extensions == {}


@pytest.mark.parametrize("response, words", [
    (b"n,,\x01auth=Bearer 123\x01", "Invalid OAUTHBEARER client first message"),  # one closing separator
    (b"y,,\x01auth=Bearer 123\x01\x01", "Invalid OAUTHBEARER client first message"),  # only the "n" GS2 flag
    (b"n,,\x0119=42\x01auth=Bearer 123\x01\x01", "Invalid OAUTHBEARER client first message"),  # keys are letters
    (b"n,,\x01a=\xc3\xa9\x01auth=Bearer 1\x01\x01", "Invalid OAUTHBEARER client first message"),  # ASCII values
    (b"n,,\x01\x01", "Invalid OAUTHBEARER client first message: 'auth' not specified"),
    (b"n,,\x01host=h\x01\x01", "Invalid OAUTHBEARER client first message: 'auth' not specified"),
    (b"n,,\x01auth=Bearer\x01\x01", "Invalid OAUTHBEARER client first message: invalid 'auth' format"),
    (b"n,,\x01auth=Bearer a b\x01\x01", "Invalid OAUTHBEARER client first message: invalid 'auth' format"),
    (b"n,,\x01auth=Bearer a=b\x01\x01", "Invalid OAUTHBEARER client first message: invalid 'auth' format"),
])
def test_a_malformed_message_is_a_sasl_exception(response, words):
    with pytest.raises(SaslError, match=f"^{words}$"):
        OAuthBearerClientInitialResponse(response)


def test_a_scheme_other_than_bearer_fails_as_kafka_does_on_an_unchecked_exception():
    assert OAuthBearerClientInitialResponse(b"n,,\x01auth=bEaReR  t0k\x01\x01").token_value == "t0k"
    with pytest.raises(SaslServerFault, match="^No group with name <scheme>$"):
        OAuthBearerClientInitialResponse(b"n,,\x01auth=Basic t0k\x01\x01")


# -- OAuthBearerSaslServerTest -----------------------------------------------------------------

def test_no_authorization_id_specified():
    sasl = server()
    assert sasl.evaluate(message()) == b"" and sasl.authorization_id == USER


def test_authorization_id_equals_authentication_id():
    sasl = server()
    assert sasl.evaluate(message(authorization_id=USER)) == b"" and sasl.authorization_id == USER


def test_authorization_id_not_equals_authentication_id():
    sasl = server()
    with pytest.raises(SaslAuthenticationError, match=r"^Authentication failed: Client requested an authorization id "
                                                      r"\(userx\) that is different from the token's principal name "
                                                      r"\(user\)$"):
        sasl.evaluate(message(authorization_id=USER + "x"))
    assert sasl.authorization_id is None


def test_every_extension_is_accepted():
    sasl = server()
    assert sasl.evaluate(message(firstKey="value1", secondKey="value2")) == b""
    assert sasl.extensions == {"firstKey": "value1", "secondKey": "value2"}


def test_illegal_token():
    sasl = server()
    assert sasl.evaluate(message(TOKEN + "AB")) == b'{"status":"invalid_token"}'
    assert sasl.authorization_id is None


def test_the_clients_x01_after_an_error_fails_with_the_error():
    sasl = server(unsecuredValidatorRequiredScope="kafka admin")
    assert sasl.evaluate(message()) == b'{"status":"insufficient_scope", "scope":"[kafka, admin]"}'
    with pytest.raises(SaslAuthenticationError) as refused:
        sasl.evaluate(b"\x01")
    assert str(refused.value) == '{"status":"insufficient_scope", "scope":"[kafka, admin]"}'
    fresh = server()  # without an error before it, %x01 is a malformed message
    with pytest.raises(SaslError, match="^Invalid OAUTHBEARER client first message$"):
        fresh.evaluate(b"\x01")


def test_a_token_header_without_alg_fails_as_kafka_does_on_an_unchecked_exception():
    with pytest.raises(SaslServerFault, match="^JWS header must have an Algorithm value$"):
        server().evaluate(message(jws({"sub": USER, "exp": NOW_MS / 1000 + 1}, "{}")))


# -- in SaslServerAuthenticator ----------------------------------------------------------------

def authenticator(metrics: SelectorMetrics, **options: str) -> SaslServerAuthenticator:
    config = SaslListenerConfig(("PLAIN", "OAUTHBEARER"), {}, 0, 524288,
                                OAuthBearerUnsecuredValidator(options, lambda: NOW_MS))
    authenticating = SaslServerAuthenticator(config, lambda user, kind: None, metrics, wall_clock_ms=lambda: NOW_MS)
    assert asyncio.run(authenticating.handshake(1, "OAUTHBEARER"))["error_code"] == Errors.NONE
    return authenticating


def test_the_authenticator_completes_with_the_tokens_principal_or_fails_after_the_error_challenge():
    metrics = SelectorMetrics("SASL_PLAINTEXT", 0)
    accepted = authenticator(metrics)
    # the token's remaining lifetime, even with connections.max.reauth.ms=0 (Kafka's
    # testSessionExpiresAtTokenExpiryDespiteNoReauthIsSet)
    assert asyncio.run(accepted.authenticate(message(), 2)) == {
        "error_code": Errors.NONE, "error_message": None, "auth_bytes": b"", "session_lifetime_ms": 3_600_000}
    assert accepted.complete and accepted.principal_name == USER
    expired = authenticator(metrics)
    challenge = asyncio.run(expired.authenticate(message(jws({"sub": USER, "exp": NOW_MS / 1000 - 1})), 2))
    assert (challenge["error_code"], challenge["auth_bytes"]) == (Errors.NONE, b'{"status":"invalid_token"}')
    assert not expired.complete and metrics.failed_authentications == 0
    refused = asyncio.run(expired.authenticate(b"\x01", 2))
    assert (refused["error_code"], refused["error_message"]) == (Errors.SASL_AUTHENTICATION_FAILED,
                                                                 '{"status":"invalid_token"}')
    malformed = authenticator(metrics)
    assert asyncio.run(malformed.authenticate(b"n,,\x01\x01", 2))["error_message"] == (
        "Authentication failed during authentication due to invalid credentials with SASL mechanism OAUTHBEARER")
    assert (metrics.successful_authentications, metrics.failed_authentications) == (1, 2)


def test_an_unchecked_failure_closes_the_connection_unanswered_and_uncounted():
    metrics = SelectorMetrics("SASL_PLAINTEXT", 0)
    faulty = authenticator(metrics)
    assert asyncio.run(faulty.authenticate(b"n,,\x01auth=Basic abc\x01\x01", 2)) is None
    assert faulty.fault == "No group with name <scheme>"
    assert faulty.refusal(36, "SaslAuthenticate") == "Authentication failed before this request"
    assert (metrics.successful_authentications, metrics.failed_authentications) == (0, 0)
