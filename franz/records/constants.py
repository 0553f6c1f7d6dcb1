"""Layout of Kafka's v2 record batch (magic 2) and its records: every offset,
size, mask and sentinel in one place (org.apache.kafka.common.record:
DefaultRecordBatch, DefaultRecord, RecordBatch, Records).

Grammar (all integers big-endian, two's complement, unless marked varint):

    log          := batch*  partial_batch?        # a file or a fetch response
    batch        := header records
    header       := base_offset:int64            #  0  (LOG_OVERHEAD covers
                    batch_length:int32           #  8   these two fields)
                    partition_leader_epoch:int32 # 12  not covered by the CRC
                    magic:int8 (= 2)             # 16
                    crc:uint32                   # 17  CRC32C of bytes [21, end)
                    attributes:int16             # 21
                    last_offset_delta:int32      # 23
                    base_timestamp:int64         # 27  delete horizon if bit 6
                    max_timestamp:int64          # 35
                    producer_id:int64            # 43
                    producer_epoch:int16         # 51
                    base_sequence:int32          # 53
                    records_count:int32          # 57
                                                 # 61 = RECORD_BATCH_OVERHEAD
    records      := record{records_count}              # compression NONE
                  | compressed(record{records_count})  # one stream, codec in attributes
    record       := length:varint                # bytes after this field
                    attributes:int8 (unused, 0)
                    timestamp_delta:varlong      # from base_timestamp
                    offset_delta:varint          # from base_offset
                    key_length:varint key:byte{key_length}        # -1 = null
                    value_length:varint value:byte{value_length}  # -1 = null
                    header_count:varint header{header_count}
    header       := key_length:varint key:utf8{key_length}
                    value_length:varint value:byte{value_length}  # -1 = null

    varint/varlong := zigzag-encoded, 7 bits per byte, low groups first,
                      high bit set on every byte but the last;
                      at most 5 bytes (varint) or 10 bytes (varlong).

    attributes   := bits 0-2 compression type | bit 3 timestamp type
                    (1 = LOG_APPEND_TIME) | bit 4 transactional | bit 5 control
                    | bit 6 delete horizon set | bits 7-15 unused (0)

batch_length counts the bytes after itself, so a batch occupies
LOG_OVERHEAD + batch_length bytes. A batch's last offset is base_offset +
last_offset_delta (kept through compaction even when records are removed).
"""

from __future__ import annotations

import enum
import struct
from typing import Final

# ---- batch header: offsets and sizes (bytes) ---------------------------------
BASE_OFFSET_OFFSET: Final = 0
BASE_OFFSET_LENGTH: Final = 8
LENGTH_OFFSET: Final = BASE_OFFSET_OFFSET + BASE_OFFSET_LENGTH  # 8
LENGTH_LENGTH: Final = 4
PARTITION_LEADER_EPOCH_OFFSET: Final = LENGTH_OFFSET + LENGTH_LENGTH  # 12
PARTITION_LEADER_EPOCH_LENGTH: Final = 4
MAGIC_OFFSET: Final = PARTITION_LEADER_EPOCH_OFFSET + PARTITION_LEADER_EPOCH_LENGTH  # 16
MAGIC_LENGTH: Final = 1
CRC_OFFSET: Final = MAGIC_OFFSET + MAGIC_LENGTH  # 17
CRC_LENGTH: Final = 4
ATTRIBUTES_OFFSET: Final = CRC_OFFSET + CRC_LENGTH  # 21
ATTRIBUTES_LENGTH: Final = 2
LAST_OFFSET_DELTA_OFFSET: Final = ATTRIBUTES_OFFSET + ATTRIBUTES_LENGTH  # 23
LAST_OFFSET_DELTA_LENGTH: Final = 4
BASE_TIMESTAMP_OFFSET: Final = LAST_OFFSET_DELTA_OFFSET + LAST_OFFSET_DELTA_LENGTH  # 27
BASE_TIMESTAMP_LENGTH: Final = 8
MAX_TIMESTAMP_OFFSET: Final = BASE_TIMESTAMP_OFFSET + BASE_TIMESTAMP_LENGTH  # 35
MAX_TIMESTAMP_LENGTH: Final = 8
PRODUCER_ID_OFFSET: Final = MAX_TIMESTAMP_OFFSET + MAX_TIMESTAMP_LENGTH  # 43
PRODUCER_ID_LENGTH: Final = 8
PRODUCER_EPOCH_OFFSET: Final = PRODUCER_ID_OFFSET + PRODUCER_ID_LENGTH  # 51
PRODUCER_EPOCH_LENGTH: Final = 2
BASE_SEQUENCE_OFFSET: Final = PRODUCER_EPOCH_OFFSET + PRODUCER_EPOCH_LENGTH  # 53
BASE_SEQUENCE_LENGTH: Final = 4
RECORDS_COUNT_OFFSET: Final = BASE_SEQUENCE_OFFSET + BASE_SEQUENCE_LENGTH  # 57
RECORDS_COUNT_LENGTH: Final = 4
RECORDS_OFFSET: Final = RECORDS_COUNT_OFFSET + RECORDS_COUNT_LENGTH  # 61

LOG_OVERHEAD: Final = LENGTH_OFFSET + LENGTH_LENGTH  # 12: base offset + length
HEADER_SIZE_UP_TO_MAGIC: Final = MAGIC_OFFSET + MAGIC_LENGTH  # 17
RECORD_BATCH_OVERHEAD: Final = RECORDS_OFFSET  # 61
# The smallest legal batch_length field: a v2 header with no records.
BATCH_LENGTH_MIN: Final = RECORD_BATCH_OVERHEAD - LOG_OVERHEAD  # 49

assert RECORD_BATCH_OVERHEAD == 61 and CRC_OFFSET == 17 and ATTRIBUTES_OFFSET == 21

# One precompiled Struct per access pattern (the header path is hot).
HEADER_STRUCT: Final = struct.Struct(">qiibIhiqqqhii")  # all 13 fields, 61 bytes
PREFIX_STRUCT: Final = struct.Struct(">qiib")  # base offset, length, epoch, magic
assert HEADER_STRUCT.size == RECORD_BATCH_OVERHEAD
assert PREFIX_STRUCT.size == HEADER_SIZE_UP_TO_MAGIC
INT8: Final = struct.Struct(">b")
INT16: Final = struct.Struct(">h")
INT32: Final = struct.Struct(">i")
UINT32: Final = struct.Struct(">I")
INT64: Final = struct.Struct(">q")

# ---- magic ---------------------------------------------------------------
MAGIC_VALUE_V0: Final = 0
MAGIC_VALUE_V1: Final = 1
MAGIC_VALUE_V2: Final = 2
CURRENT_MAGIC_VALUE: Final = MAGIC_VALUE_V2

# ---- attributes (int16; Kafka only uses the low byte) -----------------------
COMPRESSION_CODEC_MASK: Final = 0x07
TIMESTAMP_TYPE_MASK: Final = 0x08
TRANSACTIONAL_FLAG_MASK: Final = 0x10
CONTROL_FLAG_MASK: Final = 0x20
DELETE_HORIZON_FLAG_MASK: Final = 0x40

# ---- sentinels (RecordBatch) -------------------------------------------------
NO_TIMESTAMP: Final = -1
NO_PRODUCER_ID: Final = -1
NO_PRODUCER_EPOCH: Final = -1
NO_SEQUENCE: Final = -1
NO_PARTITION_LEADER_EPOCH: Final = -1

# ---- records (DefaultRecord) -------------------------------------------------
# Excluding key, value and headers: 5 bytes length + 10 bytes timestamp delta
# + 5 bytes offset delta + 1 byte attributes.
MAX_RECORD_OVERHEAD: Final = 21
# The smallest encoded record: length, attributes, timestamp delta, offset
# delta, key length, value length, header count, one byte each.
RECORD_SIZE_MIN: Final = 7
VARINT_SIZE_BYTES_MAX: Final = 5
VARLONG_SIZE_BYTES_MAX: Final = 10

INT32_MAX: Final = 2**31 - 1
INT32_MIN: Final = -(2**31)
INT64_MAX: Final = 2**63 - 1
INT64_MIN: Final = -(2**63)

# ---- limits --------------------------------------------------------------
# A decompressed records section larger than this is refused as corrupt: it is
# either a decompression bomb or far beyond anything Kafka's producers build
# (max.request.size defaults to 1 MiB, message.max.bytes to ~1 MiB).
DECOMPRESSED_SIZE_BYTES_MAX: Final = 64 * 1024 * 1024
# Streaming decompression produces at most this much per step, so a bomb is
# caught after at most DECOMPRESSED_SIZE_BYTES_MAX + this many bytes.
DECOMPRESSION_CHUNK_BYTES: Final = 256 * 1024


class CompressionType(enum.IntEnum):
    """Codec id in attribute bits 0-2 (Kafka CompressionType)."""

    NONE = 0
    GZIP = 1
    SNAPPY = 2
    LZ4 = 3
    ZSTD = 4

    @property
    def name_lower(self) -> str:
        """Kafka's config name: 'none', 'gzip', 'snappy', 'lz4', 'zstd'."""
        return self.name.lower()

    @classmethod
    def for_id(cls, type_id: int) -> CompressionType:
        """REQUIRES: 0 <= type_id <= 4, else ValueError (Kafka: IllegalArgumentException)."""
        return cls(type_id)

    @classmethod
    def for_name(cls, name: str) -> CompressionType:
        """'gzip' -> GZIP; ValueError on an unknown name."""
        try:
            return cls[name.upper()]
        except KeyError:
            raise ValueError(f"Unknown compression name: {name}") from None


class TimestampType(enum.IntEnum):
    """Attribute bit 3 (Kafka TimestampType)."""

    NO_TIMESTAMP_TYPE = -1
    CREATE_TIME = 0
    LOG_APPEND_TIME = 1
