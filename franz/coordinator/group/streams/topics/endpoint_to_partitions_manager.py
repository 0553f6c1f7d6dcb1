"""Kafka's EndpointToPartitionsManager: which partitions a member's user endpoint (its Interactive
Queries host and port) serves, for the heartbeat response's PartitionsByUserEndpoint.

A task of a subtopology serves the same-numbered partition of every topic the subtopology reads;
for a topic with fewer partitions than the member has tasks, the lowest task numbers are kept.
"""

from __future__ import annotations

from collections.abc import Mapping, Set
from typing import Any

from franz.coordinator.group.streams.topics.configured_subtopology import ConfiguredSubtopology
from franz.coordinator.group.streams.topics.configured_topology import ConfiguredTopology

TopicsMetadata = dict[str, tuple[bytes, int]]  # topic name -> (topic id, number of partitions)
Tasks = Mapping[str, Set[int]]  # subtopology id -> partition ids


def maybe_endpoint_to_partitions(user_endpoint: Mapping[str, Any] | None, active_tasks: Tasks, standby_tasks: Tasks,
                                 configured_topology: ConfiguredTopology | None,
                                 topics: TopicsMetadata) -> dict[str, Any] | None:
    """endpoint_to_partitions for a member with a user endpoint ({host, port}); None for one without."""
    if user_endpoint is None:
        return None
    endpoint = {"host": user_endpoint["host"], "port": user_endpoint["port"]}
    return endpoint_to_partitions(endpoint, active_tasks, standby_tasks, configured_topology, topics)


def endpoint_to_partitions(endpoint: dict[str, Any], active_tasks: Tasks, standby_tasks: Tasks,
                           configured_topology: ConfiguredTopology | None,
                           topics: TopicsMetadata) -> dict[str, Any]:
    """StreamsGroupHeartbeatResponse's EndpointToPartitions, as franz's codec shapes it, for a member
    owning these tasks. The group's topology must be configured."""
    if configured_topology is None or configured_topology.subtopologies is None:
        raise RuntimeError("No value present")
    subtopologies = configured_topology.subtopologies
    return {
        "user_endpoint": endpoint,
        "active_partitions": _topic_partitions(active_tasks, subtopologies, topics),
        "standby_partitions": _topic_partitions(standby_tasks, subtopologies, topics),
    }


def _topic_partitions(tasks: Tasks, subtopologies: Mapping[str, ConfiguredSubtopology],
                      topics: TopicsMetadata) -> list[dict[str, Any]]:
    topic_partitions = []
    for subtopology_id, partitions in tasks.items():
        subtopology = subtopologies[subtopology_id]
        source_topics = subtopology.source_topics | subtopology.repartition_source_topics.keys()
        for topic in sorted(source_topics):
            if topic not in topics:
                raise RuntimeError(f"Topic {topic} not found in metadata image")
            topic_partitions.append({"topic": topic, "partitions": _served(sorted(partitions), topics[topic][1])})
    return topic_partitions


def _served(partitions: list[int], topic_partitions: int) -> list[int]:
    # Kafka keeps the whole task list unless the topic has fewer partitions than there are tasks.
    return partitions[:topic_partitions] if topic_partitions < len(partitions) else partitions
