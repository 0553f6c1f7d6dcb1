"""KafkaConfig: the broker's configuration, Kafka's server.properties keys.

Values come from a properties file (Java .properties syntax: `key=value` or
`key: value`, `#`/`!` comments, backslash continuations), then `--override
key=value` pairs, over the embedded default that lets `franz server start` run
with no file at all: one node on 127.0.0.1:9092 with data under ./data.

A bad value is refused with a ConfigError naming the key. An unknown key is
kept (it may be meant for a topic default or a later franz) and reported in
`unknown_keys` so the caller can warn as Kafka does.
"""

from __future__ import annotations

import dataclasses
import logging
import re
import sys
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any, Final

from franz.common.config_def import (
    INT32_MAX,
    INT64_MAX,
    NO_DEFAULT,
    ConfigDef,
    ConfigError,
    ConfigKey,
    at_least,
    between,
    each_of,
    one_of,
)
from franz.common.utils import java_hash_set_order, load_props
from franz.common.jaas_config import LoginModuleEntry
from franz.common.jaas_context import (
    JaasContext,
    LoginConfiguration,
    config_entry_option,
    load_login_configuration,
    load_server_context,
)
from franz.common.default_ssl_engine_factory import DefaultSslEngineFactory
from franz.common.ssl_principal_mapper import SslPrincipalMapper
from franz.server.ssl_channel_builder import SslListenerConfig
from franz.server.oauth_bearer_sasl_server import LOGIN_MODULE as OAUTH_BEARER_LOGIN_MODULE
from franz.server.oauth_bearer_validator import (
    VALIDATOR_CALLBACK_HANDLER_CLASSES,
    OAuthBearerValidator,
    OAuthConfigError,
    create_validator,
)
from franz.server.oauth_bearer_unsecured_validator import (
    OAuthBearerConfigError,
    OAuthBearerUnsecuredValidator,
    check_unsecured_login,
)
from franz.server.sasl_server_authenticator import (
    PLAIN_LOGIN_MODULE,
    SCRAM_LOGIN_MODULE,
    SaslListenerConfig,
)
from franz.server.sasl_server_authenticator import SUPPORTED_MECHANISMS as SASL_SUPPORTED_MECHANISMS
from franz.server.gssapi_sasl_server import GSSAPI, KerberosService, check_keytab, use_krb5_config_of_kafka_opts
from franz.server.gssapi_sasl_server import LOGIN_MODULE as KRB5_LOGIN_MODULE
from franz.common.kerberos_name import KerberosName, KerberosShortNamer, default_realm
from franz.records import CompressionType
from franz.storage.cleaner import CleanerConfig
from franz.storage.producer_state import ProducerStateManagerConfig
from franz.storage.log_config import BROKER_SYNONYMS, TOPIC_CONFIG_DEF, LogConfig

logger = logging.getLogger(__name__)

EMBEDDED_DEFAULTS: dict[str, str] = {
    "node.id": "1",
    "process.roles": "broker,controller",
    "listeners": "PLAINTEXT://127.0.0.1:9092",
    "log.dirs": "./data",
}

_HOUR_MS = 60 * 60 * 1000
# Kafka's SecurityProtocol names.
SECURITY_PROTOCOLS: Final = ("PLAINTEXT", "SSL", "SASL_PLAINTEXT", "SASL_SSL")
# BrokerSecurityConfigs.PRINCIPAL_BUILDER_CLASS_CONFIG's default: the principals franz builds
DEFAULT_PRINCIPAL_BUILDER: Final = "org.apache.kafka.common.security.authenticator.DefaultKafkaPrincipalBuilder"

def _compression_id(key: str, value: Any) -> None:
    """GroupCoordinatorConfig reads the codec with CompressionType.forId, refusing an id that is none."""
    if value not in set(CompressionType):
        raise ConfigError(key, value, "", f"Unknown compression type id: {value}")


BROKER_CONFIG_DEF = ConfigDef([
    ConfigKey("node.id", "int", NO_DEFAULT, at_least(0)),
    ConfigKey("broker.id", "int", -1),
    ConfigKey("process.roles", "list", ["broker", "controller"], each_of("broker", "controller")),
    ConfigKey("cluster.id", "string", None),
    ConfigKey("listeners", "list", ["PLAINTEXT://:9092"]),
    ConfigKey("advertised.listeners", "list", None),
    ConfigKey("controller.listener.names", "list", None),
    ConfigKey("inter.broker.listener.name", "string", None),
    ConfigKey("security.inter.broker.protocol", "string", "PLAINTEXT", one_of(*SECURITY_PROTOCOLS)),
    ConfigKey("listener.security.protocol.map", "list", None),
    ConfigKey("controller.quorum.voters", "list", []),
    ConfigKey("controller.quorum.bootstrap.servers", "list", []),
    ConfigKey("log.dirs", "list", None),
    ConfigKey("log.dir", "list", ["/tmp/kafka-logs"]),
    ConfigKey("metadata.log.dir", "string", None),
    ConfigKey("num.partitions", "int", 1, at_least(1)),
    ConfigKey("default.replication.factor", "int", 1, at_least(1)),
    ConfigKey("auto.create.topics.enable", "boolean", True),
    ConfigKey("delete.topic.enable", "boolean", True),
    # Log roll/retention in coarser units; the *.ms keys are topic synonyms below.
    ConfigKey("log.roll.hours", "int", 168, at_least(1)),
    ConfigKey("log.roll.jitter.hours", "int", 0, at_least(0)),
    ConfigKey("log.retention.hours", "int", 168),
    ConfigKey("log.retention.minutes", "int", None),
    ConfigKey("log.retention.check.interval.ms", "long", 300_000, at_least(1)),
    ConfigKey("log.flush.scheduler.interval.ms", "long", INT64_MAX, at_least(1)),
    ConfigKey("log.flush.offset.checkpoint.interval.ms", "int", 60_000, at_least(0)),
    ConfigKey("log.flush.start.offset.checkpoint.interval.ms", "int", 60_000, at_least(0)),
    ConfigKey("log.initial.task.delay.ms", "long", 30_000, at_least(0)),
    ConfigKey("num.recovery.threads.per.data.dir", "int", 2, at_least(1)),
    ConfigKey("log.cleaner.enable", "boolean", True),
    ConfigKey("log.cleaner.threads", "int", 1, at_least(0)),
    ConfigKey("log.cleaner.io.max.bytes.per.second", "double", sys.float_info.max),
    ConfigKey("log.cleaner.dedupe.buffer.size", "long", 128 * 1024 * 1024),
    ConfigKey("log.cleaner.io.buffer.size", "int", 512 * 1024, at_least(0)),
    ConfigKey("log.cleaner.io.buffer.load.factor", "double", 0.9),
    ConfigKey("log.cleaner.backoff.ms", "long", 15_000, at_least(0)),
    # Network.
    ConfigKey("socket.request.max.bytes", "int", 100 * 1024 * 1024, at_least(1)),
    ConfigKey("socket.send.buffer.bytes", "int", 100 * 1024),
    ConfigKey("socket.listen.backlog.size", "int", 50, at_least(1)),
    ConfigKey("socket.receive.buffer.bytes", "int", 100 * 1024),
    ConfigKey("queued.max.requests", "int", 500, at_least(1)),
    ConfigKey("connections.max.idle.ms", "long", 600_000),
    # SASL on SASL_PLAINTEXT and SASL_SSL listeners (sasl_server_authenticator); each listener may
    # override the mechanisms as listener.name.<listener>.sasl.enabled.mechanisms, and has its JAAS
    # entries as listener.name.<listener>.<mechanism>.sasl.jaas.config, else in the JAAS file that
    # -Djava.security.auth.login.config in KAFKA_OPTS names (jaas_context)
    ConfigKey("sasl.enabled.mechanisms", "list", ["GSSAPI"]),
    ConfigKey("sasl.mechanism.inter.broker.protocol", "string", "GSSAPI"),
    ConfigKey("sasl.jaas.config", "password", None),
    ConfigKey("sasl.server.max.receive.size", "int", 524288),
    ConfigKey("connection.failed.authentication.delay.ms", "int", 100, at_least(0)),
    # Known so as to be refused when set (franz cannot honour it): a custom callback handler
    # would decide who gets in.
    ConfigKey("sasl.server.callback.handler.class", "string", None),
    # KIP-368: a positive value is the longest session a SASL connection has before it must
    # re-authenticate; also per listener and per mechanism (listener.name.<l>.<mechanism>.)
    ConfigKey("connections.max.reauth.ms", "long", 0),
    # GSSAPI (gssapi_sasl_server), each also as listener.name.<listener>.<key>: the service name the
    # JAAS entry's principal must agree with, and how a client's Kerberos principal becomes its
    # Kafka principal (KerberosShortNamer). The login keys are taken and unused: franz only accepts,
    # with the keytab's keys, and never logs in to the KDC itself.
    ConfigKey("sasl.kerberos.service.name", "string", None),
    ConfigKey("sasl.kerberos.principal.to.local.rules", "list", ["DEFAULT"]),
    ConfigKey("sasl.kerberos.kinit.cmd", "string", "/usr/bin/kinit"),
    ConfigKey("sasl.kerberos.ticket.renew.window.factor", "double", 0.8),
    ConfigKey("sasl.kerberos.ticket.renew.jitter", "double", 0.05),
    ConfigKey("sasl.kerberos.min.time.before.relogin", "long", 60_000),
    # OAuthBearerValidatorCallbackHandler's (oauth_bearer_validator), each also as
    # listener.name.<listener>[.oauthbearer].<key>
    ConfigKey("sasl.oauthbearer.jwks.endpoint.url", "string", None),
    ConfigKey("sasl.oauthbearer.jwks.endpoint.refresh.ms", "long", 3_600_000),
    ConfigKey("sasl.oauthbearer.jwks.endpoint.retry.backoff.ms", "long", 100),
    ConfigKey("sasl.oauthbearer.jwks.endpoint.retry.backoff.max.ms", "long", 10_000),
    ConfigKey("sasl.oauthbearer.clock.skew.seconds", "int", 30),
    ConfigKey("sasl.oauthbearer.expected.audience", "list", None),
    ConfigKey("sasl.oauthbearer.expected.issuer", "string", None),
    ConfigKey("sasl.oauthbearer.scope.claim.name", "string", "scope"),
    ConfigKey("sasl.oauthbearer.sub.claim.name", "string", "sub"),
    # TLS on SSL and SASL_SSL listeners (default_ssl_engine_factory), each key also per listener as
    # listener.name.<listener>.<key>. ssl.client.auth reaches a SASL_SSL listener only so (KIP-684).
    ConfigKey("ssl.protocol", "string", "TLSv1.3"),
    ConfigKey("ssl.enabled.protocols", "list", ["TLSv1.2", "TLSv1.3"]),
    ConfigKey("ssl.cipher.suites", "list", []),
    ConfigKey("ssl.keystore.type", "string", "JKS"),
    ConfigKey("ssl.keystore.location", "string", None),
    ConfigKey("ssl.keystore.password", "password", None),
    ConfigKey("ssl.key.password", "password", None),
    ConfigKey("ssl.keystore.key", "password", None),
    ConfigKey("ssl.keystore.certificate.chain", "password", None),
    ConfigKey("ssl.truststore.type", "string", "JKS"),
    ConfigKey("ssl.truststore.location", "string", None),
    ConfigKey("ssl.truststore.password", "password", None),
    ConfigKey("ssl.truststore.certificates", "password", None),
    ConfigKey("ssl.client.auth", "string", "none", one_of("required", "requested", "none")),
    ConfigKey("ssl.principal.mapping.rules", "string", "DEFAULT"),
    # A Java TLS stack's knobs (the client-side host check, its providers and algorithms): known, and
    # without meaning for OpenSSL's; a custom engine factory is refused.
    ConfigKey("ssl.endpoint.identification.algorithm", "string", "https"),
    ConfigKey("ssl.keymanager.algorithm", "string", "SunX509"),
    ConfigKey("ssl.trustmanager.algorithm", "string", "PKIX"),
    ConfigKey("ssl.secure.random.implementation", "string", None),
    ConfigKey("ssl.provider", "string", None),
    ConfigKey("ssl.engine.factory.class", "string", None),
    # Delegation tokens (DelegationTokenManagerConfigs): a non-empty secret key enables them. Kafka 4.0
    # removed delegation.token.master.key, an unknown key since.
    ConfigKey("delegation.token.secret.key", "password", None),
    ConfigKey("delegation.token.max.lifetime.ms", "long", 7 * 24 * _HOUR_MS, at_least(1)),
    ConfigKey("delegation.token.expiry.time.ms", "long", 24 * _HOUR_MS, at_least(1)),
    ConfigKey("delegation.token.expiry.check.interval.ms", "long", _HOUR_MS, at_least(1)),
    ConfigKey("authorizer.class.name", "string", ""),
    ConfigKey("principal.builder.class", "string", DEFAULT_PRINCIPAL_BUILDER),
    ConfigKey("create.topic.policy.class.name", "string", None),
    ConfigKey("alter.config.policy.class.name", "string", None),
    ConfigKey("client.quota.callback.class", "string", None),
    ConfigKey("ssl.allow.dn.changes", "boolean", False),
    ConfigKey("ssl.allow.san.changes", "boolean", False),
    ConfigKey("max.connections", "int", INT32_MAX, at_least(0)),
    ConfigKey("max.connections.per.ip", "int", INT32_MAX, at_least(0)),
    ConfigKey("max.connections.per.ip.overrides", "string", ""),
    ConfigKey("max.connection.creation.rate", "int", INT32_MAX, at_least(0)),
    ConfigKey("num.network.threads", "int", 3, at_least(1)),
    ConfigKey("num.io.threads", "int", 8, at_least(1)),
    ConfigKey("background.threads", "int", 10, at_least(1)),
    # Client quotas: the samples a client's byte rate is measured over (QuotaConfig).
    ConfigKey("quota.window.num", "int", 11, at_least(1)),
    ConfigKey("quota.window.size.seconds", "int", 1, at_least(1)),
    ConfigKey("request.timeout.ms", "int", 30_000, at_least(0)),
    ConfigKey("fetch.max.bytes", "int", 55 * 1024 * 1024, at_least(1024)),
    ConfigKey("replica.fetch.max.bytes", "int", 1024 * 1024, at_least(0)),
    ConfigKey("max.incremental.fetch.session.cache.slots", "int", 1000, at_least(0)),
    ConfigKey("max.request.partition.size.limit", "int", 2000, at_least(1)),
    ConfigKey("fetch.purgatory.purge.interval.requests", "int", 1000),
    ConfigKey("producer.purgatory.purge.interval.requests", "int", 1000),
    # Producers and transactions.
    ConfigKey("producer.id.expiration.ms", "int", 86_400_000, at_least(1)),
    ConfigKey("producer.id.expiration.check.interval.ms", "int", 600_000, at_least(1)),
    ConfigKey("transactional.id.expiration.ms", "int", 604_800_000, at_least(1)),
    ConfigKey("transaction.remove.expired.transaction.cleanup.interval.ms", "int", 3_600_000, at_least(1)),
    ConfigKey("transaction.partition.verification.enable", "boolean", True),
    ConfigKey("transaction.max.timeout.ms", "int", 900_000, at_least(1)),
    ConfigKey("transaction.abort.timed.out.transaction.cleanup.interval.ms", "int", 10_000, at_least(1)),
    ConfigKey("transaction.state.log.num.partitions", "int", 50, at_least(1)),
    ConfigKey("transaction.state.log.replication.factor", "short", 3, at_least(1)),
    ConfigKey("transaction.state.log.min.isr", "int", 2, at_least(1)),
    ConfigKey("transaction.state.log.segment.bytes", "int", 100 * 1024 * 1024, at_least(1)),
    # Groups.
    ConfigKey("offsets.topic.num.partitions", "int", 50, at_least(1)),
    ConfigKey("offsets.topic.replication.factor", "short", 3, at_least(1)),
    ConfigKey("offsets.topic.segment.bytes", "int", 100 * 1024 * 1024, at_least(1)),
    ConfigKey("offsets.topic.compression.codec", "int", 0, _compression_id),
    ConfigKey("offsets.retention.minutes", "int", 7 * 24 * 60, at_least(1)),
    ConfigKey("offsets.retention.check.interval.ms", "long", 600_000, at_least(1)),
    ConfigKey("offsets.commit.timeout.ms", "int", 5000, at_least(1)),
    ConfigKey("offset.metadata.max.bytes", "int", 4096),
    ConfigKey("group.initial.rebalance.delay.ms", "int", 3000),
    ConfigKey("group.min.session.timeout.ms", "int", 6000),
    ConfigKey("group.max.session.timeout.ms", "int", 1_800_000),
    ConfigKey("group.max.size", "int", INT32_MAX, at_least(1)),
    ConfigKey("group.coordinator.rebalance.protocols", "list", ["classic", "consumer", "streams"],
              each_of("classic", "consumer", "streams", "share")),
    ConfigKey("group.consumer.session.timeout.ms", "int", 45_000, at_least(1)),
    ConfigKey("group.consumer.heartbeat.interval.ms", "int", 5000, at_least(1)),
    # The bounds of a group's own configs (GroupConfig), and the share-group keys they hold.
    ConfigKey("group.consumer.min.session.timeout.ms", "int", 45_000, at_least(1)),
    ConfigKey("group.consumer.max.session.timeout.ms", "int", 60_000, at_least(1)),
    ConfigKey("group.consumer.min.heartbeat.interval.ms", "int", 5000, at_least(1)),
    ConfigKey("group.consumer.max.heartbeat.interval.ms", "int", 15_000, at_least(1)),
    # KIP-1263 (4.3): a group's target assignment is computed at most once per interval
    ConfigKey("group.consumer.assignment.interval.ms", "int", 1000, at_least(0)),
    ConfigKey("group.consumer.min.assignment.interval.ms", "int", 0, at_least(0)),
    ConfigKey("group.consumer.max.assignment.interval.ms", "int", 15_000, at_least(0)),
    # internal in Kafka: how often a group's regex subscriptions are resolved again at the latest
    ConfigKey("group.consumer.regex.refresh.interval.ms", "int", 600_000, at_least(10_000)),
    ConfigKey("group.share.session.timeout.ms", "int", 45_000, at_least(1)),
    ConfigKey("group.share.min.session.timeout.ms", "int", 45_000, at_least(1)),
    ConfigKey("group.share.max.session.timeout.ms", "int", 60_000, at_least(1)),
    ConfigKey("group.share.heartbeat.interval.ms", "int", 5000, at_least(1)),
    ConfigKey("group.share.min.heartbeat.interval.ms", "int", 5000, at_least(1)),
    ConfigKey("group.share.max.heartbeat.interval.ms", "int", 15_000, at_least(1)),
    ConfigKey("group.share.record.lock.duration.ms", "int", 30_000, between(1000, 3_600_000)),
    ConfigKey("group.share.min.record.lock.duration.ms", "int", 15_000, between(1000, 30_000)),
    ConfigKey("group.share.max.record.lock.duration.ms", "int", 60_000, between(30_000, 3_600_000)),
    ConfigKey("group.share.max.size", "int", 200, between(1, 1000)),
    ConfigKey("group.share.assignment.interval.ms", "int", 1000, at_least(0)),
    ConfigKey("group.share.min.assignment.interval.ms", "int", 0, at_least(0)),
    ConfigKey("group.share.max.assignment.interval.ms", "int", 15_000, at_least(0)),
    ConfigKey("group.share.delivery.count.limit", "int", 5, between(2, 10)),
    ConfigKey("group.share.min.delivery.count.limit", "int", 2, between(2, 5)),
    ConfigKey("group.share.max.delivery.count.limit", "int", 10, between(5, 25)),
    ConfigKey("group.share.partition.max.record.locks", "int", 2000, between(100, 10_000)),
    ConfigKey("group.share.min.partition.max.record.locks", "int", 100, between(100, 2000)),
    ConfigKey("group.share.max.partition.max.record.locks", "int", 4000, between(2000, 10_000)),
    ConfigKey("group.share.max.share.sessions", "int", 2000, at_least(1)),
    ConfigKey("share.coordinator.state.topic.num.partitions", "int", 50, at_least(1)),
    ConfigKey("share.coordinator.state.topic.replication.factor", "short", 3, at_least(1)),
    ConfigKey("share.coordinator.state.topic.min.isr", "short", 2, at_least(1)),
    ConfigKey("share.coordinator.state.topic.segment.bytes", "int", 100 * 1024 * 1024, at_least(1)),
    ConfigKey("share.coordinator.snapshot.update.records.per.snapshot", "int", 500, between(0, 500)),
    # internal in Kafka: how often the share coordinator deletes the records of __share_group_state
    # that later snapshots made redundant, and rewrites the snapshots of share-partitions idle that long
    ConfigKey("share.coordinator.state.topic.prune.interval.ms", "int", 300_000, at_least(1)),
    ConfigKey("share.coordinator.cold.partition.snapshot.interval.ms", "int", 300_000, at_least(1)),
    ConfigKey("group.consumer.max.size", "int", INT32_MAX, at_least(1)),
    # KIP-1071 streams groups: their defaults, and the bounds of a streams group's own configs
    ConfigKey("group.streams.session.timeout.ms", "int", 45_000, at_least(1)),
    ConfigKey("group.streams.min.session.timeout.ms", "int", 45_000, at_least(1)),
    ConfigKey("group.streams.max.session.timeout.ms", "int", 60_000, at_least(1)),
    ConfigKey("group.streams.heartbeat.interval.ms", "int", 5000, at_least(1)),
    ConfigKey("group.streams.min.heartbeat.interval.ms", "int", 5000, at_least(1)),
    ConfigKey("group.streams.max.heartbeat.interval.ms", "int", 15_000, at_least(1)),
    ConfigKey("group.streams.max.size", "int", INT32_MAX, at_least(1)),
    ConfigKey("group.streams.num.standby.replicas", "int", 0, at_least(0)),
    ConfigKey("group.streams.max.standby.replicas", "int", 2, at_least(0)),
    ConfigKey("group.streams.initial.rebalance.delay.ms", "int", 3000, at_least(0)),
    ConfigKey("group.streams.assignment.interval.ms", "int", 1000, at_least(0)),
    ConfigKey("group.streams.min.assignment.interval.ms", "int", 0, at_least(0)),
    ConfigKey("group.streams.max.assignment.interval.ms", "int", 15_000, at_least(0)),
    # online conversion of a non-empty group between the classic and the consumer protocol
    ConfigKey("group.consumer.migration.policy", "string", "bidirectional",
              one_of("disabled", "upgrade", "downgrade", "bidirectional", case_sensitive=False)),
    # the server-side assignors of franz/coordinator/group/assignor.py; the first is the default
    ConfigKey("group.consumer.assignors", "list", ["uniform", "range"], each_of("uniform", "range", non_empty=True)),
    # Observability (franz): 0 disables the Prometheus endpoint.
    ConfigKey("metrics.port", "int", 0, between(0, 65535)),
])

_LISTENER_RE = re.compile(r"^(?P<name>[A-Za-z0-9_]+)://(?P<host>\[[^\]]*\]|[^:]*):(?P<port>\d+)$")


@dataclasses.dataclass(frozen=True, slots=True)
class Endpoint:
    listener_name: str
    host: str
    port: int

    @classmethod
    def parse(cls, key: str, text: str) -> Endpoint:
        match = _LISTENER_RE.match(text.strip())
        if match is None:
            raise ConfigError(key, text, "Expected a listener of the form NAME://host:port")
        port = int(match["port"])
        if not 0 <= port <= 65535:
            raise ConfigError(key, text, "Port must be between 0 and 65535")
        return cls(match["name"].upper(), match["host"].strip("[]"), port)


def parse_overrides(items: Sequence[str]) -> dict[str, str]:
    overrides = {}
    for item in items:
        key, sep, value = item.partition("=")
        if not sep or not key.strip():
            raise ConfigError("--override", item, "Expected KEY=VALUE")
        overrides[key.strip()] = value.strip()
    return overrides


# The log.cleaner.* keys a running broker can change (LogCleaner.ReconfigurableConfigs; the
# cleaner's largest batch follows message.max.bytes, a dynamic log config).
CLEANER_RECONFIGURABLE_KEYS = ("log.cleaner.threads", "log.cleaner.dedupe.buffer.size",
                               "log.cleaner.io.buffer.load.factor", "log.cleaner.io.buffer.size",
                               "log.cleaner.io.max.bytes.per.second", "log.cleaner.backoff.ms")


# The producer-state keys a running broker can change (DynamicProducerStateManagerConfig).
PRODUCER_STATE_RECONFIGURABLE_KEYS = ("producer.id.expiration.ms", "transaction.partition.verification.enable")


# The group coordinator keys a running broker can change (GroupCoordinatorConfig.RECONFIGURABLE_CONFIGS
# that franz has): each within its min/max keys, which are static.
GROUP_COORDINATOR_RECONFIGURABLE_KEYS = ("group.consumer.assignment.interval.ms", "group.share.assignment.interval.ms",
                                         "group.streams.assignment.interval.ms")

# The connection limits a running broker can change (SocketServer.ReconfigurableConfigs).
SOCKET_SERVER_RECONFIGURABLE_KEYS = ("max.connections.per.ip", "max.connections.per.ip.overrides",
                                     "max.connections", "max.connection.creation.rate")

# Keys naming a Java class that decides what a client may do or is told. franz cannot run one, and
# a broker that took the key and went on without the class would quietly let through what its
# operator meant to stop: refused at startup unless unset, naming Kafka's own default, or naming a
# class franz implements (_JAVA_PLUGINS_TAKEN).
_JAVA_PLUGINS: Final = {
    "authorizer.class.name": "its decisions could not be made (franz implements "
                             "org.apache.kafka.metadata.authorizer.StandardAuthorizer)",
    "principal.builder.class": "principals would be DefaultKafkaPrincipalBuilder's",
    "create.topic.policy.class.name": "the policy could not refuse a topic",
    "alter.config.policy.class.name": "the policy could not refuse a config change",
    "client.quota.callback.class": "quotas would be the default ones",
}

# The plugin franz implements itself: KRaft's StandardAuthorizer (franz/server/standard_authorizer.py)
STANDARD_AUTHORIZER: Final = "org.apache.kafka.metadata.authorizer.StandardAuthorizer"
_JAVA_PLUGINS_TAKEN: Final = frozenset({("authorizer.class.name", STANDARD_AUTHORIZER)})
AUTHORIZER_KEYS: Final = ("super.users", "allow.everyone.if.no.acl.found")

# A TLS listener's key and trust stores (SslConfigs.RECONFIGURABLE_CONFIGS): a running broker
# changes them under a listener's prefix, on this broker only, never bare (DynamicBrokerConfig).
SSL_RECONFIGURABLE_KEYS = ("ssl.keystore.type", "ssl.keystore.location", "ssl.keystore.password", "ssl.key.password",
                           "ssl.truststore.type", "ssl.truststore.location", "ssl.truststore.password",
                           "ssl.keystore.certificate.chain", "ssl.keystore.key", "ssl.truststore.certificates")

# Every broker key a running broker can change, besides the log configs' synonyms and the
# listener-prefixed connection and TLS store keys (is_broker_reconfigurable).
BROKER_RECONFIGURABLE_KEYS = (CLEANER_RECONFIGURABLE_KEYS + PRODUCER_STATE_RECONFIGURABLE_KEYS
                              + GROUP_COORDINATOR_RECONFIGURABLE_KEYS + SOCKET_SERVER_RECONFIGURABLE_KEYS)

# The keys a listener may set for itself as `listener.name.<its name in lower case>.<key>`, which
# rank before the unprefixed key for that listener (ListenerConnectionQuota's, read through
# valuesWithPrefixOverride); static and dynamic alike.
LISTENER_CONNECTION_KEYS = ("max.connections", "max.connection.creation.rate")
_LISTENER_PREFIXED: Final = re.compile(r"listener\.name\.([^.]+)\.(.+)")


def listener_key(listener_name: str, key: str) -> str:
    """The listener-prefixed form of a key (ListenerName.configPrefix: the name in lower case)."""
    return f"listener.name.{listener_name.lower()}.{key}"


def listener_connection_key(key: str) -> tuple[str, str] | None:
    """(listener name as listeners write it, base key) of a listener-prefixed connection key; else
    None. Kafka looks prefixed keys up in lower case only, so another spelling is not one."""
    return _listener_prefixed(key, LISTENER_CONNECTION_KEYS)


def listener_ssl_store_key(key: str) -> tuple[str, str] | None:
    """(listener name, base key) of a listener-prefixed key store or trust store key; else None."""
    return _listener_prefixed(key, SSL_RECONFIGURABLE_KEYS)


def _listener_prefixed(key: str, base_keys: tuple[str, ...]) -> tuple[str, str] | None:
    match = _LISTENER_PREFIXED.fullmatch(key)
    if match is None or match[2] not in base_keys or match[1] != match[1].lower():
        return None
    return match[1].upper(), match[2]


# the sasl.kerberos keys BROKER_CONFIG_DEF defines, which a listener may set for itself
LISTENER_KERBEROS_KEYS: Final = tuple(key for key in BROKER_CONFIG_DEF.keys if key.startswith("sasl.kerberos."))

_LISTENER_SASL_KEY: Final = re.compile(r"listener\.name\.[^.]+\.(sasl\.enabled\.mechanisms"
                                       r"|sasl\.server\.max\.receive\.size|"
                                       + "|".join(re.escape(key) for key in LISTENER_KERBEROS_KEYS) +
                                       r"|(?:[^.]+\.)?(?:sasl\.jaas\.config"
                                       r"|sasl\.oauthbearer\.[a-z.]+"
                                       r"|sasl\.server\.callback\.handler\.class|connections\.max\.reauth\.ms))")


_LISTENER_SSL_KEY: Final = re.compile(r"listener\.name\.[^.]+\.(ssl\..+)")


def is_listener_security_key(key: str) -> bool:
    """A listener's own SASL key (its mechanisms, or a mechanism's JAAS entries) or SSL key."""
    if _LISTENER_SASL_KEY.fullmatch(key) is not None:
        return True
    ssl_key = _LISTENER_SSL_KEY.fullmatch(key)
    return ssl_key is not None and ssl_key[1] in BROKER_CONFIG_DEF.keys


def broker_key_definition(key: str) -> ConfigKey | None:
    """The definition a broker key's value is parsed with (a listener-prefixed key's is its base
    key's); None for a key franz does not know."""
    prefixed = listener_connection_key(key) or listener_ssl_store_key(key)
    return BROKER_CONFIG_DEF.keys.get(prefixed[1] if prefixed else key)


def is_broker_reconfigurable(key: str) -> bool:
    """Whether a running broker can change this broker key (a log config synonym aside)."""
    return (key in BROKER_RECONFIGURABLE_KEYS or listener_connection_key(key) is not None
            or listener_ssl_store_key(key) is not None)


def is_per_broker_key(key: str) -> bool:
    """A dynamic key that names one broker's resources, so that the cluster default cannot set it
    (DynamicBrokerConfig.perBrokerConfigs: a listener's keys but its connection limits)."""
    return listener_ssl_store_key(key) is not None


def producer_state_config(values: Mapping[str, Any]) -> ProducerStateManagerConfig:
    """Every log's producer-state settings from typed broker values."""
    return ProducerStateManagerConfig(values["producer.id.expiration.ms"],
                                      values["transaction.partition.verification.enable"])


def cleaner_config(values: Mapping[str, Any], max_message_bytes: int) -> CleanerConfig:
    """The LogCleaner's settings from typed broker values (LogCleaner.cleanerConfig)."""
    return CleanerConfig(
        num_threads=values["log.cleaner.threads"], dedupe_buffer_size=values["log.cleaner.dedupe.buffer.size"],
        dedupe_buffer_load_factor=values["log.cleaner.io.buffer.load.factor"],
        io_buffer_size=values["log.cleaner.io.buffer.size"], max_message_size=max_message_bytes,
        max_io_bytes_per_second=values["log.cleaner.io.max.bytes.per.second"],
        backoff_ms=values["log.cleaner.backoff.ms"], enable_cleaner=values["log.cleaner.enable"])


def cleaner_config_problem(config: CleanerConfig) -> str | None:
    """KafkaConfig's requirement on the dedupe buffer, or None when it is met. (With no thread
    Kafka divides by zero here; franz lets a cleaner without threads be.)"""
    if config.num_threads > 0 and config.dedupe_buffer_size // config.num_threads <= 1024 * 1024:
        return "log.cleaner.dedupe.buffer.size must be at least 1MB per cleaner thread."
    return None


def _heartbeat_session_and_assignment_bounds(prefix: str) -> tuple[tuple[str, str, str], ...]:
    """The checks GroupCoordinatorConfig makes alike for each group type, in its order."""
    return (("min", f"{prefix}max.heartbeat.interval.ms", f"{prefix}min.heartbeat.interval.ms"),
            ("min", f"{prefix}heartbeat.interval.ms", f"{prefix}min.heartbeat.interval.ms"),
            ("max", f"{prefix}heartbeat.interval.ms", f"{prefix}max.heartbeat.interval.ms"),
            ("min", f"{prefix}max.session.timeout.ms", f"{prefix}min.session.timeout.ms"),
            ("min", f"{prefix}session.timeout.ms", f"{prefix}min.session.timeout.ms"),
            ("max", f"{prefix}session.timeout.ms", f"{prefix}max.session.timeout.ms"),
            ("below", f"{prefix}heartbeat.interval.ms", f"{prefix}session.timeout.ms"),
            ("min", f"{prefix}max.assignment.interval.ms", f"{prefix}min.assignment.interval.ms"),
            ("min", f"{prefix}assignment.interval.ms", f"{prefix}min.assignment.interval.ms"),
            ("max", f"{prefix}assignment.interval.ms", f"{prefix}max.assignment.interval.ms"))


# GroupCoordinatorConfig's requirements between its keys, in its order: (kind, key, other key).
# "min": key >= other; "max": key <= other; "below": key < other.
_GROUP_COORDINATOR_BOUNDS: Final = (
    *_heartbeat_session_and_assignment_bounds("group.consumer."),
    *_heartbeat_session_and_assignment_bounds("group.share."),
    *_heartbeat_session_and_assignment_bounds("group.streams."),
    ("max", "group.streams.num.standby.replicas", "group.streams.max.standby.replicas"),
    # then ShareGroupConfig's
    ("min", "group.share.record.lock.duration.ms", "group.share.min.record.lock.duration.ms"),
    ("min", "group.share.max.record.lock.duration.ms", "group.share.record.lock.duration.ms"),
    ("min", "group.share.delivery.count.limit", "group.share.min.delivery.count.limit"),
    ("max", "group.share.delivery.count.limit", "group.share.max.delivery.count.limit"),
    ("min", "group.share.partition.max.record.locks", "group.share.min.partition.max.record.locks"),
    ("max", "group.share.partition.max.record.locks", "group.share.max.partition.max.record.locks"),
    ("min", "group.share.max.share.sessions", "group.share.max.size"))
_BOUND_WORDS: Final = {"min": "greater than or equal to", "max": "less than or equal to", "below": "less than"}


def require_group_coordinator_bounds(values: Mapping[str, Any]) -> None:
    """GroupCoordinatorConfig's and ShareGroupConfig's checks: Kafka refuses to start when one
    fails, with Utils.require's message alone."""
    for kind, key, other in _GROUP_COORDINATOR_BOUNDS:
        value, limit = values[key], values[other]
        if not {"min": value >= limit, "max": value <= limit, "below": value < limit}[kind]:
            message = f"{key} must be {_BOUND_WORDS[kind]} {other}"
            raise ConfigError(key, value, message, message)


# Broker keys whose values KafkaConfig checks itself after resolving the units (validateValues), with no
# validator of their own in SERVER_CONFIG_DEF: log.retention.hours=-1 is the usual "keep forever".
_BROKER_TIME_KEYS: Final = frozenset(("log.retention.ms", "log.roll.ms", "log.roll.jitter.ms"))


def config_type(name: str) -> str | None:
    """A broker key's type (KafkaConfig.configType), a topic default's as its topic key's; None
    for a key franz does not know."""
    definition = BROKER_CONFIG_DEF.keys.get(name)
    if definition is None and name in BROKER_SYNONYMS:
        definition = TOPIC_CONFIG_DEF.keys[BROKER_SYNONYMS[name]]
    return None if definition is None else definition.type


# Utils.validHostPattern: the characters a host or an address may have.
_VALID_HOST: Final = re.compile(r"[0-9a-zA-Z\-%._:]*")


def _connections_per_ip_overrides(text: str) -> dict[str, int]:
    """max.connections.per.ip.overrides, `host:count` pairs (Csv.parseCsvMap: split at each
    comma, then at the last colon of a pair, so an IPv6 address keeps its own), checked as
    KafkaConfig checks them."""
    key = "max.connections.per.ip.overrides"
    overrides: dict[str, int] = {}
    if not text:
        return overrides
    for pair in re.split(r"\s*,\s*", text):
        host, sep, count = pair.rpartition(":")
        if not sep:  # parseCsvMap's substring(0, -1)
            raise ConfigError(key, text, "", f"Error parsing configuration property '{key}': "
                                             f"begin 0, end -1, length {len(pair)}")
        try:
            overrides[host.strip()] = int(count.strip())
        except ValueError:
            # Kafka's toInt fails with NumberFormatException alone; franz names the key.
            raise ConfigError(key, text,
                              f"the count of {host.strip()} is not a whole number: {count.strip()}") from None
    invalid = [host for host in overrides if not _VALID_HOST.fullmatch(host)]
    if invalid:
        raise ConfigError(key, text, "", f"{key} contains invalid addresses : {','.join(invalid)}")
    return overrides


def connections_per_ip_overrides(values: Mapping[str, Any]) -> dict[str, int]:
    """max.connections.per.ip.overrides of typed broker values, checked with
    max.connections.per.ip as KafkaConfig checks them."""
    overrides = _connections_per_ip_overrides(values["max.connections.per.ip.overrides"])
    if values["max.connections.per.ip"] == 0 and not overrides:
        _require_failed("max.connections.per.ip", 0, "max.connections.per.ip can be set to zero only if "
                        "max.connections.per.ip.overrides property is set.")
    return overrides


_OAUTH_BEARER_OPTIONS: Final = re.compile(
    "unsecuredValidator(PrincipalClaimName|ScopeClaimName|RequiredScope|AllowableClockSkewMs)"
    "|unsecuredLogin(PrincipalClaimName|LifetimeSeconds|ScopeClaimName"
    "|(StringClaim|NumberClaim|ListClaim|Extension)_.*)")


def _oauth_bearer_validator(source: _JaasSource, options: dict[str, str]) -> OAuthBearerUnsecuredValidator:
    """OAUTHBEARER's JAAS entry: the validator's options, and the broker's own login Kafka makes
    with the same entry at startup (refused as it fails: oauth_bearer_unsecured_validator). Kafka
    ignores an option it does not read; franz warns of one, as a likely misspelling."""
    for name in options:
        if _OAUTH_BEARER_OPTIONS.fullmatch(name) is None:
            logger.warning("%s: OAuthBearerLoginModule's unsecured login and validator do not read the option %s",
                           source.label, name)
    try:
        check_unsecured_login(options)
        return OAuthBearerUnsecuredValidator(options)
    except OAuthBearerConfigError as exc:
        raise source.refused(str(exc)) from None


@dataclasses.dataclass(frozen=True)
class _JaasSource:
    """A mechanism's JAAS context and where it came from, to name in a refusal: the listener's
    <mechanism>.sasl.jaas.config key (a password, never shown), or, that key unset, a section of
    the JAAS file of the system property."""
    key: str
    context: JaasContext
    configuration: LoginConfiguration | None  # the file's, for a context read from it

    @property
    def label(self) -> str:
        if self.configuration is None:
            return self.key
        return f"the '{self.context.name}' entry of the JAAS configuration ({self.configuration.described()})"

    def refused(self, reason: str) -> ConfigError:
        if self.configuration is None:
            return ConfigError(self.key, "[hidden]", reason)  # Password.HIDDEN
        return ConfigError(self.key, None, "", f"{reason}, in {self.label}")


# the login modules of the SASL mechanisms franz serves, which a JAAS file's section may hold
_LOGIN_MODULES: Final = (PLAIN_LOGIN_MODULE, SCRAM_LOGIN_MODULE, OAUTH_BEARER_LOGIN_MODULE, KRB5_LOGIN_MODULE)


def _require_failed(key: str, value: Any, requirement: str) -> None:
    """KafkaConfig.validateValues' Utils.require: Kafka refuses to start with Scala's words alone."""
    message = f"requirement failed: {requirement}"
    raise ConfigError(key, value, requirement, message)


class KafkaConfig:
    """The resolved broker configuration. `values` holds typed values by key."""

    def __init__(self, props: Mapping[str, Any]) -> None:
        self.originals = dict(props)
        self.values, unknown = BROKER_CONFIG_DEF.parse(self.originals)
        # Keys that are topic-config synonyms are validated by LogConfig.
        self.unknown_keys = [key for key in unknown if key not in BROKER_SYNONYMS
                             and listener_connection_key(key) is None and not is_listener_security_key(key)]
        for key in unknown:  # listener-prefixed connection and store keys, typed under their own names
            if listener_connection_key(key) is not None or listener_ssl_store_key(key) is not None:
                try:
                    self.values[key] = broker_key_definition(key).parse(self.originals[key])
                except ConfigError as exc:
                    raise ConfigError(key, exc.value, exc.reason) from None
        for broker_key, topic_key in BROKER_SYNONYMS.items():
            if broker_key in self.originals:
                definition = TOPIC_CONFIG_DEF.keys[topic_key]
                if broker_key in _BROKER_TIME_KEYS:  # typed only: KafkaConfig's requirements follow
                    definition = dataclasses.replace(definition, validator=None)
                try:
                    definition.parse(self.originals[broker_key])
                except ConfigError as exc:  # name the key the operator wrote
                    raise ConfigError(broker_key, exc.value, exc.reason) from None
        self.log_config = LogConfig.from_props({}, self._log_config_props())
        self.cleaner_config = self._cleaner_config()
        self.listeners = [Endpoint.parse("listeners", text) for text in self.values["listeners"]]
        self.controller_listener_names = [name.strip().upper()
                                          for name in self.values["controller.listener.names"] or ()]
        if not self.listeners:
            raise ConfigError("listeners", self.originals.get("listeners"), "At least one listener is required")
        protocols = self._listener_security_protocols()
        for endpoint in self.listeners:
            protocol = protocols.get(endpoint.listener_name)
            if protocol is None:  # listenerListToEndPoints' IllegalArgumentException
                raise ConfigError("listeners", self.originals.get("listeners"), "",
                                  f"No security protocol defined for listener {endpoint.listener_name}")
        self.listener_security_protocols = {endpoint.listener_name: protocols[endpoint.listener_name]
                                            for endpoint in self.listeners}
        for key in unknown:  # ChannelBuilders parses each listener's own keys by their definitions
            kerberos = _listener_prefixed(key, LISTENER_KERBEROS_KEYS)
            if kerberos is not None and kerberos[0] in self.listener_security_protocols:
                BROKER_CONFIG_DEF.keys[kerberos[1]].parse(self.originals[key])  # Kafka's words: the key unprefixed
        self._static_jaas: LoginConfiguration | None = None
        # listener name -> its SASL settings, for every SASL_PLAINTEXT and SASL_SSL listener
        self.sasl_listeners = {listener: self._sasl_listener_config(listener)
                               for listener, protocol in self.listener_security_protocols.items()
                               if protocol.startswith("SASL_")}
        for key, what in _JAVA_PLUGINS.items():
            value = self.values[key]
            if value and value != BROKER_CONFIG_DEF.keys[key].default and (key, value) not in _JAVA_PLUGINS_TAKEN:
                raise ConfigError(key, value, f"franz cannot run a Java class, so {what}: unset it")
        # StandardAuthorizer's own keys, which it reads from the broker's (Kafka passes them on)
        self.unknown_keys = [key for key in self.unknown_keys if key not in AUTHORIZER_KEYS]
        if self.values["authorizer.class.name"] == STANDARD_AUTHORIZER:
            for principal in str(self.originals.get("super.users") or "").split(";"):
                if principal.strip() and ":" not in principal:  # SecurityUtils.parseKafkaPrincipal
                    raise ConfigError("super.users", self.originals["super.users"], "expected a string in format "
                                      f"principalType:principalName but got {principal.strip()}")
        # listener name -> its TLS context, for every SSL and SASL_SSL listener
        self.ssl_listeners = {listener: self.ssl_listener_config(listener)
                              for listener, protocol in self.listener_security_protocols.items()
                              if protocol.endswith("SSL")}
        require_group_coordinator_bounds(self.values)
        self.max_connections_per_ip_overrides = connections_per_ip_overrides(self.values)
        self.inter_broker_listener_name = self._inter_broker_listener_name(protocols)
        advertised = self.values["advertised.listeners"]
        self.advertised_listeners = ([Endpoint.parse("advertised.listeners", text) for text in advertised]
                                     if advertised else list(self.listeners))
        broker_advertised = [endpoint.listener_name for endpoint in self.advertised_listeners
                             if endpoint.listener_name not in self.controller_listener_names]
        delay_ms = self.values["connection.failed.authentication.delay.ms"]
        idle_ms = self.values["connections.max.idle.ms"]
        if idle_ms >= 0 and delay_ms >= idle_ms:
            _require_failed("connection.failed.authentication.delay.ms", delay_ms,
                            f"connection.failed.authentication.delay.ms={delay_ms} should always be less than "
                            f"connections.max.idle.ms={idle_ms} to prevent failed authentication responses from "
                            f"timing out")
        inter_broker_sasl = self.sasl_listeners.get(self.inter_broker_listener_name)
        mechanism = self.values["sasl.mechanism.inter.broker.protocol"]
        if inter_broker_sasl is not None and mechanism not in inter_broker_sasl.mechanisms:
            _require_failed("sasl.mechanism.inter.broker.protocol", mechanism,
                            "sasl.mechanism.inter.broker.protocol must be included in sasl.enabled.mechanisms "
                            "when SASL is used for inter-broker communication")
        if self.inter_broker_listener_name not in broker_advertised:
            _require_failed("inter.broker.listener.name", self.inter_broker_listener_name,
                            "inter.broker.listener.name must be a listener name defined in advertised.listeners. "
                            "The valid options based on currently configured listeners are "
                            + ",".join(broker_advertised))

    def _sasl_listener_config(self, listener: str) -> SaslListenerConfig:
        """A SASL listener's mechanisms (its own key before sasl.enabled.mechanisms) and their JAAS
        entries: listener.name.<listener>.<mechanism>.sasl.jaas.config, else the section of the JAAS
        file -Djava.security.auth.login.config in KAFKA_OPTS names (JaasContext.loadServerContext),
        which every mechanism of the listener without the key shares, each taking its own login
        module's options from it; ConfigError naming the key."""
        key, mechanisms = self._listener_value(listener, "sasl.enabled.mechanisms")
        if not mechanisms:
            raise ConfigError(key, self.originals.get(key), "", f"No SASL mechanisms are enabled on listener "
                                                                f"{listener}")
        unsupported = [mechanism for mechanism in mechanisms if mechanism not in SASL_SUPPORTED_MECHANISMS]
        if unsupported:
            raise ConfigError(key, ",".join(mechanisms), "",
                              f"franz serves the SASL mechanisms {', '.join(SASL_SUPPORTED_MECHANISMS)}, not "
                              f"{', '.join(unsupported)} (listener {listener})")
        handler_key = listener_key(listener, "oauthbearer.sasl.server.callback.handler.class")
        secured = "OAUTHBEARER" in mechanisms and str(self.originals.get(handler_key, "")).strip() in \
            VALIDATOR_CALLBACK_HANDLER_CLASSES  # KIP-768's handler: the one franz serves
        name = "sasl.server.callback.handler.class"
        for refused in (name, listener_key(listener, name),
                        *(listener_key(listener, f"{mechanism.lower()}.{name}") for mechanism in mechanisms)):
            if secured and refused == handler_key:
                continue
            value = self.originals.get(refused)
            if value is not None and str(value).strip() not in ("", "0"):
                raise ConfigError(refused, value, "franz authenticates with its own PLAIN, SCRAM and OAUTHBEARER "
                                                  "servers (validated unsecured, or by "
                                                  f"{VALIDATOR_CALLBACK_HANDLER_CLASSES[0]} as {handler_key}): "
                                                  "unset it")
        plain_users: dict[str, str] = {}
        oauth_bearer_validator = None
        kerberos = None
        for mechanism in mechanisms:
            source = self._jaas_source(listener, mechanism)
            entries = source.context.entries
            if GSSAPI in mechanisms:  # SaslChannelBuilder logs every mechanism in with KerberosLogin
                self._check_kerberos_service_name(listener, entries)
            module = {"PLAIN": PLAIN_LOGIN_MODULE, "OAUTHBEARER": OAUTH_BEARER_LOGIN_MODULE,
                      GSSAPI: KRB5_LOGIN_MODULE}.get(mechanism, SCRAM_LOGIN_MODULE)
            if mechanism == "OAUTHBEARER" and len(entries) != 1:  # its callback handlers take one entry
                raise source.refused(f"Must supply exactly 1 non-null JAAS mechanism configuration (size was "
                                     f"{len(entries)})")
            if source.context.dynamic or mechanism == "OAUTHBEARER":
                if entries[0].login_module != module:
                    raise source.refused(f"franz knows only {module} for {mechanism}, not {entries[0].login_module}")
            else:  # Kafka's login runs every module of the section, whatever the mechanism
                for entry in entries:
                    if entry.login_module not in _LOGIN_MODULES:
                        raise source.refused(f"franz cannot run the login module {entry.login_module}, knowing only "
                                             f"{', '.join(_LOGIN_MODULES)}")
            if mechanism == "PLAIN":  # PlainServerCallbackHandler: user_<name>=<password> of PlainLoginModule
                plain_users = {}
                for entry in entries:
                    if entry.login_module == PLAIN_LOGIN_MODULE:
                        for name, password in entry.options.items():
                            if name.startswith("user_"):
                                plain_users.setdefault(name[len("user_"):], password)
                if not any(entry.login_module == PLAIN_LOGIN_MODULE for entry in entries):
                    logger.warning("%s has no %s: PLAIN authenticates no one on listener %s", source.label,
                                   PLAIN_LOGIN_MODULE, listener)
            if mechanism == "OAUTHBEARER":  # the broker's own (unsecured) login is checked either way
                oauth_bearer_validator = _oauth_bearer_validator(source, entries[0].options)
                if secured:
                    oauth_bearer_validator = self._oauth_bearer_secured_validator(listener)
            if mechanism == GSSAPI:
                kerberos = self._kerberos_service(listener, key, source)
        _, max_receive_size = self._listener_value(listener, "sasl.server.max.receive.size")
        # SaslServerAuthenticator's enabledMechanisms: a HashSet's list, as its SaslHandshake answers give it
        return SaslListenerConfig(tuple(java_hash_set_order(mechanisms)), plain_users,
                                  self.values["connection.failed.authentication.delay.ms"], max_receive_size,
                                  oauth_bearer_validator, self._max_reauth_ms(listener, mechanisms), kerberos)

    def _jaas_source(self, listener: str, mechanism: str) -> _JaasSource:
        """JaasContext.loadServerContext: the listener's <mechanism>.sasl.jaas.config, else the JAAS
        file's section, with Kafka's refusals naming that key."""
        jaas_key = listener_key(listener, f"{mechanism.lower()}.sasl.jaas.config")
        text = self.originals.get(jaas_key)
        if text is None and self._listener_value(listener, "sasl.jaas.config")[1] is not None:
            logger.warning("Server config sasl.jaas.config should be prefixed with SASL mechanism name, ignoring "
                           "config")
        try:
            context = load_server_context(listener, None if text is None else str(text), self._login_configuration)
        except ValueError as exc:
            if text is not None:
                raise ConfigError(jaas_key, "[hidden]", str(exc)) from None  # Password.HIDDEN
            raise ConfigError(jaas_key, None, "", str(exc)) from None
        return _JaasSource(jaas_key, context, None if context.dynamic else self._login_configuration())

    def _login_configuration(self) -> LoginConfiguration:
        """The JVM's static JAAS configuration, read once (Configuration.getConfiguration), when a
        mechanism first needs it."""
        if self._static_jaas is None:
            self._static_jaas = load_login_configuration()
        return self._static_jaas

    def _check_kerberos_service_name(self, listener: str, entries: Sequence[LoginModuleEntry]) -> None:
        """KerberosLogin.getServiceName, which its configure calls for each mechanism of a listener
        that enables GSSAPI: a serviceName option of the mechanism's JAAS entries, or the
        listener's sasl.kerberos.service.name; one of them, and not two different."""
        service_key, configured = self._listener_value(listener, "sasl.kerberos.service.name")
        in_jaas = config_entry_option(entries, "serviceName", None)
        if in_jaas is not None and configured is not None and in_jaas != configured:
            raise ConfigError(service_key, configured, "", f"Conflicting serviceName values found in JAAS and "
                                                           f"Kafka configs value in JAAS file {in_jaas}, value in "
                                                           f"Kafka config {configured}")
        if in_jaas is None and configured is None:
            raise ConfigError(service_key, None, "", "No serviceName defined in either JAAS or Kafka config")

    def _kerberos_service(self, listener: str, mechanisms_key: str, source: _JaasSource) -> KerberosService:
        """A GSSAPI listener's Kerberos side, refused at startup as Kafka refuses it (its service name
        is checked for every mechanism: _check_kerberos_service_name): the Krb5LoginModule entry's
        principal (KerberosName) and its keytab, whose keys for that principal must be there
        (Kafka's login reads them at startup), and the listener's
        sasl.kerberos.principal.to.local.rules over the default realm of the Kerberos configuration
        (KRB5_CONFIG, or -Djava.security.krb5.conf in KAFKA_OPTS as Java takes it). These are the
        options of the context's first Krb5LoginModule entry, whose subject gives the acceptor its
        principal."""
        try:
            import gssapi
        except ImportError:
            raise ConfigError(mechanisms_key, "GSSAPI", "", "GSSAPI needs the Python package gssapi (pip "
                                                            "install 'franz[kerberos]', with MIT Kerberos' "
                                                            "libkrb5-dev to build it)") from None
        use_krb5_config_of_kafka_opts()
        entries = source.context.entries
        options = next((entry.options for entry in entries if entry.login_module == KRB5_LOGIN_MODULE), None)
        if options is None:  # Kafka starts, and then fails every GSSAPI client: no Kerberos principal to accept as
            raise source.refused(f"GSSAPI needs a {KRB5_LOGIN_MODULE} entry: the broker's service principal and "
                                 f"its keytab")
        # Krb5LoginModule's flags are true only as "true" (any case)
        if options.get("useKeyTab", "").lower() != "true" or not options.get("keyTab"):
            raise source.refused("franz accepts Kerberos clients with the keys of a keytab: set useKeyTab=true and "
                                 "keyTab=\"<file>\" in its Krb5LoginModule entry")
        if options.get("storeKey", "").lower() != "true":
            raise source.refused("storeKey=true is needed: without it the broker keeps no key to accept Kerberos "
                                 "clients with")
        principal = options.get("principal", "")
        if not principal or principal == "*":
            raise source.refused("its Krb5LoginModule entry must name the broker's principal "
                                 "(principal=\"kafka/<host>@<REALM>\")")
        try:
            name = KerberosName.parse(principal)
        except ValueError:
            raise source.refused(f"Principal has name with unexpected format {principal}") from None
        rules_key, rules = self._listener_value(listener, "sasl.kerberos.principal.to.local.rules")
        try:
            short_namer = KerberosShortNamer.from_unparsed_rules(default_realm(), rules)
        except ValueError as exc:
            raise ConfigError(rules_key, ",".join(rules), str(exc)) from None
        service = KerberosService(principal, name.service_name, name.host_name, options["keyTab"], short_namer,
                                  options.get("isInitiator", "true").lower() == "true")
        try:
            check_keytab(principal, options["keyTab"])
        except gssapi.exceptions.GSSError as exc:
            raise source.refused(f"Cannot accept Kerberos clients as {principal} with the keytab "
                                 f"{options['keyTab']}: {exc}") from None
        return service

    def _max_reauth_ms(self, listener: str, mechanisms: Sequence[str]) -> dict[str, int]:
        """SaslChannelBuilder.createConnectionsMaxReauthMsMap: each mechanism's
        listener.name.<l>.<mechanism>.connections.max.reauth.ms, else the listener's, else the broker's."""
        name = "connections.max.reauth.ms"
        _, default = self._listener_value(listener, name)
        by_mechanism = {}
        for mechanism in mechanisms:
            own = listener_key(listener, f"{mechanism.lower()}.{name}")
            if own not in self.originals:
                by_mechanism[mechanism] = default
                continue
            try:
                by_mechanism[mechanism] = BROKER_CONFIG_DEF.keys[name].parse(self.originals[own])
            except ConfigError as exc:
                raise ConfigError(own, self.originals[own], exc.reason) from None
        return by_mechanism

    def _oauth_bearer_secured_validator(self, listener: str) -> OAuthBearerValidator:
        """OAuthBearerValidatorCallbackHandler from the sasl.oauthbearer.* keys, looked up as Kafka's
        ConfigurationUtils does: the listener's oauthbearer-prefixed key, its own, the broker's."""
        def setting(key: str) -> tuple[str, Any]:
            own = listener_key(listener, f"oauthbearer.{key}")
            if own in self.originals:
                return own, BROKER_CONFIG_DEF.keys[key].parse(self.originals[own])
            return self._listener_value(listener, key)
        try:
            return create_validator(setting)
        except OAuthConfigError as exc:  # ConfigException's words unless the message names the key
            raise ConfigError(exc.key, exc.value, str(exc), str(exc) if exc.key in str(exc) else None) from None

    def ssl_listener_config(self, listener: str, dynamic: Mapping[str, Any] | None = None) -> SslListenerConfig:
        """An SSL or SASL_SSL listener's server SSLContext and principal rules, loaded now so that
        a broker whose key store cannot be read does not start (ConfigError naming the key).
        `dynamic`: typed values of the listener's prefixed store keys set since, ranking first."""
        protocol = self.listener_security_protocols[listener]
        _, engine_factory = self._listener_value(listener, "ssl.engine.factory.class")
        if engine_factory not in (None, ""):
            raise ConfigError("ssl.engine.factory.class", engine_factory, "franz builds its TLS context from the ssl.* keys; a Java "
                                                           "SslEngineFactory cannot run here: unset it")

        def setting_of(key: str) -> tuple[str, Any]:
            if key == "ssl.client.auth" and protocol == "SASL_SSL":
                own = listener_key(listener, key)  # KIP-684: the broker-wide value is for SSL listeners
                return (own, self._listener_value(listener, key)[1]) if own in self.originals else (own, "none")
            own = listener_key(listener, key)
            if dynamic is not None and own in dynamic:
                return own, dynamic[own]
            return self._listener_value(listener, key)
        engine = DefaultSslEngineFactory(setting_of)
        context = engine.server_context()
        rules_key, rules = self._listener_value(listener, "ssl.principal.mapping.rules")
        try:
            mapper = SslPrincipalMapper(rules)
        except ValueError as exc:
            raise ConfigError(rules_key, rules, str(exc)) from None
        return SslListenerConfig(context, mapper, engine.key_store_certificates, engine.files_read,
                                 {key: setting_of(key)[1] for key in SSL_RECONFIGURABLE_KEYS})

    def listener_value(self, listener: str, key: str) -> Any:
        """A key's typed value for one listener: its prefixed key's if set, else the broker's."""
        return self._listener_value(listener, key)[1]

    def _listener_value(self, listener: str, key: str) -> tuple[str, Any]:
        """(the key it came from, typed value): the listener's own key if set, else the broker's
        (valuesWithPrefixOverride)."""
        own = listener_key(listener, key)
        if own in self.originals:
            return own, BROKER_CONFIG_DEF.keys[key].parse(self.originals[own])
        return key, self.values[key]

    def _inter_broker_listener_name(self, protocols: Mapping[str, str]) -> str:
        """KafkaConfig.getInterBrokerListenerNameAndSecurityProtocol: the listener named, else the
        one named after security.inter.broker.protocol; one of the two keys at most."""
        named = self.values["inter.broker.listener.name"]
        if named is None:
            return self.values["security.inter.broker.protocol"]
        if "security.inter.broker.protocol" in self.originals:
            raise ConfigError("inter.broker.listener.name", named, "", "Only one of inter.broker.listener.name and "
                              "security.inter.broker.protocol should be set.")
        if named.upper() not in protocols:
            raise ConfigError("inter.broker.listener.name", named, "",
                              f"Listener with name {named.upper()} defined in inter.broker.listener.name not found "
                              f"in listener.security.protocol.map.")
        return named.upper()

    def _listener_security_protocols(self) -> dict[str, str]:
        """Listener name -> security protocol (AbstractKafkaConfig.effectiveListenerSecurityProtocolMap):
        the map as configured; unset, every protocol under its own name, and the controller
        listeners PLAINTEXT unless some listener already names SSL or SASL."""
        configured = self.values["listener.security.protocol.map"]
        written = self.originals.get("listener.security.protocol.map")
        protocols = {}
        for item in configured if configured is not None else [p + ":" + p for p in SECURITY_PROTOCOLS]:
            name, sep, protocol = item.partition(":")
            if not sep or not name.strip():
                raise ConfigError("listener.security.protocol.map", written,
                                  f"Map entry '{item}' is not of the form 'key:value'")
            if protocol.strip().upper() not in SECURITY_PROTOCOLS:
                raise ConfigError("listener.security.protocol.map", written,
                                  f"Unknown security protocol {protocol.strip()}")
            protocols[name.strip().upper()] = protocol.strip().upper()
        if configured is None:
            controllers = self.controller_listener_names
            named = controllers + [e.listener_name for e in self.listeners]
            if not any(name in SECURITY_PROTOCOLS and name != "PLAINTEXT" for name in named):
                protocols.update(dict.fromkeys(controllers, "PLAINTEXT"))
        return protocols

    @classmethod
    def from_sources(cls, config_file: str | Path | None = None,
                     overrides: Sequence[str] = ()) -> KafkaConfig:
        props = dict(EMBEDDED_DEFAULTS) if config_file is None else load_props(config_file)
        props.update(parse_overrides(overrides))
        return cls(props)

    def _cleaner_config(self) -> CleanerConfig:
        config = cleaner_config(self.values, self.log_config.max_message_bytes)
        problem = cleaner_config_problem(config)
        if problem is not None:
            raise ConfigError("log.cleaner.dedupe.buffer.size", self.originals.get("log.cleaner.dedupe.buffer.size"),
                              problem)
        return config

    def _log_config_props(self) -> dict[str, Any]:
        props = {key: self.originals[key] for key in BROKER_SYNONYMS if key in self.originals}
        # Kafka: log.roll.ms else log.roll.hours; log.retention.ms else .minutes else .hours.
        if "log.roll.ms" not in props:
            props["log.roll.ms"] = self.values["log.roll.hours"] * _HOUR_MS
        if "log.roll.jitter.ms" not in props:
            props["log.roll.jitter.ms"] = self.values["log.roll.jitter.hours"] * _HOUR_MS
        if "log.retention.ms" not in props:
            minutes = self.values["log.retention.minutes"]
            props["log.retention.ms"] = (minutes * 60_000 if minutes is not None
                                         else self.values["log.retention.hours"] * _HOUR_MS)
        # KafkaConfig.logRetentionTimeMillis: any negative retention, in whichever unit, is unlimited.
        retention_ms = int(props["log.retention.ms"])
        props["log.retention.ms"] = -1 if retention_ms < 0 else retention_ms
        for key, floor, words in (("log.roll.ms", 1, "greater than or equal to 1"),
                                  ("log.roll.jitter.ms", 0, "greater than or equal to 0")):
            if int(props[key]) < floor:
                _require_failed(key, props[key], f"{key} must be {words}")
        if props["log.retention.ms"] == 0:
            _require_failed("log.retention.ms", 0,
                            "log.retention.ms must be unlimited (-1) or, greater than or equal to 1")
        if "log.flush.interval.ms" not in props:
            props["log.flush.interval.ms"] = self.values["log.flush.scheduler.interval.ms"]
        return props

    def __getitem__(self, key: str) -> Any:
        if key in self.values:
            return self.values[key]
        topic_key = BROKER_SYNONYMS.get(key)
        if topic_key is not None:
            return getattr(self.log_config, topic_key.replace(".", "_"))
        raise KeyError(key)

    @property
    def node_id(self) -> int:
        return self.values["node.id"]

    @property
    def log_dirs(self) -> list[str]:
        return self.values["log.dirs"] or self.values["log.dir"]

    def topic_config_keys(self) -> tuple[str, ...]:
        return tuple(TOPIC_CONFIG_DEF.keys)
