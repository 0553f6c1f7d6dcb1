"""ControllerApis through a real broker: config changes (incremental and legacy, topics and
brokers), partitions, replication factors and reassignments."""

from __future__ import annotations

import contextlib
import time

import pytest
from confluent_kafka.admin import (
    AdminClient,
    AlterConfigOpType,
    ConfigEntry,
    ConfigResource,
    NewPartitions,
)

from franz.protocol.errors import Errors
from franz.protocol.codec import encode_request
from franz.records import SimpleRecord, build_batch
from tests.support.raw_client import RawClient, batch, create_topic, produce

API_VERSIONS, DESCRIBE_CONFIGS, INCREMENTAL_ALTER_CONFIGS, ALTER_CONFIGS = 18, 32, 44, 33
ALTER_PARTITION_REASSIGNMENTS, LIST_PARTITION_REASSIGNMENTS = 45, 46
TIMEOUT_S = 30


def test_incremental_alter_configs_sets_deletes_and_refuses_bad_values(broker):
    admin = AdminClient({"bootstrap.servers": broker.bootstrap})
    with RawClient(broker.bootstrap) as client:
        create_topic(client, "conf")
    resource = ConfigResource(ConfigResource.Type.TOPIC, "conf", incremental_configs=[
        ConfigEntry("retention.ms", "1000", incremental_operation=AlterConfigOpType.SET),
        ConfigEntry("cleanup.policy", "compact", incremental_operation=AlterConfigOpType.APPEND)])
    next(iter(admin.incremental_alter_configs([resource]).values())).result(TIMEOUT_S)
    described = next(iter(admin.describe_configs([ConfigResource(ConfigResource.Type.TOPIC, "conf")])
                          .values())).result(TIMEOUT_S)
    assert described["retention.ms"].value == "1000"
    assert described["cleanup.policy"].value == "delete,compact"
    bad = ConfigResource(ConfigResource.Type.TOPIC, "conf", incremental_configs=[
        ConfigEntry("retention.ms", "soon", incremental_operation=AlterConfigOpType.SET)])
    with pytest.raises(Exception, match="retention.ms"):
        next(iter(admin.incremental_alter_configs([bad]).values())).result(TIMEOUT_S)
    # The change survives a restart.
    broker.restart()
    admin = AdminClient({"bootstrap.servers": broker.bootstrap})
    described = next(iter(admin.describe_configs([ConfigResource(ConfigResource.Type.TOPIC, "conf")])
                          .values())).result(TIMEOUT_S)
    assert described["retention.ms"].value == "1000"


def _described(admin: AdminClient, kind, name: str) -> dict:
    return next(iter(admin.describe_configs([ConfigResource(kind, name)]).values())).result(TIMEOUT_S)


def _alter(admin: AdminClient, kind, name: str, *entries: ConfigEntry) -> None:
    next(iter(admin.incremental_alter_configs([ConfigResource(kind, name, incremental_configs=list(entries))])
              .values())).result(TIMEOUT_S)


def test_dynamic_broker_log_configs_apply_at_once_rank_by_layer_and_survive_a_restart(broker):
    admin = AdminClient({"bootstrap.servers": broker.bootstrap})
    broker_type, topic_type = ConfigResource.Type.BROKER, ConfigResource.Type.TOPIC
    with RawClient(broker.bootstrap) as client:
        create_topic(client, "dyn")
        produce(client, "dyn", batch(b"x" * 2000))
    # The cluster default (a broker resource named "", which confluent-kafka does not let one
    # name), then this broker's own value above it.
    with RawClient(broker.bootstrap) as client:
        answer = client.request(INCREMENTAL_ALTER_CONFIGS, 1, {"validate_only": False, "resources": [
            {"resource_type": 4, "resource_name": "", "configs": [
                {"name": "log.retention.ms", "config_operation": 0, "value": "7000"},
                {"name": "message.max.bytes", "config_operation": 0, "value": "1000"}]}]})
        assert answer["responses"][0]["error_code"] == Errors.NONE
    _alter(admin, broker_type, "1", ConfigEntry("log.retention.ms", "5000", incremental_operation=AlterConfigOpType.SET))
    # kafka-configs --entity-default --describe: the cluster default's own keys only, at their
    # default layer (this broker's 5000 is not the cluster's).
    with RawClient(broker.bootstrap) as client:
        described = client.request(DESCRIBE_CONFIGS, 4, {"resources": [
            {"resource_type": 4, "resource_name": "", "configuration_keys": None}], "include_synonyms": True})
    assert sorted((c["name"], c["value"], c["config_source"], [s["source"] for s in c["synonyms"]])
                  for c in described["results"][0]["configs"]) == [
        ("log.retention.ms", "7000", 3, [3]), ("message.max.bytes", "1000", 3, [3])]
    topic = _described(admin, topic_type, "dyn")
    assert (topic["retention.ms"].value, topic["retention.ms"].source) == ("5000", 2)  # DYNAMIC_BROKER_CONFIG
    assert (topic["max.message.bytes"].value, topic["max.message.bytes"].source) == ("1000", 3)  # cluster default
    assert _described(admin, broker_type, "1")["log.retention.ms"].value == "5000"
    # The partition's log config changed at once: a 2000-byte batch is now too large.
    with RawClient(broker.bootstrap) as client:
        assert produce(client, "dyn", batch(b"x" * 2000))["error_code"] == Errors.MESSAGE_TOO_LARGE
    # A key that is not dynamic is refused, naming it; so is a bad value.
    with pytest.raises(Exception, match="num.io.threads"):
        _alter(admin, broker_type, "1", ConfigEntry("num.io.threads", "4", incremental_operation=AlterConfigOpType.SET))
    with pytest.raises(Exception, match="log.retention.ms"):
        _alter(admin, broker_type, "1", ConfigEntry("log.retention.ms", "soon",
                                                    incremental_operation=AlterConfigOpType.SET))
    broker.restart()
    admin = AdminClient({"bootstrap.servers": broker.bootstrap})
    assert _described(admin, topic_type, "dyn")["retention.ms"].value == "5000"
    # Deleting this broker's value uncovers the cluster default.
    _alter(admin, broker_type, "1", ConfigEntry("log.retention.ms", None, incremental_operation=AlterConfigOpType.DELETE))
    assert _described(admin, topic_type, "dyn")["retention.ms"].value == "7000"


def test_alter_configs_replaces_every_override_of_a_topic(broker):
    admin = AdminClient({"bootstrap.servers": broker.bootstrap})
    with RawClient(broker.bootstrap) as client:
        create_topic(client, "legacy")
    _alter(admin, ConfigResource.Type.TOPIC, "legacy",
           ConfigEntry("retention.ms", "1000", incremental_operation=AlterConfigOpType.SET),
           ConfigEntry("segment.bytes", "1048576", incremental_operation=AlterConfigOpType.SET))
    # confluent-kafka's alter_configs sends the legacy AlterConfigs: segment.bytes, left
    # out, loses its override.
    replaced = ConfigResource(ConfigResource.Type.TOPIC, "legacy", set_config={"retention.ms": "2000"})
    next(iter(admin.alter_configs([replaced]).values())).result(TIMEOUT_S)
    described = _described(admin, ConfigResource.Type.TOPIC, "legacy")
    assert (described["retention.ms"].value, described["retention.ms"].source) == ("2000", 1)  # DYNAMIC_TOPIC
    assert (described["segment.bytes"].value, described["segment.bytes"].source) == ("1073741824", 5)  # default
    refused = ConfigResource(ConfigResource.Type.TOPIC, "legacy", set_config={"retention.ms": "soon"})
    with pytest.raises(Exception, match="retention.ms"):
        next(iter(admin.alter_configs([refused]).values())).result(TIMEOUT_S)
    broker.restart()
    admin = AdminClient({"bootstrap.servers": broker.bootstrap})
    described = _described(admin, ConfigResource.Type.TOPIC, "legacy")
    assert (described["retention.ms"].value, described["segment.bytes"].source) == ("2000", 5)


@pytest.mark.parametrize("version", [0, 2])
def test_alter_configs_refuses_as_kafka_does_and_validate_only_changes_nothing(broker, version):
    def alter(*resources: dict, validate_only: bool = False) -> list[tuple[int, str | None]]:
        answer = client.request(ALTER_CONFIGS, version, {"resources": list(resources),
                                                         "validate_only": validate_only})
        return [(r["error_code"], r["error_message"]) for r in answer["responses"]]

    def topic(name: str, **configs: str | None) -> dict:
        return {"resource_type": 2, "resource_name": name,
                "configs": [{"name": key.replace("_", "."), "value": value} for key, value in configs.items()]}

    with RawClient(broker.bootstrap) as client:
        create_topic(client, f"refuse{version}")
        name = f"refuse{version}"
        twice = alter(topic(name, retention_ms="1"), topic(name, retention_ms="2"))
        assert twice == [(Errors.INVALID_REQUEST, "Each resource must appear at most once.")] * 2
        assert alter(topic(name, retention_ms=None)) == [(Errors.INVALID_REQUEST,
                                                           "Null value not supported for : retention.ms")]
        assert alter(topic(name, no_such_key="1"))[0][0] == Errors.INVALID_CONFIG
        assert alter(topic("missing", retention_ms="1"))[0][0] == Errors.UNKNOWN_TOPIC_OR_PARTITION
        logger = {"resource_type": 8, "resource_name": "1", "configs": [{"name": "root", "value": "DEBUG"}]}
        assert alter(logger) == [(Errors.INVALID_REQUEST, "Unknown resource type 8")]
        static = {"resource_type": 4, "resource_name": "1", "configs": [{"name": "num.io.threads", "value": "4"}]}
        assert alter(static)[0][0] == Errors.INVALID_REQUEST and "num.io.threads" in alter(static)[0][1]
        assert alter(topic(name, retention_ms="5"), validate_only=True) == [(Errors.NONE, None)]
        described = client.request(DESCRIBE_CONFIGS, 4, {"resources": [
            {"resource_type": 2, "resource_name": name, "configuration_keys": ["retention.ms"]}],
            "include_synonyms": False})
        assert described["results"][0]["configs"][0]["config_source"] == 5  # still the default


def test_incremental_alter_configs_refuses_a_key_twice_a_resource_twice_and_a_null_append(broker):
    with RawClient(broker.bootstrap) as client:
        create_topic(client, "twice")

        def alter(*resources: dict) -> list[tuple[int, str | None]]:
            answer = client.request(INCREMENTAL_ALTER_CONFIGS, 1, {"resources": list(resources),
                                                                   "validate_only": False})
            return [(r["error_code"], r["error_message"]) for r in answer["responses"]]

        def topic(*configs: tuple[str, int, str | None]) -> dict:
            return {"resource_type": 2, "resource_name": "twice", "configs": [
                {"name": key, "config_operation": op, "value": value} for key, op, value in configs]}

        assert alter(topic(("retention.ms", 0, "1"), ("retention.ms", 1, None))) == [
            (Errors.INVALID_REQUEST, "Error due to duplicate config keys")]
        assert alter(topic(("cleanup.policy", 2, None))) == [
            (Errors.INVALID_REQUEST, "Null value not supported for : cleanup.policy")]
        assert alter(topic(("retention.ms", 0, "1")), topic(("retention.ms", 0, "2"))) == [
            (Errors.INVALID_REQUEST, "Each resource must appear at most once.")] * 2
        assert alter(topic(("retention.ms", 1, None))) == [(Errors.NONE, None)]


def test_kafka_python_alter_configs_on_a_broker_applies_to_its_topics(broker):
    from kafka.admin import ConfigResource as KConfigResource, ConfigResourceType, KafkaAdminClient
    admin = KafkaAdminClient(bootstrap_servers=broker.bootstrap)
    try:
        with RawClient(broker.bootstrap) as client:
            create_topic(client, "kp-legacy")
        admin.alter_configs([KConfigResource(ConfigResourceType.BROKER, "1", {"log.retention.ms": "6000"})],
                            incremental=False)
        described = _described(AdminClient({"bootstrap.servers": broker.bootstrap}), ConfigResource.Type.TOPIC,
                               "kp-legacy")
        assert (described["retention.ms"].value, described["retention.ms"].source) == ("6000", 2)  # DYNAMIC_BROKER
    finally:
        admin.close()


def test_partition_reassignments_name_what_is_wrong_with_each_target(broker):
    def alter(topic: str, partition: int, replicas: list[int] | None) -> tuple[int, str | None]:
        answer = client.request(ALTER_PARTITION_REASSIGNMENTS, 0, {"timeout_ms": 5000, "topics": [
            {"name": topic, "partitions": [{"partition_index": partition, "replicas": replicas}]}]})
        result = answer["responses"][0]["partitions"][0]
        return result["error_code"], result["error_message"]

    with RawClient(broker.bootstrap) as client:
        create_topic(client, "moves", 2)
        assert alter("moves", 1, [1]) == (Errors.NONE, None)
        assert alter("moves", 0, []) == (Errors.INVALID_REPLICA_ASSIGNMENT,
                                         "The manual partition assignment includes an empty replica list.")
        assert alter("moves", 0, [1, 1]) == (Errors.INVALID_REPLICA_ASSIGNMENT,
                                             "The manual partition assignment includes the broker 1 more than once.")
        assert alter("moves", 0, [7, 1]) == (
            Errors.INVALID_REPLICA_ASSIGNMENT,
            "The manual partition assignment includes broker 7, but no such broker is registered.")
        assert alter("moves", 2, [1]) == (Errors.UNKNOWN_TOPIC_OR_PARTITION, "Unable to find partition moves:2.")
        assert alter("nowhere", 0, [1]) == (Errors.UNKNOWN_TOPIC_OR_PARTITION, "Unable to find a topic named nowhere.")
        assert alter("moves", 0, None) == (Errors.NO_REASSIGNMENT_IN_PROGRESS,
                                           "No partition reassignment is in progress.")
        for topics in (None, [{"name": "moves", "partition_indexes": [0, 1]}]):
            listed = client.request(LIST_PARTITION_REASSIGNMENTS, 0, {"timeout_ms": 5000, "topics": topics})
            assert (listed["error_code"], listed["topics"]) == (Errors.NONE, [])


def test_create_partitions_grows_and_refuses_to_shrink(broker):
    admin = AdminClient({"bootstrap.servers": broker.bootstrap})
    with RawClient(broker.bootstrap) as client:
        create_topic(client, "grow", 2)
    admin.create_partitions([NewPartitions("grow", 5)])["grow"].result(TIMEOUT_S)
    assert len(admin.list_topics(timeout=10).topics["grow"].partitions) == 5
    with pytest.raises(Exception, match="INVALID_PARTITIONS|partition"):
        admin.create_partitions([NewPartitions("grow", 3)])["grow"].result(TIMEOUT_S)


def test_replication_factor_above_one_is_refused_on_one_node(broker):
    with RawClient(broker.bootstrap) as client:
        answer = client.request(19, 7, {"topics": [{"name": "rf3", "num_partitions": 1, "replication_factor": 3}],
                                        "timeout_ms": 5000})
        topic = answer["topics"][0]
        assert topic["error_code"] == Errors.INVALID_REPLICATION_FACTOR
        assert "only 1 broker(s) are registered" in topic["error_message"]


def test_dynamic_log_cleaner_configs_restart_its_threads_within_kafkas_bounds(broker):
    """kafka-configs.sh --entity-type brokers on log.cleaner.*: the cleaner restarts with the new
    settings at once and after a restart; a thread count beyond double, or a dedupe buffer under
    1 MB per thread, is refused as Kafka refuses them."""
    admin = AdminClient({"bootstrap.servers": broker.bootstrap})
    broker_type = ConfigResource.Type.BROKER
    with RawClient(broker.bootstrap) as client:
        answer = client.request(INCREMENTAL_ALTER_CONFIGS, 1, {"validate_only": False, "resources": [
            {"resource_type": 4, "resource_name": "", "configs": [
                {"name": "log.cleaner.backoff.ms", "config_operation": 0, "value": "100"}]}]})
        assert answer["responses"][0]["error_code"] == Errors.NONE
    _alter(admin, broker_type, "1", ConfigEntry("log.cleaner.threads", "2", incremental_operation=AlterConfigOpType.SET))
    assert broker.wait_for_line("kafka-log-cleaner-thread-1: Starting")
    described = _described(admin, broker_type, "1")
    threads = described["log.cleaner.threads"]
    assert (threads.value, threads.source, threads.is_read_only) == ("2", 2, False)  # DYNAMIC_BROKER_CONFIG
    assert (described["log.cleaner.backoff.ms"].value, described["log.cleaner.backoff.ms"].source) == ("100", 3)
    assert described["num.io.threads"].is_read_only
    # DynamicBrokerConfig's ConfigException("Invalid dynamic configuration", e) around the cleaner's words
    with pytest.raises(Exception, match="Invalid value org.apache.kafka.common.config.ConfigException: Log cleaner "
                                        "threads cannot be increased to more than double the current value 2 for "
                                        "configuration Invalid dynamic configuration"):
        _alter(admin, broker_type, "1", ConfigEntry("log.cleaner.threads", "5",
                                                    incremental_operation=AlterConfigOpType.SET))
    with pytest.raises(Exception, match="at least 1MB per cleaner thread"):
        _alter(admin, broker_type, "1", ConfigEntry("log.cleaner.dedupe.buffer.size", "1048576",
                                                    incremental_operation=AlterConfigOpType.SET))
    with pytest.raises(Exception, match="log.cleaner.backoff.ms"):
        _alter(admin, broker_type, "1", ConfigEntry("log.cleaner.backoff.ms", "-5",
                                                    incremental_operation=AlterConfigOpType.SET))
    # The restarted cleaner cleans, with its 100 ms back-off.
    with RawClient(broker.bootstrap) as client:
        create_topic(client, "dyn-compacted", configs={"cleanup.policy": "compact", "segment.bytes": "1024"})
        for round_ in range(20):
            records = build_batch([SimpleRecord(b"round-%d" % round_, key=b"key-%d" % k) for k in range(5)])
            assert produce(client, "dyn-compacted", records)["error_code"] == 0
    assert broker.wait_for_line("cleaned log dyn-compacted-0", TIMEOUT_S)
    starts_before = sum("kafka-log-cleaner-thread-1: Starting" in line for line in broker.lines)
    broker.restart()  # the broker starts with the stored thread count
    deadline = time.monotonic() + TIMEOUT_S
    while sum("kafka-log-cleaner-thread-1: Starting" in line for line in broker.lines) == starts_before:
        assert time.monotonic() < deadline, "the restarted broker did not start a second cleaner thread"
        time.sleep(0.05)
    admin = AdminClient({"bootstrap.servers": broker.bootstrap})
    assert _described(admin, broker_type, "1")["log.cleaner.threads"].value == "2"


def test_dynamic_connection_limits_apply_at_once_refuse_what_kafka_refuses_and_survive_a_restart(broker):
    """kafka-configs --entity-type brokers on max.connections.per.ip and its overrides
    (SocketServer.ReconfigurableConfigs): the next connection over the new limit is closed, the
    ones open stay; values KafkaConfig or the listener quota refuse are INVALID_REQUEST, as is an
    override whose host does not resolve; the stored limits are in force after a restart."""

    def alter(*configs: tuple[str, str | None], client: RawClient | None = None) -> tuple[int, str | None]:
        with contextlib.nullcontext(client) if client else RawClient(broker.bootstrap) as client:
            answer = client.request(INCREMENTAL_ALTER_CONFIGS, 1, {"validate_only": False, "resources": [
                {"resource_type": 4, "resource_name": "1", "configs": [
                    {"name": name, "config_operation": 0 if value is not None else 1, "value": value}
                    for name, value in configs]}]})
        result = answer["responses"][0]
        return result["error_code"], result["error_message"]

    def served(client: RawClient) -> bool:
        """Answered, or closed by the broker (refused)."""
        try:
            client.send_frame(encode_request(API_VERSIONS, 3, 1, "t", {"client_software_name": "t",
                                                                       "client_software_version": "1"}))
            return client.receive_frame() is not None
        except ConnectionError:
            return False

    assert alter(("max.connections.per.ip", "2")) == (Errors.NONE, None)
    assert broker.wait_for_line("Updating maxConnectionsPerIp: 2")
    with RawClient(broker.bootstrap) as first, RawClient(broker.bootstrap) as second:
        assert served(first) and served(second)
        with RawClient(broker.bootstrap) as third:
            assert not served(third)
        # the limit goes down under the connections open: they stay
        assert alter(("max.connections.per.ip", "1"), client=first) == (Errors.NONE, None)
        assert served(first) and served(second)
    for configs, message in (
            ((("max.connections.per.ip", "0"),), "requirement failed: max.connections.per.ip can be set to zero only "
                                                 "if max.connections.per.ip.overrides property is set."),
            ((("max.connections", "0"),), "Invalid max.connections 0"),
            ((("max.connections", "-1"),), "Invalid value -1 for configuration max.connections"),
            ((("max.connections.per.ip.overrides", "no-such-host.invalid:3"),), "max.connections.per.ip.overrides"),
            ((("max.connections.per.ip.overrides", "127.0.0.1"),), "max.connections.per.ip.overrides")):
        code, text = alter(*configs)
        assert code == Errors.INVALID_REQUEST and message in text, (configs, text)
    assert alter(("max.connections.per.ip", "0"), ("max.connections.per.ip.overrides", "127.0.0.1:3")) == (
        Errors.NONE, None)
    described = _described(AdminClient({"bootstrap.servers": broker.bootstrap}), ConfigResource.Type.BROKER, "1")
    overrides = described["max.connections.per.ip.overrides"]
    assert (overrides.value, overrides.source, overrides.is_read_only) == ("127.0.0.1:3", 2, False)
    broker.restart()
    clients = [RawClient(broker.bootstrap) for _ in range(4)]
    try:
        assert [served(client) for client in clients] == [True, True, True, False]
    finally:
        for client in clients:
            client.close()


def test_a_listeners_own_max_connections_is_dynamic_and_described_with_its_base_key(broker):
    """kafka-configs --add-config listener.name.plaintext.max.connections=2: the listener's third
    connection waits, unread, until one of the two closes (ListenerConnectionQuota, reconfigured);
    DescribeConfigs shows the key with max.connections as its synonym, and read-only as Kafka does
    (DynamicBrokerConfig.AllDynamicConfigs names base keys only)."""
    with RawClient(broker.bootstrap) as client:
        def alter(value: str) -> dict:
            return client.request(INCREMENTAL_ALTER_CONFIGS, 1, {"validate_only": False, "resources": [
                {"resource_type": 4, "resource_name": "", "configs": [
                    {"name": "listener.name.plaintext.max.connections", "config_operation": 0,
                     "value": value}]}]})["responses"][0]
        refused = alter("0")
        assert refused["error_code"] == Errors.INVALID_REQUEST
        assert "Invalid max.connections 0" in refused["error_message"]
        assert alter("2")["error_code"] == Errors.NONE
        answer = client.request(DESCRIBE_CONFIGS, 4, {"resources": [
            {"resource_type": 4, "resource_name": "1", "configuration_keys": [
                "listener.name.plaintext.max.connections"]}], "include_synonyms": True,
            "include_documentation": False})
        entry, = answer["results"][0]["configs"]
        assert (entry["value"], entry["config_source"], entry["read_only"]) == ("2", 3, True)  # DYNAMIC_DEFAULT
        assert [(s["name"], s["source"]) for s in entry["synonyms"]] == [
            ("listener.name.plaintext.max.connections", 3), ("max.connections", 5)]  # DEFAULT_CONFIG
        with RawClient(broker.bootstrap), RawClient(broker.bootstrap) as third:  # the second, and a third
            third.send_frame(encode_request(API_VERSIONS, 3, 7, "t", {"client_software_name": "t",
                                                                      "client_software_version": "1"}))
            third.sock.settimeout(0.5)
            with pytest.raises(TimeoutError):
                third.sock.recv(1)  # waiting, unread
            third.sock.settimeout(TIMEOUT_S)
            client.close()
            assert third.receive_frame() is not None  # taken up once a slot freed


def test_a_listener_prefixed_key_is_described_with_the_synonyms_kafka_lists(broker_factory):
    """ConfigHelper.configSynonyms: the layers source by source, each for the key then its base
    key, without those ranking above the key's own first layer. A static prefixed value ranks
    above a dynamic base one, as valuesWithPrefixOverride applies it."""
    broker = broker_factory({"listener.name.plaintext.max.connections": "5"})
    with RawClient(broker.bootstrap) as client:
        altered = client.request(INCREMENTAL_ALTER_CONFIGS, 1, {"validate_only": False, "resources": [
            {"resource_type": 4, "resource_name": "1", "configs": [
                {"name": "max.connections", "config_operation": 0, "value": "7"}]}]})
        assert altered["responses"][0]["error_code"] == Errors.NONE
        answer = client.request(DESCRIBE_CONFIGS, 4, {"resources": [
            {"resource_type": 4, "resource_name": "1", "configuration_keys": [
                "listener.name.plaintext.max.connections", "max.connections"]}], "include_synonyms": True,
            "include_documentation": False})
    described = {entry["name"]: (entry["value"], entry["config_source"],
                                 [(s["name"], s["value"], s["source"]) for s in entry["synonyms"]])
                 for entry in answer["results"][0]["configs"]}
    assert described == {  # 2 DYNAMIC_BROKER_CONFIG, 4 STATIC_BROKER_CONFIG, 5 DEFAULT_CONFIG
        "listener.name.plaintext.max.connections": ("5", 4, [("listener.name.plaintext.max.connections", "5", 4),
                                                            ("max.connections", "2147483647", 5)]),
        "max.connections": ("7", 2, [("max.connections", "7", 2), ("max.connections", "2147483647", 5)])}


def test_transaction_verification_can_be_turned_off_and_on_at_run_time(broker):
    """transaction.partition.verification.enable and producer.id.expiration.ms are dynamic
    (DynamicProducerStateManagerConfig): the change reaches every log at once and survives a
    restart."""
    admin = AdminClient({"bootstrap.servers": broker.bootstrap})
    broker_type = ConfigResource.Type.BROKER

    def produce_unknown_transaction(topic: str, sequence: int) -> int:
        """A transactional batch of a producer no transaction coordinator knows."""
        records = build_batch([SimpleRecord(b"t")], producer_id=1234, producer_epoch=0, base_sequence=sequence,
                              is_transactional=True)
        with RawClient(broker.bootstrap) as client:
            answer = client.request(0, 9, {"transactional_id": "nobody", "acks": 1, "timeout_ms": 5000,
                                           "topic_data": [{"name": topic, "partition_data": [
                                               {"index": 0, "records": records}]}]})
        return answer["responses"][0]["partition_responses"][0]["error_code"]

    with RawClient(broker.bootstrap) as client:
        create_topic(client, "hang")
        create_topic(client, "hang-2")
        client.request(10, 3, {"key": "nobody", "key_type": 1})  # the transaction coordinator's topic
    assert produce_unknown_transaction("hang", 0) == Errors.INVALID_PRODUCER_ID_MAPPING
    _alter(admin, broker_type, "1", ConfigEntry("transaction.partition.verification.enable", "false",
                                                incremental_operation=AlterConfigOpType.SET),
           ConfigEntry("producer.id.expiration.ms", "3600000", incremental_operation=AlterConfigOpType.SET))
    described = _described(admin, broker_type, "1")
    assert described["transaction.partition.verification.enable"].value == "false"
    assert described["producer.id.expiration.ms"].value == "3600000"
    broker.restart()
    assert produce_unknown_transaction("hang", 0) == Errors.NONE  # a hanging transaction, as before KIP-890
    admin = AdminClient({"bootstrap.servers": broker.bootstrap})
    _alter(admin, broker_type, "1", ConfigEntry("transaction.partition.verification.enable", None,
                                                incremental_operation=AlterConfigOpType.DELETE))
    assert produce_unknown_transaction("hang", 1) == Errors.NONE  # open there already: nothing to verify
    assert produce_unknown_transaction("hang-2", 0) == Errors.INVALID_PRODUCER_ID_MAPPING


def _create(client: RawClient, name: str) -> tuple[int, str | None]:
    answer = client.request(19, 7, {"topics": [{"name": name, "num_partitions": 1, "replication_factor": 1,
                                                "assignments": [], "configs": []}], "timeout_ms": 5000})
    topic = answer["topics"][0]
    return topic["error_code"], topic["error_message"]


def test_topic_names_that_collide_in_metrics_are_refused_with_kafkas_messages(broker):
    """ReplicationControlManager.validateNewTopicNames: '.' and '_' are one character in metric
    names, so a topic may not differ from another only there; Topic.validate's 4.x texts."""
    with RawClient(broker.bootstrap) as client:
        assert _create(client, "orders_v1") == (Errors.NONE, None)
        assert _create(client, "orders.v1") == \
            (Errors.INVALID_TOPIC_EXCEPTION, "Topic 'orders.v1' collides with existing topic: orders_v1")
        assert _create(client, "orders_v1")[0] == Errors.TOPIC_ALREADY_EXISTS  # the same name: it exists
        assert _create(client, "my topic") == (Errors.INVALID_TOPIC_EXCEPTION, "Topic name is invalid: 'my topic' "
                                               "contains one or more characters other than ASCII alphanumerics, "
                                               "'.', '_' and '-'")
        assert _create(client, "..") == (Errors.INVALID_TOPIC_EXCEPTION, "Topic name is invalid: '..' is not allowed")
        # Auto-creation goes through the same check: the colliding name is not made, and the
        # client hears only that the topic does not exist (AutoTopicCreationManager).
        answer = client.request(3, 12, {"topics": [{"name": "orders.v1", "topic_id": bytes(16)}],
                                        "allow_auto_topic_creation": True})
        assert answer["topics"][0]["error_code"] == Errors.UNKNOWN_TOPIC_OR_PARTITION


def test_incremental_alter_configs_on_a_topic_follows_the_controllers_order(broker_factory):
    """ConfigurationControlManager: operations apply in order (APPEND/SUBTRACT only on list
    keys, from the key's built-in default when unset, not the broker's value), only keys whose
    value changes are validated, then the topic is looked for. Deleting a key that is not set,
    even one Kafka 4.0 removed, changes nothing and succeeds."""
    broker = broker_factory({"log.cleanup.policy": "compact"})

    def alter(resource: str, *configs: tuple[str, int, str | None]) -> tuple[int, str | None]:
        with RawClient(broker.bootstrap) as client:
            answer = client.request(INCREMENTAL_ALTER_CONFIGS, 1, {"validate_only": False, "resources": [
                {"resource_type": 2, "resource_name": resource, "configs": [
                    {"name": n, "config_operation": op, "value": v} for n, op, v in configs]}]})
        return answer["responses"][0]["error_code"], answer["responses"][0]["error_message"]

    with RawClient(broker.bootstrap) as client:
        create_topic(client, "policy")
    assert alter("policy", ("message.format.version", 1, None)) == (Errors.NONE, None)
    assert alter("policy", ("retention.ms", 2, "5")) == \
        (Errors.INVALID_CONFIG, "Can't APPEND to key retention.ms because its type is not LIST.")
    assert alter("policy", ("cleanup.policy", 2, "compact")) == (Errors.NONE, None)  # from "delete", not "compact"
    admin = AdminClient({"bootstrap.servers": broker.bootstrap})
    assert _described(admin, ConfigResource.Type.TOPIC, "policy")["cleanup.policy"].value == "delete,compact"
    assert alter("policy", ("no.such.key", 0, "1"))[0] == Errors.INVALID_CONFIG
    assert alter("policy", ("retention.ms", 0, "abc")) == (  # ConfigException's words, the value unquoted
        Errors.INVALID_CONFIG, "Invalid value abc for configuration retention.ms: Not a number of type LONG")
    assert alter("policy", ("min.compaction.lag.ms", 0, "100"), ("max.compaction.lag.ms", 0, "10")) == (
        Errors.INVALID_CONFIG, "conflict topic config setting min.compaction.lag.ms (100) > max.compaction.lag.ms (10)")
    assert alter("bad name!", ("retention.ms", 0, "5"))[0] == Errors.INVALID_TOPIC_EXCEPTION
    assert alter("", ("retention.ms", 0, "5")) == (Errors.INVALID_REQUEST, "Default topic resources are not allowed.")
    assert alter("absent", ("retention.ms", 0, "abc"))[0] == Errors.INVALID_CONFIG  # values before existence
    assert alter("absent", ("retention.ms", 0, "5"))[0] == Errors.UNKNOWN_TOPIC_OR_PARTITION


def test_topics_named_twice_or_oddly_are_refused_as_the_controller_refuses_them(broker):
    """ControllerApis: a topic named twice in CreateTopics, CreatePartitions or DeleteTopics is
    answered once, INVALID_REQUEST, and left alone; DeleteTopics v6 entries name a topic by
    name or by id, not both, not neither; __cluster_metadata is KRaft's own."""
    def entry(name: str) -> dict:
        return {"name": name, "num_partitions": 1, "replication_factor": 1, "assignments": [], "configs": []}

    with RawClient(broker.bootstrap) as client:
        created = client.request(19, 7, {"topics": [entry("twice"), entry("once"), entry("twice"),
                                                    entry("__cluster_metadata")], "timeout_ms": 5000})
        assert [(t["name"], t["error_code"], t["error_message"]) for t in created["topics"]] == [
            ("twice", Errors.INVALID_REQUEST, "Duplicate topic name."), ("once", Errors.NONE, None),
            ("__cluster_metadata", Errors.INVALID_REQUEST, "Creation of internal topic __cluster_metadata is "
                                                           "prohibited.")]
        grown = client.request(37, 3, {"topics": [{"name": "once", "count": 2, "assignments": None}] * 2,
                                       "timeout_ms": 5000, "validate_only": False})
        assert [(r["error_code"], r["error_message"]) for r in grown["results"]] == \
            [(Errors.INVALID_REQUEST, "Duplicate topic name.")]
        topic_id = bytes(client.request(3, 12, {"topics": [{"name": "once", "topic_id": bytes(16)}],
                                               "allow_auto_topic_creation": False})["topics"][0]["topic_id"])
        deleted = client.request(20, 6, {"topics": [{"name": "once", "topic_id": topic_id},
                                                    {"name": None, "topic_id": bytes(16)}], "timeout_ms": 5000})
        assert [(r["error_code"], r["error_message"]) for r in deleted["responses"]] == [
            (Errors.INVALID_REQUEST, "You may not specify both topic name and topic id."),
            (Errors.INVALID_REQUEST, "Neither topic name nor id were specified.")]
        twice = client.request(20, 6, {"topics": [{"name": None, "topic_id": topic_id}] * 2, "timeout_ms": 5000})
        assert [(r["error_code"], r["error_message"]) for r in twice["responses"]] == \
            [(Errors.INVALID_REQUEST, "Duplicate topic id.")]
        described = client.request(32, 4, {"resources": [
            {"resource_type": 2, "resource_name": "once", "configuration_keys": []},
            {"resource_type": 2, "resource_name": "bad name!", "configuration_keys": None},
            {"resource_type": 2, "resource_name": "absent", "configuration_keys": None}],
            "include_synonyms": False, "include_documentation": False})["results"]
        assert described[0]["error_code"] == Errors.NONE and len(described[0]["configs"]) > 20  # empty list: all
        assert described[1]["error_code"] == Errors.INVALID_TOPIC_EXCEPTION
        assert (described[2]["error_code"], described[2]["error_message"]) == (Errors.UNKNOWN_TOPIC_OR_PARTITION, None)


def test_create_topics_checks_configs_then_replication_factor_then_partitions(broker):
    """ReplicationControlManager.createTopics: names, then configs, then the layout (a manual
    assignment, the replication factor, the partition count)."""
    def created(**fields) -> tuple[int, str]:
        entry = {"name": "ordered", "num_partitions": 1, "replication_factor": 1, "assignments": [], "configs": []}
        with RawClient(broker.bootstrap) as client:
            topic = client.request(19, 7, {"topics": [entry | fields], "timeout_ms": 5000,
                                           "validate_only": True})["topics"][0]
        return topic["error_code"], topic["error_message"]

    assert created(replication_factor=3, configs=[{"name": "retention.ms", "value": "abc"}])[0] == \
        Errors.INVALID_CONFIG
    assert created(num_partitions=0, replication_factor=0)[0] == Errors.INVALID_REPLICATION_FACTOR
    assert created(num_partitions=-1, replication_factor=2, assignments=[{"partition_index": 0, "broker_ids": [1]}]) \
        == (Errors.INVALID_REQUEST, "A manual partition assignment was specified, but replication factor was not "
                                    "set to -1.")
    assert created(num_partitions=-1, replication_factor=-1)[0] == Errors.NONE


def test_tiered_storage_configs_are_known_and_remote_storage_is_refused(broker):
    """franz has no remote log storage: remote.storage.enable=true is refused as by a Kafka broker
    without one (LogConfig.validateRemoteStorageOnlyIfSystemEnabled); the other remote keys are
    topic configs all the same, and a validate-only creation answers the id it would have."""
    def entry(*configs: tuple[str, str]) -> dict:
        return {"name": "tiered", "num_partitions": 1, "replication_factor": 1, "assignments": [],
                "configs": [{"name": n, "value": v} for n, v in configs]}

    with RawClient(broker.bootstrap) as client:
        refused = client.request(19, 7, {"topics": [entry(("remote.storage.enable", "true"))], "timeout_ms": 5000,
                                         "validate_only": True})["topics"][0]
        assert (refused["error_code"], refused["error_message"]) == (
            Errors.INVALID_CONFIG, "Tiered Storage functionality is disabled in the broker. Topic cannot be "
                                   "configured with remote log storage.")
        checked = client.request(19, 7, {"topics": [entry(("remote.log.copy.disable", "true"),
                                                          ("remote.log.delete.on.disable", "false"))],
                                         "timeout_ms": 5000, "validate_only": True})["topics"][0]
        assert checked["error_code"] == Errors.NONE and any(checked["topic_id"])


def test_create_topics_making_over_ten_thousand_partitions_is_refused_whole(broker):
    """ReplicationControlManager.validateTotalNumberOfPartitions: the partitions of one
    CreateTopics request, defaults counted, may not exceed 10,000; past that no topic is made."""
    def entry(name: str, partitions: int) -> dict:
        return {"name": name, "num_partitions": partitions, "replication_factor": 1, "assignments": [],
                "configs": []}

    with RawClient(broker.bootstrap) as client:
        refused = client.request(19, 7, {"topics": [entry("big-a", 6000), entry("big-b", 4001)], "timeout_ms": 5000,
                                         "validate_only": True})
        assert [(t["name"], t["error_code"], t["error_message"]) for t in refused["topics"]] == [
            (name, Errors.POLICY_VIOLATION, "Excessively large number of partitions per request.")
            for name in ("big-a", "big-b")]
        allowed = client.request(19, 7, {"topics": [entry("big-a", 6000), entry("big-b", 4000)], "timeout_ms": 5000,
                                         "validate_only": True})
        assert [t["error_code"] for t in allowed["topics"]] == [Errors.NONE, Errors.NONE]


def test_manual_assignments_are_refused_in_the_controllers_words(broker):
    """ReplicationControlManager.validateManualPartitionAssignment, for CreateTopics and
    CreatePartitions alike, and createTopic's checks of the partition indexes."""
    def created(*assignments: tuple[int, list[int]]) -> tuple[int, str]:
        with RawClient(broker.bootstrap) as client:
            topic = client.request(19, 7, {"topics": [{
                "name": "assigned", "num_partitions": -1, "replication_factor": -1, "configs": [],
                "assignments": [{"partition_index": i, "broker_ids": b} for i, b in assignments]}],
                "timeout_ms": 5000, "validate_only": True})["topics"][0]
        return topic["error_code"], topic["error_message"]

    assert created((0, [2])) == (Errors.INVALID_REPLICA_ASSIGNMENT, "The manual partition assignment includes "
                                                                    "broker 2, but no such broker is registered.")
    assert created((0, [])) == (Errors.INVALID_REPLICA_ASSIGNMENT,
                                "The manual partition assignment includes an empty replica list.")
    assert created((0, [1]), (0, [1])) == (Errors.INVALID_REPLICA_ASSIGNMENT,
                                           "Found multiple manual partition assignments for partition 0")
    assert created((1, [1])) == (Errors.INVALID_REPLICA_ASSIGNMENT,
                                 "partitions should be a consecutive 0-based integer sequence")
    assert created((1, [1]), (0, [1]))[0] == Errors.NONE
    with RawClient(broker.bootstrap) as client:
        create_topic(client, "grown")
        grown = client.request(37, 3, {"topics": [{"name": "grown", "count": 2, "assignments": [{"broker_ids": [3]}]}],
                                       "timeout_ms": 5000, "validate_only": True})["results"][0]
        assert (grown["error_code"], grown["error_message"]) == (
            Errors.INVALID_REPLICA_ASSIGNMENT, "The manual partition assignment includes broker 3, but no such "
                                               "broker is registered.")


def test_a_password_broker_key_is_described_without_its_value(broker_factory):
    """KafkaConfig.maybeSensitive: a PASSWORD key (sasl.jaas.config, which holds PLAIN's users)
    is described sensitive, its value and its synonyms' values null."""
    jaas = ('org.apache.kafka.common.security.plain.PlainLoginModule required user_alice="alice-secret";')
    broker = broker_factory({"sasl.jaas.config": jaas})
    with RawClient(broker.bootstrap) as client:
        described = client.request(DESCRIBE_CONFIGS, 4, {"resources": [
            {"resource_type": 4, "resource_name": "1", "configuration_keys": ["sasl.jaas.config"]}],
            "include_synonyms": True, "include_documentation": False})
    entry = described["results"][0]["configs"][0]
    assert (entry["name"], entry["value"], entry["is_sensitive"]) == ("sasl.jaas.config", None, True)
    assert entry["synonyms"] and all(synonym["value"] is None for synonym in entry["synonyms"])
    assert "alice-secret" not in repr(described)
