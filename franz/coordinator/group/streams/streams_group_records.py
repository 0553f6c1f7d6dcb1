"""A streams group as the records Kafka keeps of it in `__consumer_offsets`, and back.

Kafka 4.3 writes six record types for a KIP-1071 group (StreamsCoordinatorRecordHelpers):
the group epoch with its metadata hash, validated topology epoch and assignment configs
(17), each member's metadata (19), the target assignment epoch (20), each member's target
(21), each member's current assignment with its active tasks' assignment epochs (22) and
the topology (23). As for consumer groups (consumer_group_records.py), `records_of(group)`
is the full set a group is made of now; `changes(persisted, current)` is what to append so
that the log says the same: tombstones in the order of StreamsGroup.createGroupTombstoneRecords
(a fenced member's as streamsGroupFenceMember writes them), then new or changed records in the
order Kafka's heartbeat writes them (member, topology, epoch, targets, target epoch, current
assignments); `load(...)` turns the
last record of every key back into a group.
"""

from __future__ import annotations

from typing import Any

from franz.common.utils import java_hash_map_order
from franz.coordinator.group import group_coordinator_record_serde as serde
from franz.coordinator.group.group_coordinator_record_serde import ConsumerGroupRecordKey
from franz.coordinator.group.group_record_writer import cached_records
from franz.coordinator.group.streams import streams_coordinator_record_helpers as helpers
from franz.coordinator.group.streams.streams_group import StreamsGroup
from franz.coordinator.group.streams.streams_group_member import StreamsGroupMember

Records = dict[bytes, bytes]  # key bytes -> value bytes

_PUT_ORDER = (serde.STREAMS_GROUP_MEMBER_METADATA, serde.STREAMS_GROUP_TOPOLOGY, serde.STREAMS_GROUP_METADATA,
              serde.STREAMS_GROUP_TARGET_ASSIGNMENT_MEMBER, serde.STREAMS_GROUP_TARGET_ASSIGNMENT_METADATA,
              serde.STREAMS_GROUP_CURRENT_MEMBER_ASSIGNMENT)
_TOMBSTONE_ORDER = (serde.STREAMS_GROUP_CURRENT_MEMBER_ASSIGNMENT, serde.STREAMS_GROUP_TARGET_ASSIGNMENT_MEMBER,
                    serde.STREAMS_GROUP_TARGET_ASSIGNMENT_METADATA, serde.STREAMS_GROUP_MEMBER_METADATA,
                    serde.STREAMS_GROUP_METADATA, serde.STREAMS_GROUP_TOPOLOGY)


def records_of(group: StreamsGroup) -> Records:
    """Every record the group is made of now (none for a dead group)."""
    if group.dead:
        return {}
    group_id = group.group_id
    entries = [
        helpers.new_streams_group_metadata_record(group_id, group.group_epoch, group.metadata_hash,
                                                  group.validated_topology_epoch, group.last_assignment_configs),
    ]
    if group.has_target_assignment_metadata:
        entries.append(helpers.new_streams_group_target_assignment_metadata_record(
            group_id, group.assignment_epoch, group.assignment_timestamp_ms))
    if group.topology is not None:
        entries.append(helpers.new_streams_group_topology_record(group_id, group.topology))
    records = dict(entries)
    # A heartbeat changes one member: the others' records are reused, encoded once per member or
    # target object (they are immutable), as consumer_group_records does.
    cache, group.encoded_records = group.encoded_records, {}
    for member in group.members.values():
        records.update(cached_records(cache, group.encoded_records, ("member", member.member_id), member,
                                      lambda m=member: dict((helpers.new_streams_group_member_record(group_id, m),
                                                             helpers.new_streams_group_current_assignment_record(
                                                                 group_id, m)))))
    # Kafka's TargetAssignmentBuilder writes the targets in its HashMap order of the member ids
    for member_id in java_hash_map_order(group.target_assignment):
        target = group.target_assignment[member_id]
        records.update(cached_records(cache, group.encoded_records, ("target", member_id), target,
                                      lambda m=member_id, t=target: dict(
                                          (helpers.new_streams_group_target_assignment_record(group_id, m, t),))))
    return records


def group_keys(group_id: str) -> list[bytes]:
    """The keys of a group's own records, which StreamsGroup.createGroupTombstoneRecords tombstones
    whether or not they were ever written."""
    return [helpers.new_streams_group_epoch_tombstone_record(group_id)[0],
            helpers.new_streams_group_target_assignment_metadata_tombstone_record(group_id)[0],
            helpers.new_streams_group_topology_record_tombstone(group_id)[0]]


def member_keys(group_id: str, member_id: str) -> list[bytes]:
    """The keys of a member's records, which removeStreamsMember tombstones whether or not they
    were ever written (a member's target, during the initial rebalance delay)."""
    return [helpers.new_streams_group_current_assignment_tombstone_record(group_id, member_id)[0],
            helpers.new_streams_group_target_assignment_tombstone_record(group_id, member_id)[0],
            helpers.new_streams_group_member_tombstone_record(group_id, member_id)[0]]


def changes(persisted: Records, current: Records) -> list[tuple[bytes, bytes | None]]:
    """The records to append so that the log, after `persisted`, says `current`."""
    # Kafka's fencing writes a member's tombstones, then the bumped group epoch; no other write
    # of a streams group mixes the two
    return serde.ordered_changes(persisted, current, _PUT_ORDER, _TOMBSTONE_ORDER, tombstones_first=True)


def load(group_id: str, records: dict[ConsumerGroupRecordKey, bytes]) -> StreamsGroup | None:
    """The group the last (non-tombstone) record of every key describes; None when none is left.
    Raises serde.RecordFormatError for a value that does not decode."""
    if not records:
        return None
    group = StreamsGroup(group_id)
    members: dict[str, dict[str, Any]] = {}
    for key, value in records.items():
        data = helpers.read_value(key.record_type, value)
        if key.record_type == serde.STREAMS_GROUP_METADATA:
            group.group_epoch = data["epoch"]
            group.metadata_hash = data["metadata_hash"]
            group.validated_topology_epoch = data["validated_topology_epoch"]
            group.last_assignment_configs = helpers.last_assignment_configs_from_metadata_record(data)
        elif key.record_type == serde.STREAMS_GROUP_TARGET_ASSIGNMENT_METADATA:
            group.assignment_epoch = data["assignment_epoch"]
            group.assignment_timestamp_ms = data.get("assignment_timestamp", 0)
        elif key.record_type == serde.STREAMS_GROUP_TOPOLOGY:
            group.topology = helpers.streams_topology_from_record(data)
        elif key.record_type == serde.STREAMS_GROUP_TARGET_ASSIGNMENT_MEMBER:
            group.target_assignment[key.member_id] = helpers.tasks_tuple_from_target_assignment_record(data)
        elif key.record_type == serde.STREAMS_GROUP_MEMBER_METADATA:
            members.setdefault(key.member_id, {}).update(helpers.member_fields_from_member_metadata_record(data))
        else:
            members.setdefault(key.member_id, {}).update(
                helpers.member_fields_from_current_assignment_record(group_id, data))
    # Kafka puts the members in its map as their records replay; the last records alone do
    # not tell that order (nor the most members the map held), so the ids' order stands in
    for member_id, fields in sorted(members.items()):
        group.update_member(StreamsGroupMember(member_id, **fields))
    return group
