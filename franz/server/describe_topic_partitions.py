"""DescribeTopicPartitions (KIP-966): topics' partitions, a page at a time
(kafka.server.handlers.DescribeTopicPartitionsRequestHandler and
KRaftMetadataCache.getTopicMetadataForDescribeTopicResponse).

The Admin client of Kafka 3.8+ (kafka-topics.sh --describe) describes topics
with it instead of Metadata. Topics are answered in name order from the
cursor's topic (its partitions from the cursor's index); at most
min(`max.request.partition.size.limit`, the request's limit) partitions go in
one answer, and `next_cursor` says where the next page starts. A topic named
in the request that does not exist is answered UNKNOWN_TOPIC_OR_PARTITION
(INVALID_TOPIC_EXCEPTION when its name is not a legal one); when every topic
is asked for (an empty list), only existing ones appear. A principal sees only
the topics it may DESCRIBE: one it named and may not see is answered
TOPIC_AUTHORIZATION_FAILED after the page (whether it exists or not), and is
left out of an all-topics answer; the check is made as the page is filled, so
topics past the page's end are neither checked nor reported. One node leads every
partition, so each has this node as leader, replica and in-sync replica, and
no eligible leader replicas (ELR is off).
"""

from __future__ import annotations

from franz.protocol.errors import Errors
from franz.server.standard_authorizer import AclOperation, ResourceType
from franz.server.auth_helper import AuthHelper
from franz.server.controller import ApiError
from franz.server.metadata_cache import (
    INTERNAL_TOPICS,
    InvalidTopicError,
    MetadataCache,
    validate_topic_name,
)

NO_TOPIC_ID = bytes(16)


class DescribeTopicPartitionsApi:
    def __init__(self, metadata: MetadataCache, partitions_max: int) -> None:
        self.metadata = metadata
        self.partitions_max = partitions_max
        self.auth = AuthHelper()

    def register(self, apis) -> None:
        self.auth = apis.auth
        apis.register("DescribeTopicPartitions", self.handle_describe_topic_partitions)

    async def handle_describe_topic_partitions(self, request, body: dict) -> dict:
        cursor = body["cursor"]
        cursor_topic = cursor["topic_name"] if cursor is not None else ""
        every_topic = not body["topics"]
        names = {name for name in (self.metadata.topics if every_topic else (t["name"] for t in body["topics"]))
                 if name >= cursor_topic}
        if cursor is not None and not every_topic and cursor_topic not in names:
            raise ApiError(Errors.INVALID_REQUEST, "DescribeTopicPartitionsRequest topic list should contain the "
                                                   f"cursor topic: {cursor_topic}")
        if cursor is not None and cursor["partition_index"] < 0:
            raise ApiError(Errors.INVALID_REQUEST, f"DescribeTopicPartitionsRequest cursor partition must be "
                                                   f"valid: {cursor}")
        remaining = max(min(self.partitions_max, body["response_partition_limit"]), 1)
        topics, next_cursor = [], None
        refused = []  # named topics the principal may not DESCRIBE
        for name in sorted(names):
            # Kafka filters a lazy stream of the names: each is authorized as the page reaches it
            if not self.auth.authorize(request, AclOperation.DESCRIBE, ResourceType.TOPIC, name):
                if not every_topic:  # no topic id: the answer must not tell whether it exists
                    refused.append({"error_code": Errors.TOPIC_AUTHORIZATION_FAILED, "name": name,
                                    "topic_id": NO_TOPIC_ID, "is_internal": False, "partitions": []})
                continue
            if remaining == 0:  # the next page starts with this topic
                next_cursor = {"topic_name": name, "partition_index": 0}
                break
            topic = self.metadata.get(name)
            if topic is None:
                if not every_topic:
                    topics.append(_missing(name))
                continue
            start = cursor["partition_index"] if name == cursor_topic and cursor is not None else 0
            end = min(topic.num_partitions, start + remaining)
            topics.append(self._described(topic, range(start, end)))
            if end < topic.num_partitions:
                next_cursor = {"topic_name": name, "partition_index": end}
                break
            remaining -= end - start
        for topic in topics:  # the others keep the schema's default (Int.MinValue)
            topic["topic_authorized_operations"] = self.auth.authorized_operations(request, "topic", topic["name"])
        return {"throttle_time_ms": 0, "topics": topics + refused, "next_cursor": next_cursor}

    def _described(self, topic, partitions: range) -> dict:
        # Kafka answers a leaderless partition here without an error: only its leader (-1) tells.
        return {"error_code": Errors.NONE, "name": topic.name, "topic_id": topic.topic_id.bytes,
                "is_internal": topic.is_internal,
                "partitions": [{**partition, "error_code": Errors.NONE, "eligible_leader_replicas": [],
                                "last_known_elr": []}
                               for partition in self.metadata.partition_metadata(topic, partitions)]}


def _missing(name: str) -> dict:
    try:
        validate_topic_name(name)
        error = Errors.UNKNOWN_TOPIC_OR_PARTITION
    except InvalidTopicError:
        error = Errors.INVALID_TOPIC_EXCEPTION
    return {"error_code": error, "name": name, "topic_id": NO_TOPIC_ID, "is_internal": name in INTERNAL_TOPICS,
            "partitions": []}
