"""The `kafka.*` security options of the `franz` data source, as Spark's Kafka source takes them.

Spark hands its `kafka.`-prefixed options to the Java client, so a query reads from or
writes to a secured listener with the Java client's settings:

- `kafka.security.protocol`: PLAINTEXT (the default), SSL, SASL_PLAINTEXT or SASL_SSL;
- `kafka.sasl.mechanism` (PLAIN, SCRAM-SHA-256 or SCRAM-SHA-512) and `kafka.sasl.jaas.config`
  (PlainLoginModule or ScramLoginModule with username and password). GSSAPI, the Java client's
  default mechanism, and OAUTHBEARER are refused, naming the option;
- `kafka.ssl.truststore.*` and `kafka.ssl.keystore.*` (JKS, PKCS12 or PEM, as the Java client
  reads them) and `kafka.ssl.endpoint.identification.algorithm` ("https" by default: the
  broker's certificate must name the host; empty: it need not).

options.py reads them on the driver, so a bad one fails the query before a job starts, naming
the option, into a ClientSecurity: what a task needs to connect (credentials, PEM certificates
and key), shipped with its reader. The sink's librdkafka producer takes the same options through
the same translation (options.producer_settings); the source's own client (kafka_client) wraps
its socket in TLS and authenticates with SaslHandshake v1 and SaslAuthenticate v2 (SCRAM through
scramp's client) before its first request.
"""

from __future__ import annotations

import dataclasses
import os
import socket
import ssl
import tempfile
from collections.abc import Callable
from typing import Final

from franz.protocol.errors import Errors, error_name

PROTOCOLS: Final = ("PLAINTEXT", "SSL", "SASL_PLAINTEXT", "SASL_SSL")
MECHANISMS: Final = ("PLAIN", "SCRAM-SHA-256", "SCRAM-SHA-512")
SASL_HANDSHAKE, SASL_AUTHENTICATE = 17, 36


class AuthenticationError(RuntimeError):
    """The broker refused the credentials (its message), or the exchange could not complete."""


@dataclasses.dataclass(frozen=True)
class ClientSecurity:
    """What a connection needs: TLS (the CAs to trust, a client certificate), SASL credentials."""

    protocol: str = "PLAINTEXT"
    mechanism: str | None = None
    username: str | None = None
    password: str | None = None
    ca_pem: str | None = None
    certificate_pem: str | None = None
    key_pem: str | None = None
    check_hostname: bool = True

    def secure(self, sock: socket.socket, host: str) -> socket.socket:
        """The connection TLS-wrapped (SSL, SASL_SSL), or as it is."""
        if self.protocol not in ("SSL", "SASL_SSL"):
            return sock
        context = ssl.create_default_context(cadata=self.ca_pem)  # no trust store: the system's CAs
        context.check_hostname = self.check_hostname
        if self.certificate_pem is not None and self.key_pem is not None:
            _load_client_certificate(context, self.certificate_pem, self.key_pem)
        try:
            return context.wrap_socket(sock, server_hostname=host)
        except ssl.SSLError as exc:
            sock.close()
            raise AuthenticationError(f"TLS handshake with {host} failed: {exc}") from None

    def authenticate(self, request: Callable[[int, int, dict], dict]) -> None:
        """SASL before any other request, for SASL_PLAINTEXT and SASL_SSL."""
        if self.mechanism is None:
            return
        handshake = request(SASL_HANDSHAKE, 1, {"mechanism": self.mechanism})
        if handshake["error_code"] != Errors.NONE:
            raise AuthenticationError(f"The broker refused SASL mechanism {self.mechanism} "
                                      f"({error_name(handshake['error_code'])}; it enables "
                                      f"{', '.join(handshake['mechanisms'])})")
        if self.mechanism == "PLAIN":
            _step(request, f"\0{self.username}\0{self.password}".encode())
            return
        from scramp import ScramClient  # noqa: PLC0415 - only SCRAM connections need it
        scram = ScramClient([self.mechanism], self.username, self.password)
        scram.set_server_first(_step(request, scram.get_client_first().encode()).decode())
        final = _step(request, scram.get_client_final().encode()).decode()
        try:
            scram.set_server_final(final)
        except Exception as exc:  # noqa: BLE001 - scramp's ScramException: the broker could not prove the key
            raise AuthenticationError(f"The broker's SCRAM signature is wrong: {exc}") from None


def _step(request: Callable[[int, int, dict], dict], token: bytes) -> bytes:
    answer = request(SASL_AUTHENTICATE, 2, {"auth_bytes": token})
    if answer["error_code"] != Errors.NONE:
        raise AuthenticationError(answer["error_message"] or error_name(answer["error_code"]))
    return answer["auth_bytes"]


def _load_client_certificate(context: ssl.SSLContext, certificate_pem: str, key_pem: str) -> None:
    """ssl reads a certificate chain and key only from files: one private file, gone once read."""
    descriptor, path = tempfile.mkstemp(suffix=".pem")  # mode 0600
    try:
        with os.fdopen(descriptor, "w") as file:
            file.write(key_pem + certificate_pem)
        context.load_cert_chain(path)
    finally:
        os.unlink(path)
