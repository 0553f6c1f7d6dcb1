"""A v2 record batch as a view on bytes (org.apache.kafka.common.record.DefaultRecordBatch).

Owns reading the 61-byte header (O(1) struct reads at fixed offsets, no copy),
CRC32C validation, decoding the records (decompressing, bounded) and stamping
a batch in place: base offset, partition leader epoch, max timestamp and the
timestamp type bit, with one CRC recompute.

Invariants of a RecordBatch built by RecordBatch(buffer, position):
- buffer[position : position + size_in_bytes] lies inside the buffer,
- size_in_bytes >= RECORD_BATCH_OVERHEAD (61) and magic == 2,
so every header property is a plain read that cannot fail. The CRC is NOT
checked on construction (the broker checks it once, where Kafka does); call
is_valid() or ensure_valid().

The CRC covers bytes [ATTRIBUTES_OFFSET, end): base offset, batch length and
partition leader epoch lie outside it, so stamping those needs no CRC work;
changing the max timestamp or the attributes does.
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any, NamedTuple

from crc32c import crc32c

from franz.records.compression import decompress
from franz.records.constants import (
    ATTRIBUTES_OFFSET,
    BASE_OFFSET_OFFSET,
    BASE_SEQUENCE_OFFSET,
    BASE_TIMESTAMP_OFFSET,
    BATCH_LENGTH_MIN,
    COMPRESSION_CODEC_MASK,
    CONTROL_FLAG_MASK,
    CRC_OFFSET,
    CURRENT_MAGIC_VALUE,
    DECOMPRESSED_SIZE_BYTES_MAX,
    DELETE_HORIZON_FLAG_MASK,
    HEADER_STRUCT,
    INT16,
    INT32,
    INT64,
    LAST_OFFSET_DELTA_OFFSET,
    LOG_OVERHEAD,
    MAGIC_OFFSET,
    MAX_TIMESTAMP_OFFSET,
    NO_SEQUENCE,
    PARTITION_LEADER_EPOCH_OFFSET,
    PREFIX_STRUCT,
    PRODUCER_EPOCH_OFFSET,
    PRODUCER_ID_OFFSET,
    RECORD_BATCH_OVERHEAD,
    RECORD_SIZE_MIN,
    RECORDS_COUNT_OFFSET,
    TIMESTAMP_TYPE_MASK,
    TRANSACTIONAL_FLAG_MASK,
    UINT32,
    CompressionType,
    TimestampType,
)
from franz.records.errors import CorruptRecordError, InvalidChecksumError, InvalidRecordError
from franz.records.record import Record, RecordKey, increment_sequence, read_record, scan_record_keys

_unpack_i64 = INT64.unpack_from
_unpack_i32 = INT32.unpack_from
_unpack_i16 = INT16.unpack_from
_unpack_u32 = UINT32.unpack_from
_unpack_prefix = PREFIX_STRUCT.unpack_from
_pack_i64 = INT64.pack_into
_pack_i32 = INT32.pack_into
_pack_u32 = UINT32.pack_into
_pack_i16 = INT16.pack_into
_unpack_header = HEADER_STRUCT.unpack_from
_new_tuple = tuple.__new__  # BatchHeader._make without its extra call and length check

# The attribute bits Kafka keeps when it recomputes attributes (computeAttributes):
# codec, transactional, control, delete horizon. Timestamp type is set anew;
# unused bits 7-15 are cleared, exactly as Kafka's setMaxTimestamp does.
_KEPT_ATTRIBUTE_BITS = (COMPRESSION_CODEC_MASK | TRANSACTIONAL_FLAG_MASK
                        | CONTROL_FLAG_MASK | DELETE_HORIZON_FLAG_MASK)


class BatchHeader(NamedTuple):
    """All 13 header fields, read with one struct call (see RecordBatch.header())."""

    base_offset: int
    batch_length: int
    partition_leader_epoch: int
    magic: int
    crc: int
    attributes: int
    last_offset_delta: int
    base_timestamp: int
    max_timestamp: int
    producer_id: int
    producer_epoch: int
    base_sequence: int
    record_count: int


def check_batch_bounds(buffer, position: int, limit: int) -> int:
    """Validate the batch starting at `position` of buffer[:limit]; return its size.

    Raises CorruptRecordError (with `position`) when fewer than 61 bytes are
    left, the batch length is below a v2 header's, the batch runs past
    `limit`, or the magic is not 2.
    """
    if position < 0 or position + RECORD_BATCH_OVERHEAD > limit:
        raise CorruptRecordError(
            f"Record batch is truncated: {max(limit - position, 0)} bytes left, "
            f"a batch header needs {RECORD_BATCH_OVERHEAD}", position)
    _, length, _, magic = _unpack_prefix(buffer, position)
    if length < BATCH_LENGTH_MIN:
        raise CorruptRecordError(
            f"Record batch is corrupt (the size {length + LOG_OVERHEAD} is smaller than "
            f"the minimum allowed overhead {RECORD_BATCH_OVERHEAD})", position)
    size = length + LOG_OVERHEAD
    if position + size > limit:
        raise CorruptRecordError(
            f"Record batch of {size} bytes runs past the end of the data "
            f"({limit - position} bytes left)", position)
    if magic != CURRENT_MAGIC_VALUE:
        raise CorruptRecordError(f"Invalid magic found in record batch: {magic}", position)
    return size


class RecordBatch:
    """A v2 batch at buffer[position : position + size_in_bytes]. See module docstring."""

    __slots__ = ("_buf", "_pos", "_size")

    def __init__(self, buffer, position: int = 0) -> None:
        self._size = check_batch_bounds(buffer, position, len(buffer))
        self._buf = buffer
        self._pos = position

    @classmethod
    def _trusted(cls, buffer, position: int, size: int) -> RecordBatch:
        """A view whose bounds the caller already checked (see MemoryRecords.batches)."""
        self = object.__new__(cls)
        self._buf = buffer
        self._pos = position
        self._size = size
        return self

    @classmethod
    def header_view(cls, header: bytes) -> RecordBatch:
        """A view on just the 61 header bytes of a batch stored elsewhere (a file).

        Header properties work; methods that need the records (checksum
        computation, records(), to_bytes()) raise ValueError.
        REQUIRES: len(header) >= 61 and the header passed check_batch_bounds'
        length and magic checks.
        """
        assert len(header) >= RECORD_BATCH_OVERHEAD
        return _HeaderOnlyRecordBatch._trusted(header, 0, _unpack_i32(header, 8)[0] + LOG_OVERHEAD)

    # ---- where it lives -----------------------------------------------------
    @property
    def buffer(self):
        """The underlying buffer (shared, not copied)."""
        return self._buf

    @property
    def position(self) -> int:
        """Byte offset of this batch in `buffer`."""
        return self._pos

    def header(self) -> BatchHeader:
        """All header fields at once: one struct call (the storage engine's hot path)."""
        return _new_tuple(BatchHeader, _unpack_header(self._buf, self._pos))

    # ---- header fields ------------------------------------------------------
    @property
    def base_offset(self) -> int:
        return _unpack_i64(self._buf, self._pos)[0]

    @property
    def batch_length(self) -> int:
        return self._size - LOG_OVERHEAD

    @property
    def size_in_bytes(self) -> int:
        return self._size

    @property
    def partition_leader_epoch(self) -> int:
        return _unpack_i32(self._buf, self._pos + PARTITION_LEADER_EPOCH_OFFSET)[0]

    @property
    def magic(self) -> int:
        return CURRENT_MAGIC_VALUE  # checked on construction

    @property
    def checksum(self) -> int:
        """The stored CRC32C (unsigned)."""
        return _unpack_u32(self._buf, self._pos + CRC_OFFSET)[0]

    @property
    def attributes(self) -> int:
        """The attributes int16 as stored (Kafka only interprets the low byte)."""
        return _unpack_i16(self._buf, self._pos + ATTRIBUTES_OFFSET)[0]

    @property
    def compression_type(self) -> CompressionType:
        """Raises CorruptRecordError for codec ids 5-7, which Kafka does not define."""
        type_id = self._buf[self._pos + ATTRIBUTES_OFFSET + 1] & COMPRESSION_CODEC_MASK
        try:
            return CompressionType(type_id)
        except ValueError:
            raise CorruptRecordError(f"Unknown compression type id: {type_id}", self._pos) from None

    @property
    def is_compressed(self) -> bool:
        return self._buf[self._pos + ATTRIBUTES_OFFSET + 1] & COMPRESSION_CODEC_MASK != 0

    @property
    def timestamp_type(self) -> TimestampType:
        if self._buf[self._pos + ATTRIBUTES_OFFSET + 1] & TIMESTAMP_TYPE_MASK:
            return TimestampType.LOG_APPEND_TIME
        return TimestampType.CREATE_TIME

    @property
    def is_transactional(self) -> bool:
        return self._buf[self._pos + ATTRIBUTES_OFFSET + 1] & TRANSACTIONAL_FLAG_MASK != 0

    @property
    def is_control_batch(self) -> bool:
        return self._buf[self._pos + ATTRIBUTES_OFFSET + 1] & CONTROL_FLAG_MASK != 0

    @property
    def has_delete_horizon(self) -> bool:
        return self._buf[self._pos + ATTRIBUTES_OFFSET + 1] & DELETE_HORIZON_FLAG_MASK != 0

    @property
    def delete_horizon_ms(self) -> int | None:
        """The base timestamp when the delete horizon flag is set, else None."""
        return self.base_timestamp if self.has_delete_horizon else None

    @property
    def last_offset_delta(self) -> int:
        return _unpack_i32(self._buf, self._pos + LAST_OFFSET_DELTA_OFFSET)[0]

    @property
    def last_offset(self) -> int:
        return self.base_offset + self.last_offset_delta

    @property
    def next_offset(self) -> int:
        return self.last_offset + 1

    @property
    def base_timestamp(self) -> int:
        return _unpack_i64(self._buf, self._pos + BASE_TIMESTAMP_OFFSET)[0]

    @property
    def max_timestamp(self) -> int:
        return _unpack_i64(self._buf, self._pos + MAX_TIMESTAMP_OFFSET)[0]

    @property
    def producer_id(self) -> int:
        return _unpack_i64(self._buf, self._pos + PRODUCER_ID_OFFSET)[0]

    @property
    def producer_epoch(self) -> int:
        return _unpack_i16(self._buf, self._pos + PRODUCER_EPOCH_OFFSET)[0]

    @property
    def base_sequence(self) -> int:
        return _unpack_i32(self._buf, self._pos + BASE_SEQUENCE_OFFSET)[0]

    @property
    def last_sequence(self) -> int:
        base = self.base_sequence
        if base == NO_SEQUENCE:
            return NO_SEQUENCE
        return increment_sequence(base, self.last_offset_delta)

    @property
    def record_count(self) -> int:
        return _unpack_i32(self._buf, self._pos + RECORDS_COUNT_OFFSET)[0]

    # ---- validation ---------------------------------------------------------
    def _body(self) -> memoryview:
        return memoryview(self._buf)[self._pos:self._pos + self._size]

    def compute_checksum(self) -> int:
        """CRC32C of bytes [ATTRIBUTES_OFFSET, end) of the batch."""
        pos = self._pos
        return crc32c(memoryview(self._buf)[pos + ATTRIBUTES_OFFSET:pos + self._size])

    def is_valid(self) -> bool:
        """True iff the stored CRC matches the bytes (size >= 61 holds by construction)."""
        buf = self._buf
        pos = self._pos
        return (_unpack_u32(buf, pos + CRC_OFFSET)[0]
                == crc32c(memoryview(buf)[pos + ATTRIBUTES_OFFSET:pos + self._size]))

    def ensure_valid(self) -> None:
        """Raise CorruptRecordError (at this batch's position) unless is_valid()."""
        stored = self.checksum
        computed = self.compute_checksum()
        if stored != computed:
            raise InvalidChecksumError(
                f"Record is corrupt (stored crc = {stored}, computed crc = {computed})", self._pos)

    # ---- records ------------------------------------------------------------
    def records(self, decompressed_size_bytes_max: int = DECOMPRESSED_SIZE_BYTES_MAX) -> Iterator[Record]:
        """Decode the records (decompressing first, bounded by decompressed_size_bytes_max).

        Structural problems found before decoding (negative or impossible
        record count, undecodable or oversized compressed data) raise at once;
        a malformed record raises when the iterator reaches it.
        """
        count = self.record_count
        if count < 0:
            raise InvalidRecordError(f"Found invalid record count {count} in magic v2 batch", self._pos)
        if count == 0:
            return iter(())
        data, base = self.records_data(decompressed_size_bytes_max)
        return self._iter_records(data, count, base)

    def records_data(self, decompressed_size_bytes_max: int = DECOMPRESSED_SIZE_BYTES_MAX) -> tuple[Any, int | None]:
        """The records' bytes (decompressed when needed) and their position in the
        buffer (None when decompressed), for decoders that want them whole."""
        count = self.record_count
        body = self._body()
        data = body[RECORD_BATCH_OVERHEAD:]
        # Errors inside uncompressed records report their position in the
        # buffer; inside decompressed data, the batch's position.
        base: int | None = self._pos + RECORD_BATCH_OVERHEAD
        if self.is_compressed:
            data = decompress(self.compression_type, data, decompressed_size_bytes_max,
                              position=self._pos + RECORD_BATCH_OVERHEAD)
            base = None
        if count > len(data) // RECORD_SIZE_MIN:
            raise InvalidRecordError(
                f"Found impossible record count {count}: {len(data)} bytes of records "
                f"hold at most {len(data) // RECORD_SIZE_MIN}", self._pos)
        return data, base

    def record_keys(self, decompressed_size_bytes_max: int = DECOMPRESSED_SIZE_BYTES_MAX) -> list[RecordKey]:
        """Each record's offset, key and value presence, without decoding the rest (scan_record_keys)."""
        count = self.record_count
        if count <= 0:
            if count < 0:
                raise InvalidRecordError(f"Found invalid record count {count} in magic v2 batch", self._pos)
            return []
        data, base = self.records_data(decompressed_size_bytes_max)
        try:
            return scan_record_keys(data, 0, len(data), count, self.base_offset)
        except InvalidRecordError as e:
            raise InvalidRecordError(e.reason, self._pos if base is None else base + e.position) from None

    def _iter_records(self, data, count: int, base: int | None) -> Iterator[Record]:
        header = self.header()
        log_append_time = (header.max_timestamp
                           if header.attributes & TIMESTAMP_TYPE_MASK else None)
        is_control = bool(header.attributes & CONTROL_FLAG_MASK)
        end = len(data)
        pos = 0
        base_offset = header.base_offset
        base_timestamp = header.base_timestamp
        base_sequence = header.base_sequence
        for _ in range(count):
            try:
                record, pos = read_record(data, pos, end, base_offset, base_timestamp,
                                          base_sequence, log_append_time, is_control)
            except InvalidRecordError as e:
                # Report the position in the enclosing buffer when we know it.
                raise InvalidRecordError(
                    e.reason, self._pos if base is None else base + e.position) from None
            yield record
        if pos != end:
            raise InvalidRecordError(
                "Incorrect declared batch size, records still remaining in file",
                self._pos if base is None else base + pos)

    def __iter__(self) -> Iterator[Record]:
        return self.records()

    def to_bytes(self) -> bytes:
        """A copy of the whole batch."""
        return bytes(self._body())

    # ---- stamping (REQUIRES: a writable buffer: bytearray, mmap, writable memoryview)
    def set_base_offset(self, base_offset: int) -> None:
        """Outside the CRC: no recompute needed."""
        INT64.pack_into(self._buf, self._pos + BASE_OFFSET_OFFSET, base_offset)

    def set_last_offset(self, last_offset: int) -> None:
        """Set base offset = last_offset - last_offset_delta (Kafka setLastOffset)."""
        self.set_base_offset(last_offset - self.last_offset_delta)

    def set_partition_leader_epoch(self, epoch: int) -> None:
        """Outside the CRC: no recompute needed."""
        INT32.pack_into(self._buf, self._pos + PARTITION_LEADER_EPOCH_OFFSET, epoch)

    def set_max_timestamp(self, timestamp_type: TimestampType, max_timestamp: int) -> bool:
        """Set max timestamp and timestamp type, then recompute the CRC once.

        Like Kafka, does nothing (and returns False) when both are unchanged,
        and clears the unused attribute bits 7-15 when it writes.
        """
        if timestamp_type == TimestampType.NO_TIMESTAMP_TYPE:
            raise ValueError("Timestamp type must be provided to compute attributes for message format v2")
        if self.timestamp_type == timestamp_type and self.max_timestamp == max_timestamp:
            return False
        attributes = self._buf[self._pos + ATTRIBUTES_OFFSET + 1] & _KEPT_ATTRIBUTE_BITS
        if timestamp_type == TimestampType.LOG_APPEND_TIME:
            attributes |= TIMESTAMP_TYPE_MASK
        INT16.pack_into(self._buf, self._pos + ATTRIBUTES_OFFSET, attributes)
        INT64.pack_into(self._buf, self._pos + MAX_TIMESTAMP_OFFSET, max_timestamp)
        self.update_crc()
        return True

    def update_crc(self) -> None:
        """Recompute the CRC after changing bytes it covers."""
        UINT32.pack_into(self._buf, self._pos + CRC_OFFSET, self.compute_checksum())

    def stamp(self, *, base_offset: int | None = None, partition_leader_epoch: int | None = None,
              max_timestamp: int | None = None, timestamp_type: TimestampType | None = None) -> None:
        """Assign what the broker assigns on append, with at most one CRC recompute.

        Fields left as None keep their value. Same result as the set_*()
        calls (Kafka's setLastOffset/setPartitionLeaderEpoch/setMaxTimestamp),
        done in one pass for the broker's per-batch append path.
        """
        buf = self._buf
        pos = self._pos
        if base_offset is not None:
            _pack_i64(buf, pos, base_offset)
        if partition_leader_epoch is not None:
            _pack_i32(buf, pos + PARTITION_LEADER_EPOCH_OFFSET, partition_leader_epoch)
        if max_timestamp is None and timestamp_type is None:
            return
        low = buf[pos + ATTRIBUTES_OFFSET + 1]
        is_log_append = (bool(low & TIMESTAMP_TYPE_MASK) if timestamp_type is None
                         else timestamp_type == TimestampType.LOG_APPEND_TIME)
        if timestamp_type == TimestampType.NO_TIMESTAMP_TYPE:
            raise ValueError("Timestamp type must be provided to compute attributes for message format v2")
        current = _unpack_i64(buf, pos + MAX_TIMESTAMP_OFFSET)[0]
        if max_timestamp is None:
            max_timestamp = current
        if max_timestamp == current and is_log_append == bool(low & TIMESTAMP_TYPE_MASK):
            return  # unchanged: Kafka skips the CRC too
        attributes = low & _KEPT_ATTRIBUTE_BITS
        if is_log_append:
            attributes |= TIMESTAMP_TYPE_MASK
        _pack_i16(buf, pos + ATTRIBUTES_OFFSET, attributes)
        _pack_i64(buf, pos + MAX_TIMESTAMP_OFFSET, max_timestamp)
        _pack_u32(buf, pos + CRC_OFFSET,
                  crc32c(memoryview(buf)[pos + ATTRIBUTES_OFFSET:pos + self._size]))

    # ---- misc ---------------------------------------------------------------
    def __eq__(self, other: object) -> bool:
        if not isinstance(other, RecordBatch):
            return NotImplemented
        return self._body() == other._body()

    __hash__ = None  # type: ignore[assignment]  # a view on mutable bytes

    def __repr__(self) -> str:
        return (f"RecordBatch(magic=2, offsets=[{self.base_offset}, {self.last_offset}], "
                f"sequence=[{self.base_sequence}, {self.last_sequence}], "
                f"is_transactional={self.is_transactional}, is_control_batch={self.is_control_batch}, "
                f"compression={self.compression_type.name_lower}, "
                f"timestamp_type={self.timestamp_type.name}, crc={self.checksum}, "
                f"position={self._pos}, size={self._size})")


class _HeaderOnlyRecordBatch(RecordBatch):
    """RecordBatch.header_view(): the header bytes of a batch stored elsewhere."""

    __slots__ = ()

    def _body(self) -> memoryview:
        raise ValueError("this batch view holds only the header; load the full batch")

    def compute_checksum(self) -> int:
        return crc32c(self._body())

    def is_valid(self) -> bool:
        return self.checksum == self.compute_checksum()


assert MAGIC_OFFSET == 16
