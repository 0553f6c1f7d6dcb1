"""SASL on SASL_PLAINTEXT listeners: Kafka's SaslServerAuthenticator with its PLAIN and SCRAM
servers (PlainSaslServer with PlainServerCallbackHandler, ScramSaslServer).

A connection of a SASL listener starts unauthenticated. As Kafka's authenticator allows, it may
send one ApiVersions, then one SaslHandshake naming a mechanism the listener enables, then
SaslAuthenticate requests carrying the mechanism's tokens until the mechanism completes; the
connection's principal is then User:<authorization id>, and every API is served. Any other
request before that closes the connection ("Unexpected Kafka request of type ... during SASL
handshake/authentication"), and so does a frame over `sasl.server.max.receive.size`. A failed
authentication is answered (SASL_AUTHENTICATION_FAILED with Kafka's message, or
UNSUPPORTED_SASL_MECHANISM with the enabled mechanisms) after
`connection.failed.authentication.delay.ms`, then the connection is closed.

PLAIN checks the password against the `user_<name>` options of the listener's PlainLoginModule
JAAS entry; SCRAM-SHA-256/512 checks the client's proof against the credentials kept by
AlterUserScramCredentials (scramp runs RFC 5802's exchange). Not here: SaslHandshake v0's raw
tokens (clients before Kafka 1.0), re-authentication (KIP-368: sessions never expire, as with
Kafka's default connections.max.reauth.ms=0), delegation-token SCRAM (tokenauth), GSSAPI and
OAUTHBEARER (refused at startup), and TLS listeners.
"""

from __future__ import annotations

import asyncio
import dataclasses
import enum
import logging
from collections.abc import Callable, Mapping
from typing import Final

from scramp import ScramException, ScramMechanism

from franz.protocol.errors import Errors

logger = logging.getLogger(__name__)

PLAIN: Final = "PLAIN"
SCRAM_MECHANISMS: Final = {"SCRAM-SHA-256": 1, "SCRAM-SHA-512": 2}  # name -> ScramMechanism type
SUPPORTED_MECHANISMS: Final = (PLAIN, *SCRAM_MECHANISMS)
PLAIN_LOGIN_MODULE: Final = "org.apache.kafka.common.security.plain.PlainLoginModule"
SCRAM_LOGIN_MODULE: Final = "org.apache.kafka.common.security.scram.ScramLoginModule"

_API_VERSIONS, _SASL_HANDSHAKE, _SASL_AUTHENTICATE = 18, 17, 36

# Looks up a user's credential of a SCRAM mechanism type: salt, stored_key, server_key, iterations.
CredentialOf = Callable[[str, int], Mapping | None]


class AuthenticationFailed(Exception):
    """A mechanism refused the client; the message is what the client is told."""


@dataclasses.dataclass(frozen=True)
class SaslListenerConfig:
    """A SASL listener's enabled mechanisms, in the order the handshake answer lists them, and
    PLAIN's users (name -> password) from its JAAS entry."""
    mechanisms: tuple[str, ...]
    plain_users: Mapping[str, str]
    failed_authentication_delay_ms: int
    max_receive_size: int


class _State(enum.Enum):
    HANDSHAKE_OR_VERSIONS_REQUEST = 1
    HANDSHAKE_REQUEST = 2
    AUTHENTICATE = 3
    COMPLETE = 4
    FAILED = 5


class PlainSaslServer:
    """RFC 4616's message, [authzid] NUL authcid NUL passwd, checked as Kafka's PlainSaslServer
    checks it (its messages, sent to the client)."""

    def __init__(self, users: Mapping[str, str]) -> None:
        self._users = users
        self.authorization_id: str | None = None

    def evaluate(self, token: bytes) -> bytes:
        text = token.decode("utf-8", errors="replace")
        tokens = text.split("\0", 3)
        if len(tokens) != 3:
            raise AuthenticationFailed(f"Invalid SASL/PLAIN response: expected 3 tokens, got {len(tokens)}")
        authorization_id, username, password = tokens
        if not username:
            raise AuthenticationFailed("Authentication failed: username not specified")
        if not password:
            raise AuthenticationFailed("Authentication failed: password not specified")
        if self._users.get(username) != password:
            raise AuthenticationFailed("Authentication failed: Invalid username or password")
        if authorization_id and authorization_id != username:
            raise AuthenticationFailed("Authentication failed: Client requested an authorization id that is "
                                       "different from username")
        self.authorization_id = username
        return b""


class ScramSaslServer:
    """RFC 5802/7677's two round trips: client-first -> server-first, client-final -> server-final.
    Every refusal is Kafka's one message for a SaslException of SCRAM: an unknown user, a
    malformed message, a wrong proof."""

    def __init__(self, mechanism: str, credential_of: CredentialOf) -> None:
        self.mechanism = mechanism
        self._type = SCRAM_MECHANISMS[mechanism]
        self._credential_of = credential_of
        self._server = ScramMechanism(mechanism).make_server(self._credential)
        self._username: str | None = None
        self._step = 0
        self.authorization_id: str | None = None

    def _credential(self, username: str) -> tuple[bytes, bytes, bytes, int]:
        credential = self._credential_of(username, self._type)
        if credential is None:
            raise ScramException("Authentication failed: Invalid user credentials")
        self._username = username
        return credential["salt"], credential["stored_key"], credential["server_key"], credential["iterations"]

    def evaluate(self, token: bytes) -> bytes:
        refused = AuthenticationFailed("Authentication failed during authentication due to invalid credentials "
                                       f"with SASL mechanism {self.mechanism}")
        try:
            text = token.decode("utf-8")
            self._step += 1
            if self._step == 1:
                self._server.set_client_first(text)
                return self._server.get_server_first().encode("utf-8")
            if self._step == 2:
                self._server.set_client_final(text)
                final = self._server.get_server_final().encode("utf-8")
                self.authorization_id = self._username
                return final
        except (UnicodeDecodeError, ScramException) as exc:
            logger.debug("SCRAM refused: %s", exc)
            raise refused from None
        raise refused


class SaslServerAuthenticator:
    """The SASL state of one connection of a SASL listener (see the module doc)."""

    def __init__(self, config: SaslListenerConfig, credential_of: CredentialOf) -> None:
        self.config = config
        self._credential_of = credential_of
        self._state = _State.HANDSHAKE_OR_VERSIONS_REQUEST
        self._server: PlainSaslServer | ScramSaslServer | None = None
        self.principal_name: str | None = None

    @property
    def complete(self) -> bool:
        return self._state is _State.COMPLETE

    def refusal(self, api_key: int, api_name: str) -> str | None:
        """Why a request of api_key may not come now (the connection is then closed); None if it may."""
        state = self._state
        if state is _State.HANDSHAKE_OR_VERSIONS_REQUEST and api_key in (_API_VERSIONS, _SASL_HANDSHAKE):
            if api_key == _API_VERSIONS:
                self._state = _State.HANDSHAKE_REQUEST
            return None
        if state is _State.HANDSHAKE_REQUEST and api_key == _SASL_HANDSHAKE:
            return None
        if state is _State.AUTHENTICATE:
            if api_key == _SASL_AUTHENTICATE:
                return None
            return f"Unexpected Kafka request of type {api_name} during SASL authentication."
        if state is _State.FAILED:
            return "Authentication failed before this request"
        return f"Unexpected Kafka request of type {api_name} during SASL handshake."

    async def handshake(self, version: int, mechanism: str) -> dict:
        """SaslHandshake: the mechanism the client will use; UNSUPPORTED_SASL_MECHANISM, and then
        the close, for one the listener does not enable."""
        enabled = list(self.config.mechanisms)
        if mechanism not in enabled:
            logger.debug("SASL mechanism '%s' requested by client is not supported", mechanism)
            await self._fail()
            return {"error_code": Errors.UNSUPPORTED_SASL_MECHANISM, "mechanisms": enabled}
        if version == 0:  # raw tokens without Kafka headers follow: not served here
            logger.info("Refusing SaslHandshake v0: franz reads SASL tokens only in SaslAuthenticate requests")
            await self._fail()
            return {"error_code": Errors.UNSUPPORTED_VERSION, "mechanisms": enabled}
        self._server = (PlainSaslServer(self.config.plain_users) if mechanism == PLAIN
                        else ScramSaslServer(mechanism, self._credential_of))
        self._state = _State.AUTHENTICATE
        return {"error_code": Errors.NONE, "mechanisms": enabled}

    async def authenticate(self, token: bytes) -> dict:
        """SaslAuthenticate: the mechanism's next challenge; COMPLETE once it has a principal."""
        assert self._server is not None
        try:
            challenge = self._server.evaluate(bytes(token))
        except AuthenticationFailed as exc:
            await self._fail()
            return {"error_code": Errors.SASL_AUTHENTICATION_FAILED, "error_message": str(exc), "auth_bytes": b"",
                    "session_lifetime_ms": 0}
        if self._server.authorization_id is not None:
            self.principal_name = self._server.authorization_id
            self._state = _State.COMPLETE
        return {"error_code": Errors.NONE, "error_message": None, "auth_bytes": challenge, "session_lifetime_ms": 0}

    async def _fail(self) -> None:
        """Kafka answers a failed authentication only after connection.failed.authentication.delay.ms
        (its channel muted meanwhile), then closes the connection."""
        self._state = _State.FAILED
        delay_ms = self.config.failed_authentication_delay_ms
        if delay_ms > 0:
            await asyncio.sleep(delay_ms / 1000)
