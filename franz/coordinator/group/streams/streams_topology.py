"""The topology a streams group was initialized with (Kafka's StreamsTopology and the
StreamsGroupTopologyValue record's Subtopology, TopicInfo and CopartitionGroup it is made of).

A streams client sends its topology in the first heartbeat of a member (StreamsGroupHeartbeat's
Topology field); the coordinator keeps it as this record and derives a ConfiguredTopology from it
and the topics the broker has.

Source topics named by a regular expression (source_topic_regex) are carried but not resolved:
Kafka 4.3 refuses a heartbeat whose topology has any, so they never reach the topic configuration
and required_topics() leaves them out, as Kafka's requiredTopics does.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Iterable, Mapping
from typing import Any


@dataclasses.dataclass(frozen=True)
class TopicInfo:
    """An internal topic of a subtopology (StreamsGroupTopologyValue.TopicInfo).

    partitions 0 leaves the count to the coordinator (always so for changelog topics);
    replication_factor 0 leaves it to the broker's default. topic_configs are the (key, value)
    pairs in the order the client listed them, as Kafka keeps its list (a mapping is taken as its
    items): a key listed twice is kept twice, and fails the topic's configuration
    (ConfiguredInternalTopic's map).
    """

    name: str
    partitions: int = 0
    replication_factor: int = 0
    topic_configs: tuple[tuple[str, str], ...] = ()

    def __post_init__(self) -> None:
        configs = self.topic_configs
        pairs = configs.items() if isinstance(configs, Mapping) else configs
        object.__setattr__(self, "topic_configs", tuple((key, value) for key, value in pairs))


@dataclasses.dataclass(frozen=True)
class CopartitionGroup:
    """Topics of one subtopology that must have equal partition counts, as indexes into the
    subtopology's source_topics, source_topic_regex and repartition_source_topics."""

    source_topics: tuple[int, ...] = ()
    source_topic_regex: tuple[int, ...] = ()
    repartition_source_topics: tuple[int, ...] = ()


@dataclasses.dataclass(frozen=True)
class Subtopology:
    """StreamsGroupTopologyValue.Subtopology. source_topics excludes the repartition topics the
    subtopology reads (the client sends those as repartition_source_topics)."""

    subtopology_id: str
    source_topics: tuple[str, ...] = ()
    source_topic_regex: tuple[str, ...] = ()
    state_changelog_topics: tuple[TopicInfo, ...] = ()
    repartition_sink_topics: tuple[str, ...] = ()
    repartition_source_topics: tuple[TopicInfo, ...] = ()
    copartition_groups: tuple[CopartitionGroup, ...] = ()


@dataclasses.dataclass(frozen=True)
class StreamsTopology:
    """Kafka's StreamsTopology: the topology epoch and the subtopologies by id.

    The subtopologies map is the topology's own copy; callers must not mutate it.
    """

    topology_epoch: int
    subtopologies: dict[str, Subtopology]
    # Which subtopology reads each source or repartition source topic (Kafka's sourceTopicMap).
    source_topic_map: dict[str, Subtopology] = dataclasses.field(init=False, repr=False, compare=False)

    def __post_init__(self) -> None:
        if self.topology_epoch < 0:
            raise ValueError("Topology epoch must be non-negative.")
        if self.subtopologies is None:
            raise TypeError("Subtopologies cannot be null.")
        object.__setattr__(self, "subtopologies", dict(self.subtopologies))
        source_topic_map: dict[str, Subtopology] = {}
        for subtopology in self.subtopologies.values():
            for topic in subtopology.source_topics:
                source_topic_map[topic] = subtopology
            for topic_info in subtopology.repartition_source_topics:
                source_topic_map[topic_info.name] = subtopology
        object.__setattr__(self, "source_topic_map", source_topic_map)

    def required_topics(self) -> set[str]:
        """Every topic whose metadata configuring the topology needs: source topics, repartition
        source topics and state changelog topics."""
        required: set[str] = set()
        for subtopology in self.subtopologies.values():
            required.update(subtopology.source_topics)
            required.update(topic.name for topic in subtopology.repartition_source_topics)
            required.update(topic.name for topic in subtopology.state_changelog_topics)
        return required

    def as_streams_group_describe_topology(self) -> dict[str, Any]:
        """StreamsGroupDescribeResponse's Topology as franz's codec shapes it, for a topology not
        configured against the topics: subtopologies by id, topics by name, partition counts as sent."""
        return {
            "epoch": self.topology_epoch,
            "subtopologies": [_described_subtopology(subtopology_id, self.subtopologies[subtopology_id])
                              for subtopology_id in sorted(self.subtopologies)],
        }

    @classmethod
    def from_heartbeat_request(cls, topology: Mapping[str, Any]) -> StreamsTopology:
        """The topology of a StreamsGroupHeartbeat request as franz's codec decodes it (Kafka's
        fromHeartbeatRequest, by way of convertToStreamsGroupTopologyRecord)."""
        subtopologies = [_subtopology_from_request(subtopology) for subtopology in topology["subtopologies"]]
        by_id = {subtopology.subtopology_id: subtopology for subtopology in subtopologies}
        if len(by_id) < len(subtopologies):
            # Kafka collects them with Collectors.toMap, which refuses a key seen twice
            duplicate = next(s.subtopology_id for i, s in enumerate(subtopologies)
                             if any(s.subtopology_id == t.subtopology_id for t in subtopologies[:i]))
            raise ValueError(f"Duplicate key {duplicate}")
        return cls(topology["epoch"], by_id)


def _subtopology_from_request(subtopology: Mapping[str, Any]) -> Subtopology:
    return Subtopology(
        subtopology_id=subtopology["subtopology_id"],
        source_topics=tuple(subtopology["source_topics"]),
        source_topic_regex=tuple(subtopology["source_topic_regex"]),
        state_changelog_topics=_topic_infos(subtopology["state_changelog_topics"]),
        repartition_sink_topics=tuple(subtopology["repartition_sink_topics"]),
        repartition_source_topics=_topic_infos(subtopology["repartition_source_topics"]),
        copartition_groups=tuple(
            CopartitionGroup(
                source_topics=tuple(group["source_topics"]),
                source_topic_regex=tuple(group["source_topic_regex"]),
                repartition_source_topics=tuple(group["repartition_source_topics"]),
            )
            for group in subtopology["copartition_groups"]
        ),
    )


def _topic_infos(topics: Iterable[Mapping[str, Any]]) -> tuple[TopicInfo, ...]:
    return tuple(
        TopicInfo(
            name=topic["name"],
            partitions=topic["partitions"],
            replication_factor=topic["replication_factor"],
            topic_configs=tuple((config["key"], config["value"]) for config in topic["topic_configs"] or ()),
        )
        for topic in topics
    )


def _described_subtopology(subtopology_id: str, subtopology: Subtopology) -> dict[str, Any]:
    return {
        "subtopology_id": subtopology_id,
        "source_topics": sorted(subtopology.source_topics),
        "repartition_sink_topics": sorted(subtopology.repartition_sink_topics),
        "repartition_source_topics": _described_topic_infos(subtopology.repartition_source_topics),
        "state_changelog_topics": _described_topic_infos(subtopology.state_changelog_topics),
    }


def _described_topic_infos(topics: Iterable[TopicInfo]) -> list[dict[str, Any]]:
    return [{"name": topic.name, "partitions": topic.partitions, "replication_factor": topic.replication_factor,
             "topic_configs": [{"key": key, "value": value} for key, value in topic.topic_configs]}
            for topic in sorted(topics, key=lambda topic: topic.name)]
