"""The Prometheus endpoint of a running broker shows Kafka-named metrics that move with traffic."""

from __future__ import annotations

import re
import socket
import struct
import time
import urllib.request
import uuid

from prometheus_client import generate_latest

from franz.protocol.codec import decode_response, encode_request
from franz.protocol.errors import Errors
from franz.records import SimpleRecord, build_batch
from franz.server.broker_metrics import BrokerMetrics
from franz.server.metadata_cache import MetadataCache, TopicMetadata
from franz.storage.log_config import LogConfig
from franz.storage.log_manager import LogManager
from tests.support.broker import free_port
from tests.support.broker_on_thread import BrokerOnThread
from tests.support.raw_client import RawClient, batch, create_topic, produce


INCREMENTAL_ALTER_CONFIGS, TOPIC_RESOURCE = 44, 2


def _scrape(port: int) -> str:
    with urllib.request.urlopen(f"http://127.0.0.1:{port}/metrics", timeout=10) as response:
        return response.read().decode()


def _value(text: str, pattern: str) -> float:
    match = re.search(rf"^{pattern} (\S+)$", text, re.MULTILINE)
    assert match, f"{pattern} not in metrics"
    return float(match.group(1))


def test_metrics_follow_produce_and_fetch(broker_factory):
    port = free_port()
    broker = broker_factory({"metrics.port": str(port), "log.flush.interval.messages": "1"})
    with RawClient(broker.bootstrap) as client:
        create_topic(client, "m", 2)
        records = batch(b"a" * 100, b"b" * 100)
        assert produce(client, "m", records)["error_code"] == 0
        client.request(1, 12, {"replica_id": -1, "max_wait_ms": 0, "min_bytes": 0, "max_bytes": 1 << 20,
                               "session_epoch": -1, "topics": [{"topic": "m", "partitions": [
                                   {"partition": 0, "fetch_offset": 0, "partition_max_bytes": 1 << 20}]}]})
    text = _scrape(port)
    assert _value(text, r'kafka_server_BrokerTopicMetrics_BytesInPerSec_total\{topic="m"\}') == len(records)
    assert _value(text, r'kafka_server_BrokerTopicMetrics_MessagesInPerSec_total\{topic="m"\}') == 2
    assert _value(text, r'kafka_server_BrokerTopicMetrics_BytesOutPerSec_total\{topic="m"\}') == len(records)
    assert _value(text, r'kafka_network_RequestMetrics_RequestsPerSec_total\{request="Produce",version="9"\}') == 1
    assert _value(text, r'kafka_network_RequestMetrics_TotalTimeMs_count\{request="Fetch"\}') == 1
    # RequestChannel counts a consumer's Fetch under FetchConsumer as well (dashboards use that name)
    assert _value(text, r'kafka_network_RequestMetrics_TotalTimeMs_count\{request="FetchConsumer"\}') == 1
    fetch_consumer = r'kafka_network_RequestMetrics_RequestsPerSec_total\{request="FetchConsumer",version="12"\}'
    assert _value(text, fetch_consumer) == 1
    assert 'request="FetchFollower"' not in text
    assert _value(text, r'kafka_log_Log_LogEndOffset\{partition="0",topic="m"\}') == 2
    assert _value(text, r'kafka_log_Log_NumLogSegments\{partition="1",topic="m"\}') == 1
    assert _value(text, r"kafka_server_ReplicaManager_UnderReplicatedPartitions") == 0
    assert _value(text, r"kafka_server_ReplicaManager_LeaderCount") == 2
    assert _value(text, r"kafka_server_ReplicaManager_AtMinIsrPartitionCount") == 2
    assert _value(text, r"kafka_server_ReplicaManager_UnderMinIsrPartitionCount") == 0
    assert _value(text, r"kafka_controller_KafkaController_ActiveControllerCount") == 1
    assert _value(text, r"kafka_controller_KafkaController_GlobalTopicCount") == 1
    assert _value(text, r"kafka_controller_KafkaController_GlobalPartitionCount") == 2
    assert _value(text, r"kafka_controller_KafkaController_OfflinePartitionsCount") == 0
    assert _value(text, r"kafka_server_KafkaServer_BrokerState") == 3  # RUNNING
    assert _value(text, r"kafka_log_LogFlushStats_LogFlushRateAndTimeMs_count") >= 1
    assert _value(text, r"kafka_network_RequestChannel_RequestQueueSize") >= 0


def test_network_metrics_show_connections_by_client_software_and_idle_threads(broker_factory):
    """socket-server-metrics of the listener's processor, and the idle shares of the loop and
    of the request handler threads."""
    port = free_port()
    broker = broker_factory({"metrics.port": str(port)})
    processor = 'listener="PLAINTEXT",networkProcessor="0"'
    with RawClient(broker.bootstrap) as client, RawClient(broker.bootstrap) as other:
        assert client.request(18, 3, {"client_software_name": "franz-tests",
                                      "client_software_version": "9.9"})["error_code"] == 0
        assert other.request(18, 0, {})["error_code"] == 0  # v0 names no software
        text = _scrape(port)
        assert _value(text, r'kafka_server_socket_server_metrics_connections\{clientSoftwareName="franz-tests",'
                            r'clientSoftwareVersion="9.9",%s\}' % processor) == 1
        assert _value(text, r'kafka_server_socket_server_metrics_connections\{clientSoftwareName="unknown",'
                            r'clientSoftwareVersion="unknown",%s\}' % processor) == 1
        assert _value(text, r"kafka_server_socket_server_metrics_connection_count\{%s\}" % processor) == 2
        assert _value(text, r"kafka_server_socket_server_metrics_response_total\{%s\}" % processor) == 2
        assert _value(text, r"kafka_server_socket_server_metrics_request_total\{%s\}" % processor) == 2
    assert 0 <= _value(text, "kafka_network_SocketServer_NetworkProcessorAvgIdlePercent") <= 1
    assert 0 <= _value(text, r'kafka_network_Processor_IdlePercent\{networkProcessor="0"\}') <= 1
    handler_idle = r"kafka_server_KafkaRequestHandlerPool_RequestHandlerAvgIdlePercent_total"
    first = _value(text, handler_idle)
    time.sleep(0.2)  # both handler threads wait for work meanwhile
    text = _scrape(port)
    assert _value(text, handler_idle) >= first + 0.1
    assert _value(text, "kafka_server_KafkaRequestHandlerPool_BrokerRequestHandlerAvgIdlePercent_total") >= first + 0.1


def _request_metric(text: str, name: str, request: str, suffix: str = "") -> float:
    return _value(text, rf'kafka_network_RequestMetrics_{name}{suffix}\{{request="{request}"\}}')


def test_request_metrics_time_each_request_from_read_to_sent_as_kafka_splits_it(broker_factory):
    """RequestMetrics' histograms: a fetch that waits in the purgatory has that wait as remote
    time; a Metadata request pipelined behind it is taken up only once the fetch is answered,
    as Kafka reads it only once the fetch's answer unmutes the channel, so no queue holds it
    meanwhile; TotalTimeMs runs from the read to the send."""
    port = free_port()
    broker = broker_factory({"metrics.port": str(port), "auto.create.topics.enable": "false"})
    with RawClient(broker.bootstrap) as client:
        create_topic(client, "t", 2)
        records = batch(b"r" * 100)
        answer = client.request(0, 9, {"acks": 1, "timeout_ms": 5000, "topic_data": [{"name": "t", "partition_data": [
            {"index": 0, "records": records}, {"index": 1, "records": records}]}]})
        assert [p["error_code"] for p in answer["responses"][0]["partition_responses"]] == [0, 0]
        assert produce(client, "missing", records)["error_code"] == Errors.UNKNOWN_TOPIC_OR_PARTITION
        client.send_frame(encode_request(1, 12, 100, "raw-client", {
            "replica_id": -1, "max_wait_ms": 400, "min_bytes": 1 << 20, "max_bytes": 1 << 20, "session_epoch": -1,
            "topics": [{"topic": "t", "partitions": [{"partition": 0, "fetch_offset": 1,
                                                      "partition_max_bytes": 1 << 20}]}]}))
        client.send_frame(encode_request(3, 12, 101, "raw-client", {
            "topics": None, "allow_auto_topic_creation": False, "include_topic_authorized_operations": False}))
        assert decode_response(1, 12, client.receive_frame())[0] == 100
        assert decode_response(3, 12, client.receive_frame())[0] == 101
    with RawClient(broker.bootstrap) as client:  # acks=0: closed, and counted as its answer would be
        client.send_frame(encode_request(0, 9, 1, "raw-client", {"acks": 0, "timeout_ms": 5000, "topic_data": [
            {"name": "missing", "partition_data": [{"index": 0, "records": records}]}]}))
        assert client.is_closed_by_peer()
    text = _scrape(port)
    assert _value(text, r'kafka_network_RequestMetrics_RequestsPerSec_total\{request="Produce",version="9"\}') == 3
    errors = r'kafka_network_RequestMetrics_ErrorsPerSec_total\{error="%s",request="%s"\}'
    assert _value(text, errors % ("NONE", "Produce")) == 2  # one per partition answered
    assert _value(text, errors % ("UNKNOWN_TOPIC_OR_PARTITION", "Produce")) == 2
    assert _value(text, errors % ("NONE", "Fetch")) == 2
    assert 'ErrorsPerSec_total{error="NONE",request="FetchConsumer"}' not in text  # the API's name only
    assert _value(text, errors % ("NONE", "Metadata")) == 3  # the topic and its two partitions
    for name in ("RequestQueueTimeMs", "LocalTimeMs", "RemoteTimeMs", "ThrottleTimeMs", "ResponseQueueTimeMs",
                 "ResponseSendTimeMs", "TotalTimeMs", "RequestBytes"):
        assert _request_metric(text, name, "Produce", "_count") == 3
    assert _request_metric(text, "RemoteTimeMs", "Produce", "_sum") == 0  # acks=1 waits on nobody
    assert _request_metric(text, "RequestBytes", "Produce", "_sum") > 4 * len(records)
    # The fetch waited max_wait_ms in the purgatory: remote time, not local.
    fetch_remote_ms = _request_metric(text, "RemoteTimeMs", "FetchConsumer", "_sum")
    assert fetch_remote_ms >= 350
    assert _request_metric(text, "TotalTimeMs", "FetchConsumer", "_sum") >= fetch_remote_ms
    assert _request_metric(text, "RemoteTimeMs", "Metadata", "_sum") == 0
    assert _request_metric(text, "RequestQueueTimeMs", "Metadata", "_sum") < 300  # not while the fetch waited
    assert _request_metric(text, "TotalTimeMs", "Metadata", "_sum") < 300


def test_a_produce_rebuilt_to_the_topics_codec_counts_as_conversions(broker_factory):
    """KafkaApis.processingStatsCallback: records rebuilt by validation (here recompressed to the
    topic's gzip) are ProduceMessageConversionsPerSec, and the request's MessageConversionsTimeMs
    and TemporaryMemoryBytes show what it cost; a Fetch converts nothing in Kafka 4.x."""
    port = free_port()
    broker = broker_factory({"metrics.port": str(port)})
    with RawClient(broker.bootstrap) as client:
        create_topic(client, "gz", configs={"compression.type": "gzip"})
        create_topic(client, "plain")
        assert produce(client, "gz", batch(b"a" * 100, b"b" * 100, b"c" * 100))["error_code"] == 0
        assert produce(client, "plain", batch(b"d" * 100))["error_code"] == 0  # kept as sent: no stats
        client.request(1, 12, {"replica_id": -1, "max_wait_ms": 0, "min_bytes": 0, "max_bytes": 1 << 20,
                               "session_epoch": -1, "topics": [{"topic": "gz", "partitions": [
                                   {"partition": 0, "fetch_offset": 0, "partition_max_bytes": 1 << 20}]}]})
    text = _scrape(port)
    assert _value(text, r'kafka_server_BrokerTopicMetrics_ProduceMessageConversionsPerSec_total\{topic="gz"\}') == 3
    assert not re.search(r'ProduceMessageConversionsPerSec_total\{topic="plain"\}', text)
    assert _value(text, r"kafka_server_BrokerTopicMetrics_ProduceMessageConversionsPerSec_total") == 3
    assert _request_metric(text, "MessageConversionsTimeMs", "Produce", "_count") == 2
    assert _request_metric(text, "MessageConversionsTimeMs", "Produce", "_sum") > 0
    assert _request_metric(text, "TemporaryMemoryBytes", "Produce", "_sum") > 2 * 300  # read and rebuilt
    assert _request_metric(text, "MessageConversionsTimeMs", "Fetch", "_sum") == 0
    assert 'MessageConversionsTimeMs_count{request="FetchConsumer"}' not in text  # Produce and Fetch only


def test_clients_under_a_byte_rate_quota_have_kafkas_quota_metrics(broker_factory):
    """kafka.server:type=Produce,user=,client-id= byte-rate and throttle-time, for a client
    recorded against a quota; clients without one have none."""
    port = free_port()
    broker = broker_factory({"metrics.port": str(port)})
    with RawClient(broker.bootstrap) as client:
        create_topic(client, "q")
        quota = {"entity": [{"entity_type": "client-id", "entity_name": "raw-client"}],
                 "ops": [{"key": "producer_byte_rate", "value": 100.0, "remove": False}]}
        assert client.request(49, 1, {"entries": [quota], "validate_only": False})["entries"][0]["error_code"] == 0
        answer = client.request(0, 9, {"acks": 1, "timeout_ms": 5000, "topic_data": [
            {"name": "q", "partition_data": [{"index": 0, "records": batch(b"x" * 2000)}]}]})
    assert answer["throttle_time_ms"] > 0
    text = _scrape(port)
    labels = r'\{client_id="raw-client",user=""\}'
    assert _value(text, rf"kafka_server_Produce_byte_rate{labels}") > 100  # over the quota: throttled
    assert _value(text, rf"kafka_server_Produce_throttle_time{labels}") == answer["throttle_time_ms"]
    # RequestMetrics' ThrottleTimeMs: the throttle each answer carried
    assert _value(text, r'kafka_network_RequestMetrics_ThrottleTimeMs_sum\{request="Produce"\}') == \
        answer["throttle_time_ms"]
    assert "kafka_server_Fetch_byte_rate{" not in text  # no consumer is under a quota
    assert "kafka_server_Request_request_time{" not in text  # nor any client under a request quota


def test_a_client_under_a_request_quota_has_its_request_time_metric(broker_factory):
    port = free_port()
    broker = broker_factory({"metrics.port": str(port)})
    with RawClient(broker.bootstrap) as client:
        quota = {"entity": [{"entity_type": "client-id", "entity_name": None}],
                 "ops": [{"key": "request_percentage", "value": 1000.0, "remove": False}]}
        assert client.request(49, 1, {"entries": [quota], "validate_only": False})["entries"][0]["error_code"] == 0
        client.request(18, 3, {"client_software_name": "t", "client_software_version": "1"})
    labels = r'\{client_id="raw-client",user=""\}'
    assert _value(_scrape(port), rf"kafka_server_Request_request_time{labels}") > 0


def test_a_throttled_acks_0_produce_throttles_only_its_own_client(broker_factory):
    """An acks=0 produce gets no answer: the throttle a request quota gives it is carried by a
    response of its own, never by the one every unanswered produce shares."""
    port = free_port()
    broker = broker_factory({"metrics.port": str(port)})
    produces = r'kafka_network_RequestMetrics_RequestsPerSec_total\{request="Produce",version="9"\}'

    def produce_acks_0(client: RawClient, client_id: str, count: int) -> None:
        client.send_frame(encode_request(0, 9, 1, client_id, {"acks": 0, "timeout_ms": 5000, "topic_data": [
            {"name": "q", "partition_data": [{"index": 0, "records": batch(b"x")}]}]}))
        for _ in range(200):  # until the broker has answered it (nothing, but counted)
            if re.search(rf"^{produces} {count}\.0$", _scrape(port), re.MULTILINE):
                return
            time.sleep(0.05)
        raise AssertionError("the produce was not counted")

    with RawClient(broker.bootstrap) as admin, RawClient(broker.bootstrap) as slow, \
            RawClient(broker.bootstrap) as free:
        create_topic(admin, "q")
        quota = {"entity": [{"entity_type": "client-id", "entity_name": "slow"}],
                 "ops": [{"key": "request_percentage", "value": 0.00001, "remove": False}]}
        assert admin.request(49, 1, {"entries": [quota], "validate_only": False})["entries"][0]["error_code"] == 0
        produce_acks_0(slow, "slow", 1)
        produce_acks_0(free, "free", 2)
    # the slow client's produce was throttled for the quota window; the free one's not at all
    assert _request_metric(_scrape(port), "ThrottleTimeMs", "Produce", "_sum") == 1000


def test_a_request_whose_client_left_before_its_answer_is_counted(broker_factory):
    """As Kafka counts a response for a closed connection: a long-poll fetch whose consumer
    went away still ends, and counts."""
    port = free_port()
    broker = broker_factory({"metrics.port": str(port)})
    fetches = r'kafka_network_RequestMetrics_RequestsPerSec_total\{request="Fetch",version="12"\}'
    with RawClient(broker.bootstrap) as client:
        create_topic(client, "idle")
        client.send_frame(encode_request(1, 12, 9, "raw-client", {
            "replica_id": -1, "max_wait_ms": 1000, "min_bytes": 1, "max_bytes": 1 << 20, "session_epoch": -1,
            "topics": [{"topic": "idle", "partitions": [{"partition": 0, "fetch_offset": 0,
                                                         "partition_max_bytes": 1 << 20}]}]}))
        for _ in range(200):  # until the broker holds it: the fetch waits in the purgatory
            if _value(_scrape(port), "kafka_network_RequestChannel_RequestQueueSize") == 1:
                break
            time.sleep(0.01)
        # closed with a reset (linger 0), not a FIN: the connection is gone, not half-closed
        client.sock.setsockopt(socket.SOL_SOCKET, socket.SO_LINGER, struct.pack("ii", 1, 0))
    for _ in range(200):  # bounded: the fetch ends when its max wait does
        if re.search(rf"^{fetches} 1\.0$", _scrape(port), re.MULTILINE):
            break
        time.sleep(0.05)
    text = _scrape(port)
    assert _value(text, fetches) == 1
    assert _request_metric(text, "RemoteTimeMs", "Fetch", "_sum") >= 900  # it waited in the purgatory


def test_the_log_cleaners_metrics_follow_its_passes(broker_factory):
    port = free_port()
    broker = broker_factory({"metrics.port": str(port), "log.cleaner.backoff.ms": "100",
                             "log.cleaner.dedupe.buffer.size": str(24 * 50_000)})  # a map of 50,000 keys
    with RawClient(broker.bootstrap) as client:
        # Not cleanable (no ratio exceeds 1.0) until every record is written: then one pass maps them all.
        create_topic(client, "keys", configs={"cleanup.policy": "compact", "segment.bytes": "1024",
                                              "min.cleanable.dirty.ratio": "1.0"})
        for round_ in range(3):
            for first in range(0, 500, 20):  # batches under segment.bytes: a larger one is refused
                records = build_batch([SimpleRecord(b"round-%d" % round_, key=b"key-%d" % k)
                                       for k in range(first, first + 20)])
                assert produce(client, "keys", records)["error_code"] == 0
        answer = client.request(INCREMENTAL_ALTER_CONFIGS, 1, {"validate_only": False, "resources": [
            {"resource_type": TOPIC_RESOURCE, "resource_name": "keys", "configs": [
                {"name": "min.cleanable.dirty.ratio", "config_operation": 0, "value": "0.01"}]}]})
        assert answer["responses"][0]["error_code"] == 0
    assert broker.wait_for_line("cleaned log keys-0", 60)
    text = _scrape(port)
    assert 0 < _value(text, "kafka_log_LogCleaner_cleaner_recopy_percent") < 100
    assert _value(text, "kafka_log_LogCleaner_max_buffer_utilization_percent") == 1  # 500 keys in 50,000 slots
    assert _value(text, "kafka_log_LogCleaner_DeadThreadCount") == 0
    assert _value(text, "kafka_log_LogCleanerManager_time_since_last_run_ms") >= 0
    assert 0 <= _value(text, "kafka_log_LogCleanerManager_max_dirty_percent") <= 100
    assert _value(text, r'kafka_log_LogCleanerManager_uncleanable_partitions_count\{logDirectory="[^"]+"\}') == 0


def test_a_deleted_topics_broker_topic_metrics_go_with_it(broker_factory):
    port = free_port()
    broker = broker_factory({"metrics.port": str(port)})
    in_series = r'kafka_server_BrokerTopicMetrics_BytesInPerSec_total\{topic="%s"\}'
    with RawClient(broker.bootstrap) as client:
        for name in ("gone", "kept"):
            create_topic(client, name)
            assert produce(client, name, batch(b"x" * 10))["error_code"] == 0
        assert all(re.search(in_series % name, _scrape(port)) for name in ("gone", "kept"))
        deleted = client.request(20, 4, {"topic_names": ["gone"], "timeout_ms": 10_000})
        assert deleted["responses"][0]["error_code"] == 0
        text = _scrape(port)
        assert not re.search(r'^kafka_server_BrokerTopicMetrics_\w+\{topic="gone"\}', text, re.MULTILINE)
        assert _value(text, in_series % "kept") > 0
        # The name made again starts from zero, counted into a new series.
        create_topic(client, "gone")
        records = batch(b"y" * 10)
        assert produce(client, "gone", records)["error_code"] == 0
        assert _value(_scrape(port), in_series % "gone") == len(records)


def test_broker_topic_metrics_count_every_append_and_fetch_per_topic_and_for_all(broker_factory):
    """BrokerTopicStats as ReplicaManager and KafkaApis mark it: the all-topics series from the
    start, a topic's with its first mark; appends by the group coordinator count as a client's."""
    port = free_port()
    broker = broker_factory({"metrics.port": str(port)})
    meter = r"kafka_server_BrokerTopicMetrics_%s_total"
    of_topic = meter + r'\{topic="%s"\}'
    text = _scrape(port)
    for name in ("BytesInPerSec", "BytesOutPerSec", "BytesRejectedPerSec", "MessagesInPerSec",
                 "TotalProduceRequestsPerSec", "FailedProduceRequestsPerSec", "TotalFetchRequestsPerSec",
                 "FailedFetchRequestsPerSec"):
        assert _value(text, meter % name) == 0
    with RawClient(broker.bootstrap) as client:
        create_topic(client, "a", configs={"max.message.bytes": "1000"})
        create_topic(client, "b")
        records = batch(b"x" * 100, b"y" * 100)
        assert produce(client, "a", records)["error_code"] == 0
        too_large = batch(b"z" * 2000)
        assert produce(client, "a", too_large)["error_code"] == Errors.MESSAGE_TOO_LARGE
        corrupt = bytearray(batch(b"c"))
        corrupt[-1] ^= 0xFF
        assert produce(client, "a", bytes(corrupt))["error_code"] == Errors.CORRUPT_MESSAGE
        client.request(1, 12, {"replica_id": -1, "max_wait_ms": 0, "min_bytes": 0, "max_bytes": 1 << 20,
                               "session_epoch": -1, "topics": [{"topic": t, "partitions": [
                                   {"partition": 0, "fetch_offset": 0, "partition_max_bytes": 1 << 20}]}
                                   for t in ("a", "b")]})
        committed = client.request(8, 8, {"group_id": "g", "generation_id_or_member_epoch": -1, "member_id": "",
                                          "group_instance_id": None, "topics": [{"name": "a", "partitions": [{
                                              "partition_index": 0, "committed_offset": 2,
                                              "committed_leader_epoch": -1, "committed_metadata": ""}]}]})
        assert committed["topics"][0]["partitions"][0]["error_code"] == 0
        # a client's write to an internal topic is refused, after it was counted (appendToLocalLog)
        assert produce(client, "__consumer_offsets", batch(b"z"))["error_code"] == Errors.INVALID_TOPIC_EXCEPTION
    text = _scrape(port)
    assert _value(text, of_topic % ("TotalProduceRequestsPerSec", "a")) == 3
    assert _value(text, meter % "InvalidMessageCrcRecordsPerSec") == 1
    assert _value(text, of_topic % ("BytesInPerSec", "a")) == len(records)
    assert _value(text, of_topic % ("MessagesInPerSec", "a")) == 2
    assert _value(text, of_topic % ("BytesRejectedPerSec", "a")) == len(too_large)
    assert not re.search(of_topic % ("FailedProduceRequestsPerSec", "a"), text)  # too large, corrupt: no failures
    assert _value(text, of_topic % ("TotalFetchRequestsPerSec", "b")) == 1
    assert _value(text, of_topic % ("BytesOutPerSec", "a")) == len(records)
    assert _value(text, of_topic % ("BytesOutPerSec", "b")) == 0  # answered empty: its series is there
    assert not re.search(of_topic % ("BytesInPerSec", "b"), text)  # never produced to
    # the offset commit was appended to __consumer_offsets, and counts there as in all topics
    assert _value(text, of_topic % ("MessagesInPerSec", "__consumer_offsets")) == 1
    assert _value(text, of_topic % ("TotalProduceRequestsPerSec", "__consumer_offsets")) == 2
    assert not re.search(of_topic % ("FailedProduceRequestsPerSec", "__consumer_offsets"), text)
    internal_bytes = _value(text, of_topic % ("BytesInPerSec", "__consumer_offsets"))
    assert _value(text, meter % "BytesInPerSec") == len(records) + internal_bytes
    assert _value(text, meter % "TotalFetchRequestsPerSec") == 2


def test_partition_gauges_show_an_open_transaction_as_last_stable_offset_lag(broker_factory):
    """kafka.cluster Partition's gauges of a led partition: its one replica is the ISR, at the
    effective min ISR; records of an open transaction hold the LSO back from the HW."""
    from confluent_kafka import Producer
    port = free_port()
    broker = broker_factory({"metrics.port": str(port)})
    with RawClient(broker.bootstrap) as client:
        create_topic(client, "txn", 2, {"min.insync.replicas": "2"})
    producer = Producer({"bootstrap.servers": broker.bootstrap, "transactional.id": "gauges"})
    producer.init_transactions(30)
    producer.begin_transaction()
    for value in (b"a", b"b", b"c"):
        producer.produce("txn", value=value, partition=0)
    assert producer.flush(30) == 0
    of_partition = r'kafka_cluster_Partition_%s\{partition="%d",topic="txn"\}'
    text = _scrape(port)
    assert _value(text, of_partition % ("LastStableOffsetLag", 0)) == 3
    assert _value(text, of_partition % ("LastStableOffsetLag", 1)) == 0
    for name, value in (("UnderReplicated", 0), ("InSyncReplicasCount", 1), ("ReplicasCount", 1),
                        ("UnderMinIsr", 0), ("AtMinIsr", 1)):  # effective min ISR: min(2, one replica)
        assert _value(text, of_partition % (name, 0)) == value
    producer.commit_transaction(30)
    assert _value(_scrape(port), of_partition % ("LastStableOffsetLag", 0)) == 0


def test_a_partition_without_its_log_is_offline_and_not_led(tmp_path):
    """The controller's and ReplicaManager's gauges come from the metadata and the logs there are."""
    log_manager = LogManager([tmp_path], LogConfig.from_props({}), initial_task_delay_ms=10**9)
    log_manager.startup(start_background_tasks=False)
    try:
        metadata = MetadataCache(1, "cluster", [])
        metadata.put(TopicMetadata("t", uuid.uuid4(), 3))
        metadata.put(TopicMetadata("u", uuid.uuid4(), 1))
        for topic, partition in (("t", 0), ("t", 2), ("u", 0)):
            log_manager.get_or_create_log(topic, partition)
        status = ["STARTING"]
        metrics = BrokerMetrics()
        metrics.watch(log_manager, lambda: 0, metadata=metadata, broker_status=lambda: status[0])
        text = generate_latest(metrics.registry).decode()
        assert _value(text, "kafka_controller_KafkaController_GlobalTopicCount") == 2
        assert _value(text, "kafka_controller_KafkaController_GlobalPartitionCount") == 4
        assert _value(text, "kafka_controller_KafkaController_OfflinePartitionsCount") == 1  # t-1
        assert _value(text, "kafka_server_ReplicaManager_LeaderCount") == 3
        assert _value(text, "kafka_server_KafkaServer_BrokerState") == 1  # STARTING
        assert _value(text, r'kafka_cluster_Partition_ReplicasCount\{partition="2",topic="t"\}') == 1
        assert _value(text, r'kafka_cluster_Partition_AtMinIsr\{partition="0",topic="u"\}') == 1
        assert 'kafka_cluster_Partition_ReplicasCount{partition="1",topic="t"}' not in text  # offline
        status[0] = "SHUTTING_DOWN"
        assert _value(generate_latest(metrics.registry).decode(), "kafka_server_KafkaServer_BrokerState") == 7
    finally:
        log_manager.shutdown()


def test_a_partition_moving_between_log_dirs_is_counted_once_and_its_future_log_tagged(tmp_path):
    log_manager = LogManager([tmp_path / "a", tmp_path / "b"], LogConfig.from_props({}), initial_task_delay_ms=10**9)
    log_manager.startup(start_background_tasks=False)
    try:
        log_manager.get_or_create_log("m", 0)
        current_dir = log_manager.get_log("m", 0).dir.parent
        log_manager.create_future_log("m", 0, next(d for d in log_manager.log_dirs if d != current_dir))
        metrics = BrokerMetrics()
        metrics.watch(log_manager, lambda: 0)
        text = generate_latest(metrics.registry).decode()
        assert _value(text, "kafka_server_ReplicaManager_PartitionCount") == 1
        assert _value(text, r'kafka_log_Log_LogEndOffset\{partition="0",topic="m"\}') == 0
        assert _value(text, r'kafka_log_Log_LogEndOffset\{is_future="true",partition="0",topic="m"\}') == 0
    finally:
        log_manager.shutdown()


def test_an_acks_0_produce_whose_handler_failed_counts_its_error_per_partition(tmp_path):
    """No answer goes back: the connection closes, counted as ProduceRequest.errorCounts counts it."""
    broker = BrokerOnThread(tmp_path)
    try:
        broker.fail("Produce", RuntimeError("handler broke"))
        with RawClient(broker.bootstrap) as client:
            client.send_frame(encode_request(0, 9, 1, "raw-client", {"acks": 0, "timeout_ms": 5000, "topic_data": [
                {"name": "t", "partition_data": [{"index": 0, "records": batch(b"x")},
                                                 {"index": 1, "records": batch(b"y")}]}]}))
            assert client.is_closed_by_peer()
        text = generate_latest(broker.server.metrics.registry).decode()
        assert _value(text, r'kafka_network_RequestMetrics_ErrorsPerSec_total'
                            r'\{error="UNKNOWN_SERVER_ERROR",request="Produce"\}') == 2
    finally:
        broker.stop()


def test_request_metric_names_follow_kafkas_overrides():
    from franz.server.kafka_apis import _request_metric_names
    assert _request_metric_names(1, 14, {"replica_id": 1}) == ("FetchFollower", "Fetch")
    assert _request_metric_names(1, 17, {"replica_id": -1, "replica_state": {"replica_id": 2}}) == (
        "FetchFollower", "Fetch")
    assert _request_metric_names(1, 17, {"replica_id": -1, "replica_state": {"replica_id": -1}}) == (
        "FetchConsumer", "Fetch")
    verify = {"transactions": [{"verify_only": True}, {"verify_only": True}]}
    assert _request_metric_names(24, 4, verify) == ("AddPartitionsToTxnVerification",)
    assert _request_metric_names(24, 4, {"transactions": [{"verify_only": True}, {"verify_only": False}]}) is None
    assert _request_metric_names(24, 4, {"transactions": []}) == ("AddPartitionsToTxnVerification",)  # allMatch
    assert _request_metric_names(24, 3, {"transactions": []}) is None
    assert _request_metric_names(74, 0, {}) == ("ListClientMetricsResources", "ListConfigResources")
    assert _request_metric_names(74, 1, {}) is None
    assert _request_metric_names(0, 9, {}) is None
