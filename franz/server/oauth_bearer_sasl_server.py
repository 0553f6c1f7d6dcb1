"""The OAUTHBEARER server of SASL listeners (RFC 7628): Kafka's OAuthBearerSaslServer, reading the
client's message as its OAuthBearerClientInitialResponse does and validating the token with
oauth_bearer_unsecured_validator (Kafka's default, OAuthBearerUnsecuredValidatorCallbackHandler).

    client-first := "n," ["a=" saslname] "," %x01 ("auth=" scheme SP+ token %x01) (key "=" value %x01)* %x01

One message normally completes it: a valid token with an authorization id absent or equal to its
principal name completes with an empty challenge, the principal being the token's. An invalid token
is answered with the JSON error challenge RFC 7628 section 3.2.2 describes ({"status":"invalid_token"},
or "insufficient_scope" with the required scope), to which the client must send the single byte
%x01; the server then fails with that JSON as the client's message. A malformed message is a
SaslError (the client hears the generic failure); another authorization id is a
SaslAuthenticationError with Kafka's message. Extensions (key=value pairs beside auth) are all
accepted, as Kafka's unsecured handler accepts them. Where Kafka fails on an unchecked exception (a
scheme other than Bearer, a token header without alg) the server raises SaslServerFault: Kafka's
authenticator then drops the connection without an answer.
"""

from __future__ import annotations

import logging
import re
from typing import Final

from franz.server.oauth_bearer_unsecured_validator import OAuthBearerUnsecuredValidator, ValidationError
from franz.server.oauth_bearer_validator import OAuthBearerValidator
from franz.server.scram_sasl_server import SaslAuthenticationError, SaslError

logger = logging.getLogger(__name__)

OAUTHBEARER: Final = "OAUTHBEARER"
LOGIN_MODULE: Final = "org.apache.kafka.common.security.oauthbearer.OAuthBearerLoginModule"
SEPARATOR: Final = "\x01"
AUTH_KEY: Final = "auth"
# OAuthBearerClientInitialResponse's expressions (escapes left to re; Java's \w is ASCII)
_SASLNAME: Final = r"(?:[\x01-\x2b\x2d-\x3c\x3e-\x7f]|=2C|=3D)+"  # [\x01-\x7F&&[^=,]] or an escape
_KVPAIRS: Final = r"(?:[A-Za-z]+=[\x21-\x7E \t\r\n]+\x01)*"
_CLIENT_INITIAL_RESPONSE: Final = re.compile(f"n,(?:a=(?P<authzid>{_SASLNAME}))?,\\x01(?P<kvpairs>{_KVPAIRS})\\x01")
_AUTH: Final = re.compile(r"(?P<scheme>[A-Za-z0-9_]+)[ ]+(?P<token>[-_~+/.a-zA-Z0-9]+=*)")


class SaslServerFault(Exception):
    """An unchecked exception out of a Kafka SaslServer (not a SaslException): the connection is
    closed without an answer, and no failed authentication is counted."""


class OAuthBearerClientInitialResponse:
    """The client's message parsed: token value, authorization id ("" if none), extensions."""

    def __init__(self, response: bytes) -> None:
        message = bytes(response).decode("utf-8", errors="replace")  # Java's new String(bytes, UTF_8)
        matched = _CLIENT_INITIAL_RESPONSE.fullmatch(message)
        if matched is None:
            raise SaslError("Invalid OAUTHBEARER client first message")
        self.authorization_id = matched["authzid"] or ""
        properties: dict[str, str] = {}
        kvpairs = matched["kvpairs"]
        if kvpairs:  # Utils.parseMap: split on the separator (no trailing empties), then on the first '='
            for pair in kvpairs.rstrip(SEPARATOR).split(SEPARATOR):
                key, value = pair.split("=", 1)
                properties[key] = value
        auth = properties.pop(AUTH_KEY, None)
        if auth is None:
            raise SaslError("Invalid OAUTHBEARER client first message: 'auth' not specified")
        self.extensions = properties  # each matches the grammar's key and value: validateExtensions passes
        auth_matched = _AUTH.fullmatch(auth)
        if auth_matched is None:
            raise SaslError("Invalid OAUTHBEARER client first message: invalid 'auth' format")
        if auth_matched["scheme"].lower() != "bearer":
            # Kafka formats its message with a group the outer pattern lacks: an IllegalArgumentException
            raise SaslServerFault("No group with name <scheme>")
        self.token_value = auth_matched["token"]


class OAuthBearerSaslServer:
    """One exchange: the client's message, then, after an error challenge, its %x01."""

    def __init__(self, validator: OAuthBearerUnsecuredValidator | OAuthBearerValidator) -> None:
        self._validator = validator
        self._error_message: str | None = None
        self.authorization_id: str | None = None
        self.extensions: dict[str, str] = {}
        self.credential_lifetime_ms: int | None = None  # the token's exp (CREDENTIAL_LIFETIME_MS), once complete

    def evaluate(self, response: bytes) -> bytes:
        response = bytes(response)
        if response == SEPARATOR.encode() and self._error_message is not None:
            logger.debug("Received %%x01 response from client after it received our error")
            raise SaslAuthenticationError(self._error_message)
        self._error_message = None
        try:
            client_response = OAuthBearerClientInitialResponse(response)
        except SaslError as exc:
            logger.debug("%s", exc)
            raise
        try:
            token = self._validator.validate(client_response.token_value)
        except (KeyError, ValueError) as exc:  # Kafka's NullPointerException, IllegalArgumentException
            raise SaslServerFault(exc.args[0] if exc.args else str(exc)) from exc
        if isinstance(token, ValidationError):
            self._error_message = _json_error_response(token.status, token.scope)
            logger.debug("%s", self._error_message)
            return self._error_message.encode("utf-8")
        authorization_id = client_response.authorization_id
        if authorization_id and authorization_id != token.principal_name:
            raise SaslAuthenticationError(f"Authentication failed: Client requested an authorization id "
                                          f"({authorization_id}) that is different from the token's principal "
                                          f"name ({token.principal_name})")
        # OAuthBearerExtensionsValidatorCallback: the unsecured handler marks every extension valid
        self.extensions = dict(client_response.extensions)
        self.credential_lifetime_ms = token.lifetime_ms
        self.authorization_id = token.principal_name
        logger.debug("Successfully authenticate User=%s", token.principal_name)
        return b""


def _json_error_response(status: str, scope: str | None, open_id_configuration: str | None = None) -> str:
    """OAuthBearerSaslServer.jsonErrorResponse, spacing and all (values not escaped, as in Kafka)."""
    text = f'{{"status":"{status}"'
    if scope is not None:
        text += f', "scope":"{scope}"'
    if open_id_configuration is not None:
        text += f', "openid-configuration":"{open_id_configuration}"'
    return text + "}"
