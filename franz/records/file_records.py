"""Batches in a file, or a [start, end) slice of one
(org.apache.kafka.common.record.FileRecords, FileLogInputStream).

Owns one file descriptor (shared by its slices) and the region's size: append
at the end, read, slice, search by offset or timestamp, truncate, flush, and
send bytes to a socket with os.sendfile (zero copy).

Iterating batches reads only each 61-byte header (one pread per batch); the
body is read when asked (records(), is_valid(), to_bytes()). Positions are
byte offsets in the FILE, like Kafka's: a slice's first batch is at its start.

Disk blocks past the end: the C append path (franz/storage/_segment_fast.c) reserves
blocks ahead of a file's end for large appends to come (fallocate with
FALLOC_FL_KEEP_SIZE: the file's size and bytes stay what they are, only its allocation
grows), so that the filesystem maps each block once per reservation instead of once per
write; `_reserved_end` is where that reservation ends (0: none known, -1: this
filesystem refused one). trim() frees whatever lies past the data, reserved or left by
an earlier process that crashed.

Invariants:
- 0 <= size_in_bytes; a slice's size never changes, a whole file's grows by
  append and shrinks by truncate_to only.
- Iteration stops quietly before a partial trailing batch (a crash can leave
  one; recovery truncates it) and raises CorruptRecordError for a batch
  length below a v2 header's or a magic other than 2.
- Only the FileRecords returned by open() closes the descriptor.
"""

from __future__ import annotations

import os
from collections.abc import Iterator
from typing import NamedTuple

from franz.records.constants import (
    BATCH_LENGTH_MIN,
    CURRENT_MAGIC_VALUE,
    HEADER_SIZE_UP_TO_MAGIC,
    INT32,
    INT32_MAX,
    LENGTH_OFFSET,
    LOG_OVERHEAD,
    MAGIC_OFFSET,
    NO_PARTITION_LEADER_EPOCH,
    NO_TIMESTAMP,
    RECORD_BATCH_OVERHEAD,
)
from franz.records.errors import CorruptRecordError, RecordsError
from franz.records.record import Record
from franz.records.record_batch import RecordBatch

_unpack_i32 = INT32.unpack_from


class LogOffsetPosition(NamedTuple):
    """The batch holding an offset: its last offset, file position and size."""

    offset: int
    position: int
    size: int


class TimestampAndOffset(NamedTuple):
    timestamp: int
    offset: int
    leader_epoch: int | None  # None for NO_PARTITION_LEADER_EPOCH


def _maybe_leader_epoch(epoch: int) -> int | None:
    return None if epoch == NO_PARTITION_LEADER_EPOCH else epoch


def _pread_fully(fd: int, size: int, position: int) -> bytes:
    """Exactly `size` bytes at `position`, or fewer only at end of file."""
    data = os.pread(fd, size, position)
    if len(data) == size or not data:
        return data
    parts = [data]
    got = len(data)
    while got < size:
        more = os.pread(fd, size - got, position + got)
        if not more:
            break
        parts.append(more)
        got += len(more)
    return b"".join(parts)


class FileRecordBatch:
    """A batch in a file: header fields from its 61 header bytes, body on demand."""

    __slots__ = ("_file_records", "_full", "_header", "position")

    def __init__(self, file_records: FileRecords, position: int, header: bytes) -> None:
        self._file_records = file_records
        self.position = position
        self._header = RecordBatch.header_view(header)
        self._full: RecordBatch | None = None

    def header(self):
        """All header fields (BatchHeader), from the bytes already read."""
        return self._header.header()

    def load_full_batch(self) -> RecordBatch:
        """Read the whole batch (cached) as an in-memory RecordBatch."""
        if self._full is None:
            size = self._header.size_in_bytes
            data = _pread_fully(self._file_records.fd, size, self.position)
            if len(data) != size:
                raise CorruptRecordError(
                    f"File ended after {len(data)} of the batch's {size} bytes", self.position)
            self._full = RecordBatch(bytearray(data))
        return self._full

    def is_valid(self) -> bool:
        return self.load_full_batch().is_valid()

    def ensure_valid(self) -> None:
        try:
            self.load_full_batch().ensure_valid()
        except CorruptRecordError as e:
            raise CorruptRecordError(e.reason, self.position) from None

    def compute_checksum(self) -> int:
        return self.load_full_batch().compute_checksum()

    def records(self, **kwargs) -> Iterator[Record]:
        return self.load_full_batch().records(**kwargs)

    def __iter__(self) -> Iterator[Record]:
        return self.records()

    def to_bytes(self) -> bytes:
        return self.load_full_batch().to_bytes()

    def __repr__(self) -> str:
        return (f"FileRecordBatch(position={self.position}, offsets=[{self.base_offset}, "
                f"{self.last_offset}], size={self.size_in_bytes})")


# Header properties delegate to the header view (generated: the list is long).
_HEADER_PROPERTIES = (
    "base_offset", "batch_length", "size_in_bytes", "partition_leader_epoch", "magic",
    "checksum", "attributes", "compression_type", "is_compressed", "timestamp_type",
    "is_transactional", "is_control_batch", "has_delete_horizon", "delete_horizon_ms",
    "last_offset_delta", "last_offset", "next_offset", "base_timestamp", "max_timestamp",
    "producer_id", "producer_epoch", "base_sequence", "last_sequence", "record_count",
)


def _delegate(name: str) -> property:
    getter = getattr(RecordBatch, name).fget
    return property(lambda self: getter(self._header), doc=f"RecordBatch.{name} of the header")


for _name in _HEADER_PROPERTIES:
    setattr(FileRecordBatch, _name, _delegate(_name))


class FileRecords:
    """A file of batches, or a slice of one. See module docstring."""
    # The attributes the C append path reads and writes (SlotAttr in franz/storage/_fast_common.h).
    __slots__ = ("fd", "_start", "_size", "_is_slice", "_reserved_end", "__dict__")

    def __init__(self, path: str, fd: int, start: int, end: int, is_slice: bool,
                 owns_fd: bool = False) -> None:
        self.path = os.fspath(path)
        self.fd = fd
        self._start = start
        self._end = end
        self._is_slice = is_slice
        self._reserved_end = 0
        self._owns_fd = owns_fd
        self._closed = False
        if is_slice:
            self._size = end - start  # a slice does not look at the file's size
        else:
            file_size = os.fstat(fd).st_size
            if file_size > INT32_MAX:
                raise RecordsError(f"The size of segment {self.path} ({file_size}) is larger "
                                   f"than the maximum allowed segment size of {INT32_MAX}")
            self._size = min(file_size, end) - start

    @classmethod
    def open(cls, path, mutable: bool = True, preallocate_bytes: int = 0,
             file_already_exists: bool | None = None) -> FileRecords:
        """Open (creating if mutable) a file of batches.

        A new file with preallocate_bytes > 0 is extended to that length and
        starts empty (size 0); trim() or close() cuts the unused tail.
        """
        path = os.fspath(path)
        if file_already_exists is None:
            file_already_exists = os.path.exists(path)
        if mutable:
            fd = os.open(path, os.O_RDWR | os.O_CREAT | getattr(os, "O_CLOEXEC", 0), 0o644)
        else:
            fd = os.open(path, os.O_RDONLY | getattr(os, "O_CLOEXEC", 0))
        try:
            preallocated = mutable and not file_already_exists and preallocate_bytes > 0
            if preallocated:
                os.ftruncate(fd, preallocate_bytes)
            return cls(path, fd, 0, 0 if preallocated else INT32_MAX, False, owns_fd=True)
        except BaseException:
            os.close(fd)
            raise

    # ---- size and bytes -------------------------------------------------------
    @property
    def size_in_bytes(self) -> int:
        return self._size

    def __len__(self) -> int:
        return self._size

    @property
    def start(self) -> int:
        return self._start

    @property
    def end(self) -> int:
        return self._start + self._size

    def _available_bytes(self, position: int, size: int) -> int:
        current = self._size
        if position < 0:
            raise ValueError(f"Invalid position: {position} in read from {self}")
        if position > current:
            raise ValueError(f"Slice from position {position} exceeds end position of {self}")
        if size < 0:
            raise ValueError(f"Invalid size: {size} in read from {self}")
        return min(position + size, current) - position

    def read_bytes(self, position: int, size: int) -> bytes:
        """Up to `size` bytes from `position` (relative to this region's start)."""
        size = self._available_bytes(position, size)
        return _pread_fully(self.fd, size, self._start + position)

    def read_into(self, buffer, position: int) -> int:
        """Fill `buffer` from `position` (relative); return the bytes read."""
        view = memoryview(buffer).cast("B")
        size = self._available_bytes(position, len(view))
        got = 0
        while got < size:
            n = os.preadv(self.fd, [view[got:size]], self._start + position + got)
            if n == 0:
                break
            got += n
        return got

    def slice(self, position: int, size: int) -> FileRecords:
        """The region [position, position + size) of this one (clipped to its end)."""
        available = self._available_bytes(position, size)
        start = self._start + position
        return FileRecords(self.path, self.fd, start, start + available, True)

    # ---- writing ------------------------------------------------------------
    def append(self, records) -> int:
        """Write all of `records` (MemoryRecords or bytes-like) at the end; return bytes written."""
        if self._is_slice:
            raise ValueError("Cannot append to a slice")
        if self._closed:  # its descriptor number may belong to another file by now
            raise ValueError(f"Cannot append to {self.path}: it is closed")
        data = getattr(records, "buffer", records)
        size = len(data) if type(data) is bytearray else memoryview(data).nbytes
        position = self._start + self._size
        if size > INT32_MAX - self._size:
            raise ValueError(f"Append of size {size} bytes is too large for segment with "
                             f"current file position at {self._size}")
        try:
            written = os.pwrite(self.fd, data, position)
            while written < size:  # a short write (a signal, a full disk) resumes where it stopped
                written += os.pwrite(self.fd, memoryview(data).cast("B")[written:], position + written)
        except OSError:
            self.cut_failed_write(position)
            raise
        self._size += written
        return written

    def cut_failed_write(self, position: int) -> None:
        """After a write at `position` (absolute) failed (a full disk, EFBIG, EIO): cut the file
        back to it, best effort. The size stays where it was, so the next append writes over
        whatever part reached the file anyway; the cut also keeps that part from being read as
        batches by a crash recovery after a shorter append has covered only its start."""
        try:
            os.ftruncate(self.fd, position)
        except OSError:
            pass  # the write's own error is the one to raise
        self._reserved_end = 0

    def flush(self) -> None:
        os.fsync(self.fd)

    def truncate_to(self, target_size: int) -> int:
        """Cut the file to target_size bytes; return the bytes removed."""
        original = self._size
        if target_size > original or target_size < 0:
            raise RecordsError(f"Attempt to truncate log segment {self.path} to {target_size} "
                               f"bytes failed, size of this log segment is {original} bytes.")
        if target_size < os.fstat(self.fd).st_size:
            os.ftruncate(self.fd, target_size)  # frees any blocks reserved past the end too
            self._size = target_size
            self._reserved_end = 0
        return original - target_size

    def trim(self) -> None:
        """Cut preallocated space past the data and free the disk blocks reserved past it
        (an ftruncate to the file's own size frees those on Linux filesystems)."""
        os.ftruncate(self.fd, self._size)
        self._reserved_end = 0

    def close(self) -> None:
        """Flush, trim and close the file (slices: nothing to do)."""
        if self._closed or not self._owns_fd:
            return
        self.flush()
        if not self._is_slice and (self._reserved_end > self._size or os.fstat(self.fd).st_size > self._size):
            self.trim()
        self.close_handlers()

    def close_handlers(self) -> None:
        if self._owns_fd and not self._closed:
            self._closed = True
            os.close(self.fd)

    def delete_if_exists(self) -> bool:
        self.close_handlers()
        try:
            os.unlink(self.path)
            return True
        except FileNotFoundError:
            return False

    def rename_to(self, path) -> None:
        try:
            os.replace(self.path, path)
        finally:
            self.path = os.fspath(path)

    def update_parent_dir(self, parent_dir) -> None:
        self.path = os.path.join(os.fspath(parent_dir), os.path.basename(self.path))

    def write_to(self, sock_fd: int, offset: int, length: int) -> int:
        """Send up to `length` bytes from `offset` (relative) with os.sendfile; return bytes sent.

        May send fewer (a non-blocking socket); the caller continues from there.
        """
        new_size = min(os.fstat(self.fd).st_size, self._start + self._size) - self._start
        if new_size < self._size:
            raise RecordsError(f"Size of FileRecords {self.path} has been truncated during write: "
                               f"old size {self._size}, new size {new_size}")
        count = min(length, self._size - offset)
        if count <= 0:
            return 0
        return os.sendfile(sock_fd, self.fd, self._start + offset, count)

    # ---- batches ------------------------------------------------------------
    def batches(self, start_position: int | None = None) -> Iterator[FileRecordBatch]:
        """Batches from file position start_position (default: this region's start)."""
        pos = self._start if start_position is None else start_position
        end = self._end if self._is_slice else self._start + self._size
        fd = self.fd
        pread = os.pread
        while pos < end - HEADER_SIZE_UP_TO_MAGIC:
            want = min(RECORD_BATCH_OVERHEAD, end - pos)
            header = pread(fd, want, pos)
            if len(header) != want:
                header = _pread_fully(fd, want, pos)
            if len(header) < HEADER_SIZE_UP_TO_MAGIC:
                return  # the file shrank under us: nothing more to read
            length = _unpack_i32(header, LENGTH_OFFSET)[0]
            if length < BATCH_LENGTH_MIN:
                raise CorruptRecordError(
                    f"Found record size {length} smaller than minimum record overhead "
                    f"({BATCH_LENGTH_MIN}) in file {self.path}.", pos)
            size = length + LOG_OVERHEAD
            if pos > end - size:
                return  # partial trailing batch
            magic = header[MAGIC_OFFSET]
            if magic != CURRENT_MAGIC_VALUE:
                raise CorruptRecordError(f"Invalid magic found in record batch: {magic}", pos)
            if len(header) < RECORD_BATCH_OVERHEAD:
                raise CorruptRecordError(f"File ended inside the batch header in {self.path}", pos)
            yield FileRecordBatch(self, pos, header)
            pos += size

    def __iter__(self) -> Iterator[FileRecordBatch]:
        return self.batches()

    def records(self) -> Iterator[Record]:
        for batch in self.batches():
            yield from batch.records()

    def search_for_offset_with_size(self, target_offset: int,
                                    starting_position: int) -> LogOffsetPosition | None:
        """The first batch from starting_position whose last offset >= target_offset."""
        for batch in self.batches(starting_position):
            offset = batch.last_offset
            if offset >= target_offset:
                return LogOffsetPosition(offset, batch.position, batch.size_in_bytes)
        return None

    def search_for_timestamp(self, target_timestamp: int, starting_position: int,
                             starting_offset: int) -> TimestampAndOffset | None:
        """The first record with timestamp >= target and offset >= starting_offset."""
        for batch in self.batches(starting_position):
            if batch.max_timestamp >= target_timestamp:
                for record in batch.records():
                    if record.timestamp >= target_timestamp and record.offset >= starting_offset:
                        return TimestampAndOffset(record.timestamp, record.offset,
                                                  _maybe_leader_epoch(batch.partition_leader_epoch))
        return None

    def largest_timestamp_after(self, starting_position: int) -> TimestampAndOffset:
        """The largest batch max timestamp from starting_position, with that batch's last offset."""
        max_timestamp = NO_TIMESTAMP
        offset_of_max = -1
        epoch_of_max = NO_PARTITION_LEADER_EPOCH
        for batch in self.batches(starting_position):
            header = batch.header()
            if header.max_timestamp > max_timestamp:
                max_timestamp = header.max_timestamp
                offset_of_max = header.base_offset + header.last_offset_delta
                epoch_of_max = header.partition_leader_epoch
        return TimestampAndOffset(max_timestamp, offset_of_max, _maybe_leader_epoch(epoch_of_max))

    def __repr__(self) -> str:
        return (f"FileRecords(size={self._size}, file={self.path}, start={self._start}, "
                f"end={self._end})")
