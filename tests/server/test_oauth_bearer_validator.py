"""OAuthBearerValidatorCallbackHandler (KIP-768): Kafka's ClaimValidationUtilsTest,
ValidatorAccessTokenValidatorTest and RefreshingHttpsJwksTest cases, against franz's port."""

from __future__ import annotations

import threading
import time

import pytest

from franz.server.oauth_bearer_jwks import JwksFileVerificationKeyResolver, RefreshingHttpsJwks, \
    RefreshingHttpsJwksVerificationKeyResolver, parse_jwks
from franz.server.oauth_bearer_unsecured_validator import ValidationError
from franz.server.oauth_bearer_validator import (
    OAuthBearerValidator,
    OAuthConfigError,
    SerializedJwt,
    ValidateError,
    create_validator,
    validate_claim_name_override,
    validate_expiration,
    validate_issued_at,
    validate_scopes,
    validate_subject,
    validate_url,
)
from tests.support.oauth_keys import SigningKey, jwks

KEY = SigningKey("key-1")


# -- ClaimValidationUtilsTest ------------------------------------------------------------------

def test_validate_scopes():
    assert validate_scopes("scope", ["a", "b"]) == {"a", "b"}
    assert validate_scopes("scope", ["  a  ", "  b  "]) == {"a", "b"}
    assert validate_scopes("scope", []) == set()


@pytest.mark.parametrize("scopes, message", [
    (["a", "b", "a"], "scope value must not contain duplicates - a already present"),
    (["a", " a "], "scope value must not contain duplicates - a already present"),
    (None, "scope value must be non-null"), (["a", None], "scope value must be non-null"),
    ([""], "scope value must be non-empty"), (["  "], "scope value must not contain only whitespace")])
def test_validate_scopes_refused(scopes, message):
    with pytest.raises(ValidateError, match=f"^{message}$"):
        validate_scopes("scope", scopes)


def test_validate_expiration():
    assert validate_expiration("exp", 1) == 1 and validate_expiration("exp", 0) == 0
    with pytest.raises(ValidateError, match="^exp value must be non-null$"):
        validate_expiration("exp", None)
    with pytest.raises(ValidateError, match='^exp value must be non-negative; value given was "-1"$'):
        validate_expiration("exp", -1)


@pytest.mark.parametrize("check", [validate_subject, validate_claim_name_override])
def test_validate_subject_and_claim_name_override(check):
    assert check("sub", "jdoe") == "jdoe" and check("sub", "  jdoe  ") == "jdoe"
    for value, words in ((None, "be non-null"), ("", "be non-empty"), ("  ", "not contain only whitespace")):
        with pytest.raises(ValidateError, match=f"^sub value must {words}$"):
            check("sub", value)


def test_validate_issued_at():
    assert validate_issued_at("iat", 1) == 1 and validate_issued_at("iat", 0) == 0
    assert validate_issued_at("iat", None) is None
    with pytest.raises(ValidateError, match='^iat value must be null or non-negative; value given was "-1"$'):
        validate_issued_at("iat", -1)


# -- SerializedJwt and ValidatorAccessTokenValidatorTest -----------------------------------------

@pytest.mark.parametrize("token, words", [
    ("", "Empty JWT provided"), ("   ", "Empty JWT provided"),
    ("a.b", "but 2 sections provided"), ("a.b.c.d", "but 4 sections provided"), ("a.b.", "but 2 sections"),
    ("a. .c", "but payload section missing"), (" .b.c", "but header section missing")])
def test_serialized_jwt_malformed(token, words):
    with pytest.raises(ValidateError, match=words):
        SerializedJwt(token)


class _Keys:
    """A resolver over fixed keys (Kafka's tests use a jose4j JwksVerificationKeyResolver)."""

    def __init__(self, *keys: SigningKey) -> None:
        self.keys = parse_jwks(jwks(*keys))

    def init(self) -> None:
        pass

    def close(self) -> None:
        pass

    def resolve_key(self, jws):
        from franz.server.oauth_bearer_jwks import UnresolvableKeyError, select_key
        key = select_key(jws, self.keys)
        if key is None:
            raise UnresolvableKeyError("no key")
        return key


def _validator(*keys: SigningKey, **options) -> OAuthBearerValidator:
    validator = OAuthBearerValidator(_Keys(*(keys or (KEY,))), **options)
    validator.init()
    return validator


def test_valid_token_gives_subject_scope_and_times():
    token = KEY.mint(sub="jdoe", scope="read write")
    result = _validator().validate_token(token)
    assert result.principal_name == "jdoe" and result.scope == {"read write"}
    result = _validator().validate_token(KEY.mint(scope=["read", "write"]))
    assert result.scope == {"read", "write"} and result.lifetime_ms % 1000 == 0 and result.start_time_ms


def test_eddsa_with_an_okp_key():
    """jose4j's EdDsaAlgorithm (alg EdDSA, an OKP key; Java 15+, so every Kafka 4.x)."""
    key = SigningKey("ed-1", "OKP")
    assert key.jwk["kty"] == "OKP" and key.jwk["crv"] == "Ed25519"
    assert _validator(key).validate_token(key.mint(sub="edna")).principal_name == "edna"
    with pytest.raises(ValidateError, match="JWS signature is invalid"):
        _validator(SigningKey("ed-1", "OKP")).validate_token(key.mint())


def test_es256_and_custom_claim_names():
    key = SigningKey("ec-1", "EC")
    result = _validator(key, sub_claim_name="client_id", scope_claim_name="scp").validate_token(
        key.mint(sub=None, client_id="svc", scp="x"))
    assert result.principal_name == "svc" and result.scope == {"x"}


@pytest.mark.parametrize("claims, words", [
    ({"exp": 1}, "The JWT is no longer valid"),
    ({"iat": None}, "No Issued At (iat) claim present."),
    ({"exp": None}, "No Expiration Time (exp) claim present."),
    ({"aud": "kafka"}, "present in the JWT but no expected audience value(s) were provided"),
    ({"sub": None}, "sub value must be non-null"),
    ({"sub": "  "}, "sub value must not contain only whitespace"),
    ({"sub": 5}, "Could not extract the 'sub' claim from the access token"),
    ({"scope": ["a", "a"]}, "scope value must not contain duplicates - a already present")])
def test_invalid_claims(claims, words):
    with pytest.raises(ValidateError) as raised:
        _validator().validate_token(KEY.mint(**claims))
    assert words in str(raised.value)


def test_audience_issuer_and_skew():
    validator = _validator(expected_audiences=["kafka", "other"], expected_issuer="https://idp")
    assert validator.validate_token(KEY.mint(aud=["x", "kafka"], iss="https://idp")).principal_name == "alice"
    for claims, words in (({"iss": "https://idp"}, "No Audience (aud) claim present."),
                          ({"aud": "x", "iss": "https://idp"}, "doesn't contain an acceptable identifier"),
                          ({"aud": "kafka"}, "No Issuer (iss) claim present."),
                          ({"aud": "kafka", "iss": "y"}, "Issuer (iss) claim value (y) doesn't match")):
        with pytest.raises(ValidateError, match=words.replace("(", r"\(").replace(")", r"\)")):
            validator.validate_token(KEY.mint(**claims))
    expired_10s_ago = KEY.mint(lifetime_s=-10, iat=int(time.time()) - 100)
    assert _validator(clock_skew_s=30).validate_token(expired_10s_ago)
    with pytest.raises(ValidateError, match="seconds of leeway"):
        _validator(clock_skew_s=5).validate_token(expired_10s_ago)


def test_signature_key_and_algorithm_refusals():
    other = SigningKey("key-1")  # same kid, another key: the signature does not verify
    with pytest.raises(ValidateError, match="JWS signature is invalid"):
        _validator().validate_token(other.mint())
    with pytest.raises(ValidateError, match="UnresolvableKeyException: no key"):
        _validator().validate_token(SigningKey("key-2").mint())
    header, payload, _ = KEY.mint().split(".")
    import base64
    none = base64.urlsafe_b64encode(b'{"alg":"none"}').rstrip(b"=").decode()
    with pytest.raises(ValidateError, match="'none' is a blocked algorithm"):
        _validator().validate_token(f"{none}.{payload}.c2ln")


def test_handler_answers_invalid_token_and_logs_the_reason(caplog):
    result = _validator().validate(KEY.mint(lifetime_s=-100))
    assert result == ValidationError("invalid_token", None, result.description)
    assert "The JWT is no longer valid" in caplog.text


# -- RefreshingHttpsJwksTest -------------------------------------------------------------------

class _Endpoint:
    def __init__(self, *keys: SigningKey) -> None:
        self.keys = keys
        self.calls = 0
        self.fail = False

    def __call__(self, url: str):
        self.calls += 1
        if self.fail:
            raise OSError("connection refused")
        return parse_jwks(jwks(*self.keys))


def _wait_refreshes(jwks_source: RefreshingHttpsJwks, count: int) -> None:
    with jwks_source._lock:
        assert jwks_source._lock.wait_for(lambda: jwks_source.refresh_count >= count, 30)


def test_init_fetches_and_unknown_kid_refreshes_once_a_minute():
    endpoint = _Endpoint(KEY)
    now = [1_000_000]
    source = RefreshingHttpsJwks("https://idp/jwks", 3_600_000, 0, 0, fetch=endpoint, time_ms=lambda: now[0])
    resolver = RefreshingHttpsJwksVerificationKeyResolver(source)
    validator = OAuthBearerValidator(resolver)
    validator.init()
    try:
        assert endpoint.calls == 1 and validator.validate_token(KEY.mint()).principal_name == "alice"
        rotated = SigningKey("key-2")
        endpoint.keys = (KEY, rotated)
        assert isinstance(validator.validate(rotated.mint()), ValidationError)  # not yet: a refresh starts
        _wait_refreshes(source, 1)
        assert endpoint.calls == 2 and validator.validate_token(rotated.mint()).principal_name == "alice"
        unknown = SigningKey("key-3").mint()
        validator.validate(unknown)
        _wait_refreshes(source, 2)
        validator.validate(unknown)  # within the minute: no refresh
        assert not source.maybe_expedite_refresh("key-3") and endpoint.calls == 3
        now[0] += 60_000
        assert source.maybe_expedite_refresh("key-3")
        _wait_refreshes(source, 3)
        assert not source.maybe_expedite_refresh("k" * 1001)
    finally:
        validator.close()
    assert not source._thread.is_alive()


def test_failed_refresh_keeps_keys_and_failed_init_raises():
    endpoint = _Endpoint(KEY)
    source = RefreshingHttpsJwks("https://idp/jwks", 3_600_000, 0, 0, fetch=endpoint)
    source.init()
    try:
        endpoint.fail = True
        source.refresh()
        assert [key.kid for key in source.json_web_keys()] == ["key-1"]
    finally:
        source.close()
    with pytest.raises(ValueError, match="must be positive"):
        RefreshingHttpsJwks("https://idp/jwks", 0, 0, 0)
    validator = OAuthBearerValidator(RefreshingHttpsJwksVerificationKeyResolver(
        RefreshingHttpsJwks("https://idp/jwks", 1000, 0, 0, fetch=endpoint)))
    with pytest.raises(RuntimeError, match="error when initializing the VerificationKeyResolver: Could not refresh"):
        validator.init()


def test_jwks_file_is_read_again_when_changed(tmp_path):
    path = tmp_path / "jwks.json"
    path.write_text(jwks(KEY))
    validator = OAuthBearerValidator(JwksFileVerificationKeyResolver(str(path)))
    validator.init()
    rotated = SigningKey("key-2")
    assert isinstance(validator.validate(rotated.mint()), ValidationError)
    path.write_text(jwks(rotated))
    import os
    os.utime(path, ns=(1, 1))  # another modification time, whatever the clock's resolution
    assert validator.validate_token(rotated.mint()).principal_name == "alice"


# -- ConfigurationUtils ------------------------------------------------------------------------

@pytest.mark.parametrize("url, words", [
    ("jwks", "that is malformed: no protocol: jwks"), ("gopher://x", "unknown protocol: gopher"),
    ("ftp://x/jwks", 'invalid protocol (ftp); only "http", "https", and "file" protocol are supported'),
    ("https://idp/other", "The URL cannot be accessed due to restrictions. Update the system property "
                          "'org.apache.kafka.sasl.oauthbearer.allowed.urls'"),
    (" ", "value is required")])
def test_validate_url(url, words):
    with pytest.raises(OAuthConfigError) as raised:
        validate_url("sasl.oauthbearer.jwks.endpoint.url", url, {"https://idp/jwks"})
    assert words in str(raised.value) and raised.value.key == "sasl.oauthbearer.jwks.endpoint.url"
    assert validate_url("k", " https://idp/jwks ", {"https://idp/jwks"}) == "https://idp/jwks"


def test_create_validator_reads_settings_and_starts_nothing():
    values = {"sasl.oauthbearer.jwks.endpoint.url": "https://idp/jwks", "sasl.oauthbearer.jwks.endpoint.refresh.ms": 5,
              "sasl.oauthbearer.jwks.endpoint.retry.backoff.ms": 100,
              "sasl.oauthbearer.jwks.endpoint.retry.backoff.max.ms": 10_000, "sasl.oauthbearer.clock.skew.seconds": 7,
              "sasl.oauthbearer.expected.audience": ["a"], "sasl.oauthbearer.expected.issuer": " ",
              "sasl.oauthbearer.scope.claim.name": "scope", "sasl.oauthbearer.sub.claim.name": "sub"}
    before = threading.active_count()
    validator = create_validator(lambda key: (key, values[key]), {"https://idp/jwks"})
    assert threading.active_count() == before
    assert (validator.clock_skew_s, validator.expected_audiences, validator.expected_issuer) == (7, {"a"}, None)
    values["sasl.oauthbearer.jwks.endpoint.retry.backoff.max.ms"] = 1
    with pytest.raises(OAuthConfigError, match=r"retryBackoffMaxMs value \(1\) is less than retryBackoffMs"):
        create_validator(lambda key: (key, values[key]), {"https://idp/jwks"})
