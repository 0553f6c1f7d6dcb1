"""SaslHandshake and SaslAuthenticate on a PLAINTEXT listener (KafkaApis.handleSaslHandshakeRequest,
handleSaslAuthenticateRequest).

franz listens in PLAINTEXT only. On a SASL listener Kafka's authenticator
consumes these two requests before KafkaApis sees any; on a PLAINTEXT one they
reach KafkaApis, which answers both ILLEGAL_SASL_STATE (no mechanism offered).
A client configured for SASL against franz so fails the way it fails against
such a Kafka listener, with the broker's own error, not an unsupported API.
"""

from __future__ import annotations

from franz.protocol.errors import Errors


class SaslApis:
    def register(self, apis) -> None:
        apis.register("SaslHandshake", self.handle_sasl_handshake)
        apis.register("SaslAuthenticate", self.handle_sasl_authenticate)

    async def handle_sasl_handshake(self, request, body: dict) -> dict:
        return {"error_code": Errors.ILLEGAL_SASL_STATE, "mechanisms": []}

    async def handle_sasl_authenticate(self, request, body: dict) -> dict:
        return {"error_code": Errors.ILLEGAL_SASL_STATE,
                "error_message": "SaslAuthenticate request received after successful authentication",
                "auth_bytes": b"", "session_lifetime_ms": 0}
