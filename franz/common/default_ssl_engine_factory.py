"""Kafka's DefaultSslEngineFactory: a broker listener's server ssl.SSLContext from its `ssl.*`
settings, and the stores a client's settings name (franz's tools hand them to librdkafka).

- Key store: `ssl.keystore.location` of `ssl.keystore.type` JKS or PKCS12 (either type reads
  either format, as Java's do: java_key_store.py) under `ssl.keystore.password`, its key under
  `ssl.key.password` if set; or PEM, from the file at the location or inline as
  `ssl.keystore.key` (PKCS#8, encrypted under `ssl.key.password` or not) with
  `ssl.keystore.certificate.chain`. The combinations DefaultSslEngineFactory refuses are refused
  with its words, naming the key.
- Trust store (the CAs a client certificate must chain to): `ssl.truststore.location` of
  `ssl.truststore.type`, or `ssl.truststore.certificates` inline PEM; without one, the system's
  CAs (Java takes its cacerts).
- `ssl.client.auth`: none (no certificate asked), requested (asked, optional), required.
- `ssl.enabled.protocols` (TLSv1.2,TLSv1.3) decide the versions: `ssl.protocol` only names the
  SSLContext, and a server engine of a TLSv1.2 context with TLSv1.3 enabled speaks TLSv1.3 in
  Java too. `ssl.cipher.suites` in Java's (IANA) names. OpenSSL names its TLS 1.2
  suites otherwise (`_openssl_name`), and Python's ssl cannot choose among the TLS 1.3 suites:
  a list naming some but not all three of them is refused, and one naming none leaves TLS 1.3
  off, as Java does when no TLS 1.3 suite is enabled.

The key and chain reach OpenSSL through an in-memory file (memfd): SSLContext loads them
only from a path, and the key must not be written to disk.
"""

from __future__ import annotations

import os
import ssl
import tempfile
from collections.abc import Callable
from pathlib import Path
from typing import Any

from cryptography import x509
from cryptography.hazmat.primitives import serialization
from cryptography.hazmat.primitives.asymmetric.types import PrivateKeyTypes

from franz.common.config_def import ConfigError
from franz.common.java_key_store import KeyStore, KeyStoreError, load_key_store

PEM_TYPE = "PEM"
PEM_ALIAS = "kafka"  # the one entry of Kafka's PemStore
NO_KEY_STORE = "an SSL listener needs a key store"
KEY_STORE_TYPES = ("JKS", "PKCS12", PEM_TYPE)
CLIENT_AUTH = {"none": ssl.CERT_NONE, "requested": ssl.CERT_OPTIONAL, "required": ssl.CERT_REQUIRED}
_TLS_VERSIONS = {"TLSv1": ssl.TLSVersion.TLSv1, "TLSv1.1": ssl.TLSVersion.TLSv1_1,
                 "TLSv1.2": ssl.TLSVersion.TLSv1_2, "TLSv1.3": ssl.TLSVersion.TLSv1_3}
# The protocols SSLContext.getInstance knows (SunJSSE's)
SSL_CONTEXT_PROTOCOLS = frozenset({"SSL", "SSLv3", "TLS", "TLSv1", "TLSv1.1", "TLSv1.2", "TLSv1.3", "DTLS",
                                   "DTLSv1.0", "DTLSv1.2", "Default"})
# A signalling value, not a suite: Java takes it among the suites, OpenSSL always sends it.
_RENEGOTIATION_SCSV = "TLS_EMPTY_RENEGOTIATION_INFO_SCSV"
TLS13_SUITES = frozenset({"TLS_AES_128_GCM_SHA256", "TLS_AES_256_GCM_SHA384", "TLS_CHACHA20_POLY1305_SHA256"})
_KEY_EXCHANGES = {"ECDHE_ECDSA": "ECDHE-ECDSA-", "ECDHE_RSA": "ECDHE-RSA-", "DHE_RSA": "DHE-RSA-",
                  "DHE_DSS": "DHE-DSS-", "RSA": ""}

# (key written, typed value) of a setting for this listener: its own key before the broker's
SettingOf = Callable[[str], tuple[str, Any]]


def _openssl_name(suite: str) -> str | None:
    """OpenSSL's name of a TLS 1.2 AES or ChaCha20 suite in IANA's (TLS_ECDHE_RSA_WITH_AES_128_GCM_SHA256
    is ECDHE-RSA-AES128-GCM-SHA256; CBC is implied, SHA alone is SHA1); None for other suites."""
    exchange, with_, cipher = suite.removeprefix("TLS_").partition("_WITH_")
    if not with_ or exchange not in _KEY_EXCHANGES:
        return None
    if cipher.startswith("CHACHA20_POLY1305_SHA256"):
        return _KEY_EXCHANGES[exchange] + "CHACHA20-POLY1305" if cipher == "CHACHA20_POLY1305_SHA256" else None
    parts = cipher.split("_")
    if len(parts) != 4 or parts[0] != "AES" or parts[1] not in ("128", "256") or parts[2] not in ("GCM", "CBC"):
        return None
    mode = "-GCM" if parts[2] == "GCM" else ""
    return f"{_KEY_EXCHANGES[exchange]}AES{parts[1]}{mode}-{parts[3]}"


class DefaultSslEngineFactory:
    """Reads one listener's or client's settings (`setting_of`)."""

    def __init__(self, setting_of: SettingOf) -> None:
        self._setting_of = setting_of
        # What the last key_and_chain read: each entry's alias (in lower case, as Java's stores
        # give them; PemStore's is "kafka") and certificate (a key's own), key entries first; None
        # without a key store. A new key store must name the same subjects.
        self.key_store_certificates: tuple[tuple[str, x509.Certificate], ...] | None = None
        # path -> its modification time (ns) when read: a store file changed since is reloaded
        # (SecurityStore.modified)
        self.files_read: dict[str, int] = {}

    def _value(self, key: str) -> Any:
        return self._setting_of(key)[1]

    def _refuse(self, key: str, message: str, shown: Any = "[hidden]") -> ConfigError:
        written = self._setting_of(key)[0]
        return ConfigError(written, shown, message, f"Invalid value {shown} for configuration {written}: {message}")

    def server_context(self) -> ssl.SSLContext:
        context = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)
        self._set_protocols(context)
        key_store = self.key_and_chain()
        if key_store is None:  # a Kafka broker with an SSL listener and no key store fails every handshake
            raise self._refuse("ssl.keystore.location",
                               NO_KEY_STORE + ": set ssl.keystore.location (or ssl.keystore.key)", None)
        key, chain, source = key_store
        try:
            _load_key_and_chain(context, key, chain)
        except ssl.SSLError as exc:  # a chain whose first certificate is not the key's, say
            raise self._refuse(source, f"the key store's key and certificate chain do not go together: {exc}")
        client_auth = str(self._value("ssl.client.auth")).lower()
        context.verify_mode = CLIENT_AUTH.get(client_auth, ssl.CERT_NONE)
        if context.verify_mode != ssl.CERT_NONE:
            trusted = self.trusted()
            if trusted is None:
                context.load_default_certs(ssl.Purpose.CLIENT_AUTH)
            elif trusted:
                context.load_verify_locations(cadata=b"".join(
                    certificate.public_bytes(serialization.Encoding.DER) for certificate in trusted))
        return context

    # -- protocols and cipher suites ------------------------------------------------------

    def _set_protocols(self, context: ssl.SSLContext) -> None:
        protocol = self._value("ssl.protocol")
        if protocol not in SSL_CONTEXT_PROTOCOLS:
            raise self._refuse("ssl.protocol", f"{protocol} SSLContext not available", protocol)
        enabled = self._value("ssl.enabled.protocols") or list(_TLS_VERSIONS)
        unknown = [name for name in enabled if name not in _TLS_VERSIONS]
        if unknown:
            raise self._refuse("ssl.enabled.protocols", f"Unsupported protocol: {unknown[0]}", ",".join(enabled))
        versions = sorted(_TLS_VERSIONS[name] for name in enabled)
        low, high = versions[0], versions[-1]
        suites = self._value("ssl.cipher.suites") or []
        if suites:
            tls12 = []
            for suite in suites:
                if suite in TLS13_SUITES or suite == _RENEGOTIATION_SCSV:
                    continue
                name = _openssl_name(suite)
                if name is None or not _openssl_knows(name):
                    raise self._refuse("ssl.cipher.suites", f"Unsupported CipherSuite: {suite}", ",".join(suites))
                tls12.append(name)
            tls13 = TLS13_SUITES.intersection(suites)
            if tls13 and tls13 != TLS13_SUITES:
                raise self._refuse("ssl.cipher.suites", "franz (Python's ssl) enables the TLS 1.3 suites all "
                                   f"together: list all of {', '.join(sorted(TLS13_SUITES))} or none",
                                   ",".join(suites))
            if not tls13:
                high = min(high, ssl.TLSVersion.TLSv1_2)
            if tls12:
                context.set_ciphers(":".join(tls12))
            else:
                low = max(low, ssl.TLSVersion.TLSv1_3)
            if low > high:
                raise self._refuse("ssl.cipher.suites", "no listed suite belongs to an enabled protocol",
                                   ",".join(suites))
        context.minimum_version, context.maximum_version = low, high

    # -- stores ---------------------------------------------------------------------------

    def key_and_chain(self) -> tuple[PrivateKeyTypes, list[x509.Certificate], str] | None:
        """The key store's key, its chain and the setting they came from; None without a key store."""
        kind = self._value("ssl.keystore.type")
        location = self._value("ssl.keystore.location")
        password = self._value("ssl.keystore.password")
        key_password = self._value("ssl.key.password")
        private_key = self._value("ssl.keystore.key")
        chain = self._value("ssl.keystore.certificate.chain")
        if private_key is not None:
            if kind != PEM_TYPE:
                raise self._refuse("ssl.keystore.key", "SSL private key can be specified only for PEM, but key store "
                                                       f"type is {kind}.")
            if chain is None:
                raise self._refuse("ssl.keystore.key", "SSL private key is specified, but certificate chain is not "
                                                       "specified.")
            if location is not None:
                raise self._refuse("ssl.keystore.location", "Both SSL key store location and separate private key "
                                                            "are specified.", location)
            if password is not None:
                raise self._refuse("ssl.keystore.password", "SSL key store password cannot be specified with PEM "
                                                            "format, only key password may be specified.")
            certificates = self._pem_chain(chain, "ssl.keystore.certificate.chain")
            self.key_store_certificates = tuple((PEM_ALIAS, certificate) for certificate in certificates[:1])
            return self._pem_key(private_key, key_password, "ssl.keystore.key"), certificates, "ssl.keystore.key"
        if chain is not None:
            raise self._refuse("ssl.keystore.certificate.chain", "SSL certificate chain is specified, but private "
                                                                 "key is not specified")
        if location is None:
            if password is not None:
                raise self._refuse("ssl.keystore.password", "SSL key store is not specified, but key store "
                                                            "password is specified.")
            return None
        if kind == PEM_TYPE:
            if password is not None:
                raise self._refuse("ssl.keystore.password", "SSL key store password cannot be specified with PEM "
                                                            "format, only key password may be specified")
            text = self._read(location, "ssl.keystore.location", kind)
            certificates = self._pem_chain(text, "ssl.keystore.location")
            self.key_store_certificates = tuple((PEM_ALIAS, certificate) for certificate in certificates[:1])
            return self._pem_key(text, key_password, "ssl.keystore.location"), certificates, "ssl.keystore.location"
        if password is None:
            raise self._refuse("ssl.keystore.password", "SSL key store is specified, but key store password is not "
                                                        "specified.", None)
        store = self._load(location, kind, password, key_password, "ssl.keystore.location")
        if not store.keys:
            raise self._refuse("ssl.keystore.location", f"the key store {location} holds no private key", location)
        self.key_store_certificates = tuple([(entry.alias.lower(), entry.chain[0]) for entry in store.keys] + [
            (alias.lower(), certificate) for alias, certificate in zip(store.trusted_aliases, store.trusted)])
        return store.keys[0].key, store.keys[0].chain, "ssl.keystore.location"

    def trusted(self) -> list[x509.Certificate] | None:
        """The trust store's certificates; None without a trust store."""
        kind = self._value("ssl.truststore.type")
        location = self._value("ssl.truststore.location")
        password = self._value("ssl.truststore.password")
        certificates = self._value("ssl.truststore.certificates")
        if certificates is not None:
            if kind != PEM_TYPE:
                raise self._refuse("ssl.truststore.certificates", "SSL trust store certs can be specified only for "
                                                                  f"PEM, but trust store type is {kind}.")
            if location is not None:
                raise self._refuse("ssl.truststore.location", "Both SSL trust store location and separate trust "
                                                              "certificates are specified.", location)
            if password is not None:
                raise self._refuse("ssl.truststore.password", "SSL trust store password cannot be specified for "
                                                              "PEM format.")
            return self._pem_chain(certificates, "ssl.truststore.certificates")
        if location is None:
            if password is not None:
                raise self._refuse("ssl.truststore.password", "SSL trust store is not specified, but trust store "
                                                              "password is specified.")
            return None
        if kind == PEM_TYPE:
            if password is not None:
                raise self._refuse("ssl.truststore.password", "SSL trust store password cannot be specified for "
                                                              "PEM format.")
            return self._pem_chain(self._read(location, "ssl.truststore.location", kind), "ssl.truststore.location")
        return self._load(location, kind, password, None, "ssl.truststore.location").trust_anchors()

    def _stamp(self, location: str) -> None:
        """Note the file's modification time before it is read: a change made while reading it
        shows as a later one."""
        try:
            self.files_read[location] = os.stat(location).st_mtime_ns
        except OSError:
            pass  # reading it fails next, naming the key

    def _read(self, location: str, key: str, kind: str) -> str:
        self._stamp(location)
        try:
            return Path(location).read_text()
        except (OSError, UnicodeDecodeError) as exc:
            raise self._refuse(key, f"Failed to load {kind} SSL keystore {location}: {exc}", location) from None

    def _load(self, location: str, kind: str, password: str | None, key_password: str | None,
              key: str) -> KeyStore:
        if kind.upper() not in ("JKS", "PKCS12"):  # KeyStore.getInstance ignores the type's case
            type_key = "ssl.keystore.type" if key.startswith("ssl.keystore") else "ssl.truststore.type"
            raise self._refuse(type_key, f"{kind} not found: franz reads key stores of type "
                                         f"{', '.join(KEY_STORE_TYPES)}", kind)
        self._stamp(location)
        try:
            return load_key_store(Path(location).read_bytes(), password, key_password,
                                  recover_keys=key.startswith("ssl.keystore"))
        except (OSError, KeyStoreError) as exc:
            raise self._refuse(key, f"Failed to load SSL keystore {location} of type {kind}: {exc}",
                               location) from None

    def _pem_key(self, text: str, key_password: str | None, key: str) -> PrivateKeyTypes:
        """PemStore.privateKey: the one PKCS#8 key of the text, encrypted exactly when a key
        password is given."""
        encrypted = "-----BEGIN ENCRYPTED PRIVATE KEY-----" in text
        if not encrypted and "-----BEGIN PRIVATE KEY-----" not in text:
            raise self._refuse(key, "Invalid PEM keystore configs: no PKCS#8 private key (BEGIN PRIVATE KEY or "
                                    "BEGIN ENCRYPTED PRIVATE KEY)")
        if encrypted != (key_password is not None):
            raise self._refuse(key, "Invalid PEM keystore configs: the private key is "
                               + ("encrypted and ssl.key.password is not set" if encrypted
                                  else "not encrypted but ssl.key.password is set"))
        marker = "-----BEGIN ENCRYPTED PRIVATE KEY-----" if encrypted else "-----BEGIN PRIVATE KEY-----"
        block = text[text.index(marker):]
        try:
            return serialization.load_pem_private_key(
                block.encode(), key_password.encode() if key_password is not None else None)
        except (ValueError, TypeError) as exc:
            raise self._refuse(key, f"Invalid PEM keystore configs: {exc}") from None

    def _pem_chain(self, text: str, key: str) -> list[x509.Certificate]:
        try:
            certificates = x509.load_pem_x509_certificates(text.encode())
        except ValueError as exc:
            raise self._refuse(key, f"Invalid PEM keystore configs: {exc}") from None
        return certificates


def _openssl_knows(name: str) -> bool:
    try:
        ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER).set_ciphers(name)
    except ssl.SSLError:
        return False
    return True


def _load_key_and_chain(context: ssl.SSLContext, key: PrivateKeyTypes, chain: list[x509.Certificate]) -> None:
    pem = key.private_bytes(serialization.Encoding.PEM, serialization.PrivateFormat.PKCS8,
                            serialization.NoEncryption())
    pem += b"".join(certificate.public_bytes(serialization.Encoding.PEM) for certificate in chain)
    if hasattr(os, "memfd_create"):
        fd = os.memfd_create("franz-ssl-key", os.MFD_CLOEXEC)
        try:
            os.write(fd, pem)
            context.load_cert_chain(f"/proc/self/fd/{fd}")
        finally:
            os.close(fd)
        return
    with tempfile.TemporaryDirectory() as directory:  # 0700: no other user reads the key meanwhile
        path = Path(directory) / "key.pem"
        path.write_bytes(pem)
        context.load_cert_chain(str(path))
