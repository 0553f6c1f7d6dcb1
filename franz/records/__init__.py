"""Kafka's v2 record format (org.apache.kafka.common.record): batches and records
as bytes-first views, CRC32C, the four codecs, MemoryRecords and FileRecords.

The layout is written down in constants.py; docs/records-api.md is the
contract the storage and protocol layers code against. Small private modules,
re-exported here:

    constants.py       offsets, sizes, masks, sentinels, CompressionType, TimestampType
    errors.py          CorruptRecordError, InvalidRecordError, RecordBatchTooLargeError
    byte_utils.py      zigzag varint/varlong
    record.py          Record (DefaultRecord): decode/encode one record
    record_batch.py    RecordBatch (DefaultRecordBatch): header view, CRC, stamping
    compression.py     gzip, snappy (xerial), lz4 (frame), zstd; bounded decompression
    control.py         ControlRecordType, EndTransactionMarker
    builder.py         MemoryRecordsBuilder, SimpleRecord, build_batch, build_control_batch
    memory_records.py  MemoryRecords
    file_records.py    FileRecords, FileRecordBatch, LogOffsetPosition, TimestampAndOffset
"""

from franz.records.builder import (
    MemoryRecordsBuilder,
    SimpleRecord,
    build_batch,
    build_control_batch,
    compute_attributes,
    encode_batch,
)
from franz.records.compression import compress, decompress
from franz.records.constants import (
    DECOMPRESSED_SIZE_BYTES_MAX,
    LOG_OVERHEAD,
    MAX_RECORD_OVERHEAD,
    NO_PARTITION_LEADER_EPOCH,
    NO_PRODUCER_EPOCH,
    NO_PRODUCER_ID,
    NO_SEQUENCE,
    NO_TIMESTAMP,
    RECORD_BATCH_OVERHEAD,
    CompressionType,
    TimestampType,
)
from franz.records.control import ControlRecordType, EndTransactionMarker
from franz.records.errors import (
    CorruptRecordError,
    InvalidRecordError,
    RecordBatchTooLargeError,
    RecordsError,
)
from franz.records.file_records import (
    FileRecordBatch,
    FileRecords,
    LogOffsetPosition,
    TimestampAndOffset,
)
from franz.records.memory_records import MemoryRecords
from franz.records.record import Record
from franz.records.record_batch import BatchHeader, RecordBatch

__all__ = [
    "DECOMPRESSED_SIZE_BYTES_MAX",
    "LOG_OVERHEAD",
    "MAX_RECORD_OVERHEAD",
    "NO_PARTITION_LEADER_EPOCH",
    "NO_PRODUCER_EPOCH",
    "NO_PRODUCER_ID",
    "NO_SEQUENCE",
    "NO_TIMESTAMP",
    "RECORD_BATCH_OVERHEAD",
    "BatchHeader",
    "CompressionType",
    "ControlRecordType",
    "CorruptRecordError",
    "EndTransactionMarker",
    "FileRecordBatch",
    "FileRecords",
    "InvalidRecordError",
    "LogOffsetPosition",
    "MemoryRecords",
    "MemoryRecordsBuilder",
    "Record",
    "RecordBatch",
    "RecordBatchTooLargeError",
    "RecordsError",
    "SimpleRecord",
    "TimestampAndOffset",
    "TimestampType",
    "build_batch",
    "build_control_batch",
    "compress",
    "compute_attributes",
    "decompress",
    "encode_batch",
]
