"""SASL on SASL_PLAINTEXT and SASL_SSL listeners: Kafka's SaslServerAuthenticator with its PLAIN
server (PlainSaslServer with PlainServerCallbackHandler); SCRAM's is scram_sasl_server,
OAUTHBEARER's oauth_bearer_sasl_server.

A connection of a SASL listener starts unauthenticated. As Kafka's authenticator allows, it may
send ApiVersions (until one is answered without error), then one SaslHandshake naming a
mechanism the listener enables, then SaslAuthenticate requests carrying the mechanism's tokens
until the mechanism completes; the connection's principal is then User:<authorization id>, and
every API is served. These requests are taken as Kafka's authenticator takes them, outside
KafkaApis: never logged (a PLAIN token is the password), counted or throttled
(KafkaApis._before_authentication). Any other request, a version not served, or a frame over
`sasl.server.max.receive.size` fails the connection. A failure is answered after
`connection.failed.authentication.delay.ms` (SASL_AUTHENTICATION_FAILED with Kafka's message,
UNSUPPORTED_SASL_MECHANISM with the enabled mechanisms, or, once the handshake is done, the
request's own answer with ILLEGAL_SASL_STATE), then the connection is closed. A mechanism that
fails as Kafka's fail on an unchecked exception (SaslServerFault) has the connection closed at once,
unanswered and not counted as a failed authentication.

Not here: SaslHandshake v0's raw tokens (clients before Kafka 1.0), re-authentication (KIP-368:
sessions never expire, as with Kafka's default connections.max.reauth.ms=0), delegation-token
SCRAM (tokenauth) and GSSAPI (refused at startup). An OAUTHBEARER session does not end when its
token expires: Kafka answers its remaining lifetime as session_lifetime_ms and drops a connection
that has not re-authenticated by then; franz answers 0, so that clients do not try to.
"""

from __future__ import annotations

import asyncio
import dataclasses
import enum
import hmac
import logging
from collections.abc import Mapping
from typing import TYPE_CHECKING, Final

from franz.protocol.errors import Errors
from franz.server.oauth_bearer_sasl_server import OAUTHBEARER, OAuthBearerSaslServer, SaslServerFault
from franz.server.oauth_bearer_validator import OAuthBearerValidator
from franz.server.oauth_bearer_unsecured_validator import OAuthBearerUnsecuredValidator
from franz.server.scram_sasl_server import (
    MECHANISM_TYPES,
    CredentialOf,
    SaslAuthenticationError,
    SaslError,
    ScramSaslServer,
)

if TYPE_CHECKING:
    from franz.server.socket_server_metrics import SelectorMetrics

logger = logging.getLogger(__name__)

PLAIN: Final = "PLAIN"
SUPPORTED_MECHANISMS: Final = (PLAIN, *MECHANISM_TYPES, OAUTHBEARER)
PLAIN_LOGIN_MODULE: Final = "org.apache.kafka.common.security.plain.PlainLoginModule"
SCRAM_LOGIN_MODULE: Final = "org.apache.kafka.common.security.scram.ScramLoginModule"

_API_VERSIONS, _SASL_HANDSHAKE, _SASL_AUTHENTICATE = 18, 17, 36


@dataclasses.dataclass(frozen=True)
class SaslListenerConfig:
    """A SASL listener's enabled mechanisms, in the order the handshake answer lists them, and
    PLAIN's users (name -> password) from its JAAS entry; OAUTHBEARER's validator, configured with
    the options of its JAAS entry."""
    mechanisms: tuple[str, ...]
    plain_users: Mapping[str, str]
    failed_authentication_delay_ms: int
    max_receive_size: int
    oauth_bearer_validator: OAuthBearerUnsecuredValidator | OAuthBearerValidator | None = None


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
            raise SaslAuthenticationError(f"Invalid SASL/PLAIN response: expected 3 tokens, got {len(tokens)}")
        authorization_id, username, password = tokens
        if not username:
            raise SaslAuthenticationError("Authentication failed: username not specified")
        if not password:
            raise SaslAuthenticationError("Authentication failed: password not specified")
        expected = self._users.get(username)
        # PlainServerCallbackHandler: Utils.isEqualConstantTime, so that the time taken tells nothing
        if expected is None or not hmac.compare_digest(expected.encode("utf-8"), password.encode("utf-8")):
            raise SaslAuthenticationError("Authentication failed: Invalid username or password")
        if authorization_id and authorization_id != username:
            raise SaslAuthenticationError("Authentication failed: Client requested an authorization id that is "
                                          "different from username")
        self.authorization_id = username
        return b""


class SaslServerAuthenticator:
    """The SASL state of one connection of a SASL listener (see the module doc)."""

    def __init__(self, config: SaslListenerConfig, credential_of: CredentialOf,
                 metrics: SelectorMetrics | None = None) -> None:
        self.config = config
        self._credential_of = credential_of
        self._metrics = metrics  # the listener's: its authentication counts
        self._state = _State.HANDSHAKE_OR_VERSIONS_REQUEST
        self._server: PlainSaslServer | ScramSaslServer | OAuthBearerSaslServer | None = None
        self._mechanism = ""
        self.principal_name: str | None = None
        self.fault: str | None = None  # a SaslServerFault's message

    @property
    def complete(self) -> bool:
        return self._state is _State.COMPLETE

    @property
    def handshaken(self) -> bool:
        """In the AUTHENTICATE state: past a successful SaslHandshake."""
        return self._state is _State.AUTHENTICATE

    def refusal(self, api_key: int, api_name: str) -> str | None:
        """Why a request of api_key may not come now (the connection then fails); None if it may."""
        state = self._state
        if state is _State.HANDSHAKE_OR_VERSIONS_REQUEST and api_key in (_API_VERSIONS, _SASL_HANDSHAKE):
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

    def api_versions_answered(self) -> None:
        """handleApiVersionsRequest: only an ApiVersions answered without error moves the state on,
        so a client may retry one refused for its version or its software name."""
        if self._state is _State.HANDSHAKE_OR_VERSIONS_REQUEST:
            self._state = _State.HANDSHAKE_REQUEST

    async def handshake(self, version: int, mechanism: str) -> dict:
        """SaslHandshake: the mechanism the client will use; UNSUPPORTED_SASL_MECHANISM, and then
        the close, for one the listener does not enable."""
        enabled = list(self.config.mechanisms)
        if mechanism not in enabled:
            logger.debug("SASL mechanism '%s' requested by client is not supported", mechanism)
            await self.fail()
            return {"error_code": Errors.UNSUPPORTED_SASL_MECHANISM, "mechanisms": enabled}
        if version == 0:  # raw tokens without Kafka headers follow: not served here
            logger.info("Refusing SaslHandshake v0: franz reads SASL tokens only in SaslAuthenticate requests")
            await self.fail()
            return {"error_code": Errors.UNSUPPORTED_VERSION, "mechanisms": enabled}
        self._mechanism = mechanism
        if mechanism == PLAIN:
            self._server = PlainSaslServer(self.config.plain_users)
        elif mechanism == OAUTHBEARER:
            assert self.config.oauth_bearer_validator is not None
            self._server = OAuthBearerSaslServer(self.config.oauth_bearer_validator)
        else:
            self._server = ScramSaslServer(mechanism, self._credential_of)
        self._state = _State.AUTHENTICATE
        return {"error_code": Errors.NONE, "mechanisms": enabled}

    async def authenticate(self, token: bytes, version: int = 1) -> dict | None:
        """SaslAuthenticate: the mechanism's next challenge; COMPLETE once it has a principal. A
        SaslAuthenticationException's message is the client's; any other failure is told as
        Kafka's handleSaslToken tells a SaslException; None for a SaslServerFault, which closes
        the connection unanswered. A client that sends SaslAuthenticate v1+ can re-authenticate
        (KIP-368)."""
        assert self._server is not None
        try:
            challenge = self._server.evaluate(bytes(token))
        except SaslServerFault as exc:  # SaslServerAuthenticator.authenticate: "fail immediately"
            logger.debug("Failed during authentication: %s", exc)
            self._state = _State.FAILED
            self.fault = str(exc)
            return None
        except (SaslAuthenticationError, SaslError) as exc:
            logger.debug("SASL authentication failed: %s", exc)
            message = str(exc) if isinstance(exc, SaslAuthenticationError) else (
                f"Authentication failed during authentication due to invalid credentials with SASL mechanism "
                f"{self._mechanism}")
            await self.fail()
            return {"error_code": Errors.SASL_AUTHENTICATION_FAILED, "error_message": message, "auth_bytes": b"",
                    "session_lifetime_ms": 0}
        if self._server.authorization_id is not None:
            self.principal_name = self._server.authorization_id
            self._state = _State.COMPLETE
            if self._metrics is not None:
                self._metrics.authenticated(client_supports_reauthentication=version > 0)
        return {"error_code": Errors.NONE, "error_message": None, "auth_bytes": challenge, "session_lifetime_ms": 0}

    async def fail(self) -> None:
        """Kafka answers a failed authentication only after connection.failed.authentication.delay.ms
        (its channel muted meanwhile), then closes the connection."""
        if self._state is not _State.FAILED and self._metrics is not None:
            self._metrics.failed_authentications += 1
        self._state = _State.FAILED
        delay_ms = self.config.failed_authentication_delay_ms
        if delay_ms > 0:
            await asyncio.sleep(delay_ms / 1000)
