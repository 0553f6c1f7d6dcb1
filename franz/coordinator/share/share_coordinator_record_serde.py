"""The records of `__share_group_state` (ShareCoordinatorRecordSerde), byte for byte Kafka 4.3's.

Key: int16 record type, then the key fields (not flexible): ShareSnapshotKey (0)
and ShareUpdateKey (1) both name (group id, topic id, partition). Value: int16
version 0, then the flexible value. A snapshot holds a share-partition's whole
state; an update holds the start offset and the state batches changed since; a
tombstone (a snapshot key with no value) forgets the share-partition.

DeliveryState in a state batch: 0 available, 2 acknowledged, 4 archived (acquired
records are never written: a restart hands them out again).
"""

from __future__ import annotations

import dataclasses
import struct
from typing import Final

from franz.coordinator.coordinator_record_serde import CoordinatorRecordSerde, record_schemas, version_prefixed_bytes
from franz.protocol.codegen import MessageCodec, MessageDecodeError
from franz.protocol.schema import parse_schemas

SHARE_SNAPSHOT: Final = 0
SHARE_UPDATE: Final = 1
UNINITIALIZED_DELIVERY_COMPLETE_COUNT: Final = -1

_SCHEMAS = """\
ShareSnapshotKey key=0 versions=0
 request
    group_id string
    topic_id uuid
    partition int32
 response

ShareSnapshotValue key=0 versions=0 flex=0+
 request
    snapshot_epoch int32
    state_epoch int32
    leader_epoch int32
    start_offset int64
    delivery_complete_count int32 tag=0 default=-1
    create_timestamp int64
    write_timestamp int64
    state_batches []
      first_offset int64
      last_offset int64
      delivery_state int8
      delivery_count int16
 response

ShareUpdateKey key=1 versions=1
 request
    group_id string
    topic_id uuid
    partition int32
 response

ShareUpdateValue key=1 versions=0 flex=0+
 request
    snapshot_epoch int32
    leader_epoch int32
    start_offset int64
    delivery_complete_count int32 tag=0 default=-1
    state_batches []
      first_offset int64
      last_offset int64
      delivery_state int8
      delivery_count int16
 response
"""

_CODECS: Final = {schema.name: MessageCodec(schema) for schema in parse_schemas(_SCHEMAS)}
_NAMES: Final = {SHARE_SNAPSHOT: "ShareSnapshot", SHARE_UPDATE: "ShareUpdate"}
_VERSION: Final = struct.Struct(">h")
# Both record types as ShareCoordinatorRecordSerde reads them, for tools (dump-log's share group state decoder).
RECORD_SERDE: Final = CoordinatorRecordSerde({
    record_type: record_schemas(_CODECS[name + "Key"], _CODECS[name + "Value"])
    for record_type, name in _NAMES.items()})


class ShareRecordFormatError(ValueError):
    """A key or value of `__share_group_state` that no known schema reads."""


@dataclasses.dataclass(frozen=True, slots=True)
class SharePartitionKey:
    group_id: str
    topic_id: bytes
    partition: int


def _encode(name: str, version: int, data: dict) -> bytes:
    return version_prefixed_bytes(_CODECS[name], version, data)


def _decode(name: str, buffer: bytes, version: int) -> dict:
    if len(buffer) < 2 or _VERSION.unpack_from(buffer, 0)[0] != version:
        raise ShareRecordFormatError(f"{name}: not version {version}")
    try:
        return _CODECS[name].decode("request", version, memoryview(buffer)[2:])[0]
    except MessageDecodeError as exc:
        raise ShareRecordFormatError(str(exc)) from None


def key(record_type: int, share_key: SharePartitionKey) -> bytes:
    return _encode(_NAMES[record_type] + "Key", record_type, {
        "group_id": share_key.group_id, "topic_id": share_key.topic_id, "partition": share_key.partition})


def value(record_type: int, data: dict) -> bytes:
    return _encode(_NAMES[record_type] + "Value", 0, data)


def read_key(buffer: bytes) -> tuple[int, SharePartitionKey]:
    if len(buffer) < 2:
        raise ShareRecordFormatError(f"record key of {len(buffer)} bytes")
    record_type = _VERSION.unpack_from(buffer, 0)[0]
    if record_type not in _NAMES:
        raise ShareRecordFormatError(f"unknown record type {record_type}")
    data = _decode(_NAMES[record_type] + "Key", buffer, record_type)
    return record_type, SharePartitionKey(data["group_id"], bytes(data["topic_id"]), data["partition"])


def read_value(record_type: int, buffer: bytes) -> dict:
    return _decode(_NAMES[record_type] + "Value", buffer, 0)
