"""SaslHandshake and SaslAuthenticate (KafkaApis.handleSaslHandshakeRequest,
handleSaslAuthenticateRequest, and SaslServerAuthenticator before them).

On a SASL_PLAINTEXT listener the connection's authenticator takes both until it
has authenticated (sasl_server_authenticator). Once authenticated, and on a
PLAINTEXT listener, they reach what Kafka's KafkaApis answers: ILLEGAL_SASL_STATE
(no mechanism offered there). A client configured for SASL against a PLAINTEXT
listener so fails the way it fails against such a Kafka listener, with the
broker's own error, not an unsupported API.
"""

from __future__ import annotations

import logging

from franz.protocol.codec import encode_response
from franz.protocol.errors import Errors
from franz.server.request_channel import Response

logger = logging.getLogger(__name__)


def _answer(request, body: dict) -> Response:
    """The authenticator's answer; a failure's closes the connection once it is sent."""
    response = Response(encode_response(request.api_key, request.api_version, request.correlation_id, body))
    if body["error_code"] != Errors.NONE:
        response.close_after = True
        reason = body.get("error_message") or f"{Errors(body['error_code']).name}: {body.get('mechanisms')}"
        logger.info("Failed authentication with /%s (channelId=%s) (%s)", request.client_address[0],
                    request.connection_id, reason)
    return response


class SaslApis:
    def register(self, apis) -> None:
        apis.register("SaslHandshake", self.handle_sasl_handshake)
        apis.register("SaslAuthenticate", self.handle_sasl_authenticate)

    async def handle_sasl_handshake(self, request, body: dict) -> dict | Response:
        authenticator = request.session.authenticator
        if authenticator is None or authenticator.complete:
            return {"error_code": Errors.ILLEGAL_SASL_STATE, "mechanisms": []}
        answer = await authenticator.handshake(request.api_version, body["mechanism"])
        return _answer(request, answer)

    async def handle_sasl_authenticate(self, request, body: dict) -> dict | Response:
        authenticator = request.session.authenticator
        if authenticator is None or authenticator.complete:
            return {"error_code": Errors.ILLEGAL_SASL_STATE,
                    "error_message": "SaslAuthenticate request received after successful authentication",
                    "auth_bytes": b"", "session_lifetime_ms": 0}
        answer = await authenticator.authenticate(body["auth_bytes"])
        if authenticator.complete:
            request.session.principal_name = authenticator.principal_name
        return _answer(request, answer)
