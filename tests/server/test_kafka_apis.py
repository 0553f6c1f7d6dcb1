"""KafkaApis handlers through a real broker: idempotent produce rules, records
deletion, leader epochs, configs, partitions, log dirs, cluster."""

from __future__ import annotations

import pytest
from confluent_kafka import TopicPartition
from confluent_kafka.admin import (
    AdminClient,
    AlterConfigOpType,
    ConfigEntry,
    ConfigResource,
    NewPartitions,
)

from franz.protocol.errors import Errors
from franz.records import SimpleRecord, build_batch
from tests.support.raw_client import RawClient, batch, create_topic, produce

INIT_PRODUCER_ID, OFFSET_FOR_LEADER_EPOCH, DESCRIBE_LOG_DIRS, DESCRIBE_CONFIGS = 22, 23, 35, 32
INCREMENTAL_ALTER_CONFIGS, ALTER_CONFIGS = 44, 33
ALTER_PARTITION_REASSIGNMENTS, LIST_PARTITION_REASSIGNMENTS = 45, 46
TIMEOUT_S = 30


def _idempotent(producer_id: int, sequence: int, *values: bytes) -> bytes:
    return build_batch([SimpleRecord(value=v) for v in values], producer_id=producer_id, producer_epoch=0,
                       base_sequence=sequence)


def test_idempotent_retries_get_the_original_offsets_and_gaps_are_refused(broker):
    with RawClient(broker.bootstrap) as client:
        create_topic(client, "idem")
        answer = client.request(INIT_PRODUCER_ID, 4, {"transactional_id": None, "transaction_timeout_ms": -1,
                                                      "producer_id": -1, "producer_epoch": -1})
        assert answer["error_code"] == 0
        pid = answer["producer_id"]
        assert produce(client, "idem", _idempotent(pid, 0, b"a", b"b"))["base_offset"] == 0
        assert produce(client, "idem", _idempotent(pid, 2, b"c"))["base_offset"] == 2
        retry = produce(client, "idem", _idempotent(pid, 0, b"a", b"b"))
        assert (retry["error_code"], retry["base_offset"]) == (0, 0)
        gap = produce(client, "idem", _idempotent(pid, 9, b"z"))
        assert gap["error_code"] == Errors.OUT_OF_ORDER_SEQUENCE_NUMBER
        again = client.request(INIT_PRODUCER_ID, 4, {"transactional_id": None, "transaction_timeout_ms": -1,
                                                     "producer_id": -1, "producer_epoch": -1})
        assert again["producer_id"] != pid


def test_producer_ids_are_not_reused_after_a_crash(broker):
    request = {"transactional_id": None, "transaction_timeout_ms": -1, "producer_id": -1, "producer_epoch": -1}
    with RawClient(broker.bootstrap) as client:
        first = client.request(INIT_PRODUCER_ID, 4, request)["producer_id"]
    broker.kill()
    broker.start()
    with RawClient(broker.bootstrap) as client:
        assert client.request(INIT_PRODUCER_ID, 4, request)["producer_id"] > first


def test_delete_records_moves_the_log_start_offset(broker):
    admin = AdminClient({"bootstrap.servers": broker.bootstrap})
    with RawClient(broker.bootstrap) as client:
        create_topic(client, "del")
        produce(client, "del", batch(b"1", b"2", b"3", b"4"))
    result = admin.delete_records([TopicPartition("del", 0, 3)])
    deleted = next(iter(result.values())).result(TIMEOUT_S)
    assert deleted.low_watermark == 3
    beyond = admin.delete_records([TopicPartition("del", 0, 99)])
    with pytest.raises(Exception, match="OFFSET_OUT_OF_RANGE|out of range"):
        next(iter(beyond.values())).result(TIMEOUT_S)


def test_offsets_for_leader_epoch_ends_at_the_log_end(broker):
    with RawClient(broker.bootstrap) as client:
        create_topic(client, "epochs")
        produce(client, "epochs", batch(b"a", b"b", b"c"))
        answer = client.request(OFFSET_FOR_LEADER_EPOCH, 4, {"replica_id": -1, "topics": [
            {"topic": "epochs", "partitions": [{"partition": 0, "current_leader_epoch": 0, "leader_epoch": 0}]}]})
        partition = answer["topics"][0]["partitions"][0]
        assert (partition["error_code"], partition["leader_epoch"], partition["end_offset"]) == (0, 0, 3)
        fenced = client.request(OFFSET_FOR_LEADER_EPOCH, 4, {"replica_id": -1, "topics": [
            {"topic": "epochs", "partitions": [{"partition": 0, "current_leader_epoch": 5, "leader_epoch": 0}]}]})
        assert fenced["topics"][0]["partitions"][0]["error_code"] == Errors.UNKNOWN_LEADER_EPOCH


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


def test_broker_configs_are_described_with_their_source(broker):
    with RawClient(broker.bootstrap) as client:
        answer = client.request(DESCRIBE_CONFIGS, 4, {"resources": [
            {"resource_type": 4, "resource_name": "1", "configuration_keys": ["num.partitions", "log.dirs"]}],
            "include_synonyms": False})
        configs = {c["name"]: c for c in answer["results"][0]["configs"]}
        assert configs["num.partitions"]["value"] == "1"
        assert configs["num.partitions"]["config_source"] == 5  # DEFAULT_CONFIG
        assert configs["log.dirs"]["config_source"] == 4  # STATIC_BROKER_CONFIG


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


def test_describe_log_dirs_and_cluster(broker):
    with RawClient(broker.bootstrap) as client:
        create_topic(client, "dirs", 2)
        produce(client, "dirs", batch(b"x" * 100))
        answer = client.request(DESCRIBE_LOG_DIRS, 4, {"topics": None})
        result = answer["results"][0]
        assert result["log_dir"] == str(broker.data_dir.resolve())
        partitions = {p["partition_index"]: p for p in result["topics"][0]["partitions"]}
        assert partitions[0]["partition_size"] > 100 and partitions[1]["partition_size"] == 0
        cluster = client.request(60, 1, {})
        assert cluster["brokers"][0]["port"] == broker.port and cluster["controller_id"] == 1


def test_list_offsets_earliest_latest_max_timestamp_and_by_time(broker):
    with RawClient(broker.bootstrap) as client:
        create_topic(client, "lo")
        stamps = [1_700_000_000_000 + delta for delta in (5, 50, 20)]
        for stamp in stamps:
            produce(client, "lo", build_batch([SimpleRecord(value=b"v", timestamp=stamp)]))

        def offset_of(timestamp: int) -> tuple[int, int]:
            answer = client.request(2, 7, {"replica_id": -1, "topics": [
                {"name": "lo", "partitions": [{"partition_index": 0, "timestamp": timestamp}]}]})
            partition = answer["topics"][0]["partitions"][0]
            assert partition["error_code"] == 0
            return partition["offset"], partition["timestamp"]

        assert offset_of(-2)[0] == 0
        assert offset_of(-1)[0] == 3
        assert offset_of(-3) == (1, stamps[1])  # the record with the largest timestamp
        assert offset_of(stamps[0] + 1) == (1, stamps[1])  # first record at or after the time
        assert offset_of(stamps[1] + 1)[0] == -1


def test_list_offsets_of_tiered_storage_and_unknown_negative_timestamps_answer_as_kafka(broker):
    """ListOffsets v9+ may ask for latest tiered (-5) and v11 for earliest pending upload (-6):
    with no remote storage Kafka answers offset -1 and leader epoch -1, no error. Another
    negative timestamp is a search by time, which finds the first record."""
    with RawClient(broker.bootstrap) as client:
        create_topic(client, "tiered")
        produce(client, "tiered", build_batch([SimpleRecord(value=b"v", timestamp=1_700_000_000_000)]))

        def answer_of(timestamp: int, version: int) -> dict:
            answer = client.request(2, version, {"replica_id": -1, "timeout_ms": 1000, "topics": [
                {"name": "tiered", "partitions": [{"partition_index": 0, "timestamp": timestamp}]}]})
            return answer["topics"][0]["partitions"][0]

        for version in (9, 10):  # v10 adds the request's timeout_ms (KIP-1075: for remote reads)
            for timestamp in (-5, -6):
                partition = answer_of(timestamp, version)
                assert (partition["error_code"], partition["offset"], partition["timestamp"],
                        partition["leader_epoch"]) == (Errors.NONE, -1, -1, -1)
            partition = answer_of(-7, version)
            assert (partition["error_code"], partition["offset"], partition["timestamp"]) == \
                   (Errors.NONE, 0, 1_700_000_000_000)
