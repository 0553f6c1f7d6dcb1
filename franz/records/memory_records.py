"""Batches in a memory buffer (org.apache.kafka.common.record.MemoryRecords,
ByteBufferLogInputStream).

Owns walking a buffer batch by batch: `batches()` yields RecordBatch views
(no copy, no CRC check, one struct read per batch) after checking each
batch's structure: at least a log overhead left, a batch length no smaller
than a v2 header, the batch inside the buffer, magic 2.

A batch cut short by the end of the buffer raises CorruptRecordError by
default (a produce request must be whole). With stop_at_partial_batch=True
iteration ends quietly before it instead, as Kafka's ByteBufferLogInputStream
does for fetch responses, which may end in a partial batch.
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator

from crc32c import crc32c

from franz.records.builder import SimpleRecord, build_batch, build_control_batch
from franz.records.constants import (
    ATTRIBUTES_OFFSET,
    BATCH_LENGTH_MIN,
    CURRENT_MAGIC_VALUE,
    HEADER_STRUCT,
    INT32,
    LENGTH_OFFSET,
    LOG_OVERHEAD,
    MAGIC_OFFSET,
    RECORD_BATCH_OVERHEAD,
)
from franz.records.control import ControlRecordType
from franz.records.errors import CorruptRecordError, InvalidChecksumError
from franz.records.record import Record
from franz.records.record_batch import BatchHeader, RecordBatch

_unpack_header = HEADER_STRUCT.unpack_from
assert (LOG_OVERHEAD, ATTRIBUTES_OFFSET, CURRENT_MAGIC_VALUE) == (12, 21, 2)

_unpack_i32 = INT32.unpack_from


class MemoryRecords:
    """A buffer (bytes, bytearray, memoryview, mmap) of whole v2 batches."""

    __slots__ = ("_buf",)

    def __init__(self, buffer=b"") -> None:
        self._buf = buffer

    @classmethod
    def readable_records(cls, buffer) -> MemoryRecords:
        return cls(buffer)

    @classmethod
    def with_records(cls, records: Iterable[SimpleRecord], **batch_options) -> MemoryRecords:
        """One batch of `records` (see build_batch for the options), in a bytearray."""
        return cls(bytearray(build_batch(records, **batch_options)))

    @classmethod
    def with_end_transaction_marker(cls, control_type: ControlRecordType, **options) -> MemoryRecords:
        """One COMMIT/ABORT control batch (see build_control_batch for the options)."""
        return cls(bytearray(build_control_batch(control_type, **options)))

    @property
    def buffer(self):
        return self._buf

    @property
    def size_in_bytes(self) -> int:
        return len(self._buf)

    def __len__(self) -> int:
        return len(self._buf)

    def to_bytes(self) -> bytes:
        return bytes(self._buf)

    def batches(self, start_position: int = 0, *,
                stop_at_partial_batch: bool = False) -> Iterator[RecordBatch]:
        """Each batch from start_position on, checked structurally (not by CRC)."""
        buf = self._buf
        end = len(buf)
        pos = start_position
        new = object.__new__
        while pos < end:
            remaining = end - pos
            if remaining < LOG_OVERHEAD:
                if stop_at_partial_batch:
                    return
                raise CorruptRecordError(
                    f"Record batch is truncated: {remaining} bytes left, less than the "
                    f"log overhead {LOG_OVERHEAD}", pos)
            length = _unpack_i32(buf, pos + LENGTH_OFFSET)[0]
            if length < BATCH_LENGTH_MIN:
                raise CorruptRecordError(
                    f"Record batch is corrupt (the size {length + LOG_OVERHEAD} is smaller than "
                    f"the minimum allowed overhead {RECORD_BATCH_OVERHEAD})", pos)
            size = length + LOG_OVERHEAD
            if size > remaining:
                if stop_at_partial_batch:
                    return
                raise CorruptRecordError(
                    f"Record batch of {size} bytes runs past the end of the data "
                    f"({remaining} bytes left)", pos)
            magic = buf[pos + MAGIC_OFFSET]
            if magic != CURRENT_MAGIC_VALUE:
                raise CorruptRecordError(f"Invalid magic found in record batch: {magic}", pos)
            # RecordBatch._trusted, inlined: this loop runs once per batch on the broker.
            batch = new(RecordBatch)
            batch._buf = buf
            batch._pos = pos
            batch._size = size
            yield batch
            pos += size

    def __iter__(self) -> Iterator[RecordBatch]:
        return self.batches()

    def validate_batches(self, start_position: int = 0, *,
                         stop_at_partial_batch: bool = False) -> Iterator[tuple[int, BatchHeader]]:
        """(position, header) of each batch after checking its structure AND its CRC.

        The broker's hot path (one struct call and one crc32c call per
        batch, no view objects). Raises CorruptRecordError at the first bad
        batch, with its position, like batches() + ensure_valid().
        """
        # Literals below (12, 21, 2) are LOG_OVERHEAD, ATTRIBUTES_OFFSET and
        # CURRENT_MAGIC_VALUE, asserted at import: global lookups cost here.
        buf = self._buf
        view = memoryview(buf)
        end = len(view)
        pos = start_position
        unpack = _unpack_header
        new_header = tuple.__new__
        header_type = BatchHeader
        crc = crc32c
        overhead = RECORD_BATCH_OVERHEAD
        while pos < end:
            remaining = end - pos
            if remaining < RECORD_BATCH_OVERHEAD:
                # Too short for a header: let batches() decide how to report it.
                for _ in self.batches(pos, stop_at_partial_batch=stop_at_partial_batch):
                    raise AssertionError("a batch cannot fit in fewer bytes than its header")
                return
            fields = unpack(buf, pos)
            size = fields[1] + 12  # + LOG_OVERHEAD
            if size > remaining or size < overhead or fields[3] != 2:  # CURRENT_MAGIC_VALUE
                # The rare path: the same checks and messages as batches().
                next(self.batches(pos, stop_at_partial_batch=stop_at_partial_batch), None)
                return
            computed = crc(view[pos + 21:pos + size])  # from ATTRIBUTES_OFFSET
            if computed != fields[4]:
                raise InvalidChecksumError(
                    f"Record is corrupt (stored crc = {fields[4]}, computed crc = {computed})", pos)
            yield pos, new_header(header_type, fields)
            pos += size

    def first_batch(self) -> RecordBatch | None:
        return next(self.batches(), None)

    def valid_bytes(self) -> int:
        """Bytes covered by whole batches (Kafka validBytes: structure, not CRC)."""
        total = 0
        for batch in self.batches(stop_at_partial_batch=True):
            total += batch.size_in_bytes
        return total

    def records(self) -> Iterator[Record]:
        """Every record of every batch, decoded."""
        for batch in self.batches():
            yield from batch.records()

    def __repr__(self) -> str:
        return f"MemoryRecords(size={len(self._buf)})"


MemoryRecords.EMPTY = MemoryRecords(b"")  # type: ignore[attr-defined]
