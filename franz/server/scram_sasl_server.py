"""The SCRAM-SHA-256/512 server of SASL listeners: Kafka's ScramSaslServer, with the message
grammar of its ScramMessages and the arithmetic of its ScramFormatter (RFC 5802, RFC 7677).

Written here rather than taken from a SCRAM library because a client meets Kafka's own choices,
which a general implementation does not make: the messages must match Kafka's regular
expressions (ASCII names with =2C/=3D escapes, the "n" GS2 flag only, an authorization id
equal to the user name, extensions but tokenauth ignored), any stored salt is served, the
server nonce is a 130-bit random number in base 36, and every failure but one is a
SaslException, which the client hears as one generic message. The one exception is an authorization id that differs
from the user name, whose own message reaches the client. Python's regular expressions match
these grammars in linear time, so a message as long as sasl.server.max.receive.size costs
milliseconds.

A client-first message with the extension tokenauth=true authenticates with a delegation token
(ScramServerCallbackHandler's DelegationTokenCredentialCallback): the user name is the token id,
the credential the one the broker derived from the token's HMAC, and the exchange is authorized
as the token's owner; the session ends when the token expires (its expiry as the credential's
lifetime), and the connection is token-authenticated, which bars it from the token APIs.
"""

from __future__ import annotations

import base64
import binascii
import hashlib
import hmac
import re
import secrets
from collections.abc import Callable, Mapping
from typing import Final

MECHANISM_TYPES: Final = {"SCRAM-SHA-256": 1, "SCRAM-SHA-512": 2}  # ScramMechanism, as credentials store it
_DIGESTS: Final = {"SCRAM-SHA-256": hashlib.sha256, "SCRAM-SHA-512": hashlib.sha512}
MIN_ITERATIONS: Final = 4096  # ScramMechanism.minIterations, both mechanisms

# ScramMessages.AbstractScramMessage's character classes, Java's [a&&[^b]] written out (escapes
# left to re: a literal '-' beside a range reads as a set difference to come).
_ALPHA: Final = "[A-Za-z]+"
_VALUE: Final = r"[\x01-\x2b\x2d-\x7f]+"  # [\x01-\x7F&&[^,]]
_PRINTABLE: Final = r"[\x21-\x2b\x2d-\x7e]+"  # [\x21-\x7E&&[^,]]
_SASLNAME: Final = r"(?:[\x01-\x2b\x2d-\x3c\x3e-\x7f]|=2C|=3D)+"  # [\x01-\x7F&&[^=,]] or an escape
_BASE64_CHAR: Final = "[a-zA-Z0-9/+]"
_BASE64: Final = f"(?:{_BASE64_CHAR}{{4}})*(?:{_BASE64_CHAR}{{3}}=|{_BASE64_CHAR}{{2}}==)?"
_RESERVED: Final = f"(m={_VALUE},)?"
_EXTENSIONS: Final = f"(?:,{_ALPHA}={_VALUE})*"
_CLIENT_FIRST: Final = re.compile(f"n,(?:a=(?P<authzid>{_SASLNAME}))?,{_RESERVED}n=(?P<saslname>{_SASLNAME}),"
                                  f"r=(?P<nonce>{_PRINTABLE})(?P<extensions>{_EXTENSIONS})")
_CLIENT_FINAL: Final = re.compile(f"c=(?P<channel>{_BASE64}),r=(?P<nonce>{_PRINTABLE}){_EXTENSIONS},"
                                  f"p=(?P<proof>{_BASE64})")

# A user's credential of a mechanism type: salt, stored_key, server_key, iterations; None if none.
CredentialOf = Callable[[str, int], Mapping | None]
# A delegation token's, by token id and mechanism type: (owner's name, credential, expiry in ms);
# None for a token the broker does not have.
TokenCredentialOf = Callable[[str, int], tuple[str, Mapping, int] | None]


def _no_tokens(token_id: str, mechanism: int) -> None:
    return None


class SaslError(Exception):
    """Kafka's SaslException: the client hears only the generic failure message."""


class SaslAuthenticationError(Exception):
    """Kafka's SaslAuthenticationException: its message is the client's."""


def _username(sasl_name: str) -> str:
    """ScramFormatter.username: =2C is a comma, then =3D an equals sign."""
    return sasl_name.replace("=2C", ",").replace("=3D", "=")


def _b64decode(text: str) -> bytes:
    return base64.b64decode(text, validate=True)


def secure_random_string() -> str:
    """ScramFormatter.secureRandomString: new BigInteger(130, random).toString(36), the server's
    nonce, and as bytes the salt of a credential Kafka makes itself (generateCredential)."""
    value, digits = secrets.randbits(130), []
    while value:
        value, digit = divmod(value, 36)
        digits.append("0123456789abcdefghijklmnopqrstuvwxyz"[digit])
    return "".join(reversed(digits)) or "0"


class ScramSaslServer:
    """Two steps: client-first -> server-first, client-final -> server-final (ScramSaslServer's
    RECEIVE_CLIENT_FIRST_MESSAGE and RECEIVE_CLIENT_FINAL_MESSAGE)."""

    def __init__(self, mechanism: str, credential_of: CredentialOf,
                 token_credential_of: TokenCredentialOf = _no_tokens) -> None:
        self.mechanism = mechanism
        self._digest = _DIGESTS[mechanism]
        self._credential_of = credential_of
        self._token_credential_of = token_credential_of
        self._step = 0
        self._credential: Mapping | None = None
        self._authorizing_as = ""  # the user name, or a token's owner
        self._client_first_bare = self._server_first = self._combined_nonce = ""
        self.authorization_id: str | None = None
        self.token_authenticated = False
        self.credential_lifetime_ms: int | None = None  # a token's expiry (CREDENTIAL_LIFETIME_MS)

    def evaluate(self, token: bytes) -> bytes:
        self._step += 1
        message = bytes(token).decode("utf-8", errors="replace")  # Java's new String(bytes, UTF_8)
        if self._step == 1:
            return self._client_first(message)
        if self._step == 2:
            return self._client_final(message)
        raise SaslError(f"Unexpected challenge in Sasl server state {self._step}")

    def _client_first(self, message: str) -> bytes:
        matched = _CLIENT_FIRST.fullmatch(message)
        if matched is None:
            raise SaslError("Invalid SCRAM client first message format")
        username = _username(matched["saslname"])
        extensions = matched["extensions"]
        extension_map = dict(item.split("=", 1) for item in extensions[1:].split(",")) if extensions else {}
        mechanism_type = MECHANISM_TYPES[self.mechanism]
        if extension_map.get("tokenauth", "").lower() == "true":  # ScramExtensions.tokenAuthenticated
            token = self._token_credential_of(username, mechanism_type)
            if token is None:
                raise SaslError(f"Token Authentication failed: Invalid tokenId : {username}")
            authorizing_as, credential, self.credential_lifetime_ms = token
            self.token_authenticated = True
        else:
            authorizing_as, credential = username, self._credential_of(username, mechanism_type)
        if credential is None:
            raise SaslError("Authentication failed: Invalid user credentials")
        authzid = matched["authzid"] or ""
        if authzid and authzid != username:
            raise SaslAuthenticationError("Authentication failed: Client requested an authorization id that is "
                                           "different from username")
        if credential["iterations"] < MIN_ITERATIONS:
            raise SaslError(f"Iterations {credential['iterations']} is less than the minimum {MIN_ITERATIONS} "
                             f"for {self.mechanism}")
        # ClientFirstMessage.clientFirstMessageBare, as Kafka rebuilds it: the name and nonce, then
        # the extensions (ignored otherwise, as Kafka ignores all but tokenauth).
        self._client_first_bare = f"n={matched['saslname']},r={matched['nonce']}{extensions}"
        self._combined_nonce = matched["nonce"] + secure_random_string()
        salt = base64.b64encode(credential["salt"]).decode("ascii")
        self._server_first = f"r={self._combined_nonce},s={salt},i={credential['iterations']}"
        self._credential, self._authorizing_as = credential, authorizing_as
        return self._server_first.encode("utf-8")

    def _client_final(self, message: str) -> bytes:
        matched = _CLIENT_FINAL.fullmatch(message)
        if matched is None:
            raise SaslError("Invalid SCRAM client final message format")
        if not matched["nonce"].endswith(self._combined_nonce):
            raise SaslError("Invalid client nonce in the final client message.")
        credential = self._credential
        assert credential is not None
        try:
            channel_binding = _b64decode(matched["channel"])
            proof = _b64decode(matched["proof"])
        except binascii.Error:
            raise SaslError("Invalid SCRAM client final message format") from None
        without_proof = f"c={base64.b64encode(channel_binding).decode('ascii')},r={matched['nonce']}"
        auth_message = f"{self._client_first_bare},{self._server_first},{without_proof}".encode("utf-8")
        client_signature = hmac.new(credential["stored_key"], auth_message, self._digest).digest()
        if len(proof) != len(client_signature):
            raise SaslError("Invalid client credentials")
        client_key = bytes(a ^ b for a, b in zip(client_signature, proof))
        if not hmac.compare_digest(self._digest(client_key).digest(), credential["stored_key"]):
            raise SaslError("Invalid client credentials")
        server_signature = hmac.new(credential["server_key"], auth_message, self._digest).digest()
        self.authorization_id = self._authorizing_as
        return ("v=" + base64.b64encode(server_signature).decode("ascii")).encode("utf-8")
