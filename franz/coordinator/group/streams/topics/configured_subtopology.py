"""Kafka's ConfiguredSubtopology: a subtopology with its task count and its internal topics'
partition counts decided, recomputed whenever the topics it reads change."""

from __future__ import annotations

import dataclasses
from typing import Any

from franz.coordinator.group.streams.topics.configured_internal_topic import ConfiguredInternalTopic


@dataclasses.dataclass(frozen=True)
class ConfiguredSubtopology:
    """number_of_tasks is the largest partition count among the topics the subtopology reads; a
    topic with fewer partitions has none for the higher tasks."""

    number_of_tasks: int
    source_topics: set[str]
    repartition_source_topics: dict[str, ConfiguredInternalTopic]
    repartition_sink_topics: set[str]
    state_changelog_topics: dict[str, ConfiguredInternalTopic]

    def __post_init__(self) -> None:
        if self.number_of_tasks <= 0:
            raise ValueError("Number of tasks must be positive")
        for value, name in ((self.source_topics, "sourceTopics"),
                            (self.repartition_source_topics, "repartitionSourceTopics"),
                            (self.repartition_sink_topics, "repartitionSinkTopics"),
                            (self.state_changelog_topics, "stateChangelogTopics")):
            if value is None:
                raise TypeError(f"{name} can't be null")

    def as_streams_group_describe_subtopology(self, subtopology_id: str) -> dict[str, Any]:
        """StreamsGroupDescribeResponse's Subtopology, as franz's codec shapes it: topics sorted by name."""
        return {
            "subtopology_id": subtopology_id,
            "source_topics": sorted(self.source_topics),
            "repartition_sink_topics": sorted(self.repartition_sink_topics),
            "repartition_source_topics": _described(self.repartition_source_topics),
            "state_changelog_topics": _described(self.state_changelog_topics),
        }


def _described(topics: dict[str, ConfiguredInternalTopic]) -> list[dict[str, Any]]:
    described = [topic.as_streams_group_describe_topic_info() for topic in topics.values()]
    return sorted(described, key=lambda topic_info: topic_info["name"])
