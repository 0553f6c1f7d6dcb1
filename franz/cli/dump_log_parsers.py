"""What `franz dump-log --print-data-log` prints of a record's key and value (the MessageParsers of
Kafka's DumpLogSegments).

- DecoderMessageParser: the key and the value through one of Kafka's tools.api decoders
  (--key-decoder-class, --value-decoder-class; StringDecoder by default).
- CoordinatorRecordMessageParser: a coordinator's record read by its schemas and printed as
  Kafka's generated JsonConverters write it, `{"type":"T","data":{...}}` for the key and
  `{"version":"V","data":{...}}` for the value, `<DELETE>` for a tombstone. One parser per
  coordinator: --offsets-decoder (`__consumer_offsets`; a classic consumer group's member
  subscriptions and assignments are printed as ConsumerProtocol JSON too),
  --transaction-log-decoder (`__transaction_state`), --share-group-state-decoder
  (`__share_group_state`). A record the schemas do not read is printed as Kafka prints it
  ("Unknown record type ...", "Error at offset ...") and the dump goes on.

A record Kafka's tool dies on (a coordinator record without a key, too few bytes for
IntegerDecoder or LongDecoder) raises DumpStopped with its message: the dump stops there.
"""

from __future__ import annotations

import base64
import dataclasses
import struct
from collections.abc import Callable
from typing import Any, Final

from franz.coordinator.coordinator_record_serde import (CoordinatorRecord, CoordinatorRecordSerde,
                                                        RecordDeserializationError, UnknownRecordTypeError)
from franz.coordinator.group import consumer_protocol
from franz.coordinator.group.group_coordinator_record_serde import GROUP_METADATA_KEY_VERSION
from franz.coordinator.group.group_coordinator_record_serde import RECORD_SERDE as GROUP_RECORD_SERDE
from franz.coordinator.share.share_coordinator_record_serde import RECORD_SERDE as SHARE_RECORD_SERDE
from franz.coordinator.transaction.transaction_log import RECORD_SERDE as TRANSACTION_RECORD_SERDE
from franz.protocol.json_converter import json_text, message_json

TOOLS_API: Final = "org.apache.kafka.tools.api."
STRING_DECODER: Final = TOOLS_API + "StringDecoder"


class DumpStopped(Exception):
    """A record Kafka's DumpLogSegments stops at, with the reason."""


@dataclasses.dataclass(frozen=True)
class ParseResult:
    key: str | None
    value: str | None


def _fixed_size(name: str, layout: struct.Struct) -> Callable[[bytes], str]:
    def decode(data: bytes) -> str:
        # ByteBuffer.wrap(bytes).getInt()/getLong(): the first bytes, and an underflow when too few
        if len(data) < layout.size:
            raise DumpStopped(f"{name} needs {layout.size} bytes and the record has {len(data)} "
                              f"(Kafka's tool stops with a BufferUnderflowException)")
        return str(layout.unpack_from(data)[0])
    return decode


# Kafka's decoders, bytes in, the text printed out. DefaultDecoder hands Java the byte[] itself, which
# prints as its identity ("[B@1b6d3586"); franz prints the bytes, as console-consumer's ByteArrayDeserializer.
DECODERS: Final[dict[str, Callable[[bytes], str]]] = {
    STRING_DECODER: lambda data: data.decode("utf-8", "replace"),
    TOOLS_API + "IntegerDecoder": _fixed_size("IntegerDecoder", struct.Struct(">i")),
    TOOLS_API + "LongDecoder": _fixed_size("LongDecoder", struct.Struct(">q")),
    TOOLS_API + "DefaultDecoder": lambda data: data.decode("utf-8", "surrogateescape"),
}


class DecoderMessageParser:
    def __init__(self, key_decoder: Callable[[bytes], str], value_decoder: Callable[[bytes], str]) -> None:
        self.key_decoder = key_decoder
        self.value_decoder = value_decoder

    def parse(self, offset: int, key: bytes | None, value: bytes | None) -> ParseResult:
        return ParseResult(None if key is None else self.key_decoder(key),
                           None if value is None else self.value_decoder(value))


class CoordinatorRecordMessageParser:
    def __init__(self, serde: CoordinatorRecordSerde,
                 value_json: Callable[[CoordinatorRecord], dict] | None = None) -> None:
        self.serde = serde
        self.value_json = value_json or _value_json

    def parse(self, offset: int, key: bytes | None, value: bytes | None) -> ParseResult:
        if key is None:
            raise DumpStopped(f"Failed to decode message at offset {offset} using the specified decoder "
                              f"(message had a missing key)")
        try:
            record = self.serde.deserialize(key, value)
            key_text = json_text({"type": str(record.record_type), "data": message_json(
                record.schemas.key.schema.request, record.record_type, record.key)})
            if record.value is None:
                return ParseResult(key_text, "<DELETE>")
            return ParseResult(key_text, json_text({"version": str(record.value_version),
                                                    "data": self.value_json(record)}))
        except UnknownRecordTypeError as exc:
            return ParseResult(f"Unknown record type {exc.record_type} at offset {offset}, skipping.", None)
        except RecordDeserializationError as exc:
            return ParseResult(f"Error at offset {offset}, skipping. {exc}", None)


def _value_json(record: CoordinatorRecord) -> dict:
    return message_json(record.schemas.value.schema.request, record.value_version, record.value)


def _offsets_value_json(record: CoordinatorRecord) -> dict:
    """OffsetsMessageParser: a consumer group's GroupMetadataValue has its members' subscription and
    assignment bytes printed as ConsumerProtocol JSON; bytes that do not read stay base64."""
    node = _value_json(record)
    if record.record_type != GROUP_METADATA_KEY_VERSION or node.get("protocolType") != consumer_protocol.PROTOCOL_TYPE:
        return node
    for member in node.get("members") or ():
        for field, name in (("subscription", consumer_protocol.SUBSCRIPTION),
                            ("assignment", consumer_protocol.ASSIGNMENT)):
            if member.get(field) is not None:
                member[field] = _consumer_protocol_json(name, member[field])
    return node


def _consumer_protocol_json(name: str, encoded: str) -> Any:
    try:
        fields, version, data = consumer_protocol.read_message(name, base64.b64decode(encoded))
    except consumer_protocol.ConsumerProtocolError:
        return encoded
    return message_json(fields, version, data)


OFFSETS_PARSER: Final = CoordinatorRecordMessageParser(GROUP_RECORD_SERDE, _offsets_value_json)
TRANSACTION_LOG_PARSER: Final = CoordinatorRecordMessageParser(TRANSACTION_RECORD_SERDE)
SHARE_GROUP_STATE_PARSER: Final = CoordinatorRecordMessageParser(SHARE_RECORD_SERDE)
