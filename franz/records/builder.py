"""Building v2 batches (org.apache.kafka.common.record.MemoryRecordsBuilder, SimpleRecord).

Owns encoding one batch from records: record deltas against the first
record's offset and timestamp (or the delete horizon), the records section
compressed as one stream, then the 61-byte header and its CRC32C.

Invariants of a built batch (the ones Kafka's builder keeps):
- offsets strictly increase; last_offset_delta = last offset - base offset;
- base_timestamp is the first record's timestamp (the delete horizon when
  one is set); max_timestamp is the largest record timestamp for
  CREATE_TIME, the log append time for LOG_APPEND_TIME;
- a producer id requires a producer epoch and (outside control batches) a
  base sequence; a transactional batch requires a producer id;
- no records, no batch: build() of an empty builder gives empty bytes.
"""

from __future__ import annotations

import time
from collections.abc import Iterable
from dataclasses import dataclass

from crc32c import crc32c

from franz.records.compression import compress
from franz.records.constants import (
    ATTRIBUTES_OFFSET,
    CONTROL_FLAG_MASK,
    CRC_OFFSET,
    CURRENT_MAGIC_VALUE,
    DELETE_HORIZON_FLAG_MASK,
    HEADER_STRUCT,
    INT32_MAX,
    LOG_OVERHEAD,
    NO_PARTITION_LEADER_EPOCH,
    NO_PRODUCER_EPOCH,
    NO_PRODUCER_ID,
    NO_SEQUENCE,
    NO_TIMESTAMP,
    RECORD_BATCH_OVERHEAD,
    TIMESTAMP_TYPE_MASK,
    TRANSACTIONAL_FLAG_MASK,
    UINT32,
    CompressionType,
    TimestampType,
)
from franz.records.control import ControlRecordType, EndTransactionMarker
from franz.records.record import EMPTY_HEADERS, Header, write_record


def now_ms() -> int:
    return time.time_ns() // 1_000_000


@dataclass(frozen=True, slots=True)
class SimpleRecord:
    """What a producer hands over: value, key, timestamp, headers.

    timestamp NO_TIMESTAMP means "now" to build_batch and MemoryRecordsBuilder.append.
    """

    value: bytes | None
    key: bytes | None = None
    timestamp: int = NO_TIMESTAMP
    headers: tuple[Header, ...] = EMPTY_HEADERS


def compute_attributes(compression_type: CompressionType, timestamp_type: TimestampType,
                       is_transactional: bool, is_control: bool, has_delete_horizon: bool) -> int:
    """The attributes int16 (DefaultRecordBatch.computeAttributes)."""
    if timestamp_type == TimestampType.NO_TIMESTAMP_TYPE:
        raise ValueError("Timestamp type must be provided to compute attributes for message format v2")
    attributes = int(compression_type)
    if timestamp_type == TimestampType.LOG_APPEND_TIME:
        attributes |= TIMESTAMP_TYPE_MASK
    if is_transactional:
        attributes |= TRANSACTIONAL_FLAG_MASK
    if is_control:
        attributes |= CONTROL_FLAG_MASK
    if has_delete_horizon:
        attributes |= DELETE_HORIZON_FLAG_MASK
    return attributes


def encode_batch(records_section, *, base_offset: int, last_offset_delta: int, record_count: int,
                 attributes: int, base_timestamp: int, max_timestamp: int,
                 producer_id: int = NO_PRODUCER_ID, producer_epoch: int = NO_PRODUCER_EPOCH,
                 base_sequence: int = NO_SEQUENCE,
                 partition_leader_epoch: int = NO_PARTITION_LEADER_EPOCH) -> bytearray:
    """Header + the (already compressed) records section, CRC set (DefaultRecordBatch.writeHeader)."""
    if base_timestamp < 0 and base_timestamp != NO_TIMESTAMP:
        raise ValueError(f"Invalid message timestamp {base_timestamp}")
    out = bytearray(RECORD_BATCH_OVERHEAD)
    out += records_section
    HEADER_STRUCT.pack_into(
        out, 0, base_offset, len(out) - LOG_OVERHEAD, partition_leader_epoch, CURRENT_MAGIC_VALUE,
        0, attributes, last_offset_delta, base_timestamp, max_timestamp, producer_id,
        producer_epoch, base_sequence, record_count)
    UINT32.pack_into(out, CRC_OFFSET, crc32c(memoryview(out)[ATTRIBUTES_OFFSET:]))
    return out


class MemoryRecordsBuilder:
    """Accumulates records into one v2 batch; build() encodes it."""

    def __init__(self, *, compression_type: CompressionType = CompressionType.NONE,
                 compression_level: int | None = None,
                 timestamp_type: TimestampType = TimestampType.CREATE_TIME,
                 base_offset: int = 0, log_append_time: int = NO_TIMESTAMP,
                 producer_id: int = NO_PRODUCER_ID, producer_epoch: int = NO_PRODUCER_EPOCH,
                 base_sequence: int = NO_SEQUENCE, is_transactional: bool = False,
                 is_control_batch: bool = False,
                 partition_leader_epoch: int = NO_PARTITION_LEADER_EPOCH,
                 delete_horizon_ms: int = NO_TIMESTAMP) -> None:
        if timestamp_type == TimestampType.NO_TIMESTAMP_TYPE:
            raise ValueError("TimestampType must be set for magic >= 0")
        self.compression_type = CompressionType(compression_type)
        self.compression_level = compression_level
        self.timestamp_type = TimestampType(timestamp_type)
        self.base_offset = base_offset
        self.log_append_time = log_append_time
        self.producer_id = producer_id
        self.producer_epoch = producer_epoch
        self.base_sequence = base_sequence
        self.is_transactional = is_transactional
        self.is_control_batch = is_control_batch
        self.partition_leader_epoch = partition_leader_epoch
        self.delete_horizon_ms = delete_horizon_ms
        self._records = bytearray()  # uncompressed records section
        self.num_records = 0
        self.last_offset: int | None = None
        self.max_timestamp = NO_TIMESTAMP
        self.offset_of_max_timestamp = -1
        self._base_timestamp: int | None = delete_horizon_ms if delete_horizon_ms >= 0 else None
        self._built: bytes | None = None

    @property
    def has_delete_horizon(self) -> bool:
        return self.delete_horizon_ms >= 0

    @property
    def uncompressed_size_in_bytes(self) -> int:
        """Header + records before compression (an upper bound for NONE)."""
        return RECORD_BATCH_OVERHEAD + len(self._records)

    def next_sequential_offset(self) -> int:
        return self.base_offset if self.last_offset is None else self.last_offset + 1

    def set_producer_state(self, producer_id: int, producer_epoch: int, base_sequence: int,
                           is_transactional: bool) -> None:
        if self._built is not None:
            raise RuntimeError("Trying to set producer state of an already closed batch")
        self.producer_id = producer_id
        self.producer_epoch = producer_epoch
        self.base_sequence = base_sequence
        self.is_transactional = is_transactional

    def override_last_offset(self, last_offset: int) -> None:
        if self._built is not None:
            raise RuntimeError("Cannot override the last offset after the records have been built")
        self.last_offset = last_offset

    # ---- appending ----------------------------------------------------------
    def append_with_offset(self, offset: int, timestamp: int, key: bytes | None,
                           value: bytes | None, headers: Iterable[Header] = EMPTY_HEADERS,
                           *, is_control_record: bool = False) -> None:
        """Append one record at `offset` (> the last one) with this exact timestamp."""
        if self._built is not None:
            raise RuntimeError("MemoryRecordsBuilder is closed for record appends")
        if is_control_record != self.is_control_batch:
            raise ValueError("Control records can only be appended to control batches")
        if self.last_offset is not None and offset <= self.last_offset:
            raise ValueError(f"Illegal offset {offset} following previous offset {self.last_offset} "
                             "(Offsets must increase monotonically).")
        if timestamp < 0 and timestamp != NO_TIMESTAMP:
            raise ValueError(f"Invalid negative timestamp {timestamp}")
        offset_delta = offset - self.base_offset
        if not 0 <= offset_delta <= INT32_MAX:
            raise ValueError(f"Offset {offset} is not within an int32 delta of base {self.base_offset}")
        if self._base_timestamp is None:
            self._base_timestamp = timestamp
        write_record(self._records, offset_delta, timestamp - self._base_timestamp, key, value, headers)
        self.num_records += 1
        self.last_offset = offset
        if timestamp > self.max_timestamp:
            self.max_timestamp = timestamp
            self.offset_of_max_timestamp = offset

    def append_encoded_records(self, records_section, count: int, base_timestamp: int, max_timestamp: int,
                               index_of_max_timestamp: int) -> None:
        """Take `count` records already encoded exactly as append_with_offset would write them
        at offsets base_offset, base_offset + 1, ... from base_timestamp: what the validator's
        rebuild has when a producer's records are canonical (_validator_fast.canonical_records),
        saving a decode and an encode per record. `index_of_max_timestamp` is -1 when no
        timestamp is above NO_TIMESTAMP. REQUIRES: an empty builder without a delete horizon."""
        if self._built is not None or self.num_records or self.has_delete_horizon:
            raise RuntimeError("append_encoded_records needs an empty builder without a delete horizon")
        self._records = bytearray(records_section)
        self.num_records = count
        self.last_offset = self.base_offset + count - 1
        self._base_timestamp = base_timestamp
        self.max_timestamp = max_timestamp
        self.offset_of_max_timestamp = self.base_offset + index_of_max_timestamp if index_of_max_timestamp >= 0 else -1

    def append(self, record: SimpleRecord) -> None:
        """Append at the next sequential offset; NO_TIMESTAMP becomes now."""
        ts = record.timestamp if record.timestamp != NO_TIMESTAMP else now_ms()
        self.append_with_offset(self.next_sequential_offset(), ts, record.key, record.value,
                                record.headers)

    def append_control_record(self, timestamp: int, control_type: ControlRecordType,
                              value: bytes | None) -> None:
        self.append_with_offset(self.next_sequential_offset(), timestamp,
                                ControlRecordType(control_type).record_key(), value,
                                is_control_record=True)

    def append_end_txn_marker(self, timestamp: int, marker: EndTransactionMarker) -> None:
        if self.producer_id == NO_PRODUCER_ID:
            raise ValueError("End transaction marker requires a valid producerId")
        if not self.is_transactional:
            raise ValueError("End transaction marker depends on batch transactional flag being enabled")
        self.append_control_record(timestamp, marker.control_type, marker.serialize_value())

    # ---- building -----------------------------------------------------------
    def _validate_producer_state(self) -> None:
        if self.is_transactional and self.producer_id == NO_PRODUCER_ID:
            raise ValueError("Cannot write transactional messages without a valid producer ID")
        if self.producer_id != NO_PRODUCER_ID:
            if self.producer_epoch == NO_PRODUCER_EPOCH:
                raise ValueError("Invalid negative producer epoch")
            if self.base_sequence < 0 and not self.is_control_batch:
                raise ValueError("Invalid negative sequence number used")

    def build_bytes(self) -> bytes:
        """The encoded batch (b"" when no record was appended). Idempotent."""
        if self._built is not None:
            return self._built
        self._validate_producer_state()
        if self.num_records == 0:
            self._built = b""
            return self._built
        assert self.last_offset is not None and self._base_timestamp is not None
        section = compress(self.compression_type, self._records, self.compression_level)
        max_ts = (self.log_append_time if self.timestamp_type == TimestampType.LOG_APPEND_TIME
                  else self.max_timestamp)
        out = encode_batch(
            section, base_offset=self.base_offset,
            last_offset_delta=self.last_offset - self.base_offset,
            record_count=self.num_records,
            attributes=compute_attributes(self.compression_type, self.timestamp_type,
                                          self.is_transactional, self.is_control_batch,
                                          self.has_delete_horizon),
            base_timestamp=self._base_timestamp, max_timestamp=max_ts,
            producer_id=self.producer_id, producer_epoch=self.producer_epoch,
            base_sequence=self.base_sequence, partition_leader_epoch=self.partition_leader_epoch)
        self._built = bytes(out)
        self._records = bytearray()
        return self._built

    def build(self):
        """The batch as MemoryRecords (over a writable bytearray, ready for stamping)."""
        from franz.records.memory_records import MemoryRecords

        return MemoryRecords(bytearray(self.build_bytes()))


def build_batch(records: Iterable[SimpleRecord], *, base_offset: int = 0,
                compression_type: CompressionType = CompressionType.NONE,
                compression_level: int | None = None,
                timestamp_type: TimestampType = TimestampType.CREATE_TIME,
                producer_id: int = NO_PRODUCER_ID, producer_epoch: int = NO_PRODUCER_EPOCH,
                base_sequence: int = NO_SEQUENCE, is_transactional: bool = False,
                partition_leader_epoch: int = NO_PARTITION_LEADER_EPOCH,
                log_append_time: int | None = None,
                delete_horizon_ms: int = NO_TIMESTAMP) -> bytes:
    """One batch of `records` at consecutive offsets from base_offset, as bytes.

    Records without a timestamp get now; LOG_APPEND_TIME without a
    log_append_time uses now. No records gives b"".
    """
    if log_append_time is None:
        log_append_time = now_ms() if timestamp_type == TimestampType.LOG_APPEND_TIME else NO_TIMESTAMP
    builder = MemoryRecordsBuilder(
        compression_type=compression_type, compression_level=compression_level,
        timestamp_type=timestamp_type, base_offset=base_offset, log_append_time=log_append_time,
        producer_id=producer_id, producer_epoch=producer_epoch, base_sequence=base_sequence,
        is_transactional=is_transactional, partition_leader_epoch=partition_leader_epoch,
        delete_horizon_ms=delete_horizon_ms)
    for record in records:
        builder.append(record)
    return builder.build_bytes()


def build_control_batch(control_type: ControlRecordType, *, producer_id: int, producer_epoch: int,
                        coordinator_epoch: int = 0, base_offset: int = 0,
                        timestamp: int | None = None,
                        partition_leader_epoch: int = NO_PARTITION_LEADER_EPOCH,
                        value: bytes | None = None) -> bytes:
    """A control batch of one record (MemoryRecords.withEndTransactionMarker).

    COMMIT/ABORT carry an EndTransactionMarker with coordinator_epoch; other
    control types need their serialized `value`.
    """
    if timestamp is None:
        timestamp = now_ms()
    control_type = ControlRecordType(control_type)
    is_end_txn = control_type in (ControlRecordType.COMMIT, ControlRecordType.ABORT)
    builder = MemoryRecordsBuilder(
        timestamp_type=TimestampType.CREATE_TIME, base_offset=base_offset,
        log_append_time=timestamp, producer_id=producer_id, producer_epoch=producer_epoch,
        is_transactional=is_end_txn,  # KRaft's control batches are not transactional
        is_control_batch=True, partition_leader_epoch=partition_leader_epoch)
    if control_type in (ControlRecordType.COMMIT, ControlRecordType.ABORT):
        builder.append_end_txn_marker(timestamp, EndTransactionMarker(control_type, coordinator_epoch))
    else:
        builder.append_control_record(timestamp, control_type, value)
    return builder.build_bytes()
