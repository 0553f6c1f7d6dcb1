"""The `__consumer_offsets` records of a streams group, and back (Kafka 4.3's StreamsCoordinatorRecordHelpers).

Each `new_*` function returns a record as `(key bytes, value bytes)`, each tombstone as
`(key bytes, None)`. The values are version 0 of the record JSON specs, written as Kafka 4.3
writes them: task lists sorted by subtopology id with partitions ascending, client tags and
assignment configs sorted by key, active tasks of a current assignment with their assignment
epochs (the AssignmentEpochs tagged field). The `*_from_*_record` functions turn decoded values
(`read_value`) back into what a StreamsGroupMember, TasksTuple or StreamsTopology is made of,
for the loader.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from franz.coordinator.group import group_coordinator_record_serde as serde
from franz.coordinator.group.streams.member_state import MemberState
from franz.coordinator.group.streams.streams_group_member import Endpoint, StreamsGroupMember
from franz.coordinator.group.streams.tasks_tuple import Tasks, TasksTuple
from franz.coordinator.group.streams.tasks_tuple_with_epochs import TasksTupleWithEpochs, TasksWithEpochs

Record = tuple[bytes, bytes | None]


def _record(record_type: int, group_id: str, member_id: str | None, value: dict[str, Any] | None) -> Record:
    if group_id is None:
        raise TypeError("groupId should not be null here")
    key = serde.consumer_group_key(record_type, group_id, member_id)
    return key, None if value is None else serde.consumer_group_value(record_type, value)


def _require_member_id(member_id: str | None) -> str:
    if member_id is None:
        raise TypeError("memberId should not be null here")
    return member_id


def read_value(record_type: int, value: bytes) -> dict[str, Any]:
    """A streams group record's value, decoded (raises serde.RecordFormatError)."""
    assert record_type in serde.STREAMS_GROUP_RECORD_TYPES
    return serde.read_consumer_group_value(record_type, value)


# -- member metadata ----------------------------------------------------------------------


def new_streams_group_member_record(group_id: str, member: StreamsGroupMember) -> Record:
    if member is None:
        raise TypeError("member should not be null here")
    endpoint = member.user_endpoint
    return _record(serde.STREAMS_GROUP_MEMBER_METADATA, group_id, member.member_id, {
        "instance_id": member.instance_id,
        "rack_id": member.rack_id,
        "client_id": member.client_id,
        "client_host": member.client_host,
        "rebalance_timeout_ms": member.rebalance_timeout_ms,
        "topology_epoch": member.topology_epoch,
        "process_id": member.process_id,
        "user_endpoint": None if endpoint is None else {"host": endpoint.host, "port": endpoint.port},
        "client_tags": [{"key": key, "value": member.client_tags[key]} for key in sorted(member.client_tags)],
    })


def new_streams_group_member_tombstone_record(group_id: str, member_id: str) -> Record:
    return _record(serde.STREAMS_GROUP_MEMBER_METADATA, group_id, _require_member_id(member_id), None)


def member_fields_from_member_metadata_record(value: Mapping[str, Any]) -> dict[str, Any]:
    """StreamsGroupMember fields from a StreamsGroupMemberMetadataValue (Builder.updateWith)."""
    endpoint = value["user_endpoint"]
    return {
        "instance_id": value["instance_id"],
        "rack_id": value["rack_id"],
        "client_id": value["client_id"],
        "client_host": value["client_host"],
        "rebalance_timeout_ms": value["rebalance_timeout_ms"],
        "topology_epoch": value["topology_epoch"],
        "process_id": value["process_id"],
        "user_endpoint": None if endpoint is None else Endpoint(endpoint["host"], endpoint["port"]),
        "client_tags": {tag["key"]: tag["value"] for tag in value["client_tags"]},
    }


# -- group epoch --------------------------------------------------------------------------


def new_streams_group_metadata_record(group_id: str, new_group_epoch: int, metadata_hash: int,
                                      validated_topology_epoch: int, assignment_configs: Mapping[str, str]) -> Record:
    """The group epoch with the hash of the topics the group uses, the topology epoch last found
    valid against them (-1: none) and the assignment configs the target was computed with."""
    if assignment_configs is None:
        raise TypeError("assignmentConfigs should not be null here")
    return _record(serde.STREAMS_GROUP_METADATA, group_id, None, {
        "epoch": new_group_epoch,
        "metadata_hash": metadata_hash,
        "validated_topology_epoch": validated_topology_epoch,
        "last_assignment_configs": [{"key": key, "value": assignment_configs[key]}
                                    for key in sorted(assignment_configs)],
    })


def new_streams_group_epoch_tombstone_record(group_id: str) -> Record:
    return _record(serde.STREAMS_GROUP_METADATA, group_id, None, None)


def last_assignment_configs_from_metadata_record(value: Mapping[str, Any]) -> dict[str, str]:
    """The assignment configs of a StreamsGroupMetadataValue; none when the record has none."""
    return {config["key"]: config["value"] for config in value["last_assignment_configs"] or ()}


# -- target assignment --------------------------------------------------------------------


def new_streams_group_target_assignment_record(group_id: str, member_id: str, assignment: TasksTuple) -> Record:
    _require_member_id(member_id)
    if assignment is None:
        raise TypeError("assignment should not be null here")
    return _record(serde.STREAMS_GROUP_TARGET_ASSIGNMENT_MEMBER, group_id, member_id, {
        "active_tasks": _task_ids(assignment.active_tasks),
        "standby_tasks": _task_ids(assignment.standby_tasks),
        "warmup_tasks": _task_ids(assignment.warmup_tasks),
    })


def new_streams_group_target_assignment_tombstone_record(group_id: str, member_id: str) -> Record:
    return _record(serde.STREAMS_GROUP_TARGET_ASSIGNMENT_MEMBER, group_id, _require_member_id(member_id), None)


def new_streams_group_target_assignment_metadata_record(group_id: str, assignment_epoch: int,
                                                        assignment_timestamp: int) -> Record:
    """The epoch the target assignment was computed for, and when the computation finished."""
    return _record(serde.STREAMS_GROUP_TARGET_ASSIGNMENT_METADATA, group_id, None, {
        "assignment_epoch": assignment_epoch, "assignment_timestamp": assignment_timestamp})


def new_streams_group_target_assignment_metadata_tombstone_record(group_id: str) -> Record:
    return _record(serde.STREAMS_GROUP_TARGET_ASSIGNMENT_METADATA, group_id, None, None)


def tasks_tuple_from_target_assignment_record(value: Mapping[str, Any]) -> TasksTuple:
    return TasksTuple.from_target_assignment_record(value)


# -- current assignment -------------------------------------------------------------------


def new_streams_group_current_assignment_record(group_id: str, member: StreamsGroupMember) -> Record:
    if member is None:
        raise TypeError("member should not be null here")
    assigned, revoking = member.assigned_tasks, member.tasks_pending_revocation
    return _record(serde.STREAMS_GROUP_CURRENT_MEMBER_ASSIGNMENT, group_id, member.member_id, {
        "member_epoch": member.member_epoch,
        "previous_member_epoch": member.previous_member_epoch,
        "state": member.state.value,
        "active_tasks": _task_ids_with_epochs(assigned.active_tasks_with_epochs),
        "standby_tasks": _task_ids(assigned.standby_tasks),
        "warmup_tasks": _task_ids(assigned.warmup_tasks),
        "active_tasks_pending_revocation": _task_ids_with_epochs(revoking.active_tasks_with_epochs),
        "standby_tasks_pending_revocation": _task_ids(revoking.standby_tasks),
        "warmup_tasks_pending_revocation": _task_ids(revoking.warmup_tasks),
    })


def new_streams_group_current_assignment_tombstone_record(group_id: str, member_id: str) -> Record:
    return _record(serde.STREAMS_GROUP_CURRENT_MEMBER_ASSIGNMENT, group_id, _require_member_id(member_id), None)


def member_fields_from_current_assignment_record(group_id: str, value: Mapping[str, Any]) -> dict[str, Any]:
    """StreamsGroupMember fields from a StreamsGroupCurrentMemberAssignmentValue (Builder.updateWith)."""
    epoch = value["member_epoch"]
    return {
        "member_epoch": epoch,
        "previous_member_epoch": value["previous_member_epoch"],
        "state": MemberState.from_value(value["state"]),
        "assigned_tasks": TasksTupleWithEpochs.from_current_assignment_record(
            group_id, value["active_tasks"], value["standby_tasks"], value["warmup_tasks"], epoch),
        "tasks_pending_revocation": TasksTupleWithEpochs.from_current_assignment_record(
            group_id, value["active_tasks_pending_revocation"], value["standby_tasks_pending_revocation"],
            value["warmup_tasks_pending_revocation"], epoch),
    }


def _task_ids(tasks: Tasks) -> list[dict[str, Any]]:
    return [{"subtopology_id": subtopology_id, "partitions": sorted(tasks[subtopology_id])}
            for subtopology_id in sorted(tasks)]


def _task_ids_with_epochs(tasks: TasksWithEpochs) -> list[dict[str, Any]]:
    entries = []
    for subtopology_id in sorted(tasks):
        epochs = tasks[subtopology_id]
        partitions = sorted(epochs)
        entries.append({"subtopology_id": subtopology_id, "partitions": partitions,
                        "assignment_epochs": [epochs[p] for p in partitions]})
    return entries


# -- topology -----------------------------------------------------------------------------


def new_streams_group_topology_record(group_id: str, topology: Any) -> Record:
    """The topology record of a StreamsTopology (anything with its attribute names)."""
    if topology is None:
        raise TypeError("topology should not be null here")
    return _record(serde.STREAMS_GROUP_TOPOLOGY, group_id, None, convert_to_streams_group_topology_record(topology))


def new_streams_group_topology_record_tombstone(group_id: str) -> Record:
    return _record(serde.STREAMS_GROUP_TOPOLOGY, group_id, None, None)


def convert_to_streams_group_topology_record(topology: Any) -> dict[str, Any]:
    """A StreamsGroupTopologyValue from a StreamsTopology: subtopologies, topics and configs in
    the order the topology has them (a heartbeat's order, as Kafka writes the record from it)."""
    if topology is None:
        raise TypeError("topology should not be null here")
    return {"epoch": topology.topology_epoch, "subtopologies": [{
        "subtopology_id": subtopology.subtopology_id,
        "source_topics": list(subtopology.source_topics),
        "source_topic_regex": list(subtopology.source_topic_regex),
        "state_changelog_topics": [_topic_info(topic) for topic in subtopology.state_changelog_topics],
        "repartition_sink_topics": list(subtopology.repartition_sink_topics),
        "repartition_source_topics": [_topic_info(topic) for topic in subtopology.repartition_source_topics],
        "copartition_groups": [{
            "source_topics": list(group.source_topics),
            "source_topic_regex": list(group.source_topic_regex),
            "repartition_source_topics": list(group.repartition_source_topics),
        } for group in subtopology.copartition_groups],
    } for subtopology in topology.subtopologies.values()]}


def _topic_info(topic: Any) -> dict[str, Any]:
    return {"name": topic.name, "partitions": topic.partitions, "replication_factor": topic.replication_factor,
            "topic_configs": [{"key": key, "value": value} for key, value in topic.topic_configs]}


def streams_topology_from_record(value: Mapping[str, Any]) -> Any:
    """The StreamsTopology of a StreamsGroupTopologyValue (Kafka's StreamsTopology.fromRecord). The
    record has the field names of a heartbeat's Topology, so StreamsTopology reads it as one."""
    from franz.coordinator.group.streams.streams_topology import StreamsTopology

    return StreamsTopology.from_heartbeat_request(value)
