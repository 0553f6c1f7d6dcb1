"""The broker's side of delegation tokens (kafka.server.DelegationTokenManager): each token's HMAC
and the SCRAM credentials derived from it, the tokens a DescribeDelegationToken may list, and what
a token-authenticated SCRAM exchange is checked against (ScramServerCallbackHandler).

A token's HMAC is HmacSHA512 over its id (UTF-8) keyed with `delegation.token.secret.key`
(UTF-8): never stored, it follows from the key, so brokers sharing a key agree on it. Its base64
(with padding) is the password a client authenticates with, the token id its user name; the
credential for each SCRAM mechanism is made of that password as Kafka makes one
(ScramFormatter.generateCredential: a random base-36 salt, 4,096 iterations), once per token.
"""

from __future__ import annotations

import base64
import hashlib
import hmac
from collections.abc import Callable, Mapping
from typing import NamedTuple

from franz.server.delegation_token_cache import DelegationTokenCache, Principal, TokenInformation
from franz.server.scram_control_manager import MECHANISMS, stored_and_server_keys
from franz.server.scram_sasl_server import MIN_ITERATIONS, secure_random_string

ERROR_TIMESTAMP = -1  # DelegationTokenManager.ErrorTimestamp: the times of an answer the broker refused


def create_hmac(token_id: str, secret_key: str) -> bytes:
    """DelegationTokenManager.createHmac."""
    return hmac.new(secret_key.encode("utf-8"), token_id.encode("utf-8"), hashlib.sha512).digest()


def hmac_as_base64(token_hmac: bytes) -> str:
    """DelegationToken.hmacAsBase64String: the token's SCRAM password, and the cache's key."""
    return base64.b64encode(token_hmac).decode("ascii")


def scram_credential(mechanism: int, password: str) -> dict:
    """ScramFormatter.generateCredential(password, mechanism.minIterations)."""
    salt = secure_random_string().encode("ascii")
    digest_name = MECHANISMS[mechanism][1]().name
    salted_password = hashlib.pbkdf2_hmac(digest_name, password.encode("utf-8"), salt, MIN_ITERATIONS)
    stored_key, server_key = stored_and_server_keys(mechanism, salted_password)
    return {"salt": salt, "stored_key": stored_key, "server_key": server_key, "iterations": MIN_ITERATIONS}


def filter_token(requester: Principal, owners: list[Principal] | None, token: TokenInformation,
                 authorize_token: Callable[[str], bool], authorize_requester: Callable[[Principal], bool]) -> bool:
    """DelegationTokenManager.filterToken: whether DescribeDelegationToken lists `token` to
    `requester`. With owners named, only tokens one of them owns, asked for or may renew; then
    the requester's own (as owner, requester or renewer), or one it may DESCRIBE (the token) or
    DESCRIBE_TOKENS (the owner's USER resource)."""
    if owners is not None and not any(token.owner_or_renewer(owner) for owner in owners):
        return False
    return (token.owner_or_renewer(requester) or authorize_token(token.token_id)
            or authorize_requester(token.owner))


class DelegationToken(NamedTuple):
    token_info: TokenInformation
    hmac: bytes


class DelegationTokenManager:
    def __init__(self, secret_key: str | None) -> None:
        """`secret_key`: delegation.token.secret.key; tokens are disabled without one (or an empty one)."""
        self.secret_key = secret_key or None
        self.token_cache = DelegationTokenCache()

    @property
    def enabled(self) -> bool:
        """KafkaConfig.tokenAuthEnabled."""
        return self.secret_key is not None

    def hmac_of(self, token_id: str) -> bytes:
        assert self.secret_key is not None, "delegation tokens are disabled"
        return create_hmac(token_id, self.secret_key)

    def update_token(self, token: TokenInformation) -> None:
        """The token, new or renewed, in the cache. A token's credentials depend on its HMAC
        alone: a renewed one keeps them (Kafka makes new ones, with new salts, nothing a client sees)."""
        if self.token_cache.token(token.token_id) is not None:
            self.token_cache.add_token(token)
            return
        password = hmac_as_base64(self.hmac_of(token.token_id))
        self.token_cache.update_cache(token, password, {mechanism: scram_credential(mechanism, password)
                                                        for mechanism in MECHANISMS})

    def remove_token(self, token_id: str) -> None:
        self.token_cache.remove_cache(token_id)

    def token_for_hmac(self, token_hmac: bytes) -> TokenInformation | None:
        return self.token_cache.token_for_hmac(hmac_as_base64(token_hmac))

    def get_delegation_token(self, token: TokenInformation) -> DelegationToken:
        return DelegationToken(token, self.hmac_of(token.token_id))

    def get_tokens(self, eligible: Callable[[TokenInformation], bool]) -> list[DelegationToken]:
        return [self.get_delegation_token(token) for token in self.token_cache.tokens() if eligible(token)]

    def token_credential(self, token_id: str, mechanism: int) -> tuple[str, Mapping, int] | None:
        """ScramServerCallbackHandler's DelegationTokenCredentialCallback: the owner's name, the
        token's credential for the mechanism type, its expiry; None for a token not kept."""
        owner = self.token_cache.owner(token_id)
        credential = self.token_cache.credential(mechanism, token_id)
        token = self.token_cache.token(token_id)
        if owner is None or credential is None or token is None:
            return None
        return owner, credential, token.expiry_timestamp
