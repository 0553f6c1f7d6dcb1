"""Error responses for failed handlers: every API at every version it is served in, then a
real in-process KafkaServer whose handlers fail, driven over a socket."""

from __future__ import annotations

import logging

import pytest

from franz.protocol import api_keys
from franz.protocol.codec import decode_request, decode_response, encode_request, encode_response
from franz.protocol.errors import Errors, default_message
from franz.server.error_responses import error_code_of, error_response
from tests.support.broker_on_thread import BrokerOnThread
from tests.support.raw_client import RawClient, batch, create_topic

PRODUCE, METADATA, API_VERSIONS, LIST_OFFSETS, DESCRIBE_CLUSTER = 0, 3, 18, 2, 60


def _populated(fields, version: int) -> dict:
    """A request body with one element in every array, so that error responses have something to echo."""
    body = {}
    for field in fields:
        if not field.versions[0] <= version <= field.versions[1]:
            continue
        kind = field.type
        if kind == "[]" or kind == "{}":
            inner = _populated(field.fields, version)
            body[field.name] = [inner] if kind == "[]" else inner
        elif kind.startswith("[]"):
            body[field.name] = [7] if "int" in kind else (["g"] if kind == "[]string" else [])
        elif kind == "string":
            body[field.name] = "t"
        elif kind == "records":
            body[field.name] = batch(b"v")
        elif kind == "bytes":
            body[field.name] = b""
        elif kind == "uuid":
            body[field.name] = bytes(range(16))
        elif kind == "bool":
            body[field.name] = False
        else:
            body[field.name] = 1  # acks=1 for Produce: an acks=0 produce has no answer
    return body


def _error_codes(fields, value, version: int) -> list[int]:
    """Every error code a decoded response carries at `version`, at any depth."""
    found = []
    for field in fields:
        if not field.versions[0] <= version <= field.versions[1] or value.get(field.name) is None:
            continue
        if field.name in ("error_code", "partition_error_code"):  # not topic_config_error_code: a detail
            found.append(value[field.name])
        elif field.type == "[]":
            for item in value[field.name]:
                found.extend(_error_codes(field.fields, item, version))
        elif field.type == "{}":
            found.extend(_error_codes(field.fields, value[field.name], version))
    return found


def _request_body(api_key: int, version: int, schema) -> dict:
    """The populated request as a handler sees it: encoded, then decoded by the broker's codec."""
    frame = encode_request(api_key, version, 1, "c", _populated(schema.request, version))
    header_end = 10 + int.from_bytes(frame[8:10], "big")  # api key, version, correlation id, client id
    if api_keys.request_header_version(api_key, version) >= 2:
        header_end += 1  # no tagged fields
    return decode_request(api_key, version, memoryview(frame)[header_end:])


# DescribeLogDirs before v3 has no error code at all: Kafka's answer, like this one, lists no results.
NO_PLACE_FOR_AN_ERROR = {(35, 1), (35, 2)}


@pytest.mark.parametrize("api_key", sorted(api_keys.SCHEMAS))
def test_every_version_has_an_error_response_that_encodes_and_carries_the_code(api_key):
    schema = api_keys.SCHEMAS[api_key]
    for version in range(schema.min_version, schema.max_version + 1):
        body = _request_body(api_key, version, schema)
        answer = error_response(api_key, version, body, RuntimeError("boom"))
        if answer is None:  # only a response without any error code may close the connection
            assert not any(field.name == "error_code" for field in schema.response), (schema.name, version)
            continue
        frame = b"".join(bytes(chunk) for chunk in encode_response(api_key, version, 5, answer))
        correlation_id, decoded = decode_response(api_key, version, frame)
        codes = _error_codes(schema.response, decoded, version)
        assert correlation_id == 5
        if (api_key, version) in NO_PLACE_FOR_AN_ERROR:
            assert codes == [], decoded
        else:
            assert codes and set(codes) == {Errors.UNKNOWN_SERVER_ERROR}, (schema.name, version, decoded)


def test_responses_echo_the_topics_and_partitions_asked_about():
    produce = {"acks": -1, "topic_data": [{"name": "a", "partition_data": [{"index": 0}, {"index": 3}]},
                                          {"name": "b", "partition_data": [{"index": 1}]}]}
    answer = error_response(PRODUCE, 11, produce, RuntimeError("boom"))
    assert [(t["name"], [(p["index"], p["error_code"], p["base_offset"]) for p in t["partition_responses"]])
            for t in answer["responses"]] == [("a", [(0, -1, -1), (3, -1, -1)]), ("b", [(1, -1, -1)])]
    # ApiError.fromThrowable: an UNKNOWN_SERVER_ERROR names no message, lest it leak internals
    assert answer["responses"][0]["partition_responses"][0]["error_message"] is None
    fetch = {"session_id": 9, "topics": [{"topic": "a", "topic_id": bytes(16), "partitions": [{"partition": 2}]}]}
    old, new = error_response(1, 12, fetch, RuntimeError()), error_response(1, 13, fetch, RuntimeError())
    assert (old["error_code"], old["session_id"], old["responses"][0]["partitions"][0]["partition_index"]) == (
        Errors.UNKNOWN_SERVER_ERROR, 9, 2)
    assert new["responses"] == [] and new["error_code"] == Errors.UNKNOWN_SERVER_ERROR  # v13+: the top level says it


def test_admin_requests_are_answered_per_entry_as_their_get_error_response_does():
    """Compared with kafka-clients 4.3's getErrorResponse on the same requests (a fuzz campaign's
    oracle): these answered nothing, closing the connection, or echoed nothing."""
    boom = RuntimeError("boom")
    log_dirs = {"dirs": [{"path": "/d", "topics": [{"name": "t0", "partitions": [0, 1]}]}]}
    assert error_response(34, 2, log_dirs, boom)["results"] == [{"topic_name": "t0", "partitions": [
        {"partition_index": 0, "error_code": -1}, {"partition_index": 1, "error_code": -1}]}]
    entity = [{"entity_type": "user", "entity_name": "u"}]
    assert error_response(49, 1, {"entries": [{"entity": entity, "ops": []}]}, boom)["entries"] == [
        {"error_code": -1, "error_message": default_message(Errors.UNKNOWN_SERVER_ERROR), "entity": entity}]
    scram = {"deletions": [{"name": "v", "mechanism": 1}], "upsertions": [{"name": "u"}, {"name": "v"}]}
    assert [(r["user"], r["error_message"]) for r in error_response(51, 0, scram, boom)["results"]] == [
        ("u", None), ("v", None)]
    listed = error_response(46, 0, {"topics": [{"name": "t0", "partition_indexes": [0]}]}, boom)
    assert (listed["error_message"], listed["topics"][0]["partitions"][0]["partition_index"]) == (None, 0)
    assert error_response(48, 1, {"components": [], "strict": False}, boom)["entries"] is None
    token = error_response(38, 3, {"owner_principal_name": "bob"}, boom)
    assert (token["principal_name"], token["issue_timestamp_ms"]) == ("ANONYMOUS", -1)
    assert error_response(64, 0, {"broker_id": 7}, boom)["error_message"] == "boom"  # e.getMessage() as it is
    assert error_response(29, 3, {}, boom)["error_message"] is None  # DescribeAcls: null, not ""

    class Refused(Exception):
        error_code = Errors.INVALID_REQUEST
    said = Refused("custom text")  # the jar: AlterClientQuotas names the default text, the heartbeats nothing
    assert error_response(49, 1, {"entries": [{"entity": entity, "ops": []}]}, said)["entries"][0][
        "error_message"] == default_message(Errors.INVALID_REQUEST)
    assert [error_response(key, 1, {}, said)["error_message"] for key in (68, 76, 78, 79, 88)] == [None] * 5
    # StreamsGroupDescribeRequest.getErrorResponse: each group named, with the code alone
    assert error_response(89, 0, {"group_ids": ["a", "b"]}, said) == {"groups": [
        {"group_id": "a", "error_code": Errors.INVALID_REQUEST},
        {"group_id": "b", "error_code": Errors.INVALID_REQUEST}]}
    assert error_response(29, 3, {}, said)["error_message"] == "custom text"


def test_an_acks_0_produce_has_no_error_response_so_the_connection_closes():
    assert error_response(PRODUCE, 9, {"acks": 0, "topic_data": []}, RuntimeError()) is None


def test_messages_follow_each_requests_get_error_response():
    """ApiError.fromThrowable (Produce, CreateTopics, ...): the exception's own message unless it is
    the error's default text; FindCoordinator, DescribeConfigs and the share-group state reads:
    always Errors.message()."""
    class Refused(Exception):
        error_code = Errors.POLICY_VIOLATION
    create = {"topics": [{"name": "a"}]}
    assert error_response(19, 7, create, Refused("no such topics here"))["topics"][0]["error_message"] == (
        "no such topics here")
    assert error_response(19, 7, create, Refused(default_message(Errors.POLICY_VIOLATION))
                          )["topics"][0]["error_message"] is None
    assert error_response(10, 3, {"key": "g"}, Refused("no"))["error_message"] == (
        "Request parameters do not satisfy the configured policy.")
    assert error_response(10, 4, {"coordinator_keys": ["g"]}, RuntimeError("boom"))["coordinators"][0][
        "error_message"] == "The server experienced an unexpected error when processing the request."
    describe = {"resources": [{"resource_type": 2, "resource_name": "a"}]}
    assert error_response(32, 4, describe, Refused("no"))["results"][0]["error_message"] == (
        default_message(Errors.POLICY_VIOLATION))
    assert error_response(44, 1, describe, Refused("no"))["responses"][0]["error_message"] == "no"


def test_an_exception_carrying_a_kafka_code_keeps_it():
    class NotLeader(Exception):
        error_code = Errors.NOT_LEADER_OR_FOLLOWER
    assert error_code_of(NotLeader()) == Errors.NOT_LEADER_OR_FOLLOWER
    assert error_code_of(KeyError("x")) == Errors.UNKNOWN_SERVER_ERROR
    assert error_code_of(type("Odd", (Exception,), {"error_code": 12345})()) == Errors.UNKNOWN_SERVER_ERROR
    assert error_code_of(type("Fine", (Exception,), {"error_code": 0})()) == Errors.UNKNOWN_SERVER_ERROR


# -- a real broker whose handlers fail ------------------------------------------------

@pytest.fixture
def failing_broker(tmp_path):
    broker = BrokerOnThread(tmp_path)
    yield broker
    broker.stop()


def test_a_failed_handler_is_answered_with_an_error_and_the_connection_serves_on(failing_broker, caplog):
    caplog.set_level(logging.ERROR, logger="franz.server.kafka_apis")
    with RawClient(failing_broker.bootstrap) as client:
        create_topic(client, "t")
        failing_broker.fail("ListOffsets", KeyError("no such thing"))
        answer = client.request(LIST_OFFSETS, 9, {"replica_id": -1, "isolation_level": 0, "topics": [
            {"name": "t", "partitions": [{"partition_index": 0, "current_leader_epoch": -1, "timestamp": -1}]}]})
        partition = answer["topics"][0]["partitions"][0]
        assert (answer["topics"][0]["name"], partition["partition_index"], partition["error_code"],
                partition["offset"]) == ("t", 0, Errors.UNKNOWN_SERVER_ERROR, -1)
        failing_broker.fail("DescribeCluster", RuntimeError("cluster view broken"))
        cluster = client.request(DESCRIBE_CLUSTER, 1, {"include_cluster_authorized_operations": False,
                                                       "endpoint_type": 1})
        # ApiError.fromThrowable keeps an unexpected error's text to the broker's log
        assert (cluster["error_code"], cluster["error_message"]) == (Errors.UNKNOWN_SERVER_ERROR, None)
        metadata = client.request(METADATA, 12, {"topics": [{"topic_id": bytes(16), "name": "t"}],
                                                 "allow_auto_topic_creation": False,
                                                 "include_topic_authorized_operations": False})
        assert metadata["topics"][0]["error_code"] == 0  # the same connection, still served
    lines = [r.getMessage() for r in caplog.records if "Unexpected error handling request" in r.getMessage()]
    assert len(lines) == 2 and "ListOffsets v9" in lines[0] and "DescribeCluster v1" in lines[1]
    assert caplog.records[-1].exc_info is not None  # the traceback is logged, as Kafka logs it


def test_a_failed_acks_0_produce_closes_only_its_connection(failing_broker):
    with RawClient(failing_broker.bootstrap) as client, RawClient(failing_broker.bootstrap) as other:
        create_topic(client, "t")
        failing_broker.fail("Produce", RuntimeError("append broken"))
        client.send_frame(encode_request(PRODUCE, 9, 7, "c", {"acks": 0, "timeout_ms": 1000, "topic_data": [
            {"name": "t", "partition_data": [{"index": 0, "records": batch(b"x")}]}]}))
        assert client.is_closed_by_peer()
        assert other.request(API_VERSIONS, 3, {"client_software_name": "c", "client_software_version": "1"})[
            "error_code"] == 0


def test_librdkafka_sees_the_broker_error_and_not_a_dropped_connection(failing_broker):
    from confluent_kafka import Consumer, KafkaError, KafkaException, TopicPartition
    with RawClient(failing_broker.bootstrap) as client:
        create_topic(client, "t")
    failing_broker.fail("ListOffsets", KeyError("x"))
    consumer = Consumer({"bootstrap.servers": failing_broker.bootstrap, "group.id": "g"})
    try:
        with pytest.raises(KafkaException) as raised:
            consumer.get_watermark_offsets(TopicPartition("t", 0), timeout=10, cached=False)
        assert raised.value.args[0].code() == KafkaError.UNKNOWN  # UNKNOWN_SERVER_ERROR, -1
    finally:
        consumer.close()
