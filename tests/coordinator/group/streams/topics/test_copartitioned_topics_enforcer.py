"""CopartitionedTopicsEnforcer. Ported from Kafka's CopartitionedTopicsEnforcerTest (4.3)."""

from __future__ import annotations

import pytest

from franz.coordinator.group.streams.topics.copartitioned_topics_enforcer import CopartitionedTopicsEnforcer
from franz.coordinator.group.streams.topics.topic_configuration_exception import (
    Status,
    TopicConfigurationException,
)

REPARTITION_TOPIC_1 = "repartitioned-1"
REPARTITION_TOPIC_2 = "repartitioned-2"
REPARTITION_TOPIC_3 = "repartitioned-3"
SOURCE_TOPIC_1 = "source-1"
SOURCE_TOPIC_2 = "source-2"


def _enforcer(counts: dict[str, int]) -> CopartitionedTopicsEnforcer:
    return CopartitionedTopicsEnforcer(counts.get)


def test_should_throw_illegal_state_exception_if_no_partitions_found_for_co_partitioned_topic():
    with pytest.raises(RuntimeError, match=f"^Number of partitions is not set for topic: {SOURCE_TOPIC_1}$"):
        _enforcer({}).enforce({SOURCE_TOPIC_1}, set(), set())


def test_should_throw_topic_configuration_exception_if_partition_counts_for_co_partitioned_topics_dont_match():
    with pytest.raises(TopicConfigurationException) as raised:
        _enforcer({SOURCE_TOPIC_1: 2, SOURCE_TOPIC_2: 1}).enforce({SOURCE_TOPIC_1, SOURCE_TOPIC_2}, set(), set())
    assert raised.value.status == Status.INCORRECTLY_PARTITIONED_TOPICS
    assert raised.value.message == (
        f"Following topics do not have the same number of partitions: [{{{SOURCE_TOPIC_1}=2, {SOURCE_TOPIC_2}=1}}]")


def test_should_enforce_copartitioning_on_repartition_topics():
    enforcer = _enforcer({SOURCE_TOPIC_1: 2, SOURCE_TOPIC_2: 2, REPARTITION_TOPIC_1: 10})

    result = enforcer.enforce({SOURCE_TOPIC_1, SOURCE_TOPIC_2, REPARTITION_TOPIC_1}, set(), {REPARTITION_TOPIC_1})

    assert result == {REPARTITION_TOPIC_1: 2}


def test_should_set_num_partitions_to_maximum_partitions_when_all_topics_are_repartition_topics():
    enforcer = _enforcer({REPARTITION_TOPIC_1: 1, REPARTITION_TOPIC_2: 15, REPARTITION_TOPIC_3: 5})
    topics = {REPARTITION_TOPIC_1, REPARTITION_TOPIC_2, REPARTITION_TOPIC_3}

    assert enforcer.enforce(topics, set(), topics) == dict.fromkeys(topics, 15)


def test_should_throw_an_exception_if_topic_infos_with_enforced_num_of_partitions_have_different_num_of_partitions():
    enforcer = _enforcer({REPARTITION_TOPIC_1: 10, REPARTITION_TOPIC_2: 5})
    topics = {REPARTITION_TOPIC_1, REPARTITION_TOPIC_2}

    with pytest.raises(TopicConfigurationException) as raised:
        enforcer.enforce(topics, topics, set())
    assert raised.value.status == Status.INCORRECTLY_PARTITIONED_TOPICS
    assert raised.value.message == (
        "Following topics do not have the same number of partitions: "
        f"[{{{REPARTITION_TOPIC_1}=10, {REPARTITION_TOPIC_2}=5}}]")


def test_should_return_the_partition_counts_unchanged_when_topic_infos_with_enforced_num_of_partitions_are_valid():
    enforcer = _enforcer({REPARTITION_TOPIC_1: 10, REPARTITION_TOPIC_2: 10})
    topics = {REPARTITION_TOPIC_1, REPARTITION_TOPIC_2}

    assert enforcer.enforce(topics, set(), topics) == {REPARTITION_TOPIC_1: 10, REPARTITION_TOPIC_2: 10}


def test_should_throw_when_partitions_of_non_repartition_topic_and_fixed_repartition_topic_do_not_match():
    """Kafka's shouldThrowAnExceptionWhenNumberOfPartitionsOfNonRepartitionTopicAndRepartitionTopicWith
    EnforcedNumOfPartitionsDoNotMatch."""
    enforcer = _enforcer({REPARTITION_TOPIC_1: 10, SOURCE_TOPIC_1: 2})

    with pytest.raises(TopicConfigurationException) as raised:
        enforcer.enforce({REPARTITION_TOPIC_1, SOURCE_TOPIC_1}, {REPARTITION_TOPIC_1}, set())
    assert raised.value.status == Status.INCORRECTLY_PARTITIONED_TOPICS
    assert raised.value.message == (
        f"Number of partitions [10] of repartition topic [{REPARTITION_TOPIC_1}] "
        "doesn't match number of partitions [2] of the source topic.")


def test_should_return_counts_unchanged_when_partitions_of_non_repartition_topic_and_repartition_topic_match():
    """Kafka's shouldReturnThePartitionCountsUnchangedWhenNumberOfPartitionsOfNonRepartitionTopicAndRepartition
    TopicWithEnforcedNumOfPartitionsMatch."""
    enforcer = _enforcer({REPARTITION_TOPIC_1: 2, SOURCE_TOPIC_1: 2})

    assert enforcer.enforce({REPARTITION_TOPIC_1, SOURCE_TOPIC_1}, set(), {REPARTITION_TOPIC_1}) == {
        REPARTITION_TOPIC_1: 2}


def test_should_deduct_number_of_partitions_from_repartition_topic_with_enforced_number_of_partitions():
    enforcer = _enforcer({REPARTITION_TOPIC_1: 2, REPARTITION_TOPIC_2: 5, REPARTITION_TOPIC_3: 2})

    enforced = enforcer.enforce({REPARTITION_TOPIC_1, REPARTITION_TOPIC_2, REPARTITION_TOPIC_3},
                                {REPARTITION_TOPIC_1, REPARTITION_TOPIC_3}, {REPARTITION_TOPIC_2})

    assert enforced == {REPARTITION_TOPIC_1: 2, REPARTITION_TOPIC_2: 2, REPARTITION_TOPIC_3: 2}


def test_empty_group_changes_nothing():
    """franz: Kafka ignores an empty copartition group."""
    assert _enforcer({}).enforce(set(), {REPARTITION_TOPIC_1}, set()) == {}
