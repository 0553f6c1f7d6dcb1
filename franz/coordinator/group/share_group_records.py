"""A share group as the records Kafka 4.3 keeps of it in `__consumer_offsets`, and back.

Six record types (GroupCoordinatorRecordHelpers): each member's subscription (10),
the group epoch with the metadata hash of its subscribed topics (11), the target
assignment epoch with the time it was computed (12), each member's target (13),
each member's current assignment (14) and the share-partition bookkeeping:
initializing, initialized and deleting topics (15). `records_of(group)` is the full
set a group is made of now; `changes(persisted, current)` is what to append so that
the log says the same: new or changed records in Kafka's order, then tombstones of
keys that are gone in the order ShareGroup.createGroupTombstoneRecords writes them
(a leaving member's current assignment, target and subscription, in that order,
before the group's own records). `load(...)` turns the last record of every key
back into a group.
"""

from __future__ import annotations

from franz.coordinator.group import group_coordinator_record_serde as serde
from franz.coordinator.group.group_coordinator_record_serde import ConsumerGroupRecordKey
from franz.coordinator.group.share_group import (
    INITIAL_GROUP_EPOCH,
    Assignment,
    InitializingPartitions,
    ShareGroup,
    ShareGroupMember,
)

Records = dict[bytes, bytes]

# A heartbeat's order (GroupMetadataManager.shareGroupHeartbeat): subscription, epoch, targets,
# target epoch, current assignment, then the share-partition bookkeeping last.
_PUT_ORDER = (serde.SHARE_GROUP_MEMBER_METADATA, serde.SHARE_GROUP_METADATA,
              serde.SHARE_GROUP_TARGET_ASSIGNMENT_MEMBER, serde.SHARE_GROUP_TARGET_ASSIGNMENT_METADATA,
              serde.SHARE_GROUP_CURRENT_MEMBER_ASSIGNMENT, serde.SHARE_GROUP_STATE_PARTITION_METADATA)
_TOMBSTONE_ORDER = (serde.SHARE_GROUP_CURRENT_MEMBER_ASSIGNMENT, serde.SHARE_GROUP_TARGET_ASSIGNMENT_MEMBER,
                    serde.SHARE_GROUP_TARGET_ASSIGNMENT_METADATA, serde.SHARE_GROUP_MEMBER_METADATA,
                    serde.SHARE_GROUP_STATE_PARTITION_METADATA, serde.SHARE_GROUP_METADATA)


def _partitions(assignment: Assignment) -> list[dict]:
    return [{"topic_id": topic_id, "partitions": sorted(ps)} for topic_id, ps in sorted(assignment.items()) if ps]


def _assignment(entries: list[dict]) -> Assignment:
    return {bytes(e["topic_id"]): frozenset(e["partitions"]) for e in entries if e["partitions"]}


def _record(record_type: int, group_id: str, data: dict, member_id: str | None = None) -> tuple[bytes, bytes]:
    return serde.consumer_group_key(record_type, group_id, member_id), serde.consumer_group_value(record_type, data)


def records_of(group: ShareGroup) -> Records:
    """Every record the group is made of now (none for a deleted group)."""
    if group.dead:
        return {}
    group_id = group.group_id
    records: Records = {}
    if group.group_epoch != INITIAL_GROUP_EPOCH or group.assignment_epoch != INITIAL_GROUP_EPOCH:
        # A group no member ever joined (AlterShareGroupOffsets makes one) is record 15 alone.
        records.update((
            _record(serde.SHARE_GROUP_METADATA, group_id,
                    {"epoch": group.group_epoch, "metadata_hash": group.metadata_hash}),
            _record(serde.SHARE_GROUP_TARGET_ASSIGNMENT_METADATA, group_id,
                    {"assignment_epoch": group.assignment_epoch,
                     "assignment_timestamp": group.assignment_timestamp_ms}),
        ))
    state_key = serde.consumer_group_key(serde.SHARE_GROUP_STATE_PARTITION_METADATA, group_id)
    if group.initialized or group.initializing or group.deleting or state_key in group.persisted:
        # once written, record 15 stays (with empty lists) until the group is deleted
        records.update((_record(serde.SHARE_GROUP_STATE_PARTITION_METADATA, group_id, {
            "initializing_topics": [{"topic_id": topic_id, "topic_name": entry.name,
                                     "partitions": sorted(entry.partitions)}
                                    for topic_id, entry in sorted(group.initializing.items())],
            "initialized_topics": [{"topic_id": topic_id, "topic_name": name, "partitions": sorted(partitions)}
                                   for topic_id, (name, partitions) in sorted(group.initialized.items())],
            "deleting_topics": [{"topic_id": topic_id, "topic_name": name}
                                for topic_id, name in sorted(group.deleting.items())]}),))
    for member in group.members.values():
        records.update((
            _record(serde.SHARE_GROUP_MEMBER_METADATA, group_id, {
                "rack_id": member.rack_id, "client_id": member.client_id, "client_host": member.client_host,
                "subscribed_topic_names": sorted(member.subscribed_topic_names)}, member.member_id),
            _record(serde.SHARE_GROUP_CURRENT_MEMBER_ASSIGNMENT, group_id, {
                "member_epoch": member.member_epoch, "previous_member_epoch": member.previous_member_epoch,
                "state": member.state, "assigned_partitions": _partitions(member.assigned)}, member.member_id),
        ))
    for member_id, target in group.target_assignment.items():
        records.update((_record(serde.SHARE_GROUP_TARGET_ASSIGNMENT_MEMBER, group_id,
                                {"topic_partitions": _partitions(target)}, member_id),))
    return records


def changes(persisted: Records, current: Records) -> list[tuple[bytes, bytes | None]]:
    """The records to append so that the log, after `persisted`, says `current`."""
    # A leaving member's tombstones come before the group epoch it moves (shareGroupFenceMember).
    return serde.ordered_changes(persisted, current, _PUT_ORDER, _TOMBSTONE_ORDER, tombstones_first=True)


def load(group_id: str, records: dict[ConsumerGroupRecordKey, bytes], now_ms: int) -> ShareGroup | None:
    """The group the last (non-tombstone) record of every key describes; None when none is
    left. Partitions still initializing are retried from `now_ms` on, as Kafka stamps them at
    replay. Raises serde.RecordFormatError for a value that does not decode."""
    if not records:
        return None
    group = ShareGroup(group_id)
    members: dict[str, dict] = {}
    for key, value in records.items():
        data = serde.read_consumer_group_value(key.record_type, value)
        if key.record_type == serde.SHARE_GROUP_METADATA:
            group.group_epoch, group.metadata_hash = data["epoch"], data["metadata_hash"]
        elif key.record_type == serde.SHARE_GROUP_TARGET_ASSIGNMENT_METADATA:
            group.assignment_epoch = data["assignment_epoch"]
            group.assignment_timestamp_ms = data.get("assignment_timestamp", 0)
        elif key.record_type == serde.SHARE_GROUP_TARGET_ASSIGNMENT_MEMBER:
            group.target_assignment[key.member_id] = _assignment(data["topic_partitions"])
        elif key.record_type == serde.SHARE_GROUP_STATE_PARTITION_METADATA:
            for entry in data["initialized_topics"]:
                group.initialized[bytes(entry["topic_id"])] = (entry["topic_name"], frozenset(entry["partitions"]))
            for entry in data["initializing_topics"]:
                group.initializing[bytes(entry["topic_id"])] = InitializingPartitions(
                    entry["topic_name"], frozenset(entry["partitions"]), now_ms)
            for entry in data["deleting_topics"]:
                group.deleting[bytes(entry["topic_id"])] = entry["topic_name"]
        else:
            members.setdefault(key.member_id, {}).update(data)
    for member_id, data in sorted(members.items()):
        group.members[member_id] = ShareGroupMember(
            member_id, data.get("rack_id"), data.get("client_id", ""), data.get("client_host", ""),
            tuple(data.get("subscribed_topic_names", ())), data.get("member_epoch", 0),
            data.get("previous_member_epoch", -1), data.get("state", 0),
            _assignment(data.get("assigned_partitions", [])))
    group.persisted = {serde.consumer_group_key(key.record_type, group_id, key.member_id): value
                       for key, value in records.items()}  # what the log holds (record 15 with empty lists too)
    return group
