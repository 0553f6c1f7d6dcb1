"""SASL on SASL_PLAINTEXT and SASL_SSL listeners: Kafka's SaslServerAuthenticator with its PLAIN
server (PlainSaslServer with PlainServerCallbackHandler); SCRAM's is scram_sasl_server,
OAUTHBEARER's oauth_bearer_sasl_server, GSSAPI's gssapi_sasl_server.

A connection of a SASL listener starts unauthenticated. As Kafka's authenticator allows, it may
send ApiVersions (until one is answered without error), then one SaslHandshake naming a
mechanism the listener enables, then SaslAuthenticate requests carrying the mechanism's tokens
until the mechanism completes; the connection's principal is then User:<authorization id> (for
GSSAPI the client's Kerberos principal mapped by sasl.kerberos.principal.to.local.rules, as
DefaultKafkaPrincipalBuilder maps it), and every API is served. Kafka builds the principal at each
request, so a Kerberos name no rule maps completes its authentication and then fails the connection
at its first request (principal_error). These requests are taken as Kafka's authenticator takes them, outside
KafkaApis: never logged (a PLAIN token is the password), counted or throttled
(KafkaApis._before_authentication). Any other request, a version not served, or a frame over
`sasl.server.max.receive.size` fails the connection. A failure is answered after
`connection.failed.authentication.delay.ms` (SASL_AUTHENTICATION_FAILED with Kafka's message,
UNSUPPORTED_SASL_MECHANISM with the enabled mechanisms, or, once the handshake is done, the
request's own answer with ILLEGAL_SASL_STATE), then the connection is closed. A mechanism that
fails as Kafka's fail on an unchecked exception (SaslServerFault) has the connection closed at once,
unanswered and not counted as a failed authentication.

Re-authentication (KIP-368), as Kafka's ReauthInfo and KafkaChannel do it: a completed
authentication answers session_lifetime_ms (calc_completion_times_and_return_session_lifetime_ms),
the least of the mechanism's connections.max.reauth.ms (when positive) and its credential's
remaining lifetime (an OAUTHBEARER token's exp, even with connections.max.reauth.ms=0), and the
session then expires that long after. A SaslHandshake on the authenticated connection begins a
re-authentication (maybe_begin_reauthentication) when the session has an expiration and the last
one began at least a second ago; otherwise KafkaApis answers it ILLEGAL_SASL_STATE. The
connection's principal stays the old one until the new exchange completes, which must use the same
mechanism (another enabled one is answered NONE, then the connection fails unanswered at its next
request) and name the same principal. A request on a connection whose session has expired closes
it (KafkaChannel, session_expired), unless it is a SaslHandshake that begins a re-authentication.

A SCRAM exchange with tokenauth=true authenticates with a delegation token: the principal is
User:<the token's owner's name>, token-authenticated (SaslServerAuthenticator.principal), and the
token's expiry bounds the session as a credential's lifetime.

A SaslHandshake v0 (clients before Kafka 1.0, and later ones that take a broker for an older
one) is followed by bare tokens rather than SaslAuthenticate requests, as Kafka's authenticator
reads them without enableKafkaSaslAuthenticateHeaders: until the exchange completes, each frame is
the mechanism's token alone and each challenge goes back the same way (a 4-byte size, the bytes),
or not at all where the Java mechanism answers null (GSSAPI's last step). No error can be told
there: a SaslAuthenticationException closes the connection unanswered after the failed
authentication delay, counted; a SaslException closes it at once, uncounted (Kafka's Selector
takes it as an IOException). Such a client cannot re-authenticate (its session, if it expires,
ends the connection at its next request).
"""

from __future__ import annotations

import asyncio
import dataclasses
import enum
import hmac
import logging
import time
from collections.abc import Callable, Mapping
from typing import TYPE_CHECKING, Final

from franz.common.kerberos_name import BadFormatString, KerberosName, NoMatchingRule
from franz.protocol.errors import Errors
from franz.server.gssapi_sasl_server import GSSAPI, GssapiSaslServer, KerberosService
from franz.server.oauth_bearer_sasl_server import OAUTHBEARER, OAuthBearerSaslServer, SaslServerFault
from franz.server.oauth_bearer_validator import OAuthBearerValidator
from franz.server.oauth_bearer_unsecured_validator import OAuthBearerUnsecuredValidator
from franz.server.scram_sasl_server import (
    MECHANISM_TYPES,
    CredentialOf,
    SaslAuthenticationError,
    SaslError,
    ScramSaslServer,
    TokenCredentialOf,
)

if TYPE_CHECKING:
    from franz.server.socket_server_metrics import SelectorMetrics

logger = logging.getLogger(__name__)

PLAIN: Final = "PLAIN"
SUPPORTED_MECHANISMS: Final = (GSSAPI, PLAIN, *MECHANISM_TYPES, OAUTHBEARER)
PLAIN_LOGIN_MODULE: Final = "org.apache.kafka.common.security.plain.PlainLoginModule"
SCRAM_LOGIN_MODULE: Final = "org.apache.kafka.common.security.scram.ScramLoginModule"

_API_VERSIONS, _SASL_HANDSHAKE, _SASL_AUTHENTICATE = 18, 17, 36
# KafkaChannel.MIN_REAUTH_INTERVAL_ONE_SECOND_NANOS: a SaslHandshake sooner after the last
# re-authentication began is no new one
MIN_REAUTH_INTERVAL_NS: Final = 1_000_000_000


@dataclasses.dataclass(frozen=True)
class SaslListenerConfig:
    """A SASL listener's enabled mechanisms, in the order the handshake answer lists them, and
    PLAIN's users (name -> password) from its JAAS entries (the listener's plain.sasl.jaas.config,
    or the KafkaServer section of the JAAS file -Djava.security.auth.login.config names: KafkaConfig
    reads both); OAUTHBEARER's validator, configured with the options of its JAAS entry; each
    mechanism's connections.max.reauth.ms (SaslChannelBuilder's connectionsMaxReauthMsByMechanism);
    GSSAPI's service principal, keytab and short namer."""
    mechanisms: tuple[str, ...]
    plain_users: Mapping[str, str]
    failed_authentication_delay_ms: int
    max_receive_size: int
    oauth_bearer_validator: OAuthBearerUnsecuredValidator | OAuthBearerValidator | None = None
    max_reauth_ms: Mapping[str, int] = dataclasses.field(default_factory=dict)
    kerberos: KerberosService | None = None


class BareTokenFailure(Exception):
    """A bare token's exchange failed and the connection closes unanswered: a failed
    authentication (its delay already waited), an `unexpected` error, or else what Kafka's
    Selector takes as an IOException, closed at once."""

    def __init__(self, message: str, *, failed_authentication: bool, unexpected: bool = False) -> None:
        super().__init__(message)
        self.failed_authentication = failed_authentication
        self.unexpected = unexpected


class _State(enum.Enum):
    HANDSHAKE_OR_VERSIONS_REQUEST = 1
    HANDSHAKE_REQUEST = 2
    AUTHENTICATE = 3
    COMPLETE = 4
    FAILED = 5
    REAUTH_PROCESS_HANDSHAKE = 6  # a re-authentication's SaslHandshake comes next
    REAUTH_BAD_MECHANISM = 7  # its handshake named another mechanism: the next request fails


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
    """The SASL state of one connection of a SASL listener (see the module doc): Kafka's
    SaslServerAuthenticator with its ReauthInfo, and the re-authentication part of KafkaChannel
    (one object serves the connection's life; Kafka swaps in a new authenticator each time)."""

    def __init__(self, config: SaslListenerConfig, credential_of: CredentialOf,
                 metrics: SelectorMetrics | None = None, clock_ns: Callable[[], int] = time.monotonic_ns,
                 wall_clock_ms: Callable[[], int] = lambda: time.time_ns() // 1_000_000,
                 token_credential_of: TokenCredentialOf = lambda token_id, mechanism: None) -> None:
        self.config = config
        self._credential_of = credential_of
        self._token_credential_of = token_credential_of
        self._metrics = metrics  # the listener's: its authentication counts
        self._clock_ns = clock_ns
        self._wall_clock_ms = wall_clock_ms
        self._state = _State.HANDSHAKE_OR_VERSIONS_REQUEST
        self._server: PlainSaslServer | ScramSaslServer | OAuthBearerSaslServer | GssapiSaslServer | None = None
        self._mechanism = ""
        self.principal_name: str | None = None  # the session's, kept through a re-authentication
        self.token_authenticated = False  # KafkaPrincipal.tokenAuthenticated of the session's principal
        # why no principal could be made of a completed authentication: the next request fails the connection
        self.principal_error: str | None = None
        self.fault: str | None = None  # a SaslServerFault's message
        self.successful_authentications = 0  # KafkaChannel.successfulAuthentications
        self.session_expiration_ns: int | None = None  # on clock_ns; None: the session never expires
        self.reauthentication_latency_ms: int | None = None  # the last re-authentication's
        self._client_supports_reauthentication = False
        self._last_reauthentication_start_ns = 0
        self._reauthentication_begin_ns = 0
        self._authentication_end_ns = 0
        self._previous_mechanism: str | None = None  # set while re-authenticating
        self._bare_tokens = False  # the last handshake was v0 (not enableKafkaSaslAuthenticateHeaders)
        self._bad_mechanism_message = ""

    @property
    def complete(self) -> bool:
        return self._state is _State.COMPLETE

    @property
    def handshaken(self) -> bool:
        """In the AUTHENTICATE state: past a successful SaslHandshake."""
        return self._state is _State.AUTHENTICATE

    @property
    def reads_bare_tokens(self) -> bool:
        """Past a SaslHandshake v0 and not yet complete: the next frame is a bare token."""
        return self._bare_tokens and self._state is _State.AUTHENTICATE

    @property
    def reauthenticating(self) -> bool:
        """ReauthInfo.reauthenticating: this exchange follows a completed one on the connection."""
        return self._previous_mechanism is not None

    @property
    def authentication_or_reauthentication_text(self) -> str:
        return "re-authentication" if self.reauthenticating else "authentication"

    def refusal(self, api_key: int, api_name: str) -> str | None:
        """Why a request of api_key may not come now (the connection then fails); None if it may."""
        state = self._state
        if state is _State.HANDSHAKE_OR_VERSIONS_REQUEST and api_key in (_API_VERSIONS, _SASL_HANDSHAKE):
            return None
        if state in (_State.HANDSHAKE_REQUEST, _State.REAUTH_PROCESS_HANDSHAKE) and api_key == _SASL_HANDSHAKE:
            return None
        if state is _State.AUTHENTICATE:
            if api_key == _SASL_AUTHENTICATE:
                return None
            return f"Unexpected Kafka request of type {api_name} during SASL authentication."
        if state is _State.REAUTH_BAD_MECHANISM:  # whatever comes, unread and unanswered
            return self._bad_mechanism_message
        if state is _State.FAILED:
            return "Authentication failed before this request"
        return f"Unexpected Kafka request of type {api_name} during SASL handshake."

    def api_versions_answered(self) -> None:
        """handleApiVersionsRequest: only an ApiVersions answered without error moves the state on,
        so a client may retry one refused for its version or its software name."""
        if self._state is _State.HANDSHAKE_OR_VERSIONS_REQUEST:
            self._state = _State.HANDSHAKE_REQUEST

    def maybe_begin_reauthentication(self, now_ns: int) -> bool:
        """KafkaChannel.maybeBeginServerReauthentication, for a SaslHandshake on the authenticated
        connection: begins a re-authentication (True) unless the session has no expiration or the
        last one began less than a second ago, in which case the handshake is an ordinary
        request (KafkaApis answers ILLEGAL_SASL_STATE)."""
        assert self._state is _State.COMPLETE, self._state
        if self.session_expiration_ns is None:
            return False
        if (self._last_reauthentication_start_ns != 0
                and now_ns - self._last_reauthentication_start_ns < MIN_REAUTH_INTERVAL_NS):
            return False
        self._last_reauthentication_start_ns = self._reauthentication_begin_ns = now_ns
        self._previous_mechanism = self._mechanism
        self._server = None
        self._client_supports_reauthentication = False
        logger.debug("Beginning re-authentication of %s with %s", self.principal_name, self._mechanism)
        self._state = _State.REAUTH_PROCESS_HANDSHAKE
        return True

    def session_expired(self, now_ns: int) -> bool:
        """KafkaChannel.serverAuthenticationSessionExpired."""
        return self.session_expiration_ns is not None and now_ns - self.session_expiration_ns > 0

    async def handshake(self, version: int, mechanism: str) -> dict:
        """SaslHandshake: the mechanism the client will use; UNSUPPORTED_SASL_MECHANISM, and then
        the close, for one the listener does not enable. A re-authentication that names another
        enabled mechanism is answered NONE, and fails at its next request (REAUTH_BAD_MECHANISM:
        Kafka so counts it as a failed re-authentication)."""
        enabled = list(self.config.mechanisms)
        self._bare_tokens = version == 0
        if mechanism not in enabled:
            logger.debug("SASL mechanism '%s' requested by client is not supported", mechanism)
            await self.fail()
            return {"error_code": Errors.UNSUPPORTED_SASL_MECHANISM, "mechanisms": enabled}
        if self.reauthenticating and mechanism != self._previous_mechanism:  # ReauthInfo.saslMechanismUnchanged
            self._bad_mechanism_message = (f"SASL mechanism '{mechanism}' requested by client is not supported for "
                                           f"re-authentication of mechanism '{self._previous_mechanism}'")
            logger.debug("%s", self._bad_mechanism_message)
            self._state = _State.REAUTH_BAD_MECHANISM
            return {"error_code": Errors.NONE, "mechanisms": enabled}
        self._mechanism = mechanism
        if mechanism == PLAIN:
            self._server = PlainSaslServer(self.config.plain_users)
        elif mechanism == OAUTHBEARER:
            assert self.config.oauth_bearer_validator is not None
            self._server = OAuthBearerSaslServer(self.config.oauth_bearer_validator)
        elif mechanism == GSSAPI:
            assert self.config.kerberos is not None
            self._server = GssapiSaslServer(self.config.kerberos)
        else:
            self._server = ScramSaslServer(mechanism, self._credential_of, self._token_credential_of)
        self._state = _State.AUTHENTICATE
        return {"error_code": Errors.NONE, "mechanisms": enabled}

    async def authenticate(self, token: bytes, version: int = 1) -> dict | None:
        """SaslAuthenticate: the mechanism's next challenge; COMPLETE once it has a principal,
        answering the session's lifetime. A SaslAuthenticationException's message is the
        client's; any other failure is told as Kafka's handleSaslToken tells a SaslException;
        None for a SaslServerFault, which closes the connection unanswered. A client that sends
        SaslAuthenticate v1+ can re-authenticate (KIP-368); a re-authentication must end with
        the principal it began with."""
        if version > 0:
            self._client_supports_reauthentication = True
        try:
            challenge, name = await self._evaluate(token)
        except SaslServerFault as exc:
            self._fault(exc)
            return None
        except (SaslAuthenticationError, SaslError) as exc:
            logger.debug("SASL %s failed: %s", self.authentication_or_reauthentication_text, exc)
            message = str(exc) if isinstance(exc, SaslAuthenticationError) else (
                f"Authentication failed during {self.authentication_or_reauthentication_text} due to invalid "
                f"credentials with SASL mechanism {self._mechanism}")
            await self.fail()
            return {"error_code": Errors.SASL_AUTHENTICATION_FAILED, "error_message": message, "auth_bytes": b"",
                    "session_lifetime_ms": 0}
        session_lifetime_ms = 0
        if name is not None:
            session_lifetime_ms = self.calc_completion_times_and_return_session_lifetime_ms()
            self._completed(name)
        # a SaslAuthenticate is answered even where the mechanism's challenge is null
        return {"error_code": Errors.NONE, "error_message": None, "auth_bytes": challenge or b"",
                "session_lifetime_ms": session_lifetime_ms}

    async def authenticate_bare(self, token: bytes) -> bytes | None:
        """A bare token after a SaslHandshake v0 (handleSaslToken without Kafka headers): the
        challenge to send bare, None to send nothing. Raises BareTokenFailure once the connection
        must close (see the module doc)."""
        try:
            challenge, name = await self._evaluate(token)
        except SaslServerFault as exc:
            self._fault(exc)
            raise BareTokenFailure(str(exc), failed_authentication=False, unexpected=True) from exc
        except SaslAuthenticationError as exc:
            logger.debug("SASL %s failed: %s", self.authentication_or_reauthentication_text, exc)
            await self.fail()
            raise BareTokenFailure(str(exc), failed_authentication=True) from exc
        except SaslError as exc:  # an IOException to Kafka's Selector: closed now, not counted as a failure
            logger.debug("Failed during %s: %s", self.authentication_or_reauthentication_text, exc)
            self._state = _State.FAILED
            raise BareTokenFailure(str(exc), failed_authentication=False) from exc
        if name is not None:
            self.calc_completion_times_and_return_session_lifetime_ms()  # the client is not told it
            self._completed(name)
        return challenge

    async def _evaluate(self, token: bytes) -> tuple[bytes | None, str | None]:
        """The mechanism's challenge for the client's token (None where Java's is null) and, once
        the exchange is complete, the principal's name; a re-authentication must end with the
        principal it began with."""
        assert self._server is not None
        if isinstance(self._server, GssapiSaslServer):  # MIT's calls may block: off the event loop
            challenge = await self._server.evaluate_in_thread(bytes(token))
        else:
            challenge = self._server.evaluate(bytes(token))
        name = self._principal_of(self._server.authorization_id)
        if name is not None and self.reauthenticating and name != self.principal_name:
            # ReauthInfo.ensurePrincipalUnchanged (KafkaPrincipal's type.name)
            raise SaslAuthenticationError(f"Cannot change principals during re-authentication from "
                                          f"User.{self.principal_name}: User.{name}")
        return challenge, name

    def _fault(self, exc: SaslServerFault) -> None:
        """SaslServerAuthenticator.authenticate on an unexpected exception: "fail immediately"."""
        logger.debug("Failed during %s: %s", self.authentication_or_reauthentication_text, exc)
        self._state = _State.FAILED
        self.fault = str(exc)

    def _principal_of(self, authorization_id: str | None) -> str | None:
        """The principal name of a completed exchange (DefaultKafkaPrincipalBuilder): the
        authorization id, or for GSSAPI its Kerberos short name. A name no rule maps leaves
        principal_error (the first request then fails the connection), or, re-authenticating,
        fails it now as Kafka's ensurePrincipalUnchanged(principal()) does."""
        if authorization_id is None or self._mechanism != GSSAPI:
            return authorization_id
        assert self.config.kerberos is not None
        kerberos_name = KerberosName.parse(authorization_id)
        try:
            return self.config.kerberos.short_namer.short_name(kerberos_name)
        except ValueError as exc:  # Kafka wraps its rules' IOExceptions; an unchecked one escapes as it is
            error = (f"Failed to set name for '{kerberos_name}' based on Kerberos authentication rules.: {exc}"
                     if isinstance(exc, (NoMatchingRule, BadFormatString)) else str(exc))
            if self.reauthenticating:
                raise SaslServerFault(error) from exc
            self.principal_error = error
            return str(kerberos_name)

    def _completed(self, name: str) -> None:
        """The exchange completed: the session is the new one, counted as Selector counts it."""
        self.principal_name = name
        self.token_authenticated = isinstance(self._server, ScramSaslServer) and self._server.token_authenticated
        self._state = _State.COMPLETE
        self.successful_authentications += 1
        if self.reauthenticating:
            # ReauthInfo.reauthenticationLatencyMs: at least 1 ms if any time passed
            latency_ns = self._authentication_end_ns - self._reauthentication_begin_ns
            self.reauthentication_latency_ms = 0 if latency_ns == 0 else max(1, round(latency_ns / 1e6))
            self._previous_mechanism = None
        if self._metrics is not None:
            if self.successful_authentications == 1:
                self._metrics.authenticated(client_supports_reauthentication=self._client_supports_reauthentication)
            else:
                self._metrics.reauthenticated(self.reauthentication_latency_ms or 0, time.monotonic_ns())

    def calc_completion_times_and_return_session_lifetime_ms(self) -> int:
        """ReauthInfo.calcCompletionTimesAndReturnSessionLifetimeMs: the least of the mechanism's
        positive connections.max.reauth.ms and the credential's remaining lifetime (never below
        0), or 0 with neither, when the session never expires."""
        assert self._server is not None
        lifetime_ms = 0
        end_ms = self._wall_clock_ms()
        self._authentication_end_ns = end_ns = self._clock_ns()
        credential_expiration_ms: int | None = getattr(self._server, "credential_lifetime_ms", None)
        max_reauth_ms = self.config.max_reauth_ms.get(self._mechanism)
        max_reauth_set = max_reauth_ms is not None and max_reauth_ms > 0
        self.session_expiration_ns = None
        if credential_expiration_ms is not None or max_reauth_set:
            if credential_expiration_ms is None:
                assert max_reauth_ms is not None
                lifetime_ms = max(0, max_reauth_ms)
            elif not max_reauth_set:
                lifetime_ms = max(0, credential_expiration_ms - end_ms)
            else:
                assert max_reauth_ms is not None
                lifetime_ms = max(0, min(credential_expiration_ms - end_ms, max_reauth_ms))
            self.session_expiration_ns = end_ns + 1_000_000 * lifetime_ms
        logger.debug("Authentication complete; session max lifetime from broker config=%s ms, credential "
                     "expiration=%s; %s, sending %d ms to client", max_reauth_ms, credential_expiration_ms,
                     "no session expiration" if self.session_expiration_ns is None else "session expiration in "
                     f"{lifetime_ms} ms", lifetime_ms)
        return lifetime_ms

    async def fail(self) -> None:
        """Kafka answers a failed authentication only after connection.failed.authentication.delay.ms
        (its channel muted meanwhile), then closes the connection. A connection that had
        authenticated counts a failed re-authentication."""
        if self._state is not _State.FAILED and self._metrics is not None:
            if self.successful_authentications > 0:
                self._metrics.failed_reauthentications += 1
            else:
                self._metrics.failed_authentications += 1
        self._state = _State.FAILED
        delay_ms = self.config.failed_authentication_delay_ms
        if delay_ms > 0:
            await asyncio.sleep(delay_ms / 1000)
