"""ConfiguredTopology, ConfiguredSubtopology, ConfiguredInternalTopic and TopicConfigurationException.
Ported from Kafka's ConfiguredTopologyTest, ConfiguredSubtopologyTest, ConfiguredInternalTopicTest and
TopicConfigurationExceptionTest (4.3); the describe conversions are checked on real values, not mocks."""

from __future__ import annotations

import pytest

from franz.coordinator.group.streams.topics.configured_internal_topic import ConfiguredInternalTopic
from franz.coordinator.group.streams.topics.configured_subtopology import ConfiguredSubtopology
from franz.coordinator.group.streams.topics.configured_topology import ConfiguredTopology
from franz.coordinator.group.streams.topics.topic_configuration_exception import (
    Status,
    TopicConfigurationException,
)
from franz.server.metadata_cache import InvalidTopicError


def test_status_codes_are_those_of_the_heartbeat_response():
    """franz: StreamsGroupHeartbeatResponse.Status in the 4.3 client."""
    assert [(status.name, status.value) for status in Status] == [
        ("STALE_TOPOLOGY", 0), ("MISSING_SOURCE_TOPICS", 1), ("INCORRECTLY_PARTITIONED_TOPICS", 2),
        ("MISSING_INTERNAL_TOPICS", 3), ("SHUTDOWN_APPLICATION", 4), ("ASSIGNMENT_DELAYED", 5)]


@pytest.mark.parametrize("factory, status", [
    (TopicConfigurationException.missing_source_topics, Status.MISSING_SOURCE_TOPICS),
    (TopicConfigurationException.missing_internal_topics, Status.MISSING_INTERNAL_TOPICS),
    (TopicConfigurationException.incorrectly_partitioned_topics, Status.INCORRECTLY_PARTITIONED_TOPICS),
])
def test_topic_configuration_exception_factories(factory, status):
    exception = factory("why")
    assert (exception.status, exception.message, str(exception)) == (status, "why", "why")
    assert exception == TopicConfigurationException(status, "why")
    assert exception != TopicConfigurationException(status, "other")
    assert exception != TopicConfigurationException(Status.STALE_TOPOLOGY, "why")


def test_constructor_with_null_subtopologies_and_no_exception():
    """Kafka's testNoExceptionButNoSubtopologies."""
    with pytest.raises(ValueError, match="^Subtopologies must be present if topicConfigurationException is empty.$"):
        ConfiguredTopology(1, 0, None, {}, None)


def test_constructor_with_null_internal_topics_to_be_created():
    with pytest.raises(TypeError):
        ConfiguredTopology(0, 0, {}, None, None)  # type: ignore[arg-type]


def test_constructor_with_invalid_topology_epoch():
    with pytest.raises(ValueError, match="^Topology epoch must be non-negative.$"):
        ConfiguredTopology(-1, 0, {}, {}, None)


def test_is_ready():
    assert ConfiguredTopology(1, 0, {}, {}, None).is_ready()
    not_ready = ConfiguredTopology(1, 0, None, {}, TopicConfigurationException.missing_source_topics("missing"))
    assert not not_ready.is_ready()


def test_as_streams_group_describe_topology():
    internal = ConfiguredInternalTopic("rep", 3, 2, {"retention.ms": "1000"})
    subtopology = ConfiguredSubtopology(3, {"b", "a"}, {"rep": internal}, {"sink2", "sink1"}, {})
    topology = ConfiguredTopology(1, 0, {"subtopology1": subtopology}, {}, None)

    assert topology.as_streams_group_describe_topology() == {
        "epoch": 1,
        "subtopologies": [{
            "subtopology_id": "subtopology1",
            "source_topics": ["a", "b"],
            "repartition_sink_topics": ["sink1", "sink2"],
            "repartition_source_topics": [{"name": "rep", "partitions": 3, "replication_factor": 2,
                                           "topic_configs": [{"key": "retention.ms", "value": "1000"}]}],
            "state_changelog_topics": [],
        }],
    }
    unconfigured = ConfiguredTopology(4, 0, None, {}, TopicConfigurationException.missing_source_topics("x"))
    assert unconfigured.as_streams_group_describe_topology() == {"epoch": 4, "subtopologies": []}


@pytest.mark.parametrize("arguments", [
    (2, None, {}, set(), {}),
    (2, set(), None, set(), {}),
    (2, set(), {}, None, {}),
    (2, set(), {}, set(), None),
])
def test_subtopology_constructor_with_null_fields(arguments):
    with pytest.raises(TypeError):
        ConfiguredSubtopology(*arguments)


@pytest.mark.parametrize("tasks", [-1, 0])
def test_subtopology_constructor_with_non_positive_task_count(tasks):
    with pytest.raises(ValueError, match="^Number of tasks must be positive$"):
        ConfiguredSubtopology(tasks, set(), {}, set(), {})


def test_subtopology_describe_sorts_internal_topics_by_name():
    changelogs = {name: ConfiguredInternalTopic(name, 1, None, {}) for name in ("z-changelog", "a-changelog")}
    described = ConfiguredSubtopology(1, set(), {}, set(), changelogs).as_streams_group_describe_subtopology("0")
    assert [topic["name"] for topic in described["state_changelog_topics"]] == ["a-changelog", "z-changelog"]


def test_internal_topic_constructor_with_null_name():
    with pytest.raises(TypeError):
        ConfiguredInternalTopic(None, 1, None, {})  # type: ignore[arg-type]


def test_internal_topic_constructor_with_invalid_name():
    with pytest.raises(InvalidTopicError):
        ConfiguredInternalTopic("invalid topic name", 1, None, {})


def test_internal_topic_constructor_with_null_topic_configs():
    with pytest.raises(TypeError):
        ConfiguredInternalTopic("test-topic", 1, None, None)  # type: ignore[arg-type]


def test_internal_topic_constructor_with_zero_partitions():
    with pytest.raises(ValueError, match="^Number of partitions must be at least 1.$"):
        ConfiguredInternalTopic("test-topic", 0, None, {})


def test_internal_topic_as_streams_group_describe_topic_info():
    topic = ConfiguredInternalTopic("test-topic", 3, 2, {"retention.ms": "1000"})
    assert topic.as_streams_group_describe_topic_info() == {
        "name": "test-topic", "partitions": 3, "replication_factor": 2,
        "topic_configs": [{"key": "retention.ms", "value": "1000"}]}
    default_replication = ConfiguredInternalTopic("test-topic", 3, None, {})
    assert default_replication.as_streams_group_describe_topic_info()["replication_factor"] == 0
