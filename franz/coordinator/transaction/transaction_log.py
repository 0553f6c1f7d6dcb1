"""Records of `__transaction_state` (kafka.coordinator.transaction.TransactionLog).

Key:   int16 version 0, then TransactionLogKey v0 = transactional_id (string).
Value: int16 version 0, then TransactionLogValue v0 = producer_id int64,
       producer_epoch int16, transaction_timeout_ms int32, transaction_status
       int8, transaction_partitions (nullable array of {topic string,
       partition_ids []int32}), last_update_timestamp_ms int64,
       start_timestamp_ms int64.
A null value is a tombstone (an expired transactional id). Version 1 values
(flexible, KIP-890 transactions v2) are read too; franz writes version 0, as
Kafka does for clients on transaction version 1.

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
from franz.protocol.codegen import read_uvarint

TRANSACTION_STATE_TOPIC: Final = "__transaction_state"
_VERSION: Final = struct.Struct(">h")
_I16: Final = struct.Struct(">h")
_I32: Final = struct.Struct(">i")
_VALUE_HEAD: Final = struct.Struct(">qhib")
_TIMES: Final = struct.Struct(">qq")


def _string(text: str) -> bytes:
    data = text.encode("utf-8")
    return _I16.pack(len(data)) + data


def partition_for(transactional_id: str, partitions: int) -> int:
    return partition_for_key(transactional_id, partitions)


def key_bytes(transactional_id: str) -> bytes:
    return _VERSION.pack(0) + _string(transactional_id)


def value_bytes(metadata: TransactionMetadata) -> bytes:
    out = bytearray(_VERSION.pack(0))
    out += _VALUE_HEAD.pack(metadata.producer_id, metadata.producer_epoch, metadata.txn_timeout_ms,
                            int(metadata.state))
    by_topic: dict[str, list[int]] = {}
    for topic, partition in sorted(metadata.partitions):
        by_topic.setdefault(topic, []).append(partition)
    out += _I32.pack(len(by_topic))
    for topic, partitions in by_topic.items():
        out += _string(topic) + _I32.pack(len(partitions)) + struct.pack(f">{len(partitions)}i", *partitions)
    out += _TIMES.pack(metadata.txn_last_update_timestamp_ms, metadata.txn_start_timestamp_ms)
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
            pos = _skip_tags(data, pos)
    last_update_ms, start_ms = _TIMES.unpack_from(data, pos)
    return dataclasses.replace(TransactionMetadata(transactional_id, producer_id, epoch, timeout_ms),
                               state=TransactionState(status), partitions=partitions,
                               txn_last_update_timestamp_ms=last_update_ms, txn_start_timestamp_ms=start_ms)


def _skip_tags(data: bytes, pos: int) -> int:
    count, pos = read_uvarint(data, pos)
    for _ in range(count):
        _, pos = read_uvarint(data, pos)
        size, pos = read_uvarint(data, pos)
        pos += size
    return pos
