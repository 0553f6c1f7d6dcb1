"""The answer to a request whose handler failed: each request's getErrorResponse in Kafka.

Kafka's KafkaApis.handle catches whatever a handler throws, logs it and hands
it to RequestHandlerHelper.handleError, which asks the request for its error
response (AbstractRequest.getErrorResponse): the exception's error code
(Errors.forException: UNKNOWN_SERVER_ERROR unless it names a Kafka error) in
every place the response has one, echoing the request's topics, partitions,
groups or resources, so that the client sees an error it can retry and keeps
its connection. Only a request with no error response closes the connection:
a Produce with acks=0, whose client reads no answer and learns of the failure
from the closed connection.

`error_response` returns the response body (fields left out take the schema's
defaults) or None for "close". Each builder below follows the Java request
class of the same name at the versions franz serves; an API without one gets
its top-level error_code when its response has one at that version, else None.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any, Final

from franz.protocol import api_keys
from franz.protocol.errors import Errors, default_message

Body = dict[str, Any]
Builder = Callable[[int, Body, int, str | None], Body | None]

INVALID_OFFSET = -1  # ProduceResponse.INVALID_OFFSET, ListOffsetsResponse.UNKNOWN_OFFSET, and the like
UNKNOWN_TIMESTAMP = -1
NO_PRODUCER_ID = -1
NO_PRODUCER_EPOCH = -1


def error_code_of(exc: BaseException) -> int:
    """Errors.forException: the Kafka code an exception carries, else UNKNOWN_SERVER_ERROR."""
    code = getattr(exc, "error_code", None)
    try:
        known = Errors(code) if isinstance(code, int) else Errors.UNKNOWN_SERVER_ERROR
    except ValueError:
        known = Errors.UNKNOWN_SERVER_ERROR
    return int(Errors.UNKNOWN_SERVER_ERROR if known == Errors.NONE else known)


def error_response(api_key: int, version: int, body: Body, exc: BaseException) -> Body | None:
    """The response body Kafka sends for `body` when its handler raised `exc`; None: close the connection."""
    code = error_code_of(exc)
    # ApiError.fromThrowable: no message for UNKNOWN_SERVER_ERROR (it could leak internals) nor
    # when it only repeats the error's default text.
    text = str(exc) or None
    message = None if code == Errors.UNKNOWN_SERVER_ERROR or text == default_message(code) else text
    if api_key in _EXCEPTION_MESSAGE:  # its response takes e.getMessage() as it is
        message = text
    builder = _BUILDERS.get(api_key)
    if builder is not None:
        return builder(version, body, code, message)
    present = {field.name: field for field in api_keys.SCHEMAS[api_key].response
               if field.versions[0] <= version <= field.versions[1]}
    if "error_code" not in present:
        return None
    answer: Body = {"error_code": code}
    error_message = present.get("error_message")
    if error_message is not None and (message is not None or error_message.nullable_in(version)):
        answer["error_message"] = message  # ApiError's message: null unless the exception says more
    return answer


def _topics(topics, name_key: str, partitions_key: str, partition_key: str, out_partitions_key: str,
            **partition_fields) -> list[Body]:
    """The request's topics and partitions, each partition answered with `partition_fields`."""
    return [{name_key: topic[name_key],
             out_partitions_key: [{**partition_fields, "partition_index": _index(partition, partition_key)}
                                  for partition in topic[partitions_key]]}
            for topic in topics or ()]


def _index(partition, key: str) -> int:
    return partition if isinstance(partition, int) else partition[key]  # []int32 arrays hold bare indexes


def _produce(version, body, code, message):
    if body["acks"] == 0:
        return None
    return {"responses": [{"name": topic["name"], "topic_id": topic.get("topic_id"), "partition_responses": [
        {"index": partition["index"], "error_code": code, "base_offset": INVALID_OFFSET,
         "log_append_time_ms": UNKNOWN_TIMESTAMP, "log_start_offset": INVALID_OFFSET, "error_message": message}
        for partition in topic["partition_data"]]} for topic in body["topic_data"]]}


def _fetch(version, body, code, message):
    # From v13 the top-level code alone says it; before, every partition repeats it too.
    responses = [] if version >= 13 else [
        {"topic": topic["topic"], "topic_id": topic.get("topic_id"), "partitions": [
            {"partition_index": partition["partition"], "error_code": code, "high_watermark": -1}
            for partition in topic["partitions"]]} for topic in body["topics"]]
    return {"error_code": code, "session_id": body.get("session_id", 0), "responses": responses}


def _list_offsets(version, body, code, message):
    return {"topics": _topics(body["topics"], "name", "partitions", "partition_index", "partitions",
                              error_code=code, offset=INVALID_OFFSET, timestamp=UNKNOWN_TIMESTAMP)}


def _metadata(version, body, code, message):
    # From v13 the top level carries the code too.
    return {"error_code": code, "topics": [{"name": topic.get("name") or "", "topic_id": topic.get("topic_id"),
                                            "error_code": code, "is_internal": False, "partitions": []}
                                           for topic in body.get("topics") or ()]}


def _offset_commit(version, body, code, message):
    """OffsetCommit and TxnOffsetCommit: the same topics and partitions, each with the code
    (OffsetCommit v10 names them by id)."""
    topics = _topics(body["topics"], "name", "partitions", "partition_index", "partitions", error_code=code)
    for answer, asked in zip(topics, body["topics"]):
        answer["topic_id"] = asked.get("topic_id")
    return {"topics": topics}


def _offset_fetch(version, body, code, message):
    if version >= 8:
        return {"groups": [{"group_id": group["group_id"], "error_code": code} for group in body["groups"]]}
    if version >= 2:
        return {"error_code": code}
    return {"topics": _topics(body["topics"], "name", "partition_indexes", "partition_index", "partitions",
                              error_code=code, committed_offset=INVALID_OFFSET, metadata="")}


def _find_coordinator(version, body, code, message):
    """prepareOldResponse / prepareErrorResponse: the error's default text, whatever was thrown."""
    no_node = {"node_id": -1, "host": "", "port": -1}
    text = default_message(code)
    if version < 4:
        return {"error_code": code, "error_message": text, **no_node}
    return {"coordinators": [{"key": key, "error_code": code, "error_message": text, **no_node}
                             for key in body["coordinator_keys"]]}


def _join_group(version, body, code, message):
    return {"error_code": code, "generation_id": -1, "protocol_name": None if version >= 7 else "",
            "leader": "", "member_id": "", "members": []}


def _describe_groups(version, body, code, message):
    return {"groups": [{"group_id": group_id, "error_code": code} for group_id in body["groups"]]}


def _create_topics(version, body, code, message):
    return {"topics": [{"name": topic["name"], "error_code": code, "error_message": message}
                       for topic in body["topics"]]}


def _delete_topics(version, body, code, message):
    topics = body.get("topics") or [{"name": name} for name in body.get("topic_names") or ()]
    return {"responses": [{"name": topic.get("name"), "topic_id": topic.get("topic_id"), "error_code": code}
                          for topic in topics]}


def _delete_records(version, body, code, message):
    return {"topics": _topics(body["topics"], "name", "partitions", "partition_index", "partitions",
                              error_code=code, low_watermark=-1)}


def _init_producer_id(version, body, code, message):
    return {"error_code": code, "producer_id": NO_PRODUCER_ID, "producer_epoch": NO_PRODUCER_EPOCH}


def _offset_for_leader_epoch(version, body, code, message):
    return {"topics": [{"topic": topic["topic"], "partitions": [
        {"partition": partition["partition"], "error_code": code, "leader_epoch": -1, "end_offset": -1}
        for partition in topic["partitions"]]} for topic in body["topics"]]}


def _add_partitions_to_txn(version, body, code, message):
    if version >= 4:
        return {"error_code": code}
    return {"results_by_topic_v3_and_below": [{"name": topic["name"], "results_by_partition": [
        {"partition_index": index, "partition_error_code": code} for index in topic["partitions"]]}
        for topic in body["v3_and_below_topics"]]}


def _resources(results_key: str, default_text: bool = False):
    """DescribeConfigs names the error's default text (Errors.message()); AlterConfigs and
    IncrementalAlterConfigs the ApiError's message."""
    def build(version, body, code, message):
        text = default_message(code) if default_text else message
        return {results_key: [{"resource_type": resource["resource_type"],
                               "resource_name": resource["resource_name"], "error_code": code,
                               "error_message": text} for resource in body["resources"]]}
    return build


def _create_partitions(version, body, code, message):
    return {"results": [{"name": topic["name"], "error_code": code, "error_message": message}
                        for topic in body["topics"]]}


def _delete_groups(version, body, code, message):
    return {"results": [{"group_id": group_id, "error_code": code} for group_id in body["groups_names"]]}


def _describe_cluster(version, body, code, message):
    return {"error_code": code, "error_message": message}


def _describe_producers(version, body, code, message):
    return {"topics": _topics(body["topics"], "name", "partition_indexes", "partition_index", "partitions",
                              error_code=code)}


def _create_acls(version, body, code, message):
    return {"results": [{"error_code": code, "error_message": message} for _ in body["creations"]]}


def _delete_acls(version, body, code, message):
    return {"filter_results": [{"error_code": code, "error_message": message} for _ in body["filters"]]}


def _elect_leaders(version, body, code, message):
    return {"error_code": code, "replica_election_results": [
        {"topic": topic["topic"], "partition_result": [
            {"partition_id": partition, "error_code": code, "error_message": message}
            for partition in topic["partitions"]]}
        for topic in body["topic_partitions"] or ()]}


def _describe_transactions(version, body, code, message):
    return {"transaction_states": [{"transactional_id": transactional_id, "error_code": code}
                                   for transactional_id in body["transactional_ids"]]}


def _consumer_group_describe(version, body, code, message):
    return {"groups": [{"group_id": group_id, "error_code": code} for group_id in body["group_ids"]]}


def _describe_share_group_offsets(version, body, code, message):
    """The exception's own message, the default text for UNKNOWN_SERVER_ERROR (its response's
    constructor from an exception)."""
    text = default_message(code) if message is None else message
    return {"groups": [{"group_id": group["group_id"], "topics": [], "error_code": code, "error_message": text}
                       for group in body["groups"]]}


def _share_group_state(with_message: bool) -> Builder:
    """The share-group state RPCs (83-87): each share-partition asked about answers the code;
    Read, Write and ReadSummary name the error's default text too, Initialize and Delete do not."""
    def build(version, body, code, message):
        text = default_message(code) if with_message else None
        return {"results": [{"topic_id": topic["topic_id"], "partitions": [
            {"partition": partition["partition"], "error_code": code, "error_message": text}
            for partition in topic["partitions"]]} for topic in body["topics"]]}
    return build


def _with_default_text(version, body, code, message):
    return {"error_code": code, "error_message": default_message(code)}


def _write_txn_markers(version, body, code, message):
    """Every partition of every marker gets the code (WriteTxnMarkersRequest.getErrorResponse)."""
    return {"markers": [{"producer_id": marker["producer_id"], "topics": [
        {"name": topic["name"], "partitions": [{"partition_index": index, "error_code": code}
                                               for index in topic["partition_indexes"]]}
        for topic in marker["topics"]]} for marker in body["markers"]]}


def _describe_log_dirs(version, body, code, message):
    return {"error_code": code}  # before v3 there is no such field: an empty list of results says it


def _describe_topic_partitions(version, body, code, message):
    return {"topics": [{"name": topic["name"], "error_code": code} for topic in body["topics"]]}


def _alter_replica_log_dirs(version, body, code, message):
    """Each topic of each dir, every partition with the code (AlterReplicaLogDirsRequest)."""
    return {"results": [{"topic_name": topic["name"], "partitions": [
        {"partition_index": partition, "error_code": code} for partition in topic["partitions"]]}
        for log_dir in body["dirs"] for topic in log_dir["topics"]]}


def _alter_client_quotas(version, body, code, message):
    """Each entry with the code and its default text, whatever the exception says
    (Errors.forException(e).message())."""
    return {"entries": [{"error_code": code, "error_message": default_message(code), "entity": entry["entity"]}
                        for entry in body["entries"]]}


def _code_only(version, body, code, message):
    """The heartbeats and share fetches set the code alone: no message, whatever the exception says."""
    return {"error_code": code, "error_message": None}


def _alter_user_scram_credentials(version, body, code, message):
    """Each user named by a deletion or an upsertion, once, in name order."""
    users = sorted({change["name"] for change in (*body["deletions"], *body["upsertions"])})
    return {"results": [{"user": user, "error_code": code, "error_message": message} for user in users]}


def _alter_partition_reassignments(version, body, code, message):
    return {"error_code": code, "error_message": message, "responses": [
        {"name": topic["name"], "partitions": [
            {"partition_index": partition["partition_index"], "error_code": code, "error_message": message}
            for partition in topic["partitions"]]} for topic in body["topics"]]}


def _list_partition_reassignments(version, body, code, message):
    return {"error_code": code, "error_message": message, "topics": [
        {"name": topic["name"], "partitions": [
            {"partition_index": index, "replicas": [], "adding_replicas": [], "removing_replicas": []}
            for index in topic["partition_indexes"]]} for topic in body["topics"] or ()]}


def _describe_user_scram_credentials(version, body, code, message):
    """A result per user asked about, its name left empty (DescribeUserScramCredentialsRequest)."""
    return {"error_code": code, "error_message": message, "results": [
        {"user": "", "error_code": code, "error_message": message, "credential_infos": []}
        for _ in body["users"] or ()]}


def _describe_client_quotas(version, body, code, message):
    return {"error_code": code, "error_message": message, "entries": None}


def _create_delegation_token(version, body, code, message):
    """The requester and owner as ANONYMOUS, no token (CreateDelegationTokenResponse.prepareResponse)."""
    return {"error_code": code, "principal_type": "User", "principal_name": "ANONYMOUS",
            "token_requester_principal_type": "User", "token_requester_principal_name": "ANONYMOUS",
            "issue_timestamp_ms": -1, "expiry_timestamp_ms": -1, "max_timestamp_ms": -1, "token_id": "", "hmac": b""}


def _sync_group(version, body, code, message):
    return {"error_code": code, "assignment": b""}


_BUILDERS: dict[int, Builder] = {
    0: _produce, 1: _fetch, 2: _list_offsets, 3: _metadata, 8: _offset_commit, 9: _offset_fetch,
    10: _find_coordinator, 11: _join_group, 14: _sync_group, 15: _describe_groups, 19: _create_topics,
    20: _delete_topics, 21: _delete_records, 22: _init_producer_id, 23: _offset_for_leader_epoch,
    24: _add_partitions_to_txn, 27: _write_txn_markers, 28: _offset_commit, 30: _create_acls, 31: _delete_acls,
    32: _resources("results", default_text=True),
    33: _resources("responses"), 35: _describe_log_dirs, 37: _create_partitions, 42: _delete_groups, 43: _elect_leaders,
    44: _resources("responses"), 60: _describe_cluster, 61: _describe_producers, 65: _describe_transactions,
    69: _consumer_group_describe, 75: _describe_topic_partitions, 77: _consumer_group_describe,  # the same shape
    83: _share_group_state(False), 84: _share_group_state(True), 85: _share_group_state(True),
    86: _share_group_state(False), 87: _share_group_state(True),
    90: _describe_share_group_offsets, 91: _with_default_text, 92: _with_default_text,
    34: _alter_replica_log_dirs, 49: _alter_client_quotas, 51: _alter_user_scram_credentials,
    45: _alter_partition_reassignments, 46: _list_partition_reassignments, 50: _describe_user_scram_credentials,
    48: _describe_client_quotas, 38: _create_delegation_token,
    68: _code_only, 76: _code_only, 78: _code_only, 79: _code_only,
    88: _code_only, 89: _consumer_group_describe,  # StreamsGroupHeartbeat, StreamsGroupDescribe
}

# APIs whose error response carries the exception's message whatever the error (UnregisterBrokerRequest).
_EXCEPTION_MESSAGE: Final = frozenset({64})


class _Refusal(Exception):
    """Errors.X.exception: the error's code with its default text."""

    def __init__(self, error: Errors) -> None:
        super().__init__(default_message(error))
        self.error_code = error


def refusal_response(request: Any, body: Body, error: Errors) -> Body:
    """The API's error response (its getErrorResponse) for a request refused with `error`, as
    KafkaApis answers one whose principal may not act (sendErrorResponseMaybeThrottle)."""
    answer = error_response(request.api_key, request.api_version, body, _Refusal(error))
    assert answer is not None, "only an acks=0 produce has no error response"
    return {"throttle_time_ms": 0, **answer}
