"""DelegationTokenManager: the HMAC as the JDK's HmacSHA512 computes it, the describe filter
(DelegationTokenManagerTest.testDescribeToken), and a token's SCRAM credential, which a client
holding the token id and HMAC authenticates with (ScramServerCallbackHandler's token branch)."""

from __future__ import annotations

import base64
import hashlib
import hmac
from collections.abc import Callable

from franz.server.delegation_token_cache import TokenInformation
from franz.server.delegation_token_manager import DelegationTokenManager, create_hmac, filter_token, hmac_as_base64
from franz.server.scram_sasl_server import ScramSaslServer

OWNER1, OWNER2, OWNER3, OWNER4, OWNER5 = (("User", f"owner{n}") for n in range(1, 6))
RENEWER1, RENEWER2, RENEWER3, RENEWER4 = (("User", f"renewer{n}") for n in range(1, 5))
REQUESTER1, UNKNOWN = ("User", "requester1"), ("User", "unknown")


def test_the_hmac_is_the_jdks_hmacsha512_of_the_token_id():
    """javax.crypto.Mac HmacSHA512, key "secretKey", over a Kafka Uuid string, in base64."""
    expected = "T5RKHtxO5rA2hbdLzXTDCzrR3hGr1C/UU43Zb7ZAQRHX1ALNr2hIJeeXwxvPmviBr8Jc4LiVF+3Sf/8m/7DiCQ=="
    assert hmac_as_base64(create_hmac("MtHnjkT6R3y6Jq9QRq8h0Q", "secretKey")) == expected


def _token(token_id: str, owner, renewers, requester=None) -> TokenInformation:
    return TokenInformation(token_id, owner, requester or owner, tuple(renewers), 0, 3_600_000, 3_600_000)


def test_describe_token_filter():
    """testDescribeToken: the tokens each requester sees, for the owners it names, before and
    after a DESCRIBE ACL on a token (the callbacks stand for the authorizer)."""
    manager = DelegationTokenManager("secretKey")
    for token in (_token("token1", OWNER1, [RENEWER1, RENEWER2]), _token("token2", OWNER2, [RENEWER3]),
                  _token("token3", OWNER3, [RENEWER4]), _token("token4", OWNER4, [OWNER1, RENEWER4]),
                  _token("token5", OWNER5, [RENEWER1], requester=REQUESTER1)):
        manager.update_token(token)
    may_describe: set[tuple[tuple[str, str], str]] = set()  # (principal, token id) with DESCRIBE

    def described(requester, owners) -> list[str]:
        if owners is not None and not owners:  # KafkaApis: an empty owner list lists nothing
            return []
        return sorted(token.token_info.token_id for token in manager.get_tokens(lambda token: filter_token(
            requester, owners, token, lambda token_id: (requester, token_id) in may_describe, lambda owner: False)))

    assert described(OWNER1, [UNKNOWN]) == []
    assert described(OWNER1, []) == []
    assert described(OWNER1, [OWNER1]) == ["token1", "token4"]
    assert described(OWNER1, None) == ["token1", "token4"]
    assert described(UNKNOWN, None) == []
    assert described(OWNER1, [OWNER1, RENEWER4]) == ["token1", "token4"]
    assert described(REQUESTER1, [OWNER5]) == ["token5"]
    may_describe.add((OWNER1, "token3"))
    assert described(OWNER1, [OWNER1, RENEWER4]) == ["token1", "token3", "token4"]
    assert described(RENEWER4, [RENEWER4]) == ["token3", "token4"]
    assert described(RENEWER2, [RENEWER2, RENEWER3]) == ["token1"]
    may_describe.add((RENEWER2, "token2"))
    assert described(RENEWER2, [RENEWER2, RENEWER3]) == ["token1", "token2"]


def test_describe_tokens_on_an_owner_lists_its_tokens():
    """DESCRIBE_TOKENS on the owner's USER resource shows its tokens, among those of the owners named."""
    token = _token("token2", OWNER2, [RENEWER3])
    assert not filter_token(OWNER1, None, token, lambda token_id: False, lambda owner: False)
    assert filter_token(OWNER1, None, token, lambda token_id: False, lambda owner: owner == OWNER2)
    assert not filter_token(OWNER1, [OWNER3], token, lambda token_id: True, lambda owner: True)


def token_scram_exchange(evaluate: Callable[[bytes], bytes], token_id: str, password: str, mechanism: str) -> bytes:
    """Kafka's ScramSaslClient with tokenauth=true (its extensions after the nonce), against a
    SCRAM server's `evaluate`: its final answer."""
    digest = {"SCRAM-SHA-256": hashlib.sha256, "SCRAM-SHA-512": hashlib.sha512}[mechanism]
    bare = f"n={token_id},r=clientnonce,tokenauth=true"
    server_first = evaluate(f"n,,{bare}".encode()).decode()
    fields = dict(item.split("=", 1) for item in server_first.split(","))
    salted = hashlib.pbkdf2_hmac(digest().name, password.encode(), base64.b64decode(fields["s"]), int(fields["i"]))
    client_key = hmac.new(salted, b"Client Key", digest).digest()
    without_proof = f"c=biws,r={fields['r']}"
    auth_message = f"{bare},{server_first},{without_proof}".encode()
    signature = hmac.new(digest(client_key).digest(), auth_message, digest).digest()
    proof = base64.b64encode(bytes(a ^ b for a, b in zip(client_key, signature))).decode()
    return evaluate(f"{without_proof},p={proof}".encode())


def test_a_client_with_the_token_id_and_hmac_authenticates_as_the_owner_with_either_mechanism():
    manager = DelegationTokenManager("secretKey")
    token = TokenInformation("MtHnjkT6R3y6Jq9QRq8h0Q", ("User", "alice"), ("User", "admin"), (), 10, 30, 20)
    manager.update_token(token)
    password = hmac_as_base64(create_hmac(token.token_id, "secretKey"))
    for mechanism in ("SCRAM-SHA-256", "SCRAM-SHA-512"):
        server = ScramSaslServer(mechanism, lambda user, kind: None, manager.token_credential)
        assert token_scram_exchange(server.evaluate, token.token_id, password, mechanism).startswith(b"v=")
        assert (server.authorization_id, server.token_authenticated, server.credential_lifetime_ms) == (
            "alice", True, 20)


def test_a_renewed_token_keeps_its_credential_and_a_removed_one_has_none():
    manager = DelegationTokenManager("secretKey")
    token = TokenInformation("id", ("User", "alice"), ("User", "alice"), (), 10, 30, 20)
    manager.update_token(token)
    owner, credential, expiry = manager.token_credential("id", 2)
    assert (owner, expiry, credential["iterations"]) == ("alice", 20, 4096)
    assert credential["salt"].isalnum()  # ScramFormatter.secureRandomBytes: a base-36 string's bytes
    manager.update_token(TokenInformation("id", ("User", "alice"), ("User", "alice"), (), 10, 30, 25))
    assert manager.token_credential("id", 2) == ("alice", credential, 25)
    manager.remove_token("id")
    assert manager.token_credential("id", 2) is None
    assert manager.token_for_hmac(create_hmac("id", "secretKey")) is None


def test_no_key_or_an_empty_one_disables_tokens():
    assert not DelegationTokenManager(None).enabled
    assert not DelegationTokenManager("").enabled
    assert DelegationTokenManager("k").enabled
