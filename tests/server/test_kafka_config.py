import logging

import pytest

from franz.common.config_def import ConfigError
from franz.common.utils import load_props
from franz.common.kerberos_name import KerberosName, NoMatchingRule
from franz.server.delegation_token_manager import DelegationTokenManager
from franz.server.kafka_config import GROUP_COORDINATOR_RECONFIGURABLE_KEYS, Endpoint, KafkaConfig
from tests.support.kdc import MiniKdc


def test_embedded_default_is_one_node_on_loopback_with_data_under_dot_data():
    config = KafkaConfig.from_sources()
    assert config.node_id == 1
    assert config.listeners == [Endpoint("PLAINTEXT", "127.0.0.1", 9092)]
    assert config.advertised_listeners == config.listeners
    assert config.log_dirs == ["./data"]


def test_properties_file_syntax(tmp_path):
    path = tmp_path / "server.properties"
    path.write_text(
        "# comment\n! also a comment\n"
        "node.id=3\n"
        "listeners = PLAINTEXT://127.0.0.1:19092\n"
        "log.dirs: /a,\\\n    /b\n"
        "log.segment.bytes=4096\n"
    )
    props = load_props(path)
    assert props["log.dirs"] == "/a,/b"
    config = KafkaConfig.from_sources(path)
    assert config.node_id == 3
    assert config.log_dirs == ["/a", "/b"]
    assert config["log.segment.bytes"] == 4096
    assert config.log_config.segment_bytes == 4096


def test_overrides_win_over_the_file():
    config = KafkaConfig.from_sources(None, ["num.partitions=8", "log.retention.ms=1000"])
    assert config["num.partitions"] == 8
    assert config.log_config.retention_ms == 1000


def test_retention_falls_back_from_ms_to_minutes_to_hours():
    assert KafkaConfig.from_sources(None, ["log.retention.minutes=2"]).log_config.retention_ms == 120_000
    assert KafkaConfig.from_sources(None, ["log.retention.hours=1"]).log_config.retention_ms == 3_600_000


def test_unknown_keys_are_reported_for_a_warning():
    config = KafkaConfig.from_sources(None, ["no.such.key=1"])
    assert config.unknown_keys == ["no.such.key"]


def test_keys_read_elsewhere_are_known_and_checked():
    """Kafka defines these (SocketServerConfigs, TransactionStateManagerConfig): no unknown-key
    warning when set, and a value under their floor refused naming them."""
    config = KafkaConfig.from_sources(None, ["socket.listen.backlog.size=7",
                                             "transaction.abort.timed.out.transaction.cleanup.interval.ms=500",
                                             "transaction.remove.expired.transaction.cleanup.interval.ms=900"])
    assert not config.unknown_keys
    assert (config["socket.listen.backlog.size"],
            config["transaction.abort.timed.out.transaction.cleanup.interval.ms"]) == (7, 500)
    with pytest.raises(ConfigError, match="transaction.abort.timed.out.transaction.cleanup.interval.ms"):
        KafkaConfig.from_sources(None, ["transaction.abort.timed.out.transaction.cleanup.interval.ms=0"])
    with pytest.raises(ConfigError, match="^Unknown compression type id: 7$") as refused:  # CompressionType.forId
        KafkaConfig.from_sources(None, ["offsets.topic.compression.codec=7"])
    assert refused.value.key == "offsets.topic.compression.codec"


@pytest.mark.parametrize("override, key", [
    ("num.partitions=0", "num.partitions"),
    ("auto.create.topics.enable=maybe", "auto.create.topics.enable"),
    ("listeners=127.0.0.1:9092", "listeners"),
    ("log.segment.bytes=-5", "log.segment.bytes"),
    ("log.cleanup.policy=shred", "log.cleanup.policy"),
    ("metrics.port=70000", "metrics.port"),
    ("log.cleaner.dedupe.buffer.size=47", "log.cleaner.dedupe.buffer.size"),  # not one key per thread
    ("log.cleaner.backoff.ms=-1", "log.cleaner.backoff.ms"),
    ("max.connections.per.ip.overrides=127.0.0.1:5,10.0.0.1", "max.connections.per.ip.overrides"),
    ("max.connections.per.ip.overrides=127.0.0.1:many", "max.connections.per.ip.overrides"),
    ("max.connections.per.ip.overrides=bad host!:3", "max.connections.per.ip.overrides"),
    ("max.connections.per.ip=0", "max.connections.per.ip"),  # only with overrides
])
def test_bad_values_are_refused_naming_the_key(override, key):
    with pytest.raises(ConfigError, match=key.replace(".", r"\.")):
        KafkaConfig.from_sources(None, [override])


def test_the_cleaner_gets_the_brokers_log_cleaner_keys():
    config = KafkaConfig.from_sources(None, ["log.cleaner.threads=2", "log.cleaner.dedupe.buffer.size=4194304",
                                             "log.cleaner.io.buffer.size=65536", "log.cleaner.backoff.ms=250",
                                             "log.cleaner.io.max.bytes.per.second=1e6", "message.max.bytes=2000000",
                                             "log.cleaner.enable=false"]).cleaner_config
    assert (config.num_threads, config.dedupe_buffer_size, config.io_buffer_size, config.backoff_ms,
            config.max_io_bytes_per_second, config.max_message_size, config.enable_cleaner) == (
        2, 4194304, 65536, 250, 1e6, 2000000, False)
    # KafkaConfig's requirement holds whether or not the cleaner is enabled: 1 MB per thread, strictly more.
    with pytest.raises(ConfigError, match="at least 1MB per cleaner thread"):
        KafkaConfig.from_sources(None, ["log.cleaner.enable=false", "log.cleaner.threads=2",
                                        "log.cleaner.dedupe.buffer.size=2097152"])
    assert KafkaConfig.from_sources(None, ["log.cleaner.threads=2", "log.cleaner.dedupe.buffer.size=2097154"])


@pytest.mark.parametrize("overrides, message", [
    (["group.consumer.heartbeat.interval.ms=300"],
     "group.consumer.heartbeat.interval.ms must be greater than or equal to group.consumer.min.heartbeat.interval.ms"),
    (["group.consumer.session.timeout.ms=90000"],
     "group.consumer.session.timeout.ms must be less than or equal to group.consumer.max.session.timeout.ms"),
    (["group.consumer.min.session.timeout.ms=1000", "group.consumer.session.timeout.ms=4000"],
     "group.consumer.heartbeat.interval.ms must be less than group.consumer.session.timeout.ms"),
    (["group.consumer.min.assignment.interval.ms=2000"],
     "group.consumer.assignment.interval.ms must be greater than or equal to "
     "group.consumer.min.assignment.interval.ms"),
    (["group.share.max.heartbeat.interval.ms=1000"],
     "group.share.max.heartbeat.interval.ms must be greater than or equal to group.share.min.heartbeat.interval.ms"),
    (["group.share.min.record.lock.duration.ms=20000", "group.share.record.lock.duration.ms=15000"],
     "group.share.record.lock.duration.ms must be greater than or equal to group.share.min.record.lock.duration.ms"),
    (["group.share.min.record.lock.duration.ms=40000"], "group.share.min.record.lock.duration.ms"),  # 1000-30000
])
def test_group_coordinator_keys_must_lie_within_their_bounds_as_kafka_requires(overrides, message):
    """GroupCoordinatorConfig's requirements: a broker whose defaults fall outside its own
    bounds does not start."""
    with pytest.raises(ConfigError, match=message) as refused:
        KafkaConfig.from_sources(None, overrides)
    assert refused.value.key in message
    lowered = [f"group.consumer.min.{o.split('=')[0].rsplit('consumer.', 1)[1]}={o.split('=')[1]}"
               for o in overrides[:1] if o.startswith("group.consumer.heartbeat")]
    if lowered:  # with its bound lowered too, the same value is taken
        assert KafkaConfig.from_sources(None, overrides + lowered)["group.consumer.heartbeat.interval.ms"] == 300


def test_streams_group_keys_have_kafkas_defaults():
    """GroupCoordinatorConfig's group.streams.* keys of 4.3 (GroupCoordinatorConfigTest.testConfigs)."""
    config = KafkaConfig.from_sources(None, [])
    assert {key: config[key] for key in (
        "group.streams.session.timeout.ms", "group.streams.min.session.timeout.ms",
        "group.streams.max.session.timeout.ms", "group.streams.heartbeat.interval.ms",
        "group.streams.min.heartbeat.interval.ms", "group.streams.max.heartbeat.interval.ms",
        "group.streams.max.size", "group.streams.num.standby.replicas", "group.streams.max.standby.replicas",
        "group.streams.initial.rebalance.delay.ms", "group.streams.assignment.interval.ms",
        "group.streams.min.assignment.interval.ms", "group.streams.max.assignment.interval.ms")} == {
        "group.streams.session.timeout.ms": 45_000, "group.streams.min.session.timeout.ms": 45_000,
        "group.streams.max.session.timeout.ms": 60_000, "group.streams.heartbeat.interval.ms": 5000,
        "group.streams.min.heartbeat.interval.ms": 5000, "group.streams.max.heartbeat.interval.ms": 15_000,
        "group.streams.max.size": 2**31 - 1, "group.streams.num.standby.replicas": 0,
        "group.streams.max.standby.replicas": 2, "group.streams.initial.rebalance.delay.ms": 3000,
        "group.streams.assignment.interval.ms": 1000, "group.streams.min.assignment.interval.ms": 0,
        "group.streams.max.assignment.interval.ms": 15_000}
    changed = KafkaConfig.from_sources(None, ["group.streams.initial.rebalance.delay.ms=5000",
                                              "group.streams.assignment.interval.ms=125",
                                              "group.streams.min.assignment.interval.ms=25",
                                              "group.streams.max.assignment.interval.ms=225"])
    assert [changed[f"group.streams.{key}"] for key in ("initial.rebalance.delay.ms", "assignment.interval.ms",
                                                         "min.assignment.interval.ms", "max.assignment.interval.ms")
            ] == [5000, 125, 25, 225]


@pytest.mark.parametrize("overrides, message", [
    # GroupCoordinatorConfigTest.testInvalidStreamsConfigs: what a value's own validator refuses
    (["group.streams.session.timeout.ms=0"],
     "Invalid value 0 for configuration group.streams.session.timeout.ms: Value must be at least 1"),
    (["group.streams.min.session.timeout.ms=0"],
     "Invalid value 0 for configuration group.streams.min.session.timeout.ms: Value must be at least 1"),
    (["group.streams.max.session.timeout.ms=0"],
     "Invalid value 0 for configuration group.streams.max.session.timeout.ms: Value must be at least 1"),
    (["group.streams.heartbeat.interval.ms=0"],
     "Invalid value 0 for configuration group.streams.heartbeat.interval.ms: Value must be at least 1"),
    (["group.streams.min.heartbeat.interval.ms=0"],
     "Invalid value 0 for configuration group.streams.min.heartbeat.interval.ms: Value must be at least 1"),
    (["group.streams.max.heartbeat.interval.ms=0"],
     "Invalid value 0 for configuration group.streams.max.heartbeat.interval.ms: Value must be at least 1"),
    (["group.streams.max.size=0"],
     "Invalid value 0 for configuration group.streams.max.size: Value must be at least 1"),
    (["group.streams.num.standby.replicas=-1"],
     "Invalid value -1 for configuration group.streams.num.standby.replicas: Value must be at least 0"),
    (["group.streams.max.standby.replicas=-1"],
     "Invalid value -1 for configuration group.streams.max.standby.replicas: Value must be at least 0"),
    (["group.streams.initial.rebalance.delay.ms=-1"],
     "Invalid value -1 for configuration group.streams.initial.rebalance.delay.ms: Value must be at least 0"),
    (["group.streams.assignment.interval.ms=-1"],
     "Invalid value -1 for configuration group.streams.assignment.interval.ms: Value must be at least 0"),
    # ... and what the constructor's requirements between keys refuse
    (["group.streams.session.timeout.ms=44999"],
     "group.streams.session.timeout.ms must be greater than or equal to group.streams.min.session.timeout.ms"),
    (["group.streams.session.timeout.ms=60001"],
     "group.streams.session.timeout.ms must be less than or equal to group.streams.max.session.timeout.ms"),
    (["group.streams.session.timeout.ms=60001", "group.streams.min.session.timeout.ms=60001"],
     "group.streams.max.session.timeout.ms must be greater than or equal to group.streams.min.session.timeout.ms"),
    (["group.streams.heartbeat.interval.ms=4999"],
     "group.streams.heartbeat.interval.ms must be greater than or equal to group.streams.min.heartbeat.interval.ms"),
    (["group.streams.heartbeat.interval.ms=15001"],
     "group.streams.heartbeat.interval.ms must be less than or equal to group.streams.max.heartbeat.interval.ms"),
    (["group.streams.heartbeat.interval.ms=15001", "group.streams.min.heartbeat.interval.ms=15001"],
     "group.streams.max.heartbeat.interval.ms must be greater than or equal to "
     "group.streams.min.heartbeat.interval.ms"),
    (["group.streams.max.heartbeat.interval.ms=45000", "group.streams.heartbeat.interval.ms=45000"],
     "group.streams.heartbeat.interval.ms must be less than group.streams.session.timeout.ms"),
    (["group.streams.min.assignment.interval.ms=2000"],
     "group.streams.assignment.interval.ms must be greater than or equal to "
     "group.streams.min.assignment.interval.ms"),
    (["group.streams.assignment.interval.ms=15001"],
     "group.streams.assignment.interval.ms must be less than or equal to group.streams.max.assignment.interval.ms"),
    (["group.streams.min.assignment.interval.ms=20000", "group.streams.assignment.interval.ms=20000"],
     "group.streams.max.assignment.interval.ms must be greater than or equal to "
     "group.streams.min.assignment.interval.ms"),
    (["group.streams.num.standby.replicas=3"],
     "group.streams.num.standby.replicas must be less than or equal to group.streams.max.standby.replicas"),
])
def test_streams_group_keys_are_refused_as_kafka_refuses_them(overrides, message):
    with pytest.raises(ConfigError) as refused:
        KafkaConfig.from_sources(None, overrides)
    assert str(refused.value) == message
    assert refused.value.key in message


@pytest.mark.parametrize("overrides", [
    # GroupCoordinatorConfigTest.testInvalidStreamsConfigs: the edges that are taken
    ["group.streams.session.timeout.ms=45000"], ["group.streams.session.timeout.ms=60000"],
    ["group.streams.heartbeat.interval.ms=5000"], ["group.streams.heartbeat.interval.ms=15000"],
    ["group.streams.max.heartbeat.interval.ms=44999", "group.streams.heartbeat.interval.ms=44999"],
    ["group.streams.heartbeat.interval.ms=15000", "group.streams.min.heartbeat.interval.ms=15000"],
    ["group.streams.session.timeout.ms=60000", "group.streams.min.session.timeout.ms=60000"],
    ["group.streams.num.standby.replicas=2"], ["group.streams.initial.rebalance.delay.ms=0"],
])
def test_streams_group_keys_at_their_bounds_are_taken(overrides):
    config = KafkaConfig.from_sources(None, overrides)
    for override in overrides:
        key, value = override.split("=")
        assert config[key] == int(value)


def test_the_streams_assignment_interval_is_a_dynamic_broker_key():
    """GroupCoordinatorConfig.RECONFIGURABLE_CONFIGS has every group type's assignment interval."""
    assert "group.streams.assignment.interval.ms" in GROUP_COORDINATOR_RECONFIGURABLE_KEYS


@pytest.mark.parametrize("override", ["log.retention.hours=-1", "log.retention.minutes=-30", "log.retention.ms=-5"])
def test_a_negative_broker_retention_in_any_unit_is_unlimited(override):
    """KafkaConfig.logRetentionTimeMillis: the broker keys have no range of their own, and any
    negative value means keep forever (log.retention.hours=-1 is the usual way to say so)."""
    assert KafkaConfig.from_sources(None, [override]).log_config.retention_ms == -1


UNLIMITED_OR_POSITIVE = "log.retention.ms must be unlimited (-1) or, greater than or equal to 1"


@pytest.mark.parametrize("override, requirement", [
    ("log.retention.ms=0", UNLIMITED_OR_POSITIVE),
    ("log.retention.hours=0", UNLIMITED_OR_POSITIVE),
    ("log.roll.ms=0", "log.roll.ms must be greater than or equal to 1"),
    ("log.roll.jitter.ms=-1", "log.roll.jitter.ms must be greater than or equal to 0"),
])
def test_kafka_configs_requirements_on_resolved_times_refuse_to_start(override, requirement):
    with pytest.raises(ConfigError) as refused:
        KafkaConfig.from_sources(None, [override])
    assert str(refused.value) == f"requirement failed: {requirement}"


def test_max_connections_per_ip_overrides_are_parsed_as_kafka_parses_them():
    """Csv.parseCsvMap: pairs split at commas (spaces around them dropped), each at its last colon."""
    config = KafkaConfig.from_sources(None, ["max.connections.per.ip=0",
                                             "max.connections.per.ip.overrides=broker-1.local:5 , ::1:7,10.0.0.1:0"])
    assert config.max_connections_per_ip_overrides == {"broker-1.local": 5, "::1": 7, "10.0.0.1": 0}
    assert KafkaConfig.from_sources(None, []).max_connections_per_ip_overrides == {}


def test_listener_prefixed_connection_keys_are_typed_under_their_names():
    """listener.name.<listener in lower case>.max.connections and .max.connection.creation.rate
    (valuesWithPrefixOverride): known keys, parsed and checked as their base keys and refused
    under their own names; another spelling of the listener is not one of them."""
    config = KafkaConfig.from_sources(None, ["listener.name.plaintext.max.connections=5",
                                             "listener.name.plaintext.max.connection.creation.rate=7",
                                             "listener.name.PLAINTEXT.max.connections=9"])
    assert config["listener.name.plaintext.max.connections"] == 5
    assert config["listener.name.plaintext.max.connection.creation.rate"] == 7
    assert config.unknown_keys == ["listener.name.PLAINTEXT.max.connections"]
    with pytest.raises(ConfigError, match="^Invalid value -1 for configuration "
                                          "listener.name.plaintext.max.connections: Value must be at least 0$"):
        KafkaConfig.from_sources(None, ["listener.name.plaintext.max.connections=-1"])


def test_the_inter_broker_listener_is_named_or_follows_its_security_protocol():
    """KafkaConfig.getInterBrokerListenerNameAndSecurityProtocol: inter.broker.listener.name, a
    listener of the protocol map, else the listener named after security.inter.broker.protocol;
    never both keys; and it must be a broker listener advertised (KafkaConfig.validateValues)."""
    assert KafkaConfig.from_sources(None, []).inter_broker_listener_name == "PLAINTEXT"
    named = KafkaConfig.from_sources(None, ["listeners=PLAINTEXT://127.0.0.1:1,INTERNAL://127.0.0.1:2",
                                            "listener.security.protocol.map=PLAINTEXT:PLAINTEXT,INTERNAL:PLAINTEXT",
                                            "inter.broker.listener.name=internal"])
    assert named.inter_broker_listener_name == "INTERNAL"
    with pytest.raises(ConfigError, match="^Only one of inter.broker.listener.name and security.inter.broker.protocol "
                                          "should be set.$"):
        KafkaConfig.from_sources(None, ["inter.broker.listener.name=PLAINTEXT", "security.inter.broker.protocol=SSL"])
    with pytest.raises(ConfigError, match="Listener with name NOPE defined in inter.broker.listener.name not found"):
        KafkaConfig.from_sources(None, ["inter.broker.listener.name=nope"])
    with pytest.raises(ConfigError, match="security.inter.broker.protocol: String must be one of"):
        KafkaConfig.from_sources(None, ["security.inter.broker.protocol=TLS"])
    with pytest.raises(ConfigError, match="^requirement failed: inter.broker.listener.name must be a listener name "
                                          "defined in advertised.listeners. The valid options based on currently "
                                          "configured listeners are PLAINTEXT$"):
        KafkaConfig.from_sources(None, ["security.inter.broker.protocol=SSL"])
    with pytest.raises(ConfigError, match="configured listeners are PLAINTEXT$"):  # a controller listener is none
        KafkaConfig.from_sources(None, ["listeners=PLAINTEXT://127.0.0.1:1,CONTROLLER://127.0.0.1:2",
                                        "controller.listener.names=CONTROLLER",
                                        "inter.broker.listener.name=CONTROLLER"])


def test_every_listener_needs_a_security_protocol_and_franz_serves_plaintext():
    with pytest.raises(ConfigError, match="^No security protocol defined for listener FOO$") as refused:
        KafkaConfig.from_sources(None, ["listeners=FOO://127.0.0.1:9999"])
    assert refused.value.key == "listeners"
    mapped = KafkaConfig.from_sources(None, ["listeners=FOO://127.0.0.1:9999", "inter.broker.listener.name=FOO",
                                             "listener.security.protocol.map=FOO:PLAINTEXT"])
    assert mapped.listeners == [Endpoint("FOO", "127.0.0.1", 9999)]
    # unset map: the controller listeners are PLAINTEXT (effectiveListenerSecurityProtocolMap)
    both = KafkaConfig.from_sources(None, ["listeners=PLAINTEXT://127.0.0.1:1,CONTROLLER://127.0.0.1:2",
                                           "controller.listener.names=CONTROLLER"])
    assert [e.listener_name for e in both.listeners] == ["PLAINTEXT", "CONTROLLER"]
    with pytest.raises(ConfigError, match="ssl.keystore.location: an SSL listener needs a key store"):
        KafkaConfig.from_sources(None, ["listeners=SSL://127.0.0.1:9999"])
    with pytest.raises(ConfigError, match="listener.security.protocol.map: Unknown security protocol BAR"):
        KafkaConfig.from_sources(None, ["listener.security.protocol.map=PLAINTEXT:BAR"])


PLAIN_JAAS = ('org.apache.kafka.common.security.plain.PlainLoginModule required username="admin" '
              'password="admin-secret" user_admin="admin-secret" user_alice="alice-secret";')
SCRAM_JAAS = "org.apache.kafka.common.security.scram.ScramLoginModule required;"
OAUTH_JAAS = ('org.apache.kafka.common.security.oauthbearer.OAuthBearerLoginModule required '
              'unsecuredLoginStringClaim_sub="admin";')
SASL_LISTENERS = ["listeners=PLAINTEXT://127.0.0.1:1,SASL_PLAINTEXT://127.0.0.1:2",
                  "inter.broker.listener.name=PLAINTEXT"]
NOT_IN_JAAS = ("Could not find a 'KafkaServer' or 'sasl_plaintext.KafkaServer' entry in the JAAS configuration. "
               "System property 'java.security.auth.login.config' is not set")


def test_a_listener_lists_its_mechanisms_as_kafkas_handshake_does():
    """SaslServerAuthenticator keeps the enabled mechanisms as a HashSet's list: each once, in the
    set's order, which its SaslHandshake answer gives clients (PLAIN,SCRAM-SHA-256,SCRAM-SHA-512 is
    [PLAIN, SCRAM-SHA-512, SCRAM-SHA-256] from a Kafka broker)."""
    config = KafkaConfig.from_sources(None, SASL_LISTENERS + [
        "sasl.enabled.mechanisms=PLAIN,SCRAM-SHA-256,SCRAM-SHA-512,PLAIN",
        "listener.name.sasl_plaintext.plain.sasl.jaas.config=" + PLAIN_JAAS,
        "listener.name.sasl_plaintext.scram-sha-256.sasl.jaas.config=" + SCRAM_JAAS,
        "listener.name.sasl_plaintext.scram-sha-512.sasl.jaas.config=" + SCRAM_JAAS])
    assert config.sasl_listeners["SASL_PLAINTEXT"].mechanisms == ("PLAIN", "SCRAM-SHA-512", "SCRAM-SHA-256")


def test_a_sasl_plaintext_listener_takes_its_mechanisms_and_their_jaas_entries():
    config = KafkaConfig.from_sources(None, SASL_LISTENERS + [
        "sasl.enabled.mechanisms=PLAIN,SCRAM-SHA-512",
        "listener.name.sasl_plaintext.plain.sasl.jaas.config=" + PLAIN_JAAS,
        "listener.name.sasl_plaintext.scram-sha-512.sasl.jaas.config=" + SCRAM_JAAS])
    sasl = config.sasl_listeners["SASL_PLAINTEXT"]
    assert sasl.mechanisms == ("PLAIN", "SCRAM-SHA-512") and list(config.sasl_listeners) == ["SASL_PLAINTEXT"]
    assert sasl.plain_users == {"admin": "admin-secret", "alice": "alice-secret"}
    assert (sasl.failed_authentication_delay_ms, sasl.max_receive_size) == (100, 524288)
    assert config.unknown_keys == []  # the listener's own SASL keys are known
    # the listener's own mechanisms rank before sasl.enabled.mechanisms
    own = KafkaConfig.from_sources(None, SASL_LISTENERS + [
        "sasl.enabled.mechanisms=GSSAPI", "listener.name.sasl_plaintext.sasl.enabled.mechanisms=SCRAM-SHA-256",
        "listener.name.sasl_plaintext.scram-sha-256.sasl.jaas.config=" + SCRAM_JAAS,
        "connection.failed.authentication.delay.ms=0"])
    assert own.sasl_listeners["SASL_PLAINTEXT"].mechanisms == ("SCRAM-SHA-256",)
    assert own.sasl_listeners["SASL_PLAINTEXT"].failed_authentication_delay_ms == 0
    # the listener's own frame bound; a JAAS option named by a number is kept by Kafka under a null name
    bound = KafkaConfig.from_sources(None, SASL_LISTENERS + [
        "sasl.enabled.mechanisms=PLAIN", "listener.name.sasl_plaintext.sasl.server.max.receive.size=1024",
        "connections.max.reauth.ms=0",
        "listener.name.sasl_plaintext.plain.sasl.jaas.config=" + PLAIN_JAAS[:-1] + ' 7="x";'])
    assert bound.sasl_listeners["SASL_PLAINTEXT"].max_receive_size == 1024 and bound.unknown_keys == []
    assert bound.sasl_listeners["SASL_PLAINTEXT"].plain_users == {"admin": "admin-secret", "alice": "alice-secret"}


@pytest.mark.parametrize("settings, key, words", [
    ([], "listener.name.sasl_plaintext.gssapi.sasl.jaas.config",  # GSSAPI is Kafka's default
     NOT_IN_JAAS),
    (["sasl.enabled.mechanisms=PLAIN,DIGEST-MD5"], "sasl.enabled.mechanisms",
     "franz serves the SASL mechanisms GSSAPI, PLAIN, SCRAM-SHA-256, SCRAM-SHA-512, OAUTHBEARER, not DIGEST-MD5"),
    (["listener.name.sasl_plaintext.sasl.enabled.mechanisms=OAUTHBEARER"],
     "listener.name.sasl_plaintext.oauthbearer.sasl.jaas.config",
     NOT_IN_JAAS),
    (["sasl.enabled.mechanisms=OAUTHBEARER", "listener.name.sasl_plaintext.oauthbearer.sasl.jaas.config=" + SCRAM_JAAS],
     "listener.name.sasl_plaintext.oauthbearer.sasl.jaas.config", "franz knows only org.apache.kafka.common."
                                                                  "security.oauthbearer.OAuthBearerLoginModule for "
                                                                  "OAUTHBEARER"),
    (["sasl.enabled.mechanisms=OAUTHBEARER", "listener.name.sasl_plaintext.oauthbearer.sasl.jaas.config=" + OAUTH_JAAS,
      "listener.name.sasl_plaintext.oauthbearer.sasl.server.callback.handler.class=com.example.Validator"],
     "listener.name.sasl_plaintext.oauthbearer.sasl.server.callback.handler.class", "unset it"),
    (["sasl.enabled.mechanisms=OAUTHBEARER", "listener.name.sasl_plaintext.oauthbearer.sasl.jaas.config=" + OAUTH_JAAS,
      "sasl.server.callback.handler.class=org.apache.kafka.common.security.oauthbearer."
      "OAuthBearerValidatorCallbackHandler"], "sasl.server.callback.handler.class", "unset it"),
    (["sasl.enabled.mechanisms=PLAIN", "listener.name.sasl_plaintext.plain.sasl.jaas.config=" + PLAIN_JAAS,
      "listener.name.sasl_plaintext.plain.sasl.server.callback.handler.class=org.apache.kafka.common.security."
      "oauthbearer.OAuthBearerValidatorCallbackHandler"],
     "listener.name.sasl_plaintext.plain.sasl.server.callback.handler.class", "unset it"),
    (["sasl.enabled.mechanisms="], "sasl.enabled.mechanisms", "No SASL mechanisms are enabled"),
    (["sasl.enabled.mechanisms=PLAIN"], "listener.name.sasl_plaintext.plain.sasl.jaas.config",
     NOT_IN_JAAS),
    (["sasl.enabled.mechanisms=PLAIN", "sasl.jaas.config=" + PLAIN_JAAS],  # Kafka ignores it on a broker
     "listener.name.sasl_plaintext.plain.sasl.jaas.config", NOT_IN_JAAS),
    (["sasl.enabled.mechanisms=PLAIN", "listener.name.sasl_plaintext.plain.sasl.jaas.config=a.B required"],
     "listener.name.sasl_plaintext.plain.sasl.jaas.config", "JAAS config entry not terminated by semi-colon"),
    (["sasl.enabled.mechanisms=PLAIN", "listener.name.sasl_plaintext.plain.sasl.jaas.config=" + SCRAM_JAAS],
     "listener.name.sasl_plaintext.plain.sasl.jaas.config", "franz knows only org.apache.kafka.common.security"
                                                            ".plain.PlainLoginModule for PLAIN"),
    (["sasl.enabled.mechanisms=PLAIN", "listener.name.sasl_plaintext.plain.sasl.jaas.config=" + PLAIN_JAAS,
      "connection.failed.authentication.delay.ms=-1"], "connection.failed.authentication.delay.ms", "at least 0"),
    (["sasl.enabled.mechanisms=PLAIN", "listener.name.sasl_plaintext.plain.sasl.jaas.config=" + PLAIN_JAAS * 2],
     "listener.name.sasl_plaintext.plain.sasl.jaas.config", "JAAS config property contains 2 login modules, "
                                                            "should be 1 module"),
    (["sasl.enabled.mechanisms=PLAIN", "listener.name.sasl_plaintext.plain.sasl.jaas.config=" + PLAIN_JAAS,
      "listener.name.sasl_plaintext.plain.sasl.server.callback.handler.class=com.example.Users"],
     "listener.name.sasl_plaintext.plain.sasl.server.callback.handler.class", "unset it"),
    (["sasl.enabled.mechanisms=PLAIN", "listener.name.sasl_plaintext.plain.sasl.jaas.config=" + PLAIN_JAAS,
      "listener.name.sasl_plaintext.plain.connections.max.reauth.ms=soon"],
     "listener.name.sasl_plaintext.plain.connections.max.reauth.ms", "Invalid value soon"),
    (["sasl.enabled.mechanisms=PLAIN", "listener.name.sasl_plaintext.plain.sasl.jaas.config=" + PLAIN_JAAS,
      "connection.failed.authentication.delay.ms=600000"], "connection.failed.authentication.delay.ms",
     "should always be less than connections.max.idle.ms=600000"),
])
def test_a_sasl_listener_without_what_it_needs_is_refused_naming_the_key(monkeypatch, settings, key, words):
    monkeypatch.delenv("KAFKA_OPTS", raising=False)  # no JAAS file
    with pytest.raises(ConfigError) as refused:
        KafkaConfig.from_sources(None, SASL_LISTENERS + settings)
    assert refused.value.key == key and words in str(refused.value), str(refused.value)
    assert "admin-secret" not in str(refused.value)  # a JAAS value is a password: never shown


def test_connections_max_reauth_ms_is_taken_per_mechanism_then_listener_then_broker():
    """SaslChannelBuilder.createConnectionsMaxReauthMsMap over the listener's prefixed values (KIP-368)."""
    base = SASL_LISTENERS + ["sasl.enabled.mechanisms=PLAIN,SCRAM-SHA-512",
                             "listener.name.sasl_plaintext.plain.sasl.jaas.config=" + PLAIN_JAAS,
                             "listener.name.sasl_plaintext.scram-sha-512.sasl.jaas.config=" + SCRAM_JAAS]
    unset = KafkaConfig.from_sources(None, base)
    assert unset.sasl_listeners["SASL_PLAINTEXT"].max_reauth_ms == {"PLAIN": 0, "SCRAM-SHA-512": 0}
    broker = KafkaConfig.from_sources(None, base + ["connections.max.reauth.ms=3600000"])
    assert broker.sasl_listeners["SASL_PLAINTEXT"].max_reauth_ms == {"PLAIN": 3600000, "SCRAM-SHA-512": 3600000}
    assert broker.unknown_keys == []
    prefixed = KafkaConfig.from_sources(None, base + [
        "connections.max.reauth.ms=3600000", "listener.name.sasl_plaintext.connections.max.reauth.ms=60000",
        "listener.name.sasl_plaintext.plain.connections.max.reauth.ms=2000"])
    assert prefixed.sasl_listeners["SASL_PLAINTEXT"].max_reauth_ms == {"PLAIN": 2000, "SCRAM-SHA-512": 60000}
    assert prefixed.unknown_keys == []


def test_an_oauthbearer_listener_takes_the_unsecured_validators_options():
    config = KafkaConfig.from_sources(None, SASL_LISTENERS + [
        "sasl.enabled.mechanisms=OAUTHBEARER",
        "listener.name.sasl_plaintext.oauthbearer.sasl.jaas.config=" + OAUTH_JAAS[:-1]
        + ' unsecuredValidatorPrincipalClaimName="user" unsecuredValidatorScopeClaimName="roles"'
          ' unsecuredValidatorRequiredScope=" kafka  produce " unsecuredValidatorAllowableClockSkewMs="250";'])
    validator = config.sasl_listeners["SASL_PLAINTEXT"].oauth_bearer_validator
    assert (validator.principal_claim_name, validator.scope_claim_name, validator.required_scope,
            validator.allowable_clock_skew_ms) == ("user", "roles", ["kafka", "produce"], 250)
    assert config.unknown_keys == []
    defaults = KafkaConfig.from_sources(None, SASL_LISTENERS + [  # no options: a login without a token
        "sasl.enabled.mechanisms=OAUTHBEARER",
        "listener.name.sasl_plaintext.oauthbearer.sasl.jaas.config=" + OAUTH_JAAS.split(" unsecured")[0] + ";"])
    validator = defaults.sasl_listeners["SASL_PLAINTEXT"].oauth_bearer_validator
    assert (validator.principal_claim_name, validator.scope_claim_name, validator.required_scope,
            validator.allowable_clock_skew_ms) == ("sub", "scope", [], 0)


def test_an_oauthbearer_option_nothing_reads_is_warned_of(caplog):
    with caplog.at_level(logging.WARNING, logger="franz.server.kafka_config"):
        KafkaConfig.from_sources(None, SASL_LISTENERS + [
            "sasl.enabled.mechanisms=OAUTHBEARER",
            "listener.name.sasl_plaintext.oauthbearer.sasl.jaas.config=" + OAUTH_JAAS[:-1]
            + ' unsecuredValidatorRequiredScopes="kafka" unsecuredLoginExtension_traceId="t1";'])
    assert [record.getMessage() for record in caplog.records] == [
        "listener.name.sasl_plaintext.oauthbearer.sasl.jaas.config: OAuthBearerLoginModule's unsecured login and "
        "validator do not read the option unsecuredValidatorRequiredScopes"]


_TOKEN_FAILURE = "An internal error occurred while retrieving token from callback handler: "


@pytest.mark.parametrize("options, words", [
    # Kafka's broker logs in with the same entry at startup; options without a subject fail that login
    ('unsecuredValidatorRequiredScope="kafka"', _TOKEN_FAILURE + "No principal name in JWT claim: sub"),
    ('unsecuredLoginStringClaim_sub="  "', _TOKEN_FAILURE + "No principal name in JWT claim: sub"),
    ('unsecuredLoginNumberClaim_sub="1"', _TOKEN_FAILURE + "The 'sub' claim was not of type String: Double"),
    ('unsecuredLoginStringClaim_sub="a" unsecuredLoginNumberClaim_scope="1"',
     _TOKEN_FAILURE + "The 'scope' claim was not of type List: Double"),
    ('unsecuredLoginStringClaim_sub="a" unsecuredLoginNumberClaim_n="x"', _TOKEN_FAILURE + 'For input string: "x"'),
    ('unsecuredLoginStringClaim_sub="a" unsecuredLoginLifetimeSeconds="1h"', _TOKEN_FAILURE + 'For input string: "1h"'),
    ('unsecuredLoginStringClaim_sub="a" unsecuredLoginStringClaim_exp="1"',
     _TOKEN_FAILURE + "Cannot explicitly set the 'exp' claim"),
    ('unsecuredLoginExtension_a="b"', _TOKEN_FAILURE + "Extensions provided in login context without a token"),
    ('unsecuredLoginStringClaim_sub="a" unsecuredLoginExtension_auth="b"',
     "An internal error occurred while retrieving SASL extensions from callback handler: Extension name auth is "
     "invalid"),
    ("unsecuredLoginStringClaim_sub=\"a\" unsecuredValidatorRequiredScope='a\"b'", 'Invalid scope value: a"b'),
    ('unsecuredLoginStringClaim_sub="a" unsecuredValidatorAllowableClockSkewMs="1s"', 'For input string: "1s"'),
    ('unsecuredLoginStringClaim_sub="a" unsecuredValidatorAllowableClockSkewMs="-1"',
     "Allowable clock skew millis must not be negative: -1"),
])
def test_an_oauthbearer_entry_kafka_could_not_use_is_refused_naming_the_key(options, words):
    key = "listener.name.sasl_plaintext.oauthbearer.sasl.jaas.config"
    with pytest.raises(ConfigError) as refused:
        KafkaConfig.from_sources(None, SASL_LISTENERS + [
            "sasl.enabled.mechanisms=OAUTHBEARER",
            f"{key}=org.apache.kafka.common.security.oauthbearer.OAuthBearerLoginModule required {options};"])
    assert refused.value.key == key and str(refused.value).endswith(words), str(refused.value)


def _jaas_file(tmp_path, monkeypatch, text, option="-Djava.security.auth.login.config="):
    """A JAAS file given the broker as kafka-server-start.sh operators give it, in KAFKA_OPTS."""
    path = tmp_path / "kafka_server_jaas.conf"
    path.write_text(text, encoding="utf-8")
    monkeypatch.setenv("KAFKA_OPTS", f"-Xmx1G {option}{path}")
    return path


JAAS_FILE = ("KafkaServer {\n"
             "  " + PLAIN_JAAS[:-1] + " user_alice=\"alice-2\";\n"
             "  org.apache.kafka.common.security.plain.PlainLoginModule optional user_bob=\"bob-secret\"\n"
             "    user_alice=\"nor-this\";\n"
             "  " + SCRAM_JAAS + "\n"
             "};\n")


@pytest.mark.parametrize("option", ["-Djava.security.auth.login.config=", "-Djava.security.auth.login.config=="])
def test_a_mechanism_without_its_jaas_key_takes_the_jaas_files_kafkaserver_section(tmp_path, monkeypatch, option):
    """JaasContext.loadServerContext: every mechanism shares the section, PLAIN's users are the user_*
    options of its PlainLoginModule entries, the first one naming a user giving its password
    (PlainServerCallbackHandler; within one entry the last option of a name counts, as in a
    HashMap); SCRAM needs nothing of it."""
    _jaas_file(tmp_path, monkeypatch, JAAS_FILE, option)
    config = KafkaConfig.from_sources(None, SASL_LISTENERS + ["sasl.enabled.mechanisms=PLAIN,SCRAM-SHA-256"])
    sasl = config.sasl_listeners["SASL_PLAINTEXT"]
    assert sasl.mechanisms == ("PLAIN", "SCRAM-SHA-256") and config.unknown_keys == []
    assert sasl.plain_users == {"admin": "admin-secret", "alice": "alice-2", "bob": "bob-secret"}


def test_the_listeners_own_section_and_a_mechanisms_key_come_first(tmp_path, monkeypatch):
    _jaas_file(tmp_path, monkeypatch, JAAS_FILE + "sasl_plaintext.KafkaServer {\n"
               "  org.apache.kafka.common.security.plain.PlainLoginModule required user_carol=\"c\";\n};\n")
    own = KafkaConfig.from_sources(None, SASL_LISTENERS + ["sasl.enabled.mechanisms=PLAIN"])
    assert own.sasl_listeners["SASL_PLAINTEXT"].plain_users == {"carol": "c"}
    keyed = KafkaConfig.from_sources(None, SASL_LISTENERS + [
        "sasl.enabled.mechanisms=PLAIN", "listener.name.sasl_plaintext.plain.sasl.jaas.config=" + PLAIN_JAAS])
    assert keyed.sasl_listeners["SASL_PLAINTEXT"].plain_users == {"admin": "admin-secret", "alice": "alice-secret"}
    # a file no mechanism needs is never read, as the JVM reads it only when asked
    monkeypatch.setenv("KAFKA_OPTS", f"-Djava.security.auth.login.config={tmp_path / 'missing.conf'}")
    assert KafkaConfig.from_sources(None, SASL_LISTENERS + [
        "sasl.enabled.mechanisms=PLAIN", "listener.name.sasl_plaintext.plain.sasl.jaas.config=" + PLAIN_JAAS])


def test_an_oauthbearer_listener_takes_its_options_from_the_jaas_file(tmp_path, monkeypatch):
    _jaas_file(tmp_path, monkeypatch, "KafkaServer { " + OAUTH_JAAS[:-1] + ' unsecuredValidatorScopeClaimName="r"; };')
    config = KafkaConfig.from_sources(None, SASL_LISTENERS + ["sasl.enabled.mechanisms=OAUTHBEARER"])
    assert config.sasl_listeners["SASL_PLAINTEXT"].oauth_bearer_validator.scope_claim_name == "r"


def test_plain_without_a_plainloginmodule_in_the_section_authenticates_no_one(tmp_path, monkeypatch, caplog):
    path = _jaas_file(tmp_path, monkeypatch, "KafkaServer { " + SCRAM_JAAS + " };")
    with caplog.at_level(logging.WARNING, logger="franz.server.kafka_config"):
        config = KafkaConfig.from_sources(None, SASL_LISTENERS + [
            "sasl.enabled.mechanisms=PLAIN", "sasl.jaas.config=" + PLAIN_JAAS])
    assert config.sasl_listeners["SASL_PLAINTEXT"].plain_users == {}
    assert [record.getMessage() for record in caplog.records] == [
        "Server config sasl.jaas.config should be prefixed with SASL mechanism name, ignoring config",
        "the 'KafkaServer' entry of the JAAS configuration (System property 'java.security.auth.login.config' is "
        f"{path}) has no org.apache.kafka.common.security.plain.PlainLoginModule: PLAIN authenticates no one on "
        "listener SASL_PLAINTEXT"]


_FILE_IS = "System property 'java.security.auth.login.config' is {path}"


@pytest.mark.parametrize("text, mechanisms, words", [
    ("Server { " + PLAIN_JAAS + " };", "PLAIN",
     "Could not find a 'KafkaServer' or 'sasl_plaintext.KafkaServer' entry in the JAAS configuration. " + _FILE_IS),
    ("KafkaServer {\n " + PLAIN_JAAS[:-1] + " };", "PLAIN", "Configuration Error:\n\tLine 2: expected [option key]. "
                                                            + _FILE_IS),
    ("KafkaServer { " + SCRAM_JAAS + " com.sun.security.auth.module.JndiLoginModule optional; };", "SCRAM-SHA-256",
     "com.sun.security.auth.module.JndiLoginModule is not allowed. The system property "
     "'org.apache.kafka.disallowed.login.modules' is deprecated."),
    ("KafkaServer { " + SCRAM_JAAS + " com.example.AuditLoginModule required; };", "SCRAM-SHA-256",
     "franz cannot run the login module com.example.AuditLoginModule, knowing only org.apache.kafka.common.security"
     ".plain.PlainLoginModule, org.apache.kafka.common.security.scram.ScramLoginModule, org.apache.kafka.common."
     "security.oauthbearer.OAuthBearerLoginModule, com.sun.security.auth.module.Krb5LoginModule, in the "
     f"'KafkaServer' entry of the JAAS configuration ({_FILE_IS})"),
    ("KafkaServer { " + OAUTH_JAAS + " " + PLAIN_JAAS + " };", "OAUTHBEARER",
     "Must supply exactly 1 non-null JAAS mechanism configuration (size was 2), in the 'KafkaServer' entry"),
    ("KafkaServer { " + PLAIN_JAAS + " };", "OAUTHBEARER",
     "franz knows only org.apache.kafka.common.security.oauthbearer.OAuthBearerLoginModule for OAUTHBEARER, not "
     "org.apache.kafka.common.security.plain.PlainLoginModule, in the 'KafkaServer' entry"),
    ("KafkaServer { " + OAUTH_JAAS[:-1] + ' unsecuredLoginStringClaim_sub=""; };', "OAUTHBEARER",
     "An internal error occurred while retrieving token from callback handler: No principal name in JWT claim: "
     "sub, in the 'KafkaServer' entry"),
])
def test_a_jaas_file_kafka_could_not_use_is_refused_naming_the_mechanisms_key(tmp_path, monkeypatch, text,
                                                                               mechanisms, words):
    path = _jaas_file(tmp_path, monkeypatch, text)
    with pytest.raises(ConfigError) as refused:
        KafkaConfig.from_sources(None, SASL_LISTENERS + [f"sasl.enabled.mechanisms={mechanisms}"])
    assert refused.value.key == f"listener.name.sasl_plaintext.{mechanisms.lower()}.sasl.jaas.config"
    assert words.replace("{path}", str(path)) in str(refused.value), str(refused.value)
    assert "admin-secret" not in str(refused.value)


def test_a_missing_jaas_file_is_refused_with_the_jdks_words(tmp_path, monkeypatch):
    missing = tmp_path / "missing.conf"
    monkeypatch.setenv("KAFKA_OPTS", f"-Djava.security.auth.login.config={missing}")
    with pytest.raises(ConfigError) as refused:
        KafkaConfig.from_sources(None, SASL_LISTENERS + ["sasl.enabled.mechanisms=SCRAM-SHA-512"])
    assert refused.value.key == "listener.name.sasl_plaintext.scram-sha-512.sasl.jaas.config"
    assert str(refused.value) == (f"{missing} (No such file or directory). System property "
                                  f"'java.security.auth.login.config' is {missing}")


@pytest.fixture(scope="module")
def realm(tmp_path_factory):
    """A KDC's realm with a keytab of kafka/localhost and of kafka (a service principal without host)."""
    kdc = MiniKdc(tmp_path_factory.mktemp("kdc")).start()
    try:
        keytab = kdc.create_principal(kdc.work_dir / "kafka.keytab", "kafka/localhost", "kafka")
        yield kdc, keytab
    finally:
        kdc.stop()


def _krb5_jaas(keytab, principal="kafka/localhost@FRANZ.TEST", flags="useKeyTab=true storeKey=true"):
    return (f'listener.name.sasl_plaintext.gssapi.sasl.jaas.config=com.sun.security.auth.module.Krb5LoginModule '
            f'required {flags} keyTab="{keytab}" principal="{principal}";')


def test_a_gssapi_listener_takes_its_service_principal_keytab_and_rules(realm, monkeypatch):
    kdc, keytab = realm
    monkeypatch.setenv("KRB5_CONFIG", "/nonexistent")  # restored after the test: KAFKA_OPTS will replace it
    monkeypatch.setenv("KAFKA_OPTS", f"-Xmx1G -Djava.security.krb5.conf={kdc.krb5_conf}")
    config = KafkaConfig.from_sources(None, SASL_LISTENERS + [
        "sasl.enabled.mechanisms=GSSAPI", "sasl.kerberos.service.name=kafka", _krb5_jaas(keytab),
        "listener.name.sasl_plaintext.sasl.kerberos.principal.to.local.rules=RULE:[1:$1@$0](.*@FRANZ.TEST)s/@.*//L,"
        "DEFAULT", "sasl.kerberos.kinit.cmd=/usr/bin/kinit", "sasl.kerberos.min.time.before.relogin=1000"])
    assert config.unknown_keys == []
    kerberos = config.sasl_listeners["SASL_PLAINTEXT"].kerberos
    assert (kerberos.principal, kerberos.service_name, kerberos.host_name, kerberos.keytab) == \
        ("kafka/localhost@FRANZ.TEST", "kafka", "localhost", str(keytab))
    # the realm came from the krb5.conf KAFKA_OPTS names: DEFAULT maps only its names
    assert kerberos.short_namer.short_name(KerberosName.parse("Alice@FRANZ.TEST")) == "alice"
    assert kerberos.short_namer.short_name(KerberosName.parse("svc/host@FRANZ.TEST")) == "svc"
    with pytest.raises(NoMatchingRule):
        kerberos.short_namer.short_name(KerberosName.parse("svc/host@OTHER.TEST"))
    # the service name may come from the JAAS entry alone; a principal without host binds to no host
    unbound = KafkaConfig.from_sources(None, SASL_LISTENERS + [
        "sasl.enabled.mechanisms=GSSAPI",
        _krb5_jaas(keytab, "kafka@FRANZ.TEST", 'useKeyTab=true storeKey=true serviceName="kafka"')])
    assert unbound.sasl_listeners["SASL_PLAINTEXT"].kerberos.host_name is None


@pytest.mark.parametrize("settings, key, words", [
    ([], "sasl.kerberos.service.name", "No serviceName defined in either JAAS or Kafka config"),
    (["sasl.kerberos.service.name=kafka", "flags=useKeyTab=true storeKey=true serviceName=other"],
     "sasl.kerberos.service.name", "Conflicting serviceName values found in JAAS and Kafka configs value in JAAS "
                                   "file other, value in Kafka config kafka"),
    (["listener.name.sasl_plaintext.sasl.kerberos.service.name=kafka", "flags=storeKey=true"],
     "listener.name.sasl_plaintext.gssapi.sasl.jaas.config", "set useKeyTab=true and keyTab"),
    (["sasl.kerberos.service.name=kafka", "flags=useKeyTab=true"],
     "listener.name.sasl_plaintext.gssapi.sasl.jaas.config", "storeKey=true is needed"),
    (["sasl.kerberos.service.name=kafka", "principal=*"],
     "listener.name.sasl_plaintext.gssapi.sasl.jaas.config", "must name the broker's principal"),
    (["sasl.kerberos.service.name=kafka", "principal=kafka/a/b@FRANZ.TEST"],
     "listener.name.sasl_plaintext.gssapi.sasl.jaas.config", "Principal has name with unexpected format"),
    (["sasl.kerberos.service.name=kafka", "principal=kafka/otherhost@FRANZ.TEST"],
     "listener.name.sasl_plaintext.gssapi.sasl.jaas.config", "No key table entry found for kafka/otherhost@FRANZ"),
    (["sasl.kerberos.service.name=kafka", "principal=kafka/localhost@OTHER.TEST"],
     "listener.name.sasl_plaintext.gssapi.sasl.jaas.config", "No key table entry found for kafka/localhost@OTHER"),
    (["sasl.kerberos.service.name=kafka", "keytab=/nonexistent.keytab"],
     "listener.name.sasl_plaintext.gssapi.sasl.jaas.config", "Key table file '/nonexistent.keytab' not found"),
    (["sasl.kerberos.service.name=kafka", "sasl.kerberos.principal.to.local.rules=RULE:[1:$1](x"],
     "sasl.kerberos.principal.to.local.rules", "Invalid rule: `RULE:[1:$1](x`, unmatched substring: `(x`"),
])
def test_a_gssapi_listener_kafka_could_not_run_is_refused_naming_the_key(realm, monkeypatch, settings, key, words):
    kdc, keytab = realm
    monkeypatch.setenv("KRB5_CONFIG", str(kdc.krb5_conf))
    jaas = {"flags": "useKeyTab=true storeKey=true", "principal": "kafka/localhost@FRANZ.TEST", "keytab": keytab}
    jaas.update(setting.split("=", 1) for setting in settings if setting.split("=", 1)[0] in jaas)
    with pytest.raises(ConfigError) as refused:
        KafkaConfig.from_sources(None, SASL_LISTENERS + [
            "sasl.enabled.mechanisms=GSSAPI", _krb5_jaas(jaas["keytab"], jaas["principal"], jaas["flags"]),
            *(setting for setting in settings if setting.split("=", 1)[0] not in jaas)])
    assert refused.value.key == key and words in str(refused.value), str(refused.value)


@pytest.mark.parametrize("plain_options, settings, words", [
    ("", [], "No serviceName defined in either JAAS or Kafka config"),
    (" serviceName=other", ["sasl.kerberos.service.name=kafka"],
     "Conflicting serviceName values found in JAAS and Kafka configs value in JAAS file other, value in Kafka config "
     "kafka"),
])
def test_every_mechanism_of_a_gssapi_listener_needs_the_service_name(realm, monkeypatch, plain_options, settings,
                                                                      words):
    """With GSSAPI enabled, SaslChannelBuilder logs every mechanism of the listener in with
    KerberosLogin, whose configure asks each mechanism's JAAS entry for the service name: a PLAIN
    entry without one, the Krb5LoginModule entry's serviceName not counting for it, fails Kafka's
    startup (checked with kafka-clients 4.3's SaslChannelBuilder), as does one that contradicts
    sasl.kerberos.service.name."""
    kdc, keytab = realm
    monkeypatch.setenv("KRB5_CONFIG", str(kdc.krb5_conf))
    with pytest.raises(ConfigError) as refused:
        KafkaConfig.from_sources(None, SASL_LISTENERS + [
            "sasl.enabled.mechanisms=GSSAPI,PLAIN",
            _krb5_jaas(keytab, flags='useKeyTab=true storeKey=true serviceName="kafka"'),
            f"listener.name.sasl_plaintext.plain.sasl.jaas.config={PLAIN_JAAS[:-1]}{plain_options};", *settings])
    assert refused.value.key == "sasl.kerberos.service.name" and str(refused.value) == words
    # with the service name given either way, PLAIN's entry needs none of its own
    KafkaConfig.from_sources(None, SASL_LISTENERS + [
        "sasl.enabled.mechanisms=GSSAPI,PLAIN", "sasl.kerberos.service.name=kafka", _krb5_jaas(keytab),
        f"listener.name.sasl_plaintext.plain.sasl.jaas.config={PLAIN_JAAS}"])


def test_a_listeners_kerberos_keys_are_typed_as_kafkas_are():
    """ChannelBuilders gives each listener's channel builder its listener.name.<l>. keys parsed by
    their definitions (valuesWithPrefixOverride), whatever its mechanisms: a value of the wrong type
    fails startup in the words for the key without prefix. A sasl.kerberos. key Kafka does not
    define is no listener key but an unknown one."""
    with pytest.raises(ConfigError) as refused:
        KafkaConfig.from_sources(None, SASL_LISTENERS + [
            "sasl.enabled.mechanisms=PLAIN", "listener.name.sasl_plaintext.plain.sasl.jaas.config=" + PLAIN_JAAS,
            "listener.name.plaintext.sasl.kerberos.min.time.before.relogin=soon"])
    assert str(refused.value) == ("Invalid value soon for configuration sasl.kerberos.min.time.before.relogin: "
                                  "Not a number of type LONG")
    config = KafkaConfig.from_sources(None, SASL_LISTENERS + [
        "sasl.enabled.mechanisms=PLAIN", "listener.name.sasl_plaintext.plain.sasl.jaas.config=" + PLAIN_JAAS,
        "listener.name.sasl_plaintext.sasl.kerberos.ticket.renew.jitter=0.1",
        "listener.name.sasl_plaintext.sasl.kerberos.principal.name=kafka",
        "listener.name.other.sasl.kerberos.min.time.before.relogin=soon"])  # no such listener: never read
    assert config.unknown_keys == ["listener.name.sasl_plaintext.sasl.kerberos.principal.name"]


def test_a_gssapi_listener_takes_its_krb5loginmodule_entry_from_the_jaas_file(realm, tmp_path, monkeypatch):
    """The entry feeds the Kerberos side as the property does; the service name may be any entry's
    option (KerberosLogin.getServiceName over the whole section)."""
    kdc, keytab = realm
    monkeypatch.setenv("KRB5_CONFIG", str(kdc.krb5_conf))
    section = ("sasl_plaintext.KafkaServer {\n"
               "  " + PLAIN_JAAS[:-1] + " serviceName=kafka;\n"
               "  " + _krb5_jaas(keytab).split("=", 1)[1] + "\n};\n")
    path = _jaas_file(tmp_path, monkeypatch, section)
    config = KafkaConfig.from_sources(None, SASL_LISTENERS + ["sasl.enabled.mechanisms=GSSAPI,PLAIN"])
    sasl = config.sasl_listeners["SASL_PLAINTEXT"]
    assert (sasl.kerberos.principal, sasl.kerberos.service_name, sasl.kerberos.host_name, sasl.kerberos.keytab) == \
        ("kafka/localhost@FRANZ.TEST", "kafka", "localhost", str(keytab))
    assert sasl.plain_users == {"admin": "admin-secret", "alice": "alice-secret"}
    # a refusal of the entry names the key the file stands in for, and the file
    path.write_text(section.replace("storeKey=true", "storeKey=false"))
    with pytest.raises(ConfigError) as refused:
        KafkaConfig.from_sources(None, SASL_LISTENERS + ["sasl.enabled.mechanisms=GSSAPI"])
    assert refused.value.key == "listener.name.sasl_plaintext.gssapi.sasl.jaas.config"
    assert str(refused.value) == ("storeKey=true is needed: without it the broker keeps no key to accept Kerberos "
                                  "clients with, in the 'sasl_plaintext.KafkaServer' entry of the JAAS configuration "
                                  f"(System property 'java.security.auth.login.config' is {path})")
    # Kafka would start, then fail every client: no Kerberos principal to accept them as
    path.write_text("KafkaServer { " + PLAIN_JAAS[:-1] + " serviceName=kafka; };")
    with pytest.raises(ConfigError, match="GSSAPI needs a com.sun.security.auth.module.Krb5LoginModule entry"):
        KafkaConfig.from_sources(None, SASL_LISTENERS + ["sasl.enabled.mechanisms=GSSAPI"])


def test_sasl_between_brokers_needs_its_mechanism_enabled():
    """KafkaConfig.validateValues: sasl.mechanism.inter.broker.protocol (GSSAPI by default) must be
    enabled when the inter-broker listener is a SASL one."""
    only_sasl = ["listeners=SASL_PLAINTEXT://127.0.0.1:2", "security.inter.broker.protocol=SASL_PLAINTEXT",
                 "sasl.enabled.mechanisms=PLAIN",
                 "listener.name.sasl_plaintext.plain.sasl.jaas.config=" + PLAIN_JAAS]
    with pytest.raises(ConfigError, match="requirement failed: sasl.mechanism.inter.broker.protocol must be "
                                          "included in sasl.enabled.mechanisms") as refused:
        KafkaConfig.from_sources(None, only_sasl)
    assert refused.value.key == "sasl.mechanism.inter.broker.protocol"
    config = KafkaConfig.from_sources(None, only_sasl + ["sasl.mechanism.inter.broker.protocol=PLAIN"])
    assert config.inter_broker_listener_name == "SASL_PLAINTEXT"


@pytest.fixture(scope="module")
def broker_pem(tmp_path_factory):
    from tests.support.tls import CertificateAuthority, write_pem_key_store
    ca = CertificateAuthority()
    return str(write_pem_key_store(tmp_path_factory.mktemp("tls") / "broker.pem", ca.broker(), ca))


def test_ssl_and_sasl_ssl_listeners_take_their_tls_settings(broker_pem):
    """Each SSL or SASL_SSL listener gets a server context from its own ssl.* keys before the
    broker's; ssl.client.auth reaches a SASL_SSL listener only under its own prefix (KIP-684)."""
    import ssl
    config = KafkaConfig.from_sources(None, [
        "listeners=PLAINTEXT://127.0.0.1:1,SSL://127.0.0.1:2,SASL_SSL://127.0.0.1:3",
        "inter.broker.listener.name=PLAINTEXT", "ssl.keystore.type=PEM", f"ssl.keystore.location={broker_pem}",
        "ssl.client.auth=required", "listener.name.ssl.ssl.principal.mapping.rules=RULE:^CN=([^,]*).*$/$1/L",
        "sasl.enabled.mechanisms=SCRAM-SHA-256",
        "listener.name.sasl_ssl.scram-sha-256.sasl.jaas.config=" + SCRAM_JAAS])
    assert config.listener_security_protocols == {"PLAINTEXT": "PLAINTEXT", "SSL": "SSL", "SASL_SSL": "SASL_SSL"}
    assert list(config.ssl_listeners) == ["SSL", "SASL_SSL"] and list(config.sasl_listeners) == ["SASL_SSL"]
    assert config.ssl_listeners["SSL"].context.verify_mode == ssl.CERT_REQUIRED
    assert config.ssl_listeners["SASL_SSL"].context.verify_mode == ssl.CERT_NONE
    assert config.ssl_listeners["SSL"].principal_mapper.name("CN=Alice,O=franz") == "alice"
    assert config.ssl_listeners["SASL_SSL"].principal_mapper.name("CN=Alice,O=franz") == "CN=Alice,O=franz"
    assert config.unknown_keys == []
    own = KafkaConfig.from_sources(None, [
        "listeners=SASL_SSL://127.0.0.1:3", "security.inter.broker.protocol=SASL_SSL",
        "sasl.enabled.mechanisms=PLAIN", "sasl.mechanism.inter.broker.protocol=PLAIN",
        "listener.name.sasl_ssl.plain.sasl.jaas.config=" + PLAIN_JAAS, "listener.name.sasl_ssl.ssl.keystore.type=PEM",
        f"listener.name.sasl_ssl.ssl.keystore.location={broker_pem}", "listener.name.sasl_ssl.ssl.client.auth=requested"])
    assert own.ssl_listeners["SASL_SSL"].context.verify_mode == ssl.CERT_OPTIONAL and own.unknown_keys == []


@pytest.mark.parametrize("settings, key, words", [
    (["ssl.keystore.type=PEM", "ssl.keystore.location=/nonexistent/broker.pem"], "ssl.keystore.location",
     "Failed to load PEM SSL keystore /nonexistent/broker.pem"),
    (["ssl.client.auth=sometimes"], "ssl.client.auth", "String must be one of"),
    (["ssl.principal.mapping.rules=RULE:^CN=(.*)$/$1/X"], "ssl.principal.mapping.rules", "Invalid rule"),
    (["listener.name.ssl.ssl.engine.factory.class=com.example.Engine"], "ssl.engine.factory.class", "unset it"),
    (["listener.name.ssl.ssl.keystore.password=hunter22"], "listener.name.ssl.ssl.keystore.password",
     "SSL key store password cannot be specified with PEM format"),
])
def test_an_ssl_listener_is_refused_naming_the_key(broker_pem, settings, key, words):
    with pytest.raises(ConfigError) as refused:
        KafkaConfig.from_sources(None, ["listeners=PLAINTEXT://127.0.0.1:1,SSL://127.0.0.1:2",
                                        "inter.broker.listener.name=PLAINTEXT", "ssl.keystore.type=PEM",
                                        f"ssl.keystore.location={broker_pem}", *settings])
    assert refused.value.key == key and words in str(refused.value), str(refused.value)
    assert "hunter22" not in str(refused.value)


_SECURED = SASL_LISTENERS + [
    "sasl.enabled.mechanisms=OAUTHBEARER",
    "listener.name.sasl_plaintext.oauthbearer.sasl.jaas.config=org.apache.kafka.common.security.oauthbearer."
    "OAuthBearerLoginModule required ;",
    "listener.name.sasl_plaintext.oauthbearer.sasl.server.callback.handler.class="
    "org.apache.kafka.common.security.oauthbearer.OAuthBearerValidatorCallbackHandler"]


def test_an_oauthbearer_listener_takes_kafkas_signed_token_validator(monkeypatch, tmp_path):
    from franz.server.oauth_bearer_validator import OAuthBearerValidator
    jwks = tmp_path / "jwks.json"
    jwks.write_text('{"keys": []}')
    monkeypatch.setenv("KAFKA_OPTS", f"-Xmx1g -Dorg.apache.kafka.sasl.oauthbearer.allowed.urls=https://idp/jwks,"
                                     f"file://{jwks}")
    config = KafkaConfig.from_sources(None, _SECURED + [
        "sasl.oauthbearer.jwks.endpoint.url=https://idp/jwks", "sasl.oauthbearer.expected.audience=kafka,other",
        "listener.name.sasl_plaintext.sasl.oauthbearer.expected.issuer=https://idp",
        "listener.name.sasl_plaintext.oauthbearer.sasl.oauthbearer.sub.claim.name=client_id"])
    validator = config.sasl_listeners["SASL_PLAINTEXT"].oauth_bearer_validator
    assert isinstance(validator, OAuthBearerValidator) and config.unknown_keys == []
    assert (validator.clock_skew_s, validator.expected_audiences, validator.expected_issuer,
            validator.sub_claim_name, validator.resolver.jwks.refresh_ms) == (30, {"kafka", "other"},
                                                                              "https://idp", "client_id", 3_600_000)
    settings = [s.replace(".oauthbearer.OAuthBearerValidator", ".oauthbearer.secured.OAuthBearerValidator")
                for s in _SECURED]
    deprecated = KafkaConfig.from_sources(None, settings + [f"sasl.oauthbearer.jwks.endpoint.url=file://{jwks}"])
    assert deprecated.sasl_listeners["SASL_PLAINTEXT"].oauth_bearer_validator.resolver.path == str(jwks)


@pytest.mark.parametrize("settings, key, words", [
    ([], "sasl.oauthbearer.jwks.endpoint.url", "value is required"),
    (["sasl.oauthbearer.jwks.endpoint.url=https://elsewhere/jwks"], "sasl.oauthbearer.jwks.endpoint.url",
     "Update the system property 'org.apache.kafka.sasl.oauthbearer.allowed.urls'"),
    (["listener.name.sasl_plaintext.sasl.oauthbearer.jwks.endpoint.url=jwks"],
     "listener.name.sasl_plaintext.sasl.oauthbearer.jwks.endpoint.url", "malformed: no protocol: jwks"),
    (["sasl.oauthbearer.jwks.endpoint.url=file:///nonexistent/jwks.json"], "sasl.oauthbearer.jwks.endpoint.url",
     "contains a file (/nonexistent/jwks.json) that doesn't exist"),
    (["sasl.oauthbearer.jwks.endpoint.url=https://idp/jwks", "sasl.oauthbearer.jwks.endpoint.refresh.ms=x"],
     "sasl.oauthbearer.jwks.endpoint.refresh.ms", "Not a number of type LONG"),
    (["sasl.oauthbearer.jwks.endpoint.url=https://idp/jwks", "sasl.oauthbearer.jwks.endpoint.refresh.ms=0"],
     "sasl.oauthbearer.jwks.endpoint.refresh.ms", "must be positive"),
    (["sasl.oauthbearer.jwks.endpoint.url=https://idp/jwks", "sasl.oauthbearer.clock.skew.seconds=1.5"],
     "sasl.oauthbearer.clock.skew.seconds", "Not a number of type INT"),
    (["sasl.oauthbearer.jwks.endpoint.url=https://idp/jwks", "sasl.oauthbearer.sub.claim.name= "],
     "sasl.oauthbearer.sub.claim.name", "value is required"),
])
def test_a_signed_token_validator_setting_kafka_refuses_is_refused_naming_the_key(monkeypatch, settings, key,
                                                                                     words):
    monkeypatch.setenv("KAFKA_OPTS", "-Dorg.apache.kafka.sasl.oauthbearer.allowed.urls=https://idp/jwks,jwks,"
                                     "file:///nonexistent/jwks.json")
    with pytest.raises(ConfigError) as refused:
        KafkaConfig.from_sources(None, _SECURED + settings)
    assert refused.value.key == key and words in str(refused.value), str(refused.value)


@pytest.mark.parametrize("key, value, words", [
    ("authorizer.class.name", "kafka.security.authorizer.AclAuthorizer", "its decisions could not be made"),
    ("principal.builder.class", "com.example.CertificatePrincipalBuilder", "DefaultKafkaPrincipalBuilder's"),
    ("create.topic.policy.class.name", "com.example.NoSmallTopics", "could not refuse a topic"),
    ("alter.config.policy.class.name", "com.example.NoRetentionChanges", "could not refuse a config change"),
    ("client.quota.callback.class", "com.example.TenantQuotas", "quotas would be the default ones"),
])
def test_a_java_plugin_is_refused_rather_than_left_out(key, value, words):
    """franz cannot run a Java class: a config naming an authorizer other than StandardAuthorizer
    (ZooKeeper's AclAuthorizer, with super.users), a principal builder, a policy or a quota callback
    is refused naming the key, not started without what the class would have refused."""
    with pytest.raises(ConfigError) as refused:
        KafkaConfig.from_sources(None, [f"{key}={value}", "super.users=User:admin"])
    assert refused.value.key == key and words in str(refused.value), str(refused.value)


def test_standard_authorizer_is_taken_with_its_own_keys():
    """franz implements KRaft's StandardAuthorizer: its class is taken, super.users and
    allow.everyone.if.no.acl.found are its keys (no unknown-key warning), and a super user that
    is no principal is refused naming super.users."""
    authorizer = "authorizer.class.name=org.apache.kafka.metadata.authorizer.StandardAuthorizer"
    config = KafkaConfig.from_sources(None, [authorizer, "super.users=User:admin;User:ANONYMOUS",
                                             "allow.everyone.if.no.acl.found=true"])
    assert config.unknown_keys == []
    with pytest.raises(ConfigError) as refused:
        KafkaConfig.from_sources(None, [authorizer, "super.users=admin"])
    assert refused.value.key == "super.users" and "principalType:principalName" in str(refused.value)


def test_java_plugin_keys_at_kafkas_defaults_are_taken():
    config = KafkaConfig.from_sources(None, [
        "authorizer.class.name=", "create.topic.policy.class.name=",
        "principal.builder.class=org.apache.kafka.common.security.authenticator.DefaultKafkaPrincipalBuilder"])
    assert config.values["authorizer.class.name"] == "" and config.unknown_keys == []


def test_delegation_token_keys_have_kafkas_defaults_and_floors():
    """KafkaConfigTest.testFromPropsValid and testFromPropsInvalid's delegation token cases
    (DelegationTokenManagerConfigs): 7 days, 1 day and 1 hour by default, each at least 1 and a
    long; the secret key a password, tokens off without it. Kafka 4.0 removed
    delegation.token.master.key: an unknown key, which enables nothing."""
    defaults = KafkaConfig.from_sources()
    assert (defaults["delegation.token.secret.key"], defaults["delegation.token.max.lifetime.ms"],
            defaults["delegation.token.expiry.time.ms"], defaults["delegation.token.expiry.check.interval.ms"]) == (
        None, 7 * 24 * 60 * 60 * 1000, 24 * 60 * 60 * 1000, 60 * 60 * 1000)
    config = KafkaConfig.from_sources(None, ["delegation.token.secret.key=1234567890",
                                             "delegation.token.expiry.check.interval.ms=9223372036854775807"])
    assert (config["delegation.token.secret.key"], config.unknown_keys) == ("1234567890", [])
    assert config["delegation.token.expiry.check.interval.ms"] == 2 ** 63 - 1
    for key in ("delegation.token.max.lifetime.ms", "delegation.token.expiry.time.ms",
                "delegation.token.expiry.check.interval.ms"):
        with pytest.raises(ConfigError, match=f"^Invalid value 0 for configuration {key}: Value must be at least 1$"):
            KafkaConfig.from_sources(None, [f"{key}=0"])
        with pytest.raises(ConfigError, match=key) as refused:
            KafkaConfig.from_sources(None, [f"{key}=not_a_number"])
        assert refused.value.key == key
    legacy = KafkaConfig.from_sources(None, ["delegation.token.master.key=1234567890"])
    assert legacy.unknown_keys == ["delegation.token.master.key"]
    assert legacy["delegation.token.secret.key"] is None


def test_a_blank_delegation_token_secret_key_leaves_tokens_disabled(tmp_path):
    """KafkaConfig.tokenAuthEnabled reads the key after ConfigDef trimmed it: a key of blanks
    (a properties file keeps them) is the empty key, and tokens are off; trailing blanks are no
    part of the key the HMACs are made with."""
    properties = tmp_path / "server.properties"
    base = "node.id=1\nlisteners=PLAINTEXT://127.0.0.1:19092\n"
    properties.write_text(base + "delegation.token.secret.key=\\ \\t\n", encoding="latin-1")
    assert not DelegationTokenManager(KafkaConfig.from_sources(properties)["delegation.token.secret.key"]).enabled
    properties.write_text(base + "delegation.token.secret.key=secret \t\n", encoding="latin-1")
    assert KafkaConfig.from_sources(properties)["delegation.token.secret.key"] == "secret"
