"""ErrorsPerSec's counts: every ErrorCode of an answer, except where Kafka's errorCounts differs."""

from __future__ import annotations

from franz.protocol import api_keys
from franz.protocol.error_counts import _COUNTERS, _count_path, error_counts, error_paths
from franz.protocol.errors import Errors

NONE, UNKNOWN = Errors.NONE, Errors.UNKNOWN_TOPIC_OR_PARTITION


def _key(name: str) -> int:
    return api_keys.SCHEMAS_BY_NAME[name].api_key


def test_every_error_code_of_the_version_counts_once_none_included():
    produce = {"responses": [{"name": "t", "partition_responses": [{"index": 0, "error_code": 0},
                                                                    {"index": 1, "error_code": 3}]}]}
    assert error_counts(_key("Produce"), 11, produce) == {NONE: 1, UNKNOWN: 1}
    offset_fetch = {"groups": [{"group_id": "g", "error_code": 0, "topics": [
        {"name": "t", "partitions": [{"partition_index": 0, "error_code": 0}]}]}]}
    assert error_counts(_key("OffsetFetch"), 8, offset_fetch) == {NONE: 2}
    # CreateTopics' TopicConfigErrorCode is not an ErrorCode: Kafka does not count it
    create = {"topics": [{"name": "t", "error_code": 0, "topic_config_error_code": 29}]}
    assert error_counts(_key("CreateTopics"), 7, create) == {NONE: 1}


def test_produces_unrolled_count_is_the_default_rules():
    body = {"responses": [{"name": "t", "partition_responses": [{"index": 0, "error_code": 0}, {"index": 1}]},
                          {"name": "u", "partition_responses": [{"index": 0, "error_code": 47}]}]}
    by_rule: dict[int, int] = {}
    for path in error_paths(_key("Produce"), 11):
        _count_path(body, path, by_rule)
    assert error_counts(_key("Produce"), 11, body) == by_rule == {NONE: 2, 47: 1}


def test_a_field_left_out_of_the_answer_counts_as_its_default():
    assert error_counts(_key("Produce"), 11, {"responses": [{"name": "t", "partition_responses": [{}]}]}) == {NONE: 1}


def test_every_served_answer_has_error_codes_to_count():
    for schema in api_keys.SCHEMAS.values():
        if schema.name not in _COUNTERS or schema.name == "Produce":
            assert error_paths(schema.api_key, schema.max_version), schema.name


def test_fetch_counts_its_top_level_code_in_versions_that_do_not_send_it():
    body = {"responses": [{"topic": "t", "partitions": [{"partition_index": 0, "error_code": 0},
                                                         {"partition_index": 1, "error_code": 3}]}]}
    assert error_counts(_key("Fetch"), 4, body) == {NONE: 2, UNKNOWN: 1}
    assert error_counts(_key("Fetch"), 12, {"error_code": 71, "responses": []}) == {71: 1}


def test_metadata_never_counts_its_top_level_code():
    body = {"error_code": 31, "topics": [{"name": "t", "error_code": 0, "partitions": [{"error_code": 0}]}]}
    assert error_counts(_key("Metadata"), 13, body) == {NONE: 2}
    assert error_counts(_key("Metadata"), 13, {"error_code": 31, "topics": []}) == {}


def test_add_partitions_to_txn_counts_partition_error_codes():
    v3 = {"results_by_topic_v3_and_below": [{"name": "t", "results_by_partition": [
        {"partition_index": 0, "partition_error_code": 0}, {"partition_index": 1, "partition_error_code": 48}]}]}
    assert error_counts(_key("AddPartitionsToTxn"), 3, v3) == {NONE: 1, 48: 1}
    assert error_counts(_key("AddPartitionsToTxn"), 3, {"results_by_topic_v3_and_below": []}) == {NONE: 1}
    v4 = {"error_code": 0, "results_by_transaction": [{"transactional_id": "x", "topic_results": [
        {"name": "t", "results_by_partition": [{"partition_index": 0, "partition_error_code": 48}]}]}]}
    assert error_counts(_key("AddPartitionsToTxn"), 4, v4) == {NONE: 1, 48: 1}


def test_find_coordinator_counts_its_coordinators_or_else_its_top_level_code():
    body = {"coordinators": [{"key": "g", "error_code": 0}, {"key": "h", "error_code": 15}]}
    assert error_counts(_key("FindCoordinator"), 4, body) == {NONE: 1, 15: 1}
    assert error_counts(_key("FindCoordinator"), 4, {"coordinators": []}) == {NONE: 1}
    assert error_counts(_key("FindCoordinator"), 3, {"error_code": 15}) == {15: 1}


def test_top_level_codes_counted_from_versions_before_they_were_sent():
    assert error_counts(_key("DescribeLogDirs"), 1, {"error_code": 31, "results": []}) == {31: 1}
    assert error_counts(_key("DescribeLogDirs"), 2, {"results": [{"error_code": 0}]}) == {NONE: 2}
    body = {"replica_election_results": [{"topic": "t", "partition_result": [{"partition_id": 0, "error_code": 84}]}]}
    assert error_counts(_key("ElectLeaders"), 0, body) == {NONE: 1, 84: 1}


def test_answers_that_count_less_than_every_error_code():
    delete_acls = {"filter_results": [{"error_code": 0, "matching_acls": [{"error_code": 0}, {"error_code": 0}]}]}
    assert error_counts(_key("DeleteAcls"), 3, delete_acls) == {NONE: 1}
    scram = {"error_code": 0, "results": [{"user": "u", "error_code": 91}]}
    assert error_counts(_key("DescribeUserScramCredentials"), 0, scram) == {91: 1}
    assert error_counts(_key("UnregisterBroker"), 0, {"error_code": 0}) == {}
    assert error_counts(_key("UnregisterBroker"), 0, {"error_code": 41}) == {41: 1}


def test_describe_share_group_offsets_counts_a_failed_group_once_and_a_fine_one_not_at_all():
    body = {"groups": [{"group_id": "g", "error_code": 69, "topics": []},
                       {"group_id": "g", "error_code": 69, "topics": []},
                       {"group_id": "h", "error_code": 0, "topics": [{"topic_name": "t", "partitions": [
                           {"partition_index": 0, "error_code": 0}]}]}]}
    assert error_counts(_key("DescribeShareGroupOffsets"), 0, body) == {69: 1, NONE: 1}
