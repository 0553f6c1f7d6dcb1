"""A listener's ssl.* settings as DefaultSslEngineFactory reads them: every key store kind gives
a context that serves a TLS client, and each combination Kafka refuses is refused naming its key."""

from __future__ import annotations

import contextlib
import shutil
import socket
import ssl
import subprocess
import threading

import pytest
from cryptography import x509

from franz.common.config_def import ConfigError
from franz.common.default_ssl_engine_factory import TLS13_SUITES, DefaultSslEngineFactory, _openssl_name
from tests.support.tls import (PASSWORD, CertificateAuthority, client_name, write_jks, write_keytool_trust_store,
                               write_pem_key_store, write_pkcs12)

DEFAULTS = {"ssl.protocol": "TLSv1.3", "ssl.enabled.protocols": ["TLSv1.2", "TLSv1.3"], "ssl.cipher.suites": [],
            "ssl.keystore.type": "JKS", "ssl.keystore.location": None, "ssl.keystore.password": None,
            "ssl.key.password": None, "ssl.keystore.key": None, "ssl.keystore.certificate.chain": None,
            "ssl.truststore.type": "JKS", "ssl.truststore.location": None, "ssl.truststore.password": None,
            "ssl.truststore.certificates": None, "ssl.client.auth": "none"}


def context(**settings) -> ssl.SSLContext:
    values = {**DEFAULTS, **{key.replace("_", "."): value for key, value in settings.items()}}
    return DefaultSslEngineFactory(lambda key: ("listener.name.ssl." + key, values[key])).server_context()


@pytest.fixture(scope="module")
def pki(tmp_path_factory):
    directory = tmp_path_factory.mktemp("pki")
    ca = CertificateAuthority()
    broker = ca.broker()
    pkcs12 = write_pkcs12(directory / "broker.p12", broker, ca)
    return {"dir": directory, "ca": ca, "broker": broker, "pkcs12": str(pkcs12),
            "jks": str(write_jks(directory / "broker.jks", pkcs12)),
            "pem": str(write_pem_key_store(directory / "broker.pem", broker, ca)),
            "pem-encrypted": str(write_pem_key_store(directory / "broker-enc.pem", broker, ca, password="key-pw")),
            "trust-jks": str(write_keytool_trust_store(directory / "trust.jks", ca, "JKS")),
            "alice": str(write_pem_key_store(directory / "alice.pem", ca.client(client_name("alice")), ca))}


def handshake(server_context: ssl.SSLContext, ca, client_key_file: str | None = None,
              seen: dict | None = None) -> tuple[str, dict]:
    """A TLS client's handshake and one byte with a server of this context: (the version, what
    the server saw: the client's certificate as "peer", or the "error" it failed with, also in
    `seen` when the client's side raises)."""
    client_context = ssl.create_default_context(cadata=ca.identity.certificate_pem().decode())
    if client_key_file is not None:
        client_context.load_cert_chain(client_key_file)
    listener = socket.create_server(("127.0.0.1", 0))
    seen = {} if seen is None else seen

    def serve() -> None:
        connection, _ = listener.accept()
        try:
            with server_context.wrap_socket(connection, server_side=True) as tls:
                seen["peer"] = tls.getpeercert(binary_form=True)
                tls.recv(1)
        except (ssl.SSLError, OSError) as exc:
            seen["error"] = exc
            # A TLS 1.3 client finishes its handshake before the server refuses its certificate, and
            # its byte may be on the way: read it, so that the close is a FIN behind the alert, not a
            # reset that could overtake the alert.
            connection.settimeout(10)
            with contextlib.suppress(OSError):
                connection.recv(1024)
            connection.close()
    server = threading.Thread(target=serve, daemon=True)
    server.start()
    try:
        with socket.create_connection(listener.getsockname(), timeout=10) as raw, \
                client_context.wrap_socket(raw, server_hostname="localhost") as tls:
            version = tls.version()
            tls.sendall(b"x")
            tls.recv(1)  # the server's close (or its alert, for a refused certificate)
    finally:
        server.join(10)
        listener.close()
    return version, seen


@pytest.mark.parametrize("settings", [
    {"ssl.keystore.location": "pkcs12", "ssl.keystore.type": "PKCS12", "ssl.keystore.password": PASSWORD},
    {"ssl.keystore.location": "pkcs12", "ssl.keystore.password": PASSWORD},  # type JKS reads PKCS12, as Java's
    {"ssl.keystore.location": "jks", "ssl.keystore.password": PASSWORD},
    {"ssl.keystore.location": "jks", "ssl.keystore.type": "PKCS12", "ssl.keystore.password": PASSWORD},
    {"ssl.keystore.location": "jks", "ssl.keystore.type": "pkcs12", "ssl.keystore.password": PASSWORD},
    {"ssl.keystore.location": "pem", "ssl.keystore.type": "PEM"},
    {"ssl.keystore.location": "pem-encrypted", "ssl.keystore.type": "PEM", "ssl.key.password": "key-pw"},
    {"ssl.keystore.key": "key", "ssl.keystore.certificate.chain": "chain", "ssl.keystore.type": "PEM"},
], ids=["pkcs12", "jks-type-pkcs12-file", "jks", "pkcs12-type-jks-file", "type-in-lower-case", "pem-file",
        "pem-encrypted", "pem-inline"])
def test_each_key_store_kind_serves_a_tls_client(pki, settings):
    resolved = {}
    for key, value in settings.items():
        if key == "ssl.keystore.location":
            value = pki[value]
        elif value == "key":
            value = pki["broker"].key_pem().decode()
        elif value == "chain":
            value = (pki["broker"].certificate_pem() + pki["ca"].identity.certificate_pem()).decode()
        resolved[key.replace(".", "_")] = value
    version, seen = handshake(context(**resolved), pki["ca"])
    assert version == "TLSv1.3" and seen == {"peer": None}


def test_client_auth_required_takes_a_certificate_of_a_trusted_ca_and_refuses_none(pki):
    server = context(ssl_keystore_location=pki["pem"], ssl_keystore_type="PEM", ssl_client_auth="required",
                     ssl_truststore_location=pki["trust-jks"], ssl_truststore_password=PASSWORD)
    _, seen = handshake(server, pki["ca"], client_key_file=pki["alice"])
    assert x509.load_der_x509_certificate(seen["peer"]).subject == client_name("alice")
    refused: dict = {}
    # TLS 1.3: the client learns it at its read, from the alert or, when the close overtakes it, an EOF
    with pytest.raises(ssl.SSLError):
        handshake(server, pki["ca"], seen=refused)
    assert "PEER_DID_NOT_RETURN_A_CERTIFICATE" in str(refused["error"]), refused
    requested = context(ssl_keystore_location=pki["pem"], ssl_keystore_type="PEM", ssl_client_auth="requested",
                        ssl_truststore_location=pki["trust-jks"], ssl_truststore_password=PASSWORD)
    assert handshake(requested, pki["ca"])[1] == {"peer": None}


def test_protocols_follow_enabled_protocols_and_ssl_protocol(pki):
    base = {"ssl_keystore_location": pki["pem"], "ssl_keystore_type": "PEM"}
    assert handshake(context(**base, ssl_enabled_protocols=["TLSv1.2"]), pki["ca"])[0] == "TLSv1.2"
    # ssl.protocol names the SSLContext; the enabled protocols decide, as a Java server engine's do
    assert handshake(context(**base, ssl_protocol="TLSv1.2"), pki["ca"])[0] == "TLSv1.3"
    assert handshake(context(**base, ssl_protocol="SSL", ssl_enabled_protocols=["TLSv1.3"]), pki["ca"])[0] == "TLSv1.3"
    assert handshake(context(**base), pki["ca"])[0] == "TLSv1.3"
    assert handshake(context(**base, ssl_cipher_suites=["TLS_ECDHE_ECDSA_WITH_AES_128_GCM_SHA256"]),
                     pki["ca"])[0] == "TLSv1.2"  # no TLS 1.3 suite listed: TLS 1.3 is off, as in Java
    assert handshake(context(**base, ssl_cipher_suites=sorted(TLS13_SUITES)), pki["ca"])[0] == "TLSv1.3"


@pytest.mark.parametrize("settings, key, message", [
    ({}, "listener.name.ssl.ssl.keystore.location", "needs a key store"),
    ({"ssl_keystore_location": "jks"}, "listener.name.ssl.ssl.keystore.password",
     "SSL key store is specified, but key store password is not specified."),
    ({"ssl_keystore_location": "jks", "ssl_keystore_password": "wrong-secret"}, "listener.name.ssl.ssl.keystore.location",
     "Keystore was tampered with, or password was incorrect"),
    ({"ssl_keystore_location": "jks", "ssl_keystore_password": PASSWORD, "ssl_keystore_type": "JCEKS"},
     "listener.name.ssl.ssl.keystore.type", "JCEKS not found"),
    ({"ssl_keystore_location": "pem", "ssl_keystore_type": "PEM", "ssl_keystore_password": "x"},
     "listener.name.ssl.ssl.keystore.password", "SSL key store password cannot be specified with PEM format"),
    ({"ssl_keystore_location": "pem-encrypted", "ssl_keystore_type": "PEM"},
     "listener.name.ssl.ssl.keystore.location", "encrypted and ssl.key.password is not set"),
    ({"ssl_keystore_location": "pem-encrypted", "ssl_keystore_type": "PEM", "ssl_key_password": "wrong"},
     "listener.name.ssl.ssl.keystore.location", "Invalid PEM keystore configs"),
    ({"ssl_keystore_key": "k"}, "listener.name.ssl.ssl.keystore.key",
     "SSL private key can be specified only for PEM, but key store type is JKS."),
    ({"ssl_keystore_key": "k", "ssl_keystore_type": "PEM"}, "listener.name.ssl.ssl.keystore.key",
     "SSL private key is specified, but certificate chain is not specified."),
    ({"ssl_keystore_certificate_chain": "c"}, "listener.name.ssl.ssl.keystore.certificate.chain",
     "SSL certificate chain is specified, but private key is not specified"),
    ({"ssl_keystore_location": "pem", "ssl_keystore_type": "PEM", "ssl_client_auth": "required",
      "ssl_truststore_certificates": "c"}, "listener.name.ssl.ssl.truststore.certificates",
     "SSL trust store certs can be specified only for PEM, but trust store type is JKS."),
    ({"ssl_keystore_location": "pem", "ssl_keystore_type": "PEM", "ssl_client_auth": "required",
      "ssl_truststore_password": "x"}, "listener.name.ssl.ssl.truststore.password",
     "SSL trust store is not specified, but trust store password is specified."),
    ({"ssl_keystore_location": "pem", "ssl_keystore_type": "PEM", "ssl_enabled_protocols": ["TLSv1.4"]},
     "listener.name.ssl.ssl.enabled.protocols", "Unsupported protocol: TLSv1.4"),
    ({"ssl_keystore_location": "pem", "ssl_keystore_type": "PEM", "ssl_protocol": "TLSv9"},
     "listener.name.ssl.ssl.protocol", "TLSv9 SSLContext not available"),
    ({"ssl_keystore_location": "pkcs12", "ssl_keystore_type": "PKCS12", "ssl_keystore_password": PASSWORD,
      "ssl_key_password": "other-secret"}, "listener.name.ssl.ssl.keystore.location", "Get Key failed"),
    ({"ssl_keystore_location": "pem", "ssl_keystore_type": "pem"}, "listener.name.ssl.ssl.keystore.password",
     "SSL key store is specified, but key store password is not specified."),  # only PEM in capitals is PEM
    ({"ssl_keystore_location": "pem", "ssl_keystore_type": "PEM", "ssl_cipher_suites": ["TLS_FOO_WITH_BAR"]},
     "listener.name.ssl.ssl.cipher.suites", "Unsupported CipherSuite: TLS_FOO_WITH_BAR"),
    ({"ssl_keystore_location": "pem", "ssl_keystore_type": "PEM",
      "ssl_cipher_suites": ["TLS_AES_128_GCM_SHA256", "TLS_EMPTY_RENEGOTIATION_INFO_SCSV"]},
     "listener.name.ssl.ssl.cipher.suites", "enables the TLS 1.3 suites all together"),
])
def test_what_kafka_refuses_is_refused_naming_the_key(pki, settings, key, message):
    resolved = {name: (pki[value] if name == "ssl_keystore_location" else value) for name, value in settings.items()}
    with pytest.raises(ConfigError) as refused:
        context(**resolved)
    assert refused.value.key == key and message in str(refused.value), str(refused.value)
    assert PASSWORD not in str(refused.value)


def test_openssl_names_of_java_suites_are_openssls_own():
    """Each TLS 1.2 suite OpenSSL lists with its standard (IANA, Java's) name maps to OpenSSL's name."""
    openssl = shutil.which("openssl")
    if openssl is None:
        pytest.skip("no openssl command")
    listed = subprocess.run([openssl, "ciphers", "-stdname", "ALL"], capture_output=True, text=True, check=True,
                            timeout=60).stdout.splitlines()
    checked = 0
    for line in listed:
        standard, _, name = line.split()[:3]
        mapped = _openssl_name(standard)
        if mapped is not None:
            assert mapped == name, standard
            checked += 1
    assert checked >= 20
    assert _openssl_name("TLS_ECDHE_RSA_WITH_ARIA_128_GCM_SHA256") is None
