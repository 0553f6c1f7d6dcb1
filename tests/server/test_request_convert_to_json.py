"""The request log: kafka.request.logger at DEBUG logs each request done, as Kafka's RequestChannel does."""

from __future__ import annotations

import json

from franz.records import MemoryRecords
from franz.protocol.codec import encode_request
from franz.server.request_channel import Request
from franz.server.request_convert_to_json import api_key_name, loggable_value, request_desc_metrics, request_json
from tests.support.raw_client import RawClient, batch, create_topic, produce

INCREMENTAL_ALTER_CONFIGS, BROKER_LOGGER = 44, 8


def test_api_key_names_are_kafkas():
    assert api_key_name("ApiVersions") == "API_VERSIONS"
    assert api_key_name("DescribeUserScramCredentials") == "DESCRIBE_USER_SCRAM_CREDENTIALS"


def test_a_produces_records_are_logged_as_their_size():
    """KIP-673: a Produce request's records as `recordsSizeInBytes`, not as their bytes."""
    records = MemoryRecords(bytearray(batch(b"value")))
    body = {"transactional_id": None, "acks": -1, "timeout_ms": 30000, "topic_data": [
        {"name": "t", "partition_data": [{"index": 0, "records": records}, {"index": 1, "records": None}]}]}
    frame = encode_request(0, 9, 3, "c", {"acks": -1, "timeout_ms": 30000, "topic_data": []})
    request = Request("conn", "PLAINTEXT", ("127.0.0.1", 1), frame, 0)
    assert request_json(request, body) == {
        "transactionalId": None, "acks": -1, "timeoutMs": 30000, "topicData": [
            {"name": "t", "partitionData": [{"index": 0, "recordsSizeInBytes": records.size_in_bytes},
                                            {"index": 1, "records": None}]}]}


def test_config_values_that_may_be_secret_are_hidden():
    """Request.loggableRequest: KafkaConfig.loggableValue on every (Incremental)AlterConfigs value."""
    assert loggable_value(2, "retention.ms", "1000") == "1000"  # a topic config of a known type
    assert loggable_value(2, "no.such.config", "x") == "[hidden]"  # unknown: may be secret
    assert loggable_value(4, "log.retention.ms", "5") == "5"
    assert loggable_value(4, "listener.name.internal.ssl.keystore.password", "pw") == "[hidden]"
    assert loggable_value(8, "kafka.request.logger", "DEBUG") == "DEBUG"  # broker loggers are shown
    assert loggable_value(64, "anything", "x") == "[hidden]"  # another resource type


def test_a_requests_validation_costs_join_its_log_line_only_when_there_are_some():
    frame = encode_request(0, 9, 3, "c", {"acks": 1, "timeout_ms": 1, "topic_data": []})
    request = Request("conn", "PLAINTEXT", ("127.0.0.1", 1), frame, 0)
    times = (0.0, 1.0, 0.0, 0, 0.0, 0.0, 1.0)
    assert "temporaryMemoryBytes" not in json.loads(request_desc_metrics(request, times))
    request.temporary_memory_bytes, request.message_conversions_time_ns = 350, 1_234_567
    logged = json.loads(request_desc_metrics(request, times))
    assert (logged["temporaryMemoryBytes"], logged["messageConversionsTime"]) == (350, 1.234)
    assert list(logged)[-2:] == ["temporaryMemoryBytes", "messageConversionsTime"]


def test_a_broker_logs_each_request_done_once_its_request_logger_is_at_debug(broker):
    with RawClient(broker.bootstrap) as client:
        answer = client.request(INCREMENTAL_ALTER_CONFIGS, 1, {"validate_only": False, "resources": [
            {"resource_type": BROKER_LOGGER, "resource_name": "1", "configs": [
                {"name": "kafka.request.logger", "config_operation": 0, "value": "DEBUG"}]}]})
        assert answer["responses"][0]["error_code"] == 0
        secret = client.request(INCREMENTAL_ALTER_CONFIGS, 1, {"validate_only": True, "resources": [
            {"resource_type": 4, "resource_name": "1", "configs": [
                {"name": "ssl.keystore.password", "config_operation": 0, "value": "s3cret"}]}]})
        assert secret["responses"][0]["error_code"] != 0  # franz has no such key; the log hides it anyway
        client.request(18, 3, {"client_software_name": "raw-client", "client_software_version": "1.0"})
        create_topic(client, "logged")
        records = batch(b"x" * 100)
        assert produce(client, "logged", records)["error_code"] == 0
        client.request(1, 12, {"replica_id": -1, "max_wait_ms": 0, "min_bytes": 0, "max_bytes": 1 << 20,
                               "session_epoch": -1, "topics": [{"topic": "logged", "partitions": [
                                   {"partition": 0, "fetch_offset": 0, "partition_max_bytes": 1 << 20}]}]})
    assert broker.wait_for_line('"requestApiKeyName":"FETCH"')
    assert not any("s3cret" in line for line in broker.lines)
    assert any('"name":"ssl.keystore.password","configOperation":0,"value":"[hidden]"' in line
               for line in broker.lines)
    fetch_line = next(line for line in broker.lines if '"requestApiKeyName":"FETCH"' in line)
    assert '"partitions":[{"partitionIndex":0,"errorCode":0,"highWatermark":1,' in fetch_line
    assert f'"recordsSizeInBytes":{len(records)}' in fetch_line  # the answer's records, sent from the file
    assert broker.wait_for_line('"requestApiKeyName":"PRODUCE"')
    line = next(line for line in broker.lines if '"requestApiKeyName":"PRODUCE"' in line)
    assert "(kafka.request.logger)" in line and "DEBUG Completed request:{" in line
    logged = json.loads(line[line.index("Completed request:") + len("Completed request:"):line.rindex(" (")])
    assert logged["requestHeader"] == {"requestApiKey": 0, "requestApiVersion": 9, "correlationId": 5,
                                       "clientId": "raw-client", "requestApiKeyName": "PRODUCE"}
    assert logged["request"]["topicData"][0]["partitionData"][0]["recordsSizeInBytes"] == len(records)
    assert logged["response"]["responses"][0]["partitionResponses"][0]["errorCode"] == 0
    assert logged["clientInformation"] == {"softwareName": "raw-client", "softwareVersion": "1.0"}
    assert (logged["securityProtocol"], logged["principal"], logged["listener"]) == (
        "PLAINTEXT", "User:ANONYMOUS", "PLAINTEXT")
    assert logged["totalTimeMs"] >= logged["localTimeMs"] >= 0 and logged["throttleTimeMs"] == 0
    assert list(logged)[:4] == ["isForwarded", "requestHeader", "request", "response"]
