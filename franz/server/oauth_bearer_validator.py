"""Kafka's production OAUTHBEARER validation on a broker (KIP-768): OAuthBearerValidatorCallbackHandler
with ValidatorAccessTokenValidator (BrokerJwtValidator in 4.x), ClaimValidationUtils, SerializedJwt,
and the key resolvers of oauth_bearer_jwks, for a listener whose
`listener.name.<l>.oauthbearer.sasl.server.callback.handler.class` names the handler.

A token is a signed JWT (RFC 7519) checked as jose4j's JwtConsumer checks it for Kafka: an alg
other than "none" (RS*, PS*, ES*, HS* with an "oct" key), a key found in the JWKS by kid, key type,
curve, use and alg (jose4j's VerificationJwkSelector), a valid signature (verified by PyJWT's
algorithms), then the claims: aud (none expected: a token carrying aud is refused, as jose4j
refuses it), iss, exp and iat required, exp and nbf within sasl.oauthbearer.clock.skew.seconds;
then Kafka's own checks of scope, exp, sub and iat (ClaimValidationUtils). A failure is logged at
WARN with its description; the client hears only {"status":"invalid_token"}.

Keys come from sasl.oauthbearer.jwks.endpoint.url: a file: URL is read when the handler starts and
again when the file's modification time changes (Kafka 4.x's CachedFile); an http(s) URL is
fetched when the handler starts (failure stops the broker, as Kafka's KafkaException does), then
every sasl.oauthbearer.jwks.endpoint.refresh.ms on a thread of its own, and at once when a token
names a kid no key has (at most once a minute per kid, 16 kids remembered), retried with
sasl.oauthbearer.jwks.endpoint.retry.backoff.ms doubling up to .max.ms. HTTP never runs on the
event loop: init() is called off it and refreshes run on the refresh thread.
"""

from __future__ import annotations

import datetime
import json
import logging
import os
import time
from collections.abc import Callable, Mapping
from typing import Any, Final
from urllib.parse import unquote, urlsplit

from franz.common.system_properties import system_property
from franz.server.oauth_bearer_jwks import (
    ALGORITHMS,
    JsonWebSignature,
    JwksFileVerificationKeyResolver,
    RefreshingHttpsJwks,
    RefreshingHttpsJwksVerificationKeyResolver,
    UnresolvableKeyError,
    signature_valid,
)
from franz.server.oauth_bearer_unsecured_validator import ValidationError, java_list

logger = logging.getLogger(__name__)

VALIDATOR_CALLBACK_HANDLER_CLASSES: Final = (
    "org.apache.kafka.common.security.oauthbearer.OAuthBearerValidatorCallbackHandler",
    "org.apache.kafka.common.security.oauthbearer.secured.OAuthBearerValidatorCallbackHandler")  # deprecated
ALLOWED_URLS_PROPERTY: Final = "org.apache.kafka.sasl.oauthbearer.allowed.urls"
_JAVA_WHITESPACE: Final = "".join(map(chr, range(33)))  # String.trim()
_JAVA_URL_PROTOCOLS: Final = frozenset(("http", "https", "file", "ftp", "jar", "mailto", "jrt"))


class ValidateError(Exception):
    """ValidateException: the token is refused, for the reason in the message."""


class OAuthConfigError(ValueError):
    """A ConfigException of ConfigurationUtils, with the key and value it is about."""

    def __init__(self, message: str, key: str, value: Any) -> None:
        super().__init__(message)
        self.key = key
        self.value = value


# -- ClaimValidationUtils ----------------------------------------------------------------------

def _validate_string(name: str, value: Any) -> str:
    if value is None:
        raise ValidateError(f"{name} value must be non-null")
    if not isinstance(value, str):  # Kafka's cast of a non-string element: a ClassCastException
        raise ValueError(f"class {type(value).__name__} cannot be cast to class java.lang.String")
    if not value:
        raise ValidateError(f"{name} value must be non-empty")
    value = value.strip(_JAVA_WHITESPACE)
    if not value:
        raise ValidateError(f"{name} value must not contain only whitespace")
    return value


def validate_scopes(scope_claim_name: str, scopes: list[Any] | None) -> frozenset[str]:
    if scopes is None:
        raise ValidateError(f"{scope_claim_name} value must be non-null")
    copy: set[str] = set()
    for scope in scopes:
        scope = _validate_string(scope_claim_name, scope)
        if scope in copy:
            raise ValidateError(f"{scope_claim_name} value must not contain duplicates - {scope} already present")
        copy.add(scope)
    return frozenset(copy)


def validate_expiration(claim_name: str, claim_value: int | None) -> int:
    if claim_value is None:
        raise ValidateError(f"{claim_name} value must be non-null")
    if claim_value < 0:
        raise ValidateError(f'{claim_name} value must be non-negative; value given was "{claim_value}"')
    return claim_value


def validate_subject(claim_name: str, claim_value: Any) -> str:
    return _validate_string(claim_name, claim_value)


def validate_issued_at(claim_name: str, claim_value: int | None) -> int | None:
    if claim_value is not None and claim_value < 0:
        raise ValidateError(f'{claim_name} value must be null or non-negative; value given was "{claim_value}"')
    return claim_value


def validate_claim_name_override(name: str, value: Any) -> str:
    return _validate_string(name, value)


# -- SerializedJwt -----------------------------------------------------------------------------

class SerializedJwt:
    """The token's three sections, checked for presence only."""

    def __init__(self, token: str | None) -> None:
        token = (token or "").strip(_JAVA_WHITESPACE)
        if not token:
            raise ValidateError("Empty JWT provided; expected three sections (header, payload, and signature)")
        splits = token.split(".")
        while splits and not splits[-1]:  # String.split drops trailing empty strings
            splits.pop()
        if len(splits) != 3:
            raise ValidateError(f"Malformed JWT provided ({token}); expected three sections (header, payload, and "
                                f"signature), but {len(splits)} sections provided")
        self.token = token
        self.header, self.payload, self.signature = (
            self._section(split, name) for split, name in zip(splits, ("header", "payload", "signature")))

    @staticmethod
    def _section(section: str, name: str) -> str:
        section = section.strip(_JAVA_WHITESPACE)
        if not section:
            raise ValidateError(f"Malformed JWT provided; expected at least three sections (header, payload, and "
                                f"signature), but {name} section missing")
        return section


# -- ConfigurationUtils and the handler --------------------------------------------------------

def allowed_urls(environ: Mapping[str, str] = os.environ) -> set[str]:
    """The system property org.apache.kafka.sasl.oauthbearer.allowed.urls as franz takes it: a
    -D option of KAFKA_OPTS (where kafka-server-start.sh operators put it), else the environment
    variable of the same name. Unset, nothing is allowed, as in Kafka 4.x."""
    value = system_property(ALLOWED_URLS_PROPERTY, environ)
    if value is None:
        value = environ.get(ALLOWED_URLS_PROPERTY, "")
    return {url.strip(_JAVA_WHITESPACE) for url in value.split(",")}


def validate_url(key: str, value: Any, allowed: set[str]) -> str:
    """ConfigurationUtils.validateUrl: a trimmed http, https or file URL the allow list names."""
    if value is None:
        raise OAuthConfigError(f"The OAuth configuration option {key} value is required", key, value)
    value = str(value).strip(_JAVA_WHITESPACE)
    if not value:
        raise OAuthConfigError(f"The OAuth configuration option {key} value is required", key, value)
    scheme, sep, _ = value.partition(":")
    if not sep or not scheme or not scheme[0].isalpha():
        raise OAuthConfigError(f"The OAuth configuration option {key} contains a URL ({value}) that is malformed: "
                               f"no protocol: {value}", key, value)
    protocol = scheme.lower()
    if protocol not in _JAVA_URL_PROTOCOLS:
        raise OAuthConfigError(f"The OAuth configuration option {key} contains a URL ({value}) that is malformed: "
                               f"unknown protocol: {protocol}", key, value)
    if protocol not in ("http", "https", "file"):
        raise OAuthConfigError(f"The OAuth configuration option {key} contains a URL ({value}) that contains an "
                               f'invalid protocol ({protocol}); only "http", "https", and "file" protocol are '
                               f"supported", key, value)
    if value not in allowed:
        raise OAuthConfigError(f"The URL cannot be accessed due to restrictions. Update the system property "
                               f"'{ALLOWED_URLS_PROPERTY}' to allow the URL to be accessed.", key, value)
    return value


def validate_file(key: str, url: str) -> str:
    """ConfigurationUtils.validateFileUrl: the file a file: URL names, existing and readable."""
    path = os.path.abspath(unquote(urlsplit(url).path))
    if not os.path.exists(path):
        raise OAuthConfigError(f"The OAuth configuration option {key} contains a file ({path}) that doesn't "
                               f"exist", key, url)
    if not os.access(path, os.R_OK):
        raise OAuthConfigError(f"The OAuth configuration option {key} contains a file ({path}) that doesn't have "
                               f"read permission", key, url)
    if os.path.isdir(path):
        raise OAuthConfigError(f"The OAuth configuration option {key} references a directory ({path}), not a "
                               f"file", key, url)
    return path


class BasicOAuthBearerToken:
    def __init__(self, value: str, scope: frozenset[str], lifetime_ms: int, principal_name: str,
                 start_time_ms: int | None) -> None:
        self.value = value
        self.scope = scope
        self.lifetime_ms = lifetime_ms
        self.principal_name = principal_name
        self.start_time_ms = start_time_ms


class OAuthBearerValidator:
    """OAuthBearerValidatorCallbackHandler with its BrokerJwtValidator: validate() answers the
    token or the error the client hears. init() (blocking) before the first validate, close() at
    the end."""

    def __init__(self, resolver: RefreshingHttpsJwksVerificationKeyResolver | JwksFileVerificationKeyResolver,
                 clock_skew_s: int | None = 30, expected_audiences: list[str] | None = None,
                 expected_issuer: str | None = None, scope_claim_name: str = "scope",
                 sub_claim_name: str = "sub", time_s: Callable[[], float] = time.time) -> None:
        self.resolver = resolver
        self.clock_skew_s = clock_skew_s or 0
        self.expected_audiences = set(expected_audiences) if expected_audiences else None
        self.expected_issuer = expected_issuer
        self.scope_claim_name = scope_claim_name
        self.sub_claim_name = sub_claim_name
        self._time_s = time_s
        self._initialized = False

    def init(self) -> None:
        try:
            self.resolver.init()
        except Exception as exc:
            raise RuntimeError(f"The OAuth validator configuration encountered an error when initializing the "
                               f"VerificationKeyResolver: {exc}") from exc
        self._initialized = True

    def close(self) -> None:
        self.resolver.close()

    def validate(self, token_value: str) -> BasicOAuthBearerToken | ValidationError:
        if not self._initialized:
            raise RuntimeError("To use OAuthBearerValidatorCallbackHandler, first call the configure method")
        try:
            return self.validate_token(token_value)
        except ValidateError as exc:
            logger.warning("%s", exc)
            return ValidationError("invalid_token", None, str(exc))

    def validate_token(self, access_token: str) -> BasicOAuthBearerToken:
        serialized = SerializedJwt(access_token)
        claims = self._process(serialized.token)
        scope_raw = claims.get(self.scope_claim_name)
        scopes = [scope_raw] if isinstance(scope_raw, str) else scope_raw if isinstance(scope_raw, list) else []
        sub_raw = claims.get(self.sub_claim_name)
        logger.debug("getClaim - %s: %s", self.scope_claim_name, scope_raw)
        if sub_raw is not None and not isinstance(sub_raw, str):
            raise ValidateError(f"Could not extract the '{self.sub_claim_name}' claim from the access token")
        scope = validate_scopes(self.scope_claim_name, scopes)
        expiration = validate_expiration("exp", _millis(claims.get("exp")))
        sub = validate_subject(self.sub_claim_name, sub_raw)
        issued_at = validate_issued_at("iat", _millis(claims.get("iat")))
        return BasicOAuthBearerToken(access_token, scope, expiration, sub, issued_at)

    def _process(self, token: str) -> dict[str, Any]:
        """JwtConsumer.process: the claims of a token whose signature and standard claims pass."""
        prefix = "Could not validate the access token: "
        try:
            jws = JsonWebSignature(token)
        except (ValueError, UnicodeDecodeError) as exc:
            raise ValidateError(f"{prefix}Unable to process JOSE object (cause: {exc}): {token}") from None
        if jws.alg == "none":
            raise ValidateError(f"{prefix}Unable to process JOSE object (cause: org.jose4j.lang."
                                f"InvalidAlgorithmException: 'none' is a blocked algorithm.): {jws}->{token}")
        if jws.alg not in ALGORITHMS:
            raise ValidateError(f"{prefix}Unable to process JOSE object (cause: org.jose4j.lang."
                                f"InvalidAlgorithmException: {jws.alg} is an unknown, unsupported or unavailable "
                                f"alg algorithm (not one of {java_list(ALGORITHMS)}).): {jws}->{token}")
        try:
            jwk = self.resolver.resolve_key(jws)
        except UnresolvableKeyError as exc:
            raise ValidateError(f"{prefix}Unable to process JOSE object (cause: org.jose4j.lang."
                                f"UnresolvableKeyException: {exc}): {jws}->{token}") from None
        if not signature_valid(jws, jwk):
            raise ValidateError(f"{prefix}JWS signature is invalid: {jws}->{token}")
        try:
            claims = json.loads(jws.payload)
            if not isinstance(claims, dict):
                raise ValueError("not a JSON object")
        except (ValueError, UnicodeDecodeError) as exc:
            raise ValidateError(f"{prefix}Unable to parse what was expected to be the JWT Claim Set JSON: "
                                f"\"{jws.payload!r}\"; {exc}") from None
        errors = [error for error in (self._audience_error(claims), self._issuer_error(claims),
                                      self._date_error(claims)) if error is not None]
        if errors:
            details = ", ".join(f"[{code}] {text}" for code, text in errors)
            raise ValidateError(f"{prefix}JWT (claims->{json.dumps(claims, separators=(',', ':'))}) rejected due to "
                                f"invalid claims or other invalid content. Additional details: [{details}]")
        return claims

    def _audience_error(self, claims: Mapping[str, Any]) -> tuple[int, str] | None:
        """jose4j's AudValidator: required when audiences are expected; refused when none are."""
        if "aud" not in claims:
            return (7, "No Audience (aud) claim present.") if self.expected_audiences else None
        audiences = claims["aud"] if isinstance(claims["aud"], list) else [claims["aud"]]
        if not all(isinstance(audience, str) for audience in audiences):
            return 18, f"The value of the 'aud' claim is not the expected type ({claims['aud']})"
        acceptable = self.expected_audiences or set()
        if any(audience in acceptable for audience in audiences):
            return None
        text = f"Audience (aud) claim {java_list(audiences)}"
        text += (" doesn't contain an acceptable identifier." if acceptable else
                 " present in the JWT but no expected audience value(s) were provided to the JWT Consumer.")
        expected = next(iter(acceptable)) if len(acceptable) == 1 else f"one of {java_list(sorted(acceptable))}"
        return 8, f"{text} Expected {expected} as an aud value."

    def _issuer_error(self, claims: Mapping[str, Any]) -> tuple[int, str] | None:
        if self.expected_issuer is None:
            return None
        issuer = claims.get("iss")
        if issuer is None:
            return 11, "No Issuer (iss) claim present."
        if issuer != self.expected_issuer:
            return 12, f"Issuer (iss) claim value ({issuer}) doesn't match expected value of {self.expected_issuer}"
        return None

    def _date_error(self, claims: Mapping[str, Any]) -> tuple[int, str] | None:
        """jose4j's NumericDateValidator with exp and iat required and Kafka's skew."""
        dates = {}
        for name in ("exp", "iat", "nbf"):
            value = claims.get(name)
            if value is not None and (not isinstance(value, (int, float)) or isinstance(value, bool)):
                return 18, f"The value of the '{name}' claim is not the expected type ({value!r})"
            dates[name] = None if value is None else int(value)  # NumericDate: whole seconds
        exp, iat, nbf = dates["exp"], dates["iat"], dates["nbf"]
        if exp is None:
            return 2, "No Expiration Time (exp) claim present."
        if iat is None:
            return 3, "No Issued At (iat) claim present."
        now = int(self._time_s())
        skew = self.clock_skew_s
        leeway = f" (even when providing {skew} seconds of leeway to account for clock skew)." if skew > 0 else "."
        if now - skew >= exp:
            return 1, (f"The JWT is no longer valid - the evaluation time {_numeric_date(now)} is on or after the "
                       f"Expiration Time (exp={_numeric_date(exp)}) claim value{leeway}")
        if nbf is not None and now + skew < nbf:
            return 6, (f"The JWT is not yet valid as the evaluation time {_numeric_date(now)} is before the Not "
                       f"Before (nbf={_numeric_date(nbf)}) claim time{leeway}")
        if exp < iat:
            return 18, (f"The Expiration Time (exp={_numeric_date(exp)}) claim value cannot be before the Issued At "
                        f"(iat={_numeric_date(iat)}) claim value.")
        return None


def _millis(seconds: Any) -> int | None:
    """NumericDate.getValueInMillis of a claim jose4j accepted."""
    return None if seconds is None else int(seconds) * 1000


def _numeric_date(seconds: int) -> str:
    """NumericDate.toString (the date in the English, UTC, long style)."""
    try:
        when = datetime.datetime.fromtimestamp(seconds, datetime.timezone.utc)
        return f"NumericDate{{{seconds} -> {when.strftime('%b %-d, %Y, %-I:%M:%S %p')} UTC}}"
    except (OverflowError, OSError, ValueError):
        return f"NumericDate{{{seconds}}}"


def create_validator(setting: Callable[[str], tuple[str, Any]],
                     allowed: set[str] | None = None) -> OAuthBearerValidator:
    """VerificationKeyResolverFactory and the validator factory: the handler from a listener's
    sasl.oauthbearer.* settings (`setting(name)` is (the key it came from, typed value)), checked
    now; OAuthConfigError naming the key. Nothing is fetched or read until init()."""
    url_key, url = setting("sasl.oauthbearer.jwks.endpoint.url")
    url = validate_url(url_key, url, allowed_urls() if allowed is None else allowed)
    resolver: RefreshingHttpsJwksVerificationKeyResolver | JwksFileVerificationKeyResolver
    if url.lower().startswith("file:"):
        resolver = JwksFileVerificationKeyResolver(validate_file(url_key, url))
    else:
        refresh_key, refresh_ms = setting("sasl.oauthbearer.jwks.endpoint.refresh.ms")
        if refresh_ms <= 0:  # Kafka: at least 0 by ConfigurationUtils, then positive by RefreshingHttpsJwks
            raise OAuthConfigError("JWKS validation key refresh configuration value retryWaitMs value must be "
                                   "positive", refresh_key, refresh_ms)
        backoff_key, backoff_ms = setting("sasl.oauthbearer.jwks.endpoint.retry.backoff.ms")
        backoff_max_key, backoff_max_ms = setting("sasl.oauthbearer.jwks.endpoint.retry.backoff.max.ms")
        # Retry's checks, which Kafka makes at the first refresh (and then never refreshes)
        if backoff_ms < 0:
            raise OAuthConfigError(f"retryBackoffMs value ({backoff_ms}) must be non-negative", backoff_key,
                                   backoff_ms)
        if backoff_max_ms < 0 or backoff_max_ms < backoff_ms:
            raise OAuthConfigError(f"retryBackoffMaxMs value ({backoff_max_ms}) must be non-negative"
                                   if backoff_max_ms < 0 else f"retryBackoffMaxMs value ({backoff_max_ms}) is less "
                                   f"than retryBackoffMs value ({backoff_ms})", backoff_max_key, backoff_max_ms)
        resolver = RefreshingHttpsJwksVerificationKeyResolver(
            RefreshingHttpsJwks(url, refresh_ms, backoff_ms, backoff_max_ms))

    def string(name: str, required: bool) -> str | None:
        key, value = setting(name)
        value = None if value is None else str(value).strip(_JAVA_WHITESPACE) or None
        if value is None and required:
            raise OAuthConfigError(f"The OAuth configuration option {key} value is required", key, value)
        return value
    _, audiences = setting("sasl.oauthbearer.expected.audience")
    _, clock_skew_s = setting("sasl.oauthbearer.clock.skew.seconds")
    return OAuthBearerValidator(resolver, clock_skew_s, audiences, string("sasl.oauthbearer.expected.issuer", False),
                                string("sasl.oauthbearer.scope.claim.name", True) or "scope",
                                string("sasl.oauthbearer.sub.claim.name", True) or "sub")
