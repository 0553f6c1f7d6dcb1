"""The consumer's embedded protocol of the classic group protocol (Kafka's ConsumerProtocol).

A classic consumer's JoinGroup metadata is a ConsumerProtocolSubscription and its
SyncGroup assignment a ConsumerProtocolAssignment, each prefixed by an int16
version (0-3, never flexible). The broker reads them only to move a group
between the classic and the consumer protocol (KIP-848 online migration): the
subscription says which topics a classic member wants and which partitions it
owns, and the broker writes a classic member's assignment itself while the
group is a consumer group.

Versions: a version above 3 is read as 3, as Kafka reads it (new versions only
add fields at the end); a negative one, or bytes that do not parse, raise
ConsumerProtocolError (Kafka's SchemaException).
"""

from __future__ import annotations

import dataclasses
import struct
from collections.abc import Iterable, Mapping
from typing import Final

from franz.protocol.codegen import MessageCodec, MessageDecodeError
from franz.protocol.schema import Field, parse_schemas

PROTOCOL_TYPE: Final = "consumer"
HIGHEST_SUPPORTED_VERSION: Final = 3

# key=-1: data schemas, not APIs
_SCHEMAS = """\
ConsumerProtocolSubscription key=-1 versions=0-3
 request
    topics []string
    user_data bytes null default=null
    owned_partitions [] 1+
      topic string
      partitions []int32
    generation_id int32 2+ default=-1
    rack_id string 3+ null default=null
 response

ConsumerProtocolAssignment key=-1 versions=0-3
 request
    assigned_partitions []
      topic string
      partitions []int32
    user_data bytes null default=null
 response
"""

_CODECS: Final = {schema.name: MessageCodec(schema) for schema in parse_schemas(_SCHEMAS)}
SUBSCRIPTION: Final = "ConsumerProtocolSubscription"
ASSIGNMENT: Final = "ConsumerProtocolAssignment"
_VERSION: Final = struct.Struct(">h")


class ConsumerProtocolError(ValueError):
    """Bytes that are not a ConsumerProtocol subscription or assignment."""


@dataclasses.dataclass(frozen=True)
class Subscription:
    topics: tuple[str, ...]
    user_data: bytes | None
    owned_partitions: tuple[tuple[str, tuple[int, ...]], ...]
    generation_id: int
    rack_id: str | None


@dataclasses.dataclass(frozen=True)
class Assignment:
    partitions: tuple[tuple[str, tuple[int, ...]], ...]
    user_data: bytes | None


def deserialize_version(buffer: bytes) -> int:
    """The version a subscription or assignment was written in (ConsumerProtocol.deserializeVersion)."""
    if len(buffer) < 2:
        raise ConsumerProtocolError("Buffer underflow while parsing consumer protocol's header")
    return _VERSION.unpack_from(buffer, 0)[0]


def _decode(name: str, buffer: bytes) -> dict:
    buffer = bytes(buffer)
    version = deserialize_version(buffer)
    if version < 0:
        raise ConsumerProtocolError(f"Unsupported {name} version: {version}")
    try:
        data, _ = _CODECS[name].decode("request", min(version, HIGHEST_SUPPORTED_VERSION), memoryview(buffer)[2:])
    except (MessageDecodeError, UnicodeDecodeError) as exc:
        raise ConsumerProtocolError(f"Malformed consumer protocol {name}: {exc}") from None
    return data


def read_message(name: str, buffer: bytes) -> tuple[tuple[Field, ...], int, dict]:
    """SUBSCRIPTION or ASSIGNMENT read as Kafka's generated class reads it: (its fields, the version
    whose fields were read, the data). A version above 3 reads as 3; a negative one reads no field."""
    version = deserialize_version(buffer)
    fields = _CODECS[name].schema.request
    if version < 0:
        return fields, version, {}
    return fields, min(version, HIGHEST_SUPPORTED_VERSION), _decode(name, buffer)


def _encode(name: str, version: int, data: dict) -> bytes:
    chunks: list = [bytearray(_VERSION.pack(version))]
    _CODECS[name].encode("request", version, data, chunks)
    return b"".join(bytes(chunk) for chunk in chunks)


def deserialize_subscription(buffer: bytes) -> Subscription:
    data = _decode("ConsumerProtocolSubscription", buffer)
    user_data = data["user_data"]
    return Subscription(tuple(data["topics"]), None if user_data is None else bytes(user_data),
                        tuple((tp["topic"], tuple(tp["partitions"])) for tp in data.get("owned_partitions") or ()),
                        data.get("generation_id", -1), data.get("rack_id") or None)


def serialize_subscription(topics: Iterable[str], version: int = HIGHEST_SUPPORTED_VERSION,
                           owned: Mapping[str, Iterable[int]] | None = None, generation_id: int = -1,
                           rack_id: str | None = None, user_data: bytes | None = None) -> bytes:
    """Topics sorted, owned partitions sorted by topic then partition (ConsumerProtocol.serializeSubscription)."""
    owned_partitions = [{"topic": topic, "partitions": sorted(partitions)}
                        for topic, partitions in sorted((owned or {}).items()) if partitions]
    return _encode("ConsumerProtocolSubscription", min(version, HIGHEST_SUPPORTED_VERSION), {
        "topics": sorted(topics), "user_data": user_data, "owned_partitions": owned_partitions,
        "generation_id": generation_id, "rack_id": rack_id})


def deserialize_assignment(buffer: bytes) -> Assignment:
    data = _decode("ConsumerProtocolAssignment", buffer)
    user_data = data["user_data"]
    return Assignment(tuple((tp["topic"], tuple(tp["partitions"])) for tp in data["assigned_partitions"]),
                      None if user_data is None else bytes(user_data))


def serialize_assignment(partitions: Mapping[str, Iterable[int]], version: int = HIGHEST_SUPPORTED_VERSION,
                         user_data: bytes | None = None) -> bytes:
    """`version` is the one the member's subscription was written in, as the broker answers a
    classic member in its own version (capped at the highest known; a negative one is refused)."""
    if version < 0:
        raise ConsumerProtocolError(f"Unsupported assignment version: {version}")
    return _encode("ConsumerProtocolAssignment", min(version, HIGHEST_SUPPORTED_VERSION), {
        "assigned_partitions": [{"topic": topic, "partitions": sorted(ps)}
                                for topic, ps in sorted(partitions.items())],
        "user_data": user_data})
