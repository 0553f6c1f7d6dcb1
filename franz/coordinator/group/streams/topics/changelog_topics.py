"""Kafka's ChangelogTopics: the partition count of the state changelog topics of a topology, one
partition per task, so the largest partition count among each subtopology's inputs (source and
repartition source topics)."""

from __future__ import annotations

from collections.abc import Iterable

from franz.coordinator.group.streams.streams_topology import Subtopology
from franz.coordinator.group.streams.topics.repartition_topics import TopicPartitionCountProvider
from franz.coordinator.group.streams.topics.streams_invalid_topology_exception import StreamsInvalidTopologyException


class ChangelogTopics:
    def __init__(self, subtopologies: Iterable[Subtopology],
                 topic_partition_count_provider: TopicPartitionCountProvider):
        # The provider must know the repartition topics' decided counts too, even of topics the
        # broker does not have yet.
        self._subtopologies = list(subtopologies)
        self._topic_partition_count_provider = topic_partition_count_provider

    def setup(self) -> dict[str, int]:
        """The partition count of every changelog topic, including a source topic a subtopology
        uses as its changelog (its count is then checked against the topic's actual count).

        Raises StreamsInvalidTopologyException for a subtopology without inputs, RuntimeError when
        an input's count is unknown.
        """
        partition_counts: dict[str, int] = {}
        for subtopology in self._subtopologies:
            inputs = [*subtopology.source_topics, *(topic.name for topic in subtopology.repartition_source_topics)]
            if not inputs:
                raise StreamsInvalidTopologyException(
                    f"No source topics found for subtopology {subtopology.subtopology_id}")
            max_partitions = max(self._partition_count_or_fail(topic) for topic in inputs)
            for topic in subtopology.state_changelog_topics:
                partition_counts[topic.name] = max_partitions
        return partition_counts

    def _partition_count_or_fail(self, topic: str) -> int:
        partitions = self._topic_partition_count_provider(topic)
        if partitions is None:
            raise RuntimeError(f"No partition count for source topic {topic}")
        return partitions
