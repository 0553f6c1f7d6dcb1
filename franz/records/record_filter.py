"""Filtering batches into a new buffer (MemoryRecords.filterTo, RecordFilter, FilterResult).

The log cleaner's copy step: each batch of the source is first judged whole
(RecordFilter.check_batch_retention), then record by record
(RecordFilter.should_retain_record), and what is kept is written out:

- a batch that keeps every record and needs no delete horizon is copied
  byte for byte (its CRC, sequence numbers and offsets untouched);
- a batch that loses records, or holds a tombstone or an empty transaction's
  marker that has no delete horizon yet, is rebuilt from the kept records with
  the original batch's codec, timestamp type, base offset, last offset,
  producer id, epoch, base sequence, flags and leader epoch, and, when it
  gains one, the delete horizon `current_time + delete_retention_ms` as its
  base timestamp (KIP-534);
- a batch that keeps nothing is dropped, unless its retention is
  RETAIN_EMPTY: then a 61-byte header with no records stays, carrying the
  batch's offsets and producer fields (the state a producer needs after its
  records are gone).

Records keep their offsets: the output has gaps wherever records were dropped.
"""

from __future__ import annotations

import dataclasses
import enum
import logging

from franz.records.builder import MemoryRecordsBuilder, compute_attributes, encode_batch
from franz.records.constants import NO_TIMESTAMP, RECORD_BATCH_OVERHEAD, CompressionType, TimestampType
from franz.records.record import Record, RecordKey
from franz.records.record_batch import RecordBatch

log = logging.getLogger(__name__)

INT64_MAX = 2**63 - 1


class BatchRetention(enum.Enum):
    DELETE = 0  # drop the batch without looking at its records
    RETAIN_EMPTY = 1  # keep the batch even when no record is kept (a bare header)
    DELETE_EMPTY = 2  # drop the batch when no record is kept


@dataclasses.dataclass(frozen=True, slots=True)
class BatchRetentionResult:
    retention: BatchRetention
    contains_marker_for_empty_txn: bool


class RecordFilter:
    """What the caller decides; filter_to does the copying.

    current_time and delete_retention_ms give the delete horizon stamped on a
    batch that first keeps a tombstone (or an empty transaction's marker)."""

    def __init__(self, current_time: int, delete_retention_ms: int) -> None:
        self.current_time = current_time
        self.delete_retention_ms = delete_retention_ms

    def check_batch_retention(self, batch: RecordBatch) -> BatchRetentionResult:
        raise NotImplementedError

    def should_retain_record(self, batch: RecordBatch, record: RecordKey) -> bool:
        raise NotImplementedError


@dataclasses.dataclass(slots=True)
class FilterResult:
    """What filter_to read and kept; `output` holds the kept batches."""

    output: bytearray = dataclasses.field(default_factory=bytearray)
    messages_read: int = 0
    bytes_read: int = 0
    messages_retained: int = 0
    bytes_retained: int = 0
    max_offset: int = -1
    max_timestamp: int = NO_TIMESTAMP
    shallow_offset_of_max_timestamp: int = -1

    def _update_retained(self, max_timestamp: int, shallow_offset_of_max_timestamp: int, max_offset: int,
                         messages: int, size: int) -> None:
        if max_timestamp != NO_TIMESTAMP and shallow_offset_of_max_timestamp < 0:
            raise ValueError(f"shallowOffset undefined for maximum timestamp {max_timestamp}")
        if max_offset < 0:
            raise ValueError("maxOffset undefined")
        if max_timestamp > self.max_timestamp:
            self.max_timestamp = max_timestamp
            self.shallow_offset_of_max_timestamp = shallow_offset_of_max_timestamp
        self.max_offset = max(self.max_offset, max_offset)
        self.messages_retained += messages
        self.bytes_retained += size


def filter_to(batches, record_filter: RecordFilter, max_record_batch_size: int,
              topic_partition: str = "") -> FilterResult:
    """Apply `record_filter` to each of `batches` (whole v2 batches) and collect what it keeps."""
    result = FilterResult()
    out = result.output
    for batch in batches:
        judged = record_filter.check_batch_retention(batch)
        result.bytes_read += batch.size_in_bytes
        if judged.retention == BatchRetention.DELETE:
            continue
        # Judged by offset and key alone; records are decoded whole only for a batch to rebuild.
        keys = batch.record_keys()
        result.messages_read += len(keys)
        should_retain = record_filter.should_retain_record
        kept = [index for index, record in enumerate(keys) if should_retain(batch, record)]
        write_original = len(kept) == len(keys)
        contains_tombstones = any(not keys[index].has_value for index in kept)
        max_offset = max((keys[index].offset for index in kept), default=-1)
        if kept:
            need_delete_horizon = ((contains_tombstones or judged.contains_marker_for_empty_txn)
                                   and not batch.has_delete_horizon)
            if write_original and not need_delete_horizon:
                out += batch.to_bytes()
                result._update_retained(batch.max_timestamp, batch.last_offset, batch.last_offset,
                                        len(kept), batch.size_in_bytes)
            else:
                if need_delete_horizon:
                    # Bounded to int64, where Kafka's long addition would wrap negative: either way
                    # a pass at the end of time finds the horizon passed.
                    delete_horizon = min(record_filter.current_time + record_filter.delete_retention_ms, INT64_MAX)
                else:
                    horizon = batch.delete_horizon_ms
                    delete_horizon = NO_TIMESTAMP if horizon is None else horizon
                records = list(batch.records())
                built, max_timestamp = _rebuild(batch, [records[index] for index in kept], delete_horizon)
                if len(built) > batch.size_in_bytes and len(built) > max_record_batch_size:
                    log.warning("Record batch from %s with last offset %d exceeded max record batch size %d "
                                "after cleaning (new size is %d). Consumers with version earlier than 0.10.1.0 "
                                "may need to increase their fetch sizes.", topic_partition, batch.last_offset,
                                max_record_batch_size, len(built))
                out += built
                # As Kafka's builder reports it for v2: the batch's last offset stands for its max timestamp.
                result._update_retained(max_timestamp, batch.last_offset if max_timestamp != NO_TIMESTAMP else -1,
                                        max_offset, len(kept), len(built))
        elif judged.retention == BatchRetention.RETAIN_EMPTY:
            out += _empty_header(batch)
            result._update_retained(batch.max_timestamp, batch.last_offset, batch.last_offset, 0,
                                    RECORD_BATCH_OVERHEAD)
    return result


def _rebuild(batch: RecordBatch, retained: list[Record], delete_horizon_ms: int) -> tuple[bytes, int]:
    """The kept records as one batch with the original batch's identity (buildRetainedRecordsInto)."""
    timestamp_type = batch.timestamp_type
    log_append_time = batch.max_timestamp if timestamp_type == TimestampType.LOG_APPEND_TIME else NO_TIMESTAMP
    builder = MemoryRecordsBuilder(
        compression_type=batch.compression_type, timestamp_type=timestamp_type, base_offset=batch.base_offset,
        log_append_time=log_append_time, producer_id=batch.producer_id, producer_epoch=batch.producer_epoch,
        base_sequence=batch.base_sequence, is_transactional=batch.is_transactional,
        is_control_batch=batch.is_control_batch, partition_leader_epoch=batch.partition_leader_epoch,
        delete_horizon_ms=delete_horizon_ms)
    is_control = batch.is_control_batch
    for record in retained:
        builder.append_with_offset(record.offset, record.timestamp, record.key, record.value, record.headers,
                                   is_control_record=is_control)
    builder.override_last_offset(batch.last_offset)
    max_timestamp = log_append_time if timestamp_type == TimestampType.LOG_APPEND_TIME else builder.max_timestamp
    return builder.build_bytes(), max_timestamp


def _empty_header(batch: RecordBatch) -> bytearray:
    """A record-less batch that keeps `batch`'s offsets and producer fields
    (DefaultRecordBatch.writeEmptyHeader: no codec, no base timestamp, no delete horizon)."""
    attributes = compute_attributes(CompressionType.NONE, batch.timestamp_type, batch.is_transactional,
                                    batch.is_control_batch, False)
    return encode_batch(b"", base_offset=batch.base_offset, last_offset_delta=batch.last_offset_delta,
                        record_count=0, attributes=attributes, base_timestamp=NO_TIMESTAMP,
                        max_timestamp=batch.max_timestamp, producer_id=batch.producer_id,
                        producer_epoch=batch.producer_epoch, base_sequence=batch.base_sequence,
                        partition_leader_epoch=batch.partition_leader_epoch)
