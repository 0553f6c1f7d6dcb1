"""LocalLog: the segments of one partition on local disk (Kafka's LocalLog).

Owns the partition directory, the segment set, the log end offset (LEO, as a
LogOffsetMetadata so reads can bound themselves by position) and the recovery
point (every offset below it has been flushed). It knows nothing of high
watermarks, producers or epochs: that is UnifiedLog's.

Invariants:
- There is always an active segment once the log is loaded; its base offset is
  the highest and appends only go there.
- recovery_point <= log_end_offset (updating the LEO backwards pulls it down).
- Deleted segments are first renamed `.deleted` and removed from the map, then
  their files are deleted after `file.delete.delay.ms` (asynchronously), so a
  reader holding a slice never sees a file vanish mid-read.
"""

from __future__ import annotations

import dataclasses
import functools
import logging
import os
import threading
import time as _time
from collections.abc import Callable, Iterable
from pathlib import Path

from franz.storage import files
from franz.storage.checkpoint import flush_dir
from franz.storage.index import OffsetPosition
from franz.storage.log_config import LogConfig
from franz.storage.segment import (
    EMPTY_RECORDS,
    FetchDataInfo,
    LogOffsetMetadata,
    LogSegment,
    empty_fetch_data_info,
    now_ms,
)
from franz.storage.segments import LogSegments
from franz.storage.txn_index import AbortedTxn

try:  # franz/storage/_segment_fast.c, built by `pip install`; without it every append takes the Python path
    from franz.storage._segment_fast import append_unless_roll_due
    NATIVE_APPEND = True
except ImportError:
    NATIVE_APPEND = False

    def append_unless_roll_due(local_log: LocalLog, records, largest_offset: int, largest_timestamp: int,
                               shallow_offset_of_max_timestamp: int, now: int) -> bool:
        """The C module's LocalLog.append for when no roll is due (see franz/storage/_segment_fast.c);
        without it, nothing is done here and the caller's roll check and LocalLog.append run."""
        return False

log = logging.getLogger(__name__)

UNKNOWN_OFFSET = -1
_new_tuple = tuple.__new__


class OffsetOutOfRangeError(Exception):
    """Kafka's OffsetOutOfRangeException (error code 1)."""

    error_code = 1


class KafkaStorageError(Exception):
    """Kafka's KafkaStorageException (error code 56): the log's files failed it (a disk error), or
    the log can no longer be used (closed)."""

    error_code = 56


class DiskErrorLog:
    """The log lines of disk errors, per log dir. Kafka logs a dir's first I/O error with the
    message its storage call names (LogDirFailureChannel.maybeAddOfflineLogDir) and then takes
    the dir offline, so it never hears of that dir again. franz keeps the dir online, and a full
    disk's refused appends leave even the log online (see maybe_handle_io_error), so a full or
    failing disk would fail every request that touches it: the first error of a dir is logged,
    later ones once a minute with how many came between, so a full disk cannot flood the log."""

    INTERVAL_S = 60.0

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._last: dict[str, tuple[float, int]] = {}  # dir -> (monotonic time last logged, errors since)

    def record(self, log_dir: str, message: str, exc: OSError) -> None:
        now = _time.monotonic()
        with self._lock:
            logged_at, since = self._last.get(log_dir, (None, 0))
            if logged_at is not None and now - logged_at < self.INTERVAL_S:
                self._last[log_dir] = (logged_at, since + 1)
                return
            self._last[log_dir] = (now, 0)
        more = f" ({since} more I/O errors in this dir since the last one logged)" if since else ""
        log.error("%s: %s%s", message, exc, more)


disk_errors = DiskErrorLog()


def maybe_handle_io_error(message: str, keeps_online: bool = False, teardown: bool = False) -> Callable:
    """Kafka's maybeHandleIOException for a method of a UnifiedLog: an OSError of its files comes
    out as KafkaStorageError(message), the answer Kafka gives for the call (KAFKA_STORAGE_ERROR),
    logged by disk_errors; a log already offline refuses the call at once. `message` is
    formatted with {tp} and {dir} (the partition dir's parent, the log dir), in Kafka's words.

    Kafka takes the whole log dir offline on any such error, and halts a broker left with no
    dir. franz takes only the failed log offline (UnifiedLog.take_offline: every later call
    refused until a restart recovers it, its dir not marked clean at shutdown), and not even
    that where the error left nothing behind (`keeps_online`): a read, a roll (a new segment's
    files are made again by the next try, its producer snapshot is written whole or not at
    all), or an append whose write failed before the log end moved (UnifiedLog.append_as_leader),
    which is the common full disk. An error after the write (a transaction index entry, the
    epoch checkpoint, an fsync) leaves the log's files and its state apart, and only recovery
    brings them together again. `teardown` calls (a deleted topic's rename and delete) run on
    an offline log too."""
    def decorate(method: Callable) -> Callable:
        @functools.wraps(method)
        def guarded(self, *args, **kwargs):
            if self.offline and not teardown:
                raise self.offline_error()
            try:
                return method(self, *args, **kwargs)
            except OSError as exc:
                raise storage_error(self, message, exc, take_offline=not keeps_online) from exc
        return guarded
    return decorate


def storage_error(partition_log, message: str, exc: OSError, take_offline: bool) -> KafkaStorageError:
    """maybe_handle_io_error's answer to `exc`, logged, for a caller that catches it itself."""
    text = message.format(tp=partition_log.topic_partition, dir=partition_log.dir.parent)
    disk_errors.record(str(partition_log.dir.parent), text, exc)
    if take_offline:
        partition_log.take_offline()
    return KafkaStorageError(text)


def schedule_once(delay_ms: int, action: Callable[[], None], scheduler=None) -> None:
    """Run `action` after delay_ms on `scheduler` (anything with schedule_once(name, fn, delay_ms)),
    or on a daemon timer thread."""
    if scheduler is not None:
        scheduler.schedule_once("delete-file", action, delay_ms)
        return
    if delay_ms <= 0:
        action()
        return
    timer = threading.Timer(delay_ms / 1000, action)
    timer.daemon = True
    timer.start()


def delete_segment_files(segments: Iterable[LogSegment], async_delete: bool, directory: Path,
                         topic_partition: str, config: LogConfig, scheduler=None) -> None:
    """Rename each segment's files to `.deleted`, then delete them (later, if async)."""
    segments = list(segments)
    for segment in segments:
        if not segment.has_suffix(files.DELETED_FILE_SUFFIX):
            segment.change_file_suffixes("", files.DELETED_FILE_SUFFIX)

    def delete_segments() -> None:
        log.info("[LocalLog partition=%s, dir=%s] Deleting segment files %s", topic_partition, directory.parent,
                 ",".join(str(s) for s in segments))
        for segment in segments:
            try:
                segment.delete_if_exists()
            except OSError as exc:
                log.warning("Failed to delete segment %s of %s: %s", segment, topic_partition, exc)

    if async_delete:
        schedule_once(config.file_delete_delay_ms, delete_segments, scheduler)
    else:
        delete_segments()


def replace_segments(existing_segments: LogSegments, new_segments: Iterable[LogSegment],
                     old_segments: Iterable[LogSegment], directory: Path, topic_partition: str, config: LogConfig,
                     scheduler=None, is_recovered_swap_file: bool = False) -> list[LogSegment]:
    """Kafka's LocalLog.replaceSegments: swap cleaned segments in for old ones, crash-safely.

    New segments arrive as `.cleaned`; they are renamed `.swap` (the commit point a
    restart recognises), added to the map, the old segments are removed and renamed
    `.deleted`, and only then are the `.swap` suffixes dropped. Returns the old
    segments that were deleted without a new segment at the same base offset.
    """
    sorted_new = sorted(new_segments, key=lambda s: s.base_offset)
    assert sorted_new, "replace_segments needs at least one new segment"
    sorted_old = sorted((s for s in old_segments if existing_segments.contains(s.base_offset)),
                        key=lambda s: s.base_offset)
    if not is_recovered_swap_file:
        for segment in reversed(sorted_new):
            segment.change_file_suffixes(files.CLEANED_FILE_SUFFIX, files.SWAP_FILE_SUFFIX)
    for segment in reversed(sorted_new):
        existing_segments.add(segment)
    new_base_offsets = {s.base_offset for s in sorted_new}
    deleted_not_replaced = []
    for segment in sorted_old:
        # The first new segment takes the first old one's slot in the map: keep it there.
        if segment.base_offset != sorted_new[0].base_offset:
            existing_segments.remove(segment.base_offset)
        delete_segment_files([segment], True, directory, topic_partition, config, scheduler)
        if segment.base_offset not in new_base_offsets:
            deleted_not_replaced.append(segment)
    for segment in sorted_new:
        segment.change_file_suffixes(files.SWAP_FILE_SUFFIX, "")
    flush_dir(directory)
    return deleted_not_replaced


@dataclasses.dataclass(frozen=True, slots=True)
class SplitSegmentResult:
    deleted_segments: list[LogSegment]  # old segments deleted with no new one at their base offset
    new_segments: list[LogSegment]


def create_new_cleaned_segment(directory: Path, config: LogConfig, base_offset: int) -> LogSegment:
    LogSegment.delete_files_if_exist(directory, base_offset, files.CLEANED_FILE_SUFFIX)
    return LogSegment.open(directory, base_offset, config, file_suffix=files.CLEANED_FILE_SUFFIX,
                           init_file_size=config.segment_bytes, preallocate=config.preallocate)


def split_overflowed_segment(segment: LogSegment, existing_segments: LogSegments, directory: Path,
                             topic_partition: str, config: LogConfig, scheduler=None) -> SplitSegmentResult:
    """Kafka's LocalLog.splitOverflowedSegment: rewrite a segment whose offsets do not all
    fit an int32 relative to its base offset (possible in logs written before KAFKA-6264)
    as several segments, each starting at its first batch's base offset.

    The new segments are written as `.cleaned`, then swapped in by replace_segments, so a
    crash at any point leaves either the whole old segment or the finished split: the
    loader deletes a `.swap` at or above the lowest `.cleaned` offset and splits again.
    REQUIRES: segment is a live `.log` segment with an overflow.
    """
    if not files.is_log_file(segment.log_file):
        raise ValueError(f"Cannot split file {segment.log_file}")
    if not segment.has_overflow():
        raise ValueError("Split operation is only permitted for segments with overflow, and the problem path is "
                         f"{segment.log_file}")
    log.info("[LocalLog partition=%s, dir=%s] Splitting overflowed segment %s", topic_partition, directory.parent,
             segment)
    new_segments: list[LogSegment] = []
    try:
        source = segment.log
        position = 0
        # Each pass copies at least one batch, so at most one pass per batch.
        while position < source.size_in_bytes:
            first_batch = next(source.batches(position))
            new_segment = create_new_cleaned_segment(directory, config, first_batch.base_offset)
            new_segments.append(new_segment)
            appended = new_segment.append_from_file(source, position)
            if appended == 0:
                raise RuntimeError(f"Failed to append records from position {position} in {segment}")
            position += appended
        total_size = 0
        for split_segment in new_segments:
            split_segment.on_become_inactive_segment()
            split_segment.flush()
            split_segment.set_last_modified(segment.last_modified())
            total_size += split_segment.size()
        if total_size != source.size_in_bytes:
            raise RuntimeError(f"Inconsistent segment sizes after split before: {source.size_in_bytes} after: "
                               f"{total_size}")
        log.info("[LocalLog partition=%s, dir=%s] Replacing overflowed segment %s with split segments %s",
                 topic_partition, directory.parent, segment, new_segments)
        deleted = replace_segments(existing_segments, new_segments, [segment], directory, topic_partition, config,
                                   scheduler)
        return SplitSegmentResult(deleted, new_segments)
    except Exception:
        for split_segment in new_segments:
            split_segment.close()
            split_segment.delete_if_exists()
        raise


class LocalLog:
    # The attributes the C append path reads and writes (SlotAttr in franz/storage/_fast_common.h).
    __slots__ = ("config", "segments", "recovery_point", "_next_offset_metadata", "__dict__")

    def __init__(self, directory: Path | str, config: LogConfig, segments: LogSegments, recovery_point: int,
                 next_offset_metadata: LogOffsetMetadata, topic_partition: str, scheduler=None,
                 time_ms: Callable[[], int] = now_ms) -> None:
        self.dir = Path(directory)
        self.config = config
        self.segments = segments
        self.recovery_point = recovery_point
        self._next_offset_metadata = next_offset_metadata
        self.topic_partition = topic_partition
        self.scheduler = scheduler
        self.time_ms = time_ms
        self.is_memory_mapped_buffer_closed = False
        self._last_flushed_time_ms = time_ms()
        self._ident = f"[LocalLog partition={topic_partition}, dir={self.dir.parent}] "

    # -- offsets -------------------------------------------------------------------------
    @property
    def name(self) -> str:
        return self.dir.name

    @property
    def parent_dir(self) -> Path:
        return self.dir.parent

    @property
    def log_end_offset_metadata(self) -> LogOffsetMetadata:
        return self._next_offset_metadata

    @property
    def log_end_offset(self) -> int:
        return self._next_offset_metadata.message_offset

    def update_log_end_offset(self, end_offset: int, active: LogSegment | None = None) -> None:
        if active is None:
            active = self.segments.active_segment
        # tuple.__new__ skips the NamedTuple's Python-level constructor: this runs once per append.
        self._next_offset_metadata = _new_tuple(LogOffsetMetadata,
                                                (end_offset, active.base_offset, active.log.size_in_bytes))
        if self.recovery_point > end_offset:
            self.update_recovery_point(end_offset)

    def update_recovery_point(self, new_recovery_point: int) -> None:
        self.recovery_point = new_recovery_point

    def mark_flushed(self, offset: int) -> None:
        self.check_if_memory_mapped_buffer_closed()
        if offset > self.recovery_point:
            self.update_recovery_point(offset)
            self._last_flushed_time_ms = self.time_ms()

    @property
    def unflushed_messages(self) -> int:
        return self.log_end_offset - self.recovery_point

    @property
    def last_flush_time(self) -> int:
        return self._last_flushed_time_ms

    def update_config(self, new_config: LogConfig) -> None:
        self.config = new_config

    def check_if_memory_mapped_buffer_closed(self) -> None:
        if self.is_memory_mapped_buffer_closed:
            raise KafkaStorageError(f"The memory mapped buffer for log of {self.topic_partition} is already closed")

    # -- write ---------------------------------------------------------------------------
    def append(self, last_offset: int, largest_timestamp: int, shallow_offset_of_max_timestamp: int,
               records) -> None:
        active = self.segments.active_segment
        active.append(last_offset, largest_timestamp, shallow_offset_of_max_timestamp, records)
        self.update_log_end_offset(last_offset + 1, active)

    def flush(self, offset: int) -> None:
        """fsync every segment that may hold offsets in [recovery point, offset)."""
        current_recovery_point = self.recovery_point
        if current_recovery_point <= offset:
            to_flush = self.segments.values(current_recovery_point, offset)
            for segment in to_flush:
                segment.flush()
            if any(segment.base_offset >= current_recovery_point for segment in to_flush):
                flush_dir(self.dir)

    def roll(self, expected_next_offset: int | None = None) -> LogSegment:
        """Start a new active segment at max(expected_next_offset, LEO)."""
        start = _time.monotonic()
        self.check_if_memory_mapped_buffer_closed()
        new_offset = max(expected_next_offset or 0, self.log_end_offset)
        active = self.segments.last_segment()
        if self.segments.contains(new_offset):
            if active is not None and active.base_offset == new_offset and active.size() == 0:
                log.warning("%sTrying to roll a new log segment with start offset %d while it already exists and "
                            "is active with size 0; replacing it.", self._ident, new_offset)
                new_segment = self.create_and_delete_segment(new_offset, active, async_delete=True)
                self.update_log_end_offset(self.log_end_offset)
                return new_segment
            raise KafkaStorageError(
                f"Trying to roll a new log segment for topic partition {self.topic_partition} with start offset "
                f"{new_offset} while it already exists. Existing segment is {self.segments.get(new_offset)}.")
        if active is not None and new_offset < active.base_offset:
            raise KafkaStorageError(
                f"Trying to roll a new log segment for topic partition {self.topic_partition} with start offset "
                f"{new_offset} lower than start offset of the active segment {active}")
        for make in (files.log_file, files.offset_index_file, files.time_index_file, files.transaction_index_file):
            path = make(self.dir, new_offset)
            if path.exists():
                log.warning("%sNewly rolled segment file %s already exists; deleting it first", self._ident, path)
                path.unlink()
        if active is not None:
            active.on_become_inactive_segment()
        new_segment = LogSegment.open(self.dir, new_offset, self.config, self.time_ms,
                                      init_file_size=self.config.segment_bytes, preallocate=self.config.preallocate)
        self.segments.add(new_segment)
        self.update_log_end_offset(self.log_end_offset)
        log.info("%sRolled new log segment at offset %d in %d ms.", self._ident, new_offset,
                 int((_time.monotonic() - start) * 1000))
        return new_segment

    def create_and_delete_segment(self, new_offset: int, segment_to_delete: LogSegment,
                                  async_delete: bool) -> LogSegment:
        if new_offset == segment_to_delete.base_offset:
            segment_to_delete.change_file_suffixes("", files.DELETED_FILE_SUFFIX)
        new_segment = LogSegment.open(self.dir, new_offset, self.config, self.time_ms,
                                      init_file_size=self.config.segment_bytes, preallocate=self.config.preallocate)
        self.segments.add(new_segment)
        if new_offset != segment_to_delete.base_offset:
            self.segments.remove(segment_to_delete.base_offset)
        delete_segment_files([segment_to_delete], async_delete, self.dir, self.topic_partition, self.config,
                             self.scheduler)
        return new_segment

    def remove_and_delete_segments(self, segments_to_delete: Iterable[LogSegment], async_delete: bool,
                                   reason: str = "") -> None:
        to_delete = list(segments_to_delete)
        if not to_delete:
            return
        if reason:
            log.info("%s%s: deleting segments %s", self._ident, reason, ", ".join(str(s) for s in to_delete))
        for segment in to_delete:
            self.segments.remove(segment.base_offset)
        delete_segment_files(to_delete, async_delete, self.dir, self.topic_partition, self.config, self.scheduler)

    def delete_all_segments(self) -> list[LogSegment]:
        deletable = self.segments.values()
        self.remove_and_delete_segments(deletable, async_delete=False, reason="Deletion of the log")
        self.is_memory_mapped_buffer_closed = True
        return deletable

    def truncate_to(self, target_offset: int) -> list[LogSegment]:
        """Remove every offset >= target_offset."""
        deletable = self.segments.filter(lambda segment: segment.base_offset > target_offset)
        self.remove_and_delete_segments(deletable, async_delete=True, reason="Truncation")
        self.segments.active_segment.truncate_to(target_offset)
        self.update_log_end_offset(target_offset)
        return deletable

    def truncate_fully_and_start_at(self, new_offset: int) -> list[LogSegment]:
        """Delete every segment and start an empty one at new_offset."""
        self.check_if_memory_mapped_buffer_closed()
        to_delete = self.segments.values()
        if to_delete:
            self.remove_and_delete_segments(to_delete[:-1], async_delete=True, reason="Truncation")
            self.create_and_delete_segment(new_offset, to_delete[-1], async_delete=True)
        self.update_log_end_offset(new_offset)
        return to_delete

    # -- read ----------------------------------------------------------------------------
    def read(self, start_offset: int, max_length: int, min_one_message: bool,
             max_offset_metadata: LogOffsetMetadata, include_aborted_txns: bool) -> FetchDataInfo:
        end_offset_metadata = self._next_offset_metadata
        end_offset = end_offset_metadata.message_offset
        segment = self.segments.floor_segment(start_offset)
        if start_offset > end_offset or segment is None:
            raise OffsetOutOfRangeError(
                f"Received request for offset {start_offset} for partition {self.topic_partition}, "
                f"but we only have log segments upto {end_offset}.")
        if start_offset == max_offset_metadata.message_offset:
            return empty_fetch_data_info(max_offset_metadata, include_aborted_txns)
        if start_offset > max_offset_metadata.message_offset:
            return empty_fetch_data_info(self.convert_to_offset_metadata_or_throw(start_offset),
                                         include_aborted_txns)
        while segment is not None:
            if segment.base_offset < max_offset_metadata.segment_base_offset:
                max_position = segment.size()
            elif (segment.base_offset == max_offset_metadata.segment_base_offset
                  and not max_offset_metadata.message_offset_only):
                max_position = max_offset_metadata.relative_position_in_segment
            else:
                max_position = None
            fetch = segment.read(start_offset, max_length, max_position, min_one_message)
            if fetch is not None:
                if include_aborted_txns:
                    fetch = self._add_aborted_transactions(start_offset, segment, fetch)
                return fetch
            segment = self.segments.higher_segment(segment.base_offset)
        return FetchDataInfo(self._next_offset_metadata, EMPTY_RECORDS)

    def convert_to_offset_metadata_or_throw(self, offset: int) -> LogOffsetMetadata:
        return self.read(offset, 1, False, self._next_offset_metadata, False).fetch_offset_metadata

    def _add_aborted_transactions(self, start_offset: int, segment: LogSegment,
                                  fetch: FetchDataInfo) -> FetchDataInfo:
        fetch_size = fetch.records.size_in_bytes
        start_position = OffsetPosition(fetch.fetch_offset_metadata.message_offset,
                                        fetch.fetch_offset_metadata.relative_position_in_segment)
        upper_bound = segment.fetch_upper_bound_offset(start_position, fetch_size)
        if upper_bound is None:
            higher = self.segments.higher_segment(segment.base_offset)
            upper_bound = higher.base_offset if higher is not None else self.log_end_offset
        aborted: list[AbortedTxn] = []
        self._collect_aborted_transactions(start_offset, upper_bound, segment, aborted)
        return FetchDataInfo(fetch.fetch_offset_metadata, fetch.records, fetch.first_entry_incomplete, aborted)

    def _collect_aborted_transactions(self, start_offset: int, upper_bound_offset: int,
                                      starting_segment: LogSegment, into: list[AbortedTxn]) -> None:
        for segment in [starting_segment, *self.segments.higher_segments(starting_segment.base_offset)]:
            result = segment.collect_aborted_txns(start_offset, upper_bound_offset)
            into.extend(result.aborted_transactions)
            if result.is_complete:
                return

    def collect_aborted_transactions(self, log_start_offset: int, base_offset: int,
                                     upper_bound_offset: int) -> list[AbortedTxn]:
        segment = self.segments.floor_segment(base_offset)
        aborted: list[AbortedTxn] = []
        if segment is not None:
            self._collect_aborted_transactions(log_start_offset, upper_bound_offset, segment, aborted)
        return aborted

    # -- directory -----------------------------------------------------------------------
    def rename_dir(self, name: str) -> bool:
        renamed = self.dir.parent / name
        os.replace(self.dir, renamed)
        if renamed != self.dir:
            self.dir = renamed
            self.segments.update_parent_dir(renamed)
            return True
        return False

    def close(self) -> None:
        if self.is_memory_mapped_buffer_closed:
            return  # closed already (a deletion and a shutdown may both close it)
        # Marked before the files close: Linux hands a freed descriptor number to the next file
        # opened, so an append or a read let through afterwards would use another file's.
        self.is_memory_mapped_buffer_closed = True
        self.segments.close()

    def close_handlers(self) -> None:
        self.segments.close_handlers()
        self.is_memory_mapped_buffer_closed = True

    def delete_empty_dir(self) -> None:
        if self.segments.non_empty():
            raise KafkaStorageError(f"Can not delete directory when {len(self.segments)} segments are still present")
        if not self.is_memory_mapped_buffer_closed:
            raise KafkaStorageError("Can not delete directory when memory mapped buffer for log of "
                                    f"{self.topic_partition} is still open.")
        for child in self.dir.iterdir():
            child.unlink()
        self.dir.rmdir()
