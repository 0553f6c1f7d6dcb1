"""Partitions served by a member's user endpoint. Ported from Kafka's EndpointToPartitionsManagerTest (4.3),
with the member's task maps passed directly instead of a mocked member and group."""

from __future__ import annotations

import pytest

from franz.coordinator.group.streams.topics.configured_internal_topic import ConfiguredInternalTopic
from franz.coordinator.group.streams.topics.configured_subtopology import ConfiguredSubtopology
from franz.coordinator.group.streams.topics.configured_topology import ConfiguredTopology
from franz.coordinator.group.streams.topics.endpoint_to_partitions_manager import (
    endpoint_to_partitions,
    maybe_endpoint_to_partitions,
)
from franz.coordinator.group.streams.topics.topic_configuration_exception import TopicConfigurationException

ENDPOINT = {"host": "localhost", "port": 9092}


def _topics(**counts: int) -> dict[str, tuple[bytes, int]]:
    return {name.replace("_", "-"): (bytes([index + 1]) * 16, partitions)
            for index, (name, partitions) in enumerate(counts.items())}


def _topology(subtopologies: dict[str, ConfiguredSubtopology]) -> ConfiguredTopology:
    return ConfiguredTopology(0, 0, subtopologies, {}, None)


def _two_subtopologies() -> ConfiguredTopology:
    one = ConfiguredSubtopology(1, {"Topic-A"}, {}, set(), {})
    two = ConfiguredSubtopology(1, set(), {"Topic-B": ConfiguredInternalTopic("Topic-B", 1, 1, {})}, set(), {})
    return _topology({"0": one, "1": two})


def test_endpoint_to_partitions_with_standby_task_assignments():
    result = endpoint_to_partitions(ENDPOINT, {"0": frozenset({0, 1, 2})}, {"1": frozenset({0, 1, 2})},
                                    _two_subtopologies(), _topics(Topic_A=3, Topic_B=3))

    assert result == {
        "user_endpoint": ENDPOINT,
        "active_partitions": [{"topic": "Topic-A", "partitions": [0, 1, 2]}],
        "standby_partitions": [{"topic": "Topic-B", "partitions": [0, 1, 2]}],
    }


@pytest.mark.parametrize("topic_a_partitions, topic_b_partitions, topic_a_expected, topic_b_expected", [
    pytest.param(2, 5, [0, 1], [0, 1, 2, 3, 4], id="partitions differ between topics"),
    pytest.param(3, 3, [0, 1, 2], [0, 1, 2], id="partitions same between topics"),
])
def test_endpoint_to_partitions_with_two_topics_and_different_partitions(topic_a_partitions, topic_b_partitions,
                                                                       topic_a_expected, topic_b_expected):
    subtopology = ConfiguredSubtopology(max(topic_a_partitions, topic_b_partitions), {"Topic-A", "Topic-B"},
                                        {}, set(), {})
    topics = _topics(Topic_A=topic_a_partitions, Topic_B=topic_b_partitions)

    result = endpoint_to_partitions(ENDPOINT, {"0": frozenset({0, 1, 2, 3, 4})}, {},
                                    _topology({"0": subtopology}), topics)

    assert result["user_endpoint"] == ENDPOINT
    assert result["active_partitions"] == [{"topic": "Topic-A", "partitions": topic_a_expected},
                                           {"topic": "Topic-B", "partitions": topic_b_expected}]
    assert result["standby_partitions"] == []


def test_maybe_endpoint_to_partitions_without_endpoint_is_none():
    """franz: Kafka's maybeEndpointToPartitions gives nothing for a member without a user endpoint."""
    topics = _topics(Topic_A=1)
    assert maybe_endpoint_to_partitions(None, {"0": frozenset({0})}, {}, _two_subtopologies(), topics) is None
    result = maybe_endpoint_to_partitions({"host": "h", "port": 1}, {}, {}, _two_subtopologies(), {})
    assert result == {"user_endpoint": {"host": "h", "port": 1}, "active_partitions": [], "standby_partitions": []}


def test_topic_missing_from_metadata_fails():
    """franz: Kafka's IllegalStateException for a source topic the broker does not have."""
    with pytest.raises(RuntimeError, match="^Topic Topic-A not found in metadata image$"):
        endpoint_to_partitions(ENDPOINT, {"0": frozenset({0})}, {}, _two_subtopologies(), {})


def test_unconfigured_topology_fails():
    unconfigured = ConfiguredTopology(0, 0, None, {}, TopicConfigurationException.missing_source_topics("x"))
    with pytest.raises(RuntimeError):
        endpoint_to_partitions(ENDPOINT, {}, {}, unconfigured, {})
