"""LogValidator: checks a produce request's batches and assigns what the leader assigns.

On the leader, for each v2 batch in order: structure and CRC (CorruptRecord),
size against `max.message.bytes` (MESSAGE_TOO_LARGE), base offset 0 and
offsets that fit the record count, no control batches and no producer id
without a sequence from clients (INVALID_RECORD). Then every record, as
Kafka's assignOffsetsNonCompressed and validateMessagesAndAssignOffsetsCompressed
walk them (decompressed, bounded, when compressed): it must parse, carry a key
on compacted topics, and for CreateTime a timestamp within
`message.timestamp.before/after.max.ms` (INVALID_TIMESTAMP). Then, in place
and with one CRC recompute at most: base offset from the log end, the
partition leader epoch, the records' max timestamp when the header's
disagrees, and for LogAppendTime the timestamp type bit and max timestamp = now.

When the topic's `compression.type` names a codec different from the
producer's, the batch is rebuilt with the topic codec, as Kafka recompresses.

The common case (uncompressed CreateTime batches with nothing wrong) runs in C,
in franz/storage/_validator_fast.c, which does what this module does for it and
declines everything else to this module; the Python path is the reference.
"""

from __future__ import annotations

import dataclasses
import struct
import time

from franz.records import (
    BatchHeader,
    CompressionType,
    CorruptRecordError,
    MemoryRecords,
    MemoryRecordsBuilder,
    RecordBatch,
    TimestampType,
)
from franz.records.constants import RECORD_BATCH_OVERHEAD
from franz.records.errors import InvalidChecksumError, RecordsError
from franz.storage.broker_topic_stats import INVALID_CRC_METER, INVALID_OFFSET_OR_SEQUENCE_METER, NO_KEY_COMPACTED_METER
from franz.storage.log_append_info import RecordValidationStats
from franz.storage.log_config import LogConfig

try:
    from franz.storage._validator_fast import assign_offsets_non_compressed, canonical_records, walk_records
except ImportError:  # not built (a source tree without `pip install`): the Python path does it all
    assign_offsets_non_compressed = canonical_records = walk_records = None

# Kafka protocol error codes (Errors.java) carried by the exceptions below.
CORRUPT_MESSAGE = 2
MESSAGE_TOO_LARGE = 10
INVALID_TIMESTAMP = 32
UNSUPPORTED_FOR_MESSAGE_FORMAT = 43
INVALID_RECORD = 87

_TOPIC_CODECS = {
    "uncompressed": CompressionType.NONE, "gzip": CompressionType.GZIP, "snappy": CompressionType.SNAPPY,
    "lz4": CompressionType.LZ4, "zstd": CompressionType.ZSTD,
}


class RecordValidationError(Exception):
    """A produce that must be refused; `error_code` is Kafka's, `record_errors` lists
    (batch index, record index, message) for INVALID_RECORD as Kafka reports them, and
    `all_topics_marks` the (meter, count) marks Kafka's validation makes for it."""

    def __init__(self, error_code: int, message: str, record_errors: list[tuple[int, int, str]] | None = None,
                 all_topics_marks: tuple[tuple[str, int], ...] = ()):
        super().__init__(message)
        self.error_code = error_code
        self.record_errors = record_errors or []
        self.all_topics_marks = all_topics_marks


@dataclasses.dataclass(slots=True)
class ValidationResult:
    validated_records: MemoryRecords
    log_append_time_ms: int
    max_timestamp_ms: int
    shallow_offset_of_max_timestamp: int
    first_offset: int
    last_offset: int
    num_messages: int
    messages_size_maybe_changed: bool
    source_compression: CompressionType
    batches: list[RecordBatch]
    headers: list[BatchHeader]  # as analysed, before stamping: producer fields and record counts
    record_validation_stats: RecordValidationStats | None = None


def target_compression(config: LogConfig, source: CompressionType) -> CompressionType:
    return source if config.compression_type == "producer" else _TOPIC_CODECS[config.compression_type]


def target_compression_level(config: LogConfig) -> int | None:
    """The level a rebuilt batch is compressed at (LogConfig.getCompression): the topic's
    compression.<codec>.level when compression.type names a codec that has levels; the
    codec's default (None) for `producer`, where the target is the producer's own codec."""
    return {"gzip": config.compression_gzip_level, "lz4": config.compression_lz4_level,
            "zstd": config.compression_zstd_level}.get(config.compression_type)


def _timestamp_window(config: LogConfig, now_ms: int) -> tuple[int, int]:
    """[earliest, latest] a CreateTime timestamp may take, clamped to int64 for the C module
    (message.timestamp.before.max.ms defaults to Long.MAX_VALUE)."""
    return (max(now_ms - config.message_timestamp_before_max_ms, _INT64_MIN),
            min(now_ms + config.message_timestamp_after_max_ms, _INT64_MAX))


def _validate_records(batch_index: int, batch: RecordBatch, config: LogConfig, now_ms: int,
                      log_append: bool) -> tuple[int, bool, object, int]:
    """Check every record of a batch as Kafka's validateRecord does. Returns the records'
    max timestamp (NO_TIMESTAMP when none has one), which becomes the batch's;
    whether a compressed batch's inner offsets run 0..n-1 (when not, Kafka rebuilds the
    batch rather than refuse it: "some older clients do not implement the V1 internal
    offsets correctly"; an uncompressed batch's are not checked, as in Kafka); and the
    records' bytes, decompressed, when the C walk took them (else None), for a rebuild; and
    the records' size, decompressed (the sum of Kafka's record.sizeInBytes()).

    A record that does not parse refuses the whole request at once (INVALID_RECORD, or
    CORRUPT_MESSAGE for undecodable compressed data). A missing key on a compacted topic
    and an out-of-range CreateTime timestamp are record errors, all reported together."""
    errors: list[tuple[int, int, str]] = []
    records_size = 0
    keyless = 0
    invalid_timestamp = False
    compressed = batch.attributes & _CODEC_MASK
    lat_batch = batch.attributes & _TIMESTAMP_TYPE_BIT
    compact = config.compact
    earliest, latest = (_INT64_MIN, _INT64_MAX) if log_append else _timestamp_window(config, now_ms)
    base_offset = batch.base_offset
    batch_max = -1
    offsets_in_sequence = True
    count = 0
    try:
        if walk_records is not None and not lat_batch:  # in C unless something is wrong
            data, _position = batch.records_data()
            walked = walk_records(data, batch.record_count, batch.base_timestamp, earliest, latest, compact)
            if walked is not None:
                records_max, in_sequence = walked
                return records_max, in_sequence or not compressed, data, len(data)  # Kafka checks only compressed ones
        for index, record in enumerate(batch.records()):
            count += 1
            records_size += record.size_in_bytes
            timestamp = record.timestamp
            if compact and record.key is None:
                keyless += 1
                errors.append((batch_index, index, "Compacted topic cannot accept message without key in topic "
                                                   "partition"))
                continue
            if not log_append and timestamp != -1:
                if not earliest <= timestamp <= latest:
                    invalid_timestamp = True
                    errors.append((batch_index, index, f"Timestamp {timestamp} of message with offset "
                                                       f"{record.offset} is out of range. The timestamp should be "
                                                       f"within [{earliest}, {latest}]"))
                    continue
            elif lat_batch:
                invalid_timestamp = True
                errors.append((batch_index, index, "Invalid timestamp type in message. Producer should not set "
                                                   "timestamp type to LogAppendTime."))
                continue
            if timestamp > batch_max:
                batch_max = timestamp
            if compressed and record.offset - base_offset != index:
                offsets_in_sequence = False
    except RecordsError as exc:
        raise RecordValidationError(exc.error_code if exc.error_code > 0 else CORRUPT_MESSAGE,
                                    f"Record is corrupt: {exc}") from None
    if count != batch.record_count:
        raise RecordValidationError(INVALID_RECORD, f"Record count {batch.record_count} in batch {batch_index} "
                                                    f"does not match the {count} records it holds")
    if invalid_timestamp:
        raise RecordValidationError(INVALID_TIMESTAMP,
                                    "One or more records have been rejected due to invalid timestamp", errors)
    if errors:
        shown = ", ".join(f"RecordError(batchIndex={i}, message='{m}')" for _b, i, m in errors[:3])
        raise RecordValidationError(
            INVALID_RECORD, f"One or more records have been rejected due to {len(errors)} record errors in total, "
                            f"and only showing the first three errors at most: [{shown}]", errors,
            ((NO_KEY_COMPACTED_METER, keyless),) if keyless else ())
    return batch_max, offsets_in_sequence, None, records_size


_KEEPS_UNCOMPRESSED = ("producer", "uncompressed")
_INT64_MIN, _INT64_MAX = -(2**63), 2**63 - 1
_CONTROL_BIT = 0x20
_BASE_OFFSET_AND_LENGTH = struct.Struct(">qi")  # a batch's first fields
_CODEC_MASK = 0x07
_TIMESTAMP_TYPE_BIT = 0x08
_CODECS_BY_ID = tuple(CompressionType(codec_id) for codec_id in range(5))  # ids 5-7 are not Kafka's


def analyze_and_validate(records: MemoryRecords, config: LogConfig, is_from_client: bool,
                         ignore_record_size: bool = False) -> tuple[list[RecordBatch], list[BatchHeader]]:
    """Structure, CRC, size and shape checks of every batch (UnifiedLog.analyzeAndValidateRecords;
    `ignore_record_size` for a follower's append, as appendAsFollower skips max.message.bytes).

    One struct call and one CRC call per batch (MemoryRecords.validate_batches);
    returns the batch views and their parsed headers, index for index. Bytes
    after the last whole batch that do not make one are left out, as Kafka's
    batch iterator leaves them (see trim_invalid_bytes)."""
    batches = []
    headers = []
    buffer = records.buffer
    max_message_bytes = config.max_message_bytes
    try:
        for index, (position, header) in enumerate(records.validate_batches(stop_at_partial_batch=True)):
            size = header.batch_length + 12
            _check_offset_and_size(header.base_offset, size, max_message_bytes, is_from_client, ignore_record_size)
            count = header.record_count
            # LogValidator.validateBatch checks a client's batches only: a compacted batch a
            # follower copies keeps its offset range with fewer records.
            if is_from_client and (count <= 0 or header.last_offset_delta != count - 1):
                raise RecordValidationError(
                    INVALID_RECORD, f"Batch {index} has lastOffsetDelta {header.last_offset_delta} for "
                                    f"{count} records", all_topics_marks=((INVALID_OFFSET_OR_SEQUENCE_METER, 1),))
            if is_from_client and header.attributes & _CONTROL_BIT:
                raise RecordValidationError(INVALID_RECORD, "Clients are not allowed to write control records",
                                            all_topics_marks=((INVALID_OFFSET_OR_SEQUENCE_METER, 1),))
            if is_from_client and header.producer_id >= 0 and header.base_sequence < 0:
                raise RecordValidationError(
                    INVALID_RECORD, f"Invalid sequence number {header.base_sequence} in record batch with "
                                    f"producerId {header.producer_id}",
                    all_topics_marks=((INVALID_OFFSET_OR_SEQUENCE_METER, 1),))
            codec_id = header.attributes & _CODEC_MASK
            if codec_id >= len(_CODECS_BY_ID):
                raise RecordValidationError(CORRUPT_MESSAGE, f"Unknown compression type id: {codec_id}")
            batches.append(RecordBatch._trusted(buffer, position, size))
            headers.append(header)
    except InvalidChecksumError as exc:
        _refuse_before_checksum(records, exc.position, max_message_bytes, is_from_client, ignore_record_size)
        raise RecordValidationError(CORRUPT_MESSAGE, str(exc), all_topics_marks=((INVALID_CRC_METER, 1),)) from None
    except CorruptRecordError as exc:
        raise RecordValidationError(CORRUPT_MESSAGE, str(exc)) from None
    except RecordsError as exc:
        raise RecordValidationError(getattr(exc, "error_code", CORRUPT_MESSAGE), str(exc)) from None
    if not batches:
        raise RecordValidationError(INVALID_RECORD, "The produce request carries no record batch")
    return batches, headers


def _check_offset_and_size(base_offset: int, size: int, max_message_bytes: int, is_from_client: bool,
                           ignore_record_size: bool) -> None:
    """What analyzeAndValidateRecords refuses before it looks at a batch's CRC: a client's base
    offset other than 0, then a batch over max.message.bytes (a follower copies what its leader has)."""
    if is_from_client and base_offset != 0:
        raise RecordValidationError(INVALID_RECORD, f"The baseOffset of the record batch in the append should "
                                                    f"be 0, but it is {base_offset}")
    if not ignore_record_size and size > max_message_bytes:
        raise RecordValidationError(MESSAGE_TOO_LARGE, f"The record batch size in the append is {size} bytes "
                                                       f"which exceeds the maximum configured value of "
                                                       f"{max_message_bytes}.")


def _refuse_before_checksum(records: MemoryRecords, position: int, max_message_bytes: int, is_from_client: bool,
                            ignore_record_size: bool) -> None:
    """_check_offset_and_size for the batch at `position`, whose CRC is wrong."""
    base_offset, length = _BASE_OFFSET_AND_LENGTH.unpack_from(records.buffer, position)
    _check_offset_and_size(base_offset, length + 12, max_message_bytes, is_from_client, ignore_record_size)


def trim_invalid_bytes(records: MemoryRecords, batches: list[RecordBatch]) -> MemoryRecords:
    """`records` cut after its last whole batch (UnifiedLog.trimInvalidBytes): a partial
    batch trailing a request is dropped, not refused, as Kafka drops it."""
    last = batches[-1]
    valid_bytes = last.position + last.size_in_bytes
    if valid_bytes == records.size_in_bytes:
        return records
    return MemoryRecords(memoryview(records.buffer)[:valid_bytes])


def assign_offsets_in_place(records: MemoryRecords, next_offset: int, now_ms: int, config: LogConfig,
                            partition_leader_epoch: int, header_without_producer: bool = True,
                            ) -> tuple[BatchHeader | None, int, int, int, int] | None:
    """The common case of validate_messages_and_assign_offsets for a client's request, in C:
    (the batch's header as sent, its last offset, max timestamp, shallow offset of the max,
    record count) with the base offset and leader epoch stamped, or None with nothing written
    when the request needs the full path (which then refuses it or does what C does not).
    With header_without_producer=False the header is None for a batch without a producer
    id (the append path needs none, and building it costs ~0.5 us)."""
    if (assign_offsets_non_compressed is None or config.message_timestamp_type == "LogAppendTime"
            or config.compression_type not in _KEEPS_UNCOMPRESSED):
        return None
    return assign_offsets_non_compressed(records.buffer, next_offset, partition_leader_epoch, now_ms,
                                         config.message_timestamp_before_max_ms,
                                         config.message_timestamp_after_max_ms, config.max_message_bytes,
                                         config.compact, header_without_producer)


def validate_messages_and_assign_offsets(records: MemoryRecords, next_offset: int, now_ms: int,
                                         config: LogConfig, partition_leader_epoch: int,
                                         is_from_client: bool = True, try_in_place: bool = True) -> ValidationResult:
    """Validate `records` and stamp base offsets from `next_offset` (a writable buffer is required).

    This runs once per partition of every produce request. Kafka's v2 requests carry
    one batch per partition; more is INVALID_RECORD, as in Kafka. `try_in_place=False`
    is for a caller that already had assign_offsets_in_place decline these records: a
    decline can come after the CRC and the whole walk, which need not run twice."""
    if is_from_client and try_in_place:
        fast = assign_offsets_in_place(records, next_offset, now_ms, config, partition_leader_epoch)
        if fast is not None:
            header, last_offset, max_timestamp, shallow_offset_of_max, _count = fast
            return ValidationResult(records, -1, max_timestamp, shallow_offset_of_max, next_offset, last_offset,
                                    header.record_count, False, CompressionType.NONE,
                                    [RecordBatch._trusted(records.buffer, 0, header.batch_length + 12)], [header])
    log_append = config.message_timestamp_type == "LogAppendTime"
    batches, headers = analyze_and_validate(records, config, is_from_client)
    records = trim_invalid_bytes(records, batches)
    if len(batches) > 1:  # LogValidator.getFirstBatchAndMaybeValidateNoMoreBatches, for v2
        raise RecordValidationError(INVALID_RECORD, "Compressed outer record has more than one batch")
    batch, header = batches[0], headers[0]
    source = _CODECS_BY_ID[header.attributes & _CODEC_MASK]
    target = target_compression(config, source)
    batch_max, offsets_in_sequence, records_data, records_size = _validate_records(0, batch, config, now_ms,
                                                                                  log_append)
    # Kafka writes an uncompressed control batch (a transaction marker) as it is, whatever
    # the topic's compression.type ("do not compress control records unless they are
    # written compressed").
    kept_as_control = source == CompressionType.NONE and header.attributes & _CONTROL_BIT
    rebuilt = (source != target and not kept_as_control) or not offsets_in_sequence
    # RecordValidationStats, as LogValidator fills it: nothing for uncompressed records kept so;
    # else the memory the decompressed records take (with a batch header), and a rebuild's too.
    stats = None
    if source != CompressionType.NONE or target != CompressionType.NONE:
        stats = RecordValidationStats(RECORD_BATCH_OVERHEAD + records_size, 0, 0)
    if rebuilt:  # Kafka's buildRecordsAndAssignOffsets: the topic's codec, offsets 0..n-1
        started_ns = time.monotonic_ns()
        rebuilt_bytes, uncompressed_bytes = _rebuild(batch, target, target_compression_level(config), log_append,
                                                     now_ms, records_data, batch_max)
        stats = RecordValidationStats((stats.temporary_memory_bytes if stats else 0) + uncompressed_bytes,
                                      header.record_count, time.monotonic_ns() - started_ns)
        records = MemoryRecords(bytearray(rebuilt_bytes))
        batch = next(records.batches())
        header = batch.header()
        batches, headers = [batch], [header]
    if log_append:
        batch_max = now_ms
        batch.stamp(base_offset=next_offset, partition_leader_epoch=partition_leader_epoch,
                    max_timestamp=now_ms, timestamp_type=TimestampType.LOG_APPEND_TIME)
    elif batch_max != batch.max_timestamp or batch.attributes & _TIMESTAMP_TYPE_BIT:
        # Kafka's setMaxTimestamp: the records' max replaces the header's, and a client's
        # LogAppendTime bit is cleared (both under the CRC, so it is recomputed then).
        batch.stamp(base_offset=next_offset, partition_leader_epoch=partition_leader_epoch,
                    max_timestamp=batch_max, timestamp_type=TimestampType.CREATE_TIME)
    else:  # CreateTime kept as sent: the CRC does not cover these two fields
        batch.stamp(base_offset=next_offset, partition_leader_epoch=partition_leader_epoch)
    last_offset = next_offset + header.last_offset_delta
    return ValidationResult(records, now_ms if log_append else -1, batch_max, last_offset if batch_max >= 0 else -1,
                            next_offset, last_offset, header.record_count, rebuilt, source, batches, headers, stats)


def _rebuild(batch: RecordBatch, target: CompressionType, level: int | None, log_append: bool, now_ms: int,
             records_data=None, records_max: int = -1) -> tuple[bytes, int]:
    """`batch` written again with the `target` codec (at `level`, None for its default) and
    inner offsets 0..n-1, keeping its producer identity, sequence and transactional flag; and
    its size before compression (MemoryRecordsBuilder.uncompressedBytesWritten).

    `records_data` (the records' bytes, decompressed) and `records_max` (their largest
    timestamp), when known, let canonical records go to the new codec as they are: the bytes a
    record-by-record rebuild would produce, without decoding and encoding each record."""
    builder = MemoryRecordsBuilder(
        compression_type=target, compression_level=level,
        timestamp_type=TimestampType.LOG_APPEND_TIME if log_append else TimestampType.CREATE_TIME,
        log_append_time=now_ms if log_append else -1, base_offset=0,
        partition_leader_epoch=batch.partition_leader_epoch, is_transactional=batch.is_transactional)
    # As Kafka's buildRecordsAndAssignOffsets: the batch's producer fields as they are, even
    # an epoch or a sequence beside no producer id.
    builder.set_producer_state(batch.producer_id, batch.producer_epoch, batch.base_sequence, batch.is_transactional)
    index_of_max = None
    if records_data is not None and canonical_records is not None:
        index_of_max = canonical_records(records_data, batch.record_count, batch.base_timestamp)
    if index_of_max is not None:
        builder.append_encoded_records(records_data, batch.record_count, batch.base_timestamp, records_max,
                                       index_of_max)
    else:
        for index, record in enumerate(batch.records()):
            builder.append_with_offset(index, record.timestamp, record.key, record.value, record.headers)
    uncompressed_bytes = builder.uncompressed_size_in_bytes  # build_bytes hands its records section on
    return builder.build_bytes(), uncompressed_bytes
