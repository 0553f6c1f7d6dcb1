"""Kafka's default OAUTHBEARER token validation on a broker: OAuthBearerUnsecuredValidatorCallbackHandler
with the classes it leans on (OAuthBearerUnsecuredJws, OAuthBearerValidationUtils, OAuthBearerScopeUtils,
OAuthBearerValidationResult), used when no sasl.server.callback.handler.class is configured.

A token is an unsecured JWS (RFC 7515, alg "none"): three dot-separated base64url sections, a JSON
header whose alg is "none", a JSON claim set, an empty signature. Nothing is signed, so anyone can
name any principal: Kafka ships it for development, and so does franz. The checks run in Kafka's
order and fail with its descriptions: the principal claim (`sub`, or the JAAS option
unsecuredValidatorPrincipalClaimName) is a non-blank string; `exp` is a number of seconds not yet
reached, `iat` (optional) one not in the future, both within unsecuredValidatorAllowableClockSkewMs;
exp is after iat; the scope claim (`scope`, or unsecuredValidatorScopeClaimName: one string, or a
list of strings) holds every item of unsecuredValidatorRequiredScope. A client hears only the
status (invalid_token; insufficient_scope with the required scope); the description is logged.

JSON is read as Kafka's Jackson reads it: the first value of the text (what follows is ignored), a
root that is not an object has no members, numbers stay numbers, an array becomes a list of its
elements' texts, any other value its text ("true", "null"; "" for an object). Sections are decoded
base64url, with or without padding, as Kafka decodes them since KAFKA-17089 (4.1; before, the plain
base64 alphabet refused '-' and '_').

Invariant: validate() either returns a token whose principal name is a non-blank string, or raises
OAuthBearerIllegalTokenError with a failed OAuthBearerValidationResult. Option values are checked
once, when the validator is made (OAuthBearerConfigError with Kafka's message): Kafka reads them at
every authentication and drops the connection of a client it cannot validate for a bad one.
"""

from __future__ import annotations

import base64
import dataclasses
import json
import logging
import math
import re
import time
from collections.abc import Callable, Mapping
from typing import Any, Final

logger = logging.getLogger(__name__)

PRINCIPAL_CLAIM_NAME_OPTION: Final = "unsecuredValidatorPrincipalClaimName"
SCOPE_CLAIM_NAME_OPTION: Final = "unsecuredValidatorScopeClaimName"
REQUIRED_SCOPE_OPTION: Final = "unsecuredValidatorRequiredScope"
ALLOWABLE_CLOCK_SKEW_MILLIS_OPTION: Final = "unsecuredValidatorAllowableClockSkewMs"
_INDIVIDUAL_SCOPE_ITEM: Final = re.compile(r"[\x23-\x5B\x5D-\x7E\x21]+")  # RFC 6749 section 3.3
_JAVA_INT: Final = re.compile(r"[+-]?[0-9]+")
_JAVA_WHITESPACE: Final = "".join(map(chr, range(33)))  # String.trim(): every char <= ' '
_JSON_WHITESPACE: Final = " \t\n\r"
_BASE64URL: Final = re.compile("[A-Za-z0-9_-]*")  # java.util.Base64.getUrlDecoder's alphabet


class OAuthBearerConfigError(Exception):
    """OAuthBearerConfigException: a JAAS option Kafka cannot use."""


@dataclasses.dataclass(frozen=True)
class OAuthBearerValidationResult:
    """Success, or a failure with its description and, for a missing scope, the scope to report."""
    success: bool
    failure_description: str | None = None
    failure_scope: str | None = None
    failure_open_id_config: str | None = None

    def throw_exception_if_failed(self) -> None:
        if not self.success:
            raise OAuthBearerIllegalTokenError(self)


SUCCESS: Final = OAuthBearerValidationResult(True)


def _failure(description: str, scope: str | None = None) -> OAuthBearerValidationResult:
    return OAuthBearerValidationResult(False, description, scope)


class OAuthBearerIllegalTokenError(Exception):
    """OAuthBearerIllegalTokenException: the token failed validation for `reason`."""

    def __init__(self, reason: OAuthBearerValidationResult) -> None:
        assert not reason.success
        super().__init__(reason.failure_description)
        self.reason = reason


def is_blank(text: str | None) -> bool:
    """Utils.isBlank."""
    return text is None or not text.strip(_JAVA_WHITESPACE)


def java_type_name(value: Any) -> str:
    """The simple class name Jackson's value has in Java, for Kafka's messages."""
    if isinstance(value, str):
        return "String"
    if isinstance(value, list):
        return "ArrayList"
    if isinstance(value, float):
        return "Double"
    if -2**31 <= value < 2**31:
        return "Integer"
    return "Long" if -2**63 <= value < 2**63 else "BigInteger"


def java_list(items) -> str:
    """AbstractCollection.toString."""
    return "[" + ", ".join(items) + "]"


def _text(value: Any) -> str:
    """JsonNode.asText() of a JSON value as json.loads returns it."""
    if isinstance(value, str):
        return value
    if value is None or isinstance(value, bool):
        return json.dumps(value)
    if isinstance(value, (int, float)):
        return repr(value)
    return ""  # an object or an array


def _convert(value: Any) -> Any:
    """OAuthBearerUnsecuredJws.convert: a list of texts, a number, or a text."""
    if isinstance(value, list):
        return [_text(element) for element in value]
    if isinstance(value, (int, float)) and not isinstance(value, bool):
        return value
    return _text(value)


def _refuse_constant(name: str) -> Any:
    raise ValueError(f"Non-standard token '{name}'")  # Jackson allows no NaN or Infinity by default


def to_map(split: str) -> dict[str, Any]:
    """OAuthBearerUnsecuredJws.toMap: a base64url section's JSON object as claim name -> value."""
    body = split.rstrip("=")
    padding = len(split) - len(body)
    if _BASE64URL.fullmatch(body) is None or len(body) % 4 == 1 or padding and (len(body) + padding) % 4:
        raise OAuthBearerIllegalTokenError(_failure("malformed Base64 URL encoded value"))
    decoded = base64.urlsafe_b64decode(body + "=" * (-len(body) % 4))
    try:
        text = decoded.decode(json.detect_encoding(decoded)).lstrip(_JSON_WHITESPACE)
        if not text:  # Jackson: a MissingNode, no members
            return {}
        root, _ = json.JSONDecoder(parse_constant=_refuse_constant).raw_decode(text)
    except ValueError:  # also UnicodeDecodeError
        raise OAuthBearerIllegalTokenError(_failure("malformed JSON")) from None
    if not isinstance(root, dict):
        return {}
    return {name: _convert(value) for name, value in root.items()}


class OAuthBearerUnsecuredJws:
    """An unsecured JWS parsed and checked for shape (OAuthBearerUnsecuredJws's constructor):
    OAuthBearerIllegalTokenError for a malformed one; a KeyError for a header without alg, where
    Kafka fails on a NullPointerException."""

    def __init__(self, compact_serialization: str, principal_claim_name: str, scope_claim_name: str) -> None:
        self.value = compact_serialization
        if ".." in compact_serialization:
            raise OAuthBearerIllegalTokenError(_failure("Malformed compact serialization contains '..'"))
        splits = compact_serialization.split(".")
        while splits and not splits[-1]:  # String.split drops trailing empty strings
            splits.pop()
        if compact_serialization.endswith("."):
            splits.append("")
        if len(splits) != 3:
            raise OAuthBearerIllegalTokenError(_failure(
                "Unsecured JWS compact serializations must have 3 dot-separated Base64URL-encoded values"))
        self.splits = splits
        self.header = to_map(splits[0])
        self.claims = to_map(splits[1])
        if "alg" not in self.header:
            raise KeyError("JWS header must have an Algorithm value")
        if self.header["alg"] != "none":
            raise OAuthBearerIllegalTokenError(_failure("Unsecured JWS must have 'none' for an algorithm"))
        if splits[2]:
            raise OAuthBearerIllegalTokenError(_failure("Unsecured JWS must not contain a digital signature"))
        self.principal_claim_name = principal_claim_name.strip(_JAVA_WHITESPACE)
        if not self.principal_claim_name:
            raise ValueError("Must specify a non-blank principal claim name")
        self.scope_claim_name = scope_claim_name.strip(_JAVA_WHITESPACE)
        if not self.scope_claim_name:
            raise ValueError("Must specify a non-blank scope claim name")
        self.scope = self._calculate_scope()
        expiration_time = self.expiration_time()
        if expiration_time is None:
            raise OAuthBearerIllegalTokenError(_failure("No expiration time in JWT"))
        self.lifetime_ms = _claim_time_ms(expiration_time)
        principal_name = self.claim(self.principal_claim_name, str)
        if is_blank(principal_name):
            raise OAuthBearerIllegalTokenError(_failure(f"No principal name in JWT claim: {self.principal_claim_name}"))
        self.principal_name: str = principal_name
        issued_at = self.issued_at()
        self.start_time_ms = None if issued_at is None else _claim_time_ms(issued_at)

    def is_claim_type(self, claim_name: str, kind: type) -> bool:
        value = self.claims.get(claim_name)
        return value is not None and _is_type(value, kind)

    def claim(self, claim_name: str, kind: type) -> Any:
        """The claim, None if absent; OAuthBearerIllegalTokenError if it is not of kind (str,
        float for a number, list)."""
        value = self.claims.get(claim_name)
        if value is not None and not _is_type(value, kind):
            kind_name = {str: "String", float: "Number", list: "List"}[kind]
            raise OAuthBearerIllegalTokenError(_failure(
                f"The '{claim_name}' claim was not of type {kind_name}: {java_type_name(value)}"))
        return value

    def expiration_time(self) -> float | int | None:
        return self.claim("exp", float)

    def issued_at(self) -> float | int | None:
        return self.claim("iat", float)

    def subject(self) -> str | None:
        return self.claim("sub", str)

    def _calculate_scope(self) -> frozenset[str]:
        if self.is_claim_type(self.scope_claim_name, str):
            value = self.claims[self.scope_claim_name]
            return frozenset() if is_blank(value) else frozenset([value.strip(_JAVA_WHITESPACE)])
        items = self.claim(self.scope_claim_name, list) or []
        return frozenset(item.strip(_JAVA_WHITESPACE) for item in items if not is_blank(item))


def _is_type(value: Any, kind: type) -> bool:
    return isinstance(value, (int, float)) if kind is float else isinstance(value, kind)


def _claim_time_ms(seconds: float) -> int:
    """Math.round(seconds * 1000), saturating as Java's does."""
    millis = float(seconds) * 1000
    if math.isnan(millis):
        return 0
    return max(-2**63, min(2**63 - 1, math.floor(millis + 0.5))) if math.isfinite(millis) else (
        2**63 - 1 if millis > 0 else -2**63)


# -- OAuthBearerValidationUtils ----------------------------------------------------------------

def validate_claim_for_existence_and_type(jwt: OAuthBearerUnsecuredJws, required: bool, claim_name: str,
                                          *allowed_types: type) -> OAuthBearerValidationResult:
    value = jwt.claims.get(claim_name)
    if value is None:
        return _failure(f"Required claim missing: {claim_name}") if required else SUCCESS
    if any(_is_type(value, kind) for kind in allowed_types):
        return SUCCESS
    return _failure(f"The {claim_name} claim had the incorrect type: {java_type_name(value)}")


def _time_claim(jwt: OAuthBearerUnsecuredJws, claim_name: str, required: bool) -> float | OAuthBearerValidationResult:
    """A time claim's seconds, or the result when it is absent or not a number."""
    try:
        value = jwt.claim(claim_name, float)
    except OAuthBearerIllegalTokenError as exc:
        return exc.reason
    if value is None:
        return _failure(f"Required claim missing: {claim_name}") if required else SUCCESS
    return float(value)


def validate_issued_at(jwt: OAuthBearerUnsecuredJws, required: bool, when_check_time_ms: int,
                       allowable_clock_skew_ms: int) -> OAuthBearerValidationResult:
    value = _time_claim(jwt, "iat", required)
    if isinstance(value, OAuthBearerValidationResult):
        return value
    if 1000 * value > when_check_time_ms + _confirm_non_negative(allowable_clock_skew_ms):
        return _failure(f"The Issued At value ({value:f} seconds) was after the indicated time "
                        f"({when_check_time_ms} ms) plus allowable clock skew ({allowable_clock_skew_ms} ms)")
    return SUCCESS


def validate_expiration_time(jwt: OAuthBearerUnsecuredJws, when_check_time_ms: int,
                             allowable_clock_skew_ms: int) -> OAuthBearerValidationResult:
    value = _time_claim(jwt, "exp", True)
    if isinstance(value, OAuthBearerValidationResult):
        return value
    if when_check_time_ms - _confirm_non_negative(allowable_clock_skew_ms) >= 1000 * value:
        return _failure(f"The indicated time ({when_check_time_ms} ms) minus allowable clock skew "
                        f"({allowable_clock_skew_ms} ms) was on or after the Expiration Time value "
                        f"({value:f} seconds)")
    return SUCCESS


def validate_time_consistency(jwt: OAuthBearerUnsecuredJws) -> OAuthBearerValidationResult:
    try:
        issued_at, expiration_time = jwt.issued_at(), jwt.expiration_time()
    except OAuthBearerIllegalTokenError as exc:
        return exc.reason
    if expiration_time is not None and issued_at is not None and float(expiration_time) <= float(issued_at):
        return _failure(f"The Expiration Time time ({float(expiration_time):f} seconds) was not after the Issued "
                        f"At time ({float(issued_at):f} seconds)")
    return SUCCESS


def validate_scope(token: OAuthBearerUnsecuredJws, required_scope: list[str] | None) -> OAuthBearerValidationResult:
    if not required_scope:
        return SUCCESS
    for item in required_scope:
        if item not in token.scope:
            # the token's scope is a HashSet in Kafka, printed in its hash order; sorted here
            return _failure(f"The provided scope ({java_list(sorted(token.scope))}) was missing a required scope "
                            f"({item}).  All required scope elements: {java_list(required_scope)}",
                            java_list(required_scope))
    return SUCCESS


def _confirm_non_negative(allowable_clock_skew_ms: int) -> int:
    if allowable_clock_skew_ms < 0:
        raise OAuthBearerConfigError(f"Allowable clock skew must not be negative: {allowable_clock_skew_ms}")
    return allowable_clock_skew_ms


# -- OAuthBearerScopeUtils ---------------------------------------------------------------------

def parse_scope(space_delimited_scope: str) -> list[str]:
    """The items of a space-delimited scope; OAuthBearerConfigError for one RFC 6749 refuses."""
    items = []
    for item in space_delimited_scope.split(" "):
        if item:
            if _INDIVIDUAL_SCOPE_ITEM.fullmatch(item) is None:
                raise OAuthBearerConfigError(f"Invalid scope value: {item}")
            items.append(item)
    return items


# -- OAuthBearerUnsecuredValidatorCallbackHandler ----------------------------------------------

@dataclasses.dataclass(frozen=True)
class ValidationError:
    """What OAuthBearerValidatorCallback.error() records: the client's status and scope."""
    status: str
    scope: str | None
    description: str | None


class OAuthBearerUnsecuredValidator:
    """The handler, configured with the OAUTHBEARER JAAS entry's options."""

    def __init__(self, options: Mapping[str, str], time_ms: Callable[[], int] | None = None) -> None:
        def option(name: str, default: str) -> str:
            value = options.get(name)
            return default if is_blank(value) else value.strip(_JAVA_WHITESPACE)

        self.principal_claim_name = option(PRINCIPAL_CLAIM_NAME_OPTION, "sub")
        self.scope_claim_name = option(SCOPE_CLAIM_NAME_OPTION, "scope")
        self.required_scope = parse_scope(option(REQUIRED_SCOPE_OPTION, ""))
        skew = option(ALLOWABLE_CLOCK_SKEW_MILLIS_OPTION, "0")
        if _JAVA_INT.fullmatch(skew) is None or not -2**31 <= int(skew) < 2**31:  # Integer.parseInt
            raise OAuthBearerConfigError(f'For input string: "{skew}"')
        if int(skew) < 0:
            raise OAuthBearerConfigError(f"Allowable clock skew millis must not be negative: "
                                         f"{options[ALLOWABLE_CLOCK_SKEW_MILLIS_OPTION]}")
        self.allowable_clock_skew_ms = int(skew)
        self._time_ms = time_ms or (lambda: time.time_ns() // 1_000_000)

    def validate(self, token_value: str) -> OAuthBearerUnsecuredJws | ValidationError:
        """The token, or the error the client is to hear. KeyError and ValueError escape as Kafka's
        NullPointerException and IllegalArgumentException do."""
        try:
            return self._validate(token_value)
        except OAuthBearerIllegalTokenError as exc:
            reason = exc.reason
            logger.debug("Token validation failed: %s", reason.failure_description)
            status = "insufficient_scope" if reason.failure_scope is not None else "invalid_token"
            return ValidationError(status, reason.failure_scope, reason.failure_description)

    def _validate(self, token_value: str) -> OAuthBearerUnsecuredJws:
        jwt = OAuthBearerUnsecuredJws(token_value, self.principal_claim_name, self.scope_claim_name)
        now_ms = self._time_ms()
        skew_ms = self.allowable_clock_skew_ms
        validate_claim_for_existence_and_type(jwt, True, self.principal_claim_name, str).throw_exception_if_failed()
        validate_issued_at(jwt, False, now_ms, skew_ms).throw_exception_if_failed()
        validate_expiration_time(jwt, now_ms, skew_ms).throw_exception_if_failed()
        validate_time_consistency(jwt).throw_exception_if_failed()
        validate_scope(jwt, self.required_scope).throw_exception_if_failed()
        logger.info("Successfully validated token with principal %s: %s", jwt.principal_name, _java_map(jwt.claims))
        return jwt


def _java_map(claims: Mapping[str, Any]) -> str:
    """AbstractMap.toString, for the log line Kafka writes."""
    return "{" + ", ".join(f"{name}={java_list(value) if isinstance(value, list) else value}"
                           for name, value in claims.items()) + "}"


# -- the broker's own login (OAuthBearerUnsecuredLoginCallbackHandler) -------------------------

_LOGIN_CLAIM_PREFIXES: Final = {"unsecuredLoginStringClaim_": "String", "unsecuredLoginNumberClaim_": "Double",
                                "unsecuredLoginListClaim_": "ArrayList"}
_LOGIN_EXTENSION_PREFIX: Final = "unsecuredLoginExtension_"
_JAVA_DOUBLE: Final = re.compile(r"[+-]?(NaN|Infinity|([0-9]+\.?[0-9]*|\.[0-9]+)([eE][+-]?[0-9]+)?[fFdD]?)")
EXTENSION_KEY: Final = re.compile("[A-Za-z]+")  # OAuthBearerClientInitialResponse's KEY and VALUE
EXTENSION_VALUE: Final = re.compile(r"[\x21-\x7E \t\r\n]+")


def check_unsecured_login(options: Mapping[str, str]) -> None:
    """A Kafka broker logs in with the listener's OAUTHBEARER JAAS entry at startup, making its own
    token from the unsecuredLogin* options of the same entry; it does not start when that fails
    (LoginException), so neither does franz: OAuthBearerConfigError with Kafka's words and cause.
    An entry without options logs in without a token. Note that an entry whose only options are
    unsecuredValidator* ones names no subject and so fails, in Kafka as here."""
    if not options:
        return
    token_failure = "An internal error occurred while retrieving token from callback handler: "
    if all(name.startswith(_LOGIN_EXTENSION_PREFIX) for name in options):
        raise OAuthBearerConfigError(token_failure + "Extensions provided in login context without a token")
    lifetime = options.get("unsecuredLoginLifetimeSeconds", "3600")
    if _JAVA_INT.fullmatch(lifetime) is None or not -2**63 <= int(lifetime) < 2**63:  # Long.parseLong
        raise OAuthBearerConfigError(f'{token_failure}For input string: "{lifetime}"')
    kinds: dict[str, tuple[str, str]] = {}  # claim -> (its type's Java name, value)
    for name, value in options.items():
        for prefix, kind in _LOGIN_CLAIM_PREFIXES.items():
            if name.startswith(prefix) and len(name) > len(prefix):
                claim = name[len(prefix):]
                if claim in ("iat", "exp"):
                    raise OAuthBearerConfigError(f"{token_failure}Cannot explicitly set the '{claim}' claim")
                if kind == "Double" and _JAVA_DOUBLE.fullmatch(value.strip(_JAVA_WHITESPACE)) is None:
                    raise OAuthBearerConfigError(f'{token_failure}For input string: "{value}"')  # Double.valueOf
                kinds[claim] = (kind, value)
                break
    scope_claim = options.get("unsecuredLoginScopeClaimName")
    scope_claim = "scope" if is_blank(scope_claim) else scope_claim.strip(_JAVA_WHITESPACE)
    if kinds.get(scope_claim, ("List",))[0] == "Double":
        raise OAuthBearerConfigError(f"{token_failure}The '{scope_claim}' claim was not of type List: Double")
    principal_claim = options.get("unsecuredLoginPrincipalClaimName")
    principal_claim = "sub" if is_blank(principal_claim) else principal_claim.strip(_JAVA_WHITESPACE)
    kind, value = kinds.get(principal_claim, ("String", ""))
    if kind != "String":
        raise OAuthBearerConfigError(f"{token_failure}The '{principal_claim}' claim was not of type String: {kind}")
    if is_blank(value):
        raise OAuthBearerConfigError(f"{token_failure}No principal name in JWT claim: {principal_claim}")
    for name, value in options.items():  # SaslExtensionsCallback: validateExtensions
        if name.startswith(_LOGIN_EXTENSION_PREFIX):
            extension = name[len(_LOGIN_EXTENSION_PREFIX):]
            extension_failure = "An internal error occurred while retrieving SASL extensions from callback handler: "
            if extension == "auth" or EXTENSION_KEY.fullmatch(extension) is None:
                raise OAuthBearerConfigError(f"{extension_failure}Extension name {extension} is invalid")
            if EXTENSION_VALUE.fullmatch(value) is None:
                raise OAuthBearerConfigError(f"{extension_failure}Extension value ({value}) for extension "
                                             f"{extension} is invalid")
