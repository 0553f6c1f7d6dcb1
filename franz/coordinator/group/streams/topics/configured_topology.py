"""Kafka's ConfiguredTopology: what configuring a streams group's topology against the broker's
topics gave, namely the configured subtopologies (for the task assignor), the internal topics to
create, and, when the group cannot be assigned yet, the reason to report to its members."""

from __future__ import annotations

import dataclasses
from typing import Any

from franz.coordinator.group.streams.topics.configured_subtopology import ConfiguredSubtopology
from franz.coordinator.group.streams.topics.topic_configuration_exception import TopicConfigurationException


@dataclasses.dataclass(frozen=True)
class ConfiguredTopology:
    """topology_epoch is that of the heartbeat whose topology was configured; metadata_hash that
    of the topics it was configured against. subtopologies is None when configuration failed.
    internal_topics_to_be_created maps names to CreateTopics request topics."""

    topology_epoch: int
    metadata_hash: int
    subtopologies: dict[str, ConfiguredSubtopology] | None
    internal_topics_to_be_created: dict[str, dict[str, Any]]
    topic_configuration_exception: TopicConfigurationException | None

    def __post_init__(self) -> None:
        if self.topology_epoch < 0:
            raise ValueError("Topology epoch must be non-negative.")
        if self.topic_configuration_exception is None and self.subtopologies is None:
            raise ValueError("Subtopologies must be present if topicConfigurationException is empty.")
        if self.internal_topics_to_be_created is None:
            raise TypeError("internalTopicsToBeCreated can't be null")

    def is_ready(self) -> bool:
        return self.topic_configuration_exception is None

    def as_streams_group_describe_topology(self) -> dict[str, Any]:
        """StreamsGroupDescribeResponse's Topology, as franz's codec shapes it."""
        subtopologies = self.subtopologies or {}
        return {
            "epoch": self.topology_epoch,
            "subtopologies": [subtopology.as_streams_group_describe_subtopology(subtopology_id)
                              for subtopology_id, subtopology in subtopologies.items()],
        }
