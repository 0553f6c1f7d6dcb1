"""What an SSL or SASL_SSL listener's connections need (Kafka's SslChannelBuilder and the SSL part
of SaslChannelBuilder): the listener's server SSLContext, the TLS handshake's time bound, and
for SSL the principal of a client certificate (DefaultKafkaPrincipalBuilder: `User:` and the
subject's distinguished name as ssl.principal.mapping.rules map it; ANONYMOUS without one).

KafkaChannel runs the handshake once the server's connection quotas took the connection up, as
Kafka's Selector handshakes a registered channel: a connection is counted, and reaped when idle,
from its accept; a handshake is bounded by TLS_HANDSHAKE_TIMEOUT_S within connections.max.idle.ms,
and one that fails is logged as Kafka's Selector logs a failed authentication.
"""

from __future__ import annotations

import ssl
from dataclasses import dataclass

from cryptography import x509

from franz.common.ssl_principal_mapper import SslPrincipalMapper, distinguished_name

# asyncio's default bound of a TLS handshake (Kafka's is connections.max.idle.ms alone)
TLS_HANDSHAKE_TIMEOUT_S = 60.0


@dataclass(frozen=True)
class SslListenerConfig:
    context: ssl.SSLContext
    principal_mapper: SslPrincipalMapper


def peer_principal_name(ssl_object: ssl.SSLObject | None, mapper: SslPrincipalMapper) -> str:
    """The principal name of the client that completed this handshake; NoMatchingRule (a
    ValueError) when no rule maps its certificate's name."""
    encoded = ssl_object.getpeercert(binary_form=True) if ssl_object is not None else None
    if not encoded:
        return "ANONYMOUS"
    return mapper.name(distinguished_name(x509.load_der_x509_certificate(encoded)))
