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

import logging
import os
import re
import ssl
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from typing import Any

from cryptography import x509

from franz.common.config_def import ConfigError
from franz.common.default_ssl_engine_factory import NO_KEY_STORE
from franz.common.ssl_principal_mapper import SslPrincipalMapper, distinguished_name

logger = logging.getLogger(__name__)

# asyncio's default bound of a TLS handshake (Kafka's is connections.max.idle.ms alone)
TLS_HANDSHAKE_TIMEOUT_S = 60.0


@dataclass(frozen=True)
class SslListenerConfig:
    context: ssl.SSLContext
    principal_mapper: SslPrincipalMapper
    # the key store's entries' certificates (a key's own first), None without a key store
    key_store_certificates: tuple[x509.Certificate, ...] | None = None
    # each store file read -> its modification time (ns) then
    files_read: Mapping[str, int] = field(default_factory=dict)
    # the key and trust store settings it was built from (SSL_RECONFIGURABLE_KEYS' values)
    store_settings: Mapping[str, Any] = field(default_factory=dict)

    def files_modified(self) -> bool:
        """Whether a store file changed since it was read. One whose modification time cannot be
        read (gone, moved away) is not modified: FileBasedStore.modified logs it and keeps the
        store it loaded, so that the broker's other config changes still apply."""
        for path, stamp in self.files_read.items():
            try:
                if os.stat(path).st_mtime_ns != stamp:
                    return True
            except OSError as exc:
                logger.error("Modification time of key store could not be obtained: %s", path, exc_info=exc)
        return False

    def has_trust_store(self) -> bool:
        settings = self.store_settings
        return settings.get("ssl.truststore.location") is not None or (
            settings.get("ssl.truststore.certificates") is not None)


class SslListenerReconfigurable:
    """A TLS listener's key and trust stores changed on a running broker (Kafka's SslChannelBuilder
    as a ListenerReconfigurable, through SslFactory.reconfigure): under the listener's prefix, on
    this broker (kafka-configs --entity-type brokers --entity-name <id>), or the same values again
    once a store file changed in place. Connections accepted from then on shake hands with the new
    context; open ones keep theirs. A new key store must show the same subjects (and at least the
    same subject alternative names) unless ssl.allow.dn.changes / ssl.allow.san.changes allow it
    (CertificateEntries.ensureCompatible), so that clients verifying the broker's name still do.

    `listeners` is the socket server's map of each TLS listener's config, replaced in place;
    `build(dynamic)` builds this listener's from the typed values of its prefixed keys set
    dynamically."""

    def __init__(self, listener: str, reconfigurable_configs: tuple[str, ...],
                 listeners: dict[str, SslListenerConfig], build: Callable[[Mapping[str, Any]], SslListenerConfig],
                 allow_dn_changes: bool, allow_san_changes: bool) -> None:
        self.listener = listener
        self.reconfigurable_configs = reconfigurable_configs
        self._listeners = listeners
        self._build = build
        self._allow_dn_changes = allow_dn_changes
        self._allow_san_changes = allow_san_changes
        # the config validate_reconfiguration built, with the values it was built from: reconfigure
        # puts that one in force rather than read the files a second time (KAFKA-8190)
        self._validated: tuple[dict[str, Any], SslListenerConfig | None] | None = None

    def files_modified(self) -> bool:
        return self._listeners[self.listener].files_modified()

    def load(self, values: Mapping[str, Any]) -> None:
        """Put in force the stores of the typed broker values in force at startup (the config file's
        and the stored dynamic ones), unchecked against the config file's alone: Kafka builds its
        SslFactory from both at once. Stores that cannot be read leave the file's in force; the
        controller's check of the same values then logs why (add_broker_reconfigurable)."""
        dynamic = self._dynamic(values)
        current = self._listeners[self.listener]
        prefix = f"listener.name.{self.listener.lower()}."
        if all(current.store_settings.get(key[len(prefix):]) == value for key, value in dynamic.items()):
            return  # the config file's stores, which KafkaConfig loaded already
        try:
            self._listeners[self.listener] = self._build(dynamic)
        except ConfigError:
            pass

    def validate_reconfiguration(self, old: Mapping[str, Any], new: Mapping[str, Any]) -> None:
        dynamic = self._dynamic(new)
        current = self._listeners[self.listener]
        try:
            try:
                candidate = self._build(dynamic)
            except ConfigError as exc:
                raise _StoreRefused(_factory_failure(exc)) from None
            if candidate.store_settings == current.store_settings and candidate.files_read == current.files_read:
                candidate = None  # SslFactory keeps its engine factory: nothing to rebuild
            else:
                self._ensure_compatible(current, candidate)
        except _StoreRefused as refused:  # SslFactory's words (the controller wraps them as Kafka does)
            raise ConfigError(f"listener.name.{self.listener.lower()}.ssl.keystore.location", None, "",
                              f"Validation of dynamic config update of SSLFactory failed: {refused}") from None
        self._validated = (dynamic, candidate)

    def reconfigure(self, old: Mapping[str, Any], new: Mapping[str, Any]) -> None:
        dynamic = self._dynamic(new)
        validated, self._validated = self._validated, None
        assert validated is not None and validated[0] == dynamic, "reconfigure without its validation"
        candidate = validated[1]
        if candidate is None:
            return
        self._listeners[self.listener] = candidate
        settings = candidate.store_settings
        logger.info("Created new SERVER SSL engine builder with keystore %s truststore %s for listener %s",
                    _store_shown(settings, "ssl.keystore"), _store_shown(settings, "ssl.truststore"), self.listener)

    def _dynamic(self, values: Mapping[str, Any]) -> dict[str, Any]:
        return {key: values[key] for key in self.reconfigurable_configs if key in values}

    def _ensure_compatible(self, current: SslListenerConfig, candidate: SslListenerConfig) -> None:
        """SslFactory.createNewSslEngineFactory's checks of a rebuilt engine factory."""
        old, new = current.key_store_certificates, candidate.key_store_certificates
        if old is None and new is not None:
            raise _StoreRefused(_CONFIG_EXCEPTION + "Cannot add SSL keystore to an existing listener for which no "
                                                   "keystore was configured.")
        if old is not None and new is not None:
            if not self._allow_dn_changes:
                _ensure_same_count(old, new)
                for (was_alias, was), (now_alias, now) in zip(old, new):
                    if distinguished_name(was).lower() != distinguished_name(now).lower():
                        raise _StoreRefused(_CONFIG_EXCEPTION + "Keystore DistinguishedName does not match:  "
                                            f"existing={{alias={was_alias}, DN={_principal_string(was)}}}, "
                                            f"new={{alias={now_alias}, DN={_principal_string(now)}}}")
            if not self._allow_san_changes:
                _ensure_same_count(old, new)
                for (was_alias, was), (now_alias, now) in zip(old, new):
                    if not _alternative_names(now) >= _alternative_names(was):
                        raise _StoreRefused(_CONFIG_EXCEPTION + "Keystore SubjectAltNames do not match:  "
                                            f"existing={{alias={was_alias}, SAN={_names_shown(was)}}}, "
                                            f"new={{alias={now_alias}, SAN={_names_shown(now)}}}")
        if not current.has_trust_store() and candidate.has_trust_store():
            raise _StoreRefused(_CONFIG_EXCEPTION + "Cannot add SSL truststore to an existing listener for which no "
                                                   "truststore was configured.")


class _StoreRefused(Exception):
    """A rebuilt store refused, as the Java exception Kafka's SslFactory wraps shows itself."""


_CONFIG_EXCEPTION = "org.apache.kafka.common.config.ConfigException: "


def _factory_failure(exc: ConfigError) -> str:
    """DefaultSslEngineFactory's refusal as Kafka's exception shows: a store without a key store is
    SslFactory's own ConfigException; a JKS or PKCS12 store that does not load, a KafkaException;
    the rest, InvalidConfigurationException."""
    if exc.reason.startswith(NO_KEY_STORE):
        return _CONFIG_EXCEPTION + ("Cannot remove the SSL keystore from an existing listener for which a keystore "
                                    "was configured.")
    if exc.reason.startswith("Failed to load SSL keystore"):
        return f"org.apache.kafka.common.KafkaException: {exc.reason}"
    return f"org.apache.kafka.common.errors.InvalidConfigurationException: {exc.reason}"


def _store_shown(settings: Mapping[str, Any], prefix: str) -> str:
    """The store a log line names: its file, its inline PEM, or null (Kafka shows the KeyStore)."""
    location = settings.get(f"{prefix}.location")
    if location is not None:
        return str(location)
    inline = settings.get("ssl.keystore.key" if prefix == "ssl.keystore" else "ssl.truststore.certificates")
    return "PEM" if inline is not None else "null"


def _principal_string(certificate: x509.Certificate) -> str:
    """X500Principal.toString: the RFC 2253 name's RDNs joined by ", "."""
    return ", ".join(re.split(r"(?<!\\),", distinguished_name(certificate)))


def _names_shown(certificate: x509.Certificate) -> str:
    """getSubjectAlternativeNames as Java prints the set: [[type, value], ...] (2 a DNS name, 7 an IP)."""
    return "[" + ", ".join(f"[{kind}, {value}]" for kind, value in sorted(_alternative_names(certificate))) + "]"


def _ensure_same_count(old: tuple, new: tuple) -> None:
    if len(old) != len(new):
        raise _StoreRefused(_CONFIG_EXCEPTION + f"Keystore entries do not match, existing store contains {len(old)} "
                                                f"entries, new store contains {len(new)} entries")


# GeneralName's tag numbers, as X509Certificate.getSubjectAlternativeNames gives each name's type
_GENERAL_NAME_TAGS = {x509.OtherName: 0, x509.RFC822Name: 1, x509.DNSName: 2, x509.DirectoryName: 4,
                      x509.UniformResourceIdentifier: 6, x509.IPAddress: 7, x509.RegisteredID: 8}


def _alternative_names(certificate: x509.Certificate) -> set[tuple[int, str]]:
    """The certificate's subject alternative names as (type, value), X509Certificate's
    getSubjectAlternativeNames, compared as a set."""
    try:
        names = certificate.extensions.get_extension_for_class(x509.SubjectAlternativeName).value
    except x509.ExtensionNotFound:
        return set()
    shown = set()
    for name in names:
        value = name.value
        if isinstance(name, x509.DirectoryName):
            value = value.rfc4514_string()
        elif isinstance(name, x509.RegisteredID):
            value = value.dotted_string
        shown.add((_GENERAL_NAME_TAGS.get(type(name), -1), str(value)))
    return shown


def peer_principal_name(ssl_object: ssl.SSLObject | None, mapper: SslPrincipalMapper) -> str:
    """The principal name of the client that completed this handshake; NoMatchingRule (a
    ValueError) when no rule maps its certificate's name."""
    encoded = ssl_object.getpeercert(binary_form=True) if ssl_object is not None else None
    if not encoded:
        return "ANONYMOUS"
    return mapper.name(distinguished_name(x509.load_der_x509_certificate(encoded)))
