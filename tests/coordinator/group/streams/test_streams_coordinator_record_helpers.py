"""The streams group records, ported from Kafka 4.3's StreamsCoordinatorRecordHelpersTest, checked byte for
byte against Kafka's encodings.

The expected bytes are derived by hand from the record JSON specs (group-coordinator/src/main/
resources/common/message/StreamsGroup*.json, 4.3) and the rules of Kafka's generated serializers:
a key is int16 record type then its fields, not flexible (string = int16 length + UTF-8); a value
is int16 version 0 then its fields in the flexible format: a compact string or array is its
length + 1 as an unsigned varint, then the bytes or elements; a nullable struct is the byte -1
(null) or 1 then the struct; int16/int32/int64/uint16 are big-endian; every struct, the value
itself included, ends with its tagged fields: their count, then tag, size and data of each,
a tagged field being written only when it differs from its default.
"""

from __future__ import annotations

import struct
from types import SimpleNamespace

import pytest

from franz.coordinator.group import group_coordinator_record_serde as serde
from franz.coordinator.group.streams import streams_coordinator_record_helpers as helpers
from franz.coordinator.group.streams.member_state import MemberState
from franz.coordinator.group.streams.streams_group_member import Endpoint, StreamsGroupMember
from franz.coordinator.group.streams.tasks_tuple import TasksTuple
from franz.coordinator.group.streams.tasks_tuple_with_epochs import TasksTupleWithEpochs
from tests.coordinator.group.streams.task_assignment_test_util import TaskRole, mk_tasks, mk_tasks_tuple

GROUP_ID, MEMBER_ID = "group-id", "member-id"
S1, S2, S3 = "subtopology1", "subtopology2", "subtopology3"


def _string(text: str) -> bytes:
    """A key's string: int16 length."""
    return struct.pack(">h", len(text)) + text.encode()


def _compact(text: str) -> bytes:
    """A short compact string: length + 1 in one varint byte."""
    assert len(text) < 127
    return bytes([len(text) + 1]) + text.encode()


def _int32s(*values: int) -> bytes:
    return bytes([len(values) + 1]) + struct.pack(f">{len(values)}i", *values)


def _member() -> StreamsGroupMember:
    return StreamsGroupMember(
        MEMBER_ID, member_epoch=1, previous_member_epoch=0, state=MemberState.STABLE, instance_id="instance-id",
        rack_id="rack1", client_id="client-id", client_host="client-host", rebalance_timeout_ms=1000,
        topology_epoch=1, process_id="process-id", user_endpoint=Endpoint("user-endpoint", 40),
        client_tags={"tag2": "value2", "tag1": "value1"},
        assigned_tasks=TasksTupleWithEpochs({S1: {3: 12, 1: 10, 2: 11}}, {S2: frozenset({4, 5, 6})},
                                            {S3: frozenset({7, 8, 9})}),
        tasks_pending_revocation=TasksTupleWithEpochs({S1: {1: 5, 2: 6, 3: 7}}, {S2: frozenset({4, 5, 6})},
                                                      {S3: frozenset({7, 8, 9})}))


def test_member_record():
    """testNewStreamsGroupMemberRecord: client tags sorted by key, the endpoint as a present struct."""
    key, value = helpers.new_streams_group_member_record(GROUP_ID, _member())
    assert key == b"\x00\x13" + _string(GROUP_ID) + _string(MEMBER_ID)
    assert value == (b"\x00\x00" + _compact("instance-id") + _compact("rack1") + _compact("client-id")
                     + _compact("client-host") + struct.pack(">ii", 1000, 1) + _compact("process-id")
                     + b"\x01" + _compact("user-endpoint") + struct.pack(">H", 40) + b"\x00"
                     + b"\x03" + _compact("tag1") + _compact("value1") + b"\x00" + _compact("tag2")
                     + _compact("value2") + b"\x00" + b"\x00")
    fields = helpers.member_fields_from_member_metadata_record(helpers.read_value(serde.STREAMS_GROUP_MEMBER_METADATA,
                                                                                  value))
    assert StreamsGroupMember(MEMBER_ID, **fields) == StreamsGroupMember(
        MEMBER_ID, instance_id="instance-id", rack_id="rack1", client_id="client-id", client_host="client-host",
        rebalance_timeout_ms=1000, topology_epoch=1, process_id="process-id",
        user_endpoint=Endpoint("user-endpoint", 40), client_tags={"tag1": "value1", "tag2": "value2"})


@pytest.mark.parametrize("field", ["rack_id", "instance_id", "user_endpoint"])
def test_member_record_with_null_fields(field):
    """testNewStreamsGroupMemberRecordWithNullRackId / NullInstanceId / NullUserEndpoint: null is
    the length 0 of a compact string, or the byte -1 for the endpoint."""
    import dataclasses
    _, value = helpers.new_streams_group_member_record(GROUP_ID, dataclasses.replace(_member(), **{field: None}))
    _, full = helpers.new_streams_group_member_record(GROUP_ID, _member())
    replaced = {"rack_id": (_compact("rack1"), b"\x00"), "instance_id": (_compact("instance-id"), b"\x00"),
                "user_endpoint": (b"\x01" + _compact("user-endpoint") + struct.pack(">H", 40) + b"\x00", b"\xff")}
    present, null = replaced[field]
    assert value == full.replace(present, null, 1)
    assert helpers.read_value(serde.STREAMS_GROUP_MEMBER_METADATA, value)[field] is None


def test_metadata_record():
    """testNewStreamsGroupMetadataRecord: the validated topology epoch as tag 0, the assignment
    configs as tag 1."""
    key, value = helpers.new_streams_group_metadata_record(GROUP_ID, 42, 43, 44, {"num.standby.replicas": "2"})
    assert key == b"\x00\x11" + _string(GROUP_ID)
    configs = b"\x02" + _compact("num.standby.replicas") + _compact("2") + b"\x00"
    assert value == (b"\x00\x00" + struct.pack(">iq", 42, 43) + b"\x02" + b"\x00\x04" + struct.pack(">i", 44)
                     + b"\x01" + bytes([len(configs)]) + configs)
    data = helpers.read_value(serde.STREAMS_GROUP_METADATA, value)
    assert (data["epoch"], data["metadata_hash"], data["validated_topology_epoch"]) == (42, 43, 44)
    assert helpers.last_assignment_configs_from_metadata_record(data) == {"num.standby.replicas": "2"}


def test_metadata_record_leaves_out_an_unvalidated_topology_epoch_but_not_empty_configs():
    """-1 is ValidatedTopologyEpoch's default; an empty config list is not null, LastAssignmentConfigs' default."""
    _, value = helpers.new_streams_group_metadata_record(GROUP_ID, 1, -5, -1, {})
    assert value == b"\x00\x00" + struct.pack(">iq", 1, -5) + b"\x01" + b"\x01\x01\x01"
    assert helpers.new_streams_group_metadata_record(GROUP_ID, 1, 2, 3, {"b": "2", "a": "1"})[1].endswith(
        b"\x03" + _compact("a") + _compact("1") + b"\x00" + _compact("b") + _compact("2") + b"\x00")


def test_metadata_record_without_configs_reads_as_none():
    value = serde.consumer_group_value(serde.STREAMS_GROUP_METADATA, {"epoch": 1, "metadata_hash": 2})
    data = helpers.read_value(serde.STREAMS_GROUP_METADATA, value)
    assert data["validated_topology_epoch"] == -1
    assert helpers.last_assignment_configs_from_metadata_record(data) == {}


def test_metadata_record_needs_assignment_configs():
    """testNewStreamsGroupMetadataRecordWithNullAssignmentConfig."""
    with pytest.raises(TypeError, match="assignmentConfigs should not be null here"):
        helpers.new_streams_group_metadata_record(GROUP_ID, 42, 43, 44, None)


def test_target_assignment_record():
    """testNewStreamsGroupTargetAssignmentRecord."""
    key, value = helpers.new_streams_group_target_assignment_record(
        GROUP_ID, MEMBER_ID,
        TasksTuple({S1: frozenset({3, 1, 2})}, {S2: frozenset({4, 5, 6})}, {S3: frozenset({9, 8, 7})}))
    assert key == b"\x00\x15" + _string(GROUP_ID) + _string(MEMBER_ID)
    assert value == (b"\x00\x00" + b"\x02" + _compact(S1) + _int32s(1, 2, 3) + b"\x00"
                     + b"\x02" + _compact(S2) + _int32s(4, 5, 6) + b"\x00"
                     + b"\x02" + _compact(S3) + _int32s(7, 8, 9) + b"\x00" + b"\x00")
    assert helpers.tasks_tuple_from_target_assignment_record(
        helpers.read_value(serde.STREAMS_GROUP_TARGET_ASSIGNMENT_MEMBER, value)) == TasksTuple(
        {S1: {1, 2, 3}}, {S2: {4, 5, 6}}, {S3: {7, 8, 9}})


@pytest.mark.parametrize("role", list(TaskRole))
def test_target_assignment_record_with_empty_task_ids(role):
    """testNewStreamsGroupTargetAssignmentRecordWithEmptyTaskIds: subtopologies in id order."""
    _, value = helpers.new_streams_group_target_assignment_record(
        GROUP_ID, MEMBER_ID, mk_tasks_tuple(role, mk_tasks("b", 2), mk_tasks("a", 1, 0)))
    data = helpers.read_value(serde.STREAMS_GROUP_TARGET_ASSIGNMENT_MEMBER, value)
    lists = {"active_tasks": [], "standby_tasks": [], "warmup_tasks": []}
    lists[f"{role.value}_tasks"] = [{"subtopology_id": "a", "partitions": [0, 1]},
                                    {"subtopology_id": "b", "partitions": [2]}]
    assert data == lists


def test_target_assignment_metadata_record():
    """testNewStreamsGroupTargetAssignmentMetadataRecord: the timestamp as tag 0, left out when 0."""
    key, value = helpers.new_streams_group_target_assignment_metadata_record(GROUP_ID, 42, 12345)
    assert key == b"\x00\x14" + _string(GROUP_ID)
    assert value == b"\x00\x00" + struct.pack(">i", 42) + b"\x01\x00\x08" + struct.pack(">q", 12345)
    assert helpers.read_value(serde.STREAMS_GROUP_TARGET_ASSIGNMENT_METADATA, value) == {
        "assignment_epoch": 42, "assignment_timestamp": 12345}
    assert helpers.new_streams_group_target_assignment_metadata_record(GROUP_ID, 42, 0)[1] == (
        b"\x00\x00" + struct.pack(">i", 42) + b"\x00")


def test_current_assignment_record():
    """testNewStreamsGroupCurrentAssignmentRecord: active tasks carry their epochs as tag 0 of
    their TaskIds, standby and warm-up tasks none."""
    member = _member()
    key, value = helpers.new_streams_group_current_assignment_record(GROUP_ID, member)
    assert key == b"\x00\x16" + _string(GROUP_ID) + _string(MEMBER_ID)

    def task_ids(subtopology_id, partitions, epochs=None):
        tags = b"\x00" if epochs is None else b"\x01\x00" + bytes([1 + 4 * len(epochs)]) + _int32s(*epochs)
        return b"\x02" + _compact(subtopology_id) + _int32s(*partitions) + tags

    assert value == (b"\x00\x00" + struct.pack(">ii", 1, 0) + b"\x01"
                     + task_ids(S1, [1, 2, 3], [10, 11, 12]) + task_ids(S2, [4, 5, 6]) + task_ids(S3, [7, 8, 9])
                     + task_ids(S1, [1, 2, 3], [5, 6, 7]) + task_ids(S2, [4, 5, 6]) + task_ids(S3, [7, 8, 9])
                     + b"\x00")
    fields = helpers.member_fields_from_current_assignment_record(
        GROUP_ID, helpers.read_value(serde.STREAMS_GROUP_CURRENT_MEMBER_ASSIGNMENT, value))
    assert fields == {"member_epoch": 1, "previous_member_epoch": 0, "state": MemberState.STABLE,
                      "assigned_tasks": member.assigned_tasks,
                      "tasks_pending_revocation": member.tasks_pending_revocation}


def test_current_assignment_record_with_empty_assignment():
    """testNewStreamsGroupCurrentAssignmentRecordWithEmptyAssignment: six empty arrays."""
    import dataclasses
    member = dataclasses.replace(_member(), assigned_tasks=TasksTupleWithEpochs.EMPTY,
                                 tasks_pending_revocation=TasksTupleWithEpochs.EMPTY)
    _, value = helpers.new_streams_group_current_assignment_record(GROUP_ID, member)
    assert value == b"\x00\x00" + struct.pack(">ii", 1, 0) + b"\x01" + b"\x01" * 6 + b"\x00"


def _topic(name, partitions, replication_factor, configs):
    return SimpleNamespace(name=name, partitions=partitions, replication_factor=replication_factor,
                           topic_configs=tuple(configs.items()))


def _subtopology(subtopology_id, source_topics=(), source_topic_regex=(), state_changelog_topics=(),
                 repartition_sink_topics=(), repartition_source_topics=(), copartition_groups=()):
    return SimpleNamespace(subtopology_id=subtopology_id, source_topics=source_topics,
                           source_topic_regex=source_topic_regex, state_changelog_topics=state_changelog_topics,
                           repartition_sink_topics=repartition_sink_topics,
                           repartition_source_topics=repartition_source_topics, copartition_groups=copartition_groups)


def _copartition_group(source_topics=(), source_topic_regex=(), repartition_source_topics=()):
    return SimpleNamespace(source_topics=source_topics, source_topic_regex=source_topic_regex,
                           repartition_source_topics=repartition_source_topics)


def test_topology_record_bytes():
    key, value = helpers.new_streams_group_topology_record(GROUP_ID, SimpleNamespace(topology_epoch=42, subtopologies={
        "s1": _subtopology("s1", source_topics=("bar",),
                           state_changelog_topics=(_topic("changelog", 0, 2, {"k": "v"}),),
                           copartition_groups=(_copartition_group(source_topics=(0,)),))}))
    assert key == b"\x00\x17" + _string(GROUP_ID)
    assert value == (b"\x00\x00" + struct.pack(">i", 42) + b"\x02" + _compact("s1") + b"\x02" + _compact("bar")
                     + b"\x01"  # no source topic regex
                     + b"\x02" + _compact("changelog") + struct.pack(">ih", 0, 2)
                     + b"\x02" + _compact("k") + _compact("v") + b"\x00" + b"\x00"
                     + b"\x01" + b"\x01"  # no repartition sink or source topics
                     + b"\x02" + b"\x02" + struct.pack(">h", 0) + b"\x01" + b"\x01" + b"\x00"
                     + b"\x00" + b"\x00")


def test_topology_record_of_kafkas_test_and_back():
    """testNewStreamsGroupTopologyRecord (with the second subtopology given an id of its own); the
    record reads back as the same StreamsTopology."""
    from franz.coordinator.group.streams.streams_topology import (
        CopartitionGroup,
        StreamsTopology,
        Subtopology,
        TopicInfo,
    )
    topology = StreamsTopology(42, {
        S1: Subtopology(S1, source_topics=("bar",), source_topic_regex=("regex",),
                        state_changelog_topics=(TopicInfo("changelog", 0, 2, {"config-name2": "config-value2"}),),
                        repartition_sink_topics=("foo",),
                        repartition_source_topics=(TopicInfo("repartition", 4, 3, {"config-name1": "config-value1"}),),
                        copartition_groups=(CopartitionGroup((0,), (), (0,)), CopartitionGroup((), (0,), ()))),
        S2: Subtopology(S2, source_topics=("bar",))})
    _, value = helpers.new_streams_group_topology_record(GROUP_ID, topology)
    data = helpers.read_value(serde.STREAMS_GROUP_TOPOLOGY, value)
    assert data == {"epoch": 42, "subtopologies": [
        {"subtopology_id": S1, "source_topics": ["bar"], "source_topic_regex": ["regex"],
         "state_changelog_topics": [{"name": "changelog", "partitions": 0, "replication_factor": 2,
                                     "topic_configs": [{"key": "config-name2", "value": "config-value2"}]}],
         "repartition_sink_topics": ["foo"],
         "repartition_source_topics": [{"name": "repartition", "partitions": 4, "replication_factor": 3,
                                        "topic_configs": [{"key": "config-name1", "value": "config-value1"}]}],
         "copartition_groups": [{"source_topics": [0], "source_topic_regex": [], "repartition_source_topics": [0]},
                                {"source_topics": [], "source_topic_regex": [0], "repartition_source_topics": []}]},
        {"subtopology_id": S2, "source_topics": ["bar"], "source_topic_regex": [], "state_changelog_topics": [],
         "repartition_sink_topics": [], "repartition_source_topics": [], "copartition_groups": []}]}
    assert helpers.streams_topology_from_record(data) == topology


def test_tombstones():
    """Each record type's tombstone: its key, no value."""
    assert helpers.new_streams_group_member_tombstone_record(GROUP_ID, MEMBER_ID) == (
        b"\x00\x13" + _string(GROUP_ID) + _string(MEMBER_ID), None)
    assert helpers.new_streams_group_epoch_tombstone_record(GROUP_ID) == (b"\x00\x11" + _string(GROUP_ID), None)
    assert helpers.new_streams_group_target_assignment_tombstone_record(GROUP_ID, MEMBER_ID) == (
        b"\x00\x15" + _string(GROUP_ID) + _string(MEMBER_ID), None)
    assert helpers.new_streams_group_target_assignment_metadata_tombstone_record(GROUP_ID) == (
        b"\x00\x14" + _string(GROUP_ID), None)
    assert helpers.new_streams_group_current_assignment_tombstone_record(GROUP_ID, MEMBER_ID) == (
        b"\x00\x16" + _string(GROUP_ID) + _string(MEMBER_ID), None)
    assert helpers.new_streams_group_topology_record_tombstone(GROUP_ID) == (b"\x00\x17" + _string(GROUP_ID), None)


@pytest.mark.parametrize("call, message", [
    (lambda: helpers.new_streams_group_member_record(None, _member()), "groupId should not be null here"),
    (lambda: helpers.new_streams_group_member_record("g", None), "member should not be null here"),
    (lambda: helpers.new_streams_group_member_tombstone_record(None, "m"), "groupId should not be null here"),
    (lambda: helpers.new_streams_group_member_tombstone_record("g", None), "memberId should not be null here"),
    (lambda: helpers.new_streams_group_metadata_record(None, 1, 1, 1, {}), "groupId should not be null here"),
    (lambda: helpers.new_streams_group_epoch_tombstone_record(None), "groupId should not be null here"),
    (lambda: helpers.new_streams_group_target_assignment_record(None, "m", TasksTuple.EMPTY),
     "groupId should not be null here"),
    (lambda: helpers.new_streams_group_target_assignment_record("g", None, TasksTuple.EMPTY),
     "memberId should not be null here"),
    (lambda: helpers.new_streams_group_target_assignment_record("g", "m", None), "assignment should not be null here"),
    (lambda: helpers.new_streams_group_target_assignment_tombstone_record("g", None),
     "memberId should not be null here"),
    (lambda: helpers.new_streams_group_target_assignment_metadata_record(None, 1, 1),
     "groupId should not be null here"),
    (lambda: helpers.new_streams_group_current_assignment_record("g", None), "member should not be null here"),
    (lambda: helpers.new_streams_group_current_assignment_tombstone_record("g", None),
     "memberId should not be null here"),
    (lambda: helpers.new_streams_group_topology_record("g", None), "topology should not be null here"),
    (lambda: helpers.new_streams_group_topology_record_tombstone(None), "groupId should not be null here"),
    (lambda: helpers.convert_to_streams_group_topology_record(None), "topology should not be null here"),
])
def test_missing_arguments_are_refused_with_kafkas_messages(call, message):
    """The ...Null... cases of StreamsCoordinatorRecordHelpersTest."""
    with pytest.raises(TypeError, match=message):
        call()
