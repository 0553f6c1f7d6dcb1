"""LogSegment: one `.log` file of record batches and its three indexes.

A segment covers the offsets [base_offset, next segment's base offset). It owns

    <base>.log        FileRecords: the batches, back to back, exactly as appended
    <base>.index      OffsetIndex, sparse: last offset of a batch -> its start position
    <base>.timeindex  TimeIndex, sparse: max timestamp so far -> the offset carrying it
    <base>.txnindex   TransactionIndex, only once an aborted transaction ends here

Invariants:
- An index entry is added when more than `index.interval.bytes` were appended
  since the last one; entries point at batch starts, never inside a batch.
- Every offset in the segment fits an int32 relative to base_offset
  (LogSegmentOffsetOverflowError otherwise), so index entries always fit.
- The indexes are derived data: `recover()` rebuilds all of them from the
  batches, and cuts the file at the first byte that is not a valid batch.
- Not thread safe for writers: the partition lock serialises appends, as in
  Kafka. Readers use `read()`, which only slices the file.
"""

from __future__ import annotations

import logging
import os
import random
import time as _time
from dataclasses import dataclass
from pathlib import Path
from typing import Any, NamedTuple

from franz.records import (
    CorruptRecordError,
    FileRecords,
    InvalidRecordError,
    LogOffsetPosition,
    MemoryRecords,
    RecordBatch,
    TimestampAndOffset,
)
from franz.records.errors import RecordsError
from franz.storage import files
from franz.storage.index import INT32_MAX, LazyIndex, OffsetIndex, OffsetPosition, TimeIndex, TimestampOffset
from franz.storage.log_config import LogConfig
from franz.storage.txn_index import AbortedTxn, TransactionIndex, TxnIndexSearchResult

log = logging.getLogger(__name__)

UNKNOWN_TIMESTAMP_OFFSET = TimestampOffset(-1, -1)
RECOVERY_CHUNK_BYTES = 8 * 1024 * 1024  # bounded memory per recovering segment
APPEND_FROM_FILE_CHUNK_BYTES = 1024 * 1024  # bounded memory per chunk a split copies
LOG_OVERHEAD = 12


def now_ms() -> int:
    return _time.time_ns() // 1_000_000


class LogSegmentOffsetOverflowError(Exception):
    """An offset that does not fit an int32 relative to the segment's base offset."""

    def __init__(self, segment: LogSegment, offset: int) -> None:
        super().__init__(f"Detected offset overflow at offset {offset} in segment {segment}")
        self.segment = segment
        self.offset = offset


class LogOffsetMetadata(NamedTuple):
    """An offset with, when known, where it is: its segment and byte position.

    A NamedTuple rather than a frozen dataclass: one is made per append (the
    new log end), and a tuple is built at a fraction of the cost."""

    message_offset: int
    segment_base_offset: int = -1
    relative_position_in_segment: int = -1

    @property
    def message_offset_only(self) -> bool:
        return self.segment_base_offset == -1 and self.relative_position_in_segment == -1

    def on_older_segment(self, that: LogOffsetMetadata) -> bool:
        assert not self.message_offset_only and not that.message_offset_only
        return self.segment_base_offset < that.segment_base_offset

    def on_same_segment(self, that: LogOffsetMetadata) -> bool:
        return self.segment_base_offset == that.segment_base_offset

    def position_diff(self, that: LogOffsetMetadata) -> int:
        assert self.on_same_segment(that)
        return self.relative_position_in_segment - that.relative_position_in_segment


@dataclass(slots=True)
class FetchDataInfo:
    """What a read returns: where it started, the records (a file slice or
    MemoryRecords), whether the first batch was cut by the size limit, and
    aborted transactions for READ_COMMITTED reads."""

    fetch_offset_metadata: LogOffsetMetadata
    records: Any
    first_entry_incomplete: bool = False
    aborted_transactions: list[AbortedTxn] | None = None


EMPTY_RECORDS = MemoryRecords(b"")


def empty_fetch_data_info(metadata: LogOffsetMetadata, include_aborted_txns: bool) -> FetchDataInfo:
    """A read at `metadata` that found nothing (Kafka's FetchDataInfo.empty)."""
    return FetchDataInfo(metadata, EMPTY_RECORDS, False, [] if include_aborted_txns else None)


@dataclass(slots=True)
class RollParams:
    max_segment_ms: int
    max_segment_bytes: int
    max_timestamp_in_messages: int
    max_offset_in_messages: int
    messages_size: int
    now: int


class LogSegment:
    # The attributes the C append path reads and writes (SlotAttr in franz/storage/_fast_common.h).
    __slots__ = ("log", "base_offset", "index_interval_bytes", "roll_jitter_ms", "created",
                 "bytes_since_last_index_entry", "rolling_based_timestamp", "_max_timestamp_and_offset_so_far",
                 "_offset_index", "_time_index", "__dict__")

    def __init__(self, log_records: FileRecords, lazy_offset_index: LazyIndex, lazy_time_index: LazyIndex,
                 txn_index: TransactionIndex, base_offset: int, index_interval_bytes: int,
                 roll_jitter_ms: int, time_ms=now_ms) -> None:
        self.log = log_records
        self.lazy_offset_index = lazy_offset_index
        self.lazy_time_index = lazy_time_index
        self.txn_index = txn_index
        self.base_offset = base_offset
        self.index_interval_bytes = index_interval_bytes
        self.roll_jitter_ms = roll_jitter_ms
        self._time_ms = time_ms
        self.created = time_ms()
        self.bytes_since_last_index_entry = 0
        self.rolling_based_timestamp: int | None = None
        self._max_timestamp_and_offset_so_far = UNKNOWN_TIMESTAMP_OFFSET
        self._offset_index: OffsetIndex | None = None  # mapped on first use
        self._time_index: TimeIndex | None = None

    # -- construction --------------------------------------------------------------------
    @classmethod
    def open(cls, directory: Path | str, base_offset: int, config: LogConfig, time_ms=now_ms,
             file_already_exists: bool = False, init_file_size: int = 0, preallocate: bool = False,
             file_suffix: str = "") -> LogSegment:
        max_index_size = config.max_index_size
        jitter = random.randrange(config.segment_jitter_ms) if config.segment_jitter_ms > 0 else 0
        return cls(
            FileRecords.open(files.log_file(directory, base_offset, file_suffix),
                             file_already_exists=file_already_exists,
                             preallocate_bytes=init_file_size if preallocate else 0),
            LazyIndex.for_offset(files.offset_index_file(directory, base_offset, file_suffix), base_offset,
                                 max_index_size),
            LazyIndex.for_time(files.time_index_file(directory, base_offset, file_suffix), base_offset,
                               max_index_size),
            TransactionIndex(base_offset, files.transaction_index_file(directory, base_offset, file_suffix)),
            base_offset,
            config.index_interval_bytes,
            min(jitter, config.segment_ms),
            time_ms,
        )

    @staticmethod
    def delete_files_if_exist(directory: Path | str, base_offset: int, file_suffix: str = "") -> None:
        for make in (files.offset_index_file, files.time_index_file, files.transaction_index_file, files.log_file):
            make(directory, base_offset, file_suffix).unlink(missing_ok=True)

    # -- accessors -----------------------------------------------------------------------
    # Mapped on first use, then kept: a LazyIndex never swaps its index object (renames
    # and closes act on it in place), and the append path reads both on every batch.
    @property
    def offset_index(self) -> OffsetIndex:
        index = self._offset_index
        if index is None:
            index = self._offset_index = self.lazy_offset_index.get()
        return index

    @property
    def time_index(self) -> TimeIndex:
        index = self._time_index
        if index is None:
            index = self._time_index = self.lazy_time_index.get()
        return index

    @property
    def offset_index_file(self) -> Path:
        return self.lazy_offset_index.file

    @property
    def time_index_file(self) -> Path:
        return self.lazy_time_index.file

    @property
    def log_file(self) -> Path:
        return Path(self.log.path)

    def size(self) -> int:
        return self.log.size_in_bytes

    def read_max_timestamp_and_offset_so_far(self) -> TimestampOffset:
        if self._max_timestamp_and_offset_so_far is UNKNOWN_TIMESTAMP_OFFSET:
            self._max_timestamp_and_offset_so_far = self.time_index.last_entry()
        return self._max_timestamp_and_offset_so_far

    def max_timestamp_so_far(self) -> int:
        return self.read_max_timestamp_and_offset_so_far().timestamp

    def _shallow_offset_of_max_timestamp_so_far(self) -> int:
        return self.read_max_timestamp_and_offset_so_far().offset

    def can_convert_to_relative_offset(self, offset: int) -> bool:
        return self.offset_index.can_append_offset(offset)

    def _ensure_offset_in_range(self, offset: int) -> None:
        if not self.can_convert_to_relative_offset(offset):
            raise LogSegmentOffsetOverflowError(self, offset)

    # -- roll ----------------------------------------------------------------------------
    def should_roll(self, roll_params: RollParams) -> bool:
        size = self.log.size_in_bytes
        if size > roll_params.max_segment_bytes - roll_params.messages_size:
            return True
        if size > 0 and (self.time_waited_for_roll(roll_params.now, roll_params.max_timestamp_in_messages)
                         > roll_params.max_segment_ms - self.roll_jitter_ms):
            return True
        # The last test is can_convert_to_relative_offset, inlined: should_roll runs once per append.
        return (self.offset_index.is_full() or self.time_index.is_full()
                or not 0 <= roll_params.max_offset_in_messages - self.base_offset <= INT32_MAX)

    def _load_first_batch_timestamp(self) -> None:
        if self.rolling_based_timestamp is None:
            for batch in self.log.batches():
                self.rolling_based_timestamp = batch.max_timestamp
                break

    def time_waited_for_roll(self, now: int, message_timestamp: int) -> int:
        ts = self.rolling_based_timestamp
        if ts is None:
            self._load_first_batch_timestamp()
            ts = self.rolling_based_timestamp
        if ts is not None and ts >= 0:
            return message_timestamp - ts
        return now - self.created

    def get_first_batch_timestamp(self) -> int:
        self._load_first_batch_timestamp()
        ts = self.rolling_based_timestamp
        return ts if ts is not None and ts >= 0 else 2**63 - 1

    def resize_indexes(self, size: int) -> None:
        self.offset_index.resize(size)
        self.time_index.resize(size)

    def on_become_inactive_segment(self) -> None:
        """Called when a newer segment becomes active: write the roll entry and trim."""
        self.time_index.maybe_append(self.max_timestamp_so_far(), self._shallow_offset_of_max_timestamp_so_far(),
                                     skip_full_check=True)
        self.offset_index.trim_to_valid_size()
        self.time_index.trim_to_valid_size()
        self.log.trim()

    # -- append --------------------------------------------------------------------------
    def append(self, largest_offset: int, largest_timestamp_ms: int, shallow_offset_of_max_timestamp: int,
               records: MemoryRecords) -> None:
        """Append `records` (already validated, offsets assigned) ending at largest_offset."""
        size = records.size_in_bytes
        if size <= 0:
            return
        log_records = self.log
        physical_position = log_records.size_in_bytes
        if physical_position == 0:
            self.rolling_based_timestamp = largest_timestamp_ms
        if self._offset_index is None or self._time_index is None:
            # Made (a new segment's are preallocated) before the write, not after it: an index a
            # full disk refuses must leave no batch in the file that the log end does not count.
            self.offset_index, self.time_index  # noqa: B018
        if not 0 <= largest_offset - self.base_offset <= INT32_MAX:  # Kafka's ensureOffsetInRange, inlined
            raise LogSegmentOffsetOverflowError(self, largest_offset)
        log_records.append(records)
        so_far = self._max_timestamp_and_offset_so_far
        if so_far is UNKNOWN_TIMESTAMP_OFFSET:
            so_far = self.read_max_timestamp_and_offset_so_far()
        if largest_timestamp_ms > so_far.timestamp:
            so_far = self._max_timestamp_and_offset_so_far = TimestampOffset(largest_timestamp_ms,
                                                                             shallow_offset_of_max_timestamp)
        if self.bytes_since_last_index_entry > self.index_interval_bytes:
            self.offset_index.append(largest_offset, physical_position)
            self.time_index.maybe_append(so_far.timestamp, so_far.offset)
            self.bytes_since_last_index_entry = 0
        self.bytes_since_last_index_entry += size

    def append_from_file(self, records: FileRecords, start: int) -> int:
        """Copy batches from `records` at byte `start` while their offsets fit this
        segment (an overflowed segment's split); returns the bytes copied."""
        position = start
        while position < records.size_in_bytes:
            appended = self._append_chunk_from_file(records, position)
            if appended == 0:
                break
            position += appended
        return position - start

    def _append_chunk_from_file(self, records: FileRecords, position: int) -> int:
        # At most APPEND_FROM_FILE_CHUNK_BYTES per chunk, except that one batch always goes.
        bytes_to_append = 0
        max_timestamp = shallow_offset_of_max_timestamp = max_offset = -(2**63)
        for batch in records.batches(position):
            size = batch.size_in_bytes
            if not self.can_convert_to_relative_offset(batch.last_offset):
                break
            if bytes_to_append and bytes_to_append + size >= APPEND_FROM_FILE_CHUNK_BYTES:
                break
            if batch.max_timestamp > max_timestamp:
                max_timestamp, shallow_offset_of_max_timestamp = batch.max_timestamp, batch.last_offset
            max_offset = batch.last_offset
            bytes_to_append += size
        if bytes_to_append > 0:
            data = records.read_bytes(position, bytes_to_append)
            assert len(data) == bytes_to_append, (records, position, bytes_to_append)
            self.append(max_offset, max_timestamp, shallow_offset_of_max_timestamp, MemoryRecords(bytearray(data)))
        return bytes_to_append

    def update_txn_index(self, completed_txn, last_stable_offset: int) -> None:
        if completed_txn.is_aborted:
            self.txn_index.append(AbortedTxn(completed_txn.producer_id, completed_txn.first_offset,
                                             completed_txn.last_offset, last_stable_offset))

    def _update_producer_state(self, producer_state_manager, batch) -> None:
        # Recovery trusts the log as a follower would (AppendOrigin.REPLICATION).
        from franz.storage.producer_state import AppendOrigin  # noqa: PLC0415 (cycle-free, lazy)
        if batch.producer_id >= 0:
            append_info = producer_state_manager.prepare_update(batch.producer_id, AppendOrigin.REPLICATION)
            completed_txn = append_info.append(batch)
            producer_state_manager.update(append_info)
            if completed_txn is not None:
                last_stable_offset = producer_state_manager.last_stable_offset(completed_txn)
                self.update_txn_index(completed_txn, last_stable_offset)
                producer_state_manager.complete_txn(completed_txn)
        producer_state_manager.update_map_end_offset(batch.last_offset + 1)

    # -- read ----------------------------------------------------------------------------
    def translate_offset(self, offset: int, starting_file_position: int = 0) -> LogOffsetPosition | None:
        """Position and size of the first batch whose last offset is >= `offset`, or None."""
        mapping = self.offset_index.lookup(offset)
        return self.log.search_for_offset_with_size(offset, max(mapping.position, starting_file_position))

    def read(self, start_offset: int, max_size: int, max_position: int | None = -1,
             min_one_message: bool = False) -> FetchDataInfo | None:
        """A zero-copy slice from the batch holding start_offset, at most max_size bytes
        (or the whole first batch with min_one_message) and never past max_position.
        None if start_offset is past the end of this segment."""
        if max_size < 0:
            raise ValueError(f"Invalid max size {max_size} for log read from segment {self.log}")
        if max_position == -1:
            max_position = self.size()
        start = self.translate_offset(start_offset)
        if start is None:
            return None
        offset_metadata = LogOffsetMetadata(start_offset, self.base_offset, start.position)
        adjusted_max_size = max(max_size, start.size) if min_one_message else max_size
        if adjusted_max_size == 0 or max_position is None:
            return FetchDataInfo(offset_metadata, EMPTY_RECORDS)
        fetch_size = min(max_position - start.position, adjusted_max_size)
        return FetchDataInfo(offset_metadata, self.log.slice(start.position, max(fetch_size, 0)),
                             adjusted_max_size < start.size)

    def fetch_upper_bound_offset(self, start_offset_position: OffsetPosition, fetch_size: int) -> int | None:
        entry = self.offset_index.fetch_upper_bound_offset(start_offset_position, fetch_size)
        return None if entry is None else entry.offset

    def collect_aborted_txns(self, fetch_offset: int, upper_bound_offset: int) -> TxnIndexSearchResult:
        return self.txn_index.collect_aborted_txns(fetch_offset, upper_bound_offset)

    def find_offset_by_timestamp(self, timestamp_ms: int, starting_offset: int) -> TimestampAndOffset | None:
        timestamp_offset = self.time_index.lookup(timestamp_ms)
        position = self.offset_index.lookup(max(timestamp_offset.offset, starting_offset)).position
        return self.log.search_for_timestamp(timestamp_ms, position, starting_offset)

    def read_next_offset(self) -> int:
        fetch = self.read(self.offset_index.last_offset, self.log.size_in_bytes)
        if fetch is None:
            return self.base_offset
        next_offset = self.base_offset
        for batch in fetch.records.batches():
            next_offset = batch.next_offset
        return next_offset

    def has_overflow(self) -> bool:
        next_offset = self.read_next_offset()
        return next_offset > self.base_offset and not self.can_convert_to_relative_offset(next_offset - 1)

    # -- recovery and truncation ---------------------------------------------------------
    def recover(self, producer_state_manager, leader_epoch_cache=None) -> int:
        """Rebuild the indexes from the batches; cut the file at the first invalid byte.

        Every batch's structure and CRC is checked; producer state and the epoch
        cache are fed as the batches are replayed. Returns the bytes truncated.
        """
        self.offset_index.reset()
        self.time_index.reset()
        self.txn_index.reset()
        valid_bytes = 0
        last_index_entry = 0
        self._max_timestamp_and_offset_so_far = UNKNOWN_TIMESTAMP_OFFSET
        reason = None
        next_offset_min = self.base_offset
        file_size = self.log.size_in_bytes
        chunk_bytes = RECOVERY_CHUNK_BYTES
        # One buffer, filled again for each chunk: a fresh 8 MiB per chunk cost page faults
        # (on this class of VM, host faults) and a copy. Nothing read from a chunk outlives it:
        # producer state and the indexes keep numbers, not batches.
        buffer = bytearray(chunk_bytes)
        try:
            # Read big chunks and check them with one struct call and one CRC call per
            # batch (MemoryRecords.validate_batches): a pread per batch costs more than
            # the CRC itself.
            while valid_bytes < file_size:
                want = min(chunk_bytes, file_size - valid_bytes)
                if want > len(buffer):
                    buffer = bytearray(want)
                view = memoryview(buffer)
                chunk = view[:self.log.read_into(view[:want], valid_bytes)]
                consumed = 0
                for position, header in MemoryRecords(chunk).validate_batches(stop_at_partial_batch=True):
                    size = header.batch_length + LOG_OVERHEAD
                    last_offset = header.base_offset + header.last_offset_delta
                    if header.base_offset < next_offset_min or last_offset < header.base_offset:
                        # The base offset is outside the CRC: offsets going backwards (or below
                        # the segment's base) are damage, not the overflow a split repairs.
                        raise CorruptRecordError(f"Batch offsets [{header.base_offset}, {last_offset}] do not "
                                                 f"follow offset {next_offset_min - 1}", valid_bytes)
                    next_offset_min = last_offset + 1
                    self._ensure_offset_in_range(last_offset)
                    if header.max_timestamp > self.max_timestamp_so_far():
                        self._max_timestamp_and_offset_so_far = TimestampOffset(header.max_timestamp, last_offset)
                    if valid_bytes - last_index_entry > self.index_interval_bytes:
                        self.offset_index.append(last_offset, valid_bytes)
                        self.time_index.maybe_append(self.max_timestamp_so_far(),
                                                     self._shallow_offset_of_max_timestamp_so_far())
                        last_index_entry = valid_bytes
                    valid_bytes += size
                    consumed = position + size
                    if leader_epoch_cache is not None:
                        leader_epoch_cache.assign_if_newer(header.partition_leader_epoch, header.base_offset)
                    if producer_state_manager is not None:
                        if header.producer_id >= 0:
                            self._update_producer_state(producer_state_manager, RecordBatch(chunk, position))
                        else:
                            producer_state_manager.update_map_end_offset(last_offset + 1)
                if consumed == 0:
                    # Either a batch larger than the chunk, or a partial batch at the end.
                    if want < file_size - valid_bytes and len(chunk) >= LOG_OVERHEAD:
                        needed = int.from_bytes(chunk[8:12], "big", signed=True) + LOG_OVERHEAD
                        if want < needed <= file_size - valid_bytes:
                            chunk_bytes = needed
                            continue
                    break
                chunk_bytes = RECOVERY_CHUNK_BYTES
        except (CorruptRecordError, InvalidRecordError, RecordsError) as exc:
            # LogSegmentOffsetOverflowError is not corruption: the batches are valid but
            # belong in more than one segment. It propagates so LogLoader splits the segment.
            reason = str(exc)
        truncated = self.log.size_in_bytes - valid_bytes
        if truncated > 0:
            log.warning("Found invalid messages in log segment %s at byte offset %d: %s. "
                        "Truncating %d bytes.", self.log.path, valid_bytes,
                        reason or "a partial or zero-filled batch at the end", truncated)
            self.log.truncate_to(valid_bytes)
        self.offset_index.trim_to_valid_size()
        # A cleanly closed segment always ends with the largest timestamp seen; do the same.
        self.time_index.maybe_append(self.max_timestamp_so_far(), self._shallow_offset_of_max_timestamp_so_far(),
                                     skip_full_check=True)
        self.time_index.trim_to_valid_size()
        return truncated

    def truncate_to(self, offset: int) -> int:
        """Remove every batch at or after the one holding `offset`; returns bytes removed."""
        mapping = self.translate_offset(offset)
        offset_index, time_index = self.offset_index, self.time_index
        offset_index.truncate_to(offset)
        time_index.truncate_to(offset)
        self.txn_index.truncate_to(offset)
        offset_index.resize(offset_index.max_index_size)
        time_index.resize(time_index.max_index_size)
        bytes_truncated = 0 if mapping is None else self.log.truncate_to(mapping.position)
        if self.log.size_in_bytes == 0:
            self.created = self._time_ms()
            self.rolling_based_timestamp = None
        self.bytes_since_last_index_entry = 0
        if self.max_timestamp_so_far() >= 0:
            self._max_timestamp_and_offset_so_far = self._read_largest_timestamp()
        return bytes_truncated

    def _read_largest_timestamp(self) -> TimestampOffset:
        last_entry = self.time_index.last_entry()
        position = self.offset_index.lookup(last_entry.offset).position
        after = self.log.largest_timestamp_after(position)
        if after.timestamp > last_entry.timestamp:
            return TimestampOffset(after.timestamp, after.offset)
        return last_entry

    def sanity_check(self, time_index_file_newly_created: bool) -> None:
        if not self.offset_index_file.exists():
            raise FileNotFoundError(f"Offset index file {self.offset_index_file} does not exist")
        if time_index_file_newly_created:
            self.time_index.resize(0)
        self.txn_index.sanity_check()

    # -- lifecycle -----------------------------------------------------------------------
    def flush(self) -> None:
        self.log.flush()
        self.offset_index.flush()
        self.time_index.flush()
        self.txn_index.flush()

    def update_parent_dir(self, directory: Path | str) -> None:
        self.log.update_parent_dir(directory)
        self.lazy_offset_index.update_parent_dir(directory)
        self.lazy_time_index.update_parent_dir(directory)
        self.txn_index.update_parent_dir(directory)

    def change_file_suffixes(self, old_suffix: str, new_suffix: str) -> None:
        def renamed(path: Path) -> Path:
            name = path.name
            assert name.endswith(old_suffix), (name, old_suffix)
            return path.with_name(name[: len(name) - len(old_suffix)] + new_suffix)
        self.log.rename_to(renamed(self.log_file))
        self.lazy_offset_index.rename_to(renamed(self.offset_index_file))
        self.lazy_time_index.rename_to(renamed(self.time_index_file))
        self.txn_index.rename_to(renamed(self.txn_index.file))

    def has_suffix(self, suffix: str) -> bool:
        return all(path.name.endswith(suffix) for path in
                   (self.log_file, self.offset_index_file, self.time_index_file, self.txn_index.file))

    def close(self) -> None:
        if self._max_timestamp_and_offset_so_far is not UNKNOWN_TIMESTAMP_OFFSET:
            try:
                self.time_index.maybe_append(self.max_timestamp_so_far(),
                                             self._shallow_offset_of_max_timestamp_so_far(), skip_full_check=True)
            except (ValueError, OSError) as exc:
                log.warning("Failed to append the roll entry to %s: %s", self.time_index_file, exc)
        self.lazy_offset_index.close()
        self.lazy_time_index.close()
        self.log.close()
        self.txn_index.close()

    def close_handlers(self) -> None:
        self.lazy_offset_index.close_handler()
        self.lazy_time_index.close_handler()
        self.log.close_handlers()
        self.txn_index.close()

    def delete_if_exists(self) -> None:
        for kind, delete, path in (("log", self.log.delete_if_exists, self.log_file),
                                   ("offset index", self.lazy_offset_index.delete_if_exists, self.offset_index_file),
                                   ("time index", self.lazy_time_index.delete_if_exists, self.time_index_file),
                                   ("transaction index", self.txn_index.delete_if_exists, self.txn_index.file)):
            if delete():
                log.info("Deleted %s %s.", kind, path)

    def deleted(self) -> bool:
        return not any(p.exists() for p in (self.log_file, self.offset_index_file, self.time_index_file,
                                            self.txn_index.file))

    def last_modified(self) -> int:
        return int(os.stat(self.log_file).st_mtime * 1000)

    def set_last_modified(self, ms: int) -> None:
        for path in (self.log_file, self.offset_index_file, self.time_index_file):
            if path.exists():
                os.utime(path, (ms / 1000, ms / 1000))

    def largest_record_timestamp(self) -> int | None:
        ts = self.max_timestamp_so_far()
        return ts if ts >= 0 else None

    def largest_timestamp(self) -> int:
        ts = self.max_timestamp_so_far()
        return ts if ts >= 0 else self.last_modified()

    def __repr__(self) -> str:
        return (f"LogSegment(baseOffset={self.base_offset}, size={self.size()}, "
                f"largestRecordTimestamp={self._max_timestamp_and_offset_so_far.timestamp})")
