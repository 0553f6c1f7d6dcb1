"""The delegation tokens a broker knows (org.apache.kafka.common.security.token.delegation's
TokenInformation and internals.DelegationTokenCache, with DelegationTokenData's record form).

A token is its id (a Kafka Uuid string), its owner, the principal that asked for it, the
principals that may renew it besides the owner, and three times in ms: issued, the latest it may
ever be renewed to (max), and when it expires unless renewed (expiry). Principals are
(type, name) pairs, compared as KafkaPrincipal.equals compares them. Its HMAC is not part of it:
it is derived from the broker's secret key (delegation_token_manager). The cache finds a token by
id and by HMAC (base64), and holds the SCRAM credentials a token-authenticated client is checked
against, one per SCRAM mechanism type, under the token id.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Iterable, Mapping

from franz.server.standard_authorizer import parse_kafka_principal

Principal = tuple[str, str]  # (principal type, name), KafkaPrincipal


def principal_string(principal: Principal) -> str:
    """KafkaPrincipal.toString."""
    return f"{principal[0]}:{principal[1]}"


@dataclasses.dataclass(frozen=True)
class TokenInformation:
    token_id: str
    owner: Principal
    token_requester: Principal
    renewers: tuple[Principal, ...]
    issue_timestamp: int
    max_timestamp: int
    expiry_timestamp: int

    def owner_or_renewer(self, principal: Principal) -> bool:
        """The owner, the requester or a renewer: who may describe the token without an ACL."""
        return principal in (self.owner, self.token_requester) or principal in self.renewers

    def expired(self, now_ms: int) -> bool:
        """Past its max or its expiry (both bounds are still valid times)."""
        return self.max_timestamp < now_ms or self.expiry_timestamp < now_ms

    def to_record(self) -> dict:
        """DelegationTokenData.toRecord: DelegationTokenRecord's fields, principals as strings."""
        return {"owner": principal_string(self.owner), "requester": principal_string(self.token_requester),
                "renewers": [principal_string(renewer) for renewer in self.renewers],
                "issue_timestamp": self.issue_timestamp, "max_timestamp": self.max_timestamp,
                "expiration_timestamp": self.expiry_timestamp, "token_id": self.token_id}

    @classmethod
    def from_record(cls, record: Mapping) -> TokenInformation:
        """DelegationTokenData.fromRecord. Raises ValueError, TypeError or KeyError for a bad one."""
        return cls(str(record["token_id"]), parse_kafka_principal(str(record["owner"])),
                   parse_kafka_principal(str(record["requester"])),
                   tuple(parse_kafka_principal(str(renewer)) for renewer in record["renewers"]),
                   int(record["issue_timestamp"]), int(record["max_timestamp"]), int(record["expiration_timestamp"]))


class DelegationTokenCache:
    def __init__(self) -> None:
        self._tokens: dict[str, TokenInformation] = {}
        # hmac (base64) -> token id, for renewal and expiry, and back, to forget a removed token's
        self._token_id_by_hmac: dict[str, str] = {}
        self._hmac_by_token_id: dict[str, str] = {}
        self._credentials: dict[str, Mapping[int, Mapping]] = {}  # token id -> mechanism type -> credential

    def update_cache(self, token: TokenInformation, hmac_base64: str, credentials: Mapping[int, Mapping]) -> None:
        self._tokens[token.token_id] = token
        self._credentials[token.token_id] = credentials
        self._token_id_by_hmac[hmac_base64] = token.token_id
        self._hmac_by_token_id[token.token_id] = hmac_base64

    def add_token(self, token: TokenInformation) -> None:
        """A kept token's new information (renewed or expiring): its HMAC and credentials stay."""
        self._tokens[token.token_id] = token

    def remove_cache(self, token_id: str) -> None:
        if self._tokens.pop(token_id, None) is not None:
            hmac_base64 = self._hmac_by_token_id.pop(token_id, None)
            if hmac_base64 is not None:
                self._token_id_by_hmac.pop(hmac_base64, None)
        self._credentials.pop(token_id, None)

    def token(self, token_id: str) -> TokenInformation | None:
        return self._tokens.get(token_id)

    def token_id_for_hmac(self, hmac_base64: str) -> str | None:
        return self._token_id_by_hmac.get(hmac_base64)

    def token_for_hmac(self, hmac_base64: str) -> TokenInformation | None:
        token_id = self._token_id_by_hmac.get(hmac_base64)
        return None if token_id is None else self._tokens.get(token_id)

    def tokens(self) -> Iterable[TokenInformation]:
        return list(self._tokens.values())

    def owner(self, token_id: str) -> str | None:
        """The owner's name (not its type), what a token's SCRAM authentication is authorized as."""
        token = self._tokens.get(token_id)
        return None if token is None else token.owner[1]

    def credential(self, mechanism: int, token_id: str) -> Mapping | None:
        return self._credentials.get(token_id, {}).get(mechanism)
