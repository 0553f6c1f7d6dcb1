"""A consumer group as records: the full set, the difference to append, the load back, and a
failed write that makes the next one rewrite the group."""

from __future__ import annotations

import asyncio
import dataclasses

import pytest

from franz.coordinator.group import consumer_group_records
from franz.coordinator.group import group_coordinator_record_serde as serde
from franz.coordinator.group.consumer_group import (
    ConsumerGroup,
    ConsumerGroupMember,
    MemberState,
    ResolvedRegularExpression,
)
from franz.coordinator.group.consumer_group_coordinator import ConsumerGroupConfig, ConsumerGroupCoordinator
from franz.coordinator.group.group_metadata import GroupError
from franz.protocol.errors import Errors

T = b"\x05" * 16


def _group() -> ConsumerGroup:
    group = ConsumerGroup("g")
    group.group_epoch = group.assignment_epoch = 3
    group.metadata_hash = -1234567890123
    group.assignment_timestamp_ms = 1_795_000_000_000
    group.update_member(ConsumerGroupMember("a", instance_id="i", rebalance_timeout_ms=500, client_id="c",
                                            subscribed_topic_names=("t",), member_epoch=3, previous_member_epoch=2,
                                            state=MemberState.UNRELEASED_PARTITIONS, assigned={T: frozenset({0})},
                                            assignment_epochs={(T, 0): 2}))
    group.target_assignment = {"a": {T: frozenset({0, 1})}}
    return group


def _types(entries) -> list[tuple[int, bool]]:
    return [(serde.read_key(key).record_type, value is None) for key, value in entries]


def test_records_load_back_into_the_same_group():
    group = _group()
    records = consumer_group_records.records_of(group)
    loaded = consumer_group_records.load("g", {serde.read_key(k): v for k, v in records.items()})
    assert (loaded.group_epoch, loaded.assignment_epoch, loaded.metadata_hash, loaded.assignment_timestamp_ms) == (
        3, 3, -1234567890123, 1_795_000_000_000)
    assert loaded.members == group.members and loaded.target_assignment == group.target_assignment
    assert loaded.partition_epochs == {(T, 0): 3}


def test_assignment_epochs_travel_as_the_tagged_field_and_default_to_the_member_epoch():
    """KIP-1251 (4.3): each TopicPartitions of ConsumerGroupCurrentMemberAssignmentValue carries
    AssignmentEpochs (tag 0), one per partition; a record written before it (no tag) loads
    every partition at the member epoch, as Utils.assignmentFromTopicPartitions does."""
    group = _group()
    key = serde.consumer_group_key(serde.CONSUMER_GROUP_CURRENT_MEMBER_ASSIGNMENT, "g", "a")
    value = consumer_group_records.records_of(group)[key]
    # ...partition 0, one tagged field (tag 0, 5 bytes: a compact array of the one epoch, 2), then
    # the empty partitions pending revocation and the value's own empty tagged fields.
    assert value.endswith(bytes(4) + bytes([1, 0, 5, 2]) + (2).to_bytes(4, "big") + bytes([1, 0]))
    assert serde.read_consumer_group_value(serde.CONSUMER_GROUP_CURRENT_MEMBER_ASSIGNMENT, value)[
        "assigned_partitions"][0]["assignment_epochs"] == [2]
    before_4_3 = serde.consumer_group_value(serde.CONSUMER_GROUP_CURRENT_MEMBER_ASSIGNMENT, {
        "member_epoch": 3, "previous_member_epoch": 2, "state": 2,
        "assigned_partitions": [{"topic_id": T, "partitions": [0]}], "partitions_pending_revocation": []})
    records = {serde.read_key(k): v for k, v in consumer_group_records.records_of(group).items()}
    records[serde.read_key(key)] = before_4_3
    assert consumer_group_records.load("g", records).members["a"].assignment_epochs == {(T, 0): 3}


def test_changes_put_in_kafkas_order_then_tombstone_members_before_the_group():
    group = _group()
    first = consumer_group_records.changes({}, consumer_group_records.records_of(group))
    # Since 4.1 no subscription metadata record (4): the epoch record carries the metadata hash.
    assert _types(first) == [(5, False), (3, False), (7, False), (6, False), (8, False)]
    persisted = consumer_group_records.records_of(group)
    group.remove_member("a")
    group.group_epoch = 4
    assert _types(consumer_group_records.changes(persisted, consumer_group_records.records_of(group))) == [
        (3, False), (8, True), (7, True), (5, True)]
    persisted = consumer_group_records.records_of(group)  # now the empty group's own two records
    group.dead = True  # deleted: every record goes
    assert _types(consumer_group_records.changes(persisted, consumer_group_records.records_of(group))) == [
        (6, True), (3, True)]


def test_after_a_failed_write_the_next_one_rewrites_the_group_and_tombstones_what_is_gone():
    written: list[list] = []
    failures = [GroupError(Errors.NOT_COORDINATOR, "the append failed")]

    async def write(_group_id, entries) -> None:
        if failures:
            raise failures.pop()
        written.append(entries)

    async def scenario():
        coordinator = ConsumerGroupCoordinator(ConsumerGroupConfig(), dict, lambda _group_id: None, write)
        group = _group()
        coordinator.groups["g"] = group
        with pytest.raises(GroupError):
            await coordinator.persist(group)
        group.remove_member("a")  # its records may or may not be in the log
        await coordinator.persist(group)
        await coordinator.shutdown()
    asyncio.run(scenario())
    assert _types(written[0]) == [(3, False), (6, False), (8, True), (7, True), (5, True)]


def test_records_of_reencodes_only_the_members_that_changed():
    group = _group()
    group.update_member(ConsumerGroupMember("b", subscribed_topic_names=("t",)))
    first = consumer_group_records.records_of(group)
    group.update_member(dataclasses.replace(group.members["b"], client_id="new"))
    second = consumer_group_records.records_of(group)
    changed = {serde.read_key(key).member_id for key in second if second[key] is not first[key]}
    assert changed - {None} == {"b"}  # the other members' bytes are the same objects: not encoded again
    assert consumer_group_records.changes(first, second) == [
        (key, value) for key, value in second.items() if value != first[key]]


def test_the_group_epoch_record_carries_the_metadata_hash_and_the_target_its_timestamp_as_tagged_fields():
    """ConsumerGroupMetadataValue's MetadataHash (KIP-1101, 4.1) and
    ConsumerGroupTargetAssignmentMetadataValue's AssignmentTimestamp (KIP-1263, 4.3): tag 0
    each; a record without the tag reads 0."""
    records = consumer_group_records.records_of(_group())
    epoch = records[serde.consumer_group_key(serde.CONSUMER_GROUP_METADATA, "g")]
    # version 0, epoch 3, one tagged field: tag 0, 8 bytes, the hash
    assert epoch == bytes(2) + (3).to_bytes(4, "big") + bytes([1, 0, 8]) + (-1234567890123).to_bytes(8, "big", signed=True)
    target = records[serde.consumer_group_key(serde.CONSUMER_GROUP_TARGET_ASSIGNMENT_METADATA, "g")]
    assert target == bytes(2) + (3).to_bytes(4, "big") + bytes([1, 0, 8]) + (1_795_000_000_000).to_bytes(8, "big")
    assert serde.read_consumer_group_value(serde.CONSUMER_GROUP_METADATA, bytes(2) + (3).to_bytes(4, "big") + bytes(1)) \
        == {"epoch": 3, "metadata_hash": 0}


def test_a_group_loaded_with_a_subscription_metadata_record_of_4_0_tombstones_it_at_its_next_write():
    group = _group()
    records = {serde.read_key(k): v for k, v in consumer_group_records.records_of(group).items()}
    old_key = consumer_group_records.subscription_metadata_key("g")
    records[serde.read_key(old_key)] = serde.consumer_group_value(serde.CONSUMER_GROUP_PARTITION_METADATA, {
        "topics": [{"topic_id": T, "topic_name": "t", "num_partitions": 2, "partition_metadata": []}]})
    written: list = []

    async def write(group_id, entries):
        written.append(entries)

    async def scenario():
        coordinator = ConsumerGroupCoordinator(ConsumerGroupConfig(), lambda: {"t": (T, 2)}, None, write)
        assert coordinator.load({"g": records}) == 1
        await coordinator.persist(coordinator.group("g"))
        await coordinator.shutdown()
    asyncio.run(scenario())
    assert written == [[(old_key, None)]]


def test_a_deleted_group_is_tombstoned_in_kafkas_order():
    """ConsumerGroup.createGroupTombstoneRecords: current assignments, targets, the target
    metadata, subscriptions, then the group's own records (the 4.0 subscription metadata, the
    epoch)."""
    group = _group()
    persisted = consumer_group_records.records_of(group)
    persisted[consumer_group_records.subscription_metadata_key("g")] = b""
    group.dead = True
    assert _types(consumer_group_records.changes(persisted, consumer_group_records.records_of(group))) == [
        (8, True), (7, True), (6, True), (5, True), (4, True), (3, True)]


def test_a_resolved_regex_is_a_record_of_its_own_and_tombstoned_once_nobody_subscribes_to_it():
    """ConsumerGroupRegularExpression records: put after the subscriptions and before the group
    epoch, loaded back; when the last member subscribed to the regex changes its subscription,
    the resolution goes and its record is tombstoned (the group's others are kept)."""
    group = _group()
    group.update_member(dataclasses.replace(group.members["a"], subscribed_topic_regex="t.*"))
    group.resolved_regexes["t.*"] = ResolvedRegularExpression(frozenset({"t", "tt"}), 12, 1_795_000_000_001)
    records = consumer_group_records.records_of(group)
    assert _types(consumer_group_records.changes({}, records))[:3] == [(5, False), (16, False), (3, False)]
    loaded = consumer_group_records.load("g", {serde.read_key(k): v for k, v in records.items()})
    assert loaded.resolved_regexes == group.resolved_regexes
    group.update_member(dataclasses.replace(group.members["a"], subscribed_topic_regex=None))
    group.forget_unsubscribed_regexes()
    assert group.resolved_regexes == {}
    assert _types(consumer_group_records.changes(records, consumer_group_records.records_of(group))) == [
        (5, False), (16, True)]


def test_a_group_at_its_initial_epochs_writes_no_epoch_records_and_loads_back_at_them():
    """KAFKA-20268 (4.3; ConsumerGroupTest's group epoch starting at 1): a new group is at epoch 1
    with the initial target (epoch 1, timestamp 0). Until an epoch moves Kafka writes neither
    epoch record, so a load of the member records alone gives the initial epochs back."""
    group = ConsumerGroup("g")
    assert (group.group_epoch, group.assignment_epoch, group.assignment_timestamp_ms) == (1, 1, 0)
    group.update_member(ConsumerGroupMember("a", member_epoch=1, previous_member_epoch=0))
    records = consumer_group_records.records_of(group)
    assert {serde.read_key(key).record_type for key in records} == {
        serde.CONSUMER_GROUP_MEMBER_METADATA, serde.CONSUMER_GROUP_CURRENT_MEMBER_ASSIGNMENT}
    loaded = consumer_group_records.load("g", {serde.read_key(k): v for k, v in records.items()})
    assert (loaded.group_epoch, loaded.assignment_epoch, loaded.state.value) == (1, 1, "Stable")
    assert consumer_group_records.records_of(loaded) == records


def test_epoch_records_written_at_the_initial_epochs_stay_after_a_load():
    """A classic group of generation 1 converts to a consumer group at epochs 1/1 and writes both
    epoch records (ConsumerGroup.createConsumerGroupRecords): loaded back, the group keeps them
    rather than tombstoning them at its next write."""
    group = ConsumerGroup("g")
    group.epoch_records_required = True
    records = consumer_group_records.records_of(group)
    assert {serde.read_key(key).record_type for key in records} == {
        serde.CONSUMER_GROUP_METADATA, serde.CONSUMER_GROUP_TARGET_ASSIGNMENT_METADATA}
    loaded = consumer_group_records.load("g", {serde.read_key(k): v for k, v in records.items()})
    assert not loaded.epoch_records_required and (loaded.group_epoch, loaded.assignment_epoch) == (1, 1)
    assert consumer_group_records.changes(records, consumer_group_records.records_of(loaded)) == []
