"""RepartitionTopics: partition counts of repartition topics. Ported from Kafka's RepartitionTopicsTest (4.3)."""

from __future__ import annotations

import pytest

from franz.coordinator.group.streams.streams_topology import Subtopology, TopicInfo
from franz.coordinator.group.streams.topics.repartition_topics import RepartitionTopics
from franz.coordinator.group.streams.topics.streams_invalid_topology_exception import StreamsInvalidTopologyException

SOURCE_TOPIC_NAME1 = "source1"
SOURCE_TOPIC_NAME2 = "source2"
REPARTITION_TOPIC1 = TopicInfo("repartition1", partitions=4)
REPARTITION_TOPIC2 = TopicInfo("repartition2", partitions=2)
REPARTITION_TOPIC_WITHOUT_PARTITION_COUNT = TopicInfo("repartitionWithoutPartitionCount")


def source_topic_partition_counts(topic: str) -> int | None:
    return 3 if topic in (SOURCE_TOPIC_NAME1, SOURCE_TOPIC_NAME2) else None


def test_should_setup_repartition_topics():
    subtopology1 = Subtopology("subtopology1", source_topics=(SOURCE_TOPIC_NAME1, SOURCE_TOPIC_NAME2),
                               repartition_sink_topics=(REPARTITION_TOPIC1.name,))
    subtopology2 = Subtopology("subtopology2", repartition_source_topics=(REPARTITION_TOPIC1,))

    setup = RepartitionTopics([subtopology1, subtopology2], source_topic_partition_counts).setup()

    assert setup == {REPARTITION_TOPIC1.name: REPARTITION_TOPIC1.partitions}


def test_should_throw_illegal_state_exception_if_missing_source_topics():
    subtopology1 = Subtopology("subtopology1", source_topics=(SOURCE_TOPIC_NAME1, SOURCE_TOPIC_NAME2),
                               repartition_sink_topics=(REPARTITION_TOPIC1.name,))
    subtopology2 = Subtopology("subtopology2", repartition_source_topics=(REPARTITION_TOPIC1,))

    def provider(topic: str) -> int | None:
        return None if topic == SOURCE_TOPIC_NAME1 else source_topic_partition_counts(topic)

    with pytest.raises(RuntimeError, match="^Missing source topics: source1$"):
        RepartitionTopics([subtopology1, subtopology2], provider).setup()


def test_should_throw_streams_invalid_topology_exception_if_partition_count_cannot_be_computed_due_to_loops():
    subtopology1 = Subtopology("subtopology1", repartition_source_topics=(REPARTITION_TOPIC_WITHOUT_PARTITION_COUNT,),
                               repartition_sink_topics=(REPARTITION_TOPIC_WITHOUT_PARTITION_COUNT.name,))

    with pytest.raises(StreamsInvalidTopologyException) as raised:
        RepartitionTopics([subtopology1], source_topic_partition_counts).setup()
    assert raised.value.message == ("Failed to compute number of partitions for all repartition topics. "
                                    "There may be loops in the topology that cannot be resolved.")


def test_should_throw_streams_invalid_topology_exception_if_partition_count_cannot_be_computed_due_to_missing_sinks():
    subtopology1 = Subtopology("subtopology1", repartition_source_topics=(REPARTITION_TOPIC_WITHOUT_PARTITION_COUNT,))

    with pytest.raises(StreamsInvalidTopologyException) as raised:
        RepartitionTopics([subtopology1], source_topic_partition_counts).setup()
    assert raised.value.message == ("Failed to compute number of partitions for all repartition topics, because "
                                    "a repartition source topic is never used as a sink topic.")


def test_should_set_repartition_topic_partition_count_from_upstream_external_source_topic():
    subtopology = Subtopology(
        "subtopology0", source_topics=(SOURCE_TOPIC_NAME1,),
        repartition_sink_topics=(REPARTITION_TOPIC1.name, REPARTITION_TOPIC_WITHOUT_PARTITION_COUNT.name),
        repartition_source_topics=(REPARTITION_TOPIC2,))
    subtopology_without_partition_count = Subtopology(
        "subtopologyWithoutPartitionCount",
        repartition_source_topics=(REPARTITION_TOPIC1, REPARTITION_TOPIC_WITHOUT_PARTITION_COUNT))

    setup = RepartitionTopics([subtopology, subtopology_without_partition_count], source_topic_partition_counts).setup()

    # The largest input of the writing subtopology: source1 (3) over repartition2 (2).
    assert setup == {
        REPARTITION_TOPIC1.name: REPARTITION_TOPIC1.partitions,
        REPARTITION_TOPIC2.name: REPARTITION_TOPIC2.partitions,
        REPARTITION_TOPIC_WITHOUT_PARTITION_COUNT.name: 3,
    }


def test_should_set_repartition_topic_partition_count_from_upstream_internal_repartition_source_topic():
    subtopology = Subtopology("subtopology0", source_topics=(SOURCE_TOPIC_NAME1,),
                              repartition_source_topics=(REPARTITION_TOPIC1,),
                              repartition_sink_topics=(REPARTITION_TOPIC_WITHOUT_PARTITION_COUNT.name,))
    subtopology_without_partition_count = Subtopology(
        "subtopologyWithoutPartitionCount", repartition_source_topics=(REPARTITION_TOPIC_WITHOUT_PARTITION_COUNT,),
        repartition_sink_topics=(REPARTITION_TOPIC1.name,))

    setup = RepartitionTopics([subtopology, subtopology_without_partition_count], source_topic_partition_counts).setup()

    assert setup == {
        REPARTITION_TOPIC1.name: REPARTITION_TOPIC1.partitions,
        REPARTITION_TOPIC_WITHOUT_PARTITION_COUNT.name: REPARTITION_TOPIC1.partitions,
    }


def test_partition_counts_flow_down_a_chain_in_any_subtopology_order():
    """franz: a count found in one pass feeds a later pass, whichever order the subtopologies come in."""
    first = Subtopology("0", source_topics=(SOURCE_TOPIC_NAME1,), repartition_sink_topics=("a",))
    second = Subtopology("1", repartition_source_topics=(TopicInfo("a"),), repartition_sink_topics=("b",))
    third = Subtopology("2", repartition_source_topics=(TopicInfo("b"),))

    assert RepartitionTopics([third, second, first], source_topic_partition_counts).setup() == {"a": 3, "b": 3}


def test_should_not_setup_repartition_topics_when_topology_does_not_contain_any_repartition_topics():
    subtopology = Subtopology("subtopology0", source_topics=(SOURCE_TOPIC_NAME1,))

    assert RepartitionTopics([subtopology], source_topic_partition_counts).setup() == {}
