"""Records of `__transaction_state` (kafka.coordinator.transaction.TransactionLog).

Key:   int16 version 0, then TransactionLogKey v0 = transactional_id (string).
Value: int16 version, then TransactionLogValue = producer_id int64,
       producer_epoch int16, transaction_timeout_ms int32, transaction_status
       int8, transaction_partitions (nullable array of {topic string,
       partition_ids []int32}; null in state Empty), last_update_timestamp_ms
       int64, start_timestamp_ms int64.
Version 1 (flexible: compact arrays and strings, tagged fields) adds, as
tagged fields written only when not their default, PreviousProducerId (tag 0),
NextProducerId (tag 1), ClientTransactionVersion (tag 2) and
NextProducerEpoch (tag 3, never written). Kafka writes version 1 once
transaction.version is 1 or more, as franz's always is (2); version 0 values
are read too. A null value is a tombstone (an expired transactional id).

The partition of a transactional id is `partition_for_key` (Java's
String.hashCode, Kafka's Utils.abs) modulo `transaction.state.log.num.partitions`,
so ids land where Kafka puts them.
"""

from __future__ import annotations

import dataclasses
import struct
from typing import Final

from franz.common.utils import partition_for_key
from franz.coordinator.transaction.transaction_metadata import TransactionMetadata, TransactionState
from franz.protocol.codegen import read_uvarint, uvarint_bytes

TRANSACTION_STATE_TOPIC: Final = "__transaction_state"
_VERSION: Final = struct.Struct(">h")
_I16: Final = struct.Struct(">h")
_I32: Final = struct.Struct(">i")
_I64: Final = struct.Struct(">q")
_TAG_PREVIOUS_PRODUCER_ID: Final = 0
_TAG_NEXT_PRODUCER_ID: Final = 1
_TAG_CLIENT_TRANSACTION_VERSION: Final = 2
LOG_VALUE_VERSION: Final = 1  # TransactionVersion.transactionLogValueVersion at transaction.version 1 and 2
_VALUE_HEAD: Final = struct.Struct(">qhib")
_TIMES: Final = struct.Struct(">qq")


def _string(text: str) -> bytes:
    data = text.encode("utf-8")
    return _I16.pack(len(data)) + data


def partition_for(transactional_id: str, partitions: int) -> int:
    return partition_for_key(transactional_id, partitions)


def key_bytes(transactional_id: str) -> bytes:
    return _VERSION.pack(0) + _string(transactional_id)


def log_value_version(transaction_version: int) -> int:
    """TransactionVersion.transactionLogValueVersion: the value version the finalized
    transaction.version writes."""
    return LOG_VALUE_VERSION if transaction_version >= 1 else 0


def value_bytes(metadata: TransactionMetadata, version: int = LOG_VALUE_VERSION) -> bytes:
    """TransactionLog.valueToBytes: `version` 1 at transaction.version 1+, 0 below."""
    flexible = version >= 1
    out = bytearray(_VERSION.pack(version))
    out += _VALUE_HEAD.pack(metadata.producer_id, metadata.producer_epoch, metadata.txn_timeout_ms,
                            int(metadata.state))
    if metadata.state == TransactionState.EMPTY:  # an Empty transaction has no partitions: null
        out += uvarint_bytes(0) if flexible else _I32.pack(-1)
    else:
        by_topic: dict[str, list[int]] = {}
        for topic, partition in sorted(metadata.partitions):
            by_topic.setdefault(topic, []).append(partition)
        out += uvarint_bytes(len(by_topic) + 1) if flexible else _I32.pack(len(by_topic))
        for topic, partitions in by_topic.items():
            ids = struct.pack(f">{len(partitions)}i", *partitions)
            if flexible:
                name = topic.encode("utf-8")
                out += uvarint_bytes(len(name) + 1) + name + uvarint_bytes(len(partitions) + 1) + ids + b"\0"
            else:
                out += _string(topic) + _I32.pack(len(partitions)) + ids
    out += _TIMES.pack(metadata.txn_last_update_timestamp_ms, metadata.txn_start_timestamp_ms)
    if flexible:
        tags = []
        if metadata.prev_producer_id != -1:
            tags.append((_TAG_PREVIOUS_PRODUCER_ID, _I64.pack(metadata.prev_producer_id)))
        if metadata.next_producer_id != -1:
            tags.append((_TAG_NEXT_PRODUCER_ID, _I64.pack(metadata.next_producer_id)))
        if metadata.client_transaction_version != 0:
            tags.append((_TAG_CLIENT_TRANSACTION_VERSION, _I16.pack(metadata.client_transaction_version)))
        out += uvarint_bytes(len(tags))
        for tag, data in tags:
            out += uvarint_bytes(tag) + uvarint_bytes(len(data)) + data
    return bytes(out)


def read_key(data: bytes) -> str:
    version = _VERSION.unpack_from(data, 0)[0]
    if version != 0:
        raise ValueError(f"unknown TransactionLogKey version {version}")
    size = _I16.unpack_from(data, 2)[0]
    if size < 0 or 4 + size > len(data):
        raise ValueError("TransactionLogKey transactional id runs past the record")
    return data[4:4 + size].decode("utf-8")


def read_value(transactional_id: str, data: bytes) -> TransactionMetadata:
    version = _VERSION.unpack_from(data, 0)[0]
    if version not in (0, 1):
        raise ValueError(f"unknown TransactionLogValue version {version}")
    flexible = version == 1
    producer_id, epoch, timeout_ms, status = _VALUE_HEAD.unpack_from(data, 2)
    pos = 2 + _VALUE_HEAD.size

    def read_count(pos: int) -> tuple[int, int]:
        if flexible:
            count, pos = read_uvarint(data, pos)
            return count - 1, pos
        return _I32.unpack_from(data, pos)[0], pos + 4

    def read_string(pos: int) -> tuple[str, int]:
        if flexible:
            size, pos = read_uvarint(data, pos)
            size -= 1
        else:
            size, pos = _I16.unpack_from(data, pos)[0], pos + 2
        if size < 0 or pos + size > len(data):
            raise ValueError("TransactionLogValue string runs past the record")
        return data[pos:pos + size].decode("utf-8"), pos + size

    partitions: set[tuple[str, int]] = set()
    topics, pos = read_count(pos)
    for _ in range(max(topics, 0)):
        topic, pos = read_string(pos)
        count, pos = read_count(pos)
        if count < 0 or pos + 4 * count > len(data):
            raise ValueError("TransactionLogValue partition ids run past the record")
        partitions.update((topic, p) for p in struct.unpack_from(f">{count}i", data, pos))
        pos += 4 * count
        if flexible:
            pos = _read_tags(data, pos)[1]
    last_update_ms, start_ms = _TIMES.unpack_from(data, pos)
    tags = _read_tags(data, pos + _TIMES.size)[0] if flexible else {}
    if TransactionState(status) == TransactionState.EMPTY:
        partitions = set()  # (TransactionLog.read: only a transaction past Empty has partitions)
    return dataclasses.replace(
        TransactionMetadata(transactional_id, producer_id, epoch, timeout_ms),
        state=TransactionState(status), partitions=partitions, txn_last_update_timestamp_ms=last_update_ms,
        txn_start_timestamp_ms=start_ms,
        prev_producer_id=_tag_value(tags, _TAG_PREVIOUS_PRODUCER_ID, _I64, -1),
        next_producer_id=_tag_value(tags, _TAG_NEXT_PRODUCER_ID, _I64, -1),
        client_transaction_version=_tag_value(tags, _TAG_CLIENT_TRANSACTION_VERSION, _I16, 0))


def _read_tags(data: bytes, pos: int) -> tuple[dict[int, bytes], int]:
    tags = {}
    count, pos = read_uvarint(data, pos)
    for _ in range(count):
        tag, pos = read_uvarint(data, pos)
        size, pos = read_uvarint(data, pos)
        if pos + size > len(data):
            raise ValueError("TransactionLogValue tagged field runs past the record")
        tags[tag] = data[pos:pos + size]
        pos += size
    return tags, pos


def _tag_value(tags: dict[int, bytes], tag: int, layout: struct.Struct, default: int) -> int:
    data = tags.get(tag)
    return default if data is None else layout.unpack(data)[0]
