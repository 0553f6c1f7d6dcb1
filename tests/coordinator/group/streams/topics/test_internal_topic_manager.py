"""configure_topics: a streams topology configured against the broker's topics. Ported from Kafka's
InternalTopicManagerTest (4.3, the ConfiguredTopology version) unless noted."""

from __future__ import annotations

import pytest

from franz.coordinator.group.streams.streams_topology import CopartitionGroup, StreamsTopology, Subtopology, TopicInfo
from franz.coordinator.group.streams.topics.configured_internal_topic import ConfiguredInternalTopic
from franz.coordinator.group.streams.topics.configured_subtopology import ConfiguredSubtopology
from franz.coordinator.group.streams.topics.internal_topic_manager import configure_topics, summarize_topics
from franz.coordinator.group.streams.topics.streams_invalid_topology_exception import StreamsInvalidTopologyException
from franz.coordinator.group.streams.topics.topic_configuration_exception import Status

SOURCE_TOPIC_1 = "source_topic1"
SOURCE_TOPIC_2 = "source_topic2"
REPARTITION_TOPIC = "repartition_topic"
STATE_CHANGELOG_TOPIC_1 = "state_changelog_topic1"
STATE_CHANGELOG_TOPIC_2 = "state_changelog_topic2"
SUBTOPOLOGY_1 = "subtopology1"
SUBTOPOLOGY_2 = "subtopology2"
CONFIG_KEY = "cleanup.policy"
CONFIG_VALUE = "compact"
METADATA_HASH = 42


def _topics(**counts: int) -> dict[str, tuple[bytes, int]]:
    return {name: (bytes([index + 1]) * 16, partitions) for index, (name, partitions) in enumerate(counts.items())}


def _test_topology() -> StreamsTopology:
    # source_topic1 -> repartition_topic; repartition_topic and source_topic2 copartitioned.
    subtopology1 = Subtopology(
        SUBTOPOLOGY_1, source_topics=(SOURCE_TOPIC_1,), repartition_sink_topics=(REPARTITION_TOPIC,),
        state_changelog_topics=(TopicInfo(STATE_CHANGELOG_TOPIC_1, topic_configs={CONFIG_KEY: CONFIG_VALUE}),))
    subtopology2 = Subtopology(
        SUBTOPOLOGY_2, source_topics=(SOURCE_TOPIC_2,),
        repartition_source_topics=(TopicInfo(REPARTITION_TOPIC, replication_factor=3),),
        state_changelog_topics=(TopicInfo(STATE_CHANGELOG_TOPIC_2),),
        copartition_groups=(CopartitionGroup(source_topics=(0,), repartition_source_topics=(0,)),))
    return StreamsTopology(3, {SUBTOPOLOGY_1: subtopology1, SUBTOPOLOGY_2: subtopology2})


def _expected_configured_subtopologies() -> dict[str, ConfiguredSubtopology]:
    return {
        SUBTOPOLOGY_1: ConfiguredSubtopology(
            2, {SOURCE_TOPIC_1}, {}, {REPARTITION_TOPIC},
            {STATE_CHANGELOG_TOPIC_1: ConfiguredInternalTopic(STATE_CHANGELOG_TOPIC_1, 2, None,
                                                              {CONFIG_KEY: CONFIG_VALUE})}),
        SUBTOPOLOGY_2: ConfiguredSubtopology(
            2, {SOURCE_TOPIC_2}, {REPARTITION_TOPIC: ConfiguredInternalTopic(REPARTITION_TOPIC, 2, 3, {})}, set(),
            {STATE_CHANGELOG_TOPIC_2: ConfiguredInternalTopic(STATE_CHANGELOG_TOPIC_2, 2, None, {})}),
    }


def test_configure_topics_sets_configuration_exception_when_source_topic_is_missing():
    configured = configure_topics(METADATA_HASH, _test_topology(), _topics(**{SOURCE_TOPIC_1: 2}))

    assert not configured.is_ready()
    assert configured.subtopologies is None
    assert configured.internal_topics_to_be_created == {}
    assert configured.topic_configuration_exception.status == Status.MISSING_SOURCE_TOPICS
    assert configured.topic_configuration_exception.message == f"Source topics {SOURCE_TOPIC_2} are missing."
    assert (configured.topology_epoch, configured.metadata_hash) == (3, METADATA_HASH)


def test_configure_topics_with_missing_internal_topics():
    topics = _topics(**{SOURCE_TOPIC_1: 2, SOURCE_TOPIC_2: 2, STATE_CHANGELOG_TOPIC_2: 2})

    configured = configure_topics(METADATA_HASH, _test_topology(), topics)

    assert not configured.is_ready()
    assert configured.topic_configuration_exception.status == Status.MISSING_INTERNAL_TOPICS
    assert configured.internal_topics_to_be_created == {
        REPARTITION_TOPIC: {"name": REPARTITION_TOPIC, "num_partitions": 2, "replication_factor": 3,
                            "assignments": [], "configs": []},
        STATE_CHANGELOG_TOPIC_1: {"name": STATE_CHANGELOG_TOPIC_1, "num_partitions": 2, "replication_factor": -1,
                                  "assignments": [], "configs": [{"name": CONFIG_KEY, "value": CONFIG_VALUE}]},
    }
    # Kafka names them in java.util.HashMap order.
    assert configured.topic_configuration_exception.message == (
        f"Internal topics are missing: {STATE_CHANGELOG_TOPIC_1}, {REPARTITION_TOPIC}")
    # Kafka's testConfigureTopics: the subtopologies are configured all the same.
    assert configured.subtopologies == _expected_configured_subtopologies()
    assert list(configured.subtopologies) == [SUBTOPOLOGY_1, SUBTOPOLOGY_2]


def test_configure_topics_all_topics_exist():
    topics = _topics(**{SOURCE_TOPIC_1: 2, SOURCE_TOPIC_2: 2, STATE_CHANGELOG_TOPIC_1: 2,
                        STATE_CHANGELOG_TOPIC_2: 2, REPARTITION_TOPIC: 2})

    configured = configure_topics(METADATA_HASH, _test_topology(), topics)

    assert configured.is_ready()
    assert configured.topic_configuration_exception is None
    assert configured.internal_topics_to_be_created == {}
    assert configured.subtopologies == _expected_configured_subtopologies()
    assert {subtopology_id: subtopology.number_of_tasks
            for subtopology_id, subtopology in configured.subtopologies.items()} == {SUBTOPOLOGY_1: 2, SUBTOPOLOGY_2: 2}


def test_existing_internal_topic_with_other_partition_count_is_incorrectly_partitioned():
    """franz: missingInternalTopics' check of internal topics the broker already has."""
    topics = _topics(**{SOURCE_TOPIC_1: 2, SOURCE_TOPIC_2: 2, REPARTITION_TOPIC: 2, STATE_CHANGELOG_TOPIC_2: 5})

    configured = configure_topics(METADATA_HASH, _test_topology(), topics)

    assert configured.subtopologies is None
    assert configured.topic_configuration_exception.status == Status.INCORRECTLY_PARTITIONED_TOPICS
    assert configured.topic_configuration_exception.message == (
        f"Existing topic {STATE_CHANGELOG_TOPIC_2} has different number of partitions: expected 2, found 5")


def test_copartitioned_source_topics_with_different_counts_are_incorrectly_partitioned():
    """franz: copartitioning is enforced on source topics even without repartition topics (KAFKA-18613)."""
    subtopology = Subtopology("0", source_topics=("left", "right"),
                              copartition_groups=(CopartitionGroup(source_topics=(0, 1)),))

    configured = configure_topics(0, StreamsTopology(0, {"0": subtopology}), _topics(left=2, right=3))

    assert configured.topic_configuration_exception.status == Status.INCORRECTLY_PARTITIONED_TOPICS
    assert configured.topic_configuration_exception.message == (
        "Following topics do not have the same number of partitions: [{left=2, right=3}]")


def test_flexible_repartition_topic_takes_the_count_of_its_copartitioned_source_topic():
    """franz: a repartition topic fed by a 6-partition topic, joined with a 4-partition one, gets 4."""
    writer = Subtopology("0", source_topics=("wide",), repartition_sink_topics=("rep",))
    joiner = Subtopology("1", source_topics=("narrow",), repartition_source_topics=(TopicInfo("rep"),),
                         state_changelog_topics=(TopicInfo("store-changelog"),),
                         copartition_groups=(CopartitionGroup(source_topics=(0,), repartition_source_topics=(0,)),))

    configured = configure_topics(0, StreamsTopology(1, {"1": joiner, "0": writer}), _topics(wide=6, narrow=4))

    assert {name: topic["num_partitions"] for name, topic in configured.internal_topics_to_be_created.items()} == {
        "rep": 4, "store-changelog": 4}
    assert configured.subtopologies["0"].number_of_tasks == 6
    assert configured.subtopologies["1"].number_of_tasks == 4


def test_invalid_topology_raises():
    """franz: a repartition topic nothing writes to cannot be configured whatever the topics."""
    subtopology = Subtopology("0", source_topics=("in",), repartition_source_topics=(TopicInfo("orphan"),))

    with pytest.raises(StreamsInvalidTopologyException, match="never used as a sink topic"):
        configure_topics(0, StreamsTopology(0, {"0": subtopology}), _topics(**{"in": 1}))


@pytest.mark.parametrize("source_index, repartition_index", [(1, 0), (-1, 0), (0, 1), (0, -1)])
def test_a_copartition_index_out_of_range_fails_whatever_the_topics(source_index, repartition_index):
    """franz: Kafka's copartitionGroupsFromPersistedSubtopology looks the indexes up with List.get
    before it checks the source topics, so an index past the end or below 0 fails the configuration
    (the heartbeat is answered UNKNOWN_SERVER_ERROR) even while a source topic is missing; a
    Python index of -1 would have taken the last topic."""
    subtopology = Subtopology(
        "0", source_topics=("in",), repartition_source_topics=(TopicInfo("rep"),),
        copartition_groups=(CopartitionGroup(source_topics=(source_index,),
                                             repartition_source_topics=(repartition_index,)),))
    writer = Subtopology("1", source_topics=("other",), repartition_sink_topics=("rep",))

    with pytest.raises(IndexError, match="out of bounds for length 1"):
        configure_topics(0, StreamsTopology(0, {"0": subtopology, "1": writer}), _topics(other=1))


def test_summarize_topics():
    """franz: Kafka's summarizeTopics shows three names, then how many more."""
    assert summarize_topics([]) == "<none>"
    assert summarize_topics(["a", "b", "c"]) == "a, b, c"
    assert summarize_topics(["a", "b", "c", "d", "e"]) == "a, b, c and 2 additional topics"


def test_many_missing_source_topics_are_summarized_in_sorted_order():
    """franz: missing source topics come from a TreeSet, so sorted."""
    subtopology = Subtopology("0", source_topics=("e", "d", "c", "b", "a"))

    configured = configure_topics(0, StreamsTopology(0, {"0": subtopology}), {})

    assert configured.topic_configuration_exception.message == (
        "Source topics a, b, c and 2 additional topics are missing.")


def test_missing_internal_topics_are_named_in_java_hash_map_order():
    """franz: 20 changelog topics (the table grew to 32 buckets), a third of them existing; the order
    of the rest was taken from a java.util.HashMap filled and emptied the same way."""
    names = [f"topic-{i}-changelog" for i in range(20)]
    subtopology = Subtopology("0", source_topics=("in",), state_changelog_topics=tuple(TopicInfo(n) for n in names))
    existing = {name: 1 for index, name in enumerate(names) if index % 3 == 0}

    configured = configure_topics(0, StreamsTopology(0, {"0": subtopology}), _topics(**{"in": 1}, **existing))

    assert configured.topic_configuration_exception.message == (
        "Internal topics are missing: topic-8-changelog, topic-10-changelog, topic-17-changelog "
        "and 10 additional topics")


def test_repartition_topic_written_by_two_subtopologies_takes_the_first_in_java_hash_map_order():
    """franz: Kafka's HashMap holds subtopologies "0", "9", "10" in that order (checked on a JVM), so
    "9" (reading 2 partitions) decides the count before "10" (reading 6) would."""
    reader = Subtopology("0", repartition_source_topics=(TopicInfo("rep"),))
    narrow_writer = Subtopology("9", source_topics=("narrow",), repartition_sink_topics=("rep",))
    wide_writer = Subtopology("10", source_topics=("wide",), repartition_sink_topics=("rep",))
    topology = StreamsTopology(0, {"10": wide_writer, "9": narrow_writer, "0": reader})

    configured = configure_topics(0, topology, _topics(narrow=2, wide=6))

    assert configured.internal_topics_to_be_created["rep"]["num_partitions"] == 2
    assert list(configured.subtopologies) == ["0", "10", "9"]  # Kafka's TreeMap
