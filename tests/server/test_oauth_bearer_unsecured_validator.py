"""The unsecured JWS and its validation, with the cases of Kafka's OAuthBearerUnsecuredJwsTest,
OAuthBearerValidationUtilsTest, OAuthBearerScopeUtilsTest and
OAuthBearerUnsecuredValidatorCallbackHandlerTest, and the messages Kafka writes."""

from __future__ import annotations

import base64
import json

import pytest

from franz.server.oauth_bearer_unsecured_validator import (
    OAuthBearerConfigError,
    OAuthBearerIllegalTokenError,
    OAuthBearerUnsecuredJws,
    OAuthBearerUnsecuredValidator,
    ValidationError,
    parse_scope,
    to_map,
    validate_claim_for_existence_and_type,
    validate_expiration_time,
    validate_issued_at,
    validate_scope,
    validate_time_consistency,
)

NOW_MS = 1_700_000_000_123


def b64url(text: str | bytes) -> str:
    data = text.encode("utf-8") if isinstance(text, str) else text
    return base64.urlsafe_b64encode(data).rstrip(b"=").decode("ascii")


def jws(claims: dict | str, header: dict | str = '{"alg":"none"}') -> str:
    as_text = [value if isinstance(value, str) else json.dumps(value) for value in (header, claims)]
    return f"{b64url(as_text[0])}.{b64url(as_text[1])}."


def parsed(claims: dict | str, principal: str = "sub", scope: str = "scope") -> OAuthBearerUnsecuredJws:
    return OAuthBearerUnsecuredJws(jws(claims), principal, scope)


def failure(action) -> str:
    with pytest.raises(OAuthBearerIllegalTokenError) as raised:
        action()
    return str(raised.value)


# -- OAuthBearerUnsecuredJwsTest ---------------------------------------------------------------

def test_valid_claims():
    token = parsed('{"sub":"SUBJECT","iat":100.1,"exp":300.3}')
    assert (token.principal_claim_name, token.scope_claim_name, token.header) == ("sub", "scope", {"alg": "none"})
    assert (token.expiration_time(), token.issued_at(), token.subject()) == (300.3, 100.1, "SUBJECT")
    assert token.is_claim_type("exp", float) and not token.is_claim_type("exp", str)
    assert (token.lifetime_ms, token.start_time_ms) == (300300, 100100)


def test_valid_compact_serialization():
    value = jws({"sub": "foo", "iat": 100, "exp": 3700, "scope": ["scopeValue1", "scopeValue2"]})
    token = OAuthBearerUnsecuredJws(value, "sub", "scope")
    assert token.value == value and token.splits == value.split(".")[:2] + [""]
    assert len(token.claims) == 4 and token.principal_name == "foo" and token.lifetime_ms == 3_700_000
    assert token.claims["scope"] == ["scopeValue1", "scopeValue2"]
    assert token.scope == {"scopeValue1", "scopeValue2"}


@pytest.mark.parametrize("claims, message", [
    ({"iat": 100, "scope": ["a"]}, "No expiration time in JWT"),  # missingPrincipal: no exp either
    ({"iat": 100, "exp": 3700}, "No principal name in JWT claim: sub"),
    ({"sub": "   ", "exp": 3700}, "No principal name in JWT claim: sub"),  # blankPrincipalName
    ({"sub": 1, "exp": 3700}, "The 'sub' claim was not of type String: Integer"),
    ({"sub": "a", "exp": "3700"}, "The 'exp' claim was not of type Number: String"),
    ({"sub": "a", "exp": 3700, "iat": [1]}, "The 'iat' claim was not of type Number: ArrayList"),
    ({"sub": "a", "exp": 3700, "scope": 2**40}, "The 'scope' claim was not of type List: Long"),
])
def test_a_token_of_the_wrong_shape_is_illegal(claims, message):
    assert failure(lambda: parsed(claims)) == message


@pytest.mark.parametrize("value, message", [
    ("a..b.", "Malformed compact serialization contains '..'"),
    (jws({"sub": "a", "exp": 1}) + "sig", "Unsecured JWS must not contain a digital signature"),
    (jws({"sub": "a", "exp": 1})[:-1], "Unsecured JWS compact serializations must have 3 dot-separated "
                                       "Base64URL-encoded values"),
    (jws({"sub": "a", "exp": 1}, '{"alg":"HS256"}'), "Unsecured JWS must have 'none' for an algorithm"),
    ("e30+." + b64url("{}") + ".", "malformed Base64 URL encoded value"),  # '+' is not base64url
    ("e30." + b64url("{}")[:1] + "X.", "malformed JSON"),
    ("e30." + b64url("{") + ".", "malformed JSON"),
    ("e30." + b64url('{"exp": NaN}') + ".", "malformed JSON"),
])
def test_a_malformed_compact_serialization_is_illegal(value, message):
    assert failure(lambda: OAuthBearerUnsecuredJws(value, "sub", "scope")) == message


def test_a_header_without_alg_fails_as_kafkas_null_pointer():
    with pytest.raises(KeyError):
        OAuthBearerUnsecuredJws(jws({"sub": "a", "exp": 1}, "{}"), "sub", "scope")


def test_sections_are_read_as_jackson_reads_them():
    assert to_map(b64url('{"a":1} trailing')) == {"a": 1}  # what follows the first value is ignored
    assert to_map(b64url("[1, 2]")) == {} and to_map("") == {}  # no members
    assert to_map(b64url('{"a":[1,"x",true,null,{}],"b":false,"c":null,"d":{"e":1},"f":2.5}')) == {
        "a": ["1", "x", "true", "null", ""], "b": "false", "c": "null", "d": "", "f": 2.5}
    assert to_map(b64url('{"a":"\u00e9"}'.encode("utf-16"))) == {"a": "\u00e9"}
    encoded = b64url('{"sub":"a>>>___<<<---"}')  # KAFKA-17089: base64url, with or without padding
    assert "-" in encoded or "_" in encoded
    assert to_map(encoded) == to_map(encoded + "=" * (-len(encoded) % 4)) == {"sub": "a>>>___<<<---"}
    for wrong in (encoded + "=" * (4 - len(encoded) % 4 + 1), "a", "ab=c"):
        assert failure(lambda: to_map(wrong)) == "malformed Base64 URL encoded value"


def test_a_string_scope_is_one_item_and_blank_items_are_dropped():
    assert parsed({"sub": "a", "exp": 1, "scope": " read write "}).scope == {"read write"}
    assert parsed({"sub": "a", "exp": 1, "scope": "  "}).scope == set()
    assert parsed({"sub": "a", "exp": 1, "roles": ["x", " ", " y "]}, scope="roles").scope == {"x", "y"}


# -- OAuthBearerValidationUtilsTest ------------------------------------------------------------

@pytest.mark.parametrize("value, required, success", [
    (None, True, False), (None, False, True), ("foo", True, True), ("foo", False, True), (1, True, False),
    (1, False, False)])
def test_validate_claim_for_existence_and_type(value, required, success):
    claims = {"exp": 100, "sub": "principalName", **({} if value is None else {"foo": value})}
    result = validate_claim_for_existence_and_type(parsed(claims), required, "foo", str)
    assert result.success is success and result.failure_scope is None
    if not success:
        assert result.failure_description == ("Required claim missing: foo" if value is None else
                                              "The foo claim had the incorrect type: Integer")


@pytest.mark.parametrize("exists", [True, False])
@pytest.mark.parametrize("required", [True, False])
@pytest.mark.parametrize("skew_ms", [0, 5, 10, 20])
@pytest.mark.parametrize("offset_ms", [-10, 0, 10])
def test_validate_issued_at(exists, required, skew_ms, offset_ms):
    now = NOW_MS / 1000
    token = parsed({"exp": now, "sub": "principalName", **({"iat": now} if exists else {})})
    result = validate_issued_at(token, required, NOW_MS + offset_ms, skew_ms)
    if not exists:
        assert result.success is not required
    else:
        assert result.success is not (now * 1000 > NOW_MS + offset_ms + skew_ms)
        if not result.success:
            assert result.failure_description == (
                f"The Issued At value ({now:f} seconds) was after the indicated time ({NOW_MS + offset_ms} ms) "
                f"plus allowable clock skew ({skew_ms} ms)")


@pytest.mark.parametrize("skew_ms", [0, 5, 10, 20])
@pytest.mark.parametrize("offset_ms", [-10, 0, 10])
def test_validate_expiration_time(skew_ms, offset_ms):
    now = NOW_MS / 1000
    result = validate_expiration_time(parsed({"exp": now, "sub": "principalName"}), NOW_MS + offset_ms, skew_ms)
    assert result.success is not (NOW_MS + offset_ms - skew_ms >= now * 1000)
    if not result.success:
        assert result.failure_description == (
            f"The indicated time ({NOW_MS + offset_ms} ms) minus allowable clock skew ({skew_ms} ms) was on or after "
            f"the Expiration Time value ({now:f} seconds)")
    with pytest.raises(OAuthBearerConfigError, match="^Allowable clock skew must not be negative: -1$"):
        validate_expiration_time(parsed({"exp": now, "sub": "principalName"}), NOW_MS, -1)


def test_validate_expiration_time_and_issued_at_consistency():
    now = NOW_MS / 1000
    assert validate_time_consistency(parsed({"exp": now, "sub": "p"})).success
    for offset in (-1, 0, 1):
        result = validate_time_consistency(parsed({"iat": now, "exp": now + offset, "sub": "p"}))
        assert result.success is (offset > 0)
    assert validate_time_consistency(parsed({"iat": 2, "exp": 1, "sub": "p"})).failure_description == (
        "The Expiration Time time (1.000000 seconds) was not after the Issued At time (2.000000 seconds)")


@pytest.mark.parametrize("actual", [None, [], ["scope1"], ["scope1", "scope2"]])
@pytest.mark.parametrize("required", [None, [], ["scope1"], ["scope1", "scope2"]])
def test_validate_scope(actual, required):
    token = parsed({"exp": 1, "sub": "p", **({} if actual is None else {"scope": actual})})
    result = validate_scope(token, required)
    missing = [item for item in required or [] if item not in (actual or [])]
    assert result.success is not missing
    if missing:
        assert result.failure_scope == "[" + ", ".join(required) + "]"
        assert result.failure_description == (
            f"The provided scope ([{', '.join(actual or [])}]) was missing a required scope ({missing[0]}).  "
            f"All required scope elements: [{', '.join(required)}]")


# -- OAuthBearerScopeUtilsTest -----------------------------------------------------------------

def test_parse_scope():
    assert parse_scope(" scope1  scope2 ") == ["scope1", "scope2"] and parse_scope("") == []
    with pytest.raises(OAuthBearerConfigError, match=r'^Invalid scope value: a"b$'):
        parse_scope('a"b')


# -- OAuthBearerUnsecuredValidatorCallbackHandlerTest ------------------------------------------

NO_SCOPE_REQUIRED = {"unsecuredValidatorPrincipalClaimName": "principal",
                     "unsecuredValidatorAllowableClockSkewMs": "1"}
LIFETIME_S = 1000 * 60 * 60


def validated(claims: dict, options: dict) -> OAuthBearerUnsecuredJws | ValidationError:
    return OAuthBearerUnsecuredValidator(options, lambda: NOW_MS).validate(jws(claims))


@pytest.mark.parametrize("with_issued_at", [True, False])
def test_valid_token(with_issued_at):
    claims = {"principal": "username", "exp": NOW_MS / 1000 + LIFETIME_S,
              **({"iat": NOW_MS / 1000} if with_issued_at else {})}
    token = validated(claims, NO_SCOPE_REQUIRED)
    assert isinstance(token, OAuthBearerUnsecuredJws) and token.principal_name == "username"


@pytest.mark.parametrize("claims", [{"exp": NOW_MS / 1000 + LIFETIME_S, "principal": 1},
                                    {"exp": NOW_MS / 1000 + LIFETIME_S}])
def test_bad_or_missing_principal(claims):
    assert validated(claims, NO_SCOPE_REQUIRED).status == "invalid_token"


def test_too_early_expiration_time():
    error = validated({"principal": "username", "iat": NOW_MS / 1000, "exp": NOW_MS / 1000}, NO_SCOPE_REQUIRED)
    assert (error.status, error.scope) == ("invalid_token", None)
    expired = validated({"principal": "username", "exp": NOW_MS / 1000 - 60}, NO_SCOPE_REQUIRED)
    assert (expired.status, expired.description) == ("invalid_token", (
        f"The indicated time ({NOW_MS} ms) minus allowable clock skew (1 ms) was on or after the Expiration Time "
        f"value ({NOW_MS / 1000 - 60:f} seconds)"))


def test_includes_required_scope():
    claims = {"sub": "username", "exp": NOW_MS / 1000 + LIFETIME_S, "scope": "scope1"}
    assert isinstance(validated(claims, {"unsecuredValidatorRequiredScope": "scope1"}), OAuthBearerUnsecuredJws)


def test_missing_required_scope():
    claims = {"sub": "username", "exp": NOW_MS / 1000 + LIFETIME_S, "scope": "scope1"}
    error = validated(claims, {"unsecuredValidatorRequiredScope": "scope1 scope2"})
    assert (error.status, error.scope) == ("insufficient_scope", "[scope1, scope2]")


def test_the_validators_options():
    validator = OAuthBearerUnsecuredValidator({"unsecuredValidatorPrincipalClaimName": "  ",
                                               "unsecuredValidatorAllowableClockSkewMs": " +7 "})
    assert (validator.principal_claim_name, validator.allowable_clock_skew_ms) == ("sub", 7)
    for skew, message in (("x", 'For input string: "x"'), ("2147483648", 'For input string: "2147483648"'),
                          ("-5", "Allowable clock skew millis must not be negative: -5")):
        with pytest.raises(OAuthBearerConfigError) as refused:
            OAuthBearerUnsecuredValidator({"unsecuredValidatorAllowableClockSkewMs": skew})
        assert str(refused.value) == message
