"""AbstractIndex, OffsetIndex, TimeIndex and LazyIndex: Kafka 4.x's sparse,
memory-mapped segment indexes.

    offset index := entry*          entry := relativeOffset:int32 position:int32          (8 bytes)
    time index   := entry*          entry := timestamp:int64 relativeOffset:int32         (12 bytes)

All integers big-endian; relativeOffset = offset - segment base offset.

Invariants (asserted or enforced):
- A new index file is pre-allocated to `max_index_size` rounded down to the
  entry size; `trim_to_valid_size` (on close and when the segment becomes
  inactive) shrinks it to exactly `entries * entry_size`.
- An existing file is opened with every whole entry it holds counted as an
  entry (Kafka: position = length rounded down). A file left pre-allocated by a
  crash therefore fails `sanity_check` or is rebuilt by segment recovery: an
  index is never the only copy of anything, the log is.
- Offsets are strictly increasing in the offset index; the time index is
  non-decreasing in both fields and only appends a larger timestamp. The time
  index keeps its last slot free for the entry written when the segment rolls
  (`is_full` is `entries >= max_entries - 1`).
- Lookups search the warm section (the last 8192 bytes of entries) first, as
  Kafka does, so that in-sync lookups touch only recently used pages.
"""

from __future__ import annotations

import mmap
import os
import struct
import threading
from pathlib import Path
from typing import NamedTuple

NO_TIMESTAMP = -1
WARM_SECTION_BYTES = 8192
_INT32 = struct.Struct(">i")
_OFFSET_ENTRY = struct.Struct(">ii")
_TIME_ENTRY = struct.Struct(">qi")


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


# Search over the key (first field) or the value (second field) of an entry.
_KEY, _VALUE = 0, 1


def _round_down(number: int, factor: int) -> int:
    return factor * (number // factor)


class AbstractIndex:
    """The mmap'd file, entry count and Kafka's two-section binary search."""

    entry_size: int = 0  # set by subclasses

    def __init__(self, file: Path | str, base_offset: int, max_index_size: int = -1, writable: bool = True) -> None:
        self.file = Path(file)
        self.base_offset = base_offset
        self.max_index_size = max_index_size
        self.writable = writable
        self.lock = threading.RLock()
        newly_created = not self.file.exists()
        if newly_created:
            if max_index_size < self.entry_size:
                raise ValueError(f"Invalid max index size: {max_index_size}")
            with open(self.file, "wb") as handle:
                handle.truncate(_round_down(max_index_size, self.entry_size))
        self._fd = os.open(self.file, os.O_RDWR if writable else os.O_RDONLY)
        self.length = os.fstat(self._fd).st_size
        self._mmap: mmap.mmap | None = None
        self._map(self.length)
        self.max_entries = self.length // self.entry_size
        self.entries = 0 if newly_created else self.length // self.entry_size

    # -- mapping -------------------------------------------------------------------------
    def _map(self, length: int) -> None:
        if self._mmap is not None:
            self._mmap.close()
            self._mmap = None
        if length > 0:
            access = mmap.ACCESS_WRITE if self.writable else mmap.ACCESS_READ
            self._mmap = mmap.mmap(self._fd, length, access=access)

    @property
    def buffer(self) -> mmap.mmap | bytes:
        return self._mmap if self._mmap is not None else b""

    # -- subclass hooks ------------------------------------------------------------------
    def _parse_entry(self, n: int) -> tuple[int, int]:
        raise NotImplementedError

    def _compare_entry(self, n: int, target: int, search_entity: int) -> int:
        key, value = self._entry_key_value(n)
        probe = key if search_entity == _KEY else value
        return (probe > target) - (probe < target)

    def _entry_key_value(self, n: int) -> tuple[int, int]:
        raise NotImplementedError

    # -- state ---------------------------------------------------------------------------
    def is_full(self) -> bool:
        return self.entries >= self.max_entries

    def size_in_bytes(self) -> int:
        return self.entry_size * self.entries

    def warm_entries(self) -> int:
        return WARM_SECTION_BYTES // self.entry_size

    def relative_offset(self, offset: int) -> int:
        relative = offset - self.base_offset
        if relative < 0 or relative > 0x7FFFFFFF:
            raise IndexOffsetOverflowError(f"Integer overflow for offset: {offset} ({self.file})")
        return relative

    def can_append_offset(self, offset: int) -> bool:
        return 0 <= offset - self.base_offset <= 0x7FFFFFFF

    # -- search --------------------------------------------------------------------------
    def _largest_lower_bound_slot_for(self, target: int, search_entity: int) -> int:
        return self._index_slot_range_for(target, search_entity, largest_lower_bound=True)

    def _smallest_upper_bound_slot_for(self, target: int, search_entity: int) -> int:
        return self._index_slot_range_for(target, search_entity, largest_lower_bound=False)

    def _index_slot_range_for(self, target: int, search_entity: int, largest_lower_bound: bool) -> int:
        entries = self.entries
        if entries == 0:
            return -1
        first_hot_entry = max(0, entries - 1 - self.warm_entries())
        if self._compare_entry(first_hot_entry, target, search_entity) < 0:
            return self._binary_search(target, search_entity, largest_lower_bound, first_hot_entry, entries - 1)
        if self._compare_entry(0, target, search_entity) > 0:
            return -1 if largest_lower_bound else 0
        return self._binary_search(target, search_entity, largest_lower_bound, 0, first_hot_entry)

    def _binary_search(self, target: int, search_entity: int, largest_lower_bound: bool, lo: int, hi: int) -> int:
        while lo < hi:
            mid = (lo + hi + 1) >> 1
            compared = self._compare_entry(mid, target, search_entity)
            if compared > 0:
                hi = mid - 1
            elif compared < 0:
                lo = mid
            else:
                return mid
        if largest_lower_bound:
            return lo
        return -1 if lo == self.entries - 1 else lo + 1

    # -- file lifecycle ------------------------------------------------------------------
    def resize(self, new_size: int) -> bool:
        """Set the file and map length to `new_size` rounded down to whole entries."""
        with self.lock:
            rounded = _round_down(new_size, self.entry_size)
            if self.length == rounded:
                return False
            assert rounded >= self.entries * self.entry_size, "resize would drop entries"
            if self._mmap is not None:
                self._mmap.close()
                self._mmap = None
            os.ftruncate(self._fd, rounded)
            self.length = rounded
            self._map(rounded)
            self.max_entries = rounded // self.entry_size
            self._after_resize()
            return True

    def _after_resize(self) -> None:
        pass

    def trim_to_valid_size(self) -> None:
        with self.lock:
            self.resize(self.entry_size * self.entries)

    def reset(self) -> None:
        """Drop every entry and grow back to the maximum size."""
        with self.lock:
            self.truncate()
            self.resize(self.max_index_size)

    def truncate(self) -> None:
        self._truncate_to_entries(0)

    def _truncate_to_entries(self, entries: int) -> None:
        with self.lock:
            assert 0 <= entries <= self.entries
            self.entries = entries
            self._after_truncate()

    def _after_truncate(self) -> None:
        pass

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
        with self.lock:
            if self._mmap is not None:
                self._mmap.close()
                self._mmap = None
            if self._fd >= 0:
                os.close(self._fd)
                self._fd = -1

    def close(self) -> None:
        if self._fd >= 0 and self.writable:
            self.trim_to_valid_size()
        self.close_handler()

    def delete_if_exists(self) -> bool:
        self.close_handler()
        try:
            self.file.unlink()
            return True
        except FileNotFoundError:
            return False

    def sanity_check(self) -> None:
        raise NotImplementedError

    def __repr__(self) -> str:
        return f"{type(self).__name__}({self.file}, entries={self.entries}/{self.max_entries})"


class OffsetIndex(AbstractIndex):
    """Maps offsets to byte positions in the segment's .log file."""

    entry_size = _OFFSET_ENTRY.size

    def __init__(self, file: Path | str, base_offset: int, max_index_size: int = -1, writable: bool = True) -> None:
        super().__init__(file, base_offset, max_index_size, writable)
        self._last_offset = self._last_entry().offset

    def _entry_key_value(self, n: int) -> tuple[int, int]:
        return _OFFSET_ENTRY.unpack_from(self.buffer, n * 8)

    def _compare_entry(self, n: int, target: int, search_entity: int) -> int:
        relative, position = _OFFSET_ENTRY.unpack_from(self.buffer, n * 8)
        probe = self.base_offset + relative if search_entity == _KEY else position
        return (probe > target) - (probe < target)

    def _parse_entry(self, n: int) -> OffsetPosition:
        relative, position = _OFFSET_ENTRY.unpack_from(self.buffer, n * 8)
        return OffsetPosition(self.base_offset + relative, position)

    def _last_entry(self) -> OffsetPosition:
        with self.lock:
            if self.entries == 0:
                return OffsetPosition(self.base_offset, 0)
            return self._parse_entry(self.entries - 1)

    @property
    def last_offset(self) -> int:
        return self._last_offset

    def sanity_check(self) -> None:
        if self.entries != 0 and self._last_offset < self.base_offset:
            raise CorruptIndexError(
                f"Corrupt index found, index file {self.file} has non-zero size but the last offset is "
                f"{self._last_offset} which is less than the base offset {self.base_offset}")
        if self.length % self.entry_size != 0:
            raise CorruptIndexError(
                f"Index file {self.file} is corrupt, found {self.length} bytes which is neither positive "
                f"nor a multiple of {self.entry_size}")

    def lookup(self, target_offset: int) -> OffsetPosition:
        """The entry with the largest offset <= target, or (base offset, 0)."""
        slot = self._largest_lower_bound_slot_for(target_offset, _KEY)
        if slot == -1:
            return OffsetPosition(self.base_offset, 0)
        return self._parse_entry(slot)

    def entry(self, n: int) -> OffsetPosition:
        if n >= self.entries:
            raise IndexError(f"Attempt to fetch the {n}th entry from index {self.file}, which has size {self.entries}")
        return self._parse_entry(n)

    def fetch_upper_bound_offset(self, fetch_offset: OffsetPosition, fetch_size: int) -> OffsetPosition | None:
        slot = self._smallest_upper_bound_slot_for(fetch_offset.position + fetch_size, _VALUE)
        return None if slot == -1 else self._parse_entry(slot)

    def append(self, offset: int, position: int) -> None:
        with self.lock:
            if self.is_full():
                raise ValueError(f"Attempt to append to a full index (size = {self.entries}).")
            if self.entries != 0 and offset <= self._last_offset:
                raise InvalidOffsetError(
                    f"Attempt to append an offset {offset} to position {self.entries} no larger than the last "
                    f"offset appended ({self._last_offset}) to {self.file}")
            _OFFSET_ENTRY.pack_into(self._mmap, self.entries * 8, self.relative_offset(offset), position)
            self.entries += 1
            self._last_offset = offset

    def truncate_to(self, offset: int) -> None:
        """Remove every entry with an offset >= `offset`."""
        with self.lock:
            slot = self._largest_lower_bound_slot_for(offset, _KEY)
            if slot < 0:
                new_entries = 0
            elif self._parse_entry(slot).offset == offset:
                new_entries = slot
            else:
                new_entries = slot + 1
            self._truncate_to_entries(new_entries)

    def _after_truncate(self) -> None:
        self._last_offset = self._last_entry().offset

    def entries_list(self) -> list[OffsetPosition]:
        return [self._parse_entry(n) for n in range(self.entries)]


class TimeIndex(AbstractIndex):
    """Maps timestamps to the first offset whose batch carries a larger-or-equal max timestamp."""

    entry_size = _TIME_ENTRY.size

    def __init__(self, file: Path | str, base_offset: int, max_index_size: int = -1, writable: bool = True) -> None:
        super().__init__(file, base_offset, max_index_size, writable)
        self._last_entry = self._last_entry_from_index_file()

    def _compare_entry(self, n: int, target: int, search_entity: int) -> int:
        timestamp, relative = _TIME_ENTRY.unpack_from(self.buffer, n * 12)
        probe = timestamp if search_entity == _KEY else self.base_offset + relative
        return (probe > target) - (probe < target)

    def _parse_entry(self, n: int) -> TimestampOffset:
        timestamp, relative = _TIME_ENTRY.unpack_from(self.buffer, n * 12)
        return TimestampOffset(timestamp, self.base_offset + relative)

    def _last_entry_from_index_file(self) -> TimestampOffset:
        with self.lock:
            if self.entries == 0:
                return TimestampOffset(NO_TIMESTAMP, self.base_offset)
            return self._parse_entry(self.entries - 1)

    def is_full(self) -> bool:
        # The last slot is kept for the entry written when the segment rolls.
        return self.entries >= self.max_entries - 1

    def last_entry(self) -> TimestampOffset:
        return self._last_entry

    def entry(self, n: int) -> TimestampOffset:
        if n >= self.entries:
            raise IndexError(f"Attempt to fetch the {n}th entry from time index {self.file} which has size {self.entries}")
        return self._parse_entry(n)

    def sanity_check(self) -> None:
        last_timestamp, last_offset = self._last_entry
        if self.entries != 0:
            first_timestamp = self._parse_entry(0).timestamp
            if last_timestamp < first_timestamp:
                raise CorruptIndexError(
                    f"Corrupt time index found, time index file ({self.file}) has non-zero size but the last "
                    f"timestamp is {last_timestamp} which is less than the first timestamp {first_timestamp}")
            if last_offset < self.base_offset:
                raise CorruptIndexError(
                    f"Corrupt time index found, time index file ({self.file}) has non-zero size but the last "
                    f"offset is {last_offset} which is less than the first offset {self.base_offset}")
        if self.length % self.entry_size != 0:
            raise CorruptIndexError(
                f"Time index file {self.file} is corrupt, found {self.length} bytes which is neither positive "
                f"nor a multiple of {self.entry_size}")

    def lookup(self, target_timestamp: int) -> TimestampOffset:
        """The entry with the largest timestamp <= target, or (NO_TIMESTAMP, base offset)."""
        slot = self._largest_lower_bound_slot_for(target_timestamp, _KEY)
        if slot == -1:
            return TimestampOffset(NO_TIMESTAMP, self.base_offset)
        return self._parse_entry(slot)

    def maybe_append(self, timestamp: int, offset: int, skip_full_check: bool = False) -> None:
        with self.lock:
            if not skip_full_check and self.is_full():
                raise ValueError(f"Attempt to append to a full time index (size = {self.entries}).")
            last_timestamp, last_offset = self._last_entry
            if self.entries != 0 and offset < last_offset:
                raise InvalidOffsetError(
                    f"Attempt to append an offset ({offset}) to slot {self.entries} no larger than the last "
                    f"offset appended ({last_offset}) to {self.file}")
            if self.entries != 0 and timestamp < last_timestamp:
                raise ValueError(
                    f"Attempt to append a timestamp ({timestamp}) to slot {self.entries} no larger than the last "
                    f"timestamp appended ({last_timestamp}) to {self.file}")
            # Only a larger timestamp is worth an entry; an equal one is the roll
            # entry being written again (close, or onBecomeInactiveSegment).
            if timestamp > last_timestamp:
                if self.entries >= self.max_entries:
                    raise ValueError(f"Attempt to append to a full time index (size = {self.entries}).")
                _TIME_ENTRY.pack_into(self._mmap, self.entries * 12, timestamp, self.relative_offset(offset))
                self.entries += 1
                self._last_entry = TimestampOffset(timestamp, offset)

    def truncate_to(self, offset: int) -> None:
        """Remove every entry with an offset >= `offset`."""
        with self.lock:
            slot = self._largest_lower_bound_slot_for(offset, _VALUE)
            if slot < 0:
                new_entries = 0
            elif self._parse_entry(slot).offset == offset:
                new_entries = slot
            else:
                new_entries = slot + 1
            self._truncate_to_entries(new_entries)

    def _after_truncate(self) -> None:
        self._last_entry = self._last_entry_from_index_file()

    def _after_resize(self) -> None:
        self._last_entry = self._last_entry_from_index_file()

    def entries_list(self) -> list[TimestampOffset]:
        return [self._parse_entry(n) for n in range(self.entries)]


class LazyIndex:
    """An index that is opened (mapped) on first use.

    Until then it is only a path: renames, parent-dir updates and deletes act
    on the file alone, so loading thousands of cleanly shut segments maps
    nothing.
    """

    def __init__(self, file: Path | str, base_offset: int, max_index_size: int, index_class: type[AbstractIndex]) -> None:
        self._file = Path(file)
        self.base_offset = base_offset
        self.max_index_size = max_index_size
        self._index_class = index_class
        self._index: AbstractIndex | None = None
        self._lock = threading.Lock()

    @classmethod
    def for_offset(cls, file: Path | str, base_offset: int, max_index_size: int) -> LazyIndex:
        return cls(file, base_offset, max_index_size, OffsetIndex)

    @classmethod
    def for_time(cls, file: Path | str, base_offset: int, max_index_size: int) -> LazyIndex:
        return cls(file, base_offset, max_index_size, TimeIndex)

    @property
    def file(self) -> Path:
        return self._index.file if self._index is not None else self._file

    def is_loaded(self) -> bool:
        return self._index is not None

    def get(self) -> AbstractIndex:
        index = self._index
        if index is None:
            with self._lock:
                if self._index is None:
                    self._index = self._index_class(self._file, self.base_offset, self.max_index_size)
                index = self._index
        return index

    def update_parent_dir(self, parent_dir: Path | str) -> None:
        if self._index is not None:
            self._index.update_parent_dir(parent_dir)
        self._file = Path(parent_dir) / self._file.name

    def rename_to(self, new_file: Path | str) -> None:
        new_file = Path(new_file)
        if self._index is not None:
            self._index.rename_to(new_file)
        else:
            try:
                os.replace(self._file, new_file)
            except FileNotFoundError:
                if self._file.exists():
                    raise
        self._file = new_file

    def delete_if_exists(self) -> bool:
        if self._index is not None:
            return self._index.delete_if_exists()
        try:
            self._file.unlink()
            return True
        except FileNotFoundError:
            return False

    def close(self) -> None:
        if self._index is not None:
            self._index.close()

    def close_handler(self) -> None:
        if self._index is not None:
            self._index.close_handler()
