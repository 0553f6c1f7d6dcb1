"""A consumer group as the records Kafka keeps of it in `__consumer_offsets`, and back.

Kafka 4.1+ writes six record types for a KIP-848 group (GroupCoordinatorRecordHelpers):
the group epoch with the metadata hash of its subscribed topics (3), each
member's subscription (5), the target assignment epoch with the time it was
computed (6), each member's target (7), each member's current assignment (8)
and the topics each subscribed regex was last resolved to (16).
The subscription metadata record of 4.0 (4) is read but no longer written: a
group loaded with one tombstones it at its next write, as Kafka does.
`records_of(group)` is the full set a group is made of now;
`changes(persisted, current)` is what to append so that the log says the same:
new or changed records, in the order Kafka writes them (subscription, resolved
regexes, epoch, targets, target epoch, current assignments), then tombstones for records that
are gone (members before the group's own records, so a load never sees members
of a deleted group). `load(...)` turns the last record of every key back into a
group.
"""

from __future__ import annotations

from franz.coordinator.group import group_coordinator_record_serde as serde
from franz.coordinator.group.consumer_group import (
    INITIAL_GROUP_EPOCH,
    Assignment,
    ClassicMemberMetadata,
    ConsumerGroup,
    ConsumerGroupMember,
    MemberState,
    ResolvedRegularExpression,
)
from franz.coordinator.group.group_coordinator_record_serde import ConsumerGroupRecordKey
from franz.coordinator.group.group_record_writer import cached_records

Records = dict[bytes, bytes]  # key bytes -> value bytes

_PUT_ORDER = (serde.CONSUMER_GROUP_MEMBER_METADATA, serde.CONSUMER_GROUP_REGULAR_EXPRESSION,
              serde.CONSUMER_GROUP_PARTITION_METADATA, serde.CONSUMER_GROUP_METADATA,
              serde.CONSUMER_GROUP_TARGET_ASSIGNMENT_MEMBER, serde.CONSUMER_GROUP_TARGET_ASSIGNMENT_METADATA,
              serde.CONSUMER_GROUP_CURRENT_MEMBER_ASSIGNMENT)
# ConsumerGroup.createGroupTombstoneRecords' order for a deleted group; a leaving member's three
# (current, target, subscription) keep it too.
_TOMBSTONE_ORDER = (serde.CONSUMER_GROUP_CURRENT_MEMBER_ASSIGNMENT, serde.CONSUMER_GROUP_TARGET_ASSIGNMENT_MEMBER,
                    serde.CONSUMER_GROUP_TARGET_ASSIGNMENT_METADATA, serde.CONSUMER_GROUP_MEMBER_METADATA,
                    serde.CONSUMER_GROUP_REGULAR_EXPRESSION, serde.CONSUMER_GROUP_PARTITION_METADATA,
                    serde.CONSUMER_GROUP_METADATA)
# MemberState as Kafka numbers it in ConsumerGroupCurrentMemberAssignmentValue.State
_STATE_CODES = {MemberState.STABLE: 0, MemberState.UNREVOKED_PARTITIONS: 1, MemberState.UNRELEASED_PARTITIONS: 2}
_STATES = {code: state for state, code in _STATE_CODES.items()}


def _partitions(assignment: Assignment) -> list[dict]:
    return [{"topic_id": topic_id, "partitions": sorted(ps)} for topic_id, ps in sorted(assignment.items())]


def _partitions_with_epochs(member: ConsumerGroupMember, assignment: Assignment) -> list[dict]:
    """TopicPartitions with the tagged AssignmentEpochs (KIP-1251), one per partition."""
    return [{"topic_id": topic_id, "partitions": sorted(ps),
             "assignment_epochs": [member.assignment_epoch(topic_id, p) for p in sorted(ps)]}
            for topic_id, ps in sorted(assignment.items())]


def _assignment_epochs(entries: list[dict], member_epoch: int) -> dict[tuple[bytes, int], int]:
    """Utils.assignmentFromTopicPartitions: the record's epochs, or (a record written before
    4.3, or a list of the wrong length) the member epoch, never below 0."""
    epochs = {}
    for entry in entries:
        given = entry.get("assignment_epochs")
        partitions = entry["partitions"]
        if given is None or len(given) != len(partitions):
            given = [max(member_epoch, 0)] * len(partitions)
        epochs.update(((bytes(entry["topic_id"]), p), e) for p, e in zip(partitions, given))
    return epochs


def _assignment(entries: list[dict]) -> dict[bytes, frozenset[int]]:
    return {bytes(e["topic_id"]): frozenset(e["partitions"]) for e in entries if e["partitions"]}


def records_of(group: ConsumerGroup) -> Records:
    """Every record the group is made of now (none for a dead group)."""
    if group.dead:
        return {}
    group_id = group.group_id
    records: Records = {}
    # Kafka writes the epoch record when it bumps the group epoch and the target epoch record when
    # it computes a target: a group still at its initial epochs (a first member subscribing to
    # nothing yet) has neither, and a load without them gives the initial epochs back.
    epoch_key = serde.consumer_group_key(serde.CONSUMER_GROUP_METADATA, group_id)
    if group.group_epoch != INITIAL_GROUP_EPOCH or group.epoch_records_required or epoch_key in group.persisted:
        records[epoch_key] = serde.consumer_group_value(serde.CONSUMER_GROUP_METADATA, {
            "epoch": group.group_epoch, "metadata_hash": group.metadata_hash})
    target_key = serde.consumer_group_key(serde.CONSUMER_GROUP_TARGET_ASSIGNMENT_METADATA, group_id)
    if ((group.assignment_epoch, group.assignment_timestamp_ms) != (INITIAL_GROUP_EPOCH, 0)
            or group.epoch_records_required or target_key in group.persisted):
        records[target_key] = serde.consumer_group_value(serde.CONSUMER_GROUP_TARGET_ASSIGNMENT_METADATA, {
            "assignment_epoch": group.assignment_epoch, "assignment_timestamp": group.assignment_timestamp_ms})
    # A heartbeat changes one member: the records of the others are reused, encoded once per
    # value of their (immutable) member or target object, so a heartbeat costs O(1) encodings.
    cache, group.encoded_records = group.encoded_records, {}
    for member in group.members.values():
        records.update(cached_records(cache, group.encoded_records, ("member", member.member_id), member,
                               lambda m=member: _member_records(group_id, m)))
    for member_id, target in group.target_assignment.items():
        records.update(cached_records(cache, group.encoded_records, ("target", member_id), target,
                               lambda m=member_id, t=target: _target_records(group_id, m, t)))
    for regex, resolved in group.resolved_regexes.items():
        records.update(cached_records(cache, group.encoded_records, ("regex", regex), resolved,
                               lambda r=regex, v=resolved: _regex_records(group_id, r, v)))
    return records


def _target_records(group_id: str, member_id: str, target: Assignment) -> Records:
    return {serde.consumer_group_key(serde.CONSUMER_GROUP_TARGET_ASSIGNMENT_MEMBER, group_id, member_id):
            serde.consumer_group_value(serde.CONSUMER_GROUP_TARGET_ASSIGNMENT_MEMBER,
                                       {"topic_partitions": _partitions(target)})}


def _regex_records(group_id: str, regex: str, resolved: ResolvedRegularExpression) -> Records:
    return {serde.consumer_group_key(serde.CONSUMER_GROUP_REGULAR_EXPRESSION, group_id, regular_expression=regex):
            serde.consumer_group_value(serde.CONSUMER_GROUP_REGULAR_EXPRESSION, {
                "topics": sorted(resolved.topics), "version": resolved.version, "timestamp": resolved.timestamp_ms})}


def _member_records(group_id: str, member: ConsumerGroupMember) -> Records:
    return {
        serde.consumer_group_key(serde.CONSUMER_GROUP_MEMBER_METADATA, group_id, member.member_id):
            serde.consumer_group_value(serde.CONSUMER_GROUP_MEMBER_METADATA, {
                "instance_id": member.instance_id, "rack_id": member.rack_id, "client_id": member.client_id,
                "client_host": member.client_host, "subscribed_topic_names": list(member.subscribed_topic_names),
                "subscribed_topic_regex": member.subscribed_topic_regex,
                "rebalance_timeout_ms": member.rebalance_timeout_ms, "server_assignor": member.server_assignor,
                "classic_member_metadata": None if member.classic is None else {
                    "session_timeout_ms": member.classic.session_timeout_ms,
                    "supported_protocols": [{"name": name, "metadata": metadata}
                                            for name, metadata in member.classic.supported_protocols]}}),
        serde.consumer_group_key(serde.CONSUMER_GROUP_CURRENT_MEMBER_ASSIGNMENT, group_id, member.member_id):
            serde.consumer_group_value(serde.CONSUMER_GROUP_CURRENT_MEMBER_ASSIGNMENT, {
                "member_epoch": member.member_epoch, "previous_member_epoch": member.previous_member_epoch,
                "state": _STATE_CODES[member.state],
                "assigned_partitions": _partitions_with_epochs(member, member.assigned),
                "partitions_pending_revocation": _partitions_with_epochs(member, member.pending_revocation)}),
    }


def subscription_metadata_key(group_id: str) -> bytes:
    """The key of the 4.0 subscription metadata record, which a write of 4.1+ tombstones."""
    return serde.consumer_group_key(serde.CONSUMER_GROUP_PARTITION_METADATA, group_id)


def changes(persisted: Records, current: Records) -> list[tuple[bytes, bytes | None]]:
    """The records to append so that the log, after `persisted`, says `current`."""
    return serde.ordered_changes(persisted, current, _PUT_ORDER, _TOMBSTONE_ORDER)


def load(group_id: str, records: dict[ConsumerGroupRecordKey, bytes]) -> ConsumerGroup | None:
    """The group the last (non-tombstone) record of every key describes; None when none is left.
    Raises serde.RecordFormatError for a value that does not decode."""
    if not records:
        return None
    group = ConsumerGroup(group_id)
    members: dict[str, dict] = {}
    for key, value in records.items():
        data = serde.read_consumer_group_value(key.record_type, value)
        if key.record_type == serde.CONSUMER_GROUP_METADATA:
            group.group_epoch = data["epoch"]
            group.metadata_hash = data.get("metadata_hash", 0)
        elif key.record_type == serde.CONSUMER_GROUP_PARTITION_METADATA:
            group.has_subscription_metadata_record = True
        elif key.record_type == serde.CONSUMER_GROUP_TARGET_ASSIGNMENT_METADATA:
            group.assignment_epoch = data["assignment_epoch"]
            group.assignment_timestamp_ms = data.get("assignment_timestamp", 0)
        elif key.record_type == serde.CONSUMER_GROUP_TARGET_ASSIGNMENT_MEMBER:
            group.target_assignment[key.member_id] = _assignment(data["topic_partitions"])
        elif key.record_type == serde.CONSUMER_GROUP_REGULAR_EXPRESSION:
            assert key.regular_expression is not None
            group.resolved_regexes[key.regular_expression] = ResolvedRegularExpression(
                frozenset(data["topics"]), data["version"], data["timestamp"])
        else:
            members.setdefault(key.member_id, {}).update(data)
    for member_id, data in sorted(members.items()):
        member_epoch = data.get("member_epoch", 0)
        held = data.get("assigned_partitions", []) + data.get("partitions_pending_revocation", [])
        group.update_member(ConsumerGroupMember(
            member_id, data.get("instance_id"), data.get("rack_id"), data.get("rebalance_timeout_ms", -1),
            data.get("client_id", ""), data.get("client_host", ""), tuple(data.get("subscribed_topic_names", ())),
            data.get("subscribed_topic_regex"), data.get("server_assignor"), member_epoch,
            data.get("previous_member_epoch", 0), _STATES.get(data.get("state", 0), MemberState.STABLE),
            _assignment(data.get("assigned_partitions", [])),
            _assignment(data.get("partitions_pending_revocation", [])), _assignment_epochs(held, member_epoch),
            _classic_metadata(data.get("classic_member_metadata"))))
    # what the log holds: records_of keeps epoch records the log has even at the initial epochs
    group.persisted = {serde.consumer_group_key(key.record_type, group_id, key.member_id,
                                                regular_expression=key.regular_expression): value
                       for key, value in records.items()}
    return group


def _classic_metadata(data: dict | None) -> ClassicMemberMetadata | None:
    if data is None:
        return None
    return ClassicMemberMetadata(data["session_timeout_ms"], tuple(
        (p["name"], bytes(p["metadata"])) for p in data["supported_protocols"]))
