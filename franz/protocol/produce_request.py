"""ProduceRequest.validateRecords: the shape Kafka 4.x requires of each
partition's records in a Produce request before any log sees them.

From Produce v3 on, a partition's records must be exactly one whole v2 batch;
a v3-v6 request may not use zstd (the codec came with v7). Kafka's broker
checks this in KafkaApis.handleProduceRequest and answers the one partition
with the exception's code, leaving the others of the request to append.

The batch walk is Kafka's ByteBufferLogInputStream.nextBatch: fewer than 12
bytes, or a header cut before its magic byte, or a batch longer than the
bytes left, is "no batch" (so bytes trailing the first batch that do not make
a whole one pass here; the log trims them, as UnifiedLog.trimInvalidBytes
does); a size below the smallest legacy record, or a magic byte outside 0-2,
is a corrupt record.
"""

from __future__ import annotations

import struct
from typing import Final

from franz.protocol.errors import Errors

_LOG_OVERHEAD: Final = 12  # baseOffset int64 + length int32
_HEADER_SIZE_UP_TO_MAGIC: Final = 17  # + partitionLeaderEpoch int32 + magic int8
_MAGIC_OFFSET: Final = 16
_ATTRIBUTES_OFFSET: Final = 21
_RECORD_OVERHEAD_V0: Final = 14  # LegacyRecord.RECORD_OVERHEAD_V0: the smallest size any magic allows
_CURRENT_MAGIC: Final = 2
_CODEC_MASK: Final = 0x07
_TRANSACTIONAL_BIT: Final = 0x10
_RECORD_BATCH_OVERHEAD: Final = 61  # a whole v2 batch header
_ZSTD: Final = 4
_ZSTD_MIN_VERSION: Final = 7
_SIZE: Final = struct.Struct(">i")


class InvalidProduceRecordsError(Exception):
    """A partition's records that a Produce request may not carry; `error_code` is Kafka's."""

    def __init__(self, error_code: Errors, message: str) -> None:
        super().__init__(message)
        self.error_code = error_code


def validate_records(version: int, records) -> None:
    """Raise InvalidProduceRecordsError unless `records` (bytes-like, not None) is what a
    Produce request of `version` may carry for one partition."""
    if version < 3:
        return
    view = memoryview(records).cast("B")
    first_size = _next_batch_size(view, 0)
    if first_size is None:
        raise InvalidProduceRecordsError(
            Errors.INVALID_RECORD,
            f"Produce requests with version {version} must have at least one record batch per partition")
    if view[_MAGIC_OFFSET] != _CURRENT_MAGIC:
        raise InvalidProduceRecordsError(
            Errors.INVALID_RECORD,
            f"Produce requests with version {version} are only allowed to contain record batches "
            f"with magic version 2")
    if version < _ZSTD_MIN_VERSION and view[_ATTRIBUTES_OFFSET + 1] & _CODEC_MASK == _ZSTD:
        raise InvalidProduceRecordsError(
            Errors.UNSUPPORTED_COMPRESSION_TYPE,
            f"Produce requests with version {version} are not allowed to use ZStandard compression")
    if _next_batch_size(view, first_size) is not None:
        raise InvalidProduceRecordsError(
            Errors.INVALID_RECORD,
            f"Produce requests with version {version} are only allowed to contain exactly one record "
            f"batch per partition")


def has_transactional_records(topic_data: list[dict]) -> bool:
    """RequestUtils.hasTransactionalRecords: whether some partition's first batch is a
    transactional v2 batch (a request carrying one needs a transactional id). Kafka reaches each
    first batch through the batch iterator, so, until a transactional one is found, a first batch
    whose header is corrupt (a size below the smallest record, a magic byte outside 0-2) fails the
    whole request: InvalidProduceRecordsError(CORRUPT_MESSAGE). Runs for every produce, so it
    reads the header fields in place."""
    for topic in topic_data:
        for partition in topic["partition_data"]:
            records = partition["records"]
            if (records is not None and _next_batch_size(records, 0) is not None  # raises for a corrupt header
                    and len(records) >= _RECORD_BATCH_OVERHEAD and records[_MAGIC_OFFSET] == _CURRENT_MAGIC
                    and records[_ATTRIBUTES_OFFSET + 1] & _TRANSACTIONAL_BIT):
                return True
    return False


_PRODUCER: Final = struct.Struct(">qhi")  # producerId, producerEpoch, baseSequence
_PRODUCER_ID_OFFSET: Final = 43


def transactional_producer(records) -> tuple[int, int, int] | None:
    """(producer id, epoch, base sequence) of a partition's batch when it is transactional
    and has a producer id; None otherwise. Reads the header of a batch validate_records
    passed (one whole v2 batch)."""
    if (records is None or len(records) < _RECORD_BATCH_OVERHEAD
            or not records[_ATTRIBUTES_OFFSET + 1] & _TRANSACTIONAL_BIT):
        return None
    producer = _PRODUCER.unpack_from(records, _PRODUCER_ID_OFFSET)
    return producer if producer[0] >= 0 else None


def _next_batch_size(view, position: int) -> int | None:
    """The size of the whole batch at `position`, or None when the bytes from there hold none
    (`view`: bytes-like, indexed by byte)."""
    remaining = len(view) - position
    if remaining < _LOG_OVERHEAD:
        return None
    record_size = _SIZE.unpack_from(view, position + 8)[0]
    if record_size < _RECORD_OVERHEAD_V0:
        raise InvalidProduceRecordsError(
            Errors.CORRUPT_MESSAGE,
            f"Record size {record_size} is less than the minimum record overhead ({_RECORD_OVERHEAD_V0})")
    if remaining < _HEADER_SIZE_UP_TO_MAGIC:
        return None
    magic = _signed_byte(view[position + _MAGIC_OFFSET])
    if magic < 0 or magic > _CURRENT_MAGIC:
        raise InvalidProduceRecordsError(Errors.CORRUPT_MESSAGE, f"Invalid magic found in record: {magic}")
    size = record_size + _LOG_OVERHEAD
    return size if size <= remaining else None


def _signed_byte(value: int) -> int:
    return value - 256 if value > 127 else value
