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

from franz.protocol.errors import Errors


class SaslApis:
    def register(self, apis) -> None:
        apis.register("SaslHandshake", self.handle_sasl_handshake)
        apis.register("SaslAuthenticate", self.handle_sasl_authenticate)

    async def handle_sasl_handshake(self, request, body: dict) -> dict:
        authenticator = request.session.authenticator
        if authenticator is None or authenticator.complete:
            return {"error_code": Errors.ILLEGAL_SASL_STATE, "mechanisms": []}
        return await authenticator.handshake(request.api_version, body["mechanism"])

    async def handle_sasl_authenticate(self, request, body: dict) -> dict:
        authenticator = request.session.authenticator
        if authenticator is None or authenticator.complete:
            return {"error_code": Errors.ILLEGAL_SASL_STATE,
                    "error_message": "SaslAuthenticate request received after successful authentication",
                    "auth_bytes": b"", "session_lifetime_ms": 0}
        return await authenticator.authenticate(body["auth_bytes"], request.api_version)
