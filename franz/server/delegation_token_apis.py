"""CreateDelegationToken, RenewDelegationToken, ExpireDelegationToken and
DescribeDelegationToken (KafkaApis.allowTokenRequests, and the token manager behind it).

Delegation tokens authenticate SASL/SCRAM connections, and a token may only
be asked for over a connection authenticated some other way: Kafka refuses
every token request arriving over PLAINTEXT with
DELEGATION_TOKEN_REQUEST_NOT_ALLOWED, before it looks at anything else, and so
every one over SSL from a client without a certificate. Over SASL, or SSL with a
client certificate, the request is allowed, and answered as a Kafka broker without
`delegation.token.secret.key` answers it, DELEGATION_TOKEN_AUTH_DISABLED: franz
keeps no tokens. CreateDelegationToken names the connection's principal
(User:ANONYMOUS over PLAINTEXT) as requester, and as owner unless the request
(v3+) names another. Timestamps are -1 and the token id and HMAC empty, as in
Kafka's error answers.

Authorization (ControllerApis, KafkaApis.handleDescribeTokensRequest): a token for
an owner other than the requester needs CREATE_TOKENS on the owner's USER
resource (DELEGATION_TOKEN_AUTHORIZATION_FAILED), asked once the listener allows
token requests and before the token manager is reached. Describing filters the
tokens kept by DESCRIBE on each token or DESCRIBE_TOKENS on its owner; with no
token kept there is nothing to filter, and renewal and expiry are the owner's or
a renewer's, judged by the token manager, which is disabled.
"""

from __future__ import annotations

from typing import Final

from franz.protocol.errors import Errors
from franz.server.auth_helper import AuthHelper
from franz.server.standard_authorizer import AclOperation, ResourceType

NOT_ALLOWED: Final = Errors.DELEGATION_TOKEN_REQUEST_NOT_ALLOWED


def _refusal(request) -> Errors:
    """allowTokenRequests: never over PLAINTEXT, nor over one-way SSL (a client without a
    certificate, ANONYMOUS); else the token manager is disabled."""
    session = request.session
    if session.security_protocol == "PLAINTEXT" or (session.security_protocol == "SSL"
                                                     and session.principal == "User:ANONYMOUS"):
        return NOT_ALLOWED
    return Errors.DELEGATION_TOKEN_AUTH_DISABLED


class DelegationTokenApis:
    def __init__(self) -> None:
        self.auth = AuthHelper()  # the broker's, once registered

    def register(self, apis) -> None:
        self.auth = apis.auth
        apis.register("CreateDelegationToken", self.handle_create_token)
        apis.register("RenewDelegationToken", self.handle_renew_or_expire_token)
        apis.register("ExpireDelegationToken", self.handle_renew_or_expire_token)
        apis.register("DescribeDelegationToken", self.handle_describe_tokens)

    async def handle_create_token(self, request, body: dict) -> dict:
        session = request.session
        requester = (session.principal_type,
                     session.principal_name if session.principal_name is not None else "ANONYMOUS")
        owner_type, owner_name = requester
        if body["owner_principal_name"]:
            owner_type, owner_name = body["owner_principal_type"], body["owner_principal_name"]
            if owner_type is None:
                # KafkaApis builds the owner's KafkaPrincipal before checking the listener, and a
                # null type fails it: answered as any handler failure (the request's error answer).
                raise TypeError("Principal type cannot be null")
        error = _refusal(request)
        if (error != NOT_ALLOWED and (owner_type, owner_name) != requester
                and not self.auth.authorize(request, AclOperation.CREATE_TOKENS, ResourceType.USER,
                                            f"{owner_type}:{owner_name}")):
            error = Errors.DELEGATION_TOKEN_AUTHORIZATION_FAILED
        return {"error_code": error, "principal_type": owner_type, "principal_name": owner_name,
                "token_requester_principal_type": requester[0], "token_requester_principal_name": requester[1],
                "issue_timestamp_ms": -1, "expiry_timestamp_ms": -1, "max_timestamp_ms": -1, "token_id": "",
                "hmac": b"", "throttle_time_ms": 0}

    async def handle_renew_or_expire_token(self, request, body: dict) -> dict:
        return {"error_code": _refusal(request), "expiry_timestamp_ms": -1, "throttle_time_ms": 0}

    async def handle_describe_tokens(self, request, body: dict) -> dict:
        return {"error_code": _refusal(request), "tokens": [], "throttle_time_ms": 0}
