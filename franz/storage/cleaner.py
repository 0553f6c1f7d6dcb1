"""LogCleaner: compaction of logs with cleanup.policy=compact (Kafka's LogCleaner, Cleaner).

A cleaning pass over one log (Cleaner.clean):
1. map every key of the cleanable range [first dirty, first uncleanable) to
   its latest offset (SkimpyOffsetMap; records of aborted transactions are not
   mapped). If the map fills up, the pass ends where the map ends;
2. rewrite the log from its first segment up to where the map ends, group by
   group (segments whose joint size fits one segment), into `.cleaned`
   segments. A record stays when its key has no later offset in the map, and,
   for a tombstone (null value), until the delete horizon that the first pass
   to keep it stamped on its batch (now + delete.retention.ms) has passed.
   Records without a key are dropped (they cannot be compacted). Records of
   aborted transactions go, and markers go once their transaction's data is
   gone (CleanedTransactionMetadata). A producer's last batch stays, emptied if
   need be, so its sequence and epoch survive; so does the pass's last batch, so
   that the log end offset survives;
3. swap each cleaned segment in for its group (UnifiedLog.replace_segments:
   `.cleaned` -> `.swap` -> live, which LogLoader completes after a crash), and
   record the end of the pass in `cleaner-offset-checkpoint`.

Offsets never change: a cleaned log has gaps, which readers skip. A segment is
only read while cleaning, never changed, so the cleaner works without the
partition lock and takes it only to swap.

The cleaner threads (log.cleaner.threads) also run retention for compacted logs
(compact,delete), which LogManager's retention task leaves to them, as Kafka does.
Cleaning a segment whose offsets overflow its base offset's int32 range (only
logs older than KAFKA-6264 have them, and franz cannot write one) fails, and the
partition is marked uncleanable; Kafka splits the segment and retries.
"""

from __future__ import annotations

import dataclasses
import logging
import threading
import time
from collections.abc import Callable
from datetime import datetime, timezone
from pathlib import Path

from franz.records import MemoryRecords
from franz.records.constants import INT32_MAX
from franz.records.record import RecordKey
from franz.records.record_batch import RecordBatch
from franz.records.record_filter import BatchRetention, BatchRetentionResult, RecordFilter, filter_to
from franz.storage import files
from franz.storage.cleaned_txn_metadata import CleanedTransactionMetadata
from franz.storage.cleaner_manager import (
    LogCleanerManager,
    LogCleaningAbortedError,
    LogCleaningError,
    LogToClean,
    PreCleanStats,
    TopicPartition,
)
from franz.storage.local_log import KafkaStorageError, create_new_cleaned_segment
from franz.storage.offset_map import SkimpyOffsetMap
from franz.storage.segment import LogSegment
from franz.storage.throttler import Throttler
from franz.storage.unified_log import UnifiedLog

log = logging.getLogger("franz.storage.cleaner")


@dataclasses.dataclass(frozen=True)
class CleanerConfig:
    """The broker's log.cleaner.* settings (Kafka's CleanerConfig), with Kafka's defaults."""

    num_threads: int = 1
    dedupe_buffer_size: int = 128 * 1024 * 1024
    dedupe_buffer_load_factor: float = 0.9
    io_buffer_size: int = 512 * 1024
    max_message_size: int = 1024 * 1024 + 12
    max_io_bytes_per_second: float = float("inf")
    backoff_ms: int = 15_000
    enable_cleaner: bool = True


class ThreadShutdownError(Exception):
    """The cleaner thread is stopping: drop the pass in progress."""


class CleanerStats:
    """Counters of one pass, for the summary the cleaner logs."""

    def __init__(self, clock: Callable[[], float] = time.monotonic) -> None:
        self._clock = clock
        self.start_time = clock()
        self.map_complete_time = -1.0
        self.end_time = -1.0
        self.bytes_read = 0
        self.bytes_written = 0
        self.map_bytes_read = 0
        self.map_messages_read = 0
        self.messages_read = 0
        self.invalid_messages_read = 0
        self.messages_written = 0
        self.buffer_utilization = 0.0

    def index_done(self) -> None:
        self.map_complete_time = self._clock()

    def all_done(self) -> None:
        self.end_time = self._clock()

    @property
    def elapsed_secs(self) -> float:
        return self.end_time - self.start_time

    @property
    def elapsed_index_secs(self) -> float:
        return self.map_complete_time - self.start_time


def group_segments_by_size(segments: list[LogSegment], max_size: int, max_index_size: int,
                           first_uncleanable_offset: int) -> list[list[LogSegment]]:
    """Consecutive segments whose log bytes fit max_size and whose index bytes fit
    max_index_size, and whose offsets fit one segment's int32 range: each group
    becomes one cleaned segment."""
    groups = []
    remaining = list(segments)
    while remaining:
        group = [remaining.pop(0)]
        log_size = group[0].size()
        index_size = group[0].offset_index.size_in_bytes()
        time_index_size = group[0].time_index.size_in_bytes()
        while remaining:
            head = remaining[0]
            # The last offset of `head`, bounded from above cheaply: the next base offset, or the end of the pass.
            last_offset = (remaining[1].base_offset if len(remaining) > 1 else first_uncleanable_offset) - 1
            if not (log_size + head.size() <= max_size
                    and index_size + head.offset_index.size_in_bytes() <= max_index_size
                    and time_index_size + head.time_index.size_in_bytes() <= max_index_size
                    and (head.size() == 0 or last_offset - group[-1].base_offset <= INT32_MAX)):
                break
            group.append(remaining.pop(0))
            log_size += head.size()
            index_size += head.offset_index.size_in_bytes()
            time_index_size += head.time_index.size_in_bytes()
        groups.append(group)
    return groups


class _CleanerFilter(RecordFilter):
    """Cleaner.cleanInto's RecordFilter: what one source segment keeps."""

    def __init__(self, offset_map: SkimpyOffsetMap, current_time: int, delete_retention_ms: int,
                 transaction_metadata: CleanedTransactionMetadata, last_records_of_active_producers: dict,
                 upper_bound_offset_of_round: int, stats: CleanerStats) -> None:
        super().__init__(current_time, delete_retention_ms)
        self._map = offset_map
        self._txn = transaction_metadata
        self._last_records = last_records_of_active_producers
        self._upper_bound = upper_bound_offset_of_round
        self._stats = stats
        self._discard_batch_records = False

    def check_batch_retention(self, batch: RecordBatch) -> BatchRetentionResult:
        # Markers piggy-back on the tombstone horizon: one goes only after its
        # transaction's records are gone and its own delete horizon has passed.
        txn = self._txn
        can_discard = txn.on_control_batch_read(batch) if batch.is_control_batch else txn.on_batch_read(batch)
        if batch.is_control_batch:
            horizon = batch.delete_horizon_ms
            self._discard_batch_records = can_discard and horizon is not None and horizon <= self.current_time
        else:
            self._discard_batch_records = can_discard
        if batch.producer_id >= 0 and self._is_last_batch_of_producer(batch):
            retention = BatchRetention.RETAIN_EMPTY
        elif batch.next_offset == self._upper_bound:
            retention = BatchRetention.RETAIN_EMPTY  # the log end offset must survive the pass
        elif self._discard_batch_records:
            retention = BatchRetention.DELETE
        else:
            retention = BatchRetention.DELETE_EMPTY
        return BatchRetentionResult(retention, can_discard and batch.is_control_batch)

    def _is_last_batch_of_producer(self, batch: RecordBatch) -> bool:
        # An active producer keeps the batch with its last sequence, or, when a
        # marker is its last entry, that marker with its epoch (for fencing).
        last = self._last_records.get(batch.producer_id)
        if last is None:
            return False
        if last.last_data_offset is not None:
            return batch.last_offset == last.last_data_offset
        return batch.is_control_batch and batch.producer_epoch == last.producer_epoch

    def should_retain_record(self, batch: RecordBatch, record: RecordKey) -> bool:
        if self._discard_batch_records:
            return False  # the batch stays only for its producer's state
        if batch.is_control_batch:
            return True
        # Cleaner.shouldRetainRecord, inlined: it runs once per record of the log.
        if record.offset > self._map.latest_offset:
            return True  # beyond what this pass mapped: cleaned next time
        if record.key is None:
            self._stats.invalid_messages_read += 1
            return False
        if record.offset < self._map.get(record.key):
            return False  # a later record has the key
        if record.has_value:
            return True
        horizon = batch.delete_horizon_ms  # a tombstone stays until its batch's horizon has passed
        return horizon is None or self.current_time < horizon


class Cleaner:
    """The cleaning of one log at a time, by one cleaner thread (Kafka's Cleaner)."""

    def __init__(self, cleaner_id: int, offset_map: SkimpyOffsetMap, io_buffer_size: int, max_io_buffer_size: int,
                 dup_buffer_load_factor: float, throttler: Throttler, time_ms: Callable[[], int],
                 check_done: Callable[[TopicPartition], None]) -> None:
        if offset_map.slots * dup_buffer_load_factor <= 1:
            raise ValueError("offset map is too small to fit in even a single message, so log cleaning will never "
                             "make progress. You can increase log.cleaner.dedupe.buffer.size or decrease "
                             "log.cleaner.threads")
        self.id = cleaner_id
        self.offset_map = offset_map
        # A read of 0 bytes would never progress (log.cleaner.io.buffer.size may be 0): read at least one.
        io_buffer_size = max(io_buffer_size, 1)
        self.io_buffer_size = io_buffer_size
        self.max_io_buffer_size = max_io_buffer_size
        self.dup_buffer_load_factor = dup_buffer_load_factor
        self.throttler = throttler
        self.time_ms = time_ms
        self.check_done = check_done
        self._read_size = io_buffer_size

    def clean(self, cleanable: LogToClean) -> tuple[int, CleanerStats]:
        """Clean the log; returns the first offset not cleaned (the next first dirty offset) and the stats."""
        return self.do_clean(cleanable, self.time_ms())

    def do_clean(self, cleanable: LogToClean, current_time: int) -> tuple[int, CleanerStats]:
        partition_log = cleanable.log
        log.info("Cleaner %d: Beginning cleaning of log %s", self.id, partition_log.topic_partition)
        stats = CleanerStats()
        log.info("Cleaner %d: Building offset map for %s...", self.id, partition_log.topic_partition)
        upper_bound = cleanable.first_uncleanable_offset
        self.build_offset_map(partition_log, cleanable.first_dirty_offset, upper_bound, self.offset_map, stats)
        end_offset = self.offset_map.latest_offset + 1
        stats.index_done()
        horizon_segments = partition_log.log_segments(0, cleanable.first_uncleanable_offset)
        cleanable_horizon_ms = horizon_segments[-1].last_modified() if horizon_segments else 0
        # The horizon of tombstones older than magic 2 (which franz never holds), printed as Kafka prints it.
        clean_segments = partition_log.log_segments(0, cleanable.first_dirty_offset)
        legacy_horizon_ms = (clean_segments[-1].last_modified() - partition_log.config.delete_retention_ms
                             if clean_segments else 0)
        log.info("Cleaner %d: Cleaning log %s (cleaning prior to %s, discarding tombstones prior to upper bound "
                 "deletion horizon %s)...", self.id, partition_log.topic_partition, _date(cleanable_horizon_ms),
                 _date(legacy_horizon_ms))
        transaction_metadata = CleanedTransactionMetadata()
        groups = group_segments_by_size(partition_log.log_segments(0, end_offset), partition_log.config.segment_bytes,
                                        partition_log.config.max_index_size, cleanable.first_uncleanable_offset)
        for group in groups:
            self.clean_segments(partition_log, group, self.offset_map, current_time, stats, transaction_metadata,
                                upper_bound)
        stats.buffer_utilization = self.offset_map.utilization
        stats.all_done()
        return end_offset, stats

    def clean_segments(self, partition_log: UnifiedLog, segments: list[LogSegment], offset_map: SkimpyOffsetMap,
                       current_time: int, stats: CleanerStats, transaction_metadata: CleanedTransactionMetadata,
                       upper_bound_offset_of_round: int) -> None:
        """Clean `segments` into one `.cleaned` segment and swap it in for them."""
        cleaned = create_new_cleaned_segment(partition_log.dir, partition_log.config, segments[0].base_offset)
        transaction_metadata.cleaned_index = cleaned.txn_index
        try:
            last_records = partition_log.last_records_of_active_producers()
            for index, segment in enumerate(segments):
                # Aborted transactions of the whole segment range: the cleaned segment's
                # transaction index is rebuilt from them.
                upper = segments[index + 1].base_offset if index + 1 < len(segments) else segment.read_next_offset()
                transaction_metadata.add_aborted_transactions(
                    partition_log.collect_aborted_transactions(segment.base_offset, upper))
                log.info("Cleaner %d: Cleaning %s in log %s into %d, retaining deletes.", self.id, segment,
                         partition_log.topic_partition, cleaned.base_offset)
                self.clean_into(partition_log.topic_partition, segment, cleaned, offset_map,
                                partition_log.config.delete_retention_ms, partition_log.config.max_message_bytes,
                                transaction_metadata, last_records, upper_bound_offset_of_round, stats, current_time)
            cleaned.on_become_inactive_segment()
            cleaned.flush()  # durable before it replaces anything
            cleaned.set_last_modified(segments[-1].last_modified())
        except BaseException:
            # Until the swap begins the `.cleaned` segment is this pass's alone: drop it. Once
            # replace_segments has renamed it `.swap` (the commit point), it is never deleted
            # here: LogLoader finishes the swap at the next start.
            cleaned.close_handlers()
            cleaned.delete_if_exists()
            raise
        log.info("Cleaner %d: Swapping in cleaned segment %s for segment(s) %s in log %s", self.id, cleaned,
                 segments, partition_log.topic_partition)
        partition_log.replace_segments([cleaned], segments)

    def clean_into(self, topic_partition: str, source: LogSegment, dest: LogSegment, offset_map: SkimpyOffsetMap,
                   delete_retention_ms: int, max_log_message_size: int,
                   transaction_metadata: CleanedTransactionMetadata, last_records_of_active_producers: dict,
                   upper_bound_offset_of_round: int, stats: CleanerStats, current_time: int) -> None:
        """Copy what `source` keeps into `dest`, a read buffer at a time."""
        record_filter = _CleanerFilter(offset_map, current_time, delete_retention_ms, transaction_metadata,
                                       last_records_of_active_producers, upper_bound_offset_of_round, stats)
        records = source.log
        position = 0
        tp = files.parse_topic_partition_name(topic_partition)
        while position < records.size_in_bytes:
            self.check_done(tp)
            chunk = MemoryRecords(records.read_bytes(position, self._read_size))
            self.throttler.maybe_throttle(chunk.size_in_bytes)
            result = filter_to(chunk.batches(stop_at_partial_batch=True), record_filter, max_log_message_size,
                               topic_partition)
            stats.messages_read += result.messages_read
            stats.bytes_read += result.bytes_read
            stats.messages_written += result.messages_retained
            stats.bytes_written += result.bytes_retained
            position += result.bytes_read
            if result.output:
                dest.append(result.max_offset, result.max_timestamp, result.shallow_offset_of_max_timestamp,
                            MemoryRecords(result.output))
                self.throttler.maybe_throttle(len(result.output))
            if chunk.size_in_bytes > 0 and result.bytes_read == 0:
                self._grow_read_size_or_fail(source, position, max_log_message_size, chunk)
        self._read_size = self.io_buffer_size

    def _grow_read_size_or_fail(self, source: LogSegment, position: int, max_log_message_size: int,
                                chunk: MemoryRecords) -> None:
        """A batch larger than the read buffer: read more next time, up to the largest batch allowed."""
        description = f"log segment {source.log_file} at position {position}"
        if self._read_size >= max_log_message_size:
            first = chunk.buffer
            if len(first) < 12:
                raise RuntimeError(f"Could not determine next batch size for {description}")
            next_size = int.from_bytes(first[8:12], "big", signed=True) + 12
            if next_size <= 12:
                raise RuntimeError(f"Invalid batch size {next_size} for {description}")
            if next_size <= self._read_size:
                raise RuntimeError(f"Batch size {next_size} < buffer size {self._read_size}, but not processed "
                                   f"for {description}")
            bytes_left = source.log.size_in_bytes - position
            if next_size > bytes_left:
                raise RuntimeError(f"Log segment may be corrupt, batch size {next_size} > {bytes_left} bytes "
                                   f"left in segment for {description}")
            wanted = next_size
        else:
            wanted = max_log_message_size
        limit = max(wanted, self.max_io_buffer_size)
        if self._read_size >= limit:
            raise RuntimeError(f"This log contains a message larger than maximum allowable size of {limit}.")
        new_size = min(self._read_size * 2, limit)
        log.info("Cleaner %d: Growing cleaner I/O buffers from %d bytes to %d bytes.", self.id, self._read_size,
                 new_size)
        self._read_size = new_size

    def build_offset_map(self, partition_log: UnifiedLog, start: int, end: int, offset_map: SkimpyOffsetMap,
                         stats: CleanerStats) -> None:
        """Map the keys of [start, end) to their latest offsets, as many as the map takes."""
        offset_map.clear()
        dirty = partition_log.log_segments(start, end)
        next_starts = [segment.base_offset for segment in dirty[1:]] + [end] if dirty else []
        log.info("Cleaner %d: Building offset map for log %s for %d segments in offset range [%d, %d).", self.id,
                 partition_log.topic_partition, len(dirty), start, end)
        transaction_metadata = CleanedTransactionMetadata()
        transaction_metadata.add_aborted_transactions(partition_log.collect_aborted_transactions(start, end))
        tp = files.parse_topic_partition_name(partition_log.topic_partition)
        for segment, next_start in zip(dirty, next_starts):
            self.check_done(tp)
            if self._build_offset_map_for_segment(tp, segment, offset_map, start, next_start,
                                                  partition_log.config.max_message_bytes, transaction_metadata, stats):
                log.debug("Offset map is full, %d segments fully mapped, segment with base offset %d is partially "
                          "mapped", dirty.index(segment), segment.base_offset)
                break
        log.info("Cleaner %d: Offset map for log %s complete.", self.id, partition_log.topic_partition)

    def _build_offset_map_for_segment(self, tp: TopicPartition, segment: LogSegment, offset_map: SkimpyOffsetMap,
                                      start_offset: int, next_segment_start_offset: int, max_log_message_size: int,
                                      transaction_metadata: CleanedTransactionMetadata, stats: CleanerStats) -> bool:
        """True if the map filled up inside this segment."""
        position = segment.offset_index.lookup(start_offset).position
        max_desired_map_size = int(offset_map.slots * self.dup_buffer_load_factor)
        records = segment.log
        while position < records.size_in_bytes:
            self.check_done(tp)
            chunk = MemoryRecords(records.read_bytes(position, self._read_size))
            self.throttler.maybe_throttle(chunk.size_in_bytes)
            start_position = position
            for batch in chunk.batches(stop_at_partial_batch=True):
                if batch.is_control_batch:
                    transaction_metadata.on_control_batch_read(batch)
                    stats.map_messages_read += 1
                elif transaction_metadata.on_batch_read(batch):
                    stats.map_messages_read += batch.record_count  # aborted: nothing of it is mapped
                else:
                    for record in batch.record_keys():
                        if record.key is not None and record.offset >= start_offset:
                            if offset_map.size < max_desired_map_size:
                                offset_map.put(record.key, record.offset)
                            else:
                                return True
                        stats.map_messages_read += 1
                if batch.last_offset >= start_offset:
                    offset_map.update_latest_offset(batch.last_offset)
                position += batch.size_in_bytes
            stats.map_bytes_read += position - start_position
            if position == start_position:
                self._grow_read_size_or_fail(segment, position, max_log_message_size, chunk)
        # Offsets may have gaps: the map covers up to the next segment's base.
        offset_map.update_latest_offset(next_segment_start_offset - 1)
        self._read_size = self.io_buffer_size
        return False


def _date(ms: int) -> str:
    return datetime.fromtimestamp(max(ms, 0) / 1000, timezone.utc).isoformat()


class LogCleaner:
    """The cleaner threads and their manager (Kafka's LogCleaner)."""

    def __init__(self, config: CleanerConfig, log_dirs: list[Path],
                 logs: Callable[[], dict[TopicPartition, UnifiedLog]],
                 time_ms: Callable[[], int] = lambda: time.time_ns() // 1_000_000) -> None:
        self.config = config
        self.time_ms = time_ms
        self.cleaner_manager = LogCleanerManager(log_dirs, logs, time_ms)
        self._stop = threading.Event()
        self.throttler = Throttler(config.max_io_bytes_per_second, 300, sleep=self._stop.wait)
        self.cleaners: list[CleanerThread] = []

    def startup(self) -> None:
        log.info("Starting the log cleaner")
        self._stop.clear()
        for cleaner_id in range(self.config.num_threads):
            thread = CleanerThread(self, cleaner_id)
            self.cleaners.append(thread)
            thread.start()

    def shutdown(self) -> None:
        log.info("Shutting down the log cleaner.")
        self._stop.set()
        for thread in self.cleaners:
            thread.join(timeout=30)
        self.cleaners = []

    def validate_reconfiguration(self, new_config: CleanerConfig) -> None:
        """Kafka's bounds on a change of the thread count at run time; ValueError if out of them."""
        threads, current = new_config.num_threads, self.config.num_threads
        if threads < 1:
            raise ValueError("Log cleaner threads should be at least 1")
        if threads < current // 2:
            raise ValueError(f"Log cleaner threads cannot be reduced to less than half the current value {current}")
        if threads > current * 2:
            raise ValueError(f"Log cleaner threads cannot be increased to more than double the current value "
                             f"{current}")

    def reconfigure(self, new_config: CleanerConfig) -> None:
        """Apply changed log.cleaner.* settings: new threads with new maps and buffers, as Kafka
        restarts its cleaners (which also replaces any that died). A pass in progress is dropped
        and starts over."""
        if new_config.max_io_bytes_per_second != self.config.max_io_bytes_per_second:
            log.info("Updating logCleanerIoMaxBytesPerSecond: %s", new_config.max_io_bytes_per_second)
            self.throttler.desired_rate_per_sec = new_config.max_io_bytes_per_second
        self.shutdown()
        self.config = new_config
        self.startup()

    @property
    def is_running(self) -> bool:
        return not self._stop.is_set()

    def dead_thread_count(self) -> int:
        return sum(1 for thread in self.cleaners if not thread.is_alive())

    def metrics(self) -> dict[str, float]:
        """Kafka's LogCleaner gauges, from each thread's last pass (zero before any)."""
        threads = list(self.cleaners)
        stats = [t.last_stats or CleanerStats() for t in threads]

        def max_over(values) -> float:
            return max(values, default=0.0)
        recopy = sum(s.bytes_written / max(s.bytes_read, 1) for s in stats) / len(stats) if stats else 0.0
        return {
            "max-buffer-utilization-percent": int(max_over(s.buffer_utilization for s in stats) * 100),
            "cleaner-recopy-percent": int(100 * recopy),
            "max-clean-time-secs": int(max_over(s.elapsed_secs for s in stats if s.end_time >= 0)),
            "max-compaction-delay-secs": max_over(t.last_pre_clean_stats.max_compaction_delay_ms for t in threads)
            / 1000,
            "DeadThreadCount": self.dead_thread_count(),
        }

    # The manager's controls, as LogManager and the broker use them.
    def abort_cleaning(self, tp: TopicPartition) -> None:
        self.cleaner_manager.abort_cleaning(tp)

    def resume_cleaning(self, partitions) -> None:
        self.cleaner_manager.resume_cleaning(partitions)

    def update_checkpoints(self, log_dir: Path, remove: TopicPartition | None = None) -> None:
        self.cleaner_manager.update_checkpoints(log_dir, remove=remove)

    def alter_checkpoint_dir(self, tp: TopicPartition, source_dir: Path, dest_dir: Path) -> None:
        self.cleaner_manager.alter_checkpoint_dir(tp, source_dir, dest_dir)

    def abort_and_pause_cleaning(self, tp: TopicPartition) -> None:
        self.cleaner_manager.abort_and_pause_cleaning(tp)

    def pause_cleaning_for_non_compacted_partitions(self):
        return self.cleaner_manager.pause_cleaning_for_non_compacted_partitions()

    def await_cleaned(self, tp: TopicPartition, offset: int, max_wait_ms: int = 60_000) -> bool:
        """Wait until `tp` is cleaned up to `offset` (for tests and tools)."""
        deadline = time.monotonic() + max_wait_ms / 1000
        while True:
            if self.cleaner_manager.all_cleaner_checkpoints().get(tp, -1) >= offset:
                return True
            if time.monotonic() >= deadline:
                return False
            time.sleep(min(0.1, max_wait_ms / 1000))


class CleanerThread(threading.Thread):
    """One cleaner: clean the filthiest log, run retention of compacted logs, back off when idle."""

    def __init__(self, owner: LogCleaner, cleaner_id: int) -> None:
        super().__init__(name=f"kafka-log-cleaner-thread-{cleaner_id}", daemon=True)
        config = owner.config
        self.owner = owner
        self.manager = owner.cleaner_manager
        self.cleaner = Cleaner(
            cleaner_id, SkimpyOffsetMap(min(config.dedupe_buffer_size // config.num_threads, INT32_MAX)),
            config.io_buffer_size // config.num_threads // 2, config.max_message_size,
            config.dedupe_buffer_load_factor, owner.throttler, owner.time_ms, self._check_done)
        self.last_stats: CleanerStats | None = None
        self.last_pre_clean_stats = PreCleanStats()

    def _check_done(self, tp: TopicPartition) -> None:
        if not self.owner.is_running:
            raise ThreadShutdownError()
        self.manager.check_cleaning_aborted(tp)

    def run(self) -> None:
        log.info("%s: Starting", self.name)
        try:
            while self.owner.is_running:
                cleaned = self._try_clean_filthiest_log()
                if not cleaned:
                    self.owner._stop.wait(self.owner.config.backoff_ms / 1000)
                self.manager.maintain_uncleanable_partitions()
        except ThreadShutdownError:
            pass
        log.info("%s: Stopped", self.name)

    def _try_clean_filthiest_log(self) -> bool:
        try:
            return self._clean_filthiest_log()
        except LogCleaningError as exc:
            log.warning("Unexpected exception thrown when cleaning log %s. Marking its partition (%s) as "
                        "uncleanable", exc.log, exc.log.topic_partition, exc_info=exc)
            self.manager.mark_partition_uncleanable(exc.log.dir.parent,
                                                    files.parse_topic_partition_name(exc.log.topic_partition))
            return False

    def _clean_filthiest_log(self) -> bool:
        pre_clean_stats = PreCleanStats()
        cleanable = self.manager.grab_filthiest_compacted_log(pre_clean_stats)
        cleaned = False
        if cleanable is not None:
            self.last_pre_clean_stats = pre_clean_stats
            try:
                self._clean_log(cleanable)
                cleaned = True
            except ThreadShutdownError:
                raise
            except Exception as exc:  # noqa: BLE001 - one broken log must not stop the cleaner
                raise LogCleaningError(cleanable.log, str(exc)) from exc
        deletable = self.manager.deletable_logs()
        try:
            for _, partition_log in deletable:
                try:
                    partition_log.delete_old_segments()
                except Exception as exc:  # noqa: BLE001
                    raise LogCleaningError(partition_log, str(exc)) from exc
        finally:
            self.manager.done_deleting(tp for tp, _ in deletable)
        return cleaned

    def _clean_log(self, cleanable: LogToClean) -> None:
        start_offset = end_offset = cleanable.first_dirty_offset
        try:
            end_offset, stats = self.cleaner.clean(cleanable)
            self._record_stats(cleanable.log.topic_partition, start_offset, end_offset, stats)
        except (LogCleaningAbortedError, KafkaStorageError):
            pass  # aborted (the log is being deleted or truncated), or offline (a disk error in the swap)
        finally:
            self.manager.done_cleaning(cleanable.topic_partition, cleanable.log.dir.parent, end_offset)

    def _record_stats(self, name: str, start: int, end: int, stats: CleanerStats) -> None:
        self.last_stats = stats

        def mb(value: float) -> float:
            return value / (1024 * 1024)

        elapsed = max(stats.elapsed_secs, 1e-9)
        index_secs = stats.elapsed_index_secs
        clean_secs = max(elapsed - index_secs, 1e-9)
        read = stats.bytes_read
        written, messages_read = stats.bytes_written, stats.messages_read
        log.info(
            f"Cleaner {self.cleaner.id}: \n\tLog cleaner thread {self.cleaner.id} cleaned log {name} "
            f"(dirty section = [{start}, {end}])\n"
            f"\t{mb(read):,.1f} MB of log processed in {elapsed:,.1f} seconds ({mb(read) / elapsed:,.1f} MB/sec).\n"
            f"\tIndexed {mb(stats.map_bytes_read):,.1f} MB in {index_secs:.1f} seconds "
            f"({mb(stats.map_bytes_read) / max(index_secs, 1e-9):,.1f} Mb/sec, {100 * index_secs / elapsed:.1f}% "
            f"of total time)\n"
            f"\tBuffer utilization: {100 * stats.buffer_utilization:.1f}%\n"
            f"\tCleaned {mb(read):,.1f} MB in {clean_secs:.1f} seconds ({mb(read) / clean_secs:,.1f} Mb/sec, "
            f"{100 * clean_secs / elapsed:.1f}% of total time)\n"
            f"\tStart size: {mb(read):,.1f} MB ({messages_read:,d} messages)\n"
            f"\tEnd size: {mb(written):,.1f} MB ({stats.messages_written:,d} messages)\n"
            f"\t{100.0 * (1.0 - written / read) if read else 0.0:.1f}% size reduction "
            f"({100.0 * (1.0 - stats.messages_written / messages_read) if messages_read else 0.0:.1f}% fewer messages)")
        if self.last_pre_clean_stats.delayed_partitions > 0:
            log.info("\tCleanable partitions: %d, Delayed partitions: %d, max delay: %d",
                     self.last_pre_clean_stats.cleanable_partitions, self.last_pre_clean_stats.delayed_partitions,
                     self.last_pre_clean_stats.max_compaction_delay_ms)
        if stats.invalid_messages_read > 0:
            log.warning("\tFound %d invalid messages during compaction.", stats.invalid_messages_read)
