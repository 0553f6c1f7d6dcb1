"""The records of `__consumer_offsets` (GroupCoordinatorRecordSerde and the record JSON specs).

Every record's key and value start with an int16 version; the key's version is
the record type, so a reader knows which schema the rest follows:

    key   := int16 key_version  key_body
    value := int16 value_version value_body  |  null (a tombstone)

    key version 0, 1  OffsetCommitKey    group string, topic string, partition int32
    key version 2     GroupMetadataKey   group string
    key version 3-8   the consumer group (KIP-848) records: group epoch,
                      subscription metadata, member subscription, target
                      assignment epoch, target assignment of a member, current
                      assignment of a member (keys: group string [, member string])
    key version 16    ConsumerGroupRegularExpressionKey  group string, regex
                      string: the topics a subscribed regex resolved to
    key version 17, 19-23  the streams group (KIP-1071) records: group epoch,
                      member metadata, target assignment epoch, target
                      assignment of a member, current assignment of a member,
                      topology (keys: group string [, member string])

Values are written as Kafka 4.x writes them: OffsetCommitValue v3 (v1 when the
commit carried an explicit expire timestamp, OffsetCommit v2-4 with a
retention time) and GroupMetadataValue v3, the newest non-flexible versions;
every version 0-4 of both is read. The consumer group records have value
version 0 (flexible), and so have the share group (10-15) and streams group
records. Keys of record types 4.3 no longer has (9 and 18, the share and
streams groups' partition metadata of 4.0) are recognised as unknown and
skipped by the loader.

The schemas are Kafka's JSON specs (group-coordinator/src/main/resources/
common/message/*.json) in franz's schema language, compiled by the protocol
codegen; the `key=` of each entry is the record's key version.

Placement: a group lives on partition abs(String.hashCode(group_id)) % n of
`__consumer_offsets` (Kafka's Utils.abs is `x & 0x7fffffff`).
"""

from __future__ import annotations

import dataclasses
import struct
from typing import Any, Final

from franz.common.utils import java_string_hash, partition_for_key  # noqa: F401 - re-exported
from franz.coordinator.coordinator_record_serde import CoordinatorRecordSerde, record_schemas, version_prefixed_bytes
from franz.protocol.codegen import MessageCodec, MessageDecodeError
from franz.protocol.schema import parse_schemas

OFFSET_COMMIT_KEY_VERSION: Final = 1
GROUP_METADATA_KEY_VERSION: Final = 2
OFFSET_COMMIT_VALUE_VERSION: Final = 4  # 4.x: flexible, with the topic id (GroupCoordinatorRecordHelpers)
NO_TOPIC_ID: Final = bytes(16)
OFFSET_COMMIT_VALUE_VERSION_WITH_EXPIRE: Final = 1
GROUP_METADATA_VALUE_VERSION: Final = 3
RECORD_SIZE_BYTES_MAX: Final = 64 * 1024 * 1024
# Key versions (record types) of the consumer group records, Kafka's CoordinatorRecordType.
CONSUMER_GROUP_METADATA: Final = 3
CONSUMER_GROUP_PARTITION_METADATA: Final = 4
CONSUMER_GROUP_MEMBER_METADATA: Final = 5
CONSUMER_GROUP_TARGET_ASSIGNMENT_METADATA: Final = 6
CONSUMER_GROUP_TARGET_ASSIGNMENT_MEMBER: Final = 7
CONSUMER_GROUP_CURRENT_MEMBER_ASSIGNMENT: Final = 8
_CONSUMER_GROUP_RECORDS: Final = {
    CONSUMER_GROUP_METADATA: "ConsumerGroupMetadata",
    CONSUMER_GROUP_PARTITION_METADATA: "ConsumerGroupPartitionMetadata",
    CONSUMER_GROUP_MEMBER_METADATA: "ConsumerGroupMemberMetadata",
    CONSUMER_GROUP_TARGET_ASSIGNMENT_METADATA: "ConsumerGroupTargetAssignmentMetadata",
    CONSUMER_GROUP_TARGET_ASSIGNMENT_MEMBER: "ConsumerGroupTargetAssignmentMember",
    CONSUMER_GROUP_CURRENT_MEMBER_ASSIGNMENT: "ConsumerGroupCurrentMemberAssignment",
}
# Record types 10-15: the share group records (KIP-932) as Kafka 4.3 writes them. Type 9
# (ShareGroupPartitionMetadata) was dropped before 4.1 and is skipped as unknown.
SHARE_GROUP_MEMBER_METADATA: Final = 10
SHARE_GROUP_METADATA: Final = 11
SHARE_GROUP_TARGET_ASSIGNMENT_METADATA: Final = 12
SHARE_GROUP_TARGET_ASSIGNMENT_MEMBER: Final = 13
SHARE_GROUP_CURRENT_MEMBER_ASSIGNMENT: Final = 14
SHARE_GROUP_STATE_PARTITION_METADATA: Final = 15
_CONSUMER_GROUP_RECORDS.update({
    SHARE_GROUP_MEMBER_METADATA: "ShareGroupMemberMetadata",
    SHARE_GROUP_METADATA: "ShareGroupMetadata",
    SHARE_GROUP_TARGET_ASSIGNMENT_METADATA: "ShareGroupTargetAssignmentMetadata",
    SHARE_GROUP_TARGET_ASSIGNMENT_MEMBER: "ShareGroupTargetAssignmentMember",
    SHARE_GROUP_CURRENT_MEMBER_ASSIGNMENT: "ShareGroupCurrentMemberAssignment",
    SHARE_GROUP_STATE_PARTITION_METADATA: "ShareGroupStatePartitionMetadata",
})
SHARE_GROUP_RECORD_TYPES: Final = frozenset(range(SHARE_GROUP_MEMBER_METADATA, SHARE_GROUP_STATE_PARTITION_METADATA + 1))
CONSUMER_GROUP_REGULAR_EXPRESSION: Final = 16
_CONSUMER_GROUP_RECORDS[CONSUMER_GROUP_REGULAR_EXPRESSION] = "ConsumerGroupRegularExpression"
# Record types 17 and 19-23: the streams group records (KIP-1071) as Kafka 4.3 writes them. Type 18
# (StreamsGroupPartitionMetadata) was dropped before 4.1 and is skipped as unknown.
STREAMS_GROUP_METADATA: Final = 17
STREAMS_GROUP_MEMBER_METADATA: Final = 19
STREAMS_GROUP_TARGET_ASSIGNMENT_METADATA: Final = 20
STREAMS_GROUP_TARGET_ASSIGNMENT_MEMBER: Final = 21
STREAMS_GROUP_CURRENT_MEMBER_ASSIGNMENT: Final = 22
STREAMS_GROUP_TOPOLOGY: Final = 23
_CONSUMER_GROUP_RECORDS.update({
    STREAMS_GROUP_METADATA: "StreamsGroupMetadata",
    STREAMS_GROUP_MEMBER_METADATA: "StreamsGroupMemberMetadata",
    STREAMS_GROUP_TARGET_ASSIGNMENT_METADATA: "StreamsGroupTargetAssignmentMetadata",
    STREAMS_GROUP_TARGET_ASSIGNMENT_MEMBER: "StreamsGroupTargetAssignmentMember",
    STREAMS_GROUP_CURRENT_MEMBER_ASSIGNMENT: "StreamsGroupCurrentMemberAssignment",
    STREAMS_GROUP_TOPOLOGY: "StreamsGroupTopology",
})
STREAMS_GROUP_RECORD_TYPES: Final = frozenset({
    STREAMS_GROUP_METADATA, STREAMS_GROUP_MEMBER_METADATA, STREAMS_GROUP_TARGET_ASSIGNMENT_METADATA,
    STREAMS_GROUP_TARGET_ASSIGNMENT_MEMBER, STREAMS_GROUP_CURRENT_MEMBER_ASSIGNMENT, STREAMS_GROUP_TOPOLOGY})
_PER_MEMBER: Final = frozenset({CONSUMER_GROUP_MEMBER_METADATA, CONSUMER_GROUP_TARGET_ASSIGNMENT_MEMBER,
                                CONSUMER_GROUP_CURRENT_MEMBER_ASSIGNMENT, SHARE_GROUP_MEMBER_METADATA,
                                SHARE_GROUP_TARGET_ASSIGNMENT_MEMBER, SHARE_GROUP_CURRENT_MEMBER_ASSIGNMENT,
                                STREAMS_GROUP_MEMBER_METADATA, STREAMS_GROUP_TARGET_ASSIGNMENT_MEMBER,
                                STREAMS_GROUP_CURRENT_MEMBER_ASSIGNMENT})

_SCHEMAS = """\
OffsetCommitKey key=1 versions=0-1
 request
    group string
    topic string
    partition int32
 response

OffsetCommitValue key=1 versions=0-4 flex=4+
 request
    offset int64
    leader_epoch int32 3+ default=-1
    metadata string
    commit_timestamp int64
    expire_timestamp int64 1 default=-1
    topic_id uuid 4+ tag=0
 response

GroupMetadataKey key=2 versions=2
 request
    group string
 response

GroupMetadataValue key=2 versions=0-4 flex=4+
 request
    protocol_type string
    generation int32
    protocol string null
    leader string null
    current_state_timestamp int64 2+ default=-1
    members []
      member_id string
      group_instance_id string 3+ null default=null
      client_id string
      client_host string
      rebalance_timeout int32 1+ default=-1
      session_timeout int32
      subscription bytes
      assignment bytes
 response

ConsumerGroupMetadataKey key=3 versions=3
 request
    group_id string
 response

ConsumerGroupMetadataValue key=3 versions=0 flex=0+
 request
    epoch int32
    metadata_hash int64 tag=0 default=0
 response

ConsumerGroupPartitionMetadataKey key=4 versions=4
 request
    group_id string
 response

ConsumerGroupPartitionMetadataValue key=4 versions=0 flex=0+
 request
    topics []
      topic_id uuid
      topic_name string
      num_partitions int32
      partition_metadata []
        partition int32
        racks []string
 response

ConsumerGroupMemberMetadataKey key=5 versions=5
 request
    group_id string
    member_id string
 response

ConsumerGroupMemberMetadataValue key=5 versions=0 flex=0+
 request
    instance_id string null
    rack_id string null
    client_id string
    client_host string
    subscribed_topic_names []string
    subscribed_topic_regex string null
    rebalance_timeout_ms int32 default=-1
    server_assignor string null
    classic_member_metadata {} null tag=0 default=null
      session_timeout_ms int32
      supported_protocols []
        name string
        metadata bytes
 response

ConsumerGroupTargetAssignmentMetadataKey key=6 versions=6
 request
    group_id string
 response

ConsumerGroupTargetAssignmentMetadataValue key=6 versions=0 flex=0+
 request
    assignment_epoch int32
    assignment_timestamp int64 tag=0 default=0
 response

ConsumerGroupTargetAssignmentMemberKey key=7 versions=7
 request
    group_id string
    member_id string
 response

ConsumerGroupTargetAssignmentMemberValue key=7 versions=0 flex=0+
 request
    topic_partitions []
      topic_id uuid
      partitions []int32
 response

ConsumerGroupCurrentMemberAssignmentKey key=8 versions=8
 request
    group_id string
    member_id string
 response

ConsumerGroupCurrentMemberAssignmentValue key=8 versions=0 flex=0+
 request
    member_epoch int32
    previous_member_epoch int32
    state int8
    assigned_partitions []
      topic_id uuid
      partitions []int32
      assignment_epochs []int32 tag=0 null default=null
    partitions_pending_revocation []
      topic_id uuid
      partitions []int32
      assignment_epochs []int32 tag=0 null default=null
 response

ConsumerGroupRegularExpressionKey key=16 versions=16
 request
    group_id string
    regular_expression string
 response

ConsumerGroupRegularExpressionValue key=16 versions=0 flex=0+
 request
    topics []string
    version int64
    timestamp int64
 response

ShareGroupMemberMetadataKey key=10 versions=10
 request
    group_id string
    member_id string
 response

ShareGroupMemberMetadataValue key=10 versions=0 flex=0+
 request
    rack_id string null
    client_id string
    client_host string
    subscribed_topic_names []string
 response

ShareGroupMetadataKey key=11 versions=11
 request
    group_id string
 response

ShareGroupMetadataValue key=11 versions=0 flex=0+
 request
    epoch int32
    metadata_hash int64
 response

ShareGroupTargetAssignmentMetadataKey key=12 versions=12
 request
    group_id string
 response

ShareGroupTargetAssignmentMetadataValue key=12 versions=0 flex=0+
 request
    assignment_epoch int32
    assignment_timestamp int64 tag=0 default=0
 response

ShareGroupTargetAssignmentMemberKey key=13 versions=13
 request
    group_id string
    member_id string
 response

ShareGroupTargetAssignmentMemberValue key=13 versions=0 flex=0+
 request
    topic_partitions []
      topic_id uuid
      partitions []int32
 response

ShareGroupCurrentMemberAssignmentKey key=14 versions=14
 request
    group_id string
    member_id string
 response

ShareGroupCurrentMemberAssignmentValue key=14 versions=0 flex=0+
 request
    member_epoch int32
    previous_member_epoch int32
    state int8
    assigned_partitions []
      topic_id uuid
      partitions []int32
 response

ShareGroupStatePartitionMetadataKey key=15 versions=15
 request
    group_id string
 response

ShareGroupStatePartitionMetadataValue key=15 versions=0 flex=0+
 request
    initializing_topics []
      topic_id uuid
      topic_name string
      partitions []int32
    initialized_topics []
      topic_id uuid
      topic_name string
      partitions []int32
    deleting_topics []
      topic_id uuid
      topic_name string
 response

"""

# The streams group records. Kafka's specs share the TaskIds and TopicInfo structs between fields
# (commonStructs); here they are written once and put in place of their names.
_STREAMS_TASK_IDS: Final = """\
      subtopology_id string
      partitions []int32
"""
_STREAMS_TASK_IDS_WITH_EPOCHS: Final = _STREAMS_TASK_IDS + """\
      assignment_epochs []int32 null tag=0 default=null
"""
_STREAMS_TOPIC_INFO: Final = """\
        name string
        partitions int32
        replication_factor int16
        topic_configs []
          key string
          value string
"""
_STREAMS_SCHEMAS: Final = """\
StreamsGroupMetadataKey key=17 versions=17
 request
    group_id string
 response

StreamsGroupMetadataValue key=17 versions=0 flex=0+
 request
    epoch int32
    metadata_hash int64
    validated_topology_epoch int32 tag=0 default=-1
    last_assignment_configs [] null tag=1 default=null
      key string
      value string
 response

StreamsGroupMemberMetadataKey key=19 versions=19
 request
    group_id string
    member_id string
 response

StreamsGroupMemberMetadataValue key=19 versions=0 flex=0+
 request
    instance_id string null
    rack_id string null
    client_id string
    client_host string
    rebalance_timeout_ms int32 default=-1
    topology_epoch int32
    process_id string
    user_endpoint {} null default=null
      host string
      port uint16
    client_tags []
      key string
      value string
 response

StreamsGroupTargetAssignmentMetadataKey key=20 versions=20
 request
    group_id string
 response

StreamsGroupTargetAssignmentMetadataValue key=20 versions=0 flex=0+
 request
    assignment_epoch int32
    assignment_timestamp int64 tag=0 default=0
 response

StreamsGroupTargetAssignmentMemberKey key=21 versions=21
 request
    group_id string
    member_id string
 response

StreamsGroupTargetAssignmentMemberValue key=21 versions=0 flex=0+
 request
    active_tasks []
{task_ids}    standby_tasks []
{task_ids}    warmup_tasks []
{task_ids} response

StreamsGroupCurrentMemberAssignmentKey key=22 versions=22
 request
    group_id string
    member_id string
 response

StreamsGroupCurrentMemberAssignmentValue key=22 versions=0 flex=0+
 request
    member_epoch int32
    previous_member_epoch int32
    state int8
    active_tasks []
{task_ids_with_epochs}    standby_tasks []
{task_ids_with_epochs}    warmup_tasks []
{task_ids_with_epochs}    active_tasks_pending_revocation []
{task_ids_with_epochs}    standby_tasks_pending_revocation []
{task_ids_with_epochs}    warmup_tasks_pending_revocation []
{task_ids_with_epochs} response

StreamsGroupTopologyKey key=23 versions=23
 request
    group_id string
 response

StreamsGroupTopologyValue key=23 versions=0 flex=0+
 request
    epoch int32
    subtopologies []
      subtopology_id string
      source_topics []string
      source_topic_regex []string
      state_changelog_topics []
{topic_info}      repartition_sink_topics []string
      repartition_source_topics []
{topic_info}      copartition_groups []
        source_topics []int16
        source_topic_regex []int16
        repartition_source_topics []int16
 response
""".replace("{task_ids}", _STREAMS_TASK_IDS).replace(
    "{task_ids_with_epochs}", _STREAMS_TASK_IDS_WITH_EPOCHS).replace("{topic_info}", _STREAMS_TOPIC_INFO)

_CODECS: Final = {schema.name: MessageCodec(schema) for schema in parse_schemas(_SCHEMAS + "\n" + _STREAMS_SCHEMAS)}
_VERSION: Final = struct.Struct(">h")
LEGACY_OFFSET_COMMIT: Final = 0  # a key of version 0: LegacyOffsetCommitKey, whose value is version 0 alone
# Every record type as GroupCoordinatorRecordSerde reads it, for tools (dump-log's offsets decoder).
RECORD_SERDE: Final = CoordinatorRecordSerde({
    LEGACY_OFFSET_COMMIT: record_schemas(_CODECS["OffsetCommitKey"], _CODECS["OffsetCommitValue"], (0, 0)),
    OFFSET_COMMIT_KEY_VERSION: record_schemas(_CODECS["OffsetCommitKey"], _CODECS["OffsetCommitValue"]),
    GROUP_METADATA_KEY_VERSION: record_schemas(_CODECS["GroupMetadataKey"], _CODECS["GroupMetadataValue"]),
    **{record_type: record_schemas(_CODECS[name + "Key"], _CODECS[name + "Value"])
       for record_type, name in _CONSUMER_GROUP_RECORDS.items()}})


class RecordFormatError(ValueError):
    """A key or value that no known schema version reads."""


def _encode(name: str, version: int, data: dict) -> bytes:
    return version_prefixed_bytes(_CODECS[name], version, data)


def _decode(name: str, buffer: bytes, low: int, high: int) -> tuple[int, dict]:
    if len(buffer) < 2:
        raise RecordFormatError(f"{name}: {len(buffer)} bytes, no version")
    version = _VERSION.unpack_from(buffer, 0)[0]
    if not low <= version <= high:
        raise RecordFormatError(f"{name}: unknown version {version}")
    try:
        data, _ = _CODECS[name].decode("request", version, memoryview(buffer)[2:])
    except MessageDecodeError as exc:
        raise RecordFormatError(str(exc)) from None
    return version, data


# -- the records as franz uses them ----------------------------------------------


@dataclasses.dataclass(frozen=True, slots=True)
class OffsetCommitKey:
    group: str
    topic: str
    partition: int


@dataclasses.dataclass(frozen=True, slots=True)
class GroupMetadataKey:
    group: str


@dataclasses.dataclass(frozen=True, slots=True)
class OffsetAndMetadata:
    """A committed offset (OffsetAndMetadata): expire_timestamp_ms is None unless
    the commit asked for its own retention; topic_id is the id of the topic it was committed
    for (zeros when unknown: written before 4.x, or with a retention)."""
    committed_offset: int
    leader_epoch: int
    metadata: str
    commit_timestamp_ms: int
    expire_timestamp_ms: int | None = None
    topic_id: bytes = NO_TOPIC_ID


@dataclasses.dataclass(frozen=True, slots=True)
class ConsumerGroupRecordKey:
    """The key of a consumer group record: its type (key version), group and, for the
    per-member types, the member; for a resolved regex, the regex."""
    record_type: int
    group: str
    member_id: str | None = None
    regular_expression: str | None = None


def consumer_group_key(record_type: int, group: str, member_id: str | None = None,
                       regular_expression: str | None = None) -> bytes:
    assert (member_id is not None) == (record_type in _PER_MEMBER)
    assert (regular_expression is not None) == (record_type == CONSUMER_GROUP_REGULAR_EXPRESSION)
    data = {"group_id": group}
    if member_id is not None:
        data["member_id"] = member_id
    if regular_expression is not None:
        data["regular_expression"] = regular_expression
    return _encode(_CONSUMER_GROUP_RECORDS[record_type] + "Key", record_type, data)


def consumer_group_value(record_type: int, data: dict) -> bytes:
    """Value version 0 of the record type, from a dict in the schema's field names."""
    return _encode(_CONSUMER_GROUP_RECORDS[record_type] + "Value", 0, data)


def read_consumer_group_value(record_type: int, buffer: bytes) -> dict:
    return _decode(_CONSUMER_GROUP_RECORDS[record_type] + "Value", buffer, 0, 0)[1]


def ordered_changes(persisted: dict[bytes, bytes], current: dict[bytes, bytes], put_order: tuple[int, ...],
                    tombstone_order: tuple[int, ...],
                    tombstones_first: bool = False) -> list[tuple[bytes, bytes | None]]:
    """The records to append so that the log, after `persisted`, says `current`: new or changed
    records in `put_order` of their types, and tombstones of the keys that are gone in
    `tombstone_order`, after the new records or (`tombstones_first`) before them."""
    def record_type(key: bytes) -> int:
        return _VERSION.unpack_from(key, 0)[0]

    puts = [(key, value) for key, value in current.items() if persisted.get(key) != value]
    gone: list[tuple[bytes, bytes | None]] = [(key, None) for key in persisted if key not in current]
    puts.sort(key=lambda entry: put_order.index(record_type(entry[0])))
    gone.sort(key=lambda entry: tombstone_order.index(record_type(entry[0])))
    return [*gone, *puts] if tombstones_first else [*puts, *gone]


def offset_commit_key(group: str, topic: str, partition: int) -> bytes:
    return _encode("OffsetCommitKey", OFFSET_COMMIT_KEY_VERSION,
                   {"group": group, "topic": topic, "partition": partition})


def offset_commit_value(offset: OffsetAndMetadata) -> bytes:
    if offset.expire_timestamp_ms is not None:
        return _encode("OffsetCommitValue", OFFSET_COMMIT_VALUE_VERSION_WITH_EXPIRE, {
            "offset": offset.committed_offset, "metadata": offset.metadata,
            "commit_timestamp": offset.commit_timestamp_ms, "expire_timestamp": offset.expire_timestamp_ms})
    return _encode("OffsetCommitValue", OFFSET_COMMIT_VALUE_VERSION, {
        "offset": offset.committed_offset, "leader_epoch": offset.leader_epoch, "metadata": offset.metadata,
        "commit_timestamp": offset.commit_timestamp_ms, "topic_id": offset.topic_id})


def group_metadata_key(group: str) -> bytes:
    return _encode("GroupMetadataKey", GROUP_METADATA_KEY_VERSION, {"group": group})


def group_metadata_value(value: dict) -> bytes:
    """`value` in GroupMetadataValue's field names (members as dicts)."""
    return _encode("GroupMetadataValue", GROUP_METADATA_VALUE_VERSION, value)


def read_key(buffer: bytes) -> OffsetCommitKey | GroupMetadataKey | ConsumerGroupRecordKey | None:
    """The key of a record; None for record types the group coordinator does not own."""
    if len(buffer) < 2:
        raise RecordFormatError(f"record key of {len(buffer)} bytes")
    version = _VERSION.unpack_from(buffer, 0)[0]
    if version in (0, 1):
        _, data = _decode("OffsetCommitKey", buffer, 0, 1)
        return OffsetCommitKey(data["group"], data["topic"], data["partition"])
    if version == 2:
        _, data = _decode("GroupMetadataKey", buffer, 2, 2)
        return GroupMetadataKey(data["group"])
    if version in _CONSUMER_GROUP_RECORDS:
        _, data = _decode(_CONSUMER_GROUP_RECORDS[version] + "Key", buffer, version, version)
        return ConsumerGroupRecordKey(version, data["group_id"], data.get("member_id"),
                                      data.get("regular_expression"))
    return None


def read_offset_commit_value(buffer: bytes) -> OffsetAndMetadata:
    version, data = _decode("OffsetCommitValue", buffer, 0, 4)
    expire = data["expire_timestamp"] if version == 1 and data["expire_timestamp"] != -1 else None
    return OffsetAndMetadata(data["offset"], data["leader_epoch"], data["metadata"], data["commit_timestamp"],
                             expire, bytes(data["topic_id"]) if data.get("topic_id") else NO_TOPIC_ID)


def read_group_metadata_value(buffer: bytes) -> dict:
    return _decode("GroupMetadataValue", buffer, 0, 4)[1]


# -- placement ---------------------------------------------------------------------


def partition_for(group_id: str, num_partitions: int) -> int:
    """The `__consumer_offsets` partition of a group: Utils.abs(hashCode) % n, as
    GroupCoordinatorService.partitionFor (abs, not the sign-bit mask: they differ
    for negative hashes)."""
    assert num_partitions > 0
    return partition_for_key(group_id, num_partitions)


def parse_consumer_subscription_topics(metadata: Any) -> list[str] | None:
    """Topics of a ConsumerProtocolSubscription (any version: all start with
    int16 version, then []string topics); None when the bytes do not parse."""
    try:
        buffer = bytes(metadata)
        pos = 2
        count = struct.unpack_from(">i", buffer, pos)[0]
        pos += 4
        if count < 0 or count > len(buffer):
            return None
        topics = []
        for _ in range(count):
            size = struct.unpack_from(">h", buffer, pos)[0]
            pos += 2
            if size < 0 or pos + size > len(buffer):
                return None
            topics.append(buffer[pos:pos + size].decode("utf-8"))
            pos += size
        return topics
    except (struct.error, UnicodeDecodeError):
        return None
