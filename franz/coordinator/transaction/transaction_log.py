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

The schemas are Kafka's TransactionLogKey and TransactionLogValue JSON specs in
franz's schema language, compiled by the protocol codegen.

The partition of a transactional id is `partition_for_key` (Java's
String.hashCode, Kafka's Utils.abs) modulo `transaction.state.log.num.partitions`,
so ids land where Kafka puts them.
"""

from __future__ import annotations

import dataclasses
from typing import Final

from franz.common.utils import partition_for_key
from franz.coordinator.coordinator_record_serde import (CoordinatorRecordSerde, read_message, read_version,
                                                        record_schemas, version_prefixed_bytes)
from franz.coordinator.transaction.transaction_metadata import TransactionMetadata, TransactionState
from franz.protocol.codegen import MessageCodec
from franz.protocol.schema import parse_schemas

TRANSACTION_STATE_TOPIC: Final = "__transaction_state"
TRANSACTION_LOG: Final = 0  # the one record type
LOG_VALUE_VERSION: Final = 1  # TransactionVersion.transactionLogValueVersion at transaction.version 1 and 2

_SCHEMAS: Final = """\
TransactionLogKey key=0 versions=0
 request
    transactional_id string
 response

TransactionLogValue key=0 versions=0-1 flex=1+
 request
    producer_id int64
    previous_producer_id int64 1+ tag=0 default=-1
    next_producer_id int64 1+ tag=1 default=-1
    producer_epoch int16
    next_producer_epoch int16 1+ tag=3 default=-1
    transaction_timeout_ms int32
    transaction_status int8
    transaction_partitions [] null
      topic string
      partition_ids []int32
    transaction_last_update_timestamp_ms int64
    transaction_start_timestamp_ms int64
    client_transaction_version int16 1+ tag=2 default=0
 response
"""
_CODECS: Final = {schema.name: MessageCodec(schema) for schema in parse_schemas(_SCHEMAS)}
# The record type as TransactionCoordinatorRecordSerde reads it, for tools (dump-log's transaction log decoder).
RECORD_SERDE: Final = CoordinatorRecordSerde({
    TRANSACTION_LOG: record_schemas(_CODECS["TransactionLogKey"], _CODECS["TransactionLogValue"])})


def partition_for(transactional_id: str, partitions: int) -> int:
    return partition_for_key(transactional_id, partitions)


def key_bytes(transactional_id: str) -> bytes:
    return version_prefixed_bytes(_CODECS["TransactionLogKey"], TRANSACTION_LOG, {"transactional_id": transactional_id})


def log_value_version(transaction_version: int) -> int:
    """TransactionVersion.transactionLogValueVersion: the value version the finalized
    transaction.version writes."""
    return LOG_VALUE_VERSION if transaction_version >= 1 else 0


def value_bytes(metadata: TransactionMetadata, version: int = LOG_VALUE_VERSION) -> bytes:
    """TransactionLog.valueToBytes: `version` 1 at transaction.version 1+, 0 below. An Empty
    transaction's partitions are null; the others' are grouped by topic, in order."""
    partitions = None
    if metadata.state != TransactionState.EMPTY:
        by_topic: dict[str, list[int]] = {}
        for topic, partition in sorted(metadata.partitions):
            by_topic.setdefault(topic, []).append(partition)
        partitions = [{"topic": topic, "partition_ids": ids} for topic, ids in by_topic.items()]
    return version_prefixed_bytes(_CODECS["TransactionLogValue"], version, {
        "producer_id": metadata.producer_id, "previous_producer_id": metadata.prev_producer_id,
        "next_producer_id": metadata.next_producer_id, "producer_epoch": metadata.producer_epoch,
        "transaction_timeout_ms": metadata.txn_timeout_ms, "transaction_status": int(metadata.state),
        "transaction_partitions": partitions,
        "transaction_last_update_timestamp_ms": metadata.txn_last_update_timestamp_ms,
        "transaction_start_timestamp_ms": metadata.txn_start_timestamp_ms,
        "client_transaction_version": metadata.client_transaction_version})


def read_key(data: bytes) -> str:
    version = read_version(data, "key", (TRANSACTION_LOG, TRANSACTION_LOG), TRANSACTION_LOG)
    return read_message(_CODECS["TransactionLogKey"], data, version, "key")["transactional_id"]


def read_value(transactional_id: str, data: bytes) -> TransactionMetadata:
    version = read_version(data, "value", (0, LOG_VALUE_VERSION), TRANSACTION_LOG)
    value = read_message(_CODECS["TransactionLogValue"], data, version, "value")
    state = TransactionState(value["transaction_status"])
    partitions: set[tuple[str, int]] = set()
    if state != TransactionState.EMPTY:  # (TransactionLog.read: only a transaction past Empty has partitions)
        for topic in value["transaction_partitions"] or ():
            partitions.update((topic["topic"], partition) for partition in topic["partition_ids"])
    return dataclasses.replace(
        TransactionMetadata(transactional_id, value["producer_id"], value["producer_epoch"],
                            value["transaction_timeout_ms"]),
        state=state, partitions=partitions,
        txn_last_update_timestamp_ms=value["transaction_last_update_timestamp_ms"],
        txn_start_timestamp_ms=value["transaction_start_timestamp_ms"],
        prev_producer_id=value["previous_producer_id"], next_producer_id=value["next_producer_id"],
        client_transaction_version=value["client_transaction_version"])
