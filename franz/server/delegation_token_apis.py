"""CreateDelegationToken, RenewDelegationToken, ExpireDelegationToken and
DescribeDelegationToken (KafkaApis' token handlers with allowTokenRequests, then ControllerApis
and the DelegationTokenControlManager for the three that change tokens).

Delegation tokens authenticate SASL/SCRAM connections, and a token may only be asked for,
renewed, expired or described over a connection authenticated some other way: Kafka refuses
every token request arriving over PLAINTEXT with DELEGATION_TOKEN_REQUEST_NOT_ALLOWED, before it
looks at anything else, and so every one over SSL from a client without a certificate, and every
one from a connection authenticated with a token. These refusals, and the two below, are the
broker's: their times are -1, the token id and HMAC empty (DelegationTokenManager.ErrorTimestamp).
CreateDelegationToken names the connection's principal (User:ANONYMOUS over PLAINTEXT) as
requester, and as owner unless the request (v3+) names another.

Creation checks, in KafkaApis' order once the listener allows token requests: a token for an
owner other than the requester needs CREATE_TOKENS on the owner's USER resource
(DELEGATION_TOKEN_AUTHORIZATION_FAILED); renewers must be User principals
(INVALID_PRINCIPAL_TYPE). The rest, a broker without `delegation.token.secret.key` answering
DELEGATION_TOKEN_AUTH_DISABLED among it, is the controller's (delegation_token_control_manager).

Describing (handleDescribeTokensRequest): DELEGATION_TOKEN_AUTH_DISABLED without tokens; an
empty owner list lists nothing, a null one every token; a token is listed if one of the owners
named owns it, asked for it or may renew it, and then only to its owner, requester or renewers, or
to a principal with DESCRIBE on the token or DESCRIBE_TOKENS on its owner's USER resource
(DelegationTokenManager.filterToken), with its HMAC.
"""

from __future__ import annotations

from typing import Final

from franz.protocol.errors import Errors
from franz.server.auth_helper import AuthHelper
from franz.server.delegation_token_cache import Principal, principal_string
from franz.server.delegation_token_control_manager import DelegationTokenControlManager
from franz.server.delegation_token_manager import ERROR_TIMESTAMP, filter_token
from franz.server.standard_authorizer import AclOperation, ResourceType

NOT_ALLOWED: Final = Errors.DELEGATION_TOKEN_REQUEST_NOT_ALLOWED


def allow_token_requests(request) -> bool:
    """KafkaApis.allowTokenRequests: never from a token-authenticated connection, over PLAINTEXT,
    nor over one-way SSL (a client without a certificate, ANONYMOUS)."""
    session = request.session
    return not (session.token_authenticated or session.security_protocol == "PLAINTEXT"
                or (session.security_protocol == "SSL" and session.principal == "User:ANONYMOUS"))


def _requester(request) -> Principal:
    session = request.session
    return session.principal_type, session.principal_name if session.principal_name is not None else "ANONYMOUS"


class DelegationTokenApis:
    def __init__(self, tokens: DelegationTokenControlManager) -> None:
        self.tokens = tokens
        self.auth = AuthHelper()  # the broker's, once registered

    def register(self, apis) -> None:
        self.auth = apis.auth
        apis.register("CreateDelegationToken", self.handle_create_token)
        apis.register("RenewDelegationToken", self.handle_renew_token)
        apis.register("ExpireDelegationToken", self.handle_expire_token)
        apis.register("DescribeDelegationToken", self.handle_describe_tokens)

    async def handle_create_token(self, request, body: dict) -> dict:
        requester = owner = _requester(request)
        if body["owner_principal_name"]:
            owner = body["owner_principal_type"], body["owner_principal_name"]
            if owner[0] is None:
                # KafkaApis builds the owner's KafkaPrincipal before checking the listener, and a
                # null type fails it: answered as any handler failure (the request's error answer).
                raise TypeError("Principal type cannot be null")
        renewers = [(renewer["principal_type"], renewer["principal_name"]) for renewer in body["renewers"]]
        error = None
        if not allow_token_requests(request):
            error = NOT_ALLOWED
        elif owner != requester and not self.auth.authorize(request, AclOperation.CREATE_TOKENS, ResourceType.USER,
                                                            principal_string(owner)):
            error = Errors.DELEGATION_TOKEN_AUTHORIZATION_FAILED
        elif any(renewer[0] != "User" for renewer in renewers):
            error = Errors.INVALID_PRINCIPAL_TYPE
        if error is None:
            answer = await self.tokens.create_delegation_token(requester, owner, renewers, body["max_lifetime_ms"])
        else:
            answer = {"error_code": error, "principal_type": owner[0], "principal_name": owner[1],
                      "token_requester_principal_type": requester[0], "token_requester_principal_name": requester[1],
                      "issue_timestamp_ms": ERROR_TIMESTAMP, "expiry_timestamp_ms": ERROR_TIMESTAMP,
                      "max_timestamp_ms": ERROR_TIMESTAMP, "token_id": "", "hmac": b""}
        return {**answer, "throttle_time_ms": 0}

    async def handle_renew_token(self, request, body: dict) -> dict:
        return await self._renew_or_expire(request, self.tokens.renew_delegation_token, body["hmac"],
                                           body["renew_period_ms"])

    async def handle_expire_token(self, request, body: dict) -> dict:
        return await self._renew_or_expire(request, self.tokens.expire_delegation_token, body["hmac"],
                                           body["expiry_time_period_ms"])

    async def _renew_or_expire(self, request, change, token_hmac: bytes, period_ms: int) -> dict:
        if not allow_token_requests(request):
            return {"error_code": NOT_ALLOWED, "expiry_timestamp_ms": ERROR_TIMESTAMP, "throttle_time_ms": 0}
        return {**await change(_requester(request), bytes(token_hmac), period_ms), "throttle_time_ms": 0}

    async def handle_describe_tokens(self, request, body: dict) -> dict:
        if not allow_token_requests(request):
            return {"error_code": NOT_ALLOWED, "tokens": [], "throttle_time_ms": 0}
        if not self.tokens.enabled:
            return {"error_code": Errors.DELEGATION_TOKEN_AUTH_DISABLED, "tokens": [], "throttle_time_ms": 0}
        owners = body["owners"]
        if owners is not None and not owners:  # DescribeDelegationTokenRequest.ownersListEmpty
            return {"error_code": Errors.NONE, "tokens": [], "throttle_time_ms": 0}
        owner_principals = None if owners is None else [(owner["principal_type"], owner["principal_name"])
                                                        for owner in owners]
        requester = _requester(request)

        def authorize_token(token_id: str) -> bool:
            return self.auth.authorize(request, AclOperation.DESCRIBE, ResourceType.DELEGATION_TOKEN, token_id)

        def authorize_requester(owner: Principal) -> bool:
            return self.auth.authorize(request, AclOperation.DESCRIBE_TOKENS, ResourceType.USER,
                                       principal_string(owner))

        tokens = self.tokens.token_manager.get_tokens(
            lambda token: filter_token(requester, owner_principals, token, authorize_token, authorize_requester))
        return {"error_code": Errors.NONE, "throttle_time_ms": 0, "tokens": [{
            "principal_type": token.owner[0], "principal_name": token.owner[1],
            "token_requester_principal_type": token.token_requester[0],
            "token_requester_principal_name": token.token_requester[1],
            "issue_timestamp": token.issue_timestamp, "expiry_timestamp": token.expiry_timestamp,
            "max_timestamp": token.max_timestamp, "token_id": token.token_id, "hmac": token_hmac,
            "renewers": [{"principal_type": renewer[0], "principal_name": renewer[1]} for renewer in token.renewers]}
            for token, token_hmac in tokens]}
