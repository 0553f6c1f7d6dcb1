"""AbstractIndex, OffsetIndex, TimeIndex and LazyIndex: Kafka 4.x's sparse,
memory-mapped segment indexes.

    offset index := entry*          entry := relativeOffset:int32 position:int32          (8 bytes)
    time index   := entry*          entry := timestamp:int64 relativeOffset:int32         (12 bytes)

All integers big-endian; relativeOffset = offset - segment base offset, which
must fit an int32 (IndexOffsetOverflowError otherwise).

Invariants (asserted or enforced):
- A new index file is pre-allocated to `max_index_size` rounded down to the
  entry size (Java integer division, so -1 rounds to 0); `trim_to_valid_size`
  (on close and when the segment becomes inactive) shrinks it to exactly
  `entries * entry_size`, and `resize(max_index_size)` grows it back when an
  old segment becomes active again.
- An existing file is opened as Kafka opens it: every whole entry it holds
  counts (mmap position = length rounded down to the entry size). So a file
  left pre-allocated by a crash opens full of zero entries: a time index then
  fails `sanity_check` (last timestamp 0 < first timestamp), an offset index
  of zeros passes it (last offset = base offset), and either way segment
  recovery rebuilds the indexes of every segment above the recovery point,
  which always includes the active one. An index is never the only copy of
  anything: the log is, and indexes are rebuilt from it when in doubt.
- Offsets are strictly increasing in the offset index; the time index is
  non-decreasing in both fields and only appends a larger timestamp. The time
  index keeps its last slot free for the entry written when the segment rolls
  (`is_full` is `entries >= max_entries - 1`).
- Lookups search the warm section (the entries in the last 8192 bytes) first,
  exactly as AbstractIndex.indexSlotRangeFor does, so that in-sync lookups
  touch only recently used pages. Each lookup reads one snapshot of the map and
  the entry count (Kafka's `mmap().duplicate()`), takes no lock, and unpacks
  fields with struct.unpack_from straight from the map, copying nothing.
- Writers (append, truncate, resize) hold `lock`. `resize` maps the new length
  before dropping the old map and never closes it under a reader: the old map
  is unmapped when its last reader lets go, as the JVM does with a
  MappedByteBuffer.
"""

from __future__ import annotations

import mmap
import os
import struct
import sys
import threading
from collections.abc import Iterator
from pathlib import Path
from typing import NamedTuple

NO_TIMESTAMP = -1  # RecordBatch.NO_TIMESTAMP
WARM_SECTION_BYTES = 8192
INT32_MAX = 0x7FFFFFFF
_INT32 = struct.Struct(">i")
_INT64 = struct.Struct(">q")
_OFFSET_ENTRY = struct.Struct(">ii")
_TIME_ENTRY = struct.Struct(">qi")
# Python 3.13 can map without keeping a duplicate descriptor open per index.
_MMAP_EXTRA = {"trackfd": False} if sys.version_info >= (3, 13) else {}
# An index is read by binary search and written one entry at a time, so the kernel's
# read-around on a page fault only fills the page cache with pages nobody asked for. Worse,
# it runs inside the fault, with the GIL held: with read_ahead_kb = 8192 (this VM's disk),
# the first entry appended to a new, sparse index read around 8 MiB of holes and took
# 2-4 ms, and the whole broker stopped meanwhile. Under 100 B x 8-partition produce
# (a new topic per run, so 16 new index files per run), such stalls summed to 2.5 s in
# 12 s and the broker took 0.8-1.3 M records/s; with this advice they summed to 0.02 s and
# it took 1.9-3.1 M (C driver, py-spy attached to both).
_RANDOM_ACCESS = getattr(mmap, "MADV_RANDOM", None)


class CorruptIndexError(Exception):
    """Kafka's CorruptIndexException: the index cannot be trusted and must be rebuilt."""


class InvalidOffsetError(Exception):
    """Kafka's InvalidOffsetException: an append that would break offset order."""


class IndexOffsetOverflowError(Exception):
    """Kafka's IndexOffsetOverflowException: offset - base offset does not fit an int32."""


class OffsetPosition(NamedTuple):
    offset: int
    position: int


class TimestampOffset(NamedTuple):
    timestamp: int
    offset: int


# What a search compares the target with: the entry's key (offset for the offset
# index, timestamp for the time index) or its value (position, offset).
KEY, VALUE = 0, 1


def round_down_to_exact_multiple(number: int, factor: int) -> int:
    """Java's `factor * (number / factor)`: rounds toward zero, so -1 -> 0 for factor 8."""
    quotient = abs(number) // factor
    return factor * (quotient if number >= 0 else -quotient)


class AbstractIndex:
    """The mmap'd file, entry count and Kafka's two-section binary search.

    Subclasses set `entry_size` and `_fields`: for KEY and VALUE, the struct
    that reads the field, its byte offset in the entry, and whether it holds a
    relative offset (then targets are compared as `target - base_offset`, which
    orders exactly as Kafka's comparison of `base_offset + relative` does).
    """

    # The attributes the C append path reads and writes (SlotAttr in franz/storage/_fast_common.h).
    __slots__ = ("base_offset", "entries", "max_entries", "lock", "_mmap", "__dict__")

    entry_size: int = 0
    _fields: tuple[tuple[struct.Struct, int, bool], tuple[struct.Struct, int, bool]]

    def __init__(self, file: Path | str, base_offset: int, max_index_size: int = -1, writable: bool = True) -> None:
        assert self.entry_size > 0
        self.file = Path(file)
        self.base_offset = base_offset
        self.max_index_size = max_index_size
        self.writable = writable
        self.lock = threading.RLock()
        self._mmap: mmap.mmap | None = None
        self._closed = False
        if writable:
            try:  # Kafka's File.createNewFile: atomically tells a new file from an existing one
                fd = os.open(self.file, os.O_RDWR | os.O_CREAT | os.O_EXCL, 0o644)
                newly_created = True
            except FileExistsError:
                fd = os.open(self.file, os.O_RDWR)
                newly_created = False
        else:
            fd = os.open(self.file, os.O_RDONLY)  # a read-only open never creates the file
            newly_created = False
        try:
            if newly_created:
                if max_index_size < self.entry_size:
                    os.close(fd)
                    fd = -1
                    self.file.unlink()
                    raise ValueError(f"Invalid max index size: {max_index_size}")
                os.ftruncate(fd, round_down_to_exact_multiple(max_index_size, self.entry_size))
            self.length = os.fstat(fd).st_size
            self._mmap = self._map(fd, self.length)
        finally:
            if fd >= 0:
                os.close(fd)
        self.max_entries = self.length // self.entry_size
        # A new index starts empty; an existing one is assumed valid up to its last whole entry.
        self.entries = 0 if newly_created else self.length // self.entry_size

    # -- mapping -------------------------------------------------------------------------
    def _map(self, fd: int, length: int) -> mmap.mmap | None:
        if length == 0:
            return None  # an empty file cannot be mapped; it has no entries to read
        access = mmap.ACCESS_WRITE if self.writable else mmap.ACCESS_READ
        mapped = mmap.mmap(fd, length, access=access, **_MMAP_EXTRA)
        if _RANDOM_ACCESS is not None:
            mapped.madvise(_RANDOM_ACCESS)
        return mapped

    @property
    def buffer(self) -> mmap.mmap | bytes:
        """The current map (b"" for an empty file). Readers take it once per operation."""
        buffer = self._mmap
        if buffer is None:
            if self._closed:
                raise ValueError(f"Index {self.file} is closed")
            return b""
        return buffer

    # -- subclass hooks ------------------------------------------------------------------
    def _parse_entry(self, buffer, n: int) -> tuple[int, int]:
        raise NotImplementedError

    def sanity_check(self) -> None:
        raise NotImplementedError

    def truncate_to(self, offset: int) -> None:
        raise NotImplementedError

    def _after_truncate(self) -> None:
        pass

    def _after_resize(self) -> None:
        pass

    # -- state ---------------------------------------------------------------------------
    def is_full(self) -> bool:
        return self.entries >= self.max_entries

    def size_in_bytes(self) -> int:
        return self.entry_size * self.entries

    def warm_entries(self) -> int:
        return WARM_SECTION_BYTES // self.entry_size

    def relative_offset(self, offset: int) -> int:
        relative = offset - self.base_offset
        if relative < 0 or relative > INT32_MAX:
            raise IndexOffsetOverflowError(f"Integer overflow for offset: {offset} ({self.file.absolute()})")
        return relative

    def can_append_offset(self, offset: int) -> bool:
        return 0 <= offset - self.base_offset <= INT32_MAX

    def iter_entries(self) -> Iterator[tuple[int, int]]:
        """Every entry, in order (a dump tool prints these)."""
        buffer, entries = self.buffer, self.entries
        for n in range(entries):
            yield self._parse_entry(buffer, n)

    def entries_list(self) -> list:
        return list(self.iter_entries())

    def _check_slot(self, n: int) -> None:
        if not 0 <= n < self.entries:
            raise IndexError(f"Attempt to fetch the {n}th entry from index {self.file.absolute()}, "
                             f"which has size {self.entries}")

    # -- search (AbstractIndex.indexSlotRangeFor / binarySearch) -------------------------
    def _largest_lower_bound_slot_for(self, buffer, target: int, search_entity: int) -> int:
        """The slot of the largest entry <= target, or -1 if the index is empty or all entries are larger."""
        return self._index_slot_range_for(buffer, target, search_entity, largest_lower_bound=True)

    def _smallest_upper_bound_slot_for(self, buffer, target: int, search_entity: int) -> int:
        """The slot of the smallest entry >= target, or -1 if there is none."""
        return self._index_slot_range_for(buffer, target, search_entity, largest_lower_bound=False)

    def _index_slot_range_for(self, buffer, target: int, search_entity: int, largest_lower_bound: bool) -> int:
        entries = self.entries  # one snapshot: appends may land meanwhile
        if entries == 0:
            return -1
        field, field_offset, is_offset = self._fields[search_entity]
        unpack_from, size = field.unpack_from, self.entry_size
        if is_offset:
            target -= self.base_offset
        first_hot_entry = max(0, entries - 1 - self.warm_entries())
        if unpack_from(buffer, first_hot_entry * size + field_offset)[0] < target:
            lo, hi = first_hot_entry, entries - 1  # the target is in the warm section
        elif unpack_from(buffer, field_offset)[0] > target:
            return -1 if largest_lower_bound else 0  # below the least entry
        else:
            lo, hi = 0, first_hot_entry
        while lo < hi:
            mid = (lo + hi + 1) >> 1
            found = unpack_from(buffer, mid * size + field_offset)[0]
            if found > target:
                hi = mid - 1
            elif found < target:
                lo = mid
            else:
                return mid
        if largest_lower_bound:
            return lo
        return -1 if lo == entries - 1 else lo + 1

    # -- file lifecycle ------------------------------------------------------------------
    def resize(self, new_size: int) -> bool:
        """Set the file and map length to `new_size` rounded down to whole entries; False if unchanged.

        REQUIRES: the new size keeps every entry.
        """
        with self.lock:
            rounded = round_down_to_exact_multiple(new_size, self.entry_size)
            if self.length == rounded:
                return False
            if not self.writable:
                raise PermissionError(f"Index {self.file} was opened read-only and cannot be resized")
            if rounded < 0:
                raise ValueError(f"Invalid index size {new_size} for {self.file}")
            assert rounded >= self.entries * self.entry_size, (
                f"resizing {self.file} to {rounded} bytes would drop some of its {self.entries} entries")
            fd = os.open(self.file, os.O_RDWR)
            try:
                os.ftruncate(fd, rounded)
                new_map = self._map(fd, rounded)
            finally:
                os.close(fd)
            # The old map is not closed: a concurrent lookup may still hold it, and
            # it is unmapped when the last holder drops it.
            self._mmap = new_map
            self.length = rounded
            self.max_entries = rounded // self.entry_size
            self._after_resize()
            return True

    def trim_to_valid_size(self) -> None:
        """Shrink the file to exactly the bytes of its entries."""
        with self.lock:
            self.resize(self.entry_size * self.entries)

    def reset(self) -> None:
        """Drop every entry and grow back to the maximum size."""
        with self.lock:
            self.truncate()
            self.resize(self.max_index_size)

    def truncate(self) -> None:
        """Remove every entry."""
        self._truncate_to_entries(0)

    def _truncate_to_entries(self, entries: int) -> None:
        with self.lock:
            assert 0 <= entries <= self.entries, (entries, self.entries)
            self.entries = entries
            self._after_truncate()

    def flush(self) -> None:
        with self.lock:
            if self._mmap is not None:
                self._mmap.flush()

    def update_parent_dir(self, parent_dir: Path | str) -> None:
        self.file = Path(parent_dir) / self.file.name

    def rename_to(self, new_file: Path | str) -> None:
        new_file = Path(new_file)
        try:
            os.replace(self.file, new_file)
        finally:
            self.file = new_file

    def close_handler(self) -> None:
        """Unmap the file now (Kafka's forceUnmap) instead of when the map is collected."""
        with self.lock:
            if self._mmap is not None:
                self._mmap.close()
                self._mmap = None
            self._closed = True

    def close(self) -> None:
        """Trim to the valid size (a writable index), then unmap."""
        with self.lock:
            if not self._closed and self.writable:
                self.trim_to_valid_size()
            self.close_handler()

    def delete_if_exists(self) -> bool:
        self.close_handler()
        try:
            self.file.unlink()
            return True
        except FileNotFoundError:
            return False

    def __enter__(self):
        return self

    def __exit__(self, *exc_info) -> None:
        self.close()

    def __repr__(self) -> str:
        return f"{type(self).__name__}({self.file}, entries={self.entries}/{self.max_entries})"


class OffsetIndex(AbstractIndex):
    """Maps offsets to byte positions in the segment's .log file.

    `lookup(o)` gives the entry with the largest offset <= o, from which a read
    scans forward in the log; `fetch_upper_bound_offset` bounds a fetch.
    """

    __slots__ = ("_last_offset",)

    entry_size = _OFFSET_ENTRY.size
    _fields = ((_INT32, 0, True), (_INT32, 4, False))

    def __init__(self, file: Path | str, base_offset: int, max_index_size: int = -1, writable: bool = True) -> None:
        super().__init__(file, base_offset, max_index_size, writable)
        self._last_offset = self._last_entry().offset

    def _parse_entry(self, buffer, n: int) -> OffsetPosition:
        relative, position = _OFFSET_ENTRY.unpack_from(buffer, n * 8)
        return OffsetPosition(self.base_offset + relative, position)

    def _last_entry(self) -> OffsetPosition:
        with self.lock:
            if self.entries == 0:
                return OffsetPosition(self.base_offset, 0)
            return self._parse_entry(self.buffer, self.entries - 1)

    @property
    def last_offset(self) -> int:
        """The offset of the last entry, or the base offset when there is none."""
        return self._last_offset

    def sanity_check(self) -> None:
        if self.entries != 0 and self._last_offset < self.base_offset:
            raise CorruptIndexError(
                f"Corrupt index found, index file {self.file.absolute()} has non-zero size but the last offset is "
                f"{self._last_offset} which is less than the base offset {self.base_offset}")
        if self.length % self.entry_size != 0:
            raise CorruptIndexError(
                f"Index file {self.file.absolute()} is corrupt, found {self.length} bytes which is neither positive "
                f"nor a multiple of {self.entry_size}")

    def lookup(self, target_offset: int) -> OffsetPosition:
        """The entry with the largest offset <= target, or (base offset, 0) if there is none."""
        buffer = self.buffer
        slot = self._largest_lower_bound_slot_for(buffer, target_offset, KEY)
        if slot == -1:
            return OffsetPosition(self.base_offset, 0)
        return self._parse_entry(buffer, slot)

    def entry(self, n: int) -> OffsetPosition:
        """The n-th entry. Raises IndexError unless 0 <= n < entries."""
        self._check_slot(n)
        return self._parse_entry(self.buffer, n)

    def fetch_upper_bound_offset(self, fetch_offset: OffsetPosition, fetch_size: int) -> OffsetPosition | None:
        """An entry at or past `fetch_offset.position + fetch_size`: an offset surely outside the fetch.

        Not always the smallest such entry: as in Kafka, an entry exactly at the
        end in slot 0 is passed over for the next one (or None).
        """
        buffer = self.buffer
        slot = self._smallest_upper_bound_slot_for(buffer, fetch_offset.position + fetch_size, VALUE)
        return None if slot == -1 else self._parse_entry(buffer, slot)

    def append(self, offset: int, position: int) -> None:
        """Add (offset, position). REQUIRES: offset > last offset, the index not full, position an int32."""
        with self.lock:
            entries = self.entries
            if entries >= self.max_entries:
                raise ValueError(f"Attempt to append to a full index (size = {entries}).")
            if entries != 0 and offset <= self._last_offset:
                raise InvalidOffsetError(
                    f"Attempt to append an offset {offset} to position {entries} no larger than the last "
                    f"offset appended ({self._last_offset}) to {self.file.absolute()}")
            assert 0 <= position <= INT32_MAX, position
            relative = offset - self.base_offset
            if not 0 <= relative <= INT32_MAX:
                relative = self.relative_offset(offset)  # raises the overflow error
            _OFFSET_ENTRY.pack_into(self._mmap, entries * 8, relative, position)
            self.entries = entries + 1  # after the bytes, so a lock-free reader never sees a half-written entry
            self._last_offset = offset

    def truncate_to(self, offset: int) -> None:
        """Remove every entry with an offset >= `offset`; an offset past the last entry changes nothing."""
        with self.lock:
            buffer = self.buffer
            slot = self._largest_lower_bound_slot_for(buffer, offset, KEY)
            if slot < 0:
                new_entries = 0  # no entry <= offset
            elif self._parse_entry(buffer, slot).offset == offset:
                new_entries = slot  # an entry for exactly this offset goes too
            else:
                new_entries = slot + 1
            self._truncate_to_entries(new_entries)

    def _after_truncate(self) -> None:
        self._last_offset = self._last_entry().offset


class TimeIndex(AbstractIndex):
    """Maps timestamps to offsets: entry (T, O) says the largest timestamp seen up to offset O
    is T, so any record with a timestamp greater than T comes after O.

    `lookup(t)` gives the entry with the largest timestamp <= t, from which a
    ListOffsets search scans forward.
    """

    __slots__ = ("_last_entry",)

    entry_size = _TIME_ENTRY.size
    _fields = ((_INT64, 0, False), (_INT32, 8, True))

    def __init__(self, file: Path | str, base_offset: int, max_index_size: int = -1, writable: bool = True) -> None:
        super().__init__(file, base_offset, max_index_size, writable)
        self._last_entry = self._last_entry_from_index_file()

    def _parse_entry(self, buffer, n: int) -> TimestampOffset:
        timestamp, relative = _TIME_ENTRY.unpack_from(buffer, n * 12)
        return TimestampOffset(timestamp, self.base_offset + relative)

    def _last_entry_from_index_file(self) -> TimestampOffset:
        with self.lock:
            if self.entries == 0:
                return TimestampOffset(NO_TIMESTAMP, self.base_offset)
            return self._parse_entry(self.buffer, self.entries - 1)

    def is_full(self) -> bool:
        # The last slot is kept for the entry written when the segment rolls.
        return self.entries >= self.max_entries - 1

    def last_entry(self) -> TimestampOffset:
        """The last entry, or (NO_TIMESTAMP, base offset) when there is none."""
        return self._last_entry

    def entry(self, n: int) -> TimestampOffset:
        """The n-th entry. Raises IndexError unless 0 <= n < entries."""
        self._check_slot(n)
        return self._parse_entry(self.buffer, n)

    def sanity_check(self) -> None:
        last_timestamp, last_offset = self.last_entry()
        if self.entries != 0:
            first_timestamp = _INT64.unpack_from(self.buffer, 0)[0]
            if last_timestamp < first_timestamp:
                raise CorruptIndexError(
                    f"Corrupt time index found, time index file ({self.file.absolute()}) has non-zero size but the "
                    f"last timestamp is {last_timestamp} which is less than the first timestamp {first_timestamp}")
            if last_offset < self.base_offset:
                raise CorruptIndexError(
                    f"Corrupt time index found, time index file ({self.file.absolute()}) has non-zero size but the "
                    f"last offset is {last_offset} which is less than the first offset {self.base_offset}")
        if self.length % self.entry_size != 0:
            raise CorruptIndexError(
                f"Time index file {self.file.absolute()} is corrupt, found {self.length} bytes which is neither "
                f"positive nor a multiple of {self.entry_size}")

    def lookup(self, target_timestamp: int) -> TimestampOffset:
        """The entry with the largest timestamp <= target, or (NO_TIMESTAMP, base offset) if there is none."""
        buffer = self.buffer
        slot = self._largest_lower_bound_slot_for(buffer, target_timestamp, KEY)
        if slot == -1:
            return TimestampOffset(NO_TIMESTAMP, self.base_offset)
        return self._parse_entry(buffer, slot)

    def maybe_append(self, timestamp: int, offset: int, skip_full_check: bool = False) -> None:
        """Append (timestamp, offset) if the timestamp is larger than the last one.

        An equal timestamp is ignored: it is the roll entry written again (close,
        or onBecomeInactiveSegment). `skip_full_check` lets that roll entry use
        the reserved last slot. A smaller offset or timestamp is refused.
        """
        with self.lock:
            entries = self.entries
            if not skip_full_check and entries >= self.max_entries - 1:  # is_full(), inlined: once per append
                raise ValueError(f"Attempt to append to a full time index (size = {entries}).")
            last_timestamp, last_offset = self._last_entry
            if entries != 0 and offset < last_offset:
                raise InvalidOffsetError(
                    f"Attempt to append an offset ({offset}) to slot {entries} no larger than the last "
                    f"offset appended ({last_offset}) to {self.file.absolute()}")
            if entries != 0 and timestamp < last_timestamp:
                raise ValueError(
                    f"Attempt to append a timestamp ({timestamp}) to slot {entries} no larger than the last "
                    f"timestamp appended ({last_timestamp}) to {self.file.absolute()}")
            if timestamp > last_timestamp:
                # Kafka would overflow the buffer here; the message says what happened.
                if entries >= self.max_entries:
                    raise ValueError(f"Attempt to append to a full time index (size = {entries}).")
                relative = self.relative_offset(offset)  # before any byte is written
                _TIME_ENTRY.pack_into(self._mmap, entries * 12, timestamp, relative)
                self.entries = entries + 1
                self._last_entry = TimestampOffset(timestamp, offset)

    def truncate_to(self, offset: int) -> None:
        """Remove every entry with an offset >= `offset`; an offset past the last entry changes nothing."""
        with self.lock:
            buffer = self.buffer
            slot = self._largest_lower_bound_slot_for(buffer, offset, VALUE)
            if slot < 0:
                new_entries = 0
            elif self._parse_entry(buffer, slot).offset == offset:
                new_entries = slot
            else:
                new_entries = slot + 1
            self._truncate_to_entries(new_entries)

    def _after_truncate(self) -> None:
        self._last_entry = self._last_entry_from_index_file()

    def _after_resize(self) -> None:
        self._last_entry = self._last_entry_from_index_file()


class LazyIndex:
    """An index that is opened (mapped) on first `get()`.

    Until then it is only a path: renames, parent-dir updates, closes and
    deletes act on the file alone, so loading thousands of cleanly shut
    segments maps nothing. Once loaded, every call goes to the index. Thread
    safe: one lock orders loading against renames and deletes.
    """

    def __init__(self, file: Path | str, base_offset: int, max_index_size: int,
                 index_class: type[AbstractIndex]) -> None:
        self._file = Path(file)
        self.base_offset = base_offset
        self.max_index_size = max_index_size
        self._index_class = index_class
        self._index: AbstractIndex | None = None
        self._lock = threading.RLock()

    @classmethod
    def for_offset(cls, file: Path | str, base_offset: int, max_index_size: int) -> LazyIndex:
        return cls(file, base_offset, max_index_size, OffsetIndex)

    @classmethod
    def for_time(cls, file: Path | str, base_offset: int, max_index_size: int) -> LazyIndex:
        return cls(file, base_offset, max_index_size, TimeIndex)

    @property
    def file(self) -> Path:
        index = self._index
        return index.file if index is not None else self._file

    def is_loaded(self) -> bool:
        return self._index is not None

    def get(self):
        """The index, mapped (writable) on the first call."""
        index = self._index
        if index is None:
            with self._lock:
                if self._index is None:
                    self._index = self._index_class(self._file, self.base_offset, self.max_index_size, True)
                index = self._index
        return index

    def update_parent_dir(self, parent_dir: Path | str) -> None:
        with self._lock:
            if self._index is not None:
                self._index.update_parent_dir(parent_dir)
            self._file = Path(parent_dir) / self._file.name

    def rename_to(self, new_file: Path | str) -> None:
        """Rename the file; a missing unloaded file is fine (Kafka: it may never have been written)."""
        new_file = Path(new_file)
        with self._lock:
            try:
                if self._index is not None:
                    self._index.rename_to(new_file)
                else:
                    try:
                        os.replace(self._file, new_file)
                    except FileNotFoundError:
                        if self._file.exists():
                            raise
            finally:
                self._file = new_file

    def delete_if_exists(self) -> bool:
        with self._lock:
            if self._index is not None:
                return self._index.delete_if_exists()
            try:
                self._file.unlink()
                return True
            except FileNotFoundError:
                return False

    def close(self) -> None:
        with self._lock:
            if self._index is not None:
                self._index.close()

    def close_handler(self) -> None:
        with self._lock:
            if self._index is not None:
                self._index.close_handler()
