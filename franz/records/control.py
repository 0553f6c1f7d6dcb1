"""Control records (org.apache.kafka.common.record.ControlRecordType, EndTransactionMarker).

A control batch (attribute bit 5) holds control records whose key says what
they are and whose value is defined by that type:

    key   := version:int16 (0) type:int16                     # 4 bytes
    value := version:int16 (0) coordinator_epoch:int32        # COMMIT/ABORT: 6 bytes

Readers accept later key/value versions (parsing them as version 0, like
Kafka) but refuse negative versions and short keys/values with
InvalidRecordError.
"""

from __future__ import annotations

import enum
import struct
from dataclasses import dataclass

from franz.records.errors import InvalidRecordError

CURRENT_CONTROL_RECORD_KEY_VERSION = 0
CURRENT_CONTROL_RECORD_KEY_SIZE = 4
CURRENT_END_TXN_MARKER_VERSION = 0
CURRENT_END_TXN_MARKER_VALUE_SIZE = 6
# DefaultRecord.sizeInBytes(0, 0, 4, 6, no headers): length 1 + attributes 1 +
# timestamp delta 1 + offset delta 1 + key 1+4 + value 1+6 + header count 1.
CURRENT_END_TXN_SCHEMA_RECORD_SIZE = 17

_KEY = struct.Struct(">hh")
_END_TXN_VALUE = struct.Struct(">hi")


class ControlRecordType(enum.IntEnum):
    """The type in a control record's key."""

    ABORT = 0
    COMMIT = 1
    LEADER_CHANGE = 2  # KRaft quorum
    SNAPSHOT_HEADER = 3
    SNAPSHOT_FOOTER = 4
    KRAFT_VERSION = 5  # KRaft membership
    KRAFT_VOTERS = 6
    UNKNOWN = -1  # a type this version does not know: ignore the record

    def record_key(self) -> bytes:
        """The 4-byte key: version 0 + this type."""
        if self is ControlRecordType.UNKNOWN:
            raise ValueError("Cannot serialize UNKNOWN control record type")
        return _KEY.pack(CURRENT_CONTROL_RECORD_KEY_VERSION, int(self))

    @staticmethod
    def parse_type_id(key: bytes | None) -> int:
        """The raw type id in a control record key."""
        if key is None or len(key) < CURRENT_CONTROL_RECORD_KEY_SIZE:
            raise InvalidRecordError(
                "Invalid value size found for end control record key. Must have at least "
                f"{CURRENT_CONTROL_RECORD_KEY_SIZE} bytes, but found only {0 if key is None else len(key)}")
        version, type_id = _KEY.unpack_from(key, 0)
        if version < 0:
            raise InvalidRecordError(
                f"Invalid version found for control record: {version}. May indicate data corruption")
        return type_id

    @classmethod
    def from_type_id(cls, type_id: int) -> ControlRecordType:
        """UNKNOWN for ids this version does not define."""
        try:
            return cls(type_id) if type_id >= 0 else cls.UNKNOWN
        except ValueError:
            return cls.UNKNOWN

    @classmethod
    def parse(cls, key: bytes | None) -> ControlRecordType:
        return cls.from_type_id(cls.parse_type_id(key))


@dataclass(frozen=True, slots=True)
class EndTransactionMarker:
    """The COMMIT or ABORT control record a transaction coordinator writes."""

    control_type: ControlRecordType
    coordinator_epoch: int

    def __post_init__(self) -> None:
        if self.control_type not in (ControlRecordType.COMMIT, ControlRecordType.ABORT):
            raise ValueError(
                f"Invalid control record type for end transaction marker {self.control_type!r}")

    def serialize_value(self) -> bytes:
        return _END_TXN_VALUE.pack(CURRENT_END_TXN_MARKER_VERSION, self.coordinator_epoch)

    def record_key(self) -> bytes:
        return self.control_type.record_key()

    @classmethod
    def deserialize(cls, record) -> EndTransactionMarker:
        """From a decoded control Record (key and value)."""
        return cls.deserialize_value(ControlRecordType.parse(record.key), record.value)

    @classmethod
    def deserialize_value(cls, control_type: ControlRecordType, value: bytes | None) -> EndTransactionMarker:
        if control_type not in (ControlRecordType.COMMIT, ControlRecordType.ABORT):
            raise ValueError(
                f"Invalid control record type for end transaction marker {control_type!r}")
        if value is None or len(value) < CURRENT_END_TXN_MARKER_VALUE_SIZE:
            raise InvalidRecordError(
                "Invalid value size found for end transaction marker. Must have at least "
                f"{CURRENT_END_TXN_MARKER_VALUE_SIZE} bytes, but found only "
                f"{0 if value is None else len(value)}")
        version, coordinator_epoch = _END_TXN_VALUE.unpack_from(value, 0)
        if version < 0:
            raise InvalidRecordError(
                f"Invalid version found for end transaction marker: {version}. "
                "May indicate data corruption")
        return cls(control_type, coordinator_epoch)
