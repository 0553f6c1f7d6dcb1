"""StreamsGroupMember, ported from Kafka 4.3's StreamsGroupMemberTest (the Builder's cases become
dataclass defaults and `dataclasses.replace`)."""

from __future__ import annotations

import dataclasses

import pytest

from franz.coordinator.group.streams import streams_coordinator_record_helpers as helpers
from franz.coordinator.group.streams.member_state import MemberState
from franz.coordinator.group.streams.streams_group_member import Endpoint, StreamsGroupMember
from franz.coordinator.group.streams.tasks_tuple import TasksTuple
from franz.coordinator.group.streams.tasks_tuple_with_epochs import TasksTupleWithEpochs

S1, S2, S3 = "subtopology1", "subtopology2", "subtopology3"
USER_ENDPOINT = Endpoint("host", 9090)
ASSIGNED_TASKS = TasksTupleWithEpochs({S1: {1: 5, 2: 6, 3: 7}}, {S2: frozenset({4, 5, 6})}, {S1: frozenset({7, 8})})
TASKS_PENDING_REVOCATION = TasksTupleWithEpochs({S2: {3: 4, 2: 3, 1: 2}}, {S1: frozenset({6, 5, 4})},
                                                {S2: frozenset({9, 7})})


def _member() -> StreamsGroupMember:
    return StreamsGroupMember(
        "member-id", member_epoch=10, previous_member_epoch=9, state=MemberState.UNRELEASED_TASKS,
        instance_id="instance-id", rack_id="rack-id", client_id="client-id", client_host="hostname",
        rebalance_timeout_ms=5000, topology_epoch=3, process_id="process-id", user_endpoint=USER_ENDPOINT,
        client_tags={"client": "tag"}, assigned_tasks=ASSIGNED_TASKS, tasks_pending_revocation=TASKS_PENDING_REVOCATION)


def test_member_id_cannot_be_none():
    """testBuilderWithMemberIdIsNull."""
    with pytest.raises(TypeError, match="memberId cannot be null"):
        StreamsGroupMember(None)


def test_defaults_are_kafkas_builder_with_defaults():
    """testBuilderWithDefaults."""
    member = StreamsGroupMember("member-id")
    assert (member.member_epoch, member.previous_member_epoch, member.state) == (0, 0, MemberState.STABLE)
    assert (member.instance_id, member.rack_id, member.client_id, member.client_host) == (None, None, "", "")
    assert (member.rebalance_timeout_ms, member.topology_epoch, member.process_id) == (-1, -1, "")
    assert member.user_endpoint is None and member.client_tags == {}
    assert member.assigned_tasks == TasksTupleWithEpochs.EMPTY
    assert member.tasks_pending_revocation == TasksTupleWithEpochs.EMPTY


def test_update_with_the_member_metadata_record():
    """testBuilderUpdateWithStreamsGroupMemberMetadataValue: the record's fields, nothing else."""
    value = {"instance_id": "instance-id", "rack_id": "rack-id", "client_id": "client-id", "client_host": "hostname",
             "rebalance_timeout_ms": 5000, "topology_epoch": 3, "process_id": "process-id",
             "user_endpoint": {"host": "host", "port": 9090}, "client_tags": [{"key": "client", "value": "tag"}]}
    member = dataclasses.replace(StreamsGroupMember("member-id"),
                                 **helpers.member_fields_from_member_metadata_record(value))
    assert member == StreamsGroupMember(
        "member-id", instance_id="instance-id", rack_id="rack-id", client_id="client-id", client_host="hostname",
        rebalance_timeout_ms=5000, topology_epoch=3, process_id="process-id", user_endpoint=USER_ENDPOINT,
        client_tags={"client": "tag"})


def test_update_with_the_current_assignment_record():
    """testBuilderUpdateWithConsumerGroupCurrentMemberAssignmentValue."""
    value = {"member_epoch": 10, "previous_member_epoch": 9, "state": 3,
             "active_tasks": [{"subtopology_id": S1, "partitions": [1, 2, 3], "assignment_epochs": [5, 6, 7]}],
             "standby_tasks": [{"subtopology_id": S2, "partitions": [4, 5, 6], "assignment_epochs": None}],
             "warmup_tasks": [{"subtopology_id": S1, "partitions": [7, 8], "assignment_epochs": None}],
             "active_tasks_pending_revocation": [{"subtopology_id": S2, "partitions": [3, 2, 1],
                                                  "assignment_epochs": [4, 3, 2]}],
             "standby_tasks_pending_revocation": [{"subtopology_id": S1, "partitions": [6, 5, 4],
                                                   "assignment_epochs": None}],
             "warmup_tasks_pending_revocation": [{"subtopology_id": S2, "partitions": [9, 7],
                                                  "assignment_epochs": None}]}
    fields = helpers.member_fields_from_current_assignment_record("test-group", value)
    assert fields == {"member_epoch": 10, "previous_member_epoch": 9, "state": MemberState.UNRELEASED_TASKS,
                      "assigned_tasks": ASSIGNED_TASKS, "tasks_pending_revocation": TASKS_PENDING_REVOCATION}


def test_unknown_state_values_read_as_unknown():
    assert MemberState.from_value(2) is MemberState.UNREVOKED_TASKS
    assert MemberState.from_value(42) is MemberState.UNKNOWN


def test_update_member_epoch_remembers_the_previous_one():
    """testBuilderUpdateMemberEpoch."""
    member = _member()
    updated = member.update_member_epoch(11)
    assert (updated.member_epoch, updated.previous_member_epoch) == (11, 10)
    assert dataclasses.replace(updated, member_epoch=10, previous_member_epoch=9) == member


def test_is_reconciled_to():
    member = StreamsGroupMember("m", member_epoch=5)
    assert member.is_reconciled_to(5) and not member.is_reconciled_to(6)
    assert not dataclasses.replace(member, state=MemberState.UNRELEASED_TASKS).is_reconciled_to(5)


def test_as_streams_group_describe_member():
    """testAsStreamsGroupDescribeMember: tasks sorted, assignment epochs left out."""
    target = TasksTuple({S1: frozenset({16, 17, 18})}, {S2: frozenset({13, 14, 15})}, {S3: frozenset({10, 11, 12})})
    assert _member().as_streams_group_describe_member(target) == {
        "member_id": "member-id", "member_epoch": 10, "instance_id": "instance-id", "rack_id": "rack-id",
        "client_id": "client-id", "client_host": "hostname", "topology_epoch": 3, "process_id": "process-id",
        "user_endpoint": {"host": "host", "port": 9090}, "client_tags": [{"key": "client", "value": "tag"}],
        "task_offsets": [], "task_end_offsets": [],
        "assignment": {"active_tasks": [{"subtopology_id": S1, "partitions": [1, 2, 3]}],
                       "standby_tasks": [{"subtopology_id": S2, "partitions": [4, 5, 6]}],
                       "warmup_tasks": [{"subtopology_id": S1, "partitions": [7, 8]}]},
        "target_assignment": {"active_tasks": [{"subtopology_id": S1, "partitions": [16, 17, 18]}],
                              "standby_tasks": [{"subtopology_id": S2, "partitions": [13, 14, 15]}],
                              "warmup_tasks": [{"subtopology_id": S3, "partitions": [10, 11, 12]}]},
        "is_classic": False}


def test_as_streams_group_describe_member_without_target():
    """testAsStreamsGroupDescribeWithTargetAssignmentNull; and no user endpoint is null."""
    described = dataclasses.replace(_member(), user_endpoint=None).as_streams_group_describe_member(None)
    assert described["target_assignment"] == {"active_tasks": [], "standby_tasks": [], "warmup_tasks": []}
    assert described["user_endpoint"] is None


def test_has_assigned_tasks_changed():
    """testHasAssignedTasksChanged: the same tasks in another order are no change; other tasks,
    or other assignment epochs, are."""
    def member(active, standby, warmup, epoch=10):
        return StreamsGroupMember("m", member_epoch=10, assigned_tasks=TasksTupleWithEpochs(
            {S1: dict.fromkeys(active, epoch)}, {S2: frozenset(standby)}, {S1: frozenset(warmup)}))
    assert StreamsGroupMember.has_assigned_tasks_changed(member([1, 2, 3], [4, 5, 6], [7, 8]),
                                                         member([3, 2, 1], [6, 5, 4], [9, 7]))
    assert not StreamsGroupMember.has_assigned_tasks_changed(member([1, 2, 3], [4, 5, 6], [7, 8]),
                                                             member([3, 2, 1], [6, 5, 4], [8, 7]))
    assert StreamsGroupMember.has_assigned_tasks_changed(member([1], [], []), member([1], [], [], epoch=11))
