"""Authorized operations against a running broker: with no authorizer, each resource's every
supported operation, in the answers that ask for them, and Int.MinValue in those that do not."""

from __future__ import annotations

from franz.protocol.errors import Errors
from franz.server.auth_helper import authorized_operations
from tests.support.raw_client import RawClient, create_topic

METADATA, DESCRIBE_GROUPS, DESCRIBE_CLUSTER, CONSUMER_GROUP_DESCRIBE = 3, 15, 60, 69
OMITTED = -2**31


def test_the_operation_fields_are_kafkas_bitfields():
    assert authorized_operations("topic") == 3576  # READ WRITE CREATE DELETE ALTER DESCRIBE DESCRIBE/ALTER_CONFIGS
    assert authorized_operations("cluster") == 8096  # CREATE ALTER DESCRIBE CLUSTER_ACTION ... IDEMPOTENT_WRITE
    assert authorized_operations("group") == 3400  # READ DELETE DESCRIBE DESCRIBE_CONFIGS ALTER_CONFIGS


def test_topics_clusters_and_groups_report_their_operations_only_when_asked(broker):
    with RawClient(broker.bootstrap) as client:
        create_topic(client, "ops")
        for asked, topic_ops, cluster_ops, group_ops in ((True, 3576, 8096, 3400),
                                                         (False, OMITTED, OMITTED, OMITTED)):
            metadata = client.request(METADATA, 12, {"topics": [{"topic_id": bytes(16), "name": "ops"}],
                                                     "allow_auto_topic_creation": False,
                                                     "include_topic_authorized_operations": asked})
            assert metadata["topics"][0]["topic_authorized_operations"] == topic_ops
            cluster = client.request(DESCRIBE_CLUSTER, 1, {"include_cluster_authorized_operations": asked,
                                                           "endpoint_type": 1})
            assert cluster["cluster_authorized_operations"] == cluster_ops
            groups = client.request(DESCRIBE_GROUPS, 5, {"groups": ["quiet", ""],
                                                         "include_authorized_operations": asked})["groups"]
            # A group answered with an error gets none, as in KafkaApis.
            assert [(g["error_code"], g["authorized_operations"]) for g in groups] == [
                (Errors.NONE, group_ops), (Errors.INVALID_GROUP_ID, OMITTED)]
        missing = client.request(CONSUMER_GROUP_DESCRIBE, 0, {"group_ids": ["absent"],
                                                              "include_authorized_operations": True})["groups"][0]
        assert (missing["error_code"], missing["authorized_operations"]) == (Errors.GROUP_ID_NOT_FOUND, OMITTED)
