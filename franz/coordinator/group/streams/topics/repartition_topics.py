"""Kafka's RepartitionTopics: the partition count of every repartition topic of a topology.

A repartition topic whose count the topology fixes keeps it; any other takes the largest count
among the inputs (source and repartition source topics) of the subtopologies that write to it.
Counts flow downstream through chains of repartition topics, so they are found by iterating to a
fixed point.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable

from franz.coordinator.group.streams.streams_topology import Subtopology
from franz.coordinator.group.streams.topics.streams_invalid_topology_exception import StreamsInvalidTopologyException

# A topic's partition count as the broker has it (or as already decided), None when unknown.
TopicPartitionCountProvider = Callable[[str], "int | None"]


class RepartitionTopics:
    def __init__(self, subtopologies: Iterable[Subtopology],
                 topic_partition_count_provider: TopicPartitionCountProvider):
        self._subtopologies = list(subtopologies)
        self._topic_partition_count_provider = topic_partition_count_provider

    def setup(self) -> dict[str, int]:
        """The partition count of each repartition topic.

        Raises RuntimeError if a source topic's count is unknown, StreamsInvalidTopologyException if
        some count cannot be determined (a loop, or a repartition topic no subtopology writes to).
        """
        missing_source_topics: set[str] = set()
        for subtopology in self._subtopologies:
            missing_source_topics.update(self._missing_external_source_topics(subtopology))
        if missing_source_topics:
            raise RuntimeError(f"Missing source topics: {', '.join(sorted(missing_source_topics))}")

        partition_counts = self._compute_repartition_topic_partition_counts()

        for subtopology in self._subtopologies:
            if any(topic.name not in partition_counts for topic in subtopology.repartition_source_topics):
                raise StreamsInvalidTopologyException(
                    "Failed to compute number of partitions for all repartition topics, because "
                    "a repartition source topic is never used as a sink topic.")
        return partition_counts

    def _missing_external_source_topics(self, subtopology: Subtopology) -> set[str]:
        missing = set(subtopology.source_topics) - {topic.name for topic in subtopology.repartition_source_topics}
        return {topic for topic in missing if self._topic_partition_count_provider(topic) is None}

    def _compute_repartition_topic_partition_counts(self) -> dict[str, int]:
        partition_counts = {topic.name: topic.partitions
                            for subtopology in self._subtopologies
                            for topic in subtopology.repartition_source_topics if topic.partitions != 0}
        while True:
            partition_count_needed = False
            progress_made = False
            for subtopology in self._subtopologies:
                for sink_topic in subtopology.repartition_sink_topics:
                    if sink_topic in partition_counts:
                        continue
                    partitions = self._partition_count_of_inputs(partition_counts, subtopology)
                    if partitions is None:
                        partition_count_needed = True
                    else:
                        partition_counts[sink_topic] = partitions
                        progress_made = True
            if not partition_count_needed:
                return partition_counts
            if not progress_made:
                raise StreamsInvalidTopologyException(
                    "Failed to compute number of partitions for all repartition topics. "
                    "There may be loops in the topology that cannot be resolved.")

    def _partition_count_of_inputs(self, partition_counts: dict[str, int], subtopology: Subtopology) -> int | None:
        """The largest known partition count among the subtopology's inputs, None if none is known yet."""
        candidates = [partition_counts.get(topic.name) for topic in subtopology.repartition_source_topics]
        candidates += [self._topic_partition_count_provider(topic) for topic in subtopology.source_topics]
        known = [count for count in candidates if count is not None]
        return max(known) if known else None
