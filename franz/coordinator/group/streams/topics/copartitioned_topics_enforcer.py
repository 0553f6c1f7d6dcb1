"""Kafka's CopartitionedTopicsEnforcer: the topics of a copartition group must have one partition
count. Repartition topics whose count the topology leaves open (flexible) are given it; those
whose count it fixes, and external source topics, must already agree."""

from __future__ import annotations

from collections.abc import Set

from franz.coordinator.group.streams.topics.repartition_topics import TopicPartitionCountProvider
from franz.coordinator.group.streams.topics.streams_invalid_topology_exception import StreamsInvalidTopologyException
from franz.coordinator.group.streams.topics.topic_configuration_exception import TopicConfigurationException


def java_map_string(counts: dict[str, int]) -> str:
    """How a java.util.TreeMap of topic counts prints: {a=1, b=2}."""
    return "{" + ", ".join(f"{topic}={count}" for topic, count in sorted(counts.items())) + "}"


class CopartitionedTopicsEnforcer:
    def __init__(self, topic_partition_count_provider: TopicPartitionCountProvider):
        # Must know the count of every topic of every copartition group, including the repartition
        # topics decided so far.
        self._topic_partition_count_provider = topic_partition_count_provider

    def enforce(self, copartitioned_topics: Set[str], fixed_repartition_topics: Set[str],
                flexible_repartition_topics: Set[str]) -> dict[str, int]:
        """The partition count every repartition topic of the group must have.

        fixed_repartition_topics and flexible_repartition_topics are those of the whole topology.
        Raises TopicConfigurationException (INCORRECTLY_PARTITIONED_TOPICS) when counts disagree,
        RuntimeError when a topic's count is unknown.
        """
        if not copartitioned_topics:
            return {}
        repartition_counts = {topic: self._partition_count(topic) for topic in copartitioned_topics
                              if topic in fixed_repartition_topics or topic in flexible_repartition_topics}
        external_counts = {topic: self._partition_count(topic) for topic in copartitioned_topics
                           if topic not in repartition_counts}

        if set(copartitioned_topics) == set(repartition_counts):
            if fixed_repartition_topics:
                partitions = self._same_partitions_of_fixed_topics(repartition_counts, fixed_repartition_topics)
            else:
                partitions = self._max_partitions(repartition_counts)
        else:
            partitions = self._same_partitions(external_counts)

        for topic, count in repartition_counts.items():
            if topic in fixed_repartition_topics and count != partitions:
                raise TopicConfigurationException.incorrectly_partitioned_topics(
                    f"Number of partitions [{count}] of repartition topic [{topic}] "
                    f"doesn't match number of partitions [{partitions}] of the source topic.")
        return {topic: partitions for topic in repartition_counts}

    def _partition_count(self, topic: str) -> int:
        partitions = self._topic_partition_count_provider(topic)
        if partitions is None:
            raise RuntimeError(f"Number of partitions is not set for topic: {topic}")
        return partitions

    def _same_partitions_of_fixed_topics(self, repartition_counts: dict[str, int],
                                         fixed_repartition_topics: Set[str]) -> int:
        counts = {self._partition_count(topic) for topic in fixed_repartition_topics}
        if len(counts) > 1:
            raise TopicConfigurationException.incorrectly_partitioned_topics(
                f"Following topics do not have the same number of partitions: [{java_map_string(repartition_counts)}]")
        return counts.pop()

    @staticmethod
    def _same_partitions(external_counts: dict[str, int]) -> int:
        if len(set(external_counts.values())) > 1:
            raise TopicConfigurationException.incorrectly_partitioned_topics(
                f"Following topics do not have the same number of partitions: [{java_map_string(external_counts)}]")
        return next(iter(external_counts.values()))

    @staticmethod
    def _max_partitions(repartition_counts: dict[str, int]) -> int:
        max_partitions = max(repartition_counts.values(), default=0)
        if max_partitions == 0:
            raise StreamsInvalidTopologyException(
                "All topics in the copartition group had undefined partition number: "
                f"[{', '.join(repartition_counts)}]")
        return max_partitions
