"""LogCleanerManager: which compacted log to clean next, and who may touch it (Kafka's LogCleanerManager).

A compacted log is three regions: the clean head [log start, first dirty
offset) already cleaned, the cleanable middle [first dirty, first uncleanable)
and the uncleanable tail. The first dirty offset is the partition's entry in
`cleaner-offset-checkpoint` (one per log dir, the format of the other offset
checkpoints). The first uncleanable offset is the least of the last stable
offset, the active segment's base offset and the first segment younger than
min.compaction.lag.ms. The filthiest log (largest cleanable / total bytes
ratio) above min.cleanable.dirty.ratio is cleaned first, or any log whose
dirty data waited past max.compaction.lag.ms.

A partition's cleaning state serialises the cleaner against retention,
truncation and deletion: IN_PROGRESS while a cleaner thread works on it,
ABORTED when someone asked it to stop (the thread notices at its next
check_cleaning_aborted and answers with done_cleaning, which pauses it), and
PAUSED(n) while n callers keep it from being cleaned. A partition whose
cleaning raised is marked uncleanable and skipped until it leaves the broker.
"""

from __future__ import annotations

import dataclasses
import logging
import threading
import time
from collections.abc import Callable, Iterable
from pathlib import Path

from franz.storage.checkpoint import CheckpointError, OffsetCheckpointFile
from franz.storage.unified_log import UnifiedLog

log = logging.getLogger("franz.storage.cleaner")

CLEANER_OFFSET_CHECKPOINT_FILE = "cleaner-offset-checkpoint"
TopicPartition = tuple[str, int]


class LogCleaningAbortedError(Exception):
    """Kafka's LogCleaningAbortedException: the partition's cleaning was aborted; let it go."""


class LogCleaningError(Exception):
    """Kafka's LogCleaningException: cleaning `log` failed; the partition becomes uncleanable."""

    def __init__(self, partition_log: UnifiedLog, message: str) -> None:
        super().__init__(message)
        self.log = partition_log


IN_PROGRESS = "LogCleaningInProgress"
ABORTED = "LogCleaningAborted"


@dataclasses.dataclass(frozen=True)
class Paused:
    count: int


@dataclasses.dataclass(frozen=True)
class OffsetsToClean:
    first_dirty_offset: int
    first_uncleanable_dirty_offset: int
    force_update_checkpoint: bool = False


class LogToClean:
    """A log with its dirty range and the byte counts that rank it."""

    def __init__(self, topic_partition: TopicPartition, partition_log: UnifiedLog, first_dirty_offset: int,
                 uncleanable_offset: int, need_compaction_now: bool = False) -> None:
        self.topic_partition = topic_partition
        self.log = partition_log
        self.first_dirty_offset = first_dirty_offset
        self.need_compaction_now = need_compaction_now
        self.clean_bytes = sum(s.size() for s in partition_log.log_segments(-1, first_dirty_offset))
        self.first_uncleanable_offset, self.cleanable_bytes = calculate_cleanable_bytes(
            partition_log, first_dirty_offset, uncleanable_offset)
        self.total_bytes = self.clean_bytes + self.cleanable_bytes
        self.cleanable_ratio = self.cleanable_bytes / self.total_bytes if self.total_bytes else 0.0


def _max_compaction_delay(partition_log: UnifiedLog, first_dirty_offset: int, now: int) -> int:
    """How long the oldest dirty non-active segment's first batch has waited past max.compaction.lag.ms."""
    timestamps = [s.get_first_batch_timestamp() for s in partition_log.non_active_log_segments_from(first_dirty_offset)]
    earliest = min((t for t in timestamps if t > 0), default=2**63 - 1)
    clean_until = now - max(partition_log.config.max_compaction_lag_ms, 0)
    return clean_until - earliest if earliest < clean_until else 0


def cleanable_offsets(partition_log: UnifiedLog, last_clean_offset: int | None, now: int) -> OffsetsToClean:
    log_start = partition_log.log_start_offset
    checkpointed = log_start if last_clean_offset is None else last_clean_offset
    force_update = False
    first_dirty = checkpointed
    if checkpointed < log_start:
        if not partition_log.config.delete:  # compact,delete moves the log start by retention, routinely
            log.warning("Resetting first dirty offset of %s to log start offset %d since the checkpointed offset "
                        "%d is invalid.", partition_log.topic_partition, log_start, checkpointed)
        first_dirty, force_update = log_start, True
    elif checkpointed > partition_log.log_end_offset:
        log.warning("The last checkpoint dirty offset for partition %s is %d, which is larger than the log end "
                    "offset %d. Resetting to the log start offset %d.", partition_log.topic_partition, checkpointed,
                    partition_log.log_end_offset, log_start)
        first_dirty, force_update = log_start, True
    bounds = [partition_log.last_stable_offset, partition_log.segments.active_segment.base_offset]
    min_lag = max(partition_log.config.min_compaction_lag_ms, 0)
    if min_lag > 0:
        for segment in partition_log.non_active_log_segments_from(first_dirty):
            if segment.largest_timestamp() > now - min_lag:
                bounds.append(segment.base_offset)
                break
    return OffsetsToClean(first_dirty, max(first_dirty, min(bounds)), force_update)


def calculate_cleanable_bytes(partition_log: UnifiedLog, first_dirty_offset: int,
                              uncleanable_offset: int) -> tuple[int, int]:
    """(the base offset of the first uncleanable segment, the bytes of the segments before it from the dirty one)."""
    non_active = partition_log.non_active_log_segments_from(uncleanable_offset)
    first_uncleanable = (non_active[0] if non_active else partition_log.segments.active_segment).base_offset
    cleanable = sum(s.size() for s in partition_log.log_segments(min(first_dirty_offset, first_uncleanable),
                                                                  first_uncleanable))
    return first_uncleanable, cleanable


class LogCleanerManager:
    def __init__(self, log_dirs: Iterable[Path], logs: Callable[[], dict[TopicPartition, UnifiedLog]],
                 time_ms: Callable[[], int] = lambda: time.time_ns() // 1_000_000) -> None:
        self.log_dirs = list(log_dirs)
        self._logs = logs
        self._time_ms = time_ms
        self._checkpoints = {d: OffsetCheckpointFile(d / CLEANER_OFFSET_CHECKPOINT_FILE) for d in self.log_dirs}
        self._in_progress: dict[TopicPartition, object] = {}
        self._uncleanable: dict[Path, set[TopicPartition]] = {}
        self._lock = threading.RLock()
        self._paused_cond = threading.Condition(self._lock)
        self.dirtiest_log_cleanable_ratio = 0.0
        self.time_of_last_run = time_ms()

    def time_since_last_run_ms(self) -> int:
        return max(0, self._time_ms() - self.time_of_last_run)

    # -- checkpoints ---------------------------------------------------------------------
    def all_cleaner_checkpoints(self) -> dict[TopicPartition, int]:
        with self._lock:
            merged: dict[TopicPartition, int] = {}
            for checkpoint in self._checkpoints.values():
                merged.update(self._read(checkpoint))
            return merged

    @staticmethod
    def _read(checkpoint: OffsetCheckpointFile) -> dict[TopicPartition, int]:
        try:
            return checkpoint.read()
        except CheckpointError as exc:
            log.error("Failed to access checkpoint file %s: %s", checkpoint.path, exc)
            return {}

    def update_checkpoints(self, log_dir: Path, update: tuple[TopicPartition, int] | None = None,
                           remove: TopicPartition | None = None) -> None:
        with self._lock:
            checkpoint = self._checkpoints.get(log_dir)
            if checkpoint is None:
                return
            logs = self._logs()
            current = {tp: offset for tp, offset in self._read(checkpoint).items() if tp in logs}
            if remove is not None:
                current.pop(remove, None)
            if update is not None:
                current[update[0]] = update[1]
            checkpoint.write(current)

    def alter_checkpoint_dir(self, tp: TopicPartition, source_dir: Path, dest_dir: Path) -> None:
        """A partition's log moved dirs (LogCleanerManager.alterCheckpointDir): its cleaned
        offset goes with it."""
        with self._lock:
            source, dest = self._checkpoints.get(source_dir), self._checkpoints.get(dest_dir)
            if source is None or dest is None:
                return
            offset = self._read(source).get(tp)
            self.update_checkpoints(source_dir, remove=tp)
            if offset is not None:
                self.update_checkpoints(dest_dir, update=(tp, offset))

    def maybe_truncate_checkpoint(self, log_dir: Path, tp: TopicPartition, offset: int) -> None:
        """After a truncation below the cleaned point, the clean head ends at the truncation."""
        with self._lock:
            partition_log = self._logs().get(tp)
            checkpoint = self._checkpoints.get(log_dir)
            if partition_log is None or checkpoint is None or not partition_log.config.compact:
                return
            existing = self._read(checkpoint)
            if existing.get(tp, 0) > offset:
                existing[tp] = offset
                checkpoint.write(existing)

    # -- choosing ------------------------------------------------------------------------
    def grab_filthiest_compacted_log(self, pre_clean_stats: PreCleanStats | None = None) -> LogToClean | None:
        stats = pre_clean_stats or PreCleanStats()
        with self._lock:
            now = self._time_ms()
            self.time_of_last_run = now
            last_clean = self.all_cleaner_checkpoints()
            dirty_logs = []
            for tp, partition_log in self._logs().items():
                if not partition_log.config.compact or tp in self._in_progress or self._is_uncleanable(tp):
                    continue
                try:
                    offsets = cleanable_offsets(partition_log, last_clean.get(tp), now)
                    if offsets.force_update_checkpoint:
                        self.update_checkpoints(partition_log.dir.parent, (tp, offsets.first_dirty_offset))
                    delay = _max_compaction_delay(partition_log, offsets.first_dirty_offset, now)
                    stats.update_max_compaction_delay(delay)
                    candidate = LogToClean(tp, partition_log, offsets.first_dirty_offset,
                                           offsets.first_uncleanable_dirty_offset, delay > 0)
                except Exception as exc:  # noqa: BLE001 - any failure makes this one partition uncleanable
                    raise LogCleaningError(partition_log, f"Failed to calculate log cleaning stats for partition "
                                                          f"{tp[0]}-{tp[1]}: {exc}") from exc
                if candidate.total_bytes > 0:
                    dirty_logs.append(candidate)
            self.dirtiest_log_cleanable_ratio = max((c.cleanable_ratio for c in dirty_logs), default=0.0)
            cleanable = [c for c in dirty_logs
                         if (c.need_compaction_now and c.cleanable_bytes > 0)
                         or c.cleanable_ratio > c.log.config.min_cleanable_dirty_ratio]
            if not cleanable:
                return None
            stats.cleanable_partitions = len(cleanable)
            filthiest = max(cleanable, key=lambda c: c.cleanable_ratio)
            self._in_progress[filthiest.topic_partition] = IN_PROGRESS
            return filthiest

    def pause_cleaning_for_non_compacted_partitions(self) -> list[tuple[TopicPartition, UnifiedLog]]:
        """The logs retention may delete from, each paused so a policy change cannot race it."""
        with self._lock:
            chosen = [(tp, partition_log) for tp, partition_log in self._logs().items()
                      if not partition_log.config.compact and tp not in self._in_progress]
            for tp, _ in chosen:
                self._in_progress[tp] = Paused(1)
            return chosen

    def deletable_logs(self) -> list[tuple[TopicPartition, UnifiedLog]]:
        """The compacted logs whose retention the cleaner thread runs, each marked in progress."""
        with self._lock:
            chosen = [(tp, partition_log) for tp, partition_log in self._logs().items()
                      if tp not in self._in_progress and partition_log.config.compact
                      and not self._is_uncleanable(tp)]
            for tp, _ in chosen:
                self._in_progress[tp] = IN_PROGRESS
            return chosen

    # -- states --------------------------------------------------------------------------
    def cleaning_state(self, tp: TopicPartition) -> object | None:
        with self._lock:
            return self._in_progress.get(tp)

    def abort_cleaning(self, tp: TopicPartition) -> None:
        """Stop any cleaning of `tp` and wait until it stopped (before the log is deleted)."""
        with self._lock:
            self.abort_and_pause_cleaning(tp)
            self.resume_cleaning([tp])

    def abort_and_pause_cleaning(self, tp: TopicPartition) -> None:
        with self._lock:
            state = self._in_progress.get(tp)
            if state is None:
                self._in_progress[tp] = Paused(1)
            elif state == IN_PROGRESS:
                self._in_progress[tp] = ABORTED
            elif isinstance(state, Paused):
                self._in_progress[tp] = Paused(state.count + 1)
            else:
                raise RuntimeError(f"Compaction for partition {tp[0]}-{tp[1]} cannot be aborted and paused "
                                   f"since it is in {state} state.")
            while not isinstance(self._in_progress.get(tp), Paused):
                self._paused_cond.wait(0.1)

    def resume_cleaning(self, partitions: Iterable[TopicPartition]) -> None:
        with self._lock:
            for tp in partitions:
                state = self._in_progress.get(tp)
                if state is None:
                    raise RuntimeError(f"Compaction for partition {tp[0]}-{tp[1]} cannot be resumed since it "
                                       "is not paused.")
                if not isinstance(state, Paused):
                    raise RuntimeError(f"Compaction for partition {tp[0]}-{tp[1]} cannot be resumed since it "
                                       f"is in {state} state.")
                if state.count == 1:
                    del self._in_progress[tp]
                else:
                    self._in_progress[tp] = Paused(state.count - 1)

    def check_cleaning_aborted(self, tp: TopicPartition) -> None:
        with self._lock:
            if self._in_progress.get(tp) == ABORTED:
                raise LogCleaningAbortedError()

    def done_cleaning(self, tp: TopicPartition, log_dir: Path, end_offset: int) -> None:
        """A pass over `tp` ended: record how far it cleaned, unless it was aborted meanwhile."""
        with self._lock:
            if self._finish(tp):
                self.update_checkpoints(log_dir, (tp, end_offset))

    def done_deleting(self, partitions: Iterable[TopicPartition]) -> None:
        with self._lock:
            for tp in partitions:
                self._finish(tp)

    def _finish(self, tp: TopicPartition) -> bool:
        """Release `tp` after work on it; an aborted one becomes paused and its waiters are woken.
        True if the work was not aborted."""
        state = self._in_progress.get(tp)
        if state == IN_PROGRESS:
            del self._in_progress[tp]
            return True
        if state == ABORTED:
            self._in_progress[tp] = Paused(1)
            self._paused_cond.notify_all()
            return False
        raise RuntimeError(f"In-progress partition {tp[0]}-{tp[1]} cannot be in {state} state.")

    # -- uncleanable partitions ----------------------------------------------------------
    def mark_partition_uncleanable(self, log_dir: Path, tp: TopicPartition) -> None:
        with self._lock:
            self._uncleanable.setdefault(log_dir, set()).add(tp)

    def uncleanable_partitions(self, log_dir: Path) -> set[TopicPartition]:
        with self._lock:
            return set(self._uncleanable.get(log_dir, ()))

    def uncleanable_bytes(self, log_dir: Path) -> int:
        """The cleanable bytes of the partitions of `log_dir` that cleaning gave up on (uncleanable-bytes)."""
        with self._lock:
            if not self._uncleanable.get(log_dir):
                return 0  # the common case: no checkpoint to read
            logs = self._logs()
            last_clean = self.all_cleaner_checkpoints()
            now = self._time_ms()
            total = 0
            for tp in self._uncleanable.get(log_dir, ()):
                partition_log = logs.get(tp)
                if partition_log is not None:
                    offsets = cleanable_offsets(partition_log, last_clean.get(tp), now)
                    total += calculate_cleanable_bytes(partition_log, offsets.first_dirty_offset,
                                                       offsets.first_uncleanable_dirty_offset)[1]
            return total

    def _is_uncleanable(self, tp: TopicPartition) -> bool:
        return any(tp in partitions for partitions in self._uncleanable.values())

    def maintain_uncleanable_partitions(self) -> None:
        """Forget uncleanable partitions whose logs left the broker (a deleted topic may come back clean)."""
        with self._lock:
            logs = self._logs()
            for log_dir in list(self._uncleanable):
                self._uncleanable[log_dir] &= logs.keys()
                if not self._uncleanable[log_dir]:
                    del self._uncleanable[log_dir]


class PreCleanStats:
    """What the last choice saw: how many logs were cleanable, how late the latest was."""

    def __init__(self) -> None:
        self.max_compaction_delay_ms = 0
        self.delayed_partitions = 0
        self.cleanable_partitions = 0

    def update_max_compaction_delay(self, delay_ms: int) -> None:
        self.max_compaction_delay_ms = max(self.max_compaction_delay_ms, delay_ms)
        if delay_ms > 0:
            self.delayed_partitions += 1
