"""MetadataCache: what the broker knows of topics, partitions and itself (kafka.server.MetadataCache).

On a single node every partition is led by this node with leader epoch 0,
replicas = ISR = [node.id], unless a disk error took its log offline (then it has
no leader: partition_metadata); the cache maps topic names to TopicMetadata
(topic id, partition count, config overrides) and topic ids back to names.

Invariants: names and ids are one-to-one; a topic's partitions are 0..n-1;
readers take no lock (the dicts are replaced or updated in single steps on the
event loop, the only writer).
"""

from __future__ import annotations

import dataclasses
import re
import uuid
from collections.abc import Set as AbstractSet
from typing import Final

from franz.protocol.errors import Errors
from franz.server.broker_features import FinalizedFeatures
from franz.server.kafka_config import Endpoint

LEADER_EPOCH: Final = 0
TOPIC_NAME_LENGTH_MAX: Final = 249
_LEGAL_TOPIC_CHARS: Final = re.compile(r"[a-zA-Z0-9._-]+")
# Topic.isInternal of Kafka 4.3: the coordinators' topics, which clients may not produce to or trim
INTERNAL_TOPICS: Final = frozenset(("__consumer_offsets", "__transaction_state", "__share_group_state"))


class InvalidTopicError(ValueError):
    """A topic name Kafka's Topic.validate refuses."""


def validate_topic_name(name: str) -> None:
    """Kafka's org.apache.kafka.common.internals.Topic.validate, with its 4.x messages."""
    reason = None
    if not name:
        reason = "the empty string is not allowed"
    elif name in (".", ".."):
        reason = f"'{name}' is not allowed"
    elif len(name) > TOPIC_NAME_LENGTH_MAX:
        reason = f"the length of '{name}' is longer than the max allowed length {TOPIC_NAME_LENGTH_MAX}"
    elif not _LEGAL_TOPIC_CHARS.fullmatch(name):
        reason = f"'{name}' contains one or more characters other than ASCII alphanumerics, '.', '_' and '-'"
    if reason is not None:
        raise InvalidTopicError(f"Topic name is invalid: {reason}")


def collision_name(name: str) -> str:
    """Topic.unifyCollisionChars: '.' and '_' are one character in metric names, so two topics
    whose names differ only there may not both exist."""
    return name.replace(".", "_")


@dataclasses.dataclass
class TopicMetadata:
    name: str
    topic_id: uuid.UUID
    num_partitions: int
    configs: dict[str, str] = dataclasses.field(default_factory=dict)

    @property
    def is_internal(self) -> bool:
        return self.name in INTERNAL_TOPICS


class MetadataCache:
    def __init__(self, node_id: int, cluster_id: str, advertised: list[Endpoint]) -> None:
        self.node_id = node_id
        self.cluster_id = cluster_id
        self.advertised = advertised
        self.topics: dict[str, TopicMetadata] = {}
        self.topic_names_by_id: dict[bytes, str] = {}
        self.features = FinalizedFeatures()  # FeatureControlManager loads the stored levels over these
        # Partitions without a leader: their only replica, this node's log, was taken offline by a
        # disk error. KafkaServer makes this LogManager.offline_logs, a live view; read-only here.
        self.offline_partitions: AbstractSet[tuple[str, int]] = frozenset()

    def put(self, topic: TopicMetadata) -> None:
        self.topics[topic.name] = topic
        self.topic_names_by_id[topic.topic_id.bytes] = topic.name

    def remove(self, name: str) -> TopicMetadata | None:
        topic = self.topics.pop(name, None)
        if topic is not None:
            self.topic_names_by_id.pop(topic.topic_id.bytes, None)
        return topic

    def get(self, name: str) -> TopicMetadata | None:
        return self.topics.get(name)

    def name_of(self, topic_id: bytes) -> str | None:
        return self.topic_names_by_id.get(bytes(topic_id))

    def has_partition(self, name: str, partition: int) -> bool:
        topic = self.topics.get(name)
        return topic is not None and 0 <= partition < topic.num_partitions

    def partition_count(self, name: str, default: int) -> int:
        """The topic's partition count, `default` while it does not exist
        (metadataCache.numPartitions(name).orElse(default), as the coordinators place keys)."""
        topic = self.topics.get(name)
        return default if topic is None else topic.num_partitions

    def partition_metadata(self, topic: TopicMetadata, partitions: range) -> list[dict]:
        """Each partition's leader, replicas and ISR as Metadata and DescribeTopicPartitions answer
        them (KRaftMetadataCache.partitionMetadata), with error_code: NONE for a partition led
        here; LEADER_NOT_AVAILABLE, leader -1 and this node offline for one whose log is offline,
        as Kafka's controller leaves a partition whose only replica's dir failed with eligible
        leader replicas off, as franz has them (no eligible.leader.replicas.version): the ISR
        keeps its last member. (With ELR on, a 4.3 cluster's default, the ISR would empty and
        DescribeTopicPartitions name the node in the ELR.) Kafka would bump the leader epoch
        there; franz's stays LEADER_EPOCH, as no restart or failover moves it either."""
        node = self.node_id
        offline = self.offline_partitions
        return [{"error_code": 0, "partition_index": index, "leader_id": node, "leader_epoch": LEADER_EPOCH,
                 "replica_nodes": [node], "isr_nodes": [node], "offline_replicas": []}
                if not offline or (topic.name, index) not in offline else
                {"error_code": Errors.LEADER_NOT_AVAILABLE, "partition_index": index, "leader_id": -1,
                 "leader_epoch": LEADER_EPOCH, "replica_nodes": [node], "isr_nodes": [node],
                 "offline_replicas": [node]}
                for index in partitions]

    def endpoint_for(self, listener_name: str) -> Endpoint:
        """This node's advertised endpoint on the listener a request came in on."""
        for endpoint in self.advertised:
            if endpoint.listener_name == listener_name:
                return endpoint
        return self.advertised[0]
