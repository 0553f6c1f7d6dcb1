"""LogLoader: bring one partition directory back to a consistent log at startup.

Steps, in Kafka 4.x's order:
1. Remove what a crash can leave behind: `.deleted` and `.cleaned` files are
   deleted, and so is any `.swap` at or above the lowest `.cleaned` offset (an
   unfinished split); a `.log.swap` segment (compaction or split output that
   was complete) is rolled forward: its indexes rebuilt, the segments it
   replaces deleted, and its files renamed into place. Index files whose
   `.log` is gone are deleted.
2. Open every segment. A missing or insane index (or a missing time index of
   a non-empty segment) is rebuilt by recovering the segment (the log is the
   truth).
3. Without the clean-shutdown marker, recover every segment from the recovery
   point: check each batch, rebuild indexes, and at the first invalid byte
   truncate that segment and delete every later one (a WARN names the file
   and what was cut). After a clean shutdown the recovery point is the LEO.
   In steps 2 and 3 a segment whose offsets overflow an int32 relative to its
   base (written before KAFKA-6264) is split (split_overflowed_segment) and
   the step run again.
4. Reconcile: the log start offset is max(checkpoint, first base offset); a
   checkpointed log start beyond the log end empties the log and starts it
   there; the epoch cache is truncated to [log start, LEO); producer state is
   rebuilt from the latest snapshot at or below LEO, replaying only the batches
   after it.
"""

from __future__ import annotations

import dataclasses
import logging
from collections.abc import Callable
from pathlib import Path
from typing import TypeVar

from franz.records import RecordsError
from franz.storage import files
from franz.storage.epoch_cache import LeaderEpochFileCache
from franz.storage.index import CorruptIndexError
from franz.storage.local_log import split_overflowed_segment
from franz.storage.log_config import LogConfig
from franz.storage.producer_state import ProducerStateManager, load_producers_from_batches
from franz.storage.segment import LogOffsetMetadata, LogSegment, LogSegmentOffsetOverflowError, now_ms
from franz.storage.segments import LogSegments

log = logging.getLogger(__name__)

T = TypeVar("T")


@dataclasses.dataclass(frozen=True, slots=True)
class LoadedLogOffsets:
    log_start_offset: int
    recovery_point: int
    next_offset_metadata: LogOffsetMetadata


def rebuild_producer_state(producer_state_manager: ProducerStateManager, segments: LogSegments,
                           log_start_offset: int, last_offset: int, time_ms=now_ms) -> None:
    """Producer state as of `last_offset`: the latest snapshot at or below it, plus a
    replay of the batches after the snapshot (UnifiedLog.rebuildProducerState)."""
    producer_state_manager.truncate_and_reload(log_start_offset, last_offset, time_ms())
    start = producer_state_manager.map_end_offset
    if start < last_offset:
        def batches():
            for segment in segments.values(start, last_offset):
                found = segment.translate_offset(start)
                if found is None:
                    continue
                for batch in segment.log.batches(found.position):
                    if batch.base_offset >= last_offset:
                        return
                    if batch.last_offset >= start:
                        yield batch
        load_producers_from_batches(producer_state_manager, batches())
    producer_state_manager.update_map_end_offset(last_offset)


class LogLoader:
    def __init__(self, directory: Path | str, topic_partition: str, config: LogConfig, had_clean_shutdown: bool,
                 segments: LogSegments, log_start_offset_checkpoint: int, recovery_point_checkpoint: int,
                 leader_epoch_cache: LeaderEpochFileCache | None, producer_state_manager: ProducerStateManager,
                 max_transaction_timeout_ms: int = 900_000, time_ms=now_ms) -> None:
        self.dir = Path(directory)
        self.topic_partition = topic_partition
        self.config = config
        self.had_clean_shutdown = had_clean_shutdown
        self.segments = segments
        self.log_start_offset_checkpoint = log_start_offset_checkpoint
        self.recovery_point_checkpoint = recovery_point_checkpoint
        self.leader_epoch_cache = leader_epoch_cache
        self.producer_state_manager = producer_state_manager
        self.max_transaction_timeout_ms = max_transaction_timeout_ms
        self.time_ms = time_ms
        self._ident = f"[LogLoader partition={topic_partition}, dir={self.dir.parent}] "

    # -- public --------------------------------------------------------------------------
    def load(self) -> LoadedLogOffsets:
        swap_files = self._remove_temp_files_and_collect_swap_files()

        def load_segment_files() -> None:
            # A retry after a split reloads from scratch: close what the last attempt opened.
            self.segments.close()
            self.segments.clear()
            self._load_segment_files()

        self._retry_on_offset_overflow(load_segment_files)
        self._complete_swap_operations(swap_files)
        if not self.segments.non_empty():
            self.segments.add(LogSegment.open(self.dir, self.log_start_offset_checkpoint, self.config,
                                              self.time_ms))
        recovery_point, next_offset = self._retry_on_offset_overflow(self._recover_log)
        active = self.segments.active_segment
        active.resize_indexes(self.config.max_index_size)

        log_start_offset = max(self.log_start_offset_checkpoint, self.segments.first_segment_base_offset())
        if self.leader_epoch_cache is not None:
            self.leader_epoch_cache.truncate_from_end(next_offset)
            self.leader_epoch_cache.truncate_from_start(log_start_offset)
        # Recovery may have truncated past snapshots, or a crash left some behind: keep those at segment
        # bases and the newest beyond them (LogLoader.load before its rebuild).
        self.producer_state_manager.remove_stray_snapshots(self.segments.base_offsets())
        rebuild_producer_state(self.producer_state_manager, self.segments, log_start_offset, next_offset,
                               self.time_ms)
        return LoadedLogOffsets(log_start_offset, recovery_point,
                                LogOffsetMetadata(next_offset, active.base_offset, active.size()))

    def _retry_on_offset_overflow(self, action: Callable[[], T]) -> T:
        """Run `action`; whenever a segment turns out to hold offsets that overflow an int32
        relative to its base (a log from before KAFKA-6264), split it and run it again."""
        # A split leaves segments that cannot overflow, so each segment splits at most once.
        attempts_max = 1 + sum(1 for p in self.dir.iterdir() if p.name.endswith(files.LOG_FILE_SUFFIX))
        for _ in range(attempts_max):
            try:
                return action()
            except LogSegmentOffsetOverflowError as exc:
                log.info("%sCaught segment overflow error: %s. Split segment and retry.", self._ident, exc)
                segment = exc.segment
                in_map = self.segments.get(segment.base_offset) is segment
                result = split_overflowed_segment(segment, self.segments, self.dir, self.topic_partition,
                                                  self.config)
                if not in_map:  # its files were replaced by the split's renames; only handles remain
                    segment.close_handlers()
                for deleted in result.deleted_segments:  # their producer snapshots go with them
                    snapshot = self.producer_state_manager.remove_and_mark_snapshot_for_deletion(deleted.base_offset)
                    if snapshot is not None:
                        snapshot.delete_if_exists()
        raise AssertionError(f"{self.dir}: still overflowing after {attempts_max} segment splits")

    # -- step 1: leftovers of a crash ----------------------------------------------------
    def _remove_temp_files_and_collect_swap_files(self) -> list[Path]:
        swap_files = []
        cleaned_files = []
        for path in sorted(self.dir.iterdir()):
            name = path.name
            if not path.is_file():
                continue
            if name.endswith(files.DELETED_FILE_SUFFIX):
                log.info("%sDeleting stray temporary file %s", self._ident, path)
                path.unlink(missing_ok=True)
            elif name.endswith(files.CLEANED_FILE_SUFFIX):
                cleaned_files.append(path)
            elif name.endswith(files.SWAP_FILE_SUFFIX):
                swap_files.append(path)
        # A split (split_overflowed_segment) writes every output as .cleaned before
        # renaming any to .swap, highest first: a .swap at or above the lowest .cleaned
        # offset belongs to a split that never reached its commit point (KAFKA-6264).
        # The segment it came from is still whole, so the split is simply redone.
        min_cleaned_offset = min((files.offset_from_file(p) for p in cleaned_files), default=None)
        valid_swap_files = []
        for path in swap_files:
            if min_cleaned_offset is not None and files.offset_from_file(path) >= min_cleaned_offset:
                log.warning("%sDeleting swap file %s of an unfinished split (lowest .cleaned offset %d)",
                            self._ident, path, min_cleaned_offset)
                path.unlink(missing_ok=True)
            elif files.is_log_file(files.strip_suffix(path, files.SWAP_FILE_SUFFIX)):
                valid_swap_files.append(path)
            else:  # index swaps are rebuilt from the swapped log
                log.info("%sDeleting index swap file %s", self._ident, path)
                path.unlink(missing_ok=True)
        for path in cleaned_files:
            log.info("%sDeleting stray .cleaned file %s", self._ident, path)
            path.unlink(missing_ok=True)
        return valid_swap_files

    def _complete_swap_operations(self, swap_files: list[Path]) -> None:
        for swap_file in swap_files:
            base_offset = files.offset_from_file(swap_file)
            swap_segment = LogSegment.open(self.dir, base_offset, self.config, self.time_ms,
                                           file_already_exists=True, file_suffix=files.SWAP_FILE_SUFFIX)
            log.info("%sFound log file %s from interrupted swap operation, which is recoverable from .swap "
                     "files. Rebuilding its indexes and putting it in place.", self._ident, swap_file)
            swap_segment.recover(None, None)
            next_offset = swap_segment.read_next_offset()
            replaced = [s for s in self.segments.values()
                        if base_offset <= s.base_offset < max(next_offset, base_offset + 1)]
            for old in replaced:
                self.segments.remove(old.base_offset)
                old.delete_if_exists()
            swap_segment.change_file_suffixes(files.SWAP_FILE_SUFFIX, "")
            self.segments.add(swap_segment)

    # -- step 2: open segments -----------------------------------------------------------
    def _load_segment_files(self) -> None:
        log_bases = {files.offset_from_file(p) for p in self.dir.iterdir()
                     if p.is_file() and p.name.endswith(files.LOG_FILE_SUFFIX)}
        for path in sorted(self.dir.iterdir()):
            if path.is_file() and files.is_index_file(path) and files.offset_from_file(path) not in log_bases:
                log.warning("%sFound an orphaned index file %s, with no corresponding log file.", self._ident, path)
                path.unlink()
        ordered = sorted(log_bases)
        for base_offset, next_base in zip(ordered, ordered[1:] + [None]):
            time_index_newly_created = not files.time_index_file(self.dir, base_offset).exists()
            segment = LogSegment.open(self.dir, base_offset, self.config, self.time_ms, file_already_exists=True)
            try:
                segment.sanity_check(time_index_newly_created)
                if not self.had_clean_shutdown and (next_base is None or next_base > self.recovery_point_checkpoint):
                    # Recovered in _recover_log whatever its indexes hold, as LogSegment.sanityCheck reasons:
                    # after a crash the active segment's preallocated indexes would fail these checks.
                    self.segments.add(segment)
                    continue
                offset_index = segment.offset_index
                offset_index.sanity_check()
                segment.time_index.sanity_check()
                if offset_index.entries:
                    last = offset_index.entry(offset_index.entries - 1)
                    if 0 < last.position and last.position >= segment.size():
                        # franz's addition: Kafka would trust this entry until a read went astray.
                        raise CorruptIndexError(f"Index file {offset_index.file} has an entry {last} pointing "
                                                f"past the end of {segment.log_file} ({segment.size()} bytes)")
                if time_index_newly_created and segment.size() > 0:
                    # franz's addition: Kafka keeps the new empty time index (pre-0.10 segments
                    # had none), so offsets-by-timestamp would miss this segment. Every franz
                    # batch carries timestamps, so the index can be rebuilt.
                    raise CorruptIndexError(f"Time index file {segment.time_index_file} was missing")
            except FileNotFoundError:
                log.error("%sCould not find offset index file corresponding to log file %s, recovering segment "
                          "and rebuilding index files...", self._ident, segment.log_file)
                self._recover_segment(segment)
            except CorruptIndexError as exc:
                log.warning("%sFound a corrupted index file corresponding to log file %s due to %s, recovering "
                          "segment and rebuilding index files...", self._ident, segment.log_file, exc)
                self._recover_segment(segment)
            self.segments.add(segment)

    # -- step 3: recovery ----------------------------------------------------------------
    def _recover_segment(self, segment: LogSegment) -> int:
        """Recover one segment with producer state rebuilt up to its base offset.

        Kafka uses a throwaway ProducerStateManager here; franz reuses the log's
        own so that its view of the snapshot files never goes stale. The final
        rebuild in load() reloads it to the log end either way."""
        producer_state = self.producer_state_manager
        rebuild_producer_state(producer_state, self.segments, self.log_start_offset_checkpoint,
                               segment.base_offset, self.time_ms)
        truncated = segment.recover(producer_state, self.leader_epoch_cache)
        producer_state.take_snapshot()
        return truncated

    def _recover_log(self) -> tuple[int, int]:
        """(recovery point, log end offset) after recovering what was not flushed."""
        if not self.had_clean_shutdown:
            unflushed = self.segments.values(self.recovery_point_checkpoint)
            for index, segment in enumerate(unflushed):
                log.info("%sRecovering unflushed segment %d. %d/%d recovered for %s.", self._ident,
                         segment.base_offset, index, len(unflushed), self.topic_partition)
                try:
                    truncated = self._recover_segment(segment)
                except RecordsError as exc:  # unreadable beyond repair: treat as cut at its start
                    log.warning("%sSegment %s could not be read (%s); truncating it", self._ident,
                                segment.log_file, exc)
                    truncated = segment.truncate_to(segment.base_offset)
                if truncated > 0:
                    later = unflushed[index + 1:]
                    log.warning("%sCorruption found in segment %d, truncating to offset %d; deleting %d later "
                                "segment(s): %s", self._ident, segment.base_offset, segment.read_next_offset(),
                                len(later), ", ".join(str(s.log_file) for s in later) or "none")
                    for dropped in later:
                        self.segments.remove(dropped.base_offset)
                        dropped.delete_if_exists()
                    break
        log_end_offset = self.segments.active_segment.read_next_offset()
        if log_end_offset < self.log_start_offset_checkpoint:
            log.warning("%sLogging start offset %d is greater than the log end offset %d; deleting all segments "
                        "(%s) and starting the log at %d", self._ident, self.log_start_offset_checkpoint,
                        log_end_offset, ", ".join(str(s.log_file) for s in self.segments.values()),
                        self.log_start_offset_checkpoint)
            for segment in self.segments.values():
                self.segments.remove(segment.base_offset)
                segment.delete_if_exists()
            if self.leader_epoch_cache is not None:
                self.leader_epoch_cache.clear_and_flush()
            self.producer_state_manager.truncate_fully_and_start_at(self.log_start_offset_checkpoint)
            self.segments.add(LogSegment.open(self.dir, self.log_start_offset_checkpoint, self.config,
                                              self.time_ms))
            log_end_offset = self.log_start_offset_checkpoint
            return min(self.recovery_point_checkpoint, log_end_offset), log_end_offset
        if self.had_clean_shutdown:
            # A clean shutdown flushed everything and nothing was changed here: all of it is
            # recovered, whatever the (possibly stale) recovery-point checkpoint says.
            return log_end_offset, log_end_offset
        # Recovered bytes are checked but not yet fsynced: the recovery point stays
        # where the last flush left it, so a second crash re-checks them.
        return min(self.recovery_point_checkpoint, log_end_offset), log_end_offset
