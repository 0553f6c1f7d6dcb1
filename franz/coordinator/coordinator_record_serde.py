"""A coordinator's records read by their schemas alone (Kafka's coordinator-common CoordinatorRecordSerde).

    record_key   = int16 record_type, key_message
    record_value = int16 value_version, value_message   |  null (a tombstone)

The record type is the key's version prefix, and it names both schemas. Every coordinator
writes its keys and values through `version_prefixed_bytes` (MessageUtil.toVersionPrefixedBytes). The group, share and
transaction coordinators each have a table of them (their serde modules' RECORD_SERDE); the
coordinators themselves read their records through their own typed functions, and this reads
any record for tools (`franz dump-log --offsets-decoder` and the like), failing as Kafka's
deserialize fails: an unknown type, a value version outside the type's range, bytes its schema
does not read.
"""

from __future__ import annotations

import dataclasses
import struct
from collections.abc import Mapping
from typing import Final

from franz.protocol.codegen import MessageCodec, MessageDecodeError

_VERSION: Final = struct.Struct(">h")


class UnknownRecordTypeError(ValueError):
    """Deserializer.UnknownRecordTypeException: a key whose record type no schema has."""

    def __init__(self, record_type: int) -> None:
        super().__init__(f"Found an unknown record type {record_type}")
        self.record_type = record_type


class RecordDeserializationError(ValueError):
    """A key or value its schema does not read (the RuntimeExceptions of Kafka's deserialize)."""


@dataclasses.dataclass(frozen=True)
class RecordSchemas:
    key: MessageCodec  # read at the record type as its version
    value: MessageCodec
    value_versions: tuple[int, int]  # what the type's value reads (LegacyOffsetCommitValue: 0 alone)


@dataclasses.dataclass(frozen=True)
class CoordinatorRecord:
    record_type: int
    schemas: RecordSchemas
    key: dict
    value_version: int | None  # None with a tombstone
    value: dict | None  # None: a tombstone


def version_prefixed_bytes(codec: MessageCodec, version: int, data: dict) -> bytes:
    """MessageUtil.toVersionPrefixedBytes: int16 version, then the message in that version."""
    chunks: list = [bytearray(_VERSION.pack(version))]
    codec.encode("request", version, data, chunks)
    return b"".join(bytes(chunk) for chunk in chunks)


def record_schemas(key: MessageCodec, value: MessageCodec, value_versions: tuple[int, int] | None = None
                   ) -> RecordSchemas:
    return RecordSchemas(key, value, value_versions or (value.schema.min_version, value.schema.max_version))


class CoordinatorRecordSerde:
    def __init__(self, schemas: Mapping[int, RecordSchemas]) -> None:
        self.schemas = dict(schemas)

    def deserialize(self, key: bytes, value: bytes | None) -> CoordinatorRecord:
        record_type = read_version(key, "key")
        schemas = self.schemas.get(record_type)
        if schemas is None:
            raise UnknownRecordTypeError(record_type)
        key_data = read_message(schemas.key, key, record_type, "key")
        if value is None:
            return CoordinatorRecord(record_type, schemas, key_data, None, None)
        value_version = read_version(value, "value", schemas.value_versions, record_type)
        return CoordinatorRecord(record_type, schemas, key_data, value_version,
                                 read_message(schemas.value, value, value_version, "value"))


def read_version(buffer: bytes, name: str, versions: tuple[int, int] | None = None, record_type: int = 0) -> int:
    """The version prefix of a key or value; with `versions`, one of them (else a
    RecordDeserializationError with Kafka's UnknownRecordVersionException text)."""
    if len(buffer) < 2:
        raise RecordDeserializationError(f"Could not read version from {name}'s buffer.")
    version = _VERSION.unpack_from(buffer, 0)[0]
    if versions is not None and not versions[0] <= version <= versions[1]:
        raise RecordDeserializationError(f"Found an unknown record version {version} for {record_type} type")
    return version


def read_message(codec: MessageCodec, buffer: bytes, version: int, name: str) -> dict:
    try:
        return codec.decode("request", version, memoryview(buffer)[2:])[0]
    except MessageDecodeError as exc:
        raise RecordDeserializationError(
            f"Could not read record with version {version} from {name}'s buffer due to: {exc}.") from None
