"""Kafka's InternalTopicManager: configures a streams group's topology against the topics the
broker has. It decides the partition count of every repartition and changelog topic, checks
copartitioning, computes each subtopology's task count, and lists the internal topics that are
still to be created."""

from __future__ import annotations

import logging
from collections.abc import Collection, Iterable, Sequence
from typing import Any, Final, TypeVar

from franz.common.utils import java_string_hash
from franz.coordinator.group.streams.streams_topology import StreamsTopology, Subtopology, TopicInfo
from franz.coordinator.group.streams.topics.changelog_topics import ChangelogTopics
from franz.coordinator.group.streams.topics.configured_internal_topic import ConfiguredInternalTopic
from franz.coordinator.group.streams.topics.configured_subtopology import ConfiguredSubtopology
from franz.coordinator.group.streams.topics.configured_topology import ConfiguredTopology
from franz.coordinator.group.streams.topics.copartitioned_topics_enforcer import CopartitionedTopicsEnforcer
from franz.coordinator.group.streams.topics.repartition_topics import RepartitionTopics
from franz.coordinator.group.streams.topics.topic_configuration_exception import TopicConfigurationException

log = logging.getLogger(__name__)

TopicsMetadata = dict[str, tuple[bytes, int]]  # topic name -> (topic id, number of partitions)

_TOPICS_SHOWN_MAX: Final = 3
T = TypeVar("T")


def configure_topics(metadata_hash: int, topology: StreamsTopology, topics: TopicsMetadata) -> ConfiguredTopology:
    """InternalTopicManager.configureTopics. A topology the topics do not fit yet gives a
    ConfiguredTopology carrying the TopicConfigurationException; one that is invalid whatever the
    topics raises StreamsInvalidTopologyException."""
    # Kafka walks the subtopologies in the order of its HashMap of them; where two subtopologies
    # write one repartition topic, the first whose inputs are known decides its count.
    subtopologies = [topology.subtopologies[subtopology_id] for subtopology_id in
                     _java_hash_map_order(topology.subtopologies, len(topology.subtopologies))]
    # Kafka resolves the copartition groups' topic indexes before anything else: an index out of
    # range fails the configuration (an IndexError, as Kafka's IndexOutOfBoundsException) whatever
    # the topics.
    copartition_groups = {subtopology.subtopology_id: _copartition_groups(subtopology)
                          for subtopology in subtopologies}
    try:
        _throw_on_missing_source_topics(topology, topics)
        decided = _decide_partition_counts(subtopologies, copartition_groups, topics)
        configured_subtopologies = {subtopology_id: _configured_subtopology(topology.subtopologies[subtopology_id],
                                                                            topics, decided)
                                    for subtopology_id in sorted(topology.subtopologies)}
        to_create = _missing_internal_topics(configured_subtopologies, topology, topics)
    except TopicConfigurationException as e:
        log.warning("Topic configuration failed for topology epoch %d: %s", topology.topology_epoch, e.message)
        return ConfiguredTopology(topology.topology_epoch, metadata_hash, None, {}, e)

    exception = None
    if to_create:
        internal_topics = {name for subtopology in configured_subtopologies.values()
                           for name in [*subtopology.repartition_source_topics, *subtopology.state_changelog_topics]}
        missing = summarize_topics(_java_hash_map_order(to_create, len(internal_topics)))
        exception = TopicConfigurationException.missing_internal_topics(f"Internal topics are missing: {missing}")
        log.info("Valid topic configuration found, but internal topics are missing for topology epoch %d: %s",
                 topology.topology_epoch, missing)
    else:
        log.info("Valid topic configuration found, topology epoch %d is now initialized.", topology.topology_epoch)
    return ConfiguredTopology(topology.topology_epoch, metadata_hash, configured_subtopologies, to_create, exception)


def summarize_topics(topics: Collection[str]) -> str:
    """Up to three topic names, then how many more there are, for log and exception messages."""
    if not topics:
        return "<none>"
    shown = ", ".join(list(topics)[:_TOPICS_SHOWN_MAX])
    if len(topics) > _TOPICS_SHOWN_MAX:
        return f"{shown} and {len(topics) - _TOPICS_SHOWN_MAX} additional topics"
    return shown


def _throw_on_missing_source_topics(topology: StreamsTopology, topics: TopicsMetadata) -> None:
    missing = sorted({topic for subtopology in topology.subtopologies.values()
                      for topic in subtopology.source_topics if topic not in topics})
    if missing:
        raise TopicConfigurationException.missing_source_topics(
            f"Source topics {summarize_topics(missing)} are missing.")


def _decide_partition_counts(subtopologies: list[Subtopology], copartition_groups: dict[str, list[set[str]]],
                             topics: TopicsMetadata) -> dict[str, int]:
    """The partition counts of the internal topics: repartition topics first, then adjusted to
    copartitioning, then the changelog topics, which depend on both."""
    decided: dict[str, int] = {}

    def partition_count(topic: str) -> int | None:
        return _partition_count(topics, topic, decided)

    decided.update(RepartitionTopics(subtopologies, partition_count).setup())
    _enforce_copartitioning(subtopologies, copartition_groups, decided, CopartitionedTopicsEnforcer(partition_count))
    decided.update(ChangelogTopics(subtopologies, partition_count).setup())
    return decided


def _enforce_copartitioning(subtopologies: list[Subtopology], copartition_groups: dict[str, list[set[str]]],
                            decided: dict[str, int], enforcer: CopartitionedTopicsEnforcer) -> None:
    repartition_source_topics = [topic for subtopology in subtopologies
                                 for topic in subtopology.repartition_source_topics]
    fixed = {topic.name for topic in repartition_source_topics if topic.partitions != 0}
    flexible = {topic.name for topic in repartition_source_topics if topic.partitions == 0}
    # Source topics are copartitioned too, so this runs even for a topology without repartition topics.
    for subtopology in subtopologies:
        for group in copartition_groups[subtopology.subtopology_id]:
            decided.update(enforcer.enforce(group, fixed, flexible))


def _missing_internal_topics(configured_subtopologies: dict[str, ConfiguredSubtopology], topology: StreamsTopology,
                             topics: TopicsMetadata) -> dict[str, dict[str, Any]]:
    """The internal topics the broker lacks, as CreateTopics request topics. An internal topic the
    broker has must have the decided partition count."""
    to_create: dict[str, dict[str, Any]] = {}
    for subtopology in configured_subtopologies.values():
        for internal_topic in [*subtopology.repartition_source_topics.values(),
                               *subtopology.state_changelog_topics.values()]:
            to_create[internal_topic.name] = _creatable_topic(internal_topic)
    for topic in topology.required_topics():
        if topic not in topics:
            continue
        expected = to_create.pop(topic, None)
        found = topics[topic][1]
        if expected is not None and expected["num_partitions"] != found:
            raise TopicConfigurationException.incorrectly_partitioned_topics(
                f"Existing topic {topic} has different number of partitions: "
                f"expected {expected['num_partitions']}, found {found}")
    return to_create


def _partition_count(topics: TopicsMetadata, topic: str, decided: dict[str, int]) -> int | None:
    """What the broker has wins over what was decided."""
    if topic in topics:
        return topics[topic][1]
    return decided.get(topic)


def _creatable_topic(internal_topic: ConfiguredInternalTopic) -> dict[str, Any]:
    """CreateTopicsRequest's CreatableTopic for an internal topic, as franz's codec shapes it. The
    configs are those the client sent (Kafka Streams puts cleanup.policy and the like there);
    replication factor -1 asks for the broker's default."""
    return {
        "name": internal_topic.name,
        "num_partitions": internal_topic.number_of_partitions,
        "replication_factor": internal_topic.replication_factor or -1,
        "assignments": [],
        "configs": [{"name": key, "value": value} for key, value in internal_topic.topic_configs.items()],
    }


def _configured_subtopology(subtopology: Subtopology, topics: TopicsMetadata,
                            decided: dict[str, int]) -> ConfiguredSubtopology:
    return ConfiguredSubtopology(
        number_of_tasks=_number_of_tasks(subtopology, topics, decided),
        source_topics=set(subtopology.source_topics),
        repartition_source_topics={topic.name: _configured_internal_topic(topic, decided)
                                   for topic in subtopology.repartition_source_topics},
        repartition_sink_topics=set(subtopology.repartition_sink_topics),
        state_changelog_topics={topic.name: _configured_internal_topic(topic, decided)
                                for topic in subtopology.state_changelog_topics},
    )


def _number_of_tasks(subtopology: Subtopology, topics: TopicsMetadata, decided: dict[str, int]) -> int:
    inputs = [*subtopology.source_topics, *(topic.name for topic in subtopology.repartition_source_topics)]
    if not inputs:
        raise RuntimeError("Subtopology does not contain any source topics")
    counts = []
    for topic in inputs:
        partitions = _partition_count(topics, topic, decided)
        if partitions is None:
            raise RuntimeError(f"Number of partitions must be set for topic {topic}")
        counts.append(partitions)
    return max(counts)


def _configured_internal_topic(topic: TopicInfo, decided: dict[str, int]) -> ConfiguredInternalTopic:
    if topic.partitions == 0 and topic.name not in decided:
        raise RuntimeError(f"Number of partitions must be set for topic {topic.name}")
    return ConfiguredInternalTopic(
        name=topic.name,
        number_of_partitions=topic.partitions if topic.partitions != 0 else decided[topic.name],
        replication_factor=topic.replication_factor if topic.replication_factor != 0 else None,
        topic_configs=_config_map(topic.topic_configs),
    )


def _config_map(pairs: tuple[tuple[str, str], ...]) -> dict[str, str]:
    """Collectors.toMap of the persisted list: a key listed twice is an IllegalStateException,
    which no caller catches (the heartbeat fails as on any unexpected error)."""
    configs: dict[str, str] = {}
    for key, value in pairs:
        if key in configs:
            raise RuntimeError(f"Duplicate key {key} (attempted merging values {configs[key]} and {value})")
        configs[key] = value
    return configs


def _copartition_groups(subtopology: Subtopology) -> list[set[str]]:
    """The copartition groups of a subtopology as topic names (regex indexes are never set in 4.3)."""
    return [{*(_at(subtopology.source_topics, i) for i in group.source_topics),
             *(_at(subtopology.repartition_source_topics, i).name for i in group.repartition_source_topics)}
            for group in subtopology.copartition_groups]


def _at(items: Sequence[T], index: int) -> T:
    """items[index] as Java's List.get takes it: a negative index is out of range too."""
    if not 0 <= index < len(items):
        raise IndexError(f"Index {index} out of bounds for length {len(items)}")
    return items[index]


def _java_hash_map_order(keys: Iterable[str], most_entries: int) -> list[str]:
    """The order a java.util.HashMap gives back these keys, put one at a time and once holding
    most_entries: by bucket of the table it grew to (16, doubled whenever more than three quarters
    full, never shrunk by removals), a bucket's keys in insertion order. Kafka names missing
    internal topics in this order."""
    buckets = 16
    while most_entries > buckets * 3 // 4:
        buckets *= 2

    def bucket(key: str) -> int:
        hash_code = java_string_hash(key) & 0xFFFFFFFF
        return (hash_code ^ (hash_code >> 16)) & (buckets - 1)
    return sorted(keys, key=bucket)
