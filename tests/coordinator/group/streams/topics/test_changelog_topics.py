"""ChangelogTopics: partition counts of changelog topics. Ported from Kafka's ChangelogTopicsTest (the
version that counts repartition source topics as inputs and keeps source-topic changelogs)."""

from __future__ import annotations

import pytest

from franz.coordinator.group.streams.streams_topology import Subtopology, TopicInfo
from franz.coordinator.group.streams.topics.changelog_topics import ChangelogTopics
from franz.coordinator.group.streams.topics.streams_invalid_topology_exception import StreamsInvalidTopologyException

SOURCE_TOPIC_NAME = "source"
SINK_TOPIC_NAME = "sink"
REPARTITION_TOPIC_NAME = "repartition"
CHANGELOG_TOPIC_NAME1 = "changelog1"
TOPIC_CONFIG = {"config1": "val1"}
REPARTITION_TOPIC_INFO = TopicInfo(REPARTITION_TOPIC_NAME, topic_configs=TOPIC_CONFIG)
SOURCE_CHANGELOG_TOPIC_CONFIG = TopicInfo(SOURCE_TOPIC_NAME, topic_configs=TOPIC_CONFIG)
CHANGELOG_TOPIC_CONFIG = TopicInfo(CHANGELOG_TOPIC_NAME1, topic_configs=TOPIC_CONFIG)

SUBTOPOLOGY_NO_SOURCE = Subtopology("SUBTOPOLOGY_NO_SOURCE", repartition_sink_topics=(SINK_TOPIC_NAME,),
                                    repartition_source_topics=(REPARTITION_TOPIC_INFO,))
SUBTOPOLOGY_NO_REPARTITION_SOURCE = Subtopology("SUBTOPOLOGY_NO_SOURCE", source_topics=(SOURCE_TOPIC_NAME,),
                                                repartition_sink_topics=(SINK_TOPIC_NAME,))
SUBTOPOLOGY_NO_SOURCE_NO_REPARTITION_SOURCE = Subtopology("SUBTOPOLOGY_NO_SOURCE",
                                                          repartition_sink_topics=(SINK_TOPIC_NAME,))
SUBTOPOLOGY_STATELESS = Subtopology("SUBTOPOLOGY_STATELESS", source_topics=(SOURCE_TOPIC_NAME,),
                                    repartition_sink_topics=(SINK_TOPIC_NAME,),
                                    repartition_source_topics=(REPARTITION_TOPIC_INFO,))
SUBTOPOLOGY_SOURCE_CHANGELOG = Subtopology("SUBTOPOLOGY_SOURCE_CHANGELOG", source_topics=(SOURCE_TOPIC_NAME,),
                                           repartition_sink_topics=(SINK_TOPIC_NAME,),
                                           repartition_source_topics=(REPARTITION_TOPIC_INFO,),
                                           state_changelog_topics=(SOURCE_CHANGELOG_TOPIC_CONFIG,))
SUBTOPOLOGY_STATEFUL = Subtopology("SUBTOPOLOGY_STATEFUL", source_topics=(SOURCE_TOPIC_NAME,),
                                   repartition_sink_topics=(SINK_TOPIC_NAME,),
                                   repartition_source_topics=(REPARTITION_TOPIC_INFO,),
                                   state_changelog_topics=(CHANGELOG_TOPIC_CONFIG,))
SUBTOPOLOGY_BOTH = Subtopology("SUBTOPOLOGY_BOTH", source_topics=(SOURCE_TOPIC_NAME,),
                               repartition_sink_topics=(SINK_TOPIC_NAME,),
                               repartition_source_topics=(REPARTITION_TOPIC_INFO,),
                               state_changelog_topics=(SOURCE_CHANGELOG_TOPIC_CONFIG, CHANGELOG_TOPIC_CONFIG))


def three_partitions(topic: str) -> int:
    return 3


def test_should_fail_if_no_source_topics_and_no_repartition_source_topics():
    with pytest.raises(StreamsInvalidTopologyException, match="No source topics found for subtopology"):
        ChangelogTopics([SUBTOPOLOGY_NO_SOURCE_NO_REPARTITION_SOURCE], three_partitions).setup()


def test_should_not_fail_if_only_source_topics_empty():
    assert ChangelogTopics([SUBTOPOLOGY_NO_SOURCE], three_partitions).setup() == {}


def test_should_not_fail_if_only_repartition_source_topics_empty():
    assert ChangelogTopics([SUBTOPOLOGY_NO_REPARTITION_SOURCE], three_partitions).setup() == {}


def test_should_not_contain_changelogs_for_stateless_tasks():
    assert ChangelogTopics([SUBTOPOLOGY_STATELESS], three_partitions).setup() == {}


def test_should_contain_non_source_based_changelogs():
    assert ChangelogTopics([SUBTOPOLOGY_STATEFUL], three_partitions).setup() == {CHANGELOG_TOPIC_NAME1: 3}


def test_should_contain_source_based_changelogs():
    assert ChangelogTopics([SUBTOPOLOGY_SOURCE_CHANGELOG], three_partitions).setup() == {SOURCE_TOPIC_NAME: 3}


def test_should_contain_both_types_of_pre_existing_changelogs():
    assert ChangelogTopics([SUBTOPOLOGY_BOTH], three_partitions).setup() == {
        CHANGELOG_TOPIC_NAME1: 3, SOURCE_TOPIC_NAME: 3}


def test_changelog_takes_the_largest_input_including_repartition_source_topics():
    """franz: one partition per task, and the repartition topic is the widest input here."""
    counts = {SOURCE_TOPIC_NAME: 2, REPARTITION_TOPIC_NAME: 5}
    assert ChangelogTopics([SUBTOPOLOGY_STATEFUL], counts.get).setup() == {CHANGELOG_TOPIC_NAME1: 5}


def test_unknown_input_count_fails():
    """franz: Kafka's getPartitionCountOrFail."""
    with pytest.raises(RuntimeError, match=f"^No partition count for source topic {REPARTITION_TOPIC_NAME}$"):
        ChangelogTopics([SUBTOPOLOGY_STATEFUL], {SOURCE_TOPIC_NAME: 2}.get).setup()
